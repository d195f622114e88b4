/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * finding.h - a finding: what was seen, why it hurts, and a reviewed fix.
 *
 * Findings come from two places that share this type: the node's switches
 * (node.c readers, judged by the advisors of adv.h) and what a trace measured
 * (the engine's cause shares). Renderers print them as text or JSON;
 * fixscript.c turns them into an apply/undo/verify script.
 */
#ifndef LW_FINDING_H
#define LW_FINDING_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "latwhy.h"
#include "engine/cause.h"

/* enum lw_cause, the causes latwhy attributes latency to, is the ABI's
 * (latwhy.h): the slow-request counters in the kernel are indexed by it.
 * It is also a finding's category; its names are engine/cause.h's. */

enum lw_severity {
	LW_SEV_INFO = 0,
	LW_SEV_WARN,
	LW_SEV_CRIT,
};

/* A growable array of owned strings. */
struct lw_strv {
	char **v;
	size_t n;
	size_t cap;
};

int lw_strv_add(struct lw_strv *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lw_strv_vadd(struct lw_strv *sv, const char *fmt, va_list ap);
void lw_strv_free(struct lw_strv *sv);

struct lw_finding {
	enum lw_cause cause;
	enum lw_severity severity;
	char *seen;		 /* what was observed, with values */
	char *why;		 /* one line: why it hurts latency */
	char *evidence;		 /* measured numbers backing it (trace findings) */
	char *cost;		 /* what the fix costs, NULL if nothing notable */
	struct lw_strv fix;	 /* exact commands, applied now */
	struct lw_strv persist;	 /* how to make it survive a reboot */
	struct lw_strv rollback; /* commands restoring today's values */
	struct lw_strv verify;	 /* how to check it worked */
};

struct lw_findings {
	struct lw_finding *v;
	size_t n;
	size_t cap;
};

/* Append a zeroed finding; NULL and errno = ENOMEM on failure. */
struct lw_finding *lw_findings_add(struct lw_findings *fs, enum lw_cause cause,
				   enum lw_severity sev);
void lw_findings_free(struct lw_findings *fs);
/* Printf into a newly allocated string stored in *dst (freeing the old one). */
int lw_set(char **dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lw_vset(char **dst, const char *fmt, va_list ap);

const char *lw_severity_name(enum lw_severity s); /* "info", "warn", "crit" */

/* Whether a softirq evidence row, by its name (lw_softirq_name()), counts
 * waits, not runs of a vector: the two rows that are not one, a target's
 * data waiting for NET_RX and a target waiting behind ksoftirqd */
bool lw_softirq_is_wait(const char *vec);
/* What such a row counts: "runs" or "waits" */
const char *lw_softirq_unit(const char *vec);

#endif /* LW_FINDING_H */
