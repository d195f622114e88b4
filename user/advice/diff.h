/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * diff.h - two captures side by side (two hosts, or one before and after a
 * change): which node switches differ, and which of them explain the
 * difference in causes, most likely first. Field case 1 in one call.
 */
#ifndef LW_DIFF_H
#define LW_DIFF_H

#include <stddef.h>

#include "advice/finding.h"
#include "engine/engine.h"
#include "node/node.h"

#define LW_DIFF_MAX 32

/* A node switch whose value differs between the two, and the cause it
 * bears on. */
struct lw_diff_switch {
	enum lw_cause cause;
	char name[40]; /* "governor", "THP enabled", ... */
	char v[2][96]; /* its value on each */
};

/* A cause whose share of the slow requests' time grew on the slower side,
 * and the switches of its domain that differ. */
struct lw_diff_cause {
	enum lw_cause cause;
	double share[2];	/* of each side's slow-request time; <0: not measured */
	size_t sw[LW_DIFF_MAX]; /* indexes into lw_diff::sw */
	size_t nr_sw;
};

struct lw_diff {
	int slower; /* 0 or 1: the side with the higher p99; -1: the same */
	struct lw_diff_switch sw[LW_DIFF_MAX];
	size_t nr_sw;
	struct lw_diff_cause why[LW_CAUSE_MAX]; /* most likely first */
	size_t nr_why;
};

/* Compare s[0] on n[0] with s[1] on n[1] (a node may be NULL: not
 * recorded). */
void lw_diff_build(const struct lw_summary *const s[2], const struct lw_node *const n[2],
		   struct lw_diff *d);

#endif /* LW_DIFF_H */
