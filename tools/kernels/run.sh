#!/usr/bin/env bash
# Boot latwhy on other kernels under QEMU and check that its BPF programs
# load, attach and produce a report.
#
#   tools/kernels/run.sh                     Debian 12 6.1 generic + 6.1 PREEMPT_RT
#   tools/kernels/run.sh --kernel VMLINUZ    just this kernel (repeatable)
#
# Options:
#   --kernel PATH    boot this bzImage/vmlinuz instead of the Debian kernels
#   --timeout SEC    per-boot timeout (default 240, env LATWHY_BOOT_TIMEOUT)
#   --no-build       do not run make first
#   --debug          kernel messages on, latwhy -v live on the console
#   --append ARGS    add ARGS to the kernel command line
#   -h, --help       this help
#
# Environment:
#   LATWHY_KERNEL_CACHE  where .debs and extracted kernels go
#                        (default /var/cache/latwhy-kernels, never the repo)
#   LATWHY_KERNEL_PKGS   Debian packages to boot (default: the kernels that
#                        linux-image-amd64 and linux-image-rt-amd64 depend on)
#   LATWHY_QEMU_ACCEL    kvm or tcg (default: kvm if /dev/kvm is usable)
#
# Each boot's serial console goes to tools/kernels/out/<kernel>.log; one
# line per kernel is printed: "PASS <kernel>: N requests, summary ok" or
# "FAIL <kernel>: <reason>". Exits non-zero if any kernel failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck disable=SC2034 # lib.sh names the program by it
LIB_PROG=run.sh
# shellcheck source=tools/kernels/lib.sh
. "$HERE/lib.sh" # CACHE, log, die, install_host_tools, fetch_kernel, choose_accel
OUT=$HERE/out
TIMEOUT=${LATWHY_BOOT_TIMEOUT:-240}
BUILD=1
# noirqdebug: on PREEMPT_RT the 8250's handler is a thread; flooding ttyS0
# under TCG makes it return IRQ_NONE often enough that the kernel reports
# "irq 4: nobody cared", disables IRQ 4 and the console stalls for good
# (reproduced with a plain `cat` of 5000 lines, no latwhy involved).
APPEND="console=ttyS0 quiet panic=-1 noirqdebug"
EXTRA_APPEND=""
KERNELS=()

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || { echo "run.sh: --kernel needs a path" >&2; exit 2; }
		KERNELS+=("$(realpath -m "$2")"); shift 2 ;;
	--kernel=*) KERNELS+=("$(realpath -m "${1#--kernel=}")"); shift ;;
	--timeout) [ $# -ge 2 ] || { echo "run.sh: --timeout needs seconds" >&2; exit 2; }
		TIMEOUT=$2; shift 2 ;;
	--no-build) BUILD=0; shift ;;
	--debug) APPEND="console=ttyS0 panic=-1 noirqdebug latwhy.debug"; shift ;;
	--append) [ $# -ge 2 ] || { echo "run.sh: --append needs kernel arguments" >&2; exit 2; }
		EXTRA_APPEND+=" $2"; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get, mknod)"

# ---------------------------------------------------------------- packages
install_host_tools

# ---------------------------------------------------------------- build
if [ "$BUILD" -eq 1 ]; then
	targets=(latwhy build/tools/lat_server build/tools/lat_client)
	if ! make -s -C "$ROOT" "${targets[@]}" >&2; then
		[ -s /tmp/mine ] || die "make failed"
		log "plain make failed; retrying with USER_SRCS from /tmp/mine"
		make -s -C "$ROOT" "${targets[@]}" USER_SRCS="$(cat /tmp/mine)" >&2 ||
			die "make failed"
	fi
fi
for b in "$ROOT/latwhy" "$ROOT/build/tools/lat_server" "$ROOT/build/tools/lat_client"; do
	[ -x "$b" ] || die "$b is missing (build it, or drop --no-build)"
done

# ---------------------------------------------------------------- kernels
mkdir -p "$CACHE/debs" "$OUT"

