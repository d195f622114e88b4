// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * requests.c - the NDJSON line of a slow request.
 *
 * Rule: never print a number that was not measured. A bucket its flags say
 * was not measured is null, and a request answered by another thread has no
 * cause.
 */
#include "output/json.h"
#include "output/requests.h"

static void request_buckets(struct lw_json *j, const struct lw_request *req)
{
	lw_json_key(j, "ns");
	lw_json_begin_object(j);
	for (int b = 0; b < LW_B_MAX; b++) {
		if (b == LW_B_FREQ && !(req->flags & LW_REQ_FREQ_KNOWN))
			lw_json_knull(j, lw_bucket_name(b)); /* no clock data */
		else if (b == LW_B_IDLE_POLL && !(req->flags & LW_REQ_IDLE_KNOWN))
			lw_json_knull(j, lw_bucket_name(b)); /* no idle states */
		else if (b == LW_B_IRQ_ENTRY && !(req->flags & LW_REQ_IRQ_ENTRY_KNOWN))
			lw_json_knull(j, lw_bucket_name(b)); /* no entry cost */
		else if (b == LW_B_QUOTA && !(req->flags & LW_REQ_QUOTA_KNOWN))
			lw_json_knull(j, lw_bucket_name(b)); /* no throttling read */
		else if (b >= LW_B_FAULT && b <= LW_B_FAULT_WAIT &&
			 !(req->flags & LW_REQ_MEMORY_KNOWN))
			lw_json_knull(j, lw_bucket_name(b)); /* no faults traced */
		else if (b == LW_B_FAULT_ENTRY && !(req->flags & LW_REQ_FAULT_ENTRY_KNOWN))
			lw_json_knull(j, lw_bucket_name(b)); /* no fault cost */
		else if (b == LW_B_STEAL && !(req->flags & LW_REQ_STEAL_KNOWN))
			lw_json_knull(j, lw_bucket_name(b)); /* no steal clock */
		else
			lw_json_ku64(j, lw_bucket_name(b), req->ns[b]);
	}
	lw_json_end_object(j);
}

void lw_request_write(FILE *f, const struct lw_request *req)
{
	struct lw_json j;

	lw_json_init(&j, f, false);
	lw_json_begin_object(&j);
	lw_json_kstr(&j, "type", "request");
	lw_json_ku64(&j, "pid", req->pid);
	lw_json_ku64(&j, "tid", req->tid);
	lw_json_kstr(&j, "comm", req->comm);
	lw_json_ku64(&j, "cpu", req->cpu);
	lw_json_ku64(&j, "start_ns", req->start_ns);
	lw_json_ku64(&j, "latency_ns", req->latency_ns);
	if (req->flags & LW_REQ_INCOMPLETE)
		lw_json_kbool(&j, "incomplete", true);
	if (req->flags & LW_REQ_HANDOFF) {
		/* answered by another thread: no split, so no cause */
		lw_json_kbool(&j, "handed_off", true);
		lw_json_knull(&j, "cause");
	} else {
		lw_json_kstr(&j, "cause", lw_cause_name(lw_request_cause(req)));
	}
	request_buckets(&j, req);
	if (req->flags & LW_REQ_MEMORY_KNOWN) { /* ABI 3: its page faults */
		lw_json_key(&j, "faults");
		lw_json_begin_object(&j);
		lw_json_ku64(&j, "minor", req->faults_min);
		lw_json_ku64(&j, "major", req->faults_maj);
		lw_json_end_object(&j);
	}
	if (req->preempt_pid) {
		lw_json_key(&j, "preempted_by");
		lw_json_begin_object(&j);
		lw_json_ku64(&j, "pid", req->preempt_pid);
		lw_json_kstr(&j, "comm", req->preempt_comm);
		lw_json_ku64(&j, "ns", req->preempt_ns);
		lw_json_end_object(&j);
	}
	lw_json_end_object(&j);
	lw_json_end(&j);
	fflush(f);
}

void lw_requests_on_request(void *ctx, const struct lw_request *req)
{
	lw_request_write(ctx, req);
}
