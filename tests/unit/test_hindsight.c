// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_hindsight.c - hindsight captures on a simulated tracer: the window's
 * bounds (time and bytes, oldest first), the triggers (fire after N seconds
 * over, not before, reset below), the rate limit and the refused signal's
 * line, the directory's cap (only latwhy-*.lwy, oldest first), a capture
 * read back with the capture reader and through the engine giving the
 * window's counts, not the run's, and latwhy_captures_total. No BPF, no
 * root.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>

#include <cmocka.h>

#include "latwhy.h"
#include "capture/capture.h"
#include "capture/hindsight.h"
#include "cli/serve_capture.h"
#include "cli/serve_opts.h"
#include "engine/engine.h"
#include "export/export.h"

#define SEC 1000000000ULL
#define MS  1000000ULL
/* the simulated run starts here (CLOCK_MONOTONIC ns) */
#define T0 (1000 * SEC)

/* A tracer's cumulative state, as its maps would hold it. */
struct sim {
	struct lw_sink sink;
	__u64 now;	/* the last tick */
	__u64 requests; /* all requests so far */
	__u64 hist[LW_HIST_BUCKETS];
	__u64 irq_ns, irq_count;
	__u64 preempt_ns, preempt_count;
	__u64 thp_scans;
	__u64 seq; /* slow requests so far: each one's start_ns */
};

static void sim_init(struct sim *s, struct lw_hindsight *h)
{
	memset(s, 0, sizeof(*s));
	s->sink = lw_hindsight_sink(h);
	s->now = T0;
}

static void put(struct sim *s, const void *rec, size_t len)
{
	assert_int_equal(lw_sink_record(&s->sink, rec, len), 0);
}

/* One slow request: latency_ns, ns of it in bucket, the rest run. */
static void sim_slow(struct sim *s, int bucket, __u64 latency_ns, __u64 ns)
{
	struct lw_request r = {.type = LW_REC_REQUEST, .pid = 42, .tid = 42, .cpu = 1};

	r.start_ns = ++s->seq;
	r.latency_ns = latency_ns;
	r.ns[bucket] = ns;
	r.ns[LW_B_RUN] = latency_ns - ns;
	snprintf(r.comm, sizeof(r.comm), "srv");
	put(s, &r, sizeof(r));
}

/* One second: nslow slow requests with bucket's ns each, nreq requests in
 * all, then the snapshots the tracer sends each tick, then the tick. */
static void sim_second(struct sim *s, __u64 nreq, int nslow, int bucket, __u64 ns)
{
	struct lw_hist_rec *hist = calloc(1, sizeof(*hist));
	struct lw_tick_rec tick = {.type = LW_REC_TICK};
	struct lw_irq_rec irq = {.type = LW_REC_IRQ, .irq = 11, .cpu = 1};
	struct lw_preempt_rec pre = {.type = LW_REC_PREEMPT, .pid = 77, .tgid = 77};
	struct lw_cpu_rec cpu = {.type = LW_REC_CPU, .cpu = 1};
	struct lw_thp_rec thp = {.type = LW_REC_THP};
	struct lw_meta_rec meta = {.type = LW_REC_META, .pid = 42, .nr_cpus = 2};

	assert_non_null(hist);
	for (int i = 0; i < nslow; i++)
		sim_slow(s, bucket, 10 * MS, ns);
	s->now += SEC;
	s->requests += nreq;
	s->hist[100] += nreq; /* every request in one bucket */
	s->irq_ns += 1000;
	s->irq_count += 2;
	s->preempt_ns += 5000;
	s->preempt_count += 1;
	s->thp_scans += 3;
	hist->type = LW_REC_HIST;
	memcpy(hist->b, s->hist, sizeof(hist->b));
	put(s, hist, sizeof(*hist));
	free(hist);
	tick.ts_ns = s->now;
	tick.requests = nreq;
	tick.slow = nslow;
	tick.threshold_ns = 5 * MS;
	put(s, &tick, sizeof(tick));
	snprintf(irq.name, sizeof(irq.name), "eth0");
	irq.ns = s->irq_ns;
	irq.count = s->irq_count;
	put(s, &irq, sizeof(irq));
	snprintf(pre.comm, sizeof(pre.comm), "hog");
	pre.ns = s->preempt_ns;
	pre.count = s->preempt_count;
	put(s, &pre, sizeof(pre));
	put(s, &cpu, sizeof(cpu));
	thp.s.scans = s->thp_scans;
	put(s, &thp, sizeof(thp));
	snprintf(meta.comm, sizeof(meta.comm), "srv");
	meta.start_ns = T0;
	meta.duration_ns = s->now - T0;
	meta.requests = s->requests;
	meta.threshold_ns = LW_THRESH_UNKNOWN;
	meta.req_mode = LW_REQ_SOCKET;
	put(s, &meta, sizeof(meta));
	assert_int_equal(lw_sink_tick(&s->sink, s->now), 0);
}

