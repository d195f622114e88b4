// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * preempt.c - latwhy_preempted_seconds_total{...,by}: whose CPU time a
 * target's waits for the CPU were (issue 31), as the kernel classed each
 * wait (bpf/preempt.bpf.h): by="own" (its own pod's threads, or its own
 * process's for a target that is no pod, and its cgroup's quota), "pod"
 * (another pod's), "host" (a process in no pod), "kernel" (kernel threads).
 *
 * Its own state beside the exporter's, under its own lock: the tracing
 * thread sets each series' counts from the kernel's per-slot ones before a
 * tick, a scrape renders them. Like the slow-request counts, a series keeps
 * what earlier tracers and the slots that left it reached (base) under what
 * the running tracer's slots count now (cur), so the counter never goes
 * back.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export_int.h"

struct lw_export_preempt {
	pthread_mutex_t lock;
	struct {
		bool seen; /* counted once: served from then on, 0s included */
		__u64 base[LW_BY_MAX], cur[LW_BY_MAX];
	} s[LW_MAX_TARGETS];
};

static const char *const by_name[LW_BY_MAX] = {
	[LW_BY_OWN] = "own",
	[LW_BY_POD] = "pod",
	[LW_BY_HOST] = "host",
	[LW_BY_KERNEL] = "kernel",
};

/* Made at the first count (serve), under the tracing thread: a scrape
 * before it finds none and writes nothing. */
static struct lw_export_preempt *pre_get(struct lw_export *x)
{
	struct lw_export_preempt *p;

	pthread_mutex_lock(&x->lock);
	p = x->preempt;
	pthread_mutex_unlock(&x->lock);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_lock(&x->lock);
	x->preempt = p;
	pthread_mutex_unlock(&x->lock);
	return p;
}

void lw_export_series_preempted(struct lw_export *x, int series, const struct lw_preempt_by *b)
{
	struct lw_export_preempt *p;

	if (series < 0 || series >= LW_MAX_TARGETS || !(p = pre_get(x)))
		return;
	pthread_mutex_lock(&p->lock);
	memcpy(p->s[series].cur, b->ns, sizeof(p->s[series].cur));
	p->s[series].seen = true;
	pthread_mutex_unlock(&p->lock);
}

void lw_export_preempted_retire(struct lw_export *x, int series, const struct lw_preempt_by *b)
{
	struct lw_export_preempt *p;

	if (series < 0 || series >= LW_MAX_TARGETS || !(p = pre_get(x)))
		return;
	pthread_mutex_lock(&p->lock);
	for (int k = 0; k < LW_BY_MAX; k++)
		p->s[series].base[k] += b->ns[k];
	pthread_mutex_unlock(&p->lock);
}

void lw_export_preempt_restart(struct lw_export *x)
{
	struct lw_export_preempt *p = x->preempt;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < LW_MAX_TARGETS; i++)
		for (int k = 0; k < LW_BY_MAX; k++) {
			p->s[i].base[k] += p->s[i].cur[k];
			p->s[i].cur[k] = 0;
		}
	pthread_mutex_unlock(&p->lock);
}

void lw_export_preempt_forget(struct lw_export *x, int series)
{
	struct lw_export_preempt *p = x->preempt;

	if (!p || series < 0 || series >= LW_MAX_TARGETS)
		return;
	pthread_mutex_lock(&p->lock);
	memset(&p->s[series], 0, sizeof(p->s[series]));
	pthread_mutex_unlock(&p->lock);
}

void lw_export_preempt_free(struct lw_export *x)
{
	if (!x->preempt)
		return;
	pthread_mutex_destroy(&x->preempt->lock);
	free(x->preempt);
	x->preempt = NULL;
}

void lw_export_preempt_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c)
{
	struct lw_export_preempt *p;
	__u64 ns[LW_MAX_TARGETS][LW_BY_MAX];
	bool seen[LW_MAX_TARGETS], any = false;

	pthread_mutex_lock(&x->lock);
	p = x->preempt;
	pthread_mutex_unlock(&x->lock);
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < c->nseries && i < LW_MAX_TARGETS; i++) {
		seen[i] = p->s[i].seen && !c->s[i].lab.dead;
		any |= seen[i];
		for (int k = 0; k < LW_BY_MAX; k++)
			ns[i][k] = p->s[i].base[k] + p->s[i].cur[k];
	}
	pthread_mutex_unlock(&p->lock);
	if (!any)
		return;
	lw_export_family(f, "latwhy_preempted_seconds_total", "counter",
			 "Time the target's threads waited for the CPU while serving, by whose "
			 "task ran instead: own (its pod's, or its process's), pod (another "
			 "pod's), host (a process in no pod), kernel (kernel threads); its "
			 "cgroup's quota is own.");
	for (int i = 0; i < c->nseries && i < LW_MAX_TARGETS; i++) {
		if (!seen[i])
			continue;
		for (int k = 0; k < LW_BY_MAX; k++) {
			lw_export_series_name(f, "latwhy_preempted_seconds_total", &c->s[i].lab);
			fprintf(f, ",by=\"%s\"} ", by_name[k]);
			lw_export_seconds(f, ns[i][k]);
		}
	}
}
