#!/bin/busybox sh
# shellcheck shell=dash # busybox ash: checked as dash
# The guest's /init for run.sh: a lab server with an injected cause (a CPU
# hog on the server's CPU: sched), then latwhy's three modes against it, each
# one's output between markers on the console for run.sh to judge:
#   TRACE   latwhy -j, the live trace
#   RECORD  latwhy record, then REPORT: latwhy report -j of that capture
#   SERVE   latwhy serve, and METRICS: one scrape of its /metrics
# and first NOBTF: latwhy with /sys/kernel/btf/vmlinux hidden
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
[ -d /sys/kernel/debug/tracing ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
exec </dev/console >/dev/console 2>&1
V=""
if grep -q latwhy.debug /proc/cmdline; then
	V=-v # libbpf diagnostics, in each mode's stderr
else
	dmesg -n 1 # keep printk off the output
fi
ip link set lo up

up() { cut -d' ' -f1 /proc/uptime; }
# section NAME FILE: FILE between NAME's markers
section() {
	echo "=== LATWHY $1 BEGIN ==="
	cat "$2" 2>/dev/null
	echo "=== LATWHY $1 END ==="
}
# ran NAME RC T0: a mode's exit code and how long it took
ran() { echo "=== LATWHY $1 EXIT $2 (uptime $3 -> $(up)) ==="; }

echo "=== LATWHY GUEST uname=$(uname -r) arch=$(uname -m) version=$(cat /proc/version) ==="
echo "=== LATWHY GUEST btf=$([ -e /sys/kernel/btf/vmlinux ] && echo yes || echo no) cpus=$(grep -c ^processor /proc/cpuinfo) preempt=$(uname -v | grep -o 'PREEMPT[_A-Z]*' | tr '\n' ' ') ==="

# -w 20000: TCG runs the server's CPU work some 10 times slower than the
# hardware the default is tuned for
lat_server -p 7077 -c 0 -w 20000 >/tmp/server.out 2>&1 &
SRV=$!
i=0
while ! grep -q 'lat_server pid=' /tmp/server.out 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
cat /tmp/server.out
# client and hog run through all three modes: stopped at the end (SIGTERM
# still prints the client's summary)
lat_client -p 7077 -c 1 -d 3600 -q >/tmp/client.out 2>&1 &
CLI=$!
lw_hog -C 0 -d 3600 &
HOG=$!
sleep 1

# 0. the same kernel without its BTF (hidden under a tmpfs): one line that
# says so and what to do, never libbpf's search for a vmlinux
t0=$(up)
if mount -t tmpfs tmpfs /sys/kernel/btf 2>/dev/null; then
	latwhy $V -p "$SRV" -d 2s >/tmp/nobtf.out 2>&1
	rc=$?
	umount /sys/kernel/btf
else
	echo "cannot hide /sys/kernel/btf" >/tmp/nobtf.out
	rc=255
fi
section NOBTF /tmp/nobtf.out
ran NOBTF $rc "$t0"

# 1. the live trace. --slow 1ms, not the running p99: the hog delays most
# requests alike (p50 0.5 ms, p99 1.7 ms on 6.1 under TCG), and the p99 of
# such a spread leaves few or no requests slow in 6 s
t0=$(up)
latwhy $V -p "$SRV" -d 6s -j --slow 1ms >/tmp/trace.json 2>/tmp/trace.err
rc=$?
section TRACE /tmp/trace.json
section "TRACE STDERR" /tmp/trace.err
ran TRACE $rc "$t0"

# 2. record, then report the capture
t0=$(up)
latwhy record $V -p "$SRV" -d 6s --slow 1ms -q -o /tmp/capture.lwy >/tmp/record.out 2>&1
rc=$?
section RECORD /tmp/record.out
ran RECORD $rc "$t0"
t0=$(up)
latwhy report /tmp/capture.lwy -j >/tmp/report.json 2>/tmp/report.err
rc=$?
section REPORT /tmp/report.json
section "REPORT STDERR" /tmp/report.err
ran REPORT $rc "$t0"

# 3. serve on a duty cycle, its first 3 s attached, with the always-attached
# tier beside it where the kernel has the socket tracepoints (6.3+), and one
# scrape once it has traced a while (it serves before it has loaded:
# "tracing" comes after)
t0=$(up)
latwhy serve $V -p "$SRV" --listen 127.0.0.1:9462 --sample 3s/60s --slow 1ms \
	>/tmp/serve.out 2>&1 &
SERVE=$!
i=0
while ! grep -q '^latwhy: tracing' /tmp/serve.out && kill -0 $SERVE 2>/dev/null &&
	[ $i -lt 1200 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 6
wget -q -O /tmp/metrics.txt http://127.0.0.1:9462/metrics
wrc=$?
kill -INT $SERVE 2>/dev/null
wait $SERVE
rc=$?
section SERVE /tmp/serve.out
section METRICS /tmp/metrics.txt
echo "=== LATWHY SCRAPE EXIT $wrc ==="
ran SERVE $rc "$t0"

kill -TERM $CLI $HOG 2>/dev/null
wait $CLI
section CLIENT /tmp/client.out
kill $SRV 2>/dev/null
echo "=== LATWHY DMESG BEGIN ==="
dmesg | tail -n 40
echo "=== LATWHY DMESG END ==="
echo "=== LATWHY DONE ==="
sync
poweroff -f
