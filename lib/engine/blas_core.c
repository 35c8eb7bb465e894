// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * OpenBLAS kernel selection. Debian's OpenBLAS is built with DYNAMIC_ARCH:
 * when the library loads it picks the kernels for the CPU model it finds.
 * A CPU newer than the library (0.3.21 does not know Sapphire or Emerald
 * Rapids) gets the generic Prescott (SSE3) kernels, five times slower than
 * the AVX-512 ones on the same machine. The choice can be forced only
 * before the library loads, through OPENBLAS_CORETYPE, so a program that
 * wants the right kernels sets it and executes itself again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cblas.h>

#include "wse/engine.h"

char *openblas_get_corename(void);	/* see threads.c on redeclaring */

const char *engine_blas_core(void)
{
	return openblas_get_corename();
}

/* Cores without AVX2: what OpenBLAS falls back to, or older CPUs. */
static bool is_pre_avx2_core(const char *core)
{
	static const char *const old[] = {
		"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
		"Sandybridge", "Atom", "Katmai", "Coppermine", "Northwood",
		"Banias",
	};

	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++)
		if (!strcasecmp(core, old[i]))
			return true;
	return false;
}

const char *engine_blas_better_core(void)
{
	const char *core = engine_blas_core();

	if (!core || !is_pre_avx2_core(core))
		return NULL;
	/* GCC's checks include the OS's support (XCR0) for the registers. */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
	return NULL;
}

int engine_blas_reexec(const char *path, char *const argv[])
{
	const char *core = engine_blas_better_core();

	/* Never override a choice someone made, and so never loop. */
	if (!core || getenv("OPENBLAS_CORETYPE"))
		return 0;
	if (!path || !argv || !argv[0])
		return -EINVAL;
	if (setenv("OPENBLAS_CORETYPE", core, 1))
		return -errno;
	execv(path, argv);
	unsetenv("OPENBLAS_CORETYPE");
	return -errno;
}
