/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * escalate.h - when serve's always-attached tier calls in full tracing: a
 * pure rule over one target's request and slow-request counts, stepped
 * every LW_ESC_STEP_NS.
 *
 * Baseline: the target's own slow share (slow requests over requests) and
 * mean latency, averages over the last tau_ns of steps in which it was not
 * raised. Rise: over the last window (1 s), with at least min_slow slow
 * requests in it and once the baseline has seen min_req requests, the
 * share is factor times the baseline's and floor above it, or the mean is
 * mean_factor times the baseline's and mean_floor_ns above it. The share
 * sees a tail that grows; the mean a whole distribution that shifts (a CPU
 * hog halving a busy server's CPU makes every request slower, few of them
 * past a p99 that was set before). Hold: raised while the rise lasts and
 * hold_ns after its last window. Decay: then it falls; or after max_ns
 * raised in a row, when the level it stays at is the target's new normal,
 * which becomes its baseline (full tracing costs ~10%: it is not left on
 * for a shift that does not end).
 */
#ifndef LW_ESCALATE_H
#define LW_ESCALATE_H

#include <stdbool.h>
#include <linux/types.h>

#define LW_ESC_STEP_NS (250ULL * 1000000ULL)
#define LW_ESC_WINDOW  4 /* steps: 1 s */

struct lw_esc_conf {
	__u64 min_slow; /* slow requests in the window */
	__u64 min_req;	/* requests the baseline has seen before it judges */
	double factor;	/* the window's share over the baseline's ... */
	double floor;	/* ... and at least this much above it */
	double mean_factor;  /* or the window's mean latency over the baseline's ... */
	__u64 mean_floor_ns; /* ... and at least this much above it */
	__u64 tau_ns;	/* the baseline's memory */
	__u64 hold_ns;	/* raised this long after the last rising window */
	__u64 max_ns;	/* raised at most this long in a row */
};

/* serve's: 5 slow in 1 s, and a share 3x and 2 points over the baseline's
 * or a mean 1.5x and 50 us over it; a minute's memory, held 10 s, at most 5
 * minutes in a row. */
extern const struct lw_esc_conf lw_esc_defaults;

/* One target's state; zeroed (= {}) before its first step. */
struct lw_esc {
	__u64 req[LW_ESC_WINDOW], slow[LW_ESC_WINDOW], first[LW_ESC_WINDOW];
	__u64 lat[LW_ESC_WINDOW];
	unsigned int pos;
	double base;	  /* slow share; seeded by the first steps */
	double base_mean; /* mean latency, ns */
	__u64 base_req;
	bool raised;
	__u64 raised_ns; /* since when */
	__u64 high_ns;	 /* the last window that rose */
};

enum lw_esc_change {
	LW_ESC_SAME = 0,
	LW_ESC_RISE, /* raised now: *since_ns is the first slow request of the window */
	LW_ESC_FALL, /* the rise is over (hold ended, or max_ns) */
};

/* One step's counts: req requests ended since the last step, their latency
 * lat_ns in all, slow of them slow, the first of those at first_ns (0: none
 * or not known). */
struct lw_esc_counts {
	__u64 req, lat_ns, slow, first_ns;
};

/* One step at now. */
enum lw_esc_change lw_esc_step(const struct lw_esc_conf *c, struct lw_esc *e, __u64 now,
			       const struct lw_esc_counts *n, __u64 *since_ns);

#endif /* LW_ESCALATE_H */
