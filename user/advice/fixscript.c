// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fixscript.c - write findings as apply / undo / verify shell scripts.
 *
 * Commands come from the advisors in a small grammar (see advise.h). Here they
 * are classified: kernel settings, whole files, taskset, notes, and other
 * commands. Values to restore are read under root while writing, not taken
 * from the findings: the undo script restores what was there when the plan
 * was written. The findings' rollback lists give the order of the undo steps
 * (disable a unit before deleting its file) and the commands that have no
 * value to record (systemctl restart ...).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advice/fixscript.h"

#define MAX_FILE_BYTES (1 << 20)

enum cmd_kind {
	CMD_OTHER = 0,
	CMD_NOTE,    /* # text */
	CMD_SET,     /* echo VALUE > /sys|/proc path */
	CMD_FILE,    /* cat > PATH <<'EOF' ... EOF */
	CMD_RM,	     /* rm -f PATH */
	CMD_TASKSET, /* taskset -apc LIST PID */
};

struct cmd {
	enum cmd_kind kind;
	char *value; /* CMD_SET value, CMD_TASKSET list */
	char *path;  /* CMD_SET, CMD_FILE, CMD_RM */
	char *body;  /* CMD_FILE content, with its final newline */
	int pid;     /* CMD_TASKSET */
	const char *text;
};

/* What a path or a task held when the plan was written. */
struct record {
	char *path; /* or "pid:N" for a task's CPU list */
	bool is_file;
	bool existed;
	char *old;	    /* setting word, file content or CPU list; NULL if unreadable */
	char *missing_dirs; /* parents that did not exist, deepest first, quoted for sh */
	bool restored;	    /* emitted in the undo script already */
};

/* Shell helpers a script body calls; only those used are written (shellcheck
 * flags functions it never sees called). */
enum helper {
	H_SET = 1 << 0,	   /* lw_set */
	H_RUN = 1 << 1,	   /* lw_run */
	H_EXPECT = 1 << 2, /* lw_get + lw_expect */
	H_EXISTS = 1 << 3, /* lw_exists */
	H_CPUS = 1 << 4,   /* lw_cpus */
	H_CLOCK = 1 << 5,  /* lw_clock */
};

