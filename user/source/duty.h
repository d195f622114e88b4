/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * duty.h - when serve's full tracing is attached: the duty cycle (serve
 * --sample X/Y: attached for X of every Y, detached in between, so that the
 * target pays nothing then), and, with the always-attached tier
 * (bpf/watch.bpf.h), whenever the escalation rule (engine/escalate.h) sees
 * a target's slow requests rise. The maps keep their contents: counters go
 * on where they were at the next attach.
 */
#ifndef LW_DUTY_H
#define LW_DUTY_H

#include <stdbool.h>
#include <linux/types.h>

struct lw_tracer;

struct lw_duty {
	__u64 on_ns;	/* X: attached this long ... */
	__u64 every_ns; /* ... of every Y; 0: always attached */
	bool escalate;	/* and on a rise the always-attached tier sees */
};

#define LW_DUTY_NEVER (~0ULL)
/* after a failed attach, full tracing is tried again this much later */
#define LW_DUTY_RETRY_NS (10ULL * 1000000000ULL)

/*
 * The schedule, a pure function: at now (CLOCK_MONOTONIC ns), of a cycle
 * that began at epoch, attached ([epoch + kY, epoch + kY + X)) or not; the
 * time of the next change in *next (LW_DUTY_NEVER when always attached).
 * Before epoch it is detached until epoch.
 */
bool lw_duty_at(const struct lw_duty *d, __u64 epoch, __u64 now, __u64 *next);

/* A change of full tracing: attached or detached at now_ns; attached for a
 * rise (escalated), delay_ns after the rise's first slow request. */
struct lw_duty_change {
	bool attached;
	bool escalated;
	__u64 now_ns;
	__u64 delay_ns;
};

/* Told of every change. */
typedef void (*lw_duty_fn)(void *ctx, const struct lw_duty_change *c);

/*
 * Run t on duty d from epoch (one epoch for every tracer of a serve, so a
 * restarted target keeps the phase); fn, if not NULL, is told at the start
 * of lw_tracer_run(), at each change and at its end (detached). Without a
 * call, a tracer stays attached and tells nobody.
 */
void lw_tracer_set_duty(struct lw_tracer *t, const struct lw_duty *d, __u64 epoch, lw_duty_fn fn,
			void *ctx);

#endif /* LW_DUTY_H */
