/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * place.h - keep latwhy off its target's CPUs, so that the tracer is never
 * the latency it reports.
 */
#ifndef LW_PLACE_H
#define LW_PLACE_H

#include <stdbool.h>

#include "node/node.h" /* struct lw_cpuset */

/* Nice value latwhy takes when it has to share the target's CPUs: the lowest
 * priority at which, measured, the ring buffer still keeps up. */
#define LW_PLACE_NICE 19

struct lw_place {
	struct lw_cpuset target; /* CPUs any thread of the target may run on */
	struct lw_cpuset self;	 /* CPUs latwhy now runs on */
	bool shared;		 /* no CPU was left outside the target's: reniced */
};

/*
 * Restrict the calling process (before it starts any thread) to the CPUs it
 * may use that none of pid's threads may. When there are none it stays where
 * it is at nice LW_PLACE_NICE and sets p->shared. Returns 0 or -errno.
 */
int lw_place_self(int pid, struct lw_place *p);

#endif /* LW_PLACE_H */
