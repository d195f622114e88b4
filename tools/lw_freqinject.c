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
 *   lw_freqinject [-i MS] [-r N] [-I ID] CPU KHZ [KHZ ...]
 *
 * One event per KHZ, -i MS apart (default 0), the whole list N times (-r,
 * default 1). -I runs the raw_tp program with that id instead of the newest
 * lw_cpu_freq: make bench feeds the same events to each latwhy it runs and
 * to its empty floor program, to set their cost against.
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

/* One event: the tracepoint's arguments (state = kHz, cpu_id), run on cpu. */
static int inject(int fd, int cpu, const char *arg)
{
	__u64 args[2] = {0, (__u64)cpu};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
	unsigned long long ts;
	char *end;

	args[0] = strtoul(arg, &end, 10);
	if (*end || !args[0]) {
		fprintf(stderr, "lw_freqinject: invalid kHz '%s'\n", arg);
		return 2;
	}
	ts = lab_now_ns();
	if (bpf_prog_test_run_opts(fd, &opts)) {
		fprintf(stderr, "lw_freqinject: BPF_PROG_TEST_RUN: %s\n", strerror(errno));
		return 1;
	}
	printf("injected cpu=%d khz=%llu ts_ns=%llu\n", cpu, (unsigned long long)args[0], ts);
	fflush(stdout);
	return 0;
}

#define USAGE "usage: lw_freqinject [-i MS] [-r N] [-I ID] CPU KHZ [KHZ ...]\n"

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
	long interval_ms = 0, repeat = 1, id = 0;
	int opt, fd, cpu, err;
	char *end;

	while ((opt = getopt(argc, argv, "i:r:I:h")) != -1) {
		switch (opt) {
		case 'i':
			interval_ms = strtol(optarg, &end, 10);
			if (*end || interval_ms < 0) {
				fprintf(stderr, "lw_freqinject: invalid interval '%s'\n", optarg);
				return 2;
			}
			break;
		case 'r':
			repeat = strtol(optarg, &end, 10);
			if (*end || repeat < 1) {
				fprintf(stderr, "lw_freqinject: invalid repeat count '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'I':
			id = strtol(optarg, &end, 10);
			if (*end || id < 1) {
				fprintf(stderr, "lw_freqinject: invalid program id '%s'\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, USAGE);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, USAGE);
		return 2;
	}
	cpu = strtol(argv[optind], &end, 10);
	if (*end || cpu < 0 || cpu >= libbpf_num_possible_cpus()) {
		fprintf(stderr, "lw_freqinject: invalid cpu '%s'\n", argv[optind]);
		return 2;
	}
	fd = id ? bpf_prog_get_fd_by_id(id) : find_prog();
	if (fd < 0 && id) {
		fprintf(stderr, "lw_freqinject: no program with id %ld\n", id);
		return 1;
	}
	if (fd < 0) {
		fprintf(stderr,
			"lw_freqinject: no running latwhy (program lw_cpu_freq not loaded)\n");
		return 1;
	}
	for (long n = 0; n < repeat; n++) {
		for (int i = optind + 1; i < argc; i++) {
			if ((n || i > optind + 1) && interval_ms)
				usleep(interval_ms * 1000);
			err = inject(fd, cpu, argv[i]);
			if (err)
				return err;
		}
	}
	close(fd);
	return 0;
}
