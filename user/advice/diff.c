// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * diff.c - which switches differ between two nodes, and which explain the
 * causes that grew on the slower one. A switch explains a cause when it is
 * of that cause's domain (the governor, the clock and EPP for frequency;
 * THP's modes and khugepaged for thp; irqbalance, the IRQ spread and RPS
 * for irq; cpuidle for idle; the quota for sched), the causes ranked by how
 * much their share of the slow requests' time grew.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/diff.h"

/* A growth below this (of the slow requests' time) explains nothing. */
#define LW_DIFF_MIN_GROWTH 0.05

static void sw_add(struct lw_diff *d, enum lw_cause c, const char *name, const char *a,
		   const char *b)
{
	struct lw_diff_switch *w;

	if (!strcmp(a, b) || d->nr_sw == LW_DIFF_MAX)
		return;
	w = &d->sw[d->nr_sw++];
	w->cause = c;
	snprintf(w->name, sizeof(w->name), "%s", name);
	snprintf(w->v[0], sizeof(w->v[0]), "%s", a);
	snprintf(w->v[1], sizeof(w->v[1]), "%s", b);
}

/* The distinct values of a per-CPU field over the online CPUs, "a,b". */
static void cpu_values(const struct lw_node *n, size_t off, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int c = 0; n && c < n->nr_cpus; c++) {
		const char *v = (const char *)&n->cpus[c] + off;

		if (!lw_cpuset_test(&n->online, c) || !*v || strstr(buf, v))
			continue;
		used += snprintf(buf + used, len > used ? len - used : 0, "%s%s", used ? "," : "",
				 v);
	}
	if (!buf[0])
		snprintf(buf, len, "%s", n ? "none" : "not recorded");
}

static void freq_switches(struct lw_diff *d, const struct lw_summary *const s[2],
			  const struct lw_node *const n[2])
{
	char v[2][96];

	for (int i = 0; i < 2; i++)
		cpu_values(n[i], offsetof(struct lw_cpu, governor), v[i], sizeof(v[i]));
	sw_add(d, LW_CAUSE_FREQ, "cpufreq governor", v[0], v[1]);
	for (int i = 0; i < 2; i++)
		cpu_values(n[i], offsetof(struct lw_cpu, epp), v[i], sizeof(v[i]));
	sw_add(d, LW_CAUSE_FREQ, "EPP", v[0], v[1]);
	for (int i = 0; i < 2; i++) {
		if (s[i]->freq_measured)
			snprintf(v[i], sizeof(v[i]), "%u MHz", (s[i]->freq_min_khz + 500) / 1000);
		else
			snprintf(v[i], sizeof(v[i]), "no frequency data");
	}
	sw_add(d, LW_CAUSE_FREQ, "lowest clock traced", v[0], v[1]);
}

static void thp_switches(struct lw_diff *d, const struct lw_node *const n[2])
{
	char v[4][2][64];

	for (int i = 0; i < 2; i++) {
		const struct lw_thp *t = n[i] ? &n[i]->thp : NULL;

		snprintf(v[0][i], 64, "%s", t && t->present ? t->enabled : "not recorded");
		snprintf(v[1][i], 64, "%s", t && t->present ? t->defrag : "not recorded");
		snprintf(v[2][i], 64, "%d", t ? t->kh_defrag : -1);
		snprintf(v[3][i], 64, "%ld ms", t ? t->scan_sleep_ms : -1);
	}
	sw_add(d, LW_CAUSE_THP, "THP enabled", v[0][0], v[0][1]);
	sw_add(d, LW_CAUSE_THP, "THP defrag", v[1][0], v[1][1]);
	sw_add(d, LW_CAUSE_THP, "khugepaged defrag", v[2][0], v[2][1]);
	sw_add(d, LW_CAUSE_THP, "khugepaged scan_sleep", v[3][0], v[3][1]);
}

