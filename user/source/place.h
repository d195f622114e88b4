/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * place.h - keep latwhy off its target's CPUs, so that the tracer is never
 * the latency it reports.
 */
#ifndef LW_PLACE_H
#define LW_PLACE_H

#include <stdbool.h>

#include "node/node.h" /* struct lw_cpuset */

/* Nice value latwhy traces at when it has to share the target's CPUs, and
 * the step it climbs back by each tick it falls behind (records dropped, or
 * a tick late), down to nice 0. */
#define LW_PLACE_NICE	   19
#define LW_PLACE_NICE_STEP 6

struct lw_place {
	struct lw_cpuset target; /* CPUs any thread of the target may run on */
	struct lw_cpuset self;	 /* CPUs latwhy now runs on */
	bool shared;		 /* no CPU was left outside the target's */
	int nice;		 /* while shared: the nice value it traces at */
};

/*
 * Restrict the calling process (before it starts any thread) to the CPUs it
 * may use that none of the threads of the n processes pids may. When there
 * are none it stays where it is and sets p->shared. Returns 0 or -errno.
 */
int lw_place_self(const int *pids, int n, struct lw_place *p);

/* Shared CPUs only: trace at nice LW_PLACE_NICE from now on. Loading and
 * attaching run before it at the caller's priority: at nice 19 beside two
 * busy tasks, attaching outlasted a 4 s trace. Returns 0 or -errno. */
int lw_place_yield(struct lw_place *p);

/* Shared CPUs only: latwhy fell behind (behind is true): climb
 * LW_PLACE_NICE_STEP towards nice 0. Returns true when the nice value
 * changed. */
bool lw_place_keep_up(struct lw_place *p, bool behind);

#endif /* LW_PLACE_H */
