// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * freq.c - the clock: cpufreq governor, EPP, turbo/boost and capped maxima.
 *
 * The figures quoted come from the field notes (docs/field-notes.md): 800 MHz
 * of 3700 under powersave, 180 W -> 240 W for performance.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/adv.h"

#define COST_PERF                                                                                  \
	"performance raises power draw (field case: 180 W -> 240 W, +33%); on power-limited "      \
	"nodes prefer schedutil"

static bool epp_driven(const struct lw_node *n)
{
	return (n->freq.drv == LW_DRV_INTEL_PSTATE && n->freq.hwp) ||
	       n->freq.drv == LW_DRV_AMD_PSTATE_EPP;
}

static enum lw_severity governor_severity(const struct lw_node *n, const char *gov)
{
	if (!strcmp(gov, "performance") || !strcmp(gov, "schedutil"))
		return LW_SEV_INFO;
	/* intel_pstate's own powersave (no HWP) follows load; generic powersave
	 * pins the minimum. */
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

	adv_cpu_words(set, words, sizeof(words));
	adv_add(a, &a->f->persist,
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
	adv_add(a, &a->f->persist, "systemctl daemon-reload");
	adv_add(a, &a->f->persist, "systemctl enable %s", unit);
	adv_add(a, &a->f->rollback, "systemctl disable %s", unit);
	adv_add(a, &a->f->rollback, "rm -f /etc/systemd/system/%s", unit);
	adv_add(a, &a->f->rollback, "systemctl daemon-reload");
}

static void verify_clock(struct adv *a, const struct lw_cpuset *set)
{
	unsigned cur, hw, min;
	char b[256];

	clock_range(a->n, set, &cur, &hw, &min);
	adv_add(a, &a->f->verify,
		"grep . " CPU_DIR
		"/cpu[0-9]*/cpufreq/scaling_cur_freq  # under load, steady near %u kHz on CPUs %s: "
		"the governor string proves nothing, thermal and power limits still throttle",
		hw, adv_cpus_str(set, b, sizeof(b)));
	adv_add(a, &a->f->verify,
		"turbostat --quiet --show CPU,Busy%%,Bzy_MHz --interval 5  # Bzy_MHz near %u",
		adv_mhz(hw));
}

static void fill_governor(struct adv *a, const struct lw_cpuset *set)
{
	const struct lw_node *n = a->n;

	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			adv_add(a, &a->f->fix,
				"echo performance > " CPU_DIR "/cpu%d/cpufreq/scaling_governor", c);
	persist_cpu_unit(a, "latwhy-cpufreq.service", "performance cpufreq governor", set,
			 "cpufreq/scaling_governor", "performance");
	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			adv_add(a, &a->f->rollback,
				"echo %s > " CPU_DIR "/cpu%d/cpufreq/scaling_governor",
				n->cpus[c].governor, c);
	adv_add(a, &a->f->verify,
		"grep . " CPU_DIR "/cpu[0-9]*/cpufreq/scaling_governor  # performance");
	verify_clock(a, set);
	adv_put(a, &a->f->cost, "%s", COST_PERF);
}

static void fill_epp(struct adv *a, const struct lw_cpuset *set)
{
	const struct lw_node *n = a->n;

	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			adv_add(a, &a->f->fix,
				"echo performance > " CPU_DIR
				"/cpu%d/cpufreq/energy_performance_preference",
				c);
	persist_cpu_unit(a, "latwhy-epp.service", "energy_performance_preference=performance", set,
			 "cpufreq/energy_performance_preference", "performance");
	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(set, c))
			adv_add(a, &a->f->rollback,
				"echo %s > " CPU_DIR "/cpu%d/cpufreq/energy_performance_preference",
				n->cpus[c].epp, c);
	adv_add(a, &a->f->verify,
		"grep . " CPU_DIR
		"/cpu[0-9]*/cpufreq/energy_performance_preference  # performance");
	verify_clock(a, set);
	adv_put(a, &a->f->cost,
		"EPP performance raises power draw like the performance governor (field case 2: "
		"+75 W for the whole performance profile); balance_performance is the milder step");
}

/* "powersave on CPUs 0-3", grouped by governor (or EPP) value. */
static void seen_by_value(struct adv_text *t, const struct lw_node *n, const struct lw_cpuset *set,
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
		adv_text_add(t, "%s%s %s on CPUs %s",
			     lw_cpuset_first(&same) == lw_cpuset_first(set) ? "" : "; ",
			     epp ? "EPP" : "governor", v, adv_cpus_str(&same, b, sizeof(b)));
	}
}

