// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_quota.c - CFS bandwidth limits: the node reader on the quota-*
 * fixture trees (v1 and v2, nested limits, a unit, docker, a Kubernetes pod
 * under both cgroup drivers, burst present and absent), the cgroup names of
 * the container runtimes, the quota finding's exact commands for check and
 * trace, the threads-vs-quota finding, and the rule that time that was the
 * quota's never gets an idle or CPU-move fix. Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "advice/advise.h"
#include "advice/explain.h"
#include "engine/engine.h"

#define LW_FIXTURES "tests/fixtures"

#define K8S_UID "0b9e3c1a-8f3d-4a5e-9c1b-2d7e6f8a9b0c"
#define K8S_ID	"4f2a9c8e1b7d3f6a0c5e9b2d8f1a4c7e3b6d9f0a2c5e8b1d4f7a0c3e6b9d2f5a"
#define K8S_POD                                                                                    \
	"/kubepods.slice/kubepods-burstable.slice/"                                                \
	"kubepods-burstable-pod0b9e3c1a_8f3d_4a5e_9c1b_2d7e6f8a9b0c.slice"
#define FS_UID	  "7d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a"
#define FS_ID	  "c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2"
#define DOCKER_ID "8a1c3b6f0e2d4c5b9a7f6e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b"

struct ctx {
	struct lw_node n;
	struct lw_findings fs;
};

static void read_fixture(struct lw_node *n, const char *name, int pid)
{
	char root[256];

	snprintf(root, sizeof(root), LW_FIXTURES "/%s", name);
	assert_int_equal(lw_node_read(n, root, pid), 0);
}

static void check_on(struct ctx *c, const char *name, int pid)
{
	memset(c, 0, sizeof(*c));
	read_fixture(&c->n, name, pid);
	assert_int_equal(lw_advise_node(&c->n, &c->fs), 0);
}

static void ctx_free(struct ctx *c)
{
	lw_findings_free(&c->fs);
	lw_node_free(&c->n);
}

/* The quota findings in order: the limit's, then the threads' (or NULL). */
static const struct lw_finding *quota_finding(const struct lw_findings *fs, int nth)
{
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].cause == LW_CAUSE_QUOTA && !nth--)
			return &fs->v[i];
	return NULL;
}

static size_t nr_quota(const struct lw_findings *fs)
{
	size_t k = 0;

	for (size_t i = 0; i < fs->n; i++)
		k += fs->v[i].cause == LW_CAUSE_QUOTA;
	return k;
}

static bool strv_has(const struct lw_strv *v, const char *want)
{
	for (size_t i = 0; i < v->n; i++)
		if (strstr(v->v[i], want))
			return true;
	return false;
}

#define assert_has(v, s)      assert_true(strv_has(v, s))
#define assert_contains(s, w) assert_non_null(strstr((s) ? (s) : "", w))

/* No command of any finding (notes included) holds any of words. */
static void assert_no_cmd(const struct lw_findings *fs, const char *const *words, size_t nw)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct lw_strv *lists[] = {&fs->v[i].fix, &fs->v[i].persist,
						 &fs->v[i].rollback};

		for (size_t l = 0; l < 3; l++)
			for (size_t k = 0; k < nw; k++)
				if (strv_has(lists[l], words[k])) {
					print_error("finding %zu (%s) has '%s'\n", i,
						    lw_cause_name(fs->v[i].cause), words[k]);
					fail();
				}
	}
}

/* ---- the node reader ---- */

/* v2, a unit below a slice: the slice throttled, it binds; bursts read. */
static void test_read_unit(void **state)
{
	struct lw_node n;
	const struct lw_target *t;

	read_fixture(&n, "quota-unit", 4242);
	t = &n.target;
	assert_int_equal(t->cgroup_v, 2);
	assert_int_equal(t->nr_cg, 3);
	assert_string_equal(t->cg[0].path, "/app.slice/app-web.slice/gateway.service");
	assert_string_equal(t->cg[1].path, "/app.slice/app-web.slice");
	assert_string_equal(t->cg[2].path, "/app.slice");
	for (int i = 0; i < 3; i++)
		assert_int_equal(t->cg[i].owner, LW_CG_UNIT);
	assert_string_equal(t->cg[0].name, "gateway.service");
	assert_string_equal(t->cg[1].name, "app-web.slice");
	assert_int_equal(t->cg[0].quota_us, 400000);
	assert_int_equal(t->cg[2].quota_us, -1);
	assert_int_equal(t->cg[1].burst_us, 0);
	assert_int_equal(t->cg[1].nr_bursts, 0);
	/* the legacy fields are the binding limit's: the slice */
	assert_int_equal(t->cg_bind, 1);
	assert_string_equal(t->cpu_max_path, "/sys/fs/cgroup/app.slice/app-web.slice/cpu.max");
	assert_string_equal(t->cpu_max, "100000 100000");
	assert_int_equal(t->quota_us, 100000);
	assert_int_equal(t->period_us, 100000);
	assert_int_equal(t->nr_periods, 81000);
	assert_int_equal(t->nr_throttled, 2050);
	assert_int_equal(t->throttled_usec, 4100000);
	assert_int_equal(t->local_throttled_usec, 4100000);
	assert_string_equal(t->cpuset, "0-3");
	assert_string_equal(t->pod_qos, "");
	/* one busy worker: the others are under a tenth of its time */
	assert_int_equal(t->nr_tasks, 4);
	assert_int_equal(t->busy_tasks, 1);
	assert_false(t->tasks_cut);
	assert_int_equal(t->busiest_ticks, 30211 + 4410);
	assert_int_equal(t->runtime, LW_RT_NONE);
	assert_int_equal(t->jvm_cpus, -1);
	lw_node_free(&n);
}

