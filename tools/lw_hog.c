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
	long cpu = -1, secs = -1;
	cpu_set_t set;
	double end;
	int o;

	while ((o = getopt(argc, argv, ":C:d:h")) != -1) {
		switch (o) {
		case 'C':
			cpu = lab_opt_long(optarg, 0, CPU_SETSIZE - 1, "bad CPU");
			break;
		default:
			lab_secs_or_other_opt(o, argv, usage, &secs);
		}
	}
	if (cpu < 0 || secs <= 0 || optind < argc) {
		fprintf(stderr, "lw_hog: -C CPU and -d SECONDS are required (see -h)\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "lw_hog: cannot pin to CPU %ld: %s\n", cpu, strerror(errno));
		return 1;
	}
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
