// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * caps.c - the capabilities latwhy traces with (caps.h).
 *
 * Measured on 6.18 as an unprivileged user holding CAP_BPF and CAP_PERFMON,
 * tracing a root-owned server: loading, attaching the tracepoints, the
 * ring buffer, CPU-wide perf counters and the node reader (the target's
 * /proc/PID/smaps included: ptrace's read check accepts CAP_PERFMON) all
 * work. What does not, and is used when granted:
 *   CAP_SYS_ADMIN        uprobes (perf_event_open of the uprobe PMU);
 *   CAP_DAC_READ_SEARCH  another user's /proc/PID/environ (mode 0400), read
 *                        for the CPUs a running irqbalance was told to ban;
 *   CAP_SYS_NICE         raising latwhy's priority back from nice 19 when it
 *                        shares the target's CPUs and falls behind;
 *   CAP_SYS_RESOURCE     before 5.11 only: maps count against
 *                        RLIMIT_MEMLOCK, which libbpf raises with it.
 * Capabilities are per thread: lw_caps_drop() changes the caller's, and
 * lw_caps_run_bare() makes threads that never had any.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "source/caps.h"
#include "source/probe.h"

#define CAP(c) (1ULL << (c))

static bool retrace;

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};

	memset(d, 0, 2 * sizeof(*d));
	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

__u64 lw_caps_effective(void)
{
	struct __user_cap_data_struct d[2];

	if (caps_get(d))
		return 0;
	return d[0].effective | (__u64)d[1].effective << 32;
}

static bool have(int cap)
{
	return lw_caps_effective() & CAP(cap);
}

