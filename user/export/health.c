// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * health.c - the tracing loop's liveness, for GET /healthz (health.h).
 *
 * Two atomics, beat_ns and detached, are written by the tracing thread
 * beat first, then detached; the HTTP thread reads detached first, then
 * beat (both sequentially consistent). A reader that sees a detach's flag
 * may see the beat before it, a fresh tick: the detached allowance covers
 * it. A reader that sees an attach's cleared flag sees the attach's beat,
 * never the detach's old one: a re-attach is never judged stale.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "export/export_int.h"
#include "export/health.h"

__u64 lw_health_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct lw_health *lw_health_of(struct lw_export *x)
{
	return &x->health;
}

void lw_health_setup(struct lw_health *h, __u64 interval_ns, __u64 on_ns, __u64 every_ns)
{
	h->start_ns = lw_health_now_ns();
	h->interval_ns = interval_ns;
	h->gap_ns = every_ns > on_ns ? every_ns - on_ns : 0;
	atomic_store(&h->state, LW_HEALTH_RUNNING);
}

void lw_health_beat(struct lw_health *h, __u64 now_ns, bool detached)
{
	atomic_store(&h->beat_ns, now_ns ? now_ns : lw_health_now_ns());
	atomic_store(&h->detached, detached);
}

void lw_health_stopped(struct lw_health *h, int err, bool exited)
{
	int state = LW_HEALTH_STOPPING;

	if (err)
		state = LW_HEALTH_FAILED;
	else if (exited)
		state = LW_HEALTH_EXITED;
	atomic_store(&h->err, -err);
	atomic_store(&h->state, state);
}

int lw_health_check(struct lw_health *h, __u64 now_ns, char *why, size_t len)
{
	int state = atomic_load(&h->state);
	bool detached = atomic_load(&h->detached);
	__u64 beat = atomic_load(&h->beat_ns), limit, age;

	switch (state) {
	case LW_HEALTH_NONE:
		snprintf(why, len, "no tracer: serve has not started one");
		return -1;
	case LW_HEALTH_EXITED:
		snprintf(why, len, "tracer stopped: every target exited");
		return -1;
	case LW_HEALTH_FAILED:
		snprintf(why, len, "tracer failed: %s", strerror(atomic_load(&h->err)));
		return -1;
	case LW_HEALTH_STOPPING:
		snprintf(why, len, "tracer stopped: serve is stopping");
		return -1;
	}
	if (!beat) { /* loading its programs */
		age = now_ns > h->start_ns ? now_ns - h->start_ns : 0;
		if (age <= LW_HEALTH_START_NS) {
			snprintf(why, len, "starting");
			return 0;
		}
		snprintf(why, len, "no tick in the %.1f s since serve started", age / 1e9);
		return -1;
	}
	age = now_ns > beat ? now_ns - beat : 0;
	limit = LW_HEALTH_INTERVALS * h->interval_ns + (detached ? h->gap_ns : 0);
	if (age <= limit) {
		snprintf(why, len, detached ? "detached by the duty cycle" : "ticking");
		return 0;
	}
	if (detached)
		snprintf(why, len,
			 "not attached again: detached %.1f s ago by the duty cycle, for %.1f s",
			 age / 1e9, h->gap_ns / 1e9);
	else
		snprintf(why, len, "ticks stale: the last one %.1f s ago, the interval %.1f s",
			 age / 1e9, h->interval_ns / 1e9);
	return -1;
}
