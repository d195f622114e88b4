// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * node.c - what `latwhy check` read of the node's switches, as text or JSON.
 *
 * Only what was read is printed: an unreadable file is absent in text and
 * null in JSON. The findings judged from it are printed by output/findings.h.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/node.h"
#include "output/nic.h" /* NIC section */

#define TEXT_MAX_IRQS 20

/* ---- helpers ---- */

static const char *set_str(const struct lw_cpuset *s, char *buf, size_t len)
{
	lw_cpuset_format(s, buf, len);
	return buf[0] ? buf : "none";
}

static unsigned mhz(unsigned khz)
{
	return (khz + 500) / 1000;
}

/* Lowest scaling_cur_freq over online CPUs, 0 without cpufreq. */
static unsigned lowest_khz(const struct lw_node *n)
{
	unsigned lo = 0;

	for (int c = 0; c < n->nr_cpus; c++)
		if (n->cpus[c].has_freq && n->cpus[c].online && n->cpus[c].cur_khz &&
		    (!lo || n->cpus[c].cur_khz < lo))
			lo = n->cpus[c].cur_khz;
	return lo;
}

static const char *pin_name(enum lw_irq_pin p)
{
	switch (p) {
	case LW_IRQ_MOVABLE:
		return "movable";
	case LW_IRQ_PIN_RO:
		return "kernel-managed (read-only affinity)";
	case LW_IRQ_PIN_NAME:
		return "kernel-managed (by name)";
	}
	return "unknown";
}

/* ---- text: node ---- */

static bool same_freq(const struct lw_cpu *a, const struct lw_cpu *b)
{
	return a->has_freq == b->has_freq && !strcmp(a->governor, b->governor) &&
	       a->cur_khz == b->cur_khz && a->min_khz == b->min_khz && a->max_khz == b->max_khz &&
	       a->hw_max_khz == b->hw_max_khz && !strcmp(a->epp, b->epp);
}

static bool same_idle(const struct lw_cpu *a, const struct lw_cpu *b)
{
	if (a->nr_idle != b->nr_idle || strcmp(a->pm_qos, b->pm_qos))
		return false;
	for (size_t s = 0; s < a->nr_idle; s++)
		if (strcmp(a->idle[s].name, b->idle[s].name) ||
		    a->idle[s].latency_us != b->idle[s].latency_us ||
		    a->idle[s].disable != b->idle[s].disable)
			return false;
	return true;
}

/* CPUs (online, not yet printed) that look like cpu c. */
static struct lw_cpuset group_of(const struct lw_node *n, int c, const struct lw_cpuset *done,
				 bool (*same)(const struct lw_cpu *, const struct lw_cpu *))
{
	struct lw_cpuset g = {0};

	for (int k = c; k < n->nr_cpus; k++)
		if (n->cpus[k].online && !lw_cpuset_test(done, k) && same(&n->cpus[c], &n->cpus[k]))
			lw_cpuset_set(&g, k);
	return g;
}

static void print_freq(FILE *f, const struct lw_node *n)
{
	const struct lw_cpufreq *q = &n->freq;
	struct lw_cpuset done = {0};
	char b[256];

	fprintf(f, "cpufreq\n");
	if (q->drv == LW_DRV_NONE) {
		fprintf(f, "  driver: none (no cpufreq: nothing to tune from here, no frequency "
			   "data)\n");
		return;
	}
	fprintf(f, "  driver: %s", q->driver);
	if (strcmp(q->driver, lw_freq_drv_name(q->drv)))
		fprintf(f, " [%s]", lw_freq_drv_name(q->drv));
	if (q->pstate_status[0])
		fprintf(f, ", status %s%s", q->pstate_status, q->hwp ? ", HWP" : "");
	if (q->no_turbo >= 0)
		fprintf(f, ", no_turbo %d", q->no_turbo);
	if (q->boost >= 0)
		fprintf(f, ", boost %d", q->boost);
	fprintf(f, "\n");
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];
		struct lw_cpuset g;

		if (!cpu->online || lw_cpuset_test(&done, c))
			continue;
		g = group_of(n, c, &done, same_freq);
		lw_cpuset_or(&done, &done, &g);
		if (!cpu->has_freq) {
			fprintf(f, "  cpu %s: no cpufreq policy\n", set_str(&g, b, sizeof(b)));
			continue;
		}
		fprintf(f, "  cpu %s: governor %s, %u MHz (scaling %u-%u, hardware %u-%u MHz)",
			set_str(&g, b, sizeof(b)), cpu->governor, mhz(cpu->cur_khz),
			mhz(cpu->min_khz), mhz(cpu->max_khz), mhz(cpu->hw_min_khz),
			mhz(cpu->hw_max_khz));
		if (cpu->epp[0])
			fprintf(f, ", EPP %s", cpu->epp);
		fprintf(f, "\n");
	}
}

