/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* list.h - comma-separated lists of names ("irq,thp", a --skip list). */
#ifndef LW_LIST_H
#define LW_LIST_H

#include <stdbool.h>

/* name is one of the comma-separated list's entries */
bool lw_list_has(const char *list, const char *name);

#endif /* LW_LIST_H */
