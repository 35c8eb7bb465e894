// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Layer-pipelined placement of a network's stages (dense layers, or the
 * units of a graph: struct wsecc_stages). Stages become column strips, left
 * to right in order, each as tall as is useful (min(H, rows it has work
 * for)), so neighbours in the network are neighbours on the wafer. Each strip starts at the
 * fewest columns whose SRAM holds the layer; the remaining columns go, a
 * few at a time, to whichever stage is slowest, until the slowest stage
 * can no longer be sped up (its time is set by host I/O, or it already
 * has a column per output); of the placements on the way, the one with the
 * shortest training step is kept (wider regions make the step's trip
 * across them longer: wsecc_pipelined_step_cycles). Then every other stage
 * gives back the columns that only made it faster than the slowest one.
 * The even split is computed alongside for comparison.
 */
#include <stdio.h>
#include <string.h>

#include "compiler_internal.h"

static uint32_t useful_rows(const struct wse_wafer *w, const struct wsecc_stages *st, uint32_t i)
{
	uint32_t r = st->rows(st->ctx, i);

	return w->height < r ? w->height : r;
}

static uint32_t useful_cols(const struct wse_wafer *w, const struct wsecc_stages *st, uint32_t i)
{
	uint32_t c = st->cols(st->ctx, i);

	return w->width < c ? w->width : c;
}

/* The samples stage @i holds: those in flight at it, else the batch. */
static uint32_t held(const struct wsecc_stages *st, uint32_t i)
{
	return st->held ? st->held[i] : st->batch;
}

static int cost(const struct wsecc_stages *st, uint32_t i, const struct wse_wafer *w, uint32_t cols,
		struct wsecc_layer_plan *lp)
{
	return st->cost(st->ctx, i, w, useful_rows(w, st, i), cols, held(st, i), lp);
}

/* Smallest strip width whose SRAM holds stage @i; 0 if none does. */
static uint32_t min_columns(const struct wsecc_stages *st, uint32_t i, const struct wse_wafer *w)
{
	uint32_t max = useful_cols(w, st, i);
	struct wsecc_layer_plan lp;
	uint32_t lo = 1, hi = max;

	if (cost(st, i, w, max, &lp))
		return 0;
	/* SRAM per PE does not grow with the width: bisect. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cost(st, i, w, mid, &lp) == 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static double throughput(const struct wse_wafer *w, const struct wsecc_layer_plan *lp,
			 uint32_t n, uint32_t *bottleneck)
{
	double worst = 0;

	*bottleneck = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (lp[i].est.stage_cycles > worst) {
			worst = lp[i].est.stage_cycles;
			*bottleneck = i;
		}
	}
	return worst > 0 ? (double)w->clock_hz / worst : 0;
}

static void even_split(const struct wsecc_stages *st, struct wsecc_plan *plan)
{
	const struct wse_wafer *w = &plan->wafer;
	uint32_t cols = w->width / st->n, b;

	plan->even_columns = cols;
	plan->summary.even_split_samples_per_s = 0;
	if (!cols)
		return;
	for (uint32_t i = 0; i < st->n; i++) {
		struct wsecc_layer_plan *lp = &plan->even[i];

		if (st->cost(st->ctx, i, w, w->height, cols, held(st, i), lp))
			return;		/* an even split does not fit: no comparison */
		lp->region = (struct wsep_region){ i * cols, 0, cols, w->height };
		lp->pes = (uint64_t)cols * w->height;
	}
	throughput(w, plan->even, st->n, &b);
	plan->summary.even_split_samples_per_s =
		st->batch * (double)w->clock_hz /
		wsecc_pipelined_step_cycles(plan->even, st->n, st->batch, plan->micro_batch);
}

int wsecc_place_pipelined(const struct wsecc_stages *st, struct wsecc_plan *plan,
			  struct wsecc_error *err)
{
	const struct wse_wafer *w = &plan->wafer;
	uint32_t cols[WSECC_MAX_LAYERS], best_cols[WSECC_MAX_LAYERS], used = 0, x = 0, b, n = st->n;
	struct wsecc_layer_plan *lp = plan->layers, best[WSECC_MAX_LAYERS];
	double best_step;
	char need[32], have[32], what[96];
	struct wsecc_pos pos;