static void print_idle(FILE *f, const struct lw_node *n)
{
	struct lw_cpuset done = {0};
	char b[256];

	fprintf(f, "cpuidle\n  driver: %s, governor: %s\n",
		n->idle.driver[0] ? n->idle.driver : "none",
		n->idle.governor[0] ? n->idle.governor : "none");
	if (n->idle.halt_poll_ns >= 0)
		fprintf(f, "  haltpoll: guest_halt_poll_ns %lld%s\n", n->idle.halt_poll_ns,
			n->idle.halt_poll_ns ? ""
					     : " (an idle vCPU halts at once, without polling)");
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];
		struct lw_cpuset g;

		if (!cpu->online || lw_cpuset_test(&done, c))
			continue;
		g = group_of(n, c, &done, same_idle);
		lw_cpuset_or(&done, &done, &g);
		fprintf(f, "  cpu %s:", set_str(&g, b, sizeof(b)));
		for (size_t s = 0; s < cpu->nr_idle; s++) {
			unsigned long long usage = 0;

			for (int k = 0; k < n->nr_cpus; k++)
				if (lw_cpuset_test(&g, k))
					usage += n->cpus[k].idle[s].usage;
			fprintf(f, "%s %s %u us%s (entered %llu)", s ? "," : "", cpu->idle[s].name,
				cpu->idle[s].latency_us, cpu->idle[s].disable ? " disabled" : "",
				usage);
		}
		if (!cpu->nr_idle)
			fprintf(f, " no idle states");
		fprintf(f, "; PM QoS resume latency %s\n",
			!cpu->pm_qos[0]		      ? "absent"
			: !strcmp(cpu->pm_qos, "0")   ? "0 (no limit)"
			: !strcmp(cpu->pm_qos, "n/a") ? "n/a (no idle states allowed)"
						      : cpu->pm_qos);
	}
}

static void print_thp(FILE *f, const struct lw_node *n)
{
	const struct lw_thp *t = &n->thp;

	fprintf(f, "THP\n");
	if (!t->present) {
		fprintf(f, "  not available\n");
		return;
	}
	fprintf(f,
		"  enabled %s, defrag %s; khugepaged: defrag %d, pages_to_scan %ld, "
		"scan_sleep %ld ms, alloc_sleep %ld ms\n",
		t->enabled, t->defrag, t->kh_defrag, t->pages_to_scan, t->scan_sleep_ms,
		t->alloc_sleep_ms);
}

static unsigned long long irq_sampled(const struct lw_node *n, const struct lw_irq *q)
{
	unsigned long long v = 0;

	for (int c = 0; q->delta && c < n->nr_cpus; c++)
		v += q->delta[c];
	return v;
}

struct irq_row {
	const struct lw_irq *q;
	unsigned long long key; /* sample count when sampled, else total since boot */
};

static int cmp_irq_row(const void *a, const void *b)
{
	const struct irq_row *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return (x->q->irq > y->q->irq) - (x->q->irq < y->q->irq);
}

static void print_irq_line(FILE *f, const struct lw_node *n, const struct lw_irq *q)
{
	char rate[32] = "-";
	bool on_target = n->has_target && lw_cpuset_intersects(&q->eff, &n->target.cpus);

	if (q->delta && n->sample_ms)
		snprintf(rate, sizeof(rate), "%.0f", irq_sampled(n, q) * 1000.0 / n->sample_ms);
	fprintf(f, "  %5u %-9s %-9s %4d %12llu %8s  %s", q->irq,
		q->effective[0] ? q->effective : "?", q->affinity[0] ? q->affinity : "?", q->node,
		q->total, rate, q->name);
	if (q->pin)
		fprintf(f, " [%s]", pin_name(q->pin));
	if (q->nic >= 0)
		fprintf(f, " [NIC %s]", n->nics[q->nic].name);
	if (on_target)
		fprintf(f, " [on target CPUs]");
	fprintf(f, "\n");
}

