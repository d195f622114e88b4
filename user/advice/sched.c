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

/* "shop/web-1", or "with uid U" for a pod with no log directory. */
static const char *pod_str(const struct lw_fact_pod *p, char *buf, size_t len)
{
	if (p->named)
		snprintf(buf, len, "%s/%s", p->ns, p->name);
	else
		snprintf(buf, len, "with uid %s", p->name);
	return buf;
}

static bool same_pod(const struct lw_fact_pod *a, const struct lw_fact_pod *b)
{
	return a->in && b->in && !strcmp(a->ns, b->ns) && !strcmp(a->name, b->name);
}

/*
 * Another pod's container ran on the target's CPUs (issue 31): the kubelet
 * places both, and a taskset of a container's process lasts until the
 * container restarts (or the CPU manager's next reconcile of its cpuset).
 * The fix is Kubernetes' own: CPUs of the target pod's own (the Guaranteed
 * class with whole CPUs under the static CPU manager policy), or the noisy
 * pod elsewhere. For a target in no pod, the static policy's reserved CPUs
 * kept from every pod. noisy: the other pods, "a, b".
 */
static void fill_k8s(struct adv *a, const struct lw_trace_facts *t, const char *noisy,
		     const char *on_s)
{
	const struct lw_fact_pod *tp = &t->target_pod;
	char me[340];

	if (!tp->in) {
		adv_add(a, &a->f->fix,
			"# pods' containers (%s) ran on the target's CPUs %s: the kubelet places "
			"them, and a taskset of a container's process lasts until it restarts",
			noisy, on_s);
		adv_add(a, &a->f->fix,
			"# keep every pod off CPUs %s: the kubelet's static CPU manager policy "
			"with "
			"those CPUs reserved for the host and held strictly (KubeletConfiguration: "
			"cpuManagerPolicy: static, reservedSystemCPUs: \"%s\", "
			"cpuManagerPolicyOptions: {strict-cpu-reservation: \"true\"}, Kubernetes "
			"1.32+; without the option BestEffort and Burstable pods still run there)",
			on_s, on_s);
		adv_add(a, &a->f->fix,
			"# and the target on them alone: CPUAffinity=%s in its unit, or taskset "
			"-apc "
			"%s %d",
			on_s, on_s, t->pid);
	} else {
		pod_str(tp, me, sizeof(me));
		adv_add(a, &a->f->fix,
			"# pod %s's containers ran on the CPUs %s of pod %s: the kubelet places "
			"both "
			"pods, and a taskset of a container's process lasts until it restarts",
			noisy, on_s, me);
		if (!strcmp(tp->qos, "Guaranteed"))
			adv_add(a, &a->f->fix,
				"# give pod %s CPUs of its own: it is Guaranteed already; with a "
				"whole number of CPUs in each container's cpu (limits equal to "
				"requests, e.g. cpu: \"2\") the static CPU manager policy gives "
				"them CPUs no other pod runs on",
				me);
		else
			adv_add(a, &a->f->fix,
				"# give pod %s CPUs of its own: the Guaranteed QoS class (%s now: "
				"every container's requests equal to its limits, cpu and memory) "
				"with a whole number of CPUs (cpu: \"2\", not \"1500m\"); the "
				"static CPU manager policy then gives its containers CPUs no other "
				"pod runs on",
				me, tp->qos[0] ? tp->qos : "its class not known");
		adv_add(a, &a->f->fix,
			"# the static policy, on the node: kubelet --cpu-manager-policy=static "
			"--reserved-cpus=CPUS (KubeletConfiguration: cpuManagerPolicy: static, "
			"reservedSystemCPUs: \"CPUS\"), CPUS for the system and the kubelet");
		adv_add(a, &a->f->fix,
			"# or move the noisy pod: podAntiAffinity in pod %s's spec against pod "
			"%s's "
			"labels, or a taint on the latency nodes (kubectl taint nodes NODE "
			"dedicated=latency:NoSchedule) with a toleration in pod %s's spec only",
			noisy, me, me);
	}
	adv_add(a, &a->f->persist,
		"# persist: the pod specs in the manifests they come from (Helm values, "
		"kustomize), "
		"and cpuManagerPolicy in the kubelet's config file (/var/lib/kubelet/config.yaml); "
		"a policy change takes the node drained, the kubelet stopped and "
		"/var/lib/kubelet/cpu_manager_state removed before it starts again");
	adv_add(a, &a->f->rollback,
		"# the pod specs as they were; cpuManagerPolicy: none, with the same drain, stop "
		"and state-file removal");
	adv_add(a, &a->f->verify,
		"cat /var/lib/kubelet/cpu_manager_state  # \"policyName\":\"static\", and the "
		"container's CPUs among its entries");
	adv_add(a, &a->f->verify,
		"grep Cpus_allowed_list /proc/%d/status  # CPUs of its own once its pod is made "
		"again",
		t->pid);
	if (tp->in && tp->named)
		adv_add(a, &a->f->verify, "latwhy --pod %s -d 30s  # no pod's task in the evidence",
			me);
	adv_put(a, &a->f->cost, "%s",
		tp->in ? "the pod's CPUs are its alone, busy or idle: the node's shared pool "
			 "(every other pod's containers) shrinks by them, and the reserved CPUs "
			 "leave its allocatable CPU"
		       : "the reserved CPUs leave the node's allocatable CPU: pods get fewer");
}