static void node_governor(struct adv *a, const struct lw_cpuset *within)
{
	const struct lw_node *n = a->n;
	enum lw_severity sev;
	struct lw_cpuset set = governor_cpus(n, within, &sev);
	unsigned cur, hw, min;
	struct adv_text t;
	const char *gov;

	if (lw_cpuset_empty(&set) || !adv_begin(a, LW_CAUSE_FREQ, sev))
		return;
	clock_range(n, &set, &cur, &hw, &min);
	gov = n->cpus[lw_cpuset_first(&set)].governor;
	adv_text_open(a, &t);
	adv_text_add(&t, "%s: ", n->freq.driver);
	seen_by_value(&t, n, &set, false);
	adv_text_add(&t, "; clock %u MHz of %u MHz (scaling_min %u MHz)", adv_mhz(cur), adv_mhz(hw),
		     adv_mhz(min));
	adv_text_close(a, &t, &a->f->seen);
	if (sev == LW_SEV_CRIT)
		adv_put(a, &a->f->why,
			"powersave holds the clock at its minimum (%u of %u MHz): requests run up "
			"to %.1fx slower, an invisible CPU limit",
			adv_mhz(cur), adv_mhz(hw), cur ? (double)hw / cur : 0.0);
	else
		adv_put(a, &a->f->why,
			"%s raises the clock only after a sampling window (~10 ms plus "
			"hysteresis): a burst of requests runs at low clock for tens of ms",
			gov);
	fill_governor(a, &set);
}

static void node_epp(struct adv *a, const struct lw_cpuset *within)
{
	const struct lw_node *n = a->n;
	enum lw_severity sev;
	struct lw_cpuset set = epp_cpus(n, within, &sev);
	unsigned cur, hw, min;
	struct adv_text t;

	if (lw_cpuset_empty(&set) || !adv_begin(a, LW_CAUSE_FREQ, sev))
		return;
	clock_range(n, &set, &cur, &hw, &min);
	adv_text_open(a, &t);
	adv_text_add(&t, "%s (%s%s), governor powersave: ", n->freq.driver, n->freq.pstate_status,
		     n->freq.hwp ? ", HWP" : "");
	seen_by_value(&t, n, &set, true);
	adv_text_add(&t, "; clock %u MHz of %u MHz", adv_mhz(cur), adv_mhz(hw));
	adv_text_close(a, &t, &a->f->seen);
	adv_put(a, &a->f->why,
		"the hardware picks the clock from EPP: a power-leaning bias ramps up late and "
		"settles low, so short requests run below full clock");
	fill_epp(a, &set);
}

static void node_freq_none(struct adv *a)
{
	if (!adv_begin(a, LW_CAUSE_FREQ, LW_SEV_INFO))
		return;
	adv_put(a, &a->f->seen,
		"no cpufreq driver: " CPU_DIR "/cpu*/cpufreq is absent (typical of a VM: "
		"the host sets the clock)");
	adv_put(a, &a->f->why,
		"the clock cannot be read or set from here: there is nothing to tune from the "
		"guest, and the frequency cause cannot be measured (no frequency data)");
	adv_add(a, &a->f->fix,
		"# nothing to tune from the guest; on bare metal, load a cpufreq driver "
		"(intel_pstate, amd-pstate or acpi-cpufreq) and re-run latwhy check");
	adv_add(a, &a->f->verify, "ls " CPU_DIR "/cpu0/cpufreq  # empty without a driver");
}

