// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-graphtrain: trains an ONNX model on the host with the engine's graph
 * executor (wse/engine_graph.h), as the firmware will once graphs go into
 * .wsep programs. Two kinds of data:
 *
 *   images: --images DIR (IDX files, e.g. /usr/share/datasets/fashion-mnist)
 *           for a model whose input is float [batch, ...] pixels in [0, 1]
 *           and whose output is [batch, classes] logits; test accuracy
 *           after each epoch.
 *   text:   --text FILE... (concatenated) for a model whose input is int64
 *           tokens [batch, context] and whose output is logits
 *           [batch, context, vocab]; characters map to ids as
 *           models/gpt_data.py says; the last 10% is the validation split.
 *           Each step takes --batch windows at offsets drawn from splitmix64
 *           (seed --seed), the next character of each position its label.
 *   masked LM: --text FILE... --mlm for a BERT-style model whose inputs are
 *           int64 tokens and a float padding mask [batch, context] and
 *           whose logits cover the characters, [MASK] and [PAD]: the same
 *           windows, corrupted as models/bert_mlm.py's mlm_sample() does
 *           (wse/textmlm.h); the loss counts the masked positions.
 *
 * The loss is the token-level softmax cross-entropy; the optimizer and the
 * learning-rate schedule have PyTorch's semantics. Prints one line per
 * --log-every steps and per evaluation; see --help.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wse/compiler_graph.h"
#include "wse/dataset.h"
#include "wse/engine.h"
#include "wse/engine_graph.h"
#include "wse/numparse.h"
#include "wse/usage.h"
#include "wse/textdata.h"
#include "wse/textmlm.h"

#define MAX_TEXT_FILES	8

static const char usage_text[] =
	"usage: wse-graphtrain MODEL.onnx (--images DIR | --text FILE...) [options]\n"
	"Train an ONNX model on the host with the engine's graph executor.\n"
	"\n"
	"  --images DIR        IDX image data (train and t10k splits)\n"
	"  --text FILE         a text corpus (repeat to concatenate several files)\n"
	"  --mlm               text: masked-LM batches for a model with a padding-mask\n"
	"                      input (models/bert_mlm.py); the validation loss is over\n"
	"                      the masked positions of every validation window\n"
	"  --batch N           samples (windows) per step (default 128; 16 for text)\n"
	"  --epochs N          images: passes over the training set (default 1)\n"
	"  --steps N           stop after N steps (text: required; images: optional)\n"
	"  --limit N           images: use only the first N training samples\n"
	"  --optimizer KIND    sgd, momentum, nesterov, adam (default), adamw\n"
	"  --lr X              learning rate (default 1e-3)\n"
	"  --momentum X        momentum (default 0.9)\n"
	"  --weight-decay X    L2 (sgd, momentum, adam) or decoupled (adamw) decay\n"
	"  --warmup N          linear warm-up steps, then cosine decay to --min-lr\n"
	"                      over --steps (default: constant learning rate)\n"
	"  --min-lr X          the cosine schedule's floor (default 0)\n"
	"  --seed N            batch order and dropout masks (default 1)\n"
	"  --eval-every N      text: validation loss every N steps (default 100), over\n"
	"                      every window of the validation split\n"
	"  --log-every N       print the training loss every N steps (default 50)\n"
	"  --threads N         OpenBLAS threads (default 1)\n"
	"  -h, --help          this help\n"
	"\n"
	"Exit status: 0 trained, 1 the model or data was refused, 2 usage error.\n";

struct opts {
	const char *model, *images;
	const char *text[MAX_TEXT_FILES];	/* wse/textdata.h: at most 16 */
	size_t n_text;
	long batch, epochs, steps, limit, warmup, eval_every, log_every, threads;
	double lr, momentum, weight_decay, min_lr;
	const char *optimizer;
	uint64_t seed;
	bool mlm;
};

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "wse-graphtrain: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nTry 'wse-graphtrain --help'.\n");
	return 2;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- the model ------------------------------------------------------------------- */

struct model {
	struct wsecc_graph *ir;
	struct engine_graph *g;
	int *ids;
	int input, mask, logits, labels;
	size_t in_rank, in_dims[ENGINE_MAX_RANK], out_rank, out_dims[ENGINE_MAX_RANK];
	size_t in_n, rows, classes;
	bool tokens;
};

