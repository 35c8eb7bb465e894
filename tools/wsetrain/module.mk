# tools/wsetrain: training on wse devices (Documentation/wsetrain.rst).
progs += wsetrain
wsetrain_srcs := $(addprefix tools/wsetrain/, wsetrain.c options.c program.c session.c job.c \
	batches.c steps.c mode_pipelined.c mode_streaming.c schedule.c predict.c state.c \
	checkpoint.c rundir.c interrupt.c report.c eta.c metrics.c)
wsetrain_libs := wse wsedata wsemetrics wsep wseengine wselink
wsetrain_ldlibs := $(WSE_LDLIBS) -lz -ljson-c -lopenblas -lm -lpthread
