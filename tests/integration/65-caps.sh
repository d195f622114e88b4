# shellcheck shell=bash
# 65-caps.sh - caps: least privilege, nobody with CAP_BPF and CAP_PERFMON
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# caps_run NAME CAPS ARGS...: latwhy ARGS as nobody with CAPS, stdout to
# $OUT/trace.json and stderr to $OUT/latwhy.err; sets CAPS_SEEN to its
# capabilities once it traces (caps_of), and CAPS_RC.
caps_run() {
	local name=$1 caps=$2 lpid
	shift 2
	caps_nobody "$caps"
	# emptied first: the background job's redirection may come after the
	# wait below has read the last run's "tracing" line (and taken the
	# caps of setpriv, still root: CI saw 1fffeffffff and no NoNewPrivs)
	: >"$OUT/latwhy.err"
	setpriv "${SETPRIV[@]}" "$OUT/pub/latwhy" "$@" >"$OUT/trace.json" 2>"$OUT/latwhy.err" &
	lpid=$!
	CAPS_SEEN=
	# the trace's first line comes after the attach, and the drop
	wait_for "$OUT/latwhy.err" "^latwhy: \(tracing\|recording\) pid" "$lpid" 20 && CAPS_SEEN=$(caps_of "$lpid")
	wait "$lpid"
	CAPS_RC=$?
}

