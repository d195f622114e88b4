#!/bin/bash
# guest-checks.sh: run by latwhy-guest-checks.service inside the guest that
# tools/systemd/guest.sh boots (Debian bookworm, systemd as PID 1, no
# network). Installs /root/latwhy.deb with apt from apt's cache, starts the
# lab server, and checks the unit under the real systemd. One line per
# check, "PASS name: detail" or "FAIL name: detail", on the console and in
# /root/results.txt; the journal is saved to /root/journal.txt. Then it
# powers the guest off.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C
RES=/root/results.txt
: >"$RES"
T0=$(cut -d' ' -f1 /proc/uptime)
say() { echo "LATWHY-GUEST $*" | tee -a "$RES"; }
pass() { say "PASS $1: $2"; }
fail() { say "FAIL $1: $2"; }
check() { # check NAME DETAIL COMMAND...: PASS when COMMAND succeeds
	local n=$1 d=$2
	shift 2
	if "$@"; then pass "$n" "$d"; else fail "$n" "$d"; fi
}
prop() { systemctl show -p "$1" --value latwhy; }
# wait_until SECONDS CODE: until the shell code CODE succeeds, polled
# every 0.5 s
wait_until() {
	local end=$(($(date +%s) + $1))
	until eval "$2"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.5
	done
}
finish() {
	say "DONE $(grep -c '^LATWHY-GUEST PASS' "$RES") passed, $(grep -c '^LATWHY-GUEST FAIL' "$RES") failed" \
		"in $(awk -v a="$T0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {printf "%d", b - a}') s (boot to here $(cut -d' ' -f1 /proc/uptime) s)"
	journalctl -b --no-pager -o short-monotonic >/root/journal.txt 2>&1
	sync
	systemctl poweroff --no-block
	exit 0
}
M=http://127.0.0.1:9462/metrics
metric_sum() { curl -s --max-time 5 "$M" | awk -v f="$1" '$1 ~ "^" f "({|$)" {s += $2} END {printf "%d", s}'; }

# ---- install: apt resolves Depends from the cache, offline
say "START kernel $(uname -r), $(systemctl --version | head -n1)"
before=$(dpkg-query -W -f='${Package}\n' | sort)
if apt-get install -y /root/latwhy.deb >/root/apt.log 2>&1; then
	added=$(comm -13 <(echo "$before") <(dpkg-query -W -f='${Package}\n' | sort) | grep -vx latwhy | tr '\n' ' ')
	got=$(grep -o 'Need to get [^ ]*' /root/apt.log | sed 's/Need to get //')
	pass install "apt-get install ./latwhy.deb: $(dpkg-query -W -f='${Package} ${Version}' latwhy) and, of its Depends, ${added% } (the rest were there; downloaded ${got:-?}: offline)"
else
	fail install "apt-get install failed: $(tail -n 3 /root/apt.log | tr '\n' ' ')"
	finish
fi
miss=$(ldd /usr/bin/latwhy | grep -c 'not found')
check libraries "ldd /usr/bin/latwhy: $miss not found" [ "$miss" -eq 0 ]
pkgver=$(dpkg-query -W -f='${Version}' latwhy)
v=$(latwhy --version)
check version "latwhy --version: $v" grep -q "(package $pkgver, commit [0-9a-f]" <<<"$v"
st="$(systemctl is-enabled latwhy) $(systemctl is-active latwhy)"
n=$(journalctl -b -u latwhy -o cat --no-pager | grep -vc '^-- No entries --$')
check not-started "after install: $st, $n journal lines" test "$st" = "disabled inactive" -a "$n" -eq 0

# ---- the lab server, its client, and the target in /etc/default/latwhy
systemd-run -q --unit=lab-server /usr/local/bin/lat_server -p 7077
systemd-run -q --unit=lab-client /usr/local/bin/lat_client -p 7077 -c 1 -r 300 -d 900 -q
cat >>/etc/default/latwhy <<'EOF'
LATWHY_TARGET="--comm lat_server"
LATWHY_OPTS="--capture-dir /var/lib/latwhy --sample off"
EOF

