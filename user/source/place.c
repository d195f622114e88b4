// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * place.c - latwhy's own placement. Its poller and samplers wake once per
 * tick and per ring-buffer batch; on a CPU the target uses, each wake-up
 * preempts a request thread, and the trace would blame latwhy for latency
 * latwhy caused. Threads inherit the mask, so this runs before any starts.
 */
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "source/place.h"

/* The union of the affinities of every thread of pid; -errno. */
static int target_cpus(int pid, cpu_set_t *set)
{
	char path[64];
	struct dirent *d;
	int n = 0, err = 0;
	DIR *dir;

	CPU_ZERO(set);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		cpu_set_t t;
		int tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		/* a thread that exited since the listing had no CPU to take */
		if (sched_getaffinity(tid, sizeof(t), &t)) {
			if (errno == ESRCH)
				continue;
			err = -errno;
			break;
		}
		CPU_OR(set, set, &t);
		n++;
	}
	closedir(dir);
	if (!err && !n)
		err = -ESRCH;
	return err;
}

static void to_cpuset(const cpu_set_t *from, struct lw_cpuset *to)
{
	memset(to, 0, sizeof(*to));
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, from))
			lw_cpuset_set(to, c);
}

int lw_place_self(const int *pids, int n, struct lw_place *p)
{
	cpu_set_t target, mine, free_cpus;
	int err = -ESRCH, found = 0;

	memset(p, 0, sizeof(*p));
	CPU_ZERO(&target);
	for (int i = 0; i < n; i++) {
		cpu_set_t one;

		/* a process gone since the listing has no CPU to avoid */
		err = target_cpus(pids[i], &one);
		if (err == -ESRCH || err == -ENOENT)
			continue;
		if (err)
			return err;
		CPU_OR(&target, &target, &one);
		found++;
	}
	if (!found)
		return err;
	to_cpuset(&target, &p->target);
	if (sched_getaffinity(0, sizeof(mine), &mine))
		return -errno;
	/* only CPUs this process may use already: a cpuset confining latwhy
	 * stays the limit */
	CPU_XOR(&free_cpus, &mine, &target);
	CPU_AND(&free_cpus, &free_cpus, &mine);
	if (CPU_COUNT(&free_cpus)) {
		if (sched_setaffinity(0, sizeof(free_cpus), &free_cpus))
			return -errno;
		to_cpuset(&free_cpus, &p->self);
		return 0;
	}
	to_cpuset(&mine, &p->self);
	p->shared = true;
	return 0;
}

int lw_place_yield(struct lw_place *p)
{
	if (!p->shared)
		return 0;
	p->nice = LW_PLACE_NICE;
	return setpriority(PRIO_PROCESS, 0, p->nice) ? -errno : 0;
}

bool lw_place_keep_up(struct lw_place *p, bool behind)
{
	int nice;

	if (!p->shared || !behind || p->nice <= 0)
		return false;
	nice = p->nice > LW_PLACE_NICE_STEP ? p->nice - LW_PLACE_NICE_STEP : 0;
	/* a lower nice value needs CAP_SYS_NICE (or RLIMIT_NICE): without
	 * it, stay, and say so once */
	if (setpriority(PRIO_PROCESS, 0, nice)) {
		static bool said;

		if (!said && (errno == EACCES || errno == EPERM))
			fprintf(stderr,
				"latwhy: no CAP_SYS_NICE: falling behind on the target's "
				"CPUs, and cannot raise its priority from nice %d\n",
				p->nice);
		said = true;
		return false;
	}
	p->nice = nice;
	return true;
}
