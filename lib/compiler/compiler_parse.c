// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The model language (Documentation/model-format.rst): one statement per
 * line, words separated by blanks, '#' starts a comment. Every error names
 * file:line:col and says what was expected there.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler_internal.h"

#define MAX_WORDS 16
#define MAX_MODEL_TEXT (1 << 20)

struct word {
	const char *s;
	size_t len;
	unsigned col;
};

struct parser {
	const char *file;
	unsigned line;
	struct word w[MAX_WORDS];
	unsigned n;
	struct wsecc_model *m;
	struct wsecc_error *err;
	unsigned seen_input, seen_loss, seen_opt, seen_batch, seen_seed, seen_model, seen_wafer;
};

static int word_is(const struct word *w, const char *s)
{
	return strlen(s) == w->len && memcmp(w->s, s, w->len) == 0;
}

/* The word as a C string (truncated to 63 bytes) for messages; one at a
 * time: the buffer is reused.
 */
static const char *word_str(const struct word *w)
{
	static char buf[64];
	size_t n = w->len < sizeof(buf) - 1 ? w->len : sizeof(buf) - 1;

	memcpy(buf, w->s, n);
	buf[n] = 0;
	return buf;
}

#define FAIL_AT(p, wd, ...) wsecc_fail((p)->err, (p)->file, (p)->line, (wd)->col, __VA_ARGS__)

/* Column just past the last word, for "expected X" at the end of a line. */
static unsigned end_col(const struct parser *p)
{
	const struct word *last = &p->w[p->n - 1];

	return last->col + (unsigned)last->len;
}

static int need_words(struct parser *p, unsigned n, const char *expected)
{
	if (p->n < n)
		return wsecc_fail(p->err, p->file, p->line, end_col(p), "expected %s", expected);
	if (p->n > n)
		return FAIL_AT(p, &p->w[n], "unexpected '%s': expected the end of the line after %.*s",
			       word_str(&p->w[n]), (int)p->w[0].len, p->w[0].s);
	return 0;
}

