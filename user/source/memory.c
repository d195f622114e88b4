// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * memory.c - the end of a target's page faults (bpf/memory.bpf.h): perf's
 * PAGE_FAULTS_MIN and PAGE_FAULTS_MAJ software events, raised where the
 * kernel accounts a fault (mm_account_fault()), opened on every CPU with a
 * sample period of 1 and lw_fault_min / lw_fault_maj attached to them. No
 * tracepoint marks a fault's end, and fentry/fexit on handle_mm_fault did
 * not load on the development VM (EPERM).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "source/tracer_int.h"

static int fault_event_open(__u64 config, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = config;
	a.sample_period = 1; /* the program runs for every fault */
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

bool lw_memory_probe(void)
{
	int fd = fault_event_open(PERF_COUNT_SW_PAGE_FAULTS_MIN, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Opened once and left open: perf_event_open() checks CAP_PERFMON (on
 * Debian's kernels, at perf_event_paranoid 3, CAP_PERFMON or CAP_SYS_ADMIN),
 * which serve has dropped by the duty cycle's first re-attach; the enable
 * and disable ioctls on an open event check none. A disabled software event
 * is off its CPU's list (perf_swevent_del()): a fault then costs nothing. */
static int memory_toggle(struct lw_tracer *t, unsigned long req)
{
	for (int i = 0; i < t->nmem_links; i++)
		if (ioctl(t->mem_fds[i], req, 0))
			return -errno;
	return 0;
}

void lw_memory_detach(struct lw_tracer *t)
{
	memory_toggle(t, PERF_EVENT_IOC_DISABLE);
}

void lw_memory_close(struct lw_tracer *t)
{
	for (int i = 0; i < t->nmem_links; i++)
		bpf_link__destroy(t->mem_links[i]); /* closes its perf event too */
	t->nmem_links = 0;
	free(t->mem_links);
	free(t->mem_fds);
	t->mem_links = NULL;
	t->mem_fds = NULL;
}

static int memory_open(struct lw_tracer *t)
{
	static const __u64 config[2] = {PERF_COUNT_SW_PAGE_FAULTS_MIN,
					PERF_COUNT_SW_PAGE_FAULTS_MAJ};
	struct bpf_program *prog[2] = {t->skel->progs.lw_fault_min, t->skel->progs.lw_fault_maj};
	size_t n = 2 * (size_t)t->nr_cpus;

	t->mem_links = calloc(n, sizeof(*t->mem_links));
	t->mem_fds = calloc(n, sizeof(*t->mem_fds));
	if (!t->mem_links || !t->mem_fds)
		return -ENOMEM;
	for (int cpu = 0; cpu < t->nr_cpus; cpu++) {
		for (int k = 0; k < 2; k++) {
			struct bpf_link *l;
			int fd = fault_event_open(config[k], cpu);

			if (fd < 0 && errno == ENODEV)
				break; /* a possible CPU not online */
			if (fd < 0)
				return -errno;
			l = bpf_program__attach_perf_event(prog[k], fd); /* enables it */
			if (!l) {
				int err = -errno;

				close(fd);
				return err;
			}
			t->mem_fds[t->nmem_links] = fd;
			t->mem_links[t->nmem_links++] = l;
		}
	}
	return 0;
}

int lw_memory_attach(struct lw_tracer *t)
{
	int err;

	if (!t->skel->rodata->memory_known)
		return 0;
	err = t->mem_links ? memory_toggle(t, PERF_EVENT_IOC_ENABLE) : memory_open(t);
	if (!err)
		return 0;
	fprintf(stderr, "latwhy: cannot attach the page-fault events on every CPU: %s\n",
		strerror(-err));
	lw_memory_close(t);
	return err;
}
