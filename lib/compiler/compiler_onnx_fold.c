// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Constant folding for the ONNX importer. Exporters compute shapes in the
 * graph (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) and slice
 * buffers such as a causal mask; with every shape static these are
 * constants, computed here once so that only real computation reaches the
 * engine. Values are worked in double (exact for the int64 of shapes up
 * to 2^53 and for every fp32) and stored in the output's type.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_onnx_internal.h"

int onnx_axis(int64_t axis, unsigned rank, unsigned *out)
{
	if (axis < -(int64_t)rank || axis >= (int64_t)rank)
		return -EINVAL;
	*out = (unsigned)(axis < 0 ? axis + rank : axis);
	return 0;
}

int onnx_broadcast(unsigned ra, const int64_t *a, unsigned rb, const int64_t *b, unsigned *r,
		   int64_t *out)
{
	unsigned rank = ra > rb ? ra : rb;

	for (unsigned i = 0; i < rank; i++) {
		int64_t da = i < rank - ra ? 1 : a[i - (rank - ra)];
		int64_t db = i < rank - rb ? 1 : b[i - (rank - rb)];

		if (da != db && da != 1 && db != 1)
			return -EINVAL;
		out[i] = da > db ? da : db;
	}
	*r = rank;
	return 0;
}

int onnx_reshape_dims(unsigned in_rank, const int64_t *in_dims, const int64_t *shape, size_t n,
		      bool allowzero, unsigned *out_rank, int64_t *out_dims, char *why, size_t len)
{
	uint64_t in_n = 1, known = 1;
	int infer = -1;

	for (unsigned i = 0; i < in_rank; i++)
		in_n *= (uint64_t)in_dims[i];
	if (n > WSECC_MAX_RANK) {
		snprintf(why, len, "a target of rank %zu (at most %d)", n, WSECC_MAX_RANK);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t d = shape[i];

		if (d == 0 && !allowzero) {
			if (i >= in_rank) {
				snprintf(why, len, "target dimension %zu copies a dimension the input lacks", i);
				return -EINVAL;
			}
			d = in_dims[i];
		}
		if (d == -1) {
			if (infer >= 0) {
				snprintf(why, len, "more than one -1 in the target shape");
				return -EINVAL;
			}
			infer = (int)i;
			continue;
		}
		if (d <= 0 || d > (1LL << 31)) {
			snprintf(why, len, "target dimension %zu is %lld (zero-sized and negative dimensions are not supported)",
				 i, (long long)d);
			return -EINVAL;
		}
		out_dims[i] = d;
		known *= (uint64_t)d;
		if (known > (1ULL << 40))
			break;
	}
	if (infer >= 0) {
		if (!known || in_n % known) {
			snprintf(why, len, "-1 cannot be inferred: %llu elements into blocks of %llu",
				 (unsigned long long)in_n, (unsigned long long)known);
			return -EINVAL;
		}
		out_dims[infer] = (int64_t)(in_n / known);
		known = in_n;
	}
	if (known != in_n) {
		snprintf(why, len, "the target holds %llu elements, the input %llu",
			 (unsigned long long)known, (unsigned long long)in_n);
		return -EINVAL;
	}
	*out_rank = (unsigned)n;
	return 0;
}

static double get(const struct wsecc_tensor *t, uint64_t k)
{
	switch (t->dtype) {
	case WSECC_DT_F32:
		return ((const float *)t->data)[k];
	case WSECC_DT_I64:
		return (double)((const int64_t *)t->data)[k];
	default:
		return ((const uint8_t *)t->data)[k];
	}
}

static void put(struct wsecc_tensor *t, uint64_t k, double v)
{
	switch (t->dtype) {
	case WSECC_DT_F32:
		((float *)t->data)[k] = (float)v;
		break;
	case WSECC_DT_I64:
		((int64_t *)t->data)[k] = (int64_t)v;
		break;
	default:
		((uint8_t *)t->data)[k] = v != 0.0;
		break;
	}
}

static struct wsecc_tensor *IN(struct octx *c, size_t i, size_t k)
{
	const struct wsecc_node *n = &c->g->nodes[i];

