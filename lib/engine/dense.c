// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Dense (fully connected) layers: the three GEMMs of forward and backward go
 * to OpenBLAS; what is left (bias, ReLU, bias gradient) is one pass over
 * the small output.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "gemm.h"

#include "wse/engine.h"
#include "relu.h"
#include "vec.h"

/* Debian's libopenblas uses 32-bit int dimensions. */
static int check_dims(size_t batch, size_t in, size_t out)
{
	if (!batch || !in || !out)
		return -EINVAL;
	if (batch > INT_MAX || in > INT_MAX || out > INT_MAX)
		return -EOVERFLOW;
	return 0;
}

/* y += b on every row, then ReLU if relu: one pass over y. */
static void add_bias(float *y, const float *b, size_t batch, size_t out,
		     bool relu)
{
	for (size_t i = 0; i < batch; i++) {
		float *row = y + i * out;
		size_t j = 0;

		for (; j + VLEN <= out; j += VLEN) {
			vfloat v = vload(row + j) + vload(b + j);

			vstore(row + j, relu ? vkeep(~(v < vsplat(0.0f)), v) : v);
		}
		for (; j < out; j++) {
			float v = row[j] + b[j];

			row[j] = relu && v < 0.0f ? 0.0f : v;
		}
	}
}

int engine_dense_forward(const float *x, const float *w, const float *b,
			 size_t batch, size_t in, size_t out, bool relu, float *y)
{
	int err = check_dims(batch, in, out);

	if (err)
		return err;
	if (!x || !w || !y)
		return -EINVAL;

	/* y = x * w^T: w is [out][in], so "transposed" is its natural layout. */
	SGEMM_OR_RETURN(engine_sgemm(false, true, (int)batch, (int)out,
		    (int)in, 1.0f, x, (int)in, w, (int)in, 0.0f, y, (int)out));
	if (b)
		add_bias(y, b, batch, out, relu);
	else if (relu)
		engine_relu_inplace(y, batch * out);
	return 0;
}

#define BIAS_CHUNK	256	/* columns summed at a time into a stack buffer */

/*
 * db = beta * db + column sums of dy, summed in batch order. The sums are
 * formed first and added to db once, as sgemm adds its product to C: so a
 * second micro-batch accumulated with beta 1 is exactly db + its own sums,
 * the same bits as adding two separately computed gradients.
 */
static void bias_grad(const float *dy, size_t batch, size_t out, float beta,
		      float *db)
{
	float sum[BIAS_CHUNK];

	if (beta == 0.0f) {
		/* Overwrite: never read db, which may hold garbage or NaN. */
		memcpy(db, dy, out * sizeof(float));
		for (size_t i = 1; i < batch; i++)
			engine_vec_add(db, dy + i * out, out);
		return;
	}
	for (size_t j0 = 0; j0 < out; j0 += BIAS_CHUNK) {
		size_t n = out - j0 < BIAS_CHUNK ? out - j0 : BIAS_CHUNK;

		memcpy(sum, dy + j0, n * sizeof(float));
		for (size_t i = 1; i < batch; i++)
			engine_vec_add(sum, dy + i * out + j0, n);
		for (size_t j = 0; j < n; j++)
			db[j0 + j] = (beta == 1.0f ? db[j0 + j] : beta * db[j0 + j]) + sum[j];
	}
}

int engine_dense_backward_input(const float *dy, const float *w, size_t batch,
				size_t in, size_t out, float *dx)
{
	int err = check_dims(batch, in, out);

	if (err)
		return err;
	if (!dy || !w || !dx)
		return -EINVAL;
	/* dx[batch][in] = dy[batch][out] * w[out][in] */
	SGEMM_OR_RETURN(engine_sgemm(false, false, (int)batch, (int)in,
		    (int)out, 1.0f, dy, (int)out, w, (int)in, 0.0f, dx, (int)in));
	return 0;
}

int engine_dense_backward_params(const float *dy, const float *x, size_t batch,
				 size_t in, size_t out, float grad_beta, float *dw,
				 float *db)
{
	int err = check_dims(batch, in, out);

	if (err)
		return err;
	if (!dy || !x || !dw)
		return -EINVAL;
	/* dw[out][in] = dy^T * x; BLAS ignores dw's contents when beta is 0. */
	SGEMM_OR_RETURN(engine_sgemm(true, false, (int)out, (int)in,
		    (int)batch, 1.0f, dy, (int)out, x, (int)in, grad_beta, dw,
		    (int)in));
	if (db)
		bias_grad(dy, batch, out, grad_beta, db);
	return 0;
}

int engine_dense_backward(const float *dy, const float *x, const float *w,
			  size_t batch, size_t in, size_t out, float grad_beta,
			  float *dx, float *dw, float *db)
{
	int err = check_dims(batch, in, out);

	if (err)
		return err;
	if (!dy || !x || !w || !dw)
		return -EINVAL;
	if (dx)
		engine_dense_backward_input(dy, w, batch, in, out, dx);
	return engine_dense_backward_params(dy, x, batch, in, out, grad_beta, dw, db);
}
