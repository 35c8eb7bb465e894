// SPDX-License-Identifier: GPL-2.0-only
/*
 * run.json, as label/value rows for the page. wsetrain writes it
 * (Documentation/wsetrain.rst, "Run directory"); the page shows whatever
 * it holds, so a field added there shows up here without a change: scalars
 * as they are, objects one row per member ("final.test_accuracy"), arrays
 * of objects one row per element.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "report.h"
#include "wse/engine.h"

static int add_row(struct run_info *ri, const char *label, const char *value)
{
	char **l = realloc(ri->label, (ri->n + 1) * sizeof(*l));
	char **v;

	if (!l)
		return -1;
	ri->label = l;
	v = realloc(ri->value, (ri->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	ri->value = v;
	l[ri->n] = strdup(label);
	v[ri->n] = strdup(value);
	if (!l[ri->n] || !v[ri->n]) {
		free(l[ri->n]);
		free(v[ri->n]);
		return -1;
	}
	ri->n++;
	return 0;
}

static bool scalar(struct json_object *o)
{
	return !json_object_is_type(o, json_type_object) && !json_object_is_type(o, json_type_array);
}

void report_number(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (a == floor(a) && a < 1e15)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100 && fabs(v - round(v)) < 0.05)
		snprintf(buf, len, "%.0f", v);	/* 8745, not 8745.0 */
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

void report_bytes(char *buf, size_t len, double bytes)
{
	static const char *const unit[] = { "kB", "MB", "GB", "TB" };
	int u = -1;

	if (bytes < 1000) {
		snprintf(buf, len, "%.0f bytes", bytes);
		return;
	}
	while (bytes >= 1000 && u < 3) {
		bytes /= 1000;
		u++;
	}
	snprintf(buf, len, "%.3g %s", bytes, unit[u]);
}

