// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cglimit.c - the CPU limits on the target's cgroup path: its own cgroup and
 * every parent below the root, each one's quota, burst and throttling, what
 * owns it (a unit, a container, a pod), and the one that binds.
 *
 * CFS bandwidth control checks the quota of every level a task's cgroup
 * hangs below: a Kubernetes pod's slice above its container's scope, a
 * systemd slice above its service. The kernel counts each level's own
 * throttling in that level's cpu.stat; a level with no quota counts none,
 * even while a parent's quota stops its tasks (v1 and v2 alike), so the
 * level that throttled is the one whose counters grew.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "node/read.h"

const char *lw_cg_owner_name(enum lw_cg_owner o)
{
	static const char *const names[] = {
		[LW_CG_PLAIN] = "cgroup",
		[LW_CG_UNIT] = "unit",
		[LW_CG_USER_UNIT] = "user unit",
		[LW_CG_DOCKER] = "docker container",
		[LW_CG_PODMAN] = "podman container",
		[LW_CG_CONTAINER] = "container",
		[LW_CG_KUBEPODS] = "kubepods",
		[LW_CG_POD] = "pod",
		[LW_CG_POD_CTR] = "pod container",
	};

	return (unsigned)o < sizeof(names) / sizeof(names[0]) ? names[o] : "cgroup";
}

/* A container id: 12 or more hex digits, the whole of s up to end. */
static bool hex_id(const char *s, const char *end)
{
	if (end - s < 12)
		return false;
	for (; s < end; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

/* "PREFIX<id>SUFFIX" with a hex id: the id into name. */
static bool wrapped_id(const char *comp, const char *prefix, const char *suffix, char *name,
		       size_t len)
{
	size_t c = strlen(comp), p = strlen(prefix), s = strlen(suffix);
	const char *id = comp + p, *end = comp + c - s;

	if (c <= p + s || strncmp(comp, prefix, p) || strcmp(end, suffix) || !hex_id(id, end))
		return false;
	snprintf(name, len, "%.*s", (int)(end - id), id);
	return true;
}

/* A pod's uid out of "...pod<uid>[.slice]": the systemd driver writes its
 * dashes as underscores, the cgroupfs driver keeps them. */
static bool pod_uid(const char *comp, char *name, size_t len)
{
	const char *p = comp, *end;
	size_t n;

	/* "kubepods-pod<uid>.slice": the "pod" after a dash, not kubepods' */
	while ((p = strstr(p, "pod")) && p != comp && p[-1] != '-')
		p += 3;
	if (!p)
		return false;
	p += 3;
	end = strstr(p, ".slice");
	n = end ? (size_t)(end - p) : strlen(p);
	if (n < 32 || n >= len || (end && end[6]))
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i] == '_' ? '-' : p[i];

		if (!isxdigit((unsigned char)ch) && ch != '-')
			return false;
		name[i] = ch;
	}
	name[n] = '\0';
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), k = strlen(suffix);

	return l > k && !strcmp(s + l - k, suffix);
}

/* The container runtimes' names for a container's cgroup. */
static bool container_id(const char *comp, char *name, size_t len)
{
	static const char *const scopes[] = {"cri-containerd-", "crio-", "docker-", "libpod-"};

	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		if (wrapped_id(comp, scopes[i], ".scope", name, len) ||
		    wrapped_id(comp, scopes[i], "", name, len))
			return true;
	return wrapped_id(comp, "", "", name, len);
}

/* The QoS class level of the kubelet: "kubepods-burstable.slice", "burstable". */
static const char *qos_class(const char *comp)
{
	if (!strcmp(comp, "kubepods-burstable.slice") || !strcmp(comp, "burstable"))
		return "Burstable";
	if (!strcmp(comp, "kubepods-besteffort.slice") || !strcmp(comp, "besteffort"))
		return "BestEffort";
	return NULL;
}

/* What owns the cgroup named comp, below a parent owned by up (its name
 * upname): the names the kubelet, the container runtimes and systemd give. */
