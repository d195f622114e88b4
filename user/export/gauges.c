// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gauges.c - the node's drift gauges and latwhy's own health, read on a
 * scrape (the HTTP thread), never in the tracing loop.
 *
 * The node reader walks sysfs and procfs: at most once every
 * LW_EXPORT_NODE_NS, so a scraper polling fast costs a copy, not a walk. A
 * switch the node does not have is an absent series, never a 0 that would
 * read as a measurement.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "export/export_int.h"

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A fresh reading when the last is older than LW_EXPORT_NODE_NS; on
 * failure the last one stays (or none). */
static void node_refresh(struct lw_export *x)
{
	struct lw_node n;
	__u64 now = mono_ns();

	if (x->node_read && now - x->node_ns < LW_EXPORT_NODE_NS)
		return;
	memset(&n, 0, sizeof(n));
	if (lw_node_read(&n, x->node_root, 0)) {
		lw_node_free(&n);
		return;
	}
	lw_export_spread_update(x, &n);
	if (x->node_read)
		lw_node_free(&x->node);
	x->node = n;
	x->node_read = true;
	x->node_ns = now;
}

/* A family's HELP and TYPE before its first sample: a family without any
 * is left out whole. */
static void family_once(FILE *f, bool *done, const char *name, const char *type, const char *help)
{
	if (!*done)
		lw_export_family(f, name, type, help);
	*done = true;
}

#define FREQ_HELP "A CPU's clock, by where it was read; absent without frequency data."

/* The tracer's clock source, as a label value. */
static const char *freq_source_label(__u32 s)
{
	switch (s) {
	case LW_FREQ_TRACEPOINT:
		return "cpu_frequency";
	case LW_FREQ_APERF_MPERF:
		return "aperf_mperf";
	case LW_FREQ_SYSFS_POLL:
		return "scaling_cur_freq_poll";
	}
	return NULL;
}

/* source="cpufreq": scaling_cur_freq as read; the tracer's own source:
 * the clock it last saw on that CPU. */
static void write_frequency(FILE *f, const struct lw_node *n, const struct lw_export_counters *c)
{
	static const char *const name = "latwhy_cpu_frequency_hertz";
	const char *src = freq_source_label(c->freq_source);
	bool head = false;

	for (int i = 0; n && i < n->nr_cpus; i++) {
		if (!n->cpus[i].has_freq || !n->cpus[i].cur_khz)
			continue;
		family_once(f, &head, name, "gauge", FREQ_HELP);
		fprintf(f, "%s{cpu=\"%d\",source=\"cpufreq\"} %llu\n", name, i,
			n->cpus[i].cur_khz * 1000ULL);
	}
	for (int i = 0; src && i < LW_MAX_CPUS; i++) {
		if (!c->khz[i])
			continue;
		family_once(f, &head, name, "gauge", FREQ_HELP);
		fprintf(f, "%s{cpu=\"%d\",source=\"%s\"} %llu\n", name, i, src,
			c->khz[i] * 1000ULL);
	}
}

/* cpuinfo_max_freq: what the clock gauges compare with (boost included) */
static void write_frequency_max(FILE *f, const struct lw_node *n)
{
	bool head = false;

	for (int i = 0; i < n->nr_cpus; i++) {
		if (!n->cpus[i].has_freq || !n->cpus[i].hw_max_khz)
			continue;
		family_once(f, &head, "latwhy_cpu_frequency_max_hertz", "gauge",
			    "A CPU's highest clock, cpuinfo_max_freq (boost included).");
		fprintf(f, "latwhy_cpu_frequency_max_hertz{cpu=\"%d\"} %llu\n", i,
			n->cpus[i].hw_max_khz * 1000ULL);
	}
}

static void write_governors(FILE *f, const struct lw_node *n)
{
	bool head = false;

	for (int i = 0; i < n->nr_cpus; i++) {
		if (!n->cpus[i].has_freq || !n->cpus[i].governor[0])
			continue;
		family_once(f, &head, "latwhy_cpufreq_governor_info", "gauge",
			    "The cpufreq governor of each CPU that has one (always 1).");
		fprintf(f, "latwhy_cpufreq_governor_info{cpu=\"%d\",governor=\"", i);
		lw_export_label(f, n->cpus[i].governor);
		fputs("\"} 1\n", f);
	}
}

static void write_mode(FILE *f, const char *name, const char *help, const char *mode)
{
	if (!mode[0])
		return;
	lw_export_family(f, name, "gauge", help);
	fprintf(f, "%s{mode=\"", name);
	lw_export_label(f, mode);
	fputs("\"} 1\n", f);
}

static void write_thp(FILE *f, const struct lw_node *n)
{
	const struct lw_thp *t = &n->thp;

	write_mode(f, "latwhy_thp_enabled_info",
		   "Transparent huge pages' enabled mode, the bracketed word (always 1).",
		   t->present ? t->enabled : "");
	write_mode(f, "latwhy_thp_defrag_info",
		   "Transparent huge pages' defrag mode, the bracketed word (always 1).",
		   t->present ? t->defrag : "");
	if (!t->present || t->kh_defrag < 0)
		return;
	lw_export_family(f, "latwhy_khugepaged_defrag", "gauge",
			 "khugepaged/defrag: 1 when khugepaged compacts memory to collapse pages.");
	fprintf(f, "latwhy_khugepaged_defrag %d\n", t->kh_defrag);
}

void lw_export_node_write(struct lw_export *x, FILE *f, const struct lw_export_counters *c)
{
	pthread_mutex_lock(&x->node_lock);
	node_refresh(x);
	write_frequency(f, x->node_read ? &x->node : NULL, c);
	if (x->node_read) {
		write_frequency_max(f, &x->node);
		write_governors(f, &x->node);
		write_thp(f, &x->node);
		lw_export_family(f, "latwhy_irqbalance_running", "gauge",
				 "1 when an irqbalance daemon runs: it moves IRQs onto busy CPUs.");
		fprintf(f, "latwhy_irqbalance_running %d\n", x->node.irqbalance.running ? 1 : 0);
		lw_export_spread_write(x, f);
	}
	pthread_mutex_unlock(&x->node_lock);
}

/* Resident set size from /proc/self/statm (pages); 0 when unreadable. */
static unsigned long long self_rss_bytes(void)
{
	unsigned long long size, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (unsigned long long)sysconf(_SC_PAGESIZE);
}

void lw_export_self_write(FILE *f)
{
	struct rusage ru;
	unsigned long long rss = self_rss_bytes();

	if (!getrusage(RUSAGE_SELF, &ru)) {
		lw_export_family(f, "latwhy_process_cpu_seconds_total", "counter",
				 "CPU time latwhy itself used, user and system.");
		fprintf(f, "latwhy_process_cpu_seconds_total %.6f\n",
			ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
				(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	}
	if (rss) {
		lw_export_family(f, "latwhy_process_resident_memory_bytes", "gauge",
				 "latwhy's own resident memory.");
		fprintf(f, "latwhy_process_resident_memory_bytes %llu\n", rss);
	}
	lw_export_family(f, "latwhy_build_info", "gauge",
			 "latwhy's version and record ABI (always 1).");
	fprintf(f, "latwhy_build_info{version=\"%s\",abi=\"%d\"} 1\n", LW_VERSION, LW_ABI_VERSION);
}