static char tmpdir[64];

static int dir_setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lw-hs.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int dir_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

static struct lw_hindsight *hs_new(struct lw_hindsight_opts *o)
{
	static const struct lw_capture_kv kv[] = {{"command", "serve --comm srv --capture-dir D"}};
	struct lw_hindsight *h;

	o->dir = tmpdir;
	o->sync = true;
	h = lw_hindsight_new(o, "srv", 0, kv, 1);
	assert_non_null(h);
	return h;
}

/* The captures in tmpdir, by name; the count. */
static int captures(char names[][256], int max)
{
	char cmd[128];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep '^latwhy-.*\\.lwy$' | sort", tmpdir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n < max && fgets(names[n], 256, p)) {
		names[n][strcspn(names[n], "\n")] = '\0';
		n++;
	}
	pclose(p);
	return n;
}

struct readback {
	__u64 requests_records, first_seq, last_seq;
	struct lw_summary s;
	const char *reason, *command, *span;
	size_t nodes;
};

static void read_capture(const char *name, struct readback *rb);

/* ---- the window ---- */

/* Older than the window: gone, the base's end exactly window_ns ago. */
static void test_window_time(void **state)
{
	struct lw_hindsight_opts o = {.window_ns = 10 * SEC};
	struct lw_hindsight *h = hs_new(&o);
	struct sim s;

	sim_init(&s, h);
	for (int i = 0; i < 5; i++)
		sim_second(&s, 100, 1, LW_B_SCHED, 5 * MS);
	/* the run's start is the window's: 5 s */
	assert_int_equal(lw_hindsight_intervals(h), 5);
	assert_int_equal(lw_hindsight_span_ns(h), 5 * SEC);
	for (int i = 0; i < 25; i++)
		sim_second(&s, 100, 1, LW_B_SCHED, 5 * MS);
	/* a base and the 10 intervals after it */
	assert_int_equal(lw_hindsight_intervals(h), 11);
	assert_int_equal(lw_hindsight_span_ns(h), 10 * SEC);
	assert_int_equal(lw_hindsight_dropped(h), 0);
	lw_hindsight_free(h);
}

/* Over its bytes: the oldest intervals go first, the bound holds. */
static void test_window_bytes(void **state)
{
	struct lw_hindsight_opts o = {.window_bytes = 64 << 10};
	struct lw_hindsight *h = hs_new(&o);
	char names[4][256];
	struct readback rb;
	__u64 before, kept;
	struct sim s;

	sim_init(&s, h);
	for (int i = 0; i < 50; i++) {
		sim_second(&s, 100, 20, LW_B_SCHED, 5 * MS);
		assert_true(lw_hindsight_bytes(h) <= o.window_bytes);
	}
	/* an interval is 20 requests (3.3 kB) and the snapshots (4.5 kB):
	 * about 8 of them fit, the rest went oldest first */
	assert_in_range(lw_hindsight_intervals(h), 4, 9);
	assert_true(lw_hindsight_dropped(h) > 0);
	assert_int_equal(lw_hindsight_span_ns(h), (lw_hindsight_intervals(h) - 1) * SEC);
	before = lw_hindsight_dropped(h);
	sim_second(&s, 100, 20, LW_B_SCHED, 5 * MS);
	assert_int_equal(lw_hindsight_dropped(h), before + 1);
	/* what is left is the newest: every request after the base's */
	kept = (lw_hindsight_intervals(h) - 1) * 20;
	assert_int_equal(lw_hindsight_capture(h, "signal", NULL, s.now), 0);
	assert_int_equal(captures(names, 4), 1);
	read_capture(names[0], &rb);
	assert_int_equal(rb.requests_records, kept);
	assert_int_equal(rb.first_seq, s.seq - kept + 1);
	assert_int_equal(rb.last_seq, s.seq);
	assert_int_equal(rb.s.duration_ns, (lw_hindsight_intervals(h) - 1) * SEC);
	lw_hindsight_free(h);
}