static void print_irqs(FILE *f, const struct lw_node *n)
{
	const struct lw_irqbalance *ib = &n->irqbalance;
	struct irq_row *v;
	size_t shown = 0;
	char b[256];

	fprintf(f, "interrupts");
	if (n->sample_ms)
		fprintf(f, " (rates over a %u ms sample)", n->sample_ms);
	fprintf(f, "\n  irqbalance: %s", ib->running ? "running" : "not running");
	if (ib->running)
		fprintf(f, " (pid %d)", ib->pid);
	if (ib->banned[0])
		fprintf(f, ", banned CPUs %s (%s)", ib->banned, ib->banned_src);
	fprintf(f, "\n");
	if (n->irq_entry_ns)
		fprintf(f,
			"  entry/exit: %.1f us per interrupt beyond its handler (what a running "
			"thread loses to one; bare metal: about 1 us, more on a VM)\n",
			n->irq_entry_ns / 1000.0);
	for (size_t i = 0; i < n->nr_numa; i++)
		fprintf(f, "  NUMA node %d: CPUs %s\n", n->numa[i].id,
			set_str(&n->numa[i].cpus, b, sizeof(b)));
	for (size_t i = 0; i < n->nr_nics; i++) {
		fprintf(f, "  NIC %s: NUMA node %d, IRQs", n->nics[i].name, n->nics[i].numa_node);
		for (size_t k = 0; k < n->nics[i].nr_irqs; k++)
			fprintf(f, " %u", n->nics[i].irqs[k]);
		fprintf(f, "%s\n", n->nics[i].nr_irqs ? "" : " none found");
	}
	v = calloc(n->nr_irqs ? n->nr_irqs : 1, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < n->nr_irqs; i++) {
		v[i].q = &n->irqs[i];
		v[i].key = n->irqs[i].delta ? irq_sampled(n, &n->irqs[i]) : n->irqs[i].total;
	}
	qsort(v, n->nr_irqs, sizeof(*v), cmp_irq_row);
	fprintf(f, "  %5s %-9s %-9s %4s %12s %8s  %s\n", "IRQ", "effective", "affinity", "node",
		"total", "rate/s", "name");
	for (size_t i = 0; i < n->nr_irqs && shown < TEXT_MAX_IRQS; i++) {
		if (!v[i].q->total)
			continue;
		print_irq_line(f, n, v[i].q);
		shown++;
	}
	if (n->nr_irqs > shown)
		fprintf(f, "  (%zu more IRQs, idle or less busy: see --json)\n",
			n->nr_irqs - shown);
	free(v);
}

static void print_target(FILE *f, const struct lw_node *n)
{
	const struct lw_target *t = &n->target;

	if (!n->has_target)
		return;
	fprintf(f, "target pid %d (%s)\n", t->pid, t->comm);
	fprintf(f, "  allowed CPUs %s, cpuset %s, cgroup %s", t->cpus_allowed,
		t->cpuset[0] ? t->cpuset : "?", t->cgroup[0] ? t->cgroup : "?");
	if (t->cgroup_v)
		fprintf(f, " (v%d)", t->cgroup_v);
	fprintf(f, "\n  CPU quota: ");
	if (!t->cpu_max_path[0])
		fprintf(f, "unknown");
	else if (t->quota_us < 0)
		fprintf(f, "none (%s)", t->cpu_max);
	else
		fprintf(f, "%.2f CPUs (%s)", t->period_us ? (double)t->quota_us / t->period_us : 0,
			t->cpu_max);
	/* the limit that binds may be a parent's (a pod's slice, a unit's) */
	if (t->cg_bind > 0 && t->cg_bind < t->nr_cg)
		fprintf(f, " on %s", t->cg[t->cg_bind].path);
	if (t->has_cpu_stat)
		fprintf(f, ", throttled in %llu of %llu periods, %.2f s", t->nr_throttled,
			t->nr_periods, t->throttled_usec / 1e6);
	fprintf(f, "\n  THP: %s",
		t->thp_enabled < 0 ? "no THP_enabled line (old kernel)"
		: t->thp_enabled   ? "enabled for the process"
				   : "disabled by prctl");
	if (t->madv_regions < 0)
		fprintf(f, "; smaps unreadable\n");
	else
		fprintf(f, "; %d MADV_HUGEPAGE regions, AnonHugePages %llu kB\n", t->madv_regions,
			t->anon_huge_kb);
}

