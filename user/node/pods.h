/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pods.h - the Kubernetes pods of the node, found in the cgroup tree as the
 * kubelet lays it out and named from the kubelet's log tree: no API server,
 * no kubelet API, no CRI socket, no other process asked.
 *
 *   systemd driver   kubepods.slice/kubepods-<qos>.slice/
 *                      kubepods-<qos>-pod<uid>.slice/<runtime>-<id>.scope
 *                    (a Guaranteed pod's slice directly below kubepods.slice:
 *                    kubepods-pod<uid>.slice; runtimes cri-containerd-,
 *                    crio-, docker-)
 *   cgroupfs driver  kubepods/<qos>/pod<uid>/<id>  (Guaranteed: kubepods/pod<uid>)
 *
 * The same below a cgroup v2 mount or a v1 controller's. Names: the
 * kubelet's /var/log/pods/<namespace>_<pod>_<uid>/<container>/ directories
 * and the /var/log/containers/<pod>_<namespace>_<container>-<id>.log links.
 * The pod's sandbox (the pause container) has neither and is left out. A
 * pod with no log directory is named by its uid (named false).
 *
 * Everything is read below a root directory ("" or "/" live), as node.h's
 * readers are, so fixture trees stand in for a node.
 */
#ifndef LW_NODE_PODS_H
#define LW_NODE_PODS_H

#include <stdbool.h>
#include <stddef.h>

#define LW_POD_NS_LEN	64  /* a namespace: a DNS label, 63 at most */
#define LW_POD_NAME_LEN 254 /* a pod: a DNS subdomain, 253 at most */
#define LW_POD_CTR_LEN	64  /* a container: a DNS label */
#define LW_POD_CTRS	16  /* containers of a pod kept; more are counted */

enum lw_pod_driver {
	LW_POD_SYSTEMD = 1, /* kubepods.slice/... */
	LW_POD_CGROUPFS,    /* kubepods/... */
};

struct lw_pod_ctr {
	char path[256];		   /* its cgroup, below the hierarchy's root */
	char id[72];		   /* the runtime's container id */
	char runtime[16];	   /* "containerd", "cri-o", "docker"; "" unknown (cgroupfs) */
	char name[LW_POD_CTR_LEN]; /* from the log tree; "" unknown */
};

struct lw_pod {
	char uid[40];		    /* dashed, as the API has it */
	char ns[LW_POD_NS_LEN];	    /* "" when not named */
	char name[LW_POD_NAME_LEN]; /* the uid when not named */
	bool named;		    /* its log directory was found */
	char qos[16];		    /* "Guaranteed", "Burstable", "BestEffort" */
	enum lw_pod_driver driver;
	char path[256]; /* its cgroup (the pod's slice), below the hierarchy's root */
	int nctr;
	struct lw_pod_ctr ctr[LW_POD_CTRS];
	int ctr_over; /* containers past LW_POD_CTRS, not kept */
};

struct lw_pods {
	struct lw_pod *pod;
	int n;
	int sandboxes; /* pause containers left out */
};

/* One cgroup path parsed: which pod and container it is of. */
struct lw_pod_ref {
	enum lw_pod_driver driver;
	char qos[16];
	char uid[40];
	char pod_path[256]; /* the pod's cgroup: path up to its level */
	int pod_level;	    /* its depth below the root: kubepods is 1 */
	char id[72];	    /* the container's id, "" when path is the pod's own */
	char runtime[16];
};

/*
 * The pod of the cgroup path ("/kubepods.slice/.../cri-containerd-ID.scope",
 * as /proc/PID/cgroup or a tree walk gives it, with or without the leading
 * '/'): 0, or -ENOENT when the path is no pod's (or is above one). A path
 * below a container's cgroup is the container's.
 */
int lw_pod_parse_path(const char *path, struct lw_pod_ref *r);

/*
 * Every pod below the hierarchy mounted at cgdir ("/sys/fs/cgroup", the
 * hybrid "/sys/fs/cgroup/unified", or v1 "/sys/fs/cgroup/cpu,cpuacct"),
 * root prefixed, in the order of their directories' names, their
 * containers the same, named from root/var/log. 0 (none is 0 pods);
 * -ENOMEM. p is freed with lw_pods_free() whatever the result.
 */
int lw_pods_read(const char *root, const char *cgdir, struct lw_pods *p);
void lw_pods_free(struct lw_pods *p);

/* The pod of namespace ns named name, NULL when none is. */
const struct lw_pod *lw_pods_find(const struct lw_pods *p, const char *ns, const char *name);

#endif /* LW_NODE_PODS_H */
