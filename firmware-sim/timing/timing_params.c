// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timing parameter file: "key = value  # source" per line. A value
 * without a source is refused: every constant of the model says where it
 * comes from.
 */
#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"
#include "wse/numparse.h"

#define PARAMS_FILE_MAX	(64 * 1024)

struct key {
	const char *name;
	size_t offset;
	bool positive;		/* must be > 0, not just >= 0 */
};

#define KEY(f, pos) { #f, offsetof(struct fwd_timing_params, f), pos }

static const struct key keys[] = {
	KEY(clock_hz, true),
	KEY(elementwise_cycles, false),
	KEY(loss_fwd_cycles_per_logit, false),
	KEY(loss_bwd_cycles_per_logit, false),
	KEY(sgd_flops_per_param, false),
	KEY(momentum_flops_per_param, false),
	KEY(adam_flops_per_param, false),
	KEY(weight_decay_flops_per_param, false),
	KEY(sram_bytes_per_weight, false),
	KEY(fabric_directions, false),
	KEY(host_extra_bytes_per_sample, false),
	KEY(hop_cycles, false),
	KEY(transcendental_cycles, false),
	KEY(normalize_cycles, false),
	KEY(softmax_cycles, false),
	KEY(window_cycles, false),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int fail(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(err, errlen, "%s:%u: %s", name, line, msg);
	else
		snprintf(err, errlen, "%s: %s", name, msg);
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* One non-blank, non-comment line. */
static int parse_line(char *line, const char *name, unsigned lineno, struct fwd_timing_params *p,
		      bool *seen, char *err, size_t errlen)
{
	char *hash = strchr(line, '#'), *eq, *key, *val, why[160];
	double v;
	size_t i;

	if (!hash || !*trim(hash + 1))
		return fail(err, errlen, name, lineno,
			    "a value without a source: write 'key = value  # source'");
	*hash = '\0';
	eq = strchr(line, '=');
	if (!eq)
		return fail(err, errlen, name, lineno, "expected 'key = value  # source'");
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	for (i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, key))
			break;
	if (i == NKEYS)
		return fail(err, errlen, name, lineno, "unknown key '%s'", key);
	if (seen[i])
		return fail(err, errlen, name, lineno, "'%s' given twice", key);
	if (wse_parse_double(val, 0, DBL_MAX, &v, why, sizeof(why)) || (keys[i].positive && v <= 0))
		return fail(err, errlen, name, lineno, "'%s' needs a finite number %s, not '%s'",
			    key, keys[i].positive ? "> 0" : ">= 0", val);
	*(double *)((char *)p + keys[i].offset) = v;
	seen[i] = true;
	return 0;
}

int fwd_timing_params_parse(const char *text, const char *name,
			    struct fwd_timing_params *p, char *err, size_t errlen)
{
	bool seen[NKEYS] = { false };
	char line[512];
	unsigned lineno = 0;
	const char *s = text;

	memset(p, 0, sizeof(*p));
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char *l;

		lineno++;
		if (n >= sizeof(line))
			return fail(err, errlen, name, lineno, "line longer than %zu characters",
				    sizeof(line) - 1);
		memcpy(line, s, n);
		line[n] = '\0';
		s += n + (nl ? 1 : 0);
		l = trim(line);
		if (!*l || *l == '#')
			continue;
		if (parse_line(l, name, lineno, p, seen, err, errlen))
			return -1;
	}
	for (size_t i = 0; i < NKEYS; i++)
		if (!seen[i])
			return fail(err, errlen, name, 0, "'%s' is missing", keys[i].name);
	return 0;
}

int fwd_timing_params_load(const char *path, struct fwd_timing_params *p,
			   char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t n;
	int ret;

	if (!f)
		return fail(err, errlen, path, 0, "cannot open: %s", strerror(errno));
	text = malloc(PARAMS_FILE_MAX + 1);
	if (!text) {
		fclose(f);
		return fail(err, errlen, path, 0, "out of memory");
	}
	n = fread(text, 1, PARAMS_FILE_MAX + 1, f);
	fclose(f);
	if (n > PARAMS_FILE_MAX) {
		free(text);
		return fail(err, errlen, path, 0, "larger than %d bytes", PARAMS_FILE_MAX);
	}
	text[n] = '\0';
	if (strlen(text) != n) {
		free(text);
		return fail(err, errlen, path, 0, "contains a NUL byte: not a text file");
	}
	ret = fwd_timing_params_parse(text, path, p, err, errlen);
	free(text);
	return ret;
}
