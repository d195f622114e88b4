// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * latwhy - explain where a live process's slow requests spend their time.
 *
 * main only parses and dispatches: `latwhy check ...` to the node checker,
 * everything else to the live tracer.
 */
#include <stdio.h>
#include <string.h>

#include "cli/check.h"
#include "cli/opts.h"
#include "source/tracer.h"

int main(int argc, char **argv)
{
	struct lw_opts o;
	char err[256];
	int ret;

	if (argc > 1 && !strcmp(argv[1], "check"))
		return lw_check_main(argc - 1, argv + 1);
	ret = lw_opts_parse(&o, argc, argv, err, sizeof(err));
	if (ret == 1) {
		lw_opts_usage(stdout);
		return 0;
	}
	if (ret) {
		fprintf(stderr, "latwhy: %s (see latwhy --help)\n", err);
		return 2;
	}
	return lw_trace_run(&o);
}
