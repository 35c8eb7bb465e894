// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * OpenBLAS thread control. Debian ships OpenBLAS in pthread, OpenMP and
 * serial variants chosen through alternatives; all export these functions
 * (the serial one ignores the count). They are declared here as well as in
 * OpenBLAS' cblas.h because the cblas.h alternative may be netlib's, which
 * lacks them; identical redeclarations are harmless.
 */
#include <errno.h>

#include <cblas.h>

#include "wse/engine.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);
char *openblas_get_config(void);

int engine_set_threads(int threads)
{
	if (threads < 1)
		return -EINVAL;
	openblas_set_num_threads(threads);
	return openblas_get_num_threads();
}

int engine_threads(void)
{
	return openblas_get_num_threads();
}

const char *engine_blas_threading(void)
{
	switch (openblas_get_parallel()) {
	case 0:
		return "serial";
	case 1:
		return "pthreads";
	case 2:
		return "openmp";
	default:
		return "unknown";
	}
}

const char *engine_blas_config(void)
{
	return openblas_get_config();
}
