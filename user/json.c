// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* json.c - streaming JSON writer. */
#include <math.h>

#include "json.h"

void lw_json_init(struct lw_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	j->after_key = false;
}

/* Separator before a value or key at the current level. */
static void sep(struct lw_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
}

static void open(struct lw_json *j, char c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth + 1 < LW_JSON_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_(struct lw_json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

void lw_json_begin_object(struct lw_json *j)
{
	open(j, '{');
}

void lw_json_end_object(struct lw_json *j)
{
	close_(j, '}');
}

void lw_json_begin_array(struct lw_json *j)
{
	open(j, '[');
}

void lw_json_end_array(struct lw_json *j)
{
	close_(j, ']');
}

static void put_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void lw_json_key(struct lw_json *j, const char *key)
{
	sep(j);
	put_escaped(j->f, key);
	fputc(':', j->f);
	j->after_key = true;
}

void lw_json_str(struct lw_json *j, const char *s)
{
	sep(j);
	put_escaped(j->f, s ? s : "");
}

void lw_json_u64(struct lw_json *j, unsigned long long v)
{
	sep(j);
	fprintf(j->f, "%llu", v);
}

void lw_json_i64(struct lw_json *j, long long v)
{
	sep(j);
	fprintf(j->f, "%lld", v);
}

void lw_json_double(struct lw_json *j, double v)
{
	sep(j);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f); /* JSON has no NaN/Inf */
}

void lw_json_bool(struct lw_json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void lw_json_null(struct lw_json *j)
{
	sep(j);
	fputs("null", j->f);
}

void lw_json_kv_str(struct lw_json *j, const char *key, const char *s)
{
	lw_json_key(j, key);
	lw_json_str(j, s);
}

void lw_json_kv_u64(struct lw_json *j, const char *key, unsigned long long v)
{
	lw_json_key(j, key);
	lw_json_u64(j, v);
}

void lw_json_kv_i64(struct lw_json *j, const char *key, long long v)
{
	lw_json_key(j, key);
	lw_json_i64(j, v);
}

void lw_json_kv_double(struct lw_json *j, const char *key, double v)
{
	lw_json_key(j, key);
	lw_json_double(j, v);
}

void lw_json_kv_bool(struct lw_json *j, const char *key, bool v)
{
	lw_json_key(j, key);
	lw_json_bool(j, v);
}

void lw_json_kv_null(struct lw_json *j, const char *key)
{
	lw_json_key(j, key);
	lw_json_null(j);
}
