// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * irqcost.c - measure what one interrupt costs a running task (irqcost.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "source/irqcost.h"
#include "node/node.h"
#include "node/sysfs.h"

#define LW_IPIS	       200
#define LW_IPI_GAP_NS  100000ULL /* between two IPIs */
#define LW_GAPS	       8192
#define LW_GAP_MIN_NS  300 /* two clock reads without a stop take ~30 ns */
#define LW_SPIN_MAX_NS 2000000000ULL
#define LW_COST_MAX_NS 1000000ULL /* 1 ms, as --irq-cost allows */

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__u64 lw_irqcost_median(const struct lw_gap *gaps, size_t ngaps, const struct lw_ipi *ipis,
			size_t nipis, size_t *matched)
{
	__u64 *len;
	size_t n = 0, g = 0;
	__u64 med = 0;

	*matched = 0;
	if (!nipis)
		return 0;
	len = calloc(nipis, sizeof(*len));
	if (!len)
		return 0;
	for (size_t i = 0; i < nipis; i++) {
		__u64 best = 0;

		/* gaps that ended before this IPI was sent hold none */
		while (g < ngaps && gaps[g].end <= ipis[i].sent)
			g++;
		/* The IPI's gap began before membarrier() returned, since the
		 * handler had run by then. Other stops can fall in the same
		 * window (a host's own exits, 1-3 us here): the longest is
		 * the IPI's. A gap the thread spent switched out is not: the
		 * IPI went elsewhere or waited for it. */
		for (size_t k = g; k < ngaps && gaps[k].start < ipis[i].done; k++)
			if (!gaps[k].switched && gaps[k].end - gaps[k].start > best)
				best = gaps[k].end - gaps[k].start;
		if (best)
			len[n++] = best;
	}
	*matched = n;
	if (n * 2 >= nipis) {
		/* insertion sort: a few hundred values */
		for (size_t i = 1; i < n; i++) {
			__u64 v = len[i];
			size_t j = i;

			for (; j && len[j - 1] > v; j--)
				len[j] = len[j - 1];
			len[j] = v;
		}
		med = len[n / 2];
	}
	free(len);
	return med;
}

struct spinner {
	bool ready; /* both with __atomic: another thread reads them */
	bool stop;
	struct lw_gap *gaps;
	size_t ngaps;
};

/* This thread's context switches so far, voluntary or not. */
static long switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Read the clock as fast as possible; keep every gap between two reads, and
 * whether the thread was switched out in it (a switch can only fall in a
 * gap, so a count read after each one tells). */
static void *spin(void *arg)
{
	struct spinner *s = arg;
	__u64 prev = mono_ns(), limit = prev + LW_SPIN_MAX_NS;
	long sw = switches();

	__atomic_store_n(&s->ready, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		__u64 t = mono_ns();

		if (t - prev > LW_GAP_MIN_NS && s->ngaps < LW_GAPS) {
			long now_sw = switches();

			s->gaps[s->ngaps].start = prev;
			s->gaps[s->ngaps].end = t;
			s->gaps[s->ngaps].switched = now_sw != sw;
			s->ngaps++;
			sw = now_sw;
			t = mono_ns(); /* the count's own syscall is no gap */
		}
		prev = t;
		if (t > limit) /* the sender never said stop */
			break;
	}
	return NULL;
}

static int pin_self(int cpu, cpu_set_t *old)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(*old), old))
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void send_ipis(struct lw_ipi *ipis)
{
	for (int i = 0; i < LW_IPIS; i++) {
		__u64 next;

		ipis[i].sent = mono_ns();
		syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
		ipis[i].done = mono_ns();
		next = ipis[i].done + LW_IPI_GAP_NS;
		while (mono_ns() < next)
			; /* sleeping would make the next IPI wake this CPU first */
	}
}

int lw_irqcost_measure(int spin_cpu, int send_cpu, __u64 *cost_ns)
{
	struct spinner s = {0};
	struct lw_ipi *ipis = NULL;
	pthread_attr_t attr;
	bool attr_init = false, started = false, pinned = false;
	cpu_set_t set, old;
	pthread_t th;
	size_t matched;
	int err;

	*cost_ns = 0;
	if (spin_cpu == send_cpu || spin_cpu < 0 || send_cpu < 0)
		return -EINVAL;
	/* registering is required once per process before the command */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		return errno == EINVAL ? -ENOSYS : -errno;
	s.gaps = calloc(LW_GAPS, sizeof(*s.gaps));
	ipis = calloc(LW_IPIS, sizeof(*ipis));
	if (!s.gaps || !ipis) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = pin_self(send_cpu, &old);
	if (err)
		goto cleanup;
	pinned = true;
	err = -pthread_attr_init(&attr);
	if (err)
		goto cleanup;
	attr_init = true;
	CPU_ZERO(&set);
	CPU_SET(spin_cpu, &set);
	err = -pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (err)
		goto cleanup;
	err = -pthread_create(&th, &attr, spin, &s);
	if (err)
		goto cleanup;
	started = true;
	while (!__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE))
		;
	send_ipis(ipis);
	__atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	started = false;
	*cost_ns = lw_irqcost_median(s.gaps, s.ngaps, ipis, LW_IPIS, &matched);
	err = *cost_ns ? 0 : -EAGAIN;
	if (*cost_ns > LW_COST_MAX_NS) { /* no interrupt's: --irq-cost's bound */
		*cost_ns = 0;
		err = -ERANGE;
	}
cleanup:
	if (started) {
		__atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
	}
	if (attr_init)
		pthread_attr_destroy(&attr);
	if (pinned)
		sched_setaffinity(0, sizeof(old), &old);
	free(s.gaps);
	free(ipis);
	return err;
}

int lw_irqcost_measure_here(const char *root, __u64 *cost_ns)
{
	struct lw_cpuset online;
	int cur = sched_getcpu(), tries = 0, err = -ENODEV;
	char line[256];

	*cost_ns = 0;
	if (cur < 0)
		return -errno;
	if (lw_sysfs_read(root, line, sizeof(line), "/sys/devices/system/cpu/online") ||
	    lw_cpuset_parse_list(&online, line))
		return -ENOENT;
	if (lw_cpuset_count(&online) < 2)
		return -ENODEV; /* one CPU: no IPI to send */
	for (int spin = LW_NODE_MAX_CPUS - 1; spin >= 0 && tries < 3; spin--) {
		int send = cur;

		if (!lw_cpuset_test(&online, spin))
			continue;
		for (int c = 0; send == spin && c < LW_NODE_MAX_CPUS; c++)
			if (c != spin && lw_cpuset_test(&online, c))
				send = c; /* from another CPU, the lowest */
		tries++;
		err = lw_irqcost_measure(spin, send, cost_ns);
		/* too busy, or outside a cpuset that confines latwhy
		 * (affinity: EINVAL): the next CPU down */
		if (err != -EAGAIN && err != -EINVAL)
			break;
	}
	return err;
}
