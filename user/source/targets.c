// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * targets.c - what the BPF filter matches, kept up to date while tracing.
 *
 * Each target has a slot. A -p process and the processes named by --comm go
 * into targ_tgids; a --cgroup or --unit cgroup goes into targ_cgroups by its
 * id, which changes when the cgroup is removed and made again (systemd does
 * so at every restart of a unit): the new id replaces the old, no re-attach.
 * The union of every target's processes (t->pids) is what needs processes
 * rather than a filter: latwhy's placement, the listening ports, the thread
 * count, uprobes, the node's facts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "node/cgroup.h"
#include "node/pods.h"
#include "source/tracer_int.h"
#include "source/probe.h"

/* A --comm target's walk of /proc at most this often while its processes
 * live (comm_now()). */
#define LW_COMM_RESCAN_NS (10 * 1000000000ULL)

/* systemd is PID 1 and its manager answers: /run/systemd/system is made by
 * systemd at boot (sd_booted(3)). */
static bool systemd_reachable(void)
{
	char comm[LW_COMM_LEN] = "";
	FILE *f = fopen("/proc/1/comm", "re");

	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	return !strcmp(comm, "systemd") && !access("/run/systemd/system", F_OK);
}

/* systemctl's ControlGroup of unit: 0 with rel set, -ENOENT when it has
 * none (not running), -errno when systemctl cannot be run. */
static int unit_from_systemd(const char *unit, char *rel, size_t len)
{
	char cmd[LW_TARGET_NAME + 64], line[LW_TARGET_NAME] = "";
	FILE *p;
	int st;

	/* unit_name_ok() (cli/trace_opts.c) let no quote or '/' through */
	snprintf(cmd, sizeof(cmd), "systemctl show -p ControlGroup --value -- '%s' 2>/dev/null",
		 unit);
	p = popen(cmd, "re");
	if (!p)
		return -errno;
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	st = pclose(p);
	line[strcspn(line, "\n")] = '\0';
	if (st || !lw_cgroup_path_ok(line) || strlen(line) >= len)
		return -ENOENT;
	snprintf(rel, len, "%s", line);
	return 0;
}

/* A unit's cgroup below the v2 mount, and how it was found. */
static int unit_resolve(struct lw_tracer *t, struct lw_target_live *g)
{
	int err;

	g->searched = !systemd_reachable();
	if (!g->searched) {
		g->how = "asked systemd";
		return unit_from_systemd(g->opt->name, g->rel, sizeof(g->rel));
	}
	g->how = "no systemd: found in the cgroup v2 tree";
	err = lw_cgroup_find_unit(t->cg_mount, g->opt->name, g->rel, sizeof(g->rel));
	return err;
}

/* The pods and containers traced now. */
static void pods_count(const struct lw_tracer *t, int *pods, int *ctrs)
{
	*pods = *ctrs = 0;
	for (int i = t->nstatic; i < t->ntg; i++) {
		const struct lw_target_live *g = &t->tg[i];
		bool first = true;

		if (g->pod_state != LW_SLOT_LIVE)
			continue;
		(*ctrs)++;
		for (int k = t->nstatic; k < i && first; k++)
			first = t->tg[k].pod_state != LW_SLOT_LIVE ||
				strcmp(t->tg[k].pod.uid, g->pod.uid);
		*pods += first;
	}
}

