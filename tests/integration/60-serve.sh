# shellcheck shell=bash
# 60-serve.sh - serve: /metrics, Prometheus, sampling, hindsight captures, cause counts
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# serve_http PORT METHOD PATH: the status latwhy serve answers with.
serve_http() {
	python3 - "$@" <<'EOF'
import sys, urllib.error, urllib.request
port, method, path = sys.argv[1:4]
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), method=method,
                             data=b"x" if method == "POST" else None)
try:
    print(urllib.request.urlopen(req, timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)
EOF
}

# serve_prom PORT QUERY COND [SECONDS]: query a Prometheus server until the
# python COND holds over r (the result vector: [{"metric":..,"value":..}]).
serve_prom() {
	python3 - "$@" <<'EOF'
import json, sys, time, urllib.parse, urllib.request
port, query, cond = sys.argv[1:4]
end = time.time() + float(sys.argv[4] if len(sys.argv) > 4 else 40)
r = None
while time.time() < end:
    try:
        u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (port, urllib.parse.quote(query))
        r = json.load(urllib.request.urlopen(u, timeout=5))["data"]["result"]
        if eval(cond):
            sys.exit(0)
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(1)
print("%s: %s" % (query, r))
sys.exit(1)
EOF
}

# A real Prometheus on loopback scraping latwhy serve every second: sets PROM
# (its port) and adds it to PIDS; fails when it does not come up.
serve_start_prom() {
	local mport=$1
	PROM=$(free_port)
	cat >"$OUT/prom.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: latwhy
    static_configs:
      - targets: ["127.0.0.1:$mport"]
EOF
	prometheus --config.file="$OUT/prom.yml" --storage.tsdb.path="$OUT/prom" \
		--web.listen-address="127.0.0.1:$PROM" >"$OUT/prom.log" 2>&1 &
	PIDS+=("$!")
	wait_for "$OUT/prom.log" "Server is ready to receive web requests" "$!" 30
}

# serve_as DIR ARGS...: latwhy ARGS (exec'd: $! is latwhy's pid) as nobody
# with only CAP_BPF and CAP_PERFMON, from a copy in DIR nobody may run;
# as root where setpriv or the kernel cannot.
serve_as() {
	local dir=$1
	shift
	if setpriv --help 2>/dev/null | grep -q -- --ambient-caps &&
		caps_nobody +bpf,+perfmon && setpriv "${SETPRIV[@]}" true 2>/dev/null; then
		mkdir -p "$dir" && chmod 711 "$OUT" && chmod 755 "$dir" && cp latwhy "$dir/"
		exec setpriv "${SETPRIV[@]}" "$dir/latwhy" "$@"
	fi
	exec ./latwhy "$@"
}

SERVE_REQ='latwhy_requests_total{target="lat_server"}'
SERVE_SCHED='latwhy_slow_requests_total{target="lat_server",cause="sched"}'

# The scrape of a serve that traced lat_server: every family, the histogram
# against the request count, promtool's linter.
serve_check_first() {
	local out
	serve_check serve_metrics "$OUT/metrics1.txt" '
REQ = "latwhy_requests_total{target=\"lat_server\"}"
assert m[REQ] > 0, m[REQ]
causes = ["frequency", "irq", "thp", "sched", "idle", "none"]
for fam in ("latwhy_slow_requests_total", "latwhy_slow_request_seconds_total"):
    for c in causes:
        k = "%s{target=\"lat_server\",cause=\"%s\"}" % (fam, c)
        assert k in m, k
assert sum(m["latwhy_slow_requests_total{target=\"lat_server\",cause=\"%s\"}" % c] for c in causes) > 0
inf = m["latwhy_request_duration_seconds_bucket{target=\"lat_server\",le=\"+Inf\"}"]
assert inf == m["latwhy_request_duration_seconds_count{target=\"lat_server\"}"]
# the histogram and the ticks count the same requests, one interval apart at most
assert abs(inf - m[REQ]) <= 0.2 * m[REQ], (inf, m[REQ])
bk = [v for k, v in m.items() if k.startswith("latwhy_request_duration_seconds_bucket")]
assert bk == sorted(bk), "buckets not cumulative"
for k in ("latwhy_events_dropped_total", "latwhy_irqbalance_running",
          "latwhy_process_cpu_seconds_total", "latwhy_process_resident_memory_bytes"):
    assert k in m, k
thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().split("[")[1].split("]")[0]
assert m["latwhy_thp_enabled_info{mode=\"%s\"}" % thp] == 1, thp
kd = "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag"
assert m["latwhy_khugepaged_defrag"] == int(open(kd).read()), m["latwhy_khugepaged_defrag"]
assert any(k.startswith("latwhy_build_info{") for k in m)
assert m["latwhy_sampling_active"] == 1
import re
assert not re.search(r"[{,]pid=", text), "a pid label"
for fam in set(l.split()[2] for l in text.splitlines() if l.startswith("# TYPE")):
    assert text.count("# TYPE %s " % fam) == 1 and text.count("# HELP %s " % fam) == 1, fam
'
	# promtool's linter on the scrape, and the Prometheus files' own checks
	if ! command -v promtool >/dev/null; then
		skip serve_promtool "promtool not installed"
	elif out=$(tools/prometheus/check.sh "$OUT/metrics1.txt" 2>&1); then
		pass serve_promtool
	else
		fail serve_promtool "$(echo "$out" | grep -A2 FAIL | head -3 | tr '\n' ' ')"
	fi
}

# What the endpoint refuses, and a second serve on the same port.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
serve_check_http() {
	local mport=$1 codes out rc
	codes="$(serve_http "$mport" GET /) $(serve_http "$mport" GET /nope) $(serve_http "$mport" POST /metrics) $(serve_http "$mport" DELETE /)"
	[ "$codes" = "200 404 405 405" ] && pass serve_http || fail serve_http "GET / /nope, POST /metrics, DELETE /: $codes"
	out=$(./latwhy serve --comm lat_server --listen "127.0.0.1:$mport" 2>&1); rc=$?
	[ $rc -eq 1 ] && [ "$out" = "latwhy: cannot listen on 127.0.0.1:$mport: Address already in use" ] &&
		pass serve_port_in_use || fail serve_port_in_use "rc=$rc out=$out"
}