/* Hybrid, v1 cpu on a 5.10 kernel: no burst file, throttled_time in ns. */
static void test_read_docker_v1(void **state)
{
	struct lw_node n;
	const struct lw_target *t;

	read_fixture(&n, "quota-docker", 3131);
	t = &n.target;
	assert_int_equal(t->cgroup_v, 1);
	assert_string_equal(t->cgroup, "/docker/" DOCKER_ID);
	assert_int_equal(t->nr_cg, 2);
	assert_int_equal(t->cg[0].owner, LW_CG_DOCKER);
	assert_string_equal(t->cg[0].name, DOCKER_ID);
	assert_int_equal(t->cg[1].owner, LW_CG_PLAIN);
	assert_string_equal(t->cg[0].dir, "/sys/fs/cgroup/cpu/docker/" DOCKER_ID);
	assert_int_equal(t->cg[0].burst_us, -1);
	assert_int_equal(t->cg[0].nr_bursts, -1);
	assert_int_equal(t->cg[0].burst_usec, -1);
	assert_int_equal(t->cg[1].quota_us, -1);
	assert_int_equal(t->cg_bind, 0);
	assert_string_equal(t->cpu_max_path,
			    "/sys/fs/cgroup/cpu/docker/" DOCKER_ID "/cpu.cfs_quota_us");
	assert_string_equal(t->cpu_max, "150000");
	assert_int_equal(t->throttled_usec, 604650000);
	assert_int_equal(t->local_throttled_usec, -1);
	assert_int_equal(t->busy_tasks, 6);
	assert_int_equal(t->nr_tasks, 7);
	lw_node_free(&n);
}

/* The kubelet's systemd driver: container scope, pod slice, QoS, kubepods. */
static void test_read_k8s_systemd(void **state)
{
	struct lw_node n;
	const struct lw_target *t;

	read_fixture(&n, "quota-k8s", 5150);
	t = &n.target;
	assert_int_equal(t->nr_cg, 4);
	assert_int_equal(t->cg[0].owner, LW_CG_POD_CTR);
	assert_string_equal(t->cg[0].name, K8S_ID);
	assert_int_equal(t->cg[1].owner, LW_CG_POD);
	assert_string_equal(t->cg[1].path, K8S_POD);
	assert_string_equal(t->cg[1].name, K8S_UID);
	assert_int_equal(t->cg[2].owner, LW_CG_KUBEPODS);
	assert_string_equal(t->cg[2].name, "Burstable");
	assert_int_equal(t->cg[3].owner, LW_CG_KUBEPODS);
	assert_string_equal(t->pod_qos, "Burstable");
	/* both throttled: the container longer */
	assert_int_equal(t->cg_bind, 0);
	assert_int_equal(t->cg[1].quota_us, 250000);
	assert_int_equal(t->cg[1].nr_throttled, 210);
	assert_int_equal(t->quota_us, 200000);
	assert_int_equal(t->local_throttled_usec, 62040000);
	assert_int_equal(t->runtime, LW_RT_GO);
	assert_int_equal(t->busy_tasks, 10);
	assert_int_equal(t->nr_tasks, 16);
	lw_node_free(&n);
}

