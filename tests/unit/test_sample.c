// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sample.c - serve's duty cycle and its families: the schedule on fake
 * clocks, --sample and --causes (their errors, exact, and exit 2), and the
 * exposition of the attached seconds, the BPF programs' cost and the IRQ
 * spread from a fixture exporter. No BPF, no root.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/types.h>

#include <cmocka.h>

#include "latwhy.h"
#include "cli/cmd.h"
#include "cli/trace_opts.h"
#include "cli/serve_opts.h"
#include "export/export.h"
#include "export/export_int.h" /* lw_export_entropy() */
#include "lib/list.h"
#include "source/causes.h"
#include "source/duty.h"
#include "scrape.h"

#define S	1000000000ULL
#define MS	1000000ULL
#define FIXTURE "tests/fixtures/acpi-powersave"

/* ---- the schedule ---------------------------------------------------- */

static void test_duty_at(void **state)
{
	struct lw_duty d = {.on_ns = 2 * S, .every_ns = 4 * S};
	__u64 e = 100 * S, next;

	assert_true(lw_duty_at(&d, e, e, &next));
	assert_true(next == e + 2 * S);
	assert_true(lw_duty_at(&d, e, e + 2 * S - 1, &next));
	assert_true(next == e + 2 * S);
	assert_false(lw_duty_at(&d, e, e + 2 * S, &next));
	assert_true(next == e + 4 * S);
	assert_false(lw_duty_at(&d, e, e + 3500 * MS, &next));
	assert_true(next == e + 4 * S);
	assert_true(lw_duty_at(&d, e, e + 4 * S, &next)); /* the next cycle */
	assert_true(next == e + 6 * S);
	assert_true(lw_duty_at(&d, e, e + 401 * S, &next)); /* 100 cycles on */
	assert_true(next == e + 402 * S);
	assert_false(lw_duty_at(&d, e, e - 1, &next)); /* before the epoch */
	assert_true(next == e);
	/* serve's default: 3 s of every 90 */
	d = (struct lw_duty){.on_ns = LW_SERVE_SAMPLE_ON_NS, .every_ns = LW_SERVE_SAMPLE_EVERY_NS};
	assert_true(lw_duty_at(&d, e, e + 2 * S, &next));
	assert_true(next == e + 3 * S);
	assert_false(lw_duty_at(&d, e, e + 89 * S, &next));
	assert_true(next == e + 90 * S);
	/* off, and X = Y: always attached, no change to wait for */
	d = (struct lw_duty){0};
	assert_true(lw_duty_at(&d, e, e + 7 * S, &next));
	assert_true(next == LW_DUTY_NEVER);
	d = (struct lw_duty){.on_ns = 5 * S, .every_ns = 5 * S};
	assert_true(lw_duty_at(&d, e, e + 7 * S, &next));
	assert_true(next == LW_DUTY_NEVER);
}

/* A poller on a fake clock that wakes every 100 ms, as the tracer's does,
 * acting only when the schedule says a change is due: attached 3 of every
 * 10 s, exactly, over 10 cycles, and never two changes in one wake-up. */
static void test_duty_poller(void **state)
{
	struct lw_duty d = {.on_ns = 3 * S, .every_ns = 10 * S};
	__u64 e = 5 * S, next = 0, on_ns = 0, since = e;
	bool on = true;
	int changes = 0;

	for (__u64 now = e; now < e + 100 * S; now += 100 * MS) {
		bool want;

		if (now < next)
			continue;
		want = lw_duty_at(&d, e, now, &next);
		assert_true(next > now);
		if (want == on)
			continue;
		if (!want)
			on_ns += now - since;
		since = now;
		on = want;
		changes++;
	}
	if (on)
		on_ns += e + 100 * S - since;
	assert_true(on_ns == 30 * S);
	assert_int_equal(changes, 19); /* off at 3 s, on at 10 s, ..., off at 93 s */
}

/* ---- options ------------------------------------------------------------ */

static int parse(struct lw_serve_opts *o, char *err, ...)
{
	char *argv[16] = {"serve"};
	int argc = 1;
	va_list ap;

	va_start(ap, err);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	return lw_serve_opts_parse(o, argc, argv, err, 256);
}