/* One interval alone over the bytes: its snapshots kept, its later requests
 * not, and the capture says how many. */
static void test_window_flood(void **state)
{
	struct lw_hindsight_opts o = {.window_bytes = 64 << 10};
	struct lw_hindsight *h = hs_new(&o);
	char names[4][256], path[512], err[256];
	struct lw_capture_reader *r;
	struct readback rb;
	const char *v;
	struct sim s;

	sim_init(&s, h);
	sim_second(&s, 5000, 1000, LW_B_SCHED, 5 * MS);
	assert_true(lw_hindsight_bytes(h) <= o.window_bytes);
	assert_int_equal(lw_hindsight_capture(h, "signal", NULL, s.now), 0);
	assert_int_equal(captures(names, 4), 1);
	read_capture(names[0], &rb);
	/* 64 KiB less the snapshots' 4.5 kB: 290 requests of 212 bytes (ABI 3) */
	assert_in_range(rb.requests_records, 240, 340);
	assert_int_equal(rb.first_seq, 1); /* the first ones, then no room */
	assert_int_equal(rb.s.requests, 5000);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, names[0]);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	v = lw_capture_reader_fact(r, LW_CHUNK_OPTIONS, "capture_requests_not_kept");
	assert_non_null(v);
	assert_int_equal(strtoull(v, NULL, 10), 1000 - rb.requests_records);
	lw_capture_reader_close(r);
	lw_hindsight_free(h);
}

/* ---- triggers ---- */

static void parse_ok(const char *spec, int cause, enum lw_hindsight_kind kind, double per_s,
		     __u64 for_ns)
{
	struct lw_hindsight_trigger t;
	char err[256] = "";

	assert_int_equal(lw_hindsight_trigger_parse(spec, &t, err, sizeof(err)), 0);
	assert_int_equal(t.cause, cause);
	assert_int_equal(t.kind, kind);
	assert_true(t.per_s == per_s);
	assert_int_equal(t.for_ns, for_ns);
	assert_string_equal(t.text, spec);
}

static void test_trigger_parse(void **state)
{
	static const char *const bad[] = {"irq",	"irq:",	    "bogus:5/s:10s", "irq:5/m:10s",
					  "irq:-5:10s", "irq:5:0s", "irq:5:10x",     "irq:abc",
					  ":5",		"any:5/s:"};
	struct lw_hindsight_trigger t;
	char err[256];

	parse_ok("irq:5/s:10s", LW_CAUSE_IRQ, LW_HS_COUNT, 5, 10 * SEC);
	parse_ok("irq:5", LW_CAUSE_IRQ, LW_HS_COUNT, 5, 10 * SEC);
	parse_ok("any:0.5/s:3s", -1, LW_HS_COUNT, 0.5, 3 * SEC);
	parse_ok("sched:20ms/s:5s", LW_CAUSE_SCHED, LW_HS_TIME, 20e6, 5 * SEC);
	parse_ok("none:1s:1m", LW_CAUSE_NONE, LW_HS_TIME, 1e9, 60 * SEC);
	parse_ok("frequency:100us:2", LW_CAUSE_FREQ, LW_HS_TIME, 100e3, 2 * SEC);
	assert_int_equal(lw_hindsight_trigger_parse("idle:3:1s", &t, err, sizeof(err)), 0);
	assert_string_equal(t.reason, "idle");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[256];

		snprintf(want, sizeof(want), "invalid --capture-on '%s': ", bad[i]);
		assert_int_equal(lw_hindsight_trigger_parse(bad[i], &t, err, sizeof(err)), -EINVAL);
		assert_memory_equal(err, want, strlen(want));
	}
}

/* irq:5/s:3s fires at the third second over 5 a second, not at the
 * second; a second at or below resets it. */