static int get_uint(struct parser *p, const struct word *wd, uint64_t lo, uint64_t hi,
		    const char *what, uint64_t *out)
{
	char buf[32];
	char *end;
	unsigned long long v;

	if (wd->len >= sizeof(buf) || !isdigit((unsigned char)wd->s[0]))
		return FAIL_AT(p, wd, "expected %s (an integer %llu..%llu), got '%s'", what,
			       (unsigned long long)lo, (unsigned long long)hi, word_str(wd));
	memcpy(buf, wd->s, wd->len);
	buf[wd->len] = 0;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (*end || errno)
		return FAIL_AT(p, wd, "expected %s (an integer %llu..%llu), got '%s'", what,
			       (unsigned long long)lo, (unsigned long long)hi, buf);
	if (v < lo || v > hi)
		return FAIL_AT(p, wd, "%s %llu is out of range: expected %llu..%llu", what, v,
			       (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

static int get_real(struct parser *p, const struct word *wd, size_t skip, const char *what,
		    double *out)
{
	char buf[64];
	char *end;
	size_t n = wd->len - skip;

	if (n == 0 || n >= sizeof(buf))
		return wsecc_fail(p->err, p->file, p->line, wd->col + (unsigned)skip,
				  "expected a number for %s", what);
	memcpy(buf, wd->s + skip, n);
	buf[n] = 0;
	errno = 0;
	*out = strtod(buf, &end);
	if (*end || errno || !isfinite(*out))
		return wsecc_fail(p->err, p->file, p->line, wd->col + (unsigned)skip,
				  "expected a number for %s, got '%s'", what, buf);
	return 0;
}

static int once(struct parser *p, unsigned *seen, const char *what)
{
	if (*seen)
		return FAIL_AT(p, &p->w[0], "second '%s' statement: the first is on line %u", what,
			       *seen);
	*seen = p->line;
	return 0;
}

static int parse_model(struct parser *p)
{
	const struct word *w = &p->w[1];

	if (once(p, &p->seen_model, "model") || need_words(p, 2, "a model name after 'model'"))
		return -EINVAL;
	if (w->len >= WSEP_NAME_MAX)
		return FAIL_AT(p, w, "model name is %zu characters: at most %u", w->len,
			       WSEP_NAME_MAX - 1);
	for (size_t i = 0; i < w->len; i++)
		if (!isalnum((unsigned char)w->s[i]) && !strchr("_.-", w->s[i]))
			return wsecc_fail(p->err, p->file, p->line, w->col + (unsigned)i,
					  "model name may hold letters, digits, '_', '.', '-' only");
	memcpy(p->m->name, w->s, w->len);
	p->m->name[w->len] = 0;
	return 0;
}

static int parse_input(struct parser *p)
{
	uint64_t dim;

	if (once(p, &p->seen_input, "input") ||
	    need_words(p, 3, "'input DIM TYPE', e.g. 'input 784 u8'") ||
	    get_uint(p, &p->w[1], 1, WSEP_MAX_DIM, "an input size", &dim))
		return -EINVAL;
	p->m->input_dim = (uint32_t)dim;
	p->m->input_pos = (struct wsecc_pos){ p->line, p->w[0].col };
	if (word_is(&p->w[2], "u8")) {
		p->m->input_type = WSEP_ELEM_U8;
		p->m->input_scale = 1.0f / 255.0f;
	} else if (word_is(&p->w[2], "f32")) {
		p->m->input_type = WSEP_ELEM_F32;
		p->m->input_scale = 1.0f;
	} else {
		return FAIL_AT(p, &p->w[2], "unknown input type '%s': expected u8 or f32",
			       word_str(&p->w[2]));
	}
	return 0;
}

static const struct {
	const char *name;
	enum wsecc_act act;
} activations[] = {
	{ "none", WSECC_ACT_NONE }, { "relu", WSECC_ACT_RELU }, { "tanh", WSECC_ACT_TANH },
	{ "sigmoid", WSECC_ACT_SIGMOID }, { "gelu", WSECC_ACT_GELU },
};

static int parse_dense(struct parser *p)
{
	struct wsecc_layer *l;
	uint64_t in, out;
	size_t i;

	if (p->m->num_layers == WSECC_MAX_LAYERS)
		return FAIL_AT(p, &p->w[0], "too many layers: at most %u", WSECC_MAX_LAYERS);
	l = &p->m->layers[p->m->num_layers];
	if (need_words(p, 4, "'dense IN OUT ACTIVATION', e.g. 'dense 784 256 relu'") ||
	    get_uint(p, &p->w[1], 1, WSEP_MAX_DIM, "an input size", &in) ||
	    get_uint(p, &p->w[2], 1, WSEP_MAX_DIM, "an output size", &out))
		return -EINVAL;
	for (i = 0; i < sizeof(activations) / sizeof(activations[0]); i++)
		if (word_is(&p->w[3], activations[i].name))
			break;
	if (i == sizeof(activations) / sizeof(activations[0]))
		return FAIL_AT(p, &p->w[3],
			       "unknown activation '%s': expected relu or none (also known: tanh, sigmoid, gelu)",
			       word_str(&p->w[3]));
	l->in = (uint32_t)in;
	l->out = (uint32_t)out;
	l->act = activations[i].act;
	l->pos = (struct wsecc_pos){ p->line, p->w[0].col };
	l->in_pos = (struct wsecc_pos){ p->line, p->w[1].col };
	l->act_pos = (struct wsecc_pos){ p->line, p->w[3].col };
	p->m->num_layers++;
	return 0;
}

static int parse_loss(struct parser *p)
{
	if (once(p, &p->seen_loss, "loss") ||
	    need_words(p, 2, "a loss after 'loss': softmax_xent"))
		return -EINVAL;
	p->m->loss_pos = (struct wsecc_pos){ p->line, p->w[1].col };
	if (word_is(&p->w[1], "softmax_xent"))
		p->m->loss = WSECC_LOSS_SOFTMAX_XENT;
	else if (word_is(&p->w[1], "mse"))
		p->m->loss = WSECC_LOSS_MSE;
	else
		return FAIL_AT(p, &p->w[1], "unknown loss '%s': expected softmax_xent",
			       word_str(&p->w[1]));
	return 0;
}

struct opt_key {
	const char *name;
	size_t offset;
	double lo, hi;		/* allowed: lo < v < hi, or lo <= v if lo_incl */
	int lo_incl;
};

#define OPT(field) offsetof(struct wsep_optimizer, field)

static const struct opt_key keys_sgd[] = {
	{ "lr", OPT(lr), 0, 10, 0 }, { "weight_decay", OPT(weight_decay), 0, 1, 1 }, { NULL },
};
static const struct opt_key keys_momentum[] = {
	{ "lr", OPT(lr), 0, 10, 0 }, { "momentum", OPT(momentum), 0, 1, 1 },
	{ "weight_decay", OPT(weight_decay), 0, 1, 1 }, { NULL },
};
static const struct opt_key keys_adam[] = {
	{ "lr", OPT(lr), 0, 10, 0 }, { "beta1", OPT(beta1), 0, 1, 1 },
	{ "beta2", OPT(beta2), 0, 1, 1 }, { "eps", OPT(eps), 0, 1, 0 },
	{ "weight_decay", OPT(weight_decay), 0, 1, 1 }, { NULL },
};

static void key_list(const struct opt_key *keys, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (const struct opt_key *k = keys; k->name && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", k->name);
}

static int parse_optimizer(struct parser *p)
{
	struct wsep_optimizer *o = &p->m->opt;
	const struct opt_key *keys;
	unsigned have_lr = 0, have_momentum = 0;
	char list[128];

	if (once(p, &p->seen_opt, "optimizer"))
		return -EINVAL;
	if (p->n < 2)
		return wsecc_fail(p->err, p->file, p->line, end_col(p),
				  "expected an optimizer after 'optimizer': sgd, momentum or adam");
	memset(o, 0, sizeof(*o));
	p->m->opt_pos = (struct wsecc_pos){ p->line, p->w[1].col };
	if (word_is(&p->w[1], "sgd")) {
		o->kind = WSEP_OPT_SGD;
		keys = keys_sgd;
	} else if (word_is(&p->w[1], "momentum")) {
		o->kind = WSEP_OPT_MOMENTUM;
		keys = keys_momentum;
	} else if (word_is(&p->w[1], "adam")) {
		o->kind = WSEP_OPT_ADAM;
		keys = keys_adam;
		o->beta1 = 0.9;
		o->beta2 = 0.999;
		o->eps = 1e-8;
	} else {
		return FAIL_AT(p, &p->w[1], "unknown optimizer '%s': expected sgd, momentum or adam",
			       word_str(&p->w[1]));
	}
	key_list(keys, list, sizeof(list));
	for (unsigned i = 2; i < p->n; i++) {
		const struct word *w = &p->w[i];
		const char *eq = memchr(w->s, '=', w->len);
		const struct opt_key *k;
		size_t klen = eq ? (size_t)(eq - w->s) : w->len;
		double v = 0;

		for (k = keys; k->name; k++)
			if (strlen(k->name) == klen && memcmp(k->name, w->s, klen) == 0)
				break;
		if (!k->name)
			return FAIL_AT(p, w, "unknown %s parameter '%.*s': expected %s",
				       word_str(&p->w[1]), (int)klen, w->s, list);
		if (!eq)
			return FAIL_AT(p, w, "expected '%s=VALUE'", k->name);
		if (get_real(p, w, klen + 1, k->name, &v))
			return -EINVAL;
		if (!(k->lo_incl ? v >= k->lo : v > k->lo) || !(v < k->hi))
			return wsecc_fail(p->err, p->file, p->line, w->col + (unsigned)klen + 1,
					  "%s %g is out of range: expected %s%g and < %g", k->name,
					  v, k->lo_incl ? ">= " : "> ", k->lo, k->hi);
		*(double *)((char *)o + k->offset) = v;
		have_lr |= strcmp(k->name, "lr") == 0;
		have_momentum |= strcmp(k->name, "momentum") == 0;
	}
	if (!have_lr)
		return wsecc_fail(p->err, p->file, p->line, end_col(p),
				  "expected 'lr=VALUE': the learning rate has no default");
	if (o->kind == WSEP_OPT_MOMENTUM && !have_momentum)
		return wsecc_fail(p->err, p->file, p->line, end_col(p),
				  "expected 'momentum=VALUE' for the momentum optimizer");
	return 0;
}

static int parse_batch(struct parser *p)
{
	uint64_t v;

	if (once(p, &p->seen_batch, "batch") || need_words(p, 2, "a batch size after 'batch'") ||
	    get_uint(p, &p->w[1], 1, WSEP_MAX_BATCH, "a batch size", &v))
		return -EINVAL;
	p->m->batch = (uint32_t)v;
	p->m->batch_pos = (struct wsecc_pos){ p->line, p->w[1].col };
	return 0;
}

static int parse_seed(struct parser *p)
{
	uint64_t v;

	if (once(p, &p->seen_seed, "seed") || need_words(p, 2, "a seed after 'seed'") ||
	    get_uint(p, &p->w[1], 0, UINT64_MAX, "a seed", &v))
		return -EINVAL;
	p->m->seed = v;
	return 0;
}

static int parse_wafer(struct parser *p)
{
	struct wse_wafer w;
	char msg[256];

	if (once(p, &p->seen_wafer, "wafer") ||
	    need_words(p, 2, "a wafer after 'wafer': wse2, wse3 or WxH[:SRAM]"))
		return -EINVAL;
	if (p->w[1].len >= sizeof(p->m->wafer))
		return FAIL_AT(p, &p->w[1], "wafer spec too long");
	memcpy(p->m->wafer, p->w[1].s, p->w[1].len);
	p->m->wafer[p->w[1].len] = 0;
	if (wse_wafer_parse(p->m->wafer, &w, msg, sizeof(msg)))
		return FAIL_AT(p, &p->w[1], "%s", msg);
	return 0;
}

static const struct {
	const char *word;
	int (*parse)(struct parser *p);
} statements[] = {
	{ "model", parse_model }, { "input", parse_input }, { "dense", parse_dense },
	{ "loss", parse_loss }, { "optimizer", parse_optimizer }, { "batch", parse_batch },
	{ "seed", parse_seed }, { "wafer", parse_wafer },
};

/* Splits one line into words; returns -1 on a bad character. */
static int split(struct parser *p, const char *s, size_t len)
{
	size_t i = 0;

	p->n = 0;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];

		if (c == '#')
			break;
		if (c == ' ' || c == '\t' || c == '\r') {
			i++;
			continue;
		}
		if (!isprint(c))
			return wsecc_fail(p->err, p->file, p->line, (unsigned)i + 1,
					  "unexpected byte 0x%02x: the model file is plain ASCII text", c);
		if (p->n == MAX_WORDS)
			return wsecc_fail(p->err, p->file, p->line, (unsigned)i + 1,
					  "too many words on one line (at most %d)", MAX_WORDS);
		p->w[p->n].s = s + i;
		p->w[p->n].col = (unsigned)i + 1;
		while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '#' &&
		       isprint((unsigned char)s[i]))
			i++;
		p->w[p->n].len = (size_t)(s + i - p->w[p->n].s);
		p->n++;
	}
	return 0;
}

static int check_whole(struct parser *p)
{
	struct wsecc_model *m = p->m;
	unsigned last = p->line ? p->line : 1;
	static const struct {
		size_t seen;
		const char *what;
	} required[] = {
		{ offsetof(struct parser, seen_input), "an 'input' statement (e.g. 'input 784 u8')" },
		{ offsetof(struct parser, seen_loss), "a 'loss' statement (e.g. 'loss softmax_xent')" },
		{ offsetof(struct parser, seen_opt), "an 'optimizer' statement (e.g. 'optimizer adam lr=1e-3')" },
		{ offsetof(struct parser, seen_batch), "a 'batch' statement (e.g. 'batch 128')" },
		{ offsetof(struct parser, seen_seed), "a 'seed' statement (e.g. 'seed 1')" },
	};

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!*(unsigned *)((char *)p + required[i].seen))
			return wsecc_fail(p->err, p->file, last, 1, "missing %s", required[i].what);
	if (!m->num_layers)
		return wsecc_fail(p->err, p->file, last, 1,
				  "missing layers: expected at least one 'dense IN OUT ACTIVATION'");
	for (uint32_t i = 0; i < m->num_layers; i++) {
		const struct wsecc_layer *l = &m->layers[i];
		uint32_t want = i ? m->layers[i - 1].out : m->input_dim;

		if (l->in != want)
			return wsecc_fail(p->err, p->file, l->in_pos.line, l->in_pos.col,
					  "layer %u takes %u inputs but %s %u: expected 'dense %u ...'",
					  i, l->in, i ? "the previous layer gives" : "the input has",
					  want, want);
	}
	return 0;
}

