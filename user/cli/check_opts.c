// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* check_opts.c - option parsing for `latwhy check ...`. */
#include <errno.h>
#include <string.h>

#include "cli/check_opts.h"
#include "cli/parse.h"

void lw_check_opts_usage(FILE *f)
{
	fprintf(f,
		"Usage: latwhy check [-p PID] [--json] [--root DIR] [--sample MS] "
		"[--fix-script FILE]\n"
		"\n"
		"Read the node's latency switches (CPU frequency, idle states, IRQs, THP, NIC\n"
		"queues, a process's CPUs and quota) and say what to change. No BPF.\n"
		"\n"
		"  -p, --pid PID        also check this process: CPUs, cgroup quota, THP use\n"
		"  -j, --json           one JSON object on stdout\n"
		"  -r, --root DIR       read sysfs/procfs under DIR (default /)\n"
		"  -s, --sample MS      IRQ rate sample length (default %d, 0 = none)\n"
		"  -f, --fix-script F   write F, F.undo and F.verify (never run by latwhy)\n"
		"  -h, --help           this help\n",
		LW_CHECK_SAMPLE_MS);
}

/* One of check's options: lw_opt_fn's returns. */
static int check_opt(void *ctx, int c, const char *arg, char *err, size_t errlen)
{
	struct lw_check_opts *o = ctx;
	unsigned long v;

	switch (c) {
	case 'p':
		if (lw_parse_pid(arg, &o->pid)) {
			snprintf(err, errlen, "invalid pid '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case 'j':
		o->json = true;
		return 0;
	case 'r':
		o->root = arg;
		return 0;
	case 's':
		if (lw_parse_uint(arg, 0, 60000, &v)) {
			snprintf(err, errlen, "invalid sample length '%s' (0-60000 ms)", arg);
			return -EINVAL;
		}
		o->sample_ms = (unsigned)v;
		return 0;
	case 'f':
		o->fix_script = arg;
		return 0;
	}
	return -ENOENT;
}

int lw_check_opts_parse(struct lw_check_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"root", required_argument, NULL, 'r'},
		{"sample", required_argument, NULL, 's'},
		{"fix-script", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	const struct lw_cmdline cl = {
		.shortopts = "p:jr:s:f:",
		.longopts = longopts,
		.take = check_opt,
		.ctx = o,
	};
	int first;

	memset(o, 0, sizeof(*o));
	o->sample_ms = LW_CHECK_SAMPLE_MS;
	o->root = "/";
	return lw_getopt(&cl, argc, argv, &first, err, errlen);
}