static void test_trigger_fires(void **state)
{
	struct lw_hindsight_opts o = {.min_gap_set = true, .ntriggers = 1};
	struct lw_hindsight *h;
	char names[8][256], err[256];
	struct sim s;

	assert_int_equal(lw_hindsight_trigger_parse("irq:5/s:3s", &o.triggers[0], err, sizeof(err)),
			 0);
	h = hs_new(&o);
	sim_init(&s, h);
	sim_second(&s, 100, 6, LW_B_IRQ, 8 * MS);
	assert_int_equal(lw_hindsight_trigger_since(h, 0), T0);
	sim_second(&s, 100, 6, LW_B_IRQ, 8 * MS);
	assert_int_equal(lw_hindsight_written(h), 0);
	/* 5 a second is not over 5 a second: reset */
	sim_second(&s, 100, 5, LW_B_IRQ, 8 * MS);
	assert_int_equal(lw_hindsight_trigger_since(h, 0), 0);
	/* slow for another cause: not irq's */
	sim_second(&s, 100, 9, LW_B_SCHED, 8 * MS);
	assert_int_equal(lw_hindsight_trigger_since(h, 0), 0);
	sim_second(&s, 100, 6, LW_B_IRQ, 8 * MS);
	sim_second(&s, 100, 6, LW_B_IRQ, 8 * MS);
	assert_int_equal(lw_hindsight_written(h), 0);
	sim_second(&s, 100, 6, LW_B_IRQ, 8 * MS);
	assert_int_equal(lw_hindsight_written(h), 1);
	assert_int_equal(lw_hindsight_trigger_since(h, 0), 0);
	assert_int_equal(captures(names, 8), 1);
	assert_non_null(strstr(names[0], "-irq.lwy"));
	assert_memory_equal(names[0], "latwhy-srv-", 11);
	lw_hindsight_free(h);
}

/* sched:20ms/s:2s: the time, not the count; any:3/s counts every cause. */
static void test_trigger_time(void **state)
{
	struct lw_hindsight_opts o = {.min_gap_set = true, .ntriggers = 2};
	struct lw_hindsight *h;
	char err[256];
	struct sim s;

	assert_int_equal(
		lw_hindsight_trigger_parse("sched:20ms/s:2s", &o.triggers[0], err, sizeof(err)), 0);
	assert_int_equal(lw_hindsight_trigger_parse("any:3/s:5s", &o.triggers[1], err, sizeof(err)),
			 0);
	h = hs_new(&o);
	sim_init(&s, h);
	/* 10 slow requests of 1 ms sched each: 10 ms a second, under 20 ms */
	sim_second(&s, 100, 10, LW_B_SCHED, 1 * MS);
	assert_int_equal(lw_hindsight_trigger_since(h, 0), 0);
	assert_int_equal(lw_hindsight_trigger_since(h, 1), T0);
	/* 3 of 9 ms: 27 ms a second */
	sim_second(&s, 100, 3, LW_B_SCHED, 9 * MS);
	assert_int_equal(lw_hindsight_trigger_since(h, 0), T0 + SEC);
	assert_int_equal(lw_hindsight_trigger_since(h, 1), 0); /* 3 is not over 3 */
	sim_second(&s, 100, 3, LW_B_SCHED, 9 * MS);
	assert_int_equal(lw_hindsight_written(h), 1);
	lw_hindsight_free(h);
}

/* ---- the rate limit ---- */

static void test_rate_limit(void **state)
{
	struct lw_hindsight_opts o = {.min_gap_ns = 300 * SEC, .min_gap_set = true};
	struct lw_hindsight *h = hs_new(&o);
	char path[128], line[256] = "";
	int saved, fd;
	FILE *f;
	struct sim s;

	sim_init(&s, h);
	sim_second(&s, 100, 1, LW_B_SCHED, 5 * MS);
	lw_hindsight_request(h);
	sim_second(&s, 100, 1, LW_B_SCHED, 5 * MS);
	assert_int_equal(lw_hindsight_written(h), 1);
	/* 10 s later: refused, one line on stderr */
	for (int i = 0; i < 10; i++)
		sim_second(&s, 100, 1, LW_B_SCHED, 5 * MS);
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, 2);
	close(fd);
	lw_hindsight_request(h);
	sim_second(&s, 100, 1, LW_B_SCHED, 5 * MS);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line,
			    "latwhy: capture refused (reason signal): the last one was 11.0 s "
			    "ago, --capture-min-interval is 300 s\n");
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	assert_int_equal(lw_hindsight_written(h), 1);
	assert_int_equal(lw_hindsight_capture(h, "signal", NULL, s.now + 288 * SEC), -EAGAIN);
	/* 300 s after the first: allowed */
	assert_int_equal(lw_hindsight_capture(h, "signal", NULL, s.now + 289 * SEC), 0);
	assert_int_equal(lw_hindsight_written(h), 2);
	lw_hindsight_free(h);
}