int wsecc_parse_string(const char *text, const char *name, struct wsecc_model *m,
		       struct wsecc_error *err)
{
	struct parser p = { .file = name ? name : "<string>", .m = m, .err = err };
	const char *s = text;
	const char *base;

	memset(m, 0, sizeof(*m));
	snprintf(m->file, sizeof(m->file), "%s", p.file);
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		size_t i;

		p.line++;
		if (split(&p, s, len))
			return -EINVAL;
		if (p.n) {
			for (i = 0; i < sizeof(statements) / sizeof(statements[0]); i++)
				if (word_is(&p.w[0], statements[i].word))
					break;
			if (i == sizeof(statements) / sizeof(statements[0]))
				return FAIL_AT(&p, &p.w[0],
					       "unknown statement '%s': expected model, input, dense, loss, optimizer, batch, seed or wafer",
					       word_str(&p.w[0]));
			if (statements[i].parse(&p))
				return -EINVAL;
		}
		s += len + (nl ? 1 : 0);
	}
	if (check_whole(&p))
		return -EINVAL;
	if (!m->name[0]) {
		/* The model is named after its file unless it says otherwise. */
		base = strrchr(p.file, '/');
		base = base ? base + 1 : p.file;
		snprintf(m->name, sizeof(m->name), "%.*s", (int)strcspn(base, "."), base);
		if (!m->name[0])
			snprintf(m->name, sizeof(m->name), "model");
	}
	return 0;
}

int wsecc_parse_file(const char *path, struct wsecc_model *m, struct wsecc_error *err)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t n;
	int ret;

	memset(m, 0, sizeof(*m));
	if (!f) {
		ret = -errno;
		wsecc_fail(err, path, 0, 0, "cannot open the model file: %s", strerror(-ret));
		return ret;
	}
	text = malloc(MAX_MODEL_TEXT + 1);
	if (!text) {
		fclose(f);
		wsecc_fail(err, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	n = fread(text, 1, MAX_MODEL_TEXT + 1, f);
	fclose(f);
	if (n > MAX_MODEL_TEXT) {
		free(text);
		return wsecc_fail(err, path, 0, 0, "model file is larger than %d bytes",
				  MAX_MODEL_TEXT);
	}
	if (memchr(text, 0, n)) {
		free(text);
		return wsecc_fail(err, path, 0, 0, "model file holds a NUL byte: not a text file");
	}
	text[n] = 0;
	ret = wsecc_parse_string(text, path, m, err);
	free(text);
	return ret;
}
