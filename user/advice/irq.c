// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * irq.c - interrupts and softirqs on the target's CPUs: movable and
 * kernel-managed IRQs, NICs on the wrong NUMA node (+30% memory latency in
 * the field case) and RPS sending receive processing there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/adv.h"
#include "lib/fmt.h"

/* lw_softirq_name(LW_SOFTIRQ_BACKLOG): a target's data waiting in a CPU's
 * receive backlog for its NET_RX, counted in waits, not runs */
#define BACKLOG_VEC "NET_RX_BACKLOG"

/* Where a movable IRQ should go: online CPUs, not avoided, not isolated, and on
 * the NIC's NUMA node when it belongs to one. Empty when there is no such CPU. */
static struct lw_cpuset irq_dest(const struct lw_node *n, const struct lw_irq *q,
				 const struct lw_cpuset *avoid)
{
	struct lw_cpuset d;

	lw_cpuset_andnot(&d, &n->online, avoid);
	lw_cpuset_andnot(&d, &d, &n->isolated);
	if (q->nic >= 0) {
		const struct lw_numa_node *nn = lw_node_numa(n, n->nics[q->nic].numa_node);
		struct lw_cpuset local;

		if (nn) {
			lw_cpuset_and(&local, &d, &nn->cpus);
			if (!lw_cpuset_empty(&local))
				d = local;
		}
	}
	return d;
}

struct irq_move {
	const struct lw_irq *q;
	struct lw_cpuset dest;
};

#define MAX_MOVES 64

/* Each move's fix, rollback and verify; returns the moves as one shell line
 * for a unit's ExecStart (the caller frees it), NULL on error. */
static char *irq_moves_fix(struct adv *a, const struct irq_move *mv, size_t nr)
{
	const struct lw_node *n = a->n;
	struct adv_text t;
	char b[256], c[256];

	adv_text_open(a, &t);
	for (size_t i = 0; i < nr; i++) {
		adv_cpus_str(&mv[i].dest, b, sizeof(b));
		adv_add(a, &a->f->fix, "echo %s > /proc/irq/%u/smp_affinity_list", b, mv[i].q->irq);
		adv_add(a, &a->f->rollback, "echo %s > /proc/irq/%u/smp_affinity_list",
			mv[i].q->affinity[0] ? mv[i].q->affinity
					     : adv_cpus_str(&n->online, c, sizeof(c)),
			mv[i].q->irq);
		adv_add(a, &a->f->verify, "cat /proc/irq/%u/effective_affinity_list  # within %s",
			mv[i].q->irq, b);
		adv_text_add(&t, "%secho %s > /proc/irq/%u/smp_affinity_list", i ? "; " : "", b,
			     mv[i].q->irq);
	}
	return adv_text_take(a, &t);
}

/* irqbalance would move the IRQs back: persist by banning the CPUs in avoid. */
static void persist_irqbalance_ban(struct adv *a, const struct lw_cpuset *avoid)
{
	const struct lw_irqbalance *ib = &a->n->irqbalance;
	struct lw_cpuset ban;
	char c[256];

	lw_cpuset_or(&ban, &ib->banned_set, avoid);
	adv_cpus_str(&ban, c, sizeof(c));
	if (ib->banned[0] && !strstr(ib->banned_src, "environment")) {
		/* An EnvironmentFile= value beats Environment= in a drop-in. */
		adv_add(a, &a->f->persist,
			"# %s already bans CPUs %s: set IRQBALANCE_BANNED_CPULIST=%s there, then "
			"systemctl restart irqbalance",
			ib->banned_src, ib->banned, c);
		adv_add(a, &a->f->rollback, "# set IRQBALANCE_BANNED_CPULIST back to %s in %s",
			ib->banned, ib->banned_src);
	} else {
		adv_add(a, &a->f->persist,
			"cat > /etc/systemd/system/irqbalance.service.d/latwhy.conf <<'EOF'\n"
			"[Service]\nEnvironment=IRQBALANCE_BANNED_CPULIST=%s\nEOF",
			c);
		adv_add(a, &a->f->persist, "systemctl daemon-reload");
		adv_add(a, &a->f->persist, "systemctl restart irqbalance");
		adv_add(a, &a->f->rollback,
			"rm -f /etc/systemd/system/irqbalance.service.d/latwhy.conf");
		adv_add(a, &a->f->rollback, "systemctl daemon-reload");
		adv_add(a, &a->f->rollback, "systemctl restart irqbalance");
	}
	adv_put(a, &a->f->cost,
		"irqbalance keeps interrupts off CPUs %s: the other CPUs take the whole "
		"interrupt load and must really be free of other work",
		c);
}

