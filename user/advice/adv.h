/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * adv.h - what the advisors share: the finding being built, text builders,
 * formatting helpers and the table of advisors. Private to advice/.
 *
 * One advisor per cause domain (freq.c, idle.c, ...): its node check judges
 * the node's switches for `latwhy check`, its trace step fills the finding of
 * its cause in a trace. Detection (which CPUs, states, IRQs are affected) is
 * kept apart from the plan builders (fill_*), so both share the plans. Adding
 * a cause is one new file defining its struct lw_advisor, declared below, and
 * one entry in core.c's table.
 */
#ifndef LW_ADV_H
#define LW_ADV_H

#include <stdbool.h>
#include <stdio.h>

#include "advice/advise.h"

#define CPU_DIR "/sys/devices/system/cpu"

struct adv {
	const struct lw_node *n;
	struct lw_findings *out;
	struct lw_finding *f; /* the finding being built */
	int err;	      /* first error, sticky */
};

/* A string built with printf calls, then handed to a finding field. */
struct adv_text {
	char *s;
	size_t len;
	FILE *m;
};

struct lw_advisor {
	/* of the findings it makes; several advisors may share a cause, but
	 * only one of them has its trace step */
	enum lw_cause cause;
	/* findings about the node's switches alone; NULL: none */
	void (*check)(struct adv *a);
	/* fill a->f, the trace finding of cause (the core leads its evidence with
	 * the cause's share); on: the CPUs the target ran on. NULL: none */
	void (*trace)(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on);
	/* whether t makes a trace finding even with a share under
	 * LW_SHARE_FINDING; NULL: never */
	bool (*due)(const struct lw_node *n, const struct lw_trace_facts *t);
	/* findings the trace finding leads to, made after it (a->f is NULL
	 * then, the findings may move); NULL: none */
	void (*related)(struct adv *a, const struct lw_trace_facts *t, const struct lw_cpuset *on);
};

/* In core.c's table, in the order node findings are made. */
extern const struct lw_advisor lw_advisor_freq;
extern const struct lw_advisor lw_advisor_idle;
extern const struct lw_advisor lw_advisor_thp;
extern const struct lw_advisor lw_advisor_irq;
extern const struct lw_advisor lw_advisor_quota;
extern const struct lw_advisor lw_advisor_nic;
extern const struct lw_advisor lw_advisor_sched;
extern const struct lw_advisor lw_advisor_memory;

/* Start a finding in a->f; NULL after an earlier error or on ENOMEM. */
struct lw_finding *adv_begin(struct adv *a, enum lw_cause c, enum lw_severity s);
/* Append to v; nothing after an error or without a finding. */
void adv_add(struct adv *a, struct lw_strv *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set *dst; it frees the old string only after formatting the new one (lw_vset),
 * so the old one may be an argument. */
void adv_put(struct adv *a, char **dst, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void adv_text_open(struct adv *a, struct adv_text *t);
void adv_text_add(struct adv_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close t and move its string into *dst (or drop it on error). */
void adv_text_close(struct adv *a, struct adv_text *t, char **dst);
/* Close t and give its string to the caller, who frees it; NULL on error. */
char *adv_text_take(struct adv *a, struct adv_text *t);
void adv_text_drop(struct adv_text *t);

/* "2-3", or "none" for an empty set; returns buf. */
const char *adv_cpus_str(const struct lw_cpuset *s, char *buf, size_t len);
/* "0 1 2 3": a CPU list for a shell for-loop in a unit file. */
void adv_cpu_words(const struct lw_cpuset *s, char *buf, size_t len);

static inline unsigned adv_mhz(unsigned khz)
{
	return (khz + 500) / 1000;
}

/* The CPUs that matter: the target's allowed CPUs, else every online CPU. */
struct lw_cpuset adv_cpus_of_interest(const struct lw_node *n);
/* nic's findings (nic.c), appended to a->out; a->f is NULL after. */
void adv_nic_findings(struct adv *a, const struct lw_nic *nic);
/* "eth2's queue 1 (i40e, 4 of 16 combined channels)": which of nic's queues
 * irq serves, for evidence; returns buf. */
const char *adv_nic_irq_role(const struct lw_nic *nic, unsigned irq, char *buf, size_t len);

/* The trace could not tell throttled waits apart (t->no_quota) and the
 * target's binding CPU limit throttled (over the trace when its start was
 * read, else ever): its sched and idle time may be the quota's, so those
 * advisors give no CPU move, C-state or haltpoll fix for it (quota.c). */
bool adv_quota_hides(const struct lw_node *n, const struct lw_trace_facts *t);

/* "gateway.service" when the target's cgroup is a systemd service, else NULL. */
const char *adv_target_unit(const struct lw_node *n);

#endif /* LW_ADV_H */
