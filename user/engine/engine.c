// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * engine.c - attribution and evidence from latwhy records.
 *
 * Pure: no I/O, no libbpf. Totals are kept over every slow request fed; the
 * requests themselves are kept up to LW_KEEP (a ring), enough for a report
 * while bounding memory on a long continuous run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

#define LW_KEEP 100000

struct lw_engine {
	struct lw_request *reqs; /* ring of the newest LW_KEEP slow requests */
	size_t nr_reqs, head;
	__u64 slow;
	__u64 slow_latency;
	__u64 handoff_slow, handoff_latency; /* LW_REQ_HANDOFF: not split */
	__u64 bucket_ns[LW_B_MAX];
	struct lw_cause_stat cause[LW_CAUSE_MAX];
	__u64 quota_waits, quota_wait_ns, quota_wait_max_ns;
	__u64 cpus_mask[LW_MAX_CPUS / 64];

	struct lw_irq_rec *irqs;
	size_t nr_irqs, cap_irqs;
	struct lw_softirq_rec *softirqs;
	size_t nr_softirqs, cap_softirqs;
	struct lw_preempt_rec *preempt;
	size_t nr_preempt, cap_preempt;
	struct lw_slow_wait *waits;
	size_t nr_waits, cap_waits;
	struct lw_pod_rec *pods; /* tasks' pods by pid (LW_REC_POD) */
	size_t nr_pods, cap_pods;
	struct lw_thp_stats thp;
	struct lw_mem_stats mem;
	struct lw_mem_node mem_node;
	__u64 mem_faults_min, mem_faults_maj, mem_requests; /* over slow requests */
	struct lw_cpu_rec cpus[LW_MAX_CPUS];
	__u32 max_cpu_seen;

	struct lw_tick_rec tick; /* latest */
	__u64 requests;		 /* sum of tick requests */
	__u64 first_tick_ts;
	struct lw_meta_rec meta;
	bool have_meta;
	__u32 target_pid; /* lw_engine_set_target(): until a META record */
	char target_comm[LW_COMM_LEN];
	struct lw_tier_rec tiers; /* LW_REC_TIER summed (ts_ns: the last one's) */
	bool have_tiers;
	__u64 hist[LW_HIST_BUCKETS]; /* latest LW_REC_HIST */
	__u64 hist_count;
	bool have_hist;

	__u64 errors[LW_EERR_MAX];
	lw_request_fn on_request;
	void *on_request_ctx;
};

struct lw_engine *lw_engine_new(void)
{
	struct lw_engine *e = calloc(1, sizeof(*e));

	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	e->tick.threshold_ns = LW_THRESH_UNKNOWN;
	return e;
}

void lw_engine_set_target(struct lw_engine *e, __u32 pid, const char *comm)
{
	e->target_pid = pid;
	snprintf(e->target_comm, sizeof(e->target_comm), "%s", comm ? comm : "");
}

void lw_engine_free(struct lw_engine *e)
{
	if (!e)
		return;
	free(e->reqs);
	free(e->irqs);
	free(e->softirqs);
	free(e->preempt);
	free(e->waits);
	free(e->pods);
	free(e);
}

void lw_engine_on_request(struct lw_engine *e, lw_request_fn fn, void *ctx)
{
	e->on_request = fn;
	e->on_request_ctx = ctx;
}

void lw_request_cause_ns(const struct lw_request *r, __u64 v[LW_CAUSE_MAX])
{
	lw_cause_ns(r->ns, v);
}

enum lw_cause lw_request_cause(const struct lw_request *r)
{
	__u64 v[LW_CAUSE_MAX];

	lw_cause_ns(r->ns, v);
	return lw_cause_of(v, r->latency_ns);
}

bool lw_request_consistent(const struct lw_request *r)
{
	__u64 sum = 0, diff;

	for (int b = 0; b < LW_B_MAX; b++)
		if (lw_bucket_whole(b) == LW_B_MAX) /* not a part of another */
			sum += r->ns[b];
	diff = sum > r->latency_ns ? sum - r->latency_ns : r->latency_ns - sum;
	return diff * 100 <= r->latency_ns;
}