static int load_model(const struct opts *o, enum engine_optim_kind kind, struct model *m)
{
	struct wsecc_onnx_options io = { .batch = o->batch };
	struct wsecc_error err;
	char msg[WSECC_MSG_MAX + WSECC_PATH_MAX + 16];

	memset(m, 0, sizeof(*m));
	if (wsecc_onnx_import(o->model, &io, &m->ir, &err) || wsecc_graph_check(m->ir, &err))
		goto refused;
	if (m->ir->n_inputs != (o->mlm ? 2U : 1U) || m->ir->n_outputs < 1) {
		fprintf(stderr, "%s: error: the model must have %s\n", o->model,
			o->mlm ? "two inputs (tokens and the padding mask)" :
				 "one input (pixels or tokens)");
		return -1;
	}
	m->ids = malloc(m->ir->n_tensors * sizeof(int));
	if (!m->ids || engine_graph_create(&m->g))
		return -1;
	if (wsecc_graph_to_engine(m->ir, m->g, m->ids, true, &m->labels, &err))
		goto refused;
	if (engine_graph_prepare(m->g, kind)) {
		fprintf(stderr, "%s: error: %s\n", o->model, engine_graph_error(m->g));
		return -1;
	}
	m->input = m->ids[m->ir->inputs[0]];
	m->mask = o->mlm ? m->ids[m->ir->inputs[1]] : -1;
	m->logits = m->ids[m->ir->outputs[0]];
	engine_graph_shape(m->g, m->input, &m->in_rank, m->in_dims);
	engine_graph_shape(m->g, m->logits, &m->out_rank, m->out_dims);
	m->tokens = m->ir->tensors[m->ir->inputs[0]].dtype == WSECC_DT_I64;
	m->in_n = 1;
	for (size_t i = 1; i < m->in_rank; i++)
		m->in_n *= m->in_dims[i];
	m->classes = m->out_dims[m->out_rank - 1];
	m->rows = 1;
	for (size_t i = 0; i + 1 < m->out_rank; i++)
		m->rows *= m->out_dims[i];
	return 0;
refused:
	wsecc_error_format(&err, msg, sizeof(msg));
	fprintf(stderr, "%s\n", msg);
	return -1;
}

static void free_model(struct model *m)
{
	engine_graph_destroy(m->g);
	wsecc_graph_free(m->ir);
	free(m->ids);
}

static int optimizer(const struct opts *o, struct engine_optim *opt)
{
	const char *k = o->optimizer;

	if (!strcmp(k, "sgd"))
		engine_optim_defaults(opt, ENGINE_SGD, o->lr);
	else if (!strcmp(k, "momentum") || !strcmp(k, "nesterov"))
		engine_optim_defaults(opt, ENGINE_MOMENTUM, o->lr);
	else if (!strcmp(k, "adam"))
		engine_optim_defaults(opt, ENGINE_ADAM, o->lr);
	else if (!strcmp(k, "adamw"))
		engine_optim_defaults(opt, ENGINE_ADAMW, o->lr);
	else
		return -1;
	opt->momentum = opt->kind == ENGINE_MOMENTUM ? o->momentum : 0.0;
	opt->nesterov = !strcmp(k, "nesterov");
	if (o->weight_decay >= 0)
		opt->weight_decay = o->weight_decay;
	return engine_optim_check(opt) ? -1 : 0;
}

/* --- images ------------------------------------------------------------------------ */

static void load_images(struct model *m, const struct wse_dataset *ds, const uint32_t *order,
			size_t first, size_t n, float *x, int64_t *labels)
{
	for (size_t i = 0; i < m->in_dims[0]; i++) {
		/* A short last batch repeats its first samples; they are not counted. */
		uint32_t s = order ? order[first + i % n] : (uint32_t)(first + i % n);

		engine_pixels_to_f32(wse_dataset_image(ds, s), m->in_n, x + i * m->in_n);
		labels[i] = ds->labels[s];
	}
}

/* Test loss and accuracy over the whole split, @n real rows per batch. */
static int evaluate_images(struct model *m, const struct wse_dataset *ds, float *x,
			   int64_t *labels, double *loss, double *acc)
{
	const size_t b = m->in_dims[0];
	double total = 0.0;
	size_t hits = 0;

	for (size_t at = 0; at < ds->count; at += b) {
		size_t n = ds->count - at < b ? ds->count - at : b, correct;
		float l;
		int err;

		load_images(m, ds, NULL, at, n, x, labels);
		err = engine_graph_set_input(m->g, m->input, x) ?: engine_graph_forward(m->g, false, 0);
		if (err)
			return err;
		err = engine_xent_tokens_forward(engine_graph_data(m->g, m->logits), labels, n,
						 m->classes, &l, &correct);
		if (err)
			return err;
		total += (double)l * n;
		hits += correct;
	}
	*loss = total / ds->count;
	*acc = (double)hits / ds->count;
	return 0;
}

