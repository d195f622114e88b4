// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* finding.c - owned-string helpers for findings. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice/finding.h"

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

int lw_strv_vadd(struct lw_strv *sv, const char *fmt, va_list ap)
{
	char *s;

	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 4;
		char **v = realloc(sv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sv->v = v;
		sv->cap = cap;
	}
	s = vfmt(fmt, ap);
	if (!s)
		return -ENOMEM;
	sv->v[sv->n++] = s;
	return 0;
}

int lw_strv_add(struct lw_strv *sv, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = lw_strv_vadd(sv, fmt, ap);
	va_end(ap);
	return err;
}

void lw_strv_free(struct lw_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

int lw_vset(char **dst, const char *fmt, va_list ap)
{
	char *s = vfmt(fmt, ap);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int lw_set(char **dst, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = lw_vset(dst, fmt, ap);
	va_end(ap);
	return err;
}

struct lw_finding *lw_findings_add(struct lw_findings *fs, enum lw_cause cause,
				   enum lw_severity sev)
{
	struct lw_finding *f;

	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 4;
		struct lw_finding *v = realloc(fs->v, cap * sizeof(*v));

		if (!v) {
			errno = ENOMEM;
			return NULL;
		}
		fs->v = v;
		fs->cap = cap;
	}
	f = &fs->v[fs->n++];
	memset(f, 0, sizeof(*f));
	f->cause = cause;
	f->severity = sev;
	return f;
}

void lw_findings_free(struct lw_findings *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		struct lw_finding *f = &fs->v[i];

		free(f->seen);
		free(f->why);
		free(f->evidence);
		free(f->cost);
		lw_strv_free(&f->fix);
		lw_strv_free(&f->persist);
		lw_strv_free(&f->rollback);
		lw_strv_free(&f->verify);
	}
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

const char *lw_severity_name(enum lw_severity s)
{
	switch (s) {
	case LW_SEV_INFO:
		return "info";
	case LW_SEV_WARN:
		return "warn";
	case LW_SEV_CRIT:
		return "crit";
	}
	return "unknown";
}

bool lw_softirq_is_wait(const char *vec)
{
	return !strcmp(vec, "NET_RX_BACKLOG") || !strcmp(vec, "KSOFTIRQD");
}

const char *lw_softirq_unit(const char *vec)
{
	return lw_softirq_is_wait(vec) ? "waits" : "runs";
}
