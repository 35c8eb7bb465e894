# firmware-sim: wsefwd, the firmware simulator daemon (one process = one CS
# system). the engine is lib/engine.
progs += wsefwd
wsefwd_srcs := firmware-sim/wsefwd.c firmware-sim/fwd_options.c \
	firmware-sim/fwd_wafer.c firmware-sim/fwd_log.c firmware-sim/fwd_memory.c \
	firmware-sim/fwd_server.c firmware-sim/fwd_conn.c firmware-sim/fwd_dispatch.c \
	firmware-sim/fwd_handshake.c firmware-sim/fwd_link_ops.c \
	firmware-sim/fwd_mem_ops.c firmware-sim/fwd_fault.c \
	firmware-sim/fwd_exec_queue.c firmware-sim/fwd_program.c \
	firmware-sim/fwd_stream.c firmware-sim/fwd_run.c firmware-sim/fwd_micro.c firmware-sim/fwd_pipeline.c \
	firmware-sim/fwd_graph.c firmware-sim/fwd_wire16.c \
	firmware-sim/fwd_params.c firmware-sim/fwd_region.c firmware-sim/fwd_snapshot.c \
	firmware-sim/fwd_timing_setup.c
wsefwd_libs := fwdtiming wseengine wsep wafer wselink wselinktest
wsefwd_ldlibs := -lopenblas -lm -lpthread

# The daemon tests run the real wsefwd; their sanitizer builds run a
# sanitizer build of the daemon (kept out of build/host-tests-san, whose
# every program is run as a test).
host_tests += wsefwd_test
wsefwd_test_srcs := tests/host/wsefwd_test.c
wsefwd_test_libs := wselink wselinktest
$(B)/san-bin/wsefwd: $(patsubst %.c,$(B)/obj-san/%.o,$(wsefwd_srcs)) \
		$(foreach l,$(wsefwd_libs),$(B)/lib-san/lib$(l).a)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(wsefwd_ldlibs)
$(B)/host-tests/wsefwd_test: | $(B)/bin/wsefwd
$(B)/host-tests-san/wsefwd_test: | $(B)/san-bin/wsefwd
userspace: $(B)/san-bin/wsefwd

host_tests += wsefwd_memory_test
wsefwd_memory_test_srcs := tests/host/wsefwd_memory_test.c firmware-sim/fwd_memory.c

# The execution opcodes against the real daemon, with programs from the
# real compiler.
host_tests += wsefwd_exec_test
wsefwd_exec_test_srcs := tests/host/wsefwd_exec_test.c
wsefwd_exec_test_libs := wsecompiler wsep wafer wseengine wselink
wsefwd_exec_test_ldlibs := -lopenblas -lm
$(B)/host-tests/wsefwd_exec_test: | $(B)/bin/wsefwd
$(B)/host-tests-san/wsefwd_exec_test: | $(B)/san-bin/wsefwd

# The read-ahead bound (E_BUSY, never a stalled link) and CANCEL, in raw frames.
host_tests += wsefwd_cancel_test
wsefwd_cancel_test_srcs := tests/host/wsefwd_cancel_test.c
wsefwd_cancel_test_libs := wsecompiler wsep wafer wseengine wselink
wsefwd_cancel_test_ldlibs := -lopenblas -lm
$(B)/host-tests/wsefwd_cancel_test: | $(B)/bin/wsefwd
$(B)/host-tests-san/wsefwd_cancel_test: | $(B)/san-bin/wsefwd

# The timing model (firmware-sim/timing/timing.h), an internal library that
# wsefwd and its test link rather than each compiling its files.
libs += fwdtiming
fwdtiming_srcs := firmware-sim/timing/timing_params.c firmware-sim/timing/timing_model.c

# The timing model on its own: parameter file, aggregates, fc-mnist beside
# the compiler's estimate.
host_tests += timing_model_test
timing_model_test_srcs := tests/host/timing_model_test.c
timing_model_test_libs := fwdtiming wsecompiler wseengine wsep wafer
timing_model_test_ldlibs = $(PROTOBUF_C_LIBS) -lopenblas -lm

# fc-mnist through wsecc, wsefwd and wse-trainhost, in both modes.
# Graph programs (the ONNX exports) on the real daemon, both modes, against
# the host's graph executor.
host_tests += wsefwd_graph_test
wsefwd_graph_test_srcs := tests/host/wsefwd_graph_test.c tests/host/wsep_sample.c
wsefwd_graph_test_libs := wsep
wsefwd_graph_test_ldlibs := -lm
$(B)/host-tests/wsefwd_graph_test: | $(B)/bin/wsefwd $(B)/bin/wse-appliance $(B)/bin/wse-trainhost \
	$(B)/bin/wsecc $(B)/bin/wse-graphtrain
$(B)/host-tests-san/wsefwd_graph_test: | $(B)/san-bin/wsefwd $(B)/san-bin/wse-appliance \
	$(B)/bin/wse-trainhost $(B)/bin/wsecc $(B)/bin/wse-graphtrain

host_tests += wsefwd_trainhost_test
wsefwd_trainhost_test_srcs := tests/host/wsefwd_trainhost_test.c
$(B)/host-tests/wsefwd_trainhost_test: | $(B)/bin/wsefwd $(B)/bin/wse-appliance $(B)/bin/wse-trainhost $(B)/bin/wsecc
$(B)/host-tests-san/wsefwd_trainhost_test: | $(B)/san-bin/wsefwd $(B)/san-bin/wse-appliance $(B)/bin/wse-trainhost $(B)/bin/wsecc