void lw_targets_describe(const struct lw_tracer *t, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (t->pods && n < len) {
		int pods, ctrs;

		pods_count(t, &pods, &ctrs);
		n += snprintf(buf + n, len - n, "%d pod%s (%d container%s)", pods,
			      pods == 1 ? "" : "s", ctrs, ctrs == 1 ? "" : "s");
	}
	for (int i = 0; i < t->nstatic && n < len; i++) {
		const struct lw_target_live *g = &t->tg[i];
		const char *sep = i || t->pods ? ", " : "";

		switch (g->opt->kind) {
		case LW_TARGET_PID:
			n += snprintf(buf + n, len - n, "%spid %d (%s)", sep, g->opt->pid, g->comm);
			break;
		case LW_TARGET_COMM:
			n += snprintf(buf + n, len - n, "%scomm %s (%d process%s)", sep,
				      g->opt->name, g->nprocs, g->nprocs == 1 ? "" : "es");
			break;
		case LW_TARGET_CGROUP:
			n += snprintf(buf + n, len - n, "%scgroup %s (%d process%s)", sep,
				      g->opt->name, g->nprocs, g->nprocs == 1 ? "" : "es");
			break;
		case LW_TARGET_UNIT:
			n += snprintf(buf + n, len - n, "%sunit %s (cgroup %s, %d process%s)", sep,
				      g->opt->name, g->rel[0] ? g->rel : "not found yet", g->nprocs,
				      g->nprocs == 1 ? "" : "es");
			break;
		case LW_TARGET_PODS:
		case LW_TARGET_POD: /* not static: said above */
			break;
		}
	}
}

static const char *target_word(const struct lw_target_live *g)
{
	switch (g->opt->kind) {
	case LW_TARGET_COMM:
		return "a process named";
	case LW_TARGET_UNIT:
		return "unit";
	default:
		return "cgroup";
	}
}

static int pids_add(struct lw_tracer *t, int pid)
{
	for (int i = 0; i < t->npids; i++)
		if (t->pids[i] == pid)
			return 0;
	if (t->npids == LW_MAX_TGIDS)
		return -E2BIG;
	t->pids[t->npids++] = pid;
	return 0;
}

struct comm_add {
	struct lw_tracer *t;
	int n; /* processes new to the union */
};

static void comm_proc_add(void *ctx, int pid)
{
	struct comm_add *a = ctx;

	if (!pids_add(a->t, pid))
		a->n++;
}

/* The processes named comm, latwhy aside, into the union. */
static int comm_procs(struct lw_tracer *t, const char *comm)
{
	struct comm_add a = {.t = t};

	lw_probe_comm_each(comm, comm_proc_add, &a);
	return a.n;
}

/*
 * A --comm target's processes now, into the union: those of the refresh
 * before, each checked (alive, the same name), while all are and
 * LW_COMM_RESCAN_NS has not passed since the last walk of /proc; else a
 * walk. The walk costs 9 us a process here (74 processes: 0.67 ms): every
 * second on a node of a thousand, it would cost more than the rest of
 * serve. A new process of the name waits up to that long; a restarted one
 * is found at the next tick, its predecessor being gone.
 */
static int comm_now(struct lw_tracer *t, struct lw_target_live *g)
{
	__u64 now = lw_now_ns();
	int n = 0;

	if (g->nprocs && now - g->scanned_ns < LW_COMM_RESCAN_NS) {
		for (int k = 0; k < t->nprev; k++) {
			char c[LW_COMM_LEN], state;

			if (t->prev_slot[k] != (int)g->slot)
				continue;
			if (lw_probe_stat(t->prev_pids[k], c, sizeof(c), &state, NULL) ||
			    state == 'Z' || state == 'X' || strcmp(c, g->opt->name))
				goto walk;
			n++;
		}
		for (int k = 0; k < t->nprev; k++)
			if (t->prev_slot[k] == (int)g->slot)
				pids_add(t, t->prev_pids[k]);
		return n;
	}
walk:
	g->scanned_ns = now;
	return comm_procs(t, g->opt->name);
}

/* A cgroup target now: its id, 0 while it does not exist, and its
 * processes into the union. */
