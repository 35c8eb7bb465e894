// SPDX-License-Identifier: GPL-2.0-only
/*
 * What wsetrain keeps of the program it trains (tools/wsetrain/placement.c),
 * from programs build/bin/wsecc compiles: timing.json with the modelled
 * step and each layer's (unit's) time, which add up as the timing model
 * says, and a wafer map drawn from the program's regions, for a layer
 * program and for a graph program given as a .wsep; a map wsecc drew is
 * left as it is. Runs from the repository root.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "../../tools/wsetrain/train.h"
#include "run_cmd.h"
#include "test_files.h"
#include "wse/wsep.h"

#define WSECC	"build/bin/wsecc"

FIXTURE(placement) {
	char dir[64], wsep[128], cmd[1024];
	char out[16384];
	struct wsep_program *p;
};

FIXTURE_SETUP(placement)
{
	ASSERT_EQ(0, access(WSECC, X_OK)) TH_LOG("%s missing: run make, from the repository root",
						 WSECC);
	strcpy(self->dir, "/tmp/wsetrain_placement_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->wsep, sizeof(self->wsep), "%s/model.wsep", self->dir);
	self->p = NULL;
}

FIXTURE_TEARDOWN(placement)
{
	if (self->p)
		wsep_program_free(self->p);
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* Compiles with wsecc's @args into model.wsep and reads it back. */
static int compile(struct __test_metadata *_metadata, FIXTURE_DATA(placement) *self,
		   const char *args)
{
	char err[256];

	snprintf(self->cmd, sizeof(self->cmd), WSECC " %s -o %s", args, self->wsep);
	if (run_cmd_all(self->cmd, self->out, sizeof(self->out))) {
		TH_LOG("%s:\n%s", self->cmd, self->out);
		return -1;
	}
	if (wsep_read_file(self->wsep, &self->p, err, sizeof(err))) {
		TH_LOG("%s", err);
		return -1;
	}
	return 0;
}

static double num(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : NAN;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

/*
 * timing.json against the program: the step of its batch at its rate,
 * each layer's time from its estimate; @sum_s: the layers' times summed.
 */
static void check_timing(struct __test_metadata *_metadata, const char *dir,
			 const struct wsep_program *p, double *sum_s)
{
	struct json_object *root, *layers;
	char path[256];

	snprintf(path, sizeof(path), "%s/timing.json", dir);
	root = json_object_from_file(path);
	ASSERT_NE(NULL, root) TH_LOG("%s does not read as JSON", path);
	EXPECT_STREQ(wsep_mode_name(p->mode), str(root, "mode"));
	EXPECT_STREQ(p->graph ? "graph" : "layers", str(root, "program"));
	EXPECT_EQ(p->batch, num(root, "batch"));
	EXPECT_LT(fabs(num(root, "step_s") - p->batch / p->summary.samples_per_s),
		  1e-9 * num(root, "step_s"));
	ASSERT_TRUE(json_object_object_get_ex(root, "layers", &layers));
	ASSERT_EQ(p->num_layers, json_object_array_length(layers));
	*sum_s = 0;
	for (uint32_t k = 0; k < p->num_layers; k++) {
		struct json_object *l = json_object_array_get_idx(layers, k);
		double cycles = p->estimates[k].stage_cycles *
				(p->mode == WSEP_MODE_PIPELINED ? p->batch : 1);

		EXPECT_EQ(p->regions[k].x, num(l, "x"));
		EXPECT_EQ(p->regions[k].w, num(l, "w"));
		EXPECT_LT(fabs(num(l, "step_s") - cycles / p->wafer.clock_hz), 1e-12);
		EXPECT_STREQ(wsep_limit_name(p->estimates[k].limit), str(l, "limit"));
		EXPECT_EQ(0, strncmp(str(l, "label"), p->graph ? "unit " : "dense ",
				     p->graph ? 5 : 6)) TH_LOG("%s", str(l, "label"));
		*sum_s += num(l, "step_s");
	}
	json_object_put(root);
}

/* A layer program, pipelined: no stage is longer than the step. */
TEST_F(placement, layer_program_timing_and_wafer_map)
{
	char path[256], *svg;
	double sum;

	ASSERT_EQ(0, compile(_metadata, self, "models/fc-mnist"));
	ASSERT_EQ(WSEP_MODE_PIPELINED, self->p->mode);
	ASSERT_EQ(0, train_placement_record(self->p, self->dir));
	check_timing(_metadata, self->dir, self->p, &sum);
	for (uint32_t k = 0; k < self->p->num_layers; k++)
		EXPECT_LE(self->p->estimates[k].stage_cycles * self->p->batch / self->p->wafer.clock_hz,
			  self->p->batch / self->p->summary.samples_per_s * 1.000001);
	snprintf(path, sizeof(path), "%s/wafer.svg", self->dir);
	svg = test_read_file(path, NULL);
	ASSERT_NE(NULL, svg);
	EXPECT_NE(NULL, strstr(svg, "<svg"));
	EXPECT_NE(NULL, strstr(svg, "id=\"layer0\""));
	EXPECT_NE(NULL, strstr(svg, "dense 784x"));
	free(svg);
}

/* A graph program, weight streaming: its units run in turn, so they sum to about the step. */
TEST_F(placement, graph_program_gets_a_wafer_map)
{
	char path[256], *svg;
	double sum, step;

	ASSERT_EQ(0, compile(_metadata, self,
			     "tests/corpus/onnx/gpt-tiny.onnx --batch 8 --wafer 64x64 --mode weight_streaming"));
	ASSERT_NE(NULL, self->p->graph);
	ASSERT_EQ(0, train_placement_record(self->p, self->dir));
	check_timing(_metadata, self->dir, self->p, &sum);
	step = self->p->batch / self->p->summary.samples_per_s;
	TH_LOG("gpt-tiny: %u units, %.3g s modelled per step, the units' sum %.3g s",
	       self->p->num_layers, step, sum);
	EXPECT_GT(sum, 0.5 * step);
	EXPECT_LT(sum, 1.5 * step);
	snprintf(path, sizeof(path), "%s/wafer.svg", self->dir);
	svg = test_read_file(path, NULL);
	ASSERT_NE(NULL, svg);
	EXPECT_NE(NULL, strstr(svg, "weight streaming"));
	EXPECT_NE(NULL, strstr(svg, "id=\"layer1\""));
	EXPECT_NE(NULL, strstr(svg, "unit 1:"));
	free(svg);
}

/* wsecc's own map (wsetrain compiled the model) is kept, not drawn again. */
TEST_F(placement, keeps_the_map_wsecc_drew)
{
	char path[256], *svg;

	ASSERT_EQ(0, compile(_metadata, self, "models/fc-mnist"));
	snprintf(path, sizeof(path), "%s/wafer.svg", self->dir);
	{
		FILE *f = fopen(path, "w");

		ASSERT_NE(NULL, f);
		fputs("wsecc's map\n", f);
		ASSERT_EQ(0, fclose(f));
	}
	ASSERT_EQ(0, train_placement_record(self->p, self->dir));
	svg = test_read_file(path, NULL);
	ASSERT_NE(NULL, svg);
	EXPECT_STREQ("wsecc's map\n", svg);
	free(svg);
}

TEST_HARNESS_MAIN
