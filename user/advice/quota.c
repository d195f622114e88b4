// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * quota.c - CFS bandwidth control: a CPU quota (cgroup cpu.max, v1
 * cpu.cfs_quota_us) on the target's cgroup or a parent of it that throttles
 * the target, and a runtime that runs more threads than that quota has CPUs.
 *
 * The limit that binds is the node reader's (node.h: throttled longest, else
 * tightest). The fix goes where the limit is set, since the owner of a
 * cgroup rewrites its files: systemctl for a unit, docker update for a
 * container, the pod spec for a Kubernetes pod, the cgroup file otherwise.
 * Throttled time is never an idle CPU's or another task's: no haltpoll,
 * C-state or CPU move is given for it (adv_quota_hides(), idle.c, sched.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/adv.h"
#include "lib/fmt.h"

/* A limit's throttling: over the trace (a cpu.stat read at its start and
 * after it) or since the cgroup was made (one read). */
struct throttle {
	unsigned long long periods, throttled, usec;
	bool during;
};

/* The quota plan: the binding limit, its throttling, the quota suggested. */
struct qplan {
	const struct lw_node *n;
	const struct lw_target *tg;
	const struct lw_cg_level *bind;
	struct throttle th;
	unsigned long long want; /* thousandths of a CPU; 0: remove the limit */
	char how[320];		 /* how want was chosen, for the evidence */
	int pid;
	/* the target's pod as the trace named it (issue 31); NULL: not known
	 * (latwhy check, an older capture), its uid then */
	const struct lw_fact_pod *pod;
};

static bool has_quota(const struct lw_cg_level *l)
{
	return l->quota_us > 0 && l->period_us > 0 && l->cpu_max[0];
}

/* A level's quota in thousandths of a CPU, rounded. */
static unsigned long long level_mcpu(const struct lw_cg_level *l)
{
	return ((unsigned long long)l->quota_us * 1000 + l->period_us / 2) / l->period_us;
}

static const struct lw_cg_level *binding(const struct lw_target *tg)
{
	return tg->cg_bind >= 0 && tg->cg_bind < tg->nr_cg ? &tg->cg[tg->cg_bind] : NULL;
}

/* l's throttling over the trace when t holds its start, else since made. */
static struct throttle throttle_of(const struct lw_cg_level *l, const struct lw_trace_facts *t)
{
	struct throttle th = {l->nr_periods, l->nr_throttled, l->throttled_usec, false};

	for (size_t i = 0; t && i < t->nr_cg_start; i++) {
		const struct lw_fact_cg_stat *s = &t->cg_start[i];

		/* a cgroup made anew in between counts from 0: since made */
		if (strcmp(s->path, l->path) || s->nr_periods > l->nr_periods ||
		    s->nr_throttled > l->nr_throttled || s->throttled_usec > l->throttled_usec)
			continue;
		th = (struct throttle){l->nr_periods - s->nr_periods,
				       l->nr_throttled - s->nr_throttled,
				       l->throttled_usec - s->throttled_usec, true};
	}
	return th;
}

bool adv_quota_hides(const struct lw_node *n, const struct lw_trace_facts *t)
{
	const struct lw_cg_level *l = n->has_target ? binding(&n->target) : NULL;

	return t->no_quota && l && throttle_of(l, t).throttled > 0;
}

/* "2", "1.5", "0.25": CPUs for docker --cpus and the text. */
static const char *fmt_cpus(unsigned long long mcpu, char *buf, size_t len)
{
	int l = snprintf(buf, len, "%llu.%03llu", mcpu / 1000, mcpu % 1000);

	while (l > 0 && buf[l - 1] == '0')
		buf[--l] = '\0';
	if (l > 0 && buf[l - 1] == '.')
		buf[--l] = '\0';
	return buf;
}

/* Kubernetes' quantity: "2", "1500m". */
static const char *fmt_k8s(unsigned long long mcpu, char *buf, size_t len)
{
	if (mcpu % 1000)
		snprintf(buf, len, "%llum", mcpu);
	else
		snprintf(buf, len, "%llu", mcpu / 1000);
	return buf;
}

/* The CPUs the cgroup's tasks may use: a quota of them all stops binding. */
static unsigned long long cap_mcpu(const struct lw_node *n)
{
	struct lw_cpuset s;
	int c = 0;

	if (n->target.cpuset[0] && !lw_cpuset_parse_list(&s, n->target.cpuset))
		c = lw_cpuset_count(&s);
	if (c <= 0)
		c = lw_cpuset_count(&n->online);
	return 1000ULL * (c > 0 ? c : 1);
}

/*
 * The quota to suggest: what the binding cgroup would have used in a
 * throttled period, its quota plus the time its throttled runqueues waited
 * (throttled_usec / nr_throttled: CPU time they would have run), rounded up
 * to a whole CPU above today's quota; at most the CPUs its tasks may use.
 */
static void suggest(struct qplan *p)
{
	unsigned long long now = level_mcpu(p->bind), cap = cap_mcpu(p->n), need = now;
	char a[32], b[32], c[32], d[32];
	int w;

	if (p->th.throttled)
		need = ((unsigned long long)p->bind->quota_us + p->th.usec / p->th.throttled) *
		       1000 / p->bind->period_us;
	p->want = (need + 999) / 1000 * 1000;
	if (p->want <= now)
		p->want = (now / 1000 + 1) * 1000;
	w = snprintf(
		p->how, sizeof(p->how),
		"%s CPU%s: today's %s plus the %s each throttled period left its runqueues "
		"waiting (%.2f s over %llu) is %s CPUs, rounded up to a whole CPU and "
		"above today's",
		fmt_cpus(p->want, a, sizeof(a)), p->want == 1000 ? "" : "s",
		fmt_cpus(now, b, sizeof(b)),
		lw_fmt_ns(c, sizeof(c), p->th.throttled ? p->th.usec * 1000 / p->th.throttled : 0),
		p->th.usec / 1e6, p->th.throttled, fmt_cpus(need, d, sizeof(d)));
	if (cap > now && p->want > cap) {
		p->want = cap;
		snprintf(p->how + w, sizeof(p->how) - w, ", capped at the %s CPUs of its cpuset",
			 fmt_cpus(cap, a, sizeof(a)));
	}
}

static const char *cpu_word(unsigned long long mcpu)
{
	return mcpu == 1000 ? "CPU" : "CPUs";
}

/* The pod's name for text: "shop/web-1" where the trace named it, else
 * its uid (l->name). */
static const char *pod_name(const struct qplan *p, const struct lw_cg_level *l, char *buf,
			    size_t len)
{
	if (p->pod && p->pod->in && p->pod->named)
		snprintf(buf, len, "%s/%s", p->pod->ns, p->pod->name);
	else
		snprintf(buf, len, "%s", l ? l->name : "?");
	return buf;
}

/* "PATH (unit x.service)": a cgroup and what owns it. */
static const char *describe(const struct qplan *p, const struct lw_cg_level *l, char *buf,
			    size_t len)
{
	const struct lw_target *tg = p->tg;
	char pn[340];

	switch (l->owner) {
	case LW_CG_UNIT:
	case LW_CG_USER_UNIT:
		snprintf(buf, len, "%s (%s %s)", l->path, lw_cg_owner_name(l->owner), l->name);
		break;
	case LW_CG_POD:
		snprintf(buf, len, "%s (pod %s, %s)", l->path, pod_name(p, l, pn, sizeof(pn)),
			 tg->pod_qos[0] ? tg->pod_qos : "QoS unknown");
		break;
	case LW_CG_DOCKER:
	case LW_CG_PODMAN:
	case LW_CG_CONTAINER:
	case LW_CG_POD_CTR:
		snprintf(buf, len, "%s (%s %.12s)", l->path, lw_cg_owner_name(l->owner), l->name);
		break;
	default:
		snprintf(buf, len, "%s", l->path);
	}
	return buf;
}

static bool in_pod(const struct lw_cg_level *l)
{
	return l->owner == LW_CG_POD || l->owner == LW_CG_POD_CTR || l->owner == LW_CG_KUBEPODS;
}

/* The level owned by o on the target's path, NULL none. */
static const struct lw_cg_level *level_of(const struct lw_target *tg, enum lw_cg_owner o)
{
	for (int i = 0; i < tg->nr_cg; i++)
		if (tg->cg[i].owner == o)
			return &tg->cg[i];
	return NULL;
}

/* The quota file of l and the value that sets mcpu there. */
static void file_value(const struct lw_target *tg, const struct lw_cg_level *l,
		       unsigned long long mcpu, char *path, size_t plen, char *val, size_t vlen)
{
	unsigned long long q = mcpu * l->period_us / 1000;

	if (tg->cgroup_v == 1) {
		snprintf(path, plen, "%s/cpu.cfs_quota_us", l->dir);
		if (mcpu)
			snprintf(val, vlen, "%llu", q);
		else
			snprintf(val, vlen, "-1");
	} else {
		snprintf(path, plen, "%s/cpu.max", l->dir);
		if (mcpu)
			snprintf(val, vlen, "'%llu %llu'", q, l->period_us);
		else
			snprintf(val, vlen, "'max %llu'", l->period_us);
	}
}

/* Raise (mcpu) or restore (today's, rollback) one level's limit, by its owner's tool. */
static void set_level(struct adv *a, const struct qplan *p, const struct lw_cg_level *l,
		      unsigned long long mcpu, bool rollback)
{
	struct lw_strv *now = rollback ? &a->f->rollback : &a->f->fix;
	char path[400], val[64], c[32];

	switch (l->owner) {
	case LW_CG_UNIT:
		adv_add(a, now, "systemctl set-property --runtime %s CPUQuota=%llu%%", l->name,
			(mcpu + 5) / 10);
		adv_add(a, rollback ? &a->f->rollback : &a->f->persist,
			"systemctl set-property %s CPUQuota=%llu%%", l->name, (mcpu + 5) / 10);
		return;
	case LW_CG_USER_UNIT:
		adv_add(a, now,
			"# %s is a unit of a user's manager: as that user, systemctl --user "
			"set-property %s CPUQuota=%llu%%",
			l->name, l->name, (mcpu + 5) / 10);
		return;
	case LW_CG_DOCKER:
	case LW_CG_PODMAN:
		if (l->period_us == 100000)
			adv_add(a, now, "%s update --cpus %s %s",
				l->owner == LW_CG_DOCKER ? "docker" : "podman",
				fmt_cpus(mcpu, c, sizeof(c)), l->name);
		else
			adv_add(a, now, "%s update --cpu-period %llu --cpu-quota %llu %s",
				l->owner == LW_CG_DOCKER ? "docker" : "podman", l->period_us,
				mcpu * l->period_us / 1000, l->name);
		return;
	default:
		file_value(&p->n->target, l, mcpu, path, sizeof(path), val, sizeof(val));
		adv_add(a, now, "echo %s > %s", val, path);
	}
}

/* The pod spec's new limit for the target's container: the binding level's
 * shortfall added to the container's own limit (a pod's is their sum). */
static unsigned long long pod_limit(const struct qplan *p, const struct lw_cg_level *ctr)
{
	unsigned long long now = level_mcpu(p->bind);

	if (!ctr || !has_quota(ctr) || ctr == p->bind)
		return p->want;
	return level_mcpu(ctr) + (p->want > now ? p->want - now : 0);
}

/* A pod's limit is the kubelet's: the spec changes, never its cgroup. */
static void plan_pod(struct adv *a, const struct qplan *p)
{
	const struct lw_cg_level *pod = level_of(p->tg, LW_CG_POD);
	const struct lw_cg_level *ctr = level_of(p->tg, LW_CG_POD_CTR);
	unsigned long long lim = pod_limit(p, ctr);
	bool guaranteed = !strcmp(p->tg->pod_qos, "Guaranteed");
	/* named by the trace: the pod's namespace and name, its container */
	bool named = p->pod && p->pod->in && p->pod->named;
	const char *cn = named && p->pod->container[0] ? p->pod->container : "CONTAINER";
	char q[32], old[32], pn[340];

	fmt_k8s(lim, q, sizeof(q));
	if (ctr && has_quota(ctr))
		fmt_k8s(level_mcpu(ctr), old, sizeof(old));
	else
		snprintf(old, sizeof(old), "none");
	pod_name(p, pod, pn, sizeof(pn));
	if (named)
		adv_add(a, &a->f->fix,
			"# the kubelet owns pod %s's cgroups and rewrites them: raise container "
			"%s's resources.limits.cpu from %s to \"%s\" in the pod spec",
			pn, cn, old, q);
	else
		adv_add(a, &a->f->fix,
			"# the kubelet owns pod %s's cgroups and rewrites them: raise the "
			"container's resources.limits.cpu from %s to \"%s\" in the pod spec",
			pn, old, q);
	if (named)
		adv_add(a, &a->f->fix,
			"# its owner: kubectl get pod %s -n %s -o "
			"jsonpath='{.metadata.ownerReferences[0].kind}/"
			"{.metadata.ownerReferences[0].name}'",
			p->pod->name, p->pod->ns);
	else
		adv_add(a, &a->f->fix,
			"# find the pod: kubectl get pods -A -o "
			"custom-columns=NS:.metadata.namespace,POD:.metadata.name,UID:.metadata."
			"uid "
			"| grep %s",
			pn);
	adv_add(a, &a->f->fix,
		"# then: kubectl set resources deployment/NAME -n %s -c %s "
		"--limits=cpu=%s%s%s "
		"(container id %.12s; the rollout makes new pods)",
		named ? p->pod->ns : "NS", cn, q, guaranteed ? " --requests=cpu=" : "",
		guaranteed ? q : "", ctr ? ctr->name : "?");
	if (guaranteed)
		adv_add(a, &a->f->fix,
			"# requests.cpu rises with it: a Guaranteed pod keeps requests equal to "
			"limits, or it becomes Burstable (and loses the static CPU manager's "
			"whole CPUs)");
	adv_add(a, &a->f->persist,
		"# persist: resources.limits.cpu: \"%s\" in the manifest it came from (Helm "
		"values, kustomize), or the next apply undoes kubectl's change",
		q);
	adv_add(a, &a->f->rollback,
		"# kubectl set resources deployment/NAME -n %s -c %s --limits=cpu=%s%s%s",
		named ? p->pod->ns : "NS", cn, old, guaranteed ? " --requests=cpu=" : "",
		guaranteed ? old : "");
}

/* cpu.max.burst (5.14+): the quota stays, a burst spends what earlier
 * periods left unused. As big as a throttled period's wait, at most the
 * quota (the kernel takes no more). A note: an alternative, not a step. */
static void plan_burst(struct adv *a, const struct qplan *p)
{
	const struct lw_cg_level *l = p->bind;
	unsigned long long b = p->th.throttled ? p->th.usec / p->th.throttled : 0;
	const char *file = p->tg->cgroup_v == 1 ? "cpu.cfs_burst_us" : "cpu.max.burst";

	if (l->burst_us < 0 || in_pod(l))
		return;
	if (!b || b > (unsigned long long)l->quota_us)
		b = l->quota_us;
	adv_add(a, &a->f->fix,
		"# lighter, the quota kept: echo %llu > %s/%s lets a burst spend up to %llu us "
		"that earlier periods left unused (rollback: echo %lld > %s/%s)",
		b, l->dir, file, b, l->burst_us, l->dir, file);
}

/* Every limit on the target's path below the new quota is raised, the
 * outermost first (v1 refuses a child's quota above its parent's); the
 * rollback lowers the innermost first. */
static void fill_quota(struct adv *a, const struct qplan *p)
{
	const struct lw_target *tg = p->tg;
	bool pod = false;
	char b[32];

	for (int i = tg->nr_cg - 1; i >= 0; i--) {
		const struct lw_cg_level *l = &tg->cg[i];

		if (!has_quota(l) || level_mcpu(l) >= p->want)
			continue;
		if (in_pod(l))
			pod = true;
		else
			set_level(a, p, l, p->want, false);
	}
	if (pod)
		plan_pod(a, p);
	for (int i = 0; i < tg->nr_cg; i++)
		if (has_quota(&tg->cg[i]) && level_mcpu(&tg->cg[i]) < p->want &&
		    !in_pod(&tg->cg[i]))
			set_level(a, p, &tg->cg[i], level_mcpu(&tg->cg[i]), true);
	if (p->bind->owner == LW_CG_DOCKER)
		adv_add(a, &a->f->fix,
			"# docker refuses --cpus for a container made with --cpu-quota: docker "
			"update --cpu-quota %llu %s",
			p->want * p->bind->period_us / 1000, p->bind->name);
	if (p->bind->owner == LW_CG_DOCKER || p->bind->owner == LW_CG_PODMAN)
		adv_add(a, &a->f->persist,
			"# persist: update outlives a restart of the container, not its "
			"re-creation: --cpus %s in its run command or compose file",
			fmt_cpus(p->want, b, sizeof(b)));
	plan_burst(a, p);
	adv_add(a, &a->f->verify, "cat %s/cpu.stat  # nr_throttled stops growing", p->bind->dir);
	if (p->pid > 0)
		adv_add(a, &a->f->verify,
			"latwhy -p %d -d 30s  # no quota time left in the slow requests", p->pid);
	adv_put(a, &a->f->cost,
		"the quota bounded what this cgroup takes from its neighbours (other services, "
		"pods, containers on the node): at %s %s they may get less when it is busy; "
		"a burst allowance keeps the average bound",
		fmt_cpus(p->want, b, sizeof(b)), cpu_word(p->want));
}

static bool plan_init(struct qplan *p, const struct lw_node *n, const struct lw_trace_facts *t,
		      int pid)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->tg = &n->target;
	p->pid = pid;
	p->bind = n->has_target ? binding(p->tg) : NULL;
	if (!p->bind)
		return false;
	p->th = throttle_of(p->bind, t);
	p->pod = t ? &t->target_pod : NULL;
	suggest(p);
	return true;
}

