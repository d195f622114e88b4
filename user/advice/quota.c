// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * quota.c - a CPU quota (cgroup cpu.max) that throttles the target.
 */
#include <string.h>

#include "advice/adv.h"

static void fill_quota(struct adv *a)
{
	const struct lw_target *tg = &a->n->target;
	const char *unit = adv_target_unit(a->n);
	bool v2 = tg->cgroup_v == 2;

	if (v2) {
		adv_add(a, &a->f->fix, "echo 'max %llu' > %s", tg->period_us, tg->cpu_max_path);
		adv_add(a, &a->f->rollback, "echo '%s' > %s", tg->cpu_max, tg->cpu_max_path);
	} else {
		adv_add(a, &a->f->fix, "echo -1 > %s", tg->cpu_max_path);
		adv_add(a, &a->f->rollback, "echo %s > %s", tg->cpu_max, tg->cpu_max_path);
	}
	if (strstr(tg->cgroup, "kubepods"))
		adv_add(a, &a->f->persist,
			"# the kubelet rewrites this cgroup: raise or remove "
			"resources.limits.cpu in the pod spec");
	else if (unit && tg->period_us)
		/* A quota of every CPU the target may use can never throttle it. */
		adv_add(a, &a->f->persist, "systemctl set-property %s CPUQuota=%d%%", unit,
			100 * lw_cpuset_count(&tg->cpus));
	else
		adv_add(a, &a->f->persist,
			"# persist: raise the limit where it is set (the unit's "
			"CPUQuota=, the container's --cpus)");
	if (unit && tg->period_us && !strstr(tg->cgroup, "kubepods"))
		adv_add(a, &a->f->rollback, "systemctl set-property %s CPUQuota=%lld%%", unit,
			tg->quota_us * 100 / (long long)tg->period_us);
	adv_add(a, &a->f->verify, "cat %.*s/cpu.stat  # nr_throttled stops growing",
		(int)(strrchr(tg->cpu_max_path, '/') - tg->cpu_max_path), tg->cpu_max_path);
	adv_put(a, &a->f->cost,
		"the cgroup may use every CPU: neighbours lose the isolation the quota "
		"gave; a larger quota (or cpu.max.burst) keeps a bound");
}

/* A quota the target's cgroup was throttled by. */
static void quota_check(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	double ratio;

	if (!n->has_target || tg->quota_us <= 0 || !tg->period_us || !tg->cpu_max_path[0] ||
	    !tg->nr_throttled)
		return;
	ratio = tg->nr_periods ? (double)tg->nr_throttled / tg->nr_periods : 0;
	if (!adv_begin(a, LW_CAUSE_QUOTA, ratio >= 0.05 ? LW_SEV_CRIT : LW_SEV_WARN))
		return;
	adv_put(a, &a->f->seen,
		"cgroup %s: quota %.2f CPUs (%s), throttled in %llu of %llu periods (%.1f%%), "
		"%.2f s in total",
		tg->cgroup, (double)tg->quota_us / tg->period_us, tg->cpu_max, tg->nr_throttled,
		tg->nr_periods, ratio * 100, tg->throttled_usec / 1e6);
	adv_put(a, &a->f->why,
		"once the quota is used, the whole cgroup stops until the next %llu ms period: a "
		"burst waits out the period even on idle CPUs",
		tg->period_us / 1000);
	fill_quota(a);
}

/* A trace saw the throttling: the quota's fix when the node shows one. */
static void quota_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_target *tg = &a->n->target;

	adv_put(a, &a->f->seen, "CPU quota throttling of the target's cgroup");
	adv_put(a, &a->f->why, "the cgroup waits out its quota period");
	if (a->n->has_target && tg->quota_us > 0 && tg->cpu_max_path[0])
		fill_quota(a);
}

const struct lw_advisor lw_advisor_quota = {
	.cause = LW_CAUSE_QUOTA,
	.check = quota_check,
	.trace = quota_trace,
};