/* Who ran on the target's CPUs while it waited, and where each can go. */
static void sched_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset others, all = *on;
	bool hold = adv_quota_hides(n, t);
	struct adv_text x;
	char b[64], o[256], on_s[256], all_s[256], pod[340], noisy[1024] = "";
	bool moved = false, k8s = false;

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

		if (p->pod.in)
			adv_text_add(&x, "%s%s (pid %u, pod %s%s%s)", i ? "; " : "", p->comm,
				     p->pid, pod_str(&p->pod, pod, sizeof(pod)),
				     p->pod.container[0] ? ", container " : "", p->pod.container);
		else
			adv_text_add(&x, "%s%s (pid %u)", i ? "; " : "", p->comm, p->pid);
		adv_text_add(&x, " ran %s in %llu slices while the target waited",
			     lw_fmt_ns(b, sizeof(b), p->ns), p->count);
		if (hold) {
			continue; /* one note below, no move */
		} else if (p->pod.in && same_pod(&p->pod, &t->target_pod) && !p->own) {
			adv_add(a, &a->f->fix,
				"# %s (pid %u) is of the target's own pod %s%s%s: its containers "
				"share the pod's CPUs; raise the pod's cpu requests, or give that "
				"container a pod of its own",
				p->comm, p->pid, pod, p->pod.container[0] ? ", container " : "",
				p->pod.container);
		} else if (p->pod.in && !p->own) {
			/* Kubernetes' fix, once for every such pod (fill_k8s()) */
			size_t n = strlen(noisy);

			if (!strstr(noisy, pod) && n + strlen(pod) + 3 < sizeof(noisy))
				snprintf(noisy + n, sizeof(noisy) - n, "%s%s", n ? ", " : "", pod);
			k8s = true;
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
			moved = true;
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
	if (k8s)
		fill_k8s(a, t, noisy, on_s);
	/* a plan for the tasks moved, or, as before pods were told apart,
	 * for none at all */
	if (!lw_cpuset_empty(&others) && (moved || !k8s)) {
		adv_add(a, &a->f->rollback,
			"# rollback above assumes the tasks could use every CPU; "
			"the fix script records their real CPU lists");
		adv_add(a, &a->f->persist,
			"# persist: CPUAffinity=%s in the units of the tasks above, or keep every "
			"other service off CPUs %s: systemctl set-property system.slice "
			"AllowedCPUs=%s (and user.slice); undo with AllowedCPUs=%s",
			o, on_s, o, all_s);
		if (k8s) /* both plans: Kubernetes' for the pods, taskset for the rest */
			adv_put(a, &a->f->cost, "%s; the moved tasks share CPUs %s only",
				a->f->cost ? a->f->cost : "", o);
		else
			adv_put(a, &a->f->cost, "the moved tasks share CPUs %s only", o);
	}
}

const struct lw_advisor lw_advisor_sched = {
	.cause = LW_CAUSE_SCHED,
	.trace = sched_trace,
};
