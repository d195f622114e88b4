// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * advise.c - turn the node's switches (and a trace's causes) into findings.
 *
 * Each finding says what was seen, why it hurts latency, and carries a plan:
 * fix commands, their persistent form, a rollback to today's values, how to
 * verify and what it costs. The figures quoted come from the field notes
 * (docs/field-notes.md): 800 MHz of 3700 under powersave, 180 W -> 240 W for
 * performance, +0.3 ms P50 for Go with THP=never, +30% memory latency across
 * NUMA nodes.
 *
 * Detection (which CPUs, states, IRQs are affected) is kept apart from the
 * plan builders (fill_*), so node findings and trace findings share the plans.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/advise.h"
#include "advice/nic.h" /* NIC findings */

#define CPU_DIR "/sys/devices/system/cpu"
#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
/* lw_softirq_name(LW_SOFTIRQ_BACKLOG): a target's data waiting in a CPU's
 * receive backlog for its NET_RX, counted in waits, not runs */
#define BACKLOG_VEC "NET_RX_BACKLOG"
#define COST_PERF                                                                                  \
	"performance raises power draw (field case: 180 W -> 240 W, +33%); on power-limited "      \
	"nodes prefer schedutil"

struct adv {
	const struct lw_node *n;
	struct lw_findings *out;
	struct lw_finding *f; /* the finding being built */
	int err;	      /* first error, sticky */
};

/* A string built with printf calls, then handed to a finding field. */
struct text {
	char *s;
	size_t len;
	FILE *m;
};

/* ---- small helpers ---- */

static struct lw_finding *begin(struct adv *a, enum lw_cause c, enum lw_severity s)
{
	a->f = a->err ? NULL : lw_findings_add(a->out, c, s);
	if (!a->f && !a->err)
		a->err = -ENOMEM;
	return a->f;
}

static __attribute__((format(printf, 3, 4))) void add(struct adv *a, struct lw_strv *v,
						      const char *fmt, ...)
{
	va_list ap;

	if (a->err || !a->f)
		return;
	va_start(ap, fmt);
	if (lw_strv_vadd(v, fmt, ap))
		a->err = -ENOMEM;
	va_end(ap);
}

/* put() frees the old string only after formatting the new one (lw_vset). */
static __attribute__((format(printf, 3, 4))) void put(struct adv *a, char **dst, const char *fmt,
						      ...)
{
	va_list ap;

	if (a->err || !a->f)
		return;
	va_start(ap, fmt);
	if (lw_vset(dst, fmt, ap))
		a->err = -ENOMEM;
	va_end(ap);
}

static void text_open(struct adv *a, struct text *t)
{
	t->s = NULL;
	t->len = 0;
	t->m = open_memstream(&t->s, &t->len);
	if (!t->m)
		a->err = -ENOMEM;
}

static __attribute__((format(printf, 2, 3))) void tx(struct text *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->m)
		return;
	va_start(ap, fmt);
	vfprintf(t->m, fmt, ap);
	va_end(ap);
}

/* Close t and move its string into *dst (or drop it on error). */
static void text_close(struct adv *a, struct text *t, char **dst)
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

/* Close t and give its string to the caller, who frees it; NULL on error. */
static char *text_take(struct adv *a, struct text *t)
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

static void text_drop(struct text *t)
{
	if (t->m)
		fclose(t->m);
	t->m = NULL;
	free(t->s);
	t->s = NULL;
}

static const char *cpus_str(const struct lw_cpuset *s, char *buf, size_t len)
{
	lw_cpuset_format(s, buf, len);
	return buf[0] ? buf : "none";
}

/* "0 1 2 3": a CPU list for a shell for-loop in a unit file. */
static void cpu_words(const struct lw_cpuset *s, char *buf, size_t len)
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

static const char *fmt_ns(unsigned long long ns, char *buf, size_t len)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.0f us", ns / 1e3);
	return buf;
}

static unsigned mhz(unsigned khz)
{
	return (khz + 500) / 1000;
}

/* The CPUs that matter: the target's allowed CPUs, else every online CPU. */
static struct lw_cpuset cpus_of_interest(const struct lw_node *n)
{
	struct lw_cpuset s = n->online;

	if (n->has_target)
		lw_cpuset_and(&s, &n->target.cpus, &n->online);
	if (lw_cpuset_empty(&s))
		s = n->online;
	return s;
}

/* "gateway.service" when the target's cgroup is a systemd service, else NULL. */
static const char *target_unit(const struct lw_node *n)
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

/* ---- frequency ---- */

static bool epp_driven(const struct lw_node *n)
{
	return (n->freq.drv == LW_DRV_INTEL_PSTATE && n->freq.hwp) ||
	       n->freq.drv == LW_DRV_AMD_PSTATE_EPP;
}

static enum lw_severity governor_severity(const struct lw_node *n, const char *gov)
{
	if (!strcmp(gov, "performance") || !strcmp(gov, "schedutil"))
		return LW_SEV_INFO;
	/* intel_pstate's own powersave (no HWP) follows load; generic powersave pins the minimum.
	 */
	if (!strcmp(gov, "powersave") && n->freq.drv != LW_DRV_INTEL_PSTATE)
		return LW_SEV_CRIT;
	return LW_SEV_WARN;
}

/* CPUs in within whose governor holds the clock down; *sev gets the worst case. */
static struct lw_cpuset governor_cpus(const struct lw_node *n, const struct lw_cpuset *within,
				      enum lw_severity *sev)
{
	struct lw_cpuset s = {0};

	*sev = LW_SEV_INFO;
	if (epp_driven(n))
		return s;
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];
		enum lw_severity v;

		if (!cpu->has_freq || !lw_cpuset_test(within, c) || !cpu->governor[0])
			continue;
		v = governor_severity(n, cpu->governor);
		if (v == LW_SEV_INFO)
			continue;
		lw_cpuset_set(&s, c);
		if (v > *sev)
			*sev = v;
	}
	return s;
}

static enum lw_severity epp_severity(const char *epp)
{
	if (!strcmp(epp, "performance"))
		return LW_SEV_INFO;
	if (!strcmp(epp, "power"))
		return LW_SEV_CRIT;
	if (!strcmp(epp, "balance_power"))
		return LW_SEV_WARN;
	return LW_SEV_INFO; /* balance_performance, default, numeric: mild */
}

/* CPUs whose EPP is not performance (only under powersave: performance forces EPP 0). */
static struct lw_cpuset epp_cpus(const struct lw_node *n, const struct lw_cpuset *within,
				 enum lw_severity *sev)
{
	struct lw_cpuset s = {0};

	*sev = LW_SEV_INFO;
	if (!epp_driven(n))
		return s;
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];
		enum lw_severity v;

		if (!cpu->has_freq || !lw_cpuset_test(within, c) || !cpu->epp[0] ||
		    !strcmp(cpu->epp, "performance") || !strcmp(cpu->governor, "performance"))
			continue;
		v = epp_severity(cpu->epp);
		lw_cpuset_set(&s, c);
		if (v > *sev)
			*sev = v;
	}
	return s;
}

/* Lowest current and highest hardware clock over set. */
static void clock_range(const struct lw_node *n, const struct lw_cpuset *set, unsigned *cur_lo,
			unsigned *hw_max, unsigned *min)
{
	*cur_lo = 0;
	*hw_max = 0;
	*min = 0;
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];

		if (!lw_cpuset_test(set, c) || !cpu->has_freq)
			continue;
		if (!*cur_lo || cpu->cur_khz < *cur_lo)
			*cur_lo = cpu->cur_khz;
		if (cpu->hw_max_khz > *hw_max)
			*hw_max = cpu->hw_max_khz;
		if (!*min || cpu->min_khz < *min)
			*min = cpu->min_khz;
	}
}

/* A oneshot unit that writes value into CPU_DIR/cpu$c/<file> for the CPUs in set at boot. */
static void persist_cpu_unit(struct adv *a, const char *unit, const char *what,
			     const struct lw_cpuset *set, const char *file, const char *value)
{
	char words[2048];

	cpu_words(set, words, sizeof(words));
	add(a, &a->f->persist,
	    "cat > /etc/systemd/system/%s <<'EOF'\n"
	    "[Unit]\n"
	    "Description=latwhy: %s\n"
	    "After=sysinit.target\n"
	    "\n"
	    "[Service]\n"
	    "Type=oneshot\n"
	    "RemainAfterExit=yes\n"
	    "ExecStart=/bin/sh -c 'for c in %s; do echo %s > " CPU_DIR "/cpu$$c/%s; done'\n"
	    "\n"
	    "[Install]\n"
	    "WantedBy=multi-user.target\n"
	    "EOF",
	    unit, what, words, value, file);
	add(a, &a->f->persist, "systemctl daemon-reload");
	add(a, &a->f->persist, "systemctl enable %s", unit);
	add(a, &a->f->rollback, "systemctl disable %s", unit);
	add(a, &a->f->rollback, "rm -f /etc/systemd/system/%s", unit);
	add(a, &a->f->rollback, "systemctl daemon-reload");
}

static void verify_clock(struct adv *a, const struct lw_cpuset *set)
{
	unsigned cur, hw, min;
	char b[256];

	clock_range(a->n, set, &cur, &hw, &min);
	add(a, &a->f->verify,
	    "grep . " CPU_DIR
	    "/cpu[0-9]*/cpufreq/scaling_cur_freq  # under load, steady near %u kHz "
	    "on CPUs %s: the governor string proves nothing, thermal and power limits still "
	    "throttle",
	    hw, cpus_str(set, b, sizeof(b)));
	add(a, &a->f->verify,
	    "turbostat --quiet --show CPU,Busy%%,Bzy_MHz --interval 5  # Bzy_MHz near %u", mhz(hw));
}

static void fill_governor(struct adv *a, const struct lw_cpuset *set)
{
	const struct lw_node *n = a->n;

	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			add(a, &a->f->fix,
			    "echo performance > " CPU_DIR "/cpu%d/cpufreq/scaling_governor", c);
	persist_cpu_unit(a, "latwhy-cpufreq.service", "performance cpufreq governor", set,
			 "cpufreq/scaling_governor", "performance");
	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			add(a, &a->f->rollback,
			    "echo %s > " CPU_DIR "/cpu%d/cpufreq/scaling_governor",
			    n->cpus[c].governor, c);
	add(a, &a->f->verify,
	    "grep . " CPU_DIR "/cpu[0-9]*/cpufreq/scaling_governor  # performance");
	verify_clock(a, set);
	put(a, &a->f->cost, "%s", COST_PERF);
}