static void test_sample_opts(void **state)
{
	struct lw_serve_opts o;
	char err[256];

	assert_int_equal(parse(&o, err, "--comm", "srv", NULL), 0);
	assert_true(o.sample.on_ns == 3 * S && o.sample.every_ns == 90 * S); /* 3s/90s */
	assert_string_equal(o.trace.conf.skip, ""); /* every cause by default */
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "2s/4s", NULL), 0);
	assert_true(o.sample.on_ns == 2 * S && o.sample.every_ns == 4 * S);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample=10s/1m", NULL), 0);
	assert_true(o.sample.on_ns == 10 * S && o.sample.every_ns == 60 * S);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "off", NULL), 0);
	assert_true(o.sample.every_ns == 0);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "60s/60s", NULL), 0);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "70s/60s", NULL), -EINVAL);
	assert_string_equal(err, "--sample: X must not exceed Y");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "500ms/60s", NULL), -EINVAL);
	assert_string_equal(err, "--sample: X must be at least 1s");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "0/60s", NULL), -EINVAL);
	assert_string_equal(err, "--sample: X must be at least 1s");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "10s", NULL), -EINVAL);
	assert_string_equal(err, "--sample needs X/Y, two durations (e.g. 3s/60s), or off");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "1s/x", NULL), -EINVAL);
	assert_string_equal(err, "--sample needs X/Y, two durations (e.g. 3s/60s), or off");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", NULL), -EINVAL);
	assert_string_equal(err, "option '--sample' needs a value");
}

/* Without escalation a hindsight trigger must be able to hold within one
 * attached stretch; with it (the default) full tracing stays attached for
 * as long as slow requests stay up. */
static void test_sample_capture(void **state)
{
	struct lw_serve_opts o;
	char err[256];

	assert_int_equal(parse(&o, err, "--comm", "srv", "--capture-dir", "/tmp/d", "--capture-on",
			       "sched:5:10s", NULL),
			 0);
	assert_true(o.sample.escalate && o.trace.conf.watch);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--escalate", "off", "--capture-dir",
			       "/tmp/d", "--capture-on", "sched:5:10s", NULL),
			 -EINVAL);
	assert_false(o.trace.conf.watch);
	assert_string_equal(err, "--capture-on sched:5:10s: its FOR is longer than --sample's X "
				 "(3 s): it could never fire; give --sample off, a longer X or "
				 "--escalate on");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--escalate", "maybe", NULL), -EINVAL);
	assert_string_equal(err, "--escalate takes on or off, not 'maybe'");
	/* always attached: no tier beside it */
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "off", NULL), 0);
	assert_false(o.trace.conf.watch);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "off", "--capture-dir",
			       "/tmp/d", "--capture-on", "sched:5:10s", NULL),
			 0);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--sample", "10s/60s", "--capture-dir",
			       "/tmp/d", "--capture-on", "sched:5:10s", NULL),
			 0);
	assert_int_equal(parse(&o, err, "--comm", "srv", "--capture-dir", "/tmp/d", "--capture-on",
			       "sched:5:2s", NULL),
			 0);
}

static void test_causes_opts(void **state)
{
	struct lw_serve_opts o;
	char err[256];

	assert_int_equal(parse(&o, err, "--comm", "srv", "--causes", "sched,irq", NULL), 0);
	assert_string_equal(
		o.trace.conf.skip,
		"cpu_frequency,mm_khugepaged_scan_pmd,mm_collapse_huge_page,"
		"mm_compaction_begin,mm_compaction_end,cpu_idle,page_fault_user,"
		"page_fault_kernel,mm_vmscan_direct_reclaim_begin,"
		"mm_vmscan_direct_reclaim_end,mm_vmscan_memcg_reclaim_begin,"
		"mm_vmscan_memcg_reclaim_end,mm_vmscan_lru_shrink_inactive,mm_page_alloc");
	/* --skip's own come first; sched is always traced */
	assert_int_equal(parse(&o, err, "--comm", "srv", "--skip", "sk_data_ready", "--causes",
			       "frequency,irq,thp,idle,memory", NULL),
			 0);
	assert_string_equal(o.trace.conf.skip, "sk_data_ready");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--causes", "thp", NULL), 0);
	assert_true(lw_list_has(o.trace.conf.skip, "irq_handler_entry"));
	assert_true(lw_list_has(o.trace.conf.skip, "netif_receive_skb"));
	assert_true(lw_list_has(o.trace.conf.skip, "call_function_single_entry"));
	assert_false(lw_list_has(o.trace.conf.skip, "mm_collapse_huge_page"));
	assert_false(lw_list_has(o.trace.conf.skip, "sched_switch"));
	assert_int_equal(parse(&o, err, "--comm", "srv", "--causes", "sched,disk", NULL), -EINVAL);
	assert_string_equal(
		err, "--causes: 'disk' is not a cause (frequency,irq,thp,sched,idle,quota,memory)");
	assert_int_equal(parse(&o, err, "--comm", "srv", "--causes", "", NULL), -EINVAL);
	assert_string_equal(
		err, "--causes needs a list of causes (frequency,irq,thp,sched,idle,quota,memory)");
}

