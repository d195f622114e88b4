// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * thp.c - transparent huge pages and khugepaged.
 */
#include <stdio.h>
#include <string.h>

#include "node/node.h"
#include "node/read.h"
#include "node/sysfs.h"

#define SYS_THP "/sys/kernel/mm/transparent_hugepage"

/* The bracketed word of a selector file ("always [madvise] never"), or the
 * whole content when there is no bracket. */
static void selected_word(const char *line, char *out, size_t len)
{
	const char *a = strchr(line, '[');
	const char *b = a ? strchr(a, ']') : NULL;
	size_t l;

	if (!a || !b) {
		snprintf(out, len, "%s", line);
		return;
	}
	l = (size_t)(b - a - 1);
	if (l >= len)
		l = len - 1;
	memcpy(out, a + 1, l);
	out[l] = '\0';
}

void lw_node_read_thp(struct lw_node *n)
{
	struct lw_thp *t = &n->thp;
	char b[256];

	t->kh_defrag = -1;
	t->pages_to_scan = t->scan_sleep_ms = t->alloc_sleep_ms = -1;
	if (lw_sysfs_read(n->root, b, sizeof(b), SYS_THP "/enabled"))
		return;
	t->present = true;
	selected_word(b, t->enabled, sizeof(t->enabled));
	if (!lw_sysfs_read(n->root, b, sizeof(b), SYS_THP "/defrag"))
		selected_word(b, t->defrag, sizeof(t->defrag));
	READ_NUM(n->root, t->kh_defrag, -1, SYS_THP "/khugepaged/defrag");
	READ_NUM(n->root, t->pages_to_scan, -1, SYS_THP "/khugepaged/pages_to_scan");
	READ_NUM(n->root, t->scan_sleep_ms, -1, SYS_THP "/khugepaged/scan_sleep_millisecs");
	READ_NUM(n->root, t->alloc_sleep_ms, -1, SYS_THP "/khugepaged/alloc_sleep_millisecs");
}
