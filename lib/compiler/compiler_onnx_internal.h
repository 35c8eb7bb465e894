/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ONNX importer's shared state (protobuf-c types); not public. */
#ifndef WSECC_ONNX_INTERNAL_H
#define WSECC_ONNX_INTERNAL_H

#include "compiler_graph_internal.h"
#include "onnx.pb-c.h"

struct octx {
	struct wsecc_graph *g;
	const struct wsecc_onnx_options *opt;
	struct wsecc_error *err;
	const Onnx__NodeProto **proto;	/* per graph node */
	size_t n_proto;
	/* The model's "wse.parameters" names, sorted (compiler_onnx_param_names.c). */
	char **trainable;
	size_t n_trainable;
	struct onnx_uses *uses;		/* compiler_onnx_uses.c */
};

/* --freeze (compiler_onnx_params.c): does a pattern match @name? */
bool onnx_frozen(const struct octx *c, const char *name);
/* -1 with c->err for a --freeze pattern that matches no initializer. */
int onnx_freeze_check(struct octx *c);
/* After mark_params: ties tied weights, notes eval-mode exports; -1 with c->err. */
int onnx_params_review(struct octx *c, const Onnx__ModelProto *m);
/* Appends one line to the graph's notes; -ENOMEM out of memory. */
int onnx_note(struct wsecc_graph *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "[16x96]": @t's shape into @buf. */
const char *onnx_shape_text(const struct wsecc_tensor *t, char *buf, size_t len);
/*
 * Ties each initializer that is bit for bit a copy or the transpose of a
 * parameter back to it (compiler_onnx_tie.c), with a note; -ENOMEM.
 */
int onnx_tie_weights(struct octx *c);

/* Counts every tensor's readers in @gp (compiler_onnx_uses.c); -1 out of memory. */
int onnx_uses_init(struct octx *c, const Onnx__GraphProto *gp);
/* Node @i is imported: frees the folded constants it was the last to read. */
void onnx_uses_done(struct octx *c, size_t i);
void onnx_uses_free(struct octx *c);
/* After fusion: frees the constants only folded or fused nodes read (a GPT's masks). */
void onnx_free_unread(struct octx *c);

/* Attribute @name of node @i, or NULL. */
const Onnx__AttributeProto *onnx_attr(const struct octx *c, size_t i, const char *name);
/* Refuses node @i (ATTR) if it has an attribute not in @known (NULL-ended); 1 if refused. */
int onnx_attrs_known(struct octx *c, size_t i, const char *const *known);
/* Typed attribute getters: 0, or 1 after refusing node @i for a wrong type. */
int onnx_attr_int(struct octx *c, size_t i, const char *name, int64_t def, int64_t *v);
int onnx_attr_float(struct octx *c, size_t i, const char *name, float def, float *v);
/* Up to @max ints into @v, count into *@n (0 when absent). */
int onnx_attr_ints(struct octx *c, size_t i, const char *name, int64_t *v, size_t max, size_t *n);
/* A string attribute into @buf ("" when absent). */
int onnx_attr_string(struct octx *c, size_t i, const char *name, char *buf, size_t len);

/* A TensorProto into tensor @t (dtype, shape, data); -1 with @c->err. */
int onnx_tensor_into(struct wsecc_error *err, const char *file, const Onnx__TensorProto *tp,
		     struct wsecc_tensor *t, const char *what);

/* Values of initializer @t (shape set) from @tp's external data; -1 with @c->err. */
int onnx_external_values(struct octx *c, const Onnx__TensorProto *tp, struct wsecc_tensor *t,
			 const char *what);
/* Reads the values of tensor @t if they are not read yet (@t->source); -1 with @c->err. */
int onnx_tensor_load(struct octx *c, int t, const char *why);

/*
 * ONNX Reshape's target: @shape (n values; 0 copies the input's dimension
 * unless @allowzero, -1 is inferred) for an input of @in_rank/@in_dims.
 * 0, or -1 with a reason in @why.
 */
int onnx_reshape_dims(unsigned in_rank, const int64_t *in_dims, const int64_t *shape, size_t n,
		      bool allowzero, unsigned *out_rank, int64_t *out_dims, char *why, size_t len);
/* numpy broadcast of two shapes; -1 if they do not broadcast. */
int onnx_broadcast(unsigned ra, const int64_t *a, unsigned rb, const int64_t *b, unsigned *r,
		   int64_t *out);
/* Normalizes a possibly negative axis of a rank-@rank tensor; -1 if out of range. */
int onnx_axis(int64_t axis, unsigned rank, unsigned *out);

/* Folds node @i whose inputs are all constant (or, for Shape, shaped):
 * 1 folded, 0 not a foldable op (or refused), -1 error.
 */
int onnx_fold(struct octx *c, size_t i);
/* Maps node @i to a kernel, or marks it pending or refused; -1 on error. */
int onnx_infer(struct octx *c, size_t i);

/*
 * Which initializers are trainable (compiler_onnx_param_names.c): the
 * names the model's "wse.parameters" metadata lists, read into @c by
 * onnx_trainable_read() (0, or -1 out of memory). onnx_trainable() says
 * whether data named @name may be trained: listed, or any name when the
 * model lists none (every initializer read by a kernel is trained then).
 */
int onnx_trainable_read(struct octx *c, const Onnx__ModelProto *m);
bool onnx_trainable(const struct octx *c, const char *name);
bool onnx_trainable_listed(const struct octx *c);
void onnx_trainable_free(struct octx *c);

#endif
