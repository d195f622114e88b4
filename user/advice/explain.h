/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * explain.h - from a trace summary to findings: the engine's attribution
 * joined with the node's switches, judged by the advisor.
 */
#ifndef LW_EXPLAIN_H
#define LW_EXPLAIN_H

#include "advice/advise.h"
#include "engine/engine.h"
#include "advice/finding.h"
#include "node/node.h"

/* Fill the advisor's facts from an engine summary. */
void lw_explain_facts(const struct lw_summary *s, struct lw_trace_facts *f);

/*
 * Findings for a summary. root is "/" on a live node; pid is the target if
 * it still runs (0 otherwise: node-wide readings only). 0 or -errno.
 */
int lw_explain(const struct lw_summary *s, const char *root, int pid, struct lw_findings *out);
/* The same for a target of npids processes: the first's facts, the CPUs
 * any of them may run on. */
int lw_explain_pids(const struct lw_summary *s, const char *root, const int *pids, int npids,
		    struct lw_findings *out);

/* The target's cgroups' cpu.stat from start, a node read with the target
 * when the trace began (live: before attaching; a capture: its first
 * snapshot), into f's cg_start: the quota finding then counts what the
 * trace added. A node without a target adds nothing. */
void lw_explain_quota_start(struct lw_trace_facts *f, const struct lw_node *start);
/* lw_explain_pids() with such a start reading; start may be NULL. */
int lw_explain_pids_since(const struct lw_summary *s, const struct lw_node *start, const char *root,
			  const int *pids, int npids, struct lw_findings *out);

#endif /* LW_EXPLAIN_H */