# ---- enable --now: /metrics with slow requests
t=$(date +%s)
systemctl enable --now latwhy 2>/dev/null
if wait_until 240 'curl -sf --max-time 5 -o /dev/null "$M"'; then
	up=$(($(date +%s) - t))
	wait_until 120 '[ "$(metric_sum latwhy_slow_requests_total)" -gt 0 ]'
	pid=$(prop MainPID)
	pass metrics "/metrics answered ${up}s after enable --now: requests $(metric_sum latwhy_requests_total), slow $(metric_sum latwhy_slow_requests_total)"
	[ "$(metric_sum latwhy_slow_requests_total)" -gt 0 ] || fail slow-requests "latwhy_slow_requests_total stayed 0"
	pass process "pid $pid user $(ps -o user= -p "$pid") $(grep -E '^CapEff' "/proc/$pid/status" | tr -s '\t' ' ') $(grep NoNewPrivs "/proc/$pid/status" | tr -s '\t' ' ')"
else
	fail metrics "no answer at $M 240 s after enable --now ($(systemctl is-active latwhy)): $(journalctl -b -u latwhy -o cat --no-pager | tail -n 3 | tr '\n' ' ')"
fi

# ---- SIGUSR1: a capture in /var/lib/latwhy
systemctl kill -s USR1 latwhy
if wait_until 60 'compgen -G "/var/lib/latwhy/latwhy-*-signal.lwy" >/dev/null'; then
	f=$(compgen -G '/var/lib/latwhy/latwhy-*-signal.lwy' | head -n1)
	sleep 1
	h=$(latwhy report "$f" 2>&1 | grep -m1 -o 'Hindsight capture: reason signal[^,]*')
	check capture "systemctl kill -s USR1: $f ($(stat -c %s "$f") bytes; the folder $(readlink -f /var/lib/latwhy), uid $(stat -c %u "$(readlink -f /var/lib/latwhy)") mode $(stat -c %a "$(readlink -f /var/lib/latwhy)")), report: $h" test -n "$h"
else
	fail capture "no /var/lib/latwhy/latwhy-*-signal.lwy 60 s after SIGUSR1: $(ls -la /var/lib/latwhy/ 2>&1 | tr '\n' ' ')"
fi

# ---- the journal: nothing denied. systemd logs seccomp's denials to the
# audit log when PID 1 has SYSTEMD_LOG_SECCOMP=1 (guest.sh's kernel command
# line); a control unit that calls a syscall outside @system-service shows
# the log works. One is no denial: RestrictNamespaces= answers clone3
# (syscall 435, whose flags seccomp cannot read) with ENOSYS, so that
# glibc's pthread_create falls back to clone(), which it filters; a second
# control, a threaded client under RestrictNamespaces=yes alone, shows the
# record and that its threads still start.
systemd-run -q --wait -p SystemCallFilter=@system-service -p SystemCallErrorNumber=EPERM \
	/usr/sbin/swapoff /nonexistent >/dev/null 2>&1
