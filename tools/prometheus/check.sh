#!/bin/sh
# Check latwhy's Prometheus files with promtool: the scrape config, the
# recording and alert rules, and their unit tests (latwhy.test.yml).
#
#   tools/prometheus/check.sh [METRICS_FILE]   also lint a /metrics scrape
#
# Exits 0 when every check passed, 1 otherwise; says it skipped when promtool
# (Debian's prometheus package) is not installed.
set -u
cd "$(dirname "$0")" || exit 1
if ! command -v promtool >/dev/null 2>&1; then
	echo "SKIP prometheus: promtool not installed (apt-get install prometheus)"
	exit 0
fi
fails=0
run() {
	if out=$("$@" 2>&1); then
		echo "PASS promtool $2 $3"
	else
		echo "FAIL promtool $2 $3:"
		echo "$out" | sed 's/^/  /'
		fails=$((fails + 1))
	fi
}
run promtool check config prometheus.yml
run promtool check rules latwhy.rules.yml latwhy.alerts.yml
run promtool test rules latwhy.test.yml
if [ $# -gt 0 ]; then
	if out=$(promtool check metrics <"$1" 2>&1); then
		echo "PASS promtool check metrics $1"
	else
		echo "FAIL promtool check metrics $1:"
		echo "$out" | sed 's/^/  /'
		fails=$((fails + 1))
	fi
fi
[ "$fails" -eq 0 ]