/* Persist the moves with a oneshot unit running script at boot, after irqbalance. */
static void persist_irq_unit(struct adv *a, const char *tag, const char *script,
			     bool stop_irqbalance)
{
	const struct lw_irqbalance *ib = &a->n->irqbalance;

	if (ib->running && stop_irqbalance) {
		adv_add(a, &a->f->persist, "systemctl disable --now irqbalance");
		adv_add(a, &a->f->rollback, "systemctl enable --now irqbalance");
	}
	adv_add(a, &a->f->persist,
		"cat > /etc/systemd/system/latwhy-irq-%s.service <<'EOF'\n"
		"[Unit]\nDescription=latwhy: IRQ affinity (%s)\nAfter=irqbalance.service\n\n"
		"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c '%s'\n\n"
		"[Install]\nWantedBy=multi-user.target\nEOF",
		tag, tag, script);
	adv_add(a, &a->f->persist, "systemctl daemon-reload");
	adv_add(a, &a->f->persist, "systemctl enable latwhy-irq-%s.service", tag);
	adv_add(a, &a->f->persist,
		"# IRQ numbers change with hardware or driver changes: re-run "
		"latwhy check after such changes");
	adv_add(a, &a->f->rollback, "systemctl disable latwhy-irq-%s.service", tag);
	adv_add(a, &a->f->rollback, "rm -f /etc/systemd/system/latwhy-irq-%s.service", tag);
	adv_add(a, &a->f->rollback, "systemctl daemon-reload");
	adv_put(a, &a->f->cost, "%s",
		stop_irqbalance && ib->running
			? "irqbalance stops: interrupts no longer follow load, and the CPUs "
			  "that take them must really be free of other work"
			: "the CPUs that take these interrupts must really be free of other work");
}

/*
 * Move each IRQ in mv to its dest, persisted by banning avoid in a running
 * irqbalance, or (no CPUs to ban, or irqbalance stopped for good) by a unit
 * named after tag.
 */
static void fill_irq_moves(struct adv *a, const struct irq_move *mv, size_t nr, const char *tag,
			   const struct lw_cpuset *avoid, bool stop_irqbalance)
{
	char *script = irq_moves_fix(a, mv, nr);

	if (!script)
		return;
	if (a->n->irqbalance.running && !stop_irqbalance && avoid && !lw_cpuset_empty(avoid))
		persist_irqbalance_ban(a, avoid);
	else
		persist_irq_unit(a, tag, script, stop_irqbalance);
	free(script);
}

/* Move the target off CPUs it shares with IRQs that cannot move. */
static void fill_move_target(struct adv *a, const struct lw_cpuset *avoid)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	const char *unit = adv_target_unit(n);
	struct lw_cpuset to;
	char b[256], o[256];

	lw_cpuset_andnot(&to, &tg->cpus, avoid);
	if (lw_cpuset_empty(&to))
		lw_cpuset_andnot(&to, &n->online, avoid);
	if (lw_cpuset_empty(&to)) {
		adv_add(a, &a->f->fix,
			"# no CPU is free of these IRQs: nothing to move the target to");
		return;
	}
	adv_cpus_str(&to, b, sizeof(b));
	adv_cpus_str(&tg->cpus, o, sizeof(o));
	adv_add(a, &a->f->fix, "taskset -apc %s %d", b, tg->pid);
	if (unit && n->target.cgroup_v == 2) {
		adv_add(a, &a->f->persist, "systemctl set-property %s AllowedCPUs=%s", unit, b);
		adv_add(a, &a->f->rollback, "systemctl set-property %s AllowedCPUs=%s", unit, o);
	} else {
		adv_add(a, &a->f->persist,
			"# persist: CPUAffinity=%s in the target's systemd unit, or a "
			"cpuset for its container",
			b);
	}
	adv_add(a, &a->f->rollback, "taskset -apc %s %d", o, tg->pid);
	adv_add(a, &a->f->verify, "grep Cpus_allowed_list /proc/%d/status  # %s", tg->pid, b);
	if (lw_cpuset_count(&to) < lw_cpuset_count(&tg->cpus))
		adv_put(a, &a->f->cost, "the target runs on %d CPU%s (%s) instead of %d (%s)",
			lw_cpuset_count(&to), lw_cpuset_count(&to) == 1 ? "" : "s", b,
			lw_cpuset_count(&tg->cpus), o);
	else /* a pinned target moves: as many CPUs or more, shared with what runs there */
		adv_put(a, &a->f->cost,
			"the target runs on CPU%s %s instead of CPU%s %s, beside what already runs "
			"there",
			lw_cpuset_count(&to) == 1 ? "" : "s", b,
			lw_cpuset_count(&tg->cpus) == 1 ? "" : "s", o);
}

/* A count from /proc: per second over the sample, or what it covers. */
static void count_rate(const struct lw_node *n, unsigned long long v, bool sampled, char *buf,
		       size_t len)
{
	if (sampled && n->sample_ms)
		snprintf(buf, len, "%.0f/s", v * 1000.0 / n->sample_ms);
	else if (sampled)
		snprintf(buf, len, "%llu in the sample", v);
	else
		snprintf(buf, len, "%llu since boot", v);
}

