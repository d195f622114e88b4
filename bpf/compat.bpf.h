/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * compat.bpf.h - every kernel difference latwhy's BPF side copes with.
 *
 * Each shim names the kernel change it covers. CO-RE field checks are used
 * rather than version numbers, so a backport that carries the change works.
 * Userspace-side differences (which tracepoints exist) live in user/probe.c.
 */
#ifndef LW_COMPAT_BPF_H
#define LW_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/*
 * task_struct::state was renamed __state (and became unsigned int) in 5.14,
 * commit 2f064a59a11f ("sched: Change task_struct::state").
 */
struct task_struct___pre514 {
	volatile long state;
} __attribute__((preserve_access_index));

static __always_inline long lw_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/*
 * The CPU a task is on (or queued on, at wake-up). With THREAD_INFO_IN_TASK
 * (x86, arm64) it moved from task_struct into thread_info in 5.16, commit
 * bcf9033e5449 ("sched: move CPU field back into thread_info if
 * THREAD_INFO_IN_TASK=y"), with 001430c1910d ("arm64: add CPU field to
 * struct thread_info") for arm64.
 */
struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

static __always_inline __u32 lw_task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___pre516 *)t, cpu);
}

/*
 * A task's cgroup v2 id, as bpf_get_current_cgroup_id() gives it for current
 * (and name_to_handle_at() for the directory): the id of the kernfs node of
 * its default-hierarchy cgroup. kernfs_node::id was union kernfs_node_id, a
 * u64 id over ino and generation, until 5.5, commit 67c0496e87d1 ("kernfs:
 * convert kernfs_node->id from union kernfs_node_id to u64"); the same 8
 * bytes either way, read whole. The way to the cgroup is bcc libbpf-tools'.
 */
union kernfs_node_id___pre55 {
	struct {
		__u32 ino;
		__u32 generation;
	};
	__u64 id;
};

struct kernfs_node___pre55 {
	union kernfs_node_id___pre55 id;
} __attribute__((preserve_access_index));

static __always_inline __u64 lw_task_cgroup_id(struct task_struct *t)
{
	/* t is a tp_btf argument: direct loads (the verifier makes them
	 * faulting-safe), no helper call on the context-switch path */
	struct kernfs_node *kn = t->cgroups->dfl_cgrp->kn;

	if (!kn)
		return 0;
	if (bpf_core_type_exists(union kernfs_node_id___pre55))
		return ((struct kernfs_node___pre55 *)kn)->id.id;
	return kn->id;
}

/*
 * Tracepoint arguments that changed type. A tp_btf program may declare fewer
 * arguments than its tracepoint passes, so the programs declare only the
 * leading ones that kept their type:
 *  - mm_khugepaged_scan_pmd (lw_khugepaged_scan, thp.bpf.h): mm only; the
 *    page after it became a folio in 2025 ("khugepaged: Refactor
 *    trace_mm_khugepaged_scan_pmd() to take folio instead of page").
 */

/*
 * Syscall number and first argument at sys_exit. The entry registers stay in
 * pt_regs for the whole syscall, but the return value overwrites the first
 * argument register on arm64, which keeps a copy in orig_x0. An architecture
 * difference, not a kernel change: the numbers are those of
 * arch/x86/entry/syscalls/syscall_64.tbl and, for arm64,
 * include/uapi/asm-generic/unistd.h; the registers are pt_regs' in each
 * arch/<arch>/include/asm/ptrace.h.
 */
#if defined(__TARGET_ARCH_x86)
#define LW_NR_read     0
#define LW_NR_write    1
#define LW_NR_readv    19
#define LW_NR_writev   20
#define LW_NR_sendfile 40
#define LW_NR_sendto   44
#define LW_NR_recvfrom 45
#define LW_NR_sendmsg  46
#define LW_NR_recvmsg  47
#define LW_NR_recvmmsg 299
#define LW_NR_sendmmsg 307

static __always_inline long lw_sys_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_ax);
}

static __always_inline long lw_sys_arg0(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, di);
}
#elif defined(__TARGET_ARCH_arm64)
#define LW_NR_read     63
#define LW_NR_write    64
#define LW_NR_readv    65
#define LW_NR_writev   66
#define LW_NR_sendfile 71
#define LW_NR_sendto   206
#define LW_NR_recvfrom 207
#define LW_NR_sendmsg  211
#define LW_NR_recvmsg  212
#define LW_NR_recvmmsg 243
#define LW_NR_sendmmsg 269

static __always_inline long lw_sys_nr(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, syscallno);
}

static __always_inline long lw_sys_arg0(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_x0);
}
#else
#error "latwhy: syscall numbers for this architecture are not defined"
#endif

#endif /* LW_COMPAT_BPF_H */
