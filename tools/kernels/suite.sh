#!/usr/bin/env bash
# Run the integration suite (tests/integration/run.sh) inside a qemu guest on
# another kernel: the guest sees this machine's root filesystem read-only
# under a tmpfs overlay, so it has every tool the host has, and it runs a
# clean copy of the repo at HEAD that was built here beforehand.
#
#   tools/kernels/suite.sh [options] [TEST ...]
#
# Default tests: cli_errors target_exits sched idle thp.
#
# Options:
#   --all            every test of tests/integration/run.sh
#   --kernel PATH    boot this bzImage/vmlinuz (default: the kernel Debian's
#                    linux-image-amd64 depends on). Its modules come from
#                    PATH's folder (modules/lib/modules/VER), /lib/modules/VER
#                    or Debian's linux-image-VER
#   --suite NAME     the Debian suite of those (default bookworm; bullseye
#                    and trixie too)
#   --cpus N         vCPUs (default 2)
#   --mem M          guest memory, as qemu's -m (default 4G)
#   --timeout SEC    bound on the whole boot (default 2400, env
#                    LATWHY_SUITE_TIMEOUT)
#   --cgroup2        a pure cgroup v2 tree with the cpu controller on: the
#                    guest's init enables +cpu in the root's
#                    cgroup.subtree_control and fails if it cannot (default:
#                    cgroup2 mounted, no controller enabled)
#   --append ARGS    more kernel command line (e.g. psi=1: Debian's kernels
#                    boot with PSI off, which memory_high needs)
#   --keep           keep the clean copy and the tests' work folders (KEEP=1;
#                    copied to tools/kernels/out/suite-<kernel>.d)
#   --run CMD        run the bash command CMD in the copy instead of the
#                    suite (to look into a failure: the guest as the suite
#                    sees it; /out is the host's suite-<kernel>.d)
#   -h, --help       this help
#
# Environment: LATWHY_KERNEL_CACHE and LATWHY_QEMU_ACCEL, as for run.sh.
#
# The serial console goes to tools/kernels/out/suite-<kernel>.log, each line
# the suite printed stamped with the guest's uptime. Printed here: the guest's
# cpuidle driver, its cgroup mounts and controllers, each test's PASS/FAIL/SKIP line with its duration, and the
# suite's "integration: N passed, N failed, N skipped" line. Exits non-zero
# on a failure, a timeout, or a guest that never ran the suite.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck disable=SC2034 # lib.sh names the program by it
LIB_PROG=suite.sh
# shellcheck source=tools/kernels/lib.sh
. "$HERE/lib.sh" # CACHE, log, die, install_host_tools, fetch_*, choose_accel
OUT=$HERE/out
TIMEOUT=${LATWHY_SUITE_TIMEOUT:-2400}
CPUS=2
SUITE=bookworm
MEM=4G
KERNEL=""
KEEP=0
RUN=""
CGROUP2=0
TESTS=()
DEFAULT_TESTS=(cli_errors target_exits sched idle thp)
# what the guest's init loads to mount the host's root, deepest dependency
# first (modules.dep adds the rest)
MOUNT_MODULES=(virtio_pci 9pnet_virtio 9p overlay)
# noirqdebug: see run.sh (an RT kernel's threaded 8250 handler under TCG)
APPEND="console=ttyS0 quiet panic=-1 noirqdebug"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

while [ $# -gt 0 ]; do
	case $1 in
	--all) TESTS=(ALL); shift ;;
	--kernel) [ $# -ge 2 ] || die "--kernel needs a path"
		KERNEL=$(realpath -m "$2"); shift 2 ;;
	--suite) [ $# -ge 2 ] || die "--suite needs a Debian suite"
		SUITE=$2; shift 2 ;;
	--cpus) [ $# -ge 2 ] || die "--cpus needs a number"
		CPUS=$2; shift 2 ;;
	--mem) [ $# -ge 2 ] || die "--mem needs a size"
		MEM=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || die "--timeout needs seconds"
		TIMEOUT=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--cgroup2) CGROUP2=1; shift ;;
	--append) [ $# -ge 2 ] || die "--append needs kernel parameters"
		APPEND="$APPEND $2"; shift 2 ;;
	--run) [ $# -ge 2 ] || die "--run needs a command"
		RUN=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*) TESTS+=("$1"); shift ;;
	esac