/* The element of a growable array whose key_len bytes at key_off match
 * rec's, else a new one holding a copy of rec; NULL when out of memory. */
static void *find_or_append(void **arr, size_t *n, size_t *cap, size_t size, const void *rec,
			    size_t key_off, size_t key_len)
{
	char *a = *arr;

	for (size_t i = 0; i < *n; i++)
		if (!memcmp(a + i * size + key_off, (const char *)rec + key_off, key_len))
			return a + i * size;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;

		a = realloc(a, ncap * size);
		if (!a)
			return NULL;
		*arr = a;
		*cap = ncap;
	}
	return memcpy(a + (*n)++ * size, rec, size);
}

/* Replace-or-append, matched by the first key_len bytes at key_off. */
static int upsert(void **arr, size_t *n, size_t *cap, size_t size, const void *rec, size_t key_off,
		  size_t key_len)
{
	void *el = find_or_append(arr, n, cap, size, rec, key_off, key_len);

	if (!el)
		return -ENOMEM;
	memcpy(el, rec, size);
	return 0;
}

/* The longest wait of a slow request, credited to the task that ran: the
 * evidence of the slow requests alone (the preemptor map covers them all). */
static int add_slow_wait(struct lw_engine *e, const struct lw_request *r)
{
	struct lw_slow_wait key = {.pid = r->preempt_pid}, *w;

	w = find_or_append((void **)&e->waits, &e->nr_waits, &e->cap_waits, sizeof(*w), &key,
			   offsetof(struct lw_slow_wait, pid), sizeof(key.pid));
	if (!w)
		return -ENOMEM;
	memcpy(w->comm, r->preempt_comm, sizeof(w->comm));
	w->comm[sizeof(w->comm) - 1] = '\0';
	w->requests++;
	w->ns += r->preempt_ns;
	return 0;
}

static int feed_request(struct lw_engine *e, const struct lw_request *r)
{
	__u64 v[LW_CAUSE_MAX];
	enum lw_cause c;

	/* Answered by another thread than its reader: its latency is known,
	 * not where it went; counted apart, it would only dilute the shares. */
	if (r->flags & LW_REQ_HANDOFF) {
		e->handoff_slow++;
		e->handoff_latency += r->latency_ns;
		return 0;
	}
	if (!e->reqs) {
		e->reqs = calloc(LW_KEEP, sizeof(*e->reqs));
		if (!e->reqs)
			return -ENOMEM;
	}
	e->reqs[e->head] = *r;
	e->head = (e->head + 1) % LW_KEEP;
	if (e->nr_reqs < LW_KEEP)
		e->nr_reqs++;

	e->slow++;
	e->slow_latency += r->latency_ns;
	for (int b = 0; b < LW_B_MAX; b++)
		e->bucket_ns[b] += r->ns[b];
	lw_cause_ns(r->ns, v);
	for (int k = LW_CAUSE_FREQ; k <= LW_CAUSE_TRACED_LAST; k++)
		e->cause[k].ns += v[k];
	c = lw_cause_of(v, r->latency_ns);
	e->cause[c].requests++;
	if (r->ns[LW_B_QUOTA]) {
		e->quota_waits++;
		e->quota_wait_ns += r->ns[LW_B_QUOTA];
		if (r->ns[LW_B_QUOTA] > e->quota_wait_max_ns)
			e->quota_wait_max_ns = r->ns[LW_B_QUOTA];
	}
	if (r->flags & LW_REQ_MEMORY_KNOWN) {
		e->mem_faults_min += r->faults_min;
		e->mem_faults_maj += r->faults_maj;
		if (v[LW_CAUSE_MEMORY])
			e->mem_requests++;
	}
	if (r->preempt_ns && add_slow_wait(e, r))
		return -ENOMEM;
	if (r->cpu < LW_MAX_CPUS)
		e->cpus_mask[r->cpu / 64] |= 1ULL << (r->cpu % 64);
	return 0;
}

