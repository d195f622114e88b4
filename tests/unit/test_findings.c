// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_findings.c - the one findings printer: its text in both styles, its
 * JSON contract (absent is null), and that `latwhy check --json` and the
 * trace summary print a finding as the same JSON. Run from the repository
 * root (it reads tests/fixtures/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "advice/advise.h"
#include "cli/cmd.h"
#include "engine/engine.h"
#include "node/node.h"
#include "output/findings.h"
#include "output/render.h"

#define FIXTURE "tests/fixtures/acpi-powersave"

/* ---- helpers ------------------------------------------------------------ */

static char *text_of(const struct lw_findings *fs, enum lw_findings_style style)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lw_findings_print(f, fs, style);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The findings as a JSON document, without the newline that ends it. */
static char *json_of(const struct lw_findings *fs, bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct lw_json j;

	assert_non_null(f);
	lw_json_init(&j, f, pretty);
	lw_findings_json(&j, fs);
	assert_int_equal(lw_json_end(&j), 0);
	assert_int_equal(fclose(f), 0);
	assert_true(len && buf[len - 1] == '\n');
	buf[len - 1] = '\0';
	return buf;
}

/* The trace summary's NDJSON line, over an empty engine, with fs. */
static char *summary_json_of(const struct lw_findings *fs)
{
	struct lw_engine *e = lw_engine_new();
	struct lw_summary s;
	struct lw_render *r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(e);
	lw_engine_summarize(e, &s);
	lw_engine_free(e);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	r = lw_render_new(f, true);
	assert_non_null(r);
	lw_render_summary(r, &s, fs);
	lw_render_free(r);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* JSON without the whitespace outside its strings: pretty and compact
 * output of one writer compare equal. */
static char *compact(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	bool in_str = false;

	assert_non_null(out);
	for (; *s; s++) {
		if (in_str && *s == '\\' && s[1]) {
			*o++ = *s++;
			*o++ = *s;
			continue;
		}
		if (*s == '"')
			in_str = !in_str;
		if (in_str || (*s != ' ' && *s != '\n'))
			*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* The value of the last top-level key "findings" of a compact object. */
static char *findings_value(const char *compact_json)
{
	const char *p = strstr(compact_json, "\"findings\":");
	size_t len;
	char *v;

	assert_non_null(p);
	p += strlen("\"findings\":");
	len = strlen(p);
	while (len && (p[len - 1] == '\n' || p[len - 1] == '}'))
		len--;
	assert_true(len && p[len - 1] == ']');
	v = strndup(p, len);
	assert_non_null(v);
	return v;
}

static char *read_all(FILE *f)
{
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	rewind(f);
	do {
		cap += 4096;
		buf = realloc(buf, cap + 1);
		assert_non_null(buf);
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	buf[n] = '\0';
	return buf;
}

/* Run a command with stdout and stderr captured. */
static enum lw_exit run_captured(enum lw_exit (*run)(int, char **), int argc, char **argv,
				 char **out, char **err)
{
	FILE *o = tmpfile(), *e = tmpfile();
	int so, se;
	enum lw_exit rc;

	assert_non_null(o);
	assert_non_null(e);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	assert_true(so >= 0 && se >= 0);
	assert_true(dup2(fileno(o), 1) >= 0 && dup2(fileno(e), 2) >= 0);
	rc = run(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	*out = read_all(o);
	*err = read_all(e);
	fclose(o);
	fclose(e);
	return rc;
}

static struct lw_finding *add(struct lw_findings *fs, enum lw_cause c, enum lw_severity sev,
			      const char *seen)
{
	struct lw_finding *f = lw_findings_add(fs, c, sev);

	assert_non_null(f);
	if (seen)
		assert_int_equal(lw_set(&f->seen, "%s", seen), 0);
	return f;
}

/* ---- JSON --------------------------------------------------------------- */

/* Absent fields are null, in the one printer and so in the summary line. */
static void test_json_absent_is_null(void **state)
{
	struct lw_findings fs = {0};
	char *j, *s, *v;

	add(&fs, LW_CAUSE_IRQ, LW_SEV_INFO, NULL);
	j = json_of(&fs, false);
	assert_string_equal(j, "[{\"cause\":\"irq\",\"severity\":\"info\",\"seen\":null,"
			       "\"why\":null,\"evidence\":null,\"cost\":null,\"fix\":[],"
			       "\"persist\":[],\"rollback\":[],\"verify\":[]}]");
	s = summary_json_of(&fs);
	v = findings_value(s);
	assert_string_equal(v, j);
	free(v);
	free(s);
	free(j);
	lw_findings_free(&fs);
}

static void test_json_none(void **state)
{
	struct lw_findings fs = {0};
	char *j = json_of(&fs, false), *n = json_of(NULL, false), *s = summary_json_of(NULL);

	assert_string_equal(j, "[]");
	assert_string_equal(n, "[]");
	assert_non_null(strstr(s, ",\"findings\":[]}\n"));
	free(j);
	free(n);
	free(s);
}

/*
 * The contract across commands: the findings `latwhy check --json` prints for
 * a node are, as JSON, the same string the trace summary prints for them,
 * absent fields null in both.
 */
static void test_check_and_summary_agree(void **state)
{
	char *argv[] = {"check", "--json", "--sample", "0", "--root", FIXTURE, "-p", "4242", NULL};
	struct lw_findings fs = {0};
	char *out, *err, *c, *s, *from_check, *from_summary;
	struct lw_node n;

	assert_int_equal(run_captured(lw_cmd_check, 8, argv, &out, &err), LW_EXIT_OK);
	assert_string_equal(err, "");
	assert_int_equal(lw_node_read(&n, FIXTURE, 4242), 0);
	assert_int_equal(lw_advise_node(&n, &fs), 0);
	assert_true(fs.n > 1);
	c = compact(out);
	s = summary_json_of(&fs);
	from_check = findings_value(c);
	from_summary = findings_value(s);
	assert_string_equal(from_check, from_summary);
	/* this fixture has findings without a cost or evidence: null, not "" */
	assert_non_null(strstr(from_summary, "\"cost\":null"));
	assert_non_null(strstr(from_summary, "\"evidence\":null"));
	assert_null(strstr(from_summary, ":\"\""));
	free(from_check);
	free(from_summary);
	free(c);
	free(s);
	free(out);
	free(err);
	lw_findings_free(&fs);
	lw_node_free(&n);
}

/* ---- text --------------------------------------------------------------- */

static void build_two(struct lw_findings *fs)
{
	struct lw_finding *f;

	memset(fs, 0, sizeof(*fs));
	f = add(fs, LW_CAUSE_THP, LW_SEV_INFO, "THP madvise");
	assert_int_equal(lw_strv_add(&f->verify, "cat /sys/kernel/mm/transparent_hugepage/enabled"),
			 0);
	f = add(fs, LW_CAUSE_IDLE, LW_SEV_WARN, "haltpoll off");
	assert_int_equal(lw_set(&f->why, "a halted vCPU wakes late"), 0);
	assert_int_equal(lw_set(&f->evidence, "idle 40%%"), 0);
	assert_int_equal(lw_strv_add(&f->fix, "echo 200000 > /p"), 0);
	assert_int_equal(lw_strv_add(&f->persist, "cat > /etc/x.conf <<'EOF'\nw /p 200000\nEOF"),
			 0);
	assert_int_equal(lw_strv_add(&f->rollback, "echo 0 > /p"), 0);
	assert_int_equal(lw_set(&f->cost, "more host CPU"), 0);
}

/* check's layout: a count line, most severe first, a blank line before each. */
static void test_text_report(void **state)
{
	struct lw_findings fs;
	char *t;

	build_two(&fs);
	t = text_of(&fs, LW_FINDINGS_REPORT);
	assert_string_equal(t, "findings: 2 (0 crit, 1 warn, 1 info)\n"
			       "\n"
			       "[warn] idle: haltpoll off\n"
			       "  why:      a halted vCPU wakes late\n"
			       "  evidence: idle 40%\n"
			       "  fix:      echo 200000 > /p\n"
			       "  persist:  cat > /etc/x.conf <<'EOF'\n"
			       "              w /p 200000\n"
			       "              EOF\n"
			       "  rollback: echo 0 > /p\n"
			       "  cost:     more host CPU\n"
			       "\n"
			       "[info] thp: THP madvise\n"
			       "  verify:   cat /sys/kernel/mm/transparent_hugepage/enabled\n");
	free(t);
	lw_findings_free(&fs);
}

/* The summary's layout: the same lines, two further in, under "Findings:". */
static void test_text_section(void **state)
{
	struct lw_findings fs;
	char *t;

	build_two(&fs);
	t = text_of(&fs, LW_FINDINGS_SECTION);
	assert_string_equal(t, "Findings:\n"
			       "  [warn] idle: haltpoll off\n"
			       "    why:      a halted vCPU wakes late\n"
			       "    evidence: idle 40%\n"
			       "    fix:      echo 200000 > /p\n"
			       "    persist:  cat > /etc/x.conf <<'EOF'\n"
			       "                w /p 200000\n"
			       "                EOF\n"
			       "    rollback: echo 0 > /p\n"
			       "    cost:     more host CPU\n"
			       "  [info] thp: THP madvise\n"
			       "    verify:   cat /sys/kernel/mm/transparent_hugepage/enabled\n");
	free(t);
	lw_findings_free(&fs);
}

static void test_text_none(void **state)
{
	struct lw_findings fs = {0};
	char *r = text_of(&fs, LW_FINDINGS_REPORT), *s = text_of(&fs, LW_FINDINGS_SECTION);
	char *rn = text_of(NULL, LW_FINDINGS_REPORT), *sn = text_of(NULL, LW_FINDINGS_SECTION);

	assert_string_equal(r, "findings: 0 (0 crit, 0 warn, 0 info)\n");
	assert_string_equal(rn, r);
	assert_string_equal(s, "");
	assert_string_equal(sn, "");
	free(r);
	free(s);
	free(rn);
	free(sn);
}

/* check cuts a list after 8 commands (--json and --fix-script have them
 * all), never to hide a single one; the summary prints every command. */
static void test_text_long_lists(void **state)
{
	struct lw_findings fs = {0};
	struct lw_finding *f = add(&fs, LW_CAUSE_IRQ, LW_SEV_WARN, "IRQs on its CPUs");
	struct lw_finding *g = add(&fs, LW_CAUSE_IRQ, LW_SEV_INFO, "nine");
	char *r, *s;

	for (int i = 0; i < 12; i++)
		assert_int_equal(lw_strv_add(&f->fix, "echo 1 > /proc/irq/%d/smp_affinity", i), 0);
	for (int i = 0; i < 9; i++)
		assert_int_equal(lw_strv_add(&g->fix, "cmd %d", i), 0);
	r = text_of(&fs, LW_FINDINGS_REPORT);
	assert_non_null(strstr(r, "  fix:      echo 1 > /proc/irq/0/smp_affinity\n"));
	assert_non_null(strstr(r, "            echo 1 > /proc/irq/7/smp_affinity\n"
				  "            ... 4 more (see --fix-script or --json)\n"));
	assert_null(strstr(r, "/proc/irq/8/"));
	assert_non_null(strstr(r, "            cmd 8\n"));
	s = text_of(&fs, LW_FINDINGS_SECTION);
	assert_non_null(strstr(s, "              echo 1 > /proc/irq/11/smp_affinity\n"));
	assert_null(strstr(s, "more (see"));
	free(r);
	free(s);
	lw_findings_free(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_absent_is_null),
		cmocka_unit_test(test_json_none),
		cmocka_unit_test(test_check_and_summary_agree),
		cmocka_unit_test(test_text_report),
		cmocka_unit_test(test_text_section),
		cmocka_unit_test(test_text_none),
		cmocka_unit_test(test_text_long_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
