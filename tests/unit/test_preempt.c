// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_preempt.c - whose CPU time a target's waits were (issue 31): the
 * kernel's class decision (lw_by_class(), shared with BPF), each
 * preemptor's pod through the engine into the JSON and text evidence, the
 * sched finding per kind of preemptor (another pod's: Kubernetes' fix; the
 * host's: taskset; a kernel thread: none; the target's own pod's: its
 * requests), the quota finding naming the pod, and the exporter's
 * latwhy_preempted_seconds_total.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advice/advise.h"
#include "advice/explain.h"
#include "engine/engine.h"
#include "export/export.h"
#include "output/render.h"

#define LW_FIXTURES "tests/fixtures"

static void assert_contains(const char *s, const char *needle)
{
	if (!s || !strstr(s, needle))
		fail_msg("\"%s\" not in \"%s\"", needle, s ? s : "(null)");
}

static void assert_lacks(const char *s, const char *needle)
{
	if (s && strstr(s, needle))
		fail_msg("\"%s\" in \"%s\"", needle, s);
}

/* Every line of v joined, for the assertions above. */
static char *joined(const struct lw_strv *v)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < v->n; i++)
		len += strlen(v->v[i]) + 1;
	s = calloc(1, len);
	assert_non_null(s);
	for (size_t i = 0; i < v->n; i++) {
		strcat(s, v->v[i]);
		strcat(s, "\n");
	}
	return s;
}

/* Some line of v holds needle, or none does. */
static void assert_v(const struct lw_strv *v, const char *needle, bool want)
{
	char *s = joined(v);

	if (want)
		assert_contains(s, needle);
	else
		assert_lacks(s, needle);
	free(s);
}

/* ---- the kernel's decision ---------------------------------------------- */

static void test_class(void **state)
{
	/* a kernel thread is the kernel's, whatever its cgroup says */
	assert_int_equal(lw_by_class(1, 1, 1), LW_BY_KERNEL);
	assert_int_equal(lw_by_class(1, 0, 0), LW_BY_KERNEL);
	/* the target's own pod (or process) before any other pod */
	assert_int_equal(lw_by_class(0, 1, 1), LW_BY_OWN);
	assert_int_equal(lw_by_class(0, 1, 0), LW_BY_OWN);
	assert_int_equal(lw_by_class(0, 0, 1), LW_BY_POD);
	assert_int_equal(lw_by_class(0, 0, 0), LW_BY_HOST);
}

/* ---- each preemptor's pod, from records to the evidence ---------------- */

static void feed(struct lw_engine *e, const void *rec, size_t len)
{
	assert_int_equal(lw_engine_feed(e, rec, len), 0);
}

static void pod_rec(struct lw_pod_rec *r, __u32 pid, const char *ns, const char *name,
		    const char *ctr, const char *qos)
{
	memset(r, 0, sizeof(*r));
	r->type = LW_REC_POD;
	r->pid = pid;
	r->named = ns[0] != '\0';
	snprintf(r->ns, sizeof(r->ns), "%s", ns);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->container, sizeof(r->container), "%s", ctr);
	snprintf(r->qos, sizeof(r->qos), "%s", qos);
}

/* A trace of pid 100 (pod shop/web-1, container server): cruncher (pod
 * batch/cruncher-5f) ran longest, then a host process, a kworker, a pod
 * with no log directory; one slow request waited for the cruncher. */