/* The cgroupfs driver on v1: /kubepods/podUID/ID, Guaranteed; a JVM. */
static void test_read_k8s_cgroupfs(void **state)
{
	struct lw_node n;
	const struct lw_target *t;

	read_fixture(&n, "quota-k8s-cgroupfs", 6262);
	t = &n.target;
	assert_int_equal(t->cgroup_v, 1);
	assert_int_equal(t->nr_cg, 3);
	assert_int_equal(t->cg[0].owner, LW_CG_POD_CTR);
	assert_string_equal(t->cg[0].name, FS_ID);
	assert_int_equal(t->cg[1].owner, LW_CG_POD);
	assert_string_equal(t->cg[1].name, FS_UID);
	assert_int_equal(t->cg[2].owner, LW_CG_KUBEPODS);
	assert_string_equal(t->pod_qos, "Guaranteed");
	assert_int_equal(t->cg_bind, 0);
	assert_int_equal(t->cg[0].burst_us, 0);
	assert_int_equal(t->cg[1].throttled_usec, 1152000);
	assert_int_equal(t->runtime, LW_RT_JVM);
	assert_int_equal(t->gc_threads, 8);
	assert_int_equal(t->jvm_cpus, -1);
	assert_int_equal(t->busy_tasks, 6);
	assert_int_equal(t->nr_tasks, 32);
	lw_node_free(&n);
}

/* A scratch tree with pid 77 in v2 cgroup path. */
static void one_cgroup(char *dir, size_t len, const char *path, const char *cmdline)
{
	char cmd[1024];

	snprintf(dir, len, "/tmp/latwhy-quota-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p proc/77 'sys/fs/cgroup%s' sys/devices/system/cpu/cpu0 && "
		 "echo 0 > sys/devices/system/cpu/online && "
		 "printf 'Name:\\tx\\nCpus_allowed_list:\\t0\\n' > proc/77/status && "
		 "echo '0::%s' > proc/77/cgroup && touch sys/fs/cgroup/cgroup.controllers && "
		 "printf '%s' > proc/77/cmdline",
		 dir, path, path, cmdline);
	assert_int_equal(system(cmd), 0);
}