/* ---- the directory's cap ---- */

static void make_file(const char *name, size_t size, time_t mtime)
{
	char path[192];
	struct timespec ts[2] = {{.tv_sec = mtime}, {.tv_sec = mtime}};
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < size; i++)
		fputc('x', f);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static bool exists(const char *name)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return !access(path, F_OK);
}

static void test_prune(void **state)
{
	char path[192];

	make_file("latwhy-a-20260101T000001Z-irq.lwy", 1000, 1000);
	make_file("latwhy-b-20260101T000002Z-signal.lwy", 1000, 2000);
	make_file("latwhy-c-20260101T000003Z-irq.lwy", 1000, 3000);
	make_file("latwhy-d-20260101T000004Z-irq.lwy", 1000, 4000);
	/* not captures, older than all of them: never touched */
	make_file("notes.txt", 10, 10);
	make_file("latwhy-e.txt", 10, 10);
	make_file("other.lwy", 10, 10);
	make_file(".latwhy-f-20260101T000000Z-irq.lwy.tmp", 10, 10);
	snprintf(path, sizeof(path), "%s/latwhy-dir.lwy", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);
	/* at most 3: the oldest goes */
	assert_int_equal(lw_hindsight_prune(tmpdir, 3, 1 << 20, NULL), 1);
	assert_false(exists("latwhy-a-20260101T000001Z-irq.lwy"));
	assert_true(exists("latwhy-b-20260101T000002Z-signal.lwy"));
	/* over 1500 bytes: the oldest go first, never the one kept */
	assert_int_equal(lw_hindsight_prune(tmpdir, 10, 1500, "latwhy-c-20260101T000003Z-irq.lwy"),
			 2);
	assert_false(exists("latwhy-b-20260101T000002Z-signal.lwy"));
	assert_true(exists("latwhy-c-20260101T000003Z-irq.lwy"));
	assert_false(exists("latwhy-d-20260101T000004Z-irq.lwy"));
	for (const char *const *p = (const char *const[]){"notes.txt", "latwhy-e.txt", "other.lwy",
							  ".latwhy-f-20260101T000000Z-irq.lwy.tmp",
							  "latwhy-dir.lwy", NULL};
	     *p; p++)
		assert_true(exists(*p));
	assert_int_equal(lw_hindsight_prune("/nonexistent/dir", 1, 1, NULL), -ENOENT);
}

/* Captures past --capture-max-files: the oldest removed as a new one lands. */
static void test_cap_on_write(void **state)
{
	struct lw_hindsight_opts o = {.min_gap_set = true, .max_files = 2};
	struct lw_hindsight *h = hs_new(&o);
	char names[8][256];
	struct sim s;

	make_file("latwhy-srv-20000101T000000Z-irq.lwy", 100, 1000);
	make_file("keep.txt", 100, 1000);
	sim_init(&s, h);
	for (int i = 0; i < 3; i++) {
		sim_second(&s, 100, 1, LW_B_SCHED, 5 * MS);
		/* a name per second: each capture its own file */
		assert_int_equal(lw_hindsight_capture(h, i ? "irq" : "signal", NULL, s.now), 0);
		sleep(1);
	}
	assert_int_equal(lw_hindsight_written(h), 3);
	assert_int_equal(captures(names, 8), 2);
	assert_false(exists("latwhy-srv-20000101T000000Z-irq.lwy"));
	assert_true(exists("keep.txt"));
	assert_non_null(strstr(names[0], "-irq.lwy"));
	assert_non_null(strstr(names[1], "-irq.lwy"));
	lw_hindsight_free(h);
}

/* ---- a capture read back ---- */

