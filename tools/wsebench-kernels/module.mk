# wsebench-kernels: the engine's dense layers against bare sgemm, and the
# training step rate (Documentation/engine.rst). A benchmark: built by
# `make`, not run by `make check`.
progs += wsebench-kernels
wsebench-kernels_srcs := tools/wsebench-kernels/wsebench-kernels.c
wsebench-kernels_libs := wseengine wsenum
wsebench-kernels_ldlibs := -lopenblas -lm