/* "; also /system.slice: quota 4 CPUs, throttled in 0 of 10 periods" for
 * the other limits on the path. */
static void add_other_limits(struct adv_text *x, const struct qplan *p)
{
	char d[400], c[32];

	for (int i = 0; i < p->tg->nr_cg; i++) {
		const struct lw_cg_level *l = &p->tg->cg[i];

		if (l == p->bind || !has_quota(l))
			continue;
		adv_text_add(x,
			     "; also limited: %s, quota %s %s, throttled in %llu of %llu periods",
			     describe(p, l, d, sizeof(d)), fmt_cpus(level_mcpu(l), c, sizeof(c)),
			     cpu_word(level_mcpu(l)), l->nr_throttled, l->nr_periods);
	}
}

/* The binding limit as text: where, how much, how it throttled. */
static void add_limit(struct adv_text *x, const struct qplan *p)
{
	const struct lw_cg_level *l = p->bind;
	const struct throttle *th = &p->th;
	char d[400];

	adv_text_add(x, "cgroup %s", describe(p, l, d, sizeof(d)));
	if (l != &p->tg->cg[0])
		adv_text_add(x, ", above the target's %s", p->tg->cg[0].path);
	adv_text_add(x, ": quota %.2f CPUs (%s)", (double)l->quota_us / l->period_us, l->cpu_max);
	if (l->burst_us >= 0)
		adv_text_add(x, ", burst %lld us", l->burst_us);
	adv_text_add(x, ", throttled in %llu of %llu periods (%.1f%%), %.2f s in total, %s",
		     th->throttled, th->periods,
		     th->periods ? 100.0 * th->throttled / th->periods : 0, th->usec / 1e6,
		     th->during ? "during the trace (cpu.stat at its start and end)"
				: "since the cgroup was made (one reading)");
	if (l->nr_bursts > 0)
		adv_text_add(x, "; %lld bursts, %.2f s", l->nr_bursts, l->burst_usec / 1e6);
	add_other_limits(x, p);
}

