#!/usr/bin/env bash
# Run latwhy's Debian package as a service under a real systemd: a QEMU
# guest with Debian bookworm's systemd as PID 1, on a root filesystem that
# mmdebstrap built from the archive (tools/systemd/rootfs.sh, cached), the
# .deb installed there with apt, the lab server as its target.
#
#   tools/systemd/guest.sh [--deb FILE] [--no-build] [--timeout SEC]
#
# Options:
#   --deb FILE     install this .deb (default: make deb's, built first)
#   --no-build     use build/deb's .deb and build/tools' lab tools as they are
#   --timeout SEC  bound on the boot (default 1200, env LATWHY_GUEST_TIMEOUT)
#   -h, --help     this help
#
# Environment: LATWHY_KERNEL_CACHE and LATWHY_QEMU_ACCEL as for
# tools/kernels/run.sh (the kernel is the one linux-image-amd64 depends on);
# LATWHY_SYSTEMD_CACHE for the root filesystem (tools/systemd/rootfs.sh).
#
# The checks (tools/systemd/guest-checks.sh, run in the guest once it is up)
# print one line each, "PASS name: detail" or "FAIL name: detail": install,
# libraries, version, not-started, metrics, process, capture, journal,
# security, restart, upgrade, no-target. The console goes to
# build/systemd-guest/console.log, the guest's journal to journal.txt beside
# it. Exits non-zero on a failed or missing check. About 3.5 minutes on
# 2 vCPUs under TCG: make deb 30 s, the image 20 s, boot and checks 150 s
# (the first run also builds the rootfs, 30 s, and fetches the kernel). The boot itself runs under the shared
# lock of the machine's heavy jobs (flock LATWHY_HEAVY_LOCK, default
# /tmp/latwhy-heavy.lock); the build and the image are made before it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck disable=SC2034 # lib.sh names the program by it
LIB_PROG=guest.sh
# shellcheck source=tools/kernels/lib.sh
. "$ROOT/tools/kernels/lib.sh" # log, die, install_host_tools, fetch_*, choose_accel
TIMEOUT=${LATWHY_GUEST_TIMEOUT:-1200}
DEB=""
BUILD=1
OUTD=$ROOT/build/systemd-guest
# what the guest's initramfs loads to mount its root (modules.dep adds the
# dependencies)
ROOT_MODULES=(virtio_pci virtio_blk crc32c_generic ext4)
CHECKS=(install libraries version not-started metrics process capture journal security restart upgrade no-target)

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
while [ $# -gt 0 ]; do
	case $1 in
	--deb) [ $# -ge 2 ] || die "--deb needs a file"
		DEB=$(realpath "$2"); shift 2 ;;
	--no-build) BUILD=0; shift ;;
	--timeout) [ $# -ge 2 ] || die "--timeout needs seconds"
		TIMEOUT=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap, mknod, the image's owners)"
START=$(date +%s)

# ---------------------------------------------------------------- host
install_host_tools
command -v mke2fs >/dev/null || apt_install e2fsprogs
command -v debugfs >/dev/null || apt_install e2fsprogs

# ---------------------------------------------------------------- the package
if [ -z "$DEB" ]; then
	if [ "$BUILD" -eq 1 ]; then
		make -s -C "$ROOT" deb >&2 || die "make deb failed"
	fi
	DEB=$(find "$ROOT/build/deb" -maxdepth 1 -name 'latwhy_*.deb' 2>/dev/null | sort -V | tail -n1)
fi
if [ -z "$DEB" ] || ! [ -s "$DEB" ]; then die "no .deb (make deb, or --deb FILE)"; fi
if [ "$BUILD" -eq 1 ]; then
	make -s -C "$ROOT" build/tools/lat_server build/tools/lat_client >&2 || die "make of the lab tools failed"
fi
for b in lat_server lat_client; do
	[ -x "$ROOT/build/tools/$b" ] || die "build/tools/$b is missing (make, or drop --no-build)"
done
log "package: ${DEB#"$ROOT"/} ($(dpkg-deb -f "$DEB" Version))"

# ---------------------------------------------------------------- kernel
# the rootfs's own suite (bookworm): its default amd64 kernel
pkg=$(resolve_meta bookworm amd64 linux-image-amd64)
KERNEL=$(fetch_kernel bookworm amd64 "$pkg")
KVER=${pkg#linux-image-}
MODDIR=$(fetch_modules bookworm amd64 "$pkg")

# ---------------------------------------------------------------- rootfs
TAR=$("$HERE/rootfs.sh")
WORK=$(mktemp -d /var/tmp/latwhy-guest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
R=$WORK/root
mkdir -p "$R"
tar -xf "$TAR" -C "$R"
install -m 0644 "$DEB" "$R/root/latwhy.deb"
install -m 0755 "$ROOT/build/tools/lat_server" "$ROOT/build/tools/lat_client" "$R/usr/local/bin/"
install -m 0755 "$HERE/guest-checks.sh" "$R/usr/local/sbin/latwhy-guest-checks"
cat >"$R/etc/systemd/system/latwhy-guest-checks.service" <<'EOF'
[Unit]
Description=latwhy's checks of its package under systemd (tools/systemd/guest.sh)
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/latwhy-guest-checks
StandardOutput=journal+console
StandardError=journal+console
EOF
mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
ln -sf ../latwhy-guest-checks.service "$R/etc/systemd/system/multi-user.target.wants/"
# quiet and offline: no getty on the console, no apt timers
for u in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer \
	e2scrub_all.timer fstrim.timer systemd-networkd-wait-online.service; do
	ln -sf /dev/null "$R/etc/systemd/system/$u"
done
echo '/dev/vda / ext4 rw,relatime 0 1' >"$R/etc/fstab"
IMG=$WORK/root.img
mke2fs -q -t ext4 -L latwhy-root -d "$R" "$IMG" 3G

# ---------------------------------------------------------------- initramfs
# mod_path NAME: NAME's file in modules.dep (- and _ are one)
mod_path() {
	awk -F: -v m="${1//-/_}" '{n = $1; sub(/.*\//, "", n); sub(/\.ko.*/, "", n)
		gsub(/-/, "_", n)} n == m {print $1; exit}' "$MODDIR/modules.dep"
}
LOAD=()
add_module() { # PATH after its dependencies, each once
	local p=$1 d
	case " ${LOAD[*]} " in *" $p "*) return 0 ;; esac
	# shellcheck disable=SC2013
	for d in $(awk -F: -v p="$p" '$1 == p {print $2; exit}' "$MODDIR/modules.dep"); do
		add_module "$d"
	done
	LOAD+=("$p")
}
I=$WORK/initramfs
mkdir -p "$I"/{bin,dev,proc,sys,newroot,mod}
install -m 0755 /bin/busybox "$I/bin/busybox"
mknod -m 0600 "$I/dev/console" c 5 1
for m in "${ROOT_MODULES[@]}"; do
	p=$(mod_path "$m")
	[ -n "$p" ] || die "$KVER has no module $m"
	add_module "$p"
done
ORDER=()
for p in "${LOAD[@]}"; do
	b=$(basename "${p%.ko*}").ko
	case $p in
	*.ko.xz) xz -dc "$MODDIR/$p" >"$I/mod/$b" ;;
	*.ko.zst) zstd -qdc "$MODDIR/$p" >"$I/mod/$b" ;;
	*) cp "$MODDIR/$p" "$I/mod/$b" ;;
	esac
	ORDER+=("$b")
