// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hindsight.c - the window of the last minute's records, its triggers, and
 * the copy of it a capture is written from (hindsight.h).
 *
 * Memory: every interval's records are kept as the source delivered them;
 * bytes counts their buffers. The oldest interval goes when the window is
 * older than window_ns or larger than window_bytes. A capture copies the
 * window's requests and ticks, then the newest cumulative snapshot less the
 * base's, so it holds at most window_bytes more while it is written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "latwhy.h"
#include "engine/engine.h"
#include "capture/hindsight_int.h"

/* Room kept for an interval's snapshots before one was seen: a histogram
 * (4 kB) and the few records of a small host. */
#define HS_SNAP_ROOM 8192

/* ---- intervals ---- */

static void interval_free(struct hs_interval *v)
{
	if (!v)
		return;
	free(v->buf);
	free(v);
}

/* Append rec with its length; -ENOMEM. */
static int buf_put(unsigned char **buf, size_t *len, size_t *cap, const void *rec, size_t n)
{
	__u32 l = (__u32)n;

	if (*len + sizeof(l) + n > *cap) {
		size_t ncap = *cap ? *cap * 2 : 16384;
		unsigned char *p;

		while (ncap < *len + sizeof(l) + n)
			ncap *= 2;
		p = realloc(*buf, ncap);
		if (!p)
			return -ENOMEM;
		*buf = p;
		*cap = ncap;
	}
	memcpy(*buf + *len, &l, sizeof(l));
	memcpy(*buf + *len + sizeof(l), rec, n);
	*len += sizeof(l) + n;
	return 0;
}

/* The record at *off of buf (advancing *off): its bytes and type. */
static bool buf_next(const unsigned char *buf, size_t len, size_t *off, const void **rec,
		     __u32 *rlen, __u32 *type)
{
	if (*off + 4 > len)
		return false;
	memcpy(rlen, buf + *off, 4);
	*rec = buf + *off + 4;
	*off += 4 + *rlen;
	*type = 0;
	if (*rlen >= 4)
		memcpy(type, *rec, 4);
	return true;
}

/* Cumulative since the run's start: a snapshot, never a delta. */
static bool is_cumulative(__u32 type)
{
	return type != LW_REC_REQUEST && type != LW_REC_TICK && type != LW_REC_TIER;
}

/* A base keeps only its snapshots: its requests are before the window. */
static void interval_strip(struct lw_hindsight *h, struct hs_interval *v)
{
	size_t off = 0, out = 0, at;
	const void *rec;
	__u32 rlen, type;

	while (at = off, buf_next(v->buf, v->len, &off, &rec, &rlen, &type)) {
		if (!is_cumulative(type))
			continue;
		memmove(v->buf + out, v->buf + at, off - at);
		out += off - at;
	}
	h->bytes -= v->len - out;
	v->len = out;
}

/* Drop the oldest interval; the next one becomes the base. */
static void window_pop(struct lw_hindsight *h)
{
	h->bytes -= h->iv[0]->len;
	interval_free(h->iv[0]);
	memmove(h->iv, h->iv + 1, (h->n - 1) * sizeof(*h->iv));
	h->n--;
	interval_strip(h, h->iv[0]);
	h->based = true;
}

/* The window's start: the base's end, or the run's start. */
static __u64 window_start(const struct lw_hindsight *h)
{
	if (!h->n)
		return 0;
	return h->based ? h->iv[0]->end_ns : h->iv[0]->start_ns;
}

/* Older than the window, or over its bytes with extra more to come (the
 * open interval's): the oldest intervals go, at least one kept after the
 * base. */
static void window_trim(struct lw_hindsight *h, __u64 now, __u64 extra)
{
	__u64 w = h->o.window_ns;

	if (!h->based && h->n >= 2 && h->iv[0]->end_ns + w <= now) {
		interval_strip(h, h->iv[0]); /* its requests are older than w */
		h->based = true;
	}
	while (h->based && h->n >= 3 && h->iv[1]->end_ns + w <= now)
		window_pop(h);
	while (h->bytes + extra > h->o.window_bytes && h->n >= 2) {
		if (!h->based) {
			interval_strip(h, h->iv[0]);
			h->based = true;
			if (h->n == 2)
				break;
			continue;
		}
		if (h->n < 3)
			break;
		window_pop(h);
		h->dropped++;
	}
}

