// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export.c - the exporter as a sink: records in, cumulative counters out.
 *
 * The slow requests by cause are the kernel's counts (lw_cause_counts, by
 * lw_cause_of(), the engine's own rule), given by lw_export_series_causes():
 * a scrape counts what `latwhy trace` would summarise, with no record per
 * slow request. TICK records carry the interval's request count, HIST the
 * in-kernel latency histogram since the tracer started, META its dropped
 * records, CPU its clocks; REQUEST records are not the exporter's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/export_int.h"

struct lw_export *lw_export_new(const char *target, const char *node_root)
{
	struct lw_export *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	pthread_mutex_init(&x->lock, NULL);
	pthread_mutex_init(&x->node_lock, NULL);
	pthread_mutex_init(&x->cg_lock, NULL);
	x->node_root = strdup(node_root ? node_root : "/");
	if (!x->node_root || lw_export_add_series(x, target) < 0) {
		lw_export_free(x);
		errno = ENOMEM;
		return NULL;
	}
	return x;
}

void lw_export_free(struct lw_export *x)
{
	if (!x)
		return;
	if (x->node_read)
		lw_node_free(&x->node);
	free(x->irq_prev);
	lw_export_preempt_free(x);
	free(x->node_root);
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&x->node_lock);
	pthread_mutex_destroy(&x->cg_lock);
	free(x);
}

int lw_export_add_series(struct lw_export *x, const char *label)
{
	struct lw_export_series *s;

	for (int i = 0; i < x->nser; i++)
		if (!x->ser[i].lab.pod && !strcmp(x->ser[i].label, label))
			return i;
	if (x->nser == LW_MAX_TARGETS)
		return -E2BIG;
	s = &x->ser[x->nser];
	memset(s, 0, sizeof(*s));
	snprintf(s->label, sizeof(s->label), "%s", label);
	snprintf(s->lab.target, sizeof(s->lab.target), "%s", label);
	x->nser++;
	/* there at zero from the first scrape */
	pthread_mutex_lock(&x->lock);
	x->pub.s[x->nser - 1].lab = s->lab;
	x->pub.nseries = x->nser;
	pthread_mutex_unlock(&x->lock);
	return x->nser - 1;
}

int lw_export_add_pod_series(struct lw_export *x, const char *ns, const char *pod,
			     const char *container, const char *qos)
{
	struct lw_export_series *s = NULL;
	int i;

	for (i = 0; i < x->nser; i++) {
		const struct lw_export_labels *l = &x->ser[i].lab;

		if (l->pod && !l->dead && !strcmp(l->ns, ns) && !strcmp(l->name, pod) &&
		    !strcmp(l->container, container))
			return i;
	}
	for (i = 0; i < x->nser && !s; i++)
		if (x->ser[i].lab.dead)
			s = &x->ser[i];
	if (!s) {
		if (x->nser == LW_MAX_TARGETS)
			return -E2BIG;
		s = &x->ser[x->nser++];
	}
	memset(s, 0, sizeof(*s));
	lw_export_preempt_forget(x, (int)(s - x->ser));
	s->lab.pod = true;
	snprintf(s->lab.ns, sizeof(s->lab.ns), "%s", ns);
	snprintf(s->lab.name, sizeof(s->lab.name), "%s", pod);
	snprintf(s->lab.container, sizeof(s->lab.container), "%s", container);
	snprintf(s->lab.qos, sizeof(s->lab.qos), "%s", qos);
	snprintf(s->label, sizeof(s->label), "%s/%s/%s", ns, pod, container);
	return (int)(s - x->ser);
}

void lw_export_drop_series(struct lw_export *x, int series)
{
	if (series >= 0 && series < x->nser)
		x->ser[series].lab.dead = true;
}

void lw_export_series_retire(struct lw_export *x, int series, const __u64 *hist,
			     const struct lw_cause_counts *c)
{
	struct lw_export_series *s;

	if (series < 0 || series >= x->nser)
		return;
	s = &x->ser[series];
	for (int b = 0; hist && b < LW_HIST_BUCKETS; b++)
		s->hist_base[b] += hist[b];
	if (c)
		lw_cause_counts_add(&s->causes_base, c);
}

void lw_export_pods_other(struct lw_export *x, int n)
{
	pthread_mutex_lock(&x->lock);
	x->pods_other = n;
	pthread_mutex_unlock(&x->lock);
}

void lw_export_series_hist(struct lw_export *x, int series, const __u64 *b)
{
	struct lw_export_series *s;
	__u64 n = 0;

	if (series < 0 || series >= x->nser)
		return;
	s = &x->ser[series];
	memcpy(s->hist_cur, b, sizeof(s->hist_cur));
	for (int i = 0; i < LW_HIST_BUCKETS; i++)
		n += s->hist_base[i] + b[i];
	s->requests = n;
}

