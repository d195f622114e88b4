// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_node.c - the node readers on fixture trees (tests/fixtures/, built by
 * tests/fixtures/build.sh from real layouts). Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "source/probe.h"

#include "node/node.h"

#define LW_FIXTURES "tests/fixtures"

/* ---- helpers ---- */

static void read_fixture(struct lw_node *n, const char *name, int pid)
{
	char root[256];

	snprintf(root, sizeof(root), LW_FIXTURES "/%s", name);
	assert_int_equal(lw_node_read(n, root, pid), 0);
}

/* A scratch copy of a fixture, for tests that change files. */
static void copy_fixture(const char *name, char *dir, size_t len)
{
	char cmd[1024];

	snprintf(dir, len, "/tmp/latwhy-node-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp -a " LW_FIXTURES "/%s/. %s/", name, dir);
	assert_int_equal(system(cmd), 0);
}

static void remove_tree(const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const struct lw_irq *irq(const struct lw_node *n, unsigned nr)
{
	const struct lw_irq *q = lw_node_irq(n, nr);

	assert_non_null(q);
	return q;
}

static void assert_set(const struct lw_cpuset *s, const char *want)
{
	char b[256];

	assert_string_equal(lw_cpuset_format(s, b, sizeof(b)), want);
}

/* ---- CPU sets and the managed-IRQ heuristic ---- */

static void test_cpuset(void **state)
{
	struct lw_cpuset s;
	char b[16];

	assert_int_equal(lw_cpuset_parse_list(&s, "0-3,8,10-11\n"), 0);
	assert_set(&s, "0-3,8,10-11");
	assert_int_equal(lw_cpuset_count(&s), 7);
	assert_int_equal(lw_cpuset_first(&s), 0);
	assert_int_equal(lw_cpuset_parse_list(&s, ""), 0);
	assert_true(lw_cpuset_empty(&s));
	assert_int_equal(lw_cpuset_parse_list(&s, "3-1"), -ERANGE);
	assert_int_equal(lw_cpuset_parse_list(&s, "a"), -EINVAL);
	assert_int_equal(lw_cpuset_parse_list(&s, "512"), -ERANGE);
	assert_int_equal(lw_cpuset_parse_mask(&s, "ff,0000000f"), 0);
	assert_set(&s, "0-3,32-39");
	assert_int_equal(lw_cpuset_parse_mask(&s, "c"), 0);
	assert_set(&s, "2-3");
	assert_int_equal(lw_cpuset_parse_mask(&s, "xyz"), -EINVAL);
	/* Truncation keeps whole ranges. */
	lw_cpuset_parse_list(&s, "0-3,8,10-11,20");
	assert_string_equal(lw_cpuset_format(&s, b, 9), "0-3,8");
}

/* The mask form rps_cpus takes, and what parse_mask reads back. */
static void test_cpuset_mask(void **state)
{
	static const struct {
		const char *list, *mask;
	} cases[] = {
		{"", "0"},
		{"1", "2"},
		{"0-31", "ffffffff"},
		{"32", "1,00000000"},
		{"0,40", "100,00000001"},
		{"511", "80000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			"00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000"},
	};
	struct lw_cpuset s, back;
	char b[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(lw_cpuset_parse_list(&s, cases[i].list), 0);
		assert_string_equal(lw_cpuset_format_mask(&s, b, sizeof(b)), cases[i].mask);
		assert_int_equal(lw_cpuset_parse_mask(&back, b), 0);
		assert_memory_equal(&back, &s, sizeof(s));
	}
	/* too small a buffer: "?", never a wrong mask */
	lw_cpuset_parse_list(&s, "32");
	assert_string_equal(lw_cpuset_format_mask(&s, b, 4), "?");
}

static void test_irq_is_managed(void **state)
{
	assert_true(lw_irq_is_managed("nvme0q1"));
	assert_true(lw_irq_is_managed("nvme12q31"));
	assert_false(lw_irq_is_managed("nvme0q0")); /* admin queue */
	assert_true(lw_irq_is_managed("virtio1-req.0"));
	assert_true(lw_irq_is_managed("virtio0-request"));
	assert_true(lw_irq_is_managed("megasas0-msix3"));
	assert_true(lw_irq_is_managed("mpt3sas0-msix0"));
	assert_false(lw_irq_is_managed("virtio2-input.0"));
	assert_false(lw_irq_is_managed("virtio2-output.0"));
	assert_false(lw_irq_is_managed("virtio3-rx"));
	assert_false(lw_irq_is_managed("virtio3-tx"));
	assert_false(lw_irq_is_managed("eth0-TxRx-0"));
	assert_false(lw_irq_is_managed("ttyS0"));
}

/* ---- acpi-cpufreq + powersave, THP always, irqbalance, target ---- */

static void test_acpi_powersave(void **state)
{
	struct lw_node n;
	const struct lw_cpu *c;
	const struct lw_irq *q;

	read_fixture(&n, "acpi-powersave", 0);
	assert_int_equal(n.nr_cpus, 4);
	assert_set(&n.online, "0-3");
	assert_int_equal(n.freq.drv, LW_DRV_ACPI_CPUFREQ);
	assert_string_equal(n.freq.driver, "acpi-cpufreq");
	assert_int_equal(n.freq.boost, 1);
	assert_int_equal(n.freq.no_turbo, -1);
	assert_false(n.freq.hwp);
	for (int i = 0; i < 4; i++) {
		c = &n.cpus[i];
		assert_true(c->has_freq);
		assert_string_equal(c->governor, "powersave");
		assert_int_equal(c->cur_khz, 800000);
		assert_int_equal(c->min_khz, 800000);
		assert_int_equal(c->max_khz, 3700000);
		assert_int_equal(c->hw_max_khz, 3700000);
		assert_string_equal(c->epp, "");
		assert_int_equal(c->numa_node, 0);
	}
	/* cpuidle */
	assert_string_equal(n.idle.driver, "acpi_idle");
	assert_string_equal(n.idle.governor, "menu");
	c = &n.cpus[2];
	assert_int_equal(c->nr_idle, 3);
	assert_string_equal(c->idle[2].name, "C2");
	assert_int_equal(c->idle[2].latency_us, 400);
	assert_int_equal(c->idle[2].usage, 1893342);
	assert_int_equal(c->idle[2].time_us, 891234567);
	assert_int_equal(c->idle[2].disable, 0);
	assert_string_equal(c->pm_qos, "0");
	/* THP: the bracketed word */
	assert_true(n.thp.present);
	assert_string_equal(n.thp.enabled, "always");
	assert_string_equal(n.thp.defrag, "madvise");
	assert_int_equal(n.thp.kh_defrag, 1);
	assert_int_equal(n.thp.pages_to_scan, 4096);
	assert_int_equal(n.thp.scan_sleep_ms, 10000);
	assert_int_equal(n.thp.alloc_sleep_ms, 60000);
	/* interrupts: numbered lines only, chip and name columns */
	assert_int_equal(n.nr_irqs, 13);
	q = irq(&n, 73);
	assert_string_equal(q->name, "eth0-TxRx-2");
	assert_string_equal(q->chip, "IR-PCI-MSIX-0000:41:00.0");
	assert_int_equal(q->count[2], 9345678);
	assert_int_equal(q->total, 9345678);
	assert_string_equal(q->affinity, "2");
	assert_set(&q->eff, "2");
	assert_int_equal(q->node, 0);
	assert_int_equal(q->pin, LW_IRQ_MOVABLE);
	assert_int_equal(q->nic, 0);
	assert_null(q->delta);
	assert_string_equal(irq(&n, 9)->chip, "IO-APIC");
	assert_string_equal(irq(&n, 9)->name, "acpi");
	assert_int_equal(irq(&n, 83)->pin, LW_IRQ_PIN_NAME);
	assert_int_equal(irq(&n, 80)->pin, LW_IRQ_MOVABLE); /* nvme admin queue */
	/* irqbalance and the NIC */
	assert_true(n.irqbalance.running);
	assert_int_equal(n.irqbalance.pid, 777);
	assert_string_equal(n.irqbalance.banned, "");
	assert_int_equal(n.nr_nics, 1);
	assert_string_equal(n.nics[0].name, "eth0");
	assert_int_equal(n.nics[0].numa_node, 0);
	assert_int_equal(n.nics[0].nr_irqs, 5);
	assert_int_equal(n.nics[0].irqs[0], 70);
	assert_int_equal(n.nics[0].irqs[4], 74);
	assert_false(n.has_target);
	lw_node_free(&n);
}

static void test_target(void **state)
{
	struct lw_node n;
	const struct lw_target *t = &n.target;

	read_fixture(&n, "acpi-powersave", 4242);
	assert_true(n.has_target);
	assert_int_equal(t->pid, 4242);
	assert_string_equal(t->comm, "gateway");
	assert_string_equal(t->cpus_allowed, "2-3");
	assert_set(&t->cpus, "2-3");
	assert_int_equal(t->thp_enabled, 1);
	assert_int_equal(t->madv_regions, 2);
	assert_int_equal(t->anon_huge_kb, 6144);
	assert_string_equal(t->cgroup, "/system.slice/gateway.service");
	assert_int_equal(t->cgroup_v, 2);
	assert_string_equal(t->cpu_max_path, "/sys/fs/cgroup/system.slice/gateway.service/cpu.max");
	assert_string_equal(t->cpu_max, "150000 100000");
	assert_int_equal(t->quota_us, 150000);
	assert_int_equal(t->period_us, 100000);
	assert_true(t->has_cpu_stat);
	assert_int_equal(t->nr_periods, 52000);
	assert_int_equal(t->nr_throttled, 3100);
	assert_int_equal(t->throttled_usec, 9300000);
	assert_string_equal(t->cpuset, "2-3");
	lw_node_free(&n);
}

static void test_missing(void **state)
{
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/acpi-powersave", 4243), -ESRCH);
	lw_node_free(&n);
	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/no-such-tree", 0), -ENOENT);
	lw_node_free(&n);
}

/* ---- intel_pstate active with HWP ---- */

static void test_intel_hwp(void **state)
{
	struct lw_node n;

	read_fixture(&n, "intel-hwp", 0);
	assert_int_equal(n.freq.drv, LW_DRV_INTEL_PSTATE);
	assert_string_equal(n.freq.pstate_status, "active");
	assert_true(n.freq.hwp);
	assert_int_equal(n.freq.no_turbo, 0);
	assert_int_equal(n.freq.boost, -1);
	assert_string_equal(n.cpus[1].governor, "powersave");
	assert_string_equal(n.cpus[1].epp, "balance_power");
	assert_int_equal(n.cpus[1].base_khz, 2200000);
	assert_int_equal(n.cpus[1].cur_khz, 2150000);
	assert_string_equal(n.idle.driver, "intel_idle");
	assert_int_equal(n.idle.halt_poll_ns, -1); /* no haltpoll governor */
	assert_false(n.vm);
	assert_int_equal(n.cpus[0].nr_idle, 4);
	assert_string_equal(n.cpus[0].idle[3].name, "C6");
	assert_int_equal(n.cpus[0].idle[3].latency_us, 170);
	assert_string_equal(n.thp.enabled, "madvise");
	lw_node_free(&n);
}

/* ---- amd-pstate active (EPP) ---- */

static void test_amd_pstate(void **state)
{
	struct lw_node n;

	read_fixture(&n, "amd-pstate", 0);
	assert_int_equal(n.freq.drv, LW_DRV_AMD_PSTATE_EPP);
	assert_string_equal(n.freq.driver, "amd-pstate-epp");
	assert_string_equal(n.freq.pstate_status, "active");
	assert_false(n.freq.hwp); /* HWP is Intel's */
	assert_int_equal(n.freq.boost, 0);
	assert_string_equal(n.cpus[3].epp, "power");
	assert_int_equal(n.cpus[3].hw_max_khz, 3700000);
	assert_int_equal(n.cpus[3].idle[2].disable, 1);
	assert_string_equal(n.thp.enabled, "never");
	lw_node_free(&n);
}

/* ---- VM without cpufreq, virtio IRQs ---- */

static void test_vm(void **state)
{
	struct lw_node n;

	read_fixture(&n, "vm-nocpufreq", 4242);
	assert_int_equal(n.nr_cpus, 2);
	assert_int_equal(n.freq.drv, LW_DRV_NONE);
	assert_string_equal(n.freq.driver, "");
	assert_false(n.cpus[0].has_freq);
	assert_string_equal(n.idle.driver, "haltpoll");
	assert_string_equal(n.cpus[1].idle[1].name, "haltpoll idle");
	assert_int_equal(n.idle.halt_poll_ns, 0); /* set on this VM's command line */
	assert_true(n.vm);
	assert_string_equal(n.thp.enabled, "madvise");
	assert_string_equal(n.thp.defrag, "madvise");
	assert_int_equal(irq(&n, 36)->pin, LW_IRQ_PIN_NAME);
	assert_string_equal(irq(&n, 36)->chip, "PCI-MSIX-0000:00:02.0");
	assert_int_equal(irq(&n, 36)->count[1], 30591);
	assert_int_equal(irq(&n, 41)->pin, LW_IRQ_MOVABLE);
	assert_int_equal(irq(&n, 42)->pin, LW_IRQ_MOVABLE);
	assert_string_equal(irq(&n, 24)->name, "ACPI:Ged");
	/* virtio-net: numa_node and msi_irqs live on the PCI parent of virtioN */
	assert_int_equal(n.nr_nics, 1);
	assert_string_equal(n.nics[0].name, "eth0");
	assert_int_equal(n.nics[0].numa_node, -1);
	assert_int_equal(n.nics[0].nr_irqs, 3);
	assert_int_equal(irq(&n, 38)->nic, 0);
	/* RPS: lo's on, to CPU 1; eth0's mask 0 (off) is not kept */
	assert_int_equal(n.nr_rps, 1);
	assert_string_equal(n.rps[0].dev, "lo");
	assert_string_equal(n.rps[0].queue, "rx-0");
	assert_string_equal(n.rps[0].mask, "2");
	assert_set(&n.rps[0].cpus, "1");
	assert_false(n.irqbalance.running);
	assert_string_equal(n.target.cgroup, "/");
	assert_string_equal(n.target.cpu_max, "max 100000");
	assert_int_equal(n.target.quota_us, -1);
	lw_node_free(&n);
}

/* ---- NIC on node 1, IRQs on node 0 ---- */

static void test_numa_nic(void **state)
{
	struct lw_node n;
	const struct lw_numa_node *nn;
	struct lw_cpuset set;
	bool sampled;

	read_fixture(&n, "numa-nic", 4242);
	assert_int_equal(n.nr_numa, 2);
	nn = lw_node_numa(&n, 1);
	assert_non_null(nn);
	assert_set(&nn->cpus, "4-7");
	assert_int_equal(n.cpus[5].numa_node, 1);
	assert_int_equal(n.cpus[2].numa_node, 0);
	assert_int_equal(n.nr_nics, 1);
	assert_string_equal(n.nics[0].name, "eth1");
	assert_int_equal(n.nics[0].numa_node, 1);
	assert_int_equal(n.nics[0].nr_irqs, 4);
	assert_int_equal(n.nics[0].irqs[0], 60);
	assert_set(&irq(&n, 60)->eff, "0");
	assert_int_equal(irq(&n, 60)->node, 1);
	assert_int_equal(n.target.thp_enabled, 0); /* prctl(PR_SET_THP_DISABLE) */
	/* eth1's four queues with RPS on; NET_RX per CPU from /proc/softirqs */
	assert_int_equal(n.nr_rps, 4);
	assert_string_equal(n.rps[0].dev, "eth1");
	assert_set(&n.rps[3].cpus, "4-7");
	assert_non_null(n.net_rx);
	assert_true(n.net_rx[4] == 2398765ULL && n.net_rx[7] == 2399876ULL);
	lw_cpuset_parse_list(&set, "4-5");
	assert_true(lw_net_rx_on(&n, &set, &sampled) == 4799999ULL);
	assert_false(sampled);
	assert_int_equal(lw_node_sample_irqs(&n, 0), 0);
	assert_true(lw_net_rx_on(&n, &set, &sampled) == 0);
	assert_true(sampled);
	lw_node_free(&n);
}

/* ---- what needs a scratch copy ---- */

static void test_sample(void **state)
{
	struct lw_node n;
	struct lw_cpuset cpu0 = {0};
	bool sampled;
	char dir[64];

	copy_fixture("vm-nocpufreq", dir, sizeof(dir));
	assert_int_equal(lw_node_read(&n, dir, 0), 0);
	assert_int_equal(lw_irq_count_on(&n, irq(&n, 41), &n.online, &sampled), 1548);
	assert_false(sampled);
	write_file(dir, "proc/interrupts",
		   "           CPU0       CPU1       \n"
		   " 36:          0      30691 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
		   " 41:       1648          0 PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx\n"
		   " 99:          5          0 PCI-MSIX-0000:00:09.0   1-edge      new-irq\n");
	assert_int_equal(lw_node_sample_irqs(&n, 0), 0);
	assert_int_equal(n.sample_ms, 0);
	lw_cpuset_set(&cpu0, 0);
	assert_int_equal(lw_irq_count_on(&n, irq(&n, 41), &cpu0, &sampled), 100);
	assert_true(sampled);
	assert_int_equal(irq(&n, 36)->delta[1], 100);
	assert_int_equal(irq(&n, 36)->total, 30691);
	assert_null(lw_node_irq(&n, 99)); /* appeared during the sample */
	lw_node_free(&n);
	remove_tree(dir);
}

/* Kernels that mark managed IRQs drop the write bit of smp_affinity_list. */
static void test_read_only_affinity(void **state)
{
	struct lw_node n;
	char dir[64], path[256];

	copy_fixture("vm-nocpufreq", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/proc/irq/41/smp_affinity_list", dir);
	assert_int_equal(chmod(path, 0444), 0);
	assert_int_equal(lw_node_read(&n, dir, 0), 0);
	assert_int_equal(irq(&n, 41)->pin, LW_IRQ_PIN_RO);
	assert_int_equal(irq(&n, 42)->pin, LW_IRQ_MOVABLE);
	lw_node_free(&n);
	remove_tree(dir);
}

/* Which power:cpu_idle state numbers poll: a POLL state is no C-state. */
static void test_idle_poll_states(void **state)
{
	char dir[64], cmd[256];

	assert_int_equal(lw_idle_poll_states(LW_FIXTURES "/intel-hwp"), 1);
	assert_int_equal(lw_idle_poll_states(LW_FIXTURES "/vm-nocpufreq"), 1);
	copy_fixture("acpi-powersave", dir, sizeof(dir));
	/* an ARM-like driver: state0 is WFI, a real (shallow) state */
	write_file(dir, "sys/devices/system/cpu/cpu0/cpuidle/state0/name", "WFI\n");
	assert_int_equal(lw_idle_poll_states(dir), 0);
	write_file(dir, "sys/devices/system/cpu/cpu0/cpuidle/state2/name", "POLL\n");
	assert_int_equal(lw_idle_poll_states(dir), 4);
	/* no cpuidle driver: the idle loop says 0 when it polls, 1 when it halts */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys/devices/system/cpu/cpu0/cpuidle", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(lw_idle_poll_states(dir), 1);
	remove_tree(dir);
}

static void test_irqbalance_banned(void **state)
{
	struct lw_node n;
	char dir[64];

	copy_fixture("acpi-powersave", dir, sizeof(dir));
	write_file(dir, "etc/default/irqbalance",
		   "#IRQBALANCE_BANNED_CPULIST=\n"
		   "IRQBALANCE_BANNED_CPUS=\"0000000c\"\n");
	assert_int_equal(lw_node_read(&n, dir, 0), 0);
	assert_string_equal(n.irqbalance.banned, "0000000c");
	assert_set(&n.irqbalance.banned_set, "2-3");
	lw_node_free(&n);
	/* The cpulist form wins over the deprecated mask. */
	write_file(dir, "etc/default/irqbalance",
		   "IRQBALANCE_BANNED_CPULIST=1-2\n"
		   "IRQBALANCE_BANNED_CPUS=0000000c\n");
	assert_int_equal(lw_node_read(&n, dir, 0), 0);
	assert_string_equal(n.irqbalance.banned, "1-2");
	assert_set(&n.irqbalance.banned_set, "1-2");
	lw_node_free(&n);
	remove_tree(dir);
}

static void test_cgroup_v1(void **state)
{
	struct lw_node n;
	char dir[64], cmd[512];

	copy_fixture("vm-nocpufreq", dir, sizeof(dir));
	write_file(dir, "proc/4242/cgroup", "3:cpuset:/\n2:cpu,cpuacct:/app\n0::/\n");
	snprintf(cmd, sizeof(cmd),
		 "rm %s/sys/fs/cgroup/cgroup.controllers && "
		 "mkdir -p '%s/sys/fs/cgroup/cpu,cpuacct/app' %s/sys/fs/cgroup/cpuset",
		 dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	write_file(dir, "sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_quota_us", "50000\n");
	write_file(dir, "sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_period_us", "100000\n");
	write_file(dir, "sys/fs/cgroup/cpu,cpuacct/app/cpu.stat",
		   "nr_periods 10\nnr_throttled 4\nthrottled_time 2000000\n");
	write_file(dir, "sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-1\n");
	assert_int_equal(lw_node_read(&n, dir, 4242), 0);
	assert_int_equal(n.target.cgroup_v, 1);
	assert_string_equal(n.target.cgroup, "/app");
	assert_int_equal(n.target.quota_us, 50000);
	assert_int_equal(n.target.period_us, 100000);
	assert_int_equal(n.target.nr_throttled, 4);
	assert_int_equal(n.target.throttled_usec, 2000);
	assert_string_equal(n.target.cpuset, "0-1");
	lw_node_free(&n);
	remove_tree(dir);
}

/* The listening ports of a /proc/net/tcp or tcp6 table: LISTEN rows (st 0A)
 * only, IPv4 and IPv6 addresses alike; the header and other states not. */
static void test_listen_ports(void **state)
{
	static const char table[] =
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   "
		"uid\n"
		"   0: 0100007F:1BA5 00000000:0000 0A 00000000:00000000 00:00000000 00000000     "
		"0\n"
		"   1: 0100007F:D431 0100007F:1BA5 01 00000000:00000000 00:00000000 00000000     "
		"0\n"
		"   2: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 "
		"0A 00000000:00000000 00:00000000 00000000     0\n"
		"   3: 0100007F:FFFF 00000000:0000 0A 00000000:00000000 00:00000000 00000000     "
		"0\n";
	__u64 bits[65536 / 64] = {};
	FILE *f = fmemopen((void *)table, sizeof(table) - 1, "r");

	assert_non_null(f);
	assert_int_equal(lw_parse_listen_ports(f, bits), 3);
	fclose(f);
	assert_true(bits[0x1BA5 / 64] & (1ULL << (0x1BA5 % 64)));  /* 7077 */
	assert_true(bits[80 / 64] & (1ULL << (80 % 64)));	   /* tcp6 */
	assert_true(bits[65535 / 64] & (1ULL << 63));		   /* the last */
	assert_false(bits[0xD431 / 64] & (1ULL << (0xD431 % 64))); /* established */
	assert_true(lw_probe_listen_ports(-1, bits) < 0);	   /* no such table */
}

/* A listener of its own, IPv4 and IPv6 on ports the kernel picks: both
 * found by sock_diag (the test's namespace is its own), and the same set
 * as its /proc tables give. */
static int listen_any(int family)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr *a = family == AF_INET ? (struct sockaddr *)&a4 : (struct sockaddr *)&a6;
	socklen_t len = family == AF_INET ? sizeof(a4) : sizeof(a6);
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, a, len) || listen(fd, 1) || getsockname(fd, a, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int port_of(int fd)
{
	struct sockaddr_in6 a = {};
	socklen_t len = sizeof(a);

	getsockname(fd, (struct sockaddr *)&a, &len);
	return ntohs(a.sin6_port); /* sin_port sits at the same offset */
}

static void test_listen_ports_own(void **state)
{
	static __u64 diag[65536 / 64], proc[65536 / 64];
	int fd4 = listen_any(AF_INET), fd6 = listen_any(AF_INET6), p4, p6;

	assert_true(fd4 >= 0);
	p4 = port_of(fd4);
	assert_true(lw_probe_listen_ports(getpid(), diag) >= 1);
	assert_true(lw_probe_listen_ports_proc(getpid(), proc) >= 1);
	assert_true(diag[p4 / 64] & (1ULL << (p4 % 64)));
	if (fd6 >= 0) { /* a kernel without IPv6 has no tcp6 either */
		p6 = port_of(fd6);
		assert_true(diag[p6 / 64] & (1ULL << (p6 % 64)));
		close(fd6);
	}
	assert_memory_equal(diag, proc, sizeof(diag));
	close(fd4);
}

/* A list of processes: a namespace shared by several is read once (the
 * same count as one of them alone), a process gone is passed over, and a
 * list of none that can be read is its error. */
static void test_listen_ports_pids(void **state)
{
	static __u64 one[65536 / 64], many[65536 / 64];
	int fd4 = listen_any(AF_INET), pids[3], n1;
	pid_t child = fork();

	assert_true(fd4 >= 0 && child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	n1 = lw_probe_listen_ports(getpid(), one);
	assert_true(n1 >= 1);
	pids[0] = child; /* reaped: gone */
	pids[1] = pids[2] = getpid();
	assert_int_equal(lw_probe_listen_ports_pids(pids, 3, many), n1);
	assert_memory_equal(one, many, sizeof(one));
	assert_int_equal(lw_probe_listen_ports_pids(pids, 1, many), -ENOENT);
	close(fd4);
}

/* /proc/PID/stat of this (single-threaded) test: its comm, state and
 * thread count; a pid that does not exist. */
static void test_probe_stat(void **state)
{
	char comm[32], st;
	int threads = -1;

	assert_int_equal(lw_probe_stat(getpid(), comm, sizeof(comm), &st, &threads), 0);
	assert_string_equal(comm, "test_node");
	assert_int_equal(st, 'R');
	assert_int_equal(threads, 1);
	assert_int_equal(lw_probe_stat(-1, NULL, 0, &st, &threads), -ESRCH);
}

/*
 * Queue IRQs told by the drivers' vector names, and software devices by
 * their sysfs marks: mlx5's "mlx5_compN@pci:BUS" under msi_irqs, a NIC
 * without MSI named "DEV-rx-N"/"DEV-tx-N" (its bare "DEV" vector is no
 * queue's), a bridge, a bond and a tap.
 */
static void test_nic_queue_names(void **state)
{
	const char *pci = "sys/devices/pci0000:00/0000:00:05.0";
	char dir[64], cmd[2048];
	struct lw_node n;

	copy_fixture("nic-veth", dir, sizeof(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && rm -rf ethtool sys/class/net/veth* && mkdir -p %s/msi_irqs "
		 "%s/net/eth5/queues/rx-0 %s/net/eth5/queues/rx-1 %s/net/eth5/queues/tx-0 "
		 "%s/net/eth5/queues/tx-1 && for i in 100 101 102; do echo msix >%s/msi_irqs/$i; "
		 "done && ln -s ../../../0000:00:05.0 %s/net/eth5/device && "
		 "ln -s ../../devices/pci0000:00/0000:00:05.0/net/eth5 sys/class/net/eth5 && "
		 "mkdir -p sys/class/net/eth6/device sys/class/net/eth6/queues/rx-0 "
		 "sys/class/net/eth6/queues/tx-0 sys/class/net/br0/bridge "
		 "sys/class/net/bond0/bonding sys/class/net/tap0 && "
		 "echo 0x1003 >sys/class/net/tap0/tun_flags",
		 dir, pci, pci, pci, pci, pci, pci, pci);
	assert_int_equal(system(cmd), 0);
	write_file(dir, "proc/interrupts",
		   "           CPU0       CPU1\n"
		   " 100:         5          0  PCI-MSIX-0000:00:05.0 0-edge      "
		   "mlx5_async0@pci:0000:00:05.0\n"
		   " 101:        10          0  PCI-MSIX-0000:00:05.0 1-edge      "
		   "mlx5_comp0@pci:0000:00:05.0\n"
		   " 102:         0         20  PCI-MSIX-0000:00:05.0 2-edge      "
		   "mlx5_comp1@pci:0000:00:05.0\n"
		   "  30:         1          0  IO-APIC  30-fasteoi   eth6\n"
		   "  31:         7          0  IO-APIC  31-fasteoi   eth6-rx-0\n"
		   "  32:         0          8  IO-APIC  32-fasteoi   eth6-tx-0\n");
	assert_int_equal(lw_node_read(&n, dir, 0), 0);
	assert_int_equal(n.nr_nics, 5);
	/* sorted: bond0 br0 eth5 eth6 tap0 */
	assert_int_equal(n.nics[0].kind, LW_NIC_BOND);
	assert_int_equal(n.nics[1].kind, LW_NIC_BRIDGE);
	assert_int_equal(n.nics[2].kind, LW_NIC_PHYS);
	assert_string_equal(n.nics[2].bus, "0000:00:05.0");
	assert_int_equal(n.nics[2].nr_irqs, 3);
	assert_int_equal(n.nics[2].rxq[0].irq, 101);
	assert_int_equal(n.nics[2].rxq[1].irq, 102);
	assert_int_equal(n.nics[2].txq[1].irq, 102);
	assert_int_equal(n.nics[3].nr_irqs, 3);
	assert_int_equal(n.nics[3].rxq[0].irq, 31);
	assert_int_equal(n.nics[3].txq[0].irq, 32);
	assert_int_equal(n.nics[4].kind, LW_NIC_TUN);
	assert_string_equal(lw_nic_kind_name(n.nics[4].kind), "tun/tap");
	assert_int_equal(irq(&n, 101)->nic, 2);
	lw_node_free(&n);
	remove_tree(dir);
}

/* A target of several processes: the CPUs any of them may use. */
static void test_target_union(void **state)
{
	struct lw_node n;
	char dir[64], sub[128];

	copy_fixture("acpi-powersave", dir, sizeof(dir));
	snprintf(sub, sizeof(sub), "%s/proc/4243", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(dir, "proc/4243/status", "Name:\tgateway\nCpus_allowed_list:\t5,7\n");
	assert_int_equal(lw_node_read(&n, dir, 4242), 0);
	assert_string_equal(n.target.cpus_allowed, "2-3");
	assert_int_equal(lw_node_target_add(&n, 4243), 0);
	assert_string_equal(n.target.cpus_allowed, "2-3,5,7");
	assert_true(lw_cpuset_test(&n.target.cpus, 5));
	assert_int_equal(n.target.pid, 4242); /* the rest stays the first's */
	assert_int_equal(lw_node_target_add(&n, 4999), -ESRCH);
	assert_string_equal(n.target.cpus_allowed, "2-3,5,7");
	lw_node_free(&n);
	assert_int_equal(lw_node_read(&n, dir, 0), 0);
	assert_int_equal(lw_node_target_add(&n, 4243), -EINVAL);
	lw_node_free(&n);
	remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_union),
		cmocka_unit_test(test_listen_ports),
		cmocka_unit_test(test_listen_ports_own),
		cmocka_unit_test(test_listen_ports_pids),
		cmocka_unit_test(test_probe_stat),
		cmocka_unit_test(test_cpuset),
		cmocka_unit_test(test_cpuset_mask),
		cmocka_unit_test(test_irq_is_managed),
		cmocka_unit_test(test_acpi_powersave),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_intel_hwp),
		cmocka_unit_test(test_amd_pstate),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_numa_nic),
		cmocka_unit_test(test_nic_queue_names),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_read_only_affinity),
		cmocka_unit_test(test_irqbalance_banned),
		cmocka_unit_test(test_idle_poll_states),
		cmocka_unit_test(test_cgroup_v1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