static int train_images(const struct opts *o, struct model *m, const struct engine_optim *opt,
			const struct engine_lr_schedule *sched)
{
	struct wse_dataset train = { 0 }, test = { 0 };
	char msg[512];
	const size_t b = m->in_dims[0];
	float *x = malloc(b * m->in_n * sizeof(float));
	int64_t *labels = malloc(b * sizeof(int64_t));
	uint32_t *order = NULL;
	struct engine_rng rng;
	uint64_t t = 0;
	int rc = 1;

	if (m->tokens || m->out_rank != 2 || m->out_dims[0] != b) {
		fprintf(stderr, "%s: error: image training needs a float input [batch, ...] and logits [batch, classes]\n",
			o->model);
		goto out;
	}
	if (wse_dataset_load_dir(o->images, "train", &train, msg, sizeof(msg)) ||
	    wse_dataset_load_dir(o->images, "t10k", &test, msg, sizeof(msg))) {
		fprintf(stderr, "wse-graphtrain: %s\n", msg);
		goto out;
	}
	if (train.item != m->in_n || train.classes > m->classes) {
		fprintf(stderr, "%s: error: the model takes %zu values per sample and %zu classes; the data has %u and %u\n",
			o->model, m->in_n, m->classes, train.item, train.classes);
		goto out;
	}
	size_t count = o->limit > 0 && (size_t)o->limit < train.count ? (size_t)o->limit : train.count;

	order = malloc(count * sizeof(*order));
	if (!x || !labels || !order)
		goto out;
	engine_rng_seed(&rng, o->seed);
	printf("model: %s, %zu parameters, batch %zu, %s lr %g, %zu training samples, %u test samples\n",
	       o->model, engine_graph_param_floats(m->g), b, o->optimizer, o->lr, count, test.count);
	for (long e = 1; e <= o->epochs; e++) {
		double t0 = now(), sum = 0.0, tl, ta;
		size_t steps = 0;

		for (size_t i = 0; i < count; i++)
			order[i] = (uint32_t)i;
		for (size_t i = count; i > 1; i--) {	/* Fisher-Yates */
			size_t j = engine_rng_next(&rng) % i;
			uint32_t tmp = order[i - 1];

			order[i - 1] = order[j];
			order[j] = tmp;
		}
		for (size_t at = 0; at + b <= count; at += b) {
			struct engine_loss_result res;
			int err;

			if (o->steps > 0 && t >= (uint64_t)o->steps)
				break;
			t++;
			load_images(m, &train, order, at, b, x, labels);
			err = engine_graph_set_input(m->g, m->input, x) ?:
			      engine_graph_set_input(m->g, m->labels, labels) ?:
			      engine_graph_train_step(m->g, opt, t, engine_lr_at(sched, o->lr, t),
						      o->seed + t, &res);
			if (err) {
				fprintf(stderr, "step %llu: %s (%s)\n", (unsigned long long)t,
					engine_strerror(err), engine_graph_error(m->g));
				goto out;
			}
			sum += res.loss;
			steps++;
			if (o->log_every > 0 && t % (uint64_t)o->log_every == 0)
				printf("step %llu loss %.4f\n", (unsigned long long)t, res.loss);
		}
		double t1 = now();

		if (evaluate_images(m, &test, x, labels, &tl, &ta))
			goto out;
		printf("epoch %ld: train loss %.4f over %zu steps in %.1f s (%.0f samples/s); test loss %.4f, accuracy %.4f\n",
		       e, steps ? sum / steps : 0.0, steps, t1 - t0, steps * b / (t1 - t0), tl, ta);
		fflush(stdout);
		if (o->steps > 0 && t >= (uint64_t)o->steps)
			break;
	}
	rc = 0;
out:
	free(x);
	free(labels);
	free(order);
	wse_dataset_free(&train);
	wse_dataset_free(&test);
	return rc;
}

/* --- text ----------------------------------------------------------------------------- */

