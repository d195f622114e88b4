/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * preempt.bpf.h - whose CPU time a target thread's wait for the CPU was
 * (issue 31): the task that ran instead classed as the target's own, another
 * pod's, the host's or the kernel's (enum lw_by), decided here by cgroup
 * ancestry, and counted by the target's slot.
 */

#ifndef LW_PREEMPT_BPF_H
#define LW_PREEMPT_BPF_H

#include "state.bpf.h"

/* task_struct::flags: a kernel thread (include/linux/sched.h, unchanged
 * since 2.6: no CO-RE relocation applies to a #define) */
#define LW_PF_KTHREAD 0x00200000

/*
 * Written by userspace (user/source/targets.c). kubepods_cg: the ids of the
 * kubelet's kubepods cgroups at level 1 of the v2 hierarchy (the systemd
 * driver's kubepods.slice, the cgroupfs driver's kubepods; 0: none found), so
 * that a task below one is some pod's whether or not that pod is a target.
 * targ_pod_cg[slot]: the id of the pod cgroup (its slice) of the container a
 * pod target's slot holds, at level targ_pod_level[slot]; 0: the slot is no
 * pod's. Plain .bss arrays: read at an index, no map lookup.
 */
__u64 kubepods_cg[2] = {};
__u64 targ_pod_cg[LW_MAX_TARGETS] = {};
__u32 targ_pod_level[LW_MAX_TARGETS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LW_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct lw_preempt_by);
} preempt_by SEC(".maps");

/* The target slot of the task of tgid in cgroup cgp (a number: see
 * lw_cg_ancestor_slot()), -1 none. */
static __always_inline int slot_of_cg(__u64 cgp, __u32 tgid)
{
	struct cgroup *cg = (struct cgroup *)cgp;
	__u32 levels = targ_cg_levels, *slot;
	__u64 id;

	slot = bpf_map_lookup_elem(&targ_tgids, &tgid);
	if (slot)
		return *slot;
	if (!targ_ncgroups || !cg)
		return -1;
	id = BPF_CORE_READ(cg, kn, id);
	slot = id ? bpf_map_lookup_elem(&targ_cgroups, &id) : NULL;
	if (slot)
		return *slot;
	return levels ? lw_cg_ancestor_slot(cgp, levels) : -1;
}

/*
 * The class (enum lw_by) of a task, in cgroup cgp (its v2 cgroup, as a
 * number) with task flags and tgid, that ran instead of a thread of process
 * target_tgid in target slot: lw_by_class() on what its cgroup's ancestors
 * say. A global function, verified once and not at each call site of the
 * switch program; its arguments are numbers, the cgroup read with probe
 * reads (compat.bpf.h's lw_cgroup_ancestor_id()).
 */
__noinline __u32 lw_by_of(__u64 cgp, __u32 flags, __u32 tgid, __u32 target_tgid, __u32 slot)
{
	struct cgroup *cg = (struct cgroup *)cgp;
	__u32 own = 0, in_pod = 0, level = 0;
	__u64 pod = 0, top;
	int lvl;

	if (flags & LW_PF_KTHREAD)
		return LW_BY_KERNEL;
	if (slot < LW_MAX_TARGETS) {
		pod = targ_pod_cg[slot];
		level = targ_pod_level[slot];
	}
	lvl = cg ? BPF_CORE_READ(cg, level) : -1;
	if (pod) /* a pod target: any thread of its pod, whichever container */
		own = level && (int)level <= lvl && lvl < 64 &&
		      lw_cgroup_ancestor_id(cg, level) == pod;
	else
		own = tgid == target_tgid || slot_of_cg(cgp, tgid) == (int)slot;
	if (!own && lvl >= 1 && (kubepods_cg[0] || kubepods_cg[1])) {
		top = lw_cgroup_ancestor_id(cg, 1);
		in_pod = top && (top == kubepods_cg[0] || top == kubepods_cg[1]);
	}
	return lw_by_class(0, own, in_pod);
}

/* The class of task p that ran instead of target thread t, of slot. */
static __always_inline __u32 by_of(struct task_struct *p, struct task_struct *t, int slot)
{
	/* read, not loaded: a pointer is no global function's argument */
	return lw_by_of((__u64)BPF_CORE_READ(p, cgroups, dfl_cgrp), p->flags, p->tgid, t->tgid,
			(__u32)slot);
}

/* The target slot of task t (not current), -1 none: its process's, else
 * its cgroup's. */
static __always_inline int target_slot(struct task_struct *t)
{
	__u32 tgid = t->tgid, *slot;

	slot = bpf_map_lookup_elem(&targ_tgids, &tgid);
	if (slot)
		return *slot;
	if (!targ_ncgroups)
		return -1;
	return cgroup_slot(t);
}

/* ns of slot's waits to class by. Per CPU, from the switch program alone:
 * no other program of this CPU interleaves with it. */
static __always_inline void by_charge(int slot, __u32 by, __u64 ns)
{
	struct lw_preempt_by *b;
	__u32 key;

	if (!ns || slot < 0 || slot >= LW_MAX_TARGETS)
		return;
	key = slot;
	b = bpf_map_lookup_elem(&preempt_by, &key);
	/* masked, not compared: with a compare too, clang dropped the mask
	 * and joined paths where the verifier lost the bound ("R0 unbounded
	 * memory access", 6.18); every class is below LW_BY_MAX */
	if (b)
		b->ns[(__u64)by & (LW_BY_MAX - 1)] += ns;
}

_Static_assert(!(LW_BY_MAX & (LW_BY_MAX - 1)), "by_charge() masks by LW_BY_MAX");

#endif /* LW_PREEMPT_BPF_H */
