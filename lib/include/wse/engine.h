/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libwseengine, the numerical engine: the fp32 kernels a layer program runs
 * (input conversion, dense layers, ReLU, softmax cross-entropy, optimizers)
 * and a layer stack that strings them into training steps. The firmware
 * simulator executes programs with it and MemoryX updates weights with it;
 * it depends on nothing of theirs. Documentation/engine.rst describes it.
 *
 * Layouts (all row-major, contiguous, fp32 unless said otherwise):
 *   activations  [batch][features]   (batch-major)
 *   weights      [out][in]           (PyTorch nn.Linear.weight)
 *   biases       [out]
 *   labels       uint8_t class indices [batch], each < classes
 *
 * Errors: functions that can fail return 0 or a negative errno value:
 *   -EINVAL     a NULL pointer, a zero or inconsistent size, a bad layer
 *               index, a batch larger than the workspace, a bad
 *               hyperparameter, a layer stack call out of order
 *   -EOVERFLOW  a dimension too large for the BLAS interface (int)
 *   -EDOM       a label not smaller than the number of classes
 *   -ENOMEM     out of memory (only the create functions allocate, and a
 *               matrix product in fp16 or bf16: its rounded inputs)
 * engine_strerror() turns them into a sentence. Outputs are left untouched
 * when a function fails.
 *
 * Threads: the functions keep no global state and may run concurrently on
 * different data; the OpenBLAS thread count (engine_set_threads) is global,
 * the compute precision (engine_set_precision) per thread.
 */
#ifndef WSE_ENGINE_H
#define WSE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wse/layers.h"

const char *engine_strerror(int err);

/* --- threads and determinism (threads.c) ----------------------------------
 * Results are bit-identical for the same inputs, the same OpenBLAS thread
 * count and the same OpenBLAS kernels (engine_blas_core). The count is OpenBLAS' own (OPENBLAS_NUM_THREADS
 * or the number of cores) until engine_set_threads() fixes it; the firmware
 * should always fix it.
 */
int engine_set_threads(int threads);	/* returns the count now in force */
int engine_threads(void);
const char *engine_blas_threading(void);	/* "serial", "pthreads", "openmp" */
const char *engine_blas_config(void);

/* --- OpenBLAS kernel selection (blas_core.c) -------------------------------
 * The kernels (core type) also decide the bits of a result. OpenBLAS 0.3.21
 * does not recognise CPUs newer than itself and falls back to slow generic
 * kernels; OPENBLAS_CORETYPE, read when the library loads, overrides that.
 */
const char *engine_blas_core(void);	/* e.g. "SkylakeX", "Prescott" */
/* The core to use instead when OpenBLAS fell back to one without AVX2 on a
 * CPU with AVX-512 ("SkylakeX") or AVX2 ("Haswell"); NULL if none.
 */
const char *engine_blas_better_core(void);
/*
 * Call first thing in main() as engine_blas_reexec("/proc/self/exe", argv):
 * when there is a better core and OPENBLAS_CORETYPE is unset, sets it and
 * executes path with argv, so this returns only if nothing needed doing (0)
 * or exec failed (negative errno; the process carries on with the old
 * kernels and OPENBLAS_CORETYPE unset).
 */
int engine_blas_reexec(const char *path, char *const argv[]);

/* --- seeded pseudo-random numbers (rng.c): splitmix64 --------------------- */
struct engine_rng {
	uint64_t state;
};

void engine_rng_seed(struct engine_rng *rng, uint64_t seed);
uint64_t engine_rng_next(struct engine_rng *rng);
float engine_rng_uniform(struct engine_rng *rng);	/* in [0, 1), 24 bits */

/* --- input conversion (convert.c) ----------------------------------------- */
/* out[i] = px[i] / 255 (so 0 -> 0.0f and 255 -> 1.0f exactly). */
int engine_pixels_to_f32(const uint8_t *px, size_t n, float *out);

