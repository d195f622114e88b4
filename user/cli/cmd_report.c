// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_report.c - `latwhy report FILE [--json]`: a capture as the source.
 * Its records feed the same engine as a live trace, and the findings come
 * from the node the capture recorded (its last snapshot, laid out as a root
 * for the node reader), never from the machine report runs on. No root, no
 * BPF.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advice/explain.h"
#include "capture/capture.h"
#include "cli/cmd.h"
#include "engine/engine.h"
#include "output/fmt.h"
#include "output/json.h"
#include "output/render.h"
#include "output/requests.h"

struct report_opts {
	const char *path;
	bool json;
};

static void report_usage(FILE *f)
{
	fprintf(f, "Usage: latwhy report FILE [--json]\n"
		   "\n"
		   "Read a capture made by latwhy record: the summary, evidence and findings a\n"
		   "live trace would have printed at its end, with the host and target it was\n"
		   "recorded on. Any user, any machine: no root, no BPF.\n"
		   "\n"
		   "  -j, --json   NDJSON: a capture line, the request lines, the summary\n");
}

/* 0; 1 for help; -EINVAL with a message in err */
static int report_parse(struct report_opts *o, int argc, char **argv, char *err, size_t len)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
		if (c == 'j') {
			o->json = true;
		} else if (c == 'h') {
			return 1;
		} else {
			snprintf(err, len, "unknown option '%s'", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		snprintf(err, len,
			 optind == argc ? "a capture file is needed: latwhy report FILE"
					: "one capture file at a time");
		return -EINVAL;
	}
	o->path = argv[optind];
	return 0;
}

static const char *fact(const struct lw_capture_reader *r, enum lw_capture_kind k, const char *key)
{
	const char *v = lw_capture_reader_fact(r, k, key);

	return v && *v ? v : NULL;
}

/* What the reader had to skip or could not find, one line each. */
static void report_damage(const struct lw_capture_reader *r, const char *path)
{
	const struct lw_capture_info *in = lw_capture_reader_info(r);

	for (size_t i = 0; i < lw_capture_reader_nr_warnings(r); i++)
		fprintf(stderr, "latwhy: %s: %s\n", path, lw_capture_reader_warning(r, i));
	/* the reader's warnings name the cut chunk and what it held; the
	 * summary below says how long the kept part traced */
	if (in->truncated || !in->has_end)
		fprintf(stderr,
			"latwhy: %s: the capture was cut short (no end record): reporting its %llu "
			"records; at most the last flush interval (1 s) before the cut is lost\n",
			path, (unsigned long long)in->records);
}

static void header_text(const struct lw_capture_reader *r, const char *path)
{
	const char *host = fact(r, LW_CHUNK_HOST, "hostname");
	const char *kern = fact(r, LW_CHUNK_HOST, "kernel_release");
	const char *cpu = fact(r, LW_CHUNK_HOST, "cpu_model");
	const char *on = fact(r, LW_CHUNK_HOST, "cpus_online");
	const char *cmd = fact(r, LW_CHUNK_OPTIONS, "command");
	const struct lw_capture_info *in = lw_capture_reader_info(r);

	printf("Capture %s: latwhy %s, host %s (kernel %s, %s, CPUs %s)\n", path,
	       in->latwhy_version[0] ? in->latwhy_version : "?", host ? host : "?",
	       kern ? kern : "?", cpu ? cpu : "CPU model unknown", on ? on : "?");
	if (cmd)
		printf("Recorded with: %s\n", cmd);
}

static void header_json(const struct lw_capture_reader *r, const char *path)
{
	static const char *const host[] = {"hostname",	  "kernel_release", "cpu_model",
					   "cpus_online", "numa",	    "boot_id"};
	static const char *const target[] = {"pid", "comm", "cmdline", "cpus_allowed", "cgroup"};
	const struct lw_capture_info *in = lw_capture_reader_info(r);
	struct lw_json j;

	lw_json_init(&j, stdout, false);
	lw_json_begin_object(&j);
	lw_json_kstr(&j, "type", "capture");
	lw_json_kstr(&j, "file", path);
	lw_json_ku64(&j, "format_version", in->format_version);
	lw_json_ku64(&j, "abi_version", in->abi_version);
	lw_json_kstr(&j, "latwhy_version", in->latwhy_version);
	lw_json_ku64(&j, "records", in->records);
	lw_json_kbool(&j, "complete", in->has_end && !in->truncated);
	lw_json_ku64(&j, "bad_chunks", in->bad_chunks);
	lw_json_key(&j, "host");
	lw_json_begin_object(&j);
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		const char *v = fact(r, LW_CHUNK_HOST, host[i]);

		if (v)
			lw_json_kstr(&j, host[i], v);
		else
			lw_json_knull(&j, host[i]);
	}
	lw_json_end_object(&j);
	lw_json_key(&j, "target");
	lw_json_begin_object(&j);
	for (size_t i = 0; i < sizeof(target) / sizeof(target[0]); i++) {
		const char *v = fact(r, LW_CHUNK_TARGET, target[i]);

		if (v)
			lw_json_kstr(&j, target[i], v);
		else
			lw_json_knull(&j, target[i]);
	}
	lw_json_end_object(&j);
	lw_json_end_object(&j);
	lw_json_end(&j);
}

