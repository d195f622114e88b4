#!/bin/bash
# image.sh: the filesystem deploy/kubernetes/Containerfile makes, built with
# no container engine (none runs on the development VM or in CI):
#
#   tests/k8s/image.sh CONTEXT_DIR     prints the image's root directory
#
# FROM debian:SUITE-slim is mmdebstrap's SUITE, variant minbase (the slim
# image's: Essential and Priority required, apt), with the slim image's
# dpkg excludes (no docs, man pages or locales); each COPY is copied from
# CONTEXT_DIR, each RUN run in it with chroot, in the Containerfile's order,
# as an engine's build would, with the archive reached over the network as
# there. ENTRYPOINT and CMD are written to ROOT/.image-cmd (JSON, one line
# each) for the caller. Not the engine's layers, nor its registry's base
# image byte for byte: the same packages from the same archive.
#
# Cached in LATWHY_K8S_CACHE (default /tmp/latwhy-k8s), keyed by the
# Containerfile and the files copied; as root.
set -euo pipefail
CF=$(cd "$(dirname "$0")/../.." && pwd)/deploy/kubernetes/Containerfile
CTX=${1:?usage: image.sh CONTEXT_DIR}
CACHE=${LATWHY_K8S_CACHE:-/tmp/latwhy-k8s}
die() { echo "image.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || die "no mmdebstrap (tools/deps.sh installs it)"

# the instructions, continuation lines joined, comments dropped
mapfile -t INS < <(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}' "$CF" | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$')
srcs=()
for l in "${INS[@]}"; do
	[[ $l == COPY* ]] || continue
	read -r _ src _ <<<"$l"
	# shellcheck disable=SC2206 # the glob is the Containerfile's
	m=($CTX/$src)
	[ -e "${m[0]}" ] || die "COPY $src: nothing in $CTX matches"
	srcs+=("${m[@]}")
done
key=$( (cat "$CF"; sha256sum "${srcs[@]}" | cut -c1-64) | sha256sum | cut -c1-16)
ROOT=$CACHE/image-$key
if [ -x "$ROOT/usr/bin/latwhy" ] && [ -s "$ROOT/.image-cmd" ]; then
	echo "$ROOT"
	exit 0
fi
rm -rf "$ROOT" "$ROOT.tmp"
mkdir -p "$CACHE"
T=$ROOT.tmp
for l in "${INS[@]}"; do
	read -r op arg <<<"$l"
	case $op in
	FROM)
		[[ $arg =~ ^(docker\.io/library/)?debian:([a-z]+)-slim$ ]] || die "FROM $arg: not a Debian slim image"
		suite=${BASH_REMATCH[2]}
		echo "image.sh: FROM $arg: mmdebstrap --variant=minbase $suite" >&2
		mmdebstrap --variant=minbase --quiet \
			--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
			--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
			"$suite" "$T" >&2 || die "mmdebstrap $suite failed"
		;;
	COPY)
		read -r src dst <<<"$arg"
		echo "image.sh: COPY $src $dst" >&2
		# shellcheck disable=SC2086 # the glob is the Containerfile's
		cp $CTX/$src "$T/$dst"
		;;
	RUN)
		echo "image.sh: RUN $arg" >&2
		cp /etc/resolv.conf "$T/etc/resolv.conf"
		chroot "$T" /bin/sh -c "$arg" >&2 || die "RUN failed: $arg"
		: >"$T/etc/resolv.conf"
		;;
	ENTRYPOINT | CMD) echo "$op $arg" >>"$T/.image-cmd" ;;
	*) die "$op: an instruction image.sh does not build" ;;
	esac
done
mv "$T" "$ROOT"
echo "$ROOT"