static void summary_of(struct lw_summary *s)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_preempt_rec p[] = {
		{.type = LW_REC_PREEMPT,
		 .pid = 5530,
		 .comm = "cruncher",
		 .ns = 4000000000ULL,
		 .count = 9000,
		 .tgid = 5530},
		{.type = LW_REC_PREEMPT,
		 .pid = 900,
		 .comm = "fluent-bit",
		 .ns = 300000000ULL,
		 .count = 40,
		 .tgid = 900},
		{.type = LW_REC_PREEMPT,
		 .pid = 27,
		 .comm = "kworker/1:0",
		 .ns = 200000000ULL,
		 .count = 20,
		 .tgid = 27},
		{.type = LW_REC_PREEMPT,
		 .pid = 6000,
		 .comm = "anon",
		 .ns = 100000000ULL,
		 .count = 10,
		 .tgid = 6000},
	};
	struct lw_request r = {.type = LW_REC_REQUEST, .pid = 100, .tid = 100, .cpu = 1};
	struct lw_meta_rec m = {.type = LW_REC_META, .pid = 100, .comm = "server"};
	struct lw_pod_rec pod;

	assert_non_null(e);
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		feed(e, &p[i], sizeof(p[i]));
	pod_rec(&pod, 5530, "batch", "cruncher-5f", "cruncher", "BestEffort");
	feed(e, &pod, sizeof(pod));
	pod_rec(&pod, 6000, "", "0a7b6c5d-4e3f-4a2b-8c1d-9e8f7a6b5c43", "", "Burstable");
	feed(e, &pod, sizeof(pod));
	pod_rec(&pod, 100, "shop", "web-1", "server", "Burstable");
	feed(e, &pod, sizeof(pod));
	r.latency_ns = 5000000;
	r.ns[LW_B_SCHED] = 4800000;
	r.ns[LW_B_RUN] = 200000;
	r.preempt_pid = 5530;
	r.preempt_ns = 4800000;
	memcpy(r.preempt_comm, "cruncher", 9);
	feed(e, &r, sizeof(r));
	feed(e, &m, sizeof(m));
	lw_engine_summarize(e, s);
	lw_engine_free(e);
}

static char *render(const struct lw_summary *s, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct lw_render *r;

	assert_non_null(f);
	r = lw_render_new(f, json);
	assert_non_null(r);
	lw_render_summary(r, s, NULL);
	lw_render_free(r);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_evidence(void **state)
{
	struct lw_summary *s = calloc(1, sizeof(*s));
	char *text, *json;

	assert_non_null(s);
	summary_of(s);
	assert_int_equal(s->nr_preempt, 4);
	assert_string_equal(s->preempt_pod[0].name, "cruncher-5f");
	assert_int_equal(s->preempt_pod[1].type, 0); /* the host's: no pod */
	assert_string_equal(s->target_pod.ns, "shop");
	assert_string_equal(s->slow_wait_pod[0].container, "cruncher");

	text = render(s, false);
	assert_contains(text, "ran instead of it: cruncher (pod batch/cruncher-5f, container "
			      "cruncher; pid 5530) 4.00 s over 9000 waits");
	assert_contains(text, "ran instead of it: fluent-bit (pid 900) 300.00 ms over 40 waits");
	assert_contains(text, "slow requests waited longest for cruncher (pod batch/cruncher-5f, "
			      "container cruncher; pid 5530): in 1 of 1");
	free(text);

	json = render(s, true);
	assert_contains(json, "\"comm\":\"cruncher\",\"tracer\":false,\"ns\":4000000000,"
			      "\"count\":9000,\"pod\":{\"namespace\":\"batch\",\"name\":"
			      "\"cruncher-5f\",\"container\":\"cruncher\",\"qos\":\"BestEffort\","
			      "\"named\":true}");
	assert_contains(json, "\"comm\":\"fluent-bit\",\"tracer\":false,\"ns\":300000000,"
			      "\"count\":40,\"pod\":null");
	/* no log directory: named by its uid, and says so */
	assert_contains(json, "\"pod\":{\"namespace\":\"\",\"name\":"
			      "\"0a7b6c5d-4e3f-4a2b-8c1d-9e8f7a6b5c43\",\"container\":null,"
			      "\"qos\":\"Burstable\",\"named\":false}");
	assert_contains(json, "\"requests\":1,\"ns\":4800000,\"pod\":{\"namespace\":\"batch\"");
	free(json);
	free(s);
}

/* A capture's record may hold any bytes: names end at their field. */
static void test_unterminated(void **state)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_preempt_rec p = {.type = LW_REC_PREEMPT, .pid = 7, .comm = "x", .ns = 1};
	struct lw_summary *s = calloc(1, sizeof(*s));
	struct lw_pod_rec pod;
	char words[512];

	assert_non_null(e);
	assert_non_null(s);
	memset(&pod, 'a', sizeof(pod));
	pod.type = LW_REC_POD;
	pod.pid = 7;
	pod.named = 1;
	feed(e, &p, sizeof(p));
	feed(e, &pod, sizeof(pod));
	lw_engine_summarize(e, s);
	assert_int_equal(strlen(s->preempt_pod[0].ns), LW_K8S_NS_LEN - 1);
	assert_int_equal(strlen(s->preempt_pod[0].name), LW_K8S_NAME_LEN - 1);
	lw_pod_words(&s->preempt_pod[0], words, sizeof(words));
	assert_int_equal(strncmp(words, "pod aaa", 7), 0);
	lw_engine_free(e);
	free(s);
}

