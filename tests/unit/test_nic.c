// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_nic.c - the NIC reader, its findings and their fix scripts on the
 * nic-* fixtures (a case-3 X710, this VM's virtio-net, a veth pair), and
 * the ethtool interface replaced by a test's own queries. Fix scripts are
 * applied and undone on a copy of the tree, which must end byte for byte as
 * it was. Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "advice/advise.h"
#include "advice/fixscript.h"
#include "advice/nic.h"

#define LW_FIXTURES "tests/fixtures"

static __attribute__((format(printf, 1, 2))) int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The finding whose seen text holds needle, NULL if none. */
static const struct lw_finding *find(const struct lw_findings *fs, const char *needle)
{
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].seen && strstr(fs->v[i].seen, needle))
			return &fs->v[i];
	return NULL;
}

static bool has_cmd(const struct lw_strv *v, const char *cmd)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], cmd))
			return true;
	return false;
}

/* ---- the reader ---- */

static void test_read_numa(void **state)
{
	struct lw_node n;
	const struct lw_nic *nic;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-numa", 0), 0);
	assert_int_equal(n.nr_nics, 1);
	nic = &n.nics[0];
	assert_string_equal(nic->name, "eth2");
	assert_int_equal(nic->kind, LW_NIC_PHYS);
	assert_string_equal(nic->driver, "i40e");
	assert_string_equal(nic->bus, "0000:81:00.0");
	assert_int_equal(nic->numa_node, 1);
	assert_int_equal(nic->speed, 10000);
	assert_int_equal(nic->et_channels, 0);
	assert_int_equal(nic->ch.combined, 4);
	assert_int_equal(nic->ch.max_combined, 16);
	assert_int_equal(lw_nic_active_rx(nic), 4);
	assert_non_null(nic->rss);
	assert_int_equal(nic->rss->size, 512);
	assert_int_equal(nic->rss->key_size, 52);
	{
		unsigned w[4];

		assert_int_equal(lw_nic_rss_used(nic, w, 4), 4);
		assert_int_equal(w[0], 384);
		assert_int_equal(w[1] + w[2] + w[3], 128);
	}
	assert_int_equal(nic->co.rx_usecs, 100);
	assert_false(nic->co.adaptive_rx);
	assert_int_equal(nic->rings.rx, 512);
	assert_int_equal(nic->rings.rx_max, 4096);
	/* the misc vector belongs to the device but to no queue */
	assert_int_equal(nic->nr_irqs, 5);
	assert_int_equal(nic->nr_rxq, 4);
	assert_int_equal(nic->nr_txq, 4);
	for (unsigned q = 0; q < 4; q++) {
		assert_int_equal(nic->rxq[q].irq, 91 + q);
		assert_int_equal(nic->txq[q].irq, 91 + q);
		assert_true(lw_cpuset_empty(&nic->rxq[q].cpus));
		assert_int_equal(nic->rxq[q].flow_cnt, 0);
		assert_int_equal(lw_cpuset_count(&nic->txq[q].cpus), 4);
		assert_true(lw_cpuset_test(&nic->txq[q].cpus, (int)q * 4));
	}
	assert_int_equal(lw_node_irq(&n, 92)->nic, 0);
	assert_int_equal(n.rps_sock_flow_entries, 0);
	assert_true(n.irqbalance.running);
	lw_node_free(&n);
}

static void test_read_virtio(void **state)
{
	struct lw_node n;
	const struct lw_nic *nic;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-virtio", 0), 0);
	/* lo is no NIC */
	assert_int_equal(n.nr_nics, 1);
	nic = &n.nics[0];
	assert_string_equal(nic->name, "eth0");
	assert_int_equal(nic->kind, LW_NIC_VIRTIO);
	assert_string_equal(nic->driver, "virtio_net");
	assert_string_equal(nic->virtio, "virtio2");
	assert_string_equal(nic->bus, "0000:00:03.0");
	assert_int_equal(nic->speed, -1);
	assert_int_equal(nic->ch.max_combined, 1);
	assert_int_equal(nic->rss->size, 0);
	assert_int_equal(nic->rss->rx_rings, 1);
	assert_int_equal(nic->rxq[0].irq, 38);
	assert_int_equal(nic->txq[0].irq, 39);
	/* xps_cpus unreadable on one queue: absent, not empty */
	assert_string_equal(nic->txq[0].mask, "");
	assert_string_equal(nic->rxq[0].mask, "0");
	lw_node_free(&n);
}

