/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* fmt.h - numbers for humans, shared by every printer. */
#ifndef LW_FMT_H
#define LW_FMT_H

#include <stddef.h>
#include <linux/types.h>

/* Format a duration for humans: "1.25 ms". Returns buf. */
const char *lw_fmt_ns(char *buf, size_t len, __u64 ns);
/* A size for humans: "1.3 MiB". Returns buf. */
const char *lw_fmt_bytes(char *buf, size_t len, __u64 bytes);

#endif /* LW_FMT_H */