static __u64 cgroup_now(struct lw_tracer *t, struct lw_target_live *g)
{
	char path[LW_PATH_MAX + LW_TARGET_NAME];
	int pids[LW_MAX_TGIDS], n;
	__u64 id;

	if (g->opt->kind == LW_TARGET_UNIT && !g->rel[0]) {
		if (unit_resolve(t, g))
			return 0;
		fprintf(stderr, "latwhy: unit %s: cgroup %s (%s)\n", g->opt->name, g->rel, g->how);
	}
	snprintf(path, sizeof(path), "%s%s", t->cg_mount, g->rel);
	if (lw_cgroup_id(path, &id)) {
		if (g->opt->kind == LW_TARGET_UNIT && g->searched)
			g->rel[0] = '\0'; /* searched: it may come back elsewhere */
		return 0;
	}
	n = lw_cgroup_procs_tree(path, pids, LW_MAX_TGIDS);
	g->nprocs = n > 0 ? n : 0;
	for (int i = 0; i < n && i < LW_MAX_TGIDS; i++)
		pids_add(t, pids[i]);
	return id;
}

/* The cgroup's id in targ_cgroups: the new one in, then the old one out. */
static void cgroup_apply(struct lw_tracer *t, struct lw_target_live *g, __u64 id)
{
	int fd = bpf_map__fd(t->skel->maps.targ_cgroups);

	if (id == g->cgid)
		return;
	if (id && bpf_map_update_elem(fd, &id, &g->slot, BPF_ANY)) {
		fprintf(stderr, "latwhy: cannot add cgroup %s to the filter: %s\n",
			g->opt ? g->opt->name : g->pod.path, strerror(errno));
		return;
	}
	if (g->cgid)
		bpf_map_delete_elem(fd, &g->cgid);
	if (id && !g->cgid)
		t->skel->bss->targ_ncgroups++;
	else if (!id && g->cgid)
		t->skel->bss->targ_ncgroups--;
	g->cgid = id;
}

/* Said once per state change: not there yet, gone, back. */
static void target_say(struct lw_tracer *t, struct lw_target_live *g, bool there)
{
	const char *name = g->opt->name;

	if (there && g->waiting) {
		if (g->seen)
			fprintf(stderr, "latwhy: %s %s is back: traced again\n", target_word(g),
				name);
		else
			fprintf(stderr, "latwhy: %s %s is there: traced\n", target_word(g), name);
	} else if (!there && !g->waiting) {
		fprintf(stderr,
			g->seen ? "latwhy: %s %s is gone: waiting for it to come back\n"
				: "latwhy: %s %s does not exist yet: waiting for it\n",
			target_word(g), name);
	}
	if (there)
		g->seen = true;
	g->waiting = !there;
}

/* The tgids of -p and --comm targets into targ_tgids; the ones that left
 * out, their bits recomputed. */
static void tgids_apply(struct lw_tracer *t, const int *slot_of)
{
	int fd = bpf_map__fd(t->skel->maps.targ_tgids);
	__u64 bits[LW_TGID_BITS / 64] = {};
	__u32 key, next, *prev = NULL;

	for (int i = 0; i < t->npids; i++) {
		if (slot_of[i] < 0)
			continue;
		if (lw_tracer_add_tgid(t, t->pids[i], slot_of[i]))
			continue;
		bits[(t->pids[i] % LW_TGID_BITS) / 64] |= 1ULL << (t->pids[i] % 64);
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool keep = false;

		for (int i = 0; i < t->npids && !keep; i++)
			keep = slot_of[i] >= 0 && (__u32)t->pids[i] == next;
		key = next;
		prev = &key;
		if (!keep && !bpf_map_delete_elem(fd, &key))
			prev = NULL; /* deleted: start over, the order changed */
	}
	for (int w = 0; w < LW_TGID_BITS / 64; w++)
		if (t->skel->bss->targ_tgid_bits[w] != bits[w])
			t->skel->bss->targ_tgid_bits[w] = bits[w];
}

/* One target process and no cgroup: BPF compares its tgid instead of
 * looking it up (state.bpf.h's targ_one). Set after the maps, so that
 * either test finds it. */