static const struct {
	enum helper bit;
	const char *text;
} helpers[] = {
	{H_SET, "# Write a kernel setting. Selector files (\"always [madvise] never\") take one\n"
		"# word; under LATWHY_ROOT (a copy of a tree) the bracket is moved the way the\n"
		"# kernel would, so a test can compare trees byte for byte.\n"
		"lw_set() {\n"
		"\tif [ -n \"$ROOT\" ] && grep -q '\\[' \"$1\"; then\n"
		"\t\tawk -v w=\"$2\" '{ for (i = 1; i <= NF; i++) { gsub(/[][]/, \"\", $i); "
		"if ($i == w) $i = \"[\" w \"]\" } print }' \"$1\" >\"$1.latwhy-tmp\"\n"
		"\t\tcat \"$1.latwhy-tmp\" >\"$1\"\n"
		"\t\trm -f \"$1.latwhy-tmp\"\n"
		"\telse\n"
		"\t\tprintf '%s\\n' \"$2\" >\"$1\"\n"
		"\tfi\n"
		"}\n"},
	{H_RUN, "# Run a command on the live system; under LATWHY_ROOT only say it.\n"
		"lw_run() {\n"
		"\tif [ -n \"$ROOT\" ]; then\n"
		"\t\techo \"latwhy: not run under LATWHY_ROOT: $*\"\n"
		"\telse\n"
		"\t\t\"$@\"\n"
		"\tfi\n"
		"}\n"},
	{H_EXPECT, "# A setting's value: the bracketed word of a selector file, else the content.\n"
		   "lw_get() {\n"
		   "\tif grep -q '\\[' \"$1\"; then\n"
		   "\t\tsed -n 's/.*\\[\\([^]]*\\)\\].*/\\1/p' \"$1\"\n"
		   "\telse\n"
		   "\t\tcat \"$1\"\n"
		   "\tfi\n"
		   "}\n"
		   "\n"
		   "lw_expect() {\n"
		   "\tgot=$(lw_get \"$1\" 2>/dev/null) || got=\"(unreadable)\"\n"
		   "\tif [ \"$got\" = \"$2\" ]; then\n"
		   "\t\techo \"ok   $1 = $2\"\n"
		   "\telse\n"
		   "\t\techo \"FAIL $1 = $got, want $2\"\n"
		   "\t\tfail=1\n"
		   "\tfi\n"
		   "}\n"},
	{H_EXISTS, "lw_exists() {\n"
		   "\tif [ -e \"$1\" ]; then\n"
		   "\t\techo \"ok   $1 exists\"\n"
		   "\telse\n"
		   "\t\techo \"FAIL $1 is missing\"\n"
		   "\t\tfail=1\n"
		   "\tfi\n"
		   "}\n"},
	{H_CPUS, "lw_cpus() {\n"
		 "\tgot=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' \"$ROOT/proc/$1/status\" "
		 "2>/dev/null) || got=\"\"\n"
		 "\tif [ \"$got\" = \"$2\" ]; then\n"
		 "\t\techo \"ok   pid $1 runs on CPUs $2\"\n"
		 "\telse\n"
		 "\t\techo \"FAIL pid $1 runs on CPUs ${got:-?}, want $2\"\n"
		 "\t\tfail=1\n"
		 "\tfi\n"
		 "}\n"},
	{H_CLOCK,
	 "# The governor string proves nothing: thermal and power limits still hold\n"
	 "# the clock down. After a settle time (LATWHY_SETTLE seconds, default 2),\n"
	 "# each CPU's clock must be within 90% of its scaling_max_freq; check it\n"
	 "# under load too (turbostat: Bzy_MHz).\n"
	 "settled=0\n"
	 "lw_clock() {\n"
	 "\tif [ \"$settled\" = 0 ]; then\n"
	 "\t\tsleep \"${LATWHY_SETTLE:-2}\"\n"
	 "\t\tsettled=1\n"
	 "\tfi\n"
	 "\tcur=$(cat \"$1/scaling_cur_freq\" 2>/dev/null) || cur=0\n"
	 "\tmax=$(cat \"$1/scaling_max_freq\" 2>/dev/null) || max=0\n"
	 "\tif [ \"$max\" -gt 0 ] && [ $((cur * 10)) -ge $((max * 9)) ]; then\n"
	 "\t\techo \"ok   $1: steady clock $((cur / 1000)) MHz of $((max / 1000)) MHz\"\n"
	 "\telse\n"
	 "\t\techo \"FAIL $1: clock $((cur / 1000)) MHz of $((max / 1000)) MHz: thermal or "
	 "power limits?\"\n"
	 "\t\tfail=1\n"
	 "\tfi\n"
	 "}\n"},
};

struct plan {
	const char *root;
	struct record *rec;
	size_t nr;
	unsigned used; /* enum helper bits of the script being written */
	int err;
};

/* ---- parsing the command grammar ---- */