/* Ceil of the binding quota in CPUs: the most threads it can run at once. */
static int quota_cpus(const struct lw_cg_level *l)
{
	return (int)(((unsigned long long)l->quota_us + l->period_us - 1) / l->period_us);
}

static bool too_many_threads(const struct qplan *p)
{
	return p->tg->busy_tasks > quota_cpus(p->bind);
}

static const char *pool_setting(const struct lw_target *tg)
{
	if (tg->runtime == LW_RT_GO)
		return "Go's GOMAXPROCS";
	if (tg->runtime == LW_RT_JVM)
		return "the JVM's -XX:ActiveProcessorCount";
	return "its pool size";
}

static void add_threads(struct adv_text *x, const struct qplan *p)
{
	const struct lw_target *tg = p->tg;

	if (tg->nr_tasks <= 0)
		return;
	adv_text_add(x,
		     "; threads: %d of the %d%s read ran at least a tenth of the busiest one's "
		     "CPU time, %s the %d %s of the quota",
		     tg->busy_tasks, tg->nr_tasks, tg->tasks_cut ? " (the lowest tids)" : "",
		     too_many_threads(p) ? "above" : "within", quota_cpus(p->bind),
		     cpu_word(1000ULL * quota_cpus(p->bind)));
	if (too_many_threads(p))
		adv_text_add(x, " (%s sizes them)", pool_setting(tg));
}

