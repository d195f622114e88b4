/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cause.h - the names of the causes (enum lw_cause, bpf/latwhy.h), one
 * table for every place that prints or parses one: text, JSON, HTML, the
 * Trace Event file, serve's cause label, --causes and --capture-on.
 */
#ifndef LW_CAUSE_H
#define LW_CAUSE_H

#include <stddef.h>

#include "latwhy.h"

/* Every traced cause, in enum order: what --causes takes. */
#define LW_CAUSES_ALL "frequency,irq,thp,sched,idle,quota,memory"

/* "none", "frequency", "irq", ...; "unknown" out of range */
const char *lw_cause_name(enum lw_cause c);
/* What a chart's legend says of it: "irq + softirq", "cpu quota (throttled)" */
const char *lw_cause_label(enum lw_cause c);
/* The cause named by the len bytes at s (not NUL-terminated), "none"
 * included: its enum value, or -EINVAL. */
int lw_cause_parse(const char *s, size_t len);

#endif /* LW_CAUSE_H */
