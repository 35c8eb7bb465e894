/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/wsep_cost.h: what a graph program's unit costs on a rectangle of
 * PEs, for the compiler's estimate (lib/compiler) and the firmware's timing
 * model (firmware-sim/timing) alike. The work is read off the program's
 * graph (shapes and ops); the cycles each kind of work takes are the
 * caller's (struct wsep_costs): the compiler's constants and the timing
 * model's parameter file, each with its source. Documentation/
 * timing-model.rst, "Graph programs", derives every term.
 */
#ifndef WSE_WSEP_COST_H
#define WSE_WSEP_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "wse/wsep.h"

/* Cycles per element per PE of each kind of element-wise work, and the rest. */
struct wsep_costs {
	double elementwise;	/* add, ReLU, a copy, a dropout mask */
	double transcendental;	/* tanh, sigmoid, GELU */
	double normalize;	/* layer normalization */
	double softmax;		/* max, exp, sum, divide */
	double window;		/* pooling: per element of a window */
	double loss_fwd, loss_bwd;	/* softmax cross-entropy, per logit */
	double opt_flops;	/* FLOPs of one optimizer step per parameter */
	double sram_bytes_per_weight;	/* per weight and sample, training */
	double fabric_directions;	/* wavelets both ways, training */
	/* Matrix products' FLOPs per PE per cycle at the program's precision; 0: fp32's. */
	double product_flops_per_cycle;
};

/**
 * struct wsep_unit_cost - a unit on a region, per sample
 * @fwd, @bwd: compute cycles forward; backward without the update
 * @opt: the update's share (its cycles over the batch)
 * @sram, @fabric, @host: SRAM traffic, fabric and host I/O cycles (training)
 * @flops: FLOPs forward, backward and the update's share
 * @rows, @cols: the PEs it uses of the region
 * @tile_in, @tile_out: the weight tile of its largest product on each PE
 * @sram_per_pe: weights, gradients, optimizer state and its share of the
 *	batch's activations
 * @act_bytes: the batch's activations (and their gradients) of the unit
 */
struct wsep_unit_cost {
	double fwd, bwd, opt, sram, fabric, host, flops;
	uint32_t rows, cols, tile_in, tile_out;
	uint64_t sram_per_pe, act_bytes;
};

/* The most rows and columns unit @k has work for (its largest product's). */
void wsep_unit_extent(const struct wsep_program *p, uint32_t k, uint32_t *rows, uint32_t *cols);

/*
 * wsep_unit_cost() - unit @k of graph program @p on @h rows by @w columns
 * of wafer @wf (of which it uses no more than wsep_unit_extent() says),
 * at @batch samples a step, @state optimizer arrays per parameter.
 */
void wsep_unit_cost(const struct wsep_program *p, uint32_t k, const struct wsep_wafer *wf,
		    uint32_t h, uint32_t w, uint32_t batch, unsigned int state,
		    const struct wsep_costs *c, struct wsep_unit_cost *out);

#endif /* WSE_WSEP_COST_H */