# latwhy serve --comm lat_server: /metrics for Prometheus, its refusals, a
# port in use, and the server restarted with a new pid: waited for, traced
# again, every counter going on under the same target. With Prometheus
# installed, a real one scrapes it through the restart. Always attached
# (--sample off): serve_sample tests the duty cycle.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_serve() {
	local mport lpid cpid r1 s0 a0 rc PROM=
	mport=$(free_port)
	start_server "$SRV_CPU" || { no_server serve; return; }
	start_client 60
	cpid=${PIDS[-1]}
	# as it runs in production: an unprivileged user holding CAP_BPF and
	# CAP_PERFMON alone (tools/systemd/latwhy.service), where setpriv can
	: >"$OUT/serve.err" # its last run's lines would match at once
	serve_as "$OUT/pub" serve --comm lat_server --sample off --listen "127.0.0.1:$mport" >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve.err" "serving http" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$SERVE_REQ', 0) > 0 and any(v for k, v in m.items() if k.startswith('latwhy_slow_requests_total'))" 30; then
		fail serve "nothing traced: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	grep -q "^latwhy: tracing comm lat_server (1 process)$" "$OUT/serve.err" ||
		fail serve_target "not the test's server alone: $(cat "$OUT/serve.err")"
	if [ "$(awk '/^Uid:/ {print $2}' "/proc/$lpid/status")" = 65534 ]; then
		pass serve_unprivileged
	else
		skip serve_unprivileged "setpriv or the kernel cannot grant CAP_BPF+CAP_PERFMON alone: serve ran as root"
	fi
	serve_check_first
	serve_check_http "$mport"
	if command -v prometheus >/dev/null; then
		serve_start_prom "$mport" || fail serve_prometheus "did not start: $(tail -1 "$OUT/prom.log")"
	fi
	r1=$(awk -v k="$SERVE_REQ" '$1 == k {print $2}' "$OUT/metrics1.txt")
	stop_child "$cpid" # the client, then the server: its next one has a new pid
	stop_child "$SPID"
	if ! wait_for "$OUT/serve.err" "^latwhy: a process named lat_server is gone: waiting for it to come back$" "$lpid" 10; then
		fail serve_restart "no word of the exit: $(tail -1 "$OUT/serve.err")"
		cleanup
		return
	fi
	start_server "$SRV_CPU" || { no_server serve_restart; return; }
	start_client 30
	wait_for "$OUT/serve.err" "^latwhy: a process named lat_server is back: traced again$" "$lpid" 10 ||
		fail serve_target "the restarted server ($SPID) not traced: $(tail -1 "$OUT/serve.err")"
	# the old run's last records are published at its end: wait for the new
	# tracer's (sampling again) before judging the counters
	if ! serve_scrape "$mport" "$OUT/metrics2.txt" \
		"m.get('$SERVE_REQ', 0) > $r1 + 100 and m.get('latwhy_sampling_active') == 1" 30; then
		fail serve_restart "the counters did not go on: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	serve_check serve_restart "$OUT/metrics2.txt" "$OUT/metrics1.txt" '
for k, v in p.items():
    if k.split("{")[0].endswith(("_total", "_bucket", "_count", "_sum")):
        assert k in m, "gone after the restart: " + k
        assert m[k] >= v, "%s went back: %s -> %s" % (k, v, m[k])
assert not [k for k in m if "target=" in k and "target=\"lat_server\"" not in k]
assert m["latwhy_sampling_active"] == 1
'
	# an injected cause: a hog on the server's CPU; its slow requests rise
	# under cause="sched", the scrape's and (below) Prometheus's
	# (at least 10 more, and most of the slow requests since: the running
	# p99 adapts to the hog, so about 1% of its requests stay slow, past
	# the first seconds: 10 s of it gave 17 to 65 here)
	s0=$(awk -v k="$SERVE_SCHED" '$1 == k {print $2}' "$OUT/metrics2.txt")
	a0=$(awk '$1 ~ /^latwhy_slow_requests_total\{/ {n += $2} END {print n + 0}' "$OUT/metrics2.txt")
	"$T/lw_hog" -C "$SRV_CPU" -d 15 &
	PIDS+=("$!")
	serve_scrape "$mport" "$OUT/metrics3.txt" "(lambda d, a: d >= 10 and d >= 0.5 * a)(m.get('$SERVE_SCHED', 0) - ${s0:-0}, sum(v for k, v in m.items() if k.startswith('latwhy_slow_requests_total{')) - $a0)" 30 &&
		pass serve_cause || fail serve_cause "sched slow requests ${s0:-?} -> $(awk -v k="$SERVE_SCHED" '$1 == k {print $2}' "$OUT/metrics3.txt") of all slow $a0 -> $(awk '$1 ~ /^latwhy_slow_requests_total\{/ {n += $2} END {print n + 0}' "$OUT/metrics3.txt")"
	if [ -n "$PROM" ]; then
		serve_prom "$PROM" "$SERVE_SCHED" "r and float(r[0]['value'][1]) >= ${s0:-0} + 10" 40 &&
			serve_prom "$PROM" "latwhy_irqbalance_running" "r and int(float(r[0]['value'][1])) == $(pgrep -x irqbalance >/dev/null && echo 1 || echo 0)" 10 &&
			serve_prom "$PROM" "$SERVE_REQ" "r and float(r[0]['value'][1]) > $r1 + 100" 40 &&
			serve_prom "$PROM" "resets(${SERVE_REQ}[5m])" "r and float(r[0]['value'][1]) == 0" 10 &&
			serve_prom "$PROM" "latwhy_thp_enabled_info" "r and r[0]['metric']['mode'] == open('/sys/kernel/mm/transparent_hugepage/enabled').read().split('[')[1].split(']')[0]" 10 &&
			pass serve_prometheus || fail serve_prometheus "$(tail -1 "$OUT/prom.log")"
	fi
	# SIGTERM to serve and its target at once (a node shutting down): serve
	# stops, also when its trace saw the target go first
	kill -TERM "$SPID" "$lpid"
	for _ in $(seq 100); do kill -0 "$lpid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$lpid" 2>/dev/null; then
		fail serve_stop "still running 10 s after SIGTERM: $(tail -1 "$OUT/serve.err")"
	else
		wait "$lpid"
		rc=$?
		[ $rc -eq 0 ] && pass serve_stop || fail serve_stop "latwhy serve exited $rc on SIGTERM"
	fi
	cleanup
}

