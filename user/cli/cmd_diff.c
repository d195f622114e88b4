// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_diff.c - `latwhy diff A.lwy B.lwy [--json]`: two captures as sources,
 * each through its own engine and node snapshot, compared (advice/diff.c)
 * and printed side by side. The fixes offered are the slower side's own
 * findings, judged on its recorded node.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "advice/diff.h"
#include "advice/explain.h"
#include "cli/cmd.h"
#include "capture/source.h"
#include "cli/parse.h"
#include "output/diff.h"

static void diff_usage(FILE *f)
{
	fprintf(f, "Usage: latwhy diff A.lwy B.lwy [--json]\n"
		   "\n"
		   "Two captures side by side (two hosts, or one host before and after a change):\n"
		   "latency, slow requests and cause shares of each, every node switch that\n"
		   "differs, and which differences explain the causes that grew on the slower\n"
		   "one, most likely first, with that side's fixes. No root, no BPF.\n"
		   "\n"
		   "  -j, --json   one JSON object\n");
}

static int diff_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	if (c != 'j')
		return -ENOENT;
	*(bool *)ctx = true;
	return 0;
}

/* 0; 1 for help; -EINVAL with a message in err */
static int diff_parse(int argc, char **argv, const char *file[2], bool *json, char *err, size_t len)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	const struct lw_cmdline cl = {
		.shortopts = "j",
		.longopts = longopts,
		.take = diff_opt,
		.ctx = json,
		.min_args = 2,
		.max_args = 2,
	};
	int first, ret;

	*json = false;
	ret = lw_getopt(&cl, argc, argv, &first, err, len);
	if (ret < 0 && !err[0])
		snprintf(err, len, "diff takes two capture files: latwhy diff A.lwy B.lwy");
	if (!ret) {
		file[0] = argv[first];
		file[1] = argv[first + 1];
	}
	return ret;
}

struct diff_input {
	struct lw_capture_source l;
	struct lw_summary s;
	struct lw_node n;
	bool has_node;
	struct lw_findings fs;
	char host[128];
};

static int diff_load(struct diff_input *in, const char *file)
{
	const char *h, *k;

	if (lw_capture_source_open(&in->l, file, NULL, NULL))
		return -1;
	lw_capture_source_run(&in->l, NULL);
	lw_engine_summarize(in->l.e, &in->s);
	in->has_node = !lw_capture_source_node(&in->l, &in->s, &in->n);
	if (in->has_node)
		lw_explain(&in->s, in->l.root,
			   (in->s.flags & LW_META_TARGET_EXITED) ? 0 : in->s.pid, &in->fs);
	h = lw_capture_source_fact(&in->l, LW_CHUNK_HOST, "hostname");
	k = lw_capture_source_fact(&in->l, LW_CHUNK_HOST, "kernel_release");
	snprintf(in->host, sizeof(in->host), "%s, kernel %s", h ? h : "?", k ? k : "?");
	return 0;
}

static void diff_free(struct diff_input *in)
{
	if (in->has_node)
		lw_node_free(&in->n);
	lw_findings_free(&in->fs);
	lw_capture_source_close(&in->l);
}

enum lw_exit lw_cmd_diff(int argc, char **argv)
{
	struct diff_input in[2] = {};
	struct lw_diff_side side[2];
	enum lw_exit ret = LW_EXIT_FAIL;
	const char *file[2] = {NULL, NULL};
	struct lw_diff d;
	char err[256];
	bool json;
	int p = lw_cmd_parsed("diff", diff_parse(argc, argv, file, &json, err, sizeof(err)), err,
			      diff_usage);

	/* a closed pipe (report | head) ends the output, not the process:
	 * the capture's temporary node tree is still removed */
	signal(SIGPIPE, SIG_IGN);
	if (p >= 0)
		return p;
	if (diff_load(&in[0], file[0]) || diff_load(&in[1], file[1]))
		goto cleanup;
	{
		const struct lw_summary *const s[2] = {&in[0].s, &in[1].s};
		const struct lw_node *const n[2] = {in[0].has_node ? &in[0].n : NULL,
						    in[1].has_node ? &in[1].n : NULL};

		lw_diff_build(s, n, &d);
	}
	for (int i = 0; i < 2; i++)
		side[i] = (struct lw_diff_side){
			.file = file[i], .host = in[i].host, .s = &in[i].s, .fs = &in[i].fs};
	if (json)
		lw_diff_json(stdout, side, &d);
	else
		lw_diff_print(stdout, side, &d);
	ret = LW_EXIT_OK;
cleanup:
	diff_free(&in[0]);
	diff_free(&in[1]);
	return ret;
}
