// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * idle.c - waking an idle CPU: deep C-states, PM QoS and a guest's haltpoll.
 */
#include <stdlib.h>
#include <string.h>

#include "advice/adv.h"
#include "lib/fmt.h"

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
	struct adv_text t;

	adv_text_open(a, &t);
	for (int s = 0; s < LW_MAX_IDLE_STATES; s++)
		for (int c = 0; c < n->nr_cpus; c++) {
			if (!lw_cpuset_test(&deep[s], c))
				continue;
			adv_add(a, &a->f->fix, "echo 1 > " CPU_DIR "/cpu%d/cpuidle/state%d/disable",
				c, s);
			adv_add(a, &a->f->rollback,
				"echo 0 > " CPU_DIR "/cpu%d/cpuidle/state%d/disable", c, s);
			adv_text_add(&t, "w " CPU_DIR "/cpu%d/cpuidle/state%d/disable - - - - 1\n",
				     c, s);
		}
	if (adv_text_take(a, &t))
		adv_add(a, &a->f->persist,
			"cat > /etc/tmpfiles.d/latwhy-cstates.conf <<'EOF'\n%sEOF", t.s);
	free(t.s);
	adv_add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-cstates.conf");
	adv_add(a, &a->f->verify, "grep . " CPU_DIR "/cpu[0-9]*/cpuidle/state*/disable");
	adv_add(a, &a->f->verify,
		"turbostat --quiet --show CPU,Busy%%,CPU%%c1,CPU%%c6 --interval 5  "
		"# no residency left in the disabled states");
	adv_put(a, &a->f->cost,
		"idle CPUs stay in shallow states: more idle power and less turbo headroom for "
		"busy cores (field case 2 paid +75 W for its whole performance profile)");
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

	adv_put(a, &a->f->seen,
		"haltpoll governor with guest_halt_poll_ns %lld: an idle vCPU %s, and waking it "
		"takes a VM exit, the host's wake-up of the vCPU and a VM entry",
		old, old ? "polls only briefly before it halts" : "halts at once, without polling");
	adv_add(a, &a->f->fix, "echo %d > " LW_HALTPOLL_PARAM, LW_HALT_POLL_NS);
	adv_add(a, &a->f->persist,
		"cat > /etc/tmpfiles.d/latwhy-haltpoll.conf <<'EOF'\nw " LW_HALTPOLL_PARAM
		" - - - - %d\nEOF",
		LW_HALT_POLL_NS);
	adv_add(a, &a->f->rollback, "echo %lld > " LW_HALTPOLL_PARAM, old);
	adv_add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-haltpoll.conf");
	adv_add(a, &a->f->verify, "cat " LW_HALTPOLL_PARAM "  # %d", LW_HALT_POLL_NS);
	if (pid > 0)
		adv_add(a, &a->f->verify,
			"latwhy -p %d -d 30s  # the idle share of slow-request time falls", pid);
	else
		adv_add(a, &a->f->verify,
			"# latwhy -p PID -d 30s on the service: the idle share of slow-request "
			"time falls");
	adv_put(a, &a->f->cost,
		"an idle vCPU spins up to %d us before it halts: host CPU that other guests cannot "
		"use (a host that set %lld on purpose, shared or nested, may not want it)",
		LW_HALT_POLL_NS / 1000, old);
}

