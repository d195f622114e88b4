// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_check.c - `latwhy check`: read the node's switches, judge them, print
 * what was read and the findings, and optionally write a reviewed fix script.
 *
 * Works without BPF and without root (unreadable files are reported as
 * absent). The IRQ sample is the only wait: --sample 0 skips it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advice/advise.h"
#include "advice/fixscript.h"
#include "output/node.h"
#include "cli/check_opts.h"
#include "cli/cmd.h"
#include "output/findings.h"
#include "source/irqcost.h"

static int emit(const struct lw_check_opts *o, const struct lw_node *n,
		const struct lw_findings *fs)
{
	struct lw_json j;

	if (!o->json) {
		lw_node_print(stdout, n);
		printf("\n");
		lw_findings_print(stdout, fs, LW_FINDINGS_REPORT);
		return fflush(stdout) ? -errno : 0;
	}
	lw_json_init(&j, stdout, true);
	lw_json_begin_object(&j);
	lw_json_key(&j, "node");
	lw_node_json(&j, n);
	lw_json_key(&j, "findings");
	lw_findings_json(&j, fs);
	lw_json_end_object(&j);
	return lw_json_end(&j);
}

/* The IRQ sample, and on this machine (not a fixture tree) the cost of one
 * interrupt's entry and exit. */
static int sample(const struct lw_check_opts *o, struct lw_node *n)
{
	__u64 cost;
	int err;

	err = lw_node_sample_irqs(n, o->sample_ms);
	if (err) {
		fprintf(stderr, "latwhy check: sampling interrupts: %s\n", strerror(-err));
		return err;
	}
	if (!strcmp(o->root, "/") && !lw_irqcost_measure_here("/", &cost))
		n->irq_entry_ns = cost;
	return 0;
}

static int write_fix_script(const struct lw_check_opts *o, const struct lw_findings *fs)
{
	int err;

	err = lw_fixscript_write(fs, o->root, o->fix_script);
	if (err) {
		fprintf(stderr, "latwhy check: writing %s: %s\n", o->fix_script, strerror(-err));
		return err;
	}
	fprintf(stderr,
		"latwhy check: wrote %s, %s.undo and %s.verify: review them, latwhy never "
		"runs them\n",
		o->fix_script, o->fix_script, o->fix_script);
	return 0;
}

static enum lw_exit check_run(const struct lw_check_opts *o)
{
	struct lw_findings fs = {0};
	enum lw_exit rc = LW_EXIT_FAIL;
	struct lw_node n;
	int err;

	err = lw_node_read(&n, o->root, o->pid);
	if (err == -ESRCH) {
		fprintf(stderr, "latwhy check: no process with pid %d\n", o->pid);
		goto cleanup;
	}
	if (err) {
		fprintf(stderr, "latwhy check: reading %s: %s\n", o->root, strerror(-err));
		goto cleanup;
	}
	if (o->sample_ms && sample(o, &n))
		goto cleanup;
	err = lw_advise_node(&n, &fs);
	if (err) {
		fprintf(stderr, "latwhy check: %s\n", strerror(-err));
		goto cleanup;
	}
	err = emit(o, &n, &fs);
	if (err) {
		fprintf(stderr, "latwhy check: writing output: %s\n", strerror(-err));
		goto cleanup;
	}
	if (o->fix_script && write_fix_script(o, &fs))
		goto cleanup;
	rc = LW_EXIT_OK;
cleanup:
	lw_findings_free(&fs);
	lw_node_free(&n);
	return rc;
}

enum lw_exit lw_cmd_check(int argc, char **argv)
{
	struct lw_check_opts o;
	char err[256];
	int ret;

	ret = lw_cmd_parsed("check", lw_check_opts_parse(&o, argc, argv, err, sizeof(err)), err,
			    lw_check_opts_usage);
	if (ret >= 0)
		return ret;
	return check_run(&o);
}
