/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * delimit.bpf.h - where requests start and end: at syscalls (--request
 * syscall), at the socket layer's tracepoints (socket), at one function's
 * entry and return (uprobe).
 */

#ifndef LW_DELIMIT_BPF_H
#define LW_DELIMIT_BPF_H

#include "compat.bpf.h"
#include "request.bpf.h"

#define S_IFMT	 00170000
#define S_IFSOCK 0140000

/* Set by userspace before load: lw_tcp_send is loaded, and TCP requests
 * end there, not in lw_sock_send. */
const volatile bool tcp_send_ends = false;

/* With lw_tcp_send loaded, lw_sock_send ends only requests on other sockets
 * (UDP, unix), yet it would run for every send on the host: userspace
 * attaches it once a target thread reads such a socket (non_tcp_seen), and
 * sets sock_send_on then. Until then those reads start no request. */
volatile bool sock_send_on = false;
__u32 non_tcp_seen = 0;

static __always_inline bool is_recv_nr(long nr)
{
	return nr == LW_NR_read || nr == LW_NR_readv || nr == LW_NR_recvfrom ||
	       nr == LW_NR_recvmsg || nr == LW_NR_recvmmsg;
}

static __always_inline bool is_send_nr(long nr)
{
	return nr == LW_NR_write || nr == LW_NR_writev || nr == LW_NR_sendto ||
	       nr == LW_NR_sendmsg || nr == LW_NR_sendmmsg || nr == LW_NR_sendfile;
}

static __always_inline bool fd_is_socket(struct task_struct *t, __u32 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds, *f = NULL;
	umode_t mode;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_core_read(&f, sizeof(f), &fds[fd]) || !f)
		return false;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFSOCK;
}

/*
 * A reply on sk by thread tid, with handoff_watch. The socket's open request
 * is the one its last reader started. Read by tid: this reply ends it, in
 * tid's slot (true). Read by another thread: it ends here, its latency
 * measured, its time spent on threads whose transitions cannot be told
 * apart from their other work, so its record carries no split
 * (LW_REQ_HANDOFF) rather than a wrong one; and a request tid itself still
 * holds open on sk was answered by another thread before (false).
 */
static __always_inline bool sock_reply(const struct sock *sk, __u32 tid)
{
	struct sock_state *ss;
	struct lw_request *r;
	__u64 latency;
	__u32 reader;

	if (!sk->sk_bpf_storage)
		return true; /* never read by a target thread while watched */
	ss = sock_find((struct sock *)sk);
	if (!ss)
		return true;
	reader = ss->reader;
	ss->reader = 0;
	if (reader == tid)
		return true;
	if (!reader)
		return false;
	latency = bpf_ktime_get_ns() - ss->start_ts;
	hist_add(latency);
	__sync_fetch_and_add(&handoffs, 1);
	if (latency <= slow_thresh_ns)
		return false;
	causes_count(NULL, latency);
	if (!emit_requests)
		return false;
	r = request_rec(ss->start_ts, latency);
	if (!r)
		return false;
	__builtin_memset(r->ns, 0, sizeof(r->ns));
	r->flags = LW_REQ_HANDOFF;
	r->preempt_pid = 0;
	r->preempt_ns = 0;
	__builtin_memset(r->preempt_comm, 0, sizeof(r->preempt_comm));
	request_submit(r);
	return false;
}

/* A send on conn (sk: its socket, or NULL in syscall mode) by a target
 * thread ends conn's open request, if any. The check before the clock read
 * keeps other sends cheap. */
static __always_inline void send_conn(__u64 conn, const struct sock *sk)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct lw_cpu_state *cs;
	struct thread_state *ts;
	int i;

	if (!is_target_cur(t))
		return;
	cs = cpu_state_get(bpf_get_smp_processor_id());
	if (cs && (cs->target_cur & LW_CUR_TARGET))
		cs->target_cur |= LW_CUR_SENDING; /* see lw_softirq_entry() */
	ts = thread_find(t);
	i = ts ? slot_open(ts, conn) : -1;
	if (handoff_watch && sk && !sock_reply(sk, t->pid)) {
		if (ts && i >= 0)
			slot_drop(ts, i); /* answered by another thread */
		return;
	}
	if (ts && i >= 0)
		request_end(ts, i, bpf_ktime_get_ns());
}

/* --request syscall. The send side is at entry: the request ends when the
 * reply starts. */
SEC("tp_btf/sys_enter")
int BPF_PROG(lw_sys_enter, struct pt_regs *regs, long id)
{
	if (is_send_nr(id))
		send_conn((__u32)lw_sys_arg0(regs), NULL);
	return 0;
}

