#!/bin/sh
# mkman.sh VERSION [PREFIX [UNITDIR]]: latwhy(8) on stdout, made from docs/usage.md
# and docs/serve.md (their Markdown sections, converted by the awk below),
# so the man page says what the docs say. Only NAME, FILES and SEE ALSO are
# written here: they are about the installed files, which the docs do not
# list. PREFIX (default /usr/local) is where the binary is installed and
# UNITDIR (default PREFIX/lib/systemd/system) the unit: FILES names them.
#
#   tools/man/mkman.sh 0.2.0 /usr >latwhy.8 && man -l latwhy.8
#
# The Markdown it reads: headings (#, ##, ###), paragraphs, "- " lists
# (nested by two spaces; an item "- `OPT` — text" becomes a tagged
# paragraph), fenced and indented code blocks, `code`, **bold** and
# [links](...), whose text is kept.
set -eu
cd "$(dirname "$0")/../.."
VERSION=${1:?usage: mkman.sh VERSION [PREFIX [UNITDIR]]}
PREFIX=${2:-/usr/local}
UNITDIR=${3:-$PREFIX/lib/systemd/system}
U=docs/usage.md
S=docs/serve.md

# part FILE PARENT [CHILD] [intro]: the lines under heading PARENT (a
# heading whose text starts so), or under CHILD inside it; up to the next
# heading of the same or a higher level, or with "intro" up to any heading
part() {
	awk -v parent="$2" -v child="${3:-}" -v intro="${4:-}" '
	function level(l) { match(l, /^#+/); return RLENGTH }
	function title(l) { sub(/^#+[ \t]*/, "", l); return l }
	/^```/ { fence = !fence }
	!fence && /^#+ / {
		lv = level($0); t = title($0)
		if (on && (intro != "" || lv <= onlv)) { on = 0; done = 1 }
		if (done) next
		if (!inpar && index(t, parent) == 1) { inpar = 1; parlv = lv
			if (child == "") { on = 1; onlv = lv }
			next }
		if (inpar && lv <= parlv) inpar = 0
		if (inpar && child != "" && index(t, child) == 1) { on = 1; onlv = lv; next }
		next
	}
	on { print }' "$1"
}

# md2man: the Markdown subset above on stdin, man(7) on stdout
md2man() {
	awk '
	function esc(s) {
		gsub(/\\/, "\\e", s)
		return s
	}
	function dash(s) { gsub(/-/, "\\-", s); return s }
	# inline markup of one line of text
	function inline(s,    out, pre, code) {
		s = esc(s)
		# links: [text](target) -> text
		while (match(s, /\[[^]]*\]\([^)]*\)/)) {
			pre = substr(s, RSTART, RLENGTH); sub(/\]\(.*/, "", pre)
			s = substr(s, 1, RSTART - 1) substr(pre, 2) substr(s, RSTART + RLENGTH)
		}
		gsub(/\*\*[^*]+\*\*/, "&", s)
		while (match(s, /\*\*[^*]+\*\*/))
			s = substr(s, 1, RSTART - 1) "\\fB" substr(s, RSTART + 2, RLENGTH - 4) "\\fR" substr(s, RSTART + RLENGTH)
		out = ""
		while (match(s, /`[^`]+`/)) {
			code = substr(s, RSTART + 1, RLENGTH - 2)
			out = out substr(s, 1, RSTART - 1) "\\fB" dash(code) "\\fR"
			s = substr(s, RSTART + RLENGTH)
		}
		s = out s
		gsub(/—/, "\\(em", s); gsub(/µ/, "\\(mc", s); gsub(/…/, "...", s)
		return s
	}
	function line(s) {
		s = inline(s)
		if (s ~ /^[.'\'']/) s = "\\&" s
		print s
	}
	function codeline(s) {
		s = esc(s)
		gsub(/—/, "\\(em", s); gsub(/µ/, "\\(mc", s); gsub(/…/, "...", s)
		gsub(/-/, "\\-", s)
		if (s ~ /^[.'\'']/) s = "\\&" s
		print s
	}
	# a paragraph or list item is buffered whole: a code span may wrap
	function add(s) { buf = buf == "" ? s : buf " " s }
	# a list item "`OPT` — text" is a tagged paragraph, any other a bullet
	function flush(    n, tag) {
		if (item && match(buf, /^`[^`]+`( [^—]*)? — /)) {
			n = RLENGTH; tag = substr(buf, 1, n); sub(/ — $/, "", tag)
			print ".TP"; line(tag)
			buf = substr(buf, n + 1)
		} else if (item)
			print ".IP \\(bu 2"
		item = 0
		if (buf != "") line(buf)
		buf = ""
	}
	function closelists(to) { while (depth > to) { print ".RE"; depth-- } }
	# code: indented past the text it is in (of a list item, or the margin)
	function startcode() {
		flush()
		if (depth > 0) print ".IP \"\" 6"; else { print ".PP"; print ".RS 4" }
		print ".nf"; incode = 1; codeinlist = depth > 0
	}
	function endcode() { print ".fi"; if (!codeinlist) print ".RE"; incode = 0 }
	BEGIN { depth = 0; blank = 1 }
	# fenced code
	/^[ \t]*```/ {
		if (fenced) { endcode(); fenced = 0 } else { startcode(); fenced = 1 }
		next
	}
	fenced { sub(/^  /, ""); codeline($0); next }
	# indented code: after a blank line, four spaces past the list text
	indented && /^[ \t]*$/ { held++; next }
	indented && match($0, /^ +/) && RLENGTH >= codeind {
		while (held > 0) { print ""; held-- }
		codeline(substr($0, codeind + 1)); next
	}
	indented { endcode(); indented = 0; held = 0; blank = 1 }
	/^[ \t]*$/ { blank = 1; next }
	blank && match($0, /^ +/) && RLENGTH >= 2 * depth + 4 {
		codeind = 2 * depth + 4
		startcode(); indented = 1; held = 0
		codeline(substr($0, codeind + 1)); next
	}
	/^#+ / {
		flush(); closelists(0)
		t = $0; sub(/^#+[ \t]*/, "", t)
		print ".SS \"" inline(t) "\""
		blank = 0; next
	}
	/^ *- / {
		flush()
		match($0, /^ */); d = RLENGTH / 2 + 1
		while (depth < d) { if (depth > 0) print ".RS"; depth++ }
		closelists(d)
		t = $0; sub(/^ *- /, "", t)
		item = 1; add(t)
		blank = 0; next
	}
	{
		# a line at column 0 after a blank line ends the lists
		if (blank) flush()
		if (blank && $0 !~ /^ /) { closelists(0); print ".PP" }
		else if (blank) print ".IP \"\" 2"
		t = $0; sub(/^ +/, "", t)
		add(t); blank = 0
	}
	END { flush(); if (incode) endcode(); closelists(0) }'
}

sh_() { printf '%s\n' "$@"; }

sh_ ".\\\" latwhy(8), generated by tools/man/mkman.sh from docs/usage.md and docs/serve.md:" \
	".\\\" edit those, not this file." \
	".TH LATWHY 8 \"\" \"latwhy $VERSION\" \"System Administration\"" \
	".SH NAME" \
	"latwhy \\- explain where a live process's slow requests spend their time (eBPF)" \
	".SH SYNOPSIS"
part $U "Synopsis" | awk '/^```/ {n++; next} n == 1' | sed 's/^/    /' | md2man
sh_ ".SH DESCRIPTION"
part $U "Synopsis" | awk '/^```/ {n++; next} n >= 2' | md2man
for h in "Live tracing" "Targets" "Node check" "Captures" "Always on"; do
	part $U "$h" "" intro | { printf '## %s\n' "$(grep -m1 "^## $h" $U | sed 's/^## //')"; cat; } | md2man
done
sh_ ".SH OPTIONS"
sh_ ".SS \"latwhy trace (and latwhy -p PID)\""
part $U "Live tracing" "Options" | md2man
sh_ ".SS \"latwhy check\""
part $U "Node check" "Options" | md2man
sh_ ".SS \"latwhy record\""
part $U "Captures" "Options of \`record\`" | md2man
sh_ ".SS \"latwhy report\""
part $U "Captures" "Options of \`report\`" | awk '/^The clock is reported/ {exit} {print}' | md2man
sh_ ".SS \"latwhy diff\""
part $U "Captures" "\`diff\`" | md2man
sh_ ".SS \"latwhy serve\""
part $S "Usage" | awk '/^On stderr serve says/ {exit} {print}' | md2man
sh_ ".SH \"EXIT STATUS\""
part $U "Live tracing" "Exit codes" | md2man
sh_ ".SH FILES" \
	".TP" "\\fB$PREFIX/bin/latwhy\\fR" "The program." \
	".TP" "\\fB$UNITDIR/latwhy.service\\fR" \
	"The systemd unit: \\fBlatwhy serve\\fR as a dynamic user with CAP_BPF and CAP_PERFMON only." \
	".TP" "\\fB/etc/default/latwhy\\fR" \
	"Read by the unit: LATWHY_TARGET (what to trace, e.g. \\fB\\-\\-comm nginx\\fR), LATWHY_LISTEN (default 127.0.0.1:9462) and LATWHY_OPTS (default \\fB\\-\\-capture\\-dir /var/lib/latwhy\\fR). An example is installed under \\fB$PREFIX/share/doc/latwhy/examples/\\fR." \
	".TP" "\\fB/var/lib/latwhy\\fR" "The unit's state directory: hindsight captures written on a trigger or SIGUSR1 (\\fBsystemctl kill \\-s USR1 latwhy\\fR)." \
	".TP" "\\fB$PREFIX/share/latwhy/prometheus/\\fR" "Prometheus recording rules, alerts and a scrape configuration." \
	".TP" "\\fB$PREFIX/share/doc/latwhy/\\fR" "The full documentation (Markdown): usage.md, serve.md, install.md, model.md, capture.md, json.md."
sh_ ".SH EXAMPLES"
for h in "Live tracing" "Node check" "Captures"; do
	part $U "$h" "Examples" | awk '/^```/ {n++} n <= 2' | md2man
done
sh_ ".SH \"SEE ALSO\"" \
	"\\fBsystemctl\\fR(1), \\fBjournalctl\\fR(1), \\fBsystemd.exec\\fR(5), \\fBbpftool\\fR(8), \\fBprometheus\\fR(1)," \
	"and \\fB$PREFIX/share/doc/latwhy/usage.md\\fR, \\fBserve.md\\fR and \\fBinstall.md\\fR there."
