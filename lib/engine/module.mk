# The firmware's numerical engine (Documentation/engine.rst): fp32 kernels
# on OpenBLAS and the layer stack the executor runs.
libs += wseengine
wseengine_srcs := $(addprefix lib/engine/, \
	blas_core.c buffer.c convert.c dense.c errors.c half.c optim.c params.c precision.c relu.c rng.c \
	shape.c softmax_xent.c sum_tree.c threads.c train.c workspace.c)
# The graph ops and their executor (wse/engine_ops.h, wse/engine_graph.h).
wseengine_srcs += $(addprefix lib/engine/, \
	activation.c attention.c batchnorm.c binary.c conv.c dropout.c gather.c graph.c graph_exec.c graph_wsep.c \
	layernorm.c layout.c rmsnorm.c rotary.c matmul.c pool.c softmax.c where.c xent_tokens.c)

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

host_tests += engine_ops_test
engine_ops_test_srcs := tests/host/engine_ops_test.c
engine_ops_test_libs := wseengine
engine_ops_test_ldlibs := -lopenblas -lm

host_tests += engine_optim_test
engine_optim_test_srcs := tests/host/engine_optim_test.c
engine_optim_test_libs := wseengine
engine_optim_test_ldlibs := -lopenblas -lm

host_tests += engine_graph_test
engine_graph_test_srcs := tests/host/engine_graph_test.c
engine_graph_test_libs := wseengine
engine_graph_test_ldlibs := -lopenblas -lm
