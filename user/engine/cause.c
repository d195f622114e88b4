// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include "engine/cause.h"

static const struct {
	const char *name;
	const char *label;
} causes[LW_CAUSE_MAX] = {
	[LW_CAUSE_NONE] = {"none", "no kernel cause (own run or sleep)"},
	[LW_CAUSE_FREQ] = {"frequency", "frequency"},
	[LW_CAUSE_IRQ] = {"irq", "irq + softirq"},
	[LW_CAUSE_THP] = {"thp", "thp"},
	[LW_CAUSE_SCHED] = {"sched", "sched"},
	[LW_CAUSE_IDLE] = {"idle", "idle"},
	[LW_CAUSE_QUOTA] = {"quota", "cpu quota (throttled)"},
	[LW_CAUSE_MEMORY] = {"memory", "memory (faults, reclaim)"},
};

const char *lw_cause_name(enum lw_cause c)
{
	return (unsigned)c < LW_CAUSE_MAX ? causes[c].name : "unknown";
}

const char *lw_cause_label(enum lw_cause c)
{
	return (unsigned)c < LW_CAUSE_MAX ? causes[c].label : "unknown";
}

int lw_cause_parse(const char *s, size_t len)
{
	for (int c = 0; c < LW_CAUSE_MAX; c++)
		if (strlen(causes[c].name) == len && !strncmp(s, causes[c].name, len))
			return c;
	return -EINVAL;
}