static void test_read_veth(void **state)
{
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-veth", 0), 0);
	assert_int_equal(n.nr_nics, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct lw_nic *nic = &n.nics[i];

		assert_int_equal(nic->kind, LW_NIC_VETH);
		assert_string_equal(nic->driver, "veth");
		assert_string_equal(nic->bus, "");
		assert_int_equal(nic->nr_irqs, 0);
		assert_int_equal(nic->ch.rx, 1);
		assert_int_equal(nic->ch.max_rx, 2);
		assert_int_equal(nic->et_rings, -EOPNOTSUPP);
		assert_int_equal(nic->et_coalesce, -EOPNOTSUPP);
		assert_null(nic->rss);
		assert_int_equal(nic->speed, 10000);
		assert_int_equal(nic->rxq[0].irq, 0);
	}
	/* sorted by name, whatever readdir's order */
	assert_string_equal(n.nics[0].name, "veth0");
	assert_string_equal(n.nics[1].name, "veth1");
	lw_node_free(&n);
}

/* A fixture without recorded answers: every query unsupported, none judged. */
static void test_read_unrecorded(void **state)
{
	struct lw_findings fs = {0};
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/numa-nic", 0), 0);
	assert_int_equal(n.nr_nics, 1);
	assert_int_equal(n.nics[0].et_channels, -EOPNOTSUPP);
	assert_null(n.nics[0].rss);
	assert_int_equal(n.nics[0].rxq[2].irq, 62);
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	assert_int_equal(fs.n, 0);
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* ---- a test's own ethtool ---- */

static int stub_drvinfo(const struct lw_ethtool *et, const char *dev, struct lw_et_drvinfo *o)
{
	snprintf(o->driver, sizeof(o->driver), "mlx5_core");
	return 0;
}

static int stub_channels(const struct lw_ethtool *et, const char *dev, struct lw_et_channels *o)
{
	*o = (struct lw_et_channels){.max_combined = 8, .combined = 2};
	return 0;
}

static int stub_rss(const struct lw_ethtool *et, const char *dev, struct lw_et_rss *o)
{
	return -EOPNOTSUPP;
}

static int stub_coalesce(const struct lw_ethtool *et, const char *dev, struct lw_et_coalesce *o)
{
	return -EOPNOTSUPP;
}

static int stub_rings(const struct lw_ethtool *et, const char *dev, struct lw_et_rings *o)
{
	return -EIO;
}

static int stub_speed(const struct lw_ethtool *et, const char *dev, int *mbps)
{
	*mbps = 25000;
	return 0;
}

static void test_stub_ethtool(void **state)
{
	const struct lw_ethtool stub = {
		.drvinfo = stub_drvinfo,
		.channels = stub_channels,
		.rss = stub_rss,
		.coalesce = stub_coalesce,
		.rings = stub_rings,
		.speed = stub_speed,
	};
	struct lw_findings fs = {0};
	const struct lw_finding *f;
	struct lw_node n;

	assert_int_equal(lw_node_read_with(&n, LW_FIXTURES "/numa-nic", 0, &stub), 0);
	assert_int_equal(n.nics[0].speed, 25000);
	assert_int_equal(n.nics[0].et_rings, -EIO);
	assert_int_equal(n.nics[0].ch.combined, 2);
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	/* node 1 has CPUs 4-7: four channels, no table to spread */
	f = find(&fs, "receives on 2 of the 8 combined channels");
	assert_non_null(f);
	assert_true(has_cmd(&f->fix, "ethtool -L eth1 combined 4"));
	assert_int_equal(f->fix.n, 1);
	assert_true(has_cmd(&f->rollback, "ethtool -L eth1 combined 2"));
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* ---- findings ---- */

static void test_findings_numa(void **state)
{
	struct lw_findings fs = {0};
	const struct lw_finding *f;
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-numa", 4242), 0);
	assert_int_equal(lw_advise_node(&n, &fs), 0);
	f = find(&fs, "eth2 (i40e) receives on 4 of the 16 combined channels");
	assert_non_null(f);
	assert_int_equal(f->severity, LW_SEV_WARN);
	assert_non_null(strstr(f->seen, "8 CPUs could serve them on its NUMA node; its RSS table "
					"sends 75% of the flows to queue 0"));
	assert_int_equal(f->fix.n, 2);
	assert_string_equal(f->fix.v[0], "ethtool -L eth2 combined 8");
	assert_string_equal(f->fix.v[1], "ethtool -X eth2 equal 8");
	assert_non_null(strstr(f->persist.v[0], "70-latwhy-eth2-channels.rules"));
	assert_non_null(strstr(f->persist.v[0], "RUN+=\"/usr/sbin/ethtool -L eth2 combined 8\""));
	assert_non_null(strstr(f->persist.v[2], "RUN+=\"/usr/sbin/ethtool -X eth2 equal 8\""));
	/* the old table goes back before the channels it names go away */
	assert_string_equal(f->rollback.v[f->rollback.n - 2],
			    "ethtool -X eth2 weight 384 43 43 42");
	assert_string_equal(f->rollback.v[f->rollback.n - 1], "ethtool -L eth2 combined 4");
	assert_non_null(f->cost);
	/* raising the channels spreads the table: no second finding for it */
	assert_null(find(&fs, "RSS table (512 entries)"));
	f = find(&fs, "eth2 holds a received packet up to 100 us before it interrupts");
	assert_non_null(f);
	assert_int_equal(f->severity, LW_SEV_INFO);
	assert_non_null(strstr(f->why, "trade-off"));
	assert_string_equal(f->fix.v[0], "ethtool -C eth2 adaptive-rx on");
	assert_true(has_cmd(&f->rollback, "ethtool -C eth2 adaptive-rx off rx-usecs 100"));
	/* the queue IRQs: irqbalance spread them over both nodes and the target */
	assert_non_null(find(&fs,
			     "eth2 is on NUMA node 1 (CPUs 8-15); IRQs on other nodes: 90 "
			     "(i40e-0000:81:00.0:misc) on CPU 0; 91 (i40e-eth2-TxRx-0) on CPU 2"));
	assert_non_null(find(&fs, "IRQs landing on the target's CPUs 8-9: 92 (i40e-eth2-TxRx-1)"));
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* ---- the live summary's irq finding ---- */

/* A trace of the case-3 target (CPUs 8-9) whose slow requests lost half
 * their time to interrupts: irq on CPU 9 (a queue of eth2, or the disk). */
static void trace_irq_facts(struct lw_trace_facts *t, unsigned irq, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->pid = 4242;
	t->share[LW_CAUSE_IRQ] = 0.5;
	t->cause_ns[LW_CAUSE_IRQ] = 60000000;
	t->slow_requests = 100;
	t->cpus_mask[0] = 1ULL << 9;
	t->irqs[0] = (struct lw_fact_irq){.irq = irq, .cpu = 9, .ns = 40000000, .count = 80000};
	snprintf(t->irqs[0].name, sizeof(t->irqs[0].name), "%s", name);
	t->nr_irqs = 1;
	t->softirqs[0] = (struct lw_fact_softirq){.cpu = 9, .ns = 20000000, .count = 70000};
	snprintf(t->softirqs[0].vec, sizeof(t->softirqs[0].vec), "NET_RX");
	t->nr_softirqs = 1;
	t->freq_source = "no frequency data";
}

/* The interrupts that hurt are a NIC queue's: the irq finding names the
 * queue, and the NIC's own findings (channels, coalescing) follow it. */
static void test_trace_nic_queue(void **state)
{
	struct lw_findings fs = {0};
	struct lw_trace_facts t;
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-numa", 4242), 0);
	trace_irq_facts(&t, 92, "i40e-eth2-TxRx-1");
	assert_int_equal(lw_advise_trace(&n, &t, &fs), 0);
	assert_true(fs.n >= 3);
	assert_int_equal(fs.v[0].cause, LW_CAUSE_IRQ);
	assert_non_null(strstr(fs.v[0].seen, "interrupts ran on the target's CPUs 9"));
	assert_non_null(strstr(fs.v[0].evidence,
			       "IRQ 92 (i40e-eth2-TxRx-1) on CPU 9: 40.00 ms in 80000 interrupts, "
			       "eth2's queue 1 (i40e, 4 of 16 combined channels)"));
	/* the NIC reader's findings, as latwhy check makes them */
	assert_non_null(find(&fs, "eth2 (i40e) receives on 4 of the 16 combined channels"));
	assert_non_null(find(&fs, "eth2 holds a received packet up to 100 us"));
	/* and only the NIC's: no node finding of another domain */
	for (size_t i = 1; i < fs.n; i++)
		assert_non_null(strstr(fs.v[i].seen, "eth2"));
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* Interrupts of a device that is no NIC: the irq finding alone. */
static void test_trace_not_nic(void **state)
{
	struct lw_findings fs = {0};
	struct lw_trace_facts t;
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-numa", 4242), 0);
	trace_irq_facts(&t, 90, "i40e-0000:81:00.0:misc");
	/* IRQ 90 belongs to eth2 too (its misc vector): a NIC's, then */
	assert_int_equal(lw_advise_trace(&n, &t, &fs), 0);
	assert_non_null(strstr(fs.v[0].evidence, "eth2's interrupt (i40e"));
	lw_findings_free(&fs);
	trace_irq_facts(&t, 7, "nvme0q1");
	assert_int_equal(lw_advise_trace(&n, &t, &fs), 0);
	assert_int_equal(fs.n, 1);
	assert_null(strstr(fs.v[0].evidence, "eth2"));
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* A copy of fixture in a scratch directory, tweak run in it. */
static void scratch(char *dir, size_t len, const char *fixture, const char *tweak)
{
	snprintf(dir, len, "/tmp/latwhy-nic-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sh("cp -a " LW_FIXTURES "/%s %s/tree", fixture, dir), 0);
	if (tweak)
		assert_int_equal(sh("cd %s/tree && %s", dir, tweak), 0);
}

static void test_findings_rss_only(void **state)
{
	struct lw_findings fs = {0};
	const struct lw_finding *f;
	struct lw_node n;
	char dir[64], tree[96];

	/* a driver that has no more than its four channels */
	scratch(dir, sizeof(dir), "nic-numa",
		"sed -i 's/^max_combined 16$/max_combined 4/' ethtool/eth2/channels");
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	assert_int_equal(lw_node_read(&n, tree, 0), 0);
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	assert_null(find(&fs, "combined channels it could have"));
	f = find(&fs, "eth2's RSS table (512 entries) sends flows to 4 of its 4 receive queues; "
		      "queue 0 holds 384 entries (75% of the flows)");
	assert_non_null(f);
	assert_int_equal(f->fix.n, 1);
	assert_string_equal(f->fix.v[0], "ethtool -X eth2 equal 4");
	assert_non_null(strstr(f->persist.v[0], "71-latwhy-eth2-rss.rules"));
	assert_true(has_cmd(&f->rollback, "ethtool -X eth2 weight 384 43 43 42"));
	lw_findings_free(&fs);
	lw_node_free(&n);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

static void test_findings_virtio(void **state)
{
	struct lw_findings fs = {0};
	const struct lw_finding *f;
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-virtio", 0), 0);
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	assert_int_equal(fs.n, 2);
	f = find(&fs, "eth0 is a virtio-net NIC of this guest: 1 of 1 queue pairs (the host "
		      "offers one)");
	assert_non_null(f);
	assert_int_equal(f->severity, LW_SEV_INFO);
	/* notes only: nothing a guest could run would add queues */
	for (size_t i = 0; i < f->fix.n; i++)
		assert_int_equal(f->fix.v[i][0], '#');
	assert_non_null(strstr(f->fix.v[1], "a guest cannot"));
	f = find(&fs, "eth0 has one receive queue and can have no more");
	assert_non_null(f);
	assert_non_null(strstr(f->seen, "run on CPU 1"));
	assert_string_equal(f->fix.v[0], "echo 3 > /sys/class/net/eth0/queues/rx-0/rps_cpus");
	assert_string_equal(f->rollback.v[0], "echo 0 > /sys/class/net/eth0/queues/rx-0/rps_cpus");
	/* no coalescing finding on virtio: it only batches notifications */
	assert_null(find(&fs, "interrupts on every received frame"));
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* a host that offers four queue pairs: the guest can use two, one per vCPU */
static void test_findings_virtio_mq(void **state)
{
	struct lw_findings fs = {0};
	const struct lw_finding *f;
	struct lw_node n;
	char dir[64], tree[96];

	scratch(dir, sizeof(dir), "nic-virtio",
		"sed -i 's/^max_combined 1$/max_combined 4/' ethtool/eth0/channels");
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	assert_int_equal(lw_node_read(&n, tree, 0), 0);
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	assert_non_null(find(&fs, "eth0 is a virtio-net NIC of this guest: 1 of 4 queue pairs, "));
	f = find(&fs, "eth0 (virtio_net) receives on 1 of the 4 combined channels it could "
		      "have; 2 CPUs could serve them");
	assert_non_null(f);
	assert_int_equal(f->fix.n, 1);
	assert_string_equal(f->fix.v[0], "ethtool -L eth0 combined 2");
	assert_string_equal(f->rollback.v[f->rollback.n - 1], "ethtool -L eth0 combined 1");
	/* more queues can be had: no RPS stand-in */
	assert_null(find(&fs, "one receive queue"));
	lw_findings_free(&fs);
	lw_node_free(&n);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

static void test_findings_virtio_target(void **state)
{
	struct lw_findings fs = {0};
	const struct lw_finding *f;
	struct lw_node n;
	char dir[64], tree[96];

	/* a target on CPU 1: RPS must not send the work there; one CPU is left,
	 * too few to spread over */
	scratch(dir, sizeof(dir), "nic-virtio",
		"mkdir -p proc/4242 && printf 'Name:\\tsrv\\nCpus_allowed_list:\\t1\\n' "
		">proc/4242/status");
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	assert_int_equal(lw_node_read(&n, tree, 4242), 0);
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	f = find(&fs, "one receive queue");
	assert_null(f);
	lw_findings_free(&fs);
	lw_node_free(&n);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

static void test_findings_veth(void **state)
{
	struct lw_findings fs = {0};
	struct lw_node n;

	assert_int_equal(lw_node_read(&n, LW_FIXTURES "/nic-veth", 0), 0);
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	assert_int_equal(fs.n, 0);
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* check's sample: rx-0 takes 90% of eth2's receive interrupts */
static void test_findings_measured_skew(void **state)
{
	struct lw_findings fs = {0};
	const struct lw_finding *f;
	struct lw_node n;
	char dir[64], tree[96];

	scratch(dir, sizeof(dir), "nic-numa", NULL);
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	assert_int_equal(lw_node_read(&n, tree, 0), 0);
	assert_int_equal(sh("cd %s && sed -i -e 's/98123456/98132456/' -e 's/10234567/10234900/' "
			    "-e 's/ 9876543/ 9876876/' -e 's/10123456/10123789/' proc/interrupts",
			    tree),
			 0);
	assert_int_equal(lw_node_sample_irqs(&n, 0), 0);
	n.sample_ms = 1000;
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	f = find(&fs, "over the 1000 ms sample eth2's rx-0 took 90% of its receive interrupts "
		      "(9000 of 9999/s) on CPU 2; 3 other queues shared the rest");
	assert_non_null(f);
	assert_int_equal(f->severity, LW_SEV_WARN);
	assert_non_null(strstr(f->fix.v[0], "the RSS table is uneven"));
	lw_findings_free(&fs);
	lw_node_free(&n);
	/* an even table: a few heavy flows */
	assert_int_equal(sh("cd %s && sed -i -e 's/98132456/98141456/' proc/interrupts && "
			    "sed -i 's/^table.*/table 0 1 2 3 0 1 2 3/' ethtool/eth2/rss",
			    tree),
			 0);
	assert_int_equal(lw_node_read(&n, tree, 0), 0);
	assert_int_equal(sh("cd %s && sed -i -e 's/98141456/98150456/' -e 's/10234900/10235233/' "
			    "-e 's/ 9876876/ 9877209/' -e 's/10123789/10124122/' proc/interrupts",
			    tree),
			 0);
	assert_int_equal(lw_node_sample_irqs(&n, 0), 0);
	n.sample_ms = 1000;
	assert_int_equal(lw_advise_nic(&n, &fs), 0);
	f = find(&fs, "eth2's rx-0 took 90%");
	assert_non_null(f);
	assert_non_null(strstr(f->fix.v[0], "a few heavy flows"));
	lw_findings_free(&fs);
	lw_node_free(&n);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

/* ---- fix scripts ---- */

static void cycle(const char *fixture, int pid, const char *after_apply)
{
	struct lw_findings fs = {0};
	struct lw_node n;
	char dir[64];

	scratch(dir, sizeof(dir), fixture, NULL);
	assert_int_equal(sh("cp -a %s/tree %s/orig", dir, dir), 0);
	{
		char tree[96], plan[96];

		snprintf(tree, sizeof(tree), "%s/tree", dir);
		snprintf(plan, sizeof(plan), "%s/plan.sh", dir);
		assert_int_equal(lw_node_read(&n, tree, pid), 0);
		assert_int_equal(lw_advise_node(&n, &fs), 0);
		assert_int_equal(lw_fixscript_write(&fs, tree, plan), 0);
	}
	if (!sh("command -v shellcheck >/dev/null 2>&1"))
		assert_int_equal(
			sh("cd %s && shellcheck -s sh plan.sh plan.sh.undo plan.sh.verify", dir),
			0);
	assert_int_equal(sh("cd %s && LATWHY_ROOT=%s/tree LATWHY_SETTLE=0 sh plan.sh >apply.log "
			    "2>&1",
			    dir, dir),
			 0);
	/* after_apply checks what apply changed; without it nothing should change */
	assert_int_equal(sh("diff -r --no-dereference %s/orig %s/tree >/dev/null", dir, dir),
			 after_apply ? 1 : 0);
	if (after_apply)
		assert_int_equal(sh("cd %s && %s", dir, after_apply), 0);
	assert_int_equal(
		sh("cd %s && LATWHY_ROOT=%s/tree sh plan.sh.undo >undo.log 2>&1", dir, dir), 0);
	/* --no-dereference: the trees hold sysfs-like symlink loops */
	assert_int_equal(sh("diff -r --no-dereference %s/orig %s/tree", dir, dir), 0);
	lw_findings_free(&fs);
	lw_node_free(&n);
	assert_int_equal(sh("rm -rf %s", dir), 0);
}

static void test_fix_numa(void **state)
{
	cycle("nic-numa", 4242,
	      "grep -q 'not run under LATWHY_ROOT: ethtool -L eth2 combined 8' apply.log && "
	      "grep -q 'not run under LATWHY_ROOT: ethtool -X eth2 equal 8' apply.log && "
	      "grep -qF 'RUN+=\"/usr/sbin/ethtool -L eth2 combined 8\"' "
	      "tree/etc/udev/rules.d/70-latwhy-eth2-channels.rules && "
	      "grep -qF 'RUN+=\"/usr/sbin/ethtool -C eth2 adaptive-rx on\"' "
	      "tree/etc/udev/rules.d/72-latwhy-eth2-coalesce.rules && "
	      "grep -qx 10-15 tree/proc/irq/91/smp_affinity_list");
}

static void test_fix_virtio(void **state)
{
	cycle("nic-virtio", 0,
	      "grep -qx 3 tree/sys/class/net/eth0/queues/rx-0/rps_cpus && "
	      "grep -qF 'w /sys/class/net/eth0/queues/rx-0/rps_cpus - - - - 3' "
	      "tree/etc/tmpfiles.d/latwhy-rps-eth0.conf");
}

static void test_fix_veth(void **state)
{
	cycle("nic-veth", 0, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_numa),
		cmocka_unit_test(test_read_virtio),
		cmocka_unit_test(test_read_veth),
		cmocka_unit_test(test_read_unrecorded),
		cmocka_unit_test(test_stub_ethtool),
		cmocka_unit_test(test_findings_numa),
		cmocka_unit_test(test_findings_rss_only),
		cmocka_unit_test(test_findings_measured_skew),
		cmocka_unit_test(test_findings_virtio),
		cmocka_unit_test(test_findings_virtio_mq),
		cmocka_unit_test(test_findings_virtio_target),
		cmocka_unit_test(test_findings_veth),
		cmocka_unit_test(test_trace_nic_queue),
		cmocka_unit_test(test_trace_not_nic),
		cmocka_unit_test(test_fix_numa),
		cmocka_unit_test(test_fix_virtio),
		cmocka_unit_test(test_fix_veth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