/* Every record into the engine; -errno when the file stopped being
 * readable (what was read stays counted). */
static int report_feed(struct lw_capture_reader *r, struct lw_engine *e)
{
	const void *rec;
	size_t len;
	int ret;

	while (!(ret = lw_capture_reader_next_record(r, &rec, &len)))
		lw_engine_feed(e, rec, len); /* a bad record is counted there */
	return ret < 0 ? ret : 0;
}

/* The last node snapshot (the end's, as a live summary judges) under a
 * fresh directory; NULL when the capture has none. */
static char *report_node(const struct lw_capture_reader *r, char *dir)
{
	size_t n = lw_capture_reader_nr_nodes(r);

	if (!n || !mkdtemp(dir))
		return NULL;
	if (lw_capture_node_extract_at(r, n - 1, dir))
		return NULL;
	return dir;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static enum lw_exit report_run(const struct report_opts *o, struct lw_capture_reader *r)
{
	char tmpl[] = "/tmp/latwhy-report.XXXXXX", *root;
	const struct lw_capture_info *in = lw_capture_reader_info(r);
	struct lw_findings fs = {};
	struct lw_engine *e = lw_engine_new();
	struct lw_render *out = lw_render_new(stdout, o->json);
	enum lw_exit ret = LW_EXIT_FAIL;
	struct lw_summary s;
	int err;

	if (!e || !out) {
		fprintf(stderr, "latwhy: out of memory\n");
		goto cleanup;
	}
	if (o->json) {
		header_json(r, o->path);
		lw_engine_on_request(e, lw_requests_on_request, stdout);
	} else {
		header_text(r, o->path);
	}
	err = report_feed(r, e);
	if (err)
		fprintf(stderr, "latwhy: %s: read failed: %s; reporting what was read\n", o->path,
			strerror(-err));
	lw_engine_summarize(e, &s);
	root = report_node(r, tmpl);
	if (!root)
		fprintf(stderr, "latwhy: %s: no node snapshot: no findings\n", o->path);
	else if ((err = lw_explain(&s, root, (s.flags & LW_META_TARGET_EXITED) ? 0 : s.pid, &fs)))
		fprintf(stderr, "latwhy: %s: cannot read its node snapshot (%s): no findings\n",
			o->path, strerror(-err));
	lw_render_summary(out, &s, &fs);
	lw_findings_free(&fs);
	if (root)
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	ret = in->records ? LW_EXIT_OK : LW_EXIT_FAIL;
	if (!in->records)
		fprintf(stderr, "latwhy: %s: no records to report\n", o->path);
cleanup:
	lw_render_free(out);
	lw_engine_free(e);
	return ret;
}

enum lw_exit lw_cmd_report(int argc, char **argv)
{
	struct lw_capture_reader *r;
	struct report_opts o;
	char err[256];
	enum lw_exit ret;
	int p;

	p = report_parse(&o, argc, argv, err, sizeof(err));
	if (p == 1) {
		report_usage(stdout);
		return LW_EXIT_OK;
	}
	if (p) {
		fprintf(stderr, "latwhy: %s (see latwhy report --help)\n", err);
		return LW_EXIT_USAGE;
	}
	r = lw_capture_reader_open(o.path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "latwhy: %s: %s\n", o.path, err);
		return LW_EXIT_FAIL;
	}
	report_damage(r, o.path);
	if (lw_capture_reader_info(r)->abi_version != LW_ABI_VERSION) {
		fprintf(stderr, "latwhy: %s: its records are of ABI %u, this latwhy reads %u\n",
			o.path, lw_capture_reader_info(r)->abi_version, LW_ABI_VERSION);
		lw_capture_reader_close(r);
		return LW_EXIT_FAIL;
	}
	ret = report_run(&o, r);
	lw_capture_reader_close(r);
	return ret;
}
