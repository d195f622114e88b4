// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * serve_preempt.c - each series' waits for the CPU by whose task ran
 * instead, from the kernel's per-slot counts: one pass over the slots, a
 * map lookup each, their sums handed to the exporter.
 */
#include <string.h>

#include "cli/serve_preempt.h"
#include "export/export.h"
#include "source/tracer.h"

void lw_serve_preempted(struct lw_tracer *t, struct lw_export *x, const int *series_of)
{
	static struct lw_preempt_by sum[LW_MAX_TARGETS]; /* tracing thread only */
	bool any[LW_MAX_TARGETS] = {};
	int n = lw_tracer_targets(t);

	memset(sum, 0, sizeof(sum));
	for (int slot = 0; slot < n && slot < LW_MAX_TARGETS; slot++) {
		int series = series_of[slot];
		struct lw_preempt_by b;

		if (series < 0 || series >= LW_MAX_TARGETS ||
		    lw_tracer_target_preempted(t, slot, &b))
			continue;
		for (int k = 0; k < LW_BY_MAX; k++)
			sum[series].ns[k] += b.ns[k];
		any[series] = true;
	}
	for (int series = 0; series < LW_MAX_TARGETS; series++)
		if (any[series])
			lw_export_series_preempted(x, series, &sum[series]);
}

void lw_serve_preempted_retire(struct lw_tracer *t, struct lw_export *x, int slot, int series)
{
	struct lw_preempt_by b;

	if (!lw_tracer_target_preempted(t, slot, &b))
		lw_export_preempted_retire(x, series, &b);
}
