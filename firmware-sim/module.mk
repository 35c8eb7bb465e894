# firmware-sim: wsefwd, the firmware simulator daemon (one process = one CS
# system). firmware-sim/engine/ has its own module.mk.
progs += wsefwd
wsefwd_srcs := firmware-sim/wsefwd.c firmware-sim/fwd_options.c \
	firmware-sim/fwd_wafer.c firmware-sim/fwd_log.c firmware-sim/fwd_memory.c \
	firmware-sim/fwd_server.c firmware-sim/fwd_conn.c firmware-sim/fwd_dispatch.c \
	firmware-sim/fwd_handshake.c firmware-sim/fwd_link_ops.c \
	firmware-sim/fwd_mem_ops.c firmware-sim/fwd_fault.c
wsefwd_libs := wselink

# The daemon test runs the real wsefwd; its sanitizer build runs a
# sanitizer build of the daemon (kept out of build/host-tests-san, whose
# every program is run as a test).
host_tests += wsefwd_test
wsefwd_test_srcs := tests/host/wsefwd_test.c
wsefwd_test_libs := wselink
$(B)/san-bin/wsefwd: $(patsubst %.c,$(B)/obj-san/%.o,$(wsefwd_srcs)) $(B)/lib-san/libwselink.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $^
$(B)/host-tests/wsefwd_test: | $(B)/bin/wsefwd
$(B)/host-tests-san/wsefwd_test: | $(B)/san-bin/wsefwd
userspace: $(B)/san-bin/wsefwd

host_tests += wsefwd_memory_test
wsefwd_memory_test_srcs := tests/host/wsefwd_memory_test.c firmware-sim/fwd_memory.c
