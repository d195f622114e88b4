#!/usr/bin/env python3
"""score.py - score latwhy's attribution against the lab's ground truth.

    score.py quantiles FILE         print "n p50_ns p99_ns p999_ns" of a latency file
    score.py wrklat                 a wrk Lua script that writes every request's latency
    score.py pathns DIR             a baseline's client median minus latwhy's, ns
    score.py cpusnap PID            CPU time so far of every task outside PID's tree
    score.py table [--keep-going] DIR...
                                    one row per scenario directory; exit 1 when a
                                    scenario with a bar misses it

A scenario directory (written by tools/accuracy/run.sh) holds:

    meta        key=value lines: name, inject (e.g. "sched,irq" or "-"), kind
                (lab, freq, redis, nginx), slow_ns (the client's threshold),
                lw_slow_ns (latwhy's: slow_ns minus the baseline's pathns),
                baseline (the baseline scenario's directory), bar (single, baseline
                or none), note (free text)
    lat.t       (lab client) "send_ns latency_ns" per request, CLOCK_MONOTONIC
    lat         the client's latencies, ns, one per line (non-numeric lines are
                ignored, so lat_client's stdout can be used as is; wrk's Lua
                hooks write it too, see wrklat); or
    redis.out   redis-benchmark's output (its percentile distribution is used)
    trace.json  latwhy's NDJSON (-j): slow requests, then one summary line
    client.json (run.sh --trace-client) a second latwhy's NDJSON on the client
    freq.log    for kind=freq: lw_freqinject's "injected cpu=C khz=K ts_ns=T" lines,
                and a "ref_khz=K" line
    cpu.before, cpu.after
                cpusnap around the client run: CPU time that processes outside
                the lab used meanwhile is reported as noise

Ground truth, measured by the client, never by latwhy:

    slow requests    the client's requests slower than slow_ns (1.5 x the
                     baseline's p99)
    extra latency    sum over the slow requests of (latency - baseline median)

A shift row (meta shift=1: irq and idle, whose causes move every request a
little more than they make a tail) scores the mean instead, over every
request up to the side's own p99 (TRIM): the ground truth is the client's
mean latency less the baseline's (extra: that times the client's requests),
latwhy's blame its mean ns of a cause per request less the baseline's (latwhy
reports every request in both: --slow 1us), explained and wrong are those
over the client's shift. Summing (latency - baseline median) over the
requests above a threshold near the median would charge the injected cause
with each request's own spread, which the baseline has as well. Its slow
columns and cause ok are over the requests above slow_ns (1.2 x the baseline
median).

For kind=freq the clock is injected into latwhy only (no cpufreq driver), so
nothing is really slower: the requests scored are latwhy's requests that lie
wholly inside one injected low-clock step, and the ground truth is
sum(run x (1 - f/f_ref)) over them, from latwhy's measured run time.

latwhy's side, from its NDJSON over its slow requests: those slower than
lw_slow_ns, the same threshold less what the client sees outside latwhy's
window in the baseline (pathns), so that a request just over the client's
threshold is one just over latwhy's, not one latwhy never reports:

    share[c]     cause c's ns over the slow requests' total latency (as latwhy's
                 summary computes it; irq includes softirq)
    explained    ns of the injected cause(s) / ground-truth extra, capped at 100%
    wrong        ns of the other causes / ground-truth extra
    cause ok     fraction of latwhy's slow requests whose "cause" is injected,
                 over those beyond the baseline's own count (cause_ok())

Where the client wrote each request's send time (lat.t: lat_client -t, the
lab's scenarios but freq and the shift rows; wrk's Lua hooks, with one
connection), latwhy's slow requests are not
a set chosen by its own threshold but latwhy's record of each slow request
of the client's: the one that ended between its send and its reply (match()).
latwhy reports down to half its threshold there (run.sh), so a request slow
at the client is found whatever latwhy made of it, and a request latwhy
alone found slow is not scored. Explained then takes, per request, no more
of the injected cause(s) than that request's own extra; visible likewise.
Without lat.t two thresholds stand in for the matching: a request just over
one is one just over the other on average, not each time, and where many
requests lie near the threshold the two sets differed by a third.

The bar (single-cause scenarios): cause ok >= 90%, explained >= 80%, wrong <=
10%. Baseline: no cause above 10% of the slow requests' latency. A tail row
of irq or idle (SHIFT_INJECT) with no more slow requests than its baseline
had (scaled to its request count, plus two standard deviations) has no tail
of its own and is not scored: "n/a (no tail)" (base_tail).

Under the table, per scenario: requests seen by latwhy and by the client (a
detection check), "visible" (the slow requests' server-side latency above the
baseline's server median, over the ground-truth extra: the part of the extra
latency that lies inside latwhy's request windows at all), the slow requests'
bucket totals, the top preemptors, the causes named, and how much CPU time
processes outside the lab used during the run (noise from other users).
"""
import bisect
import json
import math
import os
import re
import sys

