/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * arch.bpf.h - what latwhy's BPF side reads differently per architecture:
 * syscall numbers and the registers of a syscall's pt_regs. Kernel version
 * differences are compat.bpf.h's.
 */
#ifndef LW_ARCH_BPF_H
#define LW_ARCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/*
 * Syscall number and first argument at sys_exit. The entry registers stay in
 * pt_regs for the whole syscall, but the return value overwrites the first
 * argument register on arm64, which keeps a copy in orig_x0. An architecture
 * difference, not a kernel change: the numbers are those of
 * arch/x86/entry/syscalls/syscall_64.tbl and, for arm64,
 * include/uapi/asm-generic/unistd.h; the registers are pt_regs' in each
 * arch/<arch>/include/asm/ptrace.h.
 *
 * A page fault's entry (memory.bpf.h) is x86's exceptions:page_fault_user
 * and page_fault_kernel tracepoints (arch/x86/include/asm/trace/
 * exceptions.h, raised in exc_page_fault()); arm64 has no fault
 * tracepoint, so there those programs are not loaded (user/source/
 * programs.c finds them missing in BTF) and memory is not measured. Its end,
 * perf's PAGE_FAULTS_MIN/MAJ software events, is generic mm code.
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

#endif /* LW_ARCH_BPF_H */