# latwhy serve --sample 2s/4s against the lab server, scraped every 0.25 s for
# about 10 s, each scrape taken twice around a look at latwhy's own fds
# (/proc/PID/fdinfo: link_id, prog_id) and bpftool's link and prog lists:
# sampling_active goes 1 and 0; while 0, latwhy holds no link and bpftool
# lists none of the links it held while on, its programs stay loaded, the
# request and attached-seconds counters stand still and the node gauges are
# there; while 1 it holds links. Only samples whose neighbours agree are
# judged: a change between two looks is not a disagreement. No request is
# over 1 s: none spans a detached stretch.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_serve_sample() {
	local mport lpid msg stats
	mport=$(free_port)
	# ~4 ms of work a request: a detach nearly always lands inside one
	start_server "$SRV_CPU" -w 2500000 || { no_server serve_sample; return; }
	start_client 40
	: >"$OUT/serve.err" # its last run's lines would match at once
	# the duty cycle alone: without the always-attached tier beside it
	./latwhy serve -p "$SPID" --sample 2s/4s --escalate off --listen "127.0.0.1:$mport" \
		>"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$SERVE_REQ', 0) > 0" 20; then
		fail serve_sample "nothing traced: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	stats=
	bpf_stats_on && stats=1
	if msg=$(pycheck "$mport" "$lpid" "$stats" 2>&1 <<'EOF'
import json, os, subprocess, sys, time, urllib.request
port, pid = sys.argv[1], int(sys.argv[2])
REQ = 'latwhy_requests_total{target="lat_server"}'
ATT = "latwhy_sampling_attached_seconds_total"
STATS = sys.argv[3] == "1" # the programs' run counts
def scrape():
    t = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in t.splitlines()
                                          if l and not l.startswith("#")))
def own(kind):
    ids = set()
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            for l in open("/proc/%d/fdinfo/%s" % (pid, fd)):
                if l.startswith(kind + ":"):
                    ids.add(int(l.split()[1]))
        except OSError:
            pass
    return ids
def bpftool(what):
    # an object that went away while bpftool listed is an {"error": ...}
    out = subprocess.run(["bpftool", "-j", what, "show"], capture_output=True, text=True).stdout
    return dict((o["id"], o) for o in json.loads(out or "[]") if "id" in o)
S = []
end = time.time() + 10
while time.time() < end:
    a = scrape()
    links, progs = own("link_id"), own("prog_id")
    bl, bp = bpftool("link"), bpftool("prog")
    blinks, bprogs = set(bl), set(bp)
    # the page-fault events stay linked, disabled (memory.c): off, their
    # programs' runs must not grow, as this script's own faults would
    faults = sum(bp[i].get("run_cnt", 0) for i in progs & bprogs
                 if bp[i].get("name", "").startswith("lw_fault_"))
    links -= set(i for i in links & blinks if bl[i].get("type") == "perf_event")
    b = scrape()
    if a["latwhy_sampling_active"] == b["latwhy_sampling_active"] and a[ATT] == b[ATT]:
        S.append(dict(on=b["latwhy_sampling_active"] == 1, req=b[REQ], att=b[ATT], links=links,
                      progs=progs, blinks=blinks, bprogs=bprogs, faults=faults, m=b,
                      t=time.time() - end + 10))
    else:
        S.append(None)
    time.sleep(0.25)
on = [s for s in S if s and s["on"]]
off = [s for s in S if s and not s["on"]]
assert on and off, "sampling_active never %d" % (0 if not off else 1)
seen = set().union(*(s["links"] for s in on))
judged = {True: 0, False: 0}
for i in range(1, len(S) - 1):
    p, s, n = S[i - 1], S[i], S[i + 1]
    if not (p and s and n) or not (p["on"] == s["on"] == n["on"]):
        continue
    judged[s["on"]] += 1
    if s["on"]:
        assert s["links"] and s["links"] <= s["blinks"], "attached: links %s" % s["links"]
        continue
    assert not s["links"], "detached but holding links %s" % s["links"]
    assert not (seen & s["blinks"]), "bpftool still lists links %s" % (seen & s["blinks"])
    assert s["progs"] and s["progs"] <= s["bprogs"], "its programs are not loaded while off"
    assert p["req"] == s["req"] == n["req"], "requests grew while off: %s %s %s" % (p["req"], s["req"], n["req"])
    assert p["att"] == s["att"] == n["att"], "attached seconds grew while off"
    # p's and s's: n's read of the kernel's counts can fall inside an
    # attach its scrapes do not show yet (published once all of it is
    # attached: 5.5 ms under strace, longer on the CPU 0 this script and
    # bpftool load), and grew by 194 faults there in a clean-clone run
    assert p["faults"] == s["faults"], \
        "page-fault programs ran while off: %d %d at %.2f %.2f s" % (
            p["faults"], s["faults"], p["t"], s["t"])
    for k in ("latwhy_irqbalance_running", "latwhy_process_resident_memory_bytes"):
        assert k in s["m"], k + " missing while off"
    assert any(k.startswith("latwhy_thp_enabled_info{") for k in s["m"]), "THP gauge missing while off"
assert judged[True] >= 2 and judged[False] >= 2, "too few samples judged: %s" % judged
assert not STATS or on[-1]["faults"] > on[0]["faults"], "no page fault seen while on"
# no request spans a detached stretch (2 s): their state is started afresh
# after it, so none is longer than the lab server's own (ms)
last = [s for s in S if s][-1]["m"]
H = 'latwhy_request_duration_seconds_bucket{target="lat_server",le="%s"}'
assert last[H % "1.073741824"] == last[H % "+Inf"], \
    "%d requests over 1 s" % (last[H % "+Inf"] - last[H % "1.073741824"])