static void rm_tree(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* The container runtimes' and systemd's names for a cgroup. */
static void test_owner_names(void **state)
{
	static const struct {
		const char *path;
		enum lw_cg_owner own, parent;
		const char *name, *qos;
	} cases[] = {
		{"/system.slice/docker-" DOCKER_ID ".scope", LW_CG_DOCKER, LW_CG_UNIT, DOCKER_ID,
		 ""},
		{"/machine.slice/libpod-" DOCKER_ID ".scope", LW_CG_PODMAN, LW_CG_UNIT, DOCKER_ID,
		 ""},
		{"/system.slice/cri-containerd-" DOCKER_ID ".scope", LW_CG_CONTAINER, LW_CG_UNIT,
		 DOCKER_ID, ""},
		{"/kubepods.slice/kubepods-pod0b9e3c1a_8f3d_4a5e_9c1b_2d7e6f8a9b0c.slice/"
		 "crio-" K8S_ID ".scope",
		 LW_CG_POD_CTR, LW_CG_POD, K8S_ID, "Guaranteed"},
		{"/kubepods/besteffort/pod" K8S_UID "/" K8S_ID, LW_CG_POD_CTR, LW_CG_POD, K8S_ID,
		 "BestEffort"},
		{"/kubepods/burstable/pod" K8S_UID "/crio-" K8S_ID, LW_CG_POD_CTR, LW_CG_POD,
		 K8S_ID, "Burstable"},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/web.service",
		 LW_CG_USER_UNIT, LW_CG_USER_UNIT, "web.service", ""},
		{"/batch/job-7", LW_CG_PLAIN, LW_CG_PLAIN, "", ""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[64];
		struct lw_node n;

		one_cgroup(dir, sizeof(dir), cases[i].path, "x");
		assert_int_equal(lw_node_read(&n, dir, 77), 0);
		assert_true(n.target.nr_cg >= 2);
		assert_int_equal(n.target.cg[0].owner, cases[i].own);
		assert_int_equal(n.target.cg[1].owner, cases[i].parent);
		assert_string_equal(n.target.cg[0].name, cases[i].name);
		assert_string_equal(n.target.pod_qos, cases[i].qos);
		/* no quota anywhere: none binds, the own cgroup's fields stay */
		assert_int_equal(n.target.cg_bind, -1);
		assert_int_equal(n.target.quota_us, -1);
		lw_node_free(&n);
		rm_tree(dir);
	}
}

/* -XX:ActiveProcessorCount among the JVM's arguments. */
static void test_jvm_cmdline(void **state)
{
	char dir[64];
	struct lw_node n;

	one_cgroup(dir, sizeof(dir), "/a",
		   "java\\0-Xmx1g\\0-XX:ActiveProcessorCount=16\\0-jar\\0x");
	assert_int_equal(lw_node_read(&n, dir, 77), 0);
	assert_int_equal(n.target.jvm_cpus, 16);
	assert_int_equal(n.target.nr_tasks, -1); /* no task directory */
	lw_node_free(&n);
	rm_tree(dir);
}

/* ---- check: the finding and its exact commands ---- */

/* A slice above the unit throttles: systemctl on the slice, now and for
 * good; burst as the lighter alternative; one busy thread, no second
 * finding. */
static void test_check_unit(void **state)
{
	const struct lw_finding *f;
	struct ctx c;

	check_on(&c, "quota-unit", 4242);
	assert_int_equal(nr_quota(&c.fs), 1);
	f = quota_finding(&c.fs, 0);
	assert_int_equal(f->severity, LW_SEV_WARN); /* 2.5% of periods */
	assert_contains(f->seen, "cgroup /app.slice/app-web.slice (unit app-web.slice), above the "
				 "target's /app.slice/app-web.slice/gateway.service: quota 1.00 "
				 "CPUs (100000 100000), burst 0 us, throttled in 2050 of 81000 "
				 "periods (2.5%), 4.10 s in total, since the cgroup was made");
	assert_contains(f->seen, "also limited: /app.slice/app-web.slice/gateway.service (unit "
				 "gateway.service), quota 4 CPUs, throttled in 0 of 81000 periods");
	assert_contains(f->seen, "threads: 1 of the 4 read ran at least a tenth of the busiest "
				 "one's CPU time, within the 1 CPU of the quota");
	assert_contains(f->seen,
			"suggested 2 CPUs: today's 1 plus the 2.00 ms each throttled "
			"period left its runqueues waiting (4.10 s over 2050) is 1.02 CPUs");
	assert_int_equal(f->fix.n, 2);
	assert_string_equal(f->fix.v[0],
			    "systemctl set-property --runtime app-web.slice CPUQuota=200%");
	assert_string_equal(
		f->fix.v[1],
		"# lighter, the quota kept: echo 2000 > "
		"/sys/fs/cgroup/app.slice/app-web.slice/cpu.max.burst lets a burst spend "
		"up to 2000 us that earlier periods left unused (rollback: echo 0 > "
		"/sys/fs/cgroup/app.slice/app-web.slice/cpu.max.burst)");
	assert_int_equal(f->persist.n, 1);
	assert_string_equal(f->persist.v[0], "systemctl set-property app-web.slice CPUQuota=200%");
	assert_int_equal(f->rollback.n, 2);
	assert_string_equal(f->rollback.v[0],
			    "systemctl set-property --runtime app-web.slice CPUQuota=100%");
	assert_string_equal(f->rollback.v[1], "systemctl set-property app-web.slice CPUQuota=100%");
	assert_string_equal(f->verify.v[0], "cat /sys/fs/cgroup/app.slice/app-web.slice/cpu.stat  "
					    "# nr_throttled stops growing");
	assert_string_equal(f->verify.v[1],
			    "latwhy -p 4242 -d 30s  # no quota time left in the slow requests");
	assert_contains(f->cost, "neighbours");
	ctx_free(&c);
}

/* Two limits under the new quota: the outer raised first (v1 refuses a
 * child above its parent), the inner lowered first on the way back. */
static void test_check_nested_order(void **state)
{
	const struct lw_finding *f;
	struct ctx c;

	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "quota-unit", 4242);
	snprintf(c.n.target.cg[0].cpu_max, sizeof(c.n.target.cg[0].cpu_max), "150000 100000");
	c.n.target.cg[0].quota_us = 150000;
	assert_int_equal(lw_advise_node(&c.n, &c.fs), 0);
	f = quota_finding(&c.fs, 0);
	assert_string_equal(f->fix.v[0],
			    "systemctl set-property --runtime app-web.slice CPUQuota=200%");
	assert_string_equal(f->fix.v[1],
			    "systemctl set-property --runtime gateway.service CPUQuota=200%");
	assert_string_equal(f->rollback.v[0],
			    "systemctl set-property --runtime gateway.service CPUQuota=150%");
	assert_string_equal(f->rollback.v[1],
			    "systemctl set-property gateway.service CPUQuota=150%");
	assert_string_equal(f->rollback.v[2],
			    "systemctl set-property --runtime app-web.slice CPUQuota=100%");
	ctx_free(&c);
}

/* docker update on the container; no burst file, no burst note; six busy
 * workers on 1.5 CPUs: the pool's own finding. */