CAUSES = ("frequency", "irq", "thp", "sched", "idle", "quota", "memory")
# injector -> the cause latwhy should name
INJECT_CAUSE = {"sched": "sched", "irq": "irq", "softirq": "irq", "thp": "thp", "idle": "idle",
                "freq": "frequency", "quota": "quota", "memory": "memory", "reclaim": "memory"}
# quota: latwhy's quota time over the requests it has, against the time the
# kernel itself counted the cgroup throttled over the client's run
# (cpu.stat, cgstat.before/after), within this ratio either way
BAR_KERNEL = 0.15
BAR_CAUSE_OK = 0.90
BAR_EXPLAINED = 0.80
BAR_WRONG = 0.10
BAR_BASELINE_SHARE = 0.10
# Injectors whose cause moves every request a little more than it makes a
# tail (measured: a disk's completions, a halted vCPU's wake-up): their
# scenarios have shift rows, and their tail rows are scored only where the
# injection made slow requests at all (base_tail).
SHIFT_INJECT = {"irq", "idle"}
# shift rows: means over each side's requests up to this quantile of its own
# latency. The host stalls a few requests in a thousand for 2-9 ms, in any run
# and out of latwhy's sight; their count alone moved the lab client's mean by
# +7 to +30 us between runs whose median moved 10-14 us.
TRIM = 0.99

WRK_LUA = """-- written by tools/accuracy/score.py wrklat: every request's latency
-- in ns, one per line, written to $WRK_LAT.<thread> by each wrk thread, and
-- its send time with it ("send_ns latency_ns") to $WRK_LAT.t.<thread>; run
-- wrk with one connection per thread (-t N -c N): the hooks are per thread
-- and do not say which connection a response belongs to. Not wrk's
-- own histogram: wrk corrects it for coordinated omission (stats_correct()
-- adds samples at latency - k x the mean interval below every slow one),
-- which on a closed loop with one connection turns 2% of slow requests into
-- 25% of the distribution. The clock is CLOCK_MONOTONIC through LuaJIT's FFI,
-- read where wrk takes its own: just before the write, and once the
-- response is parsed.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } lw_timespec;
int clock_gettime(int clk, lw_timespec *tp);
]]
local ts = ffi.new("lw_timespec")
local function now_ns()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000000000 + tonumber(ts.tv_nsec)
end
local threads, out, tout, start = 0
setup = function(thread)
  threads = threads + 1
  thread:set("id", threads)
end
init = function(args)
  out = assert(io.open(os.getenv("WRK_LAT") .. "." .. id, "w"))
  tout = assert(io.open(os.getenv("WRK_LAT") .. ".t." .. id, "w"))
end
request = function()
  start = now_ns()
  return wrk.request()
end
response = function(status, headers, body)
  if start then
    local lat = now_ns() - start
    out:write(string.format("%d\\n", lat))
    tout:write(string.format("%d %d\\n", start, lat))
    start = nil
  end
end
"""


def read_meta(d):
    meta = {}
    with open(os.path.join(d, "meta")) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
    return meta


def read_lat(path):
    """Latencies in ns, one per line; anything else (a summary line) skipped."""
    out = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.isdigit():
                out.append(int(s))
    return out