/* --- 16-bit float storage (half.c) ----------------------------------------
 * bfloat16 and IEEE binary16 (fp16) as uint16_t bit patterns, to store or
 * send tensors in half the bytes; arithmetic stays fp32. fp32 -> 16 bits
 * rounds to nearest, ties to even (fp16: |x| >= 65520 becomes infinity,
 * tiny values become subnormal or zero); NaN stays NaN. 16 bits -> fp32 is
 * exact.
 */
int engine_f32_to_bf16(const float *x, size_t n, uint16_t *out);
int engine_bf16_to_f32(const uint16_t *x, size_t n, float *out);
int engine_f32_to_f16(const float *x, size_t n, uint16_t *out);
int engine_f16_to_f32(const uint16_t *x, size_t n, float *out);

/* --- mixed precision (precision.c) ----------------------------------------
 * The calling thread's compute precision (fp32 until set), as autocast's
 * state is per thread: in fp16 or bf16 every matrix product (dense, MatMul,
 * Gemm, convolution, attention's two products) rounds its inputs to 16 bits
 * and accumulates in fp32; element-wise ops, softmax, norms, the loss and
 * the optimizer stay fp32, as PyTorch's autocast keeps them.
 * engine_set_precision() returns the previous one (an unknown value changes
 * nothing). engine_round_f32() rounds n floats to @p and back (ties to even;
 * out may be x).
 */
enum engine_precision { ENGINE_FP32 = 0, ENGINE_FP16 = 1, ENGINE_BF16 = 2 };

enum engine_precision engine_set_precision(enum engine_precision p);
enum engine_precision engine_precision(void);
const char *engine_precision_name(enum engine_precision p);	/* "fp32", "fp16", "bf16" */
int engine_round_f32(enum engine_precision p, const float *x, size_t n, float *out);

/*
 * Dynamic loss scaling with PyTorch GradScaler's rules (fp16 only: bf16
 * has fp32's range). The loss gradient is multiplied by @scale; before the
 * optimizer, engine_unscale() multiplies each gradient by the fp32
 * reciprocal of the scale and says whether all of it is finite. Then
 * engine_loss_scaler_update() with whether any was not: an overflow skips
 * the step (returns false), halves the scale and restarts the count; after
 * @interval good steps in a row the scale doubles.
 */
struct engine_loss_scaler {
	float scale;		/* 65536 at first */
	float growth, backoff;	/* 2, 0.5 */
	uint32_t interval;	/* 2000 */
	uint32_t good_steps;	/* finite steps since the last change */
	uint64_t skipped;	/* steps skipped for inf or NaN */
};

void engine_loss_scaler_init(struct engine_loss_scaler *s);
bool engine_unscale(float *g, size_t n, float scale);
bool engine_loss_scaler_update(struct engine_loss_scaler *s, bool found_inf);

/* --- dense layers (dense.c) -----------------------------------------------
 * Forward: y[batch][out] = x[batch][in] * w[out][in]^T + b, then ReLU if
 * relu. b may be NULL (no bias). y is overwritten.
 */
int engine_dense_forward(const float *x, const float *w, const float *b,
			 size_t batch, size_t in, size_t out, bool relu, float *y);
/*
 * Backward, given dy[batch][out] (already masked by the ReLU, see
 * engine_relu_backward):
 *   dx[batch][in] = dy * w                     overwritten; NULL skips it
 *   dw[out][in]   = grad_beta * dw + dy^T * x
 *   db[out]       = grad_beta * db + sum over the batch of dy; NULL skips it
 * grad_beta 0 overwrites the gradients (their old contents, even NaN, are
 * ignored); 1 accumulates into them, e.g. across micro-batches.
 */
int engine_dense_backward(const float *dy, const float *x, const float *w,
			  size_t batch, size_t in, size_t out, float grad_beta,
			  float *dx, float *dw, float *db);
/*
 * Its two halves, which read dy and write disjoint outputs, so they may
 * run at once on different threads: dx (required here), and dw and db
 * (db NULL skips it). engine_dense_backward() is the two in a row.
 */
int engine_dense_backward_input(const float *dy, const float *w, size_t batch,
				size_t in, size_t out, float *dx);
int engine_dense_backward_params(const float *dy, const float *x, size_t batch,
				 size_t in, size_t out, float grad_beta, float *dw,
				 float *db);
