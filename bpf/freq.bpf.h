/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * freq.bpf.h - clock loss: each CPU's integral of (1 - khz/ref_khz) dt,
 * advanced at every clock change (power:cpu_frequency).
 */

#ifndef LW_FREQ_BPF_H
#define LW_FREQ_BPF_H

#include "state.bpf.h"

/* (a * b) / c without overflowing for slices up to minutes. */
static __always_inline __u64 mul_div(__u64 a, __u64 b, __u64 c)
{
	if (!c)
		return 0;
	if (a < (1ULL << 32) && b < (1ULL << 32))
		return a * b / c;
	return (a >> 16) * b / (c >> 16 ? c >> 16 : 1);
}

/* Clock-loss integral of a CPU up to now. dt is split so that neither
 * product can overflow: dt/ref*loss + (dt%ref)*loss/ref. */
static __always_inline __u64 cpu_flost(struct lw_cpu_state *cs, __u64 now)
{
	__u32 ref = cs->ref_khz, f = cs->khz;
	__u64 dt, loss;

	if (!ref || !f || now < cs->freq_ts)
		return cs->flost;
	if (f > ref)
		f = ref;
	loss = ref - f;
	dt = now - cs->freq_ts;
	return cs->flost + dt / ref * loss + (dt % ref) * loss / ref;
}

/*
 * raw_tp rather than tp_btf so that tests and the lab can drive it with
 * BPF_PROG_TEST_RUN: args[0] = new clock in kHz, args[1] = cpu.
 */
SEC("raw_tp/cpu_frequency")
int lw_cpu_freq(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 khz = ctx->args[0], cpu = ctx->args[1];
	struct lw_cpu_state *cs = cpu_state_get(cpu);
	__u64 now = bpf_ktime_get_ns();

	if (!cs)
		return 0;
	cs->flost = cpu_flost(cs, now);
	cs->freq_ts = now;
	cs->khz = khz;
	cs->freq_events++;
	return 0;
}

#endif /* LW_FREQ_BPF_H */
