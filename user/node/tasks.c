// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tasks.c - the target's threads against its CPU quota, and the runtime
 * that sizes its worker pool (Go's GOMAXPROCS, a JVM's processor count).
 *
 * One reading has to do: a capture's node snapshot is what a report on
 * another machine reads, so every fact comes from files the snapshot keeps
 * (/proc/PID/task/TID/stat, smaps, cmdline), never from the binary (megabytes)
 * or the environment (secrets). A thread's stat holds its CPU time since it
 * started; the threads of a pool are peers, so a thread counts as busy with
 * at least a tenth of the busiest one's time, which leaves out the threads
 * that only ran at start-up or wake now and then.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "node/read.h"

const char *lw_runtime_name(enum lw_runtime r)
{
	return r == LW_RT_GO ? "Go" : r == LW_RT_JVM ? "JVM" : "";
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The tids under /proc/PID/task, lowest first, LW_TASKS_MAX at most: how
 * many there were, or -1 when the directory cannot be read. */
static int list_tasks(const struct lw_node *n, int pid, int *tids, bool *cut)
{
	char path[PATH_MAX];
	struct dirent *e;
	int nr = 0, all = 0;
	DIR *d;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/task", pid))
		return -1;
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!lw_is_number(e->d_name))
			continue;
		all++;
		/* keep the lowest: a pool's workers start early */
		if (nr < LW_TASKS_MAX) {
			tids[nr++] = atoi(e->d_name);
		} else {
			qsort(tids, nr, sizeof(*tids), cmp_int);
			if (atoi(e->d_name) < tids[nr - 1])
				tids[nr - 1] = atoi(e->d_name);
		}
	}
	closedir(d);
	qsort(tids, nr, sizeof(*tids), cmp_int);
	*cut = all > nr;
	return nr;
}

/* One thread's stat: its comm (between the first '(' and the last ')',
 * which may hold both) and utime + stime; -1 when unreadable. */
static long long task_ticks(const struct lw_node *n, int pid, int tid, char *comm, size_t len)
{
	unsigned long long ut, st;
	char b[1024], *open, *close;

	if (lw_sysfs_read(n->root, b, sizeof(b), "/proc/%d/task/%d/stat", pid, tid))
		return -1;
	open = strchr(b, '(');
	close = strrchr(b, ')');
	if (!open || !close || close < open)
		return -1;
	snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
	/* fields 3 on: state, then 10 more, utime (14) and stime (15) */
	if (sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) !=
	    2)
		return -1;
	return (long long)(ut + st);
}

void lw_node_read_tasks(struct lw_node *n, struct lw_target *t)
{
	int tids[LW_TASKS_MAX];
	long long ticks[LW_TASKS_MAX];
	char comm[32];
	int nr;

	t->nr_tasks = -1;
	nr = list_tasks(n, t->pid, tids, &t->tasks_cut);
	if (nr < 0)
		return;
	t->nr_tasks = 0;
	for (int i = 0; i < nr; i++) {
		ticks[i] = task_ticks(n, t->pid, tids[i], comm, sizeof(comm));
		if (ticks[i] < 0)
			continue; /* exited since the listing */
		t->nr_tasks++;
		if ((unsigned long long)ticks[i] > t->busiest_ticks)
			t->busiest_ticks = ticks[i];
		if (!strncmp(comm, "GC Thread#", 10))
			t->gc_threads++;
	}
	for (int i = 0; i < nr; i++)
		if (ticks[i] > 0 && (unsigned long long)ticks[i] * 10 >= t->busiest_ticks)
			t->busy_tasks++;
}

/* -XX:ActiveProcessorCount=N among the NUL-separated arguments. */
void lw_node_read_cmdline(struct lw_node *n, struct lw_target *t)
{
	static const char opt[] = "-XX:ActiveProcessorCount=";
	char path[PATH_MAX], b[8192];
	size_t len;
	FILE *f;

	t->jvm_cpus = -1;
	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/cmdline", t->pid))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	len = fread(b, 1, sizeof(b) - 1, f);
	fclose(f);
	b[len] = '\0';
	for (size_t i = 0; i < len; i += strlen(b + i) + 1)
		if (!strncmp(b + i, opt, sizeof(opt) - 1))
			t->jvm_cpus = atoi(b + i + sizeof(opt) - 1);
}

/*
 * A runtime from one smaps mapping line: libjvm.so mapped is a JVM, whatever
 * its launcher is called; an anonymous mapping at the Go runtime's first heap
 * arena hint (0xc000000000, 0x4000000000 on arm64: Go 1.11 on, 64-bit) is Go.
 */
void lw_node_runtime_of_mapping(struct lw_target *t, const char *line)
{
	unsigned long long start;
	char path[512] = "";
	size_t l;

	if (t->runtime == LW_RT_JVM)
		return;
	if (sscanf(line, "%llx-%*x %*s %*s %*s %*s %511s", &start, path) < 1)
		return;
	l = strlen(path);
	if (l >= 10 && !strcmp(path + l - 10, "/libjvm.so"))
		t->runtime = LW_RT_JVM;
	else if (!path[0] && (start == 0xc000000000ULL || start == 0x4000000000ULL))
		t->runtime = LW_RT_GO;
}
