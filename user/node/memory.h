/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* memory.h - the target's memory cgroup and allocator (memory.c). */
#ifndef LW_NODE_MEMORY_H
#define LW_NODE_MEMORY_H

#include <stdbool.h>

struct lw_memcg {
	int v;		/* 1 (v1's memory hierarchy), 2; 0 not found */
	char path[256]; /* cgroup path, "/system.slice/x.service" */
	char dir[512];	/* its directory on the node (read below root) */
	long long max;	/* v2 memory.max, v1 limit_in_bytes; -1 none */
	long long high; /* v2 memory.high; -1 none (v1: none) */
	unsigned long long usage;
	/* v2 memory.events' high, max, oom; v1: failcnt as max */
	unsigned long long ev_high, ev_max, ev_oom;
};

/* The memory cgroup of process pid below root: 0, -1 when not found. */
int lw_memcg_read(const char *root, int pid, struct lw_memcg *m);

enum lw_allocator {
	LW_ALLOC_UNKNOWN = 0, /* maps unreadable */
	LW_ALLOC_GLIBC,	      /* no other allocator mapped */
	LW_ALLOC_JEMALLOC,
	LW_ALLOC_TCMALLOC,
};

/* The allocator pid's mappings show (a statically linked one is not seen). */
enum lw_allocator lw_allocator_of(const char *root, int pid);

/* /proc/sys/vm/NAME below root as a number; -1 unreadable. */
long long lw_vm_sysctl(const char *root, const char *name);

/* The node's zones from /proc/zoneinfo below root, summed: free pages and
 * the min, low, high watermarks (pages). 0, -1 when unreadable. */
struct lw_zones {
	unsigned long long free, min, low, high;
	int zones;
};
int lw_zoneinfo_read(const char *root, struct lw_zones *z);

/* The kswapd threads' CPU time so far (utime + stime of each /proc/PID/stat
 * whose comm is kswapdN), in ns, and how many: 0, -1 when none found. */
int lw_kswapd_ns(const char *root, unsigned long long *ns, int *count);

#endif /* LW_NODE_MEMORY_H */