# the requests grew from one off stretch to the next: counted while on
offs = [s["req"] for s in off]
assert offs[-1] > offs[0], "requests did not grow between off stretches: %s" % offs
print("%d samples, %d on and %d off judged; requests %d -> %d; attached %.1f s" %
      (len(S), judged[True], judged[False], offs[0], offs[-1], [s for s in S if s][-1]["att"]))
EOF
	); then
		pass serve_sample
		echo "   $msg"
	else
		fail serve_sample "$(echo "$msg" | tail -1)"
	fi
	cleanup
}

# Full tracing that cannot be attached again ends nothing: the uprobe's
# binary moved away between two stretches of the duty cycle, serve says so
# once, goes on answering scrapes with full tracing off, tries again every
# 10 s and, the binary back, attaches again.
test_serve_reattach() {
	local mport lpid ut=$OUT/ut_reattach att=latwhy_sampling_attached_seconds_total a1 a2
	mport=$(free_port)
	cp build/tests/uprobe_target "$ut"
	taskset -c "$SRV_CPU" "$ut" 60 >"$OUT/target.out" &
	PIDS+=("$!")
	: >"$OUT/serve.err"
	./latwhy serve -p "${PIDS[-1]}" --request "uprobe:$ut:handle_request" --sample 1s/3s \
		--escalate off --listen "127.0.0.1:$mport" >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve.err" "serving http" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$att', 0) >= 0.9" 20; then
		fail serve_reattach "never attached: $(tail -1 "$OUT/serve.err")"
		cleanup
		return
	fi
	mv "$ut" "$ut.away"
	if ! wait_for "$OUT/serve.err" "^latwhy: full tracing not attached (No such file or directory): tried again every 10 s; what stays attached goes on$" "$lpid" 10; then
		fail serve_reattach "no word of the failed attach: $(tail -1 "$OUT/serve.err")"
	elif ! serve_scrape "$mport" "$OUT/metrics2.txt" "m.get('latwhy_sampling_active') == 0" 5; then
		fail serve_reattach "no scrape with full tracing off: $(tail -1 "$OUT/serve.err")"
	else
		a1=$(awk -v k="$att" '$1 == k {print $2}' "$OUT/metrics2.txt")
		sleep 4 # a stretch of the schedule and more: none attached
		serve_scrape "$mport" "$OUT/metrics3.txt" "True" 5
		a2=$(awk -v k="$att" '$1 == k {print $2}' "$OUT/metrics3.txt")
		mv "$ut.away" "$ut"
		if [ "$a1" != "$a2" ]; then
			fail serve_reattach "attached seconds grew with the binary away: $a1 -> $a2"
		elif wait_for "$OUT/serve.err" "^latwhy: full tracing attached again$" "$lpid" 15 &&
			serve_scrape "$mport" "$OUT/metrics4.txt" "m.get('$att', 0) >= $a2 + 0.5" 10; then
			pass serve_reattach
		else
			fail serve_reattach "not attached again: $(tail -1 "$OUT/serve.err")"
		fi
	fi
	[ "$(grep -c "not attached" "$OUT/serve.err")" -le 1 ] ||
		fail serve_reattach_once "the failure told $(grep -c "not attached" "$OUT/serve.err") times"
	cleanup
}

# serve at its defaults (full tracing 3 s of every 90, the always-attached
# tier beside it) and a CPU hog at nice -10 started long after the cycle's
# first 3 s:
# full tracing is attached within a second of the first slow requests,
# SIGUSR1 5 s into the hog gives a capture within 2 s that names sched and
# says how long each tier was attached, its request rate within 2x of the
# client's; 20 s into the rise a check lets full tracing go for one window
# of the cheap tier alone, which sees the hog still there: attached again,
# the same escalation; the hog stopped, full tracing detaches again.
test_serve_tiers() {
	local mport lpid cpid caps=$OUT/tiers msg
	need_socket serve_tiers "the always-attached tier times TCP requests at the socket layer" || return
	mport=$(free_port)
	# ~2 ms of work a request: a hog on its CPU makes most of them slow
	start_server "$SRV_CPU" -w 1250000 || { no_server serve_tiers; return; }
	# past the baseline's 30 s, the hog's 30 and the 10 s held after it
	start_client 120
	cpid=${PIDS[-1]}
	: >"$OUT/tiers.err"
	./latwhy serve -p "$SPID" --listen "127.0.0.1:$mport" --capture-dir "$caps" -v \
		>"$OUT/tiers.out" 2>"$OUT/tiers.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/tiers.err" "^latwhy: detached for [0-9.]* s$" "$lpid" 20 ||
		! serve_scrape "$mport" "$OUT/tiers1.txt" "m.get('$SERVE_REQ', 0) > 0" 10; then
		fail serve_tiers "the cycle's first stretch did not end: $(tail -2 "$OUT/tiers.err")"
		cleanup
		return
	fi
	if msg=$(pycheck "$mport" "$lpid" "$SRV_CPU" "$T/lw_hog" "$caps" "$OUT/tiers.err" 2>&1 <<'EOF'
import glob, json, os, signal, subprocess, sys, time, urllib.request
port, pid, cpu, hog, caps, err = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
REQ = 'latwhy_requests_total{target="lat_server"}'
FULL, WATCH = 'latwhy_tier_active{tier="full"}', 'latwhy_tier_active{tier="watch"}'
def scrape():
    t = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in t.splitlines()
                                          if l and not l.startswith("#")))
# the baseline: the watch tier alone, counting every request (other load
# on the machine may escalate too: then it waits for it to end, as it must),
# past its first 30 s, in which only a doubling of the mean counts (the hog
# makes the lab server's 1.8x)
time.sleep(33)
end = time.time() + 30
while True:
    a = scrape()
    time.sleep(2)
    b = scrape()
    if a[FULL] == b[FULL] == 0 or time.time() > end:
        break