static void feed_hist(struct lw_engine *e, const struct lw_hist_rec *h)
{
	memcpy(e->hist, h->b, sizeof(e->hist));
	e->hist_count = 0;
	for (__u32 i = 0; i < LW_HIST_BUCKETS; i++)
		e->hist_count += h->b[i];
	e->have_hist = true;
}

static int feed_cpu(struct lw_engine *e, const struct lw_cpu_rec *c)
{
	if (c->cpu >= LW_MAX_CPUS)
		return -EINVAL;
	e->cpus[c->cpu] = *c;
	if (c->cpu + 1 > e->max_cpu_seen)
		e->max_cpu_seen = c->cpu + 1;
	return 0;
}

static void feed_tick(struct lw_engine *e, const struct lw_tick_rec *t)
{
	if (!e->first_tick_ts)
		e->first_tick_ts = t->ts_ns;
	e->requests += t->requests;
	e->tick = *t;
}

static void feed_tier(struct lw_engine *e, const struct lw_tier_rec *t)
{
	e->tiers.ts_ns = t->ts_ns;
	e->tiers.watch_ns += t->watch_ns;
	e->tiers.full_ns += t->full_ns;
	e->tiers.watch_slow += t->watch_slow;
	e->tiers.escalations += t->escalations;
	e->have_tiers = true;
}

/* A task's pod, its names cut to their fields (a capture's may hold any
 * bytes): printed as they are, they must end. */
static int feed_pod(struct lw_engine *e, const struct lw_pod_rec *rec)
{
	struct lw_pod_rec p = *rec;

	p.ns[sizeof(p.ns) - 1] = '\0';
	p.name[sizeof(p.name) - 1] = '\0';
	p.container[sizeof(p.container) - 1] = '\0';
	p.qos[sizeof(p.qos) - 1] = '\0';
	return upsert((void **)&e->pods, &e->nr_pods, &e->cap_pods, sizeof(*e->pods), &p,
		      offsetof(struct lw_pod_rec, pid), sizeof(__u32));
}

/* The size of a record of the type; 0 for a type the engine does not know. */
static size_t rec_size(__u32 type)
{
	switch (type) {
	case LW_REC_REQUEST:
		return sizeof(struct lw_request);
	case LW_REC_IRQ:
		return sizeof(struct lw_irq_rec);
	case LW_REC_SOFTIRQ:
		return sizeof(struct lw_softirq_rec);
	case LW_REC_PREEMPT:
		return sizeof(struct lw_preempt_rec);
	case LW_REC_THP:
		return sizeof(struct lw_thp_rec);
	case LW_REC_MEMORY:
		return sizeof(struct lw_mem_rec);
	case LW_REC_CPU:
		return sizeof(struct lw_cpu_rec);
	case LW_REC_TICK:
		return sizeof(struct lw_tick_rec);
	case LW_REC_META:
		return sizeof(struct lw_meta_rec);
	case LW_REC_HIST:
		return sizeof(struct lw_hist_rec);
	case LW_REC_TIER:
		return sizeof(struct lw_tier_rec);
	case LW_REC_POD:
		return sizeof(struct lw_pod_rec);
	}
	return 0;
}

