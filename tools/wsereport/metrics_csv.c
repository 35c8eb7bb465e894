// SPDX-License-Identifier: GPL-2.0-only
/*
 * metrics.csv as wsetrain writes it (Documentation/wsetrain.rst):
 *
 *   kind,step,epoch,loss,accuracy,samples_per_s,wall_s
 *   train,50,0,0.712345,0.751234,10886.2,1.234
 *   test,469,0,0.523456,0.812300,,5.678
 *
 * Columns are found by name, so a file with more columns still reads; an
 * "lr" column, where there is one, gives the learning rate at each report.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

enum col { C_KIND, C_STEP, C_EPOCH, C_LOSS, C_ACC, C_RATE, C_WALL, C_COUNT };
static const char *const col_name[C_COUNT] = {
	"kind", "step", "epoch", "loss", "accuracy", "samples_per_s", "wall_s",
};

#define MAX_FIELDS	32

/* Splits @line at commas in place; returns the number of fields. */
static int split(char *line, char **field)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	for (char *p = line;; p++) {
		if (n == MAX_FIELDS)
			return n;
		field[n++] = p;
		p = strchr(p, ',');
		if (!p)
			return n;
		*p = '\0';
	}
}

static int number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !*s || *end || errno || !isfinite(*v) ? -1 : 0;
}

static int add(struct metrics *m, const struct metrics_row *r)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct metrics_row *rows = realloc(m->rows, cap * sizeof(*rows));

		if (!rows)
			return -1;
		m->rows = rows;
		m->cap = cap;
	}
	m->rows[m->n++] = *r;
	if (r->test)
		m->test++;
	else
		m->train++;
	return 0;
}

static int parse_row(char **f, int nf, const int *at, int lr_at, struct metrics_row *r,
		     char *err, size_t errlen)
{
	double v[C_COUNT];

	for (int c = 0; c < C_COUNT; c++)
		if (at[c] >= nf) {
			snprintf(err, errlen, "%d fields; the header has more", nf);
			return -1;
		}
	if (!strcmp(f[at[C_KIND]], "train")) {
		r->test = false;
	} else if (!strcmp(f[at[C_KIND]], "test")) {
		r->test = true;
	} else {
		snprintf(err, errlen, "kind '%s' is neither train nor test", f[at[C_KIND]]);
		return -1;
	}
	for (int c = C_STEP; c < C_COUNT; c++) {
		if (c == C_RATE && r->test && !*f[at[c]]) {
			v[c] = NAN;	/* evaluations have no rate */
			continue;
		}
		if (number(f[at[c]], &v[c]) || v[c] < 0) {
			snprintf(err, errlen, "%s '%s' is not a number >= 0", col_name[c],
				 f[at[c]]);
			return -1;
		}
	}
	if (v[C_STEP] > 1e18 || v[C_EPOCH] > 1e9 || v[C_STEP] != floor(v[C_STEP]) ||
	    v[C_EPOCH] != floor(v[C_EPOCH])) {
		snprintf(err, errlen, "step and epoch must be whole numbers");
		return -1;
	}
	if (v[C_ACC] > 1) {
		snprintf(err, errlen, "accuracy %g is above 1", v[C_ACC]);
		return -1;
	}
	r->step = (uint64_t)v[C_STEP];
	r->epoch = (uint32_t)v[C_EPOCH];
	r->loss = v[C_LOSS];
	r->accuracy = v[C_ACC];
	r->samples_per_s = v[C_RATE];
	r->wall_s = v[C_WALL];
	r->lr = NAN;
	if (lr_at >= 0 && lr_at < nf && *f[lr_at]) {
		double lr;

		if (number(f[lr_at], &lr) || lr < 0) {
			snprintf(err, errlen, "lr '%s' is not a number >= 0", f[lr_at]);
			return -1;
		}
		r->lr = lr;
	}
	return 0;
}

int metrics_read(const char *path, struct metrics *m, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char line[1024], why[256];
	int at[C_COUNT], lr_at = -1, nf, ret = -1;
	unsigned int lineno = 1;
	char *f[MAX_FIELDS];

	memset(m, 0, sizeof(*m));
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!fgets(line, sizeof(line), fp)) {
		snprintf(err, errlen, "%s: empty (no header line)", path);
		goto out;
	}
	nf = split(line, f);
	for (int c = 0; c < C_COUNT; c++) {
		at[c] = -1;
		for (int i = 0; i < nf; i++)
			if (!strcmp(f[i], col_name[c]))
				at[c] = i;
		if (at[c] < 0) {
			snprintf(err, errlen, "%s:1: no '%s' column in the header", path,
				 col_name[c]);
			goto out;
		}
	}
	for (int i = 0; i < nf; i++)
		if (!strcmp(f[i], "lr"))
			lr_at = i;
	while (fgets(line, sizeof(line), fp)) {
		struct metrics_row r;

		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			snprintf(err, errlen, "%s:%u: line longer than %zu bytes", path, lineno,
				 sizeof(line) - 1);
			goto out;
		}
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		nf = split(line, f);
		if (parse_row(f, nf, at, lr_at, &r, why, sizeof(why))) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
			goto out;
		}
		if (add(m, &r)) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (!m->n) {
		snprintf(err, errlen, "%s: no rows after the header", path);
		goto out;
	}
	ret = 0;
out:
	fclose(fp);
	if (ret)
		metrics_free(m);
	return ret;
}

void metrics_free(struct metrics *m)
{
	free(m->rows);
	memset(m, 0, sizeof(*m));
}