assert a[FULL] == 0 and b[FULL] == 0 and b[WATCH] == 1, \
    "tiers before the hog: full %s watch %s" % (b[FULL], b[WATCH])
assert b[REQ] - a[REQ] > 200, "requests while full tracing is detached: %d in 2 s" % (b[REQ] - a[REQ])
esc = b["latwhy_escalations_total"]
# at nice -10 (ten times a nice-0 task's weight): the server gets a tenth
# of its CPU while the hog runs, an incident beyond doubt
h = subprocess.Popen(["nice", "-n", "-10", hog, "-C", cpu, "-d", "30"])
t0 = time.time()
up = None
while time.time() < t0 + 5:
    m = scrape()
    if m["latwhy_escalations_total"] > esc:
        up = m
        break
    time.sleep(0.2)
assert up, "no escalation 5 s into the hog"
delay = up["latwhy_escalation_delay_seconds"]
assert 0 <= delay <= 1.0, "full tracing attached %.3f s after the first slow request" % delay
assert up[FULL] == 1, "escalated but full tracing is not active"
time.sleep(max(0, t0 + 5 - time.time()))
before = set(glob.glob(caps + "/*.lwy"))
os.kill(pid, signal.SIGUSR1)
ts = time.time()
new = set()
while time.time() < ts + 4 and not new:
    new = set(glob.glob(caps + "/*-signal.lwy")) - before
    time.sleep(0.05)
assert new, "no capture 4 s after SIGUSR1"
# written whole: its line on stderr says so
while time.time() < ts + 4 and "reason signal)" not in open(err).read():
    time.sleep(0.05)
took = time.time() - ts
assert took <= 2.0, "the capture took %.2f s" % took
f = new.pop()
rep = subprocess.run(["./latwhy", "report", f], capture_output=True, text=True).stdout
js = subprocess.run(["./latwhy", "report", "--json", f], capture_output=True, text=True).stdout
summ = [json.loads(l) for l in js.splitlines() if l.startswith('{"type":"summary"')][0]
assert summ["dominant"] == "sched", "the capture's verdict is %s" % summ["dominant"]
att = summ["attached"]
assert att and att["watch_ns"] and att["full_ns"] and att["escalations"] >= 1, att
assert att["full_ns"] < att["watch_ns"], att
line = [l for l in rep.splitlines() if l.startswith("Attached: ")]
assert line and "escalation" in line[0], "no Attached line: %s" % rep[:300]
# the hog ends at t0 + 30; full tracing held while it lasts (the slow
# threshold held too, and the cheap tier's mean while full tracing has no
# baseline of its own yet), then 10 s after the last rising second; 20 s
# into the rise the check: one gap, a window of the cheap tier alone that
# still sees the hog, and full tracing back, the same escalation
gaps = []
while h.poll() is None:
    m = scrape()
    if m[FULL] != 1:
        if gaps and time.time() - gaps[-1][1] < 0.5:
            gaps[-1][1] = time.time()
        else:
            gaps.append([time.time(), time.time()])
    time.sleep(0.2)
end = time.time()
assert len(gaps) == 1, "full tracing detached %d times in the hog's 30 s: %s" % (
    len(gaps), ["%.1f-%.1f s" % (a - t0, b - t0) for a, b in gaps])
assert gaps[0][0] - t0 >= 19, "full tracing detached %.1f s into the hog" % (gaps[0][0] - t0)
assert gaps[0][1] - gaps[0][0] <= 2.5, "the check's gap %.1f s" % (gaps[0][1] - gaps[0][0])
said = open(err).read()
assert "latwhy: detached for a check: the rise without full tracing's own cost" in said
assert "latwhy: attached again: the rise outlasts full tracing's own cost" in said
assert m["latwhy_escalations_total"] == up["latwhy_escalations_total"], \
    "escalations %d after the check, %d at the rise" % (m["latwhy_escalations_total"], up["latwhy_escalations_total"])
down = None
while time.time() < end + 15:
    m = scrape()
    if m[FULL] == 0:
        down = time.time() - end
        break
    time.sleep(0.5)
assert down is not None, "full tracing still attached 15 s after the hog"
assert down >= 5, "full tracing detached %.1f s after the hog, not held" % down
# told at the detach, or at the end of a check (20 s into a rise, the
# cheap tier alone judging it: a window after its detach)
said = time.time() + 3
while "latwhy: detached: slow requests back to their baseline" not in open(err).read():
    assert time.time() < said, "no 'back to their baseline' 3 s after the detach"
    time.sleep(0.25)
open(os.path.dirname(err) + "/tiers.rate", "w").write("%f\n" % summ["requests_per_s"])
print("escalated %.3f s after the first slow request; capture in %.2f s (%s); checked %.1f s into the hog, a %.1f s gap; detached %.1f s after it; %s" %
      (delay, took, summ["dominant"], gaps[0][0] - t0, gaps[0][1] - gaps[0][0], down, line[0]))
EOF
	); then
		pass serve_tiers
		echo "   $msg"
	else
		fail serve_tiers "$(echo "$msg" | tail -1); serve said: $(grep -E 'attached|detached' "$OUT/tiers.err" | tail -4 | tr '\n' '|')"
		mkdir -p build/test-artifacts && cp "$OUT/tiers.err" build/test-artifacts/serve-tiers.err
		cleanup
		return
	fi
	# the capture's rate against the client's own, over its whole run
	wait_for "$OUT/client.out" 'rps=' "$cpid" 60
	if msg=$(python3 - "$OUT/tiers.rate" "$OUT/client.out" 2>&1 <<'EOF'
import re, sys
cap = float(open(sys.argv[1]).read())
cli = float(re.search(r"rps=([0-9.]+)", open(sys.argv[2]).read()).group(1))
print("capture %.0f/s, client %.0f/s" % (cap, cli))
sys.exit(0 if cli / 2 <= cap <= cli * 2 else 1)
EOF
	); then
		pass serve_tiers_rate
		echo "   $msg"
	else
		fail serve_tiers_rate "$msg"
	fi
	stop_child "$lpid"
	cleanup
}