static void test_check_docker(void **state)
{
	const struct lw_finding *f;
	struct ctx c;

	check_on(&c, "quota-docker", 3131);
	assert_int_equal(nr_quota(&c.fs), 2);
	f = quota_finding(&c.fs, 0);
	assert_int_equal(f->severity, LW_SEV_CRIT); /* 40% of periods */
	assert_contains(f->seen, "(docker container 8a1c3b6f0e2d): quota 1.50 CPUs (150000), "
				 "throttled in 12093 of 30233 periods (40.0%), 604.65 s");
	assert_contains(f->seen, "suggested 2 CPUs: today's 1.5 plus the 50.00 ms");
	assert_int_equal(f->fix.n, 2);
	assert_string_equal(f->fix.v[0], "docker update --cpus 2 " DOCKER_ID);
	assert_string_equal(f->fix.v[1],
			    "# docker refuses --cpus for a container made with "
			    "--cpu-quota: docker update --cpu-quota 200000 " DOCKER_ID);
	assert_int_equal(f->rollback.n, 1);
	assert_string_equal(f->rollback.v[0], "docker update --cpus 1.5 " DOCKER_ID);
	assert_has(&f->persist, "--cpus 2 in its run command or compose file");
	assert_string_equal(f->verify.v[0], "cat /sys/fs/cgroup/cpu/docker/" DOCKER_ID
					    "/cpu.stat  # nr_throttled stops growing");
	f = quota_finding(&c.fs, 1);
	assert_int_equal(f->severity, LW_SEV_WARN);
	assert_contains(f->seen, "pid 3131 runs 6 threads that use CPU (of 7 read) against a "
				 "quota of 2 CPUs on /docker/" DOCKER_ID);
	assert_contains(f->why, "spend a period's 1.50 CPUs of quota in about 25.00 ms");
	assert_string_equal(f->fix.v[0], "# size its worker pool (threads or processes that run at "
					 "once) to 2, the setting its code reads");
	assert_non_null(f->cost);
	ctx_free(&c);
}

/* A pod's limit is changed in its spec, never its cgroup; a Go container
 * above its quota: GOMAXPROCS from the limit. */
static void test_check_k8s_systemd(void **state)
{
	static const char *const never[] = {"/sys/fs/cgroup/kubepods", "echo "};
	const struct lw_finding *f;
	struct ctx c;

	check_on(&c, "quota-k8s", 5150);
	assert_int_equal(nr_quota(&c.fs), 2);
	assert_no_cmd(&c.fs, never, 2);
	f = quota_finding(&c.fs, 0);
	assert_int_equal(f->severity, LW_SEV_CRIT);
	assert_contains(f->seen, "(pod container 4f2a9c8e1b7d): quota 2.00 CPUs (200000 100000), "
				 "burst 0 us, throttled in 7650 of 90011 periods (8.5%)");
	assert_contains(f->seen, "also limited: " K8S_POD " (pod " K8S_UID ", Burstable), quota "
				 "2.5 CPUs, throttled in 210 of 90011 periods");
	assert_contains(f->seen, "threads: 10 of the 16 read ran at least a tenth of the busiest "
				 "one's CPU time, above the 2 CPUs of the quota (Go's GOMAXPROCS "
				 "sizes them)");
	assert_int_equal(f->fix.n, 3);
	assert_string_equal(f->fix.v[0], "# the kubelet owns pod " K8S_UID
					 "'s cgroups and rewrites them: raise the container's "
					 "resources.limits.cpu from 2 to \"3\" in the pod spec");
	assert_string_equal(f->fix.v[1], "# find the pod: kubectl get pods -A -o "
					 "custom-columns=NS:.metadata.namespace,POD:.metadata.name,"
					 "UID:.metadata.uid | grep " K8S_UID);
	assert_string_equal(
		f->fix.v[2],
		"# then: kubectl set resources deployment/NAME -n NS -c CONTAINER "
		"--limits=cpu=3 (container id 4f2a9c8e1b7d; the rollout makes new pods)");
	assert_string_equal(f->rollback.v[0], "# kubectl set resources deployment/NAME -n NS -c "
					      "CONTAINER --limits=cpu=2");
	assert_has(&f->persist, "resources.limits.cpu: \"3\" in the manifest");
	f = quota_finding(&c.fs, 1);
	assert_contains(f->seen, "pid 5150 (Go) runs 10 threads that use CPU (of 16 read) against "
				 "a quota of 2 CPUs");
	assert_contains(f->fix.v[0], "env: [{name: GOMAXPROCS, valueFrom: {resourceFieldRef: "
				     "{resource: limits.cpu}}}]");
	assert_contains(f->fix.v[0], "kubectl set env deployment/NAME -n NS -c CONTAINER "
				     "GOMAXPROCS=2");
	assert_contains(f->fix.v[1], "Go 1.25 and later");
	assert_string_equal(f->rollback.v[0],
			    "# kubectl set env deployment/NAME -n NS -c CONTAINER GOMAXPROCS-");
	ctx_free(&c);
}

