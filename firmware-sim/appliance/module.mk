# firmware-sim/appliance: wse-appliance, the Wafer-Scale Cluster beside the
# systems: the launcher and, with --role, the coordinator, MemoryX, SwarmX
# and an input worker (Documentation/wse-appliance.rst).
progs += wse-appliance
wse-appliance_srcs := $(addprefix firmware-sim/appliance/, main.c roles.c launcher.c \
	svc_server.c hostlink.c memoryx.c memoryx_store.c swarmx.c input.c \
	coord_main.c coord_conn.c coord_parts.c coord_exec.c coord_job.c coord_run.c) \
	firmware-sim/fwd_log.c
wse-appliance_libs := wseengine wsep wsedata wselink
wse-appliance_ldlibs := -lopenblas -lz -lm -lpthread
