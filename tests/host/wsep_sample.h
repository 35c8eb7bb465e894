/* SPDX-License-Identifier: GPL-2.0-only */
/* A small, valid program for the .wsep tests, and a helper to re-seal a
 * modified file's checksums (so a test can reach the semantic checks).
 */
#ifndef WSEP_SAMPLE_H
#define WSEP_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "wse/wsep.h"

/* Fills @p with a 784-32-10 pipelined program on an 8x4 wafer; with
 * @with_weights, initial weights from the seed. Release with
 * wsep_sample_release().
 */
void wsep_sample_program(struct wsep_program *p, int with_weights);
void wsep_sample_release(struct wsep_program *p);
/*
 * A graph program of two units on the same wafer: 4 inputs, gemm and ReLU
 * to 3, gemm to 2 classes, batch 4, weights given. Release it the same way.
 */
void wsep_sample_graph_program(struct wsep_program *p);

/* Recomputes every section CRC, the table CRC and the header CRC, using
 * the byte layout of Documentation/wsep-format.rst. Does nothing to a
 * file too short or whose table does not fit.
 */
void wsep_sample_reseal(uint8_t *buf, size_t len);

#endif
