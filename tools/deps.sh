#!/bin/sh
# Install the Debian packages latwhy needs to build and test, only those
# missing. apt-get update runs at most once.
#
#   tools/deps.sh --cross arm64    instead: what `make ARCH=arm64` needs, the
#                                  cross toolchain and the arm64 -dev libraries
#                                  (adds arm64 to dpkg's architectures)
set -e
if [ "${1:-}" = --cross ]; then
	[ "${2:-}" = arm64 ] || { echo "latwhy: tools/deps.sh --cross: only arm64" >&2; exit 2; }
	PKGS="gcc-aarch64-linux-gnu libc6-dev:arm64 libbpf-dev:arm64 libelf-dev:arm64 \
zlib1g-dev:arm64 libmicrohttpd-dev:arm64 file binutils"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		[ "$(id -u)" = 0 ] || { echo "latwhy: dpkg --add-architecture arm64 needs root" >&2; exit 1; }
		dpkg --add-architecture arm64
		NEED_UPDATE=1
	fi
else
PKGS="make clang python3 libbpf-dev bpftool libelf-dev zlib1g-dev libcmocka-dev pkg-config \
gcc libc6-dev shellcheck procps iproute2 util-linux libclang-rt-14-dev libmicrohttpd-dev \
prometheus chromium chromium-driver python3-selenium systemd debhelper lintian man-db \
python3-yaml mmdebstrap"
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && [ -z "${NEED_UPDATE:-}" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "latwhy: missing packages:$missing (run as root, or: sudo apt-get install -y$missing)" >&2
	exit 1
fi
echo "latwhy: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null