static void fill_epp(struct adv *a, const struct lw_cpuset *set)
{
	const struct lw_node *n = a->n;

	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			add(a, &a->f->fix,
			    "echo performance > " CPU_DIR
			    "/cpu%d/cpufreq/energy_performance_preference",
			    c);
	persist_cpu_unit(a, "latwhy-epp.service", "energy_performance_preference=performance", set,
			 "cpufreq/energy_performance_preference", "performance");
	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			add(a, &a->f->rollback,
			    "echo %s > " CPU_DIR "/cpu%d/cpufreq/energy_performance_preference",
			    n->cpus[c].epp, c);
	add(a, &a->f->verify,
	    "grep . " CPU_DIR "/cpu[0-9]*/cpufreq/energy_performance_preference  # performance");
	verify_clock(a, set);
	put(a, &a->f->cost,
	    "EPP performance raises power draw like the performance governor "
	    "(field case 2: +75 W for the whole performance profile); "
	    "balance_performance is the milder step");
}

/* "powersave on CPUs 0-3", grouped by governor (or EPP) value. */
static void seen_by_value(struct text *t, const struct lw_node *n, const struct lw_cpuset *set,
			  bool epp)
{
	struct lw_cpuset done = {0};
	char b[256];

	for (int c = 0; c < n->nr_cpus; c++) {
		const char *v = epp ? n->cpus[c].epp : n->cpus[c].governor;
		struct lw_cpuset same = {0};

		if (!lw_cpuset_test(set, c) || lw_cpuset_test(&done, c))
			continue;
		for (int k = c; k < n->nr_cpus; k++) {
			const char *w = epp ? n->cpus[k].epp : n->cpus[k].governor;

			if (lw_cpuset_test(set, k) && !strcmp(v, w))
				lw_cpuset_set(&same, k);
		}
		lw_cpuset_or(&done, &done, &same);
		tx(t, "%s%s %s on CPUs %s",
		   lw_cpuset_first(&same) == lw_cpuset_first(set) ? "" : "; ",
		   epp ? "EPP" : "governor", v, cpus_str(&same, b, sizeof(b)));
	}
}

static void node_governor(struct adv *a, const struct lw_cpuset *within)
{
	const struct lw_node *n = a->n;
	enum lw_severity sev;
	struct lw_cpuset set = governor_cpus(n, within, &sev);
	unsigned cur, hw, min;
	struct text t;
	const char *gov;

	if (lw_cpuset_empty(&set) || !begin(a, LW_CAUSE_FREQ, sev))
		return;
	clock_range(n, &set, &cur, &hw, &min);
	gov = n->cpus[lw_cpuset_first(&set)].governor;
	text_open(a, &t);
	tx(&t, "%s: ", n->freq.driver);
	seen_by_value(&t, n, &set, false);
	tx(&t, "; clock %u MHz of %u MHz (scaling_min %u MHz)", mhz(cur), mhz(hw), mhz(min));
	text_close(a, &t, &a->f->seen);
	if (sev == LW_SEV_CRIT)
		put(a, &a->f->why,
		    "powersave holds the clock at its minimum (%u of %u MHz): requests run up to "
		    "%.1fx slower, an invisible CPU limit",
		    mhz(cur), mhz(hw), cur ? (double)hw / cur : 0.0);
	else
		put(a, &a->f->why,
		    "%s raises the clock only after a sampling window (~10 ms plus hysteresis): "
		    "a burst of requests runs at low clock for tens of ms",
		    gov);
	fill_governor(a, &set);
}

static void node_epp(struct adv *a, const struct lw_cpuset *within)
{
	const struct lw_node *n = a->n;
	enum lw_severity sev;
	struct lw_cpuset set = epp_cpus(n, within, &sev);
	unsigned cur, hw, min;
	struct text t;

	if (lw_cpuset_empty(&set) || !begin(a, LW_CAUSE_FREQ, sev))
		return;
	clock_range(n, &set, &cur, &hw, &min);
	text_open(a, &t);
	tx(&t, "%s (%s%s), governor powersave: ", n->freq.driver, n->freq.pstate_status,
	   n->freq.hwp ? ", HWP" : "");
	seen_by_value(&t, n, &set, true);
	tx(&t, "; clock %u MHz of %u MHz", mhz(cur), mhz(hw));
	text_close(a, &t, &a->f->seen);
	put(a, &a->f->why,
	    "the hardware picks the clock from EPP: a power-leaning bias ramps up late and "
	    "settles low, so short requests run below full clock");
	fill_epp(a, &set);
}

static void node_freq_none(struct adv *a)
{
	if (!begin(a, LW_CAUSE_FREQ, LW_SEV_INFO))
		return;
	put(a, &a->f->seen,
	    "no cpufreq driver: " CPU_DIR "/cpu*/cpufreq is absent (typical of a VM: "
	    "the host sets the clock)");
	put(a, &a->f->why,
	    "the clock cannot be read or set from here: there is nothing to tune from the guest, "
	    "and the frequency cause cannot be measured (no frequency data)");
	add(a, &a->f->fix,
	    "# nothing to tune from the guest; on bare metal, load a cpufreq driver "
	    "(intel_pstate, amd-pstate or acpi-cpufreq) and re-run latwhy check");
	add(a, &a->f->verify, "ls " CPU_DIR "/cpu0/cpufreq  # empty without a driver");
}

/* A global 0/1 switch with a tmpfiles entry to persist it. */
static void node_switch(struct adv *a, const char *path, int today, int want, const char *tag,
			const char *seen, const char *why, const char *cost)
{
	if (!begin(a, LW_CAUSE_FREQ, LW_SEV_WARN))
		return;
	put(a, &a->f->seen, "%s", seen);
	put(a, &a->f->why, "%s", why);
	put(a, &a->f->cost, "%s", cost);
	add(a, &a->f->fix, "echo %d > %s", want, path);
	add(a, &a->f->persist, "cat > /etc/tmpfiles.d/latwhy-%s.conf <<'EOF'\nw %s - - - - %d\nEOF",
	    tag, path, want);
	add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-%s.conf", tag);
	add(a, &a->f->rollback, "echo %d > %s", today, path);
	add(a, &a->f->verify, "cat %s  # %d", path, want);
	add(a, &a->f->verify,
	    "turbostat --quiet --show CPU,Bzy_MHz --interval 5  # above base clock "
	    "under load");
}

static void node_turbo(struct adv *a)
{
	const struct lw_node *n = a->n;
	unsigned cur, hw, min, top = 0;
	char seen[256];

	clock_range(n, &n->online, &cur, &hw, &min);
	for (int c = 0; c < n->nr_cpus; c++)
		if (n->cpus[c].max_khz > top)
			top = n->cpus[c].max_khz;
	if (n->freq.no_turbo == 1) {
		snprintf(seen, sizeof(seen),
			 "intel_pstate/no_turbo=1: turbo off, clock capped at %u MHz (hardware %u "
			 "MHz)",
			 mhz(top), mhz(hw));
		node_switch(a, CPU_DIR "/intel_pstate/no_turbo", 1, 0, "turbo", seen,
			    "the CPU never runs above base clock: requests take longer than the "
			    "hardware allows",
			    "turbo raises power and heat; its residency depends on cooling (field "
			    "case 2: a neighbour rack's hot exhaust shortened it)");
	} else if (n->freq.boost == 0) {
		snprintf(seen, sizeof(seen),
			 "cpufreq/boost=0: boost off, clock capped at %u MHz (hardware %u MHz)",
			 mhz(top), mhz(hw));
		node_switch(a, CPU_DIR "/cpufreq/boost", 0, 1, "boost", seen,
			    "the CPU never runs above base clock: requests take longer than the "
			    "hardware allows",
			    "boost raises power and heat; its residency depends on cooling");
	}
}

/* scaling_max_freq below the hardware maximum, with turbo/boost on. */
static void node_cap(struct adv *a, const struct lw_cpuset *within)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset set = {0};
	struct text t;
	char b[256];
	int first;

	if (n->freq.no_turbo == 1 || n->freq.boost == 0)
		return;
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];

		if (cpu->has_freq && lw_cpuset_test(within, c) && cpu->max_khz &&
		    cpu->max_khz < cpu->hw_max_khz)
			lw_cpuset_set(&set, c);
	}
	first = lw_cpuset_first(&set);
	if (first < 0 || !begin(a, LW_CAUSE_FREQ, LW_SEV_WARN))
		return;
	text_open(a, &t);
	tx(&t, "scaling_max_freq %u MHz below the hardware's %u MHz on CPUs %s",
	   mhz(n->cpus[first].max_khz), mhz(n->cpus[first].hw_max_khz),
	   cpus_str(&set, b, sizeof(b)));
	text_close(a, &t, &a->f->seen);
	put(a, &a->f->why, "a capped maximum clock is a CPU limit nobody sees in CPU usage");
	put(a, &a->f->cost, "a higher clock draws more power");
	text_open(a, &t);
	for (int c = 0; c < n->nr_cpus; c++) {
		if (!lw_cpuset_test(&set, c))
			continue;
		add(a, &a->f->fix, "echo %u > " CPU_DIR "/cpu%d/cpufreq/scaling_max_freq",
		    n->cpus[c].hw_max_khz, c);
		add(a, &a->f->rollback, "echo %u > " CPU_DIR "/cpu%d/cpufreq/scaling_max_freq",
		    n->cpus[c].max_khz, c);
		tx(&t, "w " CPU_DIR "/cpu%d/cpufreq/scaling_max_freq - - - - %u\n", c,
		   n->cpus[c].hw_max_khz);
	}
	if (text_take(a, &t))
		add(a, &a->f->persist, "cat > /etc/tmpfiles.d/latwhy-maxfreq.conf <<'EOF'\n%sEOF",
		    t.s);
	free(t.s);
	add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-maxfreq.conf");
	add(a, &a->f->verify, "grep . " CPU_DIR "/cpu[0-9]*/cpufreq/scaling_max_freq");
}

/*
 * Clock policy is judged on every online CPU, not only the target's: the CPUs
 * that take its interrupts and softirqs serve its requests too (field case 1
 * set performance everywhere).
 */
static void advise_freq(struct adv *a)
{
	struct lw_cpuset within = a->n->online;

	if (a->n->freq.drv == LW_DRV_NONE) {
		node_freq_none(a);
		return;
	}
	node_governor(a, &within);
	node_epp(a, &within);
	node_turbo(a);
	node_cap(a, &within);
}

/* ---- cpuidle ---- */

/* Exit latency limit PM QoS puts on cpu, or -1 when none. */
static long pm_qos_limit(const struct lw_cpu *cpu)
{
	if (!strcmp(cpu->pm_qos, "n/a"))
		return 0; /* resume latency 0: only polling allowed */
	if (!cpu->pm_qos[0] || !strcmp(cpu->pm_qos, "0"))
		return -1;
	return atol(cpu->pm_qos);
}

/* Per state index, the CPUs in within where it is deep, enabled and allowed by PM QoS. */
static bool deep_states(const struct lw_node *n, const struct lw_cpuset *within,
			struct lw_cpuset deep[LW_MAX_IDLE_STATES])
{
	bool any = false;

