// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sched.c - other tasks preempting the target on its CPUs (trace only: the
 * node's switches say nothing about who shares a CPU).
 */
#include <string.h>

#include "advice/adv.h"
#include "lib/fmt.h"

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
			       "softirq load: move the IRQs feeding it)";
	return NULL;
}

/* Who ran on the target's CPUs while it waited, and where each can go. */
static void sched_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset others, all = *on;
	bool hold = adv_quota_hides(n, t);
	struct adv_text x;
	char b[64], o[256], on_s[256], all_s[256];

	if (n->has_target)
		lw_cpuset_or(&all, &all, &n->target.cpus);
	lw_cpuset_andnot(&others, &n->online, &all);
	adv_cpus_str(&others, o, sizeof(o));
	adv_cpus_str(&all, on_s, sizeof(on_s));
	adv_cpus_str(&n->online, all_s, sizeof(all_s));
	adv_text_open(a, &x);
	for (size_t i = 0; i < t->nr_preempt && i < LW_FACT_PREEMPT; i++) {
		const struct lw_fact_task *p = &t->preempt[i];
		const char *why = unmovable(p->comm);

		adv_text_add(&x, "%s%s (pid %u) ran %s in %llu slices while the target waited",
			     i ? "; " : "", p->comm, p->pid, lw_fmt_ns(b, sizeof(b), p->ns),
			     p->count);
		if (hold) {
			continue; /* one note below, no move */
		} else if (p->own) {
			/* taskset -a on its tid would move the target itself */
			adv_add(a, &a->f->fix,
				"# %s (tid %u) is one of the target's own threads: its threads "
				"outnumber CPUs %s; run fewer workers, or widen the target: "
				"taskset -apc CPUS %d",
				p->comm, p->pid, on_s, t->pid);
		} else if (why) {
			adv_add(a, &a->f->fix, "# %s (pid %u) is %s", p->comm, p->pid, why);
		} else if (lw_cpuset_empty(&others)) {
			adv_add(a, &a->f->fix,
				"# no CPU outside the target's to move %s (pid %u) to", p->comm,
				p->pid);
		} else {
			adv_add(a, &a->f->fix, "taskset -apc %s %u", o, p->pid);
			adv_add(a, &a->f->rollback, "taskset -apc %s %u", all_s, p->pid);
			adv_add(a, &a->f->verify, "grep Cpus_allowed_list /proc/%u/status  # %s",
				p->pid, o);
		}
	}
	adv_text_close(a, &x, &a->f->evidence);
	/* a throttled thread waits for its quota, not for a CPU: moving tasks
	 * away frees a CPU it may not use */
	if (hold) {
		adv_add(a, &a->f->fix,
			"# the target's cgroup was throttled and this trace could not tell those "
			"waits apart (see the quota finding): no task is moved until a trace "
			"measures the quota, or the quota is fixed");
		adv_put(a, &a->f->seen,
			"the target waited while runnable on CPUs %s (other tasks, or its cgroup's "
			"quota)",
			on_s);
		adv_put(a, &a->f->why,
			"a runnable request thread waits for the CPU, or for its cgroup's next "
			"quota period");
		return;
	}
	adv_put(a, &a->f->seen, "other tasks ran on the target's CPUs %s while it was runnable",
		on_s);
	adv_put(a, &a->f->why,
		"a runnable request thread waits for the CPU until the preemptor's slice ends");
	if (!lw_cpuset_empty(&others)) {
		adv_add(a, &a->f->rollback,
			"# rollback above assumes the tasks could use every CPU; "
			"the fix script records their real CPU lists");
		adv_add(a, &a->f->persist,
			"# persist: CPUAffinity=%s in the units of the tasks above, or keep every "
			"other service off CPUs %s: systemctl set-property system.slice "
			"AllowedCPUs=%s (and user.slice); undo with AllowedCPUs=%s",
			o, on_s, o, all_s);
		adv_put(a, &a->f->cost, "the moved tasks share CPUs %s only", o);
	}
}

const struct lw_advisor lw_advisor_sched = {
	.cause = LW_CAUSE_SCHED,
	.trace = sched_trace,
};