/* Guaranteed: requests rise with limits; a JVM: ActiveProcessorCount. */
static void test_check_k8s_cgroupfs(void **state)
{
	const struct lw_finding *f;
	struct ctx c;

	check_on(&c, "quota-k8s-cgroupfs", 6262);
	assert_int_equal(nr_quota(&c.fs), 2);
	f = quota_finding(&c.fs, 0);
	assert_contains(f->seen,
			"burst 0 us, throttled in 9874 of 44120 periods (22.4%), 296.22 s");
	assert_contains(f->seen, "(pod " FS_UID ", Guaranteed), quota 1 CPU");
	assert_string_equal(
		f->fix.v[2],
		"# then: kubectl set resources deployment/NAME -n NS -c CONTAINER --limits=cpu=2 "
		"--requests=cpu=2 (container id c3d2e1f0a9b8; the rollout makes new pods)");
	assert_contains(f->fix.v[3], "a Guaranteed pod keeps requests equal to limits");
	assert_string_equal(f->rollback.v[0], "# kubectl set resources deployment/NAME -n NS -c "
					      "CONTAINER --limits=cpu=1 --requests=cpu=1");
	/* a pod's cgroup is the kubelet's: no burst write either */
	assert_false(strv_has(&f->fix, "cfs_burst_us"));
	f = quota_finding(&c.fs, 1);
	assert_contains(f->seen, "pid 6262 (JVM) runs 6 threads that use CPU (of 32 read) against "
				 "a quota of 1 CPU");
	assert_contains(f->seen, "its GC threads (GC Thread#N) are sized for more CPUs");
	assert_string_equal(f->fix.v[0],
			    "# add -XX:ActiveProcessorCount=1 to its java command line "
			    "(today: none), or to JAVA_TOOL_OPTIONS where nothing else "
			    "sets it (a unit's Environment=, the pod spec's env)");
	assert_string_equal(f->cost, "no more than 1 thread run at once: work the quota never paid "
				     "for is not lost; a restart to apply it");
	ctx_free(&c);
}

/* A Go service under systemd: a drop-in sets GOMAXPROCS, removed on rollback. */
static void test_check_go_unit(void **state)
{
	const struct lw_finding *f;
	struct ctx c;

	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "quota-unit", 4242);
	c.n.target.runtime = LW_RT_GO;
	c.n.target.busy_tasks = 3;
	assert_int_equal(lw_advise_node(&c.n, &c.fs), 0);
	f = quota_finding(&c.fs, 1);
	assert_non_null(f);
	assert_string_equal(f->fix.v[0],
			    "cat > /etc/systemd/system/gateway.service.d/latwhy-gomaxprocs.conf "
			    "<<'EOF'\n[Service]\nEnvironment=GOMAXPROCS=1\nEOF");
	assert_string_equal(f->fix.v[1], "systemctl daemon-reload");
	assert_string_equal(f->fix.v[2], "systemctl restart gateway.service");
	assert_string_equal(f->rollback.v[0],
			    "rm -f /etc/systemd/system/gateway.service.d/latwhy-gomaxprocs.conf");
	assert_string_equal(f->verify.v[0],
			    "systemctl show -p Environment gateway.service  # GOMAXPROCS=1");
	ctx_free(&c);
}

/* No limit, or one that never throttled: no finding. */
static void test_check_none(void **state)
{
	struct ctx c;

	check_on(&c, "numa-nic", 4242); /* cpu.max "max 100000" */
	assert_int_equal(c.n.target.cg_bind, -1);
	assert_int_equal(nr_quota(&c.fs), 0);
	ctx_free(&c);

	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "quota-unit", 4242);
	for (int i = 0; i < c.n.target.nr_cg; i++)
		c.n.target.cg[i].nr_throttled = c.n.target.cg[i].throttled_usec = 0;
	assert_int_equal(lw_advise_node(&c.n, &c.fs), 0);
	assert_int_equal(nr_quota(&c.fs), 0);
	ctx_free(&c);
}

/* ---- the engine and the trace ---- */

static void feed(struct lw_engine *e, __u64 latency, __u64 run, __u64 quota, __u64 sched)
{
	struct lw_request r = {.type = LW_REC_REQUEST, .pid = 5150, .tid = 5151};

	r.latency_ns = latency;
	r.ns[LW_B_RUN] = run;
	r.ns[LW_B_QUOTA] = quota;
	r.ns[LW_B_SCHED] = sched;
	r.flags = LW_REQ_QUOTA_KNOWN;
	assert_int_equal(lw_engine_feed(e, &r, sizeof(r)), 0);
}