void lw_cause_counts_add(struct lw_cause_counts *to, const struct lw_cause_counts *from)
{
	__u64 *t = (__u64 *)to;
	const __u64 *f = (const __u64 *)from;

	for (size_t k = 0; k < sizeof(*to) / sizeof(__u64); k++)
		t[k] += f[k];
}

void lw_export_series_causes(struct lw_export *x, int series, const struct lw_cause_counts *c)
{
	if (series >= 0 && series < x->nser)
		x->ser[series].causes_cur = *c;
}

/* A record of type's struct, copied out when rec holds one whole. */
static bool record_take(const void *rec, size_t len, void *out, size_t size)
{
	if (len < size)
		return false;
	memcpy(out, rec, size);
	return true;
}

static int export_record(void *ctx, const void *rec, size_t len)
{
	struct lw_export *x = ctx;
	struct lw_tier_rec tier;
	struct lw_tick_rec tick;
	struct lw_meta_rec meta;
	struct lw_cpu_rec cpu;
	__u32 type;

	if (!record_take(rec, len, &type, sizeof(type)))
		return 0;
	x->active = true;
	switch (type) {
	case LW_REC_TICK:
		if (x->nser == 1 && record_take(rec, len, &tick, sizeof(tick)))
			x->ser[0].requests += tick.requests;
		break;
	case LW_REC_HIST:
		if (x->nser == 1 && len >= sizeof(struct lw_hist_rec))
			memcpy(x->ser[0].hist_cur, ((const struct lw_hist_rec *)rec)->b,
			       sizeof(x->ser[0].hist_cur));
		break;
	case LW_REC_META:
		if (record_take(rec, len, &meta, sizeof(meta))) {
			x->dropped_cur = meta.dropped;
			x->freq_source = meta.freq_source;
			x->flags = meta.flags;
		}
		break;
	case LW_REC_CPU:
		if (record_take(rec, len, &cpu, sizeof(cpu)) && cpu.cpu < LW_MAX_CPUS)
			x->khz[cpu.cpu] = cpu.khz;
		break;
	case LW_REC_TIER:
		if (record_take(rec, len, &tier, sizeof(tier))) {
			x->watch_ns += tier.watch_ns;
			x->watch_active = tier.watch_ns > 0;
		}
		break;
	}
	return 0;
}

static void publish_at(struct lw_export *x, __u64 now_ns);

static int export_tick(void *ctx, __u64 now_ns)
{
	publish_at(ctx, now_ns);
	return 0;
}

struct lw_sink lw_export_sink(struct lw_export *x)
{
	return (struct lw_sink){.ctx = x, .record = export_record, .tick = export_tick};
}

/*
 * Slow requests and their time by cause, from the kernel's counts of every
 * run so far. "none" is what no traced cause holds: the requests without
 * one, those answered by another thread (not split), and the rest of every
 * slow request's time (its own run and sleep), so the causes' seconds sum
 * to the slow requests' latency.
 */
