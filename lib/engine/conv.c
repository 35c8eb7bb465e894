// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * 2-D convolution, one sample at a time: im2col unrolls the sample into a
 * [in_ch * k_h * k_w][out_h * out_w] matrix, so the forward pass and both
 * gradients are one sgemm each. col2im adds the unrolled input gradient
 * back into place.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "gemm.h"

#include "wse/engine_ops.h"

/* Output extent of one axis, or 0 when the (dilated) kernel does not fit. */
static size_t out_extent(size_t in, size_t k, size_t stride, size_t dil, size_t pad_a,
			 size_t pad_b)
{
	size_t span = (k - 1) * dil + 1, padded = in + pad_a + pad_b;

	if (padded < span)
		return 0;
	return (padded - span) / stride + 1;
}

int engine_conv2d_setup(struct engine_conv2d *p)
{
	if (!p || !p->batch || !p->in_ch || !p->in_h || !p->in_w || !p->out_ch || !p->k_h ||
	    !p->k_w || !p->stride_h || !p->stride_w || !p->dil_h || !p->dil_w)
		return -EINVAL;
	/* A pad at least the (dilated) kernel's size would make windows that
	 * see nothing but padding.
	 */
	if (p->pad_top >= (p->k_h - 1) * p->dil_h + 1 || p->pad_bottom >= (p->k_h - 1) * p->dil_h + 1 ||
	    p->pad_left >= (p->k_w - 1) * p->dil_w + 1 || p->pad_right >= (p->k_w - 1) * p->dil_w + 1)
		return -EINVAL;
	p->out_h = out_extent(p->in_h, p->k_h, p->stride_h, p->dil_h, p->pad_top, p->pad_bottom);
	p->out_w = out_extent(p->in_w, p->k_w, p->stride_w, p->dil_w, p->pad_left, p->pad_right);
	if (!p->out_h || !p->out_w)
		return -EINVAL;
	if (p->in_ch * p->k_h * p->k_w > INT_MAX || p->out_h * p->out_w > INT_MAX ||
	    p->out_ch > INT_MAX)
		return -EOVERFLOW;
	return 0;
}

size_t engine_conv2d_scratch(const struct engine_conv2d *p)
{
	return p->in_ch * p->k_h * p->k_w * p->out_h * p->out_w;
}

/* col[(c, i, j)][(oy, ox)] = x[c][oy * s - pad + i * d][ox * s - pad + j * d], 0 outside. */
static void im2col(const struct engine_conv2d *p, const float *x, float *col)
{
	const size_t oh = p->out_h, ow = p->out_w;

	for (size_t c = 0; c < p->in_ch; c++) {
		const float *plane = x + c * p->in_h * p->in_w;

		for (size_t i = 0; i < p->k_h; i++) {
			for (size_t j = 0; j < p->k_w; j++) {
				float *row = col + ((c * p->k_h + i) * p->k_w + j) * oh * ow;

				for (size_t oy = 0; oy < oh; oy++) {
					/* Signed: the padding lies before the input. */
					long iy = (long)(oy * p->stride_h + i * p->dil_h) - (long)p->pad_top;
					float *out = row + oy * ow;

					if (iy < 0 || iy >= (long)p->in_h) {
						memset(out, 0, ow * sizeof(*out));
						continue;
					}
					const float *src = plane + (size_t)iy * p->in_w;

					for (size_t ox = 0; ox < ow; ox++) {
						long ix = (long)(ox * p->stride_w + j * p->dil_w) -
							  (long)p->pad_left;

						out[ox] = ix < 0 || ix >= (long)p->in_w ? 0.0f : src[ix];
					}
				}
			}
		}
	}
}

