/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cgroup.h - cgroup v2 as a target: where the v2 hierarchy is mounted, a
 * systemd unit's cgroup found in it, a cgroup's id and its processes.
 *
 * Every path is read below a root directory ("/" live), so fixture trees
 * stand in for a machine: mountinfo is root/proc/self/mountinfo, and the
 * mount point it names is taken below root too.
 */
#ifndef LW_NODE_CGROUP_H
#define LW_NODE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/*
 * The mount point of the cgroup v2 hierarchy named by the mountinfo file at
 * path: "/sys/fs/cgroup" (pure v2), "/sys/fs/cgroup/unified" (hybrid), or
 * wherever it is. The first cgroup2 mount of the hierarchy's root (root
 * field "/"), else the first cgroup2 mount. 0; -ENOENT when there is none
 * (a v1-only host); -ENAMETOOLONG; -errno of the open.
 */
int lw_cgroup2_mount_parse(const char *mountinfo, char *buf, size_t len);

/* The same for the node below root (root/proc/self/mountinfo). */
int lw_cgroup2_mount(const char *root, char *buf, size_t len);

/*
 * A directory named unit ("nginx.service") below the v2 mount dir (a full
 * path), searched breadth first, LW_CGROUP_DEPTH levels at most: its path
 * relative to dir, starting with "/" ("/system.slice/nginx.service"). The
 * shallowest wins; among equals the first in name order. 0; -ENOENT when
 * there is none; -errno when dir cannot be read.
 */
#define LW_CGROUP_DEPTH 8
int lw_cgroup_find_unit(const char *dir, const char *unit, char *rel, size_t len);

/* The cgroup id of the directory at path, as the kernel's
 * bpf_get_current_cgroup_id() gives it (its file handle): 0 or -errno. */
int lw_cgroup_id(const char *path, __u64 *id);

/* The processes of the cgroup at path (its cgroup.procs), up to max of them
 * into pids: how many there are (which may exceed max), or -errno. */
int lw_cgroup_procs(const char *path, int *pids, int max);
/* The same, with the processes of the cgroups below it (LW_CGROUP_DEPTH
 * levels at most): a --cgroup target's. */
int lw_cgroup_procs_tree(const char *path, int *pids, int max);

/* "/a/b": starts with '/', no empty, "." or ".." component, no trailing
 * '/' except "/" itself. */
bool lw_cgroup_path_ok(const char *path);

/* A process's cgroups, as its /proc/PID/cgroup lists them: the v2 path,
 * and on v1 the hierarchy (its controllers, "cpu,cpuacct") and path of the
 * cpu controller, and the cpuset and memory controllers' paths. "" where
 * the process has none. */
struct lw_proc_cgroups {
	char v2[256];
	char cpu_ctls[64];
	char cpu[256];
	char cpuset[256];
	char memory[256];
};

/* Parse an open /proc/PID/cgroup (callers open it their own way: node's
 * readers through sysfs.c's recorder, serve's scrapes without it). 0, or
 * -ENOENT when it names no cgroup at all. */
int lw_proc_cgroups_parse(FILE *f, struct lw_proc_cgroups *cg);

#endif /* LW_NODE_CGROUP_H */