	return k < n->n_in && n->in[k] >= 0 ? &c->g->tensors[n->in[k]] : NULL;
}

/* Makes output @k of node @i a constant of the given type and shape. */
static struct wsecc_tensor *make_out(struct octx *c, size_t i, size_t k, enum wsecc_dtype dt,
				     unsigned rank, const int64_t *dims)
{
	struct wsecc_node *n = &c->g->nodes[i];
	struct wsecc_tensor *t;
	uint64_t numel = 1;
	bool init = false;

	if (k >= n->n_out || n->out[k] < 0 || !wsecc_dtype_size(dt))
		return NULL;
	for (unsigned d = 0; d < rank; d++) {
		if (dims[d] <= 0)
			return NULL;
		numel *= (uint64_t)dims[d];
		if (numel > WSECC_FOLD_MAX_ELEMS)
			return NULL;
	}
	for (size_t j = 0; j < n->n_in; j++)
		if (n->in[j] >= 0 && c->g->tensors[n->in[j]].from_initializer)
			init = true;
	t = &c->g->tensors[n->out[k]];
	t->dtype = dt;
	t->kind = WSECC_T_CONST;
	/* A listed parameter may be a copy of an initializer that is not (a merged buffer). */
	t->from_initializer = (init || (onnx_trainable_listed(c) && onnx_trainable(c, t->name))) &&
			      dt == WSECC_DT_F32;
	wsecc_tensor_set_shape(t, rank, dims);
	free(t->data);
	t->data = calloc(numel, wsecc_dtype_size(dt));
	return t->data ? t : NULL;
}

static bool foldable_type(enum wsecc_dtype dt)
{
	return wsecc_dtype_size(dt) != 0;
}

/* Int64 values of a constant 1-D (or scalar) tensor, at most @max. */
static int ints_of(const struct wsecc_tensor *t, int64_t *v, size_t max, size_t *n)
{
	uint64_t numel = wsecc_tensor_numel(t);

	if (!t || t->dtype != WSECC_DT_I64 || t->rank > 1 || numel > max)
		return -EINVAL;
	memcpy(v, t->data, numel * sizeof(*v));
	*n = numel;
	return 0;
}

/* Element-wise ops (with numpy broadcasting). */
enum fold_binary { F_ADD, F_SUB, F_MUL, F_DIV, F_POW, F_EQUAL, F_LESS, F_GREATER, F_AND, F_OR };

/* The op by name, once per node rather than per element (masks have millions). */
static enum fold_binary binary_of(const char *op)
{
	static const char *const names[] = { "Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less",
					     "Greater", "And" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(op, names[k]))
			return (enum fold_binary)k;
	return F_OR;
}

static double apply(enum fold_binary op, double a, double b, bool ints)
{
	switch (op) {
	case F_ADD:
		return a + b;
	case F_SUB:
		return a - b;
	case F_MUL:
		return a * b;
	case F_DIV:
		return ints ? (b != 0.0 ? trunc(a / b) : 0.0) : a / b;
	case F_POW:
		return pow(a, b);
	case F_EQUAL:
		return a == b;
	case F_LESS:
		return a < b;
	case F_GREATER:
		return a > b;
	case F_AND:
		return a != 0.0 && b != 0.0;
	default:
		return a != 0.0 || b != 0.0;	/* Or */
	}
}

/* Offset into @t of output element @k of shape (rank, dims), broadcasting. */
static uint64_t bcast_at(const struct wsecc_tensor *t, unsigned rank, const int64_t *dims, uint64_t k)
{
	uint64_t off = 0, stride = 1;

	for (unsigned d = rank; d-- > 0;) {
		uint64_t idx = k % (uint64_t)dims[d];
		int td = (int)d - (int)(rank - t->rank);

		k /= (uint64_t)dims[d];
		if (td < 0)
			continue;
		if (t->dims[td] != 1)
			off += idx * stride;
		stride *= (uint64_t)t->dims[td];
	}
	return off;
}

