// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* json.c - a tiny streaming JSON writer (see json.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "output/json.h"

void lw_json_init(struct lw_json *j, FILE *f, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
	j->first[0] = true;
}

static void out(struct lw_json *j, const char *s, size_t len)
{
	if (!j->err && fwrite(s, 1, len, j->f) != len)
		j->err = -EIO;
}

static void outs(struct lw_json *j, const char *s)
{
	out(j, s, strlen(s));
}

static void newline(struct lw_json *j)
{
	if (!j->pretty)
		return;
	outs(j, "\n");
	for (int i = 0; i < j->depth; i++)
		outs(j, "  ");
}

/* Separator before a value or a key: none right after a key, else a comma
 * unless this is the first element of its container. */
static void sep(struct lw_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		outs(j, ",");
	j->first[j->depth] = false;
	if (j->depth)
		newline(j);
}

static void container_open(struct lw_json *j, const char *c)
{
	sep(j);
	outs(j, c);
	if (j->depth + 1 >= LW_JSON_MAX_DEPTH) {
		j->err = j->err ? j->err : -E2BIG;
		return;
	}
	j->first[++j->depth] = true;
}

static void container_close(struct lw_json *j, const char *c)
{
	bool empty;

	if (!j->depth) {
		j->err = j->err ? j->err : -EINVAL;
		return;
	}
	empty = j->first[j->depth];
	j->depth--;
	if (!empty)
		newline(j);
	outs(j, c);
}

void lw_json_begin_object(struct lw_json *j)
{
	container_open(j, "{");
}

void lw_json_end_object(struct lw_json *j)
{
	container_close(j, "}");
}

void lw_json_begin_array(struct lw_json *j)
{
	container_open(j, "[");
}

void lw_json_end_array(struct lw_json *j)
{
	container_close(j, "]");
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629), 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void quoted(struct lw_json *j, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	char esc[8];

	outs(j, "\"");
	while (*s) {
		size_t n = utf8_len(s);

		if (!n) {
			outs(j, "\\ufffd");
			s++;
			continue;
		}
		if (n > 1) {
			out(j, (const char *)s, n);
			s += n;
			continue;
		}
		switch (*s) {
		case '"':
			outs(j, "\\\"");
			break;
		case '\\':
			outs(j, "\\\\");
			break;
		case '\n':
			outs(j, "\\n");
			break;
		case '\r':
			outs(j, "\\r");
			break;
		case '\t':
			outs(j, "\\t");
			break;
		default:
			if (*s < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *s);
				outs(j, esc);
			} else {
				out(j, (const char *)s, 1);
			}
		}
		s++;
	}
	outs(j, "\"");
}

void lw_json_key(struct lw_json *j, const char *key)
{
	sep(j);
	quoted(j, key);
	outs(j, j->pretty ? ": " : ":");
	j->after_key = true;
}

void lw_json_string(struct lw_json *j, const char *s)
{
	if (!s) {
		lw_json_null(j);
		return;
	}
	sep(j);
	quoted(j, s);
}

void lw_json_u64(struct lw_json *j, unsigned long long v)
{
	char b[32];

	sep(j);
	snprintf(b, sizeof(b), "%llu", v);
	outs(j, b);
}

void lw_json_i64(struct lw_json *j, long long v)
{
	char b[32];

	sep(j);
	snprintf(b, sizeof(b), "%lld", v);
	outs(j, b);
}

void lw_json_double(struct lw_json *j, double v)
{
	char b[40];

	if (!isfinite(v)) {
		lw_json_null(j);
		return;
	}
	sep(j);
	snprintf(b, sizeof(b), "%.15g", v);
	outs(j, b);
}

void lw_json_bool(struct lw_json *j, bool v)
{
	sep(j);
	outs(j, v ? "true" : "false");
}

void lw_json_null(struct lw_json *j)
{
	sep(j);
	outs(j, "null");
}

int lw_json_end(struct lw_json *j)
{
	if (j->depth && !j->err)
		j->err = -EINVAL; /* unclosed container */
	outs(j, "\n");
	if (!j->err && fflush(j->f))
		j->err = -errno;
	return j->err;
}

void lw_json_kstr(struct lw_json *j, const char *key, const char *s)
{
	lw_json_key(j, key);
	lw_json_string(j, s);
}

void lw_json_ku64(struct lw_json *j, const char *key, unsigned long long v)
{
	lw_json_key(j, key);
	lw_json_u64(j, v);
}

void lw_json_ki64(struct lw_json *j, const char *key, long long v)
{
	lw_json_key(j, key);
	lw_json_i64(j, v);
}

void lw_json_knull(struct lw_json *j, const char *key)
{
	lw_json_key(j, key);
	lw_json_null(j);
}

void lw_json_kdouble(struct lw_json *j, const char *key, double v)
{
	lw_json_key(j, key);
	lw_json_double(j, v);
}

void lw_json_kbool(struct lw_json *j, const char *key, bool v)
{
	lw_json_key(j, key);
	lw_json_bool(j, v);
}
