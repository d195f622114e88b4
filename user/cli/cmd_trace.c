// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_trace.c - `latwhy [trace] -p PID ...`: options to the live tracer. */
#include <stdio.h>

#include "cli/cmd.h"
#include "cli/trace_opts.h"
#include "cli/trace_run.h"

/* Spelled out: a status is a kind of outcome, and so is an exit code. */
static enum lw_exit trace_exit(enum lw_run_status st)
{
	switch (st) {
	case LW_RUN_OK:
		return LW_EXIT_OK;
	case LW_RUN_USAGE:
		return LW_EXIT_USAGE;
	case LW_RUN_FAILED:
		break;
	}
	return LW_EXIT_FAIL;
}

enum lw_exit lw_cmd_trace(int argc, char **argv)
{
	struct lw_opts o;
	char err[256];
	int ret;

	ret = lw_cmd_parsed("trace", lw_trace_opts_parse(&o, argc, argv, err, sizeof(err)), err,
			    lw_trace_usage);
	if (ret >= 0)
		return ret;
	return trace_exit(lw_trace_run(&o));
}
