// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The training streams: the one definition of which streams a training
 * program has and how each is declared. The compiler emits them from
 * here, the firmware binds a loaded program's streams with it, and hosts
 * find the ids they feed and drain with it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "wsep_internal.h"

_Static_assert(WSEP_MAX_LAYERS <= 100 && sizeof("weights.99") <= WSEP_STREAM_NAME_MAX,
	       "a layer's stream name fits the name field");

int wsep_train_stream(const struct wsep_program *p, enum wsep_train_role role, uint32_t layer,
		      struct wsep_stream *out)
{
	bool streaming = p->mode == WSEP_MODE_WEIGHT_STREAMING;
	struct wsep_stream s = { .layer = -1, .unit = WSEP_UNIT_PER_SAMPLE, .elems = 1 };
	const char *name = NULL;
	char full[32];

	switch (role) {
	case WSEP_TRAIN_SAMPLES:
		name = "samples";
		s.dir = WSEP_DIR_HOST_TO_DEVICE;
		s.elem = p->input_type;
		s.elems = p->input_dim;
		break;
	case WSEP_TRAIN_LABELS:
		name = "labels";
		s.dir = WSEP_DIR_HOST_TO_DEVICE;
		s.elem = WSEP_ELEM_I32;
		s.elems = wsep_label_rows(p);
		break;
	case WSEP_TRAIN_LOSSES:
		name = "losses";
		s.dir = WSEP_DIR_DEVICE_TO_HOST;
		s.elem = WSEP_ELEM_F32;
		break;
	case WSEP_TRAIN_PREDICTIONS:
		name = "predictions";
		s.dir = WSEP_DIR_DEVICE_TO_HOST;
		s.elem = WSEP_ELEM_I32;
		s.elems = wsep_label_rows(p);
		break;
	case WSEP_TRAIN_LOGITS:
		/* A graph's every row, for a host that samples from them. */
		if (!p->graph)
			return -ENOENT;
		name = "logits";
		s.dir = WSEP_DIR_DEVICE_TO_HOST;
		s.elem = WSEP_ELEM_F32;
		s.elems = (uint64_t)wsep_label_rows(p) * wsep_classes(p);
		break;
	case WSEP_TRAIN_WEIGHTS:
	case WSEP_TRAIN_GRADS:
		if (layer >= p->num_layers || (role == WSEP_TRAIN_GRADS && !streaming))
			return -ENOENT;
		/*
		 * Pipelined, the weights live on the wafer and weights.K only
		 * names them (PARAMS_READ reads them back). Streaming, they come
		 * in from MemoryX and the gradients go back to it.
		 */
		s.dir = role == WSEP_TRAIN_GRADS || !streaming ? WSEP_DIR_DEVICE_TO_HOST :
								 WSEP_DIR_HOST_TO_DEVICE;
		s.elem = WSEP_ELEM_F32;
		s.layer = (int32_t)layer;
		s.elems = wsep_layer_params(&p->layers[layer]);
		s.unit = WSEP_UNIT_PER_TRANSFER;
		/* At most "weights.63": the name field holds it (WSEP_MAX_LAYERS). */
		snprintf(full, sizeof(full), "%s.%u", role == WSEP_TRAIN_GRADS ? "grads" : "weights",
			 layer);
		name = full;
		break;
	default:
		return -ENOENT;
	}
	memcpy(s.name, name, strnlen(name, sizeof(s.name) - 1));
	*out = s;
	return 0;
}

static void describe(const struct wsep_stream *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s, %s x %llu per %s", wsep_direction_name(s->dir),
		 wsep_elem_name(s->elem), (unsigned long long)s->elems,
		 s->unit == WSEP_UNIT_PER_SAMPLE ? "sample" : "transfer");
}

/* Finds the stream declared as @want; its index in *@at. */
static int bind(const struct wsep_program *p, const struct wsep_stream *want, int *at,
		char *err, size_t errlen)
{
	char have[96], should[96];

	for (uint32_t i = 0; i < p->num_streams; i++) {
		const struct wsep_stream *s = &p->streams[i];

		if (strcmp(s->name, want->name))
			continue;
		if (s->dir != want->dir || s->elem != want->elem || s->elems != want->elems ||
		    s->unit != want->unit || s->layer != want->layer) {
			describe(s, have, sizeof(have));
			describe(want, should, sizeof(should));
			return wsep_fail(err, errlen,
					 "stream %u '%s' is %s; a %s program's '%s' is %s", s->id,
					 s->name, have, wsep_mode_name(p->mode), want->name, should);
		}
		*at = (int)i;
		return 0;
	}
	return wsep_fail(err, errlen, "%s program %s has no stream '%s': not a training program",
			 wsep_mode_name(p->mode), p->model_name, want->name);
}

int wsep_train_streams(const struct wsep_program *p, struct wsep_train_streams *ts, char *err,
		       size_t errlen)
{
	int *fixed[] = { &ts->samples, &ts->labels, &ts->losses, &ts->predictions };
	uint32_t bound = 0;
	struct wsep_stream want;

	memset(ts, -1, sizeof(*ts));
	for (int r = WSEP_TRAIN_SAMPLES; r <= WSEP_TRAIN_PREDICTIONS; r++) {
		wsep_train_stream(p, r, 0, &want);
		if (bind(p, &want, fixed[r], err, errlen))
			return -EINVAL;
		bound++;
	}
	if (!wsep_train_stream(p, WSEP_TRAIN_LOGITS, 0, &want)) {
		if (bind(p, &want, &ts->logits, err, errlen))
			return -EINVAL;
		bound++;
	}
	for (uint32_t k = 0; k < p->num_layers && k < WSEP_MAX_LAYERS; k++) {
		if (!wsep_train_stream(p, WSEP_TRAIN_WEIGHTS, k, &want)) {
			if (bind(p, &want, &ts->weights[k], err, errlen))
				return -EINVAL;
			bound++;
		}
		if (!wsep_train_stream(p, WSEP_TRAIN_GRADS, k, &want)) {
			if (bind(p, &want, &ts->grads[k], err, errlen))
				return -EINVAL;
			bound++;
		}
	}
	/* Names are unique (wsep_read checks), so anything left over is unknown. */
	if (bound != p->num_streams) {
		for (uint32_t i = 0; i < p->num_streams; i++) {
			bool known = false;

			for (int r = WSEP_TRAIN_SAMPLES; r <= WSEP_TRAIN_LOGITS && !known; r++)
				for (uint32_t k = 0; k < p->num_layers && !known; k++)
					known = !wsep_train_stream(p, r, k, &want) &&
						!strcmp(want.name, p->streams[i].name);
			if (!known) {
				wsep_fail(err, errlen,
					  "stream %u '%s' is not a stream of a %s training program",
					  p->streams[i].id, p->streams[i].name,
					  wsep_mode_name(p->mode));
				return -EINVAL;
			}
		}
	}
	return 0;
}
