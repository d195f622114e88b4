#!/bin/bash
# per_request.sh - latwhy's BPF time per nginx request, program by program.
#
#   tools/bench/per_request.sh [SECONDS] [LATWHY ARGS...]
#
# A throughput ratio on a small VM moves by a few % from run to run; the BPF
# time each request costs does not. This starts the bench's private nginx
# (tools/bench/nginx.conf.in) on CPU 1, attaches `latwhy -p WORKER -q [ARGS]`, drives it with
# `wrk -t1 -c50` on CPU 0 for SECONDS (default 5) with kernel.bpf_stats_enabled
# on (put back on exit), and prints, per latwhy program, its runs and its ns per
# request. The runs include the load generator's own socket calls and
# softirqs: every program on a tracepoint runs for every task, and here the
# client shares the host. Needs root, nginx and wrk (make bench installs them).
set -u
cd "$(dirname "$0")/../.." || exit 1
LAB_PROG=per_request.sh
# shellcheck source=tools/lab.sh
. tools/lab.sh
SECS=${1:-5}
shift
LATWHY=${LATWHY:-./latwhy}
WORK=$(mktemp -d /tmp/latwhy-perreq.XXXXXX)
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
NG=''
LW=''

cleanup() {
	stop_child "$LW"
	stop_child "$NG"
	sysctl -q kernel.bpf_stats_enabled="$STATS_OLD"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for t in nginx wrk bpftool; do
	command -v "$t" >/dev/null || { echo "per_request.sh: $t is not installed" >&2; exit 1; }
done
PORT=$(free_port)
mkdir -p "$WORK/html" "$WORK/tmp"
head -c 612 /dev/zero | tr '\0' x >"$WORK/html/index.html"
# the bench's own nginx: the same configuration, its worker traced
sed -e "s|@DIR@|$WORK|g" -e "s|@PORT@|$PORT|g" tools/bench/nginx.conf.in >"$WORK/nginx.conf"
taskset -c 1 nginx -p "$WORK/" -c "$WORK/nginx.conf" -e "$WORK/error.log" -g 'daemon off;' &
NG=$!
WORKER=''
for _ in $(seq 50); do
	WORKER=$(pgrep -P "$NG" -f 'nginx: worker' | head -1)
	[ -n "$WORKER" ] && break
	sleep 0.1
done
[ -n "$WORKER" ] || { echo "per_request.sh: nginx did not start: $(tail -1 "$WORK/error.log")" >&2; exit 1; }
"$LATWHY" -p "$WORKER" -q "$@" >"$WORK/latwhy.out" 2>&1 &
LW=$!
wait_for "$WORK/latwhy.out" 'tracing pid' "$LW" 5 || { echo "per_request.sh: latwhy: $(tail -1 "$WORK/latwhy.out")" >&2; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1
bpftool -j prog show >"$WORK/a.json"
taskset -c 0 wrk -t1 -c50 -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$WORK/wrk.out"
bpftool -j prog show >"$WORK/b.json"
python3 - "$WORK" "$*" <<'PY'
import json, re, sys
work, args = sys.argv[1], sys.argv[2]
n = int(re.search(r"(\d+) requests in", open(work + "/wrk.out").read()).group(1))
a = {p["id"]: p for p in json.load(open(work + "/a.json"))}
b = {p["id"]: p for p in json.load(open(work + "/b.json"))}
print("latwhy -p nginx -q %s: %d requests (wrk -t1 -c50, loopback)" % (args, n))
print("%-20s %10s %10s %10s" % ("program", "runs/req", "ns/run", "ns/req"))
total = 0
for i, p in sorted(b.items()):
    if not p.get("name", "").startswith("lw_") or i not in a:
        continue
    dt = p.get("run_time_ns", 0) - a[i].get("run_time_ns", 0)
    dc = p.get("run_cnt", 0) - a[i].get("run_cnt", 0)
    total += dt
    if dc:
        print("%-20s %10.2f %10.1f %10.1f" % (p["name"], dc / n, dt / dc, dt / n))
print("%-20s %32.0f ns of BPF time per request (bpf_stats' own clock reads included)"
      % ("total", total / n))
PY
