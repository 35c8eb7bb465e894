# tools/wsetrain: training on wse devices (Documentation/wsetrain.rst).
progs += wsetrain
wsetrain_srcs := tools/wsetrain/wsetrain.c tools/wsetrain/options.c tools/wsetrain/program.c \
	tools/wsetrain/session.c tools/wsetrain/batches.c tools/wsetrain/stepio.c \
	tools/wsetrain/loop.c tools/wsetrain/checkpoint.c tools/wsetrain/metrics.c
wsetrain_libs := wse wsedata wsemetrics wsep wseengine wselink
wsetrain_ldlibs := $(WSE_LDLIBS) -lz -lopenblas -lm -lpthread
