// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpfstats.c - what latwhy's BPF programs cost the kernel, from
 * bpf_prog_info's run_time_ns and run_cnt (the tracer reads them; only
 * source/ knows libbpf). The kernel counts them only while
 * kernel.bpf_stats_enabled is 1, and that count costs two clock reads a
 * run, so it is off by default: latwhy_bpf_stats_enabled says which, and the
 * two families are there only while it is 1 (frozen values would read as a
 * program that stopped running).
 */
#include <stdio.h>

#include "export/export_int.h"
#include "node/sysfs.h"

#define STATS_PATH "/proc/sys/kernel/bpf_stats_enabled"

/* ns as seconds, exactly */
static void put_seconds(FILE *f, __u64 ns)
{
	fprintf(f, "%llu.%09llu\n", (unsigned long long)(ns / 1000000000ULL),
		(unsigned long long)(ns % 1000000000ULL));
}

void lw_export_bpf_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c)
{
	long long on;

	if (lw_sysfs_read_ll(x->node_root, &on, STATS_PATH))
		return; /* not this kernel's, or unreadable: unknown, absent */
	lw_export_family(
		f, "latwhy_bpf_stats_enabled", "gauge",
		"kernel.bpf_stats_enabled: 1 when the kernel counts BPF programs' run time.");
	fprintf(f, "latwhy_bpf_stats_enabled %d\n", on == 1);
	if (on != 1 || !c->nr_progs)
		return;
	lw_export_family(f, "latwhy_bpf_run_seconds_total", "counter",
			 "Time latwhy's BPF programs ran in the kernel, by program.");
	for (size_t i = 0; i < c->nr_progs; i++) {
		fputs("latwhy_bpf_run_seconds_total{prog=\"", f);
		lw_export_label(f, c->progs[i].name);
		fputs("\"} ", f);
		put_seconds(f, c->progs[i].run_ns);
	}
	lw_export_family(f, "latwhy_bpf_run_count_total", "counter",
			 "Runs of latwhy's BPF programs, by program.");
	for (size_t i = 0; i < c->nr_progs; i++) {
		fputs("latwhy_bpf_run_count_total{prog=\"", f);
		lw_export_label(f, c->progs[i].name);
		fprintf(f, "\"} %llu\n", (unsigned long long)c->progs[i].run_cnt);
	}
}
