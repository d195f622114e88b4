/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * escalate.h - when serve's always-attached tier calls in full tracing: a
 * pure rule over one target's request and slow-request counts, stepped
 * every LW_ESC_STEP_NS.
 *
 * Baselines: the target's own slow share (slow requests over requests) and
 * mean latency over a 1 s window, and how much each wanders (their spread,
 * a standard deviation), averaged over the last tau_ns of steps in which it
 * was not raised: one set while the cheap tier alone is attached, one while
 * full tracing is too. Full tracing slows every request (~10% under load):
 * judged against the first set, it would hold itself up for as long as it
 * is attached. A step in which full tracing came or went is neither judged
 * nor learnt, and the window starts again after it.
 *
 * Rise: over a full window, once the baseline has seen min_req requests in
 * min_steps steps and the window has min_slow slow requests, the share is
 * factor times the baseline's, floor above it and spread_k spreads above
 * it; or the mean is mean_factor times, mean_floor_ns and spread_k spreads
 * above its own. The share sees a tail that grows; the mean a whole
 * distribution that shifts (a CPU hog halving a busy server's CPU makes
 * every request slower, few of them past a p99 that follows them up). The
 * spread keeps a target whose latency always wanders (an event loop's
 * batches, a benchmark's reconnects) from calling in full tracing on its
 * own noise; for the share, at most spread_max over it (a trickle of
 * requests has a share that swings from 0 to 1 and back). Until the
 * baseline has seen learn_steps windows, its spread is not known: taken as
 * spread_max for the share and the mean itself for the mean (a rise of 10
 * points or a doubling), so that a target's first bursts are not an
 * incident. Only the cheap tier alone rises: a window with full tracing
 * attached by a duty stretch or another target's rise is learnt into full
 * tracing's baseline or let be. Full tracing sees that time already, and
 * its own bursts are what rose there: the nginx recording replayed twice
 * rose three times in its second pass, all in such windows. An incident
 * that starts in a duty stretch rises at the cheap tier's first window
 * after it, about 1.25 s after the stretch. Spikes: a rise whose windows
 * rose for spike_ns at most, held the least and fallen, is a spike, and
 * the largest of the last spike_keep_ns is the target's own: a window over
 * the bars whose highest step is at or under that spike's in both share
 * and mean (a step of 250 ms: a spike's level, whatever part of it the
 * sliding window holds yet) rises only once it has stayed over them 2 s (a
 * spike of a second is in the sliding window 1.75 s). An incident past
 * its spikes still rises at its first window, one like them about a second
 * later. (A serve warmed up on the bench's nginx twins rose 9 times in 8
 * cycles with this gate as without it: those rises are not such spikes.)
 *
 * Hold: raised while the rise lasts and, after its last window,
 * hold_min_ns plus as long as it had lasted, at most hold_ns: a spike of a
 * second on a steady load (a benchmark's reconnects) holds full tracing
 * 3 s, an incident of 7 s or more 10 s. Decay: then it falls; or after
 * max_ns raised in a row, when the level it stays at is the target's new
 * normal, which becomes its baseline: the cheap tier's, from its next
 * window without full tracing.
 *
 * Check: full tracing's own cost is not a constant. On a server that
 * shares its CPU it comes in bursts (the server preempted in a batch it
 * used to finish): 1 s windows at 2-8x the cheap tier's mean for seconds
 * on end, then at its level again, which no bar tells from an incident;
 * held on them, a rise on a steady load kept full tracing 24 s, and 90 s
 * in the bench. Only the cheap tier alone sees without that cost: once a
 * rise has held check_ns on full tracing's windows since the cheap tier
 * alone last saw it, full tracing is let go (CHECK) and the next window of
 * the cheap tier alone judges. Still over the bars: raised again (AGAIN),
 * the same rise (max_ns counts on), the next check twice as far; else it
 * falls. A check's gap: a mixed step and a window, about 1.25 s.
 */
#ifndef LW_ESCALATE_H
#define LW_ESCALATE_H

#include <stdbool.h>
#include <linux/types.h>

#define LW_ESC_STEP_NS (250ULL * 1000000ULL)
#define LW_ESC_WINDOW  4 /* steps: 1 s */

struct lw_esc_conf {
	__u64 min_slow;		  /* slow requests in the window */
	__u64 min_req;		  /* requests the baseline has seen before it judges */
	unsigned int min_steps;	  /* ... in as many windows at least */
	double factor;		  /* the window's share over the baseline's ... */
	double floor;		  /* ... and at least this much above it */
	double mean_factor;	  /* or the window's mean latency over the baseline's ... */
	__u64 mean_floor_ns;	  /* ... and at least this much above it */
	double spread_k;	  /* both: and this many of its spreads above it */
	double spread_max;	  /* the share's spreads: at most this much */
	unsigned int learn_steps; /* before as many windows, the spreads are
				   * taken as spread_max and the mean itself */
	__u64 tau_ns;		  /* the baseline's memory */
	__u64 hold_min_ns;	  /* raised this long after the last rising window, */
	__u64 hold_ns;		  /* ... plus the rise's length, at most this long */
	__u64 max_ns;		  /* raised at most this long in a row */
	__u64 check_ns;		  /* held on full tracing's windows this long: a check */
	__u64 spike_ns;		  /* a rise whose windows rose this long at most: a spike */
	__u64 spike_keep_ns;	  /* a spike's level remembered this long */
	double timed_rate;	  /* requests timed a second, about (lw_esc_shift()) */
};

/* serve's: 5 slow in 1 s, and a share 3x, 2 points and 6 spreads (10 points
 * at most) over the baseline's or a mean 1.5x, 10 us and 6 spreads over it,
 * the spreads learnt over the first 30 s; a minute's memory, held 3-10 s, at
 * most 5 minutes in a row, checked 20 s into a rise, then 40 s, 80 s...;
 * a spike's windows rise 1 s at most, its level kept 10 minutes; about 1000
 * requests a second timed. */
extern const struct lw_esc_conf lw_esc_defaults;

/* What was attached over a step. */
enum lw_esc_tier {
	LW_ESC_WATCH = 0, /* the cheap tier alone */
	LW_ESC_FULL,	  /* full tracing too, all of the step */
	LW_ESC_MIXED,	  /* full tracing came or went in it */
};

/* A baseline of one tier: means and variances of the window's share and
 * mean latency (ns). */
struct lw_esc_base {
	double share, share_var;
	double mean, mean_var;
	__u64 req;
	unsigned int steps;
};

/* One target's state; zeroed (= {}) before its first step. */
struct lw_esc {
	__u64 req[LW_ESC_WINDOW], slow[LW_ESC_WINDOW], first[LW_ESC_WINDOW];
	__u64 lat[LW_ESC_WINDOW];
	unsigned int pos, fill;
	enum lw_esc_tier tier;	    /* the window's */
	struct lw_esc_base base[2]; /* by enum lw_esc_tier: watch, full */
	bool raised;
	bool checking;	 /* full tracing let go: the cheap tier alone judges */
	bool renormal;	 /* given back with full tracing attached: the cheap
			  * tier's next window is the target's normal */
	__u64 raised_ns; /* since when */
	__u64 high_ns;	 /* the last window that rose */
	__u64 judged_ns; /* ... and the last that rose with no full tracing in it */
	__u64 check_ns;	 /* the next check this long after judged_ns */
	/* the rising window's highest step's share and mean; the largest
	 * spike's since spike_at; steps over the bars but under it, in a row */
	double rise_share, rise_mean;
	double spike_share, spike_mean;
	__u64 spike_at;
	unsigned int pend;
};

enum lw_esc_change {
	LW_ESC_SAME = 0,
	LW_ESC_RISE,  /* raised now: *since_ns is the first slow request of the window */
	LW_ESC_FALL,  /* the rise is over (hold ended, or max_ns) */
	LW_ESC_CHECK, /* not raised while the cheap tier alone judges the rise */
	LW_ESC_AGAIN, /* raised again: the check saw the rise still there */
};

/* One step's counts: req requests timed since the last step, their latency
 * lat_ns in all, slow of them slow, the first of those at first_ns (0: none
 * or not known), and what was attached meanwhile. */
struct lw_esc_counts {
	__u64 req, lat_ns, slow, first_ns;
	enum lw_esc_tier tier;
};

/* One step at now. */
enum lw_esc_change lw_esc_step(const struct lw_esc_conf *c, struct lw_esc *e, __u64 now,
			       const struct lw_esc_counts *n, __u64 *since_ns);

/*
 * The cheap tier times 1 in 2^shift of a target's requests and counts them
 * all: timing all of them cost nginx's ~32 us requests 1.9% of their
 * throughput, and the rule needs a few hundred a second, not all. The shift
 * that times about timed_rate of rate requests a second, from cur: kept
 * while cur times between half and twice that (a rate that wanders moves
 * no weights), at most max_shift.
 */
unsigned int lw_esc_shift(const struct lw_esc_conf *c, double rate, unsigned int cur,
			  unsigned int max_shift);

#endif /* LW_ESCALATE_H */
