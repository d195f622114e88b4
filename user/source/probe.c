// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* probe.c - pre-flight checks of the target, privileges and kernel. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/btf.h>

#include "latwhy.h"
#include "source/caps.h"
#include "source/probe.h"

int lw_probe_stat(int pid, char *comm, size_t len, char *state, int *threads)
{
	char path[64], buf[512], *open_p, *close_p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	open_p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!open_p)
		return -ESRCH;
	/* comm may hold spaces and parentheses: it ends at the last ")" */
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p || close_p[1] != ' ')
		return -EINVAL;
	*state = close_p[2];
	/* after the state: ppid pgrp session tty_nr tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice num_threads */
	if (threads && sscanf(close_p + 3,
			      "%*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			      "%*d %*d %d",
			      threads) != 1)
		*threads = 0;
	if (comm) {
		*close_p = '\0';
		snprintf(comm, len, "%s", open_p + 1);
	}
	return 0;
}

/* fn(pid, comm, arg) for each process in /proc, until it returns nonzero. */
static void probe_each_comm(int (*fn)(int pid, const char *comm, void *arg), void *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char comm[32], state;
		int pid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = atoi(e->d_name);
		if (lw_probe_stat(pid, comm, sizeof(comm), &state, NULL))
			continue;
		if (fn(pid, comm, arg))
			break;
	}
	closedir(d);
}

struct pid_list {
	__u32 *pids;
	int n, max;
};

static int thp_kthread(int pid, const char *comm, void *arg)
{
	struct pid_list *l = arg;

	if (!strcmp(comm, "khugepaged") || !strncmp(comm, "kcompactd", 9))
		l->pids[l->n++] = pid;
	return l->n >= l->max;
}

int lw_probe_thp_kthreads(__u32 *pids, int max)
{
	struct pid_list l = {.pids = pids, .max = max};

	if (max > 0)
		probe_each_comm(thp_kthread, &l);
	return l.n;
}

static int ksoftirqd(int pid, const char *comm, void *arg)
{
	struct pid_list *l = arg;
	unsigned int cpu;
	char end;

	if (sscanf(comm, "ksoftirqd/%u%c", &cpu, &end) == 1 && cpu < (unsigned int)l->max) {
		if (!l->pids[cpu])
			l->n++;
		l->pids[cpu] = pid;
	}
	return 0;
}

int lw_probe_ksoftirqd(__u32 *pids, int nr_cpus)
{
	struct pid_list l = {.pids = pids, .max = nr_cpus};

	probe_each_comm(ksoftirqd, &l);
	return l.n;
}

int lw_probe_comm_each(const char *comm, void (*fn)(void *ctx, int pid), void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0, self = getpid();

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char c[LW_COMM_LEN], state;
		int pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == self || lw_probe_stat(pid, c, sizeof(c), &state, NULL) ||
		    strcmp(c, comm) || state == 'Z' || state == 'X')
			continue;
		fn(ctx, pid);
		n++;
	}
	closedir(d);
	return n;
}

int lw_probe_target(int pid, char *comm, size_t len)
{
	char state;
	int err;

	err = lw_probe_stat(pid, comm, len, &state, NULL);
	if (err == -ESRCH) {
		fprintf(stderr, "latwhy: no process with pid %d\n", pid);
		return err;
	}
	if (err) {
		fprintf(stderr, "latwhy: cannot parse /proc/%d/stat\n", pid);
		return err;
	}
	if (state == 'Z' || state == 'X') {
		fprintf(stderr, "latwhy: process %d has exited (zombie)\n", pid);
		return -ESRCH;
	}
	return 0;
}

int lw_probe_privileges(void)
{
	if (lw_caps_check())
		return -EPERM;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		/* before libbpf, which would dump its own search for a vmlinux */
		fprintf(stderr, "latwhy: this kernel has no BTF (/sys/kernel/btf/vmlinux), which "
				"latwhy needs: boot one built with CONFIG_DEBUG_INFO_BTF=y "
				"(distribution kernels since Debian 11 and Ubuntu 20.10 are)\n");
		return -ENOENT;
	}
	return 0;
}

bool lw_probe_tracepoint(const struct btf *vmlinux, const char *name)
{
	char tname[128];

	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	return btf__find_by_name_kind(vmlinux, tname, BTF_KIND_TYPEDEF) > 0;
}

bool lw_probe_member(const struct btf *vmlinux, const char *type, const char *member)
{
	const struct btf_type *t;
	const struct btf_member *m;
	__s32 id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_STRUCT);

	if (id <= 0)
		return false;
	t = btf__type_by_id(vmlinux, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(vmlinux, m->name_off), member))
			return true;
	return false;
}

/* enum type of the kernel has a value of that name. */
static bool probe_enum_value(const struct btf *vmlinux, const char *type, const char *value)
{
	__s32 id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_ENUM);
	const struct btf_type *t;
	const struct btf_enum *e;

	if (id <= 0)
		return false;
	t = btf__type_by_id(vmlinux, id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++, e++)
		if (!strcmp(btf__name_by_offset(vmlinux, e->name_off), value))
			return true;
	return false;
}

/*
 * What no fallback replaces, by the kernel's own BTF rather than its version
 * (a backport counts): BPF task storage (the threads map) and
 * bpf_get_current_task_btf(), both 5.11 (commits 4cf1bc1f1045 and
 * 3ca1032ab7ab); the same release lets tracing programs use socket storage
 * (8e4597c627fb). 5.10 fails the load at the threads map otherwise
 * (tools/kernels/run.sh, Debian 11's 5.10.0-32): one line instead.
 */
int lw_probe_kernel_floor(const struct btf *vmlinux)
{
	bool storage = probe_enum_value(vmlinux, "bpf_map_type", "BPF_MAP_TYPE_TASK_STORAGE");
	bool task_btf = probe_enum_value(vmlinux, "bpf_func_id", "BPF_FUNC_get_current_task_btf");
	struct utsname u;

	if (storage && task_btf)
		return 0;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	fprintf(stderr,
		"latwhy: kernel %s is too old: latwhy needs 5.11 or later (it has no %s%s%s)\n",
		u.release, storage ? "" : "BPF task storage", storage || task_btf ? "" : " and no ",
		task_btf ? "" : "bpf_get_current_task_btf()");
	return -EOPNOTSUPP;
}
