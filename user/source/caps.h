/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * caps.h - the capabilities latwhy traces with, and only those.
 *
 * Tracing needs CAP_BPF and CAP_PERFMON (kernel 5.8+; CAP_SYS_ADMIN before).
 * What needs more is used when granted and otherwise lost with one notice
 * naming the capability (docs/serve.md#privileges lists them). Once
 * attached, latwhy drops every capability it will not use again.
 */
#ifndef LW_CAPS_H
#define LW_CAPS_H

#include <stdbool.h>
#include <linux/types.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* This thread's effective set, as a bit mask by capability number; 0 if
 * capget() fails. */
__u64 lw_caps_effective(void);

/* CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN: 0; else one line on stderr
 * naming them, -EPERM. Says once what is lost for want of the others. */
int lw_caps_check(void);

/* Uprobes can be attached (CAP_SYS_ADMIN); false is said once. */
bool lw_caps_uprobes(void);

/* serve --sample with uprobes: the duty cycle attaches them again through
 * perf_event_open(), so the drop keeps what loading and attaching need. */
void lw_caps_keep_for_retrace(void);

/* What the rest of a run does that a capability is checked for. */
struct lw_caps_use {
	bool foreign; /* the target is another user's (its smaps, at the end) */
	bool uprobe;  /* traced with uprobes */
	bool shared;  /* latwhy shares the target's CPUs (its priority) */
	bool retrace; /* attached again from scratch (uprobes, serve --sample) */
	bool memlock; /* before 5.11: maps count against RLIMIT_MEMLOCK */
};

/* Of eff, what a run that does u must keep once attached. */
__u64 lw_caps_keep(__u64 eff, const struct lw_caps_use *u);

/*
 * After the attach: keep only what the rest of the run uses, in every set
 * (effective, permitted, inheritable, ambient, and the bounding set where
 * CAP_SETPCAP allows) of the calling thread, and set no_new_privs. pid: the
 * target (another user's needs CAP_PERFMON to read its smaps at the end);
 * uprobe: it was traced with uprobes; shared: latwhy runs on the target's
 * CPUs and may raise its priority (CAP_SYS_NICE). 0 or -errno, said on
 * stderr (the trace goes on).
 */
int lw_caps_drop(int pid, bool uprobe, bool shared);

/*
 * fn(arg) in a new thread holding no capabilities, joined; its result, and
 * its errno in the caller's. Threads fn starts inherit the empty sets: a
 * server thread that parses untrusted input holds none.
 */
void *lw_caps_run_bare(void *(*fn)(void *), void *arg);

#endif /* LW_CAPS_H */
