#!/usr/bin/env bash
# vmlinux.h for another architecture, from a Debian kernel's BTF:
#
#   tools/kernels/vmlinux.sh ARCH OUT.h     (make vmlinux ARCH=arm64)
#
# The kernel image Debian ships for arm64 is a raw Image, not an ELF file,
# so its .BTF section has no name left: the BTF blob is found by its header
# (magic 0xeb9f, version 1, a 24-byte header whose string section follows
# the types) and the largest one is dumped with bpftool. The kernel is the
# one linux-image-ARCH depends on in LATWHY_VMLINUX_SUITE (default trixie,
# the newest stable: CO-RE reads older kernels' layouts from their BTF).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # lib.sh names the program by it
LIB_PROG=vmlinux.sh
# shellcheck source=tools/kernels/lib.sh
. "$HERE/lib.sh"

[ $# -eq 2 ] || die "usage: vmlinux.sh ARCH OUT.h"
arch=$1
out=$2
suite=${LATWHY_VMLINUX_SUITE:-trixie}
case $arch in
arm64) deb_arch=arm64 ;;
x86) deb_arch=amd64 ;;
*) die "no Debian kernel for architecture $arch" ;;
esac
pkg=$(resolve_meta "$suite" "$deb_arch" "linux-image-$deb_arch")
image=$(fetch_kernel "$suite" "$deb_arch" "$pkg")
btf=$(mktemp /tmp/latwhy-btf.XXXXXX)
trap 'rm -f "$btf"' EXIT
# x86's vmlinuz is a compressed bzImage: its BTF is not readable in place
python3 - "$image" "$btf" <<'PY' || die "$image: no BTF found (compressed image?)"
import struct, sys
data = open(sys.argv[1], "rb").read()
head = b"\x9f\xeb\x01\x00\x18\x00\x00\x00"  # magic, version 1, flags 0, hdr_len 24
best = None
i = data.find(head)
while i >= 0:
    _, _, _, hlen, toff, tlen, soff, slen = struct.unpack_from("<HBBIIIII", data, i)
    size = hlen + soff + slen
    # vmlinux BTF: types first, strings right after, the first string ""
    if toff == 0 and soff == tlen and i + size <= len(data) and data[i + hlen + soff] == 0:
        if best is None or size > best[1]:
            best = (i, size)
    i = data.find(head, i + 1)
if best is None:
    sys.exit(1)
open(sys.argv[2], "wb").write(data[best[0]:best[0] + best[1]])
PY
log "$pkg ($suite, $deb_arch): BTF of $(stat -c %s "$btf") bytes -> $out"
{
	echo "/* bpftool btf dump of $pkg's BTF ($suite, $deb_arch): make vmlinux ARCH=$arch */"
	bpftool btf dump file "$btf" format c
} >"$out.tmp"
mv "$out.tmp" "$out"
