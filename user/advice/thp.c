// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * thp.c - transparent huge pages: fault-time compaction and khugepaged.
 *
 * Field case: THP=never cost a Go service +0.3 ms P50, so the fix is madvise.
 */
#include <stdio.h>
#include <string.h>

#include "advice/adv.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

/* Target opted out with prctl(PR_SET_THP_DISABLE): system modes do not touch it. */
static bool target_thp_off(const struct lw_node *n)
{
	return n->has_target && n->target.thp_enabled == 0;
}

/* The THP settings, led by the one the finding is about. */
static void thp_seen(struct adv_text *t, const struct lw_node *n, const char *lead)
{
	const struct lw_thp *h = &n->thp;

	if (!strcmp(lead, "khugepaged"))
		adv_text_add(
			t,
			"khugepaged/defrag=%d, scanning %ld pages every %ld ms; THP enabled=%s, "
			"defrag=%s",
			h->kh_defrag, h->pages_to_scan, h->scan_sleep_ms, h->enabled, h->defrag);
	else if (!strcmp(lead, "defrag"))
		adv_text_add(t, "THP defrag=%s (enabled=%s, khugepaged/defrag=%d)", h->defrag,
			     h->enabled, h->kh_defrag);
	else
		adv_text_add(
			t,
			"THP enabled=%s (defrag=%s, khugepaged/defrag=%d, %ld pages every %ld ms)",
			h->enabled, h->defrag, h->kh_defrag, h->pages_to_scan, h->scan_sleep_ms);
	if (!n->has_target)
		return;
	if (target_thp_off(n))
		adv_text_add(
			t,
			"; pid %d has THP disabled for itself (prctl): these modes do not touch it",
			n->target.pid);
	else if (n->target.madv_regions >= 0)
		adv_text_add(t, "; pid %d has %d MADV_HUGEPAGE regions, %llu kB in huge pages",
			     n->target.pid, n->target.madv_regions, n->target.anon_huge_kb);
}

static void fill_thp_enabled(struct adv *a)
{
	const char *grub = "/etc/default/grub.d/latwhy-thp.cfg";

	adv_add(a, &a->f->fix, "echo madvise > " THP_DIR "/enabled");
	adv_add(a, &a->f->persist,
		"cat > %s <<'EOF'\n"
		"GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT "
		"transparent_hugepage=madvise\"\n"
		"EOF",
		grub);
	adv_add(a, &a->f->persist, "update-grub");
	adv_add(a, &a->f->persist,
		"# without GRUB, add transparent_hugepage=madvise to the kernel "
		"command line of your boot loader");
	adv_add(a, &a->f->rollback, "rm -f %s", grub);
	adv_add(a, &a->f->rollback, "update-grub");
	adv_add(a, &a->f->rollback, "echo %s > " THP_DIR "/enabled", a->n->thp.enabled);
	adv_add(a, &a->f->verify, "cat " THP_DIR "/enabled  # [madvise]");
	adv_add(a, &a->f->verify,
		"grep -o 'transparent_hugepage=[a-z]*' /proc/cmdline  # after reboot");
	adv_put(a, &a->f->cost,
		"only regions that ask (MADV_HUGEPAGE) keep huge pages; never is the last resort, "
		"not the cure: it costs TLB misses (field case: +0.3 ms P50 for Go)");
}

/*
 * A sysfs setting persisted by a tmpfiles.d "w" line: the shape shared by
 * every THP knob that has no kernel command-line form.
 */
struct tmpfiles_knob {
	const char *path;   /* below THP_DIR */
	const char *value;  /* the fix */
	const char *old;    /* today's value, for the rollback */
	const char *conf;   /* /etc/tmpfiles.d/<conf>.conf */
	const char *vmstat; /* counters to watch, and how */
	const char *cost;
};

static void fill_tmpfiles_knob(struct adv *a, const struct tmpfiles_knob *k)
{
	adv_add(a, &a->f->fix, "echo %s > " THP_DIR "/%s", k->value, k->path);
	adv_add(a, &a->f->persist,
		"cat > /etc/tmpfiles.d/%s.conf <<'EOF'\nw " THP_DIR "/%s - - - - %s\nEOF", k->conf,
		k->path, k->value);
	adv_add(a, &a->f->rollback, "rm -f /etc/tmpfiles.d/%s.conf", k->conf);
	adv_add(a, &a->f->rollback, "echo %s > " THP_DIR "/%s", k->old, k->path);
	adv_add(a, &a->f->verify, "cat " THP_DIR "/%s  # %s", k->path,
		strcmp(k->value, "madvise") ? k->value : "[madvise]");
	adv_add(a, &a->f->verify, "%s", k->vmstat);
	/* a finding with several knobs costs each (adv_put() formats before it frees) */
	if (a->f && a->f->cost)
		adv_put(a, &a->f->cost, "%s; %s", a->f->cost, k->cost);
	else
		adv_put(a, &a->f->cost, "%s", k->cost);
}

