// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * 2-D max and average pooling over planes (batch * channels of NCHW), with
 * PyTorch's and ONNX's rules for padding, dilation and ceil_mode.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "wse/engine_ops.h"

static size_t pool_extent(size_t in, size_t k, size_t stride, size_t dil, size_t pad_a,
			  size_t pad_b, bool ceil_mode)
{
	size_t span = (k - 1) * dil + 1, padded = in + pad_a + pad_b, out;

	if (padded < span)
		return 0;
	out = (padded - span) / stride + 1;
	if (ceil_mode && (padded - span) % stride) {
		/* One more window, kept only if it starts inside the input or
		 * its leading padding (PyTorch's rule, which ONNX follows).
		 */
		if (out * stride < in + pad_a)
			out++;
	}
	return out;
}

int engine_pool2d_setup(struct engine_pool2d *p)
{
	if (!p || !p->planes || !p->in_h || !p->in_w || !p->k_h || !p->k_w || !p->stride_h ||
	    !p->stride_w || !p->dil_h || !p->dil_w)
		return -EINVAL;
	/* Padding smaller than the (dilated) kernel: every window then holds
	 * at least one input element (PyTorch allows only half the kernel;
	 * ONNX more).
	 */
	if (p->pad_top >= (p->k_h - 1) * p->dil_h + 1 || p->pad_bottom >= (p->k_h - 1) * p->dil_h + 1 ||
	    p->pad_left >= (p->k_w - 1) * p->dil_w + 1 || p->pad_right >= (p->k_w - 1) * p->dil_w + 1)
		return -EINVAL;
	p->out_h = pool_extent(p->in_h, p->k_h, p->stride_h, p->dil_h, p->pad_top, p->pad_bottom,
			       p->ceil_mode);
	p->out_w = pool_extent(p->in_w, p->k_w, p->stride_w, p->dil_w, p->pad_left, p->pad_right,
			       p->ceil_mode);
	return p->out_h && p->out_w ? 0 : -EINVAL;
}

static int check(const struct engine_pool2d *p)
{
	struct engine_pool2d q;

	if (!p)
		return -EINVAL;
	q = *p;
	if (engine_pool2d_setup(&q))
		return -EINVAL;
	return q.out_h == p->out_h && q.out_w == p->out_w ? 0 : -EINVAL;
}

/* Input index of window position @o, tap @i on one axis; <0 or >=in: outside. */
static long tap(size_t o, size_t i, size_t stride, size_t dil, size_t pad)
{
	return (long)(o * stride + i * dil) - (long)pad;
}

/* Offset in the plane of the first maximum of window (oy, ox); -1 if none. */
static long window_argmax(const struct engine_pool2d *p, const float *plane, size_t oy,
			  size_t ox)
{
	long best = -1;
	float m = 0.0f;

	for (size_t i = 0; i < p->k_h; i++) {
		long iy = tap(oy, i, p->stride_h, p->dil_h, p->pad_top);

		if (iy < 0 || iy >= (long)p->in_h)
			continue;
		for (size_t j = 0; j < p->k_w; j++) {
			long ix = tap(ox, j, p->stride_w, p->dil_w, p->pad_left);
			long at = iy * (long)p->in_w + ix;

			if (ix < 0 || ix >= (long)p->in_w)
				continue;
			/* The first NaN wins, as in PyTorch, so a diverged run shows. */
			if (best >= 0 && (isnan(m) || !(plane[at] > m || isnan(plane[at]))))
				continue;
			best = at;
			m = plane[at];
		}
	}
	return best;
}

int engine_maxpool2d_forward(const struct engine_pool2d *p, const float *x, float *y)
{
	int err = check(p);

	if (err)
		return err;
	if (!x || !y)
		return -EINVAL;
	for (size_t c = 0; c < p->planes; c++) {
		const float *plane = x + c * p->in_h * p->in_w;
		float *out = y + c * p->out_h * p->out_w;

		for (size_t oy = 0; oy < p->out_h; oy++)
			for (size_t ox = 0; ox < p->out_w; ox++) {
				long at = window_argmax(p, plane, oy, ox);

				out[oy * p->out_w + ox] = at < 0 ? -INFINITY : plane[at];
			}
	}
	return 0;
}