static void irq_rate(const struct lw_node *n, const struct lw_irq *q, const struct lw_cpuset *on,
		     char *buf, size_t len)
{
	bool sampled;
	unsigned long long v = lw_irq_count_on(n, q, on, &sampled);

	count_rate(n, v, sampled, buf, len);
}

/* Whether q fires on the CPUs in on often enough to matter. */
static bool irq_active_on(const struct lw_node *n, const struct lw_irq *q,
			  const struct lw_cpuset *on)
{
	bool sampled;
	unsigned long long v;

	if (!lw_cpuset_intersects(&q->eff, on))
		return false;
	v = lw_irq_count_on(n, q, on, &sampled);
	return sampled ? v > 0 : v >= LW_IRQ_BOOT_MIN;
}

/* A managed vector serving several CPUs (its mask holds more than one). */
static bool irq_shared_queue(const struct lw_irq *q)
{
	return q->pin && lw_cpuset_count(&q->aff) != 1;
}

/* Rate-graded severity; without a sample there is no rate, only a warning. */
static enum lw_severity irq_severity(const struct lw_node *n, unsigned long long count)
{
	double rate;

	if (!n->sample_ms)
		return LW_SEV_WARN;
	rate = count * 1000.0 / n->sample_ms;
	if (rate >= LW_IRQ_RATE_CRIT)
		return LW_SEV_CRIT;
	return rate >= LW_IRQ_RATE_WARN ? LW_SEV_WARN : LW_SEV_INFO;
}

/*
 * The CPU to leave to interrupts when the target may run everywhere: one that
 * already takes a kernel-managed IRQ of the target's (that IRQ cannot move, so
 * the managed-IRQ finding moves the target off it too), else the first online.
 */
static int housekeeping_cpu(const struct lw_node *n)
{
	for (size_t i = 0; i < n->nr_irqs; i++) {
		const struct lw_irq *q = &n->irqs[i];
		struct lw_cpuset on;

		if (!irq_shared_queue(q) || !irq_active_on(n, q, &n->target.cpus))
			continue;
		lw_cpuset_and(&on, &q->eff, &n->target.cpus);
		return lw_cpuset_first(&on);
	}
	return lw_cpuset_first(&n->online);
}

static bool irq_on_wrong_node(const struct lw_node *n, const struct lw_irq *q)
{
	const struct lw_numa_node *nn;

	if (q->nic < 0 || n->nr_numa < 2)
		return false;
	nn = lw_node_numa(n, n->nics[q->nic].numa_node);
	if (!nn || lw_cpuset_empty(&q->eff))
		return false;
	for (int c = 0; c < n->nr_cpus; c++)
		if (lw_cpuset_test(&q->eff, c) && !lw_cpuset_test(&nn->cpus, c))
			return true;
	return false;
}

static void advise_nic_numa(struct adv *a, size_t i)
{
	const struct lw_node *n = a->n;
	const struct lw_nic *nic = &n->nics[i];
	const struct lw_numa_node *nn = lw_node_numa(n, nic->numa_node);
	struct lw_cpuset avoid = {0};
	struct irq_move mv[MAX_MOVES];
	size_t nr = 0, pinned = 0;
	struct adv_text t;
	char b[256];

	if (n->has_target)
		avoid = n->target.cpus;
	adv_text_open(a, &t);
	adv_text_add(&t, "%s is on NUMA node %d (CPUs %s); IRQs on other nodes:", nic->name,
		     nic->numa_node, nn ? adv_cpus_str(&nn->cpus, b, sizeof(b)) : "?");
	for (size_t k = 0; k < nic->nr_irqs; k++) {
		const struct lw_irq *q = lw_node_irq(n, nic->irqs[k]);

		if (!q || !irq_on_wrong_node(n, q))
			continue;
		adv_text_add(&t, "%s %u (%s) on CPU %s%s", nr + pinned ? ";" : "", q->irq, q->name,
			     adv_cpus_str(&q->eff, b, sizeof(b)), q->pin ? ", kernel-managed" : "");
		if (q->pin) {
			pinned++;
		} else if (nr < MAX_MOVES) {
			mv[nr].q = q;
			mv[nr].dest = irq_dest(n, q, &avoid);
			if (!lw_cpuset_empty(&mv[nr].dest))
				nr++;
		}
	}
	if (!nr && !pinned) {
		adv_text_drop(&t);
		return;
	}
	if (!adv_begin(a, LW_CAUSE_IRQ, LW_SEV_WARN)) {
		adv_text_drop(&t);
		return;
	}
	adv_text_close(a, &t, &a->f->seen);
	adv_put(a, &a->f->why,
		"each packet's handler reaches the NIC's buffers across the socket interconnect "
		"(+30%% "
		"memory latency in the field case) and wakes the consumer on the wrong node");
	if (nr)
		fill_irq_moves(a, mv, nr, nic->name, NULL, true);
	if (pinned)
		adv_add(a, &a->f->fix,
			"# %zu of these IRQs are kernel-managed: their affinity cannot be "
			"changed; set the queue count with ethtool -L instead",
			pinned);
	adv_add(a, &a->f->verify, "cat /sys/class/net/%s/device/numa_node", nic->name);
}