static void cmd_free(struct cmd *c)
{
	free(c->value);
	free(c->path);
	free(c->body);
	memset(c, 0, sizeof(*c));
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static bool plain_path(const char *p)
{
	if (*p != '/')
		return false;
	for (; *p; p++)
		if (isspace((unsigned char)*p) || strchr("'\"`$\\;&|<>*?", *p))
			return false;
	return true;
}

static int parse_set(const char *s, struct cmd *c)
{
	const char *v = s + 5, *end;

	if (*v == '\'') {
		end = strchr(v + 1, '\'');
		if (!end)
			return -EINVAL;
		c->value = dupn(v + 1, (size_t)(end - v - 1));
		end++;
	} else {
		end = v;
		while (*end && !isspace((unsigned char)*end))
			end++;
		c->value = dupn(v, (size_t)(end - v));
	}
	if (!c->value)
		return -ENOMEM;
	if (strncmp(end, " > ", 3) || !plain_path(end + 3) ||
	    (strncmp(end + 3, "/sys/", 5) && strncmp(end + 3, "/proc/", 6)))
		return -EINVAL;
	c->path = strdup(end + 3);
	if (!c->path)
		return -ENOMEM;
	c->kind = CMD_SET;
	return 0;
}

static int parse_file(const char *s, struct cmd *c)
{
	const char *p = s + 6, *nl = strchr(s, '\n'), *sp = strstr(s, " <<'EOF'\n");
	size_t l = strlen(s);

	if (!nl || !sp || sp > nl || l < 4 || strcmp(s + l - 4, "\nEOF"))
		return -EINVAL;
	c->path = dupn(p, (size_t)(sp - p));
	c->body = dupn(nl + 1, (size_t)(s + l - 3 - (nl + 1)));
	if (!c->path || !c->body)
		return -ENOMEM;
	if (!plain_path(c->path))
		return -EINVAL;
	c->kind = CMD_FILE;
	return 0;
}

static int parse_taskset(const char *s, struct cmd *c)
{
	char list[256];
	int pid, used = 0;

	if (sscanf(s, "taskset -apc %255s %d%n", list, &pid, &used) != 2 || s[used] || pid <= 0)
		return -EINVAL;
	c->value = strdup(list);
	if (!c->value)
		return -ENOMEM;
	c->pid = pid;
	c->kind = CMD_TASKSET;
	return 0;
}

/* Classify s; anything that does not parse stays CMD_OTHER. */
static int cmd_parse(const char *s, struct cmd *c)
{
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->text = s;
	if (s[0] == '#')
		c->kind = CMD_NOTE;
	else if (!strncmp(s, "echo ", 5))
		err = parse_set(s, c);
	else if (!strncmp(s, "cat > ", 6))
		err = parse_file(s, c);
	else if (!strncmp(s, "rm -f ", 6) && plain_path(s + 6)) {
		c->path = strdup(s + 6);
		c->kind = c->path ? CMD_RM : CMD_OTHER;
		err = c->path ? 0 : -ENOMEM;
	} else if (!strncmp(s, "taskset -apc ", 13))
		err = parse_taskset(s, c);
	if (err == -EINVAL) {
		const char *t = c->text;

		cmd_free(c);
		c->text = t;
		c->kind = CMD_OTHER;
		err = 0;
	}
	return err;
}

/* ---- shell quoting ---- */

static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_./:,+=@%-", *s))
			return false;
	return true;
}