/* The running kernel is older than major.minor. */
static bool kernel_before(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

/* A running irqbalance whose environment latwhy cannot read: its pid, else 0. */
static int irqbalance_hidden(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int pid = 0;

	if (!d)
		return 0;
	while (!pid && (e = readdir(d))) {
		char comm[32], state, path[64];
		int p, fd;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		p = atoi(e->d_name);
		if (lw_probe_stat(p, comm, sizeof(comm), &state, NULL) ||
		    strcmp(comm, "irqbalance"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/environ", p);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		else if (errno == EACCES || errno == EPERM)
			pid = p;
	}
	closedir(d);
	return pid;
}

/* What is lost for want of the optional capabilities that matter here. */
static void say_optional(__u64 eff)
{
	struct rlimit rl;
	int pid;

	if (!(eff & CAP(CAP_DAC_READ_SEARCH)) && (pid = irqbalance_hidden()))
		fprintf(stderr,
			"latwhy: no CAP_DAC_READ_SEARCH: irqbalance's environment "
			"(/proc/%d/environ) is unreadable, so CPUs banned there are not seen "
			"(its config files still are)\n",
			pid);
	if (!(eff & CAP(CAP_SYS_RESOURCE)) && kernel_before(5, 11) &&
	    !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_max != RLIM_INFINITY)
		fprintf(stderr,
			"latwhy: no CAP_SYS_RESOURCE: before 5.11 BPF maps count against "
			"RLIMIT_MEMLOCK (%llu KiB here), which latwhy cannot raise; loading "
			"fails if it is too low (LimitMEMLOCK=infinity in a unit)\n",
			(unsigned long long)rl.rlim_max / 1024);
}

int lw_caps_check(void)
{
	static bool said;
	__u64 eff = lw_caps_effective();

	if (!(eff & CAP(CAP_SYS_ADMIN)) && !((eff & CAP(CAP_BPF)) && (eff & CAP(CAP_PERFMON)))) {
		fprintf(stderr, "latwhy: tracing needs CAP_BPF and CAP_PERFMON (or root): "
				"run it with sudo\n");
		return -EPERM;
	}
	if (!said)
		say_optional(eff);
	said = true;
	return 0;
}

bool lw_caps_uprobes(void)
{
	static bool said;

	if (have(CAP_SYS_ADMIN))
		return true;
	if (!said)
		fprintf(stderr, "latwhy: no CAP_SYS_ADMIN: uprobes cannot be attached, so request "
				"boundaries come from the socket layer instead of --request "
				"uprobe\n");
	said = true;
	return false;
}

void lw_caps_keep_for_retrace(void)
{
	retrace = true;
}

/* Another user's process. */
static bool foreign(int pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) || st.st_uid != geteuid();
}

__u64 lw_caps_keep(__u64 eff, const struct lw_caps_use *u)
{
	/* The node reader, to the end of the run: another user's environ is
	 * mode 0400 (CAP_DAC_READ_SEARCH), and its smaps and environ pass
	 * ptrace's read check with CAP_PERFMON (CAP_SYS_PTRACE before 5.8,
	 * which has no CAP_PERFMON). */
	__u64 keep = CAP(CAP_DAC_READ_SEARCH), reader = CAP(CAP_PERFMON);

	if (!(eff & CAP(CAP_PERFMON)))
		reader = CAP(CAP_SYS_PTRACE);
	if (u->foreign || (eff & CAP(CAP_DAC_READ_SEARCH)))
		keep |= reader;
	if (u->shared) /* lw_place_keep_up() */
		keep |= CAP(CAP_SYS_NICE);
	/* The attached programs run on without any: the maps, the ring buffer
	 * and the perf counters are read through their fds, and the programs
	 * control.c and the duty cycle attach late through their program fds,
	 * which the kernel checks no capability for (the page-fault perf
	 * events stay open, disabled while detached: memory.c); a target's new process
	 * goes into the filter map. Uprobes are the exception: the duty cycle
	 * attaches them again through perf_event_open(), so retrace keeps what
	 * a fresh start needs: BTF and map creation and program loads
	 * (CAP_BPF; tracing programs also CAP_PERFMON), the clock's CPU-wide
	 * perf counters (CAP_PERFMON), uprobes (CAP_SYS_ADMIN, which also
	 * stands for CAP_BPF before 5.8), the memlock limit before 5.11
	 * (CAP_SYS_RESOURCE) and, for a target that may share latwhy's CPUs,
	 * its priority (CAP_SYS_NICE). */
	if (u->retrace) {
		keep |= CAP(CAP_BPF) | CAP(CAP_PERFMON) | CAP(CAP_SYS_NICE);
		if (u->uprobe || !(eff & CAP(CAP_BPF)))
			keep |= CAP(CAP_SYS_ADMIN);
		if (u->memlock)
			keep |= CAP(CAP_SYS_RESOURCE);
	}
	return keep & eff;
}

static int last_cap(void)
{
	int last = 40;
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");

	if (f) {
		if (fscanf(f, "%d", &last) != 1 || last < 0 || last > 63)
			last = 40;
		fclose(f);
	}
	return last;
}

/* The bounding set down to keep, where CAP_SETPCAP allows (an unprivileged
 * user's process cannot: its bounding set bounds nothing it could regain). */
static void drop_bounding(__u64 eff, __u64 keep)
{
	if (!(eff & CAP(CAP_SETPCAP)))
		return;
	for (int c = 0, last = last_cap(); c <= last; c++)
		if (!(keep & CAP(c)))
			prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
}

static int caps_set(__u64 keep)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {
		{.effective = (__u32)keep, .permitted = (__u32)keep},
		{.effective = (__u32)(keep >> 32), .permitted = (__u32)(keep >> 32)},
	};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

int lw_caps_drop(int pid, bool uprobe, bool shared)
{
	struct lw_caps_use u = {
		.foreign = foreign(pid),
		.uprobe = uprobe,
		.shared = shared,
		.retrace = retrace,
		.memlock = kernel_before(5, 11),
	};
	__u64 eff = lw_caps_effective(), keep = lw_caps_keep(eff, &u);
	int err;

	drop_bounding(eff, keep);
	/* ambient capabilities only matter across execve(), which latwhy
	 * does not do: none kept */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	err = caps_set(keep);
	if (err) /* tracing goes on, with more than it needs */
		fprintf(stderr, "latwhy: cannot drop capabilities: %s\n", strerror(-err));
	return err;
}

struct bare {
	void *(*fn)(void *);
	void *arg, *ret;
	int err;
};

static void *bare_main(void *arg)
{
	struct bare *b = arg;

	/* both are per thread, and inherited by the threads fn starts */
	if (caps_set(0) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		b->err = errno ? errno : EPERM;
		return NULL;
	}
	errno = 0;
	b->ret = b->fn(b->arg);
	b->err = errno;
	return NULL;
}

void *lw_caps_run_bare(void *(*fn)(void *), void *arg)
{
	struct bare b = {.fn = fn, .arg = arg};
	pthread_t th;
	int err;

	err = pthread_create(&th, NULL, bare_main, &b);
	if (err) {
		errno = err;
		return NULL;
	}
	pthread_join(th, NULL);
	errno = b.err;
	return b.ret;
}