/*
 * Receive processing that RPS sends to the target's CPUs (on): each queue
 * whose rps_cpus holds one of them gets its mask without them, or, when that
 * would leave none, the online CPUs outside on. An empty mask would not do:
 * without RPS a loopback packet is processed on its sender's CPU, which may be
 * the target's. The verify step is a trace (trace) or a check of pid. Returns
 * whether any queue sends there.
 */
static bool fill_rps(struct adv *a, const struct lw_cpuset *on, int pid, bool trace)
{
	const struct lw_node *n = a->n;
	struct lw_cpuset rest;
	struct adv_text t;
	char b[96], c[96];
	bool any = false;
	int moved = 0;

	lw_cpuset_andnot(&rest, &n->online, on);
	adv_text_open(a, &t);
	for (size_t i = 0; i < n->nr_rps; i++) {
		const struct lw_rps *r = &n->rps[i];
		struct lw_cpuset dest;

		if (!lw_cpuset_intersects(&r->cpus, on))
			continue;
		any = true;
		lw_cpuset_andnot(&dest, &r->cpus, on);
		if (lw_cpuset_empty(&dest))
			dest = rest;
		if (lw_cpuset_empty(&dest)) {
			adv_add(a, &a->f->fix,
				"# RPS sends %s %s's receive processing to CPUs %s, and the "
				"target runs on every CPU: no other CPU to send it to",
				r->dev, r->queue, adv_cpus_str(&r->cpus, b, sizeof(b)));
			continue;
		}
		lw_cpuset_format_mask(&dest, b, sizeof(b));
		/* no "# CPUs" comment after it: the fix script takes plain writes only */
		adv_add(a, &a->f->fix, "echo %s > /sys/class/net/%s/queues/%s/rps_cpus", b, r->dev,
			r->queue);
		adv_add(a, &a->f->rollback, "echo %s > /sys/class/net/%s/queues/%s/rps_cpus",
			r->mask, r->dev, r->queue);
		adv_text_add(&t, "w /sys/class/net/%s/queues/%s/rps_cpus - - - - %s\n", r->dev,
			     r->queue, b);
		moved++;
	}
	if (adv_text_take(a, &t) && moved) {
		adv_add(a, &a->f->persist, "cat > /etc/tmpfiles.d/latwhy-rps.conf <<'EOF'\n%sEOF",
			t.s);
		adv_add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/latwhy-rps.conf");
		adv_add(a, &a->f->verify, "grep . /sys/class/net/*/queues/rx-*/rps_cpus");
		/* not /proc/softirqs' counts: a local send to a CPU RPS picks still
		 * raises NET_RX on the sender, to send the IPI */
		if (trace)
			adv_add(a, &a->f->verify,
				"latwhy -p %d -d 30s  # NET_RX time on CPUs %s falls", pid,
				adv_cpus_str(on, c, sizeof(c)));
		else
			adv_add(a, &a->f->verify, "latwhy check -p %d  # this finding is gone",
				pid);
		adv_put(a, &a->f->cost,
			"%s%sRPS's CPUs take that receive processing instead, an IPI per batch",
			a->f->cost ? a->f->cost : "", a->f->cost ? "; " : "");
	}
	free(t.s);
	return any;
}

/*
 * RPS masks that send receive processing to the target's CPUs (field notes
 * case 3: RPS/XPS masks). Rated by the NET_RX softirqs those CPUs ran, as
 * IRQs are by their interrupts.
 */