static void put_quoted(FILE *f, const char *s)
{
	if (shell_safe(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* "$ROOT/sys/..." — paths from the grammar hold no shell specials. */
static void put_path(FILE *f, const char *path)
{
	fprintf(f, "\"$ROOT%s\"", path);
}

/* "CMD "$ROOT/path"", a whole line. */
static void put_cmd_path(FILE *f, const char *cmd, const char *path)
{
	fprintf(f, "%s ", cmd);
	put_path(f, path);
	fputc('\n', f);
}

/* A comment: one line, no control characters. */
static void put_comment(FILE *f, const char *prefix, const char *s)
{
	fprintf(f, "# %s", prefix);
	for (; s && *s; s++)
		fputc(iscntrl((unsigned char)*s) ? ' ' : *s, f);
	fputc('\n', f);
}

/* ---- recording today's values ---- */

static char *read_all(const char *path, size_t max, bool *exists)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "re");

	*exists = f != NULL || errno != ENOENT;
	if (!f)
		return NULL;
	buf = malloc(max + 1);
	if (buf) {
		len = fread(buf, 1, max, f);
		if (ferror(f)) {
			free(buf);
			buf = NULL;
		} else {
			buf[len] = '\0';
		}
	}
	fclose(f);
	return buf;
}

/* First line, trimmed; the bracketed word of a selector file. */
static char *setting_word(char *content)
{
	char *a, *b, *nl;

	nl = strchr(content, '\n');
	if (nl)
		*nl = '\0';
	a = strchr(content, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b) {
		*b = '\0';
		memmove(content, a + 1, strlen(a + 1) + 1);
	}
	for (size_t l = strlen(content); l && isspace((unsigned char)content[l - 1]); l--)
		content[l - 1] = '\0';
	return content;
}

static struct record *rec_find(struct plan *p, const char *key)
{
	for (size_t i = 0; i < p->nr; i++)
		if (!strcmp(p->rec[i].path, key))
			return &p->rec[i];
	return NULL;
}

static struct record *rec_new(struct plan *p, const char *key)
{
	struct record *v = realloc(p->rec, (p->nr + 1) * sizeof(*v));

	if (!v) {
		p->err = -ENOMEM;
		return NULL;
	}
	p->rec = v;
	v = &p->rec[p->nr];
	memset(v, 0, sizeof(*v));
	v->path = strdup(key);
	if (!v->path) {
		p->err = -ENOMEM;
		return NULL;
	}
	p->nr++;
	return v;
}

/* Parents of path missing under root, deepest first, as "$ROOT/a/b" "$ROOT/a". */
static char *missing_dirs(const char *root, const char *path)
{
	char dir[PATH_MAX], full[PATH_MAX];
	char *out = NULL;
	size_t len = 0;
	bool first = true;
	struct stat st;
	FILE *m = open_memstream(&out, &len);

	if (!m)
		return NULL;
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
		*slash = '\0';
		snprintf(full, sizeof(full), "%s%s", root, dir);
		if (!stat(full, &st))
			break;
		fprintf(m, "%s\"$ROOT%s\"", first ? "" : " ", dir);
		first = false;
	}
	fclose(m);
	return out;
}

/* A task's CPU list, from Cpus_allowed_list in its status. */
static void record_task(struct plan *p, struct record *r, int pid)
{
	char full[PATH_MAX], *s, *line;
	bool exists;

	snprintf(full, sizeof(full), "%s/proc/%d/status", p->root, pid);
	s = read_all(full, MAX_FILE_BYTES, &exists);
	line = s ? strstr(s, "Cpus_allowed_list:") : NULL;
	if (line) {
		line += strlen("Cpus_allowed_list:");
		line += strspn(line, " \t");
		r->old = dupn(line, strcspn(line, "\n"));
	}
	free(s);
	r->existed = r->old != NULL;
}

/* A setting's word, or a file's content and the parents it would need. */
static void record_path(struct plan *p, struct record *r, const struct cmd *c)
{
	char full[PATH_MAX];
	bool exists;

	snprintf(full, sizeof(full), "%s%s", p->root, c->path);
	r->is_file = c->kind != CMD_SET;
	r->old = read_all(full, MAX_FILE_BYTES, &exists);
	r->existed = exists;
	if (c->kind == CMD_SET && r->old)
		setting_word(r->old);
	if (r->is_file && !exists)
		r->missing_dirs = missing_dirs(p->root, c->path);
}

/* Remember what a command's path or task held before the plan's first change to it. */
static void record(struct plan *p, const struct cmd *c)
{
	const char *key = c->path;
	char task[64];
	struct record *r;

	if (c->kind != CMD_TASKSET && c->kind != CMD_SET && c->kind != CMD_FILE &&
	    c->kind != CMD_RM)
		return;
	if (c->kind == CMD_TASKSET) {
		snprintf(task, sizeof(task), "pid:%d", c->pid);
		key = task;
	}
	if (rec_find(p, key))
		return;
	r = rec_new(p, key);
	if (!r)
		return;
	if (c->kind == CMD_TASKSET)
		record_task(p, r, c->pid);
	else
		record_path(p, r, c);
}

