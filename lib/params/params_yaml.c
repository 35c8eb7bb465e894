// SPDX-License-Identifier: GPL-2.0-only
/*
 * params.yaml into struct wse_hparams: libyaml builds the document, this
 * walks it against the table of keys below, refusing what it does not
 * know with the file, line and key.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "wse/hparams.h"
#include "wse/numparse.h"

enum hp_type {
	HP_PATH,	/* a string, up to WSE_HP_PATH_MAX */
	HP_WORD,	/* one of @words, stored in lower case */
	HP_U64,		/* a whole number in [lo, hi] */
	HP_NUM,		/* a number in [lo, hi] */
	HP_BOOL,
	HP_LR,		/* a number, or a schedule list */
	HP_STRINGS,	/* a string or a list of them */
};

struct hp_def {
	const char *section, *key;
	enum wse_hp_key k;
	enum hp_type type;
	size_t off;
	double lo, hi;
	const char *const *words;
};

static const char *const input_words[] = { "u8", "f32", NULL };
static const char *const optimizer_words[] = { "sgd", "momentum", "nesterov", "adam", "adamw",
					       NULL };
static const char *const mode_words[] = { "auto", "pipelined", "weight_streaming", NULL };

#define AT(f) offsetof(struct wse_hparams, f)
#define U32 4294967295.0

static const struct hp_def defs[] = {
	{ "train_input", "data_dir", WSE_HP_DATA_DIR, HP_PATH, AT(data_dir), 0, 0, NULL },
	{ "train_input", "batch_size", WSE_HP_BATCH_SIZE, HP_U64, AT(batch_size), 1, 65536, NULL },
	{ "train_input", "micro_batch_size", WSE_HP_MICRO_BATCH_SIZE, HP_U64, AT(micro_batch_size),
	  1, 65536, NULL },
	{ "train_input", "shuffle_seed", WSE_HP_SHUFFLE_SEED, HP_U64, AT(shuffle_seed), 0,
	  18446744073709551615.0, NULL },
	{ "model", "input", WSE_HP_INPUT, HP_WORD, AT(input), 0, 0, input_words },
	{ "model", "freeze", WSE_HP_FREEZE, HP_STRINGS, 0, 0, 0, NULL },
	{ "optimizer", "optimizer_type", WSE_HP_OPTIMIZER_TYPE, HP_WORD, AT(optimizer_type), 0, 0,
	  optimizer_words },
	{ "optimizer", "learning_rate", WSE_HP_LEARNING_RATE, HP_LR, AT(learning_rate), 1e-12, 1e6,
	  NULL },
	{ "optimizer", "momentum", WSE_HP_MOMENTUM, HP_NUM, AT(momentum), 0, 0.999999, NULL },
	{ "optimizer", "nesterov", WSE_HP_NESTEROV, HP_BOOL, AT(nesterov), 0, 0, NULL },
	{ "optimizer", "weight_decay", WSE_HP_WEIGHT_DECAY, HP_NUM, AT(weight_decay), 0, 1e6, NULL },
	{ "runconfig", "execution_mode", WSE_HP_EXECUTION_MODE, HP_WORD, AT(execution_mode), 0, 0,
	  mode_words },
	{ "runconfig", "max_steps", WSE_HP_MAX_STEPS, HP_U64, AT(max_steps), 1, U32, NULL },
	{ "runconfig", "num_epochs", WSE_HP_NUM_EPOCHS, HP_U64, AT(num_epochs), 1, 100000, NULL },
	{ "runconfig", "checkpoint_steps", WSE_HP_CHECKPOINT_STEPS, HP_U64, AT(checkpoint_steps), 1,
	  U32, NULL },
	{ "runconfig", "keep_checkpoint_max", WSE_HP_KEEP_CHECKPOINT_MAX, HP_U64,
	  AT(keep_checkpoint_max), 0, U32, NULL },
	{ "runconfig", "log_steps", WSE_HP_LOG_STEPS, HP_U64, AT(log_steps), 1, U32, NULL },
	{ "runconfig", "seed", WSE_HP_SEED, HP_U64, AT(seed), 0, 18446744073709551615.0, NULL },
	{ "runconfig", "num_csx", WSE_HP_NUM_CSX, HP_U64, AT(num_csx), 1, 64, NULL },
	{ "runconfig", "model_dir", WSE_HP_MODEL_DIR, HP_PATH, AT(model_dir), 0, 0, NULL },
};

static const char *const sections[] = { "train_input", "model", "optimizer", "runconfig", NULL };

#define N_DEFS (sizeof(defs) / sizeof(defs[0]))

