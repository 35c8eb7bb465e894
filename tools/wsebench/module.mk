# tools/wsebench: bandwidth and command-rate benchmark (Documentation/wsebench.rst).
progs += wsebench
wsebench_srcs := tools/wsebench/wsebench.c tools/wsebench/bench_bw.c \
	tools/wsebench/bench_rate.c tools/wsebench/bench_raw.c tools/wsebench/bench_stats.c
wsebench_libs := wse wselink wsecli
wsebench_ldlibs = $(WSE_LDLIBS) -lpthread
