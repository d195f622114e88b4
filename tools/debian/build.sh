#!/bin/sh
# build.sh (make deb): build/deb/latwhy_<version>_<arch>.deb, the Debian way.
#
# The repository's top level is the project's (Makefile, bpf/, user/, ...),
# so its packaging lives in tools/debian/. This copies the source tree as
# it would be committed (git's tracked and untracked, unignored files; the
# whole tree but build/ without git) into build/deb/latwhy-<upstream>/,
# with tools/debian/ as its debian/ and the commit in a COMMIT file (what
# --version prints), then runs dpkg-buildpackage -b there and lintian on
# the result (warnings and errors fail; overrides, each with its reason, are
# in tools/debian/latwhy.lintian-overrides).
#
# Environment: LW_COMMIT (the Makefile's), LINTIAN=0 to skip lintian.
set -eu
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=$ROOT/build/deb
VERSION=$(dpkg-parsechangelog -l tools/debian/changelog -S Version)
UPSTREAM=${VERSION%-*}
MAKEVER=$(sed -n 's/^VERSION *:= *//p' Makefile)
if [ "$UPSTREAM" != "$MAKEVER" ]; then
	echo "make deb: tools/debian/changelog's $VERSION is not the Makefile's VERSION $MAKEVER (dch -v $MAKEVER-1)" >&2
	exit 1
fi
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
TREE=$OUT/latwhy-$UPSTREAM
rm -rf "$OUT"
mkdir -p "$TREE"
if git rev-parse --git-dir >/dev/null 2>&1; then
	# tracked and new files that exist (a deleted, uncommitted file is gone)
	git ls-files -z -co --exclude-standard | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf - | tar -xf - -C "$TREE"
else
	tar --exclude=./build --exclude=./latwhy -cf - . | tar -xf - -C "$TREE"
fi
rm -rf "$TREE/debian"
cp -a tools/debian "$TREE/debian"
rm -f "$TREE/debian/build.sh"
echo "${LW_COMMIT:-unknown}" >"$TREE/COMMIT"

echo "make deb: dpkg-buildpackage -b in ${TREE#"$ROOT"/} (log: build/deb/build.log)"
if ! (cd "$TREE" && dpkg-buildpackage -b -us -uc -j2) >"$OUT/build.log" 2>&1; then
	grep -E ' error:|^dpkg-|^dh_|Unmet build dependencies' "$OUT/build.log" | tail -n 20 >&2
	echo "make deb: dpkg-buildpackage failed, see build/deb/build.log" >&2
	exit 1
fi
DEB=$OUT/latwhy_${VERSION}_$ARCH.deb
[ -s "$DEB" ] || { echo "make deb: no $DEB" >&2; exit 1; }
echo "make deb: ${DEB#"$ROOT"/}"
dpkg-deb -f "$DEB" Version Depends | sed "s/^/  /"

if [ "${LINTIAN:-1}" = 0 ]; then
	exit 0
fi
if ! command -v lintian >/dev/null; then
	echo "make deb: no lintian (tools/deps.sh installs it): not checked"
	exit 0
fi
# --fail-on warning: errors and warnings fail; info tags are printed
# (lintian says on stderr that it runs as root: not a tag)
# (--show-overrides would count the overridden warnings as failures)
if lintian --fail-on error,warning --display-info "$DEB" >"$OUT/lintian.txt" 2>"$OUT/lintian.err"; then
	echo "make deb: lintian: clean (info tags too); $(grep -c '^latwhy: ' tools/debian/latwhy.lintian-overrides) tags overridden, each with its reason in tools/debian/latwhy.lintian-overrides"
	sed 's/^/  /' "$OUT/lintian.txt"
else
	cat "$OUT/lintian.err" >&2
	cat "$OUT/lintian.txt" >&2
	echo "make deb: lintian failed" >&2
	exit 1
fi