def redis_hist(path):
    """redis-benchmark's "Latency by percentile distribution": cumulative counts
    at latency marks (ms, HdrHistogram). Requests between two marks are put at
    the midpoint; the first mark's at the mark."""
    hist = []
    section = False
    prev_v, prev_c = None, 0
    pat = re.compile(r"^\s*([0-9.]+)% <= ([0-9.]+) milliseconds \(cumulative count (\d+)\)")
    with open(path) as f:
        for line in f:
            if line.startswith("Latency by percentile distribution"):
                section = True
                continue
            if section and not line.strip():
                if hist:
                    break
                continue
            m = pat.match(line) if section else None
            if not m:
                continue
            v = float(m.group(2)) * 1e6
            c = int(m.group(3))
            if c > prev_c:
                at = v if prev_v is None else (prev_v + v) / 2
                hist.append((int(at), c - prev_c))
            prev_v, prev_c = v, c
    return hist


def load_pairs(d):
    """lat_client -t: (send_ns, latency_ns) of every request, or None."""
    p = os.path.join(d, "lat.t")
    if not os.path.exists(p):
        return None
    out = []
    with open(p) as f:
        for line in f:
            a = line.split()
            if len(a) == 2 and a[0].isdigit() and a[1].isdigit():
                out.append((int(a[0]), int(a[1])))
    return out


def match(pairs, reqs):
    """For each client request (send_ns, latency_ns), latwhy's request that
    ended inside it, or None. By the end: latwhy ends a request where its
    reply is sent, which is always between the client's send and the reply's
    arrival; a start can lie before the send (a request that starts at the
    previous reply, README: Accuracy). One connection: at most one each."""
    ends = sorted((r["start_ns"] + r["latency_ns"], i) for i, r in enumerate(reqs))
    keys = [e for e, _ in ends]
    out = []
    for sent, lat in pairs:
        k = bisect.bisect_right(keys, sent)
        out.append(reqs[ends[k][1]] if k < len(keys) and keys[k] <= sent + lat else None)
    return out


def load_client(d):
    """The client's latencies as (value_ns, count) pairs."""
    p = os.path.join(d, "lat")
    if os.path.exists(p):
        vals = read_lat(p)
        return [(v, 1) for v in vals]
    p = os.path.join(d, "redis.out")
    if os.path.exists(p):
        return redis_hist(p)
    return []


def quantile(hist, q):
    """Nearest-rank quantile of (value, count) pairs."""
    hs = sorted(hist)
    n = sum(c for _, c in hs)
    if not n:
        return 0
    rank = max(1, math.ceil(q * n))
    acc = 0
    for v, c in hs:
        acc += c
        if acc >= rank:
            return v
    return hs[-1][0]


def load_trace(d, name="trace.json"):
    """latwhy's NDJSON in d: its request lines and its summary (or None)."""
    reqs, summ = [], None
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return reqs, summ
    with open(p) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("type") == "request":
                reqs.append(o)
            elif o.get("type") == "summary":
                summ = o
    return reqs, summ


def path_ns(d):
    """What a baseline's client sees beyond latwhy's request window, ns: the
    client's median minus latwhy's (the client's send and the delivery to
    the server's socket, the reply's delivery and the client's wake-up). A
    request is slow to the client at slow_ns and to latwhy at slow_ns minus
    this: the same requests, seen from both ends."""
    hist = load_client(d)
    _, summ = load_trace(d)
    if not hist or not summ or not summ.get("p50_ns"):
        return 0
    return max(0, quantile(hist, 0.5) - summ["p50_ns"])


def cause_ns(r, c):
    ns = r["ns"]
    if c == "irq":
        return (ns.get("irq") or 0) + (ns.get("softirq") or 0)
    if c == "idle":  # a polling idle CPU's part is no cause (latwhy's own rule)
        return max(0, (ns.get("idle") or 0) - (ns.get("idle_polled") or 0))
    if c == "memory":  # its four buckets (ABI 3); null where not measured
        return sum(ns.get(b) or 0 for b in ("fault", "reclaim", "memory_high", "fault_wait"))
    return ns.get(c) or 0


def freq_windows(d):
    """[(t0, t1, khz)] of the injected clocks, and the reference kHz."""
    events, ref = [], None
    with open(os.path.join(d, "freq.log")) as f:
        for line in f:
            m = re.search(r"khz=(\d+) ts_ns=(\d+)", line)
            if m:
                events.append((int(m.group(2)), int(m.group(1))))
            m = re.match(r"ref_khz=(\d+)", line)
            if m:
                ref = int(m.group(1))
    events.sort()
    wins = []
    for (t0, khz), (t1, _) in zip(events, events[1:]):
        wins.append((t0, t1, khz))
    return wins, ref