/* bcast_at() without its divisions where @t is as large as the output, or one element. */
static uint64_t at(const struct wsecc_tensor *t, uint64_t tn, uint64_t n, unsigned rank,
		   const int64_t *dims, uint64_t k)
{
	return tn == n ? k : tn == 1 ? 0 : bcast_at(t, rank, dims, k);
}

static int fold_elementwise(struct octx *c, size_t i, const char *op)
{
	struct wsecc_tensor *a = IN(c, i, 0), *b = IN(c, i, 1), *o;
	int64_t dims[WSECC_MAX_RANK];
	unsigned rank;
	bool cmp = !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater");

	if (!a || !b || onnx_broadcast(a->rank, a->dims, b->rank, b->dims, &rank, dims))
		return 0;
	o = make_out(c, i, 0, cmp ? WSECC_DT_BOOL : a->dtype, rank, dims);
	if (!o)
		return 0;
	enum fold_binary f = binary_of(op);
	uint64_t n = wsecc_tensor_numel(o), na = wsecc_tensor_numel(a), nb = wsecc_tensor_numel(b);

	for (uint64_t k = 0; k < n; k++)
		put(o, k, apply(f, get(a, at(a, na, n, rank, dims, k)), get(b, at(b, nb, n, rank, dims, k)),
				a->dtype == WSECC_DT_I64));
	return 1;
}

