// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * memory.c - the target's memory cgroup and what allocates its memory, for
 * the memory advisor (advice/memory.c): the group's limit (v2 memory.max and
 * memory.high, v1 memory.limit_in_bytes), usage and events (v2
 * memory.events, v1 memory.failcnt), read below root like every reader
 * here; and which allocator its mappings show (jemalloc, tcmalloc, else
 * glibc's malloc). Not in a capture's snapshot yet: `report` reads none and
 * the advisor says what to check instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/cgroup.h"
#include "node/memory.h"

static void path_join(char *buf, size_t len, const char *root, const char *p)
{
	if (snprintf(buf, len, "%s%s", root && strcmp(root, "/") ? root : "", p) >= (int)len)
		buf[0] = 0; /* too long: no such file */
}

/* The first line of file dir/name, newline cut; false when unreadable. */
static bool read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char p[1024];
	FILE *f;
	bool ok;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
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

static void read_v2(struct lw_memcg *m)
{
	char line[128], p[1024];
	FILE *f;

	if (read_line(m->dir, "memory.max", line, sizeof(line)))
		m->max = bytes_of(line);
	if (read_line(m->dir, "memory.high", line, sizeof(line)))
		m->high = bytes_of(line);
	if (read_line(m->dir, "memory.current", line, sizeof(line)))
		m->usage = strtoull(line, NULL, 10);
	snprintf(p, sizeof(p), "%s/memory.events", m->dir);
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

static void read_v1(struct lw_memcg *m)
{
	char line[128];

	if (read_line(m->dir, "memory.limit_in_bytes", line, sizeof(line)))
		m->max = bytes_of(line);
	if (read_line(m->dir, "memory.usage_in_bytes", line, sizeof(line)))
		m->usage = strtoull(line, NULL, 10);
	if (read_line(m->dir, "memory.failcnt", line, sizeof(line)))
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
		snprintf(line, sizeof(line), "/sys/fs/cgroup/memory%s", m->path);
		path_join(m->dir, sizeof(m->dir), root, line);
		read_v1(m);
		return 0;
	}
	if (!*v2path || lw_cgroup2_mount(root, mnt, sizeof(mnt)))
		return -1;
	m->v = 2;
	snprintf(m->path, sizeof(m->path), "%s", v2path);
	snprintf(line, sizeof(line), "%s%s", mnt, v2path);
	path_join(m->dir, sizeof(m->dir), root, line);
	read_v2(m);
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
