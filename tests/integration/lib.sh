# shellcheck shell=bash
# lib.sh - what the integration tests share: the run's state and setup, the
# cleanup between tests, pass/fail/skip, the lab server and client, check
# (python asserts over latwhy's NDJSON), and the helpers of several areas
# (serve's scrapes, running as nobody with capabilities). Sourced by run.sh
# from the repository's root, before the area files (NN-AREA.sh).
LAB_PROG=run.sh
# shellcheck source=tools/lab.sh
. tools/lab.sh # wait_for, quiet_cpu
use_all_cpus # before nproc
T=build/tools
PIDS=()   # what cleanup stops: every background process a test starts
CGDIRS=() # and the cgroups it removes once they are empty
FAILS=0
PASSES=0
SKIPS=0
NCPU=$(nproc)
# shellcheck disable=SC2034 # the area files' (the server's CPU, the client's)
SRV_CPU=$((NCPU - 1))
CLI_CPU=0
declare -A ONE_CPU=() # the tests that need no CPU of their own for the server

# one_cpu NAME...: these tests run on a machine of one CPU too; the others
# put the server on a CPU of its own, away from the client and latwhy, and
# skip on one CPU.
one_cpu() {
	local n
	for n; do
		# shellcheck disable=SC2034 # run.sh's
		ONE_CPU[$n]=1
	done
}

# it_setup: the run's output directory, OUT, removed at the end unless KEEP
# is set; cleanup runs on exit and on INT and TERM.
it_setup() {
	OUT=$(mktemp -d /tmp/latwhy-it.XXXXXX)
	trap 'cleanup; [ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
	trap 'cleanup; exit 130' INT TERM
}

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	PIDS=()
	for p in "${CGDIRS[@]}"; do # a test's cgroups, empty now
		rmdir "$p" 2>/dev/null
	done
	CGDIRS=()
	unquiet_cpu # a no-op unless a test quieted its CPU or set knobs (awake_cpus)
	if [ -n "${NETNS:-}" ]; then # and its veth pair with it
		ip netns del "$NETNS" 2>/dev/null
		NETNS=
	fi
	if [ -n "${BPF_STATS_WAS:-}" ]; then # bpf_stats_on's
		echo "$BPF_STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
		BPF_STATS_WAS=
	fi
}

# bpf_stats_on: kernel.bpf_stats_enabled on until cleanup (programs' run
# counts and times); fails where the kernel has no such knob
bpf_stats_on() {
	[ -w /proc/sys/kernel/bpf_stats_enabled ] || return 1
	[ -n "${BPF_STATS_WAS:-}" ] || BPF_STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
}

pass() { echo "PASS $1"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL $1: $2"; FAILS=$((FAILS + 1)); }
skip() { echo "SKIP $1: $2"; SKIPS=$((SKIPS + 1)); }

# kernel_has_tp NAME: the kernel's BTF has the tracepoint NAME
# (btf_trace_NAME), as latwhy's probe decides what to attach
kernel_has_tp() {
	# grep -c reads it all: -q's early exit would fail bpftool (SIGPIPE)
	[ "$(bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -c "'btf_trace_$1'")" -gt 0 ]
}

# need_socket NAME WHAT: skip NAME unless the kernel delimits requests by
# the socket layer (sock_recv_length, 6.3+: 6.1 falls back to raw_syscalls,
# one open request a thread); WHAT says what the test needs of it
need_socket() {
	kernel_has_tp sock_recv_length && return 0
	skip "$1" "the kernel has no sock_recv_length tracepoint (6.3+), so requests are delimited by raw_syscalls: $2"
	return 1
}

# need_arrival NAME WHAT: skip NAME unless the kernel has sk_data_ready, the
# arrival of a request's data, on which its receive backlog wait hangs too
need_arrival() {
	kernel_has_tp sk_data_ready && return 0
	skip "$1" "the kernel has no sk_data_ready tracepoint (not_attached: sk_data_ready): $2"
	return 1
}

# no_server NAME: NAME failed before it began; with the server's last words,
# or, when it printed none, whether it still ran and where it waited
no_server() {
	local last st cpu
	last=$(tail -1 "$OUT/server.out" 2>/dev/null)
	if [ -z "$last" ]; then
		st=$(awk '/^State:/ {print $2}' "/proc/$SPID/status" 2>/dev/null)
		# where it is: its CPU times (user, system ticks), last CPU, kernel stack
		last="no output; pid $SPID ${st:+state $st wchan $(cat "/proc/$SPID/wchan" 2>/dev/null)}"
		cpu=$(awk '{sub(/.*\) /, ""); print $37}' "/proc/$SPID/stat" 2>/dev/null)
		[ -n "$st" ] && last+=" utime/stime/cpu $(awk '{sub(/.*\) /, ""); print $12 "/" $13}' "/proc/$SPID/stat" 2>/dev/null)/$cpu stack $(awk '{printf "%s ", $2}' "/proc/$SPID/stack" 2>/dev/null)"
		# and what holds its CPU (it once sat runnable there for 10 s)
		[ -n "$cpu" ] && last+="; on CPU $cpu: $(ps -eLo psr=,pcpu=,stat=,rtprio=,comm= --sort=-pcpu |
			awk -v c="$cpu" '$1 == c { printf "%s %s%% %s rt %s; ", $5, $2, $3, $4; if (++n == 3) exit }')"
		[ -n "$st" ] || last+="exited"
	fi
	fail "$1" "server did not start: $last"
	cleanup
}