static void advise_rps_target(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	struct lw_cpuset on = tg->cpus, outside;
	enum lw_severity sev;
	unsigned long long rx;
	bool sampled, any = false;
	struct adv_text t;
	char b[96], r[64];

	/* A target on every CPU: the IRQ findings keep one CPU for interrupts
	 * (housekeeping_cpu()), and RPS may send there too. */
	lw_cpuset_andnot(&outside, &n->online, &tg->cpus);
	if (lw_cpuset_empty(&outside)) {
		struct lw_cpuset hk = {0};

		lw_cpuset_set(&hk, housekeeping_cpu(n));
		lw_cpuset_andnot(&on, &tg->cpus, &hk);
	}
	for (size_t i = 0; i < n->nr_rps; i++)
		any |= lw_cpuset_intersects(&n->rps[i].cpus, &on);
	if (!any)
		return;
	rx = lw_net_rx_on(n, &on, &sampled);
	/* since boot: a warning unless those CPUs never ran one */
	sev = rx || !n->net_rx ? LW_SEV_WARN : LW_SEV_INFO;
	if (!adv_begin(a, LW_CAUSE_IRQ, sampled ? irq_severity(n, rx) : sev))
		return;
	count_rate(n, rx, sampled, r, sizeof(r));
	adv_text_open(a, &t);
	adv_text_add(&t, "RPS sends receive processing to the target's CPUs %s:",
		     adv_cpus_str(&on, b, sizeof(b)));
	for (size_t i = 0, k = 0; i < n->nr_rps; i++)
		if (lw_cpuset_intersects(&n->rps[i].cpus, &on))
			adv_text_add(&t, "%s %s %s (rps_cpus %s)", k++ ? ";" : "", n->rps[i].dev,
				     n->rps[i].queue, n->rps[i].mask);
	adv_text_add(&t, "; NET_RX softirqs on them: %s", r);
	adv_text_close(a, &t, &a->f->seen);
	adv_put(a, &a->f->why,
		"each NET_RX run there does the protocol processing of other CPUs' packets and "
		"preempts a request thread; on loopback or a sidecar it is the peers' traffic");
	fill_rps(a, &on, tg->pid, false);
}

/* Movable IRQs (outside NIC-NUMA findings) landing on the target's CPUs. */
static void advise_irq_target(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	const struct lw_irqbalance *ib = &n->irqbalance;
	struct irq_move mv[MAX_MOVES];
	unsigned long long count = 0;
	size_t nr = 0, nofree = 0;
	struct adv_text t;
	char b[256], r[64];

	for (size_t i = 0; i < n->nr_irqs && nr < MAX_MOVES; i++) {
		const struct lw_irq *q = &n->irqs[i];
		if (q->pin || irq_on_wrong_node(n, q) || !irq_active_on(n, q, &tg->cpus))
			continue;
		mv[nr].q = q;
		mv[nr].dest = irq_dest(n, q, &tg->cpus);
		if (lw_cpuset_empty(&mv[nr].dest))
			nofree++;
		count += lw_irq_count_on(n, q, &tg->cpus, NULL);
		nr++;
	}
	if (!nr || !adv_begin(a, LW_CAUSE_IRQ, irq_severity(n, count)))
		return;
	adv_text_open(a, &t);
	adv_text_add(
		&t, "IRQs landing on the target's CPUs %s:", adv_cpus_str(&tg->cpus, b, sizeof(b)));
	for (size_t i = 0; i < nr; i++) {
		irq_rate(n, mv[i].q, &tg->cpus, r, sizeof(r));
		adv_text_add(&t, "%s %u (%s) on CPU %s, %s", i ? ";" : "", mv[i].q->irq,
			     mv[i].q->name, adv_cpus_str(&mv[i].q->eff, b, sizeof(b)), r);
	}
	if (ib->running)
		adv_text_add(&t, "; irqbalance is running (pid %d)%s%s", ib->pid,
			     ib->banned[0] ? ", banned CPUs "
					   : " with no banned CPUs: it spreads IRQs over them",
			     ib->banned[0] ? ib->banned : "");
	adv_text_close(a, &t, &a->f->seen);
	adv_put(a, &a->f->why,
		"each interrupt preempts a request thread on its CPU and evicts its "
		"cache; the target's CPUs should take none");
	if (nofree) {
		/* Every online CPU is the target's: reserve the first for interrupts. */
		struct lw_cpuset first = {0}, rest;

		if (lw_cpuset_count(&n->online) < 2) {
			adv_add(a, &a->f->fix,
				"# a single CPU: interrupts cannot be kept off the target");
			return;
		}
		lw_cpuset_set(&first, housekeeping_cpu(n));
		lw_cpuset_andnot(&rest, &tg->cpus, &first);
		adv_add(a, &a->f->fix,
			"# no CPU outside the target's: reserve CPU %d for interrupts",
			lw_cpuset_first(&first));
		fill_move_target(a, &first);
		for (size_t i = 0; i < nr; i++)
			mv[i].dest = first;
		fill_irq_moves(a, mv, nr, "target", &rest, false);
		adv_put(a, &a->f->cost,
			"the target gives up CPU %d (%d of %d CPUs left to it), and CPU %d must "
			"really be free of other work",
			lw_cpuset_first(&first), lw_cpuset_count(&rest), lw_cpuset_count(&tg->cpus),
			lw_cpuset_first(&first));
		return;
	}
	fill_irq_moves(a, mv, nr, "target", &tg->cpus, false);
}

