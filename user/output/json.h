/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * json.h - a tiny streaming JSON writer.
 *
 * Commas, colons and nesting are tracked here, so callers only say what comes
 * next. Strings are escaped and made valid UTF-8 (bad bytes become U+FFFD);
 * non-finite doubles are written as null. Errors are sticky: check
 * lw_json_end() once at the end.
 */
#ifndef LW_JSON_H
#define LW_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define LW_JSON_MAX_DEPTH 32

struct lw_json {
	FILE *f;
	bool pretty; /* newline + two spaces per level */
	int depth;
	bool first[LW_JSON_MAX_DEPTH]; /* no element written yet at this level */
	bool after_key;		       /* a key was written, its value is next */
	int err;		       /* first error, negative errno */
};

void lw_json_init(struct lw_json *j, FILE *f, bool pretty);
void lw_json_begin_object(struct lw_json *j);
void lw_json_end_object(struct lw_json *j);
void lw_json_begin_array(struct lw_json *j);
void lw_json_end_array(struct lw_json *j);
void lw_json_key(struct lw_json *j, const char *key);
void lw_json_string(struct lw_json *j, const char *s); /* NULL writes null */
void lw_json_u64(struct lw_json *j, unsigned long long v);
void lw_json_i64(struct lw_json *j, long long v);
void lw_json_double(struct lw_json *j, double v);
void lw_json_bool(struct lw_json *j, bool v);
void lw_json_null(struct lw_json *j);
/* Finish: a newline after the top-level value; 0 or the first error. */
int lw_json_end(struct lw_json *j);

/* Key + value shorthands for objects. */
void lw_json_kstr(struct lw_json *j, const char *key, const char *s);
void lw_json_ku64(struct lw_json *j, const char *key, unsigned long long v);
void lw_json_ki64(struct lw_json *j, const char *key, long long v);
void lw_json_kdouble(struct lw_json *j, const char *key, double v);
void lw_json_kbool(struct lw_json *j, const char *key, bool v);
void lw_json_knull(struct lw_json *j, const char *key);

#endif /* LW_JSON_H */