/* The target's own cgroup when it is a system service: a drop-in sets its
 * environment. */
static const char *own_service(const struct lw_target *tg)
{
	const struct lw_cg_level *l = &tg->cg[0];
	size_t len = strlen(l->name);

	return tg->nr_cg && l->owner == LW_CG_UNIT && len > 8 &&
			       !strcmp(l->name + len - 8, ".service")
		       ? l->name
		       : NULL;
}

/* GOMAXPROCS=N where the target's environment is set. */
static void fix_go(struct adv *a, const struct qplan *p, int cpus)
{
	const char *unit = own_service(p->tg);

	if (unit) {
		adv_add(a, &a->f->fix,
			"cat > /etc/systemd/system/%s.d/latwhy-gomaxprocs.conf <<'EOF'\n[Service]\n"
			"Environment=GOMAXPROCS=%d\nEOF",
			unit, cpus);
		adv_add(a, &a->f->fix, "systemctl daemon-reload");
		adv_add(a, &a->f->fix, "systemctl restart %s", unit);
		adv_add(a, &a->f->rollback, "rm -f /etc/systemd/system/%s.d/latwhy-gomaxprocs.conf",
			unit);
		adv_add(a, &a->f->rollback, "systemctl daemon-reload");
		adv_add(a, &a->f->rollback, "systemctl restart %s", unit);
		adv_add(a, &a->f->verify, "systemctl show -p Environment %s  # GOMAXPROCS=%d", unit,
			cpus);
	} else if (level_of(p->tg, LW_CG_POD)) {
		adv_add(a, &a->f->fix,
			"# in the pod spec's container: env: [{name: GOMAXPROCS, valueFrom: "
			"{resourceFieldRef: {resource: limits.cpu}}}] follows its limit in whole "
			"CPUs "
			"(%d today), or kubectl set env deployment/NAME -n NS -c CONTAINER "
			"GOMAXPROCS=%d",
			cpus, cpus);
		adv_add(a, &a->f->rollback,
			"# kubectl set env deployment/NAME -n NS -c CONTAINER GOMAXPROCS-");
	} else if (level_of(p->tg, LW_CG_DOCKER) || level_of(p->tg, LW_CG_PODMAN)) {
		adv_add(a, &a->f->fix,
			"# a running container's environment cannot change: re-create it with -e "
			"GOMAXPROCS=%d (compose: environment: GOMAXPROCS: \"%d\")",
			cpus, cpus);
	} else {
		adv_add(a, &a->f->fix, "# start it with GOMAXPROCS=%d in its environment", cpus);
	}
	adv_add(a, &a->f->fix,
		"# Go 1.25 and later size GOMAXPROCS from the cgroup's limit unless it is set: "
		"check that its environment does not set more (tr '\\0' '\\n' < /proc/%d/environ "
		"| grep GOMAXPROCS; latwhy does not read it, it may hold secrets); older Go: the "
		"automaxprocs package",
		p->pid);
}