	memset(deep, 0, sizeof(struct lw_cpuset) * LW_MAX_IDLE_STATES);
	for (int c = 0; c < n->nr_cpus; c++) {
		const struct lw_cpu *cpu = &n->cpus[c];
		long qos = pm_qos_limit(cpu);

		if (!lw_cpuset_test(within, c) || !cpu->online)
			continue;
		for (size_t s = 0; s < cpu->nr_idle; s++) {
			const struct lw_idle_state *st = &cpu->idle[s];

			if (st->disable || st->latency_us <= LW_DEEP_IDLE_US ||
			    (qos >= 0 && st->latency_us > (unsigned long)qos))
				continue;
			lw_cpuset_set(&deep[s], c);
			any = true;
		}
	}
	return any;
}

static void fill_idle(struct adv *a, const struct lw_cpuset deep[LW_MAX_IDLE_STATES])
{
	const struct lw_node *n = a->n;
	struct text t;

	text_open(a, &t);
	for (int s = 0; s < LW_MAX_IDLE_STATES; s++)
		for (int c = 0; c < n->nr_cpus; c++) {
			if (!lw_cpuset_test(&deep[s], c))
				continue;
			add(a, &a->f->fix, "echo 1 > " CPU_DIR "/cpu%d/cpuidle/state%d/disable", c,
			    s);
			add(a, &a->f->rollback,
			    "echo 0 > " CPU_DIR "/cpu%d/cpuidle/state%d/disable", c, s);
			tx(&t, "w " CPU_DIR "/cpu%d/cpuidle/state%d/disable - - - - 1\n", c, s);
		}
	if (text_take(a, &t))
		add(a, &a->f->persist, "cat > /etc/tmpfiles.d/latwhy-cstates.conf <<'EOF'\n%sEOF",
		    t.s);
	free(t.s);
	add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-cstates.conf");
	add(a, &a->f->verify, "grep . " CPU_DIR "/cpu[0-9]*/cpuidle/state*/disable");
	add(a, &a->f->verify,
	    "turbostat --quiet --show CPU,Busy%%,CPU%%c1,CPU%%c6 --interval 5  "
	    "# no residency left in the disabled states");
	put(a, &a->f->cost,
	    "idle CPUs stay in shallow states: more idle power and less turbo "
	    "headroom for busy cores (field case 2 paid +75 W for its whole "
	    "performance profile)");
}

/*
 * The haltpoll governor (KVM guests) lets an idle vCPU poll up to
 * guest_halt_poll_ns, growing its window towards it, before it halts. Below
 * the kernel's default every short idle halts: waking the vCPU again takes a
 * VM exit, the host's wake-up of its thread and a VM entry.
 */
static bool haltpoll_short(const struct lw_node *n)
{
	return !strcmp(n->idle.governor, "haltpoll") && n->idle.halt_poll_ns >= 0 &&
	       n->idle.halt_poll_ns < LW_HALT_POLL_NS;
}

static void fill_haltpoll(struct adv *a, int pid)
{
	long long old = a->n->idle.halt_poll_ns;

	put(a, &a->f->seen,
	    "haltpoll governor with guest_halt_poll_ns %lld: an idle vCPU %s, and waking it "
	    "takes a VM exit, the host's wake-up of the vCPU and a VM entry",
	    old, old ? "polls only briefly before it halts" : "halts at once, without polling");
	add(a, &a->f->fix, "echo %d > " LW_HALTPOLL_PARAM, LW_HALT_POLL_NS);
	add(a, &a->f->persist,
	    "cat > /etc/tmpfiles.d/latwhy-haltpoll.conf <<'EOF'\nw " LW_HALTPOLL_PARAM
	    " - - - - %d\nEOF",
	    LW_HALT_POLL_NS);
	add(a, &a->f->rollback, "echo %lld > " LW_HALTPOLL_PARAM, old);
	add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-haltpoll.conf");
	add(a, &a->f->verify, "cat " LW_HALTPOLL_PARAM "  # %d", LW_HALT_POLL_NS);
	if (pid > 0)
		add(a, &a->f->verify,
		    "latwhy -p %d -d 30s  # the idle share of slow-request time falls", pid);
	else
		add(a, &a->f->verify,
		    "# latwhy -p PID -d 30s on the service: the idle share of slow-request time "
		    "falls");
	put(a, &a->f->cost,
	    "an idle vCPU spins up to %d us before it halts: host CPU that other guests cannot "
	    "use (a host that set %lld on purpose, shared or nested, may not want it)",
	    LW_HALT_POLL_NS / 1000, old);
}

static void advise_idle(struct adv *a)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset within = cpus_of_interest(n);
	struct lw_cpuset deep[LW_MAX_IDLE_STATES];
	unsigned worst = 0;
	struct text t;
	char b[256];

	if (!deep_states(n, &within, deep)) {
		/* a guest whose idle vCPUs halt at once: whether that costs
		 * requests only a trace can say (the idle finding), hence info */
		if (haltpoll_short(n) && begin(a, LW_CAUSE_IDLE, LW_SEV_INFO)) {
			put(a, &a->f->why,
			    "every wake-up of an idle CPU then waits for the host to run the "
			    "vCPU again: tens of us per request on a busy or nested host");
			fill_haltpoll(a, n->has_target ? n->target.pid : 0);
		}
		return;
	}
	if (!begin(a, LW_CAUSE_IDLE, LW_SEV_WARN))
		return;
	text_open(a, &t);
	tx(&t, "%s:", n->idle.driver[0] ? n->idle.driver : "cpuidle");
	for (int s = 0; s < LW_MAX_IDLE_STATES; s++) {
		int c = lw_cpuset_first(&deep[s]);
		unsigned long long usage = 0;

		if (c < 0)
			continue;
		for (int k = 0; k < n->nr_cpus; k++)
			if (lw_cpuset_test(&deep[s], k))
				usage += n->cpus[k].idle[s].usage;
		tx(&t, " %s (state%d, %u us exit latency) enabled on CPUs %s, entered %llu times;",
		   n->cpus[c].idle[s].name, s, n->cpus[c].idle[s].latency_us,
		   cpus_str(&deep[s], b, sizeof(b)), usage);
		if (n->cpus[c].idle[s].latency_us > worst)
			worst = n->cpus[c].idle[s].latency_us;
	}
	tx(&t, " no PM QoS limit below %d us", LW_DEEP_IDLE_US);
	text_close(a, &t, &a->f->seen);
	put(a, &a->f->why,
	    "waking from a deep C-state takes up to %u us before the first instruction: high-QPS "
	    "short requests turn that wake-up jitter into P99",
	    worst);
	fill_idle(a, deep);
}

/* ---- THP ---- */

/* Target opted out with prctl(PR_SET_THP_DISABLE): system modes do not touch it. */
static bool target_thp_off(const struct lw_node *n)
{
	return n->has_target && n->target.thp_enabled == 0;
}

/* The THP settings, led by the one the finding is about. */
static void thp_seen(struct text *t, const struct lw_node *n, const char *lead)
{
	const struct lw_thp *h = &n->thp;

	if (!strcmp(lead, "khugepaged"))
		tx(t,
		   "khugepaged/defrag=%d, scanning %ld pages every %ld ms; THP enabled=%s, "
		   "defrag=%s",
		   h->kh_defrag, h->pages_to_scan, h->scan_sleep_ms, h->enabled, h->defrag);
	else if (!strcmp(lead, "defrag"))
		tx(t, "THP defrag=%s (enabled=%s, khugepaged/defrag=%d)", h->defrag, h->enabled,
		   h->kh_defrag);
	else
		tx(t, "THP enabled=%s (defrag=%s, khugepaged/defrag=%d, %ld pages every %ld ms)",
		   h->enabled, h->defrag, h->kh_defrag, h->pages_to_scan, h->scan_sleep_ms);
	if (!n->has_target)
		return;
	if (target_thp_off(n))
		tx(t, "; pid %d has THP disabled for itself (prctl): these modes do not touch it",
		   n->target.pid);
	else if (n->target.madv_regions >= 0)
		tx(t, "; pid %d has %d MADV_HUGEPAGE regions, %llu kB in huge pages", n->target.pid,
		   n->target.madv_regions, n->target.anon_huge_kb);
}

static void fill_thp_enabled(struct adv *a)
{
	const char *grub = "/etc/default/grub.d/latwhy-thp.cfg";

	add(a, &a->f->fix, "echo madvise > " THP_DIR "/enabled");
	add(a, &a->f->persist,
	    "cat > %s <<'EOF'\n"
	    "GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT "
	    "transparent_hugepage=madvise\"\n"
	    "EOF",
	    grub);
	add(a, &a->f->persist, "update-grub");
	add(a, &a->f->persist,
	    "# without GRUB, add transparent_hugepage=madvise to the kernel "
	    "command line of your boot loader");
	add(a, &a->f->rollback, "rm -f %s", grub);
	add(a, &a->f->rollback, "update-grub");
	add(a, &a->f->rollback, "echo %s > " THP_DIR "/enabled", a->n->thp.enabled);
	add(a, &a->f->verify, "cat " THP_DIR "/enabled  # [madvise]");
	add(a, &a->f->verify,
	    "grep -o 'transparent_hugepage=[a-z]*' /proc/cmdline  # after reboot");
	put(a, &a->f->cost,
	    "only regions that ask (MADV_HUGEPAGE) keep huge pages; never is the "
	    "last resort, not the cure: it costs TLB misses (field case: +0.3 ms "
	    "P50 for Go)");
}

/*
 * A sysfs setting persisted by a tmpfiles.d "w" line: the shape shared by
 * every THP knob that has no kernel command-line form.
 */
struct tmpfiles_knob {
	const char *path;   /* below THP_DIR */
	const char *value;  /* the fix */
	const char *old;    /* today's value, for the rollback */
	const char *conf;   /* /etc/tmpfiles.d/<conf>.conf */
	const char *vmstat; /* counters to watch, and how */
	const char *cost;
};

static void fill_tmpfiles_knob(struct adv *a, const struct tmpfiles_knob *k)
{
	add(a, &a->f->fix, "echo %s > " THP_DIR "/%s", k->value, k->path);
	add(a, &a->f->persist,
	    "cat > /etc/tmpfiles.d/%s.conf <<'EOF'\nw " THP_DIR "/%s - - - - %s\nEOF", k->conf,
	    k->path, k->value);
	add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/%s.conf", k->conf);
	add(a, &a->f->rollback, "echo %s > " THP_DIR "/%s", k->old, k->path);
	add(a, &a->f->verify, "cat " THP_DIR "/%s  # %s", k->path,
	    strcmp(k->value, "madvise") ? k->value : "[madvise]");
	add(a, &a->f->verify, "%s", k->vmstat);
	/* a finding with several knobs costs each (put() formats before it frees) */
	if (a->f && a->f->cost)
		put(a, &a->f->cost, "%s; %s", a->f->cost, k->cost);
	else
		put(a, &a->f->cost, "%s", k->cost);
}