# dir_names DIR: the names in DIR, one a line, sorted
dir_names() {
	find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort
}

# serve_capture_report NAME FILE: latwhy report of FILE as nobody, from a
# copy of latwhy in $OUT/pub, into $OUT/NAME.rep (stderr in .err).
serve_capture_report() {
	local pub=$OUT/pub
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" "$(dirname "$2")" && cp latwhy "$pub/"
	chmod 644 "$2"
	as_nobody "$pub/latwhy" report "$2" >"$OUT/$1.rep" 2>"$OUT/$1.err"
}

# Hindsight captures: serve --capture-dir keeps a 10 s window; SIGUSR1
# writes it (the stderr line, the file, the counter, a report as nobody of
# 10 s with requests in it), a second one inside --capture-min-interval is
# refused with one line; then a trigger on sched time fires once lw_hog
# shares the server's CPU, the capture named and reasoned sched, its report
# blaming lw_hog, the directory capped at 2 files.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_serve_capture() {
	local mport lpid caps=$OUT/caps caps2=$OUT/caps2 f out n secs rc
	mport=$(free_port)
	start_server "$SRV_CPU" || { no_server serve_capture; return; }
	start_client 60
	: >"$OUT/serve.err" # its last run's lines would match at once
	./latwhy serve -p "$SPID" --sample off --listen "127.0.0.1:$mport" --capture-dir "$caps" \
		--capture-window 10s >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10 ||
		! serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$SERVE_REQ', 0) > 0" 30; then
		fail serve_capture "nothing traced: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	sleep 12 # more than the window: the capture holds its last 10 s only
	kill -USR1 "$lpid"
	if ! wait_for "$OUT/serve.err" "^latwhy: wrote $caps/latwhy-lat_server-[0-9]\{8\}T[0-9]\{6\}Z-signal\.lwy ([0-9]* bytes, reason signal)$" "$lpid" 10; then
		fail serve_capture "no capture on SIGUSR1: $(tail -2 "$OUT/serve.err")"
		cleanup
		return
	fi
	f=$(dir_names "$caps" | head -1)
	f=$caps/$f
	[ "$(dir_names "$caps")" = "$(basename "$f")" ] && pass serve_capture_file ||
		fail serve_capture_file "$caps holds: $(dir_names "$caps" | tr '\n' ' ')"
	serve_capture_report sig "$f"
	rc=$?
	out=$(cat "$OUT/sig.rep")
	secs=$(sed -n 's/^== latwhy: pid [0-9]* (lat_server), \([0-9.]*\) s traced ==$/\1/p' <<<"$out")
	n=$(sed -n 's/^Requests (socket): \([0-9]*\) .*/\1/p' <<<"$out")
	if [ $rc -eq 0 ] && [ ! -s "$OUT/sig.err" ] && [ "${n:-0}" -gt 0 ] &&
		python3 -c "import sys; sys.exit(not 9.5 <= float('${secs:-0}') <= 11.5)" &&
		grep -q "^Recorded with: serve -p $SPID --sample off --listen 127.0.0.1:$mport --capture-dir $caps --capture-window 10s$" <<<"$out" &&
		grep -q "^Hindsight capture: reason signal, the [0-9.]* s before [0-9-]*T[0-9:]*Z$" <<<"$out"; then
		pass serve_capture_report
	else
		fail serve_capture_report "rc=$rc requests=$n traced=$secs s: $(head -4 "$OUT/sig.rep" | tr '\n' '|') $(head -2 "$OUT/sig.err")"
	fi
	serve_scrape "$mport" "$OUT/metrics2.txt" 'True' 5
	serve_check serve_capture_counter "$OUT/metrics2.txt" '
assert m["latwhy_captures_total{target=\"lat_server\",reason=\"signal\"}"] == 1, m
assert text.count("# TYPE latwhy_captures_total counter") == 1
'
	if command -v promtool >/dev/null; then
		out=$(promtool check metrics <"$OUT/metrics2.txt" 2>&1) && pass serve_capture_promtool ||
			fail serve_capture_promtool "$(head -2 <<<"$out" | tr '\n' ' ')"
	fi
	kill -USR1 "$lpid"
	wait_for "$OUT/serve.err" "^latwhy: capture refused (reason signal): the last one was [0-9]*\.[0-9] s ago, --capture-min-interval is 300 s$" "$lpid" 10 &&
		[ "$(dir_names "$caps" | wc -l)" -eq 1 ] && pass serve_capture_refused ||
		fail serve_capture_refused "$(tail -1 "$OUT/serve.err"); $(dir_names "$caps" | tr '\n' ' ')"
	stop_child "$lpid"

	# a trigger: 200 ms a second of sched time in slow (> 1 ms) requests
	# for 3 s; lw_hog on the server's CPU takes about half of it
	./latwhy serve -p "$SPID" --sample off --listen "127.0.0.1:$mport" --slow 1ms --capture-dir "$caps2" \
		--capture-on sched:200ms/s:3s --capture-min-interval 0 --capture-max-files 2 \
		>"$OUT/serve2.out" 2>"$OUT/serve2.err" &
	lpid=$!
	PIDS+=("$lpid")
	wait_for "$OUT/serve2.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10
	"$T/lw_hog" -C "$SRV_CPU" -d 20 &
	PIDS+=("$!")
	if ! wait_for "$OUT/serve2.err" "^latwhy: wrote $caps2/latwhy-lat_server-.*-sched\.lwy ([0-9]* bytes, reason sched)$" "$lpid" 20; then
		fail serve_capture_trigger "no capture on sched: $(tail -2 "$OUT/serve2.err")"
		cleanup
		return
	fi
	# at least 3 captures of 3 s each: the cap keeps 2
	wait_for "$OUT/serve2.err" "^latwhy: removed $caps2/latwhy-lat_server-.*-sched\.lwy (the capture directory's cap)$" "$lpid" 20 &&
		[ "$(dir_names "$caps2" | grep -c '^latwhy-lat_server-.*-sched\.lwy$')" -eq 2 ] && pass serve_capture_cap ||
		fail serve_capture_cap "$(dir_names "$caps2" | tr '\n' ' ') $(tail -1 "$OUT/serve2.err")"
	f=$caps2/$(dir_names "$caps2" | grep -- '-sched\.lwy$' | head -1)
	serve_capture_report trig "$f"
	grep -q "^Verdict: sched " "$OUT/trig.rep" && grep -q "ran instead of it: lw_hog " "$OUT/trig.rep" &&
		pass serve_capture_trigger ||
		fail serve_capture_trigger "$(grep -E '^(Verdict|Requests|==)' "$OUT/trig.rep" | tr '\n' '|') $(head -1 "$OUT/trig.err")"
	stop_child "$lpid" # before the server: a SIGTERM as it exits is missed
	cleanup
}

