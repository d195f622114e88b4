#!/bin/bash
# Integration tests: load latwhy's real BPF programs against a real server and
# real kernel events, and check the attribution. Needs root (BPF); elsewhere
# each test says it is skipped and why.
#
#   tests/integration/run.sh [TEST ...]     default: all, in order
#   tests/integration/run.sh --list         every test in order, and its file
#
# A test is a function test_NAME in an area file beside this one,
# tests/integration/NN-AREA.sh (helpers shared by several areas: lib.sh);
# nothing lists the tests by hand. Adding one is defining it in the file of
# its area; adding an area is adding a file NN-AREA.sh (see Discovery below).
#
# Every system setting a test changes is restored by the injector that
# changed it (tools/inject.sh traps EXIT/INT/TERM), also when a test fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/integration/lib.sh
. tests/integration/lib.sh

# ---- Discovery -------------------------------------------------------------
#
# Every area file is sourced, and every test_NAME function it defines is a
# test. They run in the order of their area files' names, NN first (the glob
# sorts them), and within a file in the order they are defined there. The
# order matters: a test runs after the ones before it on the same machine
# (what one leaves behind, the next sees), and the order of the list this
# replaced is kept: cli, requests, sched, capture, idle, irq, freq, thp, lab,
# nic, serve, caps, cgroup, then accuracy (the slowest) last. A new area takes
# a free NN where it belongs (steps of 5 leave room); the lines and files
# come from bash itself (declare -F under extdebug), not from parsing them.
AREAS=(tests/integration/[0-9][0-9]-*.sh)
ALL=()                # every test, in run order
declare -A FILE_OF=() # the area file that defines each
found=()              # "FILE-INDEX LINE NAME", sorted into ALL
shopt -s extdebug     # declare -F NAME prints NAME LINE FILE
for i in "${!AREAS[@]}"; do
	# shellcheck source=/dev/null # each area file (shellcheck -x them one by one)
	. "${AREAS[i]}" || { echo "run.sh: ${AREAS[i]} failed to load" >&2; exit 2; }
	while read -r _ _ fn; do
		[[ $fn == test_* ]] || continue
		read -r _ line file <<<"$(declare -F "$fn")"
		[ "$file" = "${AREAS[i]}" ] || continue # an earlier file's
		t=${fn#test_}
		if [ -n "${FILE_OF[$t]:-}" ]; then
			echo "run.sh: test_$t is defined in both ${FILE_OF[$t]} and $file" >&2
			exit 2
		fi
		FILE_OF[$t]=$file
		found+=("$i $line $t")
	done < <(declare -F)
done
while read -r _ _ fn; do
	[[ $fn == test_* ]] && [ -z "${FILE_OF[${fn#test_}]:-}" ] &&
		{ echo "run.sh: $fn is not defined in an area file: $(declare -F "$fn" | cut -d' ' -f3)" >&2; exit 2; }
done < <(declare -F)
shopt -u extdebug
mapfile -t ALL < <(printf '%s\n' "${found[@]}" | sort -k1,1n -k2,2n | cut -d' ' -f3)
unset found i fn line file t

case ${1:-} in
--list)
	for t in "${ALL[@]}"; do
		printf '%-16s %s\n' "$t" "${FILE_OF[$t]}"
	done
	exit 0
	;;
-h | --help)
	sed -n '6,7p' "$0" | sed 's/^# \{0,3\}//'
	exit 0
	;;
esac
TESTS=("$@")
for t in "${TESTS[@]}"; do
	if [ -z "$t" ] || [ -z "${FILE_OF[$t]:-}" ]; then
		echo "run.sh: unknown test '$t' (tests/integration/run.sh --list names them)" >&2
		exit 2
	fi
done
[ ${#TESTS[@]} -eq 0 ] && TESTS=("${ALL[@]}")

if [ "$(id -u)" != 0 ]; then
	echo "SKIP integration: loading BPF programs needs root (or CAP_BPF+CAP_PERFMON)"
	echo "integration: 0 passed, 0 failed, ${#TESTS[@]} skipped"
	exit 0
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "SKIP integration: the kernel has no BTF (/sys/kernel/btf/vmlinux)"
	echo "integration: 0 passed, 0 failed, ${#TESTS[@]} skipped"
	exit 0
fi
it_setup
for t in "${TESTS[@]}"; do
	if [ "$NCPU" -lt 2 ] && [ -z "${ONE_CPU[$t]:-}" ]; then
		skip "$t" "needs 2 CPUs, may run on $NCPU"
		continue
	fi
	seen=$((PASSES + FAILS + SKIPS))
	"test_$t"
	# a test that stopped short (a shell error in it) said nothing: that
	# is a failure, not a test that did not exist
	[ $((PASSES + FAILS + SKIPS)) -gt "$seen" ] || fail "$t" "ended without a PASS, FAIL or SKIP"
done
echo "integration: $PASSES passed, $FAILS failed, $SKIPS skipped"
[ "$FAILS" -eq 0 ]