/* ---- apply ---- */

static void header(FILE *f, const char *what, const char *verb, const char *path, unsigned used,
		   bool verify)
{
	fprintf(f,
		"#!/bin/sh\n"
		"# latwhy fix plan: %s.\n"
		"# Written by latwhy check; latwhy never runs it. Review every step first.\n"
		"# Plan: %s, undo: %s.undo, verify: %s.verify.\n"
		"# LATWHY_ROOT=DIR runs it against a copy of a tree instead of this node;\n"
		"# commands acting on the live system are then printed, not run.\n"
		"set -eu\n"
		"ROOT=\"${LATWHY_ROOT:-}\"\n"
		"echo \"latwhy: %s on ${ROOT:-/}\"\n",
		what, path, path, path, verb);
	if (verify)
		fprintf(f, "fail=0\n");
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (used & helpers[i].bit)
			fprintf(f, "\n%s", helpers[i].text);
}

static void emit_cmd(FILE *f, struct plan *p, const struct cmd *c, const struct record *r)
{
	switch (c->kind) {
	case CMD_NOTE:
		put_comment(f, "", c->text + 1 + (c->text[1] == ' '));
		break;
	case CMD_SET:
		p->used |= H_SET;
		fprintf(f, "lw_set ");
		put_path(f, c->path);
		fputc(' ', f);
		put_quoted(f, c->value);
		fputc('\n', f);
		break;
	case CMD_FILE:
		if (r && r->missing_dirs) {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%s", c->path);
			*strrchr(dir, '/') = '\0';
			put_cmd_path(f, "mkdir -p", dir);
		}
		fprintf(f, "cat >");
		put_path(f, c->path);
		fprintf(f, " <<'LATWHY_EOF'\n%sLATWHY_EOF\n", c->body);
		break;
	case CMD_RM:
		put_cmd_path(f, "rm -f", c->path);
		break;
	case CMD_TASKSET:
		p->used |= H_RUN;
		fprintf(f, "lw_run taskset -apc %s %d\n", c->value, c->pid);
		break;
	case CMD_OTHER:
		p->used |= H_RUN;
		fprintf(f, "lw_run %s\n", c->text);
		break;
	}
}

static void emit_list(FILE *f, struct plan *p, const struct lw_strv *v)
{
	for (size_t i = 0; i < v->n && !p->err; i++) {
		struct cmd c;

		p->err = cmd_parse(v->v[i], &c);
		if (p->err)
			return;
		record(p, &c);
		emit_cmd(f, p, &c, c.path ? rec_find(p, c.path) : NULL);
		cmd_free(&c);
	}
}

static void step_header(FILE *f, const struct lw_finding *x, size_t i, size_t n)
{
	fprintf(f, "\n# ---- step %zu of %zu: [%s] %s\n", i + 1, n, lw_severity_name(x->severity),
		lw_cause_name(x->cause));
	put_comment(f, "seen: ", x->seen);
	if (x->why)
		put_comment(f, "why: ", x->why);
	if (x->cost)
		put_comment(f, "cost: ", x->cost);
}

static void write_apply(FILE *f, struct plan *p, const struct lw_findings *fs)
{
	if (!fs->n)
		fprintf(f, "\necho \"latwhy: no findings, nothing to apply\"\n");
	for (size_t i = 0; i < fs->n && !p->err; i++) {
		const struct lw_finding *x = &fs->v[i];

		step_header(f, x, i, fs->n);
		fprintf(f, "echo \"latwhy: step %zu: %s\"\n", i + 1, lw_cause_name(x->cause));
		emit_list(f, p, &x->fix);
		if (x->persist.n)
			fprintf(f, "# persist\n");
		emit_list(f, p, &x->persist);
	}
}

/* ---- undo ---- */

