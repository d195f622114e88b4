// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lw_freqinject - feed power:cpu_frequency events to a running latwhy.
 *
 * Machines without a cpufreq driver (VMs) never fire cpu_frequency. To test
 * the clock path for real, this finds latwhy's loaded raw_tp program
 * "lw_cpu_freq" and runs it with BPF_PROG_TEST_RUN on the chosen CPU, with
 * the tracepoint's arguments (state = kHz, cpu_id), exactly as the kernel
 * would call it.
 *
 *   lw_freqinject CPU KHZ [KHZ ...]   one event per KHZ, -i apart (default 0)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define LAB_PROG "lw_freqinject"
#include "lab.h"

static int find_prog(void)
{
	__u32 id = 0, best = 0;
	int fd;

	/* the newest latwhy wins if several run */
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_PROG_TYPE_RAW_TRACEPOINT && !strcmp(info.name, "lw_cpu_freq"))
			best = id;
		close(fd);
	}
	if (!best)
		return -ENOENT;
	return bpf_prog_get_fd_by_id(best);
}

int main(int argc, char **argv)
{
	long interval_ms = 0;
	int opt, fd, cpu;
	char *end;

	while ((opt = getopt(argc, argv, "i:h")) != -1) {
		switch (opt) {
		case 'i':
			interval_ms = strtol(optarg, &end, 10);
			if (*end || interval_ms < 0) {
				fprintf(stderr, "lw_freqinject: invalid interval '%s'\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: lw_freqinject [-i MS] CPU KHZ [KHZ ...]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: lw_freqinject [-i MS] CPU KHZ [KHZ ...]\n");
		return 2;
	}
	cpu = strtol(argv[optind], &end, 10);
	if (*end || cpu < 0 || cpu >= libbpf_num_possible_cpus()) {
		fprintf(stderr, "lw_freqinject: invalid cpu '%s'\n", argv[optind]);
		return 2;
	}
	fd = find_prog();
	if (fd < 0) {
		fprintf(stderr,
			"lw_freqinject: no running latwhy (program lw_cpu_freq not loaded)\n");
		return 1;
	}
	for (int i = optind + 1; i < argc; i++) {
		unsigned long khz = strtoul(argv[i], &end, 10);
		__u64 args[2] = {khz, (__u64)cpu};
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
			    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
		unsigned long long ts;

		if (*end || !khz) {
			fprintf(stderr, "lw_freqinject: invalid kHz '%s'\n", argv[i]);
			return 2;
		}
		if (i > optind + 1 && interval_ms)
			usleep(interval_ms * 1000);
		ts = lab_now_ns();
		if (bpf_prog_test_run_opts(fd, &opts)) {
			fprintf(stderr, "lw_freqinject: BPF_PROG_TEST_RUN: %s\n", strerror(errno));
			return 1;
		}
		printf("injected cpu=%d khz=%lu ts_ns=%llu\n", cpu, khz, ts);
		fflush(stdout);
	}
	close(fd);
	return 0;
}
