#!/usr/bin/env bash
# rootfs.sh: a Debian bookworm root filesystem for tools/systemd/guest.sh,
# built once with mmdebstrap from the archive and cached as a tarball:
#
#   tools/systemd/rootfs.sh          prints the tarball's path (builds it
#                                    first when it is not in the cache)
#
# What is in it: Debian's systemd as PID 1 (systemd-sysv), udev, dbus,
# curl, procps and iproute2; apt's package lists, and in apt's archive
# cache the .debs that latwhy's package depends on (libbpf1, libelf1,
# zlib1g, libmicrohttpd12 and what they need), downloaded, not installed:
# the guest installs latwhy's .deb with apt offline, and apt resolves its
# Depends from there. latwhy's own runtime libraries are not installed.
#
# Environment: LATWHY_SYSTEMD_CACHE (default /var/cache/latwhy-systemd,
# never the repo). Needs root and mmdebstrap (installed when missing).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # lib.sh names the program by it
LIB_PROG=rootfs.sh
# shellcheck source=tools/kernels/lib.sh
. "$HERE/../kernels/lib.sh" # log, die, apt_install
CACHE=${LATWHY_SYSTEMD_CACHE:-/var/cache/latwhy-systemd}
SUITE=bookworm
INCLUDE=systemd,systemd-sysv,udev,dbus,curl,procps,iproute2
# downloaded into the guest's apt cache, not installed
DEPS="libbpf1 libelf1 zlib1g libmicrohttpd12"

[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap, apt-get)"
command -v mmdebstrap >/dev/null || apt_install mmdebstrap

# the cache key: what goes into the tarball
key=$(printf '%s\n' "$SUITE" "$INCLUDE" "$DEPS" v1 | sha1sum | cut -c1-12)
tar=$CACHE/rootfs-$SUITE-$key.tar
if [ -s "$tar" ]; then
	echo "$tar"
	exit 0
fi
mkdir -p "$CACHE"
log "building $tar (mmdebstrap $SUITE: $INCLUDE)"
tmp=$tar.tmp.$$
trap 'rm -f "$tmp"' EXIT
# --format=tar: mmdebstrap would take the name's .tmp suffix for a folder;
# --skip=cleanup/apt keeps the package lists and the downloaded .debs
# shellcheck disable=SC2016 # $1 is mmdebstrap's, in the hook
mmdebstrap --variant=apt --include="$INCLUDE" --skip=cleanup/apt \
	--customize-hook="chroot \"\$1\" apt-get install -y -qq --download-only $DEPS" \
	--customize-hook='echo latwhy-guest >"$1/etc/hostname"' \
	--format=tar "$SUITE" "$tmp" >&2
mv "$tmp" "$tar"
echo "$tar"