def score(d, cache):
    meta = read_meta(d)
    row = {"name": meta.get("name", os.path.basename(d)), "meta": meta, "dir": d}
    inject = [k for k in meta.get("inject", "-").split(",") if k and k != "-"]
    right = sorted({INJECT_CAUSE[k] for k in inject if k in INJECT_CAUSE})
    row["inject"] = "+".join(inject) or "-"
    row["right"] = right
    row["bar"] = meta.get("bar", "none")
    reqs, summ = load_trace(d)
    row["summ"] = summ
    if summ is None:
        row["error"] = "latwhy wrote no summary"
        return row
    row["requests"] = summ.get("requests", 0)
    slow_ns = int(meta.get("slow_ns", "0") or 0)
    row["slow_ns"] = slow_ns

    base = meta.get("baseline")
    med = None
    if base:
        if base not in cache:
            cache[base] = load_client(base)
        med = quantile(cache[base], 0.5) if cache[base] else None
    row["median"] = med

    background = {c: 0.0 for c in CAUSES}
    if meta.get("kind") == "freq":
        wins, ref = freq_windows(d)
        sel, full, expected = [], [], 0.0
        for r in reqs:
            if r.get("incomplete") or r["ns"].get("frequency") is None:
                continue
            s, e = r["start_ns"], r["start_ns"] + r["latency_ns"]
            for t0, t1, khz in wins:
                if s > t0 and e < t1:
                    if khz < ref:
                        sel.append(r)
                        expected += r["ns"]["run"] * (1 - khz / ref)
                    else:
                        full.append(r)
                    break
        slow = sel
        row["gt_slow"] = len(sel)
        row["extra"] = expected
        # Every request is scored here, not only slow ones: what the other
        # causes cost a request at the reference clock (same run) is their
        # background, not blame for the clock's penalty.
        if full:
            for c in CAUSES:
                if c != "frequency":
                    background[c] = len(sel) * sum(cause_ns(r, c) for r in full) / len(full)
    else:
        hist = load_client(d)
        if not hist:
            row["error"] = "no client latencies"
            return row
        row["gt_n"] = sum(c for _, c in hist)
        gslow = [(v, c) for v, c in hist if v > slow_ns]
        row["gt_slow"] = sum(c for _, c in gslow)
        row["extra"] = sum((v - med) * c for v, c in gslow) if med is not None else None
        lw_slow_ns = int(meta.get("lw_slow_ns", slow_ns) or slow_ns)
        row["lw_slow_ns"] = lw_slow_ns
        slow = [r for r in reqs if r["latency_ns"] > lw_slow_ns]
        pairs = load_pairs(d) if meta.get("shift") != "1" and med is not None else None
        if pairs:
            gp = [p for p in pairs if p[1] > slow_ns]
            m = match(gp, reqs)
            # each slow request's extra beside latwhy's record of it
            row["matched"] = [(lat - med, r) for (_, lat), r in zip(gp, m) if r]
            row["unmatched"] = sum(1 for r in m if r is None)
            row["over_lw"] = sum(1 for _, r in row["matched"] if r["latency_ns"] > lw_slow_ns)
            slow = [r for _, r in row["matched"]]
    row["lw_slow"] = len(slow)
    tot_lat = sum(r["latency_ns"] for r in slow)
    per = {c: sum(cause_ns(r, c) for r in slow) for c in CAUSES}
    row["cause_ns"] = per
    row["share"] = {c: (per[c] / tot_lat if tot_lat else 0.0) for c in CAUSES}
    row["buckets"] = {b: sum((r["ns"].get(b) or 0) for r in slow)
                      for b in ("run", "frequency", "irq", "softirq", "thp", "sched", "idle", "blocked",
                                "idle_polled", "irq_entry", "quota", "fault", "reclaim",
                                "memory_high", "fault_wait", "fault_entry", "steal")}
    row["tot_lat"] = tot_lat
    # How much of the ground truth lies inside latwhy's requests at all: the
    # slow requests' server-side latency above the baseline's server median.
    row["visible"] = None
    if meta.get("kind") != "freq" and base and row.get("extra"):
        _, bsumm = load_trace(base)
        p50 = bsumm.get("p50_ns") if bsumm else None
        if p50 and "matched" in row:
            row["visible"] = sum(min(x, max(0, r["latency_ns"] - p50)) for x, r in row["matched"]) / row["extra"]
        elif p50:
            row["visible"] = sum(max(0, r["latency_ns"] - p50) for r in slow) / row["extra"]
    pre = {}
    for r in slow:
        p = r.get("preempted_by")
        if p:
            pre[p["comm"]] = pre.get(p["comm"], 0) + p["ns"]
    row["preemptors"] = sorted(pre.items(), key=lambda kv: -kv[1])[:3]
    causes = {}
    for r in slow:
        causes[r["cause"]] = causes.get(r["cause"], 0) + 1
    row["causes"] = causes
    if meta.get("shift") == "1" and base:
        shift_scores(row, base, reqs, hist, cache, right)
        verdict(row)
        return row
    if base and cache.get(base):
        base_tail(row, cache[base], bool(inject) and set(inject) <= SHIFT_INJECT)
    if right:
        extra = row["extra"] or 0
        rn = sum(per[c] for c in right)
        if "matched" in row:
            # per request, no more than its own extra: blame beyond one
            # request's extra does not cover another's
            rn = sum(min(x, sum(cause_ns(r, c) for c in right)) for x, r in row["matched"])
        wn = sum(max(0.0, per[c] - background[c]) for c in CAUSES if c not in right)
        row["explained"] = min(1.0, rn / extra) if extra > 0 else None
        row["wrong"] = wn / extra if extra > 0 else None
        row["cause_ok"] = cause_ok(slow, right, row.get("base_slow"))
    kernel_throttled(row, d, reqs)
    kernel_reclaim(row, d, summ)
    verdict(row)
    return row


