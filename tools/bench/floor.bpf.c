// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * floor.bpf.c - the bench's floor: empty programs on every tracepoint latwhy
 * attaches to, as raw_tp (what the issue names), as tp_btf (how latwhy's
 * handlers attach) and as classic tracepoint programs (how bpftrace's
 * attach). An empty program's run time under bpf_stats is what any handler
 * pays before doing anything: the stats' own clock reads, the call and the
 * return. A handler's cost is judged as a multiple of it.
 *
 * Built by tools/bench/run.sh with clang -target bpf; loaded and kept
 * attached by tools/bench/floor.c. Needs no vmlinux.h: nothing is read.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * FLOOR(category, tracepoint):
 *   fl_<tp>  tp_btf, the lead, attached before everything else: the first
 *            program on a tracepoint costs more (~8 ns here, whatever its
 *            kind), so the lead takes that place and is reported apart, as
 *            what the only program on a tracepoint pays;
 *   fr_<tp>  raw_tp, the floor the issue names;
 *   fb_<tp>  tp_btf, how latwhy's handlers attach;
 *   ft_<tp>  a classic (perf-event) tracepoint program, the kind bpftrace's
 *            tracepoint: probes are, so each peer also has a floor of its kind.
 * Names do not matter to the bench, which maps programs to tracepoints by
 * their attachment (bpftool perf) and to roles by these prefixes.
 */
#define EMPTY(sec, name)                                                                           \
	SEC(sec) int name(void *ctx)                                                               \
	{                                                                                          \
		return 0;                                                                          \
	}
#define FLOOR(cat, tp)                                                                             \
	EMPTY("tp_btf/" #tp, fl_##tp)                                                              \
	EMPTY("raw_tp/" #tp, fr_##tp)                                                              \
	EMPTY("tp_btf/" #tp, fb_##tp)                                                              \
	EMPTY("tracepoint/" #cat "/" #tp, ft_##tp)

FLOOR(sched, sched_switch)
FLOOR(sched, sched_wakeup)
FLOOR(sched, sched_waking)
FLOOR(power, cpu_idle)
FLOOR(irq, irq_handler_entry)
FLOOR(irq, irq_handler_exit)
FLOOR(irq_vectors, call_function_entry)
FLOOR(irq_vectors, call_function_single_entry)
FLOOR(irq, softirq_entry)
FLOOR(irq, softirq_exit)
FLOOR(raw_syscalls, sys_enter)
FLOOR(raw_syscalls, sys_exit)
FLOOR(sock, sock_recv_length)
FLOOR(sock, sock_send_length)
FLOOR(tcp, tcp_sendmsg_locked)
FLOOR(sock, sk_data_ready)
FLOOR(net, netif_rx)
FLOOR(net, netif_receive_skb)
FLOOR(huge_memory, mm_khugepaged_scan_pmd)
FLOOR(huge_memory, mm_collapse_huge_page)
FLOOR(compaction, mm_compaction_begin)
FLOOR(compaction, mm_compaction_end)
FLOOR(power, cpu_frequency)
