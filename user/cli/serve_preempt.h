/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * serve_preempt.h - `latwhy serve`'s latwhy_preempted_seconds_total: the
 * kernel's per-slot counts of whose task ran while a target waited for the
 * CPU (lw_tracer_target_preempted()), summed into each slot's series for
 * the exporter (export/preempt.c).
 */
#ifndef LW_SERVE_PREEMPT_H
#define LW_SERVE_PREEMPT_H

struct lw_tracer;
struct lw_export;

/* Before each tick: each series' counts, the sum of its slots' (series_of
 * by slot; -1 none). */
void lw_serve_preempted(struct lw_tracer *t, struct lw_export *x, const int *series_of);
/* A slot that leaves its series (a pod's container summed under
 * pod="other", gone): what it counted kept in the series. */
void lw_serve_preempted_retire(struct lw_tracer *t, struct lw_export *x, int slot, int series);

#endif /* LW_SERVE_PREEMPT_H */