/*
 * IRQs that cannot move (kernel-managed) firing on the target's CPUs. A
 * managed vector serves the I/O submitted from the CPUs of its affinity mask
 * and interrupts its one effective CPU. A queue shared by several CPUs (one
 * virtio-blk queue for the whole VM) lands everyone's completions on that CPU:
 * moving the target off it helps. A per-CPU queue (nvme with a queue per CPU)
 * only fires for I/O submitted on that very CPU: moving the target changes
 * nothing, the neighbours' I/O on its CPUs is what to move.
 */
static void advise_irq_managed(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_target *tg = &n->target;
	struct lw_cpuset avoid = {0};
	unsigned long long count = 0;
	size_t nr = 0, percpu = 0;
	struct adv_text t;
	char b[256], r[64];

	adv_text_open(a, &t);
	for (size_t i = 0; i < n->nr_irqs; i++) {
		const struct lw_irq *q = &n->irqs[i];
		struct lw_cpuset on;

		if (!q->pin || !irq_active_on(n, q, &tg->cpus))
			continue;
		count += lw_irq_count_on(n, q, &tg->cpus, NULL);
		lw_cpuset_and(&on, &q->eff, &tg->cpus);
		irq_rate(n, q, &tg->cpus, r, sizeof(r));
		adv_text_add(&t,
			     "%sIRQ %u (%s) is kernel-managed: its affinity cannot be changed; it "
			     "fires on the target's CPU %s, %s, ",
			     nr ? "; " : "", q->irq, q->name, adv_cpus_str(&on, b, sizeof(b)), r);
		if (irq_shared_queue(q)) {
			lw_cpuset_or(&avoid, &avoid, &on);
			adv_text_add(&t, "queue shared by CPUs %s",
				     q->affinity[0] ? q->affinity : "?");
		} else {
			percpu++;
			adv_text_add(&t, "per-CPU queue");
		}
		nr++;
	}
	if (!nr || !adv_begin(a, LW_CAUSE_IRQ,
			      lw_cpuset_empty(&avoid) ? LW_SEV_INFO : irq_severity(n, count))) {
		adv_text_drop(&t);
		return;
	}
	adv_text_close(a, &t, &a->f->seen);
	if (!lw_cpuset_empty(&avoid)) {
		adv_put(a, &a->f->why,
			"every CPU's I/O completions on a shared queue interrupt its one effective "
			"CPU, and the kernel pins the vector: the target has to move off that CPU "
			"instead");
		fill_move_target(a, &avoid);
	} else {
		adv_put(a, &a->f->why,
			"a per-CPU queue interrupts the CPU that submitted the I/O: the target's "
			"own I/O completes there by design, other tasks' I/O on its CPUs preempts "
			"it");
	}
	if (percpu)
		adv_add(a, &a->f->fix,
			"# per-CPU queue vectors follow the submitting CPU: moving the "
			"target does not help; keep other I/O-heavy tasks off CPUs %s",
			adv_cpus_str(&tg->cpus, b, sizeof(b)));
}

/* NICs' IRQs on the wrong NUMA node; with a target, what interrupts its CPUs. */
static void irq_check(struct adv *a)
{
	const struct lw_node *n = a->n;

	for (size_t i = 0; i < n->nr_nics; i++)
		advise_nic_numa(a, i);
	if (!n->has_target)
		return;
	advise_irq_target(a);
	advise_irq_managed(a);
	advise_rps_target(a);
}

/* Why interrupts cost more than their handlers: the entry and exit, which
 * latwhy measured at start and counted in irq, or in a VM without that
 * measurement, time no tracer in the guest sees. */
static void irq_trace_why(struct adv *a, const struct lw_trace_facts *t)
{
	char c[32];

	if (t->irq_entry_cost_ns)
		adv_put(a, &a->f->why,
			"each interrupt preempts a request thread and evicts its cache, and its "
			"entry and exit cost the thread %s here beyond the handler (measured at "
			"start, counted in irq)%s",
			lw_fmt_ns(c, sizeof(c), t->irq_entry_cost_ns),
			a->n->vm ? "; in a VM most of that is the host delivering it" : "");
	else
		adv_put(a, &a->f->why,
			"each interrupt preempts a request thread and evicts its cache%s",
			a->n->vm ? "; in a VM its delivery also costs the CPU time outside the "
				   "guest, which was not measured (--irq-cost): the irq time is "
				   "a lower bound, the rest shows as run"
				 : "");
}

/*
 * An IRQ too small to matter is not worth a command, a unit and a rollback:
 * moving it changes nothing the requests feel. Its weight is its handlers'
 * time plus, for each of its interrupts, a mean softirq run on its CPU (at
 * most what it raised: a disk's BLOCK, a NIC's NET_RX); it is minor under 1%
 * of all the interrupt and softirq run time on the target's CPUs. Under the
 * demo's injectors the NIC's tx IRQ had 4-6 interrupts (25 us) beside the
 * disk's 121998 (132 ms, and 956 ms of BLOCK) or beside RPS's NET_RX (6.2 s):
 * the fix moved it, with a unit to persist it. The evidence still lists it.
 */
