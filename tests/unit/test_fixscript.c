// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_fixscript.c - write the apply/undo/verify scripts for each fixture,
 * shellcheck them, run them with LATWHY_ROOT on a scratch copy of the tree,
 * and prove that apply changes the settings and undo restores every file
 * byte for byte. Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "advice/advise.h"
#include "advice/fixscript.h"

#define LW_FIXTURES "tests/fixtures"

struct work {
	char dir[64];	/* scratch directory */
	char tree[128]; /* the copy the scripts act on */
	char orig[128]; /* an untouched copy to compare with */
	char plan[128]; /* the apply script; .undo and .verify next to it */
	struct lw_node n;
	struct lw_findings fs;
};

static __attribute__((format(printf, 1, 2))) int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Copy the fixture twice, let tweak() change both, judge the tree, write the plan. */
static void work_setup(struct work *w, const char *fixture, int pid, const char *tweak)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->dir, sizeof(w->dir), "/tmp/latwhy-fix-XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	snprintf(w->tree, sizeof(w->tree), "%s/tree", w->dir);
	snprintf(w->orig, sizeof(w->orig), "%s/orig", w->dir);
	snprintf(w->plan, sizeof(w->plan), "%s/plan.sh", w->dir);
	assert_int_equal(sh("cp -a " LW_FIXTURES "/%s %s", fixture, w->tree), 0);
	if (tweak)
		assert_int_equal(sh("cd %s && %s", w->tree, tweak), 0);
	assert_int_equal(sh("cp -a %s %s", w->tree, w->orig), 0);
	assert_int_equal(lw_node_read(&w->n, w->tree, pid), 0);
	assert_int_equal(lw_advise_node(&w->n, &w->fs), 0);
	assert_int_equal(lw_fixscript_write(&w->fs, w->tree, w->plan), 0);
}

static void work_free(struct work *w)
{
	lw_findings_free(&w->fs);
	lw_node_free(&w->n);
	assert_int_equal(sh("rm -rf %s", w->dir), 0);
}

static int run(const struct work *w, const char *suffix)
{
	return sh("LATWHY_ROOT=%s LATWHY_SETTLE=0 sh %s%s >%s/%s.log 2>&1", w->tree, w->plan,
		  suffix, w->dir, suffix[0] ? suffix + 1 : "apply");
}

static int tree_differs(const struct work *w)
{
	/* --no-dereference: the trees hold sysfs-like symlink loops */
	return sh("diff -r --no-dereference %s %s >/dev/null", w->orig, w->tree);
}

static void assert_script(const struct work *w, const char *suffix)
{
	char path[256], line[256];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", w->plan, suffix);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "#!/bin/sh\n");
	assert_int_equal(sh("grep -qx 'set -eu' %s", path), 0);
	assert_int_equal(sh("grep -qxF 'ROOT=\"${LATWHY_ROOT:-}\"' %s", path), 0);
	/* Every kernel path goes through $ROOT. */
	assert_int_not_equal(sh("grep -E '^lw_(set|expect) /' %s", path), 0);
}

static void shellcheck(const struct work *w)
{
	if (sh("command -v shellcheck >/dev/null 2>&1")) {
		print_message(
			"skipping shellcheck: not found on PATH (Debian package shellcheck)\n");
		return;
	}
	assert_int_equal(sh("shellcheck -s sh %s %s.undo %s.verify", w->plan, w->plan, w->plan), 0);
}

/* The full cycle: scripts sane, apply changes the tree, undo restores it. */
static void cycle(struct work *w, void (*after_apply)(struct work *w))
{
	assert_script(w, "");
	assert_script(w, ".undo");
	assert_script(w, ".verify");
	shellcheck(w);
	assert_int_equal(run(w, ""), 0);
	if (w->fs.n)
		assert_int_not_equal(tree_differs(w), 0);
	if (after_apply)
		after_apply(w);
	assert_int_equal(run(w, ".undo"), 0);
	assert_int_equal(tree_differs(w), 0);
}

/* ---- per fixture ---- */

