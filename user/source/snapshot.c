// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * snapshot.c - the BPF maps read into records, once per interval.
 *
 * Every map is cumulative since the start, so each record is a snapshot that
 * replaces the previous one of its key: a sink that missed an interval loses
 * nothing. The records leave through the tracer's sink (lw_tracer_emit()).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "node/memory.h"
#include "source/tracer_int.h"
#include "source/probe.h"

/* A per-CPU value is lat_hist's size at most: hist_buf holds it. */
_Static_assert(sizeof(struct lw_cause_counts) <= sizeof(((struct lw_hist_rec *)0)->b),
	       "cause_counts' per-CPU values do not fit hist_buf");

/* Entry key of per-CPU array m, n counters a CPU, summed over CPUs into
 * sum (through hist_buf): 0 or -errno. */
static int percpu_sum(struct lw_tracer *t, const struct bpf_map *m, __u32 key, __u64 *sum, size_t n)
{
	size_t per = bpf_map__value_size(m);
	int ncpu = libbpf_num_possible_cpus();

	memset(sum, 0, n * sizeof(*sum));
	if (bpf_map_lookup_elem(bpf_map__fd(m), &key, t->hist_buf))
		return -errno;
	for (int c = 0; c < ncpu; c++) {
		const __u64 *v = (const __u64 *)((const char *)t->hist_buf + c * per);

		for (size_t i = 0; i < n; i++)
			sum[i] += v[i];
	}
	return 0;
}

int lw_tracer_target_hist(struct lw_tracer *t, int slot, __u64 *b)
{
	if (slot < 0 || slot >= t->ntg)
		return -EINVAL;
	return percpu_sum(t, t->skel->maps.lat_hist, 1 + slot, b, LW_HIST_BUCKETS);
}

int lw_tracer_target_causes(struct lw_tracer *t, int slot, struct lw_cause_counts *c)
{
	if (slot < 0 || slot >= t->ntg)
		return -EINVAL;
	return percpu_sum(t, t->skel->maps.cause_counts, slot, (__u64 *)c,
			  sizeof(*c) / sizeof(__u64));
}

int lw_tracer_target_watch(const struct lw_tracer *t, int slot, struct lw_watch_counts *w)
{
	const struct latwhy_bpf__bss *b = t->skel->bss;

	if (slot < 0 || slot >= t->ntg || slot >= LW_MAX_TARGETS)
		return -EINVAL;
	if (!t->watch)
		return -ENOENT;
	w->req = b->watch_req[slot];
	w->timed = b->watch_timed[slot];
	w->slow = b->watch_est_slow[slot];
	w->slow_ns = b->watch_est_slow_ns[slot];
	return 0;
}

__u64 lw_snapshot_requests(const struct lw_tracer *t, __u64 hist_count)
{
	__u64 n = 0;

	if (!t->watch)
		return hist_count;
	for (int i = 0; i < t->ntg && i < LW_MAX_TARGETS; i++)
		n += t->skel->bss->watch_req[i];
	return n;
}

__u64 lw_snapshot_hist(struct lw_tracer *t)
{
	__u64 *b = t->hist->b, count = 0;

	if (percpu_sum(t, t->skel->maps.lat_hist, 0, b, LW_HIST_BUCKETS))
		return 0;
	for (int i = 0; i < LW_HIST_BUCKETS; i++)
		count += b[i];
	return count;
}

int lw_tracer_target_preempted(struct lw_tracer *t, int slot, struct lw_preempt_by *b)
{
	if (slot < 0 || slot >= t->ntg)
		return -EINVAL;
	return percpu_sum(t, t->skel->maps.preempt_by, slot, b->ns, LW_BY_MAX);
}

