# shellcheck shell=bash
# 10-cli.sh - cli: usage errors and a target that exits, no server
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

one_cpu cli_errors target_exits # need no CPU of their own for the server

# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_cli_errors() {
	local out rc
	out=$(./latwhy -p 999999 -d 1s 2>&1); rc=$?
	[ $rc -eq 1 ] && [ "$out" = "latwhy: no process with pid 999999" ] ||
		{ fail cli_no_such_pid "rc=$rc out=$out"; return; }
	out=$(./latwhy -p 1 -d 10x 2>&1); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "latwhy: invalid duration '10x' (examples: 500ms, 10s, 2m) (see latwhy trace --help)" ] ||
		{ fail cli_bad_duration "rc=$rc out=$out"; return; }
	out=$(./latwhy -d 1s 2>&1); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "latwhy: a target is needed: -p PID, --comm NAME, --cgroup PATH, --unit NAME, --pods or --pod NS/NAME (see latwhy trace --help)" ] ||
		{ fail cli_no_pid "rc=$rc out=$out"; return; }
	out=$(./latwhy -p 1 --bogus 2>&1); rc=$?
	[ $rc -eq 2 ] && [ "$out" = "latwhy: unknown option '--bogus' (see latwhy trace --help)" ] ||
		{ fail cli_unknown_option "rc=$rc out=$out"; return; }
	if command -v setpriv >/dev/null; then
		out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			./latwhy -p $$ -d 1s 2>&1); rc=$?
		[ $rc -eq 1 ] && [ "$out" = "latwhy: tracing needs CAP_BPF and CAP_PERFMON (or root): run it with sudo" ] ||
			{ fail cli_unprivileged "rc=$rc out=$out"; return; }
	fi
	pass cli_errors
}

# A target that exits mid-trace: the report covers what was seen and says so.
test_target_exits() {
	sleep 2 &
	local sp=$! rc
	./latwhy -p "$sp" -d 20s -q >"$OUT/exit.txt" 2>&1; rc=$?
	wait "$sp" 2>/dev/null
	if [ $rc -eq 0 ] && grep -q "the process exited during the trace" "$OUT/exit.txt"; then
		pass target_exits
	else
		fail target_exits "rc=$rc: $(tail -3 "$OUT/exit.txt")"
	fi
}