static void acpi_after_apply(struct work *w)
{
	struct lw_node n;

	/* What the node readers see after apply. */
	assert_int_equal(lw_node_read(&n, w->tree, 4242), 0);
	for (int c = 0; c < 4; c++)
		assert_string_equal(n.cpus[c].governor, "performance");
	assert_int_equal(n.cpus[2].idle[2].disable, 1);
	assert_int_equal(n.cpus[0].idle[2].disable, 0);
	assert_string_equal(n.thp.enabled, "madvise");
	assert_int_equal(n.thp.kh_defrag, 0);
	assert_string_equal(lw_node_irq(&n, 73)->affinity, "0-1");
	/* a unit's quota is systemd's: systemctl, only printed under LATWHY_ROOT */
	assert_string_equal(n.target.cpu_max, "150000 100000");
	lw_node_free(&n);
	/* The selector file keeps its kernel form. */
	assert_int_equal(sh("grep -qx 'always \\[madvise\\] never' "
			    "%s/sys/kernel/mm/transparent_hugepage/enabled",
			    w->tree),
			 0);
	assert_int_equal(sh("test -f %s/etc/tmpfiles.d/latwhy-khugepaged.conf", w->tree), 0);
	assert_int_equal(sh("grep -q IRQBALANCE_BANNED_CPULIST=2-3 "
			    "%s/etc/systemd/system/irqbalance.service.d/latwhy.conf",
			    w->tree),
			 0);
	/* verify: settings right, but the clock still reads 800 MHz: fail */
	assert_int_equal(run(w, ".verify"), 1);
	assert_int_equal(
		sh("grep -q 'FAIL .*cpu0/cpufreq: clock 800 MHz of 3700 MHz' %s/verify.log",
		   w->dir),
		0);
	assert_int_not_equal(sh("grep -q 'FAIL .*scaling_governor' %s/verify.log", w->dir), 0);
	/* a steady full clock passes */
	assert_int_equal(sh("for c in 0 1 2 3; do echo 3700000 > "
			    "%s/sys/devices/system/cpu/cpufreq/policy$c/scaling_cur_freq; done",
			    w->tree),
			 0);
	assert_int_equal(run(w, ".verify"), 0);
	assert_int_equal(sh("for c in 0 1 2 3; do echo 800000 > "
			    "%s/sys/devices/system/cpu/cpufreq/policy$c/scaling_cur_freq; done",
			    w->tree),
			 0);
}

static void test_acpi_powersave(void **state)
{
	struct work w;

	work_setup(&w, "acpi-powersave", 4242, NULL);
	assert_int_equal(w.fs.n, 7);
	/* costs are stated above their step */
	assert_int_equal(
		sh("grep -q '^# cost: performance raises power draw (field case: 180 W' %s",
		   w.plan),
		0);
	assert_int_equal(sh("grep -q '^# cost: only regions that ask' %s", w.plan), 0);
	/* undo restores today's values */
	assert_int_equal(sh("grep -qx 'lw_set \"$ROOT/sys/devices/system/cpu/cpu0/cpufreq/"
			    "scaling_governor\" powersave' %s.undo",
			    w.plan),
			 0);
	assert_int_equal(sh("grep -qx 'lw_set \"$ROOT/sys/kernel/mm/transparent_hugepage/enabled\" "
			    "always' %s.undo",
			    w.plan),
			 0);
	/* live-system commands are wrapped, not run under LATWHY_ROOT */
	assert_int_equal(sh("grep -qx 'lw_run systemctl restart irqbalance' %s", w.plan), 0);
	assert_int_equal(sh("grep -qx 'lw_run systemctl set-property --runtime gateway.service "
			    "CPUQuota=200%%' %s",
			    w.plan),
			 0);
	assert_int_equal(sh("grep -qx 'lw_run systemctl set-property --runtime gateway.service "
			    "CPUQuota=150%%' %s.undo",
			    w.plan),
			 0);
	/* the nvme queues are managed: no affinity write for them */
	assert_int_not_equal(sh("grep -E 'irq/8[1-4]/' %s %s.undo", w.plan, w.plan), 0);
	cycle(&w, acpi_after_apply);
	work_free(&w);
}

static void plain_v2_after_apply(struct work *w)
{
	assert_int_equal(
		sh("grep -qx '200000 100000' %s/sys/fs/cgroup/system.slice/gateway/cpu.max",
		   w->tree),
		0);
}

/* A cgroup no manager owns: its cpu.max is written, and undo puts back
 * today's quota. */
static void test_quota_plain_v2(void **state)
{
	struct work w;

	work_setup(
		&w, "acpi-powersave", 4242,
		"mv sys/fs/cgroup/system.slice/gateway.service sys/fs/cgroup/system.slice/gateway "
		"&& echo 0::/system.slice/gateway >proc/4242/cgroup");
	assert_int_equal(
		sh("grep -qxF 'lw_set \"$ROOT/sys/fs/cgroup/system.slice/gateway/cpu.max\" "
		   "'\\''200000 100000'\\''' %s",
		   w.plan),
		0);
	assert_int_equal(
		sh("grep -qxF 'lw_set \"$ROOT/sys/fs/cgroup/system.slice/gateway/cpu.max\" "
		   "'\\''150000 100000'\\''' %s.undo",
		   w.plan),
		0);
	assert_int_equal(sh("grep -qxF 'lw_expect \"$ROOT/sys/fs/cgroup/system.slice/gateway/"
			    "cpu.max\" '\\''200000 100000'\\''' %s.verify",
			    w.plan),
			 0);
	cycle(&w, plain_v2_after_apply);
	work_free(&w);
}