/* Deep C-states the target's CPUs may enter, else a guest halting at once. */
static void idle_check(struct adv *a)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset within = adv_cpus_of_interest(n);
	struct lw_cpuset deep[LW_MAX_IDLE_STATES];
	unsigned worst = 0;
	struct adv_text t;
	char b[256];

	if (!deep_states(n, &within, deep)) {
		/* a guest whose idle vCPUs halt at once: whether that costs
		 * requests only a trace can say (the idle finding), hence info */
		if (haltpoll_short(n) && adv_begin(a, LW_CAUSE_IDLE, LW_SEV_INFO)) {
			adv_put(a, &a->f->why,
				"every wake-up of an idle CPU then waits for the host to run the "
				"vCPU again: tens of us per request on a busy or nested host");
			fill_haltpoll(a, n->has_target ? n->target.pid : 0);
		}
		return;
	}
	if (!adv_begin(a, LW_CAUSE_IDLE, LW_SEV_WARN))
		return;
	adv_text_open(a, &t);
	adv_text_add(&t, "%s:", n->idle.driver[0] ? n->idle.driver : "cpuidle");
	for (int s = 0; s < LW_MAX_IDLE_STATES; s++) {
		int c = lw_cpuset_first(&deep[s]);
		unsigned long long usage = 0;

		if (c < 0)
			continue;
		for (int k = 0; k < n->nr_cpus; k++)
			if (lw_cpuset_test(&deep[s], k))
				usage += n->cpus[k].idle[s].usage;
		adv_text_add(
			&t,
			" %s (state%d, %u us exit latency) enabled on CPUs %s, entered %llu times;",
			n->cpus[c].idle[s].name, s, n->cpus[c].idle[s].latency_us,
			adv_cpus_str(&deep[s], b, sizeof(b)), usage);
		if (n->cpus[c].idle[s].latency_us > worst)
			worst = n->cpus[c].idle[s].latency_us;
	}
	adv_text_add(&t, " no PM QoS limit below %d us", LW_DEEP_IDLE_US);
	adv_text_close(a, &t, &a->f->seen);
	adv_put(a, &a->f->why,
		"waking from a deep C-state takes up to %u us before the first instruction: "
		"high-QPS short requests turn that wake-up jitter into P99",
		worst);
	fill_idle(a, deep);
}

/*
 * The idle cause is the waits for an idle CPU that left a C-state (or
 * halted): those for a CPU that only polled (power:cpu_idle) had no exit to
 * pay and are no cause's (LW_B_IDLE_POLL). They are still said, since no
 * C-state or haltpoll setting shortens them.
 */
static void idle_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	struct lw_cpuset deep[LW_MAX_IDLE_STATES];
	char b[32], p[32];

	adv_put(a, &a->f->seen, "C-state exit latency on the target's CPUs");
	adv_put(a, &a->f->why, "waking an idle CPU delays the first instruction");
	if (t->idle_wakeups && t->idle_poll_wakeups)
		adv_put(a, &a->f->evidence,
			"%llu wake-ups of an idle CPU, %s each on average; %llu more of one that "
			"only polled, %s each (no C-state to leave: not counted here)",
			t->idle_wakeups, lw_fmt_ns(b, sizeof(b), t->idle_wake_ns / t->idle_wakeups),
			t->idle_poll_wakeups,
			lw_fmt_ns(p, sizeof(p), t->idle_poll_ns / t->idle_poll_wakeups));
	else if (t->idle_wakeups)
		adv_put(a, &a->f->evidence, "%llu wake-ups of an idle CPU, %s each on average",
			t->idle_wakeups,
			lw_fmt_ns(b, sizeof(b), t->idle_wake_ns / t->idle_wakeups));
	/* throttled waits, not told apart, sit here too: no C-state or
	 * haltpoll setting shortens them, and those fixes cost power */
	if (adv_quota_hides(a->n, t))
		adv_add(a, &a->f->fix,
			"# the target's cgroup was throttled and this trace could not tell those "
			"waits apart (see the quota finding): no C-state or idle-polling change "
			"until "
			"a trace measures the quota, or the quota is fixed");
	else if (deep_states(a->n, on, deep))
		fill_idle(a, deep);
	else if (haltpoll_short(a->n))
		fill_haltpoll(a, t->pid);
}

const struct lw_advisor lw_advisor_idle = {
	.cause = LW_CAUSE_IDLE,
	.check = idle_check,
	.trace = idle_trace,
};
