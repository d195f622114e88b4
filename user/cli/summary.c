// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* summary.c - engine summary -> advice -> output, for trace and report. */
#include <stdio.h>
#include <string.h>

#include "advice/explain.h"
#include "cli/summary.h"

void lw_report_findings(struct lw_engine *e, const char *root, int pid, struct lw_summary *s,
			struct lw_findings *fs)
{
	int err;

	memset(fs, 0, sizeof(*fs));
	lw_engine_summarize(e, s);
	err = lw_explain(s, root, pid, fs);
	if (err)
		fprintf(stderr, "latwhy: cannot read the node's settings (%s): no findings\n",
			strerror(-err));
}

void lw_report_summary(struct lw_engine *e, struct lw_render *out, const char *root, int pid)
{
	struct lw_findings fs;
	struct lw_summary s;

	lw_report_findings(e, root, pid, &s, &fs);
	lw_render_summary(out, &s, &fs);
	lw_findings_free(&fs);
}
