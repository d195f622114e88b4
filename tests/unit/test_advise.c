// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_advise.c - the exact findings for each fixture tree, and the trace
 * findings built from facts. Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advice/advise.h"
#include "advice/explain.h"

#define LW_FIXTURES "tests/fixtures"

struct ctx {
	struct lw_node n;
	struct lw_findings fs;
};

static void node_findings(struct ctx *c, const char *name, int pid)
{
	char root[256];

	memset(c, 0, sizeof(*c));
	snprintf(root, sizeof(root), LW_FIXTURES "/%s", name);
	assert_int_equal(lw_node_read(&c->n, root, pid), 0);
	assert_int_equal(lw_advise_node(&c->n, &c->fs), 0);
}

static void ctx_free(struct ctx *c)
{
	lw_findings_free(&c->fs);
	lw_node_free(&c->n);
}

/* The findings' causes and severities, in order: "frequency:crit idle:warn". */
static void assert_shape(const struct lw_findings *fs, const char *want)
{
	char got[1024] = "";

	for (size_t i = 0; i < fs->n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s:%s", i ? " " : "",
			 lw_cause_name(fs->v[i].cause), lw_severity_name(fs->v[i].severity));
	assert_string_equal(got, want);
}

static bool strv_has(const struct lw_strv *v, const char *want)
{
	for (size_t i = 0; i < v->n; i++)
		if (strstr(v->v[i], want))
			return true;
	return false;
}

#define assert_has(v, s)   assert_true(strv_has(v, s))
#define assert_hasnt(v, s) assert_false(strv_has(v, s))
/* a missed string shows the text it was looked for in */
#define assert_contains(s, w)                                                                      \
	do {                                                                                       \
		if (!strstr((s) ? (s) : "", w))                                                    \
			fprintf(stderr, "not in: %s\n", (s) ? (s) : "(null)");                     \
		assert_non_null(strstr((s) ? (s) : "", w));                                        \
	} while (0)
#define assert_lacks(s, w) assert_null(strstr((s) ? (s) : "", w))

/* No command anywhere may try to move IRQ nr. */
static void assert_no_affinity_cmd(const struct lw_findings *fs, unsigned nr)
{
	char want[64];

	snprintf(want, sizeof(want), "/proc/irq/%u/smp_affinity", nr);
	for (size_t i = 0; i < fs->n; i++) {
		assert_hasnt(&fs->v[i].fix, want);
		assert_hasnt(&fs->v[i].persist, want);
		assert_hasnt(&fs->v[i].rollback, want);
	}
}

/* Every finding says what, why, and has a plan or says why there is none. */
static void assert_complete(const struct lw_findings *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		const struct lw_finding *f = &fs->v[i];

		assert_non_null(f->seen);
		assert_non_null(f->why);
		assert_true(f->fix.n > 0);
		if (f->fix.v[0][0] != '#') {
			assert_true(f->rollback.n > 0);
			assert_true(f->verify.n > 0);
		}
	}
}

/* ---- node findings ---- */

