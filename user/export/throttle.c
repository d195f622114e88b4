// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * throttle.c - latwhy_cgroup_cpu_*: each target's CPU bandwidth control
 * (the CFS quota, cpu.max or cpu.cfs_quota_us) as the kernel counts it in
 * the cpu.stat of the target's cgroup, and the quota itself.
 *
 * The kernel counts whether latwhy's programs are attached or not, and the
 * tracer ticks only while they are (3 s of every 90 by default): so the
 * tracing thread only says, at its ticks, which cgroup the target's first
 * process is in, and each scrape reads that cgroup (three small files a
 * target). A target whose cgroup has no cpu controller has no series; one
 * that was read goes on from where it was while it cannot be read.
 *
 * Plain stdio, not node/sysfs.c: a scrape's reads are no part of any
 * capture's node snapshot (sysfs.c records the snapshotting thread's only).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export/export_int.h"
#include "node/cgroup.h"

/* The node root as a path prefix: "/" is the live node, no prefix. */
static const char *root_prefix(const char *root)
{
	return root && strcmp(root, "/") ? root : "";
}

static int join(char *buf, size_t len, const char *a, const char *b, const char *c, const char *d)
{
	int n = snprintf(buf, len, "%s%s%s%s", a, b, c, d);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A v1 or v2 cgroup path as a suffix: the root cgroup adds nothing. */
static const char *cg_suffix(const char *path)
{
	return strcmp(path, "/") ? path : "";
}

/*
 * The rules of node/target.c, so serve reads the cgroup `latwhy check`
 * judges: the v1 hierarchy that has the cpu controller, when one has it
 * (a controller is in one hierarchy only), at /sys/fs/cgroup/<its
 * controllers>; else the v2 one, mounted on /sys/fs/cgroup (it holds
 * cgroup.controllers there) or, in hybrid setups, on /sys/fs/cgroup/unified.
 */
int lw_export_cgroup_dir(const char *root, int pid, char *dir, size_t len, bool *v1)
{
	const char *r = root_prefix(root);
	struct lw_proc_cgroups cg;
	char path[PATH_MAX];
	struct stat st;
	int err;
	FILE *f;

	dir[0] = '\0';
	if (pid <= 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/proc/%d/cgroup", r, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = lw_proc_cgroups_parse(f, &cg);
	fclose(f);
	if (err)
		return err;
	if (cg.cpu_ctls[0]) {
		*v1 = true;
		err = join(dir, len, r, "/sys/fs/cgroup/", cg.cpu_ctls, cg_suffix(cg.cpu));
	} else if (cg.v2[0]) {
		snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cgroup.controllers", r);
		*v1 = false;
		err = join(dir, len, r,
			   stat(path, &st) ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup", "",
			   cg_suffix(cg.v2));
	} else {
		err = -ENOENT;
	}
	if (err)
		dir[0] = '\0';
	return err;
}

/* The first line of dir/name. */
static int read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	int err = 0;
	FILE *f;

	if (join(path, sizeof(path), dir, "/", name, ""))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = -ENODATA;
	fclose(f);
	return err;
}

/* The three bandwidth counters of cpu.stat: all there, or no cpu
 * controller (v2's cpu.stat has usage_usec without it, and the root's never
 * has them). v1 counts the throttled time in ns, v2 in us. */
static int read_stat(const char *dir, bool v1, struct lw_cgroup_cpu *r)
{
	enum { PERIODS = 1, THROTTLED = 2, TIME = 4 };
	char path[PATH_MAX], key[64], *line = NULL;
	unsigned long long v;
	unsigned have = 0;
	size_t cap = 0;
	FILE *f;

	if (join(path, sizeof(path), dir, "/cpu.stat", "", ""))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%63s %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, "nr_periods")) {
			r->periods = v;
			have |= PERIODS;
		} else if (!strcmp(key, "nr_throttled")) {
			r->throttled = v;
			have |= THROTTLED;
		} else if (v1 && !strcmp(key, "throttled_time")) {
			r->throttled_ns = v;
			have |= TIME;
		} else if (!v1 && !strcmp(key, "throttled_usec")) {
			r->throttled_ns = v * 1000ULL;
			have |= TIME;
		}
	}
	free(line);
	fclose(f);
	return have == (PERIODS | THROTTLED | TIME) ? 0 : -ENODATA;
}

/* v2 cpu.max "QUOTA PERIOD" ("max PERIOD": none); v1 cpu.cfs_quota_us (-1:
 * none) over cpu.cfs_period_us. Unreadable: left at 0, no quota known. */
static void read_quota(const char *dir, bool v1, struct lw_cgroup_cpu *r)
{
	char buf[64], word[32];
	unsigned long long quota = 0, period = 0;
	long long q;

	if (!v1) {
		if (read_line(dir, "cpu.max", buf, sizeof(buf)) ||
		    sscanf(buf, "%31s %llu", word, &period) != 2 ||
		    sscanf(word, "%llu", &quota) != 1)
			return;
	} else {
		if (read_line(dir, "cpu.cfs_quota_us", buf, sizeof(buf)) ||
		    sscanf(buf, "%lld", &q) != 1 || q <= 0 ||
		    read_line(dir, "cpu.cfs_period_us", buf, sizeof(buf)) ||
		    sscanf(buf, "%llu", &period) != 1)
			return;
		quota = q;
	}
	if (quota && period) {
		r->quota_us = quota;
		r->period_us = period;
	}
}

int lw_export_cgroup_read(const char *dir, bool v1, struct lw_cgroup_cpu *r)
{
	struct stat st;
	int err;

	memset(r, 0, sizeof(*r));
	if (stat(dir, &st))
		return -errno;
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	err = read_stat(dir, v1, r);
	if (!err)
		read_quota(dir, v1, r);
	return err;
}