static void targets_one(struct lw_tracer *t, const int *slot_of)
{
	__u32 one = 0;
	int n = 0;

	for (int i = 0; i < t->npids; i++)
		if (slot_of[i] >= 0) {
			one = (__u32)t->pids[i];
			n++;
		}
	if (n != 1 || t->skel->bss->targ_ncgroups)
		one = 0;
	if (t->skel->bss->targ_one != one)
		t->skel->bss->targ_one = one;
}

/* The cgroup levels of the --cgroup and --unit targets, which take the
 * cgroups below theirs (state.bpf.h's targ_cg_levels): "/a/b" is level 2. */
static void cg_levels_apply(struct lw_tracer *t)
{
	__u32 levels = 0;

	for (int i = 0; i < t->nstatic; i++) {
		const struct lw_target_live *g = &t->tg[i];
		int level = 0;

		if ((g->opt->kind != LW_TARGET_CGROUP && g->opt->kind != LW_TARGET_UNIT) ||
		    !g->rel[0])
			continue;
		for (const char *p = g->rel; *p; p++)
			level += *p == '/' && p[1];
		if (level < LW_CG_ANCESTOR_LEVELS)
			levels |= 1U << level;
	}
	if (t->skel->bss->targ_cg_levels != levels)
		t->skel->bss->targ_cg_levels = levels;
}

/* A slot's kernel counters back to zero: it takes another container. */
static void slot_zero(struct lw_tracer *t, __u32 slot)
{
	struct bpf_map *maps[] = {t->skel->maps.lat_hist, t->skel->maps.cause_counts,
				  t->skel->maps.preempt_by};
	__u32 keys[] = {1 + slot, slot, slot};

	for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++) {
		size_t size = (size_t)t->nr_cpus * ((bpf_map__value_size(maps[m]) + 7) & ~7UL);
		void *zero = calloc(1, size);

		if (zero)
			bpf_map_update_elem(bpf_map__fd(maps[m]), &keys[m], zero, BPF_ANY);
		free(zero);
	}
}

/* Whether the pod is one of the pod targets'. */
static bool pod_wanted(const struct lw_tracer *t, const struct lw_pod *pod)
{
	for (int i = 0; i < t->o->ntargets; i++) {
		const struct lw_target_opt *o = &t->o->targets[i];
		size_t nl = strlen(pod->ns);

		if (o->kind == LW_TARGET_PODS)
			return true;
		if (o->kind == LW_TARGET_POD && pod->named && !strncmp(o->name, pod->ns, nl) &&
		    o->name[nl] == '/' && !strcmp(o->name + nl + 1, pod->name))
			return true;
	}
	return false;
}

/* Said when a pod comes and goes: of a pod target that names one, always;
 * of --pods, with -v (a node's pods come and go all day). */
static bool pod_said(const struct lw_tracer *t, const struct lw_target_pod *p)
{
	char want[LW_TARGET_NAME];

	snprintf(want, sizeof(want), "%s/%s", p->ns, p->name);
	for (int i = 0; i < t->o->ntargets; i++)
		if (t->o->targets[i].kind == LW_TARGET_POD && !strcmp(t->o->targets[i].name, want))
			return true;
	return t->o->verbose;
}

static void pod_fill(struct lw_target_pod *p, const struct lw_pod *pod, const struct lw_pod_ctr *c,
		     const char *mount)
{
	char path[LW_PATH_MAX + 256];
	struct lw_pod_ref r;
	__u64 id = 0;

	memset(p, 0, sizeof(*p));
	snprintf(p->ns, sizeof(p->ns), "%s", pod->ns);
	snprintf(p->name, sizeof(p->name), "%s", pod->name);
	snprintf(p->container, sizeof(p->container), "%s", c->name);
	snprintf(p->qos, sizeof(p->qos), "%s", pod->qos);
	snprintf(p->uid, sizeof(p->uid), "%s", pod->uid);
	snprintf(p->path, sizeof(p->path), "%s", c->path);
	p->named = pod->named;
	snprintf(path, sizeof(path), "%s%s", mount, pod->path);
	if (!lw_cgroup_id(path, &id))
		p->pod_cgid = id;
	if (!lw_pod_parse_path(pod->path, &r))
		p->pod_level = r.pod_level;
}