/* -XX:ActiveProcessorCount=N on the java command line. */
static void fix_jvm(struct adv *a, const struct qplan *p, int cpus)
{
	char today[48] = "none";

	if (p->tg->jvm_cpus >= 0)
		snprintf(today, sizeof(today), "-XX:ActiveProcessorCount=%d", p->tg->jvm_cpus);
	adv_add(a, &a->f->fix,
		"# add -XX:ActiveProcessorCount=%d to its java command line (today: %s), or to "
		"JAVA_TOOL_OPTIONS where nothing else sets it (a unit's Environment=, the pod "
		"spec's env)",
		cpus, today);
	adv_add(a, &a->f->fix,
		"# the JVM sizes its GC and compiler threads and availableProcessors() from it, "
		"which most pools read; a container-aware JVM reads its own cgroup's quota, not "
		"a parent's (a pod's slice) on older releases");
	adv_add(a, &a->f->rollback, "# rollback: its command line as it was (%s)", today);
}

/* More threads use CPU than the quota has CPUs: the runtime's own setting,
 * sized to the quota, keeps them within it. */
static void runtime_finding(struct adv *a, const struct qplan *p)
{
	const struct lw_target *tg = p->tg;
	int cpus = quota_cpus(p->bind);
	char d[400], b[32];

	if (!adv_begin(a, LW_CAUSE_QUOTA, LW_SEV_WARN))
		return;
	adv_put(a, &a->f->seen,
		"pid %d%s%s%s runs %d threads that use CPU (of %d read) against a quota of %d %s "
		"on %s%s",
		tg->pid, tg->runtime ? " (" : "", lw_runtime_name(tg->runtime),
		tg->runtime ? ")" : "", tg->busy_tasks, tg->nr_tasks, cpus,
		cpu_word(1000ULL * cpus), describe(p, p->bind, d, sizeof(d)),
		tg->gc_threads > cpus ? "; its GC threads (GC Thread#N) are sized for more CPUs"
				      : "");
	adv_put(a, &a->f->why,
		"together they spend a period's %.2f CPUs of quota in about %s, then every thread "
		"waits out the rest of the %llu ms period; sized to the quota (%s), the runtime "
		"keeps as many threads running as it can pay for",
		(double)p->bind->quota_us / p->bind->period_us,
		lw_fmt_ns(b, sizeof(b),
			  (unsigned long long)p->bind->quota_us * 1000 / tg->busy_tasks),
		p->bind->period_us / 1000, pool_setting(tg));
	if (tg->runtime == LW_RT_GO)
		fix_go(a, p, cpus);
	else if (tg->runtime == LW_RT_JVM)
		fix_jvm(a, p, cpus);
	else
		adv_add(a, &a->f->fix,
			"# size its worker pool (threads or processes that run at once) to %d, the "
			"setting its code reads",
			cpus);
	adv_add(a, &a->f->verify, "cat %s/cpu.stat  # nr_throttled grows slower", p->bind->dir);
	adv_put(a, &a->f->cost,
		"no more than %d thread%s run at once: work the quota never paid for is not lost; "
		"a restart to apply it",
		cpus, cpus == 1 ? "" : "s");
}

