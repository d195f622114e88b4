// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fmt.c - numbers for humans (see fmt.h). */
#include <stdio.h>

#include "lib/fmt.h"

const char *lw_fmt_ns(char *buf, size_t len, __u64 ns)
{
	/* thresholds sit where rounding would print "1000.0" of a unit */
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 999950)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 999995000)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
	return buf;
}

const char *lw_fmt_bytes(char *buf, size_t len, __u64 bytes)
{
	if (bytes < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
	else if (bytes < 1024ULL * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
	else
		snprintf(buf, len, "%.1f GiB", bytes / 1073741824.0);
	return buf;
}