/* A record of a known type, long enough for it. */
static int feed_typed(struct lw_engine *e, __u32 type, const void *rec)
{
	int err;

	switch (type) {
	case LW_REC_REQUEST:
		err = feed_request(e, rec);
		if (!err && e->on_request)
			e->on_request(e->on_request_ctx, rec);
		return err;
	case LW_REC_IRQ:
		return upsert((void **)&e->irqs, &e->nr_irqs, &e->cap_irqs, sizeof(*e->irqs), rec,
			      offsetof(struct lw_irq_rec, irq), 2 * sizeof(__u32));
	case LW_REC_SOFTIRQ:
		return upsert((void **)&e->softirqs, &e->nr_softirqs, &e->cap_softirqs,
			      sizeof(*e->softirqs), rec, offsetof(struct lw_softirq_rec, vec),
			      2 * sizeof(__u32));
	case LW_REC_PREEMPT:
		return upsert((void **)&e->preempt, &e->nr_preempt, &e->cap_preempt,
			      sizeof(*e->preempt), rec, offsetof(struct lw_preempt_rec, pid),
			      sizeof(__u32));
	case LW_REC_THP:
		e->thp = ((const struct lw_thp_rec *)rec)->s;
		return 0;
	case LW_REC_MEMORY:
		e->mem = ((const struct lw_mem_rec *)rec)->s;
		e->mem_node = ((const struct lw_mem_rec *)rec)->node;
		return 0;
	case LW_REC_CPU:
		return feed_cpu(e, rec);
	case LW_REC_TICK:
		feed_tick(e, rec);
		return 0;
	case LW_REC_META:
		e->meta = *(const struct lw_meta_rec *)rec;
		e->have_meta = true;
		return 0;
	case LW_REC_HIST:
		feed_hist(e, rec);
		return 0;
	case LW_REC_TIER:
		feed_tier(e, rec);
		return 0;
	case LW_REC_POD:
		return feed_pod(e, rec);
	}
	return -EINVAL; /* not reached: rec_size() knows the same types */
}

int lw_engine_feed(struct lw_engine *e, const void *rec, size_t len)
{
	enum lw_engine_err kind;
	__u32 type = 0;
	size_t need;
	int err;

	if (len >= sizeof(type))
		memcpy(&type, rec, sizeof(type));
	need = rec_size(type);
	if (len < sizeof(type) || len < need) {
		kind = LW_EERR_SHORT;
		err = -EINVAL;
	} else if (!need) {
		kind = LW_EERR_UNKNOWN;
		err = -EINVAL;
	} else {
		err = feed_typed(e, type, rec);
		kind = err == -ENOMEM ? LW_EERR_NOMEM : LW_EERR_INVALID;
	}
	if (err)
		e->errors[kind]++;
	return err;
}

static int engine_record(void *ctx, const void *rec, size_t len)
{
	return lw_engine_feed(ctx, rec, len);
}

struct lw_sink lw_engine_sink(struct lw_engine *e)
{
	return (struct lw_sink){.ctx = e, .record = engine_record};
}