/* A quota the target's cgroups were throttled by. */
static void quota_check(struct adv *a)
{
	const struct lw_node *n = a->n;
	struct adv_text x;
	struct qplan p;
	double ratio;

	if (!plan_init(&p, n, NULL, n->has_target ? n->target.pid : 0) || !p.th.throttled)
		return;
	ratio = p.th.periods ? (double)p.th.throttled / p.th.periods : 0;
	if (!adv_begin(a, LW_CAUSE_QUOTA, ratio >= 0.05 ? LW_SEV_CRIT : LW_SEV_WARN))
		return;
	adv_text_open(a, &x);
	add_limit(&x, &p);
	add_threads(&x, &p);
	adv_text_add(&x, "; suggested %s", p.how);
	adv_text_close(a, &x, &a->f->seen);
	adv_put(a, &a->f->why,
		"once the quota is used, the whole cgroup stops until the next %llu ms period: a "
		"burst waits out the period even on idle CPUs",
		p.bind->period_us / 1000);
	fill_quota(a, &p);
	a->f = NULL;
	if (too_many_threads(&p))
		runtime_finding(a, &p);
}

/* Trace evidence: the slow requests' waits, then the node's limit. */
static void add_waits(struct adv_text *x, const struct lw_trace_facts *t)
{
	char s[32], m[32];

	if (t->no_quota)
		adv_text_add(x, "throttling was not measured apart in this trace (no CFS bandwidth "
				"tracing, or a capture of ABI 1): its waits sit in sched or idle");
	else if (t->quota_waits)
		adv_text_add(x,
			     "%llu of %llu slow requests waited out a throttle, %s in all, the "
			     "longest %s",
			     t->quota_waits, t->slow_requests,
			     lw_fmt_ns(s, sizeof(s), t->quota_wait_ns),
			     lw_fmt_ns(m, sizeof(m), t->quota_wait_max_ns));
	else
		adv_text_add(x, "no slow request waited out a throttle");
}

