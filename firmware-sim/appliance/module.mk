# firmware-sim/appliance: wse-appliance, the Wafer-Scale Cluster beside the
# systems: the launcher and, with --role, the coordinator, MemoryX, SwarmX
# and an input worker (Documentation/wse-appliance.rst).
progs += wse-appliance
wse-appliance_srcs := $(addprefix firmware-sim/appliance/, main.c roles.c launcher.c \
	svc_server.c hostlink.c memoryx.c memoryx_store.c memoryx_spill.c swarmx.c input.c \
	coord_main.c coord_conn.c coord_parts.c coord_exec.c coord_job.c coord_run.c \
	coord_feed.c) \
	firmware-sim/fwd_log.c firmware-sim/fwd_wire16.c
wse-appliance_libs := wseengine wsep wsedata wselink wsecli
wse-appliance_ldlibs := -lopenblas -lz -lm -lpthread

# MemoryX's store and the gradient sum tree, on the host.
host_tests += memoryx_test
memoryx_test_srcs := tests/host/memoryx_test.c firmware-sim/appliance/memoryx_store.c \
	firmware-sim/appliance/memoryx_spill.c
memoryx_test_libs := wsep wseengine wselink
memoryx_test_ldlibs := -lopenblas -lm -lpthread

# The appliance on the host, with its real processes and the real compiler.
host_tests += appliance_test
appliance_test_srcs := tests/host/appliance_test.c
appliance_test_libs := wsecompiler wsep wafer wseengine wsedata wselink
appliance_test_ldlibs := -lopenblas -lz -lm
$(B)/host-tests/appliance_test: | $(B)/bin/wse-appliance $(B)/bin/wsefwd
$(B)/host-tests-san/appliance_test: | $(B)/san-bin/wse-appliance $(B)/san-bin/wsefwd
$(B)/san-bin/wse-appliance: $(patsubst %.c,$(B)/obj-san/%.o,$(wse-appliance_srcs)) \
		$(foreach l,$(wse-appliance_libs),$(B)/lib-san/lib$(l).a)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(wse-appliance_ldlibs)
userspace: $(B)/san-bin/wse-appliance

# The appliance's link to its parts against a fake system that misbehaves.
host_tests += hostlink_test
hostlink_test_srcs := tests/host/hostlink_test.c firmware-sim/appliance/hostlink.c
hostlink_test_libs := wselink
hostlink_test_ldlibs := -lpthread
