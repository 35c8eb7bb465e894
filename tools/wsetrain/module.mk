# tools/wsetrain: training on wse devices (Documentation/wsetrain.rst).
progs += wsetrain
wsetrain_srcs := $(addprefix tools/wsetrain/, wsetrain.c options.c program.c session.c job.c \
	batches.c steps.c mode_pipelined.c mode_streaming.c schedule.c predict.c state.c \
	checkpoint.c saver.c rundir.c interrupt.c report.c eta.c metrics.c text.c sample.c)
wsetrain_libs := wse wsedata wsemetrics wsep wseengine wselink
wsetrain_ldlibs := $(WSE_LDLIBS) $(PROTOBUF_C_LIBS) -lz -ljson-c -lopenblas -lm -lpthread

# The ETA on made-up timelines.
host_tests += wsetrain_eta_test
wsetrain_eta_test_srcs := tests/host/wsetrain_eta_test.c tools/wsetrain/eta.c
wsetrain_eta_test_ldlibs := -lm

# What a run shows and records: lines, the bar, CSV and TensorBoard alike.
host_tests += wsetrain_report_test
wsetrain_report_test_srcs := tests/host/wsetrain_report_test.c tools/wsetrain/report.c \
	tools/wsetrain/metrics.c tools/wsetrain/eta.c tools/wsetrain/options.c
wsetrain_report_test_libs := wsemetrics wsep wsenum
wsetrain_report_test_ldlibs := $(PROTOBUF_C_LIBS) -lm