done
[ ${#TESTS[@]} -gt 0 ] || TESTS=("${DEFAULT_TESTS[@]}")
[ "${TESTS[0]}" != ALL ] || TESTS=() # run.sh's own default: all of them

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get, mknod)"
install_host_tools
command -v git >/dev/null || apt_install git

# ---------------------------------------------------------------- the repo
# A clean copy of HEAD, on the root filesystem the guest sees (not a tmpfs).
SRC=$(mktemp -d /var/tmp/latwhy-suite.XXXXXX)
STAGE=$(mktemp -d /tmp/latwhy-initramfs.XXXXXX)
cleanup() {
	rm -rf "$STAGE"
	[ "$KEEP" -eq 1 ] || rm -rf "$SRC"
}
trap cleanup EXIT
HEAD=$(git -C "$ROOT" rev-parse HEAD)
git -C "$ROOT" archive "$HEAD" | tar -x -C "$SRC"
log "building $(git -C "$ROOT" log -1 --format='%h %s' "$HEAD") in $SRC"
make -s -C "$SRC" -j2 all build/tests/uprobe_target >&2 || die "make failed in $SRC"

# ---------------------------------------------------------------- kernel
# kernel_version PATH: the release string a bzImage carries (boot protocol:
# the 16-bit offset at 0x20e, counted from 0x200, points at it)
kernel_version() {
	local off
	off=$(od -An -j 526 -N 2 -t u2 "$1" | tr -d ' ')
	[ -n "$off" ] || return 1
	dd if="$1" bs=1 skip=$((off + 512)) count=256 status=none | tr '\0' '\n' |
		head -n1 | awk '{print $1}'
}

if [ -z "$KERNEL" ]; then
	pkg=$(resolve_meta "$SUITE" amd64 linux-image-amd64)
	KERNEL=$(fetch_kernel "$SUITE" amd64 "$pkg")
	KVER=${pkg#linux-image-}
	MODDIR=$(fetch_modules "$SUITE" amd64 "$pkg")
else
	[ -f "$KERNEL" ] || die "$KERNEL: no such kernel image"
	KVER=$(kernel_version "$KERNEL") || true
	[ -n "$KVER" ] || die "$KERNEL: cannot read its version (not a bzImage?)"
	MODDIR=""
	for d in "$(dirname "$KERNEL")/modules/lib/modules/$KVER" "/lib/modules/$KVER"; do
		if [ -s "$d/modules.dep" ]; then MODDIR=$d; break; fi
	done
	if [ -z "$MODDIR" ]; then apt_for "$SUITE" amd64; fi
	if [ -z "$MODDIR" ] && apt-cache "${APT_OPTS[@]}" show "linux-image-$KVER" >/dev/null 2>&1; then
		MODDIR=$(fetch_modules "$SUITE" amd64 "linux-image-$KVER")
	fi
	[ -n "$MODDIR" ] || log "no modules for $KVER: 9p and overlay must be built in"
fi
NAME=$(kernel_name "$KERNEL")

# ---------------------------------------------------------------- initramfs
# mod_path NAME: NAME's file in modules.dep (- and _ are one)
mod_path() {
	awk -F: -v m="${1//-/_}" '{n = $1; sub(/.*\//, "", n); sub(/\.ko.*/, "", n)
		gsub(/-/, "_", n)} n == m {print $1; exit}' "$MODDIR/modules.dep"
}

# add_module PATH: PATH after its dependencies, each once, in LOAD
LOAD=()
add_module() {
	local p=$1 d
	case " ${LOAD[*]} " in *" $p "*) return 0 ;; esac
	# modules.dep: "path: dep dep ...", all on one line
	# shellcheck disable=SC2013
	for d in $(awk -F: -v p="$p" '$1 == p {print $2; exit}' "$MODDIR/modules.dep"); do
		add_module "$d"
	done
	LOAD+=("$p")
}

# stage_module PATH: into the initramfs, uncompressed (busybox's insmod
# takes a plain .ko)
stage_module() {
	local p=$1 dest
	dest=$STAGE/lib/modules/$KVER/$(basename "${p%.ko*}").ko
	case $p in
	*.ko.xz) xz -dc "$MODDIR/$p" >"$dest" ;;
	*.ko.zst) zstd -qdc "$MODDIR/$p" >"$dest" ;;
	*.ko.gz) gzip -dc "$MODDIR/$p" >"$dest" ;;
	*) cp "$MODDIR/$p" "$dest" ;;
	esac
	basename "$dest"
}

mkdir -p "$STAGE"/{bin,sbin,dev,proc,sys,tmp,etc,root,mnt/host,mnt/rw,mnt/out,newroot} \
	"$STAGE/lib/modules/$KVER"
install -m 0755 /bin/busybox "$STAGE/bin/busybox"
mknod -m 0600 "$STAGE/dev/console" c 5 1
mknod -m 0666 "$STAGE/dev/null" c 1 3
INSMOD=()
if [ -n "$MODDIR" ]; then
	for m in "${MOUNT_MODULES[@]}"; do
		p=$(mod_path "$m")
		if [ -n "$p" ]; then
			add_module "$p"
		elif ! grep -q "/${m//_/[-_]}\.ko" "$MODDIR/modules.builtin" 2>/dev/null; then
			die "$KVER has no module $m in $MODDIR"
		fi
	done
	for p in "${LOAD[@]}"; do INSMOD+=("$(stage_module "$p")"); done