done
cat >"$I/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in ${ORDER[*]}; do insmod /mod/\$m || echo "guest init: insmod \$m failed"; done
i=0
while [ ! -b /dev/vda ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
mount -t ext4 -o rw /dev/vda /newroot || { echo "guest init: cannot mount /dev/vda"; poweroff -f; }
umount /proc /sys
mount --move /dev /newroot/dev
echo "=== LATWHY GUEST switching to systemd ==="
exec switch_root /newroot /sbin/init
EOF
chmod 0755 "$I/init"
INITRD=$WORK/initramfs.cpio.gz
(cd "$I" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$INITRD"

# ---------------------------------------------------------------- boot
choose_accel
mkdir -p "$OUTD"
logf=$OUTD/console.log
# SYSTEMD_LOG_SECCOMP=1 (no dot: the kernel hands it to init's environment)
# makes PID 1 build filters that log what they deny (guest-checks' journal)
APPEND="console=ttyS0 panic=-1 noirqdebug audit=1 SYSTEMD_LOG_SECCOMP=1 systemd.show_status=0"
log "$KVER with systemd ($ACCEL, timeout ${TIMEOUT}s); console -> ${logf#"$ROOT"/}"
qrc=0
LOCK=${LATWHY_HEAVY_LOCK:-/tmp/latwhy-heavy.lock}
log "waiting for $LOCK"
boot=$(date +%s)
# shellcheck disable=SC2016 # the inner bash's $0 and $@
flock "$LOCK" bash -c 'date +%s >"$0"; exec "$@"' "$WORK/locked" timeout -k 10 "$TIMEOUT" qemu-system-x86_64 "${accel_args[@]}" \
	-m 2048 -smp 2 -nographic -no-reboot \
	-kernel "$KERNEL" -initrd "$INITRD" -append "$APPEND" \
	-drive file="$IMG",format=raw,if=virtio -nic none \
	</dev/null 2>&1 | sed -u 's/\r//g' >"$logf" || qrc=${PIPESTATUS[0]}
[ -s "$WORK/locked" ] && boot=$(cat "$WORK/locked")
log "qemu exited $qrc after $(($(date +%s) - boot)) s"

# ---------------------------------------------------------------- results
for f in results.txt journal.txt apt.log; do
	debugfs -R "dump /root/$f $OUTD/$f" "$IMG" >/dev/null 2>&1 || true
done
res=$OUTD/results.txt
[ -s "$res" ] || grep -a '^LATWHY-GUEST ' "$logf" >"$res" || true
sed -n 's/^LATWHY-GUEST //p' "$res"
fails=0
for c in "${CHECKS[@]}"; do
	grep -q "^LATWHY-GUEST PASS $c:" "$res" && continue
	grep -q "^LATWHY-GUEST FAIL $c:" "$res" || echo "FAIL $c: no result (see ${logf#"$ROOT"/})"
	fails=$((fails + 1))
done
grep -q '^LATWHY-GUEST FAIL' "$res" && [ "$fails" -eq 0 ] && fails=1
[ "$qrc" -ne 124 ] && [ "$qrc" -ne 137 ] || echo "FAIL boot: timed out after ${TIMEOUT}s"
echo "guest.sh: $((${#CHECKS[@]} - fails)) of ${#CHECKS[@]} checks passed in $(($(date +%s) - START)) s" \
	"(boot and checks $(($(date +%s) - boot)) s); journal: ${OUTD#"$ROOT"/}/journal.txt"
[ "$fails" -eq 0 ]