# start_server CPU [lat_server args...]: sets SPID and PORT
start_server() {
	local cpu=$1
	shift
	: >"$OUT/server.out" # the last server's port= would match at once
	if [ -n "${SRV_CGROUP:-}" ]; then
		# born in the group: a cgroup v2 memory charge stays where it was
		# made, so a server moved in later brings none of its heap along
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$SRV_CGROUP" \
			"$T/lat_server" -p 0 -c "$cpu" "$@" >"$OUT/server.out" 2>&1 &
	else
		"$T/lat_server" -p 0 -c "$cpu" "$@" >"$OUT/server.out" 2>&1 &
	fi
	SPID=$!
	PIDS+=("$SPID")
	# 30 s: it starts in ~50 ms; once it sat runnable for 10 s (no_server)
	wait_for "$OUT/server.out" 'port=' "$SPID" 30
	PORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$OUT/server.out")
	[ -n "$PORT" ]
}

# start_client SECONDS [lat_client args...]
# SECONDS must outlast latwhy's start as well as its trace: loading takes
# 2 s here unloaded (the verifier), seconds more beside a busy client.
start_client() {
	local secs=$1
	shift
	: >"$OUT/client.out" # the last client's p50_us= would match at once
	"$T/lat_client" -p "$PORT" -c 1 -C "$CLI_CPU" -d "$secs" -q "$@" >"$OUT/client.out" 2>&1 &
	PIDS+=("$!")
}

# check NAME PYTHON: run python asserts over $OUT/trace.json (NDJSON) as
# `reqs` (list of request objects) and `summ` (the summary object), after the
# checks every trace gets (check.py: one summary, few incomplete requests,
# each request's buckets adding up to its latency). num(r, BUCKET) reads a
# request's bucket as a number: a null fails, naming the request.
check() {
	local name=$1 code=$2 msg
	if msg=$(python3 tests/integration/check.py trace "$OUT/trace.json" 2>&1 <<<"$code"); then
		pass "$name"
	else
		fail "$name" "$(echo "$msg" | tail -1)"
	fi
}

# pycheck [ARG ...]: the python script on stdin, run as `python3 - ARG ...`
# would run it, with check's helpers (num) and its last line on a failure:
# what failed (an assertion's message, or the line that raised), never a
# traceback
pycheck() {
	python3 tests/integration/check.py run "$@"
}

# as_nobody CMD...: run CMD as an unprivileged user (report needs no root)
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# serve_scrape PORT FILE COND [SECONDS]: GET /metrics into FILE until the
# python COND holds over m (each sample's value by name and labels).
serve_scrape() {
	python3 - "$@" <<'EOF'
import sys, time, urllib.request
port, path, cond = sys.argv[1:4]
end = time.time() + float(sys.argv[4] if len(sys.argv) > 4 else 20)
while True:
    try:
        text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
    except OSError:
        text = ""
    m = dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in text.splitlines()
                                      if l and not l.startswith("#")))
    ok = bool(text) and eval(cond)
    if ok or time.time() > end:
        open(path, "w").write(text)
        sys.exit(0 if ok else 1)
    time.sleep(0.5)
EOF
}

# serve_check NAME FILE [PREV] PYTHON: asserts over m, FILE's samples by name
# and labels, and p, PREV's (an earlier scrape; {} without one).
serve_check() {
	local name=$1 file=$2 prev=/dev/null msg
	[ $# -eq 4 ] && { prev=$3; shift; }
	if msg=$(pycheck "$file" "$prev" 2>&1 <<EOF
import sys
def samples(path):
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in open(path).read().splitlines()
                                        if l and not l.startswith("#")))
m, p = samples(sys.argv[1]), samples(sys.argv[2])
text = open(sys.argv[1]).read()
$3
EOF
	); then
		pass "$name"
	else
		fail "$name" "$(echo "$msg" | tail -1)"
	fi
}

# caps_nobody CAPS: SETPRIV, setpriv's options for nobody holding only CAPS
# (its list, "+bpf,+perfmon"), ambient so that they survive the exec, and a
# bounding set of those alone. setpriv execs: "setpriv ${SETPRIV[@]} CMD &"
# leaves CMD's pid in $!.
caps_nobody() {
	# shellcheck disable=SC2054,SC2034 # the commas are setpriv's; the callers'
	SETPRIV=(--reuid=65534 --regid=65534 --clear-groups --inh-caps="$1"
		--ambient-caps="$1" --bounding-set=-all,"$1")
}

# caps_of PID [TID]: "CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs" of a
# thread of PID (its main one by default), as /proc prints them.
caps_of() {
	awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):|^NoNewPrivs:/ {printf "%s%s", sep, $2; sep = " "}' \
		"/proc/$1/task/${2:-$1}/status" 2>/dev/null
}