/* One container of a pod target now: its slot (kept, or a free one taken),
 * its id into targ_cgroups, its processes into the union. */
static void pod_ctr_now(struct lw_tracer *t, const struct lw_pod *pod, const struct lw_pod_ctr *c,
			bool apply, bool *seen)
{
	char path[LW_PATH_MAX + 256];
	int pids[LW_MAX_TGIDS], n, slot = -1;
	struct lw_target_live *g;
	__u64 id;

	for (int i = t->nstatic; i < t->ntg && slot < 0; i++)
		if (t->tg[i].pod_state == LW_SLOT_LIVE && !strcmp(t->tg[i].pod.path, c->path))
			slot = i;
	for (int i = t->nstatic; i < LW_MAX_TARGETS && slot < 0; i++)
		if (t->tg[i].pod_state == LW_SLOT_FREE)
			slot = i;
	if (slot < 0) {
		if (!t->pods_untraced++)
			fprintf(stderr,
				"latwhy: more pod containers than %d slots: %s/%s/%s and any "
				"more are not traced\n",
				LW_MAX_TARGETS - t->nstatic, pod->ns, pod->name, c->name);
		return;
	}
	g = &t->tg[slot];
	if (g->pod_state != LW_SLOT_LIVE) {
		if (apply && g->gen)
			slot_zero(t, slot);
		g->gen++;
		g->pod_state = LW_SLOT_LIVE;
		g->cgid = 0;
		pod_fill(&g->pod, pod, c, t->cg_mount);
		if (pod_said(t, &g->pod))
			fprintf(stderr, "latwhy: pod %s/%s, container %s: traced\n", pod->ns,
				pod->name, c->name[0] ? c->name : "(not named)");
		if (slot >= t->ntg)
			t->ntg = slot + 1;
	}
	seen[slot] = true;
	/* its pod, for the kernel's own-or-other-pod decision (preempt.bpf.h) */
	if (apply) {
		t->skel->bss->targ_pod_cg[slot] = g->pod.pod_cgid;
		t->skel->bss->targ_pod_level[slot] = g->pod.pod_level;
	}
	snprintf(path, sizeof(path), "%s%s", t->cg_mount, c->path);
	if (lw_cgroup_id(path, &id))
		id = 0;
	n = lw_cgroup_procs(path, pids, LW_MAX_TGIDS);
	g->nprocs = n > 0 ? n : 0;
	for (int i = 0; i < n && i < LW_MAX_TGIDS; i++) {
		int k = t->npids;

		if (!pids_add(t, pids[i]) && t->npids > k)
			t->pid_slot[k] = slot;
	}
	if (apply)
		cgroup_apply(t, g, id);
}

/*
 * The pod targets' containers now, from the kubelet's cgroup tree and log
 * tree (node/pods.h): a new one takes a slot, one gone leaves the filter
 * at once and its slot after LW_POD_HOLD_NS. One walk of the kubepods tree
 * and the log directories each refresh.
 */
