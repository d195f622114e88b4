#!/bin/bash
# Unit tests of the lab's CPU placement (tools/lab.sh other_cpu, quiet_cpu;
# tools/inject.sh INJECT_AVOID): where the injectors' helpers go on machines
# of two, three and four CPUs, which this machine cannot all be. online_cpus
# is replaced by a stub; nothing here changes a setting.
set -u
cd "$(dirname "$0")/../.." || exit 1
LAB_PROG=test_lab.sh
LAB_JOURNAL_DIR=$(mktemp -d) # lab.sh's recovery looks here, not at real runs
trap 'rm -rf "$LAB_JOURNAL_DIR"' EXIT
# shellcheck source=tools/lab.sh
. tools/lab.sh

FAILS=0
check() { # check NAME WANT GOT
	if [ "$2" = "$3" ]; then
		echo "ok   $1"
	else
		echo "FAIL $1: want '$2', got '$3'"
		FAILS=$((FAILS + 1))
	fi
}

ONLINE="0 1 2 3"
# shellcheck disable=SC2086 # a list of CPUs
online_cpus() { printf '%s\n' $ONLINE; }

check "4 CPUs: off the server's and the client's" 2 "$(other_cpu 1 0)"
check "4 CPUs: nothing to avoid" 0 "$(other_cpu 1)"
check "4 CPUs: avoid two" 3 "$(other_cpu 0 1 2)"
check "4 CPUs: every other avoided, the first other" 0 "$(other_cpu 1 0 2 3)"
ONLINE="0 1 2"
check "3 CPUs: the third" 2 "$(other_cpu 1 0)"
ONLINE="0 1"
check "2 CPUs: shared with the client" 0 "$(other_cpu 1 0)"
check "2 CPUs: the other" 1 "$(other_cpu 0)"
ONLINE="0"
other_cpu 0 >/dev/null
check "1 CPU: none" 1 "$?"

ONLINE="0 1"
got=$(quiet_cpu 0 1 2>&1)
check "quiet_cpu: refuses to quiet every CPU (rc)" 1 "$?"
check "quiet_cpu: refuses to quiet every CPU (message)" \
	"test_lab.sh: cannot quiet CPU 0,1: no online CPU would be left for the rest" "$got"
check "quiet_cpu: nothing was changed" "0 0" "${#LAB_KNOB_FILE[@]} ${#LAB_AFF_TIDS[@]}"

got=$(INJECT_AVOID=0,x tools/inject.sh sched 1 1 2>&1)
check "inject.sh: a bad INJECT_AVOID (rc)" 2 "$?"
check "inject.sh: a bad INJECT_AVOID (message)" \
	"inject.sh: INJECT_AVOID must be a comma-separated list of CPUs, not '0,x'" "$got"

[ "$FAILS" -eq 0 ] || exit 1
echo "test_lab.sh: all passed"
