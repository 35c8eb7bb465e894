/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libwseengine's graph ops: the kernels, forward and backward, of the
 * models that go beyond the MLP (convolutional networks, transformers),
 * each in PyTorch's and ONNX's semantics. The graph executor
 * (wse/engine_graph.h) strings them together; Documentation/ops.rst lists
 * their semantics, their ONNX counterparts and how they are tested.
 *
 * Conventions, in addition to those of wse/engine.h:
 *  - tensors are fp32 (indices int64), row-major, contiguous; images NCHW;
 *  - a backward function *overwrites* its input gradients (dx = ..., never
 *    dx += ...); a NULL gradient pointer skips that gradient. The executor
 *    adds up the contributions of a tensor used more than once;
 *  - scratch buffers belong to the caller, sized by the matching _scratch()
 *    function (in floats);
 *  - 0 or a negative errno: -EINVAL (NULL, zero or inconsistent size, bad
 *    attribute), -EOVERFLOW (a dimension too large for OpenBLAS' int),
 *    -EDOM (an index or label out of range). Outputs are untouched on
 *    failure.
 */
#ifndef WSE_ENGINE_OPS_H
#define WSE_ENGINE_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENGINE_MAX_RANK 6

/* Number of elements of a shape; 0 if any dimension is 0 or on overflow. */
size_t engine_numel(const size_t *dims, size_t rank);

/* --- 2-D convolution (conv.c): im2col and sgemm, group 1 --------------------
 * x[batch][in_ch][in_h][in_w], w[out_ch][in_ch][k_h][k_w], b[out_ch] (may be
 * NULL), y[batch][out_ch][out_h][out_w]. Pads are explicit, per side.
 */
struct engine_conv2d {
	size_t batch, in_ch, in_h, in_w, out_ch, k_h, k_w;
	size_t stride_h, stride_w, dil_h, dil_w;
	size_t pad_top, pad_left, pad_bottom, pad_right;
	size_t out_h, out_w;	/* set by engine_conv2d_setup() */
};

/* Checks @p and computes out_h, out_w; -EINVAL if the kernel does not fit. */
int engine_conv2d_setup(struct engine_conv2d *p);
size_t engine_conv2d_scratch(const struct engine_conv2d *p);
int engine_conv2d_forward(const struct engine_conv2d *p, const float *x, const float *w,
			  const float *b, float *y, float *scratch);
/* dx, dw, db (each may be NULL) from dy. */
int engine_conv2d_backward(const struct engine_conv2d *p, const float *x, const float *w,
			   const float *dy, float *dx, float *dw, float *db, float *scratch);

/* --- 2-D pooling (pool.c) ----------------------------------------------------
 * x[batch*channels][in_h][in_w] -> y[batch*channels][out_h][out_w]. Padding
 * never wins a max; ceil_mode as PyTorch (a last window must start inside
 * the input or its left padding). The average divides by the window's
 * elements inside the input, or with count_include_pad by those inside the
 * padded input.
 */
struct engine_pool2d {
	size_t planes, in_h, in_w, k_h, k_w, stride_h, stride_w, dil_h, dil_w;
	size_t pad_top, pad_left, pad_bottom, pad_right;
	bool ceil_mode, count_include_pad;
	size_t out_h, out_w;	/* set by engine_pool2d_setup() */
};

int engine_pool2d_setup(struct engine_pool2d *p);
int engine_maxpool2d_forward(const struct engine_pool2d *p, const float *x, float *y);
/* The gradient goes to the first maximum of each window. */
int engine_maxpool2d_backward(const struct engine_pool2d *p, const float *x, const float *dy,
			      float *dx);
int engine_avgpool2d_forward(const struct engine_pool2d *p, const float *x, float *y);
int engine_avgpool2d_backward(const struct engine_pool2d *p, const float *dy, float *dx);

/* --- matrix products (matmul.c) ------------------------------------------------
 * Gemm (ONNX): y[m][n] = alpha * A' * B' + beta * C, A' = trans_a ? A^T : A
 * ([m][k]), B' likewise ([k][n]); C (may be NULL) broadcasts to [m][n] from
 * c_rows x c_cols with c_rows in {1, m} and c_cols in {1, n}.
 */
struct engine_gemm {
	size_t m, n, k;
	bool trans_a, trans_b;
	float alpha, beta;
	size_t c_rows, c_cols;
};

int engine_gemm_forward(const struct engine_gemm *p, const float *a, const float *b,
			const float *c, float *y);
int engine_gemm_backward(const struct engine_gemm *p, const float *a, const float *b,
			 const float *dy, float *da, float *db, float *dc);

/*
 * MatMul (numpy's matmul, both ranks >= 2): a[..., m, k] x b[..., k, n],
 * the batch dimensions broadcast against each other. The shapes are given
 * whole; y's is their broadcast.
 */
struct engine_matmul {
	size_t a_rank, b_rank, y_rank;
	size_t a_dims[ENGINE_MAX_RANK], b_dims[ENGINE_MAX_RANK], y_dims[ENGINE_MAX_RANK];
};

/* Checks the shapes and fills y_rank, y_dims. */
int engine_matmul_setup(struct engine_matmul *p);
int engine_matmul_forward(const struct engine_matmul *p, const float *a, const float *b, float *y);
int engine_matmul_backward(const struct engine_matmul *p, const float *a, const float *b,
			   const float *dy, float *da, float *db);

/* --- element-wise binary ops with numpy broadcasting (binary.c) ---------- */
enum engine_binary_kind {
	ENGINE_BIN_ADD,
	ENGINE_BIN_SUB,
	ENGINE_BIN_MUL,
	ENGINE_BIN_DIV,
};

struct engine_binary {
	enum engine_binary_kind kind;
	size_t a_rank, b_rank, y_rank;
	size_t a_dims[ENGINE_MAX_RANK], b_dims[ENGINE_MAX_RANK], y_dims[ENGINE_MAX_RANK];
};

int engine_binary_setup(struct engine_binary *p);
int engine_binary_forward(const struct engine_binary *p, const float *a, const float *b, float *y);
/* da, db are summed over the dimensions their operand was broadcast along. */
int engine_binary_backward(const struct engine_binary *p, const float *a, const float *b,
			   const float *dy, float *da, float *db);

/* --- element-wise activations (activation.c) ---------------------------------
 * Backward takes what the derivative needs: x for GELU and SiLU, y for the
 * others.
 */
enum engine_act_kind {
	ENGINE_ACT_RELU,
	ENGINE_ACT_TANH,
	ENGINE_ACT_SIGMOID,
	ENGINE_ACT_GELU,	/* x * Phi(x), with erf */
	ENGINE_ACT_GELU_TANH,	/* PyTorch's approximate='tanh' */
	ENGINE_ACT_SILU,	/* x * sigmoid(x) (PyTorch's F.silu, LLaMA's SwiGLU gate) */
};

int engine_act_forward(enum engine_act_kind kind, const float *x, size_t n, float *y);
int engine_act_backward(enum engine_act_kind kind, const float *x, const float *y,
			const float *dy, size_t n, float *dx);

/* --- layer normalization (layernorm.c) ---------------------------------------
 * Each of @rows rows of @cols elements: y = (x - mean) / sqrt(var + eps) *
 * scale + bias (bias may be NULL), var the biased variance. mean and rstd
 * (1 / sqrt(var + eps)), [rows] each, are written for the backward pass.
 */
int engine_layernorm_forward(const float *x, const float *scale, const float *bias,
			     size_t rows, size_t cols, float eps, float *y, float *mean,
			     float *rstd);
int engine_layernorm_backward(const float *x, const float *scale, const float *mean,
			      const float *rstd, const float *dy, size_t rows, size_t cols,
			      float *dx, float *dscale, float *dbias);

/* --- RMS normalization (rmsnorm.c) -------------------------------------------
 * Each of @rows rows of @cols elements: y = x / sqrt(mean(x^2) + eps) *
 * scale. rstd (1 / sqrt(mean(x^2) + eps)), [rows], is written for the
 * backward pass.
 */
int engine_rmsnorm_forward(const float *x, const float *scale, size_t rows, size_t cols,
			   float eps, float *y, float *rstd);
int engine_rmsnorm_backward(const float *x, const float *scale, const float *rstd,
			    const float *dy, size_t rows, size_t cols, float *dx, float *dscale);

/* --- rotary position embedding (rotary.c) -------------------------------------
 * x, y: [rows][seq][heads][dim], cos and sin: [seq][dim], dim even. Each
 * head's vector at position t: y = x * cos[t] + (-x2, x1) * sin[t], with
 * x1, x2 its halves. The tables are constants: no gradient.
 */
struct engine_rotary {
	size_t rows, seq, heads, dim;
};

int engine_rotary_forward(const struct engine_rotary *p, const float *x, const float *cos,
			  const float *sin, float *y);
int engine_rotary_backward(const struct engine_rotary *p, const float *cos, const float *sin,
			   const float *dy, float *dx);

/* --- batch normalization (batchnorm.c) ----------------------------------------
 * x, y: [batch][channels][spatial] (NCHW with H*W folded); scale, bias,
 * running mean and variance: [channels]. With @batch_stats (training) y is
 * normalized by the batch's mean and biased variance, and the running
 * statistics become momentum * running + (1 - momentum) * batch's (ONNX's
 * momentum: PyTorch's 0.1 is 0.9 here), the variance unbiased (n / (n - 1))
 * when @unbiased, as PyTorch keeps it; without, by the running ones, which
 * stay. mean and rstd ([channels]) keep what normalized y for the backward
 * pass, whose dx treats the statistics as functions of x exactly when they
 * were the batch's.
 */
struct engine_batchnorm {
	size_t batch, channels, spatial;
	float eps, momentum;
	bool unbiased;
};

int engine_batchnorm_forward(const struct engine_batchnorm *p, bool batch_stats, const float *x,
			     const float *scale, const float *bias, float *run_mean, float *run_var,
			     float *y, float *mean, float *rstd);
int engine_batchnorm_backward(const struct engine_batchnorm *p, bool batch_stats, const float *x,
			      const float *scale, const float *mean, const float *rstd,
			      const float *dy, float *dx, float *dscale, float *dbias);

/* --- softmax along one axis (softmax.c): x viewed as [outer][len][inner] -- */
int engine_softmax_forward(const float *x, size_t outer, size_t len, size_t inner, float *y);
int engine_softmax_backward(const float *y, const float *dy, size_t outer, size_t len,
			    size_t inner, float *dx);

/* --- gather (gather.c): data viewed as [outer][len][inner] ---------------------
 * y[o][i][j] = data[o][idx[i]][j] for the @count indices; negative indices
 * count from the end (-EDOM when out of range). Backward scatter-adds dy
 * into ddata (overwritten: rows no index names get 0).
 */
int engine_gather_forward(const float *data, size_t outer, size_t len, size_t inner,
			  const int64_t *idx, size_t count, float *y);
int engine_gather_backward(const float *dy, size_t outer, size_t len, size_t inner,
			   const int64_t *idx, size_t count, float *ddata);

/* --- causal multi-head self-attention, fused (attention.c) ---------------------
 * q, k, v, y: [batch][seq][heads * head_dim], head h using columns
 * h * head_dim .. (h + 1) * head_dim - 1 (PyTorch's view + transpose(1, 2)).
 * For each batch and head: P = softmax(scale * Q K^T, masked where the key
 * comes after the query when causal), Y = P V. probs ([batch][heads][seq]
 * [seq]) keeps P for the backward pass. With a dropout @ratio (nn.Dropout
 * on the probabilities, in training) Y = (P * keep / (1 - ratio)) V, the
 * mask keep ([batch][heads][seq][seq]) drawn from @seed as dropout_f32
 * draws it and kept for the backward pass. A @key_mask ([batch][seq], BERT's
 * padding mask made additive: 0 to attend, very negative to ignore a key) is
 * added to every query's scores of its sample before the softmax; it is an
 * input of the model, so it gets no gradient.
 */
struct engine_attention {
	size_t batch, seq, heads, head_dim;
	float scale;
	bool causal;
	float ratio;		/* attention dropout, [0, 1); only the _dropout functions apply it */
	const float *key_mask;	/* NULL: none */
};

int engine_attention_forward(const struct engine_attention *p, const float *q, const float *k,
			     const float *v, float *y, float *probs);
/* scratch: engine_attention_scratch() floats. */
size_t engine_attention_scratch(const struct engine_attention *p);
int engine_attention_backward(const struct engine_attention *p, const float *q, const float *k,
			      const float *v, const float *probs, const float *dy, float *dq,
			      float *dk, float *dv, float *scratch);
/* The same with dropout of p->ratio on the probabilities (training). */
int engine_attention_forward_dropout(const struct engine_attention *p, const float *q,
				     const float *k, const float *v, uint64_t seed, float *y,
				     float *probs, uint8_t *keep, float *scratch);
int engine_attention_backward_dropout(const struct engine_attention *p, const float *q,
				      const float *k, const float *v, const float *probs,
				      const uint8_t *keep, const float *dy, float *dq, float *dk,
				      float *dv, float *scratch);

/* --- dropout (dropout.c) -------------------------------------------------------
 * y = x * keep / (1 - ratio), keep[i] = 1 with probability 1 - ratio, drawn
 * from splitmix64 seeded with @seed (the same seed gives the same mask).
 * ratio in [0, 1). The executor calls it only in training.
 */
int engine_dropout_forward(const float *x, size_t n, float ratio, uint64_t seed, float *y,
			   uint8_t *keep);
int engine_dropout_backward(const float *dy, const uint8_t *keep, size_t n, float ratio,
			    float *dx);

/* --- data movement (layout.c) ---------------------------------------------- */
/* y = x transposed: y's dimension i is x's dimension perm[i]. */
int engine_transpose(const float *x, const size_t *dims, size_t rank, const size_t *perm,
		     float *y);
/*
 * x viewed as [outer][total][inner] cut along the middle axis into @parts
 * pieces of sizes[i] (summing to total); and its inverse, concatenation.
 */
int engine_split(const float *x, size_t outer, size_t inner, const size_t *sizes, size_t parts,
		 float *const *ys);
int engine_concat(const float *const *xs, size_t outer, size_t inner, const size_t *sizes,
		  size_t parts, float *y);
/*
 * x viewed as [outer][len][inner]: y = x[:, start:start + count, :] (ONNX
 * Slice along one axis, step 1); backward writes dy there and 0 elsewhere.
 */
int engine_slice_forward(const float *x, size_t outer, size_t len, size_t inner, size_t start,
			 size_t count, float *y);
int engine_slice_backward(const float *dy, size_t outer, size_t len, size_t inner, size_t start,
			  size_t count, float *dx);

/* --- where (where.c) -----------------------------------------------------------
 * y = cond ? a : b per element, the three operands (0: cond, 1: a, 2: b)
 * broadcast to y numpy's way. The condition is floats, true where not 0; it
 * gets no gradient. Backward: da = dy where cond, db = dy elsewhere, each
 * summed over its operand's broadcast dimensions (NULL: not wanted).
 */
struct engine_where {
	size_t rank[3], dims[3][ENGINE_MAX_RANK];
	size_t y_rank, y_dims[ENGINE_MAX_RANK];
};

/* Checks that the operands broadcast to y's shape (set by the caller). */
int engine_where_setup(struct engine_where *p);
int engine_where_forward(const struct engine_where *p, const float *cond, const float *a,
			 const float *b, float *y);
int engine_where_backward(const struct engine_where *p, const float *cond, const float *dy,
			  float *da, float *db);

/* --- token-level softmax cross-entropy (xent_tokens.c) ---------------------------
 * logits[n][classes], labels[n] in [0, classes) or ENGINE_XENT_IGNORE: mean
 * loss over the rows not ignored (summed in double; 0 when all are) and the
 * count of those whose first argmax is the label. Backward: dlogits =
 * (softmax - onehot) / norm (norm as engine_xent_backward), 0 for an
 * ignored row. An ignored label is PyTorch's ignore_index default, the
 * masked-LM convention for the positions that are not predicted.
 */
#define ENGINE_XENT_IGNORE	(-100)
/* The rows of @labels that are not ENGINE_XENT_IGNORE. */
size_t engine_xent_tokens_counted(const int64_t *labels, size_t n);
int engine_xent_tokens_forward(const float *logits, const int64_t *labels, size_t n,
			       size_t classes, float *loss, size_t *correct);
int engine_xent_tokens_backward(const float *logits, const int64_t *labels, size_t n,
				size_t classes, size_t norm, float *dlogits);

#endif /* WSE_ENGINE_OPS_H */
