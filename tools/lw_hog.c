// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lw_hog - busy-loop on one CPU for a while: scheduler interference.
 *
 *   lw_hog -C CPU -d SECONDS
 *
 * Runs at nice 0 (so it competes with the server as an equal CFS/EEVDF task)
 * with comm "lw_hog", which is the name latwhy should blame.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define LAB_PROG "lw_hog"
#include "lab.h"

static void usage(void)
{
	printf("usage: lw_hog -C CPU -d SECONDS\n"
	       "  busy-loop pinned to CPU at nice 0 for SECONDS (comm lw_hog)\n");
}

int main(int argc, char **argv)
{
	long secs;
	double end;

	lab_cpu_secs_pinned(argc, argv, usage, &secs);
	/* An inherited nice value would make this a weaker hog than intended. */
	if (setpriority(PRIO_PROCESS, 0, 0))
		fprintf(stderr, "lw_hog: cannot set nice 0: %s\n", strerror(errno));
	prctl(PR_SET_NAME, "lw_hog", 0, 0, 0);

	end = now_s() + secs;
	while (now_s() < end) {
		/* The clock read is a vDSO call, cheap enough to poll in a spin. */
		for (volatile int i = 0; i < 100000; i++)
			;
	}
	return 0;
}
