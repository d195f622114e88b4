// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * memory.c - the target's memory cgroup and what allocates its memory, for
 * the memory advisor (advice/memory.c): the group's limit (v2 memory.max and
 * memory.high, v1 memory.limit_in_bytes), usage and events (v2
 * memory.events, v1 memory.failcnt), read below root like every reader
 * here; and which allocator its mappings show (jemalloc, tcmalloc, else
 * glibc's malloc). Every path is built by lw_sysfs_path(), so a capture's
 * node snapshot holds what was read (lw_node_read() reads the group), and
 * `report` elsewhere finds the same group. And the node's free memory
 * against its watermarks (/proc/zoneinfo) and kswapd's CPU time, which the
 * tracer samples at each snapshot (LW_REC_MEMORY's node part).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/cgroup.h"
#include "node/memory.h"
#include "node/sysfs.h"

static const char *root_of(const char *root)
{
	return root && strcmp(root, "/") ? root : "";
}

/* root + p, recorded for a snapshot; "" when too long (no such file) */
static void path_join(char *buf, size_t len, const char *root, const char *p)
{
	if (lw_sysfs_path(buf, len, root_of(root), "%s", p))
		buf[0] = 0;
}

/* The first line of file dir/name below root, newline cut; false when
 * unreadable. */
static bool read_line(const char *root, const char *dir, const char *name, char *buf, size_t len)
{
	char p[1024];
	FILE *f;
	bool ok;

	if (lw_sysfs_path(p, sizeof(p), root_of(root), "%s/%s", dir, name))
		return false;
	f = fopen(p, "r");
	if (!f)
		return false;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* "max" or a byte count: -1 for none. */
static long long bytes_of(const char *s)
{
	unsigned long long v;

	if (!strcmp(s, "max") || sscanf(s, "%llu", &v) != 1)
		return -1;
	/* v1's "no limit" is PAGE_COUNTER_MAX pages: over 2^62 */
	return v >= (1ULL << 62) ? -1 : (long long)v;
}

static void read_v2(const char *root, struct lw_memcg *m)
{
	char line[128], p[1024];
	FILE *f;

	if (read_line(root, m->dir, "memory.max", line, sizeof(line)))
		m->max = bytes_of(line);
	if (read_line(root, m->dir, "memory.high", line, sizeof(line)))
		m->high = bytes_of(line);
	if (read_line(root, m->dir, "memory.current", line, sizeof(line)))
		m->usage = strtoull(line, NULL, 10);
	if (lw_sysfs_path(p, sizeof(p), root_of(root), "%s/memory.events", m->dir))
		return;
	f = fopen(p, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char k[32];

		if (sscanf(line, "%31s %llu", k, &v) != 2)
			continue;
		if (!strcmp(k, "high"))
			m->ev_high = v;
		else if (!strcmp(k, "max"))
			m->ev_max = v;
		else if (!strcmp(k, "oom"))
			m->ev_oom = v;
	}
	fclose(f);
}

static void read_v1(const char *root, struct lw_memcg *m)
{
	char line[128];

	if (read_line(root, m->dir, "memory.limit_in_bytes", line, sizeof(line)))
		m->max = bytes_of(line);
	if (read_line(root, m->dir, "memory.usage_in_bytes", line, sizeof(line)))
		m->usage = strtoull(line, NULL, 10);
	if (read_line(root, m->dir, "memory.failcnt", line, sizeof(line)))
		m->ev_max = strtoull(line, NULL, 10);
}

int lw_memcg_read(const char *root, int pid, struct lw_memcg *m)
{
	char p[1024], line[512], v2path[256] = "", mnt[256];
	bool v1 = false;
	FILE *f;

	memset(m, 0, sizeof(*m));
	m->max = m->high = -1;
	snprintf(line, sizeof(line), "/proc/%d/cgroup", pid);
	path_join(p, sizeof(p), root, line);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		c2[strcspn(c2, "\n")] = 0;
		*c2 = 0;
		if (!strcmp(c1 + 1, "memory")) { /* v1's memory hierarchy */
			snprintf(m->path, sizeof(m->path), "%s", c2 + 1);
			v1 = true;
		} else if (!strncmp(line, "0:", 2) && !c1[1]) {
			snprintf(v2path, sizeof(v2path), "%s", c2 + 1);
		}
	}
	fclose(f);
	if (v1) {
		m->v = 1;
		snprintf(m->dir, sizeof(m->dir), "/sys/fs/cgroup/memory%s", m->path);
		read_v1(root, m);
		return 0;
	}
	if (!*v2path || lw_cgroup2_mount(root, mnt, sizeof(mnt)))
		return -1;
	m->v = 2;
	snprintf(m->path, sizeof(m->path), "%s", v2path);
	snprintf(m->dir, sizeof(m->dir), "%s%s", mnt, v2path);
	read_v2(root, m);
	return 0;
}

enum lw_allocator lw_allocator_of(const char *root, int pid)
{
	enum lw_allocator a = LW_ALLOC_GLIBC;
	char p[1024], line[640];
	FILE *f;

	snprintf(line, sizeof(line), "/proc/%d/maps", pid);
	path_join(p, sizeof(p), root, line);
	f = fopen(p, "r");
	if (!f)
		return LW_ALLOC_UNKNOWN;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "libjemalloc")) {
			a = LW_ALLOC_JEMALLOC;
			break;
		}
		if (strstr(line, "libtcmalloc")) {
			a = LW_ALLOC_TCMALLOC;
			break;
		}
	}
	fclose(f);
	return a;
}