static void fill_thp_defrag(struct adv *a)
{
	const struct tmpfiles_knob k = {
		.path = "defrag",
		.value = "madvise",
		.old = a->n->thp.defrag,
		.conf = "latwhy-thp-defrag",
		.vmstat = "grep -E 'compact_stall|thp_fault_alloc' /proc/vmstat  # compact_stall "
			  "stops growing",
		.cost = "fewer huge pages right after allocation for regions that do not madvise",
	};

	fill_tmpfiles_knob(a, &k);
}

static void fill_khugepaged(struct adv *a)
{
	char old[16];
	const struct tmpfiles_knob k = {
		.path = "khugepaged/defrag",
		.value = "0",
		.old = old,
		.conf = "latwhy-khugepaged",
		.vmstat = "grep -E 'thp_collapse_alloc|compact_stall' /proc/vmstat  # grows slower",
		.cost = "khugepaged no longer compacts memory to build huge pages: fewer regions "
			"get collapsed",
	};

	snprintf(old, sizeof(old), "%d", a->n->thp.kh_defrag);
	fill_tmpfiles_knob(a, &k);
}

/* mm/khugepaged.c: khugepaged_scan_sleep_millisecs */
#define KHUGEPAGED_SLEEP_DEFAULT_MS 10000

/* khugepaged back to the kernel's pace: every collapse of the target's memory
 * copies 2 MB under its memory lock, and a short scan_sleep_millisecs makes
 * them come that much more often. */
static void fill_khugepaged_pace(struct adv *a)
{
	char old[24], def[24];
	const struct tmpfiles_knob k = {
		.path = "khugepaged/scan_sleep_millisecs",
		.value = def,
		.old = old,
		.conf = "latwhy-khugepaged-pace",
		.vmstat = "grep thp_collapse_alloc /proc/vmstat  # grows slower",
		.cost = "khugepaged scans at the kernel's default pace again: regions get huge "
			"pages later, and collapses stall the target less often",
	};

	snprintf(old, sizeof(old), "%ld", a->n->thp.scan_sleep_ms);
	snprintf(def, sizeof(def), "%d", KHUGEPAGED_SLEEP_DEFAULT_MS);
	fill_tmpfiles_knob(a, &k);
}

static enum lw_severity thp_sev(const struct lw_node *n, enum lw_severity s)
{
	return target_thp_off(n) ? LW_SEV_INFO : s;
}

static void advise_thp(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_thp *h = &n->thp;
	bool always = !strcmp(h->enabled, "always");
	struct text t;

	if (!h->present)
		return;
	if (always) {
		enum lw_severity s = h->kh_defrag == 1 || !strcmp(h->defrag, "always")
					     ? LW_SEV_CRIT
					     : LW_SEV_WARN;

		if (!begin(a, LW_CAUSE_THP, thp_sev(n, s)))
			return;
		text_open(a, &t);
		thp_seen(&t, n, "enabled");
		text_close(a, &t, &a->f->seen);
		put(a, &a->f->why,
		    "every anonymous region gets huge pages: faults compact memory and khugepaged "
		    "collapses 4 KB pages into 2 MB under the process's memory lock (field case: "
		    "50-200 ms stalls)");
		fill_thp_enabled(a);
	}
	if (!strcmp(h->defrag, "always") && strcmp(h->enabled, "never")) {
		if (!begin(a, LW_CAUSE_THP, thp_sev(n, LW_SEV_WARN)))
			return;
		text_open(a, &t);
		thp_seen(&t, n, "defrag");
		text_close(a, &t, &a->f->seen);
		put(a, &a->f->why,
		    "defrag=always makes a page fault stall in direct compaction "
		    "until a 2 MB page is free");
		fill_thp_defrag(a);
	}
	if (h->kh_defrag == 1 && strcmp(h->enabled, "never")) {
		bool madv = n->has_target && n->target.madv_regions > 0;
		enum lw_severity s = always || madv ? LW_SEV_WARN : LW_SEV_INFO;

		if (!begin(a, LW_CAUSE_THP, thp_sev(n, s)))
			return;
		text_open(a, &t);
		thp_seen(&t, n, "khugepaged");
		text_close(a, &t, &a->f->seen);
		put(a, &a->f->why,
		    "khugepaged/defrag=1 lets khugepaged compact memory to collapse %s regions, "
		    "stalling the owner on its memory lock",
		    always ? "all anonymous" : "MADV_HUGEPAGE");
		fill_khugepaged(a);
	}
	if (h->scan_sleep_ms >= 0 && h->scan_sleep_ms < KHUGEPAGED_SLEEP_DEFAULT_MS &&
	    strcmp(h->enabled, "never")) {
		bool madv = n->has_target && n->target.madv_regions > 0;

		if (!begin(a, LW_CAUSE_THP, thp_sev(n, always || madv ? LW_SEV_WARN : LW_SEV_INFO)))
			return;
		text_open(a, &t);
		thp_seen(&t, n, "khugepaged");
		text_close(a, &t, &a->f->seen);
		put(a, &a->f->why,
		    "khugepaged wakes every %ld ms, not the kernel's %d: each collapse copies 2 MB "
		    "under its owner's memory lock, and they come that much more often",
		    h->scan_sleep_ms, KHUGEPAGED_SLEEP_DEFAULT_MS);
		fill_khugepaged_pace(a);
	}
}

/* ---- interrupts ---- */

/* Where a movable IRQ should go: online CPUs, not avoided, not isolated, and on
 * the NIC's NUMA node when it belongs to one. Empty when there is no such CPU. */
static struct lw_cpuset irq_dest(const struct lw_node *n, const struct lw_irq *q,
				 const struct lw_cpuset *avoid)
{
	struct lw_cpuset d;

	lw_cpuset_andnot(&d, &n->online, avoid);
	lw_cpuset_andnot(&d, &d, &n->isolated);
	if (q->nic >= 0) {
		const struct lw_numa_node *nn = lw_node_numa(n, n->nics[q->nic].numa_node);
		struct lw_cpuset local;

		if (nn) {
			lw_cpuset_and(&local, &d, &nn->cpus);
			if (!lw_cpuset_empty(&local))
				d = local;
		}
	}
	return d;
}

struct irq_move {
	const struct lw_irq *q;
	struct lw_cpuset dest;
};

#define MAX_MOVES 64

static void fill_irq_moves(struct adv *a, const struct irq_move *mv, size_t nr, const char *tag,
			   const struct lw_cpuset *avoid, bool stop_irqbalance)
{
	const struct lw_node *n = a->n;
	const struct lw_irqbalance *ib = &n->irqbalance;
	struct text t;
	char b[256], c[256];

	text_open(a, &t);
	for (size_t i = 0; i < nr; i++) {
		cpus_str(&mv[i].dest, b, sizeof(b));
		add(a, &a->f->fix, "echo %s > /proc/irq/%u/smp_affinity_list", b, mv[i].q->irq);
		add(a, &a->f->rollback, "echo %s > /proc/irq/%u/smp_affinity_list",
		    mv[i].q->affinity[0] ? mv[i].q->affinity : cpus_str(&n->online, c, sizeof(c)),
		    mv[i].q->irq);
		add(a, &a->f->verify, "cat /proc/irq/%u/effective_affinity_list  # within %s",
		    mv[i].q->irq, b);
		tx(&t, "%secho %s > /proc/irq/%u/smp_affinity_list", i ? "; " : "", b,
		   mv[i].q->irq);
	}
	if (!text_take(a, &t))
		return;
	if (ib->running && !stop_irqbalance && avoid && !lw_cpuset_empty(avoid)) {
		struct lw_cpuset ban;

		/* irqbalance would move them back: ban the target's CPUs instead. */
		lw_cpuset_or(&ban, &ib->banned_set, avoid);
		cpus_str(&ban, c, sizeof(c));
		if (ib->banned[0] && !strstr(ib->banned_src, "environment")) {
			/* An EnvironmentFile= value beats Environment= in a drop-in. */
			add(a, &a->f->persist,
			    "# %s already bans CPUs %s: set IRQBALANCE_BANNED_CPULIST=%s there, "
			    "then "
			    "systemctl restart irqbalance",
			    ib->banned_src, ib->banned, c);
			add(a, &a->f->rollback, "# set IRQBALANCE_BANNED_CPULIST back to %s in %s",
			    ib->banned, ib->banned_src);
		} else {
			add(a, &a->f->persist,
			    "cat > /etc/systemd/system/irqbalance.service.d/latwhy.conf <<'EOF'\n"
			    "[Service]\nEnvironment=IRQBALANCE_BANNED_CPULIST=%s\nEOF",
			    c);
			add(a, &a->f->persist, "systemctl daemon-reload");
			add(a, &a->f->persist, "systemctl restart irqbalance");
			add(a, &a->f->rollback,
			    "rm -f /etc/systemd/system/irqbalance.service.d/latwhy.conf");
			add(a, &a->f->rollback, "systemctl daemon-reload");
			add(a, &a->f->rollback, "systemctl restart irqbalance");
		}
		put(a, &a->f->cost,
		    "irqbalance keeps interrupts off CPUs %s: the other CPUs take the whole "
		    "interrupt load and must really be free of other work",
		    c);
	} else {
		if (ib->running && stop_irqbalance) {
			add(a, &a->f->persist, "systemctl disable --now irqbalance");
			add(a, &a->f->rollback, "systemctl enable --now irqbalance");
		}
		add(a, &a->f->persist,
		    "cat > /etc/systemd/system/latwhy-irq-%s.service <<'EOF'\n"
		    "[Unit]\nDescription=latwhy: IRQ affinity (%s)\nAfter=irqbalance.service\n\n"
		    "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c '%s'\n\n"
		    "[Install]\nWantedBy=multi-user.target\nEOF",
		    tag, tag, t.s);
		add(a, &a->f->persist, "systemctl daemon-reload");
		add(a, &a->f->persist, "systemctl enable latwhy-irq-%s.service", tag);
		add(a, &a->f->persist,
		    "# IRQ numbers change with hardware or driver changes: re-run "
		    "latwhy check after such changes");
		add(a, &a->f->rollback, "systemctl disable latwhy-irq-%s.service", tag);
		add(a, &a->f->rollback, "rm -f /etc/systemd/system/latwhy-irq-%s.service", tag);
		add(a, &a->f->rollback, "systemctl daemon-reload");
		put(a, &a->f->cost, "%s",
		    stop_irqbalance && ib->running ? "irqbalance stops: interrupts no longer "
						     "follow load, and the CPUs that "
						     "take them must really be free of other work"
						   : "the CPUs that take these interrupts must "
						     "really be free of other work");
	}
	free(t.s);
}

