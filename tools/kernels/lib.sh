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
# Kernels come from any Debian suite and architecture, through a private apt
# configuration per suite and architecture under $CACHE/apt: the host's own
# sources, architectures and package state stay as they are. The mirror is
# the host's (its Debian sources name it).

# host_mirror [security]: the host's Debian mirror URI, or its security
# archive's ("" when it has none)
host_mirror() {
	local uri pick='!/security/'
	[ "${1:-}" != security ] || pick='/security/'
	uri=$(awk "/^URIs:/ && $pick {print \$2; exit}" /etc/apt/sources.list.d/*.sources 2>/dev/null)
	[ -n "$uri" ] || uri=$(awk "\$1 == \"deb\" && $pick"' {
		for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' \
		/etc/apt/sources.list 2>/dev/null)
	[ -n "$uri" ] || [ "${1:-}" = security ] ||
		die "no Debian mirror in /etc/apt/sources.list{,.d/*.sources}"
	echo "$uri"
}

# apt_for SUITE ARCH: sets APT_OPTS to apt's options for that suite's main
# component on that architecture, its package lists fetched once a day
apt_for() {
	local suite=$1 arch=$2 d=$CACHE/apt/$1-$2 sec
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/parts"
	[ -e "$d/status" ] || : >"$d/status"
	# the suite and its security updates: the kernels fleets run
	{
		printf 'deb [arch=%s signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
			"$arch" "$(host_mirror)" "$suite"
		sec=$(host_mirror security)
		[ -z "$sec" ] ||
			printf 'deb [arch=%s signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s-security main\n' \
				"$arch" "$sec" "$suite"
	} >"$d/sources.list"
	APT_OPTS=(-o "Dir::Etc::SourceList=$d/sources.list" -o "Dir::Etc::SourceParts=$d/parts"
		-o "Dir::State::Lists=$d/lists" -o "Dir::State::status=$d/status"
		-o "Dir::Cache=$d/cache" -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
	# again when the sources changed, or a day later
	if ! cmp -s "$d/sources.list" "$d/sources.list.last" ||
		[ -z "$(find "$d/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
		log "apt-get update ($suite, $arch)"
		apt-get "${APT_OPTS[@]}" update -qq >&2 || die "apt-get update of $suite ($arch) failed"
		cp "$d/sources.list" "$d/sources.list.last"
	fi
}

# kernel_deb SUITE ARCH PKG: the cached .deb of Debian package PKG, downloaded once
kernel_deb() {
	local suite=$1 arch=$2 pkg=$3 deb
	mkdir -p "$CACHE/debs"
	deb=$(find "$CACHE/debs" -maxdepth 1 -name "${pkg}_*_${arch}.deb" | sort -V | tail -n1)
	if [ -z "$deb" ]; then
		apt_for "$suite" "$arch"
		log "downloading $pkg ($suite, $arch)"
		(cd "$CACHE/debs" && apt-get "${APT_OPTS[@]}" download "$pkg" >&2) ||
			die "apt-get download $pkg ($suite, $arch) failed"
		deb=$(find "$CACHE/debs" -maxdepth 1 -name "${pkg}_*_${arch}.deb" | sort -V | tail -n1)
		[ -n "$deb" ] || die "apt-get download $pkg left no .deb"
	fi
	echo "$deb"
}

# fetch_kernel SUITE ARCH PKG: Debian kernel package -> $CACHE/<uname -r>/vmlinuz
# (echoes that path)
fetch_kernel() {
	local suite=$1 arch=$2 pkg=$3 kver dir deb tmp
	kver=${pkg#linux-image-}
	kver=${kver%-unsigned}
	dir=$CACHE/$kver
	if [ -s "$dir/vmlinuz" ]; then
		echo "$dir/vmlinuz"
		return 0
	fi
	deb=$(kernel_deb "$suite" "$arch" "$pkg")
	tmp=$(mktemp -d "$CACHE/x.XXXXXX")
	dpkg-deb -x "$deb" "$tmp"
	mkdir -p "$dir"
	# keep only what a boot and a diagnosis need; modules are fetch_modules'
	cp "$tmp/boot/vmlinuz-$kver" "$dir/vmlinuz"
	cp "$tmp/boot/config-$kver" "$dir/config" 2>/dev/null || true
	cp "$tmp/boot/System.map-$kver" "$dir/System.map" 2>/dev/null || true
	echo "$arch" >"$dir/arch"
	rm -rf "$tmp"
	echo "$dir/vmlinuz"
}

# Debian kernel package -> its modules with a modules.dep, under
# $CACHE/<uname -r>/modules/lib/modules/<uname -r> (echoes that path).
# The .deb has no modules.dep (its postinst runs depmod): busybox's makes it.
fetch_modules() {
	local suite=$1 arch=$2 pkg=$3 kver dir deb tmp src
	kver=${pkg#linux-image-}
	kver=${kver%-unsigned}
	dir=$CACHE/$kver/modules
	if [ -s "$dir/lib/modules/$kver/modules.dep" ]; then
		echo "$dir/lib/modules/$kver"
		return 0
	fi
	deb=$(kernel_deb "$suite" "$arch" "$pkg")
	log "extracting the modules of $kver"
	tmp=$(mktemp -d "$CACHE/x.XXXXXX")
	dpkg-deb -x "$deb" "$tmp"
	# trixie's packages are merged-/usr: usr/lib/modules
	src=$tmp/lib/modules/$kver
	[ -d "$src" ] || src=$tmp/usr/lib/modules/$kver
	[ -d "$src" ] || die "$deb has no lib/modules/$kver nor usr/lib/modules/$kver"
	rm -rf "$dir"
	mkdir -p "$dir/lib/modules"
	mv "$src" "$dir/lib/modules/$kver"
	rm -rf "$tmp"
	busybox depmod -b "$dir" "$kver" || die "depmod of $kver failed"
	echo "$dir/lib/modules/$kver"
}

# resolve_meta SUITE ARCH META: the versioned image metapackage META depends on
resolve_meta() {
	local suite=$1 arch=$2 meta=$3 dep
	apt_for "$suite" "$arch"
	dep=$(apt-cache "${APT_OPTS[@]}" depends "$meta" 2>/dev/null |
		awk '/Depends: linux-image-/{print $2; exit}')
	[ -n "$dep" ] || die "cannot resolve $meta ($suite, $arch) to a kernel package"
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
