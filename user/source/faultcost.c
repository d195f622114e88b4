// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * faultcost.c - measure what one page fault costs beyond its traced span
 * (faultcost.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "source/faultcost.h"
#include "source/tracer_int.h"

#define LW_CALIB_BASE	  256	   /* clock-read pairs around a present page */
#define LW_FAULT_COST_MAX 20000ULL /* 20 us: no fault's entry and exit */
#define LW_CALIB_PAGE	  4096

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

__u64 lw_faultcost_median(const __u64 *gap, const __u64 *span, size_t n, __u64 base)
{
	__u64 *d, med = 0;
	size_t m = 0;

	if (!n)
		return 0;
	d = calloc(n, sizeof(*d));
	if (!d)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (span[i] && gap[i] > span[i] + base)
			d[m++] = gap[i] - span[i] - base;
	if (m * 2 >= n) {
		qsort(d, m, sizeof(*d), cmp_u64);
		med = d[m / 2];
	}
	free(d);
	return med;
}

/* The clock reads' own cost around an access that does not fault. */
static __u64 base_ns(volatile char *page)
{
	__u64 g[LW_CALIB_BASE];

	page[0] = 1;
	for (int i = 0; i < LW_CALIB_BASE; i++) {
		__u64 t0 = mono_ns();

		page[0] = 2;
		g[i] = mono_ns() - t0;
	}
	qsort(g, LW_CALIB_BASE, sizeof(g[0]), cmp_u64);
	return g[LW_CALIB_BASE / 2];
}

int lw_faultcost_measure(struct lw_tracer *t, __u64 *cost_ns)
{
	struct latwhy_bpf__bss *bss = t->skel->bss;
	size_t len = (LW_FAULT_CALIB + 1) * (size_t)LW_CALIB_PAGE;
	__u64 *gap, base;
	char *mem;
	int err = 0;

	*cost_ns = 0;
	if (!t->skel->rodata->memory_known)
		return -ENOTSUP;
	gap = calloc(LW_FAULT_CALIB, sizeof(*gap));
	if (!gap)
		return -ENOMEM;
	memset(gap, 0, LW_FAULT_CALIB * sizeof(*gap)); /* its own faults before, not in */
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	/* one fault a page: a huge page would take them all at once */
	madvise(mem, len, MADV_NOHUGEPAGE);
	base = base_ns(mem);
	memset((void *)bss->calib_span, 0, sizeof(bss->calib_span));
	__atomic_store_n(&bss->calib_n, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&bss->calib_tid, (__u32)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (size_t i = 0; i < LW_FAULT_CALIB; i++) {
		volatile char *p = mem + (i + 1) * LW_CALIB_PAGE;
		__u64 t0 = mono_ns();

		*p = 1;
		gap[i] = mono_ns() - t0;
	}
	__atomic_store_n(&bss->calib_tid, 0, __ATOMIC_SEQ_CST);
	/* a fault more or less (its own, the programs' lost one) and the
	 * pairs no longer match */
	if (__atomic_load_n(&bss->calib_n, __ATOMIC_RELAXED) != LW_FAULT_CALIB)
		err = -EAGAIN;
	else
		*cost_ns = lw_faultcost_median(gap, (const __u64 *)bss->calib_span, LW_FAULT_CALIB,
					       base);
	if (!err && !*cost_ns)
		err = -EAGAIN;
	if (*cost_ns > LW_FAULT_COST_MAX) {
		*cost_ns = 0;
		err = -ERANGE;
	}
	bss->fault_entry_ns = (__u32)*cost_ns;
	munmap(mem, len);
out:
	free(gap);
	return err;
}
