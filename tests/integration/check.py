"""The integration tests' Python checks (lib.sh's check and pycheck).

    python3 tests/integration/check.py trace TRACE.json   check code on stdin
    python3 tests/integration/check.py run [ARG ...]      script on stdin

trace: TRACE.json is latwhy's NDJSON; the code runs with `reqs` (the request
objects), `summ` (the summary) and `lines` (every object), after the checks
every test makes of a trace (one summary; few incomplete requests; each
request's buckets add up to its latency). run: the script runs as
`python3 - ARG ...` would run it. Either way sys.argv is ["-", ARG ...].

The one line a failure prints, last: "AssertionError: MESSAGE" for an
assertion (what tail -1 of a traceback said), or, for anything else (a null
where the check expected a number, a missing key), the exception with the
line of the check that raised it, never a traceback. num(r, BUCKET) reads a
request's bucket as a number, and a null there fails naming the request.
"""
import json
import sys
import traceback


def req_name(r):
    """The request, as one finds it again in the trace: its thread, its
    start (CLOCK_MONOTONIC ns, as in the trace) and its latency."""
    lat = r.get("latency_ns")
    return "the request of tid %s at start_ns %s (%s)" % (
        r.get("tid"), r.get("start_ns"),
        "%.0f us" % (lat / 1000.0) if isinstance(lat, (int, float)) else "latency %r" % (lat,))


def num(r, k):
    """r["ns"][k], which must be a number: a null (not measured) or anything
    else fails the check, naming the request."""
    v = r["ns"][k]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise AssertionError("%s has ns.%s %s, not a number" % (req_name(r), k, json.dumps(v)))
    return v


# The buckets that are a part of another (frequency of run, idle_polled of
# idle, irq_entry of irq, fault_entry of fault, steal of run): not added to
# the breakdown.
PARTS = ("frequency", "idle_polled", "irq_entry", "fault_entry", "steal")
# The addends a request may have null, not measured: quota, where throttling
# was not read (LW_REQ_QUOTA_KNOWN unset; abi 2 has the bucket, and the BPF
# side does not fill it yet); and memory's four, where faults are not
# traced (LW_REQ_MEMORY_KNOWN unset: --causes without memory, --skip
# page_fault_user, arm64). Such a null is not in the sum; any other null
# fails (num).
UNMEASURED_OK = ("quota", "fault", "reclaim", "memory_high", "fault_wait")


def window_counts(lat_t):
    """The requests that ended inside latwhy's window, less 50 ms at each
    end: counted in latwhy's records (--slow 1us: all of them) and in the
    client's replies (lat_client -t). The same requests, however much the
    traced stretch slowed the client: its mean rate over the whole run is
    no measure of what latwhy's window held (23% apart once)."""
    reqs = G["reqs"]
    lo = min(r["start_ns"] for r in reqs) + 50000000
    hi = max(r["start_ns"] + r["latency_ns"] for r in reqs) - 50000000
    lw = sum(1 for r in reqs if lo <= r["start_ns"] + r["latency_ns"] < hi)
    cl = sum(1 for f in (l.split() for l in open(lat_t))
             if len(f) == 2 and f[0].isdigit() and lo <= int(f[0]) + int(f[1]) < hi)
    return lw, cl


def trace_checks(path):
    """What every test checks of a trace; its objects into G."""
    lines = []
    for n, l in enumerate(open(path), 1):
        if l.strip():
            try:
                lines.append(json.loads(l))
            except ValueError as e:
                raise AssertionError("%s line %d is not JSON (%s): %.80s" % (path, n, e, l.strip()))
    reqs = [o for o in lines if o["type"] == "request"]
    summs = [o for o in lines if o["type"] == "summary"]
    G.update(lines=lines, reqs=reqs, summs=summs)
    assert len(summs) == 1, "expected one summary line, got %d" % len(summs)
    summ = G["summ"] = summs[0]
    inc = G["inc"] = [r for r in reqs if r.get("incomplete")]
    # A missed scheduler transition (rare: up to 0.1% of requests under load)
    # marks every request its thread holds open, and an event loop holds many:
    # in arrival (16 connections), 2 misses in 35678 requests marked 14 of 44
    # slow records. At most 1% of the records, or 0.1% of all requests traced.
    assert len(inc) <= max(0.01 * len(reqs), 0.001 * summ["requests"]), \
        "%d incomplete requests of %d records (%d requests)" % (len(inc), len(reqs), summ["requests"])
    for r in reqs:
        if r.get("handed_off"):  # answered by another thread: no split by design
            continue
        # frequency is a part of run, idle_polled of idle, irq_entry of irq;
        # incomplete ones too
        s = sum(num(r, k) for k in r["ns"]
                if k not in PARTS and not (k in UNMEASURED_OK and r["ns"][k] is None))
        assert abs(s - r["latency_ns"]) <= 0.01 * r["latency_ns"], "breakdown != latency: %s" % r


def fail_line(e, code):
    """The one line that says what failed."""
    last = traceback.format_exception_only(type(e), e)[-1].strip()
    if isinstance(e, AssertionError):
        return last
    where = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "<check>"]
    if where:
        src = code.splitlines()[where[-1].lineno - 1].strip()
        return "%s (check line %d: %s)" % (last, where[-1].lineno, src)
    here = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == __file__]
    return "%s (check.py line %d, in %s)" % (last, here[-1].lineno, here[-1].name) if here else last


G = {"__name__": "__main__", "json": json, "sys": sys, "num": num, "req_name": req_name,
     "window_counts": window_counts}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("trace", "run") or (sys.argv[1] == "trace" and len(sys.argv) != 3):
        print("usage: check.py trace TRACE.json | check.py run [ARG ...] (code on stdin)", file=sys.stderr)
        sys.exit(2)
    mode = sys.argv[1]
    sys.argv = ["-"] + sys.argv[2:]
    code = sys.stdin.read()
    try:
        if mode == "trace":
            trace_checks(sys.argv[1])
        exec(compile(code, "<check>", "exec"), G)
    except Exception as e:  # SystemExit passes: a script's own exit status
        sys.stdout.flush()
        print(fail_line(e, code), file=sys.stderr)
        sys.exit(1)


main()
