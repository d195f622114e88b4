#!/bin/bash
# make install, make uninstall and make deb, checked (make unit; no root
# needed, about 40 s: make deb builds the tree afresh and runs lintian):
# - make install DESTDIR=: exactly the files `make install-list` names, with
#   their modes; the unit's ExecStart at the installed binary for
#   PREFIX=/usr/local and /usr; latwhy(8) rendered by man -l with its
#   sections; an edited /etc/default/latwhy kept by install and uninstall;
#   make uninstall leaves no file.
# - make deb: latwhy_<changelog version>_<arch>.deb, its file list, its
#   Depends (dpkg-shlibdeps: libbpf1, libmicrohttpd12, zlib1g, libc6;
#   libelf1 through libbpf1), the unit in bookworm's systemd directory and
#   not enabled by postinst, /etc/default/latwhy a conffile, lintian clean
#   (make deb fails otherwise), and the packaged binary run from the
#   package's tree: --version with the package version and the commit,
#   check on a fixture, report of a capture.
set -u
cd "$(dirname "$0")/../.." || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
PASSES=0
check() { # check NAME WANT GOT
	if [ "$2" = "$3" ]; then
		echo "ok   $1"
		PASSES=$((PASSES + 1))
	else
		echo "FAIL $1: want '$2', got '$3'"
		FAILS=$((FAILS + 1))
	fi
}
# files DIR: every file and link under DIR, as absolute paths inside it
files() { (cd "$1" && find . ! -type d | sed 's|^\.||' | sort); }
key() { sed -n "s/^$2=//p" "$1" | tail -1; }

# ---- make install / uninstall, PREFIX=/usr/local
D=$TMP/dest
make -s install DESTDIR="$D" >"$TMP/install.log" 2>&1
check "make install: exit" 0 "$?"
want=$(make -s install-list | sort)
check "make install: the files of make install-list" "$want" "$(files "$D")"
check "make install: modes" "755 644 644 644" \
	"$(stat -c %a "$D/usr/local/bin/latwhy" "$D/usr/local/share/man/man8/latwhy.8" \
		"$D/usr/local/lib/systemd/system/latwhy.service" "$D/etc/default/latwhy" | tr '\n' ' ' | sed 's/ $//')"
# shellcheck disable=SC2016 # the unit's own $ expansions
check "make install: ExecStart at the installed binary" \
	'/usr/local/bin/latwhy serve $LATWHY_TARGET --listen ${LATWHY_LISTEN} $LATWHY_OPTS' \
	"$(key "$D/usr/local/lib/systemd/system/latwhy.service" ExecStart)"
check "make install: prometheus.yml's rules beside it" "latwhy.alerts.yml latwhy.rules.yml prometheus.yml" \
	"$(cd "$D/usr/local/share/latwhy/prometheus" && echo *)"
v=$("$D/usr/local/bin/latwhy" --version)
check "installed latwhy --version" "latwhy $(sed -n 's/^VERSION *:= *//p' Makefile) (commit" "${v% *}"
if command -v man >/dev/null; then
	page=$(MANWIDTH=80 man -l "$D/usr/local/share/man/man8/latwhy.8" 2>"$TMP/man.err" | col -b)
	check "man -l latwhy.8: the sections" \
		"NAME SYNOPSIS DESCRIPTION OPTIONS EXIT STATUS FILES EXAMPLES SEE ALSO" \
		"$(grep -E '^[A-Z][A-Z ]+$' <<<"$page" | tr '\n' ' ' | sed 's/ $//')"
	check "man -l latwhy.8: no warning" "" "$(man --warnings -l -Tutf8 -Z "$D/usr/local/share/man/man8/latwhy.8" 2>&1 >/dev/null)"
	# made from docs/usage.md: an option of each command, in its words there
	for o in '--ref-mhz MHZ' '--fix-script F' '--max-size SIZE' '--trace-event OUT.json' '--listen ADDR:PORT'; do
		grep -qF -- "$o" <<<"$page"
		check "man page: $o" 0 "$?"
	done
	check "man page FILES: the installed binary" 1 "$(grep -c '^       /usr/local/bin/latwhy$' <<<"$page")"
fi
# an operator's edited /etc/default/latwhy: kept by install and by uninstall
echo 'LATWHY_TARGET="--comm edited-here"' >>"$D/etc/default/latwhy"
make -s install DESTDIR="$D" >"$TMP/install2.log" 2>&1
check "make install again: the edited defaults kept" 1 "$(grep -c 'edited-here' "$D/etc/default/latwhy")"
make -s uninstall DESTDIR="$D" >"$TMP/uninstall.log" 2>&1
check "make uninstall: exit" 0 "$?"
check "make uninstall: only the edited defaults left" "/etc/default/latwhy" "$(files "$D")"
rm -f "$D/etc/default/latwhy"
make -s install DESTDIR="$D" >/dev/null 2>&1 && make -s uninstall DESTDIR="$D" >/dev/null 2>&1
check "make install + uninstall: no file left" "" "$(files "$D")"
check "make uninstall: no folder of latwhy's left" "" "$(cd "$D" && find . -type d -name latwhy)"

