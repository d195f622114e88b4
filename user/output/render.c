// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * render.c - text and NDJSON output of the live tracer and of reports.
 *
 * Rule: never print a number that was not measured. Without clock data the
 * frequency cause is "n/a (no frequency data)" in text and null in JSON.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/json.h"
#include "output/findings.h"
#include "lib/fmt.h"
#include "lib/list.h"
#include "output/render.h"

struct lw_render {
	FILE *f;
	bool json;
	bool tty;
	char target[512]; /* lw_render_set_target(); "": "pid N (comm)" */
	char skip[512];	  /* lw_render_set_skip(): --skip as given */
	bool skip_known;  /* a capture without it: why not attached is not known */
};

void lw_render_set_skip(struct lw_render *r, const char *skip)
{
	r->skip_known = skip != NULL;
	snprintf(r->skip, sizeof(r->skip), "%s", skip ? skip : "");
}

void lw_render_set_target(struct lw_render *r, const char *label)
{
	snprintf(r->target, sizeof(r->target), "%s", label ? label : "");
}

/* What the text calls the target: the label set, or the summary's process. */
static const char *target_name(const struct lw_render *r, const struct lw_summary *s, char *buf,
			       size_t len)
{
	if (r->target[0])
		return r->target;
	snprintf(buf, len, "pid %d (%s)", s->pid, s->comm);
	return buf;
}

struct lw_render *lw_render_new(FILE *f, bool json)
{
	struct lw_render *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->f = f;
	r->json = json;
	r->tty = isatty(fileno(f));
	return r;
}

void lw_render_free(struct lw_render *r)
{
	free(r);
}

static const char *missing_causes(__u32 flags, char *buf, size_t len)
{
	buf[0] = '\0';
	if (flags & LW_META_NO_IRQ)
		strncat(buf, " irq", len - strlen(buf) - 1);
	if (flags & LW_META_NO_SOFTIRQ)
		strncat(buf, " softirq", len - strlen(buf) - 1);
	if (flags & LW_META_NO_THP)
		strncat(buf, " khugepaged", len - strlen(buf) - 1);
	if (flags & LW_META_NO_COMPACT)
		strncat(buf, " compaction", len - strlen(buf) - 1);
	if (flags & LW_META_NO_FREQ)
		strncat(buf, " cpu_frequency", len - strlen(buf) - 1);
	return buf;
}

void lw_render_start(struct lw_render *r, int pid, const char *comm, __u32 flags, __u64 slow_ns)
{
	char miss[128], d[32], who[64];

	snprintf(who, sizeof(who), "pid %d (%s)", pid, comm);
	missing_causes(flags, miss, sizeof(miss));
	/* stderr: stdout may be NDJSON */
	fprintf(stderr, "latwhy: tracing %s, slow = %s%s. Ctrl-C to stop.\n",
		r->target[0] ? r->target : who, slow_ns ? "> " : "above the running p99",
		slow_ns ? lw_fmt_ns(d, sizeof(d), slow_ns) : "");
	if (*miss)
		fprintf(stderr,
			"latwhy: not attached (skipped or missing from this kernel):%s; "
			"those causes are not measured\n",
			miss);
}

/* "12.3%" or "n/a" */
static void fmt_share(char *buf, size_t len, double share, bool measured)
{
	if (!measured)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f%%", share * 100);
}

static void print_cpu_list(FILE *f, const __u64 *mask)
{
	bool first = true;

	for (int c = 0; c < LW_MAX_CPUS; c++) {
		if (!(mask[c / 64] & (1ULL << (c % 64))))
			continue;
		fprintf(f, "%s%d", first ? "" : ",", c);
		first = false;
	}
	if (first)
		fprintf(f, "-");
}

static void live_irqs(FILE *f, const struct lw_summary *s)
{
	char d[32];

	fprintf(f, "  irqs on its CPUs:");
	if (!s->nr_irqs && !s->nr_softirqs)
		fprintf(f, " none");
	for (size_t i = 0; i < s->nr_irqs && i < 3; i++)
		fprintf(f, "  %u %s@cpu%u %s (%llu)", s->irqs[i].irq, s->irqs[i].name,
			s->irqs[i].cpu, lw_fmt_ns(d, sizeof(d), s->irqs[i].ns),
			(unsigned long long)s->irqs[i].count);
	for (size_t i = 0; i < s->nr_softirqs && i < 2; i++) {
		const struct lw_softirq_rec *q = &s->softirqs[i];

		/* a wait, on whichever CPU took the data: not one of its CPUs' */
		if (q->vec == LW_SOFTIRQ_BACKLOG)
			fprintf(f, "  its data waited for NET_RX@cpu%u %s", q->cpu,
				lw_fmt_ns(d, sizeof(d), q->ns));
		else
			fprintf(f, "  softirq %s@cpu%u %s", lw_softirq_name(q->vec), q->cpu,
				lw_fmt_ns(d, sizeof(d), q->ns));
	}
	fprintf(f, "\n");
}

static void fmt_clock(char *buf, size_t len, const struct lw_summary *s)
{
	if (!s->freq_measured)
		snprintf(buf, len, "no frequency data");
	else if (s->freq_min_khz == s->freq_max_khz)
		snprintf(buf, len, "%u MHz of %u MHz (%s)", s->freq_min_khz / 1000,
			 s->ref_khz / 1000, lw_freq_source_name(s->freq_source));
	else
		snprintf(buf, len, "%u-%u MHz of %u MHz (%s)", s->freq_min_khz / 1000,
			 s->freq_max_khz / 1000, s->ref_khz / 1000,
			 lw_freq_source_name(s->freq_source));
}