def read_kv(path):
    try:
        with open(path) as f:
            return dict(l.strip().split("=", 1) for l in f if "=" in l)
    except OSError:
        return None


def kernel_throttled(row, d, reqs):
    """quota scenarios: the cgroup's throttled time by the kernel's count
    (cpu.stat over the client's run), and latwhy's quota time in every
    request it reported. The server is one thread, busy whenever the
    client's next request is in: each throttled stretch lies inside a
    request, and each such request is slow."""
    a, b = read_kv(os.path.join(d, "cgstat.before")), read_kv(os.path.join(d, "cgstat.after"))
    if not a or not b or not a.get("throttled_ns") or not b.get("throttled_ns"):
        return
    row["kernel_ns"] = int(b["throttled_ns"]) - int(a["throttled_ns"])
    row["kernel_periods"] = int(b["nr_throttled"]) - int(a["nr_throttled"])
    row["lw_quota_ns"] = sum(r["ns"].get("quota") or 0 for r in reqs)


def kernel_reclaim(row, d, summ):
    """reclaim scenarios: how often the memory cgroup hit its limit by its
    own count over the client's run (v1 memory.failcnt, v2 memory.events'
    max; memcg.before/after), against the reclaims of the cgroup latwhy
    counted in the server's threads. Each of those follows a charge that
    failed at the limit, so they are at least one and at most that count
    (the writer beside the server hits it too)."""
    a, b = read_kv(os.path.join(d, "memcg.before")), read_kv(os.path.join(d, "memcg.after"))
    if not a or not b or not a.get("limit_hits") or not b.get("limit_hits"):
        return
    row["kernel_hits"] = int(b["limit_hits"]) - int(a["limit_hits"])
    mem = ((summ or {}).get("evidence") or {}).get("memory") or {}
    row["lw_reclaims"] = mem.get("reclaims_memcg") or 0


def base_tail(row, bhist, shift_kind):
    """How many slow requests the row would have without its cause
    (row["base_slow"]), and, for an injector of SHIFT_INJECT (shift_kind),
    did it make slow requests at all?

    The baseline has slow requests of its own (the host stalls a few
    requests in a thousand for 2-9 ms in any run). Scaled to the row's
    request count, their number is what the row would have without its
    cause; a row with no more than that plus two standard deviations
    (Poisson) has no tail of its own to score: its cause moves every
    request a little rather than making some slow (the shift rows score
    that), and scoring its slow requests would grade latwhy on the host's
    stalls. Counts, not extra latency: two stalls more or less move the
    extra by 10 ms, a count by two.
    """
    bn = sum(c for _, c in bhist)
    if not bn or not row.get("gt_n"):
        return
    row["base_slow"] = sum(c for v, c in bhist if v > row["slow_ns"]) * row["gt_n"] / bn
    if shift_kind and row["gt_slow"] <= row["base_slow"] + 2 * math.sqrt(row["base_slow"]):
        row["no_tail"] = True