static void emit_irq(struct lw_tracer *t, __u32 irq, __u32 cpu, const struct lw_count *c)
{
	struct lw_irq_rec r = {.type = LW_REC_IRQ, .irq = irq, .cpu = cpu, .ns = c->ns};

	r.count = c->count;
	bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.irq_names), &irq, r.name);
	r.name[sizeof(r.name) - 1] = '\0';
	lw_tracer_emit(t, &r, sizeof(r));
}

/* IRQs below LW_IRQ_FAST: every IRQ seen has a name, so the names map lists
 * the rows worth reading. The rest are keyed by (irq, cpu) in irq_ev_hi. */
static void snapshot_irqs(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.irq_ev), nfd = bpf_map__fd(t->skel->maps.irq_names);
	struct lw_irq_key key, *kprev = NULL;
	__u32 irq, *prev = NULL;
	struct lw_count c;

	while (!bpf_map_get_next_key(nfd, prev, &irq)) {
		prev = &irq;
		if (irq >= LW_IRQ_FAST || bpf_map_lookup_elem(fd, &irq, t->count_buf))
			continue;
		for (int cpu = 0; cpu < t->nr_cpus; cpu++)
			if (t->count_buf[cpu].count || t->count_buf[cpu].ns)
				emit_irq(t, irq, cpu, &t->count_buf[cpu]);
	}
	fd = bpf_map__fd(t->skel->maps.irq_ev_hi);
	while (!bpf_map_get_next_key(fd, kprev, &key)) {
		kprev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &c))
			emit_irq(t, key.irq, key.cpu, &c);
	}
}

static void snapshot_softirqs(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.softirq_ev);

	for (__u32 vec = 0; vec < LW_SOFTIRQ_ROWS; vec++) {
		if (bpf_map_lookup_elem(fd, &vec, t->count_buf))
			continue;
		for (int cpu = 0; cpu < t->nr_cpus; cpu++) {
			struct lw_softirq_rec r = {.type = LW_REC_SOFTIRQ, .vec = vec, .cpu = cpu};

			if (!t->count_buf[cpu].count)
				continue;
			r.ns = t->count_buf[cpu].ns;
			r.count = t->count_buf[cpu].count;
			lw_tracer_emit(t, &r, sizeof(r));
		}
	}
}

static void snapshot_preempt(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.preempt_ev);
	__u32 key, *prev = NULL;
	struct lw_preempt_val v;
	struct lw_pod_rec pod;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		struct lw_preempt_rec r = {.type = LW_REC_PREEMPT, .pid = key};

		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		memcpy(r.comm, v.comm, sizeof(r.comm));
		r.comm[sizeof(r.comm) - 1] = '\0';
		r.ns = v.ns;
		r.count = v.count;
		r.tgid = v.tgid;
		lw_tracer_emit(t, &r, sizeof(r));
		/* and its pod, where its cgroup is a pod's (podnames.c); an
		 * idle CPU's entries have none */
		if (v.cgid && key != LW_PID_IDLE_POLL &&
		    !lw_podnames_of_cgid(t, v.cgid, v.tgid, &pod)) {
			pod.type = LW_REC_POD;
			pod.pid = key;
			lw_tracer_emit(t, &pod, sizeof(pod));
		}
	}
}

static void snapshot_cpus(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.cpus);

	t->clock_events = 0;
	for (int c = 0; c < t->nr_cpus && c < LW_MAX_CPUS; c++) {
		struct lw_cpu_rec r = {.type = LW_REC_CPU, .cpu = c};
		struct lw_cpu_state cs;
		__u32 key = c;

		if (bpf_map_lookup_elem(fd, &key, &cs))
			continue;
		r.khz = cs.khz;
		r.ref_khz = cs.ref_khz;
		r.events = cs.freq_events;
		t->clock_events += cs.freq_events;
		lw_tracer_emit(t, &r, sizeof(r));
	}
}

/* The node's free memory against its watermarks now, and kswapd's CPU time
 * since the first snapshot: whether the node was short of memory while
 * the targets were traced, and kswapd was running to make some. */