static void fill_thp_defrag(struct adv *a)
{
	const struct tmpfiles_knob k = {
		.path = "defrag",
		.value = "madvise",
		.old = a->n->thp.defrag,
		.conf = "latwhy-thp-defrag",
		.vmstat = "grep -E 'compact_stall|thp_fault_alloc' /proc/vmstat  # compact_stall "
			  "stops growing",
		.cost = "fewer huge pages right after allocation for regions that do not madvise",
	};

	fill_tmpfiles_knob(a, &k);
}

static void fill_khugepaged(struct adv *a)
{
	char old[16];
	const struct tmpfiles_knob k = {
		.path = "khugepaged/defrag",
		.value = "0",
		.old = old,
		.conf = "latwhy-khugepaged",
		.vmstat = "grep -E 'thp_collapse_alloc|compact_stall' /proc/vmstat  # grows slower",
		.cost = "khugepaged no longer compacts memory to build huge pages: fewer regions "
			"get collapsed",
	};

	snprintf(old, sizeof(old), "%d", a->n->thp.kh_defrag);
	fill_tmpfiles_knob(a, &k);
}

/* mm/khugepaged.c: khugepaged_scan_sleep_millisecs */
#define KHUGEPAGED_SLEEP_DEFAULT_MS 10000

/* khugepaged back to the kernel's pace: every collapse of the target's memory
 * copies 2 MB under its memory lock, and a short scan_sleep_millisecs makes
 * them come that much more often. */
static void fill_khugepaged_pace(struct adv *a)
{
	char old[24], def[24];
	const struct tmpfiles_knob k = {
		.path = "khugepaged/scan_sleep_millisecs",
		.value = def,
		.old = old,
		.conf = "latwhy-khugepaged-pace",
		.vmstat = "grep thp_collapse_alloc /proc/vmstat  # grows slower",
		.cost = "khugepaged scans at the kernel's default pace again: regions get huge "
			"pages later, and collapses stall the target less often",
	};

	snprintf(old, sizeof(old), "%ld", a->n->thp.scan_sleep_ms);
	snprintf(def, sizeof(def), "%d", KHUGEPAGED_SLEEP_DEFAULT_MS);
	fill_tmpfiles_knob(a, &k);
}

static enum lw_severity thp_sev(const struct lw_node *n, enum lw_severity s)
{
	return target_thp_off(n) ? LW_SEV_INFO : s;
}

/* One finding per THP switch that stalls: enabled, defrag, khugepaged's defrag
 * and its pace; a target that opted out makes them info. */
