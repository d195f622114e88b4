// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * core.c - the advisors' shared builders and the table that runs them.
 *
 * Each finding says what was seen, why it hurts latency, and carries a plan:
 * fix commands, their persistent form, a rollback to today's values, how to
 * verify and what it costs. The advisors (adv.h) decide what to say; the
 * builders here keep the first error, so they can build without checking
 * each step.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/adv.h"
#include "lib/fmt.h"

struct lw_finding *adv_begin(struct adv *a, enum lw_cause c, enum lw_severity s)
{
	a->f = a->err ? NULL : lw_findings_add(a->out, c, s);
	if (!a->f && !a->err)
		a->err = -ENOMEM;
	return a->f;
}

void adv_add(struct adv *a, struct lw_strv *v, const char *fmt, ...)
{
	va_list ap;

	if (a->err || !a->f)
		return;
	va_start(ap, fmt);
	if (lw_strv_vadd(v, fmt, ap))
		a->err = -ENOMEM;
	va_end(ap);
}

void adv_put(struct adv *a, char **dst, const char *fmt, ...)
{
	va_list ap;

	if (a->err || !a->f)
		return;
	va_start(ap, fmt);
	if (lw_vset(dst, fmt, ap))
		a->err = -ENOMEM;
	va_end(ap);
}

void adv_text_open(struct adv *a, struct adv_text *t)
{
	t->s = NULL;
	t->len = 0;
	t->m = open_memstream(&t->s, &t->len);
	if (!t->m)
		a->err = -ENOMEM;
}

void adv_text_add(struct adv_text *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->m)
		return;
	va_start(ap, fmt);
	vfprintf(t->m, fmt, ap);
	va_end(ap);
}

void adv_text_close(struct adv *a, struct adv_text *t, char **dst)
{
	if (!t->m)
		return;
	if (fclose(t->m) && !a->err)
		a->err = -ENOMEM;
	t->m = NULL;
	if (a->err || !a->f) {
		free(t->s);
		return;
	}
	free(*dst);
	*dst = t->s;
}

char *adv_text_take(struct adv *a, struct adv_text *t)
{
	if (!t->m)
		return NULL;
	if (fclose(t->m) && !a->err)
		a->err = -ENOMEM;
	t->m = NULL;
	if (a->err) {
		free(t->s);
		t->s = NULL;
	}
	return t->s;
}

void adv_text_drop(struct adv_text *t)
{
	if (t->m)
		fclose(t->m);
	t->m = NULL;
	free(t->s);
	t->s = NULL;
}

const char *adv_cpus_str(const struct lw_cpuset *s, char *buf, size_t len)
{
	lw_cpuset_format(s, buf, len);
	return buf[0] ? buf : "none";
}

void adv_cpu_words(const struct lw_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < LW_NODE_MAX_CPUS; c++) {
		int w;

		if (!lw_cpuset_test(s, c))
			continue;
		w = snprintf(buf + off, len - off, "%s%d", off ? " " : "", c);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += w;
	}
}

struct lw_cpuset adv_cpus_of_interest(const struct lw_node *n)
{
	struct lw_cpuset s = n->online;

	if (n->has_target)
		lw_cpuset_and(&s, &n->target.cpus, &n->online);
	if (lw_cpuset_empty(&s))
		s = n->online;
	return s;
}

const char *adv_target_unit(const struct lw_node *n)
{
	const char *slash, *name;
	size_t l;

	if (!n->has_target || !n->target.cgroup[0])
		return NULL;
	slash = strrchr(n->target.cgroup, '/');
	name = slash ? slash + 1 : n->target.cgroup;
	l = strlen(name);
	return l > 8 && !strcmp(name + l - 8, ".service") ? name : NULL;
}

/* The CPUs the target ran on, else those that matter to it. */
static struct lw_cpuset trace_cpus(const struct lw_node *n, const struct lw_trace_facts *t)
{
	struct lw_cpuset s = {0};

	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		s.w[i] = t->cpus_mask[i];
	if (lw_cpuset_empty(&s))
		s = adv_cpus_of_interest(n);
	return s;
}