def mean_client(hist):
    """The client's mean latency over its requests up to its p99 (TRIM)."""
    top = quantile(hist, TRIM)
    body = [(v, c) for v, c in hist if v <= top]
    n = sum(c for _, c in body)
    return sum(v * c for v, c in body) / n if n else None


def mean_causes(reqs):
    """Each cause's mean ns per request over latwhy's requests up to its p99."""
    if not reqs:
        return None
    top = quantile([(r["latency_ns"], 1) for r in reqs], TRIM)
    body = [r for r in reqs if r["latency_ns"] <= top]
    return {c: sum(cause_ns(r, c) for r in body) / len(body) for c in CAUSES}


def shift_scores(row, base, reqs, hist, cache, right):
    """A shift row: the client's mean shift against latwhy's per-request one."""
    bkey = base + "#trace"
    if bkey not in cache:
        cache[bkey] = load_trace(base)[0]
    ms_, mb = mean_client(hist), mean_client(cache[base])
    lw_s, lw_b = mean_causes(reqs), mean_causes(cache[bkey])
    if ms_ is None or mb is None or lw_s is None or lw_b is None or ms_ <= mb:
        row["extra"] = None
        row["explained"] = row["wrong"] = None
        return
    shift = ms_ - mb
    row["extra"] = shift * row["gt_n"]
    delta = {c: lw_s[c] - lw_b[c] for c in CAUSES}
    row["explained"] = min(1.0, max(0.0, sum(delta[c] for c in right)) / shift)
    row["wrong"] = sum(max(0.0, delta[c]) for c in CAUSES if c not in right) / shift
    slow = [r for r in reqs if r["latency_ns"] > row["lw_slow_ns"]]
    row["cause_ok"] = (sum(1 for r in slow if r["cause"] in right) / len(slow)) if slow else None
    row["visible"] = None
    row["shift_ns"] = (shift, {c: delta[c] for c in CAUSES})


def cause_ok(slow, right, base_slow):
    """The share of latwhy's slow requests named for the injected cause(s).

    Over the slow requests beyond the baseline's own (base_slow: its count
    scaled to the row's requests): those are slow without any injection
    (the host's stalls), so no cause is the right one for them, and a cause
    that makes few requests slow (every 50th in memory) was graded on them:
    554 of 669 named memory, 83%, with the baseline's 99 among the 669.
    At most 1: a stall named for the injected cause is counted as right.
    """
    if not slow:
        return None
    n = len(slow) - (base_slow or 0)
    ok = sum(1 for r in slow if r["cause"] in right)
    return min(1.0, ok / n) if n >= 1 else None


def verdict(row):
    bar = row["bar"]
    if bar == "baseline":
        top = max(row["share"].values()) if row["share"] else 0.0
        row["pass"] = top <= BAR_BASELINE_SHARE
        if not row["pass"]:
            c = max(row["share"], key=row["share"].get)
            row["why"] = "%s has %.0f%% of slow-request latency" % (c, 100 * row["share"][c])
    elif bar == "single" and not row.get("no_tail"):
        why = []
        if not row.get("lw_slow"):
            why.append("latwhy saw no slow request")
        if row.get("cause_ok") is None or row["cause_ok"] < BAR_CAUSE_OK:
            why.append("cause ok < 90%")
        if row.get("explained") is None or row["explained"] < BAR_EXPLAINED:
            why.append("explained < 80%")
        if row.get("wrong") is None or row["wrong"] > BAR_WRONG:
            why.append("wrong > 10%")
        if "kernel_ns" in row and (not row["kernel_ns"] or
                                   abs(row["lw_quota_ns"] / row["kernel_ns"] - 1) > BAR_KERNEL):
            why.append("quota not within 15% of the kernel's throttled time")
        if "kernel_hits" in row and not 0 < row["lw_reclaims"] <= row["kernel_hits"]:
            why.append("memcg reclaims not within the cgroup's limit hits")
        row["pass"] = not why
        row["why"] = ", ".join(why)


def pct(x):
    return "n/a" if x is None else "%.0f%%" % (100 * x)


