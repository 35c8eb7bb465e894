// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parameters' names (format 1.2, optional section param_names): what
 * each range of the weights layout is called in the model the program came
 * from, so that trained weights can go back to it by name. The section is
 * optional because a program runs the same without it: a reader that does
 * not know it skips it, and a program without it (format 1.1 and older)
 * reads as before, with no names.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wsep_internal.h"
#include "wsep_le.h"

static int name_ok(const char *s, bool may_be_empty)
{
	if (!s[0])
		return may_be_empty;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name given twice in @names (NULLs and "" skipped), or NULL. */
static const char *duplicate(const char **names, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		if (names[i] && names[i][0])
			names[k++] = names[i];
	qsort(names, k, sizeof(*names), cmp_names);
	for (uint32_t i = 1; i < k; i++)
		if (!strcmp(names[i - 1], names[i]))
			return names[i];
	return NULL;
}

/*
 * The shape entry @i must have: the i-th value of the weights layout (a
 * parameter or state, which lies beside its unit's parameters), or layer
 * i/2's W or b.
 */
static int expected_shape(const struct wsep_program *p, uint32_t i, uint32_t *param_value,
			  uint64_t *offset, uint32_t *rank, uint64_t *dims)
{
	memset(dims, 0, WSEP_GRAPH_MAX_RANK * sizeof(*dims));
	if (p->graph) {
		const struct wsep_graph *g = p->graph;

		while (*param_value < g->num_values && g->values[*param_value].kind != WSEP_VAL_PARAM &&
		       g->values[*param_value].kind != WSEP_VAL_STATE)
			(*param_value)++;
		if (*param_value == g->num_values)
			return -EINVAL;
		*offset = g->values[*param_value].offset;
		*rank = g->values[*param_value].rank;
		memcpy(dims, g->values[*param_value].dims, *rank * sizeof(*dims));
		(*param_value)++;
		return 0;
	}
	if (i / 2 >= p->num_layers)
		return -EINVAL;
	const struct wsep_layer *l = &p->layers[i / 2];

	*offset = l->weight_offset + (i % 2 ? (uint64_t)l->in * l->out : 0);
	*rank = i % 2 ? 1 : 2;
	dims[0] = l->out;
	dims[1] = i % 2 ? 0 : l->in;
	return 0;
}

int wsep_param_names_check(const struct wsep_program *p, const struct wsep_param_name *names,
			   uint32_t n, char *err, size_t errlen)
{
	uint64_t total = wsep_total_params(p->layers, p->num_layers), at = 0;
	uint32_t param_value = 0;
	const char **list;
	const char *dup;

	if (!n)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct wsep_param_name *e = &names[i];
		uint64_t dims[WSEP_GRAPH_MAX_RANK], offset, elems = 1;
		uint32_t rank;

		if (!memchr(e->name, 0, sizeof(e->name)) || !name_ok(e->name, false) ||
		    !memchr(e->torch_name, 0, sizeof(e->torch_name)) ||
		    !name_ok(e->torch_name, true))
			return wsep_fail(err, errlen,
					 "parameter name %u: empty, unterminated or with control characters",
					 i);
		if (e->flags & ~WSEP_PARAM_FLAGS || ((e->flags & WSEP_PARAM_TORCH_TRANSPOSED) &&
						     e->rank != 2))
			return wsep_fail(err, errlen, "parameter '%s': flags 0x%x (transposed needs rank 2)",
					 e->name, e->flags);
		if (e->rank > WSEP_GRAPH_MAX_RANK)
			return wsep_fail(err, errlen, "parameter '%s': rank %u", e->name, e->rank);
		for (uint32_t d = 0; d < WSEP_GRAPH_MAX_RANK; d++) {
			if (d >= e->rank ? e->dims[d] != 0 : !e->dims[d] || e->dims[d] > total)
				return wsep_fail(err, errlen, "parameter '%s': dimension %u is %llu",
						 e->name, d, (unsigned long long)e->dims[d]);
			if (d < e->rank && __builtin_mul_overflow(elems, e->dims[d], &elems))
				elems = UINT64_MAX;
		}
		if (elems != e->elems || e->offset != at || e->elems > total - at)
			return wsep_fail(err, errlen,
					 "parameter '%s': %llu floats at %llu do not follow the previous one (at %llu) with its shape's elements, inside the %llu weights",
					 e->name, (unsigned long long)e->elems,
					 (unsigned long long)e->offset, (unsigned long long)at,
					 (unsigned long long)total);
		if (expected_shape(p, i, &param_value, &offset, &rank, dims))
			return wsep_fail(err, errlen, "%u parameter names for %s", n,
					 p->graph ? "fewer parameter values" : "the layers' W and b");
		if (offset != e->offset || rank != e->rank ||
		    memcmp(dims, e->dims, sizeof(dims)))
			return wsep_fail(err, errlen,
					 "parameter '%s': its offset or shape is not the program's parameter %u's",
					 e->name, i);
		at += e->elems;
	}
	if (at != total)
		return wsep_fail(err, errlen, "the parameter names cover %llu of the %llu weights",
				 (unsigned long long)at, (unsigned long long)total);
	list = malloc(2 * (size_t)n * sizeof(*list));
	if (!list)
		return wsep_fail(err, errlen, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		list[i] = names[i].name;
	dup = duplicate(list, n);
	if (!dup) {
		for (uint32_t i = 0; i < n; i++)
			list[i] = names[i].torch_name;
		dup = duplicate(list, n);
	}
	if (dup) {
		int ret = wsep_fail(err, errlen, "parameter name '%.128s' is given twice", dup);

		free(list);
		return ret;
	}
	free(list);
	return 0;
}

const struct wsep_param_name *wsep_param_name_find(const struct wsep_program *p, const char *name)
{
	for (uint32_t i = 0; i < p->num_param_names; i++)
		if (!strcmp(p->param_names[i].name, name))
			return &p->param_names[i];
	for (uint32_t i = 0; i < p->num_param_names; i++)
		if (p->param_names[i].torch_name[0] && !strcmp(p->param_names[i].torch_name, name))
			return &p->param_names[i];
	return NULL;
}

int wsep_param_names_decode(const void *buf, uint32_t record_size, uint32_t count,
			    struct wsep_param_name **out, char *err, size_t errlen)
{
	struct wsep_param_name *names;

	*out = NULL;
	if (!count)
		return wsep_fail(err, errlen, "no parameter names (a program without names has no such section)");
	if (count > WSEP_GRAPH_MAX_VALUES || record_size < WSEP_PARAM_NAME_RECORD)
		return wsep_fail(err, errlen, "%u parameter names of %u bytes, at most %u of at least %u",
				 count, record_size, WSEP_GRAPH_MAX_VALUES, WSEP_PARAM_NAME_RECORD);
	names = calloc(count, sizeof(*names));
	if (!names)
		return wsep_fail(err, errlen, "out of memory");
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *r = (const uint8_t *)buf + (uint64_t)i * record_size;
		struct wsep_param_name *e = &names[i];

		e->offset = get_le64(r + PNM_OFFSET);
		e->elems = get_le64(r + PNM_ELEMS);
		e->rank = get_le32(r + PNM_RANK);
		e->flags = get_le32(r + PNM_FLAGS);
		for (int d = 0; d < WSEP_GRAPH_MAX_RANK; d++)
			e->dims[d] = get_le64(r + PNM_DIMS + 8 * d);
		memcpy(e->name, r + PNM_NAME, WSEP_PARAM_NAME_MAX);
		memcpy(e->torch_name, r + PNM_TORCH_NAME, WSEP_PARAM_NAME_MAX);
		if (!memchr(e->name, 0, WSEP_PARAM_NAME_MAX) ||
		    !memchr(e->torch_name, 0, WSEP_PARAM_NAME_MAX)) {
			free(names);
			return wsep_fail(err, errlen, "parameter name %u is not NUL-terminated", i);
		}
	}
	*out = names;
	return 0;
}

void wsep_param_names_encode(const struct wsep_param_name *names, uint32_t n, void *out)
{
	uint8_t *r = out;

	memset(out, 0, (size_t)n * WSEP_PARAM_NAME_RECORD);
	for (uint32_t i = 0; i < n; i++, r += WSEP_PARAM_NAME_RECORD) {
		const struct wsep_param_name *e = &names[i];

		put_le64(r + PNM_OFFSET, e->offset);
		put_le64(r + PNM_ELEMS, e->elems);
		put_le32(r + PNM_RANK, e->rank);
		put_le32(r + PNM_FLAGS, e->flags);
		for (int d = 0; d < WSEP_GRAPH_MAX_RANK; d++)
			put_le64(r + PNM_DIMS + 8 * d, e->dims[d]);
		memcpy(r + PNM_NAME, e->name, strnlen(e->name, WSEP_PARAM_NAME_MAX - 1));
		memcpy(r + PNM_TORCH_NAME, e->torch_name,
		       strnlen(e->torch_name, WSEP_PARAM_NAME_MAX - 1));
	}
}
