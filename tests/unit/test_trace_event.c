// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The trace-event writer: overlapping requests of one thread (an event
 * loop) go to lanes of their own, so that slices nest per track; a clock
 * never measured is no counter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "latwhy.h"
#include "output/trace_event.h"

static void feed_req(struct lw_sink *s, __u32 tid, __u64 start_us, __u64 dur_us)
{
	struct lw_request r = {.type = LW_REC_REQUEST, .pid = 7, .tid = tid, .comm = "w"};

	r.start_ns = start_us * 1000;
	r.latency_ns = dur_us * 1000;
	r.ns[LW_B_SCHED] = r.latency_ns;
	assert_int_equal(lw_sink_record(s, &r, sizeof(r)), 0);
}

static char *write_out(struct lw_trace_event *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(lw_trace_event_write(t, f), 0);
	fclose(f);
	return buf;
}

static void test_lanes(void **state)
{
	struct lw_trace_event *t = lw_trace_event_new();
	struct lw_sink s = lw_trace_event_sink(t);
	struct lw_meta_rec m = {.type = LW_REC_META, .pid = 7, .comm = "srv"};
	struct lw_cpu_rec unmeasured = {.type = LW_REC_CPU, .cpu = 1, .khz = 2000000};
	char *out;

	assert_int_equal(lw_sink_record(&s, &m, sizeof(m)), 0);
	assert_int_equal(lw_sink_record(&s, &unmeasured, sizeof(unmeasured)), 0);
	feed_req(&s, 10, 1000, 100); /* lane 1 */
	feed_req(&s, 10, 1050, 100); /* overlaps: lane 2 */
	feed_req(&s, 10, 1060, 10);  /* both busy: lane 3 */
	feed_req(&s, 10, 1200, 10);  /* all free again: lane 1 */
	feed_req(&s, 11, 1050, 100); /* another thread: its own lane 1 */
	out = write_out(t);
	assert_non_null(strstr(out,
			       "\"name\":\"process_name\",\"pid\":7,\"tid\":0,\"args\":{\"name\":"
			       "\"srv (pid 7)\"}"));
	assert_non_null(strstr(out, "\"tid\":10,\"args\":{\"name\":\"w 10\"}"));
	assert_non_null(strstr(out, "\"tid\":4194314,\"args\":{\"name\":\"w 10 #2\"}"));
	assert_non_null(strstr(out, "\"tid\":8388618,\"args\":{\"name\":\"w 10 #3\"}"));
	assert_non_null(strstr(out, "\"tid\":11,\"args\":{\"name\":\"w 11\"}"));
	assert_null(strstr(out, "\"tid\":4194315"));
	/* microseconds from the first request */
	assert_non_null(strstr(out, "\"tid\":8388618,\"ts\":60,\"dur\":10,"));
	assert_non_null(strstr(out, "\"tid\":10,\"ts\":200,\"dur\":10,"));
	/* no clock events were seen: no clock counter */
	assert_null(strstr(out, "clock cpu"));
	free(out);
	lw_trace_event_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lanes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
