# shellcheck shell=bash
# 25-capture.sh - capture: --capture, record and report, damaged and bad files
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# A capture for a ticket: one --capture run reports, as nobody and from a
# copy of the file, exactly what the live trace printed (request lines and
# summary); record's own run makes a file report reads, with the final line
# and the header; the refusals are one line each.
test_capture() {
	local pub=$OUT/pub out rc
	start_server "$SRV_CPU" || { no_server capture; return; }
	start_client 10
	sleep 0.5
	mkdir -p "$pub" && chmod 711 "$OUT" && chmod 755 "$pub" && cp latwhy "$pub/"
	./latwhy -p "$SPID" -d 3s -j --slow 1us --capture "$pub/live.lwy" >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	chmod 644 "$pub/live.lwy"
	as_nobody "$pub/latwhy" report --json "$pub/live.lwy" >"$OUT/report.json" 2>"$OUT/report.err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$OUT/report.err" ]; then
		fail capture_report "rc=$rc: $(head -3 "$OUT/report.err")"
		cleanup
		return
	fi
	check capture "
import re
rep = [json.loads(l) for l in open('$OUT/report.json')]
cap, rreqs, rsumm = rep[0], [o for o in rep if o['type'] == 'request'], rep[-1]
assert cap['type'] == 'capture' and cap['complete'] and cap['abi_version'] >= 1, cap
assert cap['target']['pid'] == str(summ['pid']) and cap['target']['comm'] == 'lat_server', cap
assert len(reqs) > 1000 and rreqs == reqs, 'requests: live %d, report %d' % (len(reqs), len(rreqs))
def mask(o):  # interrupt counts since boot move between two reads of the node
    return json.loads(re.sub(r'[0-9]+ since boot', '# since boot', json.dumps(o)))
assert mask(rsumm) == mask(summ), [k for k in summ if summ[k] != rsumm.get(k)]
"
	# record itself: the final line, then the report's header
	./latwhy record -p "$SPID" -d 2s -o "$pub/rec.lwy" >"$OUT/rec.out" 2>"$OUT/rec.err"
	rc=$?
	chmod 644 "$pub/rec.lwy" 2>/dev/null
	out=$(as_nobody "$pub/latwhy" report "$pub/rec.lwy" 2>&1)
	if [ $rc -ne 0 ] || ! grep -Eq "^latwhy: wrote $pub/rec.lwy: [0-9]+ requests, [0-9]+ slow, 2\.[0-9]+ s$" "$OUT/rec.err" ||
		! grep -q "^Capture $pub/rec.lwy: latwhy [0-9.]*" <<<"$out" ||
		! grep -q "^Recorded with: record -p $SPID -d 2s -o $pub/rec.lwy$" <<<"$out" ||
		! grep -q '^== latwhy: pid [0-9]* (lat_server), 2\.[0-9]* s traced ==$' <<<"$out"; then
		fail capture_record "rc=$rc: $(tail -2 "$OUT/rec.err") / $(head -3 <<<"$out")"
	else
		pass capture_record
	fi
	out=$(./latwhy record -p "$SPID" -d 1s -o "$pub/rec.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 1 ] || [ "$out" != "latwhy: $pub/rec.lwy exists (--force replaces it)" ]; then
		fail capture_exists "rc=$rc out=$out"
	fi
	cleanup
}

# cut_ok DIR RC: the report of a capture killed mid-run (in DIR/cut.*)
cut_ok() {
	pycheck "$1" "$2" <<'PY'
import json, sys
out, rc = sys.argv[1], int(sys.argv[2])
assert rc == 0, "report of a cut capture: rc %d" % rc
err = open(out + "/cut.err").read()
assert "the capture was cut short (no end record" in err, err
lines = [json.loads(l) for l in open(out + "/cut.json")]
cap, summ = lines[0], lines[-1]
assert not cap["complete"], cap
# 3.5 s recorded, flushed each second: at least 2 s of it kept
assert summ["duration_ns"] >= 2.0e9 and summ["requests"] > 500, summ["duration_ns"]
PY
}

