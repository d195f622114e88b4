// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_pods.c - Kubernetes pods found in the cgroup tree as the kubelet lays
 * it out (systemd and cgroupfs drivers; containerd, CRI-O, docker; v2 and
 * v1) and named from the kubelet's log tree, on fixture trees
 * (tests/fixtures/build.sh). Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "node/cgroup.h"
#include "node/pods.h"

#define FX "tests/fixtures"

static const char *hexid(int n)
{
	static char b[4][65];
	static int k;
	char *s = b[k++ % 4];

	snprintf(s, 65, "%064x", n);
	return s;
}

static void test_parse_systemd(void **state)
{
	struct lw_pod_ref r;
	char p[512];

	snprintf(p, sizeof(p),
		 "/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-pod5c3f1e2a_9b7d_4c8e_a1f0_3d6b2e9c7a41.slice/"
		 "cri-containerd-%s.scope",
		 hexid(2));
	assert_int_equal(lw_pod_parse_path(p, &r), 0);
	assert_int_equal(r.driver, LW_POD_SYSTEMD);
	assert_string_equal(r.qos, "Burstable");
	assert_string_equal(r.uid, "5c3f1e2a-9b7d-4c8e-a1f0-3d6b2e9c7a41");
	assert_string_equal(r.id, hexid(2));
	assert_string_equal(r.runtime, "containerd");
	assert_int_equal(r.pod_level, 3);
	assert_string_equal(r.pod_path,
			    "/kubepods.slice/kubepods-burstable.slice/"
			    "kubepods-burstable-pod5c3f1e2a_9b7d_4c8e_a1f0_3d6b2e9c7a41.slice");

	/* Guaranteed: the pod's slice directly below kubepods.slice; CRI-O */
	snprintf(p, sizeof(p),
		 "kubepods.slice/kubepods-pod0a7b6c5d_4e3f_4a2b_8c1d_9e8f7a6b5c43.slice/"
		 "crio-%s.scope",
		 hexid(7));
	assert_int_equal(lw_pod_parse_path(p, &r), 0);
	assert_string_equal(r.qos, "Guaranteed");
	assert_string_equal(r.runtime, "cri-o");
	assert_int_equal(r.pod_level, 2);

	/* docker's scope; and the pod's own slice, no container */
	snprintf(
		p, sizeof(p),
		"/kubepods.slice/kubepods-besteffort.slice/"
		"kubepods-besteffort-pod6d5c4b3a_2f1e_4d0c_8b9a_5f4e3d2c1b09.slice/docker-%s.scope",
		hexid(34));
	assert_int_equal(lw_pod_parse_path(p, &r), 0);
	assert_string_equal(r.qos, "BestEffort");
	assert_string_equal(r.runtime, "docker");
	*strrchr(p, '/') = '\0';
	assert_int_equal(lw_pod_parse_path(p, &r), 0);
	assert_string_equal(r.id, "");
	assert_string_equal(r.uid, "6d5c4b3a-2f1e-4d0c-8b9a-5f4e3d2c1b09");

	/* CRI-O's conmon beside a container: no container; nor kubepods */
	snprintf(p, sizeof(p),
		 "/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-pod3b2a1c0d_5e6f_4a7b_9c8d_7e6f5a4b3c21.slice/"
		 "crio-conmon-%s.scope",
		 hexid(18));
	assert_int_equal(lw_pod_parse_path(p, &r), 0);
	assert_string_equal(r.id, "");
	assert_int_equal(lw_pod_parse_path("/kubepods.slice/kubepods-burstable.slice", &r),
			 -ENOENT);
	assert_int_equal(lw_pod_parse_path("/system.slice/kubelet.service", &r), -ENOENT);
	assert_int_equal(lw_pod_parse_path("/", &r), -ENOENT);
	/* a pod's name elsewhere is not the kubelet's */
	assert_int_equal(lw_pod_parse_path("/user.slice/kubepods-pod0a7b6c5d_4e3f_4a2b_8c1d_"
					   "9e8f7a6b5c43.slice",
					   &r),
			 -ENOENT);
}

static void test_parse_cgroupfs(void **state)
{
	struct lw_pod_ref r;
	char p[512];

	snprintf(p, sizeof(p), "/kubepods/burstable/pod1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b/%s",
		 hexid(50));
	assert_int_equal(lw_pod_parse_path(p, &r), 0);
	assert_int_equal(r.driver, LW_POD_CGROUPFS);
	assert_string_equal(r.qos, "Burstable");
	assert_string_equal(r.uid, "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b");
	assert_string_equal(r.id, hexid(50));
	assert_string_equal(r.runtime, "");
	snprintf(p, sizeof(p), "/kubepods/pod9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d/%s", hexid(52));
	assert_int_equal(lw_pod_parse_path(p, &r), 0);
	assert_string_equal(r.qos, "Guaranteed");
	assert_int_equal(r.pod_level, 2);
	assert_int_equal(lw_pod_parse_path("/kubepods/besteffort", &r), -ENOENT);
}

