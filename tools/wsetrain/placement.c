// SPDX-License-Identifier: GPL-2.0-only
/*
 * The compiler's placement and timing model of the program being trained,
 * kept in the run directory from the program itself, so that a .wsep
 * given as it is (a graph program, often) gets them as a model wsetrain
 * compiled does:
 *
 *   timing.json   the modelled step and each layer's (unit's) share of it,
 *                 for wsereport's table beside the measured step time
 *   wafer.svg     the wafer map, drawn from the program's regions where
 *                 wsecc did not draw one already
 *
 * Figures are per system, as the compiler modelled them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "train.h"
#include "wse/compiler.h"
#include "wse/outfile.h"

/* "dense 784x256" for a layer, "unit 3: gemm add relu" for a graph program's unit. */
static void unit_label(const struct wsep_program *p, uint32_t k, char *buf, size_t len)
{
	bool seen[WSEP_OP_COUNT + 1] = { false };
	size_t at;

	if (!p->graph) {
		snprintf(buf, len, "dense %ux%u", p->layers[k].in, p->layers[k].out);
		return;
	}
	at = (size_t)snprintf(buf, len, "unit %u:", k);
	for (uint32_t i = 0; i < p->graph->num_nodes && at < len; i++) {
		const struct wsep_graph_node *nd = &p->graph->nodes[i];

		/* Each op once, reshapes left out: what the unit computes. */
		if (nd->unit != k || nd->op > WSEP_OP_COUNT || seen[nd->op] ||
		    nd->op == WSEP_OP_RESHAPE)
			continue;
		seen[nd->op] = true;
		at += (size_t)snprintf(buf + at, len - at, " %s", wsep_op_name(nd->op));
	}
}

/*
 * Seconds a layer takes in one step of @p: pipelined, its stage's cycles
 * per sample times the batch (the slowest stage sets the pace); weight
 * streaming, its cycles per batch, the layers running in turn.
 */
static double layer_step_s(const struct wsep_program *p, uint32_t k)
{
	double cycles = p->estimates[k].stage_cycles;

	if (p->mode == WSEP_MODE_PIPELINED)
		cycles *= p->batch;
	return cycles / (double)p->wafer.clock_hz;
}

static int add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -1;
	json_object_object_add(o, key, v);
	return 0;
}

static struct json_object *timing_json(const struct wsep_program *p)
{
	struct json_object *root = json_object_new_object();
	struct json_object *layers = json_object_new_array();
	const struct wsep_summary *s = &p->summary;
	char label[128];
	int bad = !root || !layers;

	if (!bad)
		bad = add(root, "wafer", json_object_new_string(p->wafer.name)) ||
		      add(root, "clock_hz", json_object_new_int64((int64_t)p->wafer.clock_hz)) ||
		      add(root, "mode", json_object_new_string(wsep_mode_name(p->mode))) ||
		      add(root, "program", json_object_new_string(p->graph ? "graph" : "layers")) ||
		      add(root, "batch", json_object_new_int64(p->batch)) ||
		      add(root, "samples_per_s", json_object_new_double(s->samples_per_s)) ||
		      add(root, "step_s", json_object_new_double(p->batch / s->samples_per_s)) ||
		      add(root, "bottleneck_layer", json_object_new_int64(s->bottleneck_layer));
	for (uint32_t k = 0; !bad && k < p->num_layers; k++) {
		const struct wsep_estimate *e = &p->estimates[k];
		const struct wsep_region *r = &p->regions[k];
		struct json_object *l = json_object_new_object();

		unit_label(p, k, label, sizeof(label));
		bad = !l || json_object_array_add(layers, l) ||
		      add(l, "label", json_object_new_string(label)) ||
		      add(l, "x", json_object_new_int64(r->x)) ||
		      add(l, "y", json_object_new_int64(r->y)) ||
		      add(l, "w", json_object_new_int64(r->w)) ||
		      add(l, "h", json_object_new_int64(r->h)) ||
		      add(l, "fwd_cycles", json_object_new_double(e->fwd_cycles)) ||
		      add(l, "bwd_cycles", json_object_new_double(e->bwd_cycles)) ||
		      add(l, "io_cycles", json_object_new_double(e->io_cycles)) ||
		      add(l, "stage_cycles", json_object_new_double(e->stage_cycles)) ||
		      add(l, "limit", json_object_new_string(wsep_limit_name(e->limit))) ||
		      add(l, "step_s", json_object_new_double(layer_step_s(p, k)));
		if (!l)
			break;
	}
	if (!bad && !add(root, "layers", layers))
		return root;
	json_object_put(layers);
	json_object_put(root);
	return NULL;
}