# Least privilege: nobody, holding only CAP_BPF and CAP_PERFMON, traces the
# root-owned lab server, and once attached holds only CAP_PERFMON (the
# node reader's, for another user's smaps at the end: CAP_BPF is dropped;
# the bounding set cannot be without CAP_SETPCAP); uprobes, which need
# CAP_SYS_ADMIN, fall back to the socket layer with one notice, and are used
# when it is granted; without the two, one line and exit 1. serve --comm
# drops CAP_BPF as well (its target's next process needs no new load: the
# filter takes it), and answers /metrics from a thread that holds none.
# shellcheck disable=SC2015 # A && B || fail: fail is the else branch
test_caps() {
	local pub=$OUT/pub out rc mport lpid cpid tid main http r1 bare=0000000000000000
	local req='latwhy_requests_total{target="lw_caps_srv"}'
	local perfmon=0000004000000000 two=000000c000000000
	caps_usable caps || return
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" &&
		cp latwhy build/tests/uprobe_target "$pub/"
	start_server "$SRV_CPU" || { no_server caps; return; }
	start_client 60
	sleep 0.5
	# a symbol of the server's that is no request: with the fallback, the
	# socket layer's requests are traced
	caps_run caps_trace +bpf,+perfmon -p "$SPID" -d 3s -j --slow 1us \
		--request "uprobe:$T/lat_server:main"
	out=$(grep -v '^latwhy: tracing pid' "$OUT/latwhy.err")
	[ "$out" = "latwhy: no CAP_SYS_ADMIN: uprobes cannot be attached, so request boundaries come from the socket layer instead of --request uprobe" ] &&
		pass caps_notice || fail caps_notice "stderr: $out"
	[ "$CAPS_SEEN" = "$bare $perfmon $perfmon $two $bare 1" ] &&
		pass caps_dropped || fail caps_dropped "Inh Prm Eff Bnd Amb NoNewPrivs after attach: $CAPS_SEEN"
	[ $CAPS_RC -eq 0 ] && check caps_trace '
assert summ["requests"] > 1000, summ["requests"]
assert len(reqs) > 1000, len(reqs)
' || fail caps_trace "rc=$CAPS_RC: $(tail -1 "$OUT/latwhy.err")"
	# granted, CAP_SYS_ADMIN times the server's calls, then goes too
	taskset -c "$SRV_CPU" "$pub/uprobe_target" 8 >"$OUT/target.out" &
	PIDS+=("$!")
	sleep 0.3
	caps_run caps_uprobe +bpf,+perfmon,+sys_admin -p "${PIDS[-1]}" -d 2s -j --slow 1us \
		--request "uprobe:$pub/uprobe_target:handle_request"
	out=$(grep -v '^latwhy: tracing pid' "$OUT/latwhy.err")
	if [ $CAPS_RC -ne 0 ] || [ -n "$out" ]; then
		fail caps_uprobe "rc=$CAPS_RC: $out"
	else
		check caps_uprobe '
assert len(reqs) > 100, "only %d requests" % len(reqs)
lat = sorted(r["latency_ns"] for r in reqs)
assert 250000 <= lat[len(lat) // 2] <= 1000000, lat[len(lat) // 2]
'
	fi
	[ "$CAPS_SEEN" = "$bare $perfmon $perfmon 000000c000200000 $bare 1" ] &&
		pass caps_uprobe_dropped || fail caps_uprobe_dropped "after attach: $CAPS_SEEN"
	# record, the same way, into a directory nobody may write
	mkdir -p "$pub/rec" && chmod 777 "$pub/rec"
	caps_run caps_record +bpf,+perfmon record -p "$SPID" -d 2s -o "$pub/rec/caps.lwy"
	out=$(grep -v '^latwhy: recording pid' "$OUT/latwhy.err")
	[ $CAPS_RC -eq 0 ] && [[ "$out" =~ ^"latwhy: wrote $pub/rec/caps.lwy: "[1-9][0-9]*" requests" ]] &&
		pass caps_record || fail caps_record "rc=$CAPS_RC: $out"
	[ "$CAPS_SEEN" = "$bare $perfmon $perfmon $two $bare 1" ] &&
		pass caps_record_dropped || fail caps_record_dropped "after attach: $CAPS_SEEN"
	# without them: one line, exit 1 (with one of the two as without)
	for c in "" +bpf; do
		if [ -z "$c" ]; then
			out=$(as_nobody "$pub/latwhy" -p "$SPID" -d 1s 2>&1)
		else
			caps_nobody "$c"
			out=$(setpriv "${SETPRIV[@]}" "$pub/latwhy" -p "$SPID" -d 1s 2>&1)
		fi
		rc=$?
		[ $rc -eq 1 ] && [ "$out" = "latwhy: tracing needs CAP_BPF and CAP_PERFMON (or root): run it with sudo" ] &&
			pass "caps_refused${c:+_bpf_only}" || fail "caps_refused${c:+_bpf_only}" "rc=$rc out=$out"
	done
	# serve --comm as nobody: scraped, CAP_PERFMON alone kept on the tracing
	# thread (the node reader's), none on the HTTP server's. The server under
	# a name of its own: another lat_server may be running.
	cleanup
	cp "$T/lat_server" "$pub/lw_caps_srv"
	caps_server || { no_server caps_serve; return; }
	start_client 30
	cpid=${PIDS[-1]}
	mport=$(free_port)
	caps_nobody +bpf,+perfmon
	: >"$OUT/serve.err" # its last run's lines would match at once
	setpriv "${SETPRIV[@]}" "$pub/latwhy" serve --comm lw_caps_srv --sample off --listen "127.0.0.1:$mport" \
		>"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if wait_for "$OUT/serve.err" "serving http" "$lpid" 10 &&
		serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$req', 0) > 0" 30; then
		pass caps_serve
	else
		fail caps_serve "nothing traced: $(tail -2 "$OUT/serve.err")"
	fi
	main=$(caps_of "$lpid")
	http=
	for tid in /proc/"$lpid"/task/*; do
		tid=${tid##*/}
		[ "$tid" = "$lpid" ] || http+="$(caps_of "$lpid" "$tid");"
	done
	[ "$main" = "$bare $perfmon $perfmon $two $bare 1" ] && [ "$http" = "$bare $bare $bare $two $bare 1;" ] &&
		pass caps_serve_dropped || fail caps_serve_dropped "tracing thread: $main; others: $http"
	# the server restarted: its new process traced, with CAP_PERFMON alone
	r1=$(awk -v k="$req" '$1 == k {print $2}' "$OUT/metrics1.txt")
	stop_child "$cpid"
	stop_child "$SPID"
	caps_server || { no_server caps_retrace; return; }
	start_client 30
	if serve_scrape "$mport" "$OUT/metrics2.txt" "m.get('$req', 0) > ${r1:-0} + 100" 30; then
		pass caps_retrace
	else
		fail caps_retrace "not traced again: $(tail -2 "$OUT/serve.err")"
	fi
	kill -TERM "$lpid" # before its target: a stop that lands mid-retrace is lost
	wait "$lpid"
	cleanup
}