# ---- PREFIX=/usr
make -s install DESTDIR="$TMP/usr" PREFIX=/usr >/dev/null 2>&1
# shellcheck disable=SC2016
check "PREFIX=/usr: ExecStart" '/usr/bin/latwhy serve $LATWHY_TARGET --listen ${LATWHY_LISTEN} $LATWHY_OPTS' \
	"$(key "$TMP/usr/usr/lib/systemd/system/latwhy.service" ExecStart)"

# ---- make deb
if ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null; then
	echo "SKIP make deb: no dpkg-buildpackage or debhelper (tools/deps.sh installs them)"
else
	make -s deb >"$TMP/deb.log" 2>&1
	rc=$?
	check "make deb: exit (lintian clean)" 0 "$rc"
	[ "$rc" -eq 0 ] || sed 's/^/    /' "$TMP/deb.log" | tail -n 20
	ver=$(dpkg-parsechangelog -l tools/debian/changelog -S Version)
	arch=$(dpkg-architecture -qDEB_HOST_ARCH)
	deb=build/deb/latwhy_${ver}_$arch.deb
	check "make deb: $deb" 1 "$([ -s "$deb" ] && echo 1)"
	if [ -s "$deb" ]; then
		check "deb: the files" "/etc/default/latwhy
/lib/systemd/system/latwhy.service
/usr/bin/latwhy
/usr/share/doc/latwhy/README.md.gz
/usr/share/doc/latwhy/capture.md.gz
/usr/share/doc/latwhy/changelog.Debian.gz
/usr/share/doc/latwhy/copyright
/usr/share/doc/latwhy/install.md.gz
/usr/share/doc/latwhy/json.md.gz
/usr/share/doc/latwhy/model.md.gz
/usr/share/doc/latwhy/performance.md.gz
/usr/share/doc/latwhy/serve.md.gz
/usr/share/doc/latwhy/usage.md.gz
/usr/share/latwhy/prometheus/latwhy.alerts.yml
/usr/share/latwhy/prometheus/latwhy.rules.yml
/usr/share/latwhy/prometheus/prometheus.yml
/usr/share/lintian/overrides/latwhy
/usr/share/man/man8/latwhy.8.gz" "$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print substr($6, 2)}' | sort)"
		deps=$(dpkg-deb -f "$deb" Depends)
		check "deb: Depends, from dpkg-shlibdeps" "libbpf1 libc6 libmicrohttpd12 zlib1g" \
			"$(tr ',' '\n' <<<"$deps" | awk '{print $1}' | sort | tr '\n' ' ' | sed 's/ $//')"
		# libelf1 comes with libbpf1: latwhy calls no libelf function itself
		check "libbpf1 depends on libelf1" 1 \
			"$(apt-cache depends libbpf1 2>/dev/null | grep -c 'Depends: libelf1')"
		check "deb: Version" "$ver" "$(dpkg-deb -f "$deb" Version)"
		X=$TMP/x
		dpkg-deb -R "$deb" "$X"
		check "deb: conffiles" /etc/default/latwhy "$(cat "$X/DEBIAN/conffiles")"
		# shellcheck disable=SC2016
		check "deb: the unit's ExecStart" '/usr/bin/latwhy serve $LATWHY_TARGET --listen ${LATWHY_LISTEN} $LATWHY_OPTS' \
			"$(key "$X/lib/systemd/system/latwhy.service" ExecStart)"
		# dh_installsystemd --no-enable: postinst enables only what was
		# enabled before, and deb-systemd-invoke starts only enabled units
		check "deb: postinst does not enable the unit on a fresh install" 0 \
			"$(grep -c 'fresh install' "$X/DEBIAN/postinst")"
		check "deb: postinst keeps an enabled unit enabled" 1 "$(grep -c 'was-enabled' "$X/DEBIAN/postinst")"
		# the packaged binary, run from the package's tree
		v=$("$X/usr/bin/latwhy" --version)
		check "packaged latwhy --version" "latwhy ${ver%-*} (package $ver, commit $(cat build/deb/latwhy-"${ver%-*}"/COMMIT))" "$v"
		"$X/usr/bin/latwhy" check --json --root tests/fixtures/vm-nocpufreq --sample 0 >"$TMP/check.json" 2>&1
		check "packaged latwhy check --root fixture: exit" 0 "$?"
		cap=$(find tests/captures -name '*.lwy' | sort | head -n1)
		"$X/usr/bin/latwhy" report "$cap" >"$TMP/report.txt" 2>&1
		check "packaged latwhy report $cap: exit" 0 "$?"
		check "packaged latwhy report: a summary" 1 "$(grep -c '^== latwhy: ' "$TMP/report.txt")"
		check "packaged man page: renders" 1 \
			"$(MANWIDTH=80 man -l "$X/usr/share/man/man8/latwhy.8.gz" 2>/dev/null | col -b | grep -c '^       /usr/bin/latwhy$')"
	fi
fi

echo "tests/install/check.sh: $PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