/* Windows at @offsets: tokens and their next characters, as int64 for the engine. */
static void windows(const struct wse_text *t, const uint64_t *offsets, size_t b, size_t ctx,
		    int64_t *x, int64_t *y, int32_t *tmp)
{
	for (size_t i = 0; i < b; i++) {
		wse_text_window(t, offsets[i], (uint32_t)ctx, tmp, tmp + ctx);
		for (size_t j = 0; j < ctx; j++) {
			x[i * ctx + j] = tmp[j];
			y[i * ctx + j] = tmp[ctx + j];
		}
	}
}

/*
 * The validation loss: every window of the validation split once, in
 * batches (a short last batch repeats windows it does not count), each
 * window's mean over its tokens, averaged.
 */
static int evaluate_text(struct model *m, const struct wse_text *t, int64_t *x, int64_t *y,
			 int32_t *tmp, uint64_t *offsets, double *loss)
{
	const size_t b = m->in_dims[0], ctx = m->in_dims[1];
	uint64_t n = wse_text_val_windows(t, (uint32_t)ctx);
	double total = 0.0;

	for (uint64_t at = 0; at < n; at += b) {
		size_t real = n - at < b ? (size_t)(n - at) : b;
		const float *z;
		int err;

		for (size_t i = 0; i < b; i++)
			offsets[i] = wse_text_val_offset(t, at + i % real, (uint32_t)ctx);
		windows(t, offsets, b, ctx, x, y, tmp);
		err = engine_graph_set_input(m->g, m->input, x) ?:
		      engine_graph_forward(m->g, false, 0);
		if (err)
			return err;
		z = engine_graph_data(m->g, m->logits);
		for (size_t i = 0; i < real; i++) {
			float l;
			size_t correct;

			err = engine_xent_tokens_forward(z + i * ctx * m->classes, y + i * ctx, ctx,
							 m->classes, &l, &correct);
			if (err)
				return err;
			total += l;
		}
	}
	*loss = total / (double)n;
	return 0;
}

static int train_text(const struct opts *o, struct model *m, const struct engine_optim *opt,
		      const struct engine_lr_schedule *sched)
{
	const size_t b = m->in_dims[0], ctx = m->in_rank == 2 ? m->in_dims[1] : 0;
	struct wse_text t;
	int64_t *x = NULL, *y = NULL;
	int32_t *tmp = NULL;
	uint64_t *offsets = NULL;
	double t0 = now(), sum = 0.0, vl;
	char msg[512];
	long since = 0;
	int rc = 1;

	if (wse_text_load(o->text, o->n_text, &t, msg, sizeof(msg))) {
		fprintf(stderr, "wse-graphtrain: %s\n", msg);
		return 1;
	}
	if (!m->tokens || m->in_rank != 2 || m->out_rank != 3 || m->classes != WSE_TEXT_VOCAB) {
		fprintf(stderr, "%s: error: text training needs int64 tokens [batch, context] in and logits [batch, context, %d] out\n",
			o->model, WSE_TEXT_VOCAB);
		goto out;
	}
	if (wse_text_check(&t, (uint32_t)ctx, msg, sizeof(msg))) {
		fprintf(stderr, "wse-graphtrain: %s\n", msg);
		goto out;
	}
	x = malloc(b * ctx * sizeof(*x));
	y = malloc(b * ctx * sizeof(*y));
	tmp = malloc(2 * ctx * sizeof(*tmp));
	offsets = malloc(b * sizeof(*offsets));
	if (!x || !y || !tmp || !offsets)
		goto out;
	printf("model: %s, %zu parameters, batch %zu x context %zu, %s lr %g, %llu characters (%llu for validation)\n",
	       o->model, engine_graph_param_floats(m->g), b, ctx, o->optimizer, o->lr,
	       (unsigned long long)t.n, (unsigned long long)(t.n - t.split));
	if (evaluate_text(m, &t, x, y, tmp, offsets, &vl))
		goto out;
	printf("step 0 val_loss %.4f\n", vl);
	for (uint64_t s = 1; s <= (uint64_t)o->steps; s++) {
		struct engine_loss_result res;
		double lr = engine_lr_at(sched, o->lr, s);
		int err;

		/* The batch order of models/gpt_data.py. */
		for (size_t i = 0; i < b; i++)
			offsets[i] = wse_text_train_offset(&t, o->seed, (s - 1) * b + i, (uint32_t)ctx);
		windows(&t, offsets, b, ctx, x, y, tmp);
		err = engine_graph_set_input(m->g, m->input, x) ?:
		      engine_graph_set_input(m->g, m->labels, y) ?:
		      engine_graph_train_step(m->g, opt, s, lr, o->seed + s, &res);
		if (err) {
			fprintf(stderr, "step %llu: %s (%s)\n", (unsigned long long)s, engine_strerror(err),
				engine_graph_error(m->g));
			goto out;
		}
		sum += res.loss;
		since++;
		if (o->log_every > 0 && s % (uint64_t)o->log_every == 0) {
			printf("step %llu loss %.4f lr %.3g (%.2f s/step)\n", (unsigned long long)s,
			       sum / since, lr, (now() - t0) / s);
			sum = 0.0;
			since = 0;
		}
		if ((o->eval_every > 0 && s % (uint64_t)o->eval_every == 0) || s == (uint64_t)o->steps) {
			if (evaluate_text(m, &t, x, y, tmp, offsets, &vl))
				goto out;
			printf("step %llu val_loss %.4f\n", (unsigned long long)s, vl);
		}
		fflush(stdout);
	}
	printf("trained %ld steps in %.1f s\n", o->steps, now() - t0);
	rc = 0;
out:
	wse_text_free(&t);
	free(x);
	free(y);
	free(tmp);
	free(offsets);
	return rc;
}