struct reader {
	struct wse_hparams *h;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

static int fail_at(struct reader *r, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "FILE:LINE: KEY: ..." */
static int fail_at(struct reader *r, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	used = (size_t)snprintf(r->err, r->errlen, "%s:%zu: %s%s", r->h->file,
				n ? (size_t)n->start_mark.line + 1 : (size_t)1, key ? key : "",
				key ? ": " : "");
	if (used < r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err + used, r->errlen - used, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

const char *wse_hparams_key_name(enum wse_hp_key k)
{
	static char names[WSE_HP_NUM_KEYS][48];

	switch (k) {
	case WSE_HP_WARMUP_STEPS: return "optimizer.learning_rate (Linear)";
	case WSE_HP_SCHEDULE_STEPS: return "optimizer.learning_rate (CosineDecay)";
	case WSE_HP_MIN_LR: return "optimizer.learning_rate (end_learning_rate)";
	default: break;
	}
	for (size_t i = 0; i < N_DEFS; i++)
		if (defs[i].k == k) {
			if (!names[k][0])
				snprintf(names[k], sizeof(names[k]), "%s.%s", defs[i].section,
					 defs[i].key);
			return names[k];
		}
	return "?";
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool plain(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* YAML's null as a plain scalar: "", "~", "null". */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && plain(n) && (!*s || !strcmp(s, "~") || !strcasecmp(s, "null"));
}

static const char *node_kind(const yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	return is_null(n) ? "nothing" : "a string";
}

/* A number as YAML 1.1 writes one, into [lo, hi]. */
static int number(struct reader *r, const yaml_node_t *n, const char *key, double lo, double hi,
		  double *v)
{
	char msg[160];
	const char *s = scalar(n);

	if (!s || !plain(n) || is_null(n))
		return fail_at(r, n, key, "expected a number, got %s%s%s%s", node_kind(n),
			       s && *s ? " '" : "", s && *s ? s : "", s && *s ? "'" : "");
	if (wse_parse_double(s, lo, hi, v, msg, sizeof(msg)))
		return fail_at(r, n, key, "'%s': expected a number from %g to %g", s, lo, hi);
	return 0;
}

static int whole(struct reader *r, const yaml_node_t *n, const char *key, double lo, double hi,
		 uint64_t *v)
{
	char msg[160];
	const char *s = scalar(n);
	uint64_t max = hi >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)hi;

	if (!s || !plain(n) || is_null(n))
		return fail_at(r, n, key, "expected a whole number, got %s%s%s%s", node_kind(n),
			       s && *s ? " '" : "", s && *s ? s : "", s && *s ? "'" : "");
	if (wse_parse_u64(s, (uint64_t)lo, max, WSE_NUM_PLAIN, v, msg, sizeof(msg)))
		return fail_at(r, n, key, "'%s': expected a whole number from %llu to %llu", s,
			       (unsigned long long)lo, (unsigned long long)max);
	return 0;
}

static int string(struct reader *r, const yaml_node_t *n, const char *key, char *dst, size_t cap)
{
	const char *s = scalar(n);

	if (!s || is_null(n))
		return fail_at(r, n, key, "expected a string, got %s", node_kind(n));
	if (!*s || strlen(s) >= cap)
		return fail_at(r, n, key, "expected a string of 1 to %zu characters", cap - 1);
	strcpy(dst, s);
	return 0;
}

static int word(struct reader *r, const yaml_node_t *n, const struct hp_def *d, const char *key)
{
	char *dst = (char *)r->h + d->off;
	char list[160] = "";
	size_t used = 0;

	if (string(r, n, key, dst, WSE_HP_WORD_MAX))
		return -EINVAL;
	for (char *c = dst; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	for (const char *const *w = d->words; *w; w++) {
		if (!strcmp(dst, *w))
			return 0;
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 w == d->words ? "" : w[1] ? ", " : " or ", *w);
	}
	return fail_at(r, n, key, "'%s': expected %s", scalar(n), list);
}

static int boolean(struct reader *r, const yaml_node_t *n, const char *key, bool *v)
{
	static const char *const yes[] = { "true", "yes", "on", NULL };
	static const char *const no[] = { "false", "no", "off", NULL };
	const char *s = scalar(n);

	if (s && plain(n)) {
		for (int i = 0; yes[i]; i++)
			if (!strcasecmp(s, yes[i]))
				return *v = true, 0;
		for (int i = 0; no[i]; i++)
			if (!strcasecmp(s, no[i]))
				return *v = false, 0;
	}
	return fail_at(r, n, key, "expected true or false, got %s%s%s%s", node_kind(n),
		       s && *s ? " '" : "", s && *s ? s : "", s && *s ? "'" : "");
}

static int freeze_one(struct reader *r, const yaml_node_t *n, const char *key)
{
	char buf[WSE_HP_PATH_MAX];

	if (r->h->n_freeze == WSE_HP_MAX_FREEZE)
		return fail_at(r, n, key, "more than %d patterns: use wider globs", WSE_HP_MAX_FREEZE);
	if (string(r, n, key, buf, sizeof(buf)))
		return -EINVAL;
	r->h->freeze[r->h->n_freeze] = strdup(buf);
	if (!r->h->freeze[r->h->n_freeze])
		return fail_at(r, n, key, "out of memory");
	r->h->n_freeze++;
	return 0;
}

static int strings(struct reader *r, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return freeze_one(r, n, key);
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
		if (freeze_one(r, yaml_document_get_node(r->doc, *i), key))
			return -EINVAL;
	return 0;
}

/* One entry of a schedule list: a mapping of scheduler and its numbers. */
static int schedule_entry(struct reader *r, const yaml_node_t *n, size_t index, const char *key)
{
	struct wse_hp_sched_entry e = { .initial_lr = NAN, .end_lr = NAN, .lr = NAN,
					.total_iters = UINT64_MAX,
					.line = (unsigned int)n->start_mark.line + 1 };
	char name[WSE_HP_WORD_MAX] = "", where[200], msg[256];
	yaml_node_pair_t *p;

	if (n->type != YAML_MAPPING_NODE)
		return fail_at(r, n, key, "entry %zu: expected a mapping (scheduler: Linear, CosineDecay or Constant, and its numbers), got %s",
			       index + 1, node_kind(n));
	snprintf(where, sizeof(where), "%s[%zu]", key, index);
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *kn = yaml_document_get_node(r->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(r->doc, p->value);
		const char *k = scalar(kn);
		char full[400];
		int ret;

		snprintf(full, sizeof(full), "%s.%s", where, k ? k : "?");
		if (!k)
			return fail_at(r, kn, where, "expected a key, got %s", node_kind(kn));
		if (!strcmp(k, "scheduler"))
			ret = string(r, vn, full, name, sizeof(name));
		else if (!strcmp(k, "initial_learning_rate"))
			ret = number(r, vn, full, 0, 1e6, &e.initial_lr);
		else if (!strcmp(k, "end_learning_rate"))
			ret = number(r, vn, full, 0, 1e6, &e.end_lr);
		else if (!strcmp(k, "learning_rate"))
			ret = number(r, vn, full, 1e-12, 1e6, &e.lr);
		else if (!strcmp(k, "total_iters"))
			ret = whole(r, vn, full, 1, U32, &e.total_iters);
		else
			ret = fail_at(r, kn, full, "unknown key: a schedule entry takes scheduler, initial_learning_rate, end_learning_rate, learning_rate and total_iters");
		if (ret)
			return ret;
	}
	if (!name[0])
		return fail_at(r, n, where, "no scheduler: expected Linear, CosineDecay or Constant");
	e.scheduler = name;
	if (wse_hparams_add_schedule(r->h, &e, index, msg, sizeof(msg)))
		return fail_at(r, n, where, "%s", msg);
	return 0;
}

static int learning_rate(struct reader *r, const yaml_node_t *n, const char *key)
{
	size_t count;

	if (n->type != YAML_SEQUENCE_NODE)
		return number(r, n, key, 1e-12, 1e6, &r->h->learning_rate);
	count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!count)
		return fail_at(r, n, key, "an empty schedule: give a number or a list of entries");
	for (size_t i = 0; i < count; i++) {
		const yaml_node_t *e = yaml_document_get_node(r->doc,
							      n->data.sequence.items.start[i]);

		if (schedule_entry(r, e, i, key))
			return -EINVAL;
	}
	if (wse_hp_has(r->h, WSE_HP_WARMUP_STEPS) && !wse_hp_has(r->h, WSE_HP_MIN_LR))
		return fail_at(r, n, key, "a Linear warm-up needs a CosineDecay entry after it: the device warms up, then decays");
	return 0;
}

static int value(struct reader *r, const struct hp_def *d, const yaml_node_t *n, const char *key)
{
	void *dst = (char *)r->h + d->off;

	switch (d->type) {
	case HP_PATH: return string(r, n, key, dst, WSE_HP_PATH_MAX);
	case HP_WORD: return word(r, n, d, key);
	case HP_U64: return whole(r, n, key, d->lo, d->hi, dst);
	case HP_NUM: return number(r, n, key, d->lo, d->hi, dst);
	case HP_BOOL: return boolean(r, n, key, dst);
	case HP_LR: return learning_rate(r, n, key);
	case HP_STRINGS: return strings(r, n, key);
	}
	return -EINVAL;
}

/* The keys a section takes, for the message about one it does not. */
static void section_keys(const char *section, char *buf, size_t cap)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_DEFS && used < cap; i++)
		if (!strcmp(defs[i].section, section))
			used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? ", " : "",
						 defs[i].key);
}