static void irq_switches(struct lw_diff *d, const struct lw_node *const n[2])
{
	char v[3][2][64];
	double h[2] = {0, 0};

	for (int i = 0; i < 2; i++) {
		snprintf(v[0][i], 64, "%s",
			 !n[i]			    ? "not recorded"
			 : n[i]->irqbalance.running ? "running"
						    : "not running");
		snprintf(v[2][i], 64, "%zu queues", n[i] ? n[i]->nr_rps : 0);
		h[i] = n[i] ? lw_node_irq_entropy(n[i]) : 0;
		snprintf(v[1][i], 64, "%.2f bits", h[i]);
	}
	sw_add(d, LW_CAUSE_IRQ, "irqbalance", v[0][0], v[0][1]);
	/* counts since boot move: half a bit is a different spread */
	if (h[0] - h[1] > 0.5 || h[1] - h[0] > 0.5)
		sw_add(d, LW_CAUSE_IRQ, "IRQ spread (entropy)", v[1][0], v[1][1]);
	sw_add(d, LW_CAUSE_IRQ, "RPS", v[2][0], v[2][1]);
}

static void idle_quota_switches(struct lw_diff *d, const struct lw_node *const n[2])
{
	char v[3][2][96];

	for (int i = 0; i < 2; i++) {
		const struct lw_node *x = n[i];

		snprintf(v[0][i], 96, "%s/%s", x && x->idle.driver[0] ? x->idle.driver : "none",
			 x && x->idle.governor[0] ? x->idle.governor : "none");
		snprintf(v[1][i], 96, "%lld ns", x ? x->idle.halt_poll_ns : -1);
		if (x && x->has_target && x->target.quota_us > 0)
			snprintf(v[2][i], 96, "%lld of %llu us", x->target.quota_us,
				 x->target.period_us);
		else
			snprintf(v[2][i], 96, "%s", x && x->has_target ? "none" : "not recorded");
	}
	sw_add(d, LW_CAUSE_IDLE, "cpuidle driver/governor", v[0][0], v[0][1]);
	sw_add(d, LW_CAUSE_IDLE, "haltpoll guest_halt_poll_ns", v[1][0], v[1][1]);
	sw_add(d, LW_CAUSE_QUOTA, "CPU quota", v[2][0], v[2][1]);
}

static double share(const struct lw_summary *s, enum lw_cause c)
{
	return s->cause[c].measured ? s->cause[c].share : -1;
}

static int cmp_growth(const void *a, const void *b)
{
	const struct lw_diff_cause *x = a, *y = b;
	double gx = x->share[0] - x->share[1], gy = y->share[0] - y->share[1];

	return gx < gy ? 1 : gx > gy ? -1 : 0;
}

/* The causes that grew on the slower side (share[0] is the slower's while
 * ranking), with their domain's switches; then shares back in A, B order. */
static void explain(struct lw_diff *d, const struct lw_summary *const s[2])
{
	int slow = d->slower, fast = !slow;

	for (int c = LW_CAUSE_NONE + 1; c < LW_CAUSE_MAX && slow >= 0; c++) {
		struct lw_diff_cause *w = &d->why[d->nr_why];

		w->cause = (enum lw_cause)c;
		w->share[0] = share(s[slow], c);
		w->share[1] = share(s[fast], c);
		if (w->share[0] < 0 ||
		    w->share[0] - (w->share[1] > 0 ? w->share[1] : 0) < LW_DIFF_MIN_GROWTH)
			continue;
		w->nr_sw = 0;
		for (size_t i = 0; i < d->nr_sw; i++)
			if ((int)d->sw[i].cause == c)
				w->sw[w->nr_sw++] = i;
		d->nr_why++;
	}
	qsort(d->why, d->nr_why, sizeof(d->why[0]), cmp_growth);
	for (size_t i = 0; slow == 1 && i < d->nr_why; i++) {
		double t = d->why[i].share[0];

		d->why[i].share[0] = d->why[i].share[1];
		d->why[i].share[1] = t;
	}
}

void lw_diff_build(const struct lw_summary *const s[2], const struct lw_node *const n[2],
		   struct lw_diff *d)
{
	memset(d, 0, sizeof(*d));
	d->slower = s[0]->p99_ns > s[1]->p99_ns ? 0 : s[1]->p99_ns > s[0]->p99_ns ? 1 : -1;
	freq_switches(d, s, n);
	thp_switches(d, n);
	irq_switches(d, n);
	idle_quota_switches(d, n);
	explain(d, s);
}