# A capture cut short (kill -9 of the recorder) reads up to its last flush:
# at most a second or so lost, and said; a size cap stops it with a message
# and exit 0; a full disk is one line and exit 1, the file still readable.
test_capture_damage() {
	local f=$OUT/cut.lwy rec out rc mnt=$OUT/small
	start_server "$SRV_CPU" || { no_server capture_damage; return; }
	start_client 40 # outlives the three recordings; cleanup stops it
	sleep 0.5
	./latwhy record -p "$SPID" -d 20s -q -o "$f" 2>"$OUT/rec.err" &
	rec=$!
	wait_for "$OUT/rec.err" '^latwhy: recording pid' "$rec" 20
	sleep 3.5
	kill -9 "$rec"
	wait "$rec" 2>/dev/null
	./latwhy report --json "$f" >"$OUT/cut.json" 2>"$OUT/cut.err"
	rc=$?
	if cut_ok "$OUT" $rc >"$OUT/cut.py" 2>&1; then
		pass capture_killed
	else
		fail capture_killed "$(tail -1 "$OUT/cut.py")"
	fi
	# a cap 12 KiB above what a 1 s capture of this node takes (its
	# header and node snapshots): a few seconds of records
	local cap
	cap=$(($(./latwhy record -p "$SPID" -d 1s -q -o "$OUT/base.lwy" >/dev/null 2>&1; stat -c %s "$OUT/base.lwy") / 1024 + 12))
	out=$(./latwhy record -p "$SPID" -d 30s -q --max-size "${cap}k" -o "$OUT/cap.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q "^latwhy: $OUT/cap.lwy reached its size cap (--max-size $cap.0 KiB): capture stopped after" <<<"$out" ||
		[ "$(stat -c %s "$OUT/cap.lwy")" -gt $((cap * 1024)) ] ||
		! ./latwhy report "$OUT/cap.lwy" 2>/dev/null | grep -q '^== latwhy: pid [0-9]* (lat_server), '; then
		fail capture_cap "rc=$rc: $out"
	else
		pass capture_cap
	fi
	if ! mkdir -p "$mnt" || ! mount -t tmpfs -o size=64k tmpfs "$mnt"; then
		skip capture_full "cannot mount a tmpfs"
		cleanup
		return
	fi
	out=$(./latwhy record -p "$SPID" -d 20s -q --slow 1us -o "$mnt/full.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 1 ] || ! grep -q "^latwhy: cannot write $mnt/full.lwy: No space left on device; what was written stays readable$" <<<"$out" ||
		! ./latwhy report "$mnt/full.lwy" >/dev/null 2>&1; then
		fail capture_full "rc=$rc: $out"
	else
		pass capture_full
	fi
	umount "$mnt"
	cleanup
}

# Files that are not captures: one line each, exit 1, no hang.
test_capture_bad() {
	local d=$OUT/bad f out rc ok=1
	mkdir -p "$d" "$d/dir.lwy"
	: >"$d/empty.lwy"
	echo "hello" >"$d/text.lwy"
	mkfifo "$d/fifo.lwy"
	truncate -s 10G "$d/zeros.lwy"
	for f in empty text fifo zeros dir missing; do
		out=$(timeout 20 ./latwhy report "$d/$f.lwy" 2>&1)
		rc=$?
		if [ $rc -ne 1 ] || [ "$(wc -l <<<"$out")" -ne 1 ] || [[ $out != "latwhy: $d/$f.lwy: "* ]]; then
			fail capture_bad "$f: rc=$rc out=$out"
			ok=
		fi
	done
	out=$(./latwhy report 2>&1)
	rc=$?
	if [ $rc -ne 2 ] || [ "$out" != "latwhy: a capture file is needed: latwhy report FILE (see latwhy report --help)" ]; then
		fail capture_bad "no file: rc=$rc out=$out"
		ok=
	fi
	out=$(./latwhy diff "$d/text.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 2 ] || [ "$out" != "latwhy: diff takes two capture files: latwhy diff A.lwy B.lwy (see latwhy diff --help)" ]; then
		fail capture_bad "diff of one file: rc=$rc out=$out"
		ok=
	fi
	out=$(./latwhy diff tests/captures/sched.lwy "$d/text.lwy" 2>&1)
	rc=$?
	if [ $rc -ne 1 ] || [ "$out" != "latwhy: $d/text.lwy: not a latwhy capture (bad magic)" ]; then
		fail capture_bad "diff with a bad file: rc=$rc out=$out"
		ok=
	fi
	rm -f "$d/zeros.lwy"
	[ -n "$ok" ] && pass capture_bad
}