# serve's slow requests by cause are the kernel's counts (cause_counts);
# its hindsight window holds the records of the same requests, which the
# engine attributes on its own. With the client done and the counts
# published, a scrape and the window's capture must agree cause by cause:
# the same requests, the same rule (lw_cause_of()) on both sides.
test_serve_counts() {
	local mport lpid cpid caps=$OUT/caps3 f msg
	mport=$(free_port)
	start_server "$SRV_CPU" || { no_server serve_counts; return; }
	./latwhy serve -p "$SPID" --sample off --slow 1ms --listen "127.0.0.1:$mport" \
		--capture-dir "$caps" >"$OUT/serve3.out" 2>"$OUT/serve3.err" &
	lpid=$!
	PIDS+=("$lpid")
	if ! wait_for "$OUT/serve3.err" "^latwhy: tracing pid $SPID (lat_server)$" "$lpid" 10; then
		fail serve_counts "not traced: $(tail -2 "$OUT/serve3.err")"
		cleanup
		return
	fi
	start_client 8
	cpid=${PIDS[-1]}
	"$T/lw_hog" -C "$SRV_CPU" -d 4 &
	PIDS+=("$!")
	wait "$cpid" # no request after it
	sleep 2.5    # two of serve's ticks: the last counts published
	serve_scrape "$mport" "$OUT/metrics3.txt" 'True' 5
	kill -USR1 "$lpid"
	if ! wait_for "$OUT/serve3.err" "^latwhy: wrote $caps/.*-signal\.lwy " "$lpid" 10; then
		fail serve_counts "no capture on SIGUSR1: $(tail -2 "$OUT/serve3.err")"
		cleanup
		return
	fi
	f=$caps/$(dir_names "$caps" | head -1)
	./latwhy report --json "$f" >"$OUT/counts.json" 2>"$OUT/counts.err"
	if msg=$(pycheck "$OUT/metrics3.txt" "$OUT/counts.json" 2>&1 <<'EOF'
import json, sys
m = dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines()
                                    if l and not l.startswith("#")))
summ = [o for o in map(json.loads, open(sys.argv[2])) if o["type"] == "summary"][0]
key = 'latwhy_%s{target="lat_server",cause="%s"}'
assert m["latwhy_events_dropped_total"] == 0 and summ["dropped"] == 0, "records dropped"
slow = m[key % ("slow_requests_total", "sched")]
assert slow >= 50, "only %d slow requests for sched with lw_hog on the CPU" % slow
named = 0
for c, v in summ["causes"].items():
    k = m[key % ("slow_requests_total", c)]
    assert k == v["requests"], "%s: the kernel counted %d, the engine %d" % (c, k, v["requests"])
    named += v["requests"]
    if v["ns"] is not None:
        secs = m[key % ("slow_request_seconds_total", c)]
        assert abs(secs - v["ns"] / 1e9) < 1e-6, "%s: %.9f s, the engine %.9f s" % (c, secs, v["ns"] / 1e9)
none = summ["slow_requests"] - named + summ["handoff_slow_requests"]
assert m[key % ("slow_requests_total", "none")] == none, (m[key % ("slow_requests_total", "none")], none)
print("%d slow requests, sched %d" % (summ["slow_requests"], slow))
EOF
	); then
		pass serve_counts
		echo "  $msg"
	else
		fail serve_counts "$(tail -1 <<<"$msg") $(head -1 "$OUT/counts.err")"
	fi
	stop_child "$lpid"
	cleanup
}

# serve_past_stretch NAME TAG PORT: serve -p the lab server at its defaults
# (-v, $OUT/TAG.out and .err), its pid in LPID, once its cycle's first duty
# stretch has ended and the tier is alone; else NAME fails, cleaned up, 1
serve_past_stretch() {
	local name=$1 tag=$2 mport=$3
	./latwhy serve -p "$SPID" --listen "127.0.0.1:$mport" -v >"$OUT/$tag.out" 2>"$OUT/$tag.err" &
	LPID=$!
	PIDS+=("$LPID")
	wait_for "$OUT/$tag.err" "^latwhy: detached for [0-9.]* s$" "$LPID" 20 && return 0
	fail "$name" "the cycle's first stretch did not end: $(tail -2 "$OUT/$tag.err")"
	cleanup
	return 1
}

# The always-attached tier's timed requests against the client's own
# latencies, a truth latwhy has no part in: a timed request ends as its
# reply goes out, read back from the socket at the connection's next
# request or, for its last, as it closes (bpf/watch.bpf.h). Two clients in
# turn on a lab server at ~400 requests a second (every one timed below
# 2000 a second): one connection for the whole run, then a new connection
# a request (-k 1, closed by the client after each reply, so no request
# has a next read). In each, every request counted (the client's count, 2
# in flight at most), at least 90% of them timed, and their mean (the
# histogram's sum over its count, each timed request weighing 1 here)
# within 0.6-1.1x the client's, which adds the two loopback crossings.
test_serve_watch_ends() {
	local mport lpid mode k msg
	need_socket serve_watch_ends "the always-attached tier times TCP requests at the socket layer" || return
	mport=$(free_port)
	start_server "$SRV_CPU" -w 1250000 || { no_server serve_watch_ends; return; }
	serve_past_stretch serve_watch_ends ends "$mport" || return
	lpid=$LPID
	for mode in keep close; do
		k=0
		[ "$mode" = close ] && k=1
		serve_scrape "$mport" "$OUT/ends-$mode-0.txt" True 5
		"$T/lat_client" -p "$PORT" -c 1 -C "$CLI_CPU" -d 5 -k "$k" -q >"$OUT/ends-$mode.client" 2>&1
		sleep 1.5 # two of serve's ticks: the last counts published
		serve_scrape "$mport" "$OUT/ends-$mode-1.txt" True 5
	done
	if msg=$(pycheck "$OUT" 2>&1 <<'EOF'
import re, sys
out = sys.argv[1]
def scrape(path):
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in open(path).read().splitlines()
                                          if l and not l.startswith("#")))