/* The command's own words on stderr and its exit status. */
static enum lw_exit run_serve(char *out, size_t len, char *a1, char *a2, char *a3, char *a4)
{
	char path[] = "/tmp/latwhy-sample.XXXXXX";
	char *argv[] = {"serve", a1, a2, a3, a4, NULL};
	int fd = mkstemp(path), saved = dup(2);
	enum lw_exit r;
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	r = lw_cmd_serve(5, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return r;
}

static void test_usage_exit(void **state)
{
	char out[512];

	assert_int_equal(run_serve(out, sizeof(out), "--comm", "srv", "--sample", "70s/60s"),
			 LW_EXIT_USAGE);
	assert_string_equal(out,
			    "latwhy: --sample: X must not exceed Y (see latwhy serve --help)\n");
	assert_int_equal(run_serve(out, sizeof(out), "--comm", "srv", "--causes", "net"),
			 LW_EXIT_USAGE);
	assert_string_equal(
		out, "latwhy: --causes: 'net' is not a cause "
		     "(frequency,irq,thp,sched,idle,quota,memory) (see latwhy serve --help)\n");
}

/* ---- the families -------------------------------------------------------- */

static void feed_meta(struct lw_export *x, __u32 flags)
{
	struct lw_meta_rec m = {.type = LW_REC_META, .flags = flags};
	struct lw_sink s = lw_export_sink(x);

	assert_int_equal(lw_sink_record(&s, &m, sizeof(m)), 0);
}

/* The tiers: the always-attached one's time from its records, full
 * tracing's from the changes, the watch tier's slow requests per series
 * and, after an escalation, its delay; none of the watch families without
 * that tier. */
static void test_tier_families(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	struct lw_sink s = lw_export_sink(x);
	struct lw_tier_rec r = {.type = LW_REC_TIER, .watch_ns = S, .full_ns = S};
	struct lw_export_watch w;
	char *t;

	feed_meta(x, 0);
	lw_export_attached(x, true, 10 * S);
	assert_int_equal(lw_sink_tick(&s, 11 * S), 0);
	t = render(x);
	assert_null(strstr(t, "latwhy_watch_slow_requests_total"));
	assert_true(sample(t, "latwhy_tier_active{tier=\"watch\"}") == 0);
	assert_true(sample(t, "latwhy_escalations_total") == 0);
	assert_null(strstr(t, "latwhy_escalation_delay_seconds"));
	free(t);
	for (int i = 0; i < 3; i++)
		assert_int_equal(lw_sink_record(&s, &r, sizeof(r)), 0);
	/* every request counted, 1 in 4 timed: the slow ones estimated */
	w = (struct lw_export_watch){.slow = 7, .slow_ns = 70 * MS, .req = 4000, .timed = 1000};
	lw_export_series_watch(x, 0, &w);
	lw_export_attached(x, false, 13 * S);
	t = render(x);
	assert_true(sample(t, "latwhy_tier_attached_seconds_total{tier=\"watch\"}") == 3);
	assert_true(sample(t, "latwhy_tier_attached_seconds_total{tier=\"full\"}") == 3);
	assert_true(sample(t, "latwhy_tier_active{tier=\"watch\"}") == 1);
	assert_true(sample(t, "latwhy_tier_active{tier=\"full\"}") == 0);
	assert_true(sample(t, "latwhy_watch_slow_requests_total{target=\"srv\"}") == 7);
	assert_true(sample(t, "latwhy_watch_slow_request_seconds_total{target=\"srv\"}") == 0.07);
	assert_true(sample(t, "latwhy_watch_timed_requests_total{target=\"srv\"}") == 1000);
	assert_true(sample(t, "latwhy_requests_total{target=\"srv\"}") == 4000);
	free(t);
	lw_export_attached(x, true, 20 * S);
	lw_export_escalated(x, 250 * MS);
	t = render(x);
	assert_true(sample(t, "latwhy_escalations_total") == 1);
	assert_true(sample(t, "latwhy_escalation_delay_seconds") == 0.25);
	assert_true(sample(t, "latwhy_tier_active{tier=\"full\"}") == 1);
	free(t);
	/* a restart: the series' watch counts go on from where they were */
	lw_export_restart(x);
	w = (struct lw_export_watch){.slow = 2, .slow_ns = 10 * MS, .req = 500, .timed = 500};
	lw_export_series_watch(x, 0, &w);
	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, "latwhy_watch_slow_requests_total{target=\"srv\"}") == 9);
	assert_true(sample(t, "latwhy_watch_timed_requests_total{target=\"srv\"}") == 1500);
	assert_true(sample(t, "latwhy_requests_total{target=\"srv\"}") == 4500);
	free(t);
	lw_export_free(x);
}

/* Attached 10-13 s and 30-31 s of a fake clock: 4 s, counted at the ticks
 * and at each change; active only while attached. */
