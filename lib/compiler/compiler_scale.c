// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Weight streaming on N systems, data-parallel at a fixed batch per
 * system (Documentation/timing-model.rst, "Across systems").
 *
 * Each system runs the one-system plan: the same compute, and the same
 * weights and gradients at its own I/O rate, because SwarmX replicates
 * the weights and sums the gradients at line rate in a tree whose nodes
 * grow with N [SwarmX]. What N changes is the tree's depth, and so the
 * latency between MemoryX and a system. Within a step that latency is
 * hidden: the next layer's weights are known and stream while this one
 * computes, and a layer's gradients leave while the layer below computes
 * [MemoryX]. At the step boundary it is not: the first layer's new
 * weights cannot leave MemoryX before its gradients have come back and
 * MemoryX has updated it, and MemoryX updates the layers one after the
 * other as their gradients arrive. boundary_s is that wait.
 *
 * Sources:
 *   [SwarmX] Cerebras, "SwarmX" (cerebras.net/glossary/swarmx): broadcast-
 *            reduce nodes of 100 Gb/s interfaces, each a 1:4 broadcast-
 *            reduce (or two 1:2); reduction at line rate; a bidirectional
 *            tree, latency growing logarithmically with N; each CS-2 has
 *            1.2 Tb/s of I/O.
 *   [MemoryX] Cerebras, "MemoryX" (cerebras.net/glossary/memoryx): weights
 *            for most layers are fetched before the previous layer ends,
 *            except at the boundary between iterations, when they are
 *            updated; MemoryX's storage and I/O match or exceed a CS-2's
 *            I/O bandwidth; MemoryX runs the optimizer.
 *   [model]  not published; this project's assumption.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "compiler_internal.h"

#define SWARMX_FANOUT		4U	/* [SwarmX] 1:4 broadcast-reduce nodes */
/*
 * [model] One tree level: a 100 GbE hop through a node that buffers and
 * adds before forwarding. Not published; 10 us is generous for a NIC, a
 * switch and a reduction buffer, and the estimate is insensitive to it
 * for any step longer than a millisecond (timing-model.rst).
 */
#define SWARMX_HOP_LATENCY_S	10e-6

const uint32_t wsecc_scale_default_systems[] = { 1, 2, 4, 8, 16, 32, 64, 128, 192 };
const uint32_t wsecc_scale_default_count =
	sizeof(wsecc_scale_default_systems) / sizeof(wsecc_scale_default_systems[0]);

void wsecc_scale_default_params(const struct wsecc_plan *plan, struct wsecc_scale_params *p)
{
	p->fanout = SWARMX_FANOUT;
	p->hop_latency_s = SWARMX_HOP_LATENCY_S;
	/* [MemoryX] "matches or exceeds" a system's I/O: the floor it promises. */
	p->memoryx_bytes_per_s = plan->wafer.io_bytes_per_s;
}

/* Tree levels to reach @n leaves @fanout at a time: ceil(log_fanout n). */
static uint32_t tree_levels(uint32_t n, uint32_t fanout)
{
	uint32_t levels = 0;

	for (uint64_t reach = 1; reach < n; reach *= fanout)
		levels++;
	return levels;
}

/*
 * Bytes MemoryX moves to update one parameter: the summed gradient read,
 * the weight and each state float read and written (fp32).
 */
static double update_bytes_per_param(const struct wsep_optimizer *opt)
{
	return 4.0 * (1 + 2 * (1 + wsecc_opt_state_per_param(opt)));
}

/* Bytes a weight or gradient takes on the wire: 4, 2 at 16 bits. */
static double wire_bytes(const struct wsecc_plan *plan)
{
	return plan->weight_bytes > 0 ? plan->weight_bytes : 4.0;
}