/*
 * The gradient sum tree (sum_tree.c), the one contract between a device
 * summing its micro-batches and SwarmX summing systems: items [lo, lo + c)
 * are summed as the subtree of [lo, lo + h) plus that of [lo + h, lo + c),
 * h the largest power of two below c, each add engine_vec_add(). An aligned
 * power-of-two run of items is a subtree, so whoever sums a run first
 * gives the same bits.
 */
/* acc[i] += x[i] for @n floats. */
void engine_vec_add(float *acc, const float *x, size_t n);
/* The largest power of two below @c (c >= 2). */
unsigned int engine_sum_tree_split(unsigned int c);
/* part[0] = the tree sum of part[0 .. n - 1], @floats each; the others are spoilt. */
void engine_sum_tree(float *const *part, unsigned int n, size_t floats);

/* --- ReLU (relu.c) --------------------------------------------------------- */
/* y = max(x, 0); NaN propagates. y may equal x. */
int engine_relu_forward(const float *x, size_t n, float *y);
/* dx = y > 0 ? dy : 0, masked by the forward *output* y. dx may equal dy. */
int engine_relu_backward(const float *y, const float *dy, size_t n, float *dx);

/* --- softmax cross-entropy and prediction (softmax_xent.c) ----------------
 * classes is 1..256 (labels are bytes). Every label is checked before any
 * output is written.
 */
/* Mean loss over the batch and the count of rows whose argmax is the label. */
int engine_xent_forward(const float *logits, const uint8_t *labels,
			size_t batch, size_t classes, float *loss,
			size_t *correct);
/*
 * dlogits = (softmax(logits) - onehot(labels)) / norm. norm is the number of
 * samples the loss is averaged over: batch, or the whole batch when this is
 * one micro-batch of it (so accumulated gradients are the whole batch's mean).
 */
int engine_xent_backward(const float *logits, const uint8_t *labels,
			 size_t batch, size_t classes, size_t norm,
			 float *dlogits);
/* pred[i] = index of the largest logit in row i (the first one on ties). */
int engine_argmax(const float *logits, size_t batch, size_t classes,
		  uint8_t *pred);

/* --- optimizers (optim.c), PyTorch's conventions ---------------------------
 * With g = grad + weight_decay * w (L2, as torch.optim):
 *   ENGINE_SGD       w -= lr * g
 *   ENGINE_MOMENTUM  v = momentum * v + (1 - dampening) * g   (v = g at t = 1)
 *                    w -= lr * v, or with nesterov w -= lr * (g + momentum * v)
 *   ENGINE_ADAM      m = beta1 * m + (1 - beta1) * g
 *                    v = beta2 * v + (1 - beta2) * g * g
 *                    w -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *   ENGINE_ADAMW     as Adam with g = grad, after w *= 1 - lr * weight_decay
 *                    (decoupled weight decay, torch.optim.AdamW)
 * State arrays belong to the caller, start at zero and are as long as w:
 * none for SGD, s0 = v for momentum, s0 = m and s1 = v for Adam and AdamW.
 * t is the 1-based step number (Adam's bias correction).
 */
enum engine_optim_kind {
	ENGINE_SGD,
	ENGINE_MOMENTUM,
	ENGINE_ADAM,
	ENGINE_ADAMW,
};

/*
 * Hyperparameters are doubles, as Python floats are in PyTorch: scalars
 * derived from them (1 - beta, lr / (1 - beta1^t), ...) are formed in double
 * and rounded to float once, so 1 - 0.999 is 0.001f, not 1 - 0.999f.
 * Fields a kind does not use are ignored; zero (the defaults) keeps the
 * plain behaviour (no dampening, no Nesterov).
 */
struct engine_optim {
	enum engine_optim_kind kind;
	double lr;
	double momentum;		/* ENGINE_MOMENTUM */
	double beta1, beta2, eps;	/* ENGINE_ADAM, ENGINE_ADAMW */
	double weight_decay;
	double dampening;		/* ENGINE_MOMENTUM, in [0, 1) */
	bool nesterov;			/* ENGINE_MOMENTUM: momentum > 0, dampening 0 */
};