/* Each slow request's quota wait: counted, summed, the longest kept. */
static void test_engine_quota_waits(void **state)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_trace_facts f;
	struct lw_summary s;

	assert_non_null(e);
	feed(e, 10000000, 2000000, 8000000, 0);
	feed(e, 5000000, 1000000, 0, 4000000);
	feed(e, 6000000, 1000000, 5000000, 0);
	lw_engine_summarize(e, &s);
	assert_int_equal(s.quota_waits, 2);
	assert_int_equal(s.quota_wait_ns, 13000000);
	assert_int_equal(s.quota_wait_max_ns, 8000000);
	assert_int_equal(s.cause[LW_CAUSE_QUOTA].requests, 2);
	assert_true(s.cause[LW_CAUSE_QUOTA].measured);
	lw_explain_facts(&s, &f);
	assert_false(f.no_quota);
	assert_int_equal(f.quota_waits, 2);
	assert_int_equal(f.quota_wait_ns, 13000000);
	assert_int_equal(f.quota_wait_max_ns, 8000000);
	assert_int_equal(f.slow_requests, 3);
	s.flags |= LW_META_NO_QUOTA;
	s.cause[LW_CAUSE_QUOTA].measured = false;
	lw_explain_facts(&s, &f);
	assert_true(f.no_quota);
	lw_engine_free(e);
}

static const struct lw_trace_facts k8s_facts = {
	.pid = 5150,
	.slow_requests = 40,
	.share = {[LW_CAUSE_QUOTA] = 0.6},
	.cause_ns = {[LW_CAUSE_QUOTA] = 36000000},
	.quota_waits = 12,
	.quota_wait_ns = 36000000,
	.quota_wait_max_ns = 8000000,
};

/* A trace finding: the waits, the limit, the threads; the check's plan. */
static void test_trace_k8s(void **state)
{
	struct lw_trace_facts t = k8s_facts;
	const struct lw_finding *f;
	struct ctx c;

	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "quota-k8s", 5150);
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_int_equal(c.fs.n, 2);
	f = quota_finding(&c.fs, 0);
	assert_int_equal(f->severity, LW_SEV_CRIT);
	assert_contains(f->evidence,
			"60% of slow-request time (36.00 ms over 40 slow requests); 12 "
			"of 40 slow requests waited out a throttle, 36.00 ms in all, the "
			"longest 8.00 ms; cgroup " K8S_POD "/cri-containerd-" K8S_ID
			".scope (pod container 4f2a9c8e1b7d): quota 2.00 CPUs");
	assert_contains(f->evidence, "throttled in 7650 of 90011 periods (8.5%), 61.20 s in total, "
				     "since the cgroup was made (one reading)");
	assert_contains(f->evidence, "the target's own cgroup was throttled 62.04 s since made "
				     "(cpu.stat.local: its quota or a parent's)");
	assert_contains(f->evidence, "threads: 10 of the 16 read");
	assert_contains(f->why, "no C-state, haltpoll or CPU move shortens it");
	assert_contains(f->fix.v[0], "raise the container's resources.limits.cpu from 2 to \"3\"");
	f = quota_finding(&c.fs, 1);
	assert_contains(f->seen, "(Go) runs 10 threads");
	ctx_free(&c);
}

/* With the cgroups' cpu.stat at the trace's start: what the trace added,
 * and the quota suggested from it. */
static void test_trace_delta(void **state)
{
	struct lw_trace_facts t = k8s_facts;
	const struct lw_finding *f;
	struct lw_node start;
	struct ctx c;

	read_fixture(&start, "quota-k8s", 5150);
	start.target.cg[0].nr_periods -= 300;
	start.target.cg[0].nr_throttled -= 100;
	start.target.cg[0].throttled_usec -= 2500000; /* 25 ms a throttled period */
	lw_explain_quota_start(&t, &start);
	assert_int_equal(t.nr_cg_start, 4);
	assert_string_equal(t.cg_start[1].path, K8S_POD);
	lw_node_free(&start);

	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "quota-k8s", 5150);
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	f = quota_finding(&c.fs, 0);
	assert_contains(f->evidence, "throttled in 100 of 300 periods (33.3%), 2.50 s in total, "
				     "during the trace (cpu.stat at its start and end)");
	/* 2 CPUs + 25 ms per 100 ms period: 2.25, rounded up to 3 */
	assert_contains(f->evidence, "suggested 3 CPUs: today's 2 plus the 25.00 ms each throttled "
				     "period left its runqueues waiting (2.50 s over 100) is 2.25 "
				     "CPUs");
	ctx_free(&c);
}

/* Every word of a fix for idle or sched time: never for quota time. */
static const char *const idle_or_move[] = {"haltpoll", "cpuidle",     "taskset",
					   "cpuset",   "AllowedCPUs", "CPUAffinity"};
#define NR_IDLE_OR_MOVE (sizeof(idle_or_move) / sizeof(idle_or_move[0]))

/* Evidence a sched and an idle finding would act on: a movable preemptor,
 * idle wake-ups, on CPUs 2-3 with 0-1 free. */
