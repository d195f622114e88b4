#!/bin/bash
# tools/systemd/latwhy.service: systemd-analyze verify passes on it (with
# ExecStart pointed at this build, since verify checks the binary exists),
# its privileges are exactly CAP_BPF and CAP_PERFMON, the hardening that
# issue 24 asks for is there, and systemd-analyze security scores it below
# 2.0 offline (issue 33). Needs no systemd as PID 1, nor root.
set -u
cd "$(dirname "$0")/../.." || exit 1
UNIT=tools/systemd/latwhy.service
if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP test_systemd.sh: no systemd-analyze (Debian's systemd package; tools/deps.sh)"
	exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

FAILS=0
check() { # check NAME WANT GOT
	if [ "$2" = "$3" ]; then
		echo "ok   $1"
	else
		echo "FAIL $1: want '$2', got '$3'"
		FAILS=$((FAILS + 1))
	fi
}
# key UNIT KEY: the value of KEY= in UNIT's lines (the last one wins)
key() { sed -n "s/^$2=//p" "$1" | tail -1; }

# shellcheck disable=SC2016 # the unit's own $ expansions
check "ExecStart: the installed binary" \
	'/usr/local/bin/latwhy serve $LATWHY_TARGET --listen ${LATWHY_LISTEN} $LATWHY_OPTS' "$(key "$UNIT" ExecStart)"
sed "s|/usr/local/bin/latwhy|$PWD/latwhy|" "$UNIT" >"$TMP/latwhy.service"
got=$(systemd-analyze verify "$TMP/latwhy.service" 2>&1)
check "verify: exit status" 0 "$?"
check "verify: nothing to say" "" "$got"
# and it does fail on what the unit would: the binary missing
sed "s|/usr/local/bin/latwhy|$TMP/no-latwhy|" "$UNIT" >"$TMP/missing.service"
systemd-analyze verify "$TMP/missing.service" >/dev/null 2>&1
check "verify: a missing binary fails" 1 "$?"

for k in AmbientCapabilities CapabilityBoundingSet; do
	check "$k" "CAP_BPF CAP_PERFMON" "$(key "$UNIT" "$k")"
done
for kv in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
	PrivateTmp=yes StateDirectory=latwhy ProtectKernelTunables=yes ProtectControlGroups=yes; do
	check "$kv" "${kv#*=}" "$(key "$UNIT" "${kv%%=*}")"
done
# a bound on each, whatever it is
for k in MemoryMax CPUQuota; do
	[ -n "$(key "$UNIT" "$k")" ]
	check "$k set" 0 "$?"
done
# what would break BPF or finding the target
for k in PrivateUsers ProtectProc; do
	check "no $k" "" "$(key "$UNIT" "$k")"
done

got=$(systemd-analyze security --offline=true --threshold=20 "$TMP/latwhy.service" 2>&1)
check "security: exposure at most 2.0 ($(echo "$got" | sed -n 's/.*Overall exposure level for [^:]*: //p'))" 0 "$?"

[ "$FAILS" -eq 0 ] || exit 1
echo "test_systemd.sh: all passed"