static void plain_v1_after_apply(struct work *w)
{
	assert_int_equal(
		sh("grep -qx 200000 %s/sys/fs/cgroup/cpu/batch/job/cpu.cfs_quota_us", w->tree), 0);
}

/* v1: cpu.cfs_quota_us takes the quota alone. */
static void test_quota_plain_v1(void **state)
{
	struct work w;

	work_setup(&w, "quota-docker", 3131,
		   "mkdir sys/fs/cgroup/cpu/batch && mv sys/fs/cgroup/cpu/docker/8a1c* "
		   "sys/fs/cgroup/cpu/batch/job && sed -i 's|/docker/8a1c[0-9a-f]*|/batch/job|' "
		   "proc/3131/cgroup");
	assert_int_equal(sh("grep -qxF 'lw_set \"$ROOT/sys/fs/cgroup/cpu/batch/job/"
			    "cpu.cfs_quota_us\" 200000' %s",
			    w.plan),
			 0);
	cycle(&w, plain_v1_after_apply);
	work_free(&w);
}

/* A file the plan overwrites is restored as it was, final newline or not. */
static void test_existing_file(void **state)
{
	struct work w;

	work_setup(&w, "acpi-powersave", 4242,
		   "mkdir -p etc/tmpfiles.d && printf 'w /x - - - - 1' "
		   ">etc/tmpfiles.d/latwhy-khugepaged.conf");
	assert_int_equal(sh("grep -q \"^printf '%%s' 'w /x - - - - 1' >\" %s.undo", w.plan), 0);
	cycle(&w, NULL);
	work_free(&w);
}

static void test_intel_hwp(void **state)
{
	struct work w;

	work_setup(&w, "intel-hwp", 0, NULL);
	assert_int_equal(w.fs.n, 3);
	cycle(&w, NULL);
	work_free(&w);
}

static void test_amd_pstate(void **state)
{
	struct work w;

	work_setup(&w, "amd-pstate", 0, NULL);
	assert_int_equal(w.fs.n, 2);
	cycle(&w, NULL);
	work_free(&w);
}

static void vm_after_apply(struct work *w)
{
	/* taskset acts on a live process: only printed under LATWHY_ROOT */
	assert_int_equal(
		sh("grep -q 'not run under LATWHY_ROOT: taskset -apc 0 4242' %s/apply.log", w->dir),
		0);
	assert_int_equal(sh("grep -qx 1 %s/proc/irq/41/smp_affinity_list", w->tree), 0);
}

static void test_vm(void **state)
{
	struct work w;

	work_setup(&w, "vm-nocpufreq", 4242, NULL);
	/* virtio1-req.0 (IRQ 36) is managed: never an affinity write */
	assert_int_not_equal(sh("grep -F 'irq/36/' %s %s.undo %s.verify", w.plan, w.plan, w.plan),
			     0);
	assert_int_equal(sh("grep -qx 'lw_run taskset -apc 0-1 4242' %s.undo", w.plan), 0);
	cycle(&w, vm_after_apply);
	work_free(&w);
}

static void test_numa_nic(void **state)
{
	struct work w;

	work_setup(&w, "numa-nic", 4242, NULL);
	assert_int_equal(
		sh("grep -qx 'lw_set \"$ROOT/proc/irq/60/smp_affinity_list\" 6-7' %s", w.plan), 0);
	assert_int_equal(
		sh("grep -qx 'lw_set \"$ROOT/proc/irq/60/smp_affinity_list\" 0' %s.undo", w.plan),
		0);
	cycle(&w, NULL);
	work_free(&w);
}

static void test_no_findings(void **state)
{
	struct lw_findings fs = {0};
	struct work w;

	work_setup(&w, "numa-nic", 0, NULL);
	assert_int_equal(lw_fixscript_write(&fs, w.tree, w.plan), 0);
	lw_findings_free(&w.fs);
	cycle(&w, NULL);
	assert_int_equal(sh("grep -q 'nothing to apply' %s/apply.log", w.dir), 0);
	work_free(&w);
}

static void test_bad_path(void **state)
{
	struct lw_findings fs = {0};

	assert_int_equal(lw_fixscript_write(&fs, "/", "/nonexistent-dir/plan.sh"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acpi_powersave),
		cmocka_unit_test(test_existing_file),
		cmocka_unit_test(test_quota_plain_v2),
		cmocka_unit_test(test_quota_plain_v1),
		cmocka_unit_test(test_intel_hwp),
		cmocka_unit_test(test_amd_pstate),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_numa_nic),
		cmocka_unit_test(test_no_findings),
		cmocka_unit_test(test_bad_path),
	};

	(void)write_file;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
