# tools/wsetrain: training on wse devices (Documentation/wsetrain.rst).
progs += wsetrain
wsetrain_srcs := $(addprefix tools/wsetrain/, wsetrain.c options.c program.c session.c job.c \
	batches.c steps.c mode_pipelined.c mode_streaming.c schedule.c state.c checkpoint.c \
	report.c metrics.c)
wsetrain_libs := wse wsedata wsemetrics wsep wseengine wselink
wsetrain_ldlibs := $(WSE_LDLIBS) $(PROTOBUF_C_LIBS) -lz -lopenblas -lm -lpthread
