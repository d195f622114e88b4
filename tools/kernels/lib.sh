# shellcheck shell=bash
# Shared by run.sh and suite.sh: the host packages qemu needs, Debian's
# kernels fetched into a cache outside the repo, and the accelerator.
#
# The caller sets LIB_PROG (its name in messages) before sourcing, and may
# set LATWHY_KERNEL_CACHE and LATWHY_QEMU_ACCEL (see run.sh --help).

CACHE=${LATWHY_KERNEL_CACHE:-/var/cache/latwhy-kernels}

log() { printf '%s: %s\n' "$LIB_PROG" "$*" >&2; }
die() {
	log "$*"
	exit 1
}

# ---------------------------------------------------------------- packages
APT_UPDATED=0
apt_update_once() {
	[ "$APT_UPDATED" -eq 0 ] || return 0
	APT_UPDATED=1
	log "apt-get update"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
}

apt_install() {
	[ $# -gt 0 ] || return 0
	log "installing $*"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; then
		apt_update_once
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
	fi
}

# qemu, a static busybox for the initramfs, and what builds the initramfs
install_host_tools() {
	local need=()
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	# a static busybox: ldd fails on it ("not a dynamic executable")
	if ! [ -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then need+=(busybox-static); fi
	command -v cpio >/dev/null || need+=(cpio)
	command -v gzip >/dev/null || need+=(gzip)
	command -v timeout >/dev/null || need+=(coreutils)
	command -v make >/dev/null || need+=(make)
	apt_install "${need[@]}"
}

# ---------------------------------------------------------------- kernels
# kernel_deb PKG: the cached .deb of Debian package PKG, downloaded once
kernel_deb() {
	local pkg=$1 deb
	mkdir -p "$CACHE/debs"
	deb=$(find "$CACHE/debs" -maxdepth 1 -name "${pkg}_*_amd64.deb" | sort -V | tail -n1)
	if [ -z "$deb" ]; then
		log "downloading $pkg"
		(cd "$CACHE/debs" && apt-get download "$pkg" >&2) ||
			{ apt_update_once && (cd "$CACHE/debs" && apt-get download "$pkg" >&2); } ||
			die "apt-get download $pkg failed"
		deb=$(find "$CACHE/debs" -maxdepth 1 -name "${pkg}_*_amd64.deb" | sort -V | tail -n1)
		[ -n "$deb" ] || die "apt-get download $pkg left no .deb"
	fi
	echo "$deb"
}

# Debian kernel package -> $CACHE/<uname -r>/vmlinuz (echoes that path).
fetch_kernel() {
	local pkg=$1 kver dir deb tmp
	kver=${pkg#linux-image-}
	dir=$CACHE/$kver
	if [ -s "$dir/vmlinuz" ]; then
		echo "$dir/vmlinuz"
		return 0
	fi
	deb=$(kernel_deb "$pkg")
	tmp=$(mktemp -d "$CACHE/x.XXXXXX")
	dpkg-deb -x "$deb" "$tmp"
	mkdir -p "$dir"
	# keep only what a boot and a diagnosis need; modules are fetch_modules'
	cp "$tmp/boot/vmlinuz-$kver" "$dir/vmlinuz"
	cp "$tmp/boot/config-$kver" "$dir/config" 2>/dev/null || true
	cp "$tmp/boot/System.map-$kver" "$dir/System.map" 2>/dev/null || true
	rm -rf "$tmp"
	echo "$dir/vmlinuz"
}

# Debian kernel package -> its modules with a modules.dep, under
# $CACHE/<uname -r>/modules/lib/modules/<uname -r> (echoes that path).
# The .deb has no modules.dep (its postinst runs depmod): busybox's makes it.
fetch_modules() {
	local pkg=$1 kver dir deb tmp
	kver=${pkg#linux-image-}
	dir=$CACHE/$kver/modules
	if [ -s "$dir/lib/modules/$kver/modules.dep" ]; then
		echo "$dir/lib/modules/$kver"
		return 0
	fi
	deb=$(kernel_deb "$pkg")
	log "extracting the modules of $kver"
	tmp=$(mktemp -d "$CACHE/x.XXXXXX")
	dpkg-deb -x "$deb" "$tmp"
	[ -d "$tmp/lib/modules/$kver" ] || die "$deb has no lib/modules/$kver"
	rm -rf "$dir"
	mkdir -p "$dir/lib/modules"
	mv "$tmp/lib/modules/$kver" "$dir/lib/modules/$kver"
	rm -rf "$tmp"
	busybox depmod -b "$dir" "$kver" || die "depmod of $kver failed"
	echo "$dir/lib/modules/$kver"
}

# metapackage -> the versioned image it depends on
resolve_meta() {
	local meta=$1 dep
	dep=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
	if [ -z "$dep" ]; then
		apt_update_once
		dep=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
	fi
	[ -n "$dep" ] || die "cannot resolve $meta to a kernel package"
	echo "$dep"
}

# kernel_name PATH: the name a boot's log is filed under
kernel_name() {
	local name
	name=$(basename "$1")
	case $name in
	vmlinuz-*) name=${name#vmlinuz-} ;;
	vmlinuz | bzImage) name=$(basename "$(dirname "$1")") ;;
	esac
	echo "$name"
}

# ---------------------------------------------------------------- accelerator
# Sets ACCEL (kvm or tcg) and accel_args (qemu's arguments for it).
choose_accel() {
	ACCEL=${LATWHY_QEMU_ACCEL:-}
	if [ -z "$ACCEL" ]; then
		# /dev/kvm alone is not enough: some nested hosts expose it without
		# vmx/svm, and a guest kernel then hangs right after decompression.
		if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
			ACCEL=kvm
		else
			ACCEL=tcg
		fi
	fi
	# shellcheck disable=SC2034 # the caller's qemu command line
	accel_args=()
	if [ "$ACCEL" = kvm ]; then
		accel_args=(-enable-kvm -cpu host)
	else
		# Multi-threaded TCG (QEMU 7.2) can leave a vCPU executing a stale
		# translation of kernel text that another vCPU patched with
		# text_poke_bp(): both vCPUs then trap forever on an int3 that is no
		# longer in memory (seen at syscall_trace_enter when latwhy attaches:
		# soft lockup in latwhy + lat_client). One TCG thread avoids it.
		# shellcheck disable=SC2034
		accel_args=(-accel "tcg,thread=single")
	fi
}
