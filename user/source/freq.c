// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* freq.c - frequency source selection and sampling. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "source/freq.h"
#include "node/sysfs.h"

__u32 lw_freq_effective_khz(__u64 dtsc, __u64 dt_ns, __u64 daperf, __u64 dmperf)
{
	double tsc_khz;

	if (!dt_ns || !dmperf || !dtsc)
		return 0;
	tsc_khz = (double)dtsc / (double)dt_ns * 1e6;
	return (__u32)(tsc_khz * (double)daperf / (double)dmperf + 0.5);
}

static int perf_open_msr(int type, __u64 config, int cpu)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.config = config,
	};

	return syscall(__NR_perf_event_open, &attr, -1, cpu, -1, 0);
}

/* msr PMU event config from sysfs, e.g. "event=0x01" -> 1. */
static int msr_event(const char *root, const char *name, __u64 *config)
{
	char buf[64];
	unsigned long v;

	if (lw_sysfs_read(root, buf, sizeof(buf), "/sys/bus/event_source/devices/msr/events/%s",
			  name))
		return -ENOENT;
	if (sscanf(buf, "event=%lx", &v) != 1)
		return -EINVAL;
	*config = v;
	return 0;
}

static bool aperf_mperf_open(struct lw_freq *f)
{
	__u64 c_aperf, c_mperf, c_tsc;
	long long type;

	if (lw_sysfs_read_ll(f->root, &type, "/sys/bus/event_source/devices/msr/type") ||
	    msr_event(f->root, "aperf", &c_aperf) || msr_event(f->root, "mperf", &c_mperf) ||
	    msr_event(f->root, "tsc", &c_tsc))
		return false;
	for (int c = 0; c < f->nr_cpus; c++) {
		f->fd_aperf[c] = perf_open_msr(type, c_aperf, c);
		f->fd_mperf[c] = perf_open_msr(type, c_mperf, c);
		f->fd_tsc[c] = perf_open_msr(type, c_tsc, c);
		if (f->fd_aperf[c] < 0 || f->fd_mperf[c] < 0 || f->fd_tsc[c] < 0)
			return false;
	}
	return true;
}

int lw_freq_init(struct lw_freq *f, const char *root, int nr_cpus, __u32 ref_override_khz)
{
	char drv[64] = "", status[32] = "";
	long long v;

	memset(f, 0, sizeof(*f));
	for (int c = 0; c < LW_MAX_CPUS; c++)
		f->fd_aperf[c] = f->fd_mperf[c] = f->fd_tsc[c] = -1;
	snprintf(f->root, sizeof(f->root), "%s", root);
	f->nr_cpus = nr_cpus > LW_MAX_CPUS ? LW_MAX_CPUS : nr_cpus;
	for (int c = 0; c < f->nr_cpus; c++) {
		if (!lw_sysfs_read_ll(root, &v,
				      "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", c))
			f->ref_khz[c] = (__u32)v;
		if (ref_override_khz)
			f->ref_khz[c] = ref_override_khz;
		if (!lw_sysfs_read_ll(root, &v,
				      "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c))
			f->cur_khz[c] = (__u32)v;
	}
	if (lw_sysfs_read(root, drv, sizeof(drv),
			  "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver")) {
		f->source = LW_FREQ_NONE; /* no cpufreq: a VM, or a disabled driver */
		return 0;
	}
	lw_sysfs_read(root, status, sizeof(status), "/sys/devices/system/cpu/intel_pstate/status");
	/* intel_pstate in active mode with HWP picks clocks in hardware and
	 * emits no cpu_frequency events. */
	if (!strcmp(drv, "intel_pstate") && !strcmp(status, "active") &&
	    lw_sysfs_exists(root,
			    "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference")) {
		if (aperf_mperf_open(f)) {
			f->source = LW_FREQ_APERF_MPERF;
			lw_freq_sample(f, NULL, NULL); /* prime the counters */
		} else {
			lw_freq_close(f);
			f->source = LW_FREQ_SYSFS_POLL;
		}
		return 0;
	}
	f->source = LW_FREQ_TRACEPOINT;
	return 0;
}

void lw_freq_close(struct lw_freq *f)
{
	for (int c = 0; c < LW_MAX_CPUS; c++) {
		if (f->fd_aperf[c] >= 0)
			close(f->fd_aperf[c]);
		if (f->fd_mperf[c] >= 0)
			close(f->fd_mperf[c]);
		if (f->fd_tsc[c] >= 0)
			close(f->fd_tsc[c]);
		f->fd_aperf[c] = f->fd_mperf[c] = f->fd_tsc[c] = -1;
	}
}

static __u64 read_counter(int fd)
{
	__u64 v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

void lw_freq_sample(struct lw_freq *f, lw_freq_inject_fn inject, void *ctx)
{
	struct timespec ts;
	__u64 now, dt;
	long long v;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	dt = f->last_ns ? now - f->last_ns : 0;
	f->last_ns = now;
	for (int c = 0; c < f->nr_cpus; c++) {
		__u32 khz = 0;

		if (f->source == LW_FREQ_SYSFS_POLL) {
			if (lw_sysfs_read_ll(
				    f->root, &v,
				    "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c))
				continue;
			khz = (__u32)v;
		} else if (f->source == LW_FREQ_APERF_MPERF) {
			__u64 a = read_counter(f->fd_aperf[c]), m = read_counter(f->fd_mperf[c]);
			__u64 t = read_counter(f->fd_tsc[c]);

			khz = lw_freq_effective_khz(t - f->last_tsc[c], dt, a - f->last_aperf[c],
						    m - f->last_mperf[c]);
			f->last_aperf[c] = a;
			f->last_mperf[c] = m;
			f->last_tsc[c] = t;
			if (!dt)
				continue;
		} else {
			return;
		}
		if (khz && khz != f->cur_khz[c]) {
			f->cur_khz[c] = khz;
			if (inject)
				inject(ctx, c, khz);
		}
	}
}