void lw_node_print(FILE *f, const struct lw_node *n)
{
	unsigned lo = lowest_khz(n);
	char b[256];

	fprintf(f, "node %s: %d CPUs online (%s), %zu NUMA node%s%s\n", n->root[0] ? n->root : "/",
		lw_cpuset_count(&n->online), set_str(&n->online, b, sizeof(b)), n->nr_numa,
		n->nr_numa == 1 ? "" : "s", n->vm ? ", a virtual machine" : "");
	if (lo)
		fprintf(f, "drift signals: lowest clock %u MHz, THP %s, IRQ entropy %.2f bits\n",
			mhz(lo), n->thp.present ? n->thp.enabled : "n/a", lw_node_irq_entropy(n));
	else
		fprintf(f,
			"drift signals: clock n/a (no frequency data), THP %s, IRQ entropy %.2f "
			"bits\n",
			n->thp.present ? n->thp.enabled : "n/a", lw_node_irq_entropy(n));
	fprintf(f, "\n");
	print_freq(f, n);
	print_idle(f, n);
	print_thp(f, n);
	print_irqs(f, n);
	print_target(f, n);
	lw_nics_print(f, n); /* output/nic.c */
}

/* ---- JSON: node ---- */

static void json_opt_int(struct lw_json *j, const char *key, long long v)
{
	lw_json_key(j, key);
	if (v < 0)
		lw_json_null(j);
	else
		lw_json_i64(j, v);
}

static void json_set(struct lw_json *j, const char *key, const struct lw_cpuset *s)
{
	char b[1024];

	lw_json_kstr(j, key, lw_cpuset_format(s, b, sizeof(b)));
}

static void json_freq(struct lw_json *j, const struct lw_node *n)
{
	const struct lw_cpufreq *q = &n->freq;

	lw_json_key(j, "cpufreq");
	lw_json_begin_object(j);
	lw_json_kstr(j, "driver", q->driver[0] ? q->driver : NULL);
	lw_json_kstr(j, "mode", lw_freq_drv_name(q->drv));
	lw_json_kstr(j, "pstate_status", q->pstate_status[0] ? q->pstate_status : NULL);
	lw_json_kbool(j, "hwp", q->hwp);
	json_opt_int(j, "no_turbo", q->no_turbo);
	json_opt_int(j, "boost", q->boost);
	lw_json_key(j, "cpus");
	lw_json_begin_array(j);
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];

		if (!cpu->has_freq)
			continue;
		lw_json_begin_object(j);
		lw_json_ki64(j, "cpu", c);
		lw_json_kstr(j, "governor", cpu->governor);
		lw_json_ku64(j, "cur_khz", cpu->cur_khz);
		lw_json_ku64(j, "min_khz", cpu->min_khz);
		lw_json_ku64(j, "max_khz", cpu->max_khz);
		lw_json_ku64(j, "hw_min_khz", cpu->hw_min_khz);
		lw_json_ku64(j, "hw_max_khz", cpu->hw_max_khz);
		lw_json_ku64(j, "base_khz", cpu->base_khz);
		lw_json_kstr(j, "epp", cpu->epp[0] ? cpu->epp : NULL);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_end_object(j);
}

