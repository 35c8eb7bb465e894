/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Graph programs on the device (fwd_graph.c): the program's graph as one
 * engine graph per micro-batch, run a unit at a time by the step graph's
 * tasks (fwd_pipeline.c) in both modes, exactly as a dense layer program
 * is run a layer at a time:
 *
 *   F(k, m)  unit k's forward pass on micro-batch m (k = 0 loads its input
 *            and labels; the last unit writes its results and, training,
 *            takes the loss normalised by the whole batch)
 *   X(k, m)  unit k's backward pass on m: its parameters' gradients into
 *            m's graph, its input's gradient for unit k - 1
 *   G(k, m)  m's gradients of unit k into the buffer of its pair of
 *            micro-batches (the first of the pair writes it, the second
 *            adds), which the step graph's sum tree adds up
 *            (fwd_pipeline.c)
 *   U(k)     pipelined: unit k's optimizer step, at the schedule's rate
 *
 * A unit's parameters are read where they are: the resident weights
 * (pipelined) or the weights.K ring (weight streaming), the second
 * transfer for the backward pass. Both modes make the same engine calls on
 * the same values in the same order, so they agree bit for bit.
 */
#ifndef FWD_GRAPH_H
#define FWD_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "fwd_pipeline.h"

struct fwd_graph;

/*
 * Builds a graph program's engine graphs (one per micro-batch, checked
 * before anything is allocated) and, pipelined, its resident weights,
 * gradients and optimizer state; refused when they would hold more than
 * the device's @sram bytes. On failure a text in @text and the link
 * status.
 */
uint32_t fwd_graph_create(struct fwd_program *p, uint64_t sram, struct fwd_graph **out,
			  char *text, size_t len);
void fwd_graph_destroy(struct fwd_graph *g);

/* Before a step of @batch samples: each micro-batch's graph at its size. */
uint32_t fwd_graph_fit(struct fwd_program *p, uint32_t batch, char *text, size_t len);

/*
 * The tasks; *@what names the part that failed. A program that
 * recomputes (WSEP_EXEC_RECOMPUTE) has each unit but the last forget, in
 * training, what its forward pass made for its backward pass but its
 * output; its backward pass makes it again first, from the unit's input
 * and with the step's dropout masks.
 */
int fwd_graph_forward(struct fwd_program *p, const struct fwd_step *step, uint32_t k,
		      uint32_t m, const float *w, const char **what);
int fwd_graph_backward(struct fwd_program *p, const struct fwd_step *step, uint32_t k,
		       uint32_t m, const float *w, const char **what);
int fwd_graph_gradients(struct fwd_program *p, uint32_t k, uint32_t m, bool first, float *dw);
int fwd_graph_update(struct fwd_program *p, uint32_t k, uint64_t t);

/* Pipelined: the resident parameters of unit @k, its gradient buffer. */
float *fwd_graph_weights(struct fwd_graph *g, uint32_t k);
float *fwd_graph_grads(struct fwd_graph *g, uint32_t k);
/*
 * The resident arrays in the .wsep weights layout, for PARAMS_READ and
 * _WRITE: -1 the weights, 0 and 1 the optimizer's state arrays.
 */
float *fwd_graph_array(struct fwd_graph *g, int which);

#endif /* FWD_GRAPH_H */