/* A global 0/1 switch with a tmpfiles entry to persist it. */
static void node_switch(struct adv *a, const char *path, int today, int want, const char *tag,
			const char *seen, const char *why, const char *cost)
{
	if (!adv_begin(a, LW_CAUSE_FREQ, LW_SEV_WARN))
		return;
	adv_put(a, &a->f->seen, "%s", seen);
	adv_put(a, &a->f->why, "%s", why);
	adv_put(a, &a->f->cost, "%s", cost);
	adv_add(a, &a->f->fix, "echo %d > %s", want, path);
	adv_add(a, &a->f->persist,
		"cat > /etc/tmpfiles.d/latwhy-%s.conf <<'EOF'\nw %s - - - - %d\nEOF", tag, path,
		want);
	adv_add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-%s.conf", tag);
	adv_add(a, &a->f->rollback, "echo %d > %s", today, path);
	adv_add(a, &a->f->verify, "cat %s  # %d", path, want);
	adv_add(a, &a->f->verify,
		"turbostat --quiet --show CPU,Bzy_MHz --interval 5  # above base clock under load");
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
			 adv_mhz(top), adv_mhz(hw));
		node_switch(a, CPU_DIR "/intel_pstate/no_turbo", 1, 0, "turbo", seen,
			    "the CPU never runs above base clock: requests take longer than the "
			    "hardware allows",
			    "turbo raises power and heat; its residency depends on cooling (field "
			    "case 2: a neighbour rack's hot exhaust shortened it)");
	} else if (n->freq.boost == 0) {
		snprintf(seen, sizeof(seen),
			 "cpufreq/boost=0: boost off, clock capped at %u MHz (hardware %u MHz)",
			 adv_mhz(top), adv_mhz(hw));
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
	struct adv_text t;
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
	if (first < 0 || !adv_begin(a, LW_CAUSE_FREQ, LW_SEV_WARN))
		return;
	adv_text_open(a, &t);
	adv_text_add(&t, "scaling_max_freq %u MHz below the hardware's %u MHz on CPUs %s",
		     adv_mhz(n->cpus[first].max_khz), adv_mhz(n->cpus[first].hw_max_khz),
		     adv_cpus_str(&set, b, sizeof(b)));
	adv_text_close(a, &t, &a->f->seen);
	adv_put(a, &a->f->why, "a capped maximum clock is a CPU limit nobody sees in CPU usage");
	adv_put(a, &a->f->cost, "a higher clock draws more power");
	adv_text_open(a, &t);
	for (int c = 0; c < n->nr_cpus; c++) {
		if (!lw_cpuset_test(&set, c))
			continue;
		adv_add(a, &a->f->fix, "echo %u > " CPU_DIR "/cpu%d/cpufreq/scaling_max_freq",
			n->cpus[c].hw_max_khz, c);
		adv_add(a, &a->f->rollback, "echo %u > " CPU_DIR "/cpu%d/cpufreq/scaling_max_freq",
			n->cpus[c].max_khz, c);
		adv_text_add(&t, "w " CPU_DIR "/cpu%d/cpufreq/scaling_max_freq - - - - %u\n", c,
			     n->cpus[c].hw_max_khz);
	}
	if (adv_text_take(a, &t))
		adv_add(a, &a->f->persist,
			"cat > /etc/tmpfiles.d/latwhy-maxfreq.conf <<'EOF'\n%sEOF", t.s);
	free(t.s);
	adv_add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-maxfreq.conf");
	adv_add(a, &a->f->verify, "grep . " CPU_DIR "/cpu[0-9]*/cpufreq/scaling_max_freq");
}

/*
 * Clock policy is judged on every online CPU, not only the target's: the CPUs
 * that take its interrupts and softirqs serve its requests too (field case 1
 * set performance everywhere).
 */
static void freq_check(struct adv *a)
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

/* The clock the trace saw, and the policy holding it down on the CPUs in on. */
static void freq_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	const char *src = t->freq_source ? t->freq_source : "no frequency data";
	enum lw_severity sev;
	struct lw_cpuset gov = governor_cpus(n, on, &sev);
	struct lw_cpuset epp = epp_cpus(n, on, &sev);
	struct adv_text x;
	char b[256];

	adv_text_open(a, &x);
	if (t->freq_khz)
		adv_text_add(
			&x,
			"lowest clock on the target's CPUs %u MHz against a %u MHz reference (%s)",
			adv_mhz(t->freq_khz), adv_mhz(t->ref_khz), src);
	else
		adv_text_add(&x, "no frequency data (%s)", src);
	adv_text_close(a, &x, &a->f->evidence);
	if (n->freq.drv == LW_DRV_NONE) {
		adv_put(a, &a->f->seen, "no cpufreq driver on this node (the host sets the clock)");
		/* clock events without a driver: measured, but not settable */
		if (t->freq_khz)
			adv_put(a, &a->f->why,
				"cpu_frequency events measured the clock, but without a cpufreq "
				"driver it cannot be set from here: nothing to tune from the "
				"guest");
		else
			adv_put(a, &a->f->why,
				"the clock cannot be read or set from here: nothing to tune from "
				"the guest, and the frequency cause cannot be measured");
		adv_add(a, &a->f->fix, "# nothing to tune from the guest");
		return;
	}
	if (!lw_cpuset_empty(&gov)) {
		adv_text_open(a, &x);
		seen_by_value(&x, n, &gov, false);
		adv_text_close(a, &x, &a->f->seen);
		adv_put(a, &a->f->why,
			"the governor keeps the clock low until load has lasted a "
			"sampling window: short requests finish before it ramps");
		fill_governor(a, &gov);
	} else if (!lw_cpuset_empty(&epp)) {
		adv_text_open(a, &x);
		seen_by_value(&x, n, &epp, true);
		adv_text_close(a, &x, &a->f->seen);
		adv_put(a, &a->f->why, "a power-leaning EPP makes the hardware ramp up late");
		fill_epp(a, &epp);
	} else {
		adv_put(a, &a->f->seen, "governor and EPP already favour performance on CPUs %s",
			adv_cpus_str(on, b, sizeof(b)));
		adv_put(a, &a->f->why,
			"the clock is held low by thermal or power limits, not by policy");
		adv_add(a, &a->f->fix,
			"# check thermal and power limits: turbostat --show "
			"CPU,Bzy_MHz,PkgWatt,PkgTmp; cooling and BIOS power limits");
		verify_clock(a, on);
	}
}

const struct lw_advisor lw_advisor_freq = {
	.cause = LW_CAUSE_FREQ,
	.check = freq_check,
	.trace = freq_trace,
};
