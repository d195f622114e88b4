/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* summary.h - the end of a trace or a report: summary, findings, printed. */
#ifndef LW_CLI_SUMMARY_H
#define LW_CLI_SUMMARY_H

#include "engine/engine.h"
#include "node/node.h"
#include "output/render.h"

/* The engine's summary with the findings of the node below root (the live
 * node "/", or a capture's snapshot) for pid (0: it exited, node-wide only),
 * printed on out. start, the node as the trace began (NULL: not read), lets
 * the quota finding count what the trace added to the kernel's counters. A
 * node that cannot be read is said, and the summary still printed. */
void lw_report_summary(struct lw_engine *e, struct lw_render *out, const struct lw_node *start,
		       const char *root, int pid);
/* The same summary and findings, unprinted (for printers that need both);
 * fs is freed by the caller. */
void lw_report_findings(struct lw_engine *e, const struct lw_node *start, const char *root, int pid,
			struct lw_summary *s, struct lw_findings *fs);
/* The same for a target of npids processes (advice/explain.h). */
void lw_report_findings_pids(struct lw_engine *e, const struct lw_node *start, const char *root,
			     const int *pids, int npids, struct lw_summary *s,
			     struct lw_findings *fs);
void lw_report_summary_pids(struct lw_engine *e, struct lw_render *out, const struct lw_node *start,
			    const char *root, const int *pids, int npids);

#endif /* LW_CLI_SUMMARY_H */