/* --- masked LM ----------------------------------------------------------------------- */

/* Windows at @offsets corrupted from @state: tokens, padding mask, labels. */
static void mlm_batch(const struct wse_text *t, const uint64_t *offsets, size_t b, size_t ctx,
		      uint64_t *state, int64_t *x, float *mask, int64_t *y)
{
	/* The library's ids and labels are the wire's i32; the graph's are i64. */
	int32_t *xi = (int32_t *)x, *yi = (int32_t *)y;

	for (size_t i = 0; i < b; i++)
		wse_text_mlm_window(t, offsets[i], (uint32_t)ctx, state, xi + i * ctx,
				    mask + i * ctx, yi + i * ctx);
	/* Widened in place from the end, where no i32 not yet read is overwritten. */
	for (size_t k = b * ctx; k-- > 0;) {
		x[k] = xi[k];
		y[k] = yi[k];
	}
}

/*
 * The masked-LM validation loss: every validation window once, corrupted
 * from WSE_MLM_VAL_STREAM (the same each time), the loss summed over every
 * predicted position and divided by their number.
 */
static int evaluate_mlm(struct model *m, const struct wse_text *t, int64_t *x, float *mask,
			int64_t *y, uint64_t *offsets, double *loss)
{
	const size_t b = m->in_dims[0], ctx = m->in_dims[1];
	uint64_t n = wse_text_val_windows(t, (uint32_t)ctx), state = WSE_MLM_VAL_STREAM;
	double total = 0.0;
	size_t counted = 0;

	for (uint64_t at = 0; at < n; at += b) {
		size_t real = n - at < b ? (size_t)(n - at) : b;
		const float *z;
		int err;

		for (size_t i = 0; i < b; i++)
			offsets[i] = wse_text_val_offset(t, at + i % real, (uint32_t)ctx);
		/* Only the real windows draw: the repeats are not counted. */
		mlm_batch(t, offsets, real, ctx, &state, x, mask, y);
		for (size_t i = real; i < b; i++) {
			memcpy(x + i * ctx, x, ctx * sizeof(*x));
			memcpy(mask + i * ctx, mask, ctx * sizeof(*mask));
		}
		err = engine_graph_set_input(m->g, m->input, x) ?:
		      engine_graph_set_input(m->g, m->mask, mask) ?:
		      engine_graph_forward(m->g, false, 0);
		if (err)
			return err;
		z = engine_graph_data(m->g, m->logits);
		for (size_t i = 0; i < real; i++) {
			size_t k = engine_xent_tokens_counted(y + i * ctx, ctx), correct;
			float l;

			err = engine_xent_tokens_forward(z + i * ctx * m->classes, y + i * ctx, ctx,
							 m->classes, &l, &correct);
			if (err)
				return err;
			total += (double)l * (double)k;
			counted += k;
		}
	}
	*loss = counted ? total / (double)counted : 0.0;
	return 0;
}