static void add_suspects(struct lw_trace_facts *t)
{
	t->pid = 4242;
	t->slow_requests = 50;
	t->cpus_mask[0] = 0xc;
	t->preempt[0] =
		(struct lw_fact_task){.pid = 900, .comm = "fluent-bit", .ns = 3000000, .count = 40};
	t->nr_preempt = 1;
	t->idle_wakeups = 400;
	t->idle_wake_ns = 8000000;
}

/* Measured quota time (the buckets apart): the quota finding alone, none
 * of haltpoll, C-states, taskset or cpusets, though the preemptor and the
 * idle wake-ups are there. Fails if quota time reaches idle or sched. */
static void test_quota_time_no_idle_or_move(void **state)
{
	struct lw_trace_facts t = {0};
	struct ctx c;

	add_suspects(&t);
	t.share[LW_CAUSE_QUOTA] = 0.7;
	t.cause_ns[LW_CAUSE_QUOTA] = 70000000;
	t.quota_waits = 30;
	memset(&c, 0, sizeof(c));
	/* deep C2 on CPUs 2-3, CPUs 0-1 to move tasks to, a throttled quota */
	read_fixture(&c.n, "acpi-powersave", 4242);
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_int_equal(c.fs.n, 1);
	assert_int_equal(c.fs.v[0].cause, LW_CAUSE_QUOTA);
	assert_no_cmd(&c.fs, idle_or_move, NR_IDLE_OR_MOVE);
	ctx_free(&c);

	/* a guest whose haltpoll polls too little: still no haltpoll */
	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "vm-nocpufreq", 4242);
	t.cpus_mask[0] = 0x3;
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_no_cmd(&c.fs, idle_or_move, NR_IDLE_OR_MOVE);
	ctx_free(&c);
}

/* Not measured apart (ABI 1, no CFS bandwidth tracing): throttled waits sit
 * in sched and idle. With the target's cgroup throttled, those findings keep
 * their evidence but give no move or idle fix, and the quota finding says
 * what it cannot measure. A node without throttling keeps the fixes. */
static void test_unmeasured_quota_holds_fixes(void **state)
{
	struct lw_trace_facts t = {0};
	const struct lw_finding *q;
	struct ctx c;

	add_suspects(&t);
	t.no_quota = true;
	t.share[LW_CAUSE_SCHED] = 0.4;
	t.share[LW_CAUSE_IDLE] = 0.3;
	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "acpi-powersave", 4242);
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_int_equal(c.fs.n, 3); /* sched, idle, quota */
	assert_no_cmd(&c.fs, idle_or_move, NR_IDLE_OR_MOVE);
	assert_has(&c.fs.v[0].fix, "no task is moved until a trace measures the quota");
	assert_has(&c.fs.v[1].fix, "no C-state or idle-polling change");
	assert_contains(c.fs.v[0].evidence, "fluent-bit (pid 900)");
	q = quota_finding(&c.fs, 0);
	assert_contains(q->evidence, "share not measured (sched and idle hold 70% of slow-request "
				     "time over 50 slow requests, throttled waits among it); "
				     "throttling was not measured apart in this trace");
	assert_has(&q->fix, "systemctl set-property --runtime gateway.service CPUQuota=200%");
	ctx_free(&c);

	/* the same trace on a node whose quota never throttled: the fixes */
	memset(&c, 0, sizeof(c));
	read_fixture(&c.n, "acpi-powersave", 4242);
	for (int i = 0; i < c.n.target.nr_cg; i++)
		c.n.target.cg[i].nr_throttled = c.n.target.cg[i].throttled_usec = 0;
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_int_equal(c.fs.n, 2);
	assert_has(&c.fs.v[0].fix, "taskset -apc 0-1 900");
	assert_has(&c.fs.v[1].fix, "echo 1 > /sys/devices/system/cpu/cpu2/cpuidle/state2/disable");
	ctx_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_unit),
		cmocka_unit_test(test_read_docker_v1),
		cmocka_unit_test(test_read_k8s_systemd),
		cmocka_unit_test(test_read_k8s_cgroupfs),
		cmocka_unit_test(test_owner_names),
		cmocka_unit_test(test_jvm_cmdline),
		cmocka_unit_test(test_check_unit),
		cmocka_unit_test(test_check_nested_order),
		cmocka_unit_test(test_check_docker),
		cmocka_unit_test(test_check_k8s_systemd),
		cmocka_unit_test(test_check_k8s_cgroupfs),
		cmocka_unit_test(test_check_go_unit),
		cmocka_unit_test(test_check_none),
		cmocka_unit_test(test_engine_quota_waits),
		cmocka_unit_test(test_trace_k8s),
		cmocka_unit_test(test_trace_delta),
		cmocka_unit_test(test_quota_time_no_idle_or_move),
		cmocka_unit_test(test_unmeasured_quota_holds_fixes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
