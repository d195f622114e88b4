#!/usr/bin/env python3
"""Validate a latwhy report --trace-event file against the Trace Event
Format's rules, and against the report of the same capture:

  check_trace_event.py TRACE.json REPORT.ndjson

- the JSON Object Format: {"traceEvents": [...], "displayTimeUnit": "ms"}
- event kinds: X (complete), C (counter), M (metadata) only, each with the
  fields its kind needs; timestamps and durations in microseconds, >= 0,
  inside the traced span
- slices on one track (pid, tid) nest: none starts inside another and ends
  after it
- every track with slices is named (thread_name), the process is named
- one slice per request line of the report, with its latency and cause
- clock counters ("clock cpu N", MHz) only where the report has a clock,
  and the report's lowest and highest clock among their last values
"""
import json
import sys


def fail(msg):
    print("check_trace_event: %s: %s" % (sys.argv[1], msg))
    sys.exit(1)


def main():
    doc = json.load(open(sys.argv[1]))
    rep = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
    reqs = [o for o in rep if o["type"] == "request"]
    summ = [o for o in rep if o["type"] == "summary"][0]
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not the JSON Object Format")
    if doc.get("displayTimeUnit") not in ("ms", "ns"):
        fail("displayTimeUnit %r" % doc.get("displayTimeUnit"))
    span_us = summ["duration_ns"] / 1e3 + 2e6  # the run's start is before the first record
    named, tracks, procs = set(), {}, set()
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph not in ("X", "C", "M"):
            fail("event kind %r" % ph)
        if not isinstance(e.get("pid"), int):
            fail("no pid: %r" % e)
        if ph == "M":
            if e.get("name") not in ("process_name", "thread_name") or not e["args"].get("name"):
                fail("metadata %r" % e)
            (named if e["name"] == "thread_name" else procs).add((e["pid"], e.get("tid")))
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0 or ts > span_us:
            fail("ts %r outside 0..%d us" % (ts, span_us))
        if ph == "C":
            if not e.get("name") or not e.get("args") or \
                    not all(isinstance(v, (int, float)) for v in e["args"].values()):
                fail("counter %r" % e)
            continue
        dur = e.get("dur")
        if not isinstance(dur, (int, float)) or dur < 0 or not isinstance(e.get("tid"), int):
            fail("slice %r" % e)
        tracks.setdefault((e["pid"], e["tid"]), []).append((ts, ts + dur, e))
    if not procs:
        fail("the process is not named")
    slices = 0
    for key, evs in tracks.items():
        if key not in named:
            fail("track %r has no thread_name" % (key,))
        stack = []
        for b, end, e in sorted(evs, key=lambda x: (x[0], -x[1])):
            while stack and stack[-1] <= b:
                stack.pop()
            if stack and end > stack[-1] + 1e-3:
                fail("slices do not nest on track %r at ts %.3f" % (key, b))
            stack.append(end)
            slices += 1
    if slices != len(reqs):
        fail("%d slices for %d request lines" % (slices, len(reqs)))
    want = sorted((r["latency_ns"], r["cause"] or "handed off") for r in reqs)
    got = sorted((round(e["dur"] * 1e3), e["name"]) for evs in tracks.values() for _, _, e in evs)
    if [(abs(a - c) <= 1, b == d) for (a, b), (c, d) in zip(want, got)] != [(True, True)] * len(want):
        fail("slices do not match the requests' latencies and causes")
    last = {}  # each CPU's clock at its last sample, MHz
    for e in sorted((e for e in doc["traceEvents"] if e["ph"] == "C"), key=lambda e: e["ts"]):
        if e["name"].startswith("clock cpu "):
            last[e["name"]] = e["args"]["MHz"]
    clock = summ["evidence"]["clock"]
    if clock["min_khz"] is None and last:
        fail("clock counters %r, but the report has no frequency data" % sorted(last))
    if clock["min_khz"] is not None and not ({clock["min_khz"] / 1e3, clock["max_khz"] / 1e3} <=
                                             set(last.values())):
        fail("the report's clock %r is not among the counters' %r" % (clock, last))
    print("ok %s: %d slices on %d tracks, %d counters" % (
        sys.argv[1], slices, len(tracks), sum(1 for e in doc["traceEvents"] if e["ph"] == "C")))


main()