static void thp_check(struct adv *a)
{
	const struct lw_node *n = a->n;
	const struct lw_thp *h = &n->thp;
	bool always = !strcmp(h->enabled, "always");
	struct adv_text t;

	if (!h->present)
		return;
	if (always) {
		enum lw_severity s = h->kh_defrag == 1 || !strcmp(h->defrag, "always")
					     ? LW_SEV_CRIT
					     : LW_SEV_WARN;

		if (!adv_begin(a, LW_CAUSE_THP, thp_sev(n, s)))
			return;
		adv_text_open(a, &t);
		thp_seen(&t, n, "enabled");
		adv_text_close(a, &t, &a->f->seen);
		adv_put(a, &a->f->why,
			"every anonymous region gets huge pages: faults compact memory and "
			"khugepaged collapses 4 KB pages into 2 MB under the process's memory lock "
			"(field case: 50-200 ms stalls)");
		fill_thp_enabled(a);
	}
	if (!strcmp(h->defrag, "always") && strcmp(h->enabled, "never")) {
		if (!adv_begin(a, LW_CAUSE_THP, thp_sev(n, LW_SEV_WARN)))
			return;
		adv_text_open(a, &t);
		thp_seen(&t, n, "defrag");
		adv_text_close(a, &t, &a->f->seen);
		adv_put(a, &a->f->why,
			"defrag=always makes a page fault stall in direct compaction "
			"until a 2 MB page is free");
		fill_thp_defrag(a);
	}
	if (h->kh_defrag == 1 && strcmp(h->enabled, "never")) {
		bool madv = n->has_target && n->target.madv_regions > 0;
		enum lw_severity s = always || madv ? LW_SEV_WARN : LW_SEV_INFO;

		if (!adv_begin(a, LW_CAUSE_THP, thp_sev(n, s)))
			return;
		adv_text_open(a, &t);
		thp_seen(&t, n, "khugepaged");
		adv_text_close(a, &t, &a->f->seen);
		adv_put(a, &a->f->why,
			"khugepaged/defrag=1 lets khugepaged compact memory to collapse %s "
			"regions, stalling the owner on its memory lock",
			always ? "all anonymous" : "MADV_HUGEPAGE");
		fill_khugepaged(a);
	}
	if (h->scan_sleep_ms >= 0 && h->scan_sleep_ms < KHUGEPAGED_SLEEP_DEFAULT_MS &&
	    strcmp(h->enabled, "never")) {
		bool madv = n->has_target && n->target.madv_regions > 0;

		if (!adv_begin(a, LW_CAUSE_THP,
			       thp_sev(n, always || madv ? LW_SEV_WARN : LW_SEV_INFO)))
			return;
		adv_text_open(a, &t);
		thp_seen(&t, n, "khugepaged");
		adv_text_close(a, &t, &a->f->seen);
		adv_put(a, &a->f->why,
			"khugepaged wakes every %ld ms, not the kernel's %d: each collapse copies "
			"2 MB under its owner's memory lock, and they come that much more often",
			h->scan_sleep_ms, KHUGEPAGED_SLEEP_DEFAULT_MS);
		fill_khugepaged_pace(a);
	}
}

/* khugepaged ran faster than the kernel's pace and collapsed the target's
 * memory while it was traced: a finding whatever this run's slow requests
 * lost to it, which is luck (whether a collapse met a fault or a lock). */
static bool thp_fast_collapses(const struct lw_node *n, const struct lw_trace_facts *t)
{
	return t->thp_collapses && n->thp.scan_sleep_ms >= 0 &&
	       n->thp.scan_sleep_ms < KHUGEPAGED_SLEEP_DEFAULT_MS;
}

/* Collapses and compactions the trace saw, and every switch that causes them. */
static void thp_trace(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on)
{
	const struct lw_node *n = a->n;
	const struct lw_thp *h = &n->thp;
	struct adv_text x;
	bool any = false;

	adv_put(a, &a->f->evidence,
		"khugepaged collapsed %llu ranges of the target's memory (%llu scans); %llu "
		"compactions in its threads",
		t->thp_collapses, t->thp_scans, t->compactions);
	adv_text_open(a, &x);
	thp_seen(&x, n, "enabled");
	adv_text_close(a, &x, &a->f->seen);
	adv_put(a, &a->f->why,
		"collapses and compaction hold the target's memory lock or stall its page faults");
	if (!strcmp(h->enabled, "always")) {
		fill_thp_enabled(a);
		any = true;
	}
	if (!strcmp(h->defrag, "always")) {
		fill_thp_defrag(a);
		any = true;
	}
	if (h->kh_defrag == 1) {
		fill_khugepaged(a);
		any = true;
	}
	if (thp_fast_collapses(n, t)) {
		fill_khugepaged_pace(a);
		any = true;
	}
	if (!any)
		adv_add(a, &a->f->fix,
			"# THP is already madvise with khugepaged/defrag=0: the target asks for "
			"huge pages itself (MADV_HUGEPAGE); THP=never is the last resort (TLB "
			"misses, field case: +0.3 ms P50 for Go)");
	else if (t->thp_collapses && n->has_target && n->target.madv_regions > 0)
		adv_add(a, &a->f->fix,
			"# pid %d madvises %d region%s (MADV_HUGEPAGE): THP madvise keeps %s "
			"eligible, and khugepaged still collapses %s at its pace; only the "
			"application opts out (no MADV_HUGEPAGE, or prctl PR_SET_THP_DISABLE)",
			n->target.pid, n->target.madv_regions,
			n->target.madv_regions > 1 ? "s" : "",
			n->target.madv_regions > 1 ? "them" : "it",
			n->target.madv_regions > 1 ? "them" : "it");
}

const struct lw_advisor lw_advisor_thp = {
	.cause = LW_CAUSE_THP,
	.check = thp_check,
	.trace = thp_trace,
	.due = thp_fast_collapses,
};