static int fold_where(struct octx *c, size_t i)
{
	struct wsecc_tensor *w = IN(c, i, 0), *x = IN(c, i, 1), *y = IN(c, i, 2), *o;
	int64_t d1[WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	unsigned r1, rank;

	if (!w || !x || !y || onnx_broadcast(w->rank, w->dims, x->rank, x->dims, &r1, d1) ||
	    onnx_broadcast(r1, d1, y->rank, y->dims, &rank, dims))
		return 0;
	o = make_out(c, i, 0, x->dtype, rank, dims);
	if (!o)
		return 0;
	uint64_t n = wsecc_tensor_numel(o), nw = wsecc_tensor_numel(w);
	uint64_t nx = wsecc_tensor_numel(x), ny = wsecc_tensor_numel(y);

	for (uint64_t k = 0; k < n; k++)
		put(o, k, get(w, at(w, nw, n, rank, dims, k)) != 0.0 ? get(x, at(x, nx, n, rank, dims, k))
								     : get(y, at(y, ny, n, rank, dims, k)));
	return 1;
}

static int fold_unary(struct octx *c, size_t i, const char *op)
{
	struct wsecc_tensor *x = IN(c, i, 0), *o;

	o = x ? make_out(c, i, 0, x->dtype, x->rank, x->dims) : NULL;
	if (!o)
		return 0;
	for (uint64_t k = 0, n_o = wsecc_tensor_numel(o); k < n_o; k++) {
		double v = get(x, k);

		if (!strcmp(op, "Sqrt"))
			v = sqrt(v);
		else if (!strcmp(op, "Neg"))
			v = -v;
		else if (!strcmp(op, "Not"))
			v = v == 0.0;
		put(o, k, v);
	}
	return 1;
}

/* Copy with a new shape (Identity, Reshape, Flatten, Squeeze, Unsqueeze, Expand-free). */
static int fold_copy(struct octx *c, size_t i, unsigned rank, const int64_t *dims)
{
	struct wsecc_tensor *x = IN(c, i, 0), *o;

	o = make_out(c, i, 0, x->dtype, rank, dims);
	if (!o || wsecc_tensor_numel(o) != wsecc_tensor_numel(x))
		return 0;
	memcpy(o->data, x->data, wsecc_tensor_numel(o) * wsecc_dtype_size(o->dtype));
	return 1;
}

static int fold_shape(struct octx *c, size_t i)
{
	struct wsecc_tensor *x = IN(c, i, 0), *o;
	int64_t start, end, n;

	if (onnx_attr_int(c, i, "start", 0, &start) ||
	    onnx_attr_int(c, i, "end", (int64_t)x->rank, &end))
		return 0;
	start = start < 0 ? start + x->rank : start;
	end = end < 0 ? end + x->rank : end;
	start = start < 0 ? 0 : start > (int64_t)x->rank ? (int64_t)x->rank : start;
	end = end < 0 ? 0 : end > (int64_t)x->rank ? (int64_t)x->rank : end;
	n = end > start ? end - start : 0;
	if (!n)
		return 0;
	o = make_out(c, i, 0, WSECC_DT_I64, 1, &n);
	if (!o)
		return 0;
	for (int64_t k = 0; k < n; k++)
		((int64_t *)o->data)[k] = x->dims[start + k];
	return 1;
}

static int fold_gather(struct octx *c, size_t i)
{
	struct wsecc_tensor *d = IN(c, i, 0), *ix = IN(c, i, 1), *o;
	int64_t axis, dims[WSECC_MAX_RANK];
	unsigned ax, r = 0;
	uint64_t outer = 1, inner = 1, len;

	if (!ix || ix->dtype != WSECC_DT_I64 || onnx_attr_int(c, i, "axis", 0, &axis) ||
	    onnx_axis(axis, d->rank, &ax) || d->rank - 1 + ix->rank > WSECC_MAX_RANK)
		return 0;
	for (unsigned k = 0; k < ax; k++)
		outer *= (uint64_t)(dims[r++] = d->dims[k]);
	for (unsigned k = 0; k < ix->rank; k++)
		dims[r++] = ix->dims[k];
	for (unsigned k = ax + 1; k < d->rank; k++)
		inner *= (uint64_t)(dims[r++] = d->dims[k]);
	len = (uint64_t)d->dims[ax];
	o = make_out(c, i, 0, d->dtype, r, dims);
	if (!o)
		return 0;
	uint64_t cnt = wsecc_tensor_numel(ix), at = 0;

	for (uint64_t a = 0; a < outer; a++)
		for (uint64_t j = 0; j < cnt; j++) {
			int64_t v = ((int64_t *)ix->data)[j];

			if (v < -(int64_t)len || v >= (int64_t)len)
				return 0;
			v = v < 0 ? v + (int64_t)len : v;
			for (uint64_t b = 0; b < inner; b++)
				put(o, at++, get(d, (a * len + (uint64_t)v) * inner + b));
		}
	return 1;
}

static int fold_unsqueeze(struct octx *c, size_t i, bool squeeze)
{
	struct wsecc_tensor *x = IN(c, i, 0);
	int64_t axes[WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	size_t n = 0;
	unsigned rank, r = 0;
	bool mark[WSECC_MAX_RANK + 1] = { false };

	if (IN(c, i, 1)) {
		if (ints_of(IN(c, i, 1), axes, WSECC_MAX_RANK, &n))
			return 0;
	} else if (onnx_attr_ints(c, i, "axes", axes, WSECC_MAX_RANK, &n)) {
		return 0;
	}
	if (squeeze) {
		rank = x->rank;
		if (!n)	/* every dimension of 1 */
			for (unsigned k = 0; k < rank; k++)
				mark[k] = x->dims[k] == 1;
		for (size_t k = 0; k < n; k++) {
			unsigned a;

			if (onnx_axis(axes[k], rank, &a) || x->dims[a] != 1)
				return 0;
			mark[a] = true;
		}
		for (unsigned k = 0; k < rank; k++)
			if (!mark[k])
				dims[r++] = x->dims[k];
	} else {
		rank = x->rank + (unsigned)n;
		if (rank > WSECC_MAX_RANK)
			return 0;
		for (size_t k = 0; k < n; k++) {
			unsigned a;

			if (onnx_axis(axes[k], rank, &a) || mark[a])
				return 0;
			mark[a] = true;
		}
		for (unsigned k = 0, s = 0; k < rank; k++)
			dims[r++] = mark[k] ? 1 : x->dims[s++];
	}
	return fold_copy(c, i, r, dims);
}

static int fold_concat(struct octx *c, size_t i)
{
	const struct wsecc_node *n = &c->g->nodes[i];
	struct wsecc_tensor *x0 = IN(c, i, 0), *o;
	int64_t axis, dims[WSECC_MAX_RANK];
	unsigned ax;
	uint64_t outer = 1, inner = 1, at = 0;

	if (!x0 || onnx_attr_int(c, i, "axis", 0, &axis) || onnx_axis(axis, x0->rank, &ax))
		return 0;
	memcpy(dims, x0->dims, sizeof(dims));
	dims[ax] = 0;
	for (size_t k = 0; k < n->n_in; k++) {
		struct wsecc_tensor *x = IN(c, i, k);

		if (!x || x->rank != x0->rank || x->dtype != x0->dtype)
			return 0;
		for (unsigned d = 0; d < x->rank; d++)
			if (d != ax && x->dims[d] != x0->dims[d])
				return 0;
		dims[ax] += x->dims[ax];
	}
	for (unsigned d = 0; d < ax; d++)
		outer *= (uint64_t)dims[d];
	for (unsigned d = ax + 1; d < x0->rank; d++)
		inner *= (uint64_t)dims[d];
	o = make_out(c, i, 0, x0->dtype, x0->rank, dims);
	if (!o)
		return 0;
	for (uint64_t a = 0; a < outer; a++)
		for (size_t k = 0; k < n->n_in; k++) {
			struct wsecc_tensor *x = IN(c, i, k);
			uint64_t blk = (uint64_t)x->dims[ax] * inner;

			for (uint64_t b = 0; b < blk; b++)
				put(o, at++, get(x, a * blk + b));
		}
	return 1;
}

static int fold_slice(struct octx *c, size_t i)
{
	struct wsecc_tensor *x = IN(c, i, 0), *o;
	int64_t starts[WSECC_MAX_RANK], ends[WSECC_MAX_RANK], axes[WSECC_MAX_RANK];
	int64_t steps[WSECC_MAX_RANK], st[WSECC_MAX_RANK], sp[WSECC_MAX_RANK];
	int64_t dims[WSECC_MAX_RANK];
	size_t ns, ne, na, nst;

	if (ints_of(IN(c, i, 1), starts, WSECC_MAX_RANK, &ns) ||
	    ints_of(IN(c, i, 2), ends, WSECC_MAX_RANK, &ne) || ns != ne)
		return 0;
	if (IN(c, i, 3)) {
		if (ints_of(IN(c, i, 3), axes, WSECC_MAX_RANK, &na) || na != ns)
			return 0;
	} else {
		for (size_t k = 0; k < ns; k++)
			axes[k] = (int64_t)k;
	}
	if (IN(c, i, 4)) {
		if (ints_of(IN(c, i, 4), steps, WSECC_MAX_RANK, &nst) || nst != ns)
			return 0;
	} else {
		for (size_t k = 0; k < ns; k++)
			steps[k] = 1;
	}
	for (unsigned d = 0; d < x->rank; d++) {
		st[d] = 0;
		sp[d] = 1;
		dims[d] = x->dims[d];
	}
	for (size_t k = 0; k < ns; k++) {
		unsigned a;
		int64_t len, s = starts[k], e = ends[k];

		if (onnx_axis(axes[k], x->rank, &a) || steps[k] == 0)
			return 0;
		len = x->dims[a];
		s = s < 0 ? s + len : s;
		e = e < 0 ? e + len : e;
		if (steps[k] > 0) {
			s = s < 0 ? 0 : s > len ? len : s;
			e = e < 0 ? 0 : e > len ? len : e;
			dims[a] = e > s ? (e - s + steps[k] - 1) / steps[k] : 0;
		} else {
			s = s < 0 ? -1 : s > len - 1 ? len - 1 : s;
			e = e < -1 ? -1 : e > len - 1 ? len - 1 : e;
			dims[a] = s > e ? (s - e - steps[k] - 1) / -steps[k] : 0;
		}
		st[a] = s;
		sp[a] = steps[k];
	}
	o = make_out(c, i, 0, x->dtype, x->rank, dims);
	if (!o)
		return 0;
	/* The whole of it (a causal mask sliced to the full sequence): a copy. */
	if (!memcmp(dims, x->dims, x->rank * sizeof(dims[0]))) {
		bool whole = true;

		for (unsigned d = 0; d < x->rank; d++)
			whole &= sp[d] == 1;
		if (whole) {
			memcpy(o->data, x->data, wsecc_tensor_numel(o) * wsecc_dtype_size(o->dtype));
			return 1;
		}
	}
	for (uint64_t k = 0, n_o = wsecc_tensor_numel(o); k < n_o; k++) {
		uint64_t rem = k, src = 0, stride = 1;

		for (unsigned d = x->rank; d-- > 0;) {
			int64_t idx = (int64_t)(rem % (uint64_t)dims[d]);

			rem /= (uint64_t)dims[d];
			src += (uint64_t)(st[d] + idx * sp[d]) * stride;
			stride *= (uint64_t)x->dims[d];
		}
		put(o, k, get(x, src));
	}
	return 1;
}

static int fold_transpose(struct octx *c, size_t i)
{
	struct wsecc_tensor *x = IN(c, i, 0), *o;
	int64_t perm[WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	size_t n;

	if (onnx_attr_ints(c, i, "perm", perm, WSECC_MAX_RANK, &n))
		return 0;
	if (!n)
		for (unsigned d = 0; d < x->rank; d++)
			perm[d] = x->rank - 1 - d;
	else if (n != x->rank)
		return 0;
	for (unsigned d = 0; d < x->rank; d++) {
		if (perm[d] < 0 || perm[d] >= (int64_t)x->rank)
			return 0;
		dims[d] = x->dims[perm[d]];
	}
	o = make_out(c, i, 0, x->dtype, x->rank, dims);
	if (!o)
		return 0;
	for (uint64_t k = 0, n_o = wsecc_tensor_numel(o); k < n_o; k++) {
		uint64_t rem = k, src = 0;
		uint64_t xs[WSECC_MAX_RANK];

		xs[x->rank - 1] = 1;
		for (unsigned d = x->rank - 1; d-- > 0;)
			xs[d] = xs[d + 1] * (uint64_t)x->dims[d + 1];
		for (unsigned d = x->rank; d-- > 0;) {
			src += (rem % (uint64_t)dims[d]) * xs[perm[d]];
			rem /= (uint64_t)dims[d];
		}
		put(o, k, get(x, src));
	}
	return 1;
}

static int fold_cast(struct octx *c, size_t i)
{
	struct wsecc_tensor *x = IN(c, i, 0), *o;
	int64_t to;
	enum wsecc_dtype dt;

	if (onnx_attr_int(c, i, "to", 0, &to))
		return 0;
	dt = to == WSECC_DT_I32 ? WSECC_DT_I64 : (enum wsecc_dtype)to;
	o = make_out(c, i, 0, dt, x->rank, x->dims);
	if (!o)
		return 0;
	for (uint64_t k = 0, n_o = wsecc_tensor_numel(o); k < n_o; k++)
		put(o, k, dt == WSECC_DT_I64 ? trunc(get(x, k)) : get(x, k));
	return 1;
}

static int fold_range(struct octx *c, size_t i)
{
	struct wsecc_tensor *s = IN(c, i, 0), *l = IN(c, i, 1), *d = IN(c, i, 2), *o;
	double start, limit, delta;
	int64_t n;

	if (!s || !l || !d || wsecc_tensor_numel(s) != 1 || wsecc_tensor_numel(l) != 1 ||
	    wsecc_tensor_numel(d) != 1)
		return 0;
	start = get(s, 0);
	limit = get(l, 0);
	delta = get(d, 0);
	if (delta == 0.0)
		return 0;
	n = (int64_t)fmax(ceil((limit - start) / delta), 0.0);
	if (n <= 0)
		return 0;
	o = make_out(c, i, 0, s->dtype, 1, &n);
	if (!o)
		return 0;
	for (int64_t k = 0; k < n; k++)
		put(o, (uint64_t)k, start + (double)k * delta);
	return 1;
}

static int fold_constant_of_shape(struct octx *c, size_t i)
{
	const Onnx__AttributeProto *a = onnx_attr(c, i, "value");
	struct wsecc_tensor v = { 0 }, *o;
	int64_t dims[WSECC_MAX_RANK];
	size_t n;
	double fill = 0.0;
	enum wsecc_dtype dt = WSECC_DT_F32;

	if (ints_of(IN(c, i, 0), dims, WSECC_MAX_RANK, &n))
		return 0;
	if (a) {
		if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t ||
		    onnx_tensor_into(NULL, NULL, a->t, &v, "value") || !v.data ||
		    wsecc_tensor_numel(&v) != 1) {
			wsecc_tensor_release(&v);
			return 0;
		}
		dt = v.dtype;
		fill = get(&v, 0);
		wsecc_tensor_release(&v);
	}
	o = make_out(c, i, 0, dt, (unsigned)n, dims);
	if (!o)
		return 0;
	for (uint64_t k = 0, n_o = wsecc_tensor_numel(o); k < n_o; k++)
		put(o, k, fill);
	return 1;
}

static int fold_expand(struct octx *c, size_t i)
{
	struct wsecc_tensor *x = IN(c, i, 0), *o;
	int64_t shape[WSECC_MAX_RANK], dims[WSECC_MAX_RANK];
	size_t n;
	unsigned rank;

	if (ints_of(IN(c, i, 1), shape, WSECC_MAX_RANK, &n) ||
	    onnx_broadcast(x->rank, x->dims, (unsigned)n, shape, &rank, dims))
		return 0;
	o = make_out(c, i, 0, x->dtype, rank, dims);
	if (!o)
		return 0;
	for (uint64_t k = 0, n_o = wsecc_tensor_numel(o); k < n_o; k++)
		put(o, k, get(x, bcast_at(x, rank, dims, k)));
	return 1;
}

static int fold_constant(struct octx *c, size_t i)
{
	const Onnx__NodeProto *p = c->proto[i];
	struct wsecc_node *n = &c->g->nodes[i];
	struct wsecc_tensor *o;
	const Onnx__AttributeProto *a;
	int64_t one = 1;

	if (p->n_attribute != 1 || n->n_out != 1 || n->out[0] < 0)
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "a Constant needs exactly one value attribute");
	a = p->attribute[0];
	o = &c->g->tensors[n->out[0]];
	if (!strcmp(a->name, "value") && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR &&
	    a->t) {
		free(o->data);
		o->data = NULL;
		if (onnx_tensor_into(c->err, c->g->file, a->t, o, n->name))
			return -EINVAL;
		if (!o->data)
			return wsecc_refuse(c->g, i, WSECC_WHY_DTYPE, "a constant of %s",
					    wsecc_dtype_name(o->dtype));
		o->kind = WSECC_T_CONST;
	} else if (!strcmp(a->name, "value_float") &&
		   a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
		if (!(o = make_out(c, i, 0, WSECC_DT_F32, 0, NULL)))
			return -EINVAL;
		put(o, 0, a->f);
	} else if (!strcmp(a->name, "value_int") &&
		   a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
		if (!(o = make_out(c, i, 0, WSECC_DT_I64, 0, NULL)))
			return -EINVAL;
		put(o, 0, (double)a->i);
	} else if (!strcmp(a->name, "value_ints") &&
		   a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS && a->n_ints &&
		   a->n_ints <= WSECC_FOLD_MAX_ELEMS) {
		one = (int64_t)a->n_ints;
		if (!(o = make_out(c, i, 0, WSECC_DT_I64, 1, &one)))
			return -EINVAL;
		memcpy(o->data, a->ints, a->n_ints * sizeof(int64_t));
	} else if (!strcmp(a->name, "value_floats") &&
		   a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS && a->n_floats &&
		   a->n_floats <= WSECC_FOLD_MAX_ELEMS) {
		one = (int64_t)a->n_floats;
		if (!(o = make_out(c, i, 0, WSECC_DT_F32, 1, &one)))
			return -EINVAL;
		memcpy(o->data, a->floats, a->n_floats * sizeof(float));
	} else {
		return wsecc_refuse(c->g, i, WSECC_WHY_ATTR, "constant attribute '%s' is not supported",
				    a->name);
	}
	c->g->nodes[i].state = WSECC_NODE_FOLDED;
	return 1;
}

static bool all_const(struct octx *c, size_t i)
{
	const struct wsecc_node *n = &c->g->nodes[i];

	for (size_t k = 0; k < n->n_in; k++) {
		const struct wsecc_tensor *t = IN(c, i, k);

		if (t && (t->kind != WSECC_T_CONST || !t->data || !foldable_type(t->dtype)))
			return false;
	}
	return true;
}

int onnx_fold(struct octx *c, size_t i)
{
	struct wsecc_node *n = &c->g->nodes[i];
	const char *op = n->op_type;
	int r = 0;

	if (!strcmp(op, "Constant"))
		return fold_constant(c, i);
	if (!strcmp(op, "Shape")) {
		r = n->n_in == 1 && IN(c, i, 0) ? fold_shape(c, i) : 0;
	} else if (!n->n_in || !IN(c, i, 0) || !all_const(c, i) || n->n_out != 1) {
		/* An absent first input is the op handler's to refuse. */
		return 0;
	} else if (!strcmp(op, "Identity")) {
		r = fold_copy(c, i, IN(c, i, 0)->rank, IN(c, i, 0)->dims);
	} else if (!strcmp(op, "Reshape")) {
		struct wsecc_tensor *x = IN(c, i, 0);
		int64_t shape[WSECC_MAX_RANK + 1], dims[WSECC_MAX_RANK], allowzero;
		size_t ns;
		unsigned rank;
		char why[128];

		r = !ints_of(IN(c, i, 1), shape, WSECC_MAX_RANK + 1, &ns) &&
		    !onnx_attr_int(c, i, "allowzero", 0, &allowzero) &&
		    !onnx_reshape_dims(x->rank, x->dims, shape, ns, allowzero, &rank, dims, why,
				       sizeof(why)) &&
		    fold_copy(c, i, rank, dims);
	} else if (!strcmp(op, "Flatten")) {
		struct wsecc_tensor *x = IN(c, i, 0);
		int64_t axis, dims[2] = { 1, 1 };
		unsigned ax;

		if (!onnx_attr_int(c, i, "axis", 1, &axis) &&
		    !onnx_axis(axis, x->rank + 1, &ax)) {
			for (unsigned d = 0; d < x->rank; d++)
				dims[d >= ax] *= x->dims[d];
			r = fold_copy(c, i, 2, dims);
		}
	} else if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze")) {
		r = fold_unsqueeze(c, i, op[0] == 'S');
	} else if (!strcmp(op, "Gather")) {
		r = fold_gather(c, i);
	} else if (!strcmp(op, "Concat")) {
		r = fold_concat(c, i);
	} else if (!strcmp(op, "Slice")) {
		r = fold_slice(c, i);
	} else if (!strcmp(op, "Cast")) {
		r = fold_cast(c, i);
	} else if (!strcmp(op, "Transpose")) {
		r = fold_transpose(c, i);
	} else if (!strcmp(op, "Range")) {
		r = fold_range(c, i);
	} else if (!strcmp(op, "ConstantOfShape")) {
		r = fold_constant_of_shape(c, i);
	} else if (!strcmp(op, "Expand")) {
		r = fold_expand(c, i);
	} else if (!strcmp(op, "Where")) {
		r = fold_where(c, i);
	} else if (!strcmp(op, "Sqrt") || !strcmp(op, "Neg") || !strcmp(op, "Not")) {
		r = fold_unary(c, i, op);
	} else if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
		   !strcmp(op, "Div") || !strcmp(op, "Pow") || !strcmp(op, "Equal") ||
		   !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "And") ||
		   !strcmp(op, "Or")) {
		r = fold_elementwise(c, i, op);
	}
	if (r == 1)
		n->state = WSECC_NODE_FOLDED;
	return r;
}
