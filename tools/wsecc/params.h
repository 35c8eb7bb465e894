/* SPDX-License-Identifier: GPL-2.0-only */
/* wsecc --params FILE: the keys wsecc takes, as its options (params.c). */
#ifndef WSECC_PARAMS_H
#define WSECC_PARAMS_H

/*
 * If @argv has --params FILE, *@out_argv is FILE's settings as wsecc
 * options followed by @argv's own (which win); else @argv itself.
 * Return: 0, or wsecc's exit status after a message.
 */
int wsecc_params_argv(int argc, char **argv, int *out_argc, char ***out_argv);

#endif /* WSECC_PARAMS_H */