/* ---- the sched finding, per kind of preemptor --------------------------- */

struct ctx {
	struct lw_node n;
	struct lw_findings fs;
};

static const struct lw_finding *sched_of(struct ctx *c, const struct lw_trace_facts *t)
{
	memset(c, 0, sizeof(*c));
	assert_int_equal(lw_node_read(&c->n, LW_FIXTURES "/acpi-powersave", t->pid), 0);
	assert_int_equal(lw_advise_trace(&c->n, t, &c->fs), 0);
	for (size_t i = 0; i < c->fs.n; i++)
		if (c->fs.v[i].cause == LW_CAUSE_SCHED)
			return &c->fs.v[i];
	fail_msg("no sched finding");
	return NULL;
}

static void ctx_free(struct ctx *c)
{
	lw_findings_free(&c->fs);
	lw_node_free(&c->n);
}

static void fact_pod(struct lw_fact_pod *p, const char *ns, const char *name, const char *ctr,
		     const char *qos)
{
	memset(p, 0, sizeof(*p));
	p->in = true;
	p->named = true;
	snprintf(p->ns, sizeof(p->ns), "%s", ns);
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->container, sizeof(p->container), "%s", ctr);
	snprintf(p->qos, sizeof(p->qos), "%s", qos);
}

/* The acpi-powersave fixture's target (4242) runs on CPUs 2-3 of 0-3. */
static struct lw_trace_facts sched_facts(void)
{
	struct lw_trace_facts t = {
		.pid = 4242,
		.slow_requests = 50,
		.cpus_mask = {0xc},
		.preempt = {{.pid = 5530, .comm = "cruncher", .ns = 40000000, .count = 900},
			    {.pid = 900, .comm = "fluent-bit", .ns = 30000000, .count = 40},
			    {.pid = 27, .comm = "kworker/2:1", .ns = 20000000, .count = 20},
			    {.pid = 4300, .comm = "sidecar", .ns = 10000000, .count = 10}},
		.nr_preempt = 4,
		.freq_source = "power:cpu_frequency",
	};

	t.share[LW_CAUSE_SCHED] = 0.6;
	t.cause_ns[LW_CAUSE_SCHED] = 100000000;
	fact_pod(&t.preempt[0].pod, "batch", "cruncher-5f", "cruncher", "BestEffort");
	fact_pod(&t.preempt[3].pod, "shop", "web-1", "envoy", "Burstable");
	return t;
}

/* A pod target, preempted by another pod's container, the host's process,
 * a kernel thread and a container of its own pod. */