/* The advisors, in the order latwhy check prints their node findings. */
static const struct lw_advisor *const advisors[] = {
	&lw_advisor_freq,  &lw_advisor_idle, &lw_advisor_thp,	&lw_advisor_irq,
	&lw_advisor_quota, &lw_advisor_nic,  &lw_advisor_sched, &lw_advisor_memory,
};

#define NR_ADVISORS (sizeof(advisors) / sizeof(advisors[0]))

/* The advisor with the trace step of cause c: a cause may have several
 * advisors making node findings, one finding per trace. */
static const struct lw_advisor *trace_advisor(enum lw_cause c)
{
	for (size_t i = 0; i < NR_ADVISORS; i++)
		if (advisors[i]->cause == c && advisors[i]->trace)
			return advisors[i];
	return NULL;
}

int lw_advise_node(const struct lw_node *n, struct lw_findings *out)
{
	struct adv a = {.n = n, .out = out};

	for (size_t i = 0; i < NR_ADVISORS; i++)
		if (advisors[i]->check)
			advisors[i]->check(&a);
	return a.err;
}

/* Every trace finding leads with its share, whatever the cause. */
static void lead_with_share(struct adv *a, const struct lw_trace_facts *t, enum lw_cause c)
{
	const char *ev;
	char b[64];

	if (!a->f)
		return;
	ev = a->f->evidence;
	/* adv_put() frees the old string only after formatting the new one. */
	if (c == LW_CAUSE_QUOTA && t->no_quota)
		/* not measured: its share is unknown, not 0% */
		adv_put(a, &a->f->evidence,
			"share not measured (sched and idle hold %.0f%% of slow-request time over "
			"%llu slow requests, throttled waits among it)%s%s",
			(t->share[LW_CAUSE_SCHED] + t->share[LW_CAUSE_IDLE]) * 100,
			t->slow_requests, ev && *ev ? "; " : "", ev ? ev : "");
	else
		adv_put(a, &a->f->evidence,
			"%.0f%% of slow-request time (%s over %llu slow requests)%s%s",
			t->share[c] * 100, lw_fmt_ns(b, sizeof(b), t->cause_ns[c]),
			t->slow_requests, ev && *ev ? "; " : "", ev ? ev : "");
}

static bool trace_due(const struct lw_advisor *advisor, const struct lw_node *n,
		      const struct lw_trace_facts *t, enum lw_cause c)
{
	return t->share[c] >= LW_SHARE_FINDING || (advisor->due && advisor->due(n, t));
}

/* Findings come in cause order, whatever the table's order. */
int lw_advise_trace(const struct lw_node *n, const struct lw_trace_facts *t,
		    struct lw_findings *out)
{
	struct adv a = {.n = n, .out = out};
	struct lw_cpuset on = trace_cpus(n, t);
	int top = LW_CAUSE_NONE;

	for (int c = LW_CAUSE_NONE + 1; c < LW_CAUSE_MAX; c++)
		if (t->share[c] > t->share[top])
			top = c;
	for (int c = LW_CAUSE_NONE + 1; c < LW_CAUSE_MAX && !a.err; c++) {
		const struct lw_advisor *advisor = trace_advisor((enum lw_cause)c);
		enum lw_severity sev =
			c == top && t->share[c] >= LW_SHARE_CRIT ? LW_SEV_CRIT : LW_SEV_WARN;

		if (!advisor || !trace_due(advisor, n, t, (enum lw_cause)c) ||
		    !adv_begin(&a, (enum lw_cause)c, sev))
			continue;
		advisor->trace(&a, t, &on);
		lead_with_share(&a, t, (enum lw_cause)c);
		if (advisor->related && !a.err) {
			a.f = NULL;
			advisor->related(&a, t, &on);
		}
	}
	return a.err;
}