int engine_maxpool2d_backward(const struct engine_pool2d *p, const float *x, const float *dy,
			      float *dx)
{
	int err = check(p);

	if (err)
		return err;
	if (!x || !dy || !dx)
		return -EINVAL;
	memset(dx, 0, p->planes * p->in_h * p->in_w * sizeof(*dx));
	for (size_t c = 0; c < p->planes; c++) {
		const float *plane = x + c * p->in_h * p->in_w;
		const float *g = dy + c * p->out_h * p->out_w;
		float *d = dx + c * p->in_h * p->in_w;

		for (size_t oy = 0; oy < p->out_h; oy++)
			for (size_t ox = 0; ox < p->out_w; ox++) {
				long at = window_argmax(p, plane, oy, ox);

				if (at >= 0)
					d[at] += g[oy * p->out_w + ox];
			}
	}
	return 0;
}

/* Elements window (oy, ox) averages over. */
static size_t window_count(const struct engine_pool2d *p, size_t oy, size_t ox)
{
	long lo_y = 0, hi_y = (long)p->in_h, lo_x = 0, hi_x = (long)p->in_w;
	size_t n = 0;

	if (p->count_include_pad) {
		lo_y = -(long)p->pad_top;
		hi_y += (long)p->pad_bottom;
		lo_x = -(long)p->pad_left;
		hi_x += (long)p->pad_right;
	}
	for (size_t i = 0; i < p->k_h; i++) {
		long iy = tap(oy, i, p->stride_h, p->dil_h, p->pad_top);

		if (iy < lo_y || iy >= hi_y)
			continue;
		for (size_t j = 0; j < p->k_w; j++) {
			long ix = tap(ox, j, p->stride_w, p->dil_w, p->pad_left);

			if (ix >= lo_x && ix < hi_x)
				n++;
		}
	}
	return n;
}

int engine_avgpool2d_forward(const struct engine_pool2d *p, const float *x, float *y)
{
	int err = check(p);

	if (err)
		return err;
	if (!x || !y)
		return -EINVAL;
	for (size_t c = 0; c < p->planes; c++) {
		const float *plane = x + c * p->in_h * p->in_w;
		float *out = y + c * p->out_h * p->out_w;

		for (size_t oy = 0; oy < p->out_h; oy++)
			for (size_t ox = 0; ox < p->out_w; ox++) {
				float sum = 0.0f;

				for (size_t i = 0; i < p->k_h; i++) {
					long iy = tap(oy, i, p->stride_h, p->dil_h, p->pad_top);

					if (iy < 0 || iy >= (long)p->in_h)
						continue;
					for (size_t j = 0; j < p->k_w; j++) {
						long ix = tap(ox, j, p->stride_w, p->dil_w, p->pad_left);

						if (ix >= 0 && ix < (long)p->in_w)
							sum += plane[iy * (long)p->in_w + ix];
					}
				}
				out[oy * p->out_w + ox] = sum / (float)window_count(p, oy, ox);
			}
	}
	return 0;
}

int engine_avgpool2d_backward(const struct engine_pool2d *p, const float *dy, float *dx)
{
	int err = check(p);

	if (err)
		return err;
	if (!dy || !dx)
		return -EINVAL;
	memset(dx, 0, p->planes * p->in_h * p->in_w * sizeof(*dx));
	for (size_t c = 0; c < p->planes; c++) {
		const float *g = dy + c * p->out_h * p->out_w;
		float *d = dx + c * p->in_h * p->in_w;

		for (size_t oy = 0; oy < p->out_h; oy++)
			for (size_t ox = 0; ox < p->out_w; ox++) {
				float share = g[oy * p->out_w + ox] / (float)window_count(p, oy, ox);

				for (size_t i = 0; i < p->k_h; i++) {
					long iy = tap(oy, i, p->stride_h, p->dil_h, p->pad_top);

					if (iy < 0 || iy >= (long)p->in_h)
						continue;
					for (size_t j = 0; j < p->k_w; j++) {
						long ix = tap(ox, j, p->stride_w, p->dil_w, p->pad_left);

						if (ix >= 0 && ix < (long)p->in_w)
							d[iy * (long)p->in_w + ix] += share;
					}
				}
			}
	}
	return 0;
}
