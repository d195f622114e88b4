#!/bin/bash
# per_request.sh - latwhy's BPF time per server request, program by program.
#
#   [SERVER=nginx|redis|fresh] tools/bench/per_request.sh [SECONDS] [LATWHY ARGS...]
#
# A throughput ratio on a small VM moves by a few % from run to run; the BPF
# time each request costs does not. This starts a private server on CPU 1,
# attaches `latwhy -p SERVER -q [ARGS]`, drives it from CPU 0 for SECONDS
# (default 5) with kernel.bpf_stats_enabled on (put back on exit), and prints,
# per latwhy program, its runs and its ns per request.
#   nginx (default): the bench's nginx (tools/bench/nginx.conf.in), its
#          single-threaded worker traced, under `wrk -t1 -c50`.
#   redis: redis-server (its background threads make latwhy watch for
#          requests answered by another thread), under `redis-benchmark -c 50
#          -t get`, requests counted by INFO's total_commands_processed.
#   fresh: the lab's lat_server whose every 20th request faults in 8 MiB of
#          fresh memory (--fresh-every 20 --fresh-kb 8192: 102 faults a
#          request on average), under one lat_client connection, requests
#          counted by the client: the page-fault programs' cost (lw_fault_*,
#          lw_page_alloc), per request and per fault.
# The runs include the load generator's own socket calls and softirqs: every
# program on a tracepoint runs for every task, and here the client shares the
# host. Needs root and the server's packages (make bench installs them).
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

SERVER=${SERVER:-nginx}
case $SERVER in
nginx) NEED="nginx wrk bpftool" ;;
redis) NEED="redis-server redis-cli redis-benchmark bpftool" ;;
fresh) NEED="bpftool" ;;
*) echo "per_request.sh: SERVER must be nginx, redis or fresh, not '$SERVER'" >&2 && exit 2 ;;
esac
for t in $NEED; do
	command -v "$t" >/dev/null || { echo "per_request.sh: $t is not installed" >&2; exit 1; }
done
PORT=$(free_port)

# start_nginx, start_redis: set NG (to stop) and TARGET (to trace).
start_nginx() {
	mkdir -p "$WORK/html" "$WORK/tmp"
	head -c 612 /dev/zero | tr '\0' x >"$WORK/html/index.html"
	# the bench's own nginx: the same configuration, its worker traced
	sed -e "s|@DIR@|$WORK|g" -e "s|@PORT@|$PORT|g" tools/bench/nginx.conf.in >"$WORK/nginx.conf"
	taskset -c 1 nginx -p "$WORK/" -c "$WORK/nginx.conf" -e "$WORK/error.log" -g 'daemon off;' &
	NG=$!
	TARGET=''
	for _ in $(seq 50); do
		TARGET=$(pgrep -P "$NG" -f 'nginx: worker' | head -1)
		[ -n "$TARGET" ] && return 0
		sleep 0.1
	done
	echo "per_request.sh: nginx did not start: $(tail -1 "$WORK/error.log")" >&2
	return 1
}
start_redis() {
	taskset -c 1 redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
		--dir "$WORK" --daemonize no --protected-mode yes --logfile "$WORK/redis.log" &
	NG=$!
	TARGET=$NG
	for _ in $(seq 50); do
		redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	echo "per_request.sh: redis-server did not start: $(tail -1 "$WORK/redis.log")" >&2
	return 1
}
start_fresh() {
	build/tools/lat_server -p "$PORT" -c 1 --fresh-every 20 --fresh-kb 8192 >"$WORK/server.out" 2>&1 &
	NG=$!
	TARGET=$NG
	wait_for "$WORK/server.out" 'port=' "$NG" 5 && return 0
	echo "per_request.sh: lat_server did not start: $(tail -1 "$WORK/server.out")" >&2
	return 1
}
redis_commands() {
	redis-cli -p "$PORT" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p'
}

"start_$SERVER" || exit 1
"$LATWHY" -p "$TARGET" -q "$@" >"$WORK/latwhy.out" 2>&1 &
LW=$!
wait_for "$WORK/latwhy.out" 'tracing pid' "$LW" 5 || { echo "per_request.sh: latwhy: $(tail -1 "$WORK/latwhy.out")" >&2; exit 1; }
sysctl -q kernel.bpf_stats_enabled=1
if [ "$SERVER" = nginx ]; then
	bpftool -j prog show >"$WORK/a.json"
	taskset -c 0 wrk -t1 -c50 -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$WORK/wrk.out"
	bpftool -j prog show >"$WORK/b.json"
	N=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$WORK/wrk.out")
	LOAD="wrk -t1 -c50, loopback"
elif [ "$SERVER" = fresh ]; then
	bpftool -j prog show >"$WORK/a.json"
	build/tools/lat_client -p "$PORT" -c 1 -C 0 -d "$SECS" -q >"$WORK/client.out" 2>&1
	bpftool -j prog show >"$WORK/b.json"
	N=$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$WORK/client.out")
	LOAD="lat_client -c 1, loopback, every 20th request 2048 faults"
else
	# redis-benchmark counts requests, not seconds: about SECONDS' worth at
	# the rate of a short first run
	RATE=$(taskset -c 0 redis-benchmark -p "$PORT" -c 50 -n 20000 -t get --csv 2>/dev/null |
		awk -F'"' '$2 == "GET" { print int($4) }')
	[[ ${RATE:-0} =~ ^[1-9][0-9]*$ ]] || RATE=20000
	C0=$(redis_commands)
	bpftool -j prog show >"$WORK/a.json"
	taskset -c 0 redis-benchmark -p "$PORT" -c 50 -n $((RATE * SECS)) -t get -q >"$WORK/bench.out" 2>&1
	bpftool -j prog show >"$WORK/b.json"
	N=$(($(redis_commands) - C0 - 1)) # the INFO itself
	LOAD="redis-benchmark -c 50 -t get, loopback"
fi
[[ ${N:-0} =~ ^[1-9][0-9]*$ ]] || { echo "per_request.sh: the load generator served no requests" >&2; exit 1; }
python3 - "$WORK" "$*" "$SERVER" "$N" "$LOAD" <<'PY'
import json, sys
work, args, server, n, load = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
a = {p["id"]: p for p in json.load(open(work + "/a.json"))}
b = {p["id"]: p for p in json.load(open(work + "/b.json"))}
print("latwhy -p %s -q %s: %d requests (%s)" % (server, args, n, load))
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
# a fault runs an entry program and an end program, on every task of the
# host: their time over the faults that ended
fp = {p["name"]: (p.get("run_time_ns", 0) - a[i].get("run_time_ns", 0),
                  p.get("run_cnt", 0) - a[i].get("run_cnt", 0))
      for i, p in b.items() if p.get("name", "").startswith("lw_fault_") and i in a}
ends = sum(fp.get(k, (0, 0))[1] for k in ("lw_fault_min", "lw_fault_maj"))
if ends:
    print("%-20s %32.0f ns of BPF time per page fault (%d faults ended, all tasks)"
          % ("per fault", sum(v[0] for v in fp.values()) / ends, ends))
PY