/* Fills in PyTorch's defaults for kind (momentum 0.9; Adam 0.9, 0.999, 1e-8;
 * AdamW also weight_decay 0.01).
 */
void engine_optim_defaults(struct engine_optim *opt, enum engine_optim_kind kind,
			   double lr);
int engine_optim_check(const struct engine_optim *opt);
unsigned int engine_optim_state_arrays(enum engine_optim_kind kind);
int engine_optim_step(const struct engine_optim *opt, uint64_t t, float *w,
		      const float *grad, float *s0, float *s1, size_t n);

/*
 * Learning-rate schedules, as a function of the 1-based step t (what a
 * PyTorch LambdaLR with the same function gives when scheduler.step()
 * follows each optimizer.step()):
 *   ENGINE_LR_CONSTANT        lr
 *   ENGINE_LR_WARMUP_COSINE   lr * t / warmup for t <= warmup, then
 *                             min_lr + (lr - min_lr) * (1 + cos(pi * p)) / 2
 *                             with p = (t - warmup) / (total - warmup), and
 *                             min_lr after total
 */
enum engine_lr_kind {
	ENGINE_LR_CONSTANT,
	ENGINE_LR_WARMUP_COSINE,
};

struct engine_lr_schedule {
	enum engine_lr_kind kind;
	uint64_t warmup, total;
	double min_lr;
};

/* -EINVAL unless warmup < total and 0 <= min_lr (cosine). */
int engine_lr_check(const struct engine_lr_schedule *s);
double engine_lr_at(const struct engine_lr_schedule *s, double lr, uint64_t t);

/* --- the layer stack --------------------------------------------------------
 * A network of dense layers: layer k maps width[k] features to width[k + 1],
 * followed by a ReLU when relu[k]. The last layer's outputs are the logits
 * of a softmax cross-entropy loss over width[layers] classes.
 */
#define ENGINE_MAX_LAYERS WSE_MAX_LAYERS

struct engine_shape {
	size_t layers;
	size_t width[ENGINE_MAX_LAYERS + 1];
	bool relu[ENGINE_MAX_LAYERS];
};

/* shape.c */
int engine_shape_check(const struct engine_shape *shape);
bool engine_shape_equal(const struct engine_shape *a, const struct engine_shape *b);
/* A plain MLP: ReLU after every layer except the last. */
int engine_shape_mlp(struct engine_shape *shape, const size_t *widths,
		     size_t layers);

/*
 * Parameters, their gradients and optimizer state (params.c). In layer
 * pipelined execution they live on the device; in weight streaming the host
 * keeps the same structure and runs the same update.
 */
struct engine_layer {
	size_t in, out;
	float *w, *b;			/* [out][in], [out] */
	float *dw, *db;			/* gradients, same shapes */
	float *w_state[2], *b_state[2];	/* optimizer state, NULL if unused */
};

struct engine_params {
	struct engine_shape shape;
	enum engine_optim_kind kind;
	struct engine_layer layer[ENGINE_MAX_LAYERS];
};

int engine_params_create(const struct engine_shape *shape,
			 enum engine_optim_kind kind,
			 struct engine_params **params);
void engine_params_destroy(struct engine_params *params);
/* PyTorch's nn.Linear initialisation, w and b uniform in +-1/sqrt(in), from
 * a seeded generator; gradients and optimizer state are zeroed.
 */
void engine_params_init(struct engine_params *params, uint64_t seed);
/* One optimizer step of layer k from its dw, db (opt->kind must be the kind
 * the parameters were created for).
 */
int engine_params_update_layer(struct engine_params *params,
			       const struct engine_optim *opt, uint64_t t,
			       size_t k);

/*
 * The workspace (workspace.c): activations and their gradients for up to
 * max_batch samples, allocated once. The per-layer entry points are what
 * weight streaming runs, with each layer's weights passed in as they arrive;
 * engine_train_step() runs them all with the weights of an engine_params.
 *
 * Order of a step: load the input (sets the batch), engine_forward_layer for
 * k = 0 .. layers-1, engine_loss, engine_backward_layer for k = layers-1 .. 0.
 */
struct engine_workspace;

