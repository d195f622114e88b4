// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * latwhy - explain where a live process's slow requests spend their time.
 *
 * main only dispatches: a command is one row here and its cmd_<name>.c.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"

/* The Makefile sets these for main.o (LW_VERSION for the whole build). */
#ifndef LW_COMMIT
#define LW_COMMIT "unknown"
#endif
#ifndef LW_PKG_VERSION
#define LW_PKG_VERSION ""
#endif

/* The first row is the default command: latwhy -p PID ... traces. */
static const struct lw_cmd cmds[] = {
	{"trace", "trace a live process: where its slow requests' time goes", lw_cmd_trace},
	{"check", "judge the node's latency switches (no BPF, no root needed)", lw_cmd_check},
	{"record", "capture a live process's records into a file for a ticket", lw_cmd_record},
	{"report", "read a capture anywhere: summary, evidence, findings (no root)", lw_cmd_report},
	{"diff", "two captures side by side: what differs, and what explains it", lw_cmd_diff},
	{"serve", "trace until stopped, serving the metrics to Prometheus", lw_cmd_serve},
};

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		if (LW_PKG_VERSION[0])
			printf("latwhy %s (package %s, commit %s)\n", LW_VERSION, LW_PKG_VERSION,
			       LW_COMMIT);
		else
			printf("latwhy %s (commit %s)\n", LW_VERSION, LW_COMMIT);
		return 0;
	}
	return lw_cmd_dispatch(cmds, sizeof(cmds) / sizeof(cmds[0]), argc, argv);
}