static int window_push(struct lw_hindsight *h, struct hs_interval *v)
{
	if (h->n == h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 64;
		struct hs_interval **p = realloc(h->iv, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		h->iv = p;
		h->cap = ncap;
	}
	h->iv[h->n++] = v;
	return 0;
}

static void window_clear(struct lw_hindsight *h)
{
	for (size_t i = 0; i < h->n; i++)
		interval_free(h->iv[i]);
	h->n = 0;
	interval_free(h->open);
	h->open = NULL;
	h->bytes = 0;
	h->based = false;
	h->last_end_ns = 0;
	h->dropped_recs = 0;
	h->snap_room = HS_SNAP_ROOM;
	memset(h->since, 0, sizeof(h->since));
}

/* ---- the sink ---- */

static void tally_request(struct hs_interval *v, const struct lw_request *r)
{
	__u64 ns[LW_CAUSE_MAX], traced = 0;
	enum lw_cause c = LW_CAUSE_NONE;

	memset(ns, 0, sizeof(ns));
	/* answered by another thread: not split, its time is "none" */
	if (!(r->flags & LW_REQ_HANDOFF)) {
		lw_request_cause_ns(r, ns);
		c = lw_request_cause(r);
	}
	for (int k = LW_CAUSE_FREQ; k <= LW_CAUSE_TRACED_LAST; k++) {
		v->ns[k] += ns[k];
		traced += ns[k];
	}
	v->ns[LW_CAUSE_NONE] += r->latency_ns > traced ? r->latency_ns - traced : 0;
	v->ns[HS_ANY] += r->latency_ns;
	v->count[c]++;
	v->count[HS_ANY]++;
}

static int hs_record(void *ctx, const void *rec, size_t len)
{
	struct lw_hindsight *h = ctx;
	struct hs_interval *v;
	__u32 type;

	if (len < sizeof(type) || len > LW_CAPTURE_MAX_RECORD)
		return 0;
	memcpy(&type, rec, sizeof(type));
	if (!h->open) {
		h->open = calloc(1, sizeof(*h->open));
		if (!h->open)
			return -ENOMEM;
		h->open->start_ns = h->last_end_ns;
	}
	v = h->open;
	if (type == LW_REC_META && len >= sizeof(struct lw_meta_rec)) {
		struct lw_meta_rec m;

		memcpy(&m, rec, sizeof(m));
		if (!v->start_ns)
			v->start_ns = m.start_ns;
	}
	if (type == LW_REC_REQUEST && len >= sizeof(struct lw_request)) {
		/* one interval alone over the bound: its later requests are
		 * not kept, the room for its snapshots is */
		__u64 need = v->len + len + h->snap_room;

		if (h->bytes + need > h->o.window_bytes) {
			pthread_mutex_lock(&h->win_lock);
			window_trim(h, h->last_end_ns, need);
			pthread_mutex_unlock(&h->win_lock);
			if (h->bytes + need > h->o.window_bytes) {
				h->dropped_recs++;
				return 0;
			}
		}
		struct lw_request r;

		memcpy(&r, rec, sizeof(r));
		tally_request(v, &r);
	}
	if (is_cumulative(type))
		v->snap_len += 4 + len;
	return buf_put(&v->buf, &v->len, &v->cap, rec, len);
}

/* Over the threshold in the interval just closed? */
static bool trigger_over(const struct lw_hindsight_trigger *t, const struct hs_interval *v)
{
	int c = t->cause < 0 ? HS_ANY : t->cause;
	double secs = (double)(v->end_ns - v->start_ns) / 1e9;
	double val = t->kind == LW_HS_COUNT ? (double)v->count[c] : (double)v->ns[c];

	return secs > 0 && val / secs > t->per_s;
}

/* Each trigger over its threshold since the start of an interval, with
 * every interval since over it too, fires once it has been so for for_ns;
 * an interval at or below it resets it. Refused (the minimum interval, a
 * write going on), it stays armed and fires at the first tick allowed. */
static void check_triggers(struct lw_hindsight *h, const struct hs_interval *v, __u64 now)
{
	bool fired = false;

	for (size_t i = 0; i < h->o.ntriggers; i++) {
		const struct lw_hindsight_trigger *t = &h->o.triggers[i];

		if (!v->start_ns || !trigger_over(t, v)) {
			h->since[i] = 0;
			continue;
		}
		if (!h->since[i])
			h->since[i] = v->start_ns;
		if (fired || now - h->since[i] < t->for_ns)
			continue;
		/* one capture a tick */
		if (!lw_hindsight_capture(h, t->reason, t->text, now)) {
			h->since[i] = 0;
			fired = true;
		}
	}
}

static void check_signal(struct lw_hindsight *h, __u64 now)
{
	int err;

	if (!h->requested)
		return;
	h->requested = 0;
	err = lw_hindsight_capture(h, "signal", NULL, now);
	if (err == -EAGAIN)
		fprintf(stderr,
			"latwhy: capture refused (reason signal): the last one was %.1f s ago, "
			"--capture-min-interval is %.0f s\n",
			(now - h->last_capture_ns) / 1e9, h->o.min_gap_ns / 1e9);
	else if (err == -EBUSY)
		fprintf(stderr, "latwhy: capture refused (reason signal): the last one is still "
				"being written\n");
	else if (err == -ENODATA)
		fprintf(stderr, "latwhy: capture refused (reason signal): nothing traced yet\n");
	else if (err)
		fprintf(stderr, "latwhy: capture refused (reason signal): %s\n", strerror(-err));
}

static int hs_tick(void *ctx, __u64 now)
{
	struct lw_hindsight *h = ctx;
	struct hs_interval *v = h->open;
	int err;

	if (v) {
		h->open = NULL;
		v->end_ns = now;
		if (v->start_ns > now)
			v->start_ns = 0;
		pthread_mutex_lock(&h->win_lock);
		err = window_push(h, v);
		if (!err) {
			h->bytes += v->len;
			window_trim(h, now, 0);
		}
		pthread_mutex_unlock(&h->win_lock);
		if (err) {
			interval_free(v);
			return err;
		}
		h->snap_room = v->snap_len > HS_SNAP_ROOM ? v->snap_len : HS_SNAP_ROOM;
		check_triggers(h, v, now);
	}
	h->last_end_ns = now;
	check_signal(h, now);
	return 0;
}

struct lw_sink lw_hindsight_sink(struct lw_hindsight *h)
{
	return (struct lw_sink){.ctx = h, .record = hs_record, .tick = hs_tick};
}

/* ---- the capture's records: the window, its snapshots as differences ---- */

static __u64 sub(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

/* The key of a cumulative record: its type and what it is of. */
static bool same_key(__u32 type, const void *a, const void *b)
{
	switch (type) {
	case LW_REC_IRQ:
		return !memcmp((const char *)a + offsetof(struct lw_irq_rec, irq),
			       (const char *)b + offsetof(struct lw_irq_rec, irq), 8);
	case LW_REC_SOFTIRQ:
		return !memcmp((const char *)a + offsetof(struct lw_softirq_rec, vec),
			       (const char *)b + offsetof(struct lw_softirq_rec, vec), 8);
	case LW_REC_PREEMPT:
		return ((const struct lw_preempt_rec *)a)->pid ==
		       ((const struct lw_preempt_rec *)b)->pid;
	case LW_REC_CPU:
		return ((const struct lw_cpu_rec *)a)->cpu == ((const struct lw_cpu_rec *)b)->cpu;
	case LW_REC_POD: /* a state, by pid: as it came (rec_since_base()) */
		return ((const struct lw_pod_rec *)a)->pid == ((const struct lw_pod_rec *)b)->pid;
	}
	return true; /* HIST, THP, MEMORY, META: one of each */
}

/* The base's record of rec's key, NULL when it had none. The snapshots come
 * in the same order each interval, so the search starts after the last. */
static const void *base_find(const struct hs_interval *base, size_t *hint, __u32 type,
			     const void *rec, __u32 len)
{
	size_t off, end = base ? base->len : 0;
	const void *b;
	__u32 blen, btype;

	for (int pass = 0; base && pass < 2; pass++) {
		off = pass ? 0 : *hint;
		while (off < end && buf_next(base->buf, base->len, &off, &b, &blen, &btype)) {
			if (btype == type && blen == len && same_key(type, rec, b)) {
				*hint = off;
				return b;
			}
		}
		end = *hint;
	}
	return NULL;
}

static void delta_meta(struct lw_meta_rec *m, const struct lw_meta_rec *b)
{
	if (b->start_ns != m->start_ns)
		return; /* another run's: nothing to take off */
	m->start_ns = b->start_ns + b->duration_ns;
	m->duration_ns = sub(m->duration_ns, b->duration_ns);
	m->dropped = sub(m->dropped, b->dropped);
	m->incomplete = sub(m->incomplete, b->incomplete);
	m->requests = sub(m->requests, b->requests);
	m->untracked = sub(m->untracked, b->untracked);
	m->handoffs = sub(m->handoffs, b->handoffs);
}

static void delta_thp(struct lw_thp_stats *s, const struct lw_thp_stats *b)
{
	s->scans = sub(s->scans, b->scans);
	s->collapses = sub(s->collapses, b->collapses);
	s->collapse_fail = sub(s->collapse_fail, b->collapse_fail);
	s->compactions = sub(s->compactions, b->compactions);
	s->compact_ns = sub(s->compact_ns, b->compact_ns);
	s->khugepaged_wake_ns = sub(s->khugepaged_wake_ns, b->khugepaged_wake_ns);
	s->khugepaged_run_ns = sub(s->khugepaged_run_ns, b->khugepaged_run_ns);
}

static void delta_mem(struct lw_mem_stats *s, const struct lw_mem_stats *b)
{
	__u64 *v = (__u64 *)s;
	const __u64 *w = (const __u64 *)b;

	_Static_assert(sizeof(*s) % sizeof(__u64) == 0, "lw_mem_stats is all counters");
	for (size_t i = 0; i < sizeof(*s) / sizeof(__u64); i++)
		v[i] = sub(v[i], w[i]);
}

/* What rec (a copy, of its type's size) counted since the window's base
 * (NULL: none): rec less base; false when nothing happened in the window
 * (an IRQ that did not fire). */
static bool rec_since_base(__u32 type, void *rec, const void *base)
{
	switch (type) {
	case LW_REC_HIST:
		if (base)
			for (int i = 0; i < LW_HIST_BUCKETS; i++)
				((struct lw_hist_rec *)rec)->b[i] =
					sub(((struct lw_hist_rec *)rec)->b[i],
					    ((const struct lw_hist_rec *)base)->b[i]);
		return true;
	case LW_REC_META:
		if (base)
			delta_meta(rec, base);
		return true;
	case LW_REC_THP:
		if (base)
			delta_thp(&((struct lw_thp_rec *)rec)->s,
				  &((const struct lw_thp_rec *)base)->s);
		return true;
	case LW_REC_MEMORY:
		if (base) {
			struct lw_mem_node *n = &((struct lw_mem_rec *)rec)->node;
			const struct lw_mem_node *m = &((const struct lw_mem_rec *)base)->node;

			delta_mem(&((struct lw_mem_rec *)rec)->s,
				  &((const struct lw_mem_rec *)base)->s);
			/* the counts and kswapd's time; free pages and the
			 * watermarks are states, the least free the run's */
			n->snapshots = sub(n->snapshots, m->snapshots);
			n->below_low = sub(n->below_low, m->below_low);
			n->below_min = sub(n->below_min, m->below_min);
			n->kswapd_ns = sub(n->kswapd_ns, m->kswapd_ns);
		}
		return true;
	case LW_REC_CPU: /* the clock is a state; its events count */
		if (base)
			((struct lw_cpu_rec *)rec)->events =
				sub(((struct lw_cpu_rec *)rec)->events,
				    ((const struct lw_cpu_rec *)base)->events);
		return true;
	case LW_REC_IRQ: {
		struct lw_irq_rec *r = rec;
		const struct lw_irq_rec *b = base;

		if (b) {
			r->ns = sub(r->ns, b->ns);
			r->count = sub(r->count, b->count);
		}
		return r->ns || r->count;
	}
	case LW_REC_SOFTIRQ: {
		struct lw_softirq_rec *r = rec;
		const struct lw_softirq_rec *b = base;

		if (b) {
			r->ns = sub(r->ns, b->ns);
			r->count = sub(r->count, b->count);
		}
		return r->ns || r->count;
	}
	case LW_REC_PREEMPT: {
		struct lw_preempt_rec *r = rec;
		const struct lw_preempt_rec *b = base;

		if (b) {
			r->ns = sub(r->ns, b->ns);
			r->count = sub(r->count, b->count);
		}
		return r->ns || r->count;
	}
	}
	return true; /* a type this latwhy does not know: as it came */
}

/* The newest snapshots less the base's, appended to the job. */
static int job_snapshots(struct hs_job *job, size_t *cap, const struct hs_interval *latest,
			 const struct hs_interval *base)
{
	/* the records sit after their 4-byte lengths: copied out aligned */
	unsigned char *tmp = malloc(2 * LW_CAPTURE_MAX_RECORD);
	unsigned char *btmp = tmp + LW_CAPTURE_MAX_RECORD;
	size_t off = 0, hint = 0;
	const void *rec, *b;
	__u32 rlen, type;
	int err = tmp ? 0 : -ENOMEM;

	while (!err && buf_next(latest->buf, latest->len, &off, &rec, &rlen, &type)) {
		if (!is_cumulative(type) || rlen > LW_CAPTURE_MAX_RECORD)
			continue;
		memcpy(tmp, rec, rlen);
		b = base_find(base, &hint, type, tmp, rlen);
		if (b)
			memcpy(btmp, b, rlen);
		if (rec_since_base(type, tmp, b ? btmp : NULL))
			err = buf_put(&job->buf, &job->len, cap, tmp, rlen);
	}
	free(tmp);
	return err;
}

/* The window's requests and ticks, oldest first, then the snapshots. */
static int job_records(struct lw_hindsight *h, struct hs_job *job)
{
	const struct hs_interval *base = h->based ? h->iv[0] : NULL;
	/* the window's bytes bound the copy: one allocation, no regrowth */
	size_t cap = h->bytes + 4096;
	int err = 0;

	job->buf = malloc(cap);
	if (!job->buf)
		return -ENOMEM;

	for (size_t i = h->based ? 1 : 0; !err && i < h->n; i++) {
		const struct hs_interval *v = h->iv[i];
		size_t off = 0;
		const void *rec;
		__u32 rlen, type;

		while (!err && buf_next(v->buf, v->len, &off, &rec, &rlen, &type))
			if (!is_cumulative(type))
				err = buf_put(&job->buf, &job->len, &cap, rec, rlen);
	}
	if (!err)
		err = job_snapshots(job, &cap, h->iv[h->n - 1], base);
	return err;
}

/* On the writer thread: the copy of the window, which the tracing thread
 * changes only at its ticks (and in a flood of requests), under win_lock. A
 * capture starts at a tick, so the copy is done long before the next one:
 * the tracing thread does not wait for it (the first copy into fresh memory
 * took 90 ms for a 16 MiB window here, page faults mostly). */
int lw_hs_job_fill(struct lw_hindsight *h, struct hs_job *job)
{
	int err = -ENODATA;

	pthread_mutex_lock(&h->win_lock);
	if (h->n && !(h->based && h->n < 2)) {
		job->span_ns = lw_hindsight_span_ns(h);
		err = job_records(h, job);
	}
	pthread_mutex_unlock(&h->win_lock);
	return err;
}

/* Letters, digits, '.', '_', '-' as they are; anything else '_'. */
static void name_part(char *out, size_t len, const char *s)
{
	size_t i = 0;

	for (; *s && i + 1 < len; s++, i++) {
		char c = *s;

		out[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'
				 ? c
				 : '_';
	}
	out[i] = '\0';
	if (!i)
		snprintf(out, len, "_");
}

static void job_name(struct lw_hindsight *h, struct hs_job *job)
{
	char t[64], r[16], stamp[24];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	strftime(job->utc, sizeof(job->utc), "%Y-%m-%dT%H:%M:%SZ", &tm);
	name_part(t, sizeof(t), h->target);
	name_part(r, sizeof(r), job->reason);
	snprintf(job->name, sizeof(job->name), "latwhy-%s-%s-%s.lwy", t, stamp, r);
}

int lw_hindsight_capture(struct lw_hindsight *h, const char *reason, const char *trigger, __u64 now)
{
	struct hs_job *job;
	bool busy;

	if (!h->n || (h->based && h->n < 2))
		return -ENODATA;
	pthread_mutex_lock(&h->lock);
	busy = h->job != NULL;
	pthread_mutex_unlock(&h->lock);
	if (busy)
		return -EBUSY;
	if (h->last_capture_ns && now - h->last_capture_ns < h->o.min_gap_ns)
		return -EAGAIN;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	snprintf(job->reason, sizeof(job->reason), "%s", reason);
	snprintf(job->trigger, sizeof(job->trigger), "%s", trigger ? trigger : "");
	job->pid = h->pid;
	job->not_kept = h->dropped_recs;
	job_name(h, job);
	h->last_capture_ns = now;
	lw_hs_submit(h, job);
	return 0;
}

/* ---- life ---- */

static int copy_kv(struct lw_hindsight *h, const struct lw_capture_kv *kv, size_t n)
{
	h->kv = calloc(n ? n : 1, sizeof(*h->kv));
	if (!h->kv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		h->kv[i].key = strdup(kv[i].key);
		h->kv[i].value = strdup(kv[i].value ? kv[i].value : "");
		h->nkv = i + 1;
		if (!h->kv[i].key || !h->kv[i].value)
			return -ENOMEM;
	}
	return 0;
}

static void defaults(struct lw_hindsight_opts *o)
{
	if (!o->window_ns)
		o->window_ns = LW_HINDSIGHT_WINDOW_NS;
	if (!o->window_bytes)
		o->window_bytes = LW_HINDSIGHT_WINDOW_BYTES;
	if (!o->min_gap_set)
		o->min_gap_ns = LW_HINDSIGHT_MIN_GAP_NS;
	if (!o->max_files)
		o->max_files = LW_HINDSIGHT_MAX_FILES;
	if (!o->max_bytes)
		o->max_bytes = LW_HINDSIGHT_MAX_BYTES;
	if (o->ntriggers > LW_HINDSIGHT_TRIGGERS)
		o->ntriggers = LW_HINDSIGHT_TRIGGERS;
}

struct lw_hindsight *lw_hindsight_new(const struct lw_hindsight_opts *o, const char *target,
				      int pid, const struct lw_capture_kv *kv, size_t n)
{
	struct lw_hindsight *h;
	int err;

	if (!o->dir || !*o->dir || strlen(o->dir) >= sizeof(h->dir)) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->o = *o;
	defaults(&h->o);
	snprintf(h->dir, sizeof(h->dir), "%s", o->dir);
	h->o.dir = h->dir;
	snprintf(h->target, sizeof(h->target), "%s", target ? target : "");
	h->pid = pid;
	h->snap_room = HS_SNAP_ROOM;
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->win_lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	err = copy_kv(h, kv, n);
	if (!err && !h->o.sync)
		err = lw_hs_thread_start(h);
	if (err) {
		lw_hindsight_free(h);
		errno = -err;
		return NULL;
	}
	return h;
}

void lw_hindsight_free(struct lw_hindsight *h)
{
	if (!h)
		return;
	lw_hs_thread_stop(h);
	window_clear(h);
	free(h->iv);
	for (size_t i = 0; i < h->nkv; i++) {
		free((char *)h->kv[i].key);
		free((char *)h->kv[i].value);
	}
	free(h->kv);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->win_lock);
	pthread_cond_destroy(&h->cond);
	free(h);
}

void lw_hindsight_on_written(struct lw_hindsight *h, lw_hindsight_written_fn fn, void *ctx)
{
	h->on_written = fn;
	h->on_written_ctx = ctx;
}

void lw_hindsight_restart(struct lw_hindsight *h, int pid)
{
	pthread_mutex_lock(&h->win_lock);
	window_clear(h);
	pthread_mutex_unlock(&h->win_lock);
	h->pid = pid;
}

void lw_hindsight_set_pid(struct lw_hindsight *h, int pid)
{
	h->pid = pid;
}

void lw_hindsight_request(struct lw_hindsight *h)
{
	h->requested = 1;
}

size_t lw_hindsight_intervals(const struct lw_hindsight *h)
{
	return h->n;
}

__u64 lw_hindsight_bytes(const struct lw_hindsight *h)
{
	return h->bytes;
}

__u64 lw_hindsight_span_ns(const struct lw_hindsight *h)
{
	__u64 start = window_start(h);

	if (!h->n || !start)
		return 0;
	return sub(h->iv[h->n - 1]->end_ns, start);
}

__u64 lw_hindsight_dropped(const struct lw_hindsight *h)
{
	return h->dropped;
}

__u64 lw_hindsight_written(const struct lw_hindsight *h)
{
	__u64 n;

	pthread_mutex_lock((pthread_mutex_t *)&h->lock);
	n = h->written;
	pthread_mutex_unlock((pthread_mutex_t *)&h->lock);
	return n;
}

__u64 lw_hindsight_trigger_since(const struct lw_hindsight *h, size_t i)
{
	return i < LW_HINDSIGHT_TRIGGERS ? h->since[i] : 0;
}
