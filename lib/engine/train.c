// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whole training and evaluation steps for layer pipelined execution, built
 * only from the per-layer entry points and engine_params_update_layer, so
 * that weight streaming (the same calls, spread between device and host)
 * gives bit-identical results.
 */
#include <errno.h>

#include "wse/engine.h"

static bool params_fit(const struct engine_workspace *ws,
		       const struct engine_params *params)
{
	return engine_shape_equal(engine_workspace_shape(ws), &params->shape);
}

int engine_train_step(struct engine_workspace *ws, struct engine_params *params,
		      const struct engine_optim *opt, uint64_t t,
		      const uint8_t *px, const uint8_t *labels, size_t batch,
		      struct engine_loss_result *res)
{
	size_t layers;
	int err;

	if (!ws || !params || !res || !params_fit(ws, params))
		return -EINVAL;
	if (!opt || opt->kind != params->kind || !t)
		return -EINVAL;
	err = engine_optim_check(opt);
	if (err)
		return err;
	layers = params->shape.layers;
	err = engine_load_pixels(ws, px, batch);
	for (size_t k = 0; !err && k < layers; k++)
		err = engine_forward_layer(ws, k, params->layer[k].w,
					   params->layer[k].b);
	if (!err)
		err = engine_loss(ws, labels, batch, res);
	/* Layer k's update may follow its backward at once: layer k - 1's
	 * backward needs only its own weights.
	 */
	for (size_t k = layers; !err && k-- > 0;) {
		struct engine_layer *l = &params->layer[k];

		err = engine_backward_layer(ws, k, l->w, 0.0f, l->dw, l->db);
		if (!err)
			err = engine_params_update_layer(params, opt, t, k);
	}
	return err;
}

int engine_train_step_scaled(struct engine_workspace *ws, struct engine_params *params,
			     const struct engine_optim *opt, uint64_t t, const uint8_t *px,
			     const uint8_t *labels, size_t batch,
			     struct engine_loss_scaler *scaler,
			     struct engine_loss_result *res, bool *stepped)
{
	size_t layers;
	bool finite = true;
	int err;

	if (!ws || !params || !res || !scaler || !stepped || !params_fit(ws, params))
		return -EINVAL;
	if (!opt || opt->kind != params->kind || !t)
		return -EINVAL;
	err = engine_optim_check(opt);
	if (err)
		return err;
	layers = params->shape.layers;
	err = engine_load_pixels(ws, px, batch);
	for (size_t k = 0; !err && k < layers; k++)
		err = engine_forward_layer(ws, k, params->layer[k].w, params->layer[k].b);
	if (!err)
		err = engine_loss_scaled(ws, labels, batch, scaler->scale, res);
	/* Every layer's gradient before any update: an overflow skips them all. */
	for (size_t k = layers; !err && k-- > 0;) {
		struct engine_layer *l = &params->layer[k];

		err = engine_backward_layer(ws, k, l->w, 0.0f, l->dw, l->db);
		if (!err) {
			finite &= engine_unscale(l->dw, l->in * l->out, scaler->scale);
			finite &= engine_unscale(l->db, l->out, scaler->scale);
		}
	}
	if (err)
		return err;
	*stepped = engine_loss_scaler_update(scaler, !finite);
	for (size_t k = 0; *stepped && !err && k < layers; k++)
		err = engine_params_update_layer(params, opt, t, k);
	return err;
}

int engine_evaluate(struct engine_workspace *ws,
		    const struct engine_params *params, const uint8_t *px,
		    const uint8_t *labels, size_t batch,
		    struct engine_loss_result *res, uint8_t *pred)
{
	size_t layers;
	const float *logits;
	int err;

	size_t classes;

	if (!ws || !params || !params_fit(ws, params))
		return -EINVAL;
	/* Labels and a result, or no labels and predictions, or both. */
	if (labels ? !res : !pred)
		return -EINVAL;
	layers = params->shape.layers;
	classes = params->shape.width[layers];
	err = engine_load_pixels(ws, px, batch);
	for (size_t k = 0; !err && k < layers; k++)
		err = engine_forward_layer(ws, k, params->layer[k].w,
					   params->layer[k].b);
	if (err)
		return err;
	logits = engine_activation(ws, layers);
	if (labels) {
		struct engine_loss_result r;

		err = engine_xent_forward(logits, labels, batch, classes, &r.loss,
					  &r.correct);
		if (err)
			return err;
		*res = r;
	}
	return pred ? engine_argmax(logits, batch, classes, pred) : 0;
}