/* Move the target off CPUs it shares with IRQs that cannot move. */
static void fill_move_target(struct adv *a, const struct lw_cpuset *avoid)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	const char *unit = target_unit(n);
	struct lw_cpuset to;
	char b[256], o[256];

	lw_cpuset_andnot(&to, &tg->cpus, avoid);
	if (lw_cpuset_empty(&to))
		lw_cpuset_andnot(&to, &n->online, avoid);
	if (lw_cpuset_empty(&to)) {
		add(a, &a->f->fix, "# no CPU is free of these IRQs: nothing to move the target to");
		return;
	}
	cpus_str(&to, b, sizeof(b));
	cpus_str(&tg->cpus, o, sizeof(o));
	add(a, &a->f->fix, "taskset -apc %s %d", b, tg->pid);
	if (unit && n->target.cgroup_v == 2) {
		add(a, &a->f->persist, "systemctl set-property %s AllowedCPUs=%s", unit, b);
		add(a, &a->f->rollback, "systemctl set-property %s AllowedCPUs=%s", unit, o);
	} else {
		add(a, &a->f->persist,
		    "# persist: CPUAffinity=%s in the target's systemd unit, or a "
		    "cpuset for its container",
		    b);
	}
	add(a, &a->f->rollback, "taskset -apc %s %d", o, tg->pid);
	add(a, &a->f->verify, "grep Cpus_allowed_list /proc/%d/status  # %s", tg->pid, b);
	if (lw_cpuset_count(&to) < lw_cpuset_count(&tg->cpus))
		put(a, &a->f->cost, "the target runs on %d CPU%s (%s) instead of %d (%s)",
		    lw_cpuset_count(&to), lw_cpuset_count(&to) == 1 ? "" : "s", b,
		    lw_cpuset_count(&tg->cpus), o);
	else /* a pinned target moves: as many CPUs or more, shared with what runs there */
		put(a, &a->f->cost,
		    "the target runs on CPU%s %s instead of CPU%s %s, beside what already runs "
		    "there",
		    lw_cpuset_count(&to) == 1 ? "" : "s", b,
		    lw_cpuset_count(&tg->cpus) == 1 ? "" : "s", o);
}

/* A count from /proc: per second over the sample, or what it covers. */
static void count_rate(const struct lw_node *n, unsigned long long v, bool sampled, char *buf,
		       size_t len)
{
	if (sampled && n->sample_ms)
		snprintf(buf, len, "%.0f/s", v * 1000.0 / n->sample_ms);
	else if (sampled)
		snprintf(buf, len, "%llu in the sample", v);
	else
		snprintf(buf, len, "%llu since boot", v);
}

static void irq_rate(const struct lw_node *n, const struct lw_irq *q, const struct lw_cpuset *on,
		     char *buf, size_t len)
{
	bool sampled;
	unsigned long long v = lw_irq_count_on(n, q, on, &sampled);

	count_rate(n, v, sampled, buf, len);
}

/* Whether q fires on the CPUs in on often enough to matter. */
static bool irq_active_on(const struct lw_node *n, const struct lw_irq *q,
			  const struct lw_cpuset *on)
{
	bool sampled;
	unsigned long long v;

	if (!lw_cpuset_intersects(&q->eff, on))
		return false;
	v = lw_irq_count_on(n, q, on, &sampled);
	return sampled ? v > 0 : v >= LW_IRQ_BOOT_MIN;
}

/* A managed vector serving several CPUs (its mask holds more than one). */
static bool irq_shared_queue(const struct lw_irq *q)
{
	return q->pin && lw_cpuset_count(&q->aff) != 1;
}

/* Rate-graded severity; without a sample there is no rate, only a warning. */
static enum lw_severity irq_severity(const struct lw_node *n, unsigned long long count)
{
	double rate;

	if (!n->sample_ms)
		return LW_SEV_WARN;
	rate = count * 1000.0 / n->sample_ms;
	if (rate >= LW_IRQ_RATE_CRIT)
		return LW_SEV_CRIT;
	return rate >= LW_IRQ_RATE_WARN ? LW_SEV_WARN : LW_SEV_INFO;
}

/*
 * The CPU to leave to interrupts when the target may run everywhere: one that
 * already takes a kernel-managed IRQ of the target's (that IRQ cannot move, so
 * the managed-IRQ finding moves the target off it too), else the first online.
 */
static int housekeeping_cpu(const struct lw_node *n)
{
	for (size_t i = 0; i < n->nr_irqs; i++) {
		const struct lw_irq *q = &n->irqs[i];
		struct lw_cpuset on;

		if (!irq_shared_queue(q) || !irq_active_on(n, q, &n->target.cpus))
			continue;
		lw_cpuset_and(&on, &q->eff, &n->target.cpus);
		return lw_cpuset_first(&on);
	}
	return lw_cpuset_first(&n->online);
}

static bool irq_on_wrong_node(const struct lw_node *n, const struct lw_irq *q)
{
	const struct lw_numa_node *nn;

	if (q->nic < 0 || n->nr_numa < 2)
		return false;
	nn = lw_node_numa(n, n->nics[q->nic].numa_node);
	if (!nn || lw_cpuset_empty(&q->eff))
		return false;
	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(&q->eff, c) && !lw_cpuset_test(&nn->cpus, c))
			return true;
	return false;
}

static void advise_nic_numa(struct adv *a, size_t i)
{
	const struct lw_node *n = a->n;
	const struct lw_nic *nic = &n->nics[i];
	const struct lw_numa_node *nn = lw_node_numa(n, nic->numa_node);
	struct lw_cpuset avoid = {0};
	struct irq_move mv[MAX_MOVES];
	size_t nr = 0, pinned = 0;
	struct text t;
	char b[256];

	if (n->has_target)
		avoid = n->target.cpus;
	text_open(a, &t);
	tx(&t, "%s is on NUMA node %d (CPUs %s); IRQs on other nodes:", nic->name, nic->numa_node,
	   nn ? cpus_str(&nn->cpus, b, sizeof(b)) : "?");
	for (size_t k = 0; k < nic->nr_irqs; k++) {
		const struct lw_irq *q = lw_node_irq(n, nic->irqs[k]);

		if (!q || !irq_on_wrong_node(n, q))
			continue;
		tx(&t, "%s %u (%s) on CPU %s%s", nr + pinned ? ";" : "", q->irq, q->name,
		   cpus_str(&q->eff, b, sizeof(b)), q->pin ? ", kernel-managed" : "");
		if (q->pin) {
			pinned++;
		} else if (nr < MAX_MOVES) {
			mv[nr].q = q;
			mv[nr].dest = irq_dest(n, q, &avoid);
			if (!lw_cpuset_empty(&mv[nr].dest))
				nr++;
		}
	}
	if (!nr && !pinned) {
		text_drop(&t);
		return;
	}
	if (!begin(a, LW_CAUSE_IRQ, LW_SEV_WARN)) {
		text_drop(&t);
		return;
	}
	text_close(a, &t, &a->f->seen);
	put(a, &a->f->why,
	    "each packet's handler reaches the NIC's buffers across the socket interconnect (+30%% "
	    "memory latency in the field case) and wakes the consumer on the wrong node");
	if (nr)
		fill_irq_moves(a, mv, nr, nic->name, NULL, true);
	if (pinned)
		add(a, &a->f->fix,
		    "# %zu of these IRQs are kernel-managed: their affinity cannot be "
		    "changed; set the queue count with ethtool -L instead",
		    pinned);
	add(a, &a->f->verify, "cat /sys/class/net/%s/device/numa_node", nic->name);
}

/*
 * Receive processing that RPS sends to the target's CPUs (on): each queue
 * whose rps_cpus holds one of them gets its mask without them, or, when that
 * would leave none, the online CPUs outside on. An empty mask would not do:
 * without RPS a loopback packet is processed on its sender's CPU, which may be
 * the target's. The verify step is a trace (trace) or a check of pid. Returns
 * whether any queue sends there.
 */
static bool fill_rps(struct adv *a, const struct lw_cpuset *on, int pid, bool trace)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset rest;
	struct text t;
	char b[96], c[96];
	bool any = false;
	int moved = 0;

	lw_cpuset_andnot(&rest, &n->online, on);
	text_open(a, &t);
	for (size_t i = 0; i < n->nr_rps; i++) {
		const struct lw_rps *r = &n->rps[i];
		struct lw_cpuset dest;

		if (!lw_cpuset_intersects(&r->cpus, on))
			continue;
		any = true;
		lw_cpuset_andnot(&dest, &r->cpus, on);
		if (lw_cpuset_empty(&dest))
			dest = rest;
		if (lw_cpuset_empty(&dest)) {
			add(a, &a->f->fix,
			    "# RPS sends %s %s's receive processing to CPUs %s, and the "
			    "target runs on every CPU: no other CPU to send it to",
			    r->dev, r->queue, cpus_str(&r->cpus, b, sizeof(b)));
			continue;
		}
		lw_cpuset_format_mask(&dest, b, sizeof(b));
		/* no "# CPUs" comment after it: the fix script takes plain writes only */
		add(a, &a->f->fix, "echo %s > /sys/class/net/%s/queues/%s/rps_cpus", b, r->dev,
		    r->queue);
		add(a, &a->f->rollback, "echo %s > /sys/class/net/%s/queues/%s/rps_cpus", r->mask,
		    r->dev, r->queue);
		tx(&t, "w /sys/class/net/%s/queues/%s/rps_cpus - - - - %s\n", r->dev, r->queue, b);
		moved++;
	}
	if (text_take(a, &t) && moved) {
		add(a, &a->f->persist, "cat > /etc/tmpfiles.d/latwhy-rps.conf <<'EOF'\n%sEOF", t.s);
		add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-rps.conf");
		add(a, &a->f->verify, "grep . /sys/class/net/*/queues/rx-*/rps_cpus");
		/* not /proc/softirqs' counts: a local send to a CPU RPS picks still
		 * raises NET_RX on the sender, to send the IPI */
		if (trace)
			add(a, &a->f->verify, "latwhy -p %d -d 30s  # NET_RX time on CPUs %s falls",
			    pid, cpus_str(on, c, sizeof(c)));
		else
			add(a, &a->f->verify, "latwhy check -p %d  # this finding is gone", pid);
		put(a, &a->f->cost,
		    "%s%sRPS's CPUs take that receive processing instead, an IPI per batch",
		    a->f->cost ? a->f->cost : "", a->f->cost ? "; " : "");
	}
	free(t.s);
	return any;
}

/*
 * RPS masks that send receive processing to the target's CPUs (field notes
 * case 3: RPS/XPS masks). Rated by the NET_RX softirqs those CPUs ran, as
 * IRQs are by their interrupts.
 */
