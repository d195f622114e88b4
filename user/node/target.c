// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target.c - the target process: its CPUs, THP use, threads and the CPU limits
 * of its cgroups (cglimit.c, tasks.c).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "node/cgroup.h"
#include "node/node.h"
#include "node/read.h"
#include "node/sysfs.h"

static bool path_exists(const char *root, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	if (lw_sysfs_path(p, sizeof(p), root, "%s", path))
		return false;
	return stat(p, &st) == 0;
}

static int read_status(struct lw_node *n, struct lw_target *t)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/status", t->pid))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, f) > 0) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		*v++ = '\0';
		while (isspace((unsigned char)*v))
			v++;
		lw_rtrim(v);
		if (!strcmp(line, "Name"))
			snprintf(t->comm, sizeof(t->comm), "%s", v);
		else if (!strcmp(line, "Cpus_allowed_list"))
			snprintf(t->cpus_allowed, sizeof(t->cpus_allowed), "%s", v);
		else if (!strcmp(line, "THP_enabled"))
			t->thp_enabled = atoi(v);
	}
	free(line);
	fclose(f);
	if (lw_cpuset_parse_list(&t->cpus, t->cpus_allowed) || lw_cpuset_empty(&t->cpus))
		t->cpus = n->online;
	return 0;
}

/* VMAs madvised MADV_HUGEPAGE ("hg" in VmFlags) and the THP-backed total. */
static void read_smaps(struct lw_node *n, struct lw_target *t)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/smaps", t->pid))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	t->madv_regions = 0;
	while (getline(&line, &cap, f) > 0) {
		char *save;

		if (!strncmp(line, "VmFlags:", 8)) {
			for (char *tok = strtok_r(line + 8, " \t\n", &save); tok;
			     tok = strtok_r(NULL, " \t\n", &save))
				if (!strcmp(tok, "hg")) {
					t->madv_regions++;
					break;
				}
		} else if (!strncmp(line, "AnonHugePages:", 14)) {
			t->anon_huge_kb += strtoull(line + 14, NULL, 10);
		} else if (isxdigit((unsigned char)line[0]) && line[strcspn(line, "-:")] == '-') {
			lw_node_runtime_of_mapping(t, line); /* a mapping's first line */
		}
	}
	free(line);
	fclose(f);
}

/* /proc/PID/cgroup, read through the path recorder (a capture's node
 * snapshot holds it). */
static void read_cgroup_paths(struct lw_node *n, struct lw_target *t, struct lw_proc_cgroups *cg)
{
	char path[PATH_MAX];
	FILE *f;

	memset(cg, 0, sizeof(*cg));
	if (lw_sysfs_path(path, sizeof(path), n->root, "/proc/%d/cgroup", t->pid))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	lw_proc_cgroups_parse(f, cg);
	fclose(f);
	snprintf(t->cgroup, sizeof(t->cgroup), "%s", cg->v2);
}

/* The cpu controller's hierarchy, the target's path in it, and every
 * limit on that path (cglimit.c). */
static int read_cgroup(struct lw_node *n, struct lw_target *t)
{
	struct lw_proc_cgroups cg;
	const char *v2 = "/sys/fs/cgroup";
	char base[320];
	int err = 0;

	t->quota_us = -1;
	t->cg_bind = -1;
	t->local_throttled_usec = -1;
	read_cgroup_paths(n, t, &cg);
	/* Pure v2 mounts cgroup2 on /sys/fs/cgroup, hybrid setups on .../unified. */
	if (!path_exists(n->root, "/sys/fs/cgroup/cgroup.controllers"))
		v2 = "/sys/fs/cgroup/unified";
	if (t->cgroup[0] && !cg.cpu_ctls[0]) {
		t->cgroup_v = 2;
		err = lw_node_read_cg_limits(n, t, v2, false);
		lw_sysfs_read(n->root, t->cpuset, sizeof(t->cpuset), "%s/cpuset.cpus.effective",
			      t->cg[0].dir);
		return err;
	}
	if (cg.cpu_ctls[0]) {
		t->cgroup_v = 1;
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", cg.cpu);
		snprintf(base, sizeof(base), "/sys/fs/cgroup/%s", cg.cpu_ctls);
		err = lw_node_read_cg_limits(n, t, base, true);
	}
	if (cg.cpuset[0])
		lw_sysfs_read(n->root, t->cpuset, sizeof(t->cpuset),
			      "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus",
			      strcmp(cg.cpuset, "/") ? cg.cpuset : "");
	return err;
}

int lw_node_read_target(struct lw_node *n, int pid)
{
	struct lw_target *t = &n->target;
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->thp_enabled = -1;
	t->madv_regions = -1;
	err = read_status(n, t);
	if (err)
		return err;
	n->has_target = true;
	read_smaps(n, t);
	if (!strcmp(t->comm, "java"))
		t->runtime = LW_RT_JVM;
	lw_node_read_cmdline(n, t);
	lw_node_read_tasks(n, t);
	return read_cgroup(n, t);
}

int lw_node_target_add(struct lw_node *n, int pid)
{
	struct lw_target one = {.pid = pid};
	int err;

	if (!n->target.pid)
		return -EINVAL;
	err = read_status(n, &one);
	if (err)
		return err;
	lw_cpuset_or(&n->target.cpus, &n->target.cpus, &one.cpus);
	lw_cpuset_format(&n->target.cpus, n->target.cpus_allowed, sizeof(n->target.cpus_allowed));
	return 0;
}