static void snapshot_mem_node(struct lw_tracer *t)
{
	struct lw_mem_node *m = &t->mem_node;
	unsigned long long ks;
	struct lw_zones z;
	int n;

	if (!lw_zoneinfo_read("/", &z)) {
		m->snapshots++;
		m->below_low += z.free < z.low;
		m->below_min += z.free < z.min;
		m->free_pages = z.free;
		m->wmark_min = z.min;
		m->wmark_low = z.low;
		m->wmark_high = z.high;
		if (m->snapshots == 1 || z.free < m->free_least)
			m->free_least = z.free;
	}
	if (!lw_kswapd_ns("/", &ks, &n)) {
		if (!t->kswapd_based) {
			t->kswapd_base = ks;
			t->kswapd_based = true;
		}
		m->kswapd_ns = ks > t->kswapd_base ? ks - t->kswapd_base : 0;
		m->kswapds = (__u64)n;
	}
}

void lw_snapshot_evidence(struct lw_tracer *t)
{
	struct lw_thp_rec thp = {.type = LW_REC_THP};

	snapshot_irqs(t);
	snapshot_softirqs(t);
	snapshot_preempt(t);
	snapshot_cpus(t);
	thp.s = t->skel->bss->thp;
	lw_tracer_emit(t, &thp, sizeof(thp));
	if (t->skel->rodata->memory_known) {
		struct lw_mem_rec mr = {.type = LW_REC_MEMORY};

		mr.s = t->skel->bss->mem;
		snapshot_mem_node(t);
		mr.node = t->mem_node;
		lw_tracer_emit(t, &mr, sizeof(mr));
	}
}

/* Uses the clock-event count of the last snapshot_cpus(). */
static enum lw_freq_source freq_source(struct lw_tracer *t)
{
	if (t->freq.source != LW_FREQ_NONE)
		return t->freq.source;
	/* No driver, but clock events arrived (the lab injects them). */
	return t->clock_events ? LW_FREQ_TRACEPOINT : LW_FREQ_NONE;
}

void lw_snapshot_meta(struct lw_tracer *t)
{
	struct lw_pod_rec pod;
	struct lw_meta_rec m;

	memset(&m, 0, sizeof(m));
	m.type = LW_REC_META;
	m.pid = t->o->pid;
	memcpy(m.comm, t->comm, sizeof(m.comm));
	/* no single -p process: the first of the targets' (the engine's
	 * evidence calls its threads "its own"), named */
	if (!m.pid && t->npids) {
		char state;

		m.pid = t->pids[0];
		if (lw_probe_stat(m.pid, m.comm, sizeof(m.comm), &state, NULL))
			memset(m.comm, 0, sizeof(m.comm));
	}
	m.flags = t->flags | (t->target_exited ? LW_META_TARGET_EXITED : 0);
	m.freq_source = freq_source(t);
	m.nr_cpus = t->nr_cpus;
	m.start_ns = t->start_ns;
	m.duration_ns = lw_now_ns() - t->start_ns;
	m.threshold_ns = t->o->slow_ns ? t->o->slow_ns : LW_THRESH_UNKNOWN;
	m.dropped = t->skel->bss->dropped;
	m.incomplete = t->skel->bss->incomplete;
	m.requests = t->req_count;
	m.req_mode = t->mode;
	m.irq_entry_ns = t->skel->rodata->irq_entry_ns;
	m.fault_entry_ns = t->skel->bss->fault_entry_ns;
	m.untracked = t->skel->bss->untracked;
	m.handoffs = t->skel->bss->handoffs;
	m.tracer_tgid = getpid();
	/* the run's process's pod, before its META: the findings name it */
	if (m.pid && !lw_podnames_of_pid(t, m.pid, &pod)) {
		pod.type = LW_REC_POD;
		pod.pid = m.pid;
		lw_tracer_emit(t, &pod, sizeof(pod));
	}
	lw_tracer_emit(t, &m, sizeof(m));
}