static void advise_rps_target(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	struct lw_cpuset on = tg->cpus, outside;
	enum lw_severity sev;
	unsigned long long rx;
	bool sampled, any = false;
	struct text t;
	char b[96], r[64];

	/* A target on every CPU: the IRQ findings keep one CPU for interrupts
	 * (housekeeping_cpu()), and RPS may send there too. */
	lw_cpuset_andnot(&outside, &n->online, &tg->cpus);
	if (lw_cpuset_empty(&outside)) {
		struct lw_cpuset hk = {0};

		lw_cpuset_set(&hk, housekeeping_cpu(n));
		lw_cpuset_andnot(&on, &tg->cpus, &hk);
	}
	for (size_t i = 0; i < n->nr_rps; i++)
		any |= lw_cpuset_intersects(&n->rps[i].cpus, &on);
	if (!any)
		return;
	rx = lw_net_rx_on(n, &on, &sampled);
	/* since boot: a warning unless those CPUs never ran one */
	sev = rx || !n->net_rx ? LW_SEV_WARN : LW_SEV_INFO;
	if (!begin(a, LW_CAUSE_IRQ, sampled ? irq_severity(n, rx) : sev))
		return;
	count_rate(n, rx, sampled, r, sizeof(r));
	text_open(a, &t);
	tx(&t,
	   "RPS sends receive processing to the target's CPUs %s:", cpus_str(&on, b, sizeof(b)));
	for (size_t i = 0, k = 0; i < n->nr_rps; i++)
		if (lw_cpuset_intersects(&n->rps[i].cpus, &on))
			tx(&t, "%s %s %s (rps_cpus %s)", k++ ? ";" : "", n->rps[i].dev,
			   n->rps[i].queue, n->rps[i].mask);
	tx(&t, "; NET_RX softirqs on them: %s", r);
	text_close(a, &t, &a->f->seen);
	put(a, &a->f->why,
	    "each NET_RX run there does the protocol processing of other CPUs' packets and "
	    "preempts a request thread; on loopback or a sidecar it is the peers' traffic");
	fill_rps(a, &on, tg->pid, false);
}

/* Movable IRQs (outside NIC-NUMA findings) landing on the target's CPUs. */
static void advise_irq_target(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	const struct lw_irqbalance *ib = &n->irqbalance;
	struct irq_move mv[MAX_MOVES];
	unsigned long long count = 0;
	size_t nr = 0, nofree = 0;
	struct text t;
	char b[256], r[64];

	for (size_t i = 0; i < n->nr_irqs && nr < MAX_MOVES; i++) {
		const struct lw_irq *q = &n->irqs[i];
		if (q->pin || irq_on_wrong_node(n, q) || !irq_active_on(n, q, &tg->cpus))
			continue;
		mv[nr].q = q;
		mv[nr].dest = irq_dest(n, q, &tg->cpus);
		if (lw_cpuset_empty(&mv[nr].dest))
			nofree++;
		count += lw_irq_count_on(n, q, &tg->cpus, NULL);
		nr++;
	}
	if (!nr || !begin(a, LW_CAUSE_IRQ, irq_severity(n, count)))
		return;
	text_open(a, &t);
	tx(&t, "IRQs landing on the target's CPUs %s:", cpus_str(&tg->cpus, b, sizeof(b)));
	for (size_t i = 0; i < nr; i++) {
		irq_rate(n, mv[i].q, &tg->cpus, r, sizeof(r));
		tx(&t, "%s %u (%s) on CPU %s, %s", i ? ";" : "", mv[i].q->irq, mv[i].q->name,
		   cpus_str(&mv[i].q->eff, b, sizeof(b)), r);
	}
	if (ib->running)
		tx(&t, "; irqbalance is running (pid %d)%s%s", ib->pid,
		   ib->banned[0] ? ", banned CPUs "
				 : " with no banned CPUs: it spreads IRQs over them",
		   ib->banned[0] ? ib->banned : "");
	text_close(a, &t, &a->f->seen);
	put(a, &a->f->why,
	    "each interrupt preempts a request thread on its CPU and evicts its "
	    "cache; the target's CPUs should take none");
	if (nofree) {
		/* Every online CPU is the target's: reserve the first for interrupts. */
		struct lw_cpuset first = {0}, rest;

		if (lw_cpuset_count(&n->online) < 2) {
			add(a, &a->f->fix,
			    "# a single CPU: interrupts cannot be kept off the target");
			return;
		}
		lw_cpuset_set(&first, housekeeping_cpu(n));
		lw_cpuset_andnot(&rest, &tg->cpus, &first);
		add(a, &a->f->fix, "# no CPU outside the target's: reserve CPU %d for interrupts",
		    lw_cpuset_first(&first));
		fill_move_target(a, &first);
		for (size_t i = 0; i < nr; i++)
			mv[i].dest = first;
		fill_irq_moves(a, mv, nr, "target", &rest, false);
		put(a, &a->f->cost,
		    "the target gives up CPU %d (%d of %d CPUs left to it), and CPU %d must really "
		    "be free of other work",
		    lw_cpuset_first(&first), lw_cpuset_count(&rest), lw_cpuset_count(&tg->cpus),
		    lw_cpuset_first(&first));
		return;
	}
	fill_irq_moves(a, mv, nr, "target", &tg->cpus, false);
}

/*
 * IRQs that cannot move (kernel-managed) firing on the target's CPUs. A
 * managed vector serves the I/O submitted from the CPUs of its affinity mask
 * and interrupts its one effective CPU. A queue shared by several CPUs (one
 * virtio-blk queue for the whole VM) lands everyone's completions on that CPU:
 * moving the target off it helps. A per-CPU queue (nvme with a queue per CPU)
 * only fires for I/O submitted on that very CPU: moving the target changes
 * nothing, the neighbours' I/O on its CPUs is what to move.
 */
static void advise_irq_managed(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	struct lw_cpuset avoid = {0};
	unsigned long long count = 0;
	size_t nr = 0, percpu = 0;
	struct text t;
	char b[256], r[64];

	text_open(a, &t);
	for (size_t i = 0; i < n->nr_irqs; i++) {
		const struct lw_irq *q = &n->irqs[i];
		struct lw_cpuset on;

		if (!q->pin || !irq_active_on(n, q, &tg->cpus))
			continue;
		count += lw_irq_count_on(n, q, &tg->cpus, NULL);
		lw_cpuset_and(&on, &q->eff, &tg->cpus);
		irq_rate(n, q, &tg->cpus, r, sizeof(r));
		tx(&t,
		   "%sIRQ %u (%s) is kernel-managed: its affinity cannot be changed; it fires on "
		   "the target's CPU %s, %s, ",
		   nr ? "; " : "", q->irq, q->name, cpus_str(&on, b, sizeof(b)), r);
		if (irq_shared_queue(q)) {
			lw_cpuset_or(&avoid, &avoid, &on);
			tx(&t, "queue shared by CPUs %s", q->affinity[0] ? q->affinity : "?");
		} else {
			percpu++;
			tx(&t, "per-CPU queue");
		}
		nr++;
	}
	if (!nr || !begin(a, LW_CAUSE_IRQ,
			  lw_cpuset_empty(&avoid) ? LW_SEV_INFO : irq_severity(n, count))) {
		text_drop(&t);
		return;
	}
	text_close(a, &t, &a->f->seen);
	if (!lw_cpuset_empty(&avoid)) {
		put(a, &a->f->why,
		    "every CPU's I/O completions on a shared queue interrupt its one effective "
		    "CPU, "
		    "and the kernel pins the vector: the target has to move off that CPU instead");
		fill_move_target(a, &avoid);
	} else {
		put(a, &a->f->why,
		    "a per-CPU queue interrupts the CPU that submitted the I/O: the target's own "
		    "I/O "
		    "completes there by design, other tasks' I/O on its CPUs preempts it");
	}
	if (percpu)
		add(a, &a->f->fix,
		    "# per-CPU queue vectors follow the submitting CPU: moving the "
		    "target does not help; keep other I/O-heavy tasks off CPUs %s",
		    cpus_str(&tg->cpus, b, sizeof(b)));
}

static void advise_irqs(struct adv *a)
{
	const struct lw_node *n = a->n;

	for (size_t i = 0; i < n->nr_nics; i++)
		advise_nic_numa(a, i);
	if (!n->has_target)
		return;
	advise_irq_target(a);
	advise_irq_managed(a);
	advise_rps_target(a);
}

/* ---- CPU quota ---- */

static void fill_quota(struct adv *a)
{
	const struct lw_target *tg = &a->n->target;
	const char *unit = target_unit(a->n);
	bool v2 = tg->cgroup_v == 2;

	if (v2) {
		add(a, &a->f->fix, "echo 'max %llu' > %s", tg->period_us, tg->cpu_max_path);
		add(a, &a->f->rollback, "echo '%s' > %s", tg->cpu_max, tg->cpu_max_path);
	} else {
		add(a, &a->f->fix, "echo -1 > %s", tg->cpu_max_path);
		add(a, &a->f->rollback, "echo %s > %s", tg->cpu_max, tg->cpu_max_path);
	}
	if (strstr(tg->cgroup, "kubepods"))
		add(a, &a->f->persist,
		    "# the kubelet rewrites this cgroup: raise or remove "
		    "resources.limits.cpu in the pod spec");
	else if (unit && tg->period_us)
		/* A quota of every CPU the target may use can never throttle it. */
		add(a, &a->f->persist, "systemctl set-property %s CPUQuota=%d%%", unit,
		    100 * lw_cpuset_count(&tg->cpus));
	else
		add(a, &a->f->persist,
		    "# persist: raise the limit where it is set (the unit's "
		    "CPUQuota=, the container's --cpus)");
	if (unit && tg->period_us && !strstr(tg->cgroup, "kubepods"))
		add(a, &a->f->rollback, "systemctl set-property %s CPUQuota=%lld%%", unit,
		    tg->quota_us * 100 / (long long)tg->period_us);
	add(a, &a->f->verify, "cat %.*s/cpu.stat  # nr_throttled stops growing",
	    (int)(strrchr(tg->cpu_max_path, '/') - tg->cpu_max_path), tg->cpu_max_path);
	put(a, &a->f->cost,
	    "the cgroup may use every CPU: neighbours lose the isolation the quota "
	    "gave; a larger quota (or cpu.max.burst) keeps a bound");
}

