#!/bin/sh
# What latwhy report prints of each golden capture (tests/captures/*.lwy,
# made by make.sh), and latwhy diff of five pairs, is pinned: text and
# JSON, stdout and stderr, exit code.
# No root, no BPF: the captures are read as any user would.
#
#   tests/captures/check.sh            compare (make unit runs it)
#   tests/captures/check.sh --update   pin the current output
set -u
cd "$(dirname "$0")/../.." || exit 1
DIR=tests/captures
update=
[ "${1:-}" = --update ] && update=1
fails=0 n=0
for f in "$DIR"/*.lwy; do
	[ -e "$f" ] || continue
	base=${f%.lwy}
	for mode in text json; do
		out=$base.$mode
		flag=
		[ $mode = json ] && flag=--json
		got=$(./latwhy report $flag "$f" 2>&1; echo "exit $?")
		n=$((n + 1))
		if [ -n "$update" ]; then
			printf '%s\n' "$got" >"$out"
		elif [ "$got" != "$(cat "$out" 2>/dev/null)" ]; then
			echo "FAIL $out: latwhy report $flag $f differs:"
			printf '%s\n' "$got" | diff "$out" - | head -20
			fails=$((fails + 1))
		fi
	done
done
# each capture's Trace Event file, checked against the format's rules and
# against the report's request lines (check_trace_event.py)
if [ -z "$update" ]; then
	tmp=$(mktemp -d)
	for f in "$DIR"/*.lwy; do
		n=$((n + 1))
		if ! ./latwhy report --trace-event "$tmp/te.json" "$f" >/dev/null 2>&1 ||
			! ./latwhy report --json "$f" >"$tmp/rep.json" 2>/dev/null ||
			! python3 "$DIR/check_trace_event.py" "$tmp/te.json" "$tmp/rep.json" >"$tmp/out"; then
			echo "FAIL $f --trace-event: $(cat "$tmp/out" 2>/dev/null)"
			fails=$((fails + 1))
		fi
	done
	rm -rf "$tmp"
fi

# latwhy diff of pairs that differ in cause and in THP/khugepaged settings,
# one with clock data against one without, and one under a CPU quota
# (record ABI 2) against one of ABI 1 (quota not measured)
for pair in thp:sched sched:quiet irq:softirq freq:quiet quota:quiet; do
	a=$DIR/${pair%:*}.lwy b=$DIR/${pair#*:}.lwy
	for mode in text json; do
		out=$DIR/diff-${pair%:*}-${pair#*:}.$mode
		flag=
		[ $mode = json ] && flag=--json
		got=$(./latwhy diff $flag "$a" "$b" 2>&1; echo "exit $?")
		n=$((n + 1))
		if [ -n "$update" ]; then
			printf '%s\n' "$got" >"$out"
		elif [ "$got" != "$(cat "$out" 2>/dev/null)" ]; then
			echo "FAIL $out: latwhy diff $flag $a $b differs:"
			printf '%s\n' "$got" | diff "$out" - | head -20
			fails=$((fails + 1))
		fi
	done
done
[ -n "$update" ] && { echo "check.sh: pinned $n outputs"; exit 0; }
[ "$n" -gt 0 ] || { echo "check.sh: no capture in $DIR"; exit 1; }
echo "captures: $((n - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
