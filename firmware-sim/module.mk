# firmware-sim: wsefwd, the firmware simulator daemon (one process = one CS
# system). firmware-sim/engine/ has its own module.mk.
progs += wsefwd
wsefwd_srcs := firmware-sim/wsefwd.c firmware-sim/fwd_options.c \
	firmware-sim/fwd_wafer.c firmware-sim/fwd_log.c firmware-sim/fwd_memory.c \
	firmware-sim/fwd_server.c firmware-sim/fwd_conn.c firmware-sim/fwd_dispatch.c \
	firmware-sim/fwd_handshake.c firmware-sim/fwd_link_ops.c \
	firmware-sim/fwd_mem_ops.c firmware-sim/fwd_fault.c
wsefwd_libs := wselink