static int train_mlm(const struct opts *o, struct model *m, const struct engine_optim *opt,
		     const struct engine_lr_schedule *sched)
{
	const size_t b = m->in_dims[0], ctx = m->in_rank == 2 ? m->in_dims[1] : 0;
	uint64_t state = WSE_MLM_TRAIN_STREAM(o->seed), *offsets = NULL;
	struct wse_text t;
	int64_t *x = NULL, *y = NULL;
	float *mask = NULL;
	double t0 = now(), sum = 0.0, vl;
	char msg[512];
	long since = 0;
	int rc = 1;

	if (wse_text_load(o->text, o->n_text, &t, msg, sizeof(msg))) {
		fprintf(stderr, "wse-graphtrain: %s\n", msg);
		return 1;
	}
	if (!m->tokens || m->in_rank != 2 || m->out_rank != 3 || m->classes != WSE_MLM_VOCAB) {
		fprintf(stderr, "%s: error: masked-LM training needs int64 tokens and a float mask [batch, context] in and logits [batch, context, %d] out\n",
			o->model, WSE_MLM_VOCAB);
		goto out;
	}
	if (wse_text_check(&t, (uint32_t)ctx, msg, sizeof(msg))) {
		fprintf(stderr, "wse-graphtrain: %s\n", msg);
		goto out;
	}
	x = malloc(b * ctx * sizeof(*x));
	y = malloc(b * ctx * sizeof(*y));
	mask = malloc(b * ctx * sizeof(*mask));
	offsets = malloc(b * sizeof(*offsets));
	if (!x || !y || !mask || !offsets)
		goto out;
	printf("model: %s, %zu parameters, masked LM, batch %zu x context %zu, %s lr %g, %llu characters (%llu for validation)\n",
	       o->model, engine_graph_param_floats(m->g), b, ctx, o->optimizer, o->lr,
	       (unsigned long long)t.n, (unsigned long long)(t.n - t.split));
	if (evaluate_mlm(m, &t, x, mask, y, offsets, &vl))
		goto out;
	printf("step 0 val_loss %.4f\n", vl);
	for (uint64_t s = 1; s <= (uint64_t)o->steps; s++) {
		struct engine_loss_result res;
		double lr = engine_lr_at(sched, o->lr, s);
		int err;

		for (size_t i = 0; i < b; i++)
			offsets[i] = wse_text_train_offset(&t, o->seed, (s - 1) * b + i, (uint32_t)ctx);
		mlm_batch(&t, offsets, b, ctx, &state, x, mask, y);
		err = engine_graph_set_input(m->g, m->input, x) ?:
		      engine_graph_set_input(m->g, m->mask, mask) ?:
		      engine_graph_set_input(m->g, m->labels, y) ?:
		      engine_graph_train_step(m->g, opt, s, lr, o->seed + s, &res);
		if (err) {
			fprintf(stderr, "step %llu: %s (%s)\n", (unsigned long long)s, engine_strerror(err),
				engine_graph_error(m->g));
			goto out;
		}
		sum += res.loss;
		since++;
		if (o->log_every > 0 && s % (uint64_t)o->log_every == 0) {
			printf("step %llu loss %.4f lr %.3g (%.2f s/step)\n", (unsigned long long)s,
			       sum / since, lr, (now() - t0) / s);
			sum = 0.0;
			since = 0;
		}
		if ((o->eval_every > 0 && s % (uint64_t)o->eval_every == 0) || s == (uint64_t)o->steps) {
			if (evaluate_mlm(m, &t, x, mask, y, offsets, &vl))
				goto out;
			printf("step %llu val_loss %.4f\n", (unsigned long long)s, vl);
		}
		fflush(stdout);
	}
	printf("trained %ld steps in %.1f s\n", o->steps, now() - t0);
	rc = 0;
out:
	wse_text_free(&t);
	free(x);
	free(y);
	free(mask);
	free(offsets);
	return rc;
}

