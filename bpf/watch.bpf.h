/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * watch.bpf.h - the always-attached tier of serve: three programs that time
 * every TCP request of the targets and count the slow ones, and nothing
 * else, so that they can stay attached while the rest is detached.
 *
 * A request is one socket's span from its data's arrival to the next send
 * on it, kept in the socket's storage: one lookup at each end, right for
 * event loops with many connections on one thread and for a request
 * answered by another thread. Its start is its data's arrival, tcp_mstamp
 * as the read begins (lw_watch_ready), so that its wait to be read, where a
 * CPU hog's time goes, is in it; else the read itself. Not tcp_mstamp as
 * the read ends: the ACK the read itself sends refreshes it, and a hog that
 * doubled a lab server's requests (2.6 to 4.7 ms, full tracing's sched
 * 2.2 ms) moved the mean timed from it only 1.17x.
 *
 * Every request goes into the histogram (hist_count()); while the full
 * tier is attached too, its own request ends count none (watch_hist), so
 * that the histogram and the request counts never have gaps or doubles
 * across a change of tier. Slow ones are counted per target slot in .bss
 * arrays that userspace reads through the mmap every 250 ms with no
 * syscall (the escalation rule, user/engine/escalate.h): their cause is the
 * full tier's to find.
 */

#ifndef LW_WATCH_BPF_H
#define LW_WATCH_BPF_H

#include "delimit.bpf.h"

_Static_assert(!(LW_MAX_TARGETS & (LW_MAX_TARGETS - 1)), "watch_end() masks by LW_MAX_TARGETS");

struct watch_sock {
	__u64 start_ns; /* open: when its request's data arrived */
	__u64 end_ns;	/* when its last request ended */
	__u64 ready_ns; /* not open: when data first arrived since then (0: not yet) */
	__u32 open;
	/* its reader's target slot + 1, found at its first request (0: not
	 * yet): a socket stays its process's, so once per connection */
	__u32 slot1;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct watch_sock);
} watch_socks SEC(".maps");

/* Per target slot: requests and their latency, slow ones and theirs, and
 * the time of the first slow one since userspace last zeroed it. */
__u64 watch_req[LW_MAX_TARGETS] = {};
__u64 watch_lat_ns[LW_MAX_TARGETS] = {};
__u64 watch_slow[LW_MAX_TARGETS] = {};
__u64 watch_slow_ns[LW_MAX_TARGETS] = {};
__u64 watch_first_ns[LW_MAX_TARGETS] = {};

/*
 * The next request's data is being read: the first of its segments copied
 * out (tcp_recvmsg_locked() calls tcp_rcv_space_adjust() after each), on
 * the reader's CPU, before the read's own ACK. tcp_mstamp is then still
 * the last refresh before the read: the arrival of the request's latest
 * segment (tcp_rcv_established()), on the same clock as bpf_ktime_get_ns()
 * (tcp_clock_us()), in microseconds. A delayed-ACK timer that fired
 * before the read refreshes it too: a wait over its 40 ms reads from then.
 * Not sk_data_ready, which this tier used first: it runs where the packet
 * is received (on loopback, the client's CPU), and its write to the
 * socket's storage there cost the redis twins about 1% of their
 * throughput; with it gone, none measurable.
 */
SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(lw_watch_ready, struct sock *sk)
{
	struct watch_sock *ws;

	/* most sockets have no BPF storage at all: no helper call for them */
	if (!sk->sk_bpf_storage)
		return 0;
	ws = bpf_sk_storage_get(&watch_socks, sk, 0, 0);
	if (ws && !ws->open && !ws->ready_ns)
		ws->ready_ns = BPF_CORE_READ((struct tcp_sock *)sk, tcp_mstamp) * 1000;
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(lw_watch_recv, struct sock *sk, int ret, int flags)
{
	struct watch_sock *ws = NULL;

	if (ret <= 0)
		return 0;
	/* a socket a target has read before: its storage says so, with no
	 * target test (a hash lookup) at each request */
	if (sk->sk_bpf_storage)
		ws = bpf_sk_storage_get(&watch_socks, sk, 0, 0);
	if (!ws) {
		if (sk->sk_protocol != IPPROTO_TCP || !tcp_inbound(sk) ||
		    !is_target_cur(bpf_get_current_task_btf()))
			return 0;
		ws = bpf_sk_storage_get(&watch_socks, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!ws)
			return 0;
	}
	if (ws->open)
		return 0; /* more of the same request */
	if (!ws->slot1) {
		int slot = target_slot_cur();

		ws->slot1 = slot >= 0 && slot < LW_MAX_TARGETS ? slot + 1 : 0;
	}
	/* the data's arrival (set only while no request was open, so after
	 * the last one's end); a socket's first request, or where
	 * tcp_rcv_space_adjust is missing: the read, the one clock read left here */
	ws->start_ns = ws->ready_ns > ws->end_ns ? ws->ready_ns : bpf_ktime_get_ns();
	ws->ready_ns = 0;
	ws->open = 1;
	return 0;
}

static __always_inline void watch_end(struct sock *sk)
{
	struct watch_sock *ws;
	__u64 now, latency;
	__u32 i;

	/* most sockets have no BPF storage at all: no helper call for them */
	if (!sk->sk_bpf_storage)
		return;
	ws = bpf_sk_storage_get(&watch_socks, sk, 0, 0);
	if (!ws || !ws->open)
		return;
	now = bpf_ktime_get_ns();
	ws->open = 0;
	ws->end_ns = now;
	latency = now - ws->start_ns;
	if (!ws->slot1)
		return; /* no target's, after all */
	/* masked, not compared: a compare clang made on a copy left the index
	 * unbounded for the verifier */
	i = (ws->slot1 - 1) & (LW_MAX_TARGETS - 1);
	hist_count_at(latency, (int)i);
	__sync_fetch_and_add(&watch_req[i], 1);
	__sync_fetch_and_add(&watch_lat_ns[i], latency);
	if (latency <= slow_thresh_ns)
		return;
	__sync_fetch_and_add(&watch_slow[i], 1);
	__sync_fetch_and_add(&watch_slow_ns[i], latency);
	if (!watch_first_ns[i])
		watch_first_ns[i] = now;
}

/* A TCP reply starts (6.13+: Debian's 6.12.118 lacks it), before its
 * data is queued: as lw_tcp_send. */
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(lw_watch_tcp_send, struct sock *sk)
{
	watch_end(sk);
	return 0;
}

/* Before 6.13: the end of the send, late by the reply's transmit. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(lw_watch_send, struct sock *sk, int ret, int flags)
{
	if (sk->sk_protocol == IPPROTO_TCP)
		watch_end(sk);
	return 0;
}

#endif /* LW_WATCH_BPF_H */
