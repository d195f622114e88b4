// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * duty.c - the tracer's duty cycle: its BPF links destroyed while off and
 * made again when on.
 *
 * Destroying a link (closing its fd) unregisters the program from its
 * tracepoint, so the target's events run no latwhy code at all; the programs
 * stay loaded and verified, and the maps, the ring buffer and their fds stay
 * open with their contents. Attaching again is then one link-create syscall
 * a program, no load and no verification. bpf_link__detach() would gain
 * nothing: a detached link cannot be attached again, only made anew.
 *
 * What the programs keep between two events (a thread's open requests and
 * its scheduler state, a socket's unread arrival, a CPU's handler in
 * progress) is stale after a gap in which nothing was seen. The BPF side
 * starts a thread's and a socket's state afresh when its attach_gen is older
 * (state.bpf.h); the CPUs' in-progress fields are cleared here, while
 * nothing runs. Cumulative counters and evidence are kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "latwhy.h"
#include "latwhy.skel.h"
#include "engine/escalate.h"
#include "source/duty.h"
#include "source/tracer_int.h"

struct lw_duty_state {
	struct lw_duty d;
	__u64 epoch;
	__u64 next;    /* when the schedule changes next */
	bool sched_on; /* the schedule says attached */
	bool attached;
	bool started; /* the first poll ran */
	lw_duty_fn fn;
	void *ctx;
	/* escalation, with the always-attached tier: each slot's rule, its
	 * counts at the last step, whether one is raised and since when its
	 * rise's first slow request was */
	struct lw_esc esc[LW_MAX_TARGETS];
	__u64 prev_req[LW_MAX_TARGETS], prev_lat[LW_MAX_TARGETS], prev_slow[LW_MAX_TARGETS];
	__u64 prev_all[LW_MAX_TARGETS]; /* every request (estimated), for the rate */
	bool hints_again;		/* clear the sockets' hints at the next step */
	__u64 next_step, last_step;
	bool escalated;
	bool rising;	 /* raised since the last attach: its delay not told yet */
	bool esc_attach; /* attached now for a rise, not the schedule */
	bool checking;	 /* a rise let full tracing go for the cheap tier to judge */
	bool again;	 /* this step: a check saw its rise still there */
	bool changed;	 /* full tracing came or went since the last step */
	__u64 rise_since;
	/* full tracing's attached time not yet taken by a tier record */
	__u64 full_ns, full_since;
	/* an attach failed (told once): not tried again before retry_at */
	bool failing;
	__u64 retry_at;
};

bool lw_duty_at(const struct lw_duty *d, __u64 epoch, __u64 now, __u64 *next)
{
	__u64 phase;

	if (!d->every_ns || d->on_ns >= d->every_ns) {
		*next = LW_DUTY_NEVER;
		return true;
	}
	if (now < epoch) {
		*next = epoch;
		return false;
	}
	phase = (now - epoch) % d->every_ns;
	if (phase < d->on_ns) {
		*next = now - phase + d->on_ns;
		return true;
	}
	*next = now - phase + d->every_ns;
	return false;
}

void lw_tracer_set_duty(struct lw_tracer *t, const struct lw_duty *d, __u64 epoch, lw_duty_fn fn,
			void *ctx)
{
	struct lw_duty_state *s = t->duty ? t->duty : calloc(1, sizeof(*s));

	if (!s) { /* then always attached, as without a duty cycle */
		fprintf(stderr, "latwhy: out of memory: --sample ignored\n");
		return;
	}
	memset(s, 0, sizeof(*s));
	s->d = *d;
	s->d.escalate = d->escalate && t->watch; /* nothing to see a rise else */
	s->epoch = epoch;
	s->attached = true;
	s->fn = fn;
	s->ctx = ctx;
	t->duty = s;
}