	if (n > w->width)
		return wsecc_fail(err, st->file, 0, 0,
				  "%u layers need at least %u columns; the %s wafer has %u", n, n,
				  w->name, w->width);
	for (uint32_t i = 0; i < n; i++) {
		cols[i] = min_columns(st, i, w);
		if (!cols[i]) {
			struct wsecc_layer_plan tmp;

			cost(st, i, w, useful_cols(w, st, i), &tmp);
			wsecc_bytes(need, sizeof(need), (double)tmp.sram_per_pe);
			wsecc_bytes(have, sizeof(have),
				    (double)(w->sram_per_pe - wsecc_reserve_per_pe(w)));
			st->describe(st->ctx, i, what, sizeof(what), &pos);
			return wsecc_fail(err, st->file, pos.line, pos.col,
					  "%s does not fit the %s wafer pipelined: even on %ux%u PEs each needs %s, a PE has %s usable",
					  what, w->name, useful_cols(w, st, i), useful_rows(w, st, i),
					  need, have);
		}
		used += cols[i];
	}
	if (used > w->width)
		return wsecc_fail(err, st->file, 0, 0,
				  "the layers need %u columns at least (their SRAM), the %s wafer has %u",
				  used, w->name, w->width);
	for (uint32_t i = 0; i < n; i++)
		cost(st, i, w, cols[i], &lp[i]);

	/*
	 * Hand spare columns to the slowest stage, a few at a time, until it
	 * can go no faster; at most width rounds. Each column also makes the
	 * step's trip across the regions two hops longer, so the placement kept
	 * is the one with the shortest step seen on the way
	 * (wsecc_pipelined_step_cycles), not necessarily the last.
	 */
	memcpy(best_cols, cols, sizeof(cols));
	memcpy(best, lp, sizeof(best[0]) * n);
	best_step = wsecc_pipelined_step_cycles(lp, n, st->batch, plan->micro_batch);
	for (uint32_t round = 0; round < w->width && used < w->width; round++) {
		uint32_t max_extra, d;
		struct wsecc_layer_plan trial;
		double step;

		throughput(w, lp, n, &b);
		max_extra = useful_cols(w, st, b) - cols[b];
		if (max_extra > w->width - used)
			max_extra = w->width - used;
		for (d = 1; d <= max_extra; d++) {
			cost(st, b, w, cols[b] + d, &trial);
			if (trial.est.stage_cycles < lp[b].est.stage_cycles * (1 - 1e-9))
				break;
		}
		if (d > max_extra)
			break;		/* the slowest stage cannot go faster */
		cols[b] += d;
		used += d;
		lp[b] = trial;
		step = wsecc_pipelined_step_cycles(lp, n, st->batch, plan->micro_batch);
		if (step < best_step) {
			best_step = step;
			memcpy(best_cols, cols, sizeof(cols));
			memcpy(best, lp, sizeof(best[0]) * n);
		}
	}
	memcpy(cols, best_cols, sizeof(cols));
	memcpy(lp, best, sizeof(best[0]) * n);

	/* Give back columns that only make a stage faster than the slowest. */
	throughput(w, lp, n, &b);
	for (uint32_t i = 0; i < n; i++) {
		struct wsecc_layer_plan trial;

		while (i != b && cols[i] > 1 && cost(st, i, w, cols[i] - 1, &trial) == 0 &&
		       trial.est.stage_cycles <= lp[b].est.stage_cycles) {
			cols[i]--;
			lp[i] = trial;
		}
	}

	plan->summary.active_pes = 0;
	plan->summary.sram_bytes = 0;
	for (uint32_t i = 0; i < n; i++) {
		lp[i].region.x = x;
		lp[i].region.y = 0;
		x += cols[i];
		plan->summary.active_pes += lp[i].pes;
		plan->summary.sram_bytes += lp[i].sram_bytes;
	}
	/* The rate is the steady state's; a step also fills and drains. */
	throughput(w, lp, n, &b);
	plan->summary.samples_per_s = st->batch * (double)w->clock_hz /
				      wsecc_pipelined_step_cycles(lp, n, st->batch, plan->micro_batch);
	plan->summary.bottleneck_layer = b;
	plan->summary.limit = lp[b].est.limit;
	even_split(st, plan);
	return 0;
}