if [ ${#KERNELS[@]} -eq 0 ]; then
	if [ -n "${LATWHY_KERNEL_PKGS:-}" ]; then
		read -r -a pkgs <<<"$LATWHY_KERNEL_PKGS"
	else
		pkgs=("$(resolve_meta linux-image-amd64)" "$(resolve_meta linux-image-rt-amd64)")
	fi
	for p in "${pkgs[@]}"; do
		KERNELS+=("$(fetch_kernel "$p")")
	done
fi

# ---------------------------------------------------------------- initramfs
STAGE=$(mktemp -d /tmp/latwhy-initramfs.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT

copy_with_libs() {
	local bin=$1 dest=$2 lib
	install -D -m 0755 "$bin" "$STAGE$dest"
	# "libx.so => /path (0x..)" and "/lib64/ld-linux-x86-64.so.2 (0x..)"
	while read -r lib; do
		if [ -z "$lib" ] || ! [ -e "$lib" ]; then continue; fi
		[ -e "$STAGE$lib" ] || install -D -m 0755 "$(realpath "$lib")" "$STAGE$lib"
	done < <(ldd "$bin" | awk '/=> \//{print $3; next} /^[[:space:]]*\//{print $1}')
}

mkdir -p "$STAGE"/{bin,sbin,dev,proc,sys,tmp,etc,root,usr/bin}
install -m 0755 /bin/busybox "$STAGE/bin/busybox"
copy_with_libs "$ROOT/latwhy" /usr/bin/latwhy
copy_with_libs "$ROOT/build/tools/lat_server" /usr/bin/lat_server
copy_with_libs "$ROOT/build/tools/lat_client" /usr/bin/lat_client
mknod -m 0600 "$STAGE/dev/console" c 5 1
mknod -m 0666 "$STAGE/dev/null" c 1 3
echo 'root:x:0:0:root:/root:/bin/sh' >"$STAGE/etc/passwd"

cat >"$STAGE/init" <<'INIT'
#!/bin/busybox sh
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
ERR=/tmp/latwhy.json.err
if grep -q latwhy.debug /proc/cmdline; then
	V=-v                     # libbpf diagnostics, live on the console
	ERR=/dev/console
	: >/tmp/latwhy.json.err
else
	dmesg -n 1               # keep printk off the JSON lines
fi
ip link set lo up

echo "=== LATWHY GUEST uname=$(uname -r) version=$(cat /proc/version) ==="
echo "=== LATWHY GUEST btf=$( [ -e /sys/kernel/btf/vmlinux ] && echo yes || echo no) cpus=$(grep -c ^processor /proc/cpuinfo) preempt=$(uname -v | grep -o 'PREEMPT[_A-Z]*' | tr '\n' ' ') ==="

lat_server -p 7077 -c 0 >/tmp/server.out 2>&1 &
SRV=$!
i=0
while ! grep -q 'lat_server pid=' /tmp/server.out 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
cat /tmp/server.out
# -d 8 is too short under TCG, where loading latwhy takes seconds: run the
# client for longer and stop it (SIGTERM still prints its summary) after both
# latwhy runs.
lat_client -p 7077 -c 1 -d 60 -q >/tmp/client.out 2>&1 &
CLI=$!

t0=$(cut -d' ' -f1 /proc/uptime)
latwhy $V -p "$SRV" -d 4s -j --slow 1us >/tmp/latwhy.json 2>"$ERR"
rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
# a given interrupt cost: the IPI programs load and attach too (measured at
# start, it comes out "not measured" under TCG, whose vCPUs take turns)
latwhy -p "$SRV" -d 3s --irq-cost 5us >/tmp/latwhy.txt 2>&1
rc2=$?
t2=$(cut -d' ' -f1 /proc/uptime)

echo "=== LATWHY JSON BEGIN ==="
cat /tmp/latwhy.json
echo "=== LATWHY JSON END ==="
echo "=== LATWHY JSON STDERR BEGIN ==="
cat /tmp/latwhy.json.err
echo "=== LATWHY JSON STDERR END ==="
echo "=== LATWHY JSON EXIT $rc (uptime $t0 -> $t1) ==="
echo "=== LATWHY TEXT BEGIN ==="
cat /tmp/latwhy.txt
echo "=== LATWHY TEXT END ==="
echo "=== LATWHY TEXT EXIT $rc2 (uptime $t1 -> $t2) ==="

if [ "$rc" -ne 0 ] || [ "$rc2" -ne 0 ]; then
	echo "=== LATWHY VERBOSE BEGIN ==="
	latwhy -v -p "$SRV" -d 1s -j --slow 1us >/dev/null 2>/tmp/latwhy.v
	echo "exit $?"
	cat /tmp/latwhy.v
	echo "=== LATWHY VERBOSE END ==="
fi

kill -TERM "$CLI" 2>/dev/null
wait "$CLI"
echo "=== LATWHY CLIENT BEGIN ==="
cat /tmp/client.out
echo "=== LATWHY CLIENT END ==="
kill "$SRV" 2>/dev/null
echo "=== LATWHY DMESG BEGIN ==="
dmesg | tail -n 40
echo "=== LATWHY DMESG END ==="
echo "=== LATWHY DONE ==="
sync
poweroff -f
INIT
chmod 0755 "$STAGE/init"

INITRD=$OUT/initramfs.cpio.gz
( cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet ) | gzip -1 >"$INITRD"

# ---------------------------------------------------------------- boot
choose_accel

# section NAME LOG: the lines between "=== LATWHY NAME BEGIN ===" and END
# (markers may follow escape sequences the firmware left on the line)
section() {
	awk -v b="=== LATWHY $1 BEGIN ===" -v e="=== LATWHY $1 END ===" \
		'index($0, e) {f = 0} f {print} index($0, b) {f = 1}' "$2"
}

fails=0
for k in "${KERNELS[@]}"; do
	if ! [ -f "$k" ]; then
		echo "FAIL $k: no such kernel image"; fails=$((fails + 1)); continue
	fi
	name=$(kernel_name "$k")
	logf=$OUT/$name.log
	log "booting $name ($ACCEL, timeout ${TIMEOUT}s) -> ${logf#"$ROOT"/}"
	start=$(date +%s.%N)
	qrc=0
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 "${accel_args[@]}" \
		-m 2048 -smp 2 -nographic -no-reboot \
		-kernel "$k" -initrd "$INITRD" \
		-append "$APPEND$EXTRA_APPEND" \
		</dev/null 2>&1 | tr -d '\r' >"$logf" || qrc=${PIPESTATUS[0]}
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}')
	log "$name: qemu exited $qrc after ${secs}s ($ACCEL); log ${logf#"$ROOT"/}"

	guest=$(sed -n 's/.*=== LATWHY GUEST uname=\([^ ]*\) .*/\1/p' "$logf" | head -n1)
	label=${guest:-$name}
	json=$(section JSON "$logf")
	reqs=$(grep -c '"type":"request"' <<<"$json" || true)
	sums=$(grep -c '"type":"summary"' <<<"$json" || true)
	rc=$(sed -n 's/.*=== LATWHY JSON EXIT \([0-9]*\) .*/\1/p' "$logf" | head -n1)
	rc2=$(sed -n 's/.*=== LATWHY TEXT EXIT \([0-9]*\) .*/\1/p' "$logf" | head -n1)
	reason=""
	if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
		reason="timed out after ${TIMEOUT}s"
	elif [ -z "$guest" ]; then
		reason="guest never reached /init (qemu exit $qrc)"
	elif [ -z "$rc" ]; then
		reason="no JSON exit marker (guest died mid-run?)"
	fi
	if [ -z "$reason" ] && [ "$rc" != 0 ]; then
		err=$(section VERBOSE "$logf" | grep -iE 'error|fail|invalid|denied|not supported' | grep -v '^exit' | tail -n1)
		[ -n "$err" ] || err=$(section "JSON STDERR" "$logf" | tail -n1)
		reason="latwhy -j exited $rc: ${err:-no message}"
	elif [ -z "$reason" ] && [ "$reqs" -lt 1 ]; then
		reason="no \"type\":\"request\" line in the JSON output"
	elif [ -z "$reason" ] && [ "$sums" -ne 1 ]; then
		reason="$sums \"type\":\"summary\" lines (want exactly 1)"
	elif [ -z "$reason" ] && [ "$rc2" != 0 ]; then
		reason="latwhy (text) exited ${rc2:-?}"
	elif [ -z "$reason" ] && ! section TEXT "$logf" | grep -q '^== latwhy: '; then
		reason="the text run printed no report"
	fi
	if [ -z "$reason" ]; then
		echo "PASS $label: $reqs requests, summary ok"
	else
		echo "FAIL $label: $reason"
		fails=$((fails + 1))
	fi
done

[ "$fails" -eq 0 ]
