/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * watch.bpf.h - the always-attached tier of serve: two programs that time
 * every TCP request of the targets and count the slow ones, and nothing
 * else, so that they can stay attached while the rest is detached.
 *
 * A request is one socket's span from its data's arrival to the next send
 * on it, kept in the socket's storage: one lookup at each end, right for
 * event loops with many connections on one thread and for a request
 * answered by another thread. Both ends are on the target's own CPU: its
 * start is read as the read copies the request's data (lw_watch_ready),
 * its end as the reply's send begins. Nothing runs where the packet
 * arrives: a write there (sk_data_ready, on loopback the client's CPU) was
 * most of this tier's cost on redis once. Nor on sock_recv_length, which
 * fires at every read of every socket on the node: the read's first copy
 * opens the request.
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
	__u32 open;
	/* its reader's target slot + 1 (0: a socket of no target's after
	 * all): a socket stays its process's, so found once per connection */
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
 * A read copies data out (tcp_recvmsg_locked() calls tcp_rcv_space_adjust()
 * after each segment it copies), on the reader's CPU, before the read's
 * own ACK: a request opens at its first. Its start is tcp_mstamp then, the
 * last refresh before the read: the arrival of the request's latest
 * segment (tcp_rcv_established()), on the same clock as bpf_ktime_get_ns()
 * (tcp_clock_us()), in microseconds; so its wait to be read, where a CPU
 * hog's time goes, is in it. A delayed-ACK timer that fired before the
 * read refreshes it too: a wait over its 40 ms is timed from then. Not
 * tcp_mstamp once the read has returned: its ACK refreshes it, and a hog
 * that doubled a lab server's requests (2.6 to 4.7 ms) moved the mean timed
 * from there only 1.17x. A socket gets its storage at its first read by a
 * target on a listening port, so its first request is timed the same way.
 */
SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(lw_watch_ready, struct sock *sk)
{
	struct watch_sock *ws = NULL;
	struct tcp_sock *tp;
	__u64 start;

	/* most sockets have no BPF storage at all: no helper call for them */
	if (sk->sk_bpf_storage)
		ws = bpf_sk_storage_get(&watch_socks, sk, 0, 0);
	if (!ws) {
		int slot;

		if (!tcp_inbound(sk) || !is_target_cur(bpf_get_current_task_btf()))
			return 0;
		ws = bpf_sk_storage_get(&watch_socks, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!ws)
			return 0;
		slot = target_slot_cur();
		ws->slot1 = slot >= 0 && slot < LW_MAX_TARGETS ? slot + 1 : 0;
	}
	if (ws->open)
		return 0; /* more of the same request */
	/* a direct load, not a probe read: a BTF pointer to the tcp_sock */
	tp = bpf_skc_to_tcp_sock(sk);
	start = tp ? tp->tcp_mstamp * 1000 : 0;
	/* after the last reply's send, which refreshed it; else (a request
	 * that came before that reply) from now */
	ws->start_ns = start > ws->end_ns ? start : bpf_ktime_get_ns();
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