static void duty_tell(const struct lw_duty_state *s, bool on, bool esc, __u64 now, __u64 delay)
{
	struct lw_duty_change c = {
		.attached = on, .escalated = esc, .now_ns = now, .delay_ns = delay};

	if (s->fn)
		s->fn(s->ctx, &c);
}

/* Full tracing's attached time up to now into full_ns, from now on if on. */
static void duty_account(struct lw_duty_state *s, bool on, __u64 now)
{
	if (s->full_since && now > s->full_since)
		s->full_ns += now - s->full_since;
	s->full_since = on ? now : 0;
}

__u64 lw_duty_take_full_ns(struct lw_tracer *t, __u64 now)
{
	struct lw_duty_state *s = t->duty;
	__u64 ns;

	if (!s)
		return 0;
	duty_account(s, s->attached && s->started, now);
	ns = s->full_ns;
	s->full_ns = 0;
	return ns;
}

bool lw_duty_escalated(const struct lw_tracer *t)
{
	return t->duty && (t->duty->escalated || t->duty->checking);
}

/* A rise over, full tracing detached for it (at once, or at a check). */
static const char duty_fell_msg[] = "latwhy: detached: slow requests back to their baseline\n";

/* The slot's share of requests sampled, for about the rule's rate from the
 * rate of the last step (the first sets none); true if it changed. */
static bool duty_shift(struct lw_duty_state *s, struct latwhy_bpf__bss *b, int i, __u64 now)
{
	__u64 all = b->watch_req[i], dt = now - s->last_step, prev = s->prev_all[i];
	unsigned int was = b->watch_shift[i];
	double rate;

	s->prev_all[i] = all;
	if (!s->last_step || !dt)
		return false;
	rate = (double)(all - prev) * 1e9 / (double)dt;
	b->watch_shift[i] = lw_esc_shift(&lw_esc_defaults, rate, was, LW_WATCH_SHIFT_MAX);
	return b->watch_shift[i] != was;
}

/*
 * The sockets' hints (watch.bpf.h) forgotten once a shift has changed, and
 * again at the next step: a hint over its socket's shift would sample its
 * requests at the hint's, fewer than their weight says (a program that read
 * the old shift may write it back after the first clear).
 */
static void duty_hints(struct lw_duty_state *s, struct latwhy_bpf__bss *b, bool changed)
{
	if (changed || s->hints_again)
		memset((void *)b->watch_hint, 0, sizeof(b->watch_hint));
	s->hints_again = changed;
}

/*
 * One step of every slot's escalation rule on the always-attached tier's
 * timed requests (.bss, through the mmap: no syscall), each slot's first
 * slow request of the step zeroed for the next; escalated while any is
 * raised.
 */
static void duty_step(struct lw_tracer *t, __u64 now)
{
	struct lw_duty_state *s = t->duty;
	struct latwhy_bpf__bss *b = t->skel->bss;
	enum lw_esc_tier tier = s->changed    ? LW_ESC_MIXED
				: s->attached ? LW_ESC_FULL
					      : LW_ESC_WATCH;
	bool any = false, checking = false, checked = false, shifted = false;

	s->again = false;
	for (int i = 0; i < t->ntg && i < LW_MAX_TARGETS; i++) {
		__u64 req = b->watch_timed[i], lat = b->watch_lat_ns[i], slow = b->watch_slow[i];
		struct lw_esc_counts n = {.req = req - s->prev_req[i],
					  .lat_ns = lat - s->prev_lat[i],
					  .slow = slow - s->prev_slow[i],
					  .first_ns = b->watch_first_ns[i],
					  .tier = tier};
		__u64 since = 0;
		bool was = s->esc[i].checking;
		enum lw_esc_change ch;

		b->watch_first_ns[i] = 0;
		shifted |= duty_shift(s, b, i, now);
		ch = lw_esc_step(&lw_esc_defaults, &s->esc[i], now, &n, &since);
		if (ch == LW_ESC_RISE && !s->escalated && !s->rising) {
			s->rising = true;
			s->rise_since = since;
		}
		s->again |= ch == LW_ESC_AGAIN;
		checked |= ch == LW_ESC_FALL && was;
		checking |= s->esc[i].checking;
		s->prev_req[i] = req;
		s->prev_lat[i] = lat;
		s->prev_slow[i] = slow;
		any |= s->esc[i].raised;
	}
	duty_hints(s, b, shifted);
	s->last_step = now;
	s->escalated = any;
	s->checking = checking;
	s->changed = false;
	if (!any)
		s->rising = false;
	/* a check's end: detached at its start, told now */
	if (t->o->verbose && checked && !any && !checking)
		fputs(duty_fell_msg, stderr);
}

