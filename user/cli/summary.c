// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* summary.c - engine summary -> advice -> output, for trace and report. */
#include <stdio.h>
#include <string.h>

#include "advice/explain.h"
#include "cli/summary.h"

void lw_report_findings_pids(struct lw_engine *e, const struct lw_node *start, const char *root,
			     const int *pids, int npids, struct lw_summary *s,
			     struct lw_findings *fs)
{
	int err;

	memset(fs, 0, sizeof(*fs));
	lw_engine_summarize(e, s);
	err = lw_explain_pids_since(s, start, root, pids, npids, fs);
	if (err)
		fprintf(stderr, "latwhy: cannot read the node's settings (%s): no findings\n",
			strerror(-err));
}

void lw_report_findings(struct lw_engine *e, const struct lw_node *start, const char *root, int pid,
			struct lw_summary *s, struct lw_findings *fs)
{
	lw_report_findings_pids(e, start, root, pid ? &pid : NULL, pid ? 1 : 0, s, fs);
}

void lw_report_summary_pids(struct lw_engine *e, struct lw_render *out, const struct lw_node *start,
			    const char *root, const int *pids, int npids)
{
	struct lw_findings fs;
	struct lw_summary s;

	lw_report_findings_pids(e, start, root, pids, npids, &s, &fs);
	lw_render_summary(out, &s, &fs);
	lw_findings_free(&fs);
}

void lw_report_summary(struct lw_engine *e, struct lw_render *out, const struct lw_node *start,
		       const char *root, int pid)
{
	lw_report_summary_pids(e, out, start, root, pid ? &pid : NULL, pid ? 1 : 0);
}