# The duty cycle as nobody with CAP_BPF and CAP_PERFMON, its target nobody's
# own: no node reader needs a capability, so once attached the tracing thread
# holds none, and each re-attach must need none. The page-fault events were
# opened again at each attach (perf_event_open: CAP_PERFMON) and on Debian's
# 6.12 serve ended at the first (EACCES). lw_fault_min's run count
# (bpf_stats) says its events came back after the first stretch.
test_caps_duty() {
	local pub=$OUT/pub mport lpid eff n1 fault='latwhy_bpf_run_count_total{prog="lw_fault_min"}'
	local att=latwhy_sampling_attached_seconds_total
	caps_usable caps_duty || return
	if ! bpf_stats_on; then
		skip caps_duty "no kernel.bpf_stats_enabled to count the programs' runs"
		return
	fi
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" &&
		cp latwhy "$pub/" && cp "$T/lat_server" "$pub/lw_caps_srv"
	caps_server setpriv --reuid=65534 --regid=65534 --clear-groups ||
		{ no_server caps_duty; return; }
	start_client 40
	# faults while attached, whenever that is
	(while :; do /bin/true; sleep 0.05; done) &
	PIDS+=("$!")
	mport=$(free_port)
	: >"$OUT/serve.err"
	setpriv "${SETPRIV[@]}" "$pub/latwhy" serve -p "$SPID" --sample 1s/3s \
		--listen "127.0.0.1:$mport" >"$OUT/serve.out" 2>"$OUT/serve.err" &
	lpid=$!
	PIDS+=("$lpid")
	if wait_for "$OUT/serve.err" "serving http" "$lpid" 10 &&
		serve_scrape "$mport" "$OUT/metrics1.txt" "m.get('$att', 0) >= 0.9" 20; then
		eff=$(awk '/^CapEff:/ {print $2}' "/proc/$lpid/status")
		# none where faults are not traced (6.1: no memory cause)
		n1=$(awk -v k="$fault" '$1 == k {print $2}' "$OUT/metrics1.txt")
		# four stretches: three re-attaches
		if [ "$eff" != 0000000000000000 ]; then
			fail caps_duty "the tracing thread still holds $eff: no re-attach without capabilities"
		elif serve_scrape "$mport" "$OUT/metrics2.txt" "m.get('$att', 0) >= 3.5 and m.get('$fault', 0) > ${n1:--1}" 20 &&
			kill -0 "$lpid" 2>/dev/null && ! grep -q "cannot\|not attached" "$OUT/serve.err"; then
			pass caps_duty
		else
			fail caps_duty "$(grep "$att\|$fault" "$OUT/metrics2.txt" | tr '\n' ' ')$(tail -1 "$OUT/serve.err")"
		fi
	else
		fail caps_duty "not attached: $(tail -1 "$OUT/serve.err")"
	fi
	cleanup
}

# caps_usable NAME: setpriv can grant nobody CAP_BPF and CAP_PERFMON (and
# SETPRIV says how), else SKIP NAME and return 1.
caps_usable() {
	if ! setpriv --help 2>/dev/null | grep -q -- --ambient-caps; then
		skip "$1" "setpriv has no --ambient-caps (util-linux 2.31+)"
		return 1
	fi
	caps_nobody +bpf,+perfmon
	if ! setpriv "${SETPRIV[@]}" true 2>/dev/null; then
		skip "$1" "this kernel has no CAP_BPF/CAP_PERFMON (5.8+)"
		return 1
	fi
}

# caps_server [CMD ...]: the lab server as $OUT/pub/lw_caps_srv, a name no
# other test's server has, on the server's CPU, run by CMD (setpriv ...: an
# exec, not a function, whose job would be a subshell that cleanup's kill
# leaves the server behind); sets SPID and PORT.
caps_server() {
	: >"$OUT/server.out"
	"$@" "$OUT/pub/lw_caps_srv" -p 0 -c "$SRV_CPU" >"$OUT/server.out" 2>&1 &
	SPID=$!
	PIDS+=("$SPID")
	wait_for "$OUT/server.out" 'port=' "$SPID" 10 || return 1
	PORT=$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$OUT/server.out")
}
