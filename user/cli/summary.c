// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* summary.c - engine summary -> advice -> output, for trace and report. */
#include <stdio.h>
#include <string.h>

#include "advice/explain.h"
#include "cli/summary.h"

void lw_report_summary(struct lw_engine *e, struct lw_render *out, const char *root, int pid)
{
	lw_report_summary_pids(e, out, root, pid ? &pid : NULL, pid ? 1 : 0);
}

void lw_report_summary_pids(struct lw_engine *e, struct lw_render *out, const char *root,
			    const int *pids, int npids)
{
	struct lw_findings fs = {};
	struct lw_summary s;
	int err;

	lw_engine_summarize(e, &s);
	err = lw_explain_pids(&s, root, pids, npids, &fs);
	if (err)
		fprintf(stderr, "latwhy: cannot read the node's settings (%s): no findings\n",
			strerror(-err));
	lw_render_summary(out, &s, &fs);
	lw_findings_free(&fs);
}
