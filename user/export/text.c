// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * text.c - the exposition text of a scrape: the published counters, then
 * the node's gauges and latwhy's own health. Base units (seconds, hertz,
 * bytes), _total on counters, one HELP and TYPE per family.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h" /* lw_hist_lower() */
#include "export/export_int.h"

void lw_export_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

void lw_export_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void lw_export_seconds(FILE *f, __u64 ns)
{
	fprintf(f, "%llu.%09llu\n", (unsigned long long)(ns / 1000000000ULL),
		(unsigned long long)(ns % 1000000000ULL));
}

void lw_export_target(FILE *f, const char *name, const char *target)
{
	fprintf(f, "%s{target=\"", name);
	lw_export_label(f, target);
	fputc('"', f);
}

void lw_export_series_name(FILE *f, const char *name, const struct lw_export_labels *l)
{
	if (!l->pod) {
		lw_export_target(f, name, l->target);
		return;
	}
	fprintf(f, "%s{namespace=\"", name);
	lw_export_label(f, l->ns);
	fputs("\",pod=\"", f);
	lw_export_label(f, l->name);
	fputs("\",container=\"", f);
	lw_export_label(f, l->container);
	fputc('"', f);
}

/* A cause whose programs the tracer has none of (left out by --causes or
 * --skip, or missing from the kernel) has no series: not a 0. */
static bool cause_measured(const struct lw_export_counters *c, int k)
{
	switch (k) {
	case LW_CAUSE_IRQ:
		return (c->flags & (LW_META_NO_IRQ | LW_META_NO_SOFTIRQ)) !=
		       (LW_META_NO_IRQ | LW_META_NO_SOFTIRQ);
	case LW_CAUSE_THP:
		return (c->flags & (LW_META_NO_THP | LW_META_NO_COMPACT)) !=
		       (LW_META_NO_THP | LW_META_NO_COMPACT);
	case LW_CAUSE_FREQ:
		return !(c->flags & LW_META_NO_FREQ) || c->freq_source != LW_FREQ_NONE;
	case LW_CAUSE_QUOTA:
		return !(c->flags & LW_META_NO_QUOTA);
	case LW_CAUSE_MEMORY:
		return !(c->flags & LW_META_NO_MEMORY);
	}
	return true;
}

/* One counter of every live series, the field at off of its counters. */
static void write_series_u64(FILE *f, const char *name, const struct lw_export_counters *c,
			     size_t off)
{
	for (int i = 0; i < c->nseries; i++) {
		if (c->s[i].lab.dead)
			continue;
		lw_export_series_name(f, name, &c->s[i].lab);
		fprintf(f, "} %llu\n",
			(unsigned long long)*(const __u64 *)((const char *)&c->s[i] + off));
	}
}

static void write_requests(FILE *f, const struct lw_export *x, const struct lw_export_counters *c)
{
	static const char *const slow = "latwhy_slow_requests_total";
	static const char *const secs = "latwhy_slow_request_seconds_total";

	lw_export_family(f, "latwhy_requests_total", "counter",
			 "Requests of the target, slow or not: every one as it is read where "
			 "the always-attached tier runs; else those full tracing saw end.");
	write_series_u64(f, "latwhy_requests_total", c,
			 offsetof(struct lw_export_series_counters, requests));
	lw_export_family(f, slow, "counter",
			 "Slow requests, by the cause that held most of each one's time: full "
			 "tracing only, while latwhy_tier_active{tier=\"full\"}.");
	for (int i = 0; i < c->nseries; i++)
		for (int k = LW_CAUSE_NONE; k <= LW_CAUSE_TRACED_LAST; k++) {
			if (!cause_measured(c, k) || c->s[i].lab.dead)
				continue;
			lw_export_series_name(f, slow, &c->s[i].lab);
			fprintf(f, ",cause=\"%s\"} %llu\n", lw_cause_name(k),
				(unsigned long long)c->s[i].slow[k]);
		}
	lw_export_family(
		f, secs, "counter",
		"Time of the slow requests, by cause; none is their own run and sleep: full "
		"tracing only.");
	for (int i = 0; i < c->nseries; i++)
		for (int k = LW_CAUSE_NONE; k <= LW_CAUSE_TRACED_LAST; k++) {
			if (!cause_measured(c, k) || c->s[i].lab.dead)
				continue;
			lw_export_series_name(f, secs, &c->s[i].lab);
			fprintf(f, ",cause=\"%s\"} ", lw_cause_name(k));
			lw_export_seconds(f, c->s[i].slow_ns[k]);
		}
}

