// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * floor.c - load floor.bpf.o, attach every program, stay attached until
 * SIGINT/SIGTERM. Built and run by tools/bench/run.sh:
 *
 *   floor OBJ [PREFIX [NOT]]  prints "floor: pid=P attached=N skipped=M" once
 *                             attached
 *
 * Programs named fl_* (the leads) are attached before the others. With
 * PREFIX, only the programs whose names start with it are loaded (fb_: one
 * empty tp_btf per tracepoint, the bench's "floor" mode on real servers);
 * NOT is a comma-separated list of tracepoints left out (the ones latwhy's
 * default request mode does not attach).
 *
 * A tracepoint this kernel lacks (no btf_trace_<tp> in vmlinux BTF) is
 * skipped rather than failing the whole load; so are the classic tracepoint
 * programs when tracefs is not mounted. Each skip is named on stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* "raw_tp/sched_switch", "tp_btf/sched_switch", "tracepoint/sched/sched_switch"
 * -> "sched_switch" */
static const char *tp_of(const struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p), *slash = strrchr(sec, '/');

	return slash ? slash + 1 : sec;
}

/* raw_tp, tp_btf or a classic tracepoint (not fentry/fexit) */
static bool is_tracepoint(const struct bpf_program *p)
{
	enum bpf_prog_type t = bpf_program__type(p);

	return t == BPF_PROG_TYPE_RAW_TRACEPOINT || t == BPF_PROG_TYPE_TRACEPOINT ||
	       (t == BPF_PROG_TYPE_TRACING &&
		bpf_program__expected_attach_type(p) == BPF_TRACE_RAW_TP);
}

static bool tracefs_mounted(void)
{
	return !access("/sys/kernel/tracing/events", F_OK) ||
	       !access("/sys/kernel/debug/tracing/events", F_OK);
}

/* name is an element of the comma-separated list */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	struct btf *vmlinux;
	sigset_t set, old;
	int attached = 0, skipped = 0, err;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: floor OBJ [PREFIX [NOT]]\n");
		return 2;
	}
	libbpf_set_print(quiet_print);
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		fprintf(stderr, "floor: no kernel BTF: %s\n", strerror(errno));
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "floor: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj)
	{
		const char *why = NULL;
		char name[128];

		snprintf(name, sizeof(name), "btf_trace_%s", tp_of(p));
		if ((argc >= 3 && strncmp(bpf_program__name(p), argv[2], strlen(argv[2]))) ||
		    (argc == 4 && in_list(argv[3], tp_of(p)))) {
			bpf_program__set_autoload(p, false);
			continue;
		}
		if (is_tracepoint(p) && btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) < 0)
			why = "no such tracepoint";
		else if (bpf_program__type(p) == BPF_PROG_TYPE_TRACEPOINT && !tracefs_mounted())
			why = "tracefs not mounted";
		if (why) {
			fprintf(stderr, "floor: skipping %s: %s\n", bpf_program__name(p), why);
			bpf_program__set_autoload(p, false);
			skipped++;
		}
	}
	btf__free(vmlinux);
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "floor: cannot load %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	/* The leads (fl_*) first: the first program on a tracepoint pays more. */
	for (int lead = 1; lead >= 0; lead--) {
		bpf_object__for_each_program(p, obj)
		{
			bool is_lead = !strncmp(bpf_program__name(p), "fl_", 3);

			if (!bpf_program__autoload(p) || is_lead != lead)
				continue;
			/* The link is released when the process exits. */
			if (!bpf_program__attach(p)) {
				fprintf(stderr, "floor: cannot attach %s: %s\n",
					bpf_program__name(p), strerror(errno));
				return 1;
			}
			attached++;
		}
	}
	/* Blocked until sigsuspend(): a signal cannot slip in between the
	 * check and the wait. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("floor: pid=%d attached=%d skipped=%d\n", getpid(), attached, skipped);
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	bpf_object__close(obj);
	return 0;
}
