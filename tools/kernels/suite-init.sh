#!/bin/busybox sh
# shellcheck shell=dash # busybox ash: checked as dash
# The guest's /init for suite.sh: mount the host's root (9p, read-only) under
# a tmpfs overlay, give it the kernel's filesystems, chroot into it and run
# the integration suite there. /etc/suite.conf says what and where.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
dmesg -n 1 # keep printk off the suite's lines
# shellcheck disable=SC1091 # written by suite.sh
. /etc/suite.conf

say() { echo "=== LATWHY SUITE $* ==="; }
die() {
	echo "suite-init: $*"
	dmesg | tail -n 30
	poweroff -f
}
up() { cut -d' ' -f1 /proc/uptime; }

D=/sys/devices/system/cpu/cpuidle
say "GUEST uname=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)" \
	"cpuidle_driver=$(cat $D/current_driver 2>/dev/null || echo absent)" \
	"governor=$(cat $D/current_governor_ro $D/current_governor 2>/dev/null | head -n1)" \
	"cpu0_states=$(find /sys/devices/system/cpu/cpu0/cpuidle -name 'state*' 2>/dev/null | wc -l)" \
	"btf=$([ -e /sys/kernel/btf/vmlinux ] && echo yes || echo no)"

for m in $INSMOD; do
	insmod "/lib/modules/$KVER/$m" || die "insmod $m failed"
done

R=/newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /mnt/host ||
	die "cannot mount the host's root (9p)"
mount -t tmpfs -o mode=0755 tmpfs /mnt/rw
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/host,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work overlay $R ||
	die "cannot mount the overlay"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 hostout /mnt/out ||
	echo "suite-init: no output share; work folders stay in the guest"

mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
# what udev would add: bash's process substitution needs /dev/fd
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mount -t devpts devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount -t tmpfs -o mode=0755 tmpfs $R/run
mount -t tracefs tracefs $R/sys/kernel/tracing
mount -t debugfs debugfs $R/sys/kernel/debug
mount -t bpf bpf $R/sys/fs/bpf
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup
# nothing of cgroup v1 is mounted, so every controller is v2's; --cgroup2
# (CGROUP2=1) also turns cpu on for the root's children, as a systemd host
# with CPU accounting has it: cpu.max in each child
CG=$R/sys/fs/cgroup
if [ "$CGROUP2" = 1 ]; then
	grep -qw cpu $CG/cgroup.controllers ||
		die "--cgroup2: no cpu controller in cgroup.controllers ($(cat $CG/cgroup.controllers))"
	echo +cpu >$CG/cgroup.subtree_control ||
		die "--cgroup2: cannot enable +cpu in cgroup.subtree_control"
fi
say "CGROUP mounts=$(awk -v r=$R '$3 ~ /^cgroup/ {sub("^" r, "", $2); printf "%s%s:%s", s, $3, $2; s = ","}' /proc/mounts)" \
	"controllers=$(tr ' ' , <$CG/cgroup.controllers)" \
	"subtree_control=$(tr ' ' , <$CG/cgroup.subtree_control)"
# the kernel's own modules, for the suite (modprobe in the chroot) and for
# the kernel's requests (busybox modprobe here, where the kernel runs it)
if [ -n "$MODDIR" ] && [ -d "/mnt/host$MODDIR" ]; then
	mkdir -p "$R/lib/modules/$KVER"
	mount --bind "/mnt/host$MODDIR" "$R/lib/modules/$KVER"
	mount --bind "/mnt/host$MODDIR" "/lib/modules/$KVER"
	ln -sf /bin/busybox /sbin/modprobe # the kernel's path, not /bin's
fi
ip link set lo up

[ -x "$R$SRC/tests/integration/run.sh" ] || die "$SRC is not in the shared root"
t0=$(up)
say "START $t0"
if [ -n "$RUN" ]; then
	mkdir -p $R/out
	grep -q ' /mnt/out ' /proc/mounts && mount --bind /mnt/out $R/out
	set -- -c "cd \"\$1\" && { $RUN; } 2>&1; echo \$? >/run/suite.rc" suite "$SRC"
else
	# shellcheck disable=SC2016 # $@ and $? are the chroot's bash's
	set -- -c 'cd "$1" && shift && tests/integration/run.sh "$@" 2>&1; echo $? >/run/suite.rc' \
		suite "$SRC"
fi
# stamp each line with the guest's uptime: the host times each test by it
# shellcheck disable=SC2086 # TESTS is a list
chroot $R /usr/bin/env -i PATH="$HOSTPATH" HOME=/root LANG=C.UTF-8 TERM=dumb KEEP="$KEEP" \
	/bin/bash "$@" $TESTS |
	while IFS= read -r l; do echo "[$(up)] $l"; done
t1=$(up)
say "EXIT $(cat $R/run/suite.rc 2>/dev/null || echo 255) after $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%d", b - a}') s"

if [ "$KEEP" = 1 ] && grep -q ' /mnt/out ' /proc/mounts; then
	cp -a $R/tmp/latwhy-it.* /mnt/out/ 2>/dev/null
fi
echo "=== LATWHY DMESG BEGIN ==="
dmesg | tail -n 60
echo "=== LATWHY DMESG END ==="
sync
poweroff -f