static void read_capture(const char *name, struct readback *rb)
{
	struct lw_capture_reader *r;
	struct lw_engine *e = lw_engine_new();
	char path[512], err[256];
	const void *rec;
	size_t len;
	static char reason[32], command[128], span[32];
	static _Alignas(8) unsigned char aligned[LW_CAPTURE_MAX_RECORD];

	memset(rb, 0, sizeof(*rb));
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	r = lw_capture_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_non_null(e);
	assert_true(lw_capture_reader_info(r)->has_end);
	assert_int_equal(lw_capture_reader_nr_warnings(r), 0);
	while (!lw_capture_reader_next_record(r, &rec, &len)) {
		struct lw_request q;

		memcpy(&q, rec, len < sizeof(q) ? len : sizeof(q));
		if (q.type == LW_REC_REQUEST) {
			if (!rb->requests_records++)
				rb->first_seq = q.start_ns;
			rb->last_seq = q.start_ns;
		}
		/* the reader's records follow their 4-byte lengths: aligned here */
		assert_true(len <= sizeof(aligned));
		memcpy(aligned, rec, len);
		assert_int_equal(lw_engine_feed(e, aligned, len), 0);
	}
	lw_engine_summarize(e, &rb->s);
	snprintf(reason, sizeof(reason), "%s",
		 lw_capture_reader_fact(r, LW_CHUNK_OPTIONS, "capture_reason"));
	snprintf(command, sizeof(command), "%s",
		 lw_capture_reader_fact(r, LW_CHUNK_OPTIONS, "command"));
	snprintf(span, sizeof(span), "%s",
		 lw_capture_reader_fact(r, LW_CHUNK_OPTIONS, "capture_span_ns"));
	rb->reason = reason;
	rb->command = command;
	rb->span = span;
	rb->nodes = lw_capture_reader_nr_nodes(r);
	assert_true(lw_capture_reader_fact(r, LW_CHUNK_HOST, "hostname") != NULL);
	lw_engine_free(e);
	lw_capture_reader_close(r);
}

/* 40 s of a run, a 10 s window: the capture holds the last 10 s, its
 * cumulative numbers less those at the window's start. */
static void test_readback_window(void **state)
{
	struct lw_hindsight_opts o = {.window_ns = 10 * SEC};
	struct lw_hindsight *h = hs_new(&o);
	char names[4][256];
	struct readback rb;
	struct sim s;

	sim_init(&s, h);
	for (int i = 0; i < 30; i++)
		sim_second(&s, 1000, 2, LW_B_IRQ, 6 * MS);
	for (int i = 0; i < 10; i++) /* the window: 500 a second, 3 slow */
		sim_second(&s, 500, 3, LW_B_SCHED, 6 * MS);
	lw_hindsight_request(h);
	sim_second(&s, 500, 3, LW_B_SCHED, 6 * MS);
	assert_int_equal(lw_hindsight_written(h), 1);
	assert_int_equal(captures(names, 4), 1);
	assert_non_null(strstr(names[0], "-signal.lwy"));
	read_capture(names[0], &rb);
	/* the 10 s before the capture's tick: its own second, and 9 before */
	assert_int_equal(rb.requests_records, 30);
	assert_int_equal(rb.first_seq, 60 + 3 + 1);
	assert_int_equal(rb.last_seq, 60 + 33);
	assert_int_equal(rb.s.duration_ns, 10 * SEC);
	assert_int_equal(rb.s.requests, 5000);
	assert_int_equal(rb.s.slow_requests, 30);
	assert_int_equal(rb.s.cause[LW_CAUSE_SCHED].requests, 30);
	assert_int_equal(rb.s.cause[LW_CAUSE_IRQ].requests, 0);
	/* the evidence: the window's share of the cumulative counters */
	assert_int_equal(rb.s.nr_irqs, 1);
	assert_int_equal(rb.s.irqs[0].ns, 10 * 1000);
	assert_int_equal(rb.s.irqs[0].count, 20);
	assert_int_equal(rb.s.nr_preempt, 1);
	assert_int_equal(rb.s.preempt[0].ns, 10 * 5000);
	assert_int_equal(rb.s.thp.scans, 30);
	/* the histogram: the window's requests only */
	assert_true(rb.s.p50_ns > 0);
	assert_string_equal(rb.reason, "signal");
	assert_string_equal(rb.command, "serve --comm srv --capture-dir D");
	assert_string_equal(rb.span, "10000000000");
	assert_int_equal(rb.nodes, 1);
	lw_hindsight_free(h);
}