void lw_render_live(struct lw_render *r, const struct lw_summary *s, const struct lw_tick_rec *t,
		    __u64 interval_ns)
{
	char p50[32], p99[32], th[32], clock[96], sh[LW_CAUSE_MAX][16], who[64];
	FILE *f = r->f;

	if (r->tty)
		fprintf(f, "\033[H\033[J"); /* redraw in place */
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++)
		fmt_share(sh[c], sizeof(sh[c]), s->cause[c].share, s->cause[c].measured);
	if (t->threshold_ns == LW_THRESH_UNKNOWN)
		snprintf(th, sizeof(th), "p99 not known yet");
	else
		lw_fmt_ns(th, sizeof(th), t->threshold_ns);
	fprintf(f, "%s  req/s %.0f  p50 %s  p99 %s  slow %llu (> %s)\n",
		target_name(r, s, who, sizeof(who)),
		(double)t->requests * 1e9 / (double)interval_ns,
		lw_fmt_ns(p50, sizeof(p50), t->p50_ns), lw_fmt_ns(p99, sizeof(p99), t->p99_ns),
		(unsigned long long)s->slow_requests, th);
	fprintf(f, "  slow-request time:");
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++)
		fprintf(f, " %s%s %s", c == LW_CAUSE_FREQ ? "" : " ", lw_cause_name(c), sh[c]);
	fprintf(f, "\n");
	live_irqs(f, s);
	fmt_clock(clock, sizeof(clock), s);
	fprintf(f, "  thp: %llu collapses of its memory, %llu compactions   clock: %s\n",
		(unsigned long long)s->thp.collapses, (unsigned long long)s->thp.compactions,
		clock);
	fflush(f);
}

/* ---- NDJSON ------------------------------------------------------------- */

/* What a trace could not attach, by the name the JSON gives it, and the
 * tracepoints behind it (what --skip names). */
static const struct {
	__u32 flag;
	const char *name;
	const char *tps;
} not_attached[] = {
	{LW_META_NO_IRQ, "irq", "irq_handler_entry,irq_handler_exit"},
	{LW_META_NO_SOFTIRQ, "softirq", "softirq_entry,softirq_exit"},
	{LW_META_NO_THP, "khugepaged", "mm_khugepaged_scan_pmd,mm_collapse_huge_page"},
	{LW_META_NO_COMPACT, "compaction", "mm_compaction_begin,mm_compaction_end"},
	{LW_META_NO_FREQ, "cpu_frequency", "cpu_frequency"},
	{LW_META_NO_ARRIVAL, "sk_data_ready", "sk_data_ready"},
	{LW_META_NO_BACKLOG, "netif_rx", "netif_rx,netif_receive_skb"},
	{LW_META_NO_IDLE_STATE, "cpu_idle", "cpu_idle"},
};

#define NR_NOT_ATTACHED (sizeof(not_attached) / sizeof(not_attached[0]))

static bool skipped(const struct lw_render *r, const char *tps)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", tps);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (lw_list_has(r->skip, t))
			return true;
	return false;
}

/* Why not_attached[i] was not: asked (--skip, serve's --causes), the
 * request mode has no use for it, it waits on another that is not, or the
 * kernel lacks it (programs.c's rule: what was not skipped and did not
 * load is the kernel's). */
static const char *not_attached_why(const struct lw_render *r, const struct lw_summary *s, size_t i)
{
	__u32 flag = not_attached[i].flag;

	if (!r->skip_known)
		return "skipped or not in this kernel";
	if (skipped(r, not_attached[i].tps))
		return "skipped";
	if ((flag == LW_META_NO_ARRIVAL || flag == LW_META_NO_BACKLOG) &&
	    s->req_mode == LW_REQ_SYSCALL)
		return "not used by --request syscall";
	if (flag == LW_META_NO_BACKLOG && (s->flags & LW_META_NO_ARRIVAL))
		return "needs sk_data_ready";
	return "not in this kernel";
}

static void json_missing(struct lw_json *j, const struct lw_render *r, const struct lw_summary *s)
{
	lw_json_key(j, "not_attached");
	lw_json_begin_array(j);
	for (size_t i = 0; i < NR_NOT_ATTACHED; i++)
		if (s->flags & not_attached[i].flag)
			lw_json_string(j, not_attached[i].name);
	lw_json_end_array(j);
	lw_json_key(j, "not_attached_why");
	lw_json_begin_object(j);
	for (size_t i = 0; i < NR_NOT_ATTACHED; i++)
		if (s->flags & not_attached[i].flag)
			lw_json_kstr(j, not_attached[i].name, not_attached_why(r, s, i));
	lw_json_end_object(j);
}

static void json_causes(struct lw_json *j, const struct lw_summary *s)
{
	lw_json_key(j, "causes");
	lw_json_begin_object(j);
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++) {
		lw_json_key(j, lw_cause_name(c));
		lw_json_begin_object(j);
		if (!s->cause[c].measured) {
			/* not measured is not zero */
			lw_json_knull(j, "ns");
			lw_json_knull(j, "share");
		} else {
			lw_json_ku64(j, "ns", s->cause[c].ns);
			lw_json_kdouble(j, "share", s->cause[c].share);
		}
		lw_json_ku64(j, "requests", s->cause[c].requests);
		lw_json_end_object(j);
	}
	lw_json_end_object(j);
	lw_json_key(j, "ns");
	lw_json_begin_object(j);
	for (int b = 0; b < LW_B_MAX; b++) {
		if ((b == LW_B_FREQ && !s->freq_measured) ||
		    (b == LW_B_IDLE_POLL && (s->flags & LW_META_NO_IDLE_STATE)) ||
		    (b == LW_B_IRQ_ENTRY && !s->irq_entry_ns) ||
		    (b == LW_B_FAULT_ENTRY && !s->fault_entry_ns) ||
		    (b == LW_B_STEAL && (s->flags & LW_META_NO_STEAL)))
			lw_json_knull(j, lw_bucket_name(b)); /* not measured is not 0 */
		else
			lw_json_ku64(j, lw_bucket_name(b), s->bucket_ns[b]);
	}
	lw_json_end_object(j);
}