static void test_attached_seconds(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	struct lw_sink s = lw_export_sink(x);
	const char *att = "latwhy_sampling_attached_seconds_total";
	char *t;

	feed_meta(x, 0);
	lw_export_attached(x, true, 10 * S);
	assert_int_equal(lw_sink_tick(&s, 12500 * MS), 0);
	t = render(x);
	assert_true(sample(t, att) == 2.5);
	assert_true(sample(t, "latwhy_sampling_active") == 1);
	assert_int_equal(count_lines(t, "# TYPE latwhy_sampling_attached_seconds_total counter"),
			 1);
	assert_int_equal(count_lines(t, "# HELP latwhy_sampling_attached_seconds_total "), 1);
	free(t);
	lw_export_attached(x, false, 13 * S);
	t = render(x);
	assert_true(sample(t, att) == 3);
	assert_true(sample(t, "latwhy_sampling_active") == 0);
	free(t);
	feed_meta(x, 0); /* the tracer still ticks while detached */
	assert_int_equal(lw_sink_tick(&s, 20 * S), 0);
	t = render(x);
	assert_true(sample(t, att) == 3);
	assert_true(sample(t, "latwhy_sampling_active") == 0);
	free(t);
	lw_export_attached(x, true, 30 * S);
	assert_int_equal(lw_sink_tick(&s, 31 * S), 0);
	t = render(x);
	assert_true(sample(t, att) == 4);
	assert_true(sample(t, "latwhy_sampling_active") == 1);
	free(t);
	lw_export_free(x);
}

static void test_bpf_families(void **state)
{
	struct lw_export_prog p[2] = {{"lw_sched_switch", 1500 * MS, 42}, {"lw_irq_entry", 7, 3}};
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	const char *sw = "latwhy_bpf_run_seconds_total{prog=\"lw_sched_switch\"}";
	char *t;

	lw_export_progs(x, p, 2);
	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, "latwhy_bpf_stats_enabled") == 1);
	assert_true(sample(t, sw) == 1.5);
	assert_true(sample(t, "latwhy_bpf_run_count_total{prog=\"lw_sched_switch\"}") == 42);
	assert_non_null(
		strstr(t, "\nlatwhy_bpf_run_seconds_total{prog=\"lw_irq_entry\"} 0.000000007\n"));
	assert_true(sample(t, "latwhy_bpf_run_count_total{prog=\"lw_irq_entry\"}") == 3);
	assert_int_equal(count_lines(t, "# TYPE latwhy_bpf_run_seconds_total counter"), 1);
	assert_int_equal(count_lines(t, "# TYPE latwhy_bpf_run_count_total counter"), 1);
	assert_int_equal(count_lines(t, "latwhy_bpf_run_seconds_total{"), 2);
	free(t);
	/* a new process: its tracer's programs count from 0 again */
	lw_export_restart(x);
	p[0].run_ns = 500 * MS;
	p[0].run_cnt = 8;
	lw_export_progs(x, p, 1);
	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, sw) == 2);
	assert_true(sample(t, "latwhy_bpf_run_count_total{prog=\"lw_sched_switch\"}") == 50);
	assert_true(sample(t, "latwhy_bpf_run_count_total{prog=\"lw_irq_entry\"}") == 3);
	free(t);
	lw_export_free(x);

	/* kernel.bpf_stats_enabled 0: the gauge says so, the families are gone */
	x = lw_export_new("srv", "tests/fixtures/vm-nocpufreq");
	lw_export_progs(x, p, 2);
	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, "latwhy_bpf_stats_enabled") == 0);
	assert_int_equal(count_lines(t, "latwhy_bpf_run_"), 0);
	assert_int_equal(count_lines(t, "# HELP latwhy_bpf_run_"), 0);
	free(t);
	lw_export_free(x);
}

/* Target 4242 of the fixture may run on CPUs 2-3: eth0-TxRx-2 and nvme0q3
 * on 2 (9580245), eth0-TxRx-3 and nvme0q4 on 3 (9233579), since boot. */
static void test_irq_spread(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	double a = 9580245, b = 9233579, h;
	char *t;

	h = -(a / (a + b)) * log2(a / (a + b)) - (b / (a + b)) * log2(b / (a + b));
	lw_export_publish(x);
	t = render(x); /* no target yet: no spread to give */
	assert_int_equal(count_lines(t, "latwhy_irq_spread_entropy"), 0);
	free(t);
	lw_export_free(x);
	x = lw_export_new("srv", FIXTURE);
	lw_export_set_pid(x, 4242);
	lw_export_publish(x);
	t = render(x);
	assert_in_range(sample(t, "latwhy_irq_spread_entropy{cpus=\"2-3\"}") * 1e6, h * 1e6 - 1,
			h * 1e6 + 1);
	assert_int_equal(count_lines(t, "# TYPE latwhy_irq_spread_entropy gauge"), 1);
	assert_int_equal(count_lines(t, "latwhy_irq_spread_entropy{"), 1);
	free(t);
	lw_export_free(x);
}

