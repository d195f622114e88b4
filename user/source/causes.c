// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * causes.c - the tracepoints behind each cause (programs.c attaches them):
 *
 *   sched      sched_switch, sched_wakeup, sched_waking: always, since every
 *              request's split (and every other cause) is measured along
 *              its scheduler events
 *   idle       cpu_idle: whether a woken CPU left a C-state or only polled;
 *              without it a wait for an idle CPU is still idle, not split
 *   irq        hard IRQs, softirqs, call-function IPIs, and the receive
 *              backlog (netif_rx, netif_receive_skb: part of softirq time)
 *   thp        khugepaged's scans and collapses, direct compaction
 *   frequency  cpu_frequency (the clock is still sampled where the CPU
 *              has APERF/MPERF)
 *   quota      none of its own: a throttled group's wait is read at the
 *              scheduler's events (bpf/quota.bpf.h), always
 *   memory     a fault's entry (page_fault_user/kernel; its end is a perf
 *              event, attached with them), direct and memcg reclaim, a huge
 *              page's allocation in a fault (thp's from there)
 *
 * What delimits requests (the socket or syscall tracepoints) is no cause:
 * always attached.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/cause.h"
#include "lib/list.h"
#include "source/causes.h"

/* The tracepoints each traced cause is measured by; "" for one measured
 * along the scheduler's events, which are always attached. */
static const char *const cause_tps[LW_CAUSE_MAX] = {
	[LW_CAUSE_FREQ] = "cpu_frequency",
	[LW_CAUSE_IRQ] = "irq_handler_entry,irq_handler_exit,softirq_entry,softirq_exit,"
			 "call_function_entry,call_function_single_entry,netif_rx,"
			 "netif_receive_skb",
	[LW_CAUSE_THP] = "mm_khugepaged_scan_pmd,mm_collapse_huge_page,mm_compaction_begin,"
			 "mm_compaction_end",
	[LW_CAUSE_SCHED] = "",
	[LW_CAUSE_IDLE] = "cpu_idle",
	[LW_CAUSE_QUOTA] = "",
	[LW_CAUSE_MEMORY] =
		"page_fault_user,page_fault_kernel,mm_vmscan_direct_reclaim_begin,"
		"mm_vmscan_direct_reclaim_end,mm_vmscan_memcg_reclaim_begin,"
		"mm_vmscan_memcg_reclaim_end,mm_vmscan_lru_shrink_inactive,mm_page_alloc",
};

static int check_names(const char *list, char *err, size_t errlen)
{
	char buf[256], *save = NULL;

	if (!*list || strlen(list) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		int c = lw_cause_parse(n, strlen(n));

		if (c < LW_CAUSE_FREQ || c > LW_CAUSE_TRACED_LAST) {
			snprintf(err, errlen, "--causes: '%s' is not a cause (%s)", n,
				 LW_CAUSES_ALL);
			return -EINVAL;
		}
	}
	return 0;
bad:
	snprintf(err, errlen, "--causes needs a list of causes (%s)", LW_CAUSES_ALL);
	return -EINVAL;
}

int lw_causes_skip(const char *list, char *skip, size_t len, char *err, size_t errlen)
{
	size_t used = strlen(skip);
	int err_ = check_names(list, err, errlen);

	if (err_)
		return err_;
	for (int c = LW_CAUSE_FREQ; c <= LW_CAUSE_TRACED_LAST; c++) {
		const char *tps = cause_tps[c];
		int n;

		if (!*tps || lw_list_has(list, lw_cause_name(c)))
			continue;
		n = snprintf(skip + used, len - used, "%s%s", used ? "," : "", tps);
		if (n < 0 || (size_t)n >= len - used) {
			skip[used] = '\0';
			snprintf(err, errlen, "--causes: the list of tracepoints to skip is full");
			return -ENOSPC;
		}
		used += n;
	}
	return 0;
}
