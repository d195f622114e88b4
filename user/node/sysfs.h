/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sysfs.h - read small sysfs/procfs files below a root directory, so every
 * reader runs unchanged on fixture trees in tests. Paths are absolute
 * ("/sys/...") and taken relative to root.
 */
#ifndef LW_SYSFS_H
#define LW_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

/* root + the formatted path into buf; -ENAMETOOLONG if it does not fit. */
int lw_sysfs_path(char *buf, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* First line of the file, trailing whitespace stripped; "" and -errno (or
 * -ENODATA for an empty file) when unreadable. */
int lw_sysfs_read(const char *root, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The file's first line as a number; -EINVAL if it is not one. */
int lw_sysfs_read_ll(const char *root, long long *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool lw_sysfs_exists(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Call fn(ctx, path) with every path this thread builds below a root from
 * now on (path relative to the root, "/sys/..."); fn NULL stops. Other
 * threads' reads are not recorded. For lw_snapshot. */
void lw_sysfs_set_recorder(void (*fn)(void *ctx, const char *path), void *ctx);
/* Strip trailing whitespace in place. */
void lw_rtrim(char *s);
/* A decimal number, optionally followed by whitespace. */
int lw_parse_ll(const char *s, long long *v);
/* A non-empty string of decimal digits (a PID, a CPU or IRQ number). */
bool lw_is_number(const char *s);

#endif /* LW_SYSFS_H */
