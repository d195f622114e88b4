// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* explain.c - trace summary + node state -> findings. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advice/explain.h"

/* pid was the longest wait of some slow request, or no slow request names
 * one (records lost, or none slow): then every preemptor stays a suspect. */
static bool slowed_requests(const struct lw_summary *s, __u32 pid)
{
	if (!s->nr_slow_waits)
		return true;
	for (size_t i = 0; i < s->nr_slow_waits; i++)
		if (s->slow_waits[i].pid == pid)
			return true;
	return false;
}

static void fact_pod(struct lw_fact_pod *f, const struct lw_pod_rec *r)
{
	memset(f, 0, sizeof(*f));
	if (!r->type)
		return;
	f->in = true;
	f->named = r->named;
	snprintf(f->ns, sizeof(f->ns), "%s", r->ns);
	snprintf(f->name, sizeof(f->name), "%s", r->name);
	snprintf(f->container, sizeof(f->container), "%s", r->container);
	snprintf(f->qos, sizeof(f->qos), "%s", r->qos);
}

void lw_explain_facts(const struct lw_summary *s, struct lw_trace_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->pid = s->pid;
	for (int c = 0; c < LW_CAUSE_MAX; c++) {
		f->share[c] = s->cause[c].share;
		f->cause_ns[c] = s->cause[c].ns;
	}
	f->slow_requests = s->slow_requests;
	_Static_assert(sizeof(f->cpus_mask) == sizeof(s->cpus_mask), "cpu mask sizes differ");
	memcpy(f->cpus_mask, s->cpus_mask, sizeof(f->cpus_mask));
	for (size_t i = 0; i < s->nr_irqs && f->nr_irqs < LW_FACT_IRQS; i++) {
		struct lw_fact_irq *q = &f->irqs[f->nr_irqs++];

		q->irq = s->irqs[i].irq;
		q->cpu = s->irqs[i].cpu;
		snprintf(q->name, sizeof(q->name), "%s", s->irqs[i].name);
		q->ns = s->irqs[i].ns;
		q->count = s->irqs[i].count;
	}
	for (size_t i = 0; i < s->nr_softirqs && f->nr_softirqs < LW_FACT_SOFTIRQS; i++) {
		struct lw_fact_softirq *q = &f->softirqs[f->nr_softirqs++];

		snprintf(q->vec, sizeof(q->vec), "%s", lw_softirq_name(s->softirqs[i].vec));
		q->cpu = s->softirqs[i].cpu;
		q->ns = s->softirqs[i].ns;
		q->count = s->softirqs[i].count;
	}
	for (size_t i = 0; i < s->nr_preempt && f->nr_preempt < LW_FACT_PREEMPT; i++) {
		struct lw_fact_task *p;

		/* Only the preemptors that matter get a fix: at least a tenth of
		 * the top one's time, the longest wait of some slow request, and
		 * never latwhy itself. */
		/* pid 0 is the idle task: a wake-up latency, not a task to move */
		if (!s->preempt[i].pid) {
			f->idle_wakeups = s->preempt[i].count;
			f->idle_wake_ns = s->preempt[i].ns;
			continue;
		}
		/* an idle CPU that polled: no C-state, nothing to disable */
		if (s->preempt[i].pid == LW_PID_IDLE_POLL) {
			f->idle_poll_wakeups = s->preempt[i].count;
			f->idle_poll_ns = s->preempt[i].ns;
			continue;
		}
		if (lw_summary_is_tracer(s, s->preempt[i].pid, s->preempt[i].tgid) ||
		    s->preempt[i].ns * 10 < s->preempt[0].ns ||
		    !slowed_requests(s, s->preempt[i].pid))
			continue;
		p = &f->preempt[f->nr_preempt++];

		p->pid = s->preempt[i].pid;
		snprintf(p->comm, sizeof(p->comm), "%s", s->preempt[i].comm);
		p->ns = s->preempt[i].ns;
		p->count = s->preempt[i].count;
		p->own = s->preempt[i].tgid == (__u32)s->pid;
		fact_pod(&p->pod, &s->preempt_pod[i]);
	}
	fact_pod(&f->target_pod, &s->target_pod);
	f->irq_entry_cost_ns = s->irq_entry_ns;
	f->irq_entry_ns = s->bucket_ns[LW_B_IRQ_ENTRY];
	f->thp_collapses = s->thp.collapses;
	f->thp_scans = s->thp.scans;
	f->compactions = s->thp.compactions;
	/* never a clock that was not measured */
	f->freq_khz = s->freq_measured ? s->freq_min_khz : 0;
	f->ref_khz = s->freq_measured ? s->ref_khz : 0;
	f->freq_source = lw_freq_source_name(s->freq_measured ? s->freq_source : LW_FREQ_NONE);
	f->duration_ns = s->duration_ns;
	f->no_quota = !s->cause[LW_CAUSE_QUOTA].measured;
	f->quota_waits = s->quota_waits;
	f->quota_wait_ns = s->quota_wait_ns;
	f->quota_wait_max_ns = s->quota_wait_max_ns;
	f->mem_faults_min = s->mem_faults_min;
	f->mem_faults_maj = s->mem_faults_maj;
	f->mem_fault_ns = s->bucket_ns[LW_B_FAULT];
	f->mem_fault_wait_ns = s->bucket_ns[LW_B_FAULT_WAIT];
	f->mem_snapshots = s->mem_node.snapshots;
	f->mem_below_low = s->mem_node.below_low;
	f->mem_kswapd_ns = s->mem_node.kswapd_ns;
	f->mem_kswapds = s->mem_node.kswapds;
	f->mem_reclaim_ns = s->bucket_ns[LW_B_RECLAIM];
	f->mem_high_ns = s->bucket_ns[LW_B_MEMORY_HIGH];
	f->mem_reclaims = s->mem.reclaims;
	f->mem_reclaims_memcg = s->mem.reclaim_memcg;
	f->mem_stalls = s->mem.stalls;
	f->mem_scanned = s->mem.reclaim_scanned;
	f->mem_reclaimed = s->mem.reclaim_reclaimed;
}