/*
 * The always-attached tier's sample (lw_watch_sampled()): every request at
 * shift 0; at shifts 1-8, 1 in 2^shift of 64 sockets' 2000 requests each
 * (within 15%), whatever the replies' length that moves write_seq; at
 * shift 3, every socket's own requests too (within half: no connection
 * left out, as a sample of sockets would); a sample within the one of any
 * smaller shift; another seed, another sample.
 */
static void test_watch_sampled(void **state)
{
	static const __u32 lens[] = {1, 612, 850, 4096, 65536};
	__u32 hash = 12345;

	(void)state;
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		for (__u32 shift = 0; shift <= 8; shift++) {
			unsigned int n = 0, all = 0;

			for (int sk = 0; sk < 64; sk++) {
				__u32 seq = hash * 7u, own = 0;

				hash = hash * 1103515245u + 12345u;
				for (int r = 0; r < 2000; r++, seq += lens[l], all++) {
					int in = lw_watch_sampled(hash, seq, 0xfeedu, shift);

					own += in;
					if (shift)
						assert_true(!in ||
							    lw_watch_sampled(hash, seq, 0xfeedu,
									     shift - 1));
				}
				if (shift == 3)
					assert_true(own >= 125 && own <= 375);
				n += own;
			}
			if (!shift)
				assert_int_equal(n, all);
			assert_true(n >= 0.85 * all / (1u << shift) &&
				    n <= 1.15 * all / (1u << shift));
		}
	}
	/* another seed: the two samples of 1 in 8 share about 1 in 64 */
	{
		unsigned int both = 0;

		for (__u32 seq = 0; seq < 64000; seq++)
			both += lw_watch_sampled(777, seq * 850, 1, 3) &&
				lw_watch_sampled(777, seq * 850, 2, 3);
		assert_true(both >= 500 && both <= 1500);
	}
}

static void test_entropy(void **state)
{
	unsigned long long v[4] = {10, 10, 10, 10}, one[4] = {0, 0, 99, 0};
	struct lw_cpuset all = {0}, two = {0};
	double h = -1;

	for (int c = 0; c < 4; c++)
		lw_cpuset_set(&all, c);
	lw_cpuset_set(&two, 0);
	lw_cpuset_set(&two, 1);
	assert_true(lw_export_entropy(v, 4, &all, &h));
	assert_true(fabs(h - 2) < 1e-12);
	assert_true(lw_export_entropy(v, 4, &two, &h));
	assert_true(fabs(h - 1) < 1e-12);
	assert_true(lw_export_entropy(one, 4, &all, &h));
	assert_true(h == 0);
	assert_false(lw_export_entropy(one, 4, &two, &h)); /* none there: nothing measured */
}

/* Causes whose programs were all left out have no series, not a 0. */
static void test_causes_absent(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	char *t;

	feed_meta(x, LW_META_NO_IRQ | LW_META_NO_SOFTIRQ | LW_META_NO_FREQ | LW_META_NO_QUOTA |
			     LW_META_NO_MEMORY);
	lw_export_publish(x);
	t = render(x);
	assert_int_equal(count_lines(t, "latwhy_slow_requests_total{"), 4);
	assert_int_equal(count_lines(t, "latwhy_slow_request_seconds_total{"), 4);
	assert_null(strstr(t, "cause=\"quota\""));
	assert_null(strstr(t, "cause=\"memory\""));
	assert_null(strstr(t, "cause=\"irq\""));
	assert_null(strstr(t, "cause=\"frequency\""));
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"thp\"}") == 0);
	free(t);
	/* one of the two IRQ kinds left is enough to measure irq */
	feed_meta(x, LW_META_NO_IRQ);
	lw_export_publish(x);
	t = render(x);
	assert_true(sample(t, "latwhy_slow_requests_total{target=\"srv\",cause=\"irq\"}") == 0);
	free(t);
	lw_export_free(x);
}

/* ---- the cgroup's CPU bandwidth counters --------------------------------- */

#define CG_PERIODS   "latwhy_cgroup_cpu_periods_total{target=\"srv\"}"
#define CG_THROTTLED "latwhy_cgroup_cpu_throttled_periods_total{target=\"srv\"}"
#define CG_SECONDS   "latwhy_cgroup_cpu_throttled_seconds_total{target=\"srv\"}"
#define CG_QUOTA     "latwhy_cgroup_cpu_quota_cores{target=\"srv\"}"