/* What a counter added since before; lower than before, it started again
 * (the kernel's do not, but an inode number used again would look so). */
static __u64 added(__u64 now, __u64 before)
{
	return now >= before ? now - before : now;
}

void lw_export_cg_account(struct lw_export_cg *cg, const struct lw_cgroup_cpu *r)
{
	struct lw_export_cg_known *k = NULL;

	for (int i = 0; i < LW_EXPORT_CG_KNOWN && !k; i++)
		if (cg->known[i].ino && cg->known[i].dev == r->dev && cg->known[i].ino == r->ino)
			k = &cg->known[i];
	if (!k) { /* not read before: all it counted since it was made */
		k = &cg->known[cg->next_known];
		cg->next_known = (cg->next_known + 1) % LW_EXPORT_CG_KNOWN;
		*k = (struct lw_export_cg_known){.dev = r->dev, .ino = r->ino};
	}
	cg->periods += added(r->periods, k->periods);
	cg->throttled += added(r->throttled, k->throttled);
	cg->throttled_ns += added(r->throttled_ns, k->throttled_ns);
	k->periods = r->periods;
	k->throttled = r->throttled;
	k->throttled_ns = r->throttled_ns;
	cg->quota_us = r->quota_us;
	cg->period_us = r->period_us;
	cg->seen = true;
}

void lw_export_series_pid(struct lw_export *x, int series, int pid)
{
	char dir[PATH_MAX];
	bool v1 = false;

	if (series < 0 || series >= x->nser)
		return;
	/* read here, not under the lock: a scrape never waits for /proc */
	if (lw_export_cgroup_dir(x->node_root, pid, dir, sizeof(dir), &v1))
		dir[0] = '\0';
	pthread_mutex_lock(&x->cg_lock);
	memcpy(x->cg[series].dir, dir, strlen(dir) + 1);
	x->cg[series].v1 = v1;
	pthread_mutex_unlock(&x->cg_lock);
}

void lw_export_cgroup_forget(struct lw_export *x)
{
	pthread_mutex_lock(&x->cg_lock);
	for (int i = 0; i < LW_MAX_TARGETS; i++) {
		x->cg[i].dir[0] = '\0';
		x->cg[i].quota_us = x->cg[i].period_us = 0;
	}
	pthread_mutex_unlock(&x->cg_lock);
}

/* Read now. Gone, or no controller there now: the counters hold (they
 * never go back), the quota is not known. */
static void cg_refresh(struct lw_export_cg *cg)
{
	struct lw_cgroup_cpu r;

	if (cg->dir[0] && !lw_export_cgroup_read(cg->dir, cg->v1, &r)) {
		lw_export_cg_account(cg, &r);
		return;
	}
	cg->quota_us = cg->period_us = 0;
}

enum cg_family { CG_PERIODS, CG_THROTTLED, CG_THROTTLED_SECONDS, CG_QUOTA, CG_FAMILIES };

static const struct {
	const char *name, *type, *help;
} cg_families[CG_FAMILIES] = {
	[CG_PERIODS] = {"latwhy_cgroup_cpu_periods_total", "counter",
			"CPU bandwidth periods of the target's cgroup that elapsed while it ran "
			"(cpu.stat nr_periods)."},
	[CG_THROTTLED] = {"latwhy_cgroup_cpu_throttled_periods_total", "counter",
			  "Of those, the periods the cgroup spent its CPU quota in and was "
			  "throttled (nr_throttled)."},
	[CG_THROTTLED_SECONDS] = {"latwhy_cgroup_cpu_throttled_seconds_total", "counter",
				  "Time the cgroup's CPUs held it throttled, summed over CPUs "
				  "(throttled_usec; v1 throttled_time)."},
	[CG_QUOTA] = {"latwhy_cgroup_cpu_quota_cores", "gauge",
		      "The cgroup's CPU quota over its period, in CPUs (cpu.max, "
		      "cpu.cfs_quota_us); absent when unlimited."},
};

static bool cg_has(const struct lw_export_cg *cg, enum cg_family k)
{
	return k == CG_QUOTA ? cg->quota_us && cg->period_us : cg->seen;
}

static void cg_value(FILE *f, const struct lw_export_cg *cg, enum cg_family k)
{
	switch (k) {
	case CG_PERIODS:
		fprintf(f, "%llu\n", (unsigned long long)cg->periods);
		break;
	case CG_THROTTLED:
		fprintf(f, "%llu\n", (unsigned long long)cg->throttled);
		break;
	case CG_THROTTLED_SECONDS:
		lw_export_seconds(f, cg->throttled_ns);
		break;
	default:
		fprintf(f, "%.9g\n", (double)cg->quota_us / (double)cg->period_us);
	}
}

void lw_export_cgroup_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c)
{
	pthread_mutex_lock(&x->cg_lock);
	for (int i = 0; i < c->nseries; i++)
		cg_refresh(&x->cg[i]);
	for (int k = 0; k < CG_FAMILIES; k++) {
		bool head = false;

		for (int i = 0; i < c->nseries; i++) {
			if (!cg_has(&x->cg[i], k) || c->s[i].lab.dead)
				continue;
			if (!head)
				lw_export_family(f, cg_families[k].name, cg_families[k].type,
						 cg_families[k].help);
			head = true;
			lw_export_series_name(f, cg_families[k].name, &c->s[i].lab);
			fputs("} ", f);
			cg_value(f, &x->cg[i], k);
		}
	}
	pthread_mutex_unlock(&x->cg_lock);
}