int main(int argc, char **argv)
{
	enum { O_IMAGES = 256, O_TEXT, O_BATCH, O_EPOCHS, O_STEPS, O_LIMIT, O_OPT, O_LR, O_MOM,
	       O_WD, O_WARMUP, O_MINLR, O_SEED, O_EVAL, O_LOG, O_THREADS, O_MLM };
	static const struct option longopts[] = {
		{ "images", required_argument, NULL, O_IMAGES },
		{ "text", required_argument, NULL, O_TEXT },
		{ "mlm", no_argument, NULL, O_MLM },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "epochs", required_argument, NULL, O_EPOCHS },
		{ "steps", required_argument, NULL, O_STEPS },
		{ "limit", required_argument, NULL, O_LIMIT },
		{ "optimizer", required_argument, NULL, O_OPT },
		{ "lr", required_argument, NULL, O_LR },
		{ "momentum", required_argument, NULL, O_MOM },
		{ "weight-decay", required_argument, NULL, O_WD },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "min-lr", required_argument, NULL, O_MINLR },
		{ "seed", required_argument, NULL, O_SEED },
		{ "eval-every", required_argument, NULL, O_EVAL },
		{ "log-every", required_argument, NULL, O_LOG },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .batch = 0, .epochs = 1, .lr = 1e-3, .momentum = 0.9, .weight_decay = -1,
			  .optimizer = "adam", .seed = 1, .eval_every = 100,
			  .log_every = 50, .threads = 1 };
	struct engine_lr_schedule sched = { .kind = ENGINE_LR_CONSTANT };
	struct engine_optim opt;
	struct model m;
	char opt_name[32];
	uint64_t u;
	long v;
	int c, li, rc;

	engine_blas_reexec("/proc/self/exe", argv);
	while ((c = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
		double d;

		if (c >= O_IMAGES)
			snprintf(opt_name, sizeof(opt_name), "--%s", longopts[li].name);

		switch (c) {
		case O_IMAGES: o.images = optarg; break;
		case O_TEXT:
			if (o.n_text == MAX_TEXT_FILES)
				return usage_error("at most 8 --text files%s", "");
			o.text[o.n_text++] = optarg;
			break;
		case O_BATCH: case O_EPOCHS: case O_STEPS: case O_LIMIT: case O_WARMUP:
		case O_SEED: case O_EVAL: case O_LOG: case O_THREADS:
			if (wse_opt_u64("wse-graphtrain", opt_name, optarg,
					c == O_BATCH || c == O_THREADS ? 1 : 0, LONG_MAX,
					WSE_NUM_PLAIN, &u))
				return 2;
			v = (long)u;
			if (c == O_BATCH) o.batch = v;
			else if (c == O_EPOCHS) o.epochs = v;
			else if (c == O_STEPS) o.steps = v;
			else if (c == O_LIMIT) o.limit = v;
			else if (c == O_WARMUP) o.warmup = v;
			else if (c == O_SEED) o.seed = (uint64_t)v;
			else if (c == O_EVAL) o.eval_every = v;
			else if (c == O_LOG) o.log_every = v;
			else o.threads = v;
			break;
		case O_LR: case O_MOM: case O_WD: case O_MINLR:
			if (wse_opt_double("wse-graphtrain", opt_name, optarg, 0, HUGE_VAL, &d))
				return 2;
			if (c == O_LR) o.lr = d;
			else if (c == O_MOM) o.momentum = d;
			else if (c == O_WD) o.weight_decay = d;
			else o.min_lr = d;
			break;
		case O_OPT: o.optimizer = optarg; break;
		case O_MLM: o.mlm = true; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: return usage_error("%s", "bad option");
		}
	}
	if (optind != argc - 1)
		return usage_error("%s", "expected one MODEL.onnx");
	o.model = argv[optind];
	if (!!o.images == !!o.n_text)
		return usage_error("%s", "give --images DIR or --text FILE");
	if (o.mlm && !o.n_text)
		return usage_error("%s", "--mlm needs --text FILE");
	if (o.n_text && o.steps <= 0)
		return usage_error("%s", "text training needs --steps N");
	if (!o.batch)
		o.batch = o.n_text ? 16 : 128;
	if (optimizer(&o, &opt))
		return usage_error("--optimizer '%s' (or its settings) is not valid: use sgd, momentum, nesterov, adam or adamw",
				   o.optimizer);
	if (o.warmup > 0) {
		sched = (struct engine_lr_schedule){ .kind = ENGINE_LR_WARMUP_COSINE,
						     .warmup = (uint64_t)o.warmup,
						     .total = (uint64_t)o.steps, .min_lr = o.min_lr };
		if (engine_lr_check(&sched))
			return usage_error("%s", "--warmup needs --steps larger than it");
	}
	engine_set_threads((int)o.threads);
	if (load_model(&o, opt.kind, &m)) {
		free_model(&m);
		return 1;
	}
	rc = o.images ? train_images(&o, &m, &opt, &sched) :
	     o.mlm ? train_mlm(&o, &m, &opt, &sched) : train_text(&o, &m, &opt, &sched);
	free_model(&m);
	return rc;
}