#define IRQ_TRACE_MINOR_PCT 1

static void irq_trace_minor(const struct lw_trace_facts *t, const struct lw_cpuset *on,
			    size_t listed, bool *minor)
{
	unsigned long long total = 0;

	for (size_t i = 0; i < listed; i++)
		total += t->irqs[i].ns;
	for (size_t i = 0; i < t->nr_softirqs; i++)
		if (lw_cpuset_test(on, (int)t->softirqs[i].cpu) &&
		    !lw_softirq_is_wait(t->softirqs[i].vec))
			total += t->softirqs[i].ns;
	for (size_t i = 0; i < listed; i++) {
		const struct lw_fact_irq *fi = &t->irqs[i];
		unsigned long long sns = 0, sruns = 0, w = fi->ns;

		for (size_t k = 0; k < t->nr_softirqs; k++)
			if (t->softirqs[k].cpu == fi->cpu &&
			    !lw_softirq_is_wait(t->softirqs[k].vec)) {
				sns += t->softirqs[k].ns;
				sruns += t->softirqs[k].count;
			}
		if (sruns)
			w += fi->count * (sns / sruns);
		minor[i] = w * 100 < total * IRQ_TRACE_MINOR_PCT;
	}
}

/* "# IRQ 42 (virtio3-tx), IRQ 31 (...): ...": what the fix leaves alone. */
static void irq_trace_minor_note(struct adv *a, const struct lw_trace_facts *t, size_t listed,
				 const bool *minor)
{
	struct adv_text x;
	char *line;
	size_t nr = 0, k = 0;

	for (size_t i = 0; i < listed; i++)
		nr += minor[i];
	if (!nr)
		return;
	adv_text_open(a, &x);
	for (size_t i = 0; i < listed; i++)
		if (minor[i])
			adv_text_add(&x, "%sIRQ %u (%s)", k++ ? ", " : "# ", t->irqs[i].irq,
				     t->irqs[i].name);
	adv_text_add(&x,
		     ": under %d%% of the interrupt and softirq time here, with every softirq %s "
		     "could have raised: left where %s",
		     IRQ_TRACE_MINOR_PCT, nr > 1 ? "they" : "it", nr > 1 ? "they are" : "it is");
	line = adv_text_take(a, &x);
	if (line)
		adv_add(a, &a->f->fix, "%s", line);
	free(line);
}

/* RPS first: where it sends NET_RX to the target, that is most of the
 * softirq time, and the hard IRQs are its trigger elsewhere. */
static void irq_trace_rps(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	bool net_rx = false;
	char b[64];

	for (size_t i = 0; i < t->nr_softirqs; i++)
		net_rx |= (!strcmp(t->softirqs[i].vec, "NET_RX") ||
			   !strcmp(t->softirqs[i].vec, BACKLOG_VEC)) &&
			  lw_cpuset_test(on, (int)t->softirqs[i].cpu);
	if (net_rx && !fill_rps(a, on, t->pid, true))
		adv_add(a, &a->f->fix,
			"# no RPS mask sends receive processing to CPUs %s: its NET_RX follows the "
			"NIC queue interrupts, or local senders on those CPUs",
			adv_cpus_str(on, b, sizeof(b)));
}

/*
 * The moves (into mv, returning how many) for the first listed IRQs of t
 * that are not minor, off the CPUs in avoid; a note for each IRQ that cannot
 * move, and the CPUs of kernel-managed shared queues into pinned, for the
 * target to leave.
 */
static size_t irq_trace_moves(struct adv *a, const struct lw_trace_facts *t, size_t listed,
			      const bool *minor, const struct lw_cpuset *avoid, struct irq_move *mv,
			      struct lw_cpuset *pinned)
{
	size_t nr = 0;

	for (size_t i = 0; i < listed; i++) {
		const struct lw_fact_irq *fi = &t->irqs[i];
		const struct lw_irq *q = lw_node_irq(a->n, fi->irq);
		bool dup = false;

		if (minor[i])
			continue;
		if (!q) {
			adv_add(a, &a->f->fix, "# IRQ %u (%s) is not in /proc/interrupts any more",
				fi->irq, fi->name);
			continue;
		}
		if (q->pin && irq_shared_queue(q)) {
			lw_cpuset_set(pinned, (int)fi->cpu);
			adv_add(a, &a->f->fix,
				"# IRQ %u (%s) is kernel-managed: its affinity cannot be "
				"changed; move the target off CPU %u instead",
				q->irq, q->name, fi->cpu);
			continue;
		}
		if (q->pin) {
			adv_add(a, &a->f->fix,
				"# IRQ %u (%s) is kernel-managed: its affinity cannot be "
				"changed; a per-CPU queue fires for I/O submitted on CPU %u: "
				"keep other I/O-heavy tasks off it",
				q->irq, q->name, fi->cpu);
			continue;
		}
		for (size_t k = 0; k < nr; k++)
			dup |= mv[k].q == q;
		if (dup)
			continue;
		mv[nr].q = q;
		mv[nr].dest = irq_dest(a->n, q, avoid);
		if (lw_cpuset_empty(&mv[nr].dest))
			adv_add(a, &a->f->fix, "# no CPU outside the target's for IRQ %u", q->irq);
		else
			nr++;
	}
	return nr;
}