static void pods_refresh(struct lw_tracer *t, bool apply)
{
	bool seen[LW_MAX_TARGETS] = {};
	__u64 now = lw_now_ns();
	struct lw_pods pods;

	if (lw_pods_read("/", t->cg_mount[0] ? t->cg_mount : "/", &pods)) {
		lw_pods_free(&pods);
		return;
	}
	for (int i = 0; i < pods.n; i++) {
		if (!pod_wanted(t, &pods.pod[i]))
			continue;
		for (int k = 0; k < pods.pod[i].nctr; k++)
			pod_ctr_now(t, &pods.pod[i], &pods.pod[i].ctr[k], apply, seen);
	}
	lw_pods_free(&pods);
	for (int i = t->nstatic; i < t->ntg; i++) {
		struct lw_target_live *g = &t->tg[i];

		if (g->pod_state == LW_SLOT_LIVE && !seen[i]) {
			g->pod_state = LW_SLOT_GONE;
			g->gone_ns = now;
			g->nprocs = 0;
			if (pod_said(t, &g->pod))
				fprintf(stderr, "latwhy: pod %s/%s, container %s: gone\n",
					g->pod.ns, g->pod.name, g->pod.container);
			if (apply)
				cgroup_apply(t, g, 0);
		} else if (g->pod_state == LW_SLOT_GONE && now - g->gone_ns >= LW_POD_HOLD_NS) {
			g->pod_state = LW_SLOT_FREE;
		}
	}
}

/*
 * The kubelet's kubepods cgroups (systemd and cgroupfs drivers, where
 * lw_pods_read() looks) into the kernel's kubepods_cg: a task below one is
 * a pod's, a target or not (preempt.bpf.h). Looked up each refresh, for any
 * target: a kubelet started after latwhy is seen within a second.
 */
static void kubepods_apply(struct lw_tracer *t)
{
	static const char *const tops[] = {"/kubepods.slice", "/kubepods"};

	_Static_assert(sizeof(tops) / sizeof(tops[0]) ==
			       sizeof(t->skel->bss->kubepods_cg) /
				       sizeof(t->skel->bss->kubepods_cg[0]),
		       "a kubepods_cg entry for each top");
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		char path[LW_PATH_MAX + 32];
		__u64 id = 0;

		snprintf(path, sizeof(path), "%s%s", t->cg_mount, tops[i]);
		if (!t->cg_known || lw_cgroup_id(path, &id))
			id = 0;
		if (t->skel->bss->kubepods_cg[i] != id)
			t->skel->bss->kubepods_cg[i] = id;
	}
}

int lw_targets_refresh(struct lw_tracer *t, bool apply)
{
	int slot_of[LW_MAX_TGIDS];
	__u64 ids[LW_MAX_TARGETS] = {};
	bool alive = false;

	memcpy(t->prev_pids, t->pids, t->npids * sizeof(t->pids[0]));
	memcpy(t->prev_slot, t->pid_slot, t->npids * sizeof(t->pid_slot[0]));
	t->nprev = t->npids;
	t->npids = 0;
	for (int i = 0; i < t->nstatic; i++) {
		struct lw_target_live *g = &t->tg[i];
		int before = t->npids;
		bool there;

		switch (g->opt->kind) {
		case LW_TARGET_PID: {
			char state;

			there = !lw_probe_stat(g->opt->pid, NULL, 0, &state, NULL) &&
				state != 'Z' && state != 'X';
			if (there)
				pids_add(t, g->opt->pid);
			alive |= there;
			break;
		}
		case LW_TARGET_COMM:
			g->nprocs = comm_now(t, g);
			there = g->nprocs > 0;
			alive = true; /* waited for: never the end */
			break;
		default:
			ids[i] = cgroup_now(t, g);
			there = ids[i] != 0;
			alive = true;
		}
		for (int k = before; k < t->npids; k++)
			t->pid_slot[k] = g->slot;
		for (int k = before; k < t->npids; k++)
			slot_of[k] = g->opt->kind == LW_TARGET_PID || g->opt->kind == LW_TARGET_COMM
					     ? (int)g->slot
					     : -1;
		if (g->opt->kind != LW_TARGET_PID)
			target_say(t, g, there);
	}
	if (t->pods) {
		int before = t->npids;

		pods_refresh(t, apply);
		for (int k = before; k < t->npids; k++)
			slot_of[k] = -1;
		alive = true;
	}
	t->target_exited = !alive;
	t->pids_changed = t->npids != t->nprev ||
			  memcmp(t->pids, t->prev_pids, t->npids * sizeof(t->pids[0]));
	if (!apply)
		return 0;
	tgids_apply(t, slot_of);
	cg_levels_apply(t);
	kubepods_apply(t);
	for (int i = 0; i < t->nstatic; i++)
		if (t->tg[i].opt->kind == LW_TARGET_CGROUP || t->tg[i].opt->kind == LW_TARGET_UNIT)
			cgroup_apply(t, &t->tg[i], ids[i]);
	targets_one(t, slot_of);
	return 0;
}

