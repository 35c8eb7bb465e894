// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-appliance: the launcher, or with --role one of the appliance's
 * parts (roles.h, Documentation/wse-appliance.rst).
 */
#include <stdio.h>
#include <string.h>

#include "roles.h"

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} roles[] = {
	{ "coordinator", coordinator_main },
	{ "memoryx", memoryx_main },
	{ "swarmx", swarmx_main },
	{ "input", input_main },
};

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *role = NULL;

		if (!strncmp(argv[i], "--role=", 7))
			role = argv[i] + 7;
		else if (!strcmp(argv[i], "--role") && i + 1 < argc)
			role = argv[i + 1];
		if (!role)
			continue;
		for (size_t r = 0; r < sizeof(roles) / sizeof(roles[0]); r++)
			if (!strcmp(role, roles[r].name))
				return roles[r].main(argc, argv);
		fprintf(stderr, "%s: --role '%s': coordinator, memoryx, swarmx or input\n", ROLE_PROG,
			role);
		return 2;
	}
	return launcher_main(argc, argv);
}