long long lw_vm_sysctl(const char *root, const char *name)
{
	char p[1024], rel[128], line[64];
	long long v = -1;
	FILE *f;

	snprintf(rel, sizeof(rel), "/proc/sys/vm/%s", name);
	path_join(p, sizeof(p), root, rel);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int lw_zoneinfo_read(const char *root, struct lw_zones *z)
{
	char p[1024], line[256];
	FILE *f;

	memset(z, 0, sizeof(*z));
	path_join(p, sizeof(p), root, "/proc/zoneinfo");
	f = *p ? fopen(p, "r") : NULL;
	if (!f)
		return -1;
	/* per zone: "  pages free N", then "        min N", "low", "high" */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char k[32];

		if (sscanf(line, " pages free %llu", &v) == 1) {
			z->free += v;
			z->zones++;
		} else if (sscanf(line, " %31s %llu", k, &v) == 2) {
			if (!strcmp(k, "min"))
				z->min += v;
			else if (!strcmp(k, "low"))
				z->low += v;
			else if (!strcmp(k, "high"))
				z->high += v;
		}
	}
	fclose(f);
	return z->zones ? 0 : -1;
}

/* The "(comm)" of a /proc/PID/stat line and the utime + stime after it. */
static bool stat_comm_ticks(const char *line, char *comm, size_t len, unsigned long long *ticks)
{
	const char *o = strchr(line, '('), *c = strrchr(line, ')');
	unsigned long long ut, st;

	if (!o || !c || c < o || (size_t)(c - o - 1) >= len)
		return false;
	memcpy(comm, o + 1, c - o - 1);
	comm[c - o - 1] = 0;
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime */
	if (sscanf(c + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return false;
	*ticks = ut + st;
	return true;
}

int lw_kswapd_ns(const char *root, unsigned long long *ns, int *count)
{
	char p[1024], line[512], comm[64];
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long sum = 0;
	struct dirent *d;
	DIR *dir;

	*ns = 0;
	*count = 0;
	/* the listing is not recorded: only the kswapd threads' stat files
	 * are (below), so a snapshot's /proc holds them and the target's */
	snprintf(p, sizeof(p), "%s/proc", root_of(root));
	dir = opendir(p);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		unsigned long long t;
		FILE *f;

		if (!lw_is_number(d->d_name))
			continue;
		snprintf(p, sizeof(p), "%s/proc/%s/stat", root_of(root), d->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		if (!stat_comm_ticks(line, comm, sizeof(comm), &t) || strncmp(comm, "kswapd", 6))
			continue;
		if (lw_sysfs_path(p, sizeof(p), root_of(root), "/proc/%s/stat", d->d_name))
			continue;
		sum += t;
		(*count)++;
	}
	closedir(dir);
	*ns = hz > 0 ? sum * (1000000000ULL / (unsigned long long)hz) : 0;
	return *count ? 0 : -1;
}