static void restore(FILE *f, struct plan *p, struct record *r)
{
	if (r->restored)
		return;
	r->restored = true;
	if (!strncmp(r->path, "pid:", 4)) {
		p->used |= H_RUN;
		if (r->old)
			fprintf(f, "lw_run taskset -apc %s %s\n", r->old, r->path + 4);
		else
			fprintf(f, "# pid %s had no readable CPU list: restore it by hand\n",
				r->path + 4);
		return;
	}
	if (r->is_file) {
		if (!r->existed) {
			put_cmd_path(f, "rm -f", r->path);
			if (r->missing_dirs && *r->missing_dirs)
				fprintf(f, "rmdir %s 2>/dev/null || true\n", r->missing_dirs);
			return;
		}
		if (!r->old) {
			put_comment(f, "unreadable when the plan was written, restore by hand: ",
				    r->path);
			return;
		}
		/* printf, not a here-document: keeps a missing final newline. */
		fprintf(f, "printf '%%s' '");
		for (const char *s = r->old; *s; s++) {
			if (*s == '\'')
				fputs("'\\''", f);
			else
				fputc(*s, f);
		}
		fprintf(f, "' >");
		put_path(f, r->path);
		fputc('\n', f);
		return;
	}
	if (!r->old) {
		put_comment(f, "unreadable when the plan was written, restore by hand: ", r->path);
		return;
	}
	p->used |= H_SET;
	fprintf(f, "lw_set ");
	put_path(f, r->path);
	fputc(' ', f);
	put_quoted(f, r->old);
	fputc('\n', f);
}

/* Undo one finding: its rollback list gives the order; recorded values win. */
static void undo_finding(FILE *f, struct plan *p, const struct lw_finding *x)
{
	const struct lw_strv *lists[] = {&x->persist, &x->fix};

	for (size_t i = 0; i < x->rollback.n && !p->err; i++) {
		struct record *r = NULL;
		char key[64];
		struct cmd c;

		p->err = cmd_parse(x->rollback.v[i], &c);
		if (p->err)
			return;
		if (c.kind == CMD_TASKSET) {
			snprintf(key, sizeof(key), "pid:%d", c.pid);
			r = rec_find(p, key);
		} else if (c.path) {
			r = rec_find(p, c.path);
		}
		if (r && !r->old && !r->is_file) {
			/* Unreadable when written: fall back on the finding's own value. */
			if (!r->restored)
				emit_cmd(f, p, &c, NULL);
			r->restored = true;
		} else if (r) {
			restore(f, p, r);
		} else if (c.kind != CMD_FILE) {
			emit_cmd(f, p, &c, NULL); /* nothing recorded: the finding's own command */
		}
		cmd_free(&c);
	}
	/* Whatever the rollback list forgot, newest change first. */
	for (size_t l = 0; l < 2 && !p->err; l++)
		for (size_t i = lists[l]->n; i-- > 0 && !p->err;) {
			struct record *r = NULL;
			char key[64];
			struct cmd c;

			p->err = cmd_parse(lists[l]->v[i], &c);
			if (p->err)
				return;
			if (c.kind == CMD_TASKSET) {
				snprintf(key, sizeof(key), "pid:%d", c.pid);
				r = rec_find(p, key);
			} else if (c.path) {
				r = rec_find(p, c.path);
			}
			if (r)
				restore(f, p, r);
			cmd_free(&c);
		}
}

static void write_undo(FILE *f, struct plan *p, const struct lw_findings *fs)
{
	for (size_t i = 0; i < p->nr; i++)
		p->rec[i].restored = false;
	for (size_t i = fs->n; i-- > 0 && !p->err;) {
		step_header(f, &fs->v[i], i, fs->n);
		fprintf(f, "echo \"latwhy: undo step %zu: %s\"\n", i + 1,
			lw_cause_name(fs->v[i].cause));
		undo_finding(f, p, &fs->v[i]);
	}
}

/* ---- verify ---- */

