// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * captures.c - latwhy_captures_total{target,reason}: the hindsight captures
 * serve wrote. The writer thread counts, the HTTP thread renders: both under
 * the exporter's lock, held for a few counters.
 */
#include <string.h>

#include "export/export_int.h"

/* The reason's row, added when new and there is room; NULL else. Locked. */
static __u64 *reason_row(struct lw_export *x, const char *reason)
{
	for (size_t i = 0; i < x->ncaptures; i++)
		if (!strcmp(x->captures[i].reason, reason))
			return &x->captures[i].n;
	if (x->ncaptures == LW_EXPORT_REASONS)
		return NULL;
	snprintf(x->captures[x->ncaptures].reason, sizeof(x->captures[0].reason), "%s", reason);
	x->captures[x->ncaptures].n = 0;
	return &x->captures[x->ncaptures++].n;
}

void lw_export_capture_reason(struct lw_export *x, const char *reason)
{
	pthread_mutex_lock(&x->lock);
	reason_row(x, reason);
	pthread_mutex_unlock(&x->lock);
}

void lw_export_capture_written(struct lw_export *x, const char *reason)
{
	__u64 *n;

	pthread_mutex_lock(&x->lock);
	n = reason_row(x, reason);
	if (n)
		(*n)++;
	pthread_mutex_unlock(&x->lock);
}

void lw_export_captures_write(struct lw_export *x, FILE *f)
{
	__typeof__(x->captures) rows;
	size_t n;

	pthread_mutex_lock(&x->lock);
	n = x->ncaptures;
	memcpy(rows, x->captures, sizeof(rows));
	pthread_mutex_unlock(&x->lock);
	if (!n)
		return;
	lw_export_family(f, "latwhy_captures_total", "counter",
			 "Hindsight capture files written, by what triggered them.");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "latwhy_captures_total{target=\"");
		lw_export_label(f, x->ser[0].label); /* set before serving */
		fprintf(f, "\",reason=\"");
		lw_export_label(f, rows[i].reason);
		fprintf(f, "\"} %llu\n", (unsigned long long)rows[i].n);
	}
}
