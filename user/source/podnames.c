// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * podnames.c - the Kubernetes pod of a task, for the preemptor evidence
 * (issue 31): each preemptor in a pod's container is named by its
 * namespace, pod and container in an LW_REC_POD record beside its
 * LW_REC_PREEMPT, so that trace, report and a capture read on another
 * machine say whose workload took the CPU.
 *
 * The kernel keeps the cgroup v2 id a preemptor ran in (lw_preempt_val's
 * cgid), which outlives the task: a preemptor that exited within the
 * interval is still named. Ids are looked up in a cache filled from one
 * walk of the node's pods (node/pods.h: the kubelet's cgroup tree, names
 * from its log tree), walked again for an id not seen before, once a
 * second at most; an id the walk does not know (a cgroup below a
 * container's, made by the workload itself) is named from its process's
 * /proc/PID/cgroup, by the pod's uid and the container's id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latwhy.h"
#include "node/cgroup.h"
#include "node/pods.h"
#include "source/tracer_int.h"

/* Ids cached at most: past it the cache starts again (one walk). */
#define LW_PODNAMES_MAX 4096
/* The walk at most this often: a host cgroup's id is a miss only once,
 * but a burst of new preemptors must not walk the tree for each. */
#define LW_PODNAMES_WALK_NS 1000000000ULL

struct podname {
	__u64 cgid;
	bool pod; /* false: the walk after it was first seen found no pod */
	struct lw_pod_rec rec;
};

struct lw_podnames {
	struct podname *ent;
	int n, cap;
	struct lw_pods pods; /* the last walk, for the names of a nested cgroup */
	bool walked;
	__u64 walked_ns;
};

void lw_podnames_free(struct lw_podnames *p)
{
	if (!p)
		return;
	if (p->walked)
		lw_pods_free(&p->pods);
	free(p->ent);
	free(p);
}

static void rec_fill(struct lw_pod_rec *r, const struct lw_pod *pod, const struct lw_pod_ctr *c)
{
	memset(r, 0, sizeof(*r));
	r->type = LW_REC_POD;
	r->named = pod->named;
	snprintf(r->ns, sizeof(r->ns), "%s", pod->ns);
	snprintf(r->name, sizeof(r->name), "%s", pod->name);
	snprintf(r->container, sizeof(r->container), "%s", c ? c->name : "");
	snprintf(r->qos, sizeof(r->qos), "%s", pod->qos);
}

static struct podname *cache_find(struct lw_podnames *p, __u64 cgid)
{
	for (int i = 0; i < p->n; i++)
		if (p->ent[i].cgid == cgid)
			return &p->ent[i];
	return NULL;
}

static void cache_put(struct lw_podnames *p, __u64 cgid, const struct lw_pod_rec *r)
{
	struct podname *e = cache_find(p, cgid);

	if (!e) {
		if (p->n == LW_PODNAMES_MAX)
			p->n = 0; /* start again: the walk refills what is in use */
		if (p->n == p->cap) {
			int cap = p->cap ? 2 * p->cap : 64;
			struct podname *grown = realloc(p->ent, cap * sizeof(*grown));

			if (!grown)
				return; /* not cached: looked up again next time */
			p->ent = grown;
			p->cap = cap;
		}
		e = &p->ent[p->n++];
	}
	e->cgid = cgid;
	e->pod = r != NULL;
	if (r)
		e->rec = *r;
}

/* The node's pods again: every container's and every pod's own cgroup id
 * into the cache. 0, or -errno when the tree cannot be read. */
static int walk(struct lw_tracer *t, struct lw_podnames *p)
{
	char path[LW_PATH_MAX + 512];
	struct lw_pod_rec r;
	int err;

	if (p->walked)
		lw_pods_free(&p->pods);
	p->walked = false;
	p->walked_ns = lw_now_ns();
	err = lw_pods_read("/", t->cg_mount[0] ? t->cg_mount : "/", &p->pods);
	if (err) {
		lw_pods_free(&p->pods);
		return err;
	}
	p->walked = true;
	for (int i = 0; i < p->pods.n; i++) {
		const struct lw_pod *pod = &p->pods.pod[i];
		__u64 id;

		snprintf(path, sizeof(path), "%s%s", t->cg_mount, pod->path);
		rec_fill(&r, pod, NULL);
		if (!lw_cgroup_id(path, &id))
			cache_put(p, id, &r);
		for (int k = 0; k < pod->nctr; k++) {
			snprintf(path, sizeof(path), "%s%s", t->cg_mount, pod->ctr[k].path);
			rec_fill(&r, pod, &pod->ctr[k]);
			if (!lw_cgroup_id(path, &id))
				cache_put(p, id, &r);
		}
	}
	return 0;
}

/* The pod of a cgroup v2 path, from the last walk: by the pod's uid and
 * the container's id that the path names (a cgroup below a container's
 * is that container's). */
static int of_path(const struct lw_podnames *p, const char *path, struct lw_pod_rec *out)
{
	struct lw_pod_ref ref;

	if (!p->walked || lw_pod_parse_path(path, &ref))
		return -ENOENT;
	for (int i = 0; i < p->pods.n; i++) {
		const struct lw_pod *pod = &p->pods.pod[i];
		const struct lw_pod_ctr *c = NULL;

		if (strcmp(pod->uid, ref.uid))
			continue;
		for (int k = 0; k < pod->nctr && !c; k++)
			if (ref.id[0] && !strcmp(pod->ctr[k].id, ref.id))
				c = &pod->ctr[k];
		rec_fill(out, pod, c);
		return 0;
	}
	return -ENOENT;
}

/* pid's cgroup v2 path from /proc/PID/cgroup: 0, or -errno. */
static int proc_v2_path(int pid, char *buf, size_t len)
{
	struct lw_proc_cgroups cg;
	char path[64];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = lw_proc_cgroups_parse(f, &cg);
	fclose(f);
	if (err || !cg.v2[0])
		return err ? err : -ENOENT;
	snprintf(buf, len, "%s", cg.v2);
	return 0;
}

static struct lw_podnames *podnames_get(struct lw_tracer *t)
{
	if (!t->podnames)
		t->podnames = calloc(1, sizeof(*t->podnames));
	return t->podnames;
}

/* Walked for a miss, once a second at most: whether it walked. */
static bool walk_due(struct lw_tracer *t, struct lw_podnames *p)
{
	if (p->walked && lw_now_ns() - p->walked_ns < LW_PODNAMES_WALK_NS)
		return false;
	return !walk(t, p);
}

int lw_podnames_of_cgid(struct lw_tracer *t, __u64 cgid, __u32 tgid, struct lw_pod_rec *out)
{
	struct lw_podnames *p;
	struct podname *e;
	char path[512];
	bool walked;

	if (!cgid || !t->cg_known || !(p = podnames_get(t)))
		return -ENOENT;
	e = cache_find(p, cgid);
	if (e) {
		if (!e->pod)
			return -ENOENT;
		*out = e->rec;
		return 0;
	}
	walked = walk_due(t, p);
	e = cache_find(p, cgid);
	if (e && e->pod) {
		*out = e->rec;
		return 0;
	}
	/* below a container's cgroup, if its process is still there */
	if (tgid && !proc_v2_path(tgid, path, sizeof(path)) && !of_path(p, path, out)) {
		cache_put(p, cgid, out);
		return 0;
	}
	/* no pod's after a walk that knew the node's pods as they are now */
	if (walked)
		cache_put(p, cgid, NULL);
	return -ENOENT;
}

int lw_podnames_of_pid(struct lw_tracer *t, int pid, struct lw_pod_rec *out)
{
	struct lw_podnames *p;
	struct lw_pod_ref ref;
	char path[512];

	if (pid <= 0 || !t->cg_known || proc_v2_path(pid, path, sizeof(path)) ||
	    lw_pod_parse_path(path, &ref) || !(p = podnames_get(t)))
		return -ENOENT;
	if (!of_path(p, path, out))
		return 0;
	/* a pod the last walk did not know */
	if (!walk_due(t, p))
		return -ENOENT;
	return of_path(p, path, out);
}