int lw_targets_init(struct lw_tracer *t)
{
	bool cg = false;
	int err;

	for (int i = 0; i < t->o->ntargets; i++) {
		const struct lw_target_opt *o = &t->o->targets[i];
		struct lw_target_live *g = &t->tg[t->nstatic];

		if (o->kind == LW_TARGET_PODS || o->kind == LW_TARGET_POD) {
			t->pods = true;
			continue;
		}
		g->opt = o;
		g->slot = t->nstatic++;
		g->how = "";
		if (g->opt->kind == LW_TARGET_CGROUP)
			snprintf(g->rel, sizeof(g->rel), "%s", g->opt->name);
		if (g->opt->kind == LW_TARGET_PID &&
		    lw_probe_target(g->opt->pid, g->comm, sizeof(g->comm)))
			return -ESRCH;
		cg |= g->opt->kind == LW_TARGET_CGROUP || g->opt->kind == LW_TARGET_UNIT;
	}
	t->ntg = t->nstatic;
	for (int i = t->nstatic; i < LW_MAX_TARGETS; i++)
		t->tg[i].slot = i;
	err = lw_cgroup2_mount("/", t->cg_mount, sizeof(t->cg_mount));
	t->cg_known = !err;
	/* any target's preemptors may be pods' (kubepods_apply()); only
	 * these targets need the mount */
	if (!cg && !t->pods) {
		if (err)
			t->cg_mount[0] = '\0';
		else if (!strcmp(t->cg_mount, "/"))
			t->cg_mount[0] = '\0';
		return 0;
	}
	if (err) {
		fprintf(stderr,
			err == -ENOENT ? "latwhy: --cgroup, --unit and pods need cgroup v2, and no "
					 "cgroup2 file system is mounted\n"
				       : "latwhy: cannot read /proc/self/mountinfo: %s\n",
			strerror(-err));
		return err;
	}
	/* "/" is the root itself: no trailing slash to join paths with */
	if (!strcmp(t->cg_mount, "/"))
		t->cg_mount[0] = '\0';
	return 0;
}

int lw_tracer_targets(const struct lw_tracer *t)
{
	return t->ntg;
}

void lw_tracer_target_label(const struct lw_tracer *t, int slot, char *buf, size_t len)
{
	const struct lw_target_live *g = &t->tg[slot];

	if (slot >= t->nstatic) {
		snprintf(buf, len, "%s/%s/%s", g->pod.ns, g->pod.name, g->pod.container);
		return;
	}
	snprintf(buf, len, "%s", g->opt->kind == LW_TARGET_PID ? g->comm : g->opt->name);
}

bool lw_tracer_target_pod(const struct lw_tracer *t, int slot, struct lw_target_pod *p, int *state,
			  __u32 *gen)
{
	const struct lw_target_live *g;

	if (slot < t->nstatic || slot >= t->ntg)
		return false;
	g = &t->tg[slot];
	if (p)
		*p = g->pod;
	if (state)
		*state = g->pod_state;
	if (gen)
		*gen = g->gen;
	return true;
}

int lw_tracer_target_pid(const struct lw_tracer *t, int slot)
{
	for (int i = 0; i < t->npids; i++)
		if (t->pid_slot[i] == slot)
			return t->pids[i];
	return 0;
}