static enum lw_cg_owner classify(const char *comp, enum lw_cg_owner up, const char *upname,
				 bool user, char *name, size_t len)
{
	const char *qos = qos_class(comp);

	name[0] = '\0';
	if (!strcmp(comp, "kubepods") || !strcmp(comp, "kubepods.slice"))
		return LW_CG_KUBEPODS;
	if (up == LW_CG_KUBEPODS && qos) {
		snprintf(name, len, "%s", qos);
		return LW_CG_KUBEPODS;
	}
	if (up == LW_CG_KUBEPODS && pod_uid(comp, name, len))
		return LW_CG_POD;
	if (up == LW_CG_POD)
		return container_id(comp, name, len) ? LW_CG_POD_CTR : LW_CG_PLAIN;
	if (wrapped_id(comp, "docker-", ".scope", name, len) ||
	    (!strcmp(upname, "docker") && wrapped_id(comp, "", "", name, len)))
		return LW_CG_DOCKER;
	if (wrapped_id(comp, "libpod-", ".scope", name, len))
		return LW_CG_PODMAN;
	if (wrapped_id(comp, "cri-containerd-", ".scope", name, len) ||
	    wrapped_id(comp, "crio-", ".scope", name, len))
		return LW_CG_CONTAINER;
	if (ends_with(comp, ".service") || ends_with(comp, ".slice") || ends_with(comp, ".scope")) {
		snprintf(name, len, "%s", comp);
		return user ? LW_CG_USER_UNIT : LW_CG_UNIT;
	}
	return LW_CG_PLAIN;
}

enum lw_cg_owner lw_cg_classify(const char *comp, enum lw_cg_owner up, char *name, size_t len)
{
	return classify(comp, up, "", false, name, len);
}

/* Each level's owner, from the root down: a level's kind depends on its
 * parent's (a bare id is a container only under /docker or a pod). */
static void classify_levels(struct lw_target *t)
{
	enum lw_cg_owner up = LW_CG_PLAIN;
	char upname[96] = "";
	bool user = false;

	for (int i = t->nr_cg - 1; i >= 0; i--) {
		struct lw_cg_level *l = &t->cg[i];
		const char *comp = strrchr(l->path, '/');

		comp = comp ? comp + 1 : l->path;
		if (!*comp) /* the root */
			continue;
		l->owner = classify(comp, up, upname, user, l->name, sizeof(l->name));
		if (l->owner == LW_CG_KUBEPODS && l->name[0])
			snprintf(t->pod_qos, sizeof(t->pod_qos), "%s", l->name);
		else if (l->owner == LW_CG_POD && !t->pod_qos[0])
			snprintf(t->pod_qos, sizeof(t->pod_qos), "Guaranteed");
		/* units below user@UID.service are its manager's, not PID 1's */
		user = user || !strncmp(comp, "user@", 5);
		up = l->owner;
		snprintf(upname, sizeof(upname), "%s", comp);
	}
}

static void read_stat(const char *root, struct lw_cg_level *l, bool v1)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (lw_sysfs_path(path, sizeof(path), root, "%s/cpu.stat", l->dir))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	l->has_stat = true;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long v;
		char key[64];

		if (sscanf(line, "%63s %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, "nr_periods"))
			l->nr_periods = v;
		else if (!strcmp(key, "nr_throttled"))
			l->nr_throttled = v;
		else if (!strcmp(key, "throttled_usec"))
			l->throttled_usec = v;
		else if (v1 && !strcmp(key, "throttled_time"))
			l->throttled_usec = v / 1000; /* v1 counts ns */
		else if (!strcmp(key, "nr_bursts"))
			l->nr_bursts = (long long)v;
		else if (!strcmp(key, "burst_usec"))
			l->burst_usec = (long long)v;
		else if (v1 && !strcmp(key, "burst_time"))
			l->burst_usec = (long long)(v / 1000);
	}
	free(line);
	fclose(f);
}

static void read_level_v2(const char *root, struct lw_cg_level *l)
{
	char q[32];
	unsigned long long period = 0;

	if (!lw_sysfs_read(root, l->cpu_max, sizeof(l->cpu_max), "%s/cpu.max", l->dir) &&
	    sscanf(l->cpu_max, "%31s %llu", q, &period) >= 1) {
		l->period_us = period;
		l->quota_us = strcmp(q, "max") ? atoll(q) : -1;
	}
	READ_NUM(root, l->burst_us, -1, "%s/cpu.max.burst", l->dir);
	read_stat(root, l, false);
}