/* The receive side is at exit, once data arrived. */
SEC("tp_btf/sys_exit")
int BPF_PROG(lw_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *t;
	__u32 fd;

	if (ret <= 0)
		return 0;
	t = bpf_get_current_task_btf();
	if (!is_target_cur(t) || !is_recv_nr(lw_sys_nr(regs)))
		return 0;
	fd = lw_sys_arg0(regs);
	if (!fd_is_socket(t, fd))
		return 0;
	request_start(fd, NULL, bpf_ktime_get_ns());
	return 0;
}

/* A TCP socket on a listening port: accepted from a client. */
static __always_inline bool tcp_inbound(const struct sock *sk)
{
	__u16 port = sk->__sk_common.skc_num;

	return !listen_known || ((listen_ports[port / 64] >> (port % 64)) & 1);
}

/*
 * --request socket: the socket layer's own tracepoints, so that no program
 * sits on raw_syscalls (which puts every syscall of every task on the traced
 * slow path). sock_recv_length/sock_send_length fire at the end of
 * sock_recvmsg()/sock_sendmsg(), since 6.3 ("net: Add sock_recv_length and
 * sock_send_length tracepoints"). The end of a send is late for a request's
 * end (the reply left when the transmit began), so a TCP request ends at
 * tcp_sendmsg_locked, which fires before the data is queued, since 6.13
 * ("trace: tcp: Add tracepoint for tcp_sendmsg_locked()"); sock_send_length
 * is the fallback. user/source/programs.c probes which of them the kernel has.
 */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(lw_sock_recv, struct sock *sk, int ret, int flags)
{
	if (ret <= 0 || !is_target_cur(bpf_get_current_task_btf()))
		return 0;
	if (sk->sk_protocol == IPPROTO_TCP) {
		if (!tcp_inbound(sk))
			return 0; /* a reply from its upstream */
	} else if (!sock_send_on) {
		if (!non_tcp_seen)
			non_tcp_seen = 1; /* nothing would end its request yet */
		return 0;
	}
	request_start((__u64)sk, sk, bpf_ktime_get_ns());
	return 0;
}

/*
 * Data became ready on a socket, since 6.3 ("net/sock: Introduce
 * trace_sk_data_ready()"). Only a socket a target thread has read from has
 * socket storage: every other one returns at the first check.
 */
SEC("tp_btf/sk_data_ready")
int BPF_PROG(lw_sk_ready, const struct sock *sk)
{
	struct sock_state *ss;
	__u64 w;

	/* most sockets have no BPF storage at all: no helper call for them */
	if (!sk->sk_bpf_storage)
		return 0;
	ss = sock_find((struct sock *)sk);
	if (!ss)
		return 0;
	w = backlog_known && sk->sk_protocol == IPPROTO_TCP ? backlog_take(sk) : 0;
	if (!ss->ready_ts) {
		ss->ready_ts = bpf_ktime_get_ns();
		ss->backlog_ns = w;
	}
	return 0;
}

/*
 * For every TCP peer, local ones included. Over loopback the reply reaches
 * the client only when the sending CPU's softirq delivers it, inside the
 * send: ending there instead put that delivery (the request's own reply, and
 * whatever else sat in the backlog) in every request's softirq bucket, and
 * baselines without any interrupt load showed irq shares up to 30%. The
 * backlog wait of a flood is the smaller loss (see README, Accuracy).
 */
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(lw_tcp_send, const struct sock *sk)
{
	send_conn((__u64)sk, sk);
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(lw_sock_send, struct sock *sk, int ret, int flags)
{
	/* a TCP request ended in lw_tcp_send already: no second storage
	 * lookup and slot search for every TCP send of the target (once a
	 * non-TCP socket got this program attached) */
	if (tcp_send_ends && sk->sk_protocol == IPPROTO_TCP)
		return 0;
	send_conn((__u64)sk, sk);
	return 0;
}

/* --request uprobe:BINARY:SYMBOL: a request is one call, entry to return. */
SEC("uprobe")
int BPF_KPROBE(lw_req_entry)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct thread_state *ts;

	if (!is_target_cur(t))
		return 0;
	ts = thread_get(t);
	if (!ts)
		return 0;
	if (ts->depth++ == 0)
		request_start(0, NULL, bpf_ktime_get_ns());
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(lw_req_return)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct thread_state *ts;

	if (!is_target_cur(t))
		return 0;
	ts = thread_find(t);
	if (!ts || !ts->depth)
		return 0;
	if (--ts->depth == 0)
		request_end(ts, slot_open(ts, 0), bpf_ktime_get_ns());
	return 0;
}

#endif /* LW_DELIMIT_BPF_H */
