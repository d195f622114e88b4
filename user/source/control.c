// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * control.c - adaptive control of the loaded BPF programs while they trace.
 *
 * What it controls, once per interval, and nothing else:
 * - the slow threshold (.data slow_thresh_ns): the running p99, once enough
 *   requests were seen, unless --slow fixed it; held while serve escalates
 *   (and while it checks a rise);
 * - which kernel threads count as THP work (khugepaged, kcompactd pids);
 * - which TCP sockets carry requests (the target's listening ports), whether
 *   a request may be answered by another thread (its thread count), and
 *   whether the target still exists;
 * - the programs attached after the start: sock_send_length when the target
 *   reads a non-TCP socket, netif_receive_skb detached while no local peer
 *   sends to the target and attached again when one does.
 * It reads no evidence and produces no records: snapshot.c does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "source/tracer_int.h"
#include "source/probe.h"

/* Running p99 needs a few requests before it means anything. */
#define LW_P99_MIN_REQUESTS 20

/*
 * Not while serve is escalated: an incident's requests are slow against
 * what was normal before it, and the p99 follows them up within a second
 * (3.2 to 6.6 ms in one step under a hog on the lab server), which left
 * full tracing few slow requests to find causes for and the cheap tier's
 * slow share back at its baseline while the hog still ran. Nor while a
 * check lets full tracing go: followed up there, the check's window had
 * fewer slow requests than a rise needs and let a hog's rise fall.
 */
__u64 lw_control_threshold(struct lw_tracer *t, __u64 count, __u64 p99)
{
	if (!t->o->slow_ns && count >= LW_P99_MIN_REQUESTS && !lw_duty_escalated(t))
		t->skel->data->slow_thresh_ns = p99;
	return t->skel->data->slow_thresh_ns;
}

/* khugepaged is stopped and started again when THP is switched off and on:
 * its pid is looked up at start and again every LW_THP_REFRESH ticks. */
#define LW_THP_REFRESH 10

static void control_thp_pids(struct lw_tracer *t)
{
	__u32 pids[LW_THP_PIDS] = {}, max = 0;

	lw_probe_thp_kthreads(pids, LW_THP_PIDS);
	memcpy(t->skel->bss->thp_pids, pids, sizeof(pids));
	for (int i = 0; i < LW_THP_PIDS; i++)
		max = pids[i] > max ? pids[i] : max;
	t->skel->bss->thp_pid_max = max;
}

#define LW_STAT_READS 256

/*
 * Which TCP sockets carry requests, and whether one thread's request may be
 * answered by another: the listening ports of the target's network
 * namespace (every LW_THP_REFRESH ticks: a table walk, not per second on a
 * host with many connections) and its thread count (every tick).
 */
static void control_conns(struct lw_tracer *t, bool ports)
{
	struct latwhy_bpf *s = t->skel;
	bool multi = false, known = false;
	int n;

	/* the targets' processes and ids again: whether they are still there
	 * (the poll loop stops when every -p one is gone) */
	lw_targets_refresh(t, true);
	/* a target's new process (a restart) listens on ports of its own:
	 * read them now, or its requests wait for the next walk */
	if (ports || t->pids_changed) {
		__u64 bits[sizeof(s->bss->listen_ports) / sizeof(__u64)] = {};
		int listeners = 0;

		/* processes share a namespace's table: each is read once */
		n = lw_probe_listen_ports_pids(t->pids, t->npids, bits);
		listeners = n > 0 ? n : 0;
		/* no listener seen: every TCP read may be a request, as before */
		if (listeners > 0)
			memcpy(s->bss->listen_ports, bits, sizeof(bits));
		s->bss->listen_known = listeners > 0;
	}
	/* a read of /proc/PID/stat a process a tick: the thread count */
	for (int i = 0; i < t->npids && i < LW_STAT_READS && !multi; i++) {
		char state;

		if (!lw_probe_stat(t->pids[i], NULL, 0, &state, &n) && n > 0) {
			known = true;
			multi = n > 1;
		}
	}
	if (known)
		s->bss->handoff_watch = multi;
}

void lw_control_start(struct lw_tracer *t)
{
	control_thp_pids(t);
	control_conns(t, true);
}

/* A program attached after the start; NULL, and said on stderr with what is
 * lost, when it cannot be. */
static struct bpf_link *attach_late(struct bpf_program *p, const char *tp, const char *lost)
{
	struct bpf_link *l = bpf_program__attach(p);

	if (!l)
		fprintf(stderr, "latwhy: cannot attach %s (%s): %s\n", tp, strerror(errno), lost);
	return l;
}

/* The target read a non-TCP socket: from now on its requests end at
 * sock_send_length too. Tried once; without it such reads stay untraced. */
static void control_sock_send(struct lw_tracer *t)
{
	struct latwhy_bpf *s = t->skel;

	if (s->bss->sock_send_on || !s->bss->non_tcp_seen || t->ctl.sock_send_tried ||
	    !bpf_program__autoload(s->progs.lw_sock_send))
		return;
	t->ctl.sock_send_tried = true;
	s->links.lw_sock_send = attach_late(s->progs.lw_sock_send, "sock_send_length",
					    "requests on non-TCP sockets are not traced");
	if (s->links.lw_sock_send)
		s->bss->sock_send_on = true;
}

/*
 * lw_netif_recv runs for every packet the host receives, a NIC's included,
 * but times only segments lw_netif_rx stamped: those a local peer (loopback,
 * veth, tun) sent to a listening port of the target's. A target without such
 * peers for LW_BACKLOG_IDLE_NS has it detached, and attached again at the
 * first tick after a stamp: the waits of that tick's segments are not timed.
 */
#define LW_BACKLOG_IDLE_NS (10ULL * 1000000000ULL)

static void control_backlog(struct lw_tracer *t, __u64 now)
{
	struct latwhy_bpf *s = t->skel;

	if (!s->rodata->backlog_known || t->ctl.backlog_lost)
		return;
	if (s->bss->backlog_seen) {
		s->bss->backlog_seen = 0;
		t->ctl.backlog_seen_ns = now;
		if (s->links.lw_netif_recv)
			return;
		s->links.lw_netif_recv =
			attach_late(s->progs.lw_netif_recv, "netif_receive_skb again",
				    "receive backlog waits are not timed from now on");
		if (!s->links.lw_netif_recv) {
			t->ctl.backlog_lost = true;
			t->flags |= LW_META_NO_BACKLOG; /* the summary says so */
		}
		return;
	}
	if (s->links.lw_netif_recv && now - t->ctl.backlog_seen_ns >= LW_BACKLOG_IDLE_NS) {
		bpf_link__destroy(s->links.lw_netif_recv);
		s->links.lw_netif_recv = NULL;
	}
}

void lw_control_tick(struct lw_tracer *t, __u64 now)
{
	if (++t->ctl.ticks % LW_THP_REFRESH == 0)
		control_thp_pids(t);
	control_conns(t, t->ctl.ticks % LW_THP_REFRESH == 0);
	if (!lw_duty_attached(t))
		return; /* no link while the duty cycle has them off */
	control_sock_send(t);
	control_backlog(t, now);
}
