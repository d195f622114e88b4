// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lw_noise - how much of a CPU a busy loop loses, and in what gaps.
 *
 *   lw_noise -C CPU -d SECONDS
 *
 * Spins on CLOCK_MONOTONIC (vDSO, no syscall) pinned to CPU and sums every
 * gap between two consecutive reads longer than 300 ns: time the CPU spent
 * elsewhere, in interrupts, softirqs, other tasks, or outside the guest (a
 * VM's interrupt delivery and exits, which no guest tracepoint sees). Like
 * the kernel's osnoise tracer, without needing tracefs. Prints one line:
 *
 *   lost PCT% gaps N mean_us X; <1us A <3us B <10us C <30us D <100us E more F
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LAB_PROG "lw_noise"
#include "lab.h"

#define GAP_NS	300
#define NR_BINS 6

static const double bin_top_ns[NR_BINS - 1] = {1e3, 3e3, 10e3, 30e3, 100e3};

static void usage(void)
{
	printf("usage: lw_noise -C CPU -d SECONDS\n"
	       "  busy-loop pinned to CPU, sum the gaps > %d ns between clock reads\n",
	       GAP_NS);
}

static int gap_bin(uint64_t ns)
{
	int i;

	for (i = 0; i < NR_BINS - 1; i++)
		if (ns < bin_top_ns[i])
			return i;
	return NR_BINS - 1;
}

int main(int argc, char **argv)
{
	uint64_t bins[NR_BINS] = {}, lost = 0, n = 0, start, end, prev, now;
	long secs;

	lab_cpu_secs_pinned(argc, argv, usage, &secs);
	start = prev = lab_now_ns();
	end = start + (uint64_t)secs * 1000000000ull;
	do {
		now = lab_now_ns();
		if (now - prev > GAP_NS) {
			lost += now - prev;
			bins[gap_bin(now - prev)]++;
			n++;
		}
		prev = now;
	} while (now < end);

	printf("lost %.1f%% gaps %llu mean_us %.2f; <1us %llu <3us %llu <10us %llu <30us %llu "
	       "<100us %llu more %llu\n",
	       100.0 * lost / (now - start), (unsigned long long)n, n ? lost / 1e3 / n : 0.0,
	       (unsigned long long)bins[0], (unsigned long long)bins[1],
	       (unsigned long long)bins[2], (unsigned long long)bins[3],
	       (unsigned long long)bins[4], (unsigned long long)bins[5]);
	return 0;
}