/* Every listed IRQ (minor ones too), the top softirqs on the CPUs in on, and
 * the interrupts' entry and exit. */
static void irq_trace_evidence(struct adv *a, const struct lw_trace_facts *t, size_t listed,
			       const struct lw_cpuset *on)
{
	struct adv_text x;
	char b[64];

	adv_text_open(a, &x);
	for (size_t i = 0; i < listed; i++) {
		const struct lw_fact_irq *fi = &t->irqs[i];

		const struct lw_irq *q = lw_node_irq(a->n, fi->irq);
		char role[128];

		adv_text_add(&x, "%sIRQ %u (%s) on CPU %u: %s in %llu interrupts", i ? "; " : "",
			     fi->irq, fi->name, fi->cpu, lw_fmt_ns(b, sizeof(b), fi->ns),
			     fi->count);
		if (q && q->nic >= 0)
			adv_text_add(
				&x, ", %s",
				adv_nic_irq_role(&a->n->nics[q->nic], fi->irq, role, sizeof(role)));
	}
	for (size_t i = 0, k = 0; i < t->nr_softirqs && k < 3; i++) {
		const struct lw_fact_softirq *s = &t->softirqs[i];

		if (!lw_cpuset_test(on, (int)s->cpu))
			continue;
		adv_text_add(&x, "%s%s on CPU %u: %s in %llu %s", t->nr_irqs || k ? "; " : "",
			     s->vec, s->cpu, lw_fmt_ns(b, sizeof(b), s->ns), s->count,
			     lw_softirq_unit(s->vec));
		k++;
	}
	if (t->irq_entry_cost_ns && t->irq_entry_ns)
		adv_text_add(&x,
			     "; interrupt entry/exit in the slow requests: %s (%llu interrupts)",
			     lw_fmt_ns(b, sizeof(b), t->irq_entry_ns),
			     t->irq_entry_ns / t->irq_entry_cost_ns);
	adv_text_close(a, &x, &a->f->evidence);
}

/* The interrupts and softirqs the trace saw on the CPUs in on, and the moves
 * that keep them off: RPS first, then each IRQ that matters. */
static void irq_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	struct irq_move mv[LW_FACT_IRQS];
	struct lw_cpuset avoid = *on, pinned = {0};
	size_t nr, listed = t->nr_irqs < LW_FACT_IRQS ? t->nr_irqs : LW_FACT_IRQS;
	bool minor[LW_FACT_IRQS];
	char b[64];

	if (n->has_target)
		lw_cpuset_or(&avoid, &avoid, &n->target.cpus);
	irq_trace_rps(a, t, on);
	irq_trace_minor(t, on, listed, minor);
	nr = irq_trace_moves(a, t, listed, minor, &avoid, mv, &pinned);
	irq_trace_evidence(a, t, listed, on);
	adv_put(a, &a->f->seen, "interrupts ran on the target's CPUs %s while it handled requests",
		adv_cpus_str(on, b, sizeof(b)));
	irq_trace_why(a, t);
	irq_trace_minor_note(a, t, listed, minor);
	if (nr)
		fill_irq_moves(a, mv, nr, "trace", &avoid, false);
	if (!lw_cpuset_empty(&pinned) && n->has_target)
		fill_move_target(a, &pinned);
}

/* The NICs whose queue interrupts hurt the requests (listed, not minor):
 * their own findings (queues, RSS, coalescing, a guest's limits) follow
 * the irq finding, read as latwhy check reads them. */
static void irq_trace_nics(struct adv *a, const struct lw_trace_facts *t,
			   const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	size_t listed = t->nr_irqs < LW_FACT_IRQS ? t->nr_irqs : LW_FACT_IRQS;
	bool minor[LW_FACT_IRQS];

	irq_trace_minor(t, on, listed, minor);
	for (size_t i = 0; i < n->nr_nics && !a->err; i++) {
		bool hurt = false;

		for (size_t k = 0; k < listed && !hurt; k++) {
			const struct lw_irq *q = lw_node_irq(n, t->irqs[k].irq);

			hurt = !minor[k] && q && q->nic == (int)i;
		}
		if (hurt)
			adv_nic_findings(a, &n->nics[i]);
	}
}

const struct lw_advisor lw_advisor_irq = {
	.cause = LW_CAUSE_IRQ,
	.check = irq_check,
	.trace = irq_trace,
	.related = irq_trace_nics,
};
