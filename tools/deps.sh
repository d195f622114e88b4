#!/bin/sh
# Install the Debian packages latwhy needs to build and test, only those
# missing. apt-get update runs at most once.
set -e
PKGS="make clang python3 libbpf-dev bpftool libelf-dev zlib1g-dev libcmocka-dev pkg-config \
gcc libc6-dev shellcheck procps iproute2 util-linux libclang-rt-14-dev libmicrohttpd-dev \
prometheus chromium chromium-driver python3-selenium systemd debhelper lintian man-db"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "latwhy: missing packages:$missing (run as root, or: sudo apt-get install -y$missing)" >&2
	exit 1
fi
echo "latwhy: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null