static void verify_cmd(FILE *f, struct plan *p, const struct cmd *c)
{
	const char *gov = "/cpufreq/scaling_governor";
	size_t pl, gl = strlen(gov);

	switch (c->kind) {
	case CMD_SET:
		p->used |= H_EXPECT;
		fprintf(f, "lw_expect ");
		put_path(f, c->path);
		fputc(' ', f);
		put_quoted(f, c->value);
		fputc('\n', f);
		pl = strlen(c->path);
		if (pl > gl && !strcmp(c->path + pl - gl, gov)) {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%.*s", (int)(pl - strlen("/scaling_governor")),
				 c->path);
			p->used |= H_CLOCK;
			put_cmd_path(f, "lw_clock", dir);
		}
		break;
	case CMD_FILE:
		p->used |= H_EXISTS;
		put_cmd_path(f, "lw_exists", c->path);
		break;
	case CMD_TASKSET:
		p->used |= H_CPUS;
		fprintf(f, "lw_cpus %d %s\n", c->pid, c->value);
		break;
	default:
		break;
	}
}

static void write_verify(FILE *f, struct plan *p, const struct lw_findings *fs)
{
	for (size_t i = 0; i < fs->n && !p->err; i++) {
		const struct lw_finding *x = &fs->v[i];
		const struct lw_strv *lists[] = {&x->fix, &x->persist};

		step_header(f, x, i, fs->n);
		for (size_t l = 0; l < 2; l++)
			for (size_t k = 0; k < lists[l]->n && !p->err; k++) {
				struct cmd c;

				p->err = cmd_parse(lists[l]->v[k], &c);
				if (!p->err)
					verify_cmd(f, p, &c);
				cmd_free(&c);
			}
		for (size_t k = 0; k < x->verify.n; k++)
			put_comment(f, "by hand: ", x->verify.v[k]);
	}
	fprintf(f, "exit \"$fail\"\n");
}

/* ---- files ---- */

typedef void (*writer_fn)(FILE *f, struct plan *p, const struct lw_findings *fs);

struct script {
	const char *suffix;
	const char *what;
	const char *verb;
	bool verify;
	writer_fn fn;
};

/* The body first (it decides which helpers are needed), then the file. */
static int write_one(struct plan *p, const struct lw_findings *fs, const char *base,
		     const struct script *sc)
{
	char path[PATH_MAX];
	char *body = NULL;
	size_t len = 0;
	FILE *m, *f = NULL;
	int fd, err = 0;

	if (snprintf(path, sizeof(path), "%s%s", base, sc->suffix) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	m = open_memstream(&body, &len);
	if (!m)
		return -ENOMEM;
	p->used = 0;
	sc->fn(m, p, fs);
	if (fclose(m) || p->err) {
		err = p->err ? p->err : -ENOMEM;
		goto cleanup;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* The umask may have dropped bits: the scripts are meant to be run. */
	if (fchmod(fd, 0755) || !(f = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		goto cleanup;
	}
	header(f, sc->what, sc->verb, base, p->used, sc->verify);
	fwrite(body, 1, len, f);
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
cleanup:
	free(body);
	return err;
}

int lw_fixscript_write(const struct lw_findings *fs, const char *root, const char *path)
{
	static const struct script scripts[] = {
		{"", "apply", "applying the plan", false, write_apply},
		{".undo", "undo (restores the values recorded when the plan was written)",
		 "undoing the plan", false, write_undo},
		{".verify", "verify (re-reads every setting; exit 1 if one is off)",
		 "verifying the plan", true, write_verify},
	};
	struct plan p = {0};
	int err = 0;

	p.root = !root || !strcmp(root, "/") ? "" : root;
	/* apply first: it records today's values that undo restores. */
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]) && !err; i++)
		err = write_one(&p, fs, path, &scripts[i]);
	for (size_t i = 0; i < p.nr; i++) {
		free(p.rec[i].path);
		free(p.rec[i].old);
		free(p.rec[i].missing_dirs);
	}
	free(p.rec);
	return err;
}
