/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * health.h - serve's liveness, GET /healthz: is the tracing loop still
 * running and ticking? An HTTP server that answers says nothing about
 * that: its thread goes on when the tracer has stopped, failed or hangs.
 *
 * The tracing thread stamps every publish of the exporter (each tick, each
 * attach and detach of the duty cycle); the HTTP thread compares the last
 * stamp with its own clock. No thread of its own, no lock: two atomics
 * written in an order the reader reads them back in (health.c).
 */
#ifndef LW_EXPORT_HEALTH_H
#define LW_EXPORT_HEALTH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Ticks older than this many intervals: the loop is not ticking. */
#define LW_HEALTH_INTERVALS 3
/* Before the first tick serve loads and verifies its BPF programs (1 to 3 s
 * on the 2-vCPU development VM): this long is not yet a failure. */
#define LW_HEALTH_START_NS (30ULL * 1000000000ULL)

enum lw_health_state {
	LW_HEALTH_NONE,	    /* no tracer set up (the endpoint alone) */
	LW_HEALTH_RUNNING,  /* judged by the age of the last tick */
	LW_HEALTH_EXITED,   /* the tracer ended: every -p target exited */
	LW_HEALTH_FAILED,   /* the tracer loop ended with an error */
	LW_HEALTH_STOPPING, /* stopped by SIGINT or SIGTERM */
};

struct lw_health {
	/* set by lw_health_setup() before the HTTP thread reads them */
	__u64 start_ns, interval_ns, gap_ns;
	_Atomic int state; /* enum lw_health_state */
	_Atomic int err;   /* LW_HEALTH_FAILED's, positive errno */
	_Atomic __u64 beat_ns;
	_Atomic bool detached; /* the last beat was the duty cycle's detach */
};

struct lw_export;

/* The exporter's; it beats at each publish. */
struct lw_health *lw_health_of(struct lw_export *x);

/*
 * A tracer runs from now (CLOCK_MONOTONIC), ticking every interval_ns, on a
 * duty cycle of on_ns of every every_ns (every_ns 0: always attached):
 * while detached no tick comes for every_ns - on_ns, and that is healthy.
 * Before the HTTP thread starts.
 */
void lw_health_setup(struct lw_health *h, __u64 interval_ns, __u64 on_ns, __u64 every_ns);

/* Tracing thread: a publish at now_ns (0: now), detached or not. */
void lw_health_beat(struct lw_health *h, __u64 now_ns, bool detached);

/* Tracing thread: the loop ended, with err (-errno) or not; exited when
 * every target exited. */
void lw_health_stopped(struct lw_health *h, int err, bool exited);

/* Healthy at now_ns (0 or a one-line reason, no newline, in why), or not
 * (-1, the reason in why). Any thread. */
int lw_health_check(struct lw_health *h, __u64 now_ns, char *why, size_t len);

__u64 lw_health_now_ns(void);

#endif /* LW_EXPORT_HEALTH_H */
