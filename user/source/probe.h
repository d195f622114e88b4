/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * probe.h - what this machine and this kernel allow, checked before loading,
 * so that each refusal is one clear line rather than a verifier dump.
 */
#ifndef LW_PROBE_H
#define LW_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct btf;

/* Parse /proc/PID/stat: comm (if comm is not NULL), the state letter and
 * the number of threads (if threads is not NULL; 0 if unreadable).
 * -ESRCH if there is no such process, -EINVAL if the line is malformed. */
int lw_probe_stat(int pid, char *comm, size_t len, char *state, int *threads);
/* Each live process (not a zombie) named comm, latwhy aside: fn(ctx, pid)
 * in /proc's order. The processes seen; 0 when /proc cannot be read. */
int lw_probe_comm_each(const char *comm, void (*fn)(void *ctx, int pid), void *ctx);
/* The target exists (not a zombie); copies its comm. Prints the error. */
int lw_probe_target(int pid, char *comm, size_t len);
/* CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN (lw_caps_check()); kernel BTF
 * present. Prints the error. */
int lw_probe_privileges(void);
/* Pids of khugepaged and kcompactdN, at most max; the number found. */
int lw_probe_thp_kthreads(__u32 *pids, int max);
/* pids[cpu] = that CPU's ksoftirqd ("ksoftirqd/N"), for cpu < nr_cpus; the
 * others are left as they were. Returns how many were found. */
int lw_probe_ksoftirqd(__u32 *pids, int nr_cpus);
/* Sets a bit in bits (65536 of them) for each local port of a listening
 * socket in f, a /proc/net/tcp or tcp6 table; the number of listeners. */
int lw_parse_listen_ports(FILE *f, __u64 *bits);
/* The same for pid's network namespace (listen.c): by sock_diag where it
 * is latwhy's own, else from its /proc tables; -errno if neither can be
 * read. */
int lw_probe_listen_ports(int pid, __u64 *bits);
/* The same for each namespace of pids once (the first LW_LISTEN_NETNS
 * namespaces): a dump or a table walk a namespace, however many of the
 * processes share it. */
#define LW_LISTEN_NETNS 16
int lw_probe_listen_ports_pids(const int *pids, int npids, __u64 *bits);
/* Its /proc tables alone (the tests compare the two). */
int lw_probe_listen_ports_proc(int pid, __u64 *bits);
/* The kernel has a raw tracepoint of this name (btf_trace_<name> typedef). */
bool lw_probe_tracepoint(const struct btf *vmlinux, const char *name);
/* struct type of the kernel has a member of that name (at its top level). */
bool lw_probe_member(const struct btf *vmlinux, const char *type, const char *member);
/* 0 on a kernel latwhy can load on (5.11+), else -EOPNOTSUPP and one line
 * on stderr naming the oldest kernel supported. */
int lw_probe_kernel_floor(const struct btf *vmlinux);

#endif /* LW_PROBE_H */