static int cmp_irq(const void *a, const void *b)
{
	const struct lw_irq_rec *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static int cmp_softirq(const void *a, const void *b)
{
	const struct lw_softirq_rec *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static int cmp_slow_wait(const void *a, const void *b)
{
	const struct lw_slow_wait *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static int cmp_preempt(const void *a, const void *b)
{
	const struct lw_preempt_rec *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* Copy the n largest of an array, sorted, into out. Sorting a copy keeps the
 * engine const for readers; without the memory for it, the summary counts the
 * error and lists none. */
static size_t top_n(const void *src, size_t n, size_t size, void *out, size_t max,
		    int (*cmp)(const void *, const void *), struct lw_summary *s)
{
	void *tmp;

	if (!n)
		return 0;
	tmp = malloc(n * size);
	if (!tmp) {
		s->engine_error[LW_EERR_NOMEM]++;
		return 0;
	}
	memcpy(tmp, src, n * size);
	qsort(tmp, n, size, cmp);
	if (n > max)
		n = max;
	memcpy(out, tmp, n * size);
	free(tmp);
	return n;
}

static void summarize_freq(const struct lw_engine *e, struct lw_summary *s)
{
	bool any_cpu_in_mask = false;

	/* Clocks of the CPUs slow requests ran on; all CPUs only when there
	 * were no slow requests at all. cpu_khz has every CPU's. */
	for (size_t i = 0; i < LW_MAX_CPUS / 64; i++)
		if (s->cpus_mask[i])
			any_cpu_in_mask = true;
	for (__u32 c = 0; c < e->max_cpu_seen; c++) {
		const struct lw_cpu_rec *r = &e->cpus[c];

		if (!r->khz || !r->ref_khz)
			continue;
		s->cpu_khz[c] = r->khz;
		if (any_cpu_in_mask && !(s->cpus_mask[c / 64] & (1ULL << (c % 64))))
			continue;
		s->freq_measured = true;
		if (!s->freq_min_khz || r->khz < s->freq_min_khz)
			s->freq_min_khz = r->khz;
		if (r->khz > s->freq_max_khz)
			s->freq_max_khz = r->khz;
		if (r->ref_khz > s->ref_khz)
			s->ref_khz = r->ref_khz;
	}
	s->nr_cpu_khz = e->max_cpu_seen;
	if (s->freq_source == LW_FREQ_NONE) {
		s->freq_measured = false;
		memset(s->cpu_khz, 0, sizeof(s->cpu_khz));
	}
}

/* Only latwhy's main thread runs while it traces (the interrupt-cost probe's
 * thread has ended), so a wait known by pid alone is latwhy's when the pid is
 * its tgid. */
bool lw_summary_is_tracer(const struct lw_summary *s, __u32 pid, __u32 tgid)
{
	return s->tracer_tgid && (tgid == s->tracer_tgid || pid == s->tracer_tgid);
}

static void summarize_meta(const struct lw_engine *e, struct lw_summary *s)
{
	if (!e->have_meta) {
		s->pid = e->target_pid;
		memcpy(s->comm, e->target_comm, sizeof(s->comm));
		return;
	}
	s->pid = e->meta.pid;
	memcpy(s->comm, e->meta.comm, sizeof(s->comm));
	s->flags = e->meta.flags;
	s->tracer_tgid = e->meta.tracer_tgid;
	s->duration_ns = e->meta.duration_ns;
	s->dropped = e->meta.dropped;
	s->incomplete = e->meta.incomplete;
	s->untracked = e->meta.untracked;
	s->handoffs = e->meta.handoffs;
	s->req_mode = e->meta.req_mode;
	s->freq_source = e->meta.freq_source;
	s->irq_entry_ns = e->meta.irq_entry_ns;
	s->fault_entry_ns = e->meta.fault_entry_ns;
	s->threshold_fixed = e->meta.threshold_ns != LW_THRESH_UNKNOWN;
}

/*
 * Shares of the slow latency, and the dominant cause. The verdict goes to
 * what holds the largest part of the slow requests' excess, their time
 * beyond a typical request's (the p50 latency, all of it taken as its own
 * run; 0 when not known), their own running included: that part is their
 * run (less the clock's loss, frequency's) beyond a typical request's,
 * a kernel cause's part its whole time (a typical request is taken to have
 * none of it). Both lean towards the kernel cause. When running holds the
 * largest part, running_dominant says so and dominant still names the
 * largest kernel cause (10% of the slow latency at least, as before).
 */
static void summarize_causes(const struct lw_engine *e, struct lw_summary *s)
{
	__u64 typical = s->counted ? s->p50_ns : 0, own_run = 0, base, top = 0;
	double best = 0;

	memcpy(s->cause, e->cause, sizeof(s->cause));
	s->dominant = LW_CAUSE_NONE;
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++) {
		s->cause[c].share = e->slow_latency ? (double)e->cause[c].ns / e->slow_latency : 0;
		if (e->cause[c].ns > top)
			top = e->cause[c].ns;
		/* A cause below 10% of the slow latency is noise, not a verdict. */
		if (s->cause[c].share >= 0.10 && s->cause[c].share > best) {
			best = s->cause[c].share;
			s->dominant = c;
		}
	}
	base = e->slow * typical;
	s->excess_ns = e->slow_latency > base ? e->slow_latency - base : 0;
	/* the host's part of the run is not their own code's: a typical
	 * request is taken to have none of it, as of a kernel cause */
	s->steal_ns = (e->meta.flags & LW_META_NO_STEAL) ? 0 : e->bucket_ns[LW_B_STEAL];
	if (e->bucket_ns[LW_B_RUN] > e->bucket_ns[LW_B_FREQ] + s->steal_ns)
		own_run = e->bucket_ns[LW_B_RUN] - e->bucket_ns[LW_B_FREQ] - s->steal_ns;
	s->running_excess_ns = own_run > base ? own_run - base : 0;
	if (s->running_excess_ns > s->excess_ns)
		s->running_excess_ns = s->excess_ns;
	s->steal_dominant = e->slow && s->steal_ns > top && s->steal_ns > s->running_excess_ns;
	s->running_dominant = e->slow && !s->steal_dominant && s->running_excess_ns > top;
}

__u64 lw_summary_counted_ns(const struct lw_summary *s)
{
	if (!s->tiers_known)
		return s->duration_ns;
	return s->watch_ns ? s->watch_ns : s->full_ns;
}

bool lw_summary_part_time(const struct lw_summary *s)
{
	/* a tier record's ticks split the run at their own moments: 1% slack */
	return s->tiers_known &&
	       (s->watch_ns || s->full_ns + s->duration_ns / 100 < s->duration_ns);
}

const char *lw_summary_verdict(const struct lw_summary *s)
{
	if (s->steal_dominant)
		return "steal";
	return s->running_dominant ? "running" : lw_cause_name(s->dominant);
}

int lw_summary_verdict_own(const struct lw_summary *s, char *buf, size_t len)
{
	double steal = lw_summary_excess_share(s, s->steal_ns);

	if (s->steal_dominant)
		return snprintf(buf, len,
				"slow while its host did not run it: the hypervisor took %.0f%% of "
				"the excess (steal, %.0f%% of the slow requests' time)",
				steal * 100,
				s->slow_latency_ns ? 100.0 * s->steal_ns / s->slow_latency_ns : 0);
	if (!s->running_dominant)
		return -1;
	if (s->steal_ns)
		return snprintf(buf, len,
				"slow while running its own code: %.0f%% of the excess (the "
				"hypervisor took %.0f%% more: steal)",
				lw_summary_excess_share(s, s->running_excess_ns) * 100,
				steal * 100);
	return snprintf(buf, len, "slow while running its own code: %.0f%% of the excess",
			lw_summary_excess_share(s, s->running_excess_ns) * 100);
}

double lw_summary_excess_share(const struct lw_summary *s, __u64 ns)
{
	double v;

	if (!s->excess_ns)
		return 0;
	v = (double)ns / s->excess_ns;
	return v > 1 ? 1 : v;
}

/* A cause none of whose tracepoints could be attached was not measured.
 * After summarize_freq(): the frequency cause is measured where clocks were. */
static void summarize_measured(struct lw_summary *s)
{
	const __u32 irq = LW_META_NO_IRQ | LW_META_NO_SOFTIRQ;
	const __u32 thp = LW_META_NO_THP | LW_META_NO_COMPACT;

	for (int c = 0; c < LW_CAUSE_MAX; c++)
		s->cause[c].measured = true;
	s->cause[LW_CAUSE_FREQ].measured = s->freq_measured;
	s->cause[LW_CAUSE_IRQ].measured = (s->flags & irq) != irq;
	s->cause[LW_CAUSE_THP].measured = (s->flags & thp) != thp;
	s->cause[LW_CAUSE_QUOTA].measured = !(s->flags & LW_META_NO_QUOTA);
	s->cause[LW_CAUSE_MEMORY].measured = !(s->flags & LW_META_NO_MEMORY);
}

/* The records' errors and the summary's own (top_n()). */
static void summarize_errors(const struct lw_engine *e, struct lw_summary *s)
{
	s->engine_errors = 0;
	for (int k = 0; k < LW_EERR_MAX; k++) {
		s->engine_error[k] += e->errors[k];
		s->engine_errors += s->engine_error[k];
	}
}

const char *lw_pod_words(const struct lw_pod_rec *p, char *buf, size_t len)
{
	if (!p->type)
		snprintf(buf, len, "%s", "");
	else if (!p->named)
		snprintf(buf, len, "pod with uid %.*s (no log directory)%s%.*s",
			 (int)sizeof(p->name), p->name, p->container[0] ? ", container " : "",
			 (int)sizeof(p->container), p->container);
	else
		snprintf(buf, len, "pod %.*s/%.*s%s%.*s", (int)sizeof(p->ns), p->ns,
			 (int)sizeof(p->name), p->name, p->container[0] ? ", container " : "",
			 (int)sizeof(p->container), p->container);
	return buf;
}

static const struct lw_pod_rec *pod_of(const struct lw_engine *e, __u32 pid)
{
	for (size_t i = 0; pid && i < e->nr_pods; i++)
		if (e->pods[i].pid == pid)
			return &e->pods[i];
	return NULL;
}

/* Each preemptor's pod, the slow requests' longest waits' and the run's
 * process's, where a LW_REC_POD named one (type 0: none). */
static void summarize_pods(const struct lw_engine *e, struct lw_summary *s)
{
	const struct lw_pod_rec *p;

	for (size_t i = 0; i < s->nr_preempt; i++)
		if ((p = pod_of(e, s->preempt[i].pid)))
			s->preempt_pod[i] = *p;
	for (size_t i = 0; i < s->nr_slow_waits; i++)
		if ((p = pod_of(e, s->slow_waits[i].pid)))
			s->slow_wait_pod[i] = *p;
	if ((p = pod_of(e, (__u32)s->pid)))
		s->target_pod = *p;
}

void lw_engine_summarize(const struct lw_engine *e, struct lw_summary *s)
{
	memset(s, 0, sizeof(*s));
	summarize_meta(e, s);
	if (!s->duration_ns && e->first_tick_ts)
		s->duration_ns = e->tick.ts_ns - e->first_tick_ts;
	s->counted = e->have_meta || e->first_tick_ts || e->have_hist;
	s->requests = e->have_meta && e->meta.requests ? e->meta.requests : e->requests;
	s->tiers_known = e->have_tiers;
	s->watch_ns = e->tiers.watch_ns;
	s->full_ns = e->tiers.full_ns;
	s->watch_slow = e->tiers.watch_slow;
	s->escalations = e->tiers.escalations;
	s->slow_requests = e->slow;
	s->handoff_slow = e->handoff_slow;
	s->handoff_slow_ns = e->handoff_latency;
	s->threshold_ns = s->threshold_fixed ? e->meta.threshold_ns : e->tick.threshold_ns;
	/* the histogram where the source sent one; a tick's quantiles else */
	s->p50_ns = e->have_hist ? lw_hist_quantile(e->hist, e->hist_count, 0.50) : e->tick.p50_ns;
	s->p99_ns = e->have_hist ? lw_hist_quantile(e->hist, e->hist_count, 0.99) : e->tick.p99_ns;
	s->slow_latency_ns = e->slow_latency;
	memcpy(s->bucket_ns, e->bucket_ns, sizeof(s->bucket_ns));
	memcpy(s->cpus_mask, e->cpus_mask, sizeof(s->cpus_mask));
	summarize_causes(e, s);
	s->nr_irqs = top_n(e->irqs, e->nr_irqs, sizeof(*e->irqs), s->irqs, LW_TOP, cmp_irq, s);
	s->nr_softirqs = top_n(e->softirqs, e->nr_softirqs, sizeof(*e->softirqs), s->softirqs,
			       LW_TOP, cmp_softirq, s);
	s->nr_preempt = top_n(e->preempt, e->nr_preempt, sizeof(*e->preempt), s->preempt, LW_TOP,
			      cmp_preempt, s);
	s->nr_slow_waits = top_n(e->waits, e->nr_waits, sizeof(*e->waits), s->slow_waits, LW_TOP,
				 cmp_slow_wait, s);
	s->thp = e->thp;
	s->mem = e->mem;
	s->mem_node = e->mem_node;
	s->mem_faults_min = e->mem_faults_min;
	s->mem_faults_maj = e->mem_faults_maj;
	s->mem_requests = e->mem_requests;
	s->quota_waits = e->quota_waits;
	s->quota_wait_ns = e->quota_wait_ns;
	s->quota_wait_max_ns = e->quota_wait_max_ns;
	summarize_pods(e, s);
	summarize_freq(e, s);
	summarize_measured(s);
	summarize_errors(e, s);
}

size_t lw_engine_requests(const struct lw_engine *e, const struct lw_request **v)
{
	*v = e->reqs;
	return e->nr_reqs;
}

__u64 lw_hist_lower(__u32 b)
{
	__u32 g, sub;

	if (b < LW_HIST_SUB)
		return b;
	g = b >> LW_HIST_SUB_BITS;
	sub = b & (LW_HIST_SUB - 1);
	if (g - 1 + LW_HIST_SUB_BITS >= 64)
		return ~0ULL;
	return (__u64)(LW_HIST_SUB + sub) << (g - 1);
}

__u64 lw_hist_quantile(const __u64 *b, __u64 total, double q)
{
	__u64 rank, seen = 0;

	if (!total)
		return 0;
	rank = (__u64)(q * (double)total + 0.999999);
	if (rank < 1)
		rank = 1;
	for (__u32 i = 0; i < LW_HIST_BUCKETS; i++) {
		if (!b[i])
			continue;
		if (seen + b[i] >= rank) {
			/* interpolate linearly inside the bucket */
			__u64 lo = lw_hist_lower(i);
			__u64 hi = i + 1 < LW_HIST_BUCKETS ? lw_hist_lower(i + 1) : lo;
			double frac = (double)(rank - seen) / (double)b[i];

			return lo + (__u64)((double)(hi - lo) * frac);
		}
		seen += b[i];
	}
	return 0;
}

const char *lw_req_mode_name(enum lw_req_mode m)
{
	switch (m) {
	case LW_REQ_AUTO:
		return "delimiting not known";
	case LW_REQ_SYSCALL:
		return "syscall";
	case LW_REQ_SOCKET:
		return "socket";
	case LW_REQ_UPROBE:
		return "uprobe";
	}
	return "unknown";
}

const char *lw_freq_source_name(enum lw_freq_source s)
{
	switch (s) {
	case LW_FREQ_NONE:
		return "no frequency data";
	case LW_FREQ_TRACEPOINT:
		return "cpu_frequency tracepoint";
	case LW_FREQ_APERF_MPERF:
		return "APERF/MPERF";
	case LW_FREQ_SYSFS_POLL:
		return "scaling_cur_freq polling";
	}
	return "unknown";
}

const char *lw_bucket_name(enum lw_bucket b)
{
	static const char *const names[LW_B_MAX] = {
		"run",	   "frequency",	  "irq",	 "softirq",	"thp",	 "sched",
		"idle",	   "blocked",	  "idle_polled", "irq_entry",	"quota", "fault",
		"reclaim", "memory_high", "fault_wait",	 "fault_entry", "steal",
	};

	return (unsigned)b < LW_B_MAX ? names[b] : "unknown";
}

const char *lw_engine_err_name(enum lw_engine_err k)
{
	static const char *const names[LW_EERR_MAX] = {
		"short",
		"unknown type",
		"malformed",
		"out of memory",
	};

	return (unsigned)k < LW_EERR_MAX ? names[k] : "unknown";
}

const char *lw_softirq_name(__u32 vec)
{
	/* include/linux/interrupt.h, stable since 2.6.37; then the
	 * LW_SOFTIRQ_BACKLOG and LW_SOFTIRQ_KSOFTIRQD rows: not vectors,
	 * waits (for NET_RX, behind ksoftirqd) */
	static const char *const names[LW_SOFTIRQ_ROWS] = {
		"HI",	   "TIMER", "NET_TX",  "NET_RX", "BLOCK",	   "IRQ_POLL",
		"TASKLET", "SCHED", "HRTIMER", "RCU",	 "NET_RX_BACKLOG", "KSOFTIRQD",
	};

	return vec < LW_SOFTIRQ_ROWS ? names[vec] : "?";
}