/* dx[c][iy][ix] += the col entries im2col took from there (dx pre-zeroed). */
static void col2im(const struct engine_conv2d *p, const float *col, float *dx)
{
	const size_t oh = p->out_h, ow = p->out_w;

	for (size_t c = 0; c < p->in_ch; c++) {
		float *plane = dx + c * p->in_h * p->in_w;

		for (size_t i = 0; i < p->k_h; i++) {
			for (size_t j = 0; j < p->k_w; j++) {
				const float *row = col + ((c * p->k_h + i) * p->k_w + j) * oh * ow;

				for (size_t oy = 0; oy < oh; oy++) {
					long iy = (long)(oy * p->stride_h + i * p->dil_h) - (long)p->pad_top;

					if (iy < 0 || iy >= (long)p->in_h)
						continue;
					float *dst = plane + (size_t)iy * p->in_w;
					const float *in = row + oy * ow;

					for (size_t ox = 0; ox < ow; ox++) {
						long ix = (long)(ox * p->stride_w + j * p->dil_w) -
							  (long)p->pad_left;

						if (ix >= 0 && ix < (long)p->in_w)
							dst[ix] += in[ox];
					}
				}
			}
		}
	}
}

static int check(const struct engine_conv2d *p)
{
	struct engine_conv2d q;

	if (!p)
		return -EINVAL;
	q = *p;
	if (engine_conv2d_setup(&q))
		return -EINVAL;
	return q.out_h == p->out_h && q.out_w == p->out_w ? 0 : -EINVAL;
}

int engine_conv2d_forward(const struct engine_conv2d *p, const float *x, const float *w,
			  const float *b, float *y, float *scratch)
{
	int err = check(p);

	if (err)
		return err;
	if (!x || !w || !y || !scratch)
		return -EINVAL;
	const int m = (int)p->out_ch, n = (int)(p->out_h * p->out_w);
	const int k = (int)(p->in_ch * p->k_h * p->k_w);
	const size_t in_sz = p->in_ch * p->in_h * p->in_w, out_sz = (size_t)m * n;

	for (size_t s = 0; s < p->batch; s++) {
		float *ys = y + s * out_sz;

		im2col(p, x + s * in_sz, scratch);
		SGEMM_OR_RETURN(engine_sgemm(false, false, m, n, k, 1.0f, w, k,
			    scratch, n, 0.0f, ys, n));
		if (b) {
			for (int o = 0; o < m; o++) {
				float *row = ys + (size_t)o * n;

				for (int i = 0; i < n; i++)
					row[i] += b[o];
			}
		}
	}
	return 0;
}

int engine_conv2d_backward(const struct engine_conv2d *p, const float *x, const float *w,
			   const float *dy, float *dx, float *dw, float *db, float *scratch)
{
	int err = check(p);

	if (err)
		return err;
	if (!x || !w || !dy || !scratch)
		return -EINVAL;
	const int m = (int)p->out_ch, n = (int)(p->out_h * p->out_w);
	const int k = (int)(p->in_ch * p->k_h * p->k_w);
	const size_t in_sz = p->in_ch * p->in_h * p->in_w, out_sz = (size_t)m * n;

	if (db) {
		for (int o = 0; o < m; o++) {
			double sum = 0.0;

			for (size_t s = 0; s < p->batch; s++) {
				const float *row = dy + s * out_sz + (size_t)o * n;

				for (int i = 0; i < n; i++)
					sum += row[i];
			}
			db[o] = (float)sum;
		}
	}
	if (dx)
		memset(dx, 0, p->batch * in_sz * sizeof(*dx));
	for (size_t s = 0; s < p->batch; s++) {
		const float *dys = dy + s * out_sz;

		/* dw (+)= dy_s [m][n] * col^T [n][k] */
		if (dw) {
			im2col(p, x + s * in_sz, scratch);
			SGEMM_OR_RETURN(engine_sgemm(false, true, m, k, n, 1.0f, dys, n,
				    scratch, n, s ? 1.0f : 0.0f, dw, k));
		}
		if (!dx)
			continue;
		/* dcol [k][n] = w^T [k][m] * dy_s [m][n], then back into place. */
		SGEMM_OR_RETURN(engine_sgemm(true, false, k, n, m, 1.0f, w, k, dys, n,
			    0.0f, scratch, n));
		col2im(p, scratch, dx + s * in_sz);
	}
	return 0;
}