void lw_explain_quota_start(struct lw_trace_facts *f, const struct lw_node *start)
{
	const struct lw_target *t = &start->target;

	f->nr_cg_start = 0;
	if (!start->has_target)
		return;
	for (int i = 0; i < t->nr_cg && f->nr_cg_start < LW_FACT_CGROUPS; i++) {
		struct lw_fact_cg_stat *c = &f->cg_start[f->nr_cg_start];

		if (!t->cg[i].has_stat)
			continue;
		snprintf(c->path, sizeof(c->path), "%s", t->cg[i].path);
		c->nr_periods = t->cg[i].nr_periods;
		c->nr_throttled = t->cg[i].nr_throttled;
		c->throttled_usec = t->cg[i].throttled_usec;
		f->nr_cg_start++;
	}
}

int lw_explain(const struct lw_summary *s, const char *root, int pid, struct lw_findings *out)
{
	return lw_explain_pids(s, root, pid ? &pid : NULL, pid ? 1 : 0, out);
}

int lw_explain_pids(const struct lw_summary *s, const char *root, const int *pids, int npids,
		    struct lw_findings *out)
{
	return lw_explain_pids_since(s, NULL, root, pids, npids, out);
}

int lw_explain_pids_since(const struct lw_summary *s, const struct lw_node *start, const char *root,
			  const int *pids, int npids, struct lw_findings *out)
{
	int pid = npids ? pids[0] : 0;
	struct lw_trace_facts f;
	struct lw_node n;
	int err;

	err = lw_node_read(&n, root, pid);
	if (err == -ESRCH && pid) /* it exited since: node-wide facts still hold */
		err = lw_node_read(&n, root, 0);
	if (err)
		return err;
	/* the others' CPUs too: a process gone since is no error */
	for (int i = 1; i < npids && n.target.pid; i++)
		lw_node_target_add(&n, pids[i]);
	lw_explain_facts(s, &f);
	if (start)
		lw_explain_quota_start(&f, start);
	err = lw_advise_trace(&n, &f, out);
	lw_node_free(&n);
	return err;
}