/*
 * The step boundary, seconds, for a one-way latency @lat. Time 0 is the end
 * of the last micro-batch's backward pass (layer 0 last). Layer i's
 * gradients reach MemoryX @lat after its backward pass ends; MemoryX
 * updates layers n-1 .. 0 in turn; layer i's weights for the next step's
 * first micro-batch leave when it is updated and arrive @lat later. The
 * wait is how much later the next step's first forward pass ends than it
 * would with the weights there at time 0.
 */
static double boundary_s(const struct wsecc_plan *plan, double upd_bytes, double mx_bps,
			 double lat)
{
	const struct wse_wafer *w = &plan->wafer;
	double clock = (double)w->clock_hz, io = wse_wafer_io_bytes_per_cycle(w);
	uint32_t n = plan->num_layers, mb = plan->micro_batch;
	uint32_t last = plan->batch % mb ? plan->batch % mb : mb;
	double end_bwd = 0, mx = -1e300, fwd_at = 0, fwd_total = 0;
	double done[WSECC_MAX_LAYERS];

	/* Backward ends: layer 0 at 0, layer i at minus the backward of layers below it. */
	for (uint32_t i = 0; i < n; i++) {
		const struct wsecc_layer_plan *lp = &plan->layers[i];
		double weights_in = (double)lp->params * wire_bytes(plan) / io;
		/* Recompute: a unit but the last runs its forward pass again first. */
		bool again = plan->recompute && i + 1 < n;
		double bwd = last * (lp->bwd_compute + (again ? lp->fwd_compute : 0));

		done[i] = end_bwd;	/* layer i's backward ends here (negative) */
		end_bwd -= ((bwd > weights_in ? bwd : weights_in) + weights_in) / clock;
	}
	for (uint32_t i = n; i-- > 0;) {
		double arrive = done[i] + lat;

		mx = (mx > arrive ? mx : arrive) + (double)plan->layers[i].params * upd_bytes / mx_bps;
		done[i] = mx;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct wsecc_layer_plan *lp = &plan->layers[i];
		double weights_in = (double)lp->params * wire_bytes(plan) / io;
		double fwd = mb * lp->fwd_compute;
		double ready = done[i] + lat;

		fwd = (fwd > weights_in ? fwd : weights_in) / clock;
		if (ready > fwd_at)
			fwd_at = ready;
		fwd_at += fwd;
		fwd_total += fwd;
	}
	return fwd_at - fwd_total;
}

int wsecc_scale_estimate(const struct wsecc_plan *plan, const struct wsep_optimizer *opt,
			 const struct wsecc_scale_params *p, uint32_t systems,
			 struct wsecc_scale_point *pt)
{
	double upd = update_bytes_per_param(opt), params = 0, one, lat1;

	if (plan->mode != WSEP_MODE_WEIGHT_STREAMING || !plan->micro_batch ||
	    plan->summary.samples_per_s <= 0 || systems < 1 ||
	    systems > WSECC_SCALE_MAX_SYSTEMS || p->fanout < 2 || p->hop_latency_s < 0 ||
	    p->memoryx_bytes_per_s <= 0)
		return -EINVAL;
	for (uint32_t i = 0; i < plan->num_layers; i++)
		params += (double)plan->layers[i].params;

	/* One system's step: the plan's compute and streaming, plus its own boundary. */
	lat1 = p->hop_latency_s;
	one = plan->batch / plan->summary.samples_per_s +
	      boundary_s(plan, upd, p->memoryx_bytes_per_s, lat1);

	pt->systems = systems;
	pt->tree_levels = tree_levels(systems, p->fanout);
	pt->latency_s = (1 + pt->tree_levels) * p->hop_latency_s;
	pt->update_s = params * upd / p->memoryx_bytes_per_s;
	pt->boundary_s = boundary_s(plan, upd, p->memoryx_bytes_per_s, pt->latency_s);
	pt->step_s = plan->batch / plan->summary.samples_per_s + pt->boundary_s;
	pt->samples_per_s = (double)systems * plan->batch / pt->step_s;
	pt->speedup = pt->samples_per_s / (plan->batch / one);
	pt->efficiency = pt->speedup / systems;
	return 0;
}