static int section(struct reader *r, const char *name, const yaml_node_t *n)
{
	yaml_node_pair_t *p;

	if (is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(r, n, name, "expected a mapping of keys, got %s", node_kind(n));
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *kn = yaml_document_get_node(r->doc, p->key);
		const yaml_node_t *vn = yaml_document_get_node(r->doc, p->value);
		const char *k = scalar(kn);
		const struct hp_def *d = NULL;
		char full[160], keys[400];

		if (!k)
			return fail_at(r, kn, name, "expected a key, got %s", node_kind(kn));
		snprintf(full, sizeof(full), "%s.%s", name, k);
		for (size_t i = 0; i < N_DEFS && !d; i++)
			if (!strcmp(defs[i].section, name) && !strcmp(defs[i].key, k))
				d = &defs[i];
		if (!d) {
			section_keys(name, keys, sizeof(keys));
			return fail_at(r, kn, full, "unknown key (%s takes %s)", name, keys);
		}
		if (wse_hp_has(r->h, d->k))
			return fail_at(r, kn, full, "given twice (first on line %u)", r->h->line[d->k]);
		if (value(r, d, vn, full))
			return -EINVAL;
		r->h->set |= WSE_HP_BIT(d->k);
		r->h->line[d->k] = (unsigned int)kn->start_mark.line + 1;
	}
	return 0;
}

