// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * memory.c - the memory cause (trace only): the target's own page faults,
 * its direct reclaim and memory.high's penalty. Where its time went says
 * which fix: reclaim or memory.high time is its cgroup's limit (raised where
 * it is set: the cgroup file, a unit's MemoryHigh=/MemoryMax=, a pod's
 * resources.limits.memory), or the node's free memory (reclaim outside a
 * memcg: the watermarks); fault time is the application's habit of touching
 * fresh memory, fixed in what allocates it (glibc malloc's trim and mmap
 * thresholds and arenas, jemalloc's/tcmalloc's decay, Go's GOGC and
 * GOMEMLIMIT, a JVM's -XX:+AlwaysPreTouch).
 */
#include <string.h>

#include "advice/adv.h"
#include "lib/fmt.h"
#include "node/memory.h"

/* The owner of the target's cgroup, as the quota advisor names it: its own
 * level of the cpu hierarchy, when it is the memory group's path too. */
static const struct lw_cg_level *owner_of(const struct lw_node *n, const struct lw_memcg *m)
{
	if (!n->has_target || !n->target.cg[0].path[0] || strcmp(n->target.cg[0].path, m->path))
		return NULL;
	return &n->target.cg[0];
}

static void limit_fix(struct adv *a, const struct lw_memcg *m, const struct lw_trace_facts *t)
{
	const struct lw_cg_level *o = owner_of(a->n, m);
	long long lim = m->v == 2 && m->high >= 0 ? m->high : m->max;
	long long to = lim > 0 ? lim + lim / 2 : -1; /* half again: a start, verified below */
	const char *file = m->v == 1	  ? "memory.limit_in_bytes"
			   : m->high >= 0 ? "memory.high"
					  : "memory.max";
	char cur[32], nxt[32];

	if (lim < 0) {
		adv_add(a, &a->f->fix,
			"# cgroup %s has no memory limit of its own (%s): a parent's, or the "
			"node's free memory, makes the reclaim",
			m->path, file);
		return;
	}
	snprintf(cur, sizeof(cur), "%lld", lim);
	snprintf(nxt, sizeof(nxt), "%lld", to);
	adv_add(a, &a->f->fix, "echo %s > %s/%s", nxt, m->dir, file);
	adv_add(a, &a->f->rollback, "echo %s > %s/%s", cur, m->dir, file);
	adv_add(a, &a->f->verify, "cat %s/%s %s/%s  # the limit, then %s", m->dir, file, m->dir,
		m->v == 1 ? "memory.failcnt" : "memory.events",
		m->v == 1 ? "failcnt grows no more" : "high/max counts grow no more");
	if (o && o->owner == LW_CG_UNIT)
		adv_add(a, &a->f->persist, "systemctl set-property %s %s=%lldM", o->name,
			m->v == 2 && m->high >= 0 ? "MemoryHigh" : "MemoryMax", to >> 20);
	else if (o && (o->owner == LW_CG_POD || o->owner == LW_CG_POD_CTR))
		adv_add(a, &a->f->persist,
			"# the pod's spec: resources.limits.memory: %lldMi (and requests.memory), "
			"kubectl apply; the kubelet rewrites the cgroup file",
			to >> 20);
	else if (o && (o->owner == LW_CG_DOCKER || o->owner == LW_CG_PODMAN))
		adv_add(a, &a->f->persist, "%s update --memory %lldm %s",
			o->owner == LW_CG_DOCKER ? "docker" : "podman", to >> 20, o->name);
	else
		adv_add(a, &a->f->persist,
			"# whoever made cgroup %s sets its limit: set it there (a unit's "
			"MemoryHigh=/MemoryMax=, a pod's resources.limits.memory, docker --memory)",
			m->path);
	adv_put(a, &a->f->cost,
		"the group may use %lld MiB more of the node's memory; nothing else limits it "
		"below that",
		(to - lim) >> 20);
	(void)t;
}

/* Node reclaim: the target's reclaim was outside a memcg (the zone was below
 * its low watermark). */
static void node_reclaim_fix(struct adv *a)
{
	const char *root = a->n->root && *a->n->root ? a->n->root : "/";
	long long wsf = lw_vm_sysctl(root, "watermark_scale_factor");
	long long mfk = lw_vm_sysctl(root, "min_free_kbytes");

	adv_add(a, &a->f->fix,
		"sysctl -w vm.watermark_scale_factor=%lld  # now %lld: kswapd wakes earlier, "
		"before allocations reclaim themselves",
		wsf > 0 && wsf * 2 > 200 ? wsf * 2 : 200, wsf);
	if (wsf >= 0)
		adv_add(a, &a->f->rollback, "sysctl -w vm.watermark_scale_factor=%lld", wsf);
	if (mfk >= 0)
		adv_add(a, &a->f->fix, "# or a larger fixed reserve: vm.min_free_kbytes (now %lld)",
			mfk);
	adv_add(a, &a->f->persist,
		"echo vm.watermark_scale_factor=200 > /etc/sysctl.d/60-latwhy-reclaim.conf  "
		"# or vm.min_free_kbytes for a fixed reserve");
	adv_add(a, &a->f->verify,
		"grep -E 'allocstall|pgscan_direct' /proc/vmstat  # direct reclaim grows slower");
}

/* The application's habit: fresh memory touched in its requests. */
static void habit_fix(struct adv *a, const struct lw_trace_facts *t)
{
	const struct lw_node *n = a->n;
	enum lw_runtime rt = n->has_target ? n->target.runtime : LW_RT_NONE;
	enum lw_allocator al = lw_allocator_of(n->root && *n->root ? n->root : "/", t->pid);

	if (rt == LW_RT_GO) {
		adv_add(a, &a->f->fix,
			"# Go: a GC cycle hands the heap back and requests fault it in again: "
			"raise GOGC (GOGC=200) or set GOMEMLIMIT near the container's limit with "
			"GOGC=off, in the process's environment, and restart it");
		adv_add(a, &a->f->rollback, "# unset GOGC/GOMEMLIMIT and restart");
	} else if (rt == LW_RT_JVM) {
		adv_add(a, &a->f->fix,
			"# JVM: -XX:+AlwaysPreTouch (and -Xms equal to -Xmx) faults the heap in "
			"at start, not in requests; restart with them");
		adv_add(a, &a->f->rollback, "# drop -XX:+AlwaysPreTouch and restart");
	} else if (al == LW_ALLOC_JEMALLOC) {
		adv_add(a, &a->f->fix,
			"# jemalloc: it decays freed pages back to the kernel: "
			"MALLOC_CONF=dirty_decay_ms:30000,muzzy_decay_ms:30000 (or -1 to keep "
			"them), and restart");
		adv_add(a, &a->f->rollback, "# unset MALLOC_CONF and restart");
	} else if (al == LW_ALLOC_TCMALLOC) {
		adv_add(a, &a->f->fix,
			"# tcmalloc: TCMALLOC_RELEASE_RATE=0 keeps freed pages instead of "
			"releasing them; restart with it");
		adv_add(a, &a->f->rollback, "# unset TCMALLOC_RELEASE_RATE and restart");
	} else {
		adv_add(a, &a->f->fix,
			"# glibc malloc: blocks above the mmap threshold are mapped fresh and "
			"unmapped on free, and the heap top is trimmed: raise both and cap the "
			"arenas, in the environment, and restart: "
			"MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=268435456 "
			"MALLOC_TOP_PAD_=67108864 MALLOC_ARENA_MAX=4");
		adv_add(a, &a->f->rollback, "# unset the MALLOC_* variables and restart");
	}
	adv_add(a, &a->f->persist,
		"# in the service's environment: a unit's Environment=, a pod's env:, the "
		"container's -e");
	adv_add(a, &a->f->verify,
		"# trace again: the memory share and the slow requests' minor faults fall");
	if (!a->f->cost)
		adv_put(a, &a->f->cost,
			"the process keeps the memory it freed: a larger resident set");
}

static void memory_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	unsigned long long limit_ns = t->mem_reclaim_ns + t->mem_high_ns;
	struct lw_memcg m = a->n->memcg;
	/* the node reader's, else (another pid than the node's target) now */
	bool cg = m.v || !lw_memcg_read(a->n->root && *a->n->root ? a->n->root : "/", t->pid, &m);
	char b1[32], b2[32], b3[32], b4[32], lim[32] = "none", high[32] = "none";
	char node[160] = "", k[32];

	(void)on;
	/* the node short of memory while traced, and kswapd at work (or not) */
	if (t->mem_snapshots)
		snprintf(node, sizeof(node),
			 "; the node's free memory below its low watermark in %llu of %llu "
			 "snapshots, kswapd ran %s",
			 t->mem_below_low, t->mem_snapshots,
			 t->mem_kswapds ? lw_fmt_ns(k, sizeof(k), t->mem_kswapd_ns)
					: "(not found)");
	adv_put(a, &a->f->evidence,
		"%llu minor and %llu major page faults in the slow requests: faults %s, their "
		"waits %s, reclaim %s, memory.high/stalls %s; %llu direct reclaims (%llu of a "
		"memory cgroup), %llu pages scanned, %llu reclaimed%s",
		t->mem_faults_min, t->mem_faults_maj, lw_fmt_ns(b1, sizeof(b1), t->mem_fault_ns),
		lw_fmt_ns(b2, sizeof(b2), t->mem_fault_wait_ns),
		lw_fmt_ns(b3, sizeof(b3), t->mem_reclaim_ns),
		lw_fmt_ns(b4, sizeof(b4), t->mem_high_ns), t->mem_reclaims, t->mem_reclaims_memcg,
		t->mem_scanned, t->mem_reclaimed, node);
	if (cg && m.max >= 0)
		snprintf(lim, sizeof(lim), "%lld", m.max);
	if (cg && m.high >= 0)
		snprintf(high, sizeof(high), "%lld", m.high);
	if (cg)
		adv_put(a, &a->f->seen,
			"memory cgroup %s (v%d): limit %s, high %s, usage %llu bytes; "
			"events high %llu, max %llu, oom %llu",
			m.path, m.v, lim, high, m.usage, m.ev_high, m.ev_max, m.ev_oom);
	else
		adv_put(a, &a->f->seen,
			"the target's threads spent the slow requests' time in "
			"page faults and reclaim");
	if (limit_ns > t->mem_fault_ns + t->mem_fault_wait_ns) {
		adv_put(a, &a->f->why,
			"at its memory limit, each allocation first reclaims (or sleeps over "
			"memory.high) in the request's own thread");
		if (t->mem_reclaims && t->mem_reclaims_memcg < t->mem_reclaims)
			node_reclaim_fix(a);
		if (cg)
			limit_fix(a, &m, t);
	} else {
		adv_put(a, &a->f->why,
			"each first touch of fresh memory is a page fault in the request: a "
			"zeroed page allocated, and a major one a read");
		habit_fix(a, t);
	}
}

const struct lw_advisor lw_advisor_memory = {
	.cause = LW_CAUSE_MEMORY,
	.trace = memory_trace,
};
