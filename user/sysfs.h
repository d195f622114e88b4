/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sysfs.h - read small sysfs/procfs files below a root directory. */
#ifndef LW_SYSFS_H
#define LW_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

/* Read root/<fmt...> into buf, trailing newline stripped. 0 or -errno. */
int lw_sysfs_read(const char *root, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int lw_sysfs_read_long(const char *root, long *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool lw_sysfs_exists(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* LW_SYSFS_H */
