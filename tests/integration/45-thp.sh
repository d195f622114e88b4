# shellcheck shell=bash
# 45-thp.sh - thp: khugepaged collapses of the target
# Sourced by run.sh, which runs each test_NAME function below in the order
# they are defined (see run.sh); the helpers come from lib.sh.
# shellcheck source=tests/integration/lib.sh
declare -F start_server >/dev/null || . tests/integration/lib.sh

# THP always + eager khugepaged + a madvised heap: collapses of the target's
# mm. Whether a collapse meets one of this run's slow requests (a fault or
# the mmap lock) is luck: on an AMD guest 2 of 5 runs lost nothing to it.
# The collapses at an eager pace are the finding either way, and it states
# what the slow requests lost.
test_thp() {
	[ -w /sys/kernel/mm/transparent_hugepage/enabled ] ||
		{ skip thp "THP settings not writable"; return; }
	# -R: the server frees heap pages like an allocator purging, so
	# khugepaged has ranges to collapse back while it serves
	start_server "$SRV_CPU" -m 512 -P 256 --thp -R 200 || { no_server thp; return; }
	# the injector fragments memory before it sets the knobs: 3-20 s.
	# It and the client run until cleanup: with 14 s and 13 s, latwhy's
	# start (2-3 s) and 10 s trace outlasted them in one CI run, the
	# injector's restore came first, and the fix lacked the pace line
	tools/inject.sh thp "$SRV_CPU" 60 >"$OUT/inject.out" 2>&1 &
	PIDS+=("$!")
	if ! wait_for "$OUT/inject.out" '^inject.sh: thp: ' "$!" 90; then
		fail thp "inject.sh thp: $(tail -1 "$OUT/inject.out")"
		cleanup
		return
	fi
	start_client 60
	sleep 1
	./latwhy -p "$SPID" -d 10s -j >"$OUT/trace.json" 2>"$OUT/latwhy.err"
	check thp '
thp = summ["evidence"]["thp"]
assert thp["collapses"] > 0, "no collapse of the target memory: %s" % thp
# the injector runs khugepaged every 10 ms over a heap the server madvises:
# the fix puts the kernel pace back, and says madvise alone keeps the heap
# eligible
f = [x for x in summ["findings"] if x["cause"] == "thp"]
assert f, "no thp finding: %s" % summ["causes"]
pace = "echo 10000 > /sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"
assert pace in f[0]["fix"], f[0]["fix"]
c = summ["causes"]["thp"]
lost = "%.0f%% of slow-request time (" % (c["share"] * 100)
assert f[0]["evidence"].startswith(lost), (lost, f[0]["evidence"])
assert "khugepaged collapsed %d ranges" % thp["collapses"] in f[0]["evidence"], f[0]["evidence"]
print("thp: %d collapses, %.1f ms (%.1f%%) of slow-request time" % (thp["collapses"], c["ns"] / 1e6, c["share"] * 100))
assert any(l.startswith("# pid %d madvises " % summ["pid"]) for l in f[0]["fix"]), f[0]["fix"]
'
	cleanup
}
