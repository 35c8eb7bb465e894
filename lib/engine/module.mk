# The firmware's numerical engine (Documentation/engine.rst): fp32 kernels
# on OpenBLAS and the layer stack the executor runs.
libs += wseengine
wseengine_srcs := $(addprefix lib/engine/, \
	blas_core.c buffer.c convert.c dense.c errors.c half.c optim.c params.c relu.c rng.c \
	shape.c softmax_xent.c threads.c train.c workspace.c)

# Element-wise loops left to GCC's vectorizer (vec.h, ENGINE_VECTOR_CLONES).
$(B)/obj/lib/engine/optim.o $(B)/obj-san/lib/engine/optim.o: \
	BASE_CFLAGS += -ftree-vectorize -fno-math-errno

host_tests += engine_kernels_test
engine_kernels_test_srcs := tests/host/engine_kernels_test.c
engine_kernels_test_libs := wseengine
engine_kernels_test_ldlibs := -lopenblas -lm

host_tests += engine_train_test
engine_train_test_srcs := tests/host/engine_train_test.c
engine_train_test_libs := wseengine
engine_train_test_ldlibs := -lopenblas -lm
