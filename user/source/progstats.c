// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * progstats.c - run time and run count of each program the tracer loaded,
 * as the kernel keeps them in bpf_prog_info. A program loaded but detached
 * (serve --sample) keeps its counters; one never loaded has no fd and no row.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "source/tracer_int.h"
#include "source/progstats.h"

int lw_tracer_prog_stats(const struct lw_tracer *t, struct lw_prog_stat *out, int max)
{
	struct bpf_program *p;
	int n = 0;

	bpf_object__for_each_program(p, t->skel->obj)
	{
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0)
			continue;
		if (n == max)
			break;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(p));
		out[n].run_ns = info.run_time_ns;
		out[n].run_cnt = info.run_cnt;
		n++;
	}
	return n;
}