/* A trace saw the throttling: its evidence, and the quota's fix when the
 * node shows one. */
static void quota_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_target *tg = &a->n->target;
	struct adv_text x;
	struct qplan p;
	bool plan = plan_init(&p, a->n, t, t->pid);

	adv_put(a, &a->f->seen,
		"CPU quota throttling: the target's threads were runnable while its cgroup's quota "
		"for the period was spent");
	adv_put(a, &a->f->why,
		"the cgroup waits out its quota period, even on idle CPUs: no C-state, haltpoll or "
		"CPU move shortens it, only more quota or fewer threads at once");
	adv_text_open(a, &x);
	add_waits(&x, t);
	if (plan) {
		adv_text_add(&x, "; ");
		add_limit(&x, &p);
		if (tg->local_throttled_usec >= 0)
			adv_text_add(&x,
				     "; the target's own cgroup was throttled %.2f s since made "
				     "(cpu.stat.local: its quota or a parent's)",
				     tg->local_throttled_usec / 1e6);
		add_threads(&x, &p);
		adv_text_add(&x, "; suggested %s", p.how);
	}
	adv_text_close(a, &x, &a->f->evidence);
	if (plan)
		fill_quota(a, &p);
	else
		adv_add(a, &a->f->fix,
			"# no CPU quota on the target's cgroups now (raised since, or the target "
			"exited): latwhy check -p PID reads them");
}

/* The runtime finding after the trace's quota finding. */
static void quota_related(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	struct qplan p;

	if (plan_init(&p, a->n, t, t->pid) && too_many_threads(&p))
		runtime_finding(a, &p);
}

/* Not measured apart but the node shows throttling: the finding says so,
 * and idle and sched hold their fixes back (adv_quota_hides()). */
static bool quota_due(const struct lw_node *n, const struct lw_trace_facts *t)
{
	return adv_quota_hides(n, t);
}

const struct lw_advisor lw_advisor_quota = {
	.cause = LW_CAUSE_QUOTA,
	.check = quota_check,
	.trace = quota_trace,
	.due = quota_due,
	.related = quota_related,
};
