/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* progstats.h - the loaded programs' kernel counters (bpf_prog_info). */
#ifndef LW_PROGSTATS_H
#define LW_PROGSTATS_H

#include <linux/types.h>

struct lw_tracer;

struct lw_prog_stat {
	char name[32];
	__u64 run_ns;  /* run_time_ns: counted while kernel.bpf_stats_enabled is 1 */
	__u64 run_cnt; /* run_cnt: the same */
};

/* Every program t loaded, up to max of them, into out: how many; -errno
 * when one cannot be read. From the tracing thread. */
int lw_tracer_prog_stats(const struct lw_tracer *t, struct lw_prog_stat *out, int max);

#endif /* LW_PROGSTATS_H */