static int document(struct reader *r)
{
	const yaml_node_t *root = yaml_document_get_root_node(r->doc);
	uint32_t seen = 0;
	yaml_node_pair_t *p;

	if (!root || is_null(root))
		return 0;	/* an empty file: nothing set */
	if (root->type != YAML_MAPPING_NODE)
		return fail_at(r, root, NULL, "expected a mapping of sections (train_input, model, optimizer, runconfig), got %s",
			       node_kind(root));
	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const yaml_node_t *kn = yaml_document_get_node(r->doc, p->key);
		const char *k = scalar(kn);
		int s = -1;

		for (int i = 0; k && sections[i]; i++)
			if (!strcmp(k, sections[i]))
				s = i;
		if (s < 0)
			return fail_at(r, kn, k ? k : "?", "unknown section: expected train_input, model, optimizer or runconfig");
		if (seen & (1u << s))
			return fail_at(r, kn, k, "section given twice");
		seen |= 1u << s;
		if (section(r, k, yaml_document_get_node(r->doc, p->value)))
			return -EINVAL;
	}
	return 0;
}

int wse_hparams_parse(const char *text, size_t len, const char *name, struct wse_hparams *h,
		      char *err, size_t errlen)
{
	struct reader r = { .h = h, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc;
	int ret;

	memset(h, 0, sizeof(*h));
	snprintf(h->file, sizeof(h->file), "%s", name);
	if (!yaml_parser_initialize(&parser))
		return snprintf(err, errlen, "%s: out of memory", name), -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: not YAML: %s%s%s", name,
			 (size_t)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "a syntax error",
			 parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	r.doc = &doc;
	ret = document(&r);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return ret;
}

int wse_hparams_read(const char *path, struct wse_hparams *h, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t len;
	long size;
	int ret;

	memset(h, 0, sizeof(*h));
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read the params file %s: %s", path, strerror(errno));
		return ret;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || size > (1 << 20) ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		snprintf(err, errlen, "%s: not a params file (larger than 1 MiB, or not a regular file)",
			 path);
		return -EINVAL;
	}
	buf = malloc((size_t)size + 1);
	len = buf ? fread(buf, 1, (size_t)size, f) : 0;
	fclose(f);
	if (!buf || len != (size_t)size) {
		free(buf);
		snprintf(err, errlen, "cannot read the params file %s", path);
		return -EIO;
	}
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		free(buf);
		snprintf(err, errlen, "%s: holds a NUL byte: a params file is YAML text", path);
		return -EINVAL;
	}
	ret = wse_hparams_parse(buf, len, path, h, err, errlen);
	free(buf);
	return ret;
}

void wse_hparams_free(struct wse_hparams *h)
{
	for (size_t i = 0; i < h->n_freeze; i++)
		free(h->freeze[i]);
	h->n_freeze = 0;
}