/* Upper edge of histogram bucket b, ~0 for the last. */
static __u64 bucket_upper(__u32 b)
{
	return b + 1 < LW_HIST_BUCKETS ? lw_hist_lower(b + 1) : ~0ULL;
}

/* The sum of the latencies, which the histogram only bounds: each bucket's
 * count at its middle, within 1/16 of the truth. */
static double hist_sum_seconds(const __u64 *h)
{
	double sum = 0;

	for (__u32 b = 0; b < LW_HIST_BUCKETS; b++) {
		__u64 lo = lw_hist_lower(b), hi = b + 1 < LW_HIST_BUCKETS ? bucket_upper(b) : lo;

		if (h[b])
			sum += h[b] * ((double)lo + (double)hi) / 2;
	}
	return sum / 1e9;
}

/*
 * The in-kernel histogram's group edges are powers of two (ns), so a bucket
 * lies wholly below 2^k ns or wholly above: each `le` bound counts exactly
 * the requests faster than it.
 */
static void write_histogram(FILE *f, const struct lw_export_labels *target,
			    const struct lw_export_series_counters *c)
{
	__u64 cum = 0;
	__u32 b = 0;

	for (int k = LW_EXPORT_LE_MIN; k <= LW_EXPORT_LE_MAX; k++) {
		for (; b < LW_HIST_BUCKETS && bucket_upper(b) <= 1ULL << k; b++)
			cum += c->hist[b];
		lw_export_series_name(f, "latwhy_request_duration_seconds_bucket", target);
		fprintf(f, ",le=\"%.12g\"} %llu\n", (double)(1ULL << k) / 1e9,
			(unsigned long long)cum);
	}
	for (; b < LW_HIST_BUCKETS; b++)
		cum += c->hist[b];
	lw_export_series_name(f, "latwhy_request_duration_seconds_bucket", target);
	fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	lw_export_series_name(f, "latwhy_request_duration_seconds_sum", target);
	fprintf(f, "} %.9f\n", hist_sum_seconds(c->hist));
	lw_export_series_name(f, "latwhy_request_duration_seconds_count", target);
	fprintf(f, "} %llu\n", (unsigned long long)cum);
}

/* The pods served: latwhy_pod_info a pod, and how many are over the bound
 * (summed under pod="other"). Only with pod series. */
static void write_pods(FILE *f, struct lw_export *x, const struct lw_export_counters *c)
{
	bool any = false;
	int other;

	for (int i = 0; i < c->nseries && !any; i++)
		any = c->s[i].lab.pod && !c->s[i].lab.dead;
	if (!any)
		return;
	lw_export_family(f, "latwhy_pod_info", "gauge",
			 "A pod served, named from the kubelet's log tree, and its QoS class.");
	for (int i = 0; i < c->nseries; i++) {
		const struct lw_export_labels *l = &c->s[i].lab;
		bool first = l->pod && !l->dead && l->ns[0];

		for (int k = 0; k < i && first; k++)
			first = !(c->s[k].lab.pod && !c->s[k].lab.dead &&
				  !strcmp(c->s[k].lab.ns, l->ns) &&
				  !strcmp(c->s[k].lab.name, l->name));
		if (!first)
			continue;
		fputs("latwhy_pod_info{namespace=\"", f);
		lw_export_label(f, l->ns);
		fputs("\",pod=\"", f);
		lw_export_label(f, l->name);
		fputs("\",qos=\"", f);
		lw_export_label(f, l->qos);
		fputs("\"} 1\n", f);
	}
	pthread_mutex_lock(&x->lock);
	other = x->pods_other;
	pthread_mutex_unlock(&x->lock);
	lw_export_family(
		f, "latwhy_pods_over_bound", "gauge",
		"Pods over serve's --max-pods, their containers summed under pod=\"other\".");
	fprintf(f, "latwhy_pods_over_bound %d\n", other);
}

static void write_dropped(FILE *f, const struct lw_export_counters *c)
{
	lw_export_family(f, "latwhy_events_dropped_total", "counter",
			 "Records the kernel could not hand to latwhy (ring buffer full).");
	fprintf(f, "latwhy_events_dropped_total %llu\n", (unsigned long long)c->dropped);
	lw_export_family(f, "latwhy_sampling_active", "gauge",
			 "1 while full tracing is attached to the target, 0 while detached "
			 "(--sample) or waiting for one: latwhy_tier_active{tier=\"full\"}.");
	fprintf(f, "latwhy_sampling_active %d\n", c->active ? 1 : 0);
	lw_export_family(f, "latwhy_sampling_attached_seconds_total", "counter",
			 "Time full tracing was attached: the causes count only then.");
	fputs("latwhy_sampling_attached_seconds_total ", f);
	lw_export_seconds(f, c->attached_ns);
}