static void advise_quota(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	double ratio;

	if (!n->has_target || tg->quota_us <= 0 || !tg->period_us || !tg->cpu_max_path[0] ||
	    !tg->nr_throttled)
		return;
	ratio = tg->nr_periods ? (double)tg->nr_throttled / tg->nr_periods : 0;
	if (!begin(a, LW_CAUSE_CPU, ratio >= 0.05 ? LW_SEV_CRIT : LW_SEV_WARN))
		return;
	put(a, &a->f->seen,
	    "cgroup %s: quota %.2f CPUs (%s), throttled in %llu of %llu periods (%.1f%%), "
	    "%.2f s in total",
	    tg->cgroup, (double)tg->quota_us / tg->period_us, tg->cpu_max, tg->nr_throttled,
	    tg->nr_periods, ratio * 100, tg->throttled_usec / 1e6);
	put(a, &a->f->why,
	    "once the quota is used, the whole cgroup stops until the next %llu ms period: a "
	    "burst waits out the period even on idle CPUs",
	    tg->period_us / 1000);
	fill_quota(a);
}

/* ---- public: node ---- */

int lw_advise_node(const struct lw_node *n, struct lw_findings *out)
{
	struct adv a = {.n = n, .out = out};

	advise_freq(&a);
	advise_idle(&a);
	advise_thp(&a);
	advise_irqs(&a);
	advise_quota(&a);
	if (!a.err)
		a.err = lw_advise_nic(n, out); /* NIC findings: advice/nic.c */
	return a.err;
}

/* ---- public: trace ---- */

/*
 * The idle cause is the waits for an idle CPU that left a C-state (or
 * halted): those for a CPU that only polled (power:cpu_idle) had no exit to
 * pay and are no cause's (LW_B_IDLE_POLL). They are still said, since no
 * C-state or haltpoll setting shortens them.
 */
static void trace_idle(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	struct lw_cpuset deep[LW_MAX_IDLE_STATES];
	char b[32], p[32];

	put(a, &a->f->seen, "C-state exit latency on the target's CPUs");
	put(a, &a->f->why, "waking an idle CPU delays the first instruction");
	if (t->idle_wakeups && t->idle_poll_wakeups)
		put(a, &a->f->evidence,
		    "%llu wake-ups of an idle CPU, %s each on average; %llu more of one that only "
		    "polled, %s each (no C-state to leave: not counted here)",
		    t->idle_wakeups, fmt_ns(t->idle_wake_ns / t->idle_wakeups, b, sizeof(b)),
		    t->idle_poll_wakeups,
		    fmt_ns(t->idle_poll_ns / t->idle_poll_wakeups, p, sizeof(p)));
	else if (t->idle_wakeups)
		put(a, &a->f->evidence, "%llu wake-ups of an idle CPU, %s each on average",
		    t->idle_wakeups, fmt_ns(t->idle_wake_ns / t->idle_wakeups, b, sizeof(b)));
	if (deep_states(a->n, on, deep))
		fill_idle(a, deep);
	else if (haltpoll_short(a->n))
		fill_haltpoll(a, t->pid);
}

static struct lw_cpuset trace_cpus(const struct lw_node *n, const struct lw_trace_facts *t)
{
	struct lw_cpuset s = {0};

	for (int i = 0; i < LW_CPUSET_WORDS && i < 8; i++)
		s.w[i] = t->cpus_mask[i];
	if (lw_cpuset_empty(&s))
		s = cpus_of_interest(n);
	return s;
}

static void trace_freq(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	const char *src = t->freq_source ? t->freq_source : "no frequency data";
	enum lw_severity sev;
	struct lw_cpuset gov = governor_cpus(n, on, &sev);
	struct lw_cpuset epp = epp_cpus(n, on, &sev);
	struct text x;
	char b[256];

	text_open(a, &x);
	if (t->freq_khz)
		tx(&x, "lowest clock on the target's CPUs %u MHz against a %u MHz reference (%s)",
		   mhz(t->freq_khz), mhz(t->ref_khz), src);
	else
		tx(&x, "no frequency data (%s)", src);
	text_close(a, &x, &a->f->evidence);
	if (n->freq.drv == LW_DRV_NONE) {
		put(a, &a->f->seen, "no cpufreq driver on this node (the host sets the clock)");
		put(a, &a->f->why,
		    "the clock cannot be read or set from here: nothing to tune from "
		    "the guest, and the frequency cause cannot be measured");
		add(a, &a->f->fix, "# nothing to tune from the guest");
		return;
	}
	if (!lw_cpuset_empty(&gov)) {
		text_open(a, &x);
		seen_by_value(&x, n, &gov, false);
		text_close(a, &x, &a->f->seen);
		put(a, &a->f->why,
		    "the governor keeps the clock low until load has lasted a "
		    "sampling window: short requests finish before it ramps");
		fill_governor(a, &gov);
	} else if (!lw_cpuset_empty(&epp)) {
		text_open(a, &x);
		seen_by_value(&x, n, &epp, true);
		text_close(a, &x, &a->f->seen);
		put(a, &a->f->why, "a power-leaning EPP makes the hardware ramp up late");
		fill_epp(a, &epp);
	} else {
		put(a, &a->f->seen, "governor and EPP already favour performance on CPUs %s",
		    cpus_str(on, b, sizeof(b)));
		put(a, &a->f->why,
		    "the clock is held low by thermal or power limits, not by policy");
		add(a, &a->f->fix,
		    "# check thermal and power limits: turbostat --show "
		    "CPU,Bzy_MHz,PkgWatt,PkgTmp; cooling and BIOS power limits");
		verify_clock(a, on);
	}
}

/* Why interrupts cost more than their handlers: the entry and exit, which
 * latwhy measured at start and counted in irq, or in a VM without that
 * measurement, time no tracer in the guest sees. */
static void trace_irq_why(struct adv *a, const struct lw_trace_facts *t)
{
	char c[32];

	if (t->irq_entry_cost_ns)
		put(a, &a->f->why,
		    "each interrupt preempts a request thread and evicts its cache, and its entry "
		    "and exit cost the thread %s here beyond the handler (measured at start, "
		    "counted in irq)%s",
		    fmt_ns(t->irq_entry_cost_ns, c, sizeof(c)),
		    a->n->vm ? "; in a VM most of that is the host delivering it" : "");
	else
		put(a, &a->f->why,
		    "each interrupt preempts a request thread and evicts its cache%s",
		    a->n->vm ? "; in a VM its delivery also costs the CPU time outside the "
			       "guest, which was not measured (--irq-cost): the irq time is "
			       "a lower bound, the rest shows as run"
			     : "");
}

/*
 * An IRQ too small to matter is not worth a command, a unit and a rollback:
 * moving it changes nothing the requests feel. Its weight is its handlers'
 * time plus, for each of its interrupts, a mean softirq run on its CPU (at
 * most what it raised: a disk's BLOCK, a NIC's NET_RX); it is minor under 1%
 * of all the interrupt and softirq run time on the target's CPUs. Under the
 * demo's injectors the NIC's tx IRQ had 4-6 interrupts (25 us) beside the
 * disk's 121998 (132 ms, and 956 ms of BLOCK) or beside RPS's NET_RX (6.2 s):
 * the fix moved it, with a unit to persist it. The evidence still lists it.
 */
#define TRACE_IRQ_MINOR_PCT 1

static void trace_irq_minor(const struct lw_trace_facts *t, const struct lw_cpuset *on,
			    size_t listed, bool *minor)
{
	unsigned long long total = 0;

	for (size_t i = 0; i < listed; i++)
		total += t->irqs[i].ns;
	for (size_t i = 0; i < t->nr_softirqs; i++)
		if (lw_cpuset_test(on, (int)t->softirqs[i].cpu) &&
		    !lw_softirq_is_wait(t->softirqs[i].vec))
			total += t->softirqs[i].ns;
	for (size_t i = 0; i < listed; i++) {
		const struct lw_fact_irq *fi = &t->irqs[i];
		unsigned long long sns = 0, sruns = 0, w = fi->ns;

		for (size_t k = 0; k < t->nr_softirqs; k++)
			if (t->softirqs[k].cpu == fi->cpu &&
			    !lw_softirq_is_wait(t->softirqs[k].vec)) {
				sns += t->softirqs[k].ns;
				sruns += t->softirqs[k].count;
			}
		if (sruns)
			w += fi->count * (sns / sruns);
		minor[i] = w * 100 < total * TRACE_IRQ_MINOR_PCT;
	}
}

/* "# IRQ 42 (virtio3-tx), IRQ 31 (...): ...": what the fix leaves alone. */
static void trace_irq_minor_note(struct adv *a, const struct lw_trace_facts *t, size_t listed,
				 const bool *minor)
{
	struct text x;
	char *line;
	size_t nr = 0, k = 0;

	for (size_t i = 0; i < listed; i++)
		nr += minor[i];
	if (!nr)
		return;
	text_open(a, &x);
	for (size_t i = 0; i < listed; i++)
		if (minor[i])
			tx(&x, "%sIRQ %u (%s)", k++ ? ", " : "# ", t->irqs[i].irq, t->irqs[i].name);
	tx(&x,
	   ": under %d%% of the interrupt and softirq time here, with every softirq %s "
	   "could have raised: left where %s",
	   TRACE_IRQ_MINOR_PCT, nr > 1 ? "they" : "it", nr > 1 ? "they are" : "it is");
	line = text_take(a, &x);
	if (line)
		add(a, &a->f->fix, "%s", line);
	free(line);
}