static void json_idle(struct lw_json *j, const struct lw_node *n)
{
	lw_json_key(j, "cpuidle");
	lw_json_begin_object(j);
	lw_json_kstr(j, "driver", n->idle.driver[0] ? n->idle.driver : NULL);
	lw_json_kstr(j, "governor", n->idle.governor[0] ? n->idle.governor : NULL);
	if (n->idle.halt_poll_ns >= 0)
		lw_json_ki64(j, "guest_halt_poll_ns", n->idle.halt_poll_ns);
	else
		lw_json_knull(j, "guest_halt_poll_ns");
	lw_json_key(j, "cpus");
	lw_json_begin_array(j);
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];

		lw_json_begin_object(j);
		lw_json_ki64(j, "cpu", c);
		lw_json_kbool(j, "online", cpu->online);
		lw_json_ki64(j, "numa_node", cpu->numa_node);
		lw_json_kstr(j, "pm_qos_resume_latency_us", cpu->pm_qos[0] ? cpu->pm_qos : NULL);
		lw_json_key(j, "states");
		lw_json_begin_array(j);
		for (size_t s = 0; s < cpu->nr_idle; s++) {
			const struct lw_idle_state *st = &cpu->idle[s];

			lw_json_begin_object(j);
			lw_json_ku64(j, "state", s);
			lw_json_kstr(j, "name", st->name);
			lw_json_ku64(j, "latency_us", st->latency_us);
			lw_json_ku64(j, "usage", st->usage);
			lw_json_ku64(j, "time_us", st->time_us);
			lw_json_kbool(j, "disabled", st->disable);
			lw_json_end_object(j);
		}
		lw_json_end_array(j);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_end_object(j);
}

static void json_thp(struct lw_json *j, const struct lw_node *n)
{
	const struct lw_thp *t = &n->thp;

	lw_json_key(j, "thp");
	if (!t->present) {
		lw_json_null(j);
		return;
	}
	lw_json_begin_object(j);
	lw_json_kstr(j, "enabled", t->enabled);
	lw_json_kstr(j, "defrag", t->defrag);
	lw_json_key(j, "khugepaged");
	lw_json_begin_object(j);
	json_opt_int(j, "defrag", t->kh_defrag);
	json_opt_int(j, "pages_to_scan", t->pages_to_scan);
	json_opt_int(j, "scan_sleep_millisecs", t->scan_sleep_ms);
	json_opt_int(j, "alloc_sleep_millisecs", t->alloc_sleep_ms);
	lw_json_end_object(j);
	lw_json_end_object(j);
}

static void json_irq(struct lw_json *j, const struct lw_node *n, const struct lw_irq *q)
{
	lw_json_begin_object(j);
	lw_json_ku64(j, "irq", q->irq);
	lw_json_kstr(j, "name", q->name);
	lw_json_kstr(j, "chip", q->chip);
	lw_json_kstr(j, "affinity", q->affinity[0] ? q->affinity : NULL);
	lw_json_kstr(j, "effective", q->effective[0] ? q->effective : NULL);
	lw_json_ki64(j, "node", q->node);
	lw_json_kbool(j, "managed", q->pin != LW_IRQ_MOVABLE);
	lw_json_kstr(j, "pin", pin_name(q->pin));
	lw_json_ku64(j, "total", q->total);
	lw_json_key(j, "sample");
	if (q->delta)
		lw_json_u64(j, irq_sampled(n, q));
	else
		lw_json_null(j);
	lw_json_key(j, "per_cpu");
	lw_json_begin_array(j);
	for (int c = 0; c < n->nr_cpus; c++)
		lw_json_u64(j, q->count[c]);
	lw_json_end_array(j);
	if (q->nic >= 0)
		lw_json_kstr(j, "nic", n->nics[q->nic].name);
	lw_json_end_object(j);
}