static void test_sched_pod_target(void **state)
{
	struct lw_trace_facts t = sched_facts();
	const struct lw_finding *f;
	char *fix, *verify;
	struct ctx c;

	fact_pod(&t.target_pod, "shop", "web-1", "server", "Burstable");
	f = sched_of(&c, &t);
	fix = joined(&f->fix);
	verify = joined(&f->verify);
	assert_contains(f->evidence, "cruncher (pid 5530, pod batch/cruncher-5f, container "
				     "cruncher) ran 40.00 ms in 900 slices");
	/* another pod's: Kubernetes' fix, no taskset of its container's process */
	assert_lacks(fix, "taskset -apc 0-1 5530");
	assert_contains(fix, "# pod batch/cruncher-5f's containers ran on the CPUs 2-3 of pod "
			     "shop/web-1");
	assert_contains(fix, "the Guaranteed QoS class (Burstable now");
	assert_contains(fix, "kubelet --cpu-manager-policy=static --reserved-cpus=CPUS");
	assert_contains(fix, "podAntiAffinity in pod batch/cruncher-5f's spec");
	/* the host's process still moves */
	assert_contains(fix, "taskset -apc 0-1 900");
	/* a per-CPU kernel thread: a note, no move */
	assert_contains(fix, "# kworker/2:1 (pid 27) is a per-CPU kernel thread");
	assert_lacks(fix, "taskset -apc 0-1 27");
	/* its own pod's other container: the pod's requests */
	assert_contains(fix, "# sidecar (pid 4300) is of the target's own pod shop/web-1, "
			     "container envoy");
	assert_lacks(fix, "taskset -apc 0-1 4300");
	assert_contains(verify, "cat /var/lib/kubelet/cpu_manager_state");
	assert_contains(verify, "latwhy --pod shop/web-1 -d 30s");
	assert_v(&f->persist, "cpuManagerPolicy in the kubelet's config file", true);
	assert_contains(f->cost, "the node's shared pool");
	assert_contains(f->cost, "; the moved tasks share CPUs 0-1 only");
	free(fix);
	free(verify);
	ctx_free(&c);
}

/* Guaranteed already: whole CPUs are what is missing. */
static void test_sched_guaranteed(void **state)
{
	struct lw_trace_facts t = sched_facts();
	const struct lw_finding *f;
	struct ctx c;
	char *fix;

	t.nr_preempt = 1;
	fact_pod(&t.target_pod, "shop", "web-1", "server", "Guaranteed");
	f = sched_of(&c, &t);
	fix = joined(&f->fix);
	assert_contains(fix, "it is Guaranteed already; with a whole number of CPUs");
	assert_lacks(fix, "taskset -apc");
	/* nothing moved: no taskset plan's persist or rollback */
	assert_v(&f->persist, "AllowedCPUs", false);
	free(fix);
	ctx_free(&c);
}

/* A target in no pod, a pod's container on its CPUs: pods kept off them. */
static void test_sched_host_target(void **state)
{
	struct lw_trace_facts t = sched_facts();
	const struct lw_finding *f;
	struct ctx c;
	char *fix;

	t.nr_preempt = 2;
	f = sched_of(&c, &t);
	fix = joined(&f->fix);
	assert_contains(fix, "# pods' containers (batch/cruncher-5f) ran on the target's CPUs 2-3");
	assert_contains(fix, "reservedSystemCPUs: \"2-3\"");
	assert_contains(fix, "strict-cpu-reservation");
	assert_lacks(fix, "taskset -apc 0-1 5530");
	assert_contains(fix, "taskset -apc 0-1 900"); /* the host's process */
	free(fix);
	ctx_free(&c);
}

/* No pod anywhere: the finding as it was. */
static void test_sched_no_pods(void **state)
{
	struct lw_trace_facts t = sched_facts();
	const struct lw_finding *f;
	struct ctx c;
	char *fix;

	memset(&t.preempt[0].pod, 0, sizeof(t.preempt[0].pod));
	t.nr_preempt = 2;
	f = sched_of(&c, &t);
	fix = joined(&f->fix);
	assert_contains(fix, "taskset -apc 0-1 5530");
	assert_lacks(fix, "cpu-manager-policy");
	assert_v(&f->persist, "AllowedCPUs", true);
	free(fix);
	ctx_free(&c);
}

/* ---- the quota finding names the pod and its limit ---------------------- */