/* The always-attached tier's slow requests whatever the tier, with no
 * cause, estimated from the requests it timed: only where it runs. */
static void write_watch(FILE *f, const struct lw_export_counters *c)
{
	static const char *const n = "latwhy_watch_slow_requests_total";
	static const char *const s = "latwhy_watch_slow_request_seconds_total";
	static const char *const t = "latwhy_watch_timed_requests_total";

	if (!c->watch_ns)
		return;
	lw_export_family(
		f, t, "counter",
		"Requests the always-attached tier timed: 1 in 2^k, k from the target's "
		"rate; the slow counts and the duration histogram are estimated from them.");
	write_series_u64(f, t, c, offsetof(struct lw_export_series_counters, watch_timed));
	lw_export_family(f, n, "counter",
			 "Slow requests by the always-attached tier, attached or not, with no "
			 "cause: estimated, each timed one standing for 2^k.");
	write_series_u64(f, n, c, offsetof(struct lw_export_series_counters, watch_slow));
	lw_export_family(f, s, "counter", "Their latency.");
	for (int i = 0; i < c->nseries; i++) {
		if (c->s[i].lab.dead)
			continue;
		lw_export_series_name(f, s, &c->s[i].lab);
		fputs("} ", f);
		lw_export_seconds(f, c->s[i].watch_slow_ns);
	}
}

/* What was attached: the always-attached tier and full tracing, and full
 * tracing's escalations on a rise of slow requests. */
static void write_tiers(FILE *f, const struct lw_export_counters *c)
{
	lw_export_family(
		f, "latwhy_tier_active", "gauge",
		"1 while a tier's programs are attached: watch (TCP requests counted, "
		"always), full (every cause: the duty cycle and escalations).");
	fprintf(f, "latwhy_tier_active{tier=\"watch\"} %d\n", c->watch_active ? 1 : 0);
	fprintf(f, "latwhy_tier_active{tier=\"full\"} %d\n", c->active ? 1 : 0);
	lw_export_family(f, "latwhy_tier_attached_seconds_total", "counter",
			 "Time each tier was attached: rates of what it counts are over it.");
	fputs("latwhy_tier_attached_seconds_total{tier=\"watch\"} ", f);
	lw_export_seconds(f, c->watch_ns);
	fputs("latwhy_tier_attached_seconds_total{tier=\"full\"} ", f);
	lw_export_seconds(f, c->attached_ns);
	lw_export_family(f, "latwhy_escalations_total", "counter",
			 "Full tracing attached because the always-attached tier saw slow requests "
			 "rise over a target's baseline.");
	fprintf(f, "latwhy_escalations_total %llu\n", (unsigned long long)c->escalations);
	if (!c->esc_delay_known)
		return;
	lw_export_family(f, "latwhy_escalation_delay_seconds", "gauge",
			 "Of the last escalation: from the rise's first slow request to full "
			 "tracing attached.");
	fputs("latwhy_escalation_delay_seconds ", f);
	lw_export_seconds(f, c->esc_delay_ns);
}

static int render_to(struct lw_export *x, FILE *f, const struct lw_export_counters *c)
{
	write_requests(f, x, c);
	lw_export_family(f, "latwhy_request_duration_seconds", "histogram",
			 "Latency of every request of the target.");
	for (int i = 0; i < c->nseries; i++)
		if (!c->s[i].lab.dead)
			write_histogram(f, &c->s[i].lab, &c->s[i]);
	write_watch(f, c);
	write_pods(f, x, c);
	lw_export_preempt_write(x, f, c);
	lw_export_cgroup_write(x, f, c);
	write_dropped(f, c);
	write_tiers(f, c);
	lw_export_bpf_write(x, f, c);
	lw_export_captures_write(x, f);
	lw_export_node_write(x, f, c);
	lw_export_self_write(f);
	return ferror(f) ? -EIO : 0;
}

char *lw_export_render(struct lw_export *x, size_t *len)
{
	struct lw_export_counters *c = malloc(sizeof(*c));
	char *buf = NULL;
	FILE *f = NULL;
	int err = -ENOMEM;

	if (!c)
		goto cleanup;
	pthread_mutex_lock(&x->lock);
	*c = x->pub;
	pthread_mutex_unlock(&x->lock);
	f = open_memstream(&buf, len);
	if (!f)
		goto cleanup;
	err = render_to(x, f, c);
cleanup:
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	free(c);
	if (err) {
		free(buf);
		errno = -err;
		return NULL;
	}
	return buf;
}