static void trace_irq(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	struct irq_move mv[8];
	struct lw_cpuset avoid = *on, pinned = {0};
	size_t nr = 0, listed = t->nr_irqs < 8 ? t->nr_irqs : 8;
	struct text x;
	char b[64];
	bool net_rx = false, minor[8];

	if (n->has_target)
		lw_cpuset_or(&avoid, &avoid, &n->target.cpus);
	/* RPS first: where it sends NET_RX to the target, that is most of the
	 * softirq time, and the hard IRQs below are its trigger elsewhere */
	for (size_t i = 0; i < t->nr_softirqs; i++)
		net_rx |= (!strcmp(t->softirqs[i].vec, "NET_RX") ||
			   !strcmp(t->softirqs[i].vec, BACKLOG_VEC)) &&
			  lw_cpuset_test(on, (int)t->softirqs[i].cpu);
	if (net_rx && !fill_rps(a, on, t->pid, true))
		add(a, &a->f->fix,
		    "# no RPS mask sends receive processing to CPUs %s: its NET_RX follows the "
		    "NIC queue interrupts, or local senders on those CPUs",
		    cpus_str(on, b, sizeof(b)));
	trace_irq_minor(t, on, listed, minor);
	text_open(a, &x);
	for (size_t i = 0; i < listed; i++) {
		const struct lw_fact_irq *fi = &t->irqs[i];
		const struct lw_irq *q = lw_node_irq(n, fi->irq);
		bool dup = false;

		tx(&x, "%sIRQ %u (%s) on CPU %u: %s in %llu interrupts", i ? "; " : "", fi->irq,
		   fi->name, fi->cpu, fmt_ns(fi->ns, b, sizeof(b)), fi->count);
		if (minor[i])
			continue;
		if (!q) {
			add(a, &a->f->fix, "# IRQ %u (%s) is not in /proc/interrupts any more",
			    fi->irq, fi->name);
			continue;
		}
		if (q->pin && irq_shared_queue(q)) {
			lw_cpuset_set(&pinned, (int)fi->cpu);
			add(a, &a->f->fix,
			    "# IRQ %u (%s) is kernel-managed: its affinity cannot be "
			    "changed; move the target off CPU %u instead",
			    q->irq, q->name, fi->cpu);
			continue;
		}
		if (q->pin) {
			add(a, &a->f->fix,
			    "# IRQ %u (%s) is kernel-managed: its affinity cannot be "
			    "changed; a per-CPU queue fires for I/O submitted on CPU %u: "
			    "keep other I/O-heavy tasks off it",
			    q->irq, q->name, fi->cpu);
			continue;
		}
		for (size_t k = 0; k < nr; k++)
			dup |= mv[k].q == q;
		if (dup)
			continue;
		mv[nr].q = q;
		mv[nr].dest = irq_dest(n, q, &avoid);
		if (lw_cpuset_empty(&mv[nr].dest))
			add(a, &a->f->fix, "# no CPU outside the target's for IRQ %u", q->irq);
		else
			nr++;
	}
	for (size_t i = 0, k = 0; i < t->nr_softirqs && k < 3; i++) {
		const struct lw_fact_softirq *s = &t->softirqs[i];

		if (!lw_cpuset_test(on, (int)s->cpu))
			continue;
		tx(&x, "%s%s on CPU %u: %s in %llu %s", t->nr_irqs || k ? "; " : "", s->vec, s->cpu,
		   fmt_ns(s->ns, b, sizeof(b)), s->count, lw_softirq_unit(s->vec));
		k++;
	}
	if (t->irq_entry_cost_ns && t->irq_entry_ns)
		tx(&x, "; interrupt entry/exit in the slow requests: %s (%llu interrupts)",
		   fmt_ns(t->irq_entry_ns, b, sizeof(b)), t->irq_entry_ns / t->irq_entry_cost_ns);
	text_close(a, &x, &a->f->evidence);
	put(a, &a->f->seen, "interrupts ran on the target's CPUs %s while it handled requests",
	    cpus_str(on, b, sizeof(b)));
	trace_irq_why(a, t);
	trace_irq_minor_note(a, t, listed, minor);
	if (nr)
		fill_irq_moves(a, mv, nr, "trace", &avoid, false);
	if (!lw_cpuset_empty(&pinned) && n->has_target)
		fill_move_target(a, &pinned);
}

/* khugepaged ran faster than the kernel's pace and collapsed the target's
 * memory while it was traced: a finding whatever this run's slow requests
 * lost to it, which is luck (whether a collapse met a fault or a lock). */
static bool thp_fast_collapses(const struct lw_node *n, const struct lw_trace_facts *t)
{
	return t->thp_collapses && n->thp.scan_sleep_ms >= 0 &&
	       n->thp.scan_sleep_ms < KHUGEPAGED_SLEEP_DEFAULT_MS;
}

static void trace_thp(struct adv *a, const struct lw_trace_facts *t)
{
	const struct lw_node *n = a->n;
	const struct lw_thp *h = &n->thp;
	struct text x;
	bool any = false;

	put(a, &a->f->evidence,
	    "khugepaged collapsed %llu ranges of the target's memory (%llu scans); %llu "
	    "compactions in its threads",
	    t->thp_collapses, t->thp_scans, t->compactions);
	text_open(a, &x);
	thp_seen(&x, n, "enabled");
	text_close(a, &x, &a->f->seen);
	put(a, &a->f->why,
	    "collapses and compaction hold the target's memory lock or stall its "
	    "page faults");
	if (!strcmp(h->enabled, "always")) {
		fill_thp_enabled(a);
		any = true;
	}
	if (!strcmp(h->defrag, "always")) {
		fill_thp_defrag(a);
		any = true;
	}
	if (h->kh_defrag == 1) {
		fill_khugepaged(a);
		any = true;
	}
	if (thp_fast_collapses(n, t)) {
		fill_khugepaged_pace(a);
		any = true;
	}
	if (!any)
		add(a, &a->f->fix,
		    "# THP is already madvise with khugepaged/defrag=0: the target asks for huge "
		    "pages itself (MADV_HUGEPAGE); THP=never is the last resort (TLB misses, "
		    "field case: +0.3 ms P50 for Go)");
	else if (t->thp_collapses && n->has_target && n->target.madv_regions > 0)
		add(a, &a->f->fix,
		    "# pid %d madvises %d region%s (MADV_HUGEPAGE): THP madvise keeps %s "
		    "eligible, and khugepaged still collapses %s at its pace; only the "
		    "application opts out (no MADV_HUGEPAGE, or prctl PR_SET_THP_DISABLE)",
		    n->target.pid, n->target.madv_regions, n->target.madv_regions > 1 ? "s" : "",
		    n->target.madv_regions > 1 ? "them" : "it",
		    n->target.madv_regions > 1 ? "them" : "it");
}

/* Per-CPU kernel threads cannot move; threaded IRQ handlers follow their IRQ. */
static const char *unmovable(const char *comm)
{
	static const char *const percpu[] = {"ksoftirqd/", "kworker/",	  "migration/",
					     "cpuhp/",	   "rcuc/",	  "idle_inject/",
					     "watchdog/",  "rcu_preempt", "swapper/"};

	if (!strncmp(comm, "irq/", 4))
		return "a threaded IRQ handler: it follows its IRQ's affinity, move the IRQ";
	for (size_t i = 0; i < sizeof(percpu) / sizeof(percpu[0]); i++)
		if (!strncmp(comm, percpu[i], strlen(percpu[i])))
			return "a per-CPU kernel thread: it cannot be moved (ksoftirqd means "
			       "softirq "
			       "load: move the IRQs feeding it)";
	return NULL;
}

static void trace_sched(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset others, all = *on;
	struct text x;
	char b[64], o[256], on_s[256], all_s[256];

	if (n->has_target)
		lw_cpuset_or(&all, &all, &n->target.cpus);
	lw_cpuset_andnot(&others, &n->online, &all);
	cpus_str(&others, o, sizeof(o));
	cpus_str(&all, on_s, sizeof(on_s));
	cpus_str(&n->online, all_s, sizeof(all_s));
	text_open(a, &x);
	for (size_t i = 0; i < t->nr_preempt && i < 8; i++) {
		const struct lw_fact_task *p = &t->preempt[i];
		const char *why = unmovable(p->comm);

		tx(&x, "%s%s (pid %u) ran %s in %llu slices while the target waited", i ? "; " : "",
		   p->comm, p->pid, fmt_ns(p->ns, b, sizeof(b)), p->count);
		if (p->own) {
			/* taskset -a on its tid would move the target itself */
			add(a, &a->f->fix,
			    "# %s (tid %u) is one of the target's own threads: its threads "
			    "outnumber "
			    "CPUs %s; run fewer workers, or widen the target: taskset -apc CPUS %d",
			    p->comm, p->pid, on_s, t->pid);
		} else if (why) {
			add(a, &a->f->fix, "# %s (pid %u) is %s", p->comm, p->pid, why);
		} else if (lw_cpuset_empty(&others)) {
			add(a, &a->f->fix, "# no CPU outside the target's to move %s (pid %u) to",
			    p->comm, p->pid);
		} else {
			add(a, &a->f->fix, "taskset -apc %s %u", o, p->pid);
			add(a, &a->f->rollback, "taskset -apc %s %u", all_s, p->pid);
			add(a, &a->f->verify, "grep Cpus_allowed_list /proc/%u/status  # %s",
			    p->pid, o);
		}
	}
	text_close(a, &x, &a->f->evidence);
	put(a, &a->f->seen, "other tasks ran on the target's CPUs %s while it was runnable", on_s);
	put(a, &a->f->why,
	    "a runnable request thread waits for the CPU until the preemptor's "
	    "slice ends");
	if (!lw_cpuset_empty(&others)) {
		add(a, &a->f->rollback,
		    "# rollback above assumes the tasks could use every CPU; "
		    "the fix script records their real CPU lists");
		add(a, &a->f->persist,
		    "# persist: CPUAffinity=%s in the units of the tasks above, or keep every "
		    "other "
		    "service off CPUs %s: systemctl set-property system.slice AllowedCPUs=%s (and "
		    "user.slice); undo with AllowedCPUs=%s",
		    o, on_s, o, all_s);
		put(a, &a->f->cost, "the moved tasks share CPUs %s only", o);
	}
}

int lw_advise_trace(const struct lw_node *n, const struct lw_trace_facts *t,
		    struct lw_findings *out)
{
	struct adv a = {.n = n, .out = out};
	struct lw_cpuset on = trace_cpus(n, t);
	int top = LW_CAUSE_NONE;
	char b[64];

	for (int c = LW_CAUSE_NONE + 1; c < LW_CAUSE_MAX; c++)
		if (t->share[c] > t->share[top])
			top = c;
	for (int c = LW_CAUSE_NONE + 1; c < LW_CAUSE_MAX && !a.err; c++) {
		enum lw_severity sev =
			c == top && t->share[c] >= LW_SHARE_CRIT ? LW_SEV_CRIT : LW_SEV_WARN;

		bool due = t->share[c] >= LW_SHARE_FINDING ||
			   (c == LW_CAUSE_THP && thp_fast_collapses(n, t));

		if (!due || !begin(&a, (enum lw_cause)c, sev))
			continue;
		switch (c) {
		case LW_CAUSE_FREQ:
			trace_freq(&a, t, &on);
			break;
		case LW_CAUSE_IRQ:
			trace_irq(&a, t, &on);
			break;
		case LW_CAUSE_THP:
			trace_thp(&a, t);
			break;
		case LW_CAUSE_SCHED:
			trace_sched(&a, t, &on);
			break;
		case LW_CAUSE_IDLE:
			trace_idle(&a, t, &on);
			break;
		case LW_CAUSE_CPU:
			put(&a, &a.f->seen, "CPU quota throttling of the target's cgroup");
			put(&a, &a.f->why, "the cgroup waits out its quota period");
			if (n->has_target && n->target.quota_us > 0 && n->target.cpu_max_path[0])
				fill_quota(&a);
			break;
		}
		/* Every trace finding leads with its share, whatever the cause. */
		if (a.f) {
			const char *ev = a.f->evidence;

			/* put() frees the old string only after formatting the new one. */
			put(&a, &a.f->evidence,
			    "%.0f%% of slow-request time (%s over %llu slow requests)%s%s",
			    t->share[c] * 100, fmt_ns(t->cause_ns[c], b, sizeof(b)),
			    t->slow_requests, ev && *ev ? "; " : "", ev ? ev : "");
		}
	}
	return a.err;
}