def ms(x):
    return "n/a" if x is None else "%.1f" % (x / 1e6)


def table(rows):
    hdr = ("scenario", "injected", "slow> gt/lw", "slow gt/lw", "extra ms", "freq", "irq", "thp",
           "sched", "idle", "quota", "memory", "explained", "wrong", "cause ok", "bar")
    lines = []
    for r in rows:
        if "error" in r:
            lines.append((r["name"], r["inject"], "", "", "", "", "", "", "", "", "", "", "", "", "",
                          "ERROR: " + r["error"]))
            continue
        sh = r["share"]
        bar = "-"
        if "pass" in r:
            bar = "PASS" if r["pass"] else "MISS (%s)" % r["why"]
        elif r.get("no_tail"):
            bar = "n/a (no tail)"
        slow = "%d/%d" % (r["gt_slow"], r["lw_slow"])
        thr = "run" if r["meta"].get("kind") == "freq" else \
            "%.0f/%.0fus" % (r["slow_ns"] / 1e3, r.get("lw_slow_ns", r["slow_ns"]) / 1e3)
        lines.append((r["name"], r["inject"], thr, slow, ms(r["extra"]),
                      pct(sh["frequency"]), pct(sh["irq"]), pct(sh["thp"]), pct(sh["sched"]),
                      pct(sh["idle"]), pct(sh["quota"]), pct(sh["memory"]), pct(r.get("explained")), pct(r.get("wrong")), pct(r.get("cause_ok")), bar))
    w = [max(len(str(x[i])) for x in [hdr] + lines) for i in range(len(hdr))]
    out = []
    fmt = lambda t: "  ".join(str(x).ljust(w[i]) for i, x in enumerate(t)).rstrip()
    out.append(fmt(hdr))
    out.append(fmt(tuple("-" * n for n in w)))
    for t in lines:
        out.append(fmt(t))
    return out


def details(rows):
    out = []
    for r in rows:
        if "error" in r:
            continue
        b = r["buckets"]
        reqs = "%d" % r.get("requests", 0)
        if r.get("gt_n"):
            reqs += "/%d" % r["gt_n"]
        line = "%-17s requests latwhy/client %s, visible %s; slow-request buckets ms: run %s (freq %s) " \
               "irq %s (entry %s) softirq %s thp %s sched %s idle %s (polled %s) blocked %s quota %s" % (
                   r["name"], reqs, pct(r.get("visible")), ms(b["run"]), ms(b["frequency"]), ms(b["irq"]),
                   ms(b["irq_entry"]), ms(b["softirq"]), ms(b["thp"]), ms(b["sched"]), ms(b["idle"]),
                   ms(b["idle_polled"]), ms(b["blocked"]), ms(b["quota"]))
        if "matched" in r:
            line += "; client-slow requests latwhy has: %d of %d (%d over its threshold)" % (
                len(r["matched"]), len(r["matched"]) + r["unmatched"], r["over_lw"])
        if r.get("base_slow") is not None:
            line += "; slow requests the baseline had, scaled: %.0f%s" % (
                r["base_slow"], " (no tail of its own: not scored)" if r.get("no_tail") else "")
        if r.get("shift_ns"):
            sh, dl = r["shift_ns"]
            line += "; mean per request: client +%.1f us, latwhy %s" % (
                sh / 1e3, " ".join("%s %+.1f" % (c, dl[c] / 1e3) for c in CAUSES))
        if "kernel_ns" in r:
            line += "; throttled by the kernel's count (cpu.stat) %s ms in %d periods, latwhy's quota %s ms" % (
                ms(r["kernel_ns"]), r["kernel_periods"], ms(r["lw_quota_ns"]))
        if "kernel_hits" in r:
            line += "; the memory cgroup at its limit by its own count %d times, latwhy's reclaims of it %d" % (
                r["kernel_hits"], r["lw_reclaims"])
        if r["preemptors"]:
            line += "; preempted by " + ", ".join("%s %s" % (c, ms(n)) for c, n in r["preemptors"])
        if r["causes"]:
            line += "; causes " + ", ".join("%s %d" % kv for kv in sorted(r["causes"].items()))
        nz, top = noise(r["dir"])
        if nz:
            line += "; other processes ran %.0f ms (%s)" % (
                nz, ", ".join("%s %.0f" % kv for kv in top))
        cl = client_side(r["dir"])
        if cl:
            line += "; " + cl
        note = r["meta"].get("note")
        if note:
            line += "; " + note
        out.append(line)
    return out


