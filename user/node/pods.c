// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pods.c - the node's Kubernetes pods from the cgroup tree, their names
 * from the kubelet's log tree (pods.h). Each level is told apart by
 * cglimit.c's classifier (lw_cg_classify()), the one the quota advisor
 * reads a target's path with.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/node.h"
#include "node/pods.h"
#include "node/sysfs.h"

/* snprintf that says whether it fit: a name cut short is no name. */
static bool put(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool put(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

/* The runtime a container's cgroup name says (systemd driver). */
static void runtime_of(const char *comp, char *buf, size_t len)
{
	static const struct {
		const char *prefix, *name;
	} rt[] = {{"cri-containerd-", "containerd"}, {"crio-", "cri-o"}, {"docker-", "docker"}};

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++)
		if (!strncmp(comp, rt[i].prefix, strlen(rt[i].prefix)))
			put(buf, len, "%s", rt[i].name);
}

int lw_pod_parse_path(const char *path, struct lw_pod_ref *r)
{
	enum lw_cg_owner up = LW_CG_PLAIN;
	const char *p = path;
	int level = 0;

	memset(r, 0, sizeof(*r));
	while (*p) {
		char comp[256], name[96];
		enum lw_cg_owner o;
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (n >= sizeof(comp))
			return -ENOENT;
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		level++;
		o = lw_cg_classify(comp, up, name, sizeof(name));
		if (o == LW_CG_KUBEPODS && up != LW_CG_KUBEPODS && up != LW_CG_PLAIN)
			return -ENOENT;
		if (o == LW_CG_KUBEPODS && !name[0]) {
			/* kubepods itself: the driver is in its name */
			r->driver = strcmp(comp, "kubepods") ? LW_POD_SYSTEMD : LW_POD_CGROUPFS;
		} else if (o == LW_CG_KUBEPODS) {
			put(r->qos, sizeof(r->qos), "%s", name);
		} else if (o == LW_CG_POD) {
			put(r->uid, sizeof(r->uid), "%s", name);
			put(r->pod_path, sizeof(r->pod_path), "%.*s", (int)(p - path), path);
			r->pod_level = level;
			if (!r->qos[0])
				put(r->qos, sizeof(r->qos), "Guaranteed");
		} else if (o == LW_CG_POD_CTR) {
			put(r->id, sizeof(r->id), "%s", name);
			runtime_of(comp, r->runtime, sizeof(r->runtime));
			return 0;
		} else if (up != LW_CG_PLAIN || !r->driver) {
			/* a level the kubelet does not make: a pod's own
			 * cgroup (no container), or none */
			break;
		}
		up = o;
	}
	return r->uid[0] ? 0 : -ENOENT;
}

/* Sorted directory entries that are directories (or, for links, any):
 * their count, and *out (NULL when there are none) for free_list(). */
static int list_dir(const char *dir, bool dirs_only, char ***out)
{
	struct dirent **ents;
	char **names;
	int n = scandir(dir, &ents, NULL, alphasort), k = 0;

	*out = NULL;
	if (n < 0)
		return -errno;
	names = calloc(n ? n : 1, sizeof(*names));
	for (int i = 0; i < n; i++) {
		bool keep = ents[i]->d_name[0] != '.' && (!dirs_only || ents[i]->d_type == DT_DIR ||
							  ents[i]->d_type == DT_UNKNOWN);

		if (names && keep)
			names[k++] = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	if (!names)
		return -ENOMEM;
	if (!k) { /* nothing to free for the callers */
		free(names);
		return 0;
	}
	*out = names;
	return k;
}

static void free_list(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The comm of the first process of the cgroup at dir: "" when none. */
static void first_comm(const char *root, const char *dir, char *comm, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	int pid = 0;

	comm[0] = '\0';
	put(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 0 || lw_sysfs_read(root, comm, len, "/proc/%d/comm", pid))
		comm[0] = '\0';
}

/* The names the log tree gives: a pod's directory, and each link. */
struct log_pod {
	char ns[LW_POD_NS_LEN], name[LW_POD_NAME_LEN], uid[40];
	char **ctrs; /* its container directories */
	int nctrs;
};

struct log_link {
	char ns[LW_POD_NS_LEN], pod[LW_POD_NAME_LEN], ctr[LW_POD_CTR_LEN], id[72];
};

struct logs {
	struct log_pod *pods;
	int npods;
	struct log_link *links;
	int nlinks;
};

/* "<a>_<b>_<c>": namespaces, pod and container names are DNS names, which
 * have no '_'. */
static bool split3(const char *s, char *a, size_t al, char *b, size_t bl, char *c, size_t cl)
{
	const char *u1 = strchr(s, '_'), *u2 = u1 ? strchr(u1 + 1, '_') : NULL;

	if (!u1 || !u2 || strchr(u2 + 1, '_') || u1 == s || u2 == u1 + 1 || !u2[1] ||
	    (size_t)(u1 - s) >= al || (size_t)(u2 - u1 - 1) >= bl || strlen(u2 + 1) >= cl)
		return false;
	put(a, al, "%.*s", (int)(u1 - s), s);
	put(b, bl, "%.*s", (int)(u2 - u1 - 1), u1 + 1);
	put(c, cl, "%s", u2 + 1);
	return true;
}

static void logs_read(const char *root, struct logs *l)
{
	char dir[PATH_MAX], **names;
	int n;

	memset(l, 0, sizeof(*l));
	put(dir, sizeof(dir), "%s/var/log/pods", root);
	n = list_dir(dir, true, &names);
	if (n > 0)
		l->pods = calloc(n, sizeof(*l->pods));
	for (int i = 0; l->pods && i < n; i++) {
		struct log_pod *p = &l->pods[l->npods];
		char sub[PATH_MAX];

		if (!split3(names[i], p->ns, sizeof(p->ns), p->name, sizeof(p->name), p->uid,
			    sizeof(p->uid)))
			continue;
		put(sub, sizeof(sub), "%s/%s", dir, names[i]);
		p->nctrs = list_dir(sub, true, &p->ctrs);
		if (p->nctrs < 0)
			p->nctrs = 0;
		l->npods++;
	}
	if (n > 0)
		free_list(names, n);
	put(dir, sizeof(dir), "%s/var/log/containers", root);
	n = list_dir(dir, false, &names);
	if (n > 0)
		l->links = calloc(n, sizeof(*l->links));
	for (int i = 0; l->links && i < n; i++) {
		struct log_link *k = &l->links[l->nlinks];
		char rest[LW_POD_CTR_LEN + 80];
		size_t len = strlen(names[i]);
		char *dash;

		/* <pod>_<namespace>_<container>-<id>.log */
		if (len < 5 || strcmp(names[i] + len - 4, ".log"))
			continue;
		names[i][len - 4] = '\0';
		if (!split3(names[i], k->pod, sizeof(k->pod), k->ns, sizeof(k->ns), rest,
			    sizeof(rest)))
			continue;
		dash = strrchr(rest, '-');
		if (!dash || dash == rest || strlen(dash + 1) >= sizeof(k->id) ||
		    (size_t)(dash - rest) >= sizeof(k->ctr))
			continue;
		put(k->id, sizeof(k->id), "%s", dash + 1);
		put(k->ctr, sizeof(k->ctr), "%.*s", (int)(dash - rest), rest);
		l->nlinks++;
	}
	if (n > 0)
		free_list(names, n);
}

static void logs_free(struct logs *l)
{
	for (int i = 0; i < l->npods; i++)
		free_list(l->pods[i].ctrs, l->pods[i].nctrs);
	free(l->pods);
	free(l->links);
}

static const struct log_link *link_of(const struct logs *l, const char *id)
{
	for (int i = 0; i < l->nlinks; i++)
		if (!strcmp(l->links[i].id, id))
			return &l->links[i];
	return NULL;
}

static const struct log_pod *log_pod_of(const struct logs *l, const char *uid)
{
	for (int i = 0; i < l->npods; i++)
		if (!strcmp(l->pods[i].uid, uid))
			return &l->pods[i];
	return NULL;
}

/* A pod's containers: each cgroup below its own that the classifier calls
 * a container, the sandbox left out. */
static void pod_containers(const char *root, const char *base, struct lw_pod *pod,
			   const struct logs *l, const struct log_pod *lp, int *sandboxes)
{
	char dir[PATH_MAX], **names;
	int n, unnamed = -1, nunnamed = 0;

	put(dir, sizeof(dir), "%s%s", base, pod->path);
	n = list_dir(dir, true, &names);
	for (int i = 0; i < n; i++) {
		char id[96], sub[PATH_MAX], comm[32];
		const struct log_link *k;
		struct lw_pod_ctr *c;

		if (lw_cg_classify(names[i], LW_CG_POD, id, sizeof(id)) != LW_CG_POD_CTR)
			continue;
		k = link_of(l, id);
		put(sub, sizeof(sub), "%s/%s", dir, names[i]);
		if (!k) {
			/* the sandbox has no log: its one process is pause,
			 * or, in a named pod, it has none */
			first_comm(root, sub, comm, sizeof(comm));
			if (!strcmp(comm, "pause") || (lp && !comm[0])) {
				(*sandboxes)++;
				continue;
			}
		}
		if (pod->nctr == LW_POD_CTRS) {
			pod->ctr_over++;
			continue;
		}
		c = &pod->ctr[pod->nctr];
		put(c->path, sizeof(c->path), "%s/%s", pod->path, names[i]);
		put(c->id, sizeof(c->id), "%s", id);
		runtime_of(names[i], c->runtime, sizeof(c->runtime));
		if (k)
			put(c->name, sizeof(c->name), "%s", k->ctr);
		else {
			unnamed = pod->nctr;
			nunnamed++;
		}
		pod->nctr++;
	}
	/* no link, but the pod's log directory has one container: its */
	if (lp && nunnamed == 1 && lp->nctrs == 1 && pod->nctr == 1)
		put(pod->ctr[unnamed].name, sizeof(pod->ctr[unnamed].name), "%s", lp->ctrs[0]);
	if (n > 0)
		free_list(names, n);
}

static int pod_add(const char *root, const char *base, const char *path, struct lw_pods *p,
		   const struct logs *l)
{
	struct lw_pod_ref r;
	const struct log_pod *lp;
	struct lw_pod *pod, *grown;

	if (lw_pod_parse_path(path, &r) || r.id[0])
		return 0;
	grown = realloc(p->pod, (p->n + 1) * sizeof(*p->pod));
	if (!grown)
		return -ENOMEM;
	p->pod = grown;
	pod = &p->pod[p->n++];
	memset(pod, 0, sizeof(*pod));
	put(pod->uid, sizeof(pod->uid), "%s", r.uid);
	put(pod->qos, sizeof(pod->qos), "%s", r.qos);
	put(pod->path, sizeof(pod->path), "%s", path);
	pod->driver = r.driver;
	lp = log_pod_of(l, r.uid);
	pod->named = lp != NULL;
	put(pod->ns, sizeof(pod->ns), "%s", lp ? lp->ns : "");
	put(pod->name, sizeof(pod->name), "%s", lp ? lp->name : r.uid);
	pod_containers(root, base, pod, l, lp, &p->sandboxes);
	return 0;
}

/* The pods below one kubepods directory (rel, below base): those directly
 * in it (Guaranteed) and those in each QoS class's. */
static int walk_kubepods(const char *root, const char *base, const char *rel, struct lw_pods *p,
			 const struct logs *l)
{
	char dir[PATH_MAX], **names;
	int n, err = 0;

	put(dir, sizeof(dir), "%s%s", base, rel);
	n = list_dir(dir, true, &names);
	for (int i = 0; i < n && !err; i++) {
		char path[512], name[96];
		enum lw_cg_owner o = lw_cg_classify(names[i], LW_CG_KUBEPODS, name, sizeof(name));

		put(path, sizeof(path), "%s/%s", rel, names[i]);
		if (o == LW_CG_POD)
			err = pod_add(root, base, path, p, l);
		else if (o == LW_CG_KUBEPODS && name[0])
			err = walk_kubepods(root, base, path, p, l);
	}
	if (n > 0)
		free_list(names, n);
	return err;
}

int lw_pods_read(const char *root, const char *cgdir, struct lw_pods *p)
{
	static const char *const tops[] = {"/kubepods.slice", "/kubepods"};
	char base[PATH_MAX];
	struct logs l;
	int err = 0;

	memset(p, 0, sizeof(*p));
	if (!root || !strcmp(root, "/"))
		root = "";
	if (!put(base, sizeof(base), "%s%s", root, strcmp(cgdir, "/") ? cgdir : ""))
		return -ENAMETOOLONG;
	logs_read(root, &l);
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]) && !err; i++)
		err = walk_kubepods(root, base, tops[i], p, &l);
	logs_free(&l);
	return err;
}

void lw_pods_free(struct lw_pods *p)
{
	free(p->pod);
	memset(p, 0, sizeof(*p));
}

const struct lw_pod *lw_pods_find(const struct lw_pods *p, const char *ns, const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (p->pod[i].named && !strcmp(p->pod[i].ns, ns) && !strcmp(p->pod[i].name, name))
			return &p->pod[i];
	return NULL;
}
