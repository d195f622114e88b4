// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * findings.c - findings as text and as JSON (see findings.h).
 *
 * The styles differ only in placement (indent, header, a cut of long command
 * lists where a fuller output exists), so a finding reads the same in
 * `latwhy check` and in a trace summary.
 */
#include <stdbool.h>

#include "output/findings.h"

struct layout {
	const char *indent; /* before a finding; its fields sit two further in */
	bool counts;	    /* a count line, and a blank line before each finding */
	size_t max_cmds;    /* commands per list before the cut; 0: all */
};

static const struct layout layouts[] = {
	[LW_FINDINGS_REPORT] = {.indent = "", .counts = true, .max_cmds = 8},
	[LW_FINDINGS_SECTION] = {.indent = "  ", .counts = false, .max_cmds = 0},
};

static void print_field(FILE *f, const struct layout *l, const char *label, const char *s)
{
	if (s)
		fprintf(f, "%s  %-9s %s\n", l->indent, label, s);
}

static void print_cmds(FILE *f, const struct layout *l, const char *label, const struct lw_strv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		const char *s = v->v[i];

		/* cut only where it hides more than the line saying so */
		if (l->max_cmds && i == l->max_cmds && v->n > l->max_cmds + 1) {
			fprintf(f, "%s  %-9s ... %zu more (see --fix-script or --json)\n",
				l->indent, "", v->n - i);
			return;
		}
		fprintf(f, "%s  %-9s ", l->indent, i ? "" : label);
		/* continuation lines of a here-document, indented under the command */
		for (; *s; s++) {
			fputc(*s, f);
			if (*s == '\n')
				fprintf(f, "%s  %-9s   ", l->indent, "");
		}
		fputc('\n', f);
	}
}

static void print_one(FILE *f, const struct layout *l, const struct lw_finding *x)
{
	if (l->counts)
		fputc('\n', f);
	fprintf(f, "%s[%s] %s: %s\n", l->indent, lw_severity_name(x->severity),
		lw_cause_name(x->cause), x->seen ? x->seen : "");
	print_field(f, l, "why:", x->why);
	print_field(f, l, "evidence:", x->evidence);
	print_cmds(f, l, "fix:", &x->fix);
	print_cmds(f, l, "persist:", &x->persist);
	print_cmds(f, l, "rollback:", &x->rollback);
	print_cmds(f, l, "verify:", &x->verify);
	print_field(f, l, "cost:", x->cost);
}

static void print_header(FILE *f, const struct layout *l, const struct lw_findings *fs)
{
	size_t count[LW_SEV_CRIT + 1] = {0};

	if (!l->counts) {
		if (fs->n)
			fprintf(f, "Findings:\n");
		return;
	}
	for (size_t i = 0; i < fs->n; i++)
		count[fs->v[i].severity]++;
	fprintf(f, "findings: %zu (%zu crit, %zu warn, %zu info)\n", fs->n, count[LW_SEV_CRIT],
		count[LW_SEV_WARN], count[LW_SEV_INFO]);
}

void lw_findings_print(FILE *f, const struct lw_findings *fs, enum lw_findings_style style)
{
	static const struct lw_findings none;
	const struct layout *l = &layouts[style];

	if (!fs)
		fs = &none;
	print_header(f, l, fs);
	for (int sev = LW_SEV_CRIT; sev >= LW_SEV_INFO; sev--)
		for (size_t i = 0; i < fs->n; i++)
			if ((int)fs->v[i].severity == sev)
				print_one(f, l, &fs->v[i]);
}

static void json_strv(struct lw_json *j, const char *key, const struct lw_strv *v)
{
	lw_json_key(j, key);
	lw_json_begin_array(j);
	for (size_t i = 0; i < v->n; i++)
		lw_json_string(j, v->v[i]);
	lw_json_end_array(j);
}

void lw_findings_json(struct lw_json *j, const struct lw_findings *fs)
{
	lw_json_begin_array(j);
	for (size_t i = 0; fs && i < fs->n; i++) {
		const struct lw_finding *x = &fs->v[i];

		lw_json_begin_object(j);
		lw_json_kstr(j, "cause", lw_cause_name(x->cause));
		lw_json_kstr(j, "severity", lw_severity_name(x->severity));
		/* lw_json_kstr writes NULL as null: absent, not empty */
		lw_json_kstr(j, "seen", x->seen);
		lw_json_kstr(j, "why", x->why);
		lw_json_kstr(j, "evidence", x->evidence);
		lw_json_kstr(j, "cost", x->cost);
		json_strv(j, "fix", &x->fix);
		json_strv(j, "persist", &x->persist);
		json_strv(j, "rollback", &x->rollback);
		json_strv(j, "verify", &x->verify);
		lw_json_end_object(j);
	}
	lw_json_end_array(j);
}
