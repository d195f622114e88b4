// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cpuset.c - CPU sets in the kernel's cpulist and cpumask forms. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"

static int cpuset_add_range(struct lw_cpuset *s, long a, long b)
{
	if (a < 0 || b < a || b >= LW_NODE_MAX_CPUS)
		return -ERANGE;
	for (long c = a; c <= b; c++)
		lw_cpuset_set(s, (int)c);
	return 0;
}

int lw_cpuset_parse_list(struct lw_cpuset *s, const char *list)
{
	const char *p = list;

	memset(s, 0, sizeof(*s));
	while (*p) {
		char *end;
		long a, b;

		while (isspace((unsigned char)*p) || *p == ',')
			p++;
		if (!*p)
			break;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = strtol(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			b = strtol(p, &end, 10);
		}
		if (*end && *end != ',' && !isspace((unsigned char)*end))
			return -EINVAL;
		if (cpuset_add_range(s, a, b))
			return -ERANGE;
		p = end;
	}
	return 0;
}

/* Comma-separated 32-bit hex groups, most significant first. */
int lw_cpuset_parse_mask(struct lw_cpuset *s, const char *mask)
{
	const char *end = mask + strlen(mask);
	int group = 0;

	memset(s, 0, sizeof(*s));
	while (end > mask && isspace((unsigned char)end[-1]))
		end--;
	while (end > mask) {
		const char *start = end;
		unsigned long long v = 0;
		int shift = 0;

		while (start > mask && start[-1] != ',')
			start--;
		for (const char *c = end - 1; c >= start; c--) {
			int d;

			if (isspace((unsigned char)*c))
				continue;
			if (!isxdigit((unsigned char)*c) || shift >= 32)
				return -EINVAL;
			d = isdigit((unsigned char)*c) ? *c - '0'
						       : tolower((unsigned char)*c) - 'a' + 10;
			v |= (unsigned long long)d << shift;
			shift += 4;
		}
		for (int b = 0; b < 32; b++) {
			if ((v >> b) & 1) {
				if (group * 32 + b >= LW_NODE_MAX_CPUS)
					return -ERANGE;
				lw_cpuset_set(s, group * 32 + b);
			}
		}
		group++;
		end = start > mask ? start - 1 : start;
	}
	return 0;
}

char *lw_cpuset_format(const struct lw_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (int c = 0; c < LW_NODE_MAX_CPUS; c++) {
		int e = c;
		int w;

		if (!lw_cpuset_test(s, c))
			continue;
		while (lw_cpuset_test(s, e + 1))
			e++;
		if (e == c)
			w = snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
		else
			w = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, e);
		if (w < 0 || (size_t)w >= len - off) {
			buf[off] = '\0'; /* truncated: keep whole ranges only */
			break;
		}
		off += w;
		c = e;
	}
	return buf;
}

char *lw_cpuset_format_mask(const struct lw_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;
	int top;

	if (!len)
		return buf;
	/* 32-bit groups, most significant first; the first without zeros */
	for (top = LW_NODE_MAX_CPUS / 32 - 1; top > 0; top--)
		if ((s->w[top / 2] >> (top % 2 * 32)) & 0xffffffffULL)
			break;
	buf[0] = '\0';
	for (int g = top; g >= 0; g--) {
		unsigned v = (unsigned)(s->w[g / 2] >> (g % 2 * 32));
		int w = snprintf(buf + off, len - off, g == top ? "%x" : ",%08x", v);

		if (w < 0 || (size_t)w >= len - off) {
			snprintf(buf, len, "?");
			break;
		}
		off += w;
	}
	return buf;
}

int lw_cpuset_count(const struct lw_cpuset *s)
{
	int n = 0;

	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		n += __builtin_popcountll(s->w[i]);
	return n;
}

int lw_cpuset_first(const struct lw_cpuset *s)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		if (s->w[i])
			return i * 64 + __builtin_ctzll(s->w[i]);
	return -1;
}

bool lw_cpuset_intersects(const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

void lw_cpuset_and(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void lw_cpuset_andnot(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

void lw_cpuset_or(struct lw_cpuset *dst, const struct lw_cpuset *a, const struct lw_cpuset *b)
{
	for (int i = 0; i < LW_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}