/* A window that began with the run: the run's own numbers, nothing taken off. */
static void test_readback_run_start(void **state)
{
	struct lw_hindsight_opts o = {0};
	struct lw_hindsight *h = hs_new(&o);
	char names[4][256];
	struct readback rb;
	struct sim s;

	sim_init(&s, h);
	for (int i = 0; i < 5; i++)
		sim_second(&s, 200, 4, LW_B_THP, 6 * MS);
	assert_int_equal(lw_hindsight_capture(h, "thp", "thp:3/s:5s", s.now), 0);
	assert_int_equal(captures(names, 4), 1);
	read_capture(names[0], &rb);
	assert_int_equal(rb.requests_records, 20);
	assert_int_equal(rb.s.duration_ns, 5 * SEC);
	assert_int_equal(rb.s.requests, 1000);
	assert_int_equal(rb.s.cause[LW_CAUSE_THP].requests, 20);
	assert_int_equal(rb.s.irqs[0].count, 10);
	assert_string_equal(rb.reason, "thp");
	/* a restart: the window starts again, nothing to capture yet */
	lw_hindsight_restart(h, 0);
	assert_int_equal(lw_hindsight_intervals(h), 0);
	assert_int_equal(lw_hindsight_capture(h, "signal", NULL, s.now + 600 * SEC), -ENODATA);
	lw_hindsight_free(h);
}

/* ---- the exporter's family ---- */

static void test_export_family(void **state)
{
	struct lw_export *x = lw_export_new("lat_server", "tests/fixtures/acpi-powersave");
	size_t len;
	char *t;

	assert_non_null(x);
	t = lw_export_render(x, &len);
	assert_null(strstr(t, "latwhy_captures_total"));
	free(t);
	lw_export_capture_reason(x, "signal");
	lw_export_capture_reason(x, "irq");
	lw_export_capture_written(x, "signal");
	lw_export_capture_written(x, "signal");
	t = lw_export_render(x, &len);
	assert_non_null(strstr(t, "# HELP latwhy_captures_total "));
	assert_non_null(strstr(t, "# TYPE latwhy_captures_total counter\n"));
	assert_non_null(strstr(t,
			       "\nlatwhy_captures_total{target=\"lat_server\",reason=\"signal\"} "
			       "2\n"));
	assert_non_null(
		strstr(t, "\nlatwhy_captures_total{target=\"lat_server\",reason=\"irq\"} 0\n"));
	free(t);
	lw_export_free(x);
}

/* ---- serve's options ---- */

static void test_serve_opts(void **state)
{
	char *argv[] = {"serve",
			"--comm",
			"srv",
			"--sample=off",
			"--capture-dir=/tmp/d",
			"--capture-on",
			"irq:5/s:10s",
			"--capture-window",
			"30s",
			"--capture-min-interval",
			"0",
			"--capture-max-files",
			"3",
			"--capture-max-bytes",
			"10M"};
	char *no_dir[] = {"serve", "--comm", "srv", "--capture-on=irq:5"};
	const int argc = sizeof(argv) / sizeof(argv[0]);
	struct lw_serve_opts so;
	struct lw_serve_capture_opts o;
	char err[256];

	assert_int_equal(lw_serve_opts_parse(&so, argc, argv, err, sizeof(err)), 0);
	o = so.capture;
	assert_string_equal(o.hs.dir, "/tmp/d");
	assert_int_equal(o.hs.ntriggers, 1);
	assert_int_equal(o.hs.window_ns, 30 * SEC);
	assert_true(o.hs.min_gap_set);
	assert_int_equal(o.hs.min_gap_ns, 0);
	assert_int_equal(o.hs.max_files, 3);
	assert_int_equal(o.hs.max_bytes, 10 << 20);
	assert_int_equal(lw_serve_capture_check(&o, err, sizeof(err)), 0);
	assert_int_equal(lw_serve_opts_parse(&so, 4, no_dir, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--capture-on needs --capture-dir DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_window_time, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_window_bytes, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_window_flood, dir_setup, dir_teardown),
		cmocka_unit_test(test_trigger_parse),
		cmocka_unit_test_setup_teardown(test_trigger_fires, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_trigger_time, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_prune, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_cap_on_write, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_readback_window, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_readback_run_start, dir_setup, dir_teardown),
		cmocka_unit_test(test_export_family),
		cmocka_unit_test(test_serve_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