static int write_timing(const struct wsep_program *p, const char *dir)
{
	struct json_object *root = timing_json(p);
	char path[PATH_MAX], err[512];
	struct wse_out out;

	if (!root)
		return train_fail("out of memory");
	snprintf(path, sizeof(path), "%s/timing.json", dir);
	if (wse_out_open(&out, path, 0, err, sizeof(err))) {
		json_object_put(root);
		return train_fail("%s", err);
	}
	if (json_object_to_fd(out.fd, root, JSON_C_TO_STRING_PRETTY |
			      JSON_C_TO_STRING_NOSLASHESCAPE)) {
		wse_out_abandon(&out);
		json_object_put(root);
		return train_fail("%s: cannot write it: %s", path, json_util_get_last_err());
	}
	json_object_put(root);
	if (wse_out_commit(&out, err, sizeof(err)))
		return train_fail("%s", err);
	return 0;
}

/* What wsecc_write_svg() draws, from the program: the wafer, the regions, the estimates. */
static struct wsecc_plan *plan_of(const struct wsep_program *p)
{
	struct wsecc_plan *plan = calloc(1, sizeof(*plan));

	if (!plan)
		return NULL;
	snprintf(plan->wafer.name, sizeof(plan->wafer.name), "%s", p->wafer.name);
	plan->wafer.width = p->wafer.width;
	plan->wafer.height = p->wafer.height;
	plan->wafer.clock_hz = p->wafer.clock_hz;
	snprintf(plan->name, sizeof(plan->name), "%s", p->model_name);
	plan->mode = p->mode;
	plan->batch = p->batch;
	plan->summary = p->summary;
	plan->num_layers = p->num_layers;
	for (uint32_t k = 0; k < p->num_layers; k++) {
		const struct wsep_region *r = &p->regions[k];

		unit_label(p, k, plan->label[k], sizeof(plan->label[k]));
		plan->layers[k].region = *r;
		plan->layers[k].pes = (uint64_t)r->w * r->h;
		plan->layers[k].est = p->estimates[k];
	}
	return plan;
}

static int write_wafer_map(const struct wsep_program *p, const char *dir)
{
	struct wsecc_plan *plan;
	char path[PATH_MAX], err[512];
	struct wse_out out;
	struct stat st;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/wafer.svg", dir);
	/* wsecc drew it when wsetrain compiled the model: the same picture. */
	if (!stat(path, &st))
		return 0;
	if (p->num_layers > WSECC_MAX_LAYERS)
		return 0;
	plan = plan_of(p);
	if (!plan)
		return train_fail("out of memory");
	ret = wse_out_open(&out, path, 0, err, sizeof(err));
	f = ret ? NULL : wse_out_stream(&out, err, sizeof(err));
	if (!ret && !f)
		wse_out_abandon(&out);
	if (!f) {
		free(plan);
		return train_fail("%s", err);
	}
	ret = wsecc_write_svg(f, plan);
	free(plan);
	if (ret) {
		wse_out_abandon(&out);
		return train_fail("%s: %s", path, strerror(-ret));
	}
	if (wse_out_commit(&out, err, sizeof(err)))
		return train_fail("%s", err);
	return 0;
}

int train_placement_record(const struct wsep_program *p, const char *dir)
{
	/* A program without an estimate (none compiled in) has nothing to show. */
	if (!p->estimates || !p->regions || !p->num_layers || !(p->summary.samples_per_s > 0) ||
	    !p->wafer.clock_hz)
		return 0;
	if (write_timing(p, dir))
		return -1;
	return write_wafer_map(p, dir);
}