static void test_acpi_powersave(void **state)
{
	struct ctx c;
	const struct lw_finding *f;

	node_findings(&c, "acpi-powersave", 4242);
	assert_shape(&c.fs,
		     "frequency:crit idle:warn thp:crit thp:warn irq:warn irq:info quota:crit");
	assert_complete(&c.fs);

	/* powersave at 800 of 3700 MHz, on every CPU */
	f = &c.fs.v[0];
	assert_contains(f->seen, "governor powersave on CPUs 0-3");
	assert_contains(f->seen, "800 MHz of 3700 MHz");
	assert_contains(f->why, "4.6x");
	assert_int_equal(f->fix.n, 4);
	assert_string_equal(
		f->fix.v[0],
		"echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	assert_has(&f->persist, "Type=oneshot");
	assert_has(&f->persist, "for c in 0 1 2 3; do echo performance");
	assert_has(&f->persist, "systemctl enable latwhy-cpufreq.service");
	assert_has(&f->rollback,
		   "echo powersave > /sys/devices/system/cpu/cpu3/cpufreq/scaling_governor");
	assert_has(&f->verify, "scaling_cur_freq");
	assert_has(&f->verify, "Bzy_MHz");
	assert_contains(f->cost, "180 W -> 240 W, +33%");
	assert_contains(f->cost, "schedutil");

	/* C2 exits in 400 us, on the target's CPUs only */
	f = &c.fs.v[1];
	assert_contains(f->seen, "C2 (state2, 400 us exit latency) enabled on CPUs 2-3");
	assert_string_equal(f->fix.v[0],
			    "echo 1 > /sys/devices/system/cpu/cpu2/cpuidle/state2/disable");
	assert_int_equal(f->fix.n, 2);
	assert_has(&f->persist, "/etc/tmpfiles.d/latwhy-cstates.conf");
	assert_has(&f->rollback, "echo 0 > /sys/devices/system/cpu/cpu3/cpuidle/state2/disable");

	/* THP always + khugepaged defrag: madvise, never only as last resort */
	f = &c.fs.v[2];
	assert_contains(f->seen, "THP enabled=always");
	assert_string_equal(f->fix.v[0],
			    "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
	assert_has(&f->persist, "transparent_hugepage=madvise");
	assert_has(&f->rollback, "echo always > /sys/kernel/mm/transparent_hugepage/enabled");
	assert_contains(f->cost, "+0.3 ms P50");
	f = &c.fs.v[3];
	assert_string_equal(f->fix.v[0],
			    "echo 0 > /sys/kernel/mm/transparent_hugepage/khugepaged/defrag");
	assert_has(&f->persist,
		   "w /sys/kernel/mm/transparent_hugepage/khugepaged/defrag - - - - 0");
	assert_has(&f->rollback, "echo 1 > /sys/kernel/mm/transparent_hugepage/khugepaged/defrag");

	/* irqbalance spread eth0 queues over the target's CPUs 2-3 */
	f = &c.fs.v[4];
	assert_contains(f->seen, "73 (eth0-TxRx-2) on CPU 2");
	assert_contains(f->seen, "irqbalance is running (pid 777) with no banned CPUs");
	assert_int_equal(f->fix.n, 2);
	assert_string_equal(f->fix.v[0], "echo 0-1 > /proc/irq/73/smp_affinity_list");
	assert_string_equal(f->fix.v[1], "echo 0-1 > /proc/irq/74/smp_affinity_list");
	assert_has(&f->persist, "Environment=IRQBALANCE_BANNED_CPULIST=2-3");
	assert_has(&f->persist, "systemctl restart irqbalance");
	assert_has(&f->rollback, "echo 2 > /proc/irq/73/smp_affinity_list");
	assert_has(&f->rollback, "echo 3 > /proc/irq/74/smp_affinity_list");

	/* nvme per-CPU queues: managed, nothing to move, no taskset either */
	f = &c.fs.v[5];
	assert_contains(f->seen,
			"IRQ 83 (nvme0q3) is kernel-managed: its affinity cannot be changed");
	assert_contains(f->seen, "per-CPU queue");
	assert_hasnt(&f->fix, "taskset");
	assert_no_affinity_cmd(&c.fs, 83);
	assert_no_affinity_cmd(&c.fs, 84);

	/* quota 1.5 CPUs, throttled 6% of periods: a unit's limit is systemd's,
	 * raised to 2 CPUs (1.5 + 3 ms per throttled period, rounded up) */
	f = &c.fs.v[6];
	assert_contains(f->seen, "throttled in 3100 of 52000 periods (6.0%)");
	assert_contains(f->seen, "suggested 2 CPUs: today's 1.5 plus the 3.00 ms");
	assert_int_equal(f->fix.n, 1);
	assert_string_equal(f->fix.v[0],
			    "systemctl set-property --runtime gateway.service CPUQuota=200%");
	assert_has(&f->persist, "systemctl set-property gateway.service CPUQuota=200%");
	assert_string_equal(f->rollback.v[0],
			    "systemctl set-property --runtime gateway.service CPUQuota=150%");
	assert_string_equal(f->rollback.v[1],
			    "systemctl set-property gateway.service CPUQuota=150%");
	ctx_free(&c);
}

/* Without a target only the node-wide switches are judged. */
/* khugepaged woken more often than the kernel's 10 s: its own finding, the
 * kernel's pace back, and its way back; at the default pace, none. */
static void test_khugepaged_pace(void **state)
{
	struct ctx c;
	const struct lw_finding *f = NULL;

	node_findings(&c, "acpi-powersave", 4242);
	for (size_t i = 0; i < c.fs.n; i++)
		assert_hasnt(&c.fs.v[i].fix, "scan_sleep_millisecs");
	lw_findings_free(&c.fs);
	c.n.thp.scan_sleep_ms = 10;
	assert_int_equal(lw_advise_node(&c.n, &c.fs), 0);
	assert_shape(
		&c.fs,
		"frequency:crit idle:warn thp:crit thp:warn thp:warn irq:warn irq:info quota:crit");
	for (size_t i = 0; i < c.fs.n; i++)
		if (strstr(c.fs.v[i].why, "khugepaged wakes every"))
			f = &c.fs.v[i];
	assert_non_null(f);
	assert_contains(f->seen, "scanning 4096 pages every 10 ms");
	assert_contains(f->why, "khugepaged wakes every 10 ms, not the kernel's 10000");
	assert_has(
		&f->fix,
		"echo 10000 > /sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs");
	assert_has(&f->rollback,
		   "echo 10 > /sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs");
	assert_complete(&c.fs);
	ctx_free(&c);
}

static void test_acpi_no_target(void **state)
{
	struct ctx c;

	node_findings(&c, "acpi-powersave", 0);
	assert_shape(&c.fs, "frequency:crit idle:warn thp:crit thp:warn");
	/* C-states then apply to every CPU */
	assert_int_equal(c.fs.v[1].fix.n, 4);
	ctx_free(&c);
}

static void test_intel_hwp(void **state)
{
	struct ctx c;
	const struct lw_finding *f;

	node_findings(&c, "intel-hwp", 0);
	assert_shape(&c.fs, "frequency:warn idle:warn thp:info");
	assert_complete(&c.fs);
	f = &c.fs.v[0];
	assert_contains(f->seen, "intel_pstate (active, HWP)");
	assert_contains(f->seen, "EPP balance_power on CPUs 0-3");
	assert_string_equal(f->fix.v[0],
			    "echo performance > "
			    "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference");
	/* HWP: the governor stays powersave, only EPP changes */
	assert_hasnt(&f->fix, "scaling_governor");
	assert_has(&f->rollback,
		   "echo balance_power > "
		   "/sys/devices/system/cpu/cpu2/cpufreq/energy_performance_preference");
	assert_contains(c.fs.v[1].seen, "C6 (state3, 170 us exit latency)");
	ctx_free(&c);
}

static void test_amd_pstate(void **state)
{
	struct ctx c;
	const struct lw_finding *f;

	node_findings(&c, "amd-pstate", 0);
	/* EPP power is crit, boost off warns, C2 is disabled already, THP never */
	assert_shape(&c.fs, "frequency:crit frequency:warn");
	f = &c.fs.v[0];
	assert_contains(f->seen, "EPP power");
	f = &c.fs.v[1];
	assert_contains(f->seen, "cpufreq/boost=0");
	assert_string_equal(f->fix.v[0], "echo 1 > /sys/devices/system/cpu/cpufreq/boost");
	assert_has(&f->rollback, "echo 0 > /sys/devices/system/cpu/cpufreq/boost");
	ctx_free(&c);
}

static void test_vm(void **state)
{
	struct ctx c;
	const struct lw_finding *f;

	node_findings(&c, "vm-nocpufreq", 4242);
	assert_shape(&c.fs, "frequency:info idle:info thp:warn irq:warn irq:warn");
	f = &c.fs.v[0];
	assert_contains(f->seen, "no cpufreq driver");
	assert_contains(f->why, "nothing to tune from the guest");
	assert_contains(f->why, "cannot be measured");
	assert_int_equal(f->fix.n, 1);
	assert_true(f->fix.v[0][0] == '#'); /* a note, nothing to run */
	/* a guest that never polls: the haltpoll window, from and back to 0 */
	f = &c.fs.v[1];
	assert_contains(f->seen, "guest_halt_poll_ns 0");
	assert_has(&f->fix, "echo 200000 > /sys/module/haltpoll/parameters/guest_halt_poll_ns");
	assert_has(&f->rollback, "echo 0 > /sys/module/haltpoll/parameters/guest_halt_poll_ns");
	assert_has(&f->verify,
		   "latwhy -p 4242 -d 30s  # the idle share of slow-request time falls");
	/* khugepaged defrag matters: the target madvises 2 regions */
	assert_contains(c.fs.v[2].seen, "pid 4242 has 2 MADV_HUGEPAGE regions");
	/* movable virtio IRQs: all CPUs are the target's, CPU 1 is kept for them,
	 * the one that already takes the managed virtio1-req.0 */
	f = &c.fs.v[3];
	assert_has(&f->fix, "taskset -apc 0 4242");
	assert_has(&f->fix, "echo 1 > /proc/irq/41/smp_affinity_list");
	assert_has(&f->fix, "echo 1 > /proc/irq/42/smp_affinity_list");
	assert_has(&f->rollback, "echo 0-1 > /proc/irq/41/smp_affinity_list");
	/* virtio1-req.0: managed, shared queue: move the target, never the IRQ */
	f = &c.fs.v[4];
	assert_contains(f->seen, "IRQ 36 (virtio1-req.0) is kernel-managed: its affinity cannot be "
				 "changed");
	assert_contains(f->seen, "queue shared by CPUs 0-1");
	assert_string_equal(f->fix.v[0], "taskset -apc 0 4242");
	assert_has(&f->rollback, "taskset -apc 0-1 4242");
	assert_no_affinity_cmd(&c.fs, 36);
	ctx_free(&c);
}

static void test_numa_nic(void **state)
{
	struct ctx c;
	const struct lw_finding *f;

	node_findings(&c, "numa-nic", 4242);
	assert_shape(&c.fs, "irq:warn irq:warn irq:warn");
	f = &c.fs.v[0];
	assert_contains(f->seen, "eth1 is on NUMA node 1 (CPUs 4-7)");
	assert_contains(f->seen, "60 (eth1-TxRx-0) on CPU 0");
	assert_contains(f->why, "+30%");
	/* to node-1 CPUs the target (4-5) does not use */
	for (unsigned i = 0; i < 4; i++) {
		char want[64];

		snprintf(want, sizeof(want), "echo 6-7 > /proc/irq/%u/smp_affinity_list", 60 + i);
		assert_string_equal(f->fix.v[i], want);
		snprintf(want, sizeof(want), "echo %u > /proc/irq/%u/smp_affinity_list", i, 60 + i);
		assert_has(&f->rollback, want);
	}
	assert_has(&f->persist, "latwhy-irq-eth1.service");
	f = &c.fs.v[1];
	assert_contains(f->seen, "IRQ 36 (virtio1-req.0) is kernel-managed");
	assert_string_equal(f->fix.v[0], "taskset -apc 5 4242");
	assert_has(&f->persist, "systemctl set-property gateway.service AllowedCPUs=5");
	assert_has(&f->rollback, "systemctl set-property gateway.service AllowedCPUs=4-5");
	assert_no_affinity_cmd(&c.fs, 36);
	/* RPS spreads eth1's receive over node 1, the target's CPUs too: the
	 * masks keep node 1's other CPUs */
	f = &c.fs.v[2];
	assert_string_equal(f->seen, "RPS sends receive processing to the target's CPUs 4-5: "
				     "eth1 rx-0 (rps_cpus 00,000000f0); eth1 rx-1 (rps_cpus "
				     "00,000000f0); eth1 rx-2 (rps_cpus 00,000000f0); eth1 rx-3 "
				     "(rps_cpus 00,000000f0); NET_RX softirqs on them: 4799999 "
				     "since boot");
	assert_int_equal(f->fix.n, 4);
	assert_string_equal(f->fix.v[0], "echo c0 > /sys/class/net/eth1/queues/rx-0/rps_cpus");
	assert_has(&f->rollback, "echo 00,000000f0 > /sys/class/net/eth1/queues/rx-3/rps_cpus");
	assert_has(&f->persist, "w /sys/class/net/eth1/queues/rx-2/rps_cpus - - - - c0\n");
	assert_has(&f->verify, "latwhy check -p 4242  # this finding is gone");
	assert_complete(&c.fs);
	ctx_free(&c);
}

/* A target that disabled THP for itself is not hurt by the system mode. */
static void test_thp_prctl(void **state)
{
	struct ctx c;
	char dir[64] = "/tmp/latwhy-advise-XXXXXX", cmd[512];

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cp -a " LW_FIXTURES "/acpi-powersave/. %s/ && "
		 "sed -i 's/^THP_enabled:.*/THP_enabled:\t0/' %s/proc/4242/status",
		 dir, dir);
	assert_int_equal(system(cmd), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(lw_node_read(&c.n, dir, 4242), 0);
	assert_int_equal(lw_advise_node(&c.n, &c.fs), 0);
	for (size_t i = 0; i < c.fs.n; i++) {
		if (c.fs.v[i].cause != LW_CAUSE_THP)
			continue;
		assert_int_equal(c.fs.v[i].severity, LW_SEV_INFO);
		assert_contains(c.fs.v[i].seen, "THP disabled for itself (prctl)");
	}
	ctx_free(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* With a sample, IRQ severity follows the rate on the target's CPUs. */
static void test_irq_rate(void **state)
{
	struct ctx c;
	char dir[64] = "/tmp/latwhy-advise-XXXXXX", cmd[512];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -a " LW_FIXTURES "/acpi-powersave/. %s/", dir);
	assert_int_equal(system(cmd), 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(lw_node_read(&c.n, dir, 4242), 0);
	snprintf(cmd, sizeof(cmd), "%s/proc/interrupts", dir);
	f = fopen(cmd, "w");
	assert_non_null(f);
	fprintf(f, "            CPU0       CPU1       CPU2       CPU3\n"
		   "  73:          0          0    9350678          0  IR-PCI-MSIX-0000:41:00.0 "
		   "   3-edge      eth0-TxRx-2\n");
	fclose(f);
	assert_int_equal(lw_node_sample_irqs(&c.n, 0), 0);
	c.n.sample_ms = 1000; /* 5000 interrupts in the sample: 5000/s */
	assert_int_equal(lw_advise_node(&c.n, &c.fs), 0);
	for (size_t i = 0; i < c.fs.n; i++)
		if (c.fs.v[i].cause == LW_CAUSE_IRQ && strstr(c.fs.v[i].seen, "landing")) {
			assert_int_equal(c.fs.v[i].severity, LW_SEV_CRIT);
			assert_contains(c.fs.v[i].seen, "73 (eth0-TxRx-2) on CPU 2, 5000/s");
			/* 74 had no interrupt in the sample: left alone */
			assert_hasnt(&c.fs.v[i].fix, "/proc/irq/74/");
		}
	ctx_free(&c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- trace findings ---- */

static void test_trace_acpi(void **state)
{
	struct lw_trace_facts t = {
		.pid = 4242,
		.slow_requests = 120,
		.cpus_mask = {0xc}, /* CPUs 2-3 */
		.irqs = {{.irq = 73, .cpu = 2, .name = "eth0-TxRx-2", .ns = 1200000, .count = 4000},
			 {.irq = 83, .cpu = 2, .name = "nvme0q3", .ns = 300000, .count = 900}},
		.nr_irqs = 2,
		.preempt = {{.pid = 900, .comm = "fluent-bit", .ns = 3000000, .count = 40},
			    {.pid = 27, .comm = "ksoftirqd/2", .ns = 500000, .count = 12},
			    {.pid = 4250, .comm = "worker", .ns = 400000, .count = 9, .own = 1}},
		.nr_preempt = 3,
		.thp_collapses = 12,
		.thp_scans = 340,
		.compactions = 3,
		.freq_khz = 800000,
		.ref_khz = 3700000,
		.freq_source = "power:cpu_frequency",
	};
	struct ctx c;
	const struct lw_finding *f;

	t.share[LW_CAUSE_FREQ] = 0.40;
	t.share[LW_CAUSE_IRQ] = 0.20;
	t.share[LW_CAUSE_THP] = 0.15;
	t.share[LW_CAUSE_SCHED] = 0.12;
	t.share[LW_CAUSE_IDLE] = 0.05; /* below 10%: no finding */
	t.cause_ns[LW_CAUSE_FREQ] = 48000000;
	memset(&c, 0, sizeof(c));
	assert_int_equal(lw_node_read(&c.n, LW_FIXTURES "/acpi-powersave", 4242), 0);
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_shape(&c.fs, "frequency:crit irq:warn thp:warn sched:warn");

	f = &c.fs.v[0];
	assert_contains(f->evidence, "40% of slow-request time (48.00 ms over 120 slow requests)");
	assert_contains(f->evidence, "800 MHz against a 3700 MHz reference (power:cpu_frequency)");
	/* the CPUs the target ran on */
	assert_int_equal(f->fix.n, 2);
	assert_string_equal(
		f->fix.v[0],
		"echo performance > /sys/devices/system/cpu/cpu2/cpufreq/scaling_governor");
	assert_contains(f->cost, "+33%");

	f = &c.fs.v[1];
	assert_contains(f->evidence, "IRQ 73 (eth0-TxRx-2) on CPU 2: 1.20 ms in 4000 interrupts");
	assert_has(&f->fix, "echo 0-1 > /proc/irq/73/smp_affinity_list");
	assert_has(&f->rollback, "echo 2 > /proc/irq/73/smp_affinity_list");
	assert_null(strstr(f->why, "in a VM")); /* bare metal */
	assert_has(&f->fix, "IRQ 83 (nvme0q3) is kernel-managed: its affinity cannot be changed");
	assert_hasnt(&f->fix, "taskset"); /* per-CPU queue: moving the target does not help */
	assert_no_affinity_cmd(&c.fs, 83);
	assert_has(&f->persist, "IRQBALANCE_BANNED_CPULIST=2-3");

	f = &c.fs.v[2];
	assert_contains(f->evidence, "khugepaged collapsed 12 ranges of the target's memory");
	assert_has(&f->fix, "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
	assert_has(&f->fix, "echo 0 > /sys/kernel/mm/transparent_hugepage/khugepaged/defrag");

	f = &c.fs.v[3];
	assert_contains(f->evidence, "fluent-bit (pid 900) ran 3.00 ms in 40 slices");
	assert_has(&f->fix, "taskset -apc 0-1 900");
	assert_has(&f->fix, "ksoftirqd/2 (pid 27) is a per-CPU kernel thread");
	assert_hasnt(&f->fix, "taskset -apc 0-1 27");
	/* the target's own thread: never taskset -a its tid (that moves the target) */
	assert_has(&f->fix, "worker (tid 4250) is one of the target's own threads");
	assert_hasnt(&f->fix, "taskset -apc 0-1 4250");
	assert_has(&f->rollback, "taskset -apc 0-3 900");
	lw_findings_free(&c.fs);

	/* The largest cause under 25% is only a warning. */
	memset(t.share, 0, sizeof(t.share));
	t.share[LW_CAUSE_THP] = 0.2;
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_shape(&c.fs, "thp:warn");
	/* the fixture has the kernel's pace (10 s): left alone */
	assert_hasnt(&c.fs.v[0].fix, "scan_sleep_millisecs");
	lw_findings_free(&c.fs);

	/* an eager khugepaged (the lab's 10 ms) collapsing a target that
	 * madvises: back to the kernel's pace, and why madvise alone keeps
	 * collapsing it */
	c.n.thp.scan_sleep_ms = 10;
	c.n.target.madv_regions = 1;
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	f = &c.fs.v[0];
	assert_has(&f->fix, "echo 10000 > /sys/kernel/mm/transparent_hugepage/khugepaged/"
			    "scan_sleep_millisecs");
	assert_has(&f->rollback, "echo 10 > /sys/kernel/mm/transparent_hugepage/khugepaged/"
				 "scan_sleep_millisecs");
	assert_has(&f->persist, "w /sys/kernel/mm/transparent_hugepage/khugepaged/"
				"scan_sleep_millisecs - - - - 10000");
	assert_has(&f->fix, "# pid 4242 madvises 1 region (MADV_HUGEPAGE): THP madvise keeps "
			    "it eligible, and khugepaged still collapses it at its pace");
	/* every knob's cost, not the last one's */
	assert_contains(f->cost, "only regions that ask (MADV_HUGEPAGE) keep huge pages");
	assert_contains(f->cost, "; khugepaged no longer compacts memory");
	assert_contains(f->cost, "; khugepaged scans at the kernel's default pace again");
	lw_findings_free(&c.fs);

	/* collapses at the eager pace are a finding even when this run's slow
	 * requests lost little to them, and it says how little */
	memset(t.share, 0, sizeof(t.share));
	memset(t.cause_ns, 0, sizeof(t.cause_ns));
	t.share[LW_CAUSE_THP] = 0.007;
	t.cause_ns[LW_CAUSE_THP] = 2218212;
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_shape(&c.fs, "thp:warn");
	assert_contains(c.fs.v[0].evidence, "1% of slow-request time (2.22 ms over 120 slow "
					    "requests); khugepaged collapsed 12 ranges");
	assert_has(&c.fs.v[0].fix, "echo 10000 > /sys/kernel/mm/transparent_hugepage/khugepaged/"
				   "scan_sleep_millisecs");
	lw_findings_free(&c.fs);
	/* at the kernel's pace a small share stays below a finding */
	c.n.thp.scan_sleep_ms = 10000;
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_int_equal(c.fs.n, 0);
	c.n.thp.scan_sleep_ms = 10;
	t.share[LW_CAUSE_THP] = 0.2;

	/* no collapse of its memory seen: the pace is not this trace's finding */
	t.thp_collapses = 0;
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	assert_hasnt(&c.fs.v[0].fix, "scan_sleep_millisecs");
	ctx_free(&c);
}

/* The trace findings t gets on a fixture node; c is freed by the caller. */
static void trace_on(struct ctx *c, const char *fixture, int pid, const struct lw_trace_facts *t)
{
	char dir[256];

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), LW_FIXTURES "/%s", fixture);
	assert_int_equal(lw_node_read(&c->n, dir, pid), 0);
	assert_int_equal(lw_advise_trace(&c->n, t, &c->fs), 0);
}

static void test_trace_vm(void **state)
{
	struct lw_trace_facts t = {
		.pid = 4242,
		.slow_requests = 10,
		.cpus_mask = {0x3},
		.irqs = {{.irq = 36,
			  .cpu = 1,
			  .name = "virtio1-req.0",
			  .ns = 900000,
			  .count = 300}},
		.nr_irqs = 1,
		.freq_source = "no frequency data",
	};
	struct ctx c;
	const struct lw_finding *f;

	t.share[LW_CAUSE_FREQ] = 0.30;
	t.share[LW_CAUSE_IRQ] = 0.35;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_shape(&c.fs, "frequency:warn irq:crit");
	f = &c.fs.v[0];
	assert_contains(f->evidence, "no frequency data");
	assert_contains(f->why, "nothing to tune from the guest");
	assert_contains(f->why, "cannot be measured");
	assert_int_equal(f->fix.n, 1);
	assert_true(f->fix.v[0][0] == '#');
	f = &c.fs.v[1];
	assert_has(&f->fix, "IRQ 36 (virtio1-req.0) is kernel-managed: its affinity cannot be "
			    "changed; move the target off CPU 1 instead");
	assert_has(&f->fix, "taskset -apc 0 4242");
	assert_no_affinity_cmd(&c.fs, 36);
	/* a guest: the measured irq time is a lower bound */
	assert_contains(f->why, "in a VM its delivery also costs the CPU time outside the guest, "
				"which was not measured (--irq-cost)");
	assert_lacks(f->evidence, "entry/exit");
	ctx_free(&c);

	/* with the entry cost measured at start, it is counted, and said */
	t.irq_entry_cost_ns = 11000;
	t.irq_entry_ns = 330000;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	f = &c.fs.v[1];
	assert_contains(f->why, "and its entry and exit cost the thread 11.0 us here beyond the "
				"handler (measured at start, counted in irq); in a VM most of that "
				"is the host delivering it");
	assert_lacks(f->why, "lower bound");
	assert_contains(f->evidence,
			"; interrupt entry/exit in the slow requests: 330.0 us (30 interrupts)");
	assert_string_equal(f->cost, "the target runs on 1 CPU (0) instead of 2 (0-1)");
	ctx_free(&c);

	/* a target pinned to the IRQ's CPU moves to another: as many CPUs,
	 * shared now (the fixture's 0-1 narrowed to 1 after reading it) */
	memset(&c, 0, sizeof(c));
	assert_int_equal(lw_node_read(&c.n, LW_FIXTURES "/vm-nocpufreq", 4242), 0);
	memset(&c.n.target.cpus, 0, sizeof(c.n.target.cpus));
	lw_cpuset_set(&c.n.target.cpus, 1);
	assert_int_equal(lw_advise_trace(&c.n, &t, &c.fs), 0);
	f = &c.fs.v[1];
	assert_has(&f->fix, "taskset -apc 0 4242");
	assert_has(&f->rollback, "taskset -apc 1 4242");
	assert_string_equal(
		f->cost,
		"the target runs on CPU 0 instead of CPU 1, beside what already runs there");
	ctx_free(&c);
}

/* An IRQ under 1% of the interrupt and softirq time, counting a mean softirq
 * run for each of its interrupts, gets no command (the demo's disk injector
 * beside the NIC's five tx interrupts); one over it does. The evidence names
 * them all. */

/* A guest without a cpufreq driver whose clock events still arrived (the
 * lab's lw_freqinject): the clock was measured, only not settable. */
static void test_trace_vm_clock_events(void **state)
{
	struct lw_trace_facts t = {
		.pid = 4242,
		.slow_requests = 10,
		.cpus_mask = {0x2},
		.freq_khz = 800000,
		.ref_khz = 3700000,
		.freq_source = "cpu_frequency tracepoint",
	};
	struct ctx c;
	const struct lw_finding *f;

	t.share[LW_CAUSE_FREQ] = 0.57;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_shape(&c.fs, "frequency:crit");
	f = &c.fs.v[0];
	assert_contains(f->seen, "no cpufreq driver");
	assert_contains(f->evidence, "lowest clock on the target's CPUs 800 MHz against a 3700 "
				     "MHz reference (cpu_frequency tracepoint)");
	assert_contains(f->why, "cpu_frequency events measured the clock");
	assert_contains(f->why, "nothing to tune from the guest");
	assert_null(strstr(f->why, "cannot be measured"));
	assert_int_equal(f->fix.n, 1);
	assert_true(f->fix.v[0][0] == '#');
	ctx_free(&c);
}
static void test_trace_minor_irqs(void **state)
{
	struct lw_trace_facts t = {
		.slow_requests = 167,
		.cpus_mask = {0x2},
		.irqs = {{.irq = 36,
			  .cpu = 1,
			  .name = "virtio1-req.0",
			  .ns = 131700000,
			  .count = 121998},
			 {.irq = 42, .cpu = 1, .name = "virtio3-tx", .ns = 23000, .count = 4},
			 /* 12 ms + 4000 x 7.8 us: 4% */
			 {.irq = 38,
			  .cpu = 1,
			  .name = "virtio2-input.0",
			  .ns = 12000000,
			  .count = 4000}},
		.nr_irqs = 3,
		.softirqs = {{.vec = "BLOCK", .cpu = 1, .ns = 956300000ULL, .count = 122623},
			     /* waits, not runs: not in the mean */
			     {.vec = "KSOFTIRQD", .cpu = 1, .ns = 900000000ULL, .count = 10}},
		.nr_softirqs = 2,
		.freq_source = "no frequency data",
	};
	struct ctx c;
	const struct lw_finding *f;

	t.share[LW_CAUSE_IRQ] = 0.25;
	trace_on(&c, "vm-nocpufreq", 0, &t);
	assert_shape(&c.fs, "irq:crit");
	f = &c.fs.v[0];
	assert_contains(f->evidence, "IRQ 42 (virtio3-tx) on CPU 1: 23.0 us in 4 interrupts");
	assert_has(&f->fix, "# IRQ 42 (virtio3-tx): under 1% of the interrupt and softirq time "
			    "here, with every softirq it could have raised: left where it is");
	assert_no_affinity_cmd(&c.fs, 42);
	assert_has(&f->fix, "echo 0 > /proc/irq/38/smp_affinity_list");
	assert_has(&f->rollback, "echo 0-1 > /proc/irq/38/smp_affinity_list");
	assert_complete(&c.fs);
	ctx_free(&c);

	/* the same 4000 interrupts with no softirq to raise weigh their 12 ms
	 * alone, still 8% of the interrupt time here */
	t.nr_softirqs = 0;
	trace_on(&c, "vm-nocpufreq", 0, &t);
	assert_has(&c.fs.v[0].fix, "echo 0 > /proc/irq/38/smp_affinity_list");
	assert_no_affinity_cmd(&c.fs, 42);
	ctx_free(&c);
}

/* NET_RX on the target's CPU that lo's RPS mask sends there (the lab's softirq
 * injector): the mask without that CPU comes first, with its way back; none
 * of it when the NET_RX ran elsewhere, a comment when no other CPU is left or
 * no RPS mask is to blame. */
static bool any_fix_has(const struct lw_findings *fs, const char *want)
{
	for (size_t i = 0; i < fs->n; i++)
		if (strv_has(&fs->v[i].fix, want) || strv_has(&fs->v[i].persist, want) ||
		    strv_has(&fs->v[i].rollback, want))
			return true;
	return false;
}

static void test_trace_rps(void **state)
{
	struct lw_trace_facts t = {
		.pid = 4242,
		.slow_requests = 85,
		.cpus_mask = {0x2},
		.irqs = {{.irq = 42, .cpu = 1, .name = "virtio3-tx", .ns = 11400, .count = 2}},
		.nr_irqs = 1,
		.softirqs = {{.vec = "NET_RX", .cpu = 1, .ns = 1430000000ULL, .count = 8790},
			     {.vec = "TIMER", .cpu = 1, .ns = 223600, .count = 117}},
		.nr_softirqs = 2,
		.freq_source = "no frequency data",
	};
	struct ctx c;
	const struct lw_finding *f;

	t.share[LW_CAUSE_IRQ] = 0.43;
	t.cause_ns[LW_CAUSE_IRQ] = 33530000;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_shape(&c.fs, "irq:crit");
	f = &c.fs.v[0];
	assert_contains(f->evidence, "IRQ 42 (virtio3-tx) on CPU 1: 11.4 us in 2 interrupts; "
				     "NET_RX on CPU 1: 1.43 s in 8790 runs; TIMER on CPU 1");
	assert_string_equal(f->fix.v[0], "echo 1 > /sys/class/net/lo/queues/rx-0/rps_cpus");
	/* IRQ 42's 2 interrupts weigh nothing beside RPS's NET_RX: no command */
	assert_has(&f->fix, "# IRQ 42 (virtio3-tx): under 1% of the interrupt and softirq time");
	assert_no_affinity_cmd(&c.fs, 42);
	assert_has(&f->rollback, "echo 2 > /sys/class/net/lo/queues/rx-0/rps_cpus");
	assert_has(&f->rollback, "rm -f /etc/tmpfiles.d/latwhy-rps.conf");
	assert_has(&f->persist, "cat > /etc/tmpfiles.d/latwhy-rps.conf <<'EOF'\n"
				"w /sys/class/net/lo/queues/rx-0/rps_cpus - - - - 1\nEOF");
	assert_has(&f->verify, "latwhy -p 4242 -d 30s  # NET_RX time on CPUs 1 falls");
	assert_contains(f->cost, "RPS's CPUs take that receive processing instead");
	assert_complete(&c.fs);
	ctx_free(&c);

	/* the target's own segments waiting in that CPU's backlog behind the
	 * flood: evidence in waits, and the same RPS fix */
	snprintf(t.softirqs[0].vec, sizeof(t.softirqs[0].vec), "NET_RX_BACKLOG");
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	f = &c.fs.v[0];
	assert_contains(f->evidence, "NET_RX_BACKLOG on CPU 1: 1.43 s in 8790 waits");
	assert_string_equal(f->fix.v[0], "echo 1 > /sys/class/net/lo/queues/rx-0/rps_cpus");
	ctx_free(&c);
	/* waits behind ksoftirqd: evidence in waits */
	snprintf(t.softirqs[0].vec, sizeof(t.softirqs[0].vec), "KSOFTIRQD");
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_contains(c.fs.v[0].evidence, "KSOFTIRQD on CPU 1: 1.43 s in 8790 waits");
	ctx_free(&c);
	snprintf(t.softirqs[0].vec, sizeof(t.softirqs[0].vec), "NET_RX");

	/* the NET_RX ran on the other CPU: not the target's, no RPS change */
	t.softirqs[0].cpu = 0;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_false(any_fix_has(&c.fs, "rps_cpus"));
	assert_false(any_fix_has(&c.fs, "RPS"));
	assert_null(strstr(c.fs.v[0].evidence, "NET_RX"));
	ctx_free(&c);

	/* the target on both CPUs: nowhere to send lo's receive */
	t.softirqs[0].cpu = 1;
	t.cpus_mask[0] = 0x3;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_has(&c.fs.v[0].fix, "# RPS sends lo rx-0's receive processing to CPUs 1, and the "
				   "target runs on every CPU: no other CPU to send it to");
	assert_false(any_fix_has(&c.fs, "> /sys/class/net/"));
	assert_false(any_fix_has(&c.fs, "latwhy-rps.conf"));
	assert_false(strv_has(&c.fs.v[0].verify, "NET_RX time"));
	ctx_free(&c);

	/* no RPS mask on the node: say where NET_RX comes from instead */
	t.softirqs[0].cpu = 0;
	t.irqs[0].cpu = 0;
	t.cpus_mask[0] = 0x1;
	trace_on(&c, "intel-hwp", 0, &t);
	f = &c.fs.v[c.fs.n - 1];
	assert_int_equal(f->cause, LW_CAUSE_IRQ);
	assert_has(&f->fix, "# no RPS mask sends receive processing to CPUs 0: its NET_RX follows "
			    "the NIC queue interrupts, or local senders on those CPUs");
	assert_false(any_fix_has(&c.fs, "rps_cpus"));
	ctx_free(&c);
}

/* Wake-ups of an idle vCPU that never polls: the haltpoll window is the fix,
 * from the value the node has, and back to it. A node with a deep C-state gets
 * that state disabled instead; one with neither gets no command at all. */
static void test_trace_idle(void **state)
{
	struct lw_trace_facts t = {.pid = 4242, .slow_requests = 10, .cpus_mask = {0x3}};
	struct ctx c;
	const struct lw_finding *f;

	t.idle_wakeups = 400;
	t.idle_wake_ns = 6800000;
	t.share[LW_CAUSE_IDLE] = 0.3;
	t.cause_ns[LW_CAUSE_IDLE] = 3000000;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_shape(&c.fs, "idle:crit");
	f = &c.fs.v[0];
	assert_contains(f->evidence, "30% of slow-request time (3.00 ms over 10 slow requests); "
				     "400 wake-ups of an idle CPU, 17.0 us each on average");
	assert_contains(f->seen, "guest_halt_poll_ns 0: an idle vCPU halts at once");
	assert_has(&f->fix, "echo 200000 > /sys/module/haltpoll/parameters/guest_halt_poll_ns");
	assert_has(&f->rollback, "echo 0 > /sys/module/haltpoll/parameters/guest_halt_poll_ns");
	assert_has(&f->verify,
		   "latwhy -p 4242 -d 30s  # the idle share of slow-request time falls");
	assert_non_null(f->cost);
	ctx_free(&c);

	/* a deep C-state: disable it, no haltpoll command */
	t.cpus_mask[0] = 0x1;
	trace_on(&c, "intel-hwp", 0, &t);
	assert_shape(&c.fs, "idle:crit");
	assert_has(&c.fs.v[0].fix, "echo 1 > /sys/devices/system/cpu/cpu0/cpuidle/state3/disable");
	assert_true(c.fs.v[0].fix.n == 1);
	ctx_free(&c);

	/* its deep C-state already disabled, and no haltpoll: nothing to run */
	trace_on(&c, "amd-pstate", 0, &t);
	assert_shape(&c.fs, "idle:crit");
	assert_int_equal(c.fs.v[0].fix.n, 0);
	assert_contains(c.fs.v[0].seen, "C-state exit latency");
	ctx_free(&c);

	/* waits for a CPU that only polled are said beside the exits, and
	 * change nothing of the fix */
	t.cpus_mask[0] = 0x3;
	t.idle_poll_wakeups = 120;
	t.idle_poll_ns = 12000000;
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	assert_shape(&c.fs, "idle:crit");
	f = &c.fs.v[0];
	assert_contains(f->evidence,
			"400 wake-ups of an idle CPU, 17.0 us each on average; 120 more "
			"of one that only polled, 100.0 us each (no C-state to leave: "
			"not counted here)");
	assert_has(&f->fix, "echo 200000 > /sys/module/haltpoll/parameters/guest_halt_poll_ns");
	ctx_free(&c);
}

/* Each traced cause over LW_SHARE_FINDING: a complete finding, in cause order. */

/* memory: reclaim at a v1 group's limit is fixed in its limit_in_bytes,
 * half again, with its rollback and failcnt to verify */
static void test_trace_memory_limit(void **state)
{
	struct lw_trace_facts t = {.pid = 4242, .slow_requests = 40};
	const struct lw_finding *f;
	struct ctx c;

	(void)state;
	t.share[LW_CAUSE_MEMORY] = 0.6;
	t.cause_ns[LW_CAUSE_MEMORY] = 60000000;
	t.mem_reclaim_ns = 50000000;
	t.mem_fault_ns = 10000000;
	t.mem_reclaims = t.mem_reclaims_memcg = 300;
	t.mem_faults_min = 80000;
	trace_on(&c, "memory-v1", 4242, &t);
	assert_shape(&c.fs, "memory:crit");
	assert_complete(&c.fs);
	f = &c.fs.v[0];
	assert_contains(f->seen, "memory cgroup /app (v1): limit 100663296");
	assert_true(strv_has(&f->fix, "echo 150994944 > "));
	assert_true(strv_has(&f->fix, "/sys/fs/cgroup/memory/app/memory.limit_in_bytes"));
	assert_true(strv_has(&f->rollback, "echo 100663296 > "));
	assert_true(strv_has(&f->verify, "memory.failcnt"));
	assert_contains(f->evidence, "80000 minor and 0 major page faults");
	/* all of it the memcg's: no node reclaim sysctl */
	assert_false(strv_has(&f->fix, "watermark_scale_factor"));
	ctx_free(&c);
	/* global reclaim too: the watermark from its value now */
	t.mem_reclaims_memcg = 100;
	trace_on(&c, "memory-v1", 4242, &t);
	f = &c.fs.v[0];
	assert_true(strv_has(&f->fix, "sysctl -w vm.watermark_scale_factor=200  # now 10"));
	assert_true(strv_has(&f->rollback, "sysctl -w vm.watermark_scale_factor=10"));
	ctx_free(&c);
}

/* memory: fault time is the application's habit, fixed in what it runs:
 * the fixture's maps show jemalloc */
static void test_trace_memory_habit(void **state)
{
	struct lw_trace_facts t = {.pid = 4242, .slow_requests = 40};
	const struct lw_finding *f;
	struct ctx c;

	(void)state;
	t.share[LW_CAUSE_MEMORY] = 0.8;
	t.cause_ns[LW_CAUSE_MEMORY] = 80000000;
	t.mem_fault_ns = 80000000;
	t.mem_faults_min = 80000;
	trace_on(&c, "memory-v1", 4242, &t);
	assert_shape(&c.fs, "memory:crit");
	f = &c.fs.v[0];
	assert_true(strv_has(&f->fix, "MALLOC_CONF=dirty_decay_ms"));
	assert_non_null(f->cost);
	assert_true(f->persist.n > 0 && f->verify.n > 0);
	ctx_free(&c);
	/* vm-nocpufreq's target is a Go process (its heap arena's mapping):
	 * GOGC and GOMEMLIMIT */
	trace_on(&c, "vm-nocpufreq", 4242, &t);
	f = &c.fs.v[c.fs.n - 1];
	assert_int_equal(f->cause, LW_CAUSE_MEMORY);
	assert_true(strv_has(&f->fix, "GOMEMLIMIT"));
	ctx_free(&c);
}

static void test_trace_every_cause(void **state)
{
	struct lw_trace_facts t = {
		.pid = 4242,
		.slow_requests = 50,
		.cpus_mask = {0xc},
		.irqs = {{.irq = 73,
			  .cpu = 2,
			  .name = "eth0-TxRx-2",
			  .ns = 1200000,
			  .count = 4000}},
		.nr_irqs = 1,
		.preempt = {{.pid = 900, .comm = "fluent-bit", .ns = 3000000, .count = 40}},
		.nr_preempt = 1,
	};
	struct ctx c;

	for (int k = LW_CAUSE_NONE + 1; k < LW_CAUSE_MAX; k++)
		t.share[k] = 0.15;
	t.share[LW_CAUSE_QUOTA] = 0.30;
	trace_on(&c, "acpi-powersave", 4242, &t);
	assert_shape(
		&c.fs,
		"frequency:warn irq:warn thp:warn sched:warn idle:warn quota:crit memory:warn");
	assert_complete(&c.fs);
	for (size_t i = 0; i < c.fs.n; i++)
		assert_contains(c.fs.v[i].evidence, "of slow-request time (");
	/* the target's cgroup has a quota: the trace finding carries its fix */
	assert_true(c.fs.v[5].fix.n > 0);
	ctx_free(&c);
}

/* A frequent preemptor that no slow request waited for longest gets no fix;
 * one that did, does. Without slow-request evidence every one stays. */
static void test_facts_slow_waits(void **state)
{
	struct lw_summary s = {.pid = 4242, .nr_preempt = 2, .nr_slow_waits = 1};
	struct lw_trace_facts f;

	s.preempt[0] = (struct lw_preempt_rec){.pid = 100, .comm = "busy", .ns = 1000000};
	s.preempt[1] = (struct lw_preempt_rec){.pid = 200, .comm = "hog", .ns = 500000};
	s.slow_waits[0] = (struct lw_slow_wait){.pid = 200, .comm = "hog", .requests = 9};
	lw_explain_facts(&s, &f);
	assert_int_equal(f.nr_preempt, 1);
	assert_int_equal(f.preempt[0].pid, 200);
	assert_string_equal(f.preempt[0].comm, "hog");

	s.nr_slow_waits = 0;
	lw_explain_facts(&s, &f);
	assert_int_equal(f.nr_preempt, 2);

	/* latwhy itself, by its tgid or (for a wait known by pid) its pid:
	 * never a preemptor to move */
	s.tracer_tgid = 300;
	s.preempt[0].tgid = 300;
	lw_explain_facts(&s, &f);
	assert_int_equal(f.nr_preempt, 1);
	assert_int_equal(f.preempt[0].pid, 200);
	s.preempt[0].tgid = 0;
	s.preempt[0].pid = 300;
	lw_explain_facts(&s, &f);
	assert_int_equal(f.nr_preempt, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acpi_powersave),
		cmocka_unit_test(test_khugepaged_pace),
		cmocka_unit_test(test_acpi_no_target),
		cmocka_unit_test(test_intel_hwp),
		cmocka_unit_test(test_amd_pstate),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_numa_nic),
		cmocka_unit_test(test_thp_prctl),
		cmocka_unit_test(test_irq_rate),
		cmocka_unit_test(test_trace_acpi),
		cmocka_unit_test(test_trace_vm),
		cmocka_unit_test(test_trace_vm_clock_events),
		cmocka_unit_test(test_trace_minor_irqs),
		cmocka_unit_test(test_trace_rps),
		cmocka_unit_test(test_trace_idle),
		cmocka_unit_test(test_trace_every_cause),
		cmocka_unit_test(test_trace_memory_limit),
		cmocka_unit_test(test_trace_memory_habit),
		cmocka_unit_test(test_facts_slow_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
