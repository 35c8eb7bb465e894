/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/layers.h - the most layers a program has: one number for the .wsep
 * format (WSEP_MAX_LAYERS), the compiler (WSECC_MAX_LAYERS), the engine
 * and the firmware that runs it (ENGINE_MAX_LAYERS) and MemoryX, so that
 * every program the format can describe is one the device runs.
 */
#ifndef WSE_LAYERS_H
#define WSE_LAYERS_H

#define WSE_MAX_LAYERS	64

#endif /* WSE_LAYERS_H */