def client_side(d):
    """run.sh --trace-client: what the client's slow turnarounds (its reply
    in to its next request out) spent their time on, from client.json."""
    if not os.path.exists(os.path.join(d, "client.json")):
        return None
    slow, _ = load_trace(d, "client.json")
    tot = sum(r["latency_ns"] for r in slow)
    b = {}
    pre = {}
    for r in slow:
        for k, v in r["ns"].items():
            if v and k not in ("frequency", "idle_polled", "irq_entry", "fault_entry", "steal"):
                b[k] = b.get(k, 0) + v
        q = r.get("preempted_by")
        if q:
            pre[q["comm"]] = pre.get(q["comm"], 0) + q["ns"]
    line = "client side: %d slow turnarounds, %s ms (%s)" % (
        len(slow), ms(tot), ", ".join("%s %s" % (k, ms(v)) for k, v in sorted(b.items(), key=lambda kv: -kv[1])))
    if pre:
        line += ", waited for " + ", ".join(
            "%s %s" % (c, ms(n)) for c, n in sorted(pre.items(), key=lambda kv: -kv[1])[:4])
    return line


def cpusnap(root):
    """pid, kernel thread?, ticks, comm of every task outside root's tree."""
    procs = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % e) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        f = st[st.rindex(")") + 2:].split()
        # fields after comm: state ppid ... flags(7) ... utime(12) stime(13)
        procs[int(e)] = (int(f[1]), int(f[6]), int(f[11]) + int(f[12]), comm)
    mine = {root}
    changed = True
    while changed:
        changed = False
        for pid, (ppid, _, _, _) in procs.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                changed = True
    for pid, (ppid, flags, ticks, comm) in sorted(procs.items()):
        if pid not in mine:
            print(pid, 1 if flags & 0x200000 else 0, ticks, comm.replace(" ", "_"))


def noise(d):
    """User-space CPU ms outside the lab during the client run, and the top users."""
    try:
        with open(os.path.join(d, "cpu.before")) as f:
            a = {l.split()[0]: l.split() for l in f if l.strip()}
        with open(os.path.join(d, "cpu.after")) as f:
            b = {l.split()[0]: l.split() for l in f if l.strip()}
    except OSError:
        return None, []
    hz = os.sysconf("SC_CLK_TCK")
    per = {}
    for pid, v in b.items():
        if v[1] != "0":
            continue
        t0 = int(a[pid][2]) if pid in a and a[pid][3] == v[3] else 0
        dt = (int(v[2]) - t0) * 1000 / hz
        if dt > 0:
            per[v[3]] = per.get(v[3], 0) + dt
    top = sorted(per.items(), key=lambda kv: -kv[1])[:2]
    return sum(per.values()), top


def main(argv):
    if len(argv) >= 2 and argv[1] == "quantiles" and len(argv) == 3:
        hist = [(v, 1) for v in read_lat(argv[2])]
        n = len(hist)
        print(n, quantile(hist, 0.5), quantile(hist, 0.99), quantile(hist, 0.999))
        return 0 if n else 1
    if len(argv) >= 2 and argv[1] == "hquantiles" and len(argv) == 3:
        d = argv[2]
        hist = load_client(d)
        n = round(sum(c for _, c in hist))
        print(n, quantile(hist, 0.5), quantile(hist, 0.99), quantile(hist, 0.999))
        return 0 if n else 1
    if len(argv) == 3 and argv[1] == "pathns":
        print(path_ns(argv[2]))
        return 0
    if len(argv) == 3 and argv[1] == "cpusnap":
        cpusnap(int(argv[2]))
        return 0
    if len(argv) == 2 and argv[1] == "wrklat":
        sys.stdout.write(WRK_LUA)
        return 0
    if len(argv) >= 3 and argv[1] == "table":
        cache = {}
        rows = [score(d, cache) for d in argv[2:]]
        for line in table(rows):
            print(line)
        print()
        print("ms over latwhy's slow requests (for freq: requests inside a low-clock step):")
        for line in details(rows):
            print("  " + line)
        missed = [r["name"] for r in rows if r.get("pass") is False or "error" in r]
        return 1 if missed else 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