static void json_irqs(struct lw_json *j, const struct lw_node *n)
{
	const struct lw_irqbalance *ib = &n->irqbalance;

	lw_json_key(j, "interrupts");
	lw_json_begin_object(j);
	lw_json_ku64(j, "sample_ms", n->sample_ms);
	if (n->irq_entry_ns)
		lw_json_ku64(j, "entry_cost_ns", n->irq_entry_ns);
	else
		lw_json_knull(j, "entry_cost_ns");
	lw_json_key(j, "irqbalance");
	lw_json_begin_object(j);
	lw_json_kbool(j, "running", ib->running);
	json_opt_int(j, "pid", ib->running ? ib->pid : -1);
	lw_json_kstr(j, "banned_cpus", ib->banned[0] ? ib->banned : NULL);
	lw_json_kstr(j, "banned_source", ib->banned_src[0] ? ib->banned_src : NULL);
	lw_json_end_object(j);
	lw_json_key(j, "numa_nodes");
	lw_json_begin_array(j);
	for (size_t i = 0; i < n->nr_numa; i++) {
		lw_json_begin_object(j);
		lw_json_ki64(j, "node", n->numa[i].id);
		json_set(j, "cpus", &n->numa[i].cpus);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_key(j, "nics");
	lw_json_begin_array(j);
	for (size_t i = 0; i < n->nr_nics; i++) {
		lw_json_begin_object(j);
		lw_json_kstr(j, "name", n->nics[i].name);
		lw_json_ki64(j, "numa_node", n->nics[i].numa_node);
		lw_json_key(j, "irqs");
		lw_json_begin_array(j);
		for (size_t k = 0; k < n->nics[i].nr_irqs; k++)
			lw_json_u64(j, n->nics[i].irqs[k]);
		lw_json_end_array(j);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
	lw_json_key(j, "irqs");
	lw_json_begin_array(j);
	for (size_t i = 0; i < n->nr_irqs; i++)
		json_irq(j, n, &n->irqs[i]);
	lw_json_end_array(j);
	lw_json_end_object(j);
}

static void json_target(struct lw_json *j, const struct lw_node *n)
{
	const struct lw_target *t = &n->target;

	lw_json_key(j, "target");
	if (!n->has_target) {
		lw_json_null(j);
		return;
	}
	lw_json_begin_object(j);
	lw_json_ki64(j, "pid", t->pid);
	lw_json_kstr(j, "comm", t->comm);
	lw_json_kstr(j, "cpus_allowed", t->cpus_allowed);
	lw_json_kstr(j, "cpuset_effective", t->cpuset[0] ? t->cpuset : NULL);
	lw_json_kstr(j, "cgroup", t->cgroup[0] ? t->cgroup : NULL);
	json_opt_int(j, "cgroup_version", t->cgroup_v ? t->cgroup_v : -1);
	lw_json_kstr(j, "cpu_max", t->cpu_max_path[0] ? t->cpu_max : NULL);
	json_opt_int(j, "quota_us", t->quota_us);
	lw_json_ku64(j, "period_us", t->period_us);
	lw_json_key(j, "cpu_stat");
	if (t->has_cpu_stat) {
		lw_json_begin_object(j);
		lw_json_ku64(j, "nr_periods", t->nr_periods);
		lw_json_ku64(j, "nr_throttled", t->nr_throttled);
		lw_json_ku64(j, "throttled_usec", t->throttled_usec);
		lw_json_end_object(j);
	} else {
		lw_json_null(j);
	}
	lw_json_key(j, "thp_enabled");
	if (t->thp_enabled < 0)
		lw_json_null(j);
	else
		lw_json_bool(j, t->thp_enabled);
	json_opt_int(j, "madvised_regions", t->madv_regions);
	lw_json_ku64(j, "anon_huge_kb", t->anon_huge_kb);
	lw_json_end_object(j);
}

void lw_node_json(struct lw_json *j, const struct lw_node *n)
{
	unsigned lo = lowest_khz(n);

	lw_json_begin_object(j);
	lw_json_kstr(j, "root", n->root[0] ? n->root : "/");
	lw_json_kbool(j, "vm", n->vm);
	json_set(j, "cpus_online", &n->online);
	json_set(j, "cpus_isolated", &n->isolated);
	lw_json_key(j, "drift");
	lw_json_begin_object(j);
	json_opt_int(j, "cpu_mhz_lowest", lo ? (long long)mhz(lo) : -1);
	lw_json_kstr(j, "thp_enabled", n->thp.present ? n->thp.enabled : NULL);
	lw_json_kdouble(j, "irq_entropy_bits", lw_node_irq_entropy(n));
	lw_json_end_object(j);
	json_freq(j, n);
	json_idle(j, n);
	json_thp(j, n);
	json_irqs(j, n);
	json_target(j, n);
	lw_nics_json(j, n); /* output/nic.c */
	lw_json_end_object(j);
}