said = []
for mode in ("keep", "close"):
    m0, m1 = scrape("%s/ends-%s-0.txt" % (out, mode)), scrape("%s/ends-%s-1.txt" % (out, mode))
    d = lambda k: m1.get(k, 0) - m0.get(k, 0)
    cli = dict((k, float(v)) for k, v in re.findall(r"(\w+)=([0-9.]+)", open("%s/ends-%s.client" % (out, mode)).read()))
    n, req = cli["requests"], d('latwhy_requests_total{target="lat_server"}')
    timed = d('latwhy_watch_timed_requests_total{target="lat_server"}')
    assert n > 500, "%s: the client made %d requests" % (mode, n)
    assert n <= req <= n + 2, "%s: %d requests counted, the client made %d" % (mode, req, n)
    assert timed >= 0.9 * n, "%s: %d of %d requests timed" % (mode, timed, n)
    cnt = d('latwhy_request_duration_seconds_count{target="lat_server"}')
    mean, cmean = d('latwhy_request_duration_seconds_sum{target="lat_server"}') / cnt * 1e6, cli["mean_us"]
    assert 0.6 * cmean <= mean <= 1.1 * cmean, "%s: mean %.0f us, the client's %.0f us" % (mode, mean, cmean)
    said.append("%s: %d of %d timed, mean %.0f us (client %.0f us)" % (mode, timed, n, mean, cmean))
print("; ".join(said))
EOF
	); then
		pass serve_watch_ends
		echo "   $msg"
	else
		fail serve_watch_ends "$(tail -1 <<<"$msg")"
	fi
	stop_child "$lpid"
	cleanup
}

# The always-attached tier at a rate where it samples (bpf/watch.bpf.h:
# 1 in 2^k requests looked at beyond the socket's bucket, k from the
# target's rate for about 1000 a second), against the client's own count and
# latencies: a lab server with ~100 us of work a request, four connections
# flat out (its CPU saturated, so most of a request is its wait to be
# read, which the tier times), after the cycle's first stretch. The requests counted (the sampled ones, 2^k
# each) within 10% of the client's; the sample a small share of them and of
# about the rule's rate (300-2500 a second); its mean within 0.6-1.1x the
# client's. A machine whose server CPU answers under 3000 a second cannot
# show a sample: SKIP.
test_serve_watch_sampled() {
	local mport lpid msg
	need_socket serve_watch_sampled "the always-attached tier counts TCP requests at the socket layer" || return
	mport=$(free_port)
	start_server "$SRV_CPU" -w 62500 -P 0 || { no_server serve_watch_sampled; return; }
	serve_past_stretch serve_watch_sampled sampled "$mport" || return
	lpid=$LPID
	serve_scrape "$mport" "$OUT/sampled-0.txt" True 5
	"$T/lat_client" -p "$PORT" -c 4 -C "$CLI_CPU" -d 6 -q >"$OUT/sampled.client" 2>&1
	sleep 1.5 # two of serve's ticks: the last counts published
	serve_scrape "$mport" "$OUT/sampled-1.txt" True 5
	if msg=$(pycheck "$OUT" 2>&1 <<'EOF'
import re, sys
out = sys.argv[1]
def scrape(path):
    return dict((k, float(v)) for k, v in (l.rsplit(" ", 1) for l in open(path).read().splitlines()
                                          if l and not l.startswith("#")))
m0, m1 = scrape(out + "/sampled-0.txt"), scrape(out + "/sampled-1.txt")
d = lambda k: m1.get(k, 0) - m0.get(k, 0)
cli = dict((k, float(v)) for k, v in re.findall(r"(\w+)=([0-9.]+)", open(out + "/sampled.client").read()))
n, secs = cli["requests"], 6.0
if n < 3000 * secs:
    print("SKIP: the client made %d requests in %.0f s, under 3000 a second" % (n, secs))
    sys.exit(0)
req = d('latwhy_requests_total{target="lat_server"}')
timed = d('latwhy_watch_timed_requests_total{target="lat_server"}')
assert 0.9 * n <= req <= 1.1 * n, "%d requests counted, the client made %d" % (req, n)
assert timed <= 0.5 * n, "%d of %d requests timed: no sample taken" % (timed, n)
assert 300 * secs <= timed <= 2500 * secs, "%d requests timed in %.0f s" % (timed, secs)
cnt = d('latwhy_request_duration_seconds_count{target="lat_server"}')
mean, cmean = d('latwhy_request_duration_seconds_sum{target="lat_server"}') / cnt * 1e6, cli["mean_us"]
assert 0.6 * cmean <= mean <= 1.1 * cmean, "mean %.0f us, the client's %.0f us" % (mean, cmean)
print("%d requests counted of the client's %d (%+.1f%%), %d timed, mean %.0f us (client %.0f us)"
      % (req, n, (req / n - 1) * 100, timed, mean, cmean))
EOF
	); then
		if [[ $msg == SKIP:* ]]; then
			skip serve_watch_sampled "${msg#SKIP: }"
		else
			pass serve_watch_sampled
			echo "   $msg"
		fi
	else
		fail serve_watch_sampled "$(tail -1 <<<"$msg")"
	fi
	stop_child "$lpid"
	cleanup
}