static void test_read_containerd(void **state)
{
	struct lw_pods p;
	const struct lw_pod *d;

	assert_int_equal(lw_pods_read(FX "/pods-containerd", "/sys/fs/cgroup", &p), 0);
	/* the QoS classes' directories in name order, Guaranteed ones among
	 * them: besteffort's two, burstable's, then coredns's slice */
	assert_int_equal(p.n, 4);
	assert_int_equal(p.sandboxes, 4);
	assert_string_equal(p.pod[0].name, "cruncher-5f");
	assert_string_equal(p.pod[0].ns, "batch");
	assert_string_equal(p.pod[0].qos, "BestEffort");
	assert_int_equal(p.pod[0].nctr, 1);
	assert_string_equal(p.pod[0].ctr[0].name, "cruncher");
	assert_string_equal(p.pod[0].ctr[0].id, hexid(5));
	assert_string_equal(p.pod[0].ctr[0].runtime, "containerd");
	/* no log directory: named by its uid, and says so */
	d = &p.pod[1];
	assert_false(d->named);
	assert_string_equal(d->name, "f00dfeed-1234-4abc-8def-0123456789ab");
	assert_string_equal(d->ns, "");
	assert_int_equal(d->nctr, 1);
	assert_string_equal(d->ctr[0].name, "");
	d = lw_pods_find(&p, "shop", "checkout-7d9f4");
	assert_non_null(d);
	assert_true(d->named);
	assert_string_equal(d->qos, "Burstable");
	assert_int_equal(d->driver, LW_POD_SYSTEMD);
	assert_int_equal(d->nctr, 2);
	assert_string_equal(d->ctr[0].name, "app");
	assert_string_equal(d->ctr[1].name, "envoy");
	assert_string_equal(
		d->ctr[1].path,
		"/kubepods.slice/kubepods-burstable.slice/"
		"kubepods-burstable-pod5c3f1e2a_9b7d_4c8e_a1f0_3d6b2e9c7a41.slice/"
		"cri-containerd-0000000000000000000000000000000000000000000000000000000000000003."
		"scope");
	d = lw_pods_find(&p, "kube-system", "coredns-x2");
	assert_non_null(d);
	assert_string_equal(d->qos, "Guaranteed");
	assert_int_equal(d->nctr, 1);
	assert_string_equal(d->ctr[0].name, "coredns");
	assert_null(lw_pods_find(&p, "shop", "nope"));
	lw_pods_free(&p);
}

static void test_read_crio_docker(void **state)
{
	struct lw_pods p;

	assert_int_equal(lw_pods_read(FX "/pods-crio", "/sys/fs/cgroup", &p), 0);
	assert_int_equal(p.n, 1);
	/* the sandbox out, conmon no container */
	assert_int_equal(p.sandboxes, 1);
	assert_int_equal(p.pod[0].nctr, 1);
	assert_string_equal(p.pod[0].ctr[0].name, "nginx");
	assert_string_equal(p.pod[0].ctr[0].runtime, "cri-o");
	assert_string_equal(p.pod[0].ns, "web");
	lw_pods_free(&p);

	/* no link: the pod's one container directory names its container */
	assert_int_equal(lw_pods_read(FX "/pods-docker", "/sys/fs/cgroup", &p), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.pod[0].name, "redis-0");
	assert_string_equal(p.pod[0].ns, "cache");
	assert_int_equal(p.pod[0].nctr, 1);
	assert_string_equal(p.pod[0].ctr[0].name, "redis");
	assert_string_equal(p.pod[0].ctr[0].runtime, "docker");
	lw_pods_free(&p);
}

static void test_read_cgroupfs_v1(void **state)
{
	struct lw_pods p;

	/* v1's cpu hierarchy, through its symlink */
	assert_int_equal(lw_pods_read(FX "/pods-cgroupfs", "/sys/fs/cgroup/cpu", &p), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.pod[0].name, "api-55d");
	assert_string_equal(p.pod[0].qos, "Burstable");
	assert_int_equal(p.pod[0].driver, LW_POD_CGROUPFS);
	assert_string_equal(p.pod[0].ctr[0].name, "api");
	assert_string_equal(p.pod[0].ctr[0].path,
			    "/kubepods/burstable/pod1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b/"
			    "0000000000000000000000000000000000000000000000000000000000000032");
	assert_string_equal(p.pod[1].name, "db-0");
	assert_string_equal(p.pod[1].qos, "Guaranteed");
	assert_string_equal(p.pod[1].ctr[0].name, "postgres");
	lw_pods_free(&p);
	/* the empty v2 hierarchy beside it: none; a missing tree: none */
	assert_int_equal(lw_pods_read(FX "/pods-cgroupfs", "/sys/fs/cgroup/unified", &p), 0);
	assert_int_equal(p.n, 0);
	lw_pods_free(&p);
	assert_int_equal(lw_pods_read(FX "/nonexistent", "/sys/fs/cgroup", &p), 0);
	assert_int_equal(p.n, 0);
	lw_pods_free(&p);
}

/* A --cgroup target's processes: its own and those below it (the four
 * pods' nine, sandboxes included). */
static void test_procs_tree(void **state)
{
	int pids[16];

	assert_int_equal(
		lw_cgroup_procs_tree(FX "/pods-containerd/sys/fs/cgroup/kubepods.slice", pids, 16),
		9);
	assert_int_equal(
		lw_cgroup_procs_tree(FX "/pods-containerd/sys/fs/cgroup/kubepods.slice", pids, 3),
		9);
	assert_int_equal(lw_cgroup_procs_tree(FX "/pods-containerd/sys/fs/cgroup/nope", pids, 3),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_systemd),	 cmocka_unit_test(test_parse_cgroupfs),
		cmocka_unit_test(test_read_containerd),	 cmocka_unit_test(test_read_crio_docker),
		cmocka_unit_test(test_read_cgroupfs_v1), cmocka_unit_test(test_procs_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