/* Every link, the late and the manual ones included (the skeleton holds
 * them all); the page-fault events disabled. */
static void duty_unlink(struct lw_tracer *t)
{
	latwhy_bpf__detach(t->skel);
	lw_memory_detach(t);
}

/* Unlinked, then what the ring buffer still has, and the counters as they
 * stand: published now, they do not move until the next attach. */
static void duty_detach(struct lw_tracer *t)
{
	duty_unlink(t);
	ring_buffer__consume(t->rb);
	lw_tracer_tick_now(t);
}

/* The fields of lw_cpu_state that say what is in progress on a CPU, not
 * what it accumulated: as at the first attach (0: none). */
static void duty_reset_cpus(struct lw_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.cpus);

	for (__u32 c = 0; c < (__u32)t->nr_cpus && c < LW_MAX_CPUS; c++) {
		struct lw_cpu_state cs;

		if (bpf_map_lookup_elem(fd, &c, &cs))
			continue;
		cs.target_cur = 0;
		cs.waiters = 0;
		cs.irq_start = 0;
		cs.softirq_start = 0;
		cs.softirq_irq_snap = 0;
		cs.thp_start = 0;
		cs.ksd_start = 0;
		cs.idle_polling = 0;
		bpf_map_update_elem(fd, &c, &cs, BPF_EXIST);
	}
}

/* A receive-backlog wait NET_RX took before the gap waits for no one now. */
static void duty_reset_backlog(struct lw_tracer *t)
{
	struct bpf_map *m = t->skel->maps.rx_last;
	size_t vs = (bpf_map__value_size(m) + 7) & ~7UL;
	void *zero = calloc(t->nr_cpus, vs);
	__u32 key = 0;

	if (!zero)
		return;
	bpf_map_update_elem(bpf_map__fd(m), &key, zero, BPF_EXIST);
	free(zero);
}

static int duty_attach(struct lw_tracer *t)
{
	struct latwhy_bpf *s = t->skel;
	bool sock_send = s->bss->sock_send_on;
	int err;

	/* no request starts while only some programs are back (armed) */
	s->bss->armed = false;
	s->bss->attach_gen++;
	duty_reset_cpus(t);
	if (s->rodata->backlog_known)
		duty_reset_backlog(t);
	err = lw_tracer_attach(t);
	if (err) {
		s->bss->sock_send_on = sock_send; /* for the next try */
		return err;
	}
	/* attached late (control.c) when it was on: on again */
	if (sock_send && !s->links.lw_sock_send) {
		s->links.lw_sock_send = bpf_program__attach(s->progs.lw_sock_send);
		if (!s->links.lw_sock_send)
			fprintf(stderr,
				"latwhy: cannot attach sock_send_length again (%s): requests on "
				"non-TCP sockets are not traced\n",
				strerror(errno));
	}
	s->bss->sock_send_on = s->links.lw_sock_send != NULL;
	s->bss->armed = true;
	return 0;
}

/* Full tracing could not be attached again (a uprobe's binary gone, a
 * program the kernel refuses now): serve goes on with the always-attached
 * tier, and full tracing is tried again in LW_DUTY_RETRY_NS. */