/* The node's memory while traced, in pages: null where not read (a
 * capture older than it, no /proc/zoneinfo). */
static void json_mem_node(struct lw_json *j, const struct lw_mem_node *n)
{
	lw_json_key(j, "node");
	if (!n->snapshots) {
		lw_json_null(j);
		return;
	}
	lw_json_begin_object(j);
	lw_json_ku64(j, "snapshots", n->snapshots);
	lw_json_ku64(j, "below_low", n->below_low);
	lw_json_ku64(j, "below_min", n->below_min);
	lw_json_ku64(j, "free_pages", n->free_pages);
	lw_json_ku64(j, "free_least", n->free_least);
	lw_json_ku64(j, "wmark_min", n->wmark_min);
	lw_json_ku64(j, "wmark_low", n->wmark_low);
	lw_json_ku64(j, "wmark_high", n->wmark_high);
	if (n->kswapds) {
		lw_json_ku64(j, "kswapd_ns", n->kswapd_ns);
		lw_json_ku64(j, "kswapds", n->kswapds);
	} else {
		lw_json_knull(j, "kswapd_ns");
		lw_json_knull(j, "kswapds");
	}
	lw_json_end_object(j);
}

/* A task's pod (issue 31): {"namespace", "name", "container", "qos",
 * "named"}, or null when it is in no pod or that is not known. */
static void json_pod(struct lw_json *j, const struct lw_pod_rec *p)
{
	if (!p->type) {
		lw_json_knull(j, "pod");
		return;
	}
	lw_json_key(j, "pod");
	lw_json_begin_object(j);
	lw_json_kstr(j, "namespace", p->ns);
	lw_json_kstr(j, "name", p->name);
	if (p->container[0])
		lw_json_kstr(j, "container", p->container);
	else
		lw_json_knull(j, "container");
	if (p->qos[0])
		lw_json_kstr(j, "qos", p->qos);
	else
		lw_json_knull(j, "qos");
	lw_json_kbool(j, "named", p->named);
	lw_json_end_object(j);
}

