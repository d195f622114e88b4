/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * freq.h - where the CPU clock comes from.
 *
 * The cpu_frequency tracepoint when the cpufreq driver emits it; the
 * effective clock from APERF/MPERF (msr PMU) where it does not (intel_pstate
 * with HWP); polling scaling_cur_freq as a last resort; else nothing, and
 * latwhy says "no frequency data". Sampled sources are fed to the same BPF
 * handler as the tracepoint, by BPF_PROG_TEST_RUN, so there is one code path.
 */
#ifndef LW_FREQ_H
#define LW_FREQ_H

#include <linux/types.h>

#include "latwhy.h"

struct lw_freq {
	enum lw_freq_source source;
	int nr_cpus;
	char root[256];
	__u32 ref_khz[LW_MAX_CPUS]; /* 0 = unknown */
	__u32 cur_khz[LW_MAX_CPUS]; /* 0 = unknown */
	/* APERF/MPERF: perf fds per CPU, and the previous reading */
	int fd_aperf[LW_MAX_CPUS], fd_mperf[LW_MAX_CPUS], fd_tsc[LW_MAX_CPUS];
	__u64 last_aperf[LW_MAX_CPUS], last_mperf[LW_MAX_CPUS], last_tsc[LW_MAX_CPUS];
	__u64 last_ns; /* previous sample, CLOCK_MONOTONIC */
};

/* Pick the source and seed clocks from sysfs under root ("/" normally).
 * ref_override_khz, if non-zero, replaces cpuinfo_max_freq. */
int lw_freq_init(struct lw_freq *f, const char *root, int nr_cpus, __u32 ref_override_khz);
void lw_freq_close(struct lw_freq *f);

typedef void (*lw_freq_inject_fn)(void *ctx, int cpu, __u32 khz);

/* For sampled sources: read every CPU's clock and call inject for each that
 * changed. A no-op for the tracepoint and for no source. */
void lw_freq_sample(struct lw_freq *f, lw_freq_inject_fn inject, void *ctx);

/* Effective clock from counter deltas: tsc_khz * aperf / mperf, where
 * tsc_khz = dtsc / dt_ns * 1e6. 0 when not computable. */
__u32 lw_freq_effective_khz(__u64 dtsc, __u64 dt_ns, __u64 daperf, __u64 dmperf);

#endif /* LW_FREQ_H */