static void read_level_v1(const char *root, struct lw_cg_level *l)
{
	if (lw_sysfs_read(root, l->cpu_max, sizeof(l->cpu_max), "%s/cpu.cfs_quota_us", l->dir) ||
	    READ_NUM(root, l->quota_us, -1, "%s/cpu.cfs_quota_us", l->dir))
		l->quota_us = -1;
	READ_NUM(root, l->period_us, 0, "%s/cpu.cfs_period_us", l->dir);
	READ_NUM(root, l->burst_us, -1, "%s/cpu.cfs_burst_us", l->dir);
	read_stat(root, l, true);
}

static bool has_quota(const struct lw_cg_level *l)
{
	return l->quota_us > 0 && l->period_us > 0 && l->cpu_max[0];
}

/* a binds rather than b: throttled longer, more often, else tighter. */
static bool binds_before(const struct lw_cg_level *a, const struct lw_cg_level *b)
{
	if (a->throttled_usec != b->throttled_usec)
		return a->throttled_usec > b->throttled_usec;
	if (a->nr_throttled != b->nr_throttled)
		return a->nr_throttled > b->nr_throttled;
	/* quota per period in CPUs, compared without dividing */
	return (unsigned long long)a->quota_us * b->period_us <
	       (unsigned long long)b->quota_us * a->period_us;
}

/* The binding limit, and the legacy fields filled from it. */
static void pick_binding(struct lw_target *t, bool v1)
{
	const struct lw_cg_level *l;

	t->cg_bind = -1;
	for (int i = 0; i < t->nr_cg; i++)
		if (has_quota(&t->cg[i]) &&
		    (t->cg_bind < 0 || binds_before(&t->cg[i], &t->cg[t->cg_bind])))
			t->cg_bind = i;
	l = &t->cg[t->cg_bind < 0 ? 0 : t->cg_bind];
	if (!l->cpu_max[0] ||
	    snprintf(t->cpu_max_path, sizeof(t->cpu_max_path), "%s/%s", l->dir,
		     v1 ? "cpu.cfs_quota_us" : "cpu.max") >= (int)sizeof(t->cpu_max_path)) {
		t->cpu_max_path[0] = '\0';
		return;
	}
	snprintf(t->cpu_max, sizeof(t->cpu_max), "%s", l->cpu_max);
	t->quota_us = l->quota_us;
	t->period_us = l->period_us;
	t->has_cpu_stat = l->has_stat;
	t->nr_periods = l->nr_periods;
	t->nr_throttled = l->nr_throttled;
	t->throttled_usec = l->throttled_usec;
}

/* cpu.stat.local (6.8+): v2 throttled_usec, v1 throttled_time in ns. */
static void read_local(const char *root, struct lw_target *t, bool v1)
{
	char b[128];
	unsigned long long v;

	t->local_throttled_usec = -1;
	if (lw_sysfs_read(root, b, sizeof(b), "%s/cpu.stat.local", t->cg[0].dir))
		return;
	if (sscanf(b, v1 ? "throttled_time %llu" : "throttled_usec %llu", &v) == 1)
		t->local_throttled_usec = (long long)(v1 ? v / 1000 : v);
}

int lw_node_read_cg_limits(struct lw_node *n, struct lw_target *t, const char *base, bool v1)
{
	char path[sizeof(t->cgroup)];

	snprintf(path, sizeof(path), "%s", t->cgroup);
	t->nr_cg = 0;
	/* the target's own cgroup, then each parent; the root only when it
	 * is the target's (no quota can be set there) */
	while (t->nr_cg < LW_CG_LEVELS) {
		struct lw_cg_level *l = &t->cg[t->nr_cg];
		bool top = !strcmp(path, "/") || !path[0];
		char *slash;

		memset(l, 0, sizeof(*l));
		l->quota_us = l->burst_us = l->nr_bursts = l->burst_usec = -1;
		snprintf(l->path, sizeof(l->path), "%s", top ? "/" : path);
		if (snprintf(l->dir, sizeof(l->dir), "%s%s", base, top ? "" : path) >=
		    (int)sizeof(l->dir))
			return -ENAMETOOLONG;
		if (v1)
			read_level_v1(n->root, l);
		else
			read_level_v2(n->root, l);
		t->nr_cg++;
		slash = strrchr(path, '/');
		if (top || !slash || slash == path)
			break;
		*slash = '\0';
	}
	classify_levels(t);
	pick_binding(t, v1);
	read_local(n->root, t, v1);
	return 0;
}
