/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Building graphs, shared by the front ends, folding and fusion; not public. */
#ifndef WSECC_GRAPH_INTERNAL_H
#define WSECC_GRAPH_INTERNAL_H

#include "compiler_internal.h"
#include "wse/compiler_graph.h"

struct wsecc_graph *wsecc_graph_new(const char *file);
/* Adds a tensor (name copied); returns its index or -ENOMEM. */
int wsecc_graph_add_tensor(struct wsecc_graph *g, const char *name, enum wsecc_dtype dt,
			   enum wsecc_tensor_kind kind);
/* Adds a node with room for @n_in inputs and @n_out outputs (all -1). */
int wsecc_graph_add_node(struct wsecc_graph *g, const char *name, const char *op_type,
			 size_t n_in, size_t n_out);

/*
 * Drops from memory the pages of a tensor whose data is mapped from an
 * external data file (they come back from the file if touched again):
 * called once its values are copied where they are needed.
 */
void wsecc_tensor_evict(const struct wsecc_tensor *t);
/* Unmaps the graph's external data files. */
void wsecc_graph_unmap(struct wsecc_graph *g);

/* Sets a tensor's shape. */
void wsecc_tensor_set_shape(struct wsecc_tensor *t, unsigned rank, const int64_t *dims);
/* Bytes per element of the types whose data is kept (f32, i64, bool, u8); 0 otherwise. */
size_t wsecc_dtype_size(enum wsecc_dtype dt);

/* Marks node @i refused and returns 0 (refusing is not an import error). */
int wsecc_refuse(struct wsecc_graph *g, size_t i, enum wsecc_why why, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Maps node @i to kernel @op named @kernel. */
void wsecc_map(struct wsecc_graph *g, size_t i, enum engine_op op, const char *kernel);

/* Pattern fusion over the whole graph (attention, GELU). */
void wsecc_fuse(struct wsecc_graph *g);

/*
 * wsecc_graph_to_engine() with the parameters' shapes only (no copy of
 * their values: a program takes them from the graph's tensors).
 */
int wsecc_graph_to_engine_shapes(const struct wsecc_graph *g, struct engine_graph *eg, int *ids,
				 bool add_xent, int *labels, struct wsecc_error *err);

/* Uses of tensor @t as a node input (by nodes not folded) or graph output. */
size_t wsecc_tensor_uses(const struct wsecc_graph *g, int t);

/*
 * A graph's kernels cut into units (compiler_units.c): @unit, per engine
 * node (the caller allocates it), and per unit its name and whether it
 * holds a weight op.
 */
struct wsecc_units {
	uint32_t n;
	uint32_t *unit;
	size_t seg[WSECC_MAX_LAYERS];
	bool weighted[WSECC_MAX_LAYERS];
	char name[WSECC_MAX_LAYERS][48];
};

/* @names: each engine node's ONNX name (module path). */
int wsecc_units(const struct engine_graph *eg, const char *const *names,
		struct wsecc_units *u, const char *file, struct wsecc_error *err);

#endif