static void duty_attach_failed(struct lw_tracer *t, int err, __u64 now)
{
	struct lw_duty_state *s = t->duty;

	duty_unlink(t); /* what did attach */
	s->retry_at = now + LW_DUTY_RETRY_NS;
	if (!s->failing)
		fprintf(stderr,
			"latwhy: full tracing not attached (%s): tried again every %.0f s; "
			"what stays attached goes on\n",
			strerror(-err), LW_DUTY_RETRY_NS / 1e9);
	s->failing = true;
}

int lw_duty_poll(struct lw_tracer *t, __u64 now)
{
	struct lw_duty_state *s = t->duty;
	__u64 delay = 0;
	bool on, esc;
	int err;

	if (!s->started) { /* attached since the run began */
		duty_tell(s, true, false, t->start_ns, 0);
		duty_account(s, true, t->start_ns);
		s->sched_on = lw_duty_at(&s->d, s->epoch, now, &s->next);
		s->next_step = now + LW_ESC_STEP_NS;
		s->started = true;
	}
	if (now >= s->next)
		s->sched_on = lw_duty_at(&s->d, s->epoch, now, &s->next);
	if (s->d.escalate && now >= s->next_step) {
		duty_step(t, now);
		s->next_step = now + LW_ESC_STEP_NS;
	}
	on = s->sched_on || s->escalated;
	if (on && !s->attached && now < s->retry_at)
		on = false;
	if (on == s->attached)
		return 0;
	if (on) {
		err = duty_attach(t);
		if (err) {
			duty_attach_failed(t, err, now);
			return 0;
		}
		if (s->failing)
			fprintf(stderr, "latwhy: full tracing attached again\n");
		s->failing = false;
		s->attached = true;
	} else {
		s->attached = false; /* first: the tick out of turn attaches nothing */
		duty_detach(t);
	}
	now = lw_now_ns(); /* after the attach: when tracing began */
	duty_account(s, on, now);
	s->changed = true;
	esc = on && s->rising;
	if (esc) {
		delay = now > s->rise_since ? now - s->rise_since : 0;
		s->rising = false;
		t->escalations++;
	}
	if (t->o->verbose && esc)
		fprintf(stderr,
			"latwhy: attached on a rise of slow requests, %.2f s after the first\n",
			delay / 1e9);
	else if (t->o->verbose && on && s->again)
		fprintf(stderr,
			"latwhy: attached again: the rise outlasts full tracing's own cost\n");
	else if (t->o->verbose && !on && s->checking)
		fprintf(stderr, "latwhy: detached for a check: the rise without full tracing's own "
				"cost\n");
	else if (t->o->verbose && !on && s->esc_attach)
		fputs(duty_fell_msg, stderr);
	else if (t->o->verbose)
		fprintf(stderr, "latwhy: %s for %.1f s\n", on ? "attached" : "detached",
			(s->next - now) / 1e9);
	s->esc_attach = on && (esc || s->escalated) && !s->sched_on;
	duty_tell(s, on, esc, now, delay);
	return 0;
}

bool lw_duty_attached(const struct lw_tracer *t)
{
	return !t->duty || t->duty->attached;
}

__u64 lw_duty_next(const struct lw_tracer *t)
{
	const struct lw_duty_state *s = t->duty;

	if (!s || !s->started)
		return 0;
	if (s->d.escalate && s->next_step < s->next)
		return s->next_step; /* the escalation rule's next step */
	if (s->failing && s->retry_at < s->next)
		return s->retry_at;
	return s->next;
}

void lw_duty_idle_tick(struct lw_tracer *t, __u64 now)
{
	lw_control_tick(t, now);
	t->last_tick_ns = now; /* not late: tracer_keep_up() */
}

void lw_duty_end(struct lw_tracer *t, __u64 now)
{
	if (t->duty && t->duty->started)
		duty_tell(t->duty, false, false, now, 0);
}
