// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup.c - cgroup v2 as a target: the v2 mount from mountinfo, a unit's
 * cgroup searched in the tree, a cgroup's id and processes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "node/cgroup.h"
#include "lib/list.h"
#include "node/sysfs.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static int unescape(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; *s; s++) {
		char c = *s;

		if (c == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			c = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		}
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return 0;
}

/* One mountinfo line: its root and mount point fields, and whether its
 * file system (the field after " - ") is cgroup2. */
static bool line_is_cgroup2(char *line, char **root, char **mnt)
{
	char *sep = strstr(line, " - "), *save = NULL, *f;
	int i = 0;

	if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
		return false;
	*sep = '\0';
	*root = *mnt = NULL;
	for (f = strtok_r(line, " ", &save); f; f = strtok_r(NULL, " ", &save), i++) {
		if (i == 3)
			*root = f;
		else if (i == 4)
			*mnt = f;
	}
	return *root && *mnt;
}

int lw_cgroup2_mount_parse(const char *mountinfo, char *buf, size_t len)
{
	char line[4096], first[4096] = "";
	FILE *f = fopen(mountinfo, "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *root, *mnt;

		if (!line_is_cgroup2(line, &root, &mnt))
			continue;
		if (!strcmp(root, "/")) {
			err = unescape(mnt, buf, len);
			goto out;
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s", mnt);
	}
	if (first[0])
		err = unescape(first, buf, len);
out:
	fclose(f);
	return err;
}

int lw_cgroup2_mount(const char *root, char *buf, size_t len)
{
	char path[4096];
	int err = lw_sysfs_path(path, sizeof(path), root, "/proc/self/mountinfo");

	return err ? err : lw_cgroup2_mount_parse(path, buf, len);
}

bool lw_cgroup_path_ok(const char *path)
{
	const char *p = path;

	if (!p || *p != '/')
		return false;
	if (!p[1])
		return true;
	while (*p == '/') {
		const char *end = strchr(p + 1, '/');
		size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);

		if (!n || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return false;
		p += n + 1;
	}
	return !*p;
}

static int only_dirs(const struct dirent *de)
{
	return de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
}

/* The breadth-first search's queue: paths relative to the mount. */
struct queue {
	char **rel;
	int *depth;
	size_t n, head, cap;
};

static int queue_push(struct queue *q, const char *rel, int depth)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 64;
		char **r = realloc(q->rel, cap * sizeof(*r));
		int *d;

		if (!r)
			return -ENOMEM;
		q->rel = r;
		d = realloc(q->depth, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		q->depth = d;
		q->cap = cap;
	}
	q->rel[q->n] = strdup(rel);
	if (!q->rel[q->n])
		return -ENOMEM;
	q->depth[q->n++] = depth;
	return 0;
}

static void queue_free(struct queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->rel[i]);
	free(q->rel);
	free(q->depth);
}

/* The subdirectories of dir/rel into the queue; the one named unit found
 * among them: 1, with its path in out. */
static int visit(struct queue *q, const char *dir, const char *rel, int depth, const char *unit,
		 char *out, size_t len)
{
	char path[4096], sub[4096];
	struct dirent **names;
	int n, ret = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s%s", dir, rel) >= sizeof(path))
		return 0; /* too deep to name: not searched */
	n = scandir(path, &names, only_dirs, alphasort);
	if (n < 0)
		return depth ? 0 : -errno; /* a cgroup gone meanwhile is no error */
	for (int i = 0; i < n; i++) {
		bool fits = (size_t)snprintf(sub, sizeof(sub), "%s/%s", rel, names[i]->d_name) <
			    sizeof(sub);

		if (fits && !ret && !strcmp(names[i]->d_name, unit)) {
			ret = snprintf(out, len, "%s", sub) < (int)len ? 1 : -ENAMETOOLONG;
		} else if (fits && !ret && depth + 1 < LW_CGROUP_DEPTH) {
			ret = queue_push(q, sub, depth + 1);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int lw_cgroup_find_unit(const char *dir, const char *unit, char *rel, size_t len)
{
	struct queue q = {};
	int ret = queue_push(&q, "", 0);

	while (!ret && q.head < q.n) {
		size_t i = q.head++;

		ret = visit(&q, dir, q.rel[i], q.depth[i], unit, rel, len);
	}
	queue_free(&q);
	if (ret == 1)
		return 0;
	return ret ? ret : -ENOENT;
}

int lw_cgroup_id(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = {.fh.handle_bytes = sizeof(__u64)};
	int mount_id;

	/* kernfs' file handle is the node's 64-bit id (bpftool does the same) */
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

int lw_cgroup_procs(const char *path, int *pids, int max)
{
	char file[4096];
	FILE *f;
	int n = 0, pid;

	if ((size_t)snprintf(file, sizeof(file), "%s/cgroup.procs", path) >= sizeof(file))
		return -ENAMETOOLONG;
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%d", &pid) == 1) {
		if (n < max)
			pids[n] = pid;
		n++;
	}
	fclose(f);
	return n;
}

/* One level of lw_cgroup_procs_tree(): path's own, then each child's. */
static int procs_tree(const char *path, int *pids, int max, int depth)
{
	int n = lw_cgroup_procs(path, pids, max), k;
	struct dirent *e;
	DIR *d;

	if (depth >= LW_CGROUP_DEPTH)
		return n;
	d = opendir(path);
	if (!d)
		return n;
	if (n < 0)
		n = 0; /* no processes file of its own (a fixture): its children's */
	while ((e = readdir(d))) {
		char sub[4096];

		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub))
			continue;
		k = procs_tree(sub, pids + (n < max ? n : max), max > n ? max - n : 0, depth + 1);
		if (k > 0)
			n += k;
	}
	closedir(d);
	return n;
}

int lw_cgroup_procs_tree(const char *path, int *pids, int max)
{
	return procs_tree(path, pids, max, 0);
}

int lw_proc_cgroups_parse(FILE *f, struct lw_proc_cgroups *cg)
{
	char *line = NULL;
	size_t cap = 0;
	bool any = false;

	memset(cg, 0, sizeof(*cg));
	while (getline(&line, &cap, f) > 0) {
		char *ctl = strchr(line, ':');
		char *p = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!p)
			continue;
		*p++ = '\0';
		ctl++;
		lw_rtrim(p);
		any = true;
		if (!*ctl) { /* "0::/path": v2 */
			snprintf(cg->v2, sizeof(cg->v2), "%s", p);
			continue;
		}
		/* a controller is in one hierarchy only */
		if (lw_list_has(ctl, "cpu")) {
			snprintf(cg->cpu_ctls, sizeof(cg->cpu_ctls), "%s", ctl);
			snprintf(cg->cpu, sizeof(cg->cpu), "%s", p);
		}
		if (lw_list_has(ctl, "cpuset"))
			snprintf(cg->cpuset, sizeof(cg->cpuset), "%s", p);
		if (lw_list_has(ctl, "memory"))
			snprintf(cg->memory, sizeof(cg->memory), "%s", p);
	}
	free(line);
	return any ? 0 : -ENOENT;
}