int engine_workspace_create(const struct engine_shape *shape, size_t max_batch,
			    struct engine_workspace **ws);
void engine_workspace_destroy(struct engine_workspace *ws);
int engine_load_pixels(struct engine_workspace *ws, const uint8_t *px,
		       size_t batch);
int engine_load_input(struct engine_workspace *ws, const float *x, size_t batch);
const struct engine_shape *engine_workspace_shape(const struct engine_workspace *ws);
size_t engine_batch(const struct engine_workspace *ws);
/* Activation k: k = 0 is the input, k = layers the logits; [batch][width[k]]. */
const float *engine_activation(const struct engine_workspace *ws, size_t k);
int engine_forward_layer(struct engine_workspace *ws, size_t k, const float *w,
			 const float *b);

struct engine_loss_result {
	float loss;		/* mean over the batch */
	size_t correct;		/* samples whose argmax is the label */
};

/* Loss of the logits and, through norm (see engine_xent_backward), their
 * gradient, which engine_backward_layer then carries back.
 */
/* engine_loss() with the gradient multiplied by @scale (fp16 loss scaling, > 0). */
int engine_loss_scaled(struct engine_workspace *ws, const uint8_t *labels, size_t norm,
		       float scale, struct engine_loss_result *res);
int engine_loss(struct engine_workspace *ws, const uint8_t *labels, size_t norm,
		struct engine_loss_result *res);
/*
 * Layer k's gradients into dw, db (grad_beta as engine_dense_backward) and
 * the gradient of its input for layer k - 1 (not computed for k = 0). w must
 * be the weights the forward pass used.
 */
int engine_backward_layer(struct engine_workspace *ws, size_t k,
			  const float *w, float grad_beta, float *dw, float *db);
/*
 * engine_backward_layer() in three parts, for executors that run one
 * micro-batch's input gradient while another thread computes the weight
 * gradient (firmware-sim's step graph). For layer k, in this order:
 *   engine_backward_mask(ws, k)     layer k's ReLU applied to the gradient
 *                                   of its output (nothing without ReLU)
 *   engine_backward_input(ws, k, w) the gradient of its input, k > 0 only;
 *                                   then layer k - 1's mask may follow
 *   engine_backward_params(ws, k, grad_beta, dw, db)
 * After the mask, input and params read only that masked gradient and
 * write different buffers: they may run at the same time, in either
 * order. The three give the bits of engine_backward_layer().
 */
int engine_backward_mask(struct engine_workspace *ws, size_t k);
int engine_backward_input(struct engine_workspace *ws, size_t k, const float *w);
int engine_backward_params(const struct engine_workspace *ws, size_t k,
			   float grad_beta, float *dw, float *db);

/* train.c: whole steps on an engine_params (layer pipelined execution).
 * Labels are checked before any parameter changes: a bad one (-EDOM) leaves
 * the parameters and optimizer state as they were.
 */
int engine_train_step(struct engine_workspace *ws, struct engine_params *params,
		      const struct engine_optim *opt, uint64_t t,
		      const uint8_t *px, const uint8_t *labels, size_t batch,
		      struct engine_loss_result *res);
/*
 * engine_train_step() with fp16 loss scaling (engine_loss_scaler): the loss
 * gradient times the scaler's scale, every layer's gradients unscaled, and
 * the update only if all are finite (*stepped); the scaler moves on.
 */
int engine_train_step_scaled(struct engine_workspace *ws, struct engine_params *params,
			     const struct engine_optim *opt, uint64_t t, const uint8_t *px,
			     const uint8_t *labels, size_t batch,
			     struct engine_loss_scaler *scaler,
			     struct engine_loss_result *res, bool *stepped);
/*
 * Forward only. With labels, res gets the loss and the correct count; pred,
 * if not NULL, gets each sample's predicted class. Without labels (NULL)
 * pred is required: plain inference.
 */
int engine_evaluate(struct engine_workspace *ws,
		    const struct engine_params *params, const uint8_t *px,
		    const uint8_t *labels, size_t batch,
		    struct engine_loss_result *res, uint8_t *pred);

#endif /* WSE_ENGINE_H */