static void json_evidence(struct lw_json *j, const struct lw_summary *s)
{
	lw_json_key(j, "evidence");
	lw_json_begin_object(j);
	lw_json_key(j, "irqs");
	lw_json_begin_array(j);
	for (size_t i = 0; i < s->nr_irqs; i++) {
		lw_json_begin_object(j);
		lw_json_ku64(j, "irq", s->irqs[i].irq);
		lw_json_kstr(j, "name", s->irqs[i].name);
		lw_json_ku64(j, "cpu", s->irqs[i].cpu);
		lw_json_ku64(j, "ns", s->irqs[i].ns);
		lw_json_ku64(j, "count", s->irqs[i].count);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_key(j, "softirqs");
	lw_json_begin_array(j);
	for (size_t i = 0; i < s->nr_softirqs; i++) {
		lw_json_begin_object(j);
		lw_json_kstr(j, "vec", lw_softirq_name(s->softirqs[i].vec));
		lw_json_ku64(j, "cpu", s->softirqs[i].cpu);
		lw_json_ku64(j, "ns", s->softirqs[i].ns);
		lw_json_ku64(j, "count", s->softirqs[i].count);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_key(j, "preempted_by");
	lw_json_begin_array(j);
	for (size_t i = 0; i < s->nr_preempt; i++) {
		lw_json_begin_object(j);
		lw_json_ku64(j, "pid", s->preempt[i].pid);
		lw_json_ku64(j, "tgid", s->preempt[i].tgid);
		lw_json_kstr(j, "comm", s->preempt[i].comm);
		lw_json_kbool(j, "tracer",
			      lw_summary_is_tracer(s, s->preempt[i].pid, s->preempt[i].tgid));
		lw_json_ku64(j, "ns", s->preempt[i].ns);
		lw_json_ku64(j, "count", s->preempt[i].count);
		json_pod(j, &s->preempt_pod[i]);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_key(j, "slow_waits");
	lw_json_begin_array(j);
	for (size_t i = 0; i < s->nr_slow_waits; i++) {
		lw_json_begin_object(j);
		lw_json_ku64(j, "pid", s->slow_waits[i].pid);
		lw_json_kstr(j, "comm", s->slow_waits[i].comm);
		lw_json_kbool(j, "tracer", lw_summary_is_tracer(s, s->slow_waits[i].pid, 0));
		lw_json_ku64(j, "requests", s->slow_waits[i].requests);
		lw_json_ku64(j, "ns", s->slow_waits[i].ns);
		json_pod(j, &s->slow_wait_pod[i]);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_key(j, "thp");
	lw_json_begin_object(j);
	lw_json_ku64(j, "collapses", s->thp.collapses);
	lw_json_ku64(j, "collapse_failures", s->thp.collapse_fail);
	lw_json_ku64(j, "scans", s->thp.scans);
	lw_json_ku64(j, "compactions", s->thp.compactions);
	lw_json_ku64(j, "compaction_ns", s->thp.compact_ns);
	lw_json_end_object(j);
	lw_json_key(j, "memory");
	if (!s->cause[LW_CAUSE_MEMORY].measured) {
		lw_json_null(j);
	} else {
		lw_json_begin_object(j);
		lw_json_ku64(j, "slow_faults_minor", s->mem_faults_min);
		lw_json_ku64(j, "slow_faults_major", s->mem_faults_maj);
		lw_json_ku64(j, "slow_requests_with_memory", s->mem_requests);
		lw_json_ku64(j, "faults_minor", s->mem.faults_min);
		lw_json_ku64(j, "faults_major", s->mem.faults_maj);
		lw_json_ku64(j, "faults_huge", s->mem.faults_huge);
		lw_json_ku64(j, "fault_ns", s->mem.fault_ns);
		lw_json_ku64(j, "fault_sleeps", s->mem.fault_sleeps);
		lw_json_ku64(j, "fault_sleep_ns", s->mem.fault_sleep_ns);
		lw_json_ku64(j, "reclaims", s->mem.reclaims);
		lw_json_ku64(j, "reclaims_memcg", s->mem.reclaim_memcg);
		lw_json_ku64(j, "reclaim_ns", s->mem.reclaim_ns);
		lw_json_ku64(j, "reclaim_scanned", s->mem.reclaim_scanned);
		lw_json_ku64(j, "reclaim_reclaimed", s->mem.reclaim_reclaimed);
		lw_json_ku64(j, "stalls", s->mem.stalls);
		lw_json_ku64(j, "stall_ns", s->mem.stall_ns);
		json_mem_node(j, &s->mem_node);
		lw_json_end_object(j);
	}
	lw_json_key(j, "clock");
	lw_json_begin_object(j);
	if (s->freq_measured) {
		lw_json_ku64(j, "min_khz", s->freq_min_khz);
		lw_json_ku64(j, "max_khz", s->freq_max_khz);
		lw_json_ku64(j, "ref_khz", s->ref_khz);
	} else {
		lw_json_knull(j, "min_khz");
		lw_json_knull(j, "max_khz");
		lw_json_knull(j, "ref_khz");
	}
	lw_json_end_object(j);
	lw_json_end_object(j);
}

/* What was attached for how long: null for a capture from before tier
 * records (ABI 4), where the whole run was traced or not said. */
static void json_attached(struct lw_json *j, const struct lw_summary *s)
{
	if (!s->tiers_known) {
		lw_json_knull(j, "attached");
		return;
	}
	lw_json_key(j, "attached");
	lw_json_begin_object(j);
	if (s->watch_ns) {
		lw_json_ku64(j, "watch_ns", s->watch_ns);
		lw_json_ku64(j, "watch_slow_requests", s->watch_slow);
	} else {
		lw_json_knull(j, "watch_ns");
		lw_json_knull(j, "watch_slow_requests");
	}
	lw_json_ku64(j, "full_ns", s->full_ns);
	lw_json_ku64(j, "escalations", s->escalations);
	lw_json_end_object(j);
}

static void summary_json(struct lw_render *r, const struct lw_summary *s,
			 const struct lw_findings *fs)
{
	struct lw_json j;

	lw_json_init(&j, r->f, false);
	lw_json_begin_object(&j);
	lw_json_kstr(&j, "type", "summary");
	lw_json_ku64(&j, "pid", s->pid);
	lw_json_kstr(&j, "comm", s->comm);
	if (s->counted) {
		lw_json_ku64(&j, "duration_ns", s->duration_ns);
		lw_json_ku64(&j, "requests", s->requests);
	} else {
		lw_json_knull(&j, "duration_ns");
		lw_json_knull(&j, "requests");
	}
	lw_json_ku64(&j, "slow_requests", s->slow_requests);
	if (s->threshold_ns == LW_THRESH_UNKNOWN)
		lw_json_knull(&j, "threshold_ns");
	else
		lw_json_ku64(&j, "threshold_ns", s->threshold_ns);
	lw_json_kstr(&j, "threshold_kind", s->threshold_fixed ? "fixed" : "p99");
	if (s->counted) {
		lw_json_ku64(&j, "p50_ns", s->p50_ns);
		lw_json_ku64(&j, "p99_ns", s->p99_ns);
	} else {
		lw_json_knull(&j, "p50_ns");
		lw_json_knull(&j, "p99_ns");
	}
	lw_json_kstr(&j, "freq_source", lw_freq_source_name(s->freq_source));
	if (s->irq_entry_ns)
		lw_json_ku64(&j, "irq_entry_cost_ns", s->irq_entry_ns);
	else
		lw_json_knull(&j, "irq_entry_cost_ns");
	if (s->fault_entry_ns)
		lw_json_ku64(&j, "fault_entry_cost_ns", s->fault_entry_ns);
	else
		lw_json_knull(&j, "fault_entry_cost_ns");
	lw_json_ku64(&j, "dropped", s->dropped);
	lw_json_ku64(&j, "incomplete", s->incomplete);
	lw_json_ku64(&j, "untracked", s->untracked);
	lw_json_ku64(&j, "handoffs", s->handoffs);
	lw_json_ku64(&j, "handoff_slow_requests", s->handoff_slow);
	if (s->req_mode == LW_REQ_AUTO)
		lw_json_knull(&j, "request_mode");
	else
		lw_json_kstr(&j, "request_mode", lw_req_mode_name(s->req_mode));
	lw_json_kbool(&j, "target_exited", s->flags & LW_META_TARGET_EXITED);
	/* "running" when their own running holds the largest part of the
	 * excess; kernel_dominant is then the largest kernel cause's verdict */
	lw_json_kstr(&j, "dominant", lw_summary_verdict(s));
	lw_json_ku64(&j, "engine_errors", s->engine_errors);
	lw_json_kstr(&j, "kernel_dominant", lw_cause_name(s->dominant));
	lw_json_key(&j, "excess");
	lw_json_begin_object(&j);
	lw_json_ku64(&j, "ns", s->excess_ns);
	lw_json_ku64(&j, "running_ns", s->running_excess_ns);
	lw_json_kdouble(&j, "running_share", lw_summary_excess_share(s, s->running_excess_ns));
	lw_json_end_object(&j);
	json_missing(&j, r, s);
	if (s->counted && lw_summary_counted_ns(s))
		lw_json_kdouble(&j, "requests_per_s", s->requests * 1e9 / lw_summary_counted_ns(s));
	else
		lw_json_knull(&j, "requests_per_s");
	json_attached(&j, s);
	json_causes(&j, s);
	json_evidence(&j, s);
	lw_json_key(&j, "findings");
	lw_findings_json(&j, fs);
	lw_json_end_object(&j);
	lw_json_end(&j);
	fflush(r->f);
}

/* ---- text summary ------------------------------------------------------- */

/* Records the engine could not take in, by kind: what they held is missing
 * from every number above. */
static void text_engine_errors(FILE *f, const struct lw_summary *s)
{
	const char *sep = "";

	if (!s->engine_errors)
		return;
	fprintf(f, "Engine errors: %llu (", (unsigned long long)s->engine_errors);
	for (int k = 0; k < LW_EERR_MAX; k++) {
		if (!s->engine_error[k])
			continue;
		fprintf(f, "%s%s: %llu", sep, lw_engine_err_name(k),
			(unsigned long long)s->engine_error[k]);
		sep = ", ";
	}
	fprintf(f, "); what they held is missing from the numbers above.\n");
}

static void text_causes(FILE *f, const struct lw_summary *s)
{
	char d[32], sh[16];

	fprintf(f, "Where the slow requests' time went (%s in %llu requests):\n",
		lw_fmt_ns(d, sizeof(d), s->slow_latency_ns), (unsigned long long)s->slow_requests);
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++) {
		bool measured = s->cause[c].measured;

		fmt_share(sh, sizeof(sh), s->cause[c].share, measured);
		fprintf(f, "  %-10s %6s  %-10s", lw_cause_name(c), sh,
			measured ? lw_fmt_ns(d, sizeof(d), s->cause[c].ns) : "");
		if (!measured && c == LW_CAUSE_FREQ)
			fprintf(f, " no frequency data (no cpufreq driver and no clock events; "
				   "nothing was measured)");
		else if (!measured && c == LW_CAUSE_QUOTA)
			fprintf(f, " not measured (no CFS bandwidth control to read, or a "
				   "capture older than it)");
		else if (!measured && c == LW_CAUSE_MEMORY)
			fprintf(f, " not measured (no page-fault tracepoint or perf events, or "
				   "a capture older than it)");
		else if (!measured)
			fprintf(f, " not measured (tracepoints not attached)");
		else if (s->cause[c].requests)
			fprintf(f, " cause of %llu slow requests",
				(unsigned long long)s->cause[c].requests);
		if (c == (int)s->dominant)
			fprintf(f, "  <- dominant");
		fprintf(f, "\n");
	}
	fmt_share(sh, sizeof(sh),
		  s->slow_latency_ns ? (double)s->bucket_ns[LW_B_RUN] / s->slow_latency_ns : 0,
		  true);
	fprintf(f, "  (running %s", sh);
	if (!(s->flags & LW_META_NO_STEAL)) {
		/* a part of running: the host's */
		fmt_share(sh, sizeof(sh),
			  s->slow_latency_ns ? (double)s->bucket_ns[LW_B_STEAL] / s->slow_latency_ns
					     : 0,
			  true);
		fprintf(f, ", of it steal %s", sh);
	}
	fmt_share(sh, sizeof(sh),
		  s->slow_latency_ns ? (double)s->bucket_ns[LW_B_BLOCKED] / s->slow_latency_ns : 0,
		  true);
	fprintf(f, ", blocked %s", sh);
	/* waits for an idle CPU that polled: not the idle cause's */
	if (s->bucket_ns[LW_B_IDLE_POLL]) {
		fmt_share(sh, sizeof(sh), (double)s->bucket_ns[LW_B_IDLE_POLL] / s->slow_latency_ns,
			  true);
		fprintf(f, ", waiting for a polling idle CPU %s", sh);
	}
	fprintf(f, ")\n");
	if ((s->flags & LW_META_NO_STEAL) && (s->flags & LW_META_GUEST))
		fprintf(f, "  (a virtual machine without a steal clock latwhy reads: time its "
			   "host took while it ran is in running, and cannot be seen from here)\n");
}

/* The slow requests' own running holds the largest part of their excess
 * (summarize_causes()): that is the verdict, then the largest kernel cause. */
static void text_verdict_running(FILE *f, const struct lw_summary *s)
{
	enum lw_cause top = LW_CAUSE_NONE;
	char own[256];

	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++)
		if (s->cause[c].measured && s->cause[c].ns &&
		    (top == LW_CAUSE_NONE || s->cause[c].ns > s->cause[top].ns))
			top = c;
	lw_summary_verdict_own(s, own, sizeof(own));
	fprintf(f, "Verdict: %s", own);
	if (top == LW_CAUSE_NONE)
		fprintf(f, "; no kernel cause.\n");
	else
		fprintf(f,
			"; largest kernel cause %s, %.0f%% of the excess (%.0f%% of the slow "
			"requests' time).\n",
			lw_cause_name(top), lw_summary_excess_share(s, s->cause[top].ns) * 100,
			s->cause[top].share * 100);
}

/* The node's free memory against its watermarks, and kswapd's CPU time,
 * over the trace's snapshots: whether the node itself was short. */
static void text_mem_node(FILE *f, const struct lw_mem_node *n)
{
	long ps = sysconf(_SC_PAGESIZE);
	double mib = (ps > 0 ? (double)ps : 4096.0) / (1 << 20);
	char k[32];

	if (!n->snapshots)
		return;
	fprintf(f,
		"  memory (node): free %.0f MiB, least %.0f MiB (watermarks min %.0f, low %.0f, "
		"high "
		"%.0f MiB); below low in %llu of %llu snapshots, below min in %llu",
		n->free_pages * mib, n->free_least * mib, n->wmark_min * mib, n->wmark_low * mib,
		n->wmark_high * mib, (unsigned long long)n->below_low,
		(unsigned long long)n->snapshots, (unsigned long long)n->below_min);
	if (n->kswapds)
		fprintf(f, "; kswapd ran %s (%llu thread%s)", lw_fmt_ns(k, sizeof(k), n->kswapd_ns),
			(unsigned long long)n->kswapds, n->kswapds == 1 ? "" : "s");
	fprintf(f, "\n");
}

/* Memory management in the slow requests: their faults and where their
 * time went, and the targets' reclaim and stalls, cumulative. */
static void text_memory(FILE *f, const struct lw_summary *s)
{
	char a[32], b[32], c[32], d[32];

	if (!s->cause[LW_CAUSE_MEMORY].measured)
		return;
	fprintf(f,
		"  memory: %llu minor and %llu major page faults in the slow requests (%llu of "
		"them had memory time): fault %s, fault wait %s, reclaim %s, memory.high/stall "
		"%s\n",
		(unsigned long long)s->mem_faults_min, (unsigned long long)s->mem_faults_maj,
		(unsigned long long)s->mem_requests,
		lw_fmt_ns(a, sizeof(a), s->bucket_ns[LW_B_FAULT]),
		lw_fmt_ns(b, sizeof(b), s->bucket_ns[LW_B_FAULT_WAIT]),
		lw_fmt_ns(c, sizeof(c), s->bucket_ns[LW_B_RECLAIM]),
		lw_fmt_ns(d, sizeof(d), s->bucket_ns[LW_B_MEMORY_HIGH]));
	fprintf(f,
		"  memory (all requests): %llu minor, %llu major faults (%llu of a huge page) in "
		"%s; %llu direct reclaims (%llu memcg) in %s, %llu pages scanned, %llu "
		"reclaimed; %llu memory stalls in %s\n",
		(unsigned long long)s->mem.faults_min, (unsigned long long)s->mem.faults_maj,
		(unsigned long long)s->mem.faults_huge, lw_fmt_ns(a, sizeof(a), s->mem.fault_ns),
		(unsigned long long)s->mem.reclaims, (unsigned long long)s->mem.reclaim_memcg,
		lw_fmt_ns(b, sizeof(b), s->mem.reclaim_ns),
		(unsigned long long)s->mem.reclaim_scanned,
		(unsigned long long)s->mem.reclaim_reclaimed, (unsigned long long)s->mem.stalls,
		lw_fmt_ns(c, sizeof(c), s->mem.stall_ns));
	text_mem_node(f, &s->mem_node);
}

/* The interrupts' cost outside their handlers, a part of irq: a count
 * times a cost measured at start, so both are said. */
static void text_irq_entry(FILE *f, const struct lw_summary *s)
{
	__u64 ns = s->bucket_ns[LW_B_IRQ_ENTRY];
	char d[32], c[32];

	if (s->flags & LW_META_NO_IRQ)
		return;
	if (!s->irq_entry_ns) {
		fprintf(f, "  interrupt entry/exit: not measured (--irq-cost off, one CPU, or the "
			   "measurement failed: -v says why): irq holds the handlers only\n");
		return;
	}
	if (!ns)
		return;
	fprintf(f,
		"  interrupt entry/exit: %s in irq, beyond the handlers: %llu interrupts at %s "
		"each (measured at start)\n",
		lw_fmt_ns(d, sizeof(d), ns), (unsigned long long)(ns / s->irq_entry_ns),
		lw_fmt_ns(c, sizeof(c), s->irq_entry_ns));
}

/* Each CPU's last clock, runs of CPUs at the same clock as one range; CPUs
 * without a clock are left out, not shown as 0. */
static void text_cpu_clocks(FILE *f, const struct lw_summary *s)
{
	const char *sep = "";
	__u32 n = s->nr_cpu_khz < LW_MAX_CPUS ? s->nr_cpu_khz : LW_MAX_CPUS;

	if (!s->freq_measured)
		return;
	fprintf(f, "  clock per CPU, last reading:");
	for (__u32 c = 0; c < n; c++) {
		__u32 end = c;

		if (!s->cpu_khz[c])
			continue;
		while (end + 1 < n && s->cpu_khz[end + 1] == s->cpu_khz[c])
			end++;
		if (end == c)
			fprintf(f, "%s cpu %u %u MHz", sep, c, s->cpu_khz[c] / 1000);
		else
			fprintf(f, "%s cpus %u-%u %u MHz", sep, c, end, s->cpu_khz[c] / 1000);
		sep = ",";
		c = end;
	}
	fprintf(f, "\n");
}

static void text_evidence(FILE *f, const struct lw_summary *s)
{
	char d[32], clock[96], pod[LW_K8S_NS_LEN + LW_K8S_NAME_LEN + LW_K8S_CTR_LEN + 48];

	fprintf(f, "Evidence:\n");
	for (size_t i = 0; i < s->nr_preempt && i < 3; i++) {
		if (s->preempt[i].pid == LW_PID_IDLE_POLL) {
			fprintf(f,
				"  CPU idle but polling while it waited (no C-state to leave): %s "
				"over %llu wake-ups (the wake-up itself, or a vCPU its host "
				"did not run)\n",
				lw_fmt_ns(d, sizeof(d), s->preempt[i].ns),
				(unsigned long long)s->preempt[i].count);
			continue;
		}
		if (!s->preempt[i].pid) { /* the idle task: nothing ran */
			fprintf(f,
				"  CPU idle while it waited: %s over %llu wake-ups (idle exit "
				"and wake-up IPI latency)\n",
				lw_fmt_ns(d, sizeof(d), s->preempt[i].ns),
				(unsigned long long)s->preempt[i].count);
			continue;
		}
		if (lw_summary_is_tracer(s, s->preempt[i].pid, s->preempt[i].tgid)) {
			fprintf(f, "  ran instead of it: latwhy (this tracer) %s over %llu waits\n",
				lw_fmt_ns(d, sizeof(d), s->preempt[i].ns),
				(unsigned long long)s->preempt[i].count);
			continue;
		}
		fprintf(f, "  ran instead of it: %s (%s%s%s %u) %s over %llu waits\n",
			s->preempt[i].comm, lw_pod_words(&s->preempt_pod[i], pod, sizeof(pod)),
			s->preempt_pod[i].type ? "; " : "",
			s->preempt[i].tgid == (__u32)s->pid ? "its own thread" : "pid",
			s->preempt[i].pid, lw_fmt_ns(d, sizeof(d), s->preempt[i].ns),
			(unsigned long long)s->preempt[i].count);
	}
	/* over the slow requests alone: which wait made them slow */
	for (size_t i = 0; i < s->nr_slow_waits && i < 2; i++) {
		const struct lw_slow_wait *w = &s->slow_waits[i];
		char who[LW_COMM_LEN + sizeof(pod) + 24];

		if (!w->pid)
			snprintf(who, sizeof(who), "an idle CPU to wake");
		else if (w->pid == LW_PID_IDLE_POLL)
			snprintf(who, sizeof(who), "a polling idle CPU to switch");
		else if (lw_summary_is_tracer(s, w->pid, 0))
			snprintf(who, sizeof(who), "latwhy (this tracer)");
		else
			snprintf(who, sizeof(who), "%s (%s%spid %u)", w->comm,
				 lw_pod_words(&s->slow_wait_pod[i], pod, sizeof(pod)),
				 s->slow_wait_pod[i].type ? "; " : "", w->pid);
		fprintf(f, "  slow requests waited longest for %s: in %llu of %llu, %s\n", who,
			(unsigned long long)w->requests, (unsigned long long)s->slow_requests,
			lw_fmt_ns(d, sizeof(d), w->ns));
	}
	for (size_t i = 0; i < s->nr_irqs && i < 3; i++)
		fprintf(f, "  IRQ %u (%s) on CPU %u: %s in %llu interrupts\n", s->irqs[i].irq,
			s->irqs[i].name, s->irqs[i].cpu, lw_fmt_ns(d, sizeof(d), s->irqs[i].ns),
			(unsigned long long)s->irqs[i].count);
	text_irq_entry(f, s);
	for (size_t i = 0; i < s->nr_softirqs && i < 3; i++)
		fprintf(f, "  softirq %s on CPU %u: %s in %llu %s\n",
			lw_softirq_name(s->softirqs[i].vec), s->softirqs[i].cpu,
			lw_fmt_ns(d, sizeof(d), s->softirqs[i].ns),
			(unsigned long long)s->softirqs[i].count,
			lw_softirq_unit(lw_softirq_name(s->softirqs[i].vec)));
	fprintf(f,
		"  THP: %llu collapses (%llu failed) and %llu khugepaged scans of its memory, "
		"%llu direct compactions (%s)\n",
		(unsigned long long)s->thp.collapses, (unsigned long long)s->thp.collapse_fail,
		(unsigned long long)s->thp.scans, (unsigned long long)s->thp.compactions,
		lw_fmt_ns(d, sizeof(d), s->thp.compact_ns));
	text_memory(f, s);
	fmt_clock(clock, sizeof(clock), s);
	fprintf(f, "  clock: %s\n", clock);
	text_cpu_clocks(f, s);
	fprintf(f, "  CPUs the slow requests ran on: ");
	print_cpu_list(f, s->cpus_mask);
	fprintf(f, "\n");
}

/* serve's tiers: what was attached for how long, and what each counted. */
static void text_attached(FILE *f, const struct lw_summary *s)
{
	char w[32], full[32];

	if (!lw_summary_part_time(s))
		return;
	lw_fmt_ns(full, sizeof(full), s->full_ns);
	if (s->watch_ns)
		fprintf(f,
			"Attached: TCP requests counted for %s (always-attached tier: ~%llu "
			"slow); "
			"full tracing %s (%u escalation%s), whose slow requests alone have "
			"causes\n",
			lw_fmt_ns(w, sizeof(w), s->watch_ns), (unsigned long long)s->watch_slow,
			full, s->escalations, s->escalations == 1 ? "" : "s");
	else
		fprintf(f,
			"Attached: full tracing %s of it (duty cycle): requests and rates are of "
			"those %s\n",
			full, full);
}

static void summary_text(struct lw_render *r, const struct lw_summary *s,
			 const struct lw_findings *fs)
{
	char d[32], p50[32], p99[32], th[48], miss[128], who[64];
	FILE *f = r->f;

	if (s->counted)
		lw_fmt_ns(d, sizeof(d), s->duration_ns);
	fprintf(f, "\n== latwhy: %s, %s%s%s ==\n", target_name(r, s, who, sizeof(who)),
		s->counted ? d : "duration unknown", s->counted ? " traced" : "",
		s->flags & LW_META_TARGET_EXITED ? "; the process exited during the trace" : "");
	if (*missing_causes(s->flags, miss, sizeof(miss)))
		fprintf(f, "Not attached:%s (those causes are not measured)\n", miss);
	text_attached(f, s);
	if (s->threshold_ns == LW_THRESH_UNKNOWN)
		snprintf(th, sizeof(th), "not established (too few requests)");
	else
		lw_fmt_ns(th, sizeof(th), s->threshold_ns);
	if (!s->counted)
		fprintf(f,
			"Requests (%s): not counted (no periodic record: the capture ends before "
			"the first); slow (> %s%s): %llu recorded\n",
			lw_req_mode_name(s->req_mode), th,
			s->threshold_fixed ? "" : ", running p99",
			(unsigned long long)s->slow_requests);
	else
		fprintf(f, "Requests (%s): %llu (%.0f/s), p50 %s, p99 %s; slow (> %s%s): %llu\n",
			lw_req_mode_name(s->req_mode), (unsigned long long)s->requests,
			lw_summary_counted_ns(s)
				? (double)s->requests * 1e9 / lw_summary_counted_ns(s)
				: 0.0,
			lw_fmt_ns(p50, sizeof(p50), s->p50_ns),
			lw_fmt_ns(p99, sizeof(p99), s->p99_ns), th,
			s->threshold_fixed ? "" : ", running p99",
			(unsigned long long)s->slow_requests);
	if (s->flags & LW_META_NO_ARRIVAL)
		fprintf(f, "  no arrival times (sk_data_ready): a request starts at the wake-up, "
			   "the last reply or the read; an event loop's queueing may be under- or "
			   "overstated\n");
	if (s->flags & LW_META_NO_BACKLOG)
		fprintf(f, "  no receive backlog waits (netif_rx, netif_receive_skb): data that "
			   "waited for NET_RX before it was ready is not in its request\n");
	if ((s->flags & LW_META_NO_IDLE_STATE) && s->bucket_ns[LW_B_IDLE])
		fprintf(f, "  no idle states (cpu_idle): a wait for an idle CPU counts as its exit "
			   "from idle, also where the CPU only polled\n");
	if (s->handoffs)
		fprintf(f,
			"  handed off: %llu requests (%llu of them slow, %s) were answered by "
			"another thread than the one that read them (a thread pool, goroutines "
			"moving between threads): their latency is measured, their time is not "
			"split into causes%s\n",
			(unsigned long long)s->handoffs, (unsigned long long)s->handoff_slow,
			lw_fmt_ns(d, sizeof(d), s->handoff_slow_ns),
			s->handoff_slow ? " (the shares below are over the other slow requests)"
					: "");
	if (!s->slow_requests) {
		fprintf(f, "No slow requests %s.\n",
			s->handoff_slow ? "could be split into causes: every one was handed off"
			: s->requests	? "were seen"
					: "were seen: no requests were detected (is it a "
					  "request/response server? try --request "
					  "uprobe:BINARY:SYMBOL)");
	} else {
		text_causes(f, s);
		if (s->running_dominant || s->steal_dominant)
			text_verdict_running(f, s);
		else if (s->dominant == LW_CAUSE_NONE)
			fprintf(f, "Verdict: no kernel cause reaches 10%% of the slow requests' "
				   "time.\n");
		else
			fprintf(f, "Verdict: %s (%.0f%% of the slow requests' time).\n",
				lw_cause_name(s->dominant), s->cause[s->dominant].share * 100);
		text_evidence(f, s);
	}
	lw_findings_print(f, fs, LW_FINDINGS_SECTION);
	if (s->dropped)
		fprintf(f,
			"Dropped: %llu slow-request records were lost (ring buffer full); the "
			"shares above are over the records received.\n",
			(unsigned long long)s->dropped);
	else
		fprintf(f, "Dropped: 0 records.\n");
	if (s->incomplete)
		fprintf(f,
			"Incomplete: %llu scheduler events were missed during requests; the "
			"requests they touched are marked and their split is estimated.\n",
			(unsigned long long)s->incomplete);
	if (s->untracked)
		fprintf(f,
			"Untracked: %llu requests were given up: a thread had more than %d "
			"open at once.\n",
			(unsigned long long)s->untracked, LW_REQ_SLOTS);
	text_engine_errors(f, s);
	fflush(f);
}

void lw_render_summary(struct lw_render *r, const struct lw_summary *s,
		       const struct lw_findings *fs)
{
	if (r->json)
		summary_json(r, s, fs);
	else
		summary_text(r, s, fs);
}