int wsecc_scale_parse(const char *list, uint32_t *systems, char *err, size_t errlen)
{
	const char *s = list;
	int count = 0;

	if (!*s) {
		snprintf(err, errlen, "an empty list: give system counts such as 1,2,4,16");
		return -EINVAL;
	}
	for (;;) {
		char *end;
		unsigned long v;

		if (*s < '0' || *s > '9') {
			snprintf(err, errlen, "'%s': expected system counts 1..%u separated by commas, such as 1,2,4,16",
				 list, WSECC_SCALE_MAX_SYSTEMS);
			return -EINVAL;
		}
		v = strtoul(s, &end, 10);
		if (v < 1 || v > WSECC_SCALE_MAX_SYSTEMS || (*end && *end != ',')) {
			snprintf(err, errlen, "'%.*s' in '%s': a system count is 1..%u (a cluster has at most %u CS-2 systems)",
				 (int)(end - s), s, list, WSECC_SCALE_MAX_SYSTEMS,
				 WSECC_SCALE_MAX_SYSTEMS);
			return -EINVAL;
		}
		for (int i = 0; i < count; i++) {
			if (systems[i] == v) {
				snprintf(err, errlen, "'%s': %lu systems given twice", list, v);
				return -EINVAL;
			}
		}
		if (count == (int)WSECC_SCALE_MAX_POINTS) {
			snprintf(err, errlen, "'%s': more than %u system counts", list,
				 WSECC_SCALE_MAX_POINTS);
			return -EINVAL;
		}
		systems[count++] = (uint32_t)v;
		if (!*end)
			return count;
		s = end + 1;
	}
}

static void time_text(char *buf, size_t len, double s)
{
	if (s >= 1)
		snprintf(buf, len, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.3f ms", s * 1e3);
	else
		snprintf(buf, len, "%.1f us", s * 1e6);
}

void wsecc_scale_report(FILE *f, const struct wsecc_plan *plan, const struct wsep_optimizer *opt,
			const uint32_t *systems, uint32_t count)
{
	struct wsecc_scale_params p;
	struct wsecc_scale_point pt;
	char step[24], bound[24], lat[24], upd[24];

	wsecc_scale_default_params(plan, &p);
	if (wsecc_scale_estimate(plan, opt, &p, 1, &pt))
		return;
	time_text(upd, sizeof(upd), pt.update_s);
	fprintf(f, "\nsystems:     data-parallel, batch %u per system; SwarmX 1:%u tree, %.0f us a level;\n"
		   "             MemoryX updates at %.3g GB/s (%s a step, hidden behind the backward\n"
		   "             pass but for the boundary); Documentation/timing-model.rst\n",
		plan->batch, p.fanout, p.hop_latency_s * 1e6, p.memoryx_bytes_per_s / 1e9, upd);
	fprintf(f, "%7s %12s %11s %16s %9s %10s %6s %10s %11s\n", "systems", "batch", "step",
		"samples/s", "speedup", "efficiency", "levels", "latency", "boundary");
	for (uint32_t i = 0; i < count; i++) {
		if (wsecc_scale_estimate(plan, opt, &p, systems[i], &pt))
			continue;
		time_text(step, sizeof(step), pt.step_s);
		time_text(lat, sizeof(lat), pt.latency_s);
		time_text(bound, sizeof(bound), pt.boundary_s);
		fprintf(f, "%7u %12llu %11s %16.2f %8.2fx %9.3f%% %6u %10s %11s\n", pt.systems,
			(unsigned long long)pt.systems * plan->batch, step, pt.samples_per_s,
			pt.speedup, 100.0 * pt.efficiency, pt.tree_levels, lat, bound);
	}
	fprintf(f, "(one system's row adds the step boundary to the estimate above)\n");
}