fi

# what the guest's init needs to know, as shell assignments
{
	printf 'KVER=%q\n' "$KVER"
	printf 'SRC=%q\n' "$SRC"
	printf 'MODDIR=%q\n' "$MODDIR"
	printf 'INSMOD=%q\n' "${INSMOD[*]}"
	printf 'TESTS=%q\n' "${TESTS[*]}"
	printf 'HOSTPATH=%q\n' "$PATH"
	printf 'KEEP=%q\n' "$KEEP"
	printf 'RUN=%q\n' "$RUN"
	printf 'CGROUP2=%q\n' "$CGROUP2"
} >"$STAGE/etc/suite.conf"
install -m 0755 "$HERE/suite-init.sh" "$STAGE/init"

mkdir -p "$OUT"
INITRD=$OUT/suite-initramfs.cpio.gz
(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$INITRD"

# ---------------------------------------------------------------- boot
choose_accel
logf=$OUT/suite-$NAME.log
outd=$OUT/suite-$NAME.d
rm -rf "$outd"
mkdir -p "$outd"
log "booting $NAME ($ACCEL, $CPUS vCPUs, $MEM, timeout ${TIMEOUT}s): ${TESTS[*]:-all tests}"
log "console -> ${logf#"$ROOT"/}"
start=$(date +%s)
qrc=0
# sed -u: the log grows line by line, to follow a long run with tail -f.
# multidevs=remap: the shared tree spans several host filesystems, whose
# inode numbers would collide in the guest
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 "${accel_args[@]}" \
	-m "$MEM" -smp "$CPUS" -nographic -no-reboot \
	-kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$outd",mount_tag=hostout,security_model=none \
	</dev/null 2>&1 | sed -u 's/\r//g' >"$logf" || qrc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
log "$NAME: qemu exited $qrc after ${secs}s"
[ "$KEEP" -eq 1 ] && log "kept: $SRC, ${outd#"$ROOT"/}"

# ---------------------------------------------------------------- results
# stamped NAME: the suite's lines "[uptime] LINE" -> "uptime LINE"
stamped() { sed -n 's/^.*\[ *\([0-9][0-9.]*\)\] \(.*\)$/\1 \2/p' "$logf"; }

sed -n 's/.*=== LATWHY SUITE GUEST \(.*\) ===.*/guest: \1/p' "$logf"
sed -n 's/.*=== LATWHY SUITE CGROUP \(.*\) ===.*/cgroup: \1/p' "$logf"
if [ -n "$RUN" ]; then # all it printed
	stamped | sed 's/^[0-9.]* //'
	rc=$(sed -n 's/.*=== LATWHY SUITE EXIT \([0-9]*\) .*/\1/p' "$logf")
	exit "${rc:-1}"
fi
# each result with the time since the previous one (or the suite's start)
t0=$(sed -n 's/.*=== LATWHY SUITE START \([0-9.]*\) ===.*/\1/p' "$logf" | head -n1)
stamped | awk -v t="${t0:-0}" '$2 ~ /^(PASS|FAIL|SKIP)$/ {
	d = $1 - t; t = $1; $1 = ""; sub(/^ /, ""); printf "%s  (%.0f s)\n", $0, d; next }
	$2 == "integration:" {$1 = ""; sub(/^ /, ""); print; next}'
total=$(sed -n 's/.*=== LATWHY SUITE EXIT \([0-9]*\) after \([0-9]*\) s ===.*/\1 \2/p' "$logf")
reason=""
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	reason="timed out after ${TIMEOUT}s"
elif ! grep -q '=== LATWHY SUITE GUEST' "$logf"; then
	reason="the guest never reached its init (qemu exit $qrc)"
elif ! grep -q '=== LATWHY SUITE START' "$logf"; then
	reason="the guest could not set up its root: $(grep -m1 'suite-init:' "$logf" || echo '?')"
elif [ -z "$total" ]; then
	reason="no exit marker (the guest died mid-suite?)"
elif ! grep -aq '^\[ *[0-9.]*\] integration: ' "$logf"; then
	reason="the suite printed no summary line"
fi
if [ -n "$reason" ]; then
	echo "FAIL suite on $NAME: $reason; see ${logf#"$ROOT"/}"
	exit 1
fi
read -r rc tsecs <<<"$total"
echo "suite on $NAME: exit $rc after ${tsecs}s in the guest (${secs}s with boot)"
[ "$rc" -eq 0 ]