/* root/rel holds text, its directories made as needed. */
static void tree_put(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = strchr(path + strlen(root) + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		assert_true(!mkdir(path, 0755) || errno == EEXIST);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int sh(const char *fmt, ...)
{
	char cmd[PATH_MAX * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* A v2 cgroup at root/sys/fs/cgroup/rel with these counters and cpu.max. */
static void cg2_put(const char *root, const char *rel, const char *stat, const char *max)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "sys/fs/cgroup%s/cpu.stat", rel);
	tree_put(root, path, stat);
	snprintf(path, sizeof(path), "sys/fs/cgroup%s/cpu.max", rel);
	tree_put(root, path, max);
}

/* Every family of the four: its one HELP, TYPE and sample for srv. */
static void cg_families_once(const char *t)
{
	assert_int_equal(count_lines(t, "# TYPE latwhy_cgroup_cpu_periods_total counter"), 1);
	assert_int_equal(count_lines(t, "# HELP latwhy_cgroup_cpu_periods_total "), 1);
	assert_int_equal(count_lines(t, "# TYPE latwhy_cgroup_cpu_throttled_periods_total counter"),
			 1);
	assert_int_equal(count_lines(t, "# TYPE latwhy_cgroup_cpu_throttled_seconds_total counter"),
			 1);
	assert_int_equal(count_lines(t, "# TYPE latwhy_cgroup_cpu_quota_cores gauge"), 1);
	assert_int_equal(count_lines(t, "latwhy_cgroup_cpu_periods_total{"), 1);
	assert_int_equal(count_lines(t, "latwhy_cgroup_cpu_quota_cores{"), 1);
}

/* The fixture's target 4242, v2 /system.slice/gateway.service: cpu.max
 * "150000 100000", nr_periods 52000, nr_throttled 3100, throttled_usec
 * 9300000: the kernel's counts as they are, read again the same. */
static void test_cgroup_v2(void **state)
{
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	char *t;

	lw_export_publish(x);
	t = render(x); /* no process told: nothing to read */
	assert_int_equal(count_lines(t, "latwhy_cgroup_"), 0);
	assert_int_equal(count_lines(t, "# HELP latwhy_cgroup_"), 0);
	free(t);
	lw_export_series_pid(x, 0, 4242);
	for (int i = 0; i < 2; i++) {
		t = render(x);
		assert_non_null(strstr(t, "\n" CG_PERIODS " 52000\n"));
		assert_non_null(strstr(t, "\n" CG_THROTTLED " 3100\n"));
		assert_non_null(strstr(t, "\n" CG_SECONDS " 9.300000000\n"));
		assert_non_null(strstr(t, "\n" CG_QUOTA " 1.5\n"));
		cg_families_once(t);
		free(t);
	}
	lw_export_free(x);
}

/* v1 (the cgroup-hybrid fixture, this project's VM: cpu on a v1
 * hierarchy of its own, v2 at unified): the cpu hierarchy's cgroup wins
 * over the v2 one, throttled_time is in ns, the quota cpu.cfs_quota_us
 * over cpu.cfs_period_us, -1 none. */
static void test_cgroup_v1(void **state)
{
	char root[] = "/tmp/latwhy-cg1.XXXXXX";
	struct lw_export *x;
	char *t;

	assert_non_null(mkdtemp(root));
	assert_int_equal(sh("cp -a tests/fixtures/cgroup-hybrid/. %s/", root), 0);
	tree_put(root, "proc/4242/cgroup",
		 "9:name=systemd:/system.slice/lat.service\n3:cpuset:/\n1:cpu:/ctr/lat\n"
		 "0::/system.slice/lat.service\n");
	tree_put(root, "sys/fs/cgroup/cpu/ctr/lat/cpu.stat",
		 "nr_periods 4000\nnr_throttled 1200\nthrottled_time 98765432101\n"
		 "nr_bursts 0\nburst_time 0\n");
	tree_put(root, "sys/fs/cgroup/cpu/ctr/lat/cpu.cfs_quota_us", "50000\n");
	tree_put(root, "sys/fs/cgroup/cpu/ctr/lat/cpu.cfs_period_us", "100000\n");
	/* v2 has no cpu controller here: its cpu.stat is usage only */
	tree_put(root, "sys/fs/cgroup/unified/system.slice/lat.service/cpu.stat",
		 "usage_usec 5\nuser_usec 3\nsystem_usec 2\n");
	x = lw_export_new("srv", root);
	lw_export_series_pid(x, 0, 4242);
	t = render(x);
	assert_non_null(strstr(t, "\n" CG_PERIODS " 4000\n"));
	assert_non_null(strstr(t, "\n" CG_THROTTLED " 1200\n"));
	assert_non_null(strstr(t, "\n" CG_SECONDS " 98.765432101\n"));
	assert_non_null(strstr(t, "\n" CG_QUOTA " 0.5\n"));
	cg_families_once(t);
	free(t);
	/* the limit lifted: no quota, the counters stay */
	tree_put(root, "sys/fs/cgroup/cpu/ctr/lat/cpu.cfs_quota_us", "-1\n");
	t = render(x);
	assert_true(sample(t, CG_PERIODS) == 4000);
	assert_int_equal(count_lines(t, "latwhy_cgroup_cpu_quota_cores"), 0);
	assert_int_equal(count_lines(t, "# HELP latwhy_cgroup_cpu_quota_cores"), 0);
	free(t);
	lw_export_free(x);
	assert_int_equal(sh("rm -rf %s", root), 0);
}

/* Monotonic: the target's process restarted into its unit's cgroup made
 * again (systemd does so: a new cgroup, its counters from 0), moved to a
 * cgroup of its own and back: each cgroup adds what it counted while it was
 * the target's, never its total twice. */
static void test_cgroup_restart(void **state)
{
	char root[] = "/tmp/latwhy-cg2.XXXXXX", from[PATH_MAX], to[PATH_MAX];
	double last[3] = {0};
	struct lw_export *x;
	struct {
		int pid;
		const char *cgroup, *stat, *max;
		double periods, throttled, seconds, cores; /* cores -1: absent */
	} step[] = {
		{50, "/srv.service", "nr_periods 100\nnr_throttled 10\nthrottled_usec 1000000\n",
		 "200000 100000\n", 100, 10, 1, 2},
		/* the same cgroup further on: what it added */
		{50, "/srv.service", "nr_periods 150\nnr_throttled 30\nthrottled_usec 2500000\n",
		 "200000 100000\n", 150, 30, 2.5, 2},
		/* restarted (below), counting from 0 in the new cgroup, unlimited */
		{51, "/srv.service", "nr_periods 5\nnr_throttled 1\nthrottled_usec 250000\n",
		 "max 100000\n", 155, 31, 2.75, -1},
		/* moved to a cgroup made before: all it counted */
		{51, "/box/srv", "nr_periods 40\nnr_throttled 20\nthrottled_usec 3000000\n",
		 "50000 100000\n", 195, 51, 5.75, 0.5},
		/* back in the one before, which counted 2 more periods meanwhile */
		{51, "/srv.service", "nr_periods 7\nnr_throttled 2\nthrottled_usec 300000\n",
		 "max 100000\n", 197, 52, 5.8, -1},
	};

	assert_non_null(mkdtemp(root));
	tree_put(root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	x = lw_export_new("srv", root);
	for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
		char cg[64], *t;
		double now[3];

		if (i == 2) { /* the new cgroup exists before the old one goes */
			cg2_put(root, "/srv.service.new", step[i].stat, step[i].max);
			snprintf(from, sizeof(from), "%s/sys/fs/cgroup/srv.service.new", root);
			snprintf(to, sizeof(to), "%s/sys/fs/cgroup/srv.service", root);
			assert_int_equal(sh("rm -rf %s", to), 0);
			assert_int_equal(rename(from, to), 0);
		} else {
			cg2_put(root, step[i].cgroup, step[i].stat, step[i].max);
		}
		snprintf(cg, sizeof(cg), "proc/%d/cgroup", step[i].pid);
		snprintf(from, sizeof(from), "0::%s\n", step[i].cgroup);
		tree_put(root, cg, from);
		lw_export_series_pid(x, 0, step[i].pid);
		t = render(x);
		now[0] = sample(t, CG_PERIODS);
		now[1] = sample(t, CG_THROTTLED);
		now[2] = sample(t, CG_SECONDS);
		assert_true(now[0] == step[i].periods);
		assert_true(now[1] == step[i].throttled);
		assert_true(fabs(now[2] - step[i].seconds) < 1e-9);
		assert_true(sample(t, CG_QUOTA) == step[i].cores);
		for (int k = 0; k < 3; k++) {
			assert_true(now[k] >= last[k]);
			last[k] = now[k];
		}
		free(t);
	}
	lw_export_free(x);
	assert_int_equal(sh("rm -rf %s", root), 0);
}

/* Absent, never 0, where nothing is known: no process, a process gone, a
 * cgroup without the cpu controller, v2's root; once read, the counters
 * hold while the cgroup cannot be read, and the quota goes. */
static void test_cgroup_absent(void **state)
{
	char root[] = "/tmp/latwhy-cg3.XXXXXX";
	struct lw_export *x;
	char *t;

	assert_non_null(mkdtemp(root));
	tree_put(root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	/* 60: its cgroup's parent does not give it the cpu controller */
	tree_put(root, "proc/60/cgroup", "0::/plain\n");
	tree_put(root, "sys/fs/cgroup/plain/cpu.stat",
		 "usage_usec 900\nuser_usec 600\nsystem_usec 300\n");
	/* 61: in the root, whose cpu.stat has no bandwidth counters either */
	tree_put(root, "proc/61/cgroup", "0::/\n");
	tree_put(root, "sys/fs/cgroup/cpu.stat", "usage_usec 900\nuser_usec 600\n");
	/* 62: limited */
	tree_put(root, "proc/62/cgroup", "0::/lim\n");
	cg2_put(root, "/lim", "nr_periods 9\nnr_throttled 3\nthrottled_usec 42\n",
		"100000 100000\n");
	x = lw_export_new("srv", root);
	assert_int_equal(lw_export_add_series(x, "other"), 1);
	lw_export_series_pid(x, 0, 60);
	lw_export_series_pid(x, 1, 61);
	t = render(x);
	assert_int_equal(count_lines(t, "latwhy_cgroup_"), 0);
	assert_int_equal(count_lines(t, "# HELP latwhy_cgroup_"), 0);
	free(t);
	lw_export_series_pid(x, 1, 999); /* no such process */
	t = render(x);
	assert_int_equal(count_lines(t, "latwhy_cgroup_"), 0);
	free(t);
	/* one of two read: its series only */
	lw_export_series_pid(x, 0, 62);
	t = render(x);
	assert_true(sample(t, CG_PERIODS) == 9);
	assert_non_null(strstr(t, "\n" CG_SECONDS " 0.000042000\n"));
	assert_true(sample(t, CG_QUOTA) == 1);
	assert_int_equal(count_lines(t, "latwhy_cgroup_cpu_periods_total{target=\"other\"}"), 0);
	cg_families_once(t);
	free(t);
	/* the process gone (no pid), then the cgroup too: held, no quota */
	lw_export_series_pid(x, 0, 0);
	t = render(x);
	assert_true(sample(t, CG_PERIODS) == 9);
	assert_true(sample(t, CG_THROTTLED) == 3);
	assert_int_equal(count_lines(t, "latwhy_cgroup_cpu_quota_cores"), 0);
	free(t);
	lw_export_series_pid(x, 0, 62);
	assert_int_equal(sh("rm -rf %s/sys/fs/cgroup/lim", root), 0);
	t = render(x);
	assert_true(sample(t, CG_PERIODS) == 9);
	assert_int_equal(count_lines(t, "latwhy_cgroup_cpu_quota_cores"), 0);
	free(t);
	/* a tracer restart forgets the cgroup, not the counters */
	cg2_put(root, "/lim", "nr_periods 9\nnr_throttled 3\nthrottled_usec 42\n",
		"100000 100000\n");
	lw_export_restart(x);
	t = render(x);
	assert_true(sample(t, CG_PERIODS) == 9);
	assert_int_equal(count_lines(t, "latwhy_cgroup_cpu_quota_cores"), 0);
	free(t);
	lw_export_free(x);
	assert_int_equal(sh("rm -rf %s", root), 0);
}

/* promtool's linter on a scrape with every new family in it. */
static void test_promtool(void **state)
{
	struct lw_export_prog p = {"lw_sched_switch", 1500 * MS, 42};
	struct lw_export *x = lw_export_new("srv", FIXTURE);
	char path[] = "/tmp/latwhy-sample.XXXXXX", cmd[128], *t;
	int fd;

	if (system("command -v promtool >/dev/null 2>&1")) {
		print_message("promtool not installed: not linted\n");
		lw_export_free(x);
		skip();
	}
	lw_export_set_pid(x, 4242);
	lw_export_series_pid(x, 0, 4242);
	lw_export_progs(x, &p, 1);
	lw_export_attached(x, true, 1 * S);
	lw_export_attached(x, false, 2 * S);
	t = render(x);
	assert_non_null(strstr(t, "latwhy_irq_spread_entropy{"));
	assert_non_null(strstr(t, "latwhy_bpf_run_seconds_total{"));
	assert_non_null(strstr(t, "latwhy_cgroup_cpu_throttled_seconds_total{"));
	assert_non_null(strstr(t, "latwhy_cgroup_cpu_quota_cores{"));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, strlen(t)), (ssize_t)strlen(t));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
	free(t);
	lw_export_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duty_at),		 cmocka_unit_test(test_duty_poller),
		cmocka_unit_test(test_sample_opts),	 cmocka_unit_test(test_sample_capture),
		cmocka_unit_test(test_causes_opts),	 cmocka_unit_test(test_usage_exit),
		cmocka_unit_test(test_attached_seconds), cmocka_unit_test(test_tier_families),
		cmocka_unit_test(test_bpf_families),	 cmocka_unit_test(test_irq_spread),
		cmocka_unit_test(test_entropy),		 cmocka_unit_test(test_causes_absent),
		cmocka_unit_test(test_cgroup_v2),	 cmocka_unit_test(test_cgroup_v1),
		cmocka_unit_test(test_cgroup_restart),	 cmocka_unit_test(test_cgroup_absent),
		cmocka_unit_test(test_promtool),	 cmocka_unit_test(test_watch_sampled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
