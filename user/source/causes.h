/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * causes.h - which tracepoints each cause of slow requests needs, for
 * serve --causes: the causes left out become tracepoints not attached.
 */
#ifndef LW_CAUSES_H
#define LW_CAUSES_H

#include <stddef.h>

/*
 * The tracepoints of the causes not in list (comma-separated cause names),
 * appended to skip (a comma-separated list of len bytes at most). sched is
 * always traced: every other cause is measured along its events. 0; -EINVAL
 * with a one-line message in err for a name that is no cause, -ENOSPC when
 * skip is full.
 */
int lw_causes_skip(const char *list, char *skip, size_t len, char *err, size_t errlen);

#endif /* LW_CAUSES_H */
