#!/bin/bash
# The build refuses an include that breaks user/README.md's folder rules:
# in a scratch copy of the tree, add one forbidden include at a time and
# expect `make build/layout.ok` to fail with the line naming it; the copy
# as it is must pass. Nothing is compiled: the layout check runs first.
set -u
cd "$(dirname "$0")/../.." || exit 1
FAILS=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r Makefile user tools "$tmp"/

layout() { make -s -C "$tmp" BUILD="$tmp/build" "$tmp/build/layout.ok" 2>&1; }

check() { # check NAME FILE LINE WANT: FILE with LINE added must be refused with WANT
	local name=$1 file=$tmp/$2 line=$3 want=$4 got
	cp "$file" "$file.orig"
	sed -i "0,/^#include/s||$line\n#include|" "$file"
	if got=$(layout); then
		echo "FAIL $name: the build took it"
		FAILS=$((FAILS + 1))
	elif [ "$(echo "$got" | head -1)" = "$want" ]; then
		echo "ok   $name"
	else
		echo "FAIL $name: want '$want', got '$got'"
		FAILS=$((FAILS + 1))
	fi
	mv "$file.orig" "$file"
}

if out=$(layout); then
	echo "ok   the tree as it is"
else
	echo "FAIL the tree as it is: $out"
	FAILS=$((FAILS + 1))
fi
check "engine includes advice/" user/engine/engine.c '#include "advice/finding.h"' \
	'layout: user/engine/engine.c includes advice/: user/engine/ may include only engine,lib'
check "source includes cli/" user/source/tracer.h '#include "cli/trace_opts.h"' \
	'layout: user/source/tracer.h includes cli/: user/source/ may include only source,engine,node,lib'
check "output includes libbpf" user/output/render.c '#include <bpf/libbpf.h>' \
	'layout: user/output/render.c includes libbpf: only user/source/ may'
check "node includes engine/" user/node/node.c '#include "engine/engine.h"' \
	'layout: user/node/node.c includes engine/: user/node/ may include only node,lib'
# a new folder has no rule until the Makefile's LAYOUT gives it one
mkdir -p "$tmp/user/newstage" && echo '#include "lib/fmt.h"' >"$tmp/user/newstage/x.h"
want="layout: user/newstage/x.h: user/newstage/ has no rule in the Makefile's LAYOUT"
if got=$(layout); then
	echo "FAIL a folder without a rule: the build took it"
	FAILS=$((FAILS + 1))
elif [ "$(echo "$got" | head -1)" = "$want" ]; then
	echo "ok   a folder without a rule"
else
	echo "FAIL a folder without a rule: want '$want', got '$got'"
	FAILS=$((FAILS + 1))
fi
[ $FAILS -eq 0 ] && echo "test_layout.sh: all passed" || echo "test_layout.sh: $FAILS failed"
exit $((FAILS > 0))
