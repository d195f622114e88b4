/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * scrape.h - reading the exporter's text in unit tests (test_export.c,
 * test_sample.c): a sample's value, lines with a prefix, a rendering.
 * Include after <cmocka.h> and "export/export.h".
 */
#ifndef LW_TEST_SCRAPE_H
#define LW_TEST_SCRAPE_H

#include <stdlib.h>
#include <string.h>

/* The value of the sample whose name and labels are key; -1 when absent. */
static inline double sample(const char *text, const char *key)
{
	size_t l = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, l) && p[l] == ' ')
			return strtod(p + l + 1, NULL);
	return -1;
}

static inline int count_lines(const char *text, const char *prefix)
{
	int n = 0;
	size_t l = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, prefix, l);
	return n;
}

/* x's exposition, whole (its length as the exporter says); the caller frees it. */
static inline char *render(struct lw_export *x)
{
	size_t len;
	char *t = lw_export_render(x, &len);

	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	return t;
}

#endif /* LW_TEST_SCRAPE_H */