static void counters_slow(const struct lw_export_series *s, struct lw_export_series_counters *c)
{
	struct lw_cause_counts a = s->causes_base;
	__u64 traced = 0, none;

	lw_cause_counts_add(&a, &s->causes_cur);
	for (int i = LW_CAUSE_NONE; i <= LW_CAUSE_TRACED_LAST; i++) {
		c->slow[i] = a.slow[i];
		if (i != LW_CAUSE_NONE) {
			c->slow_ns[i] = a.ns[i];
			traced += a.ns[i];
		}
	}
	c->slow[LW_CAUSE_NONE] += a.handoff;
	none = a.latency_ns > traced ? a.latency_ns - traced : 0;
	none += a.handoff_ns;
	/* a request's traced time may exceed its latency by up to 1%: never
	 * let the rest go back */
	if (none > c->slow_ns[LW_CAUSE_NONE])
		c->slow_ns[LW_CAUSE_NONE] = none;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void counters_progs(const struct lw_export *x, struct lw_export_counters *c)
{
	c->nr_progs = x->nr_progs;
	for (size_t i = 0; i < x->nr_progs; i++) {
		const struct export_prog *p = &x->progs[i];

		memcpy(c->progs[i].name, p->name, sizeof(p->name));
		c->progs[i].run_ns = p->base_ns + p->cur_ns;
		c->progs[i].run_cnt = p->base_cnt + p->cur_cnt;
	}
}

/* Built aside, then copied under the lock: a scrape waits for a copy at
 * most. Only this thread writes pub, so it reads it unlocked. */
static void publish_at(struct lw_export *x, __u64 now_ns)
{
	struct lw_export_counters *c = malloc(sizeof(*c));

	if (!c)
		return; /* the last published values stand */
	pthread_mutex_lock(&x->lock);
	*c = x->pub;
	pthread_mutex_unlock(&x->lock);
	for (int i = 0; i < x->nser; i++) {
		struct lw_export_series_counters *sc = &c->s[i];
		const struct lw_export_series *s = &x->ser[i];

		sc->lab = s->lab;
		counters_slow(s, sc);
		sc->requests = s->watch_seen ? s->watch_base.req + s->watch_cur.req : s->requests;
		sc->watch_slow = s->watch_base.slow + s->watch_cur.slow;
		sc->watch_slow_ns = s->watch_base.slow_ns + s->watch_cur.slow_ns;
		sc->watch_timed = s->watch_base.timed + s->watch_cur.timed;
		for (int b = 0; b < LW_HIST_BUCKETS; b++)
			sc->hist[b] = s->hist_base[b] + s->hist_cur[b];
	}
	c->nseries = x->nser;
	c->dropped = x->dropped_base + x->dropped_cur;
	c->active = x->active && !x->detached;
	counters_progs(x, c);
	c->attached_ns = x->attached_ns;
	if (x->attached_from && now_ns > x->attached_from)
		c->attached_ns += now_ns - x->attached_from;
	c->watch_active = x->active && x->watch_active;
	c->watch_ns = x->watch_ns;
	c->escalations = x->escalations;
	c->esc_delay_known = x->escalations > 0;
	c->esc_delay_ns = x->esc_delay_ns;
	c->flags = x->flags;
	c->freq_source = x->freq_source;
	memcpy(c->khz, x->khz, sizeof(c->khz));
	pthread_mutex_lock(&x->lock);
	x->pub = *c;
	pthread_mutex_unlock(&x->lock);
	free(c);
	lw_health_beat(&x->health, now_ns, x->detached);
}

void lw_export_publish(struct lw_export *x)
{
	publish_at(x, mono_ns());
}

void lw_export_attached(struct lw_export *x, bool on, __u64 now_ns)
{
	if (on && !x->attached_from)
		x->attached_from = now_ns ? now_ns : 1;
	if (!on && x->attached_from) {
		if (now_ns > x->attached_from)
			x->attached_ns += now_ns - x->attached_from;
		x->attached_from = 0;
	}
	x->detached = !on;
	publish_at(x, now_ns);
}

void lw_export_escalated(struct lw_export *x, __u64 delay_ns)
{
	x->escalations++;
	x->esc_delay_ns = delay_ns;
	publish_at(x, mono_ns());
}

void lw_export_series_watch(struct lw_export *x, int series, const struct lw_export_watch *w)
{
	if (series < 0 || series >= x->nser)
		return;
	x->ser[series].watch_seen = true;
	x->ser[series].watch_cur = *w;
}

void lw_export_progs(struct lw_export *x, const struct lw_export_prog *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < x->nr_progs; k++)
			if (!strncmp(x->progs[k].name, p[i].name, sizeof(x->progs[k].name)))
				break;
		if (k == x->nr_progs) {
			if (k == LW_EXPORT_PROGS)
				continue;
			memset(&x->progs[k], 0, sizeof(x->progs[k]));
			snprintf(x->progs[k].name, sizeof(x->progs[k].name), "%s", p[i].name);
			x->nr_progs++;
		}
		x->progs[k].cur_ns = p[i].run_ns;
		x->progs[k].cur_cnt = p[i].run_cnt;
	}
}

void lw_export_set_pid(struct lw_export *x, int pid)
{
	pthread_mutex_lock(&x->node_lock);
	x->pid = pid;
	pthread_mutex_unlock(&x->node_lock);
}

void lw_export_restart(struct lw_export *x)
{
	lw_export_publish(x);
	for (int i = 0; i < x->nser; i++) {
		struct lw_export_series *s = &x->ser[i];

		for (int b = 0; b < LW_HIST_BUCKETS; b++)
			s->hist_base[b] += s->hist_cur[b];
		memset(s->hist_cur, 0, sizeof(s->hist_cur));
		lw_cause_counts_add(&s->causes_base, &s->causes_cur);
		memset(&s->causes_cur, 0, sizeof(s->causes_cur));
		s->watch_base.slow += s->watch_cur.slow;
		s->watch_base.slow_ns += s->watch_cur.slow_ns;
		s->watch_base.req += s->watch_cur.req;
		s->watch_base.timed += s->watch_cur.timed;
		memset(&s->watch_cur, 0, sizeof(s->watch_cur));
	}
	x->watch_active = false;
	x->dropped_base += x->dropped_cur;
	x->dropped_cur = 0;
	for (size_t i = 0; i < x->nr_progs; i++) {
		x->progs[i].base_ns += x->progs[i].cur_ns;
		x->progs[i].base_cnt += x->progs[i].cur_cnt;
		x->progs[i].cur_ns = x->progs[i].cur_cnt = 0;
	}
	x->flags = 0;
	x->active = false; /* until the next tracer's records */
	/* the clocks were the last process's: unknown until the next CPU
	 * records, and published so (absent, not stale) */
	x->freq_source = LW_FREQ_NONE;
	memset(x->khz, 0, sizeof(x->khz));
	/* and so is the cgroup of its process; the counters go on */
	lw_export_cgroup_forget(x);
	lw_export_preempt_restart(x);
	lw_export_publish(x);
}