systemd-run -q --wait -p RestrictNamespaces=yes /usr/local/bin/lat_client -p 7077 -c 2 -n 20 -q >/dev/null 2>&1
thr=$?
sleep 1
kmsg() { journalctl -b -k -o cat --no-pager | grep 'type=1326'; }
ctl=$(kmsg | grep -c 'comm="swapoff"')
ctl3=$(kmsg | grep 'comm="lat_client"' | grep -c 'syscall=435 ')
den=$(kmsg | grep 'exe="/usr/bin/latwhy"' | grep -vc 'syscall=435 ')
den3=$(kmsg | grep 'exe="/usr/bin/latwhy"' | grep -c 'syscall=435 ')
tasks=$(find "/proc/$(prop MainPID)/task" -mindepth 1 -maxdepth 1 | wc -l)
msg=$(journalctl -b -u latwhy -o cat --no-pager | grep -Eic 'denied|not permitted|no CAP_|permission|EPERM|EACCES')
check journal "seccomp denials of latwhy: $den, besides $den3 clone3 answered ENOSYS by RestrictNamespaces (a threaded control under it alone: $ctl3 clone3 records, exit $thr; latwhy runs $tasks threads); control swapoff logged: $ctl; unit lines naming a denial or a missing capability: $msg" \
	test "$ctl" -gt 0 -a "$ctl3" -gt 0 -a "$thr" -eq 0 -a "$tasks" -gt 1 -a "$den" -eq 0 -a "$msg" -eq 0
[ "$msg" -eq 0 ] || journalctl -b -u latwhy -o cat --no-pager | grep -Ei 'denied|not permitted|no CAP_|permission|EPERM|EACCES' | head -n 5 | sed 's/^/LATWHY-GUEST   /' | tee -a "$RES"
[ "$den" -eq 0 ] || kmsg | grep 'exe="/usr/bin/latwhy"' | grep -v 'syscall=435 ' | head -n 5 | sed 's/^/LATWHY-GUEST   /' | tee -a "$RES"

# ---- systemd-analyze security
sec=$(systemd-analyze security --no-pager latwhy.service 2>&1 | sed -n 's/.*Overall exposure level for latwhy.service: \([0-9.]*\).*/\1/p')
check security "systemd-analyze security latwhy: ${sec:-?} (at most 2.0)" awk -v s="${sec:-99}" 'BEGIN {exit !(s <= 2.0)}'

# ---- kill -9: restarted
pid=$(prop MainPID)
n0=$(prop NRestarts)
kill -9 "$pid"
if wait_until 60 '[ "$(prop MainPID)" != "$pid" ] && [ "$(prop MainPID)" != 0 ] && systemctl -q is-active latwhy' &&
	wait_until 240 'curl -sf --max-time 5 -o /dev/null "$M"'; then
	pass restart "kill -9 $pid: restarted as pid $(prop MainPID), NRestarts $n0 -> $(prop NRestarts), /metrics answers again"
else
	fail restart "kill -9 $pid: $(systemctl is-active latwhy), MainPID $(prop MainPID), NRestarts $(prop NRestarts)"
fi

# ---- upgrade: the package installed again restarts the enabled service
pid=$(prop MainPID)
dpkg -i /root/latwhy.deb >/root/dpkg-again.log 2>&1
if wait_until 30 '[ "$(prop MainPID)" != "$pid" ] && [ "$(prop MainPID)" != 0 ]'; then
	pass upgrade "dpkg -i over the installed package: restarted, pid $pid -> $(prop MainPID), $(systemctl is-enabled latwhy)"
else
	fail upgrade "dpkg -i over the installed package: MainPID still $pid ($(systemctl is-active latwhy))"
fi

# ---- no target: one clear journal line, no restart loop
systemctl stop latwhy
sed -i '/^LATWHY_TARGET=/d' /etc/default/latwhy
systemctl reset-failed latwhy 2>/dev/null
since=$(date '+%Y-%m-%d %H:%M:%S')
systemctl start latwhy
sleep 20 # four RestartSec
line=$(journalctl -b -u latwhy --since "$since" -o cat --no-pager | grep -m1 'target is needed')
starts=$(journalctl -b -u latwhy --since "$since" -o cat --no-pager | grep -c '^Started ')
state="$(systemctl is-active latwhy) status $(prop ExecMainStatus) NRestarts $(prop NRestarts)"
check no-target "journal: '$line'; $state; $starts start(s) in 20 s" \
	test -n "$line" -a "$starts" -eq 1 -a "$state" = "failed status 2 NRestarts 0"

finish