/* A scalar as text, in @buf where it is made; strings without their quotes. */
static const char *text_of(struct json_object *o, char *buf, size_t len)
{
	if (json_object_is_type(o, json_type_string))
		return json_object_get_string(o);
	/* json-c prints 17 digits: 0.88819999999999999 for 0.8882. */
	if (json_object_is_type(o, json_type_double)) {
		report_number(buf, len, json_object_get_double(o));
		return buf;
	}
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

/* "a=1, b=x" for an object's scalar members (nested ones as JSON). */
static char *joined(struct json_object *o)
{
	char *buf = NULL, num[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (json_object_is_type(o, json_type_object)) {
		bool first = true;

		json_object_object_foreach(o, k, v) {
			fprintf(f, "%s%s=%s", first ? "" : ", ", k,
				scalar(v) ? text_of(v, num, sizeof(num)) :
					    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
			first = false;
		}
	} else {
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			struct json_object *e = json_object_array_get_idx(o, i);

			fprintf(f, "%s%s", i ? " " : "",
				scalar(e) ? text_of(e, num, sizeof(num)) :
					    json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN));
		}
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int add_member(struct run_info *ri, const char *key, struct json_object *v)
{
	char label[256], num[64];
	int ret = 0;

	if (scalar(v))
		return add_row(ri, key, text_of(v, num, sizeof(num)));
	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, k, sub) {
			char *s = scalar(sub) ? NULL : joined(sub);

			snprintf(label, sizeof(label), "%s.%s", key, k);
			if (!scalar(sub) && !s)
				return -1;
			ret = add_row(ri, label, s ? s : text_of(sub, num, sizeof(num)));
			free(s);
			if (ret)
				return ret;
		}
		return 0;
	}
	/* An array: of objects, a row each; of scalars, one row. */
	if (json_object_array_length(v) &&
	    json_object_is_type(json_object_array_get_idx(v, 0), json_type_object)) {
		for (size_t i = 0; i < json_object_array_length(v) && !ret; i++) {
			char *s = joined(json_object_array_get_idx(v, i));

			snprintf(label, sizeof(label), "%s[%zu]", key, i);
			ret = s ? add_row(ri, label, s) : -1;
			free(s);
		}
		return ret;
	}
	{
		char *s = joined(v);

		ret = s ? add_row(ri, key, s) : -1;
		free(s);
	}
	return ret;
}

static const char *str_member(struct json_object *root, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(root, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

bool report_json_number(struct json_object *root, const char *key, double *v)
{
	struct json_object *o;

	if (!json_object_object_get_ex(root, key, &o) ||
	    (!json_object_is_type(o, json_type_double) && !json_object_is_type(o, json_type_int)))
		return false;
	*v = json_object_get_double(o);
	return isfinite(*v) && *v >= 0;
}

/* wsetrain records lr, and warmup, schedule_steps and min_lr for a warmup-cosine schedule. */
static void schedule(struct json_object *root, struct run_info *ri)
{
	double warmup, total;

	ri->have_lr = report_json_number(root, "lr", &ri->lr);
	if (ri->have_lr && report_json_number(root, "warmup", &warmup) &&
	    report_json_number(root, "schedule_steps", &total) && report_json_number(root, "min_lr", &ri->min_lr) &&
	    warmup < total && total < 1e18) {
		ri->warmup = (uint64_t)warmup;
		ri->schedule_steps = (uint64_t)total;
	}
}

void run_info_fill_lr(const struct run_info *ri, struct metrics *m)
{
	struct engine_lr_schedule s = {
		.kind = ri->schedule_steps ? ENGINE_LR_WARMUP_COSINE : ENGINE_LR_CONSTANT,
		.warmup = ri->warmup, .total = ri->schedule_steps, .min_lr = ri->min_lr,
	};

	if (!ri->have_lr)
		return;
	for (size_t i = 0; i < m->n; i++)
		if (!m->rows[i].test && isnan(m->rows[i].lr))
			m->rows[i].lr = engine_lr_at(&s, ri->lr, m->rows[i].step);
}

const char *run_info_get(const struct run_info *ri, const char *label)
{
	for (size_t i = 0; i < ri->n; i++)
		if (!strcmp(ri->label[i], label))
			return ri->value[i];
	return NULL;
}

struct json_object *report_json_read(const char *path, char *err, size_t errlen)
{
	struct json_object *root = json_object_from_file(path);

	if (!root) {
		snprintf(err, errlen, "%s: %s", path, json_util_get_last_err() ?
			 json_util_get_last_err() : "not JSON");
		err[strcspn(err, "\n")] = '\0';
	}
	return root;
}

int run_info_read(const char *path, struct run_info *ri, char *err, size_t errlen)
{
	struct json_object *root, *sys;
	const char *model, *mode;
	char title[512];
	int ret = -1;

	memset(ri, 0, sizeof(*ri));
	root = report_json_read(path, err, errlen);
	if (!root)
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "%s: not a JSON object", path);
		goto out;
	}
	model = str_member(root, "model");
	mode = str_member(root, "mode");
	if (json_object_object_get_ex(root, "systems", &sys) &&
	    json_object_is_type(sys, json_type_int))
		snprintf(title, sizeof(title), "%s, %s on %d system%s", model ? model : "a model",
			 mode ? mode : "training", json_object_get_int(sys),
			 json_object_get_int(sys) == 1 ? "" : "s");
	else
		snprintf(title, sizeof(title), "%s%s%s", model ? model : "a run",
			 mode ? ", " : "", mode ? mode : "");
	ri->title = strdup(title);
	if (!ri->title)
		goto nomem;
	schedule(root, ri);
	json_object_object_foreach(root, key, v)
		if (add_member(ri, key, v))
			goto nomem;
	ret = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	json_object_put(root);
	if (ret)
		run_info_free(ri);
	return ret;
}

void run_info_free(struct run_info *ri)
{
	for (size_t i = 0; i < ri->n; i++) {
		free(ri->label[i]);
		free(ri->value[i]);
	}
	free(ri->label);
	free(ri->value);
	free(ri->title);
	memset(ri, 0, sizeof(*ri));
}