static void test_quota_names_pod(void **state)
{
	struct lw_trace_facts t = {
		.pid = 5150,
		.slow_requests = 40,
		.share = {[LW_CAUSE_QUOTA] = 0.6},
		.cause_ns = {[LW_CAUSE_QUOTA] = 36000000},
		.quota_waits = 12,
		.quota_wait_ns = 36000000,
		.quota_wait_max_ns = 8000000,
	};
	const struct lw_finding *f = NULL;
	struct ctx c;
	char *fix;

	fact_pod(&t.target_pod, "shop", "gateway-7d9f", "gateway", "Burstable");
	memset(&c, 0, sizeof(c));
	assert_int_equal(lw_node_read(&c.n, LW_FIXTURES "/quota-k8s", 5150), 0);
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	for (size_t i = 0; i < c.fs.n && !f; i++)
		if (c.fs.v[i].cause == LW_CAUSE_QUOTA)
			f = &c.fs.v[i];
	assert_non_null(f);
	fix = joined(&f->fix);
	assert_contains(f->evidence, "(pod shop/gateway-7d9f, Burstable), quota 2.5 CPUs");
	assert_contains(fix,
			"# the kubelet owns pod shop/gateway-7d9f's cgroups and rewrites "
			"them: raise container gateway's resources.limits.cpu from 2 to \"3\"");
	assert_contains(fix, "kubectl get pod gateway-7d9f -n shop");
	assert_contains(fix, "kubectl set resources deployment/NAME -n shop -c gateway "
			     "--limits=cpu=3");
	assert_v(&f->rollback, "-n shop -c gateway --limits=cpu=2", true);
	free(fix);
	ctx_free(&c);
}

/* ---- latwhy_preempted_seconds_total ------------------------------------- */

static void test_export(void **state)
{
	struct lw_export *x = lw_export_new("lat_server", LW_FIXTURES "/vm-nocpufreq");
	struct lw_preempt_by b = {.ns = {1000000000ULL, 2500000000ULL, 3, 0}};
	int web;
	size_t len;
	char *text;

	assert_non_null(x);
	web = lw_export_add_pod_series(x, "shop", "web-1", "server", "Burstable");
	assert_true(web > 0);
	lw_export_publish(x);
	text = lw_export_render(x, &len);
	assert_non_null(text);
	/* nothing counted yet: no family */
	assert_lacks(text, "latwhy_preempted_seconds_total");
	free(text);

	lw_export_series_preempted(x, 0, &b);
	lw_export_series_preempted(x, web, &b);
	lw_export_publish(x);
	text = lw_export_render(x, &len);
	assert_contains(text, "# TYPE latwhy_preempted_seconds_total counter\n");
	assert_contains(text, "latwhy_preempted_seconds_total{target=\"lat_server\",by=\"own\"} "
			      "1.000000000\n");
	assert_contains(text, "latwhy_preempted_seconds_total{namespace=\"shop\",pod=\"web-1\","
			      "container=\"server\",by=\"pod\"} 2.500000000\n");
	assert_contains(text, "container=\"server\",by=\"host\"} 0.000000003\n");
	assert_contains(text, "container=\"server\",by=\"kernel\"} 0.000000000\n");
	free(text);

	/* a restart keeps what was reached; the next tracer adds to it */
	lw_export_restart(x);
	b.ns[LW_BY_POD] = 500000000ULL;
	lw_export_series_preempted(x, web, &b);
	/* a slot that left (pod="other"'s) keeps its share */
	lw_export_preempted_retire(x, web, &b);
	lw_export_publish(x);
	text = lw_export_render(x, &len);
	assert_contains(text, "container=\"server\",by=\"pod\"} 3.500000000\n");
	free(text);

	/* the series dropped, its index taken by another pod: from 0 */
	lw_export_drop_series(x, web);
	assert_int_equal(lw_export_add_pod_series(x, "batch", "hog-1", "hog", "BestEffort"), web);
	lw_export_publish(x);
	text = lw_export_render(x, &len);
	assert_lacks(text, "pod=\"hog-1\",container=\"hog\",by=");
	assert_lacks(text, "pod=\"web-1\",container=\"server\",by=");
	free(text);
	lw_export_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class),
		cmocka_unit_test(test_evidence),
		cmocka_unit_test(test_unterminated),
		cmocka_unit_test(test_sched_pod_target),
		cmocka_unit_test(test_sched_guaranteed),
		cmocka_unit_test(test_sched_host_target),
		cmocka_unit_test(test_sched_no_pods),
		cmocka_unit_test(test_quota_names_pod),
		cmocka_unit_test(test_export),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
