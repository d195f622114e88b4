#!/usr/bin/env python3
"""report.py - the arithmetic and the tables of tools/bench/run.sh.

    report.py progcost DIR    table 1 from DIR/{progs.a,progs.b,perf}.json,
                              DIR/owners.tsv and DIR/secs
    report.py servers FILE    table 2 from the A/B results (TSV)
    report.py self FILE       table 3 from latwhy's own-cost samples (TSV)
    report.py progids PERF PID        ids of the programs PID has attached
    report.py progsum PROGS_A PROGS_B IDS...   run_time_ns delta over IDS
    report.py mapbytes PROGS MAPS IDS...       map memory of those programs
    report.py busy SECS ROOT          CPU used by processes outside ROOT's tree
    report.py procsnap FILE; report.py busydiff A B ROOT   the same between snapshots

Every table command appends one-line verdicts ("VERDICT <target>\t<text>")
to the file named by --verdicts. Nothing here fails the bench: missing data
prints as "-".
"""
import argparse
import json
import os
import sys

# latwhy's tracepoints, in the order the tables list them.
TRACEPOINTS = [
    "sched_switch", "sched_wakeup", "sched_waking", "sched_wakeup_new", "cpu_idle", "irq_handler_entry",
    "irq_handler_exit", "call_function_entry", "call_function_single_entry", "softirq_entry", "softirq_exit", "sys_enter", "sys_exit", "sock_recv_length",
    "sock_send_length", "tcp_sendmsg_locked", "sk_data_ready", "netif_rx", "netif_receive_skb",
    "mm_khugepaged_scan_pmd",
    "mm_collapse_huge_page", "mm_compaction_begin", "mm_compaction_end", "cpu_frequency",
]
# bpftool's program type -> the attach kind a floor of the same kind has
KIND = {"raw_tracepoint": "raw_tp", "tracing": "tp_btf", "tracepoint": "tracepoint"}
HANDLER_TARGET = 3.0    # x the empty program on the same tracepoint
THROUGHPUT_TARGET = 0.97  # live mode keeps >= 97% of the throughput
SELF_TARGET = 0.01      # latwhy's process: < 1% of a core
MIN_EVENTS = 100        # fewer events than this: printed, not judged


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def progs_by_id(path):
    return {p["id"]: p for p in load_json(path)}


def verdict(args, target, text):
    if args.verdicts:
        with open(args.verdicts, "a") as f:
            f.write("VERDICT %s\t%s\n" % (target, text))


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


# ---- table 1 -----------------------------------------------------------------


def progcost(args):
    d = args.dir
    a, b = progs_by_id(os.path.join(d, "progs.a.json")), progs_by_id(os.path.join(d, "progs.b.json"))
    perf = load_json(os.path.join(d, "perf.json"))
    secs = float(open(os.path.join(d, "secs")).read().strip() or 0)
    owners = {}
    order = []
    with open(os.path.join(d, "owners.tsv")) as f:
        for line in f:
            pid, label, role = line.rstrip("\n").split("\t")
            owners[int(pid)] = (label, role)
            order.append(label)

    rows = {}  # tracepoint -> list of rows
    for e in perf:
        pid, pid_tp = e.get("pid"), e.get("tracepoint")
        if pid not in owners or e.get("prog_id") not in b:
            continue
        label, role = owners[pid]
        pb, pa = b[e["prog_id"]], a.get(e["prog_id"], {})
        cnt = pb.get("run_cnt", 0) - pa.get("run_cnt", 0)
        ns = pb.get("run_time_ns", 0) - pa.get("run_time_ns", 0)
        miss = pb.get("recursion_misses", 0) - pa.get("recursion_misses", 0)
        kind = KIND.get(pb.get("type"), pb.get("type"))
        if role == "floor" and pb.get("name", "").startswith("fl_"):
            role = "lead"
        rows.setdefault(pid_tp, []).append({
            "label": label, "role": role, "name": pb.get("name", "?"), "kind": kind,
            "events": cnt, "ns": ns / cnt if cnt else None, "miss": miss,
        })

    print("1. Per-event cost of each BPF program: bpf_stats run time / run count over the "
          "same %.0f s, same events" % secs)
    print("   (ns/event includes the stats' own clock reads, as the floor's does; "
          "x floor = / empty raw_tp, x kind = / empty program of the same kind)")
    hdr = "%-22s %-42s %-10s %10s %9s %8s %8s" % (
        "tracepoint", "program", "kind", "events/s", "ns/event", "x floor", "x kind")
    print(hdr)
    print("-" * len(hdr))
    role_rank = {"lead": 0, "floor": 1, "latwhy": 2, "alt": 3, "peer": 4}
    judged = []
    tps = [tp for tp in TRACEPOINTS if tp in rows] + sorted(tp for tp in rows if tp not in TRACEPOINTS)
    for tp in tps:
        rs = sorted(rows[tp], key=lambda r: (role_rank.get(r["role"], 3),
                                             order.index(r["label"]) if r["label"] in order else 99,
                                             r["kind"]))
        floors = {r["kind"]: r["ns"] for r in rs if r["role"] == "floor"}
        first = True
        for r in rs:
            if r["role"] == "lead":
                prog = "lead: empty %s, attached first" % r["kind"]
            elif r["role"] == "floor":
                prog = "floor: empty %s" % r["kind"]
            else:
                prog = "%s: %s" % (r["label"], r["name"])
            xf = ratio(r["ns"], floors.get("raw_tp"))
            xk = ratio(r["ns"], floors.get(r["kind"]))
            note = ""
            if r["miss"]:
                note = "  (%d recursion misses)" % r["miss"]
            rate = r["events"] / secs if secs else None
            print("%-22s %-42s %-10s %10s %9s %8s %8s%s" % (
                tp[:22] if first else "", prog[:42], r["kind"],
                fmt(rate, ".0f" if rate is None or rate >= 10 else ".2f"), fmt(r["ns"], ".1f"),
                fmt(xf, ".2f"), fmt(xk, ".2f"), note))
            first = False
            if r["role"] == "latwhy":
                judged.append((tp, r, floors.get(r["kind"]), xk, floors.get("raw_tp"), xf))
        print()

    # Verdict: each latwhy handler against the empty program of its own kind.
    missed, met, unjudged = [], [], []
    for tp, r, fl, xk, flr, xf in judged:
        if r["events"] < MIN_EVENTS or xk is None:
            unjudged.append("%s (%d events)" % (r["name"], r["events"]))
        elif xk > HANDLER_TARGET:
            missed.append("%s %.1fx (%.0f vs %.0f ns %s floor; %.1fx raw_tp)" % (
                r["name"], xk, r["ns"], fl, r["kind"], xf if xf else 0))
        else:
            met.append((xk, r["name"]))
    worst = max(met) if met else None
    text = ""
    if missed:
        text = "MISSED: " + "; ".join(missed)
        if worst:
            text += "; the other %d met (worst %s %.1fx)" % (len(met), worst[1], worst[0])
    elif met:
        text = "met: all %d judged within %.0fx (worst %s %.1fx)" % (
            len(met), HANDLER_TARGET, worst[1], worst[0])
    else:
        text = "not measured (no latwhy program saw %d events)" % MIN_EVENTS
    if unjudged:
        text += "; too few events to judge: " + ", ".join(unjudged)
    verdict(args, "every handler within %.0fx the empty program on its tracepoint" % HANDLER_TARGET,
            text)


# ---- table 2 -----------------------------------------------------------------


def servers(args):
    res = {}  # (server, test) -> mode -> {round: (rps, p99)}
    modes = args.modes.split(",")
    tests = []
    with open(args.file) as f:
        for line in f:
            server, test, mode, rnd, rps, p99 = line.rstrip("\n").split("\t")
            key = (server, test)
            if key not in res:
                tests.append(key)
            res.setdefault(key, {}).setdefault(mode, {})[int(rnd)] = (
                float(rps) if rps != "-" else None, float(p99) if p99 != "-" else None)
    base = modes[0]
    titles = args.titles.split(",") if args.titles else modes
    print("2. End-to-end cost on real servers: %s" % args.setup)
    print("   (%s: mean over its runs, +- half their spread; other modes: the median of the "
          "per-round ratios to the %s run of the same round, [min-max])" % (titles[0], titles[0]))
    col = 30
    hdr = "%-20s %-12s" % ("server / test", "metric") + "".join("%-*s" % (col, t) for t in titles)
    print(hdr)
    print("-" * len(hdr))
    worst = {}
    for key in tests:
        by = res[key]
        for mi, metric in ((0, "throughput"), (1, "p99")):
            unit, spec = ("req/s", ".0f") if mi == 0 else ("ms", ".3f")
            bvals = {r: v[mi] for r, v in by.get(base, {}).items() if v[mi]}
            noise = half_range(list(bvals.values()))
            cells = ["%s %s (n=%d%s)" % (fmt(mean(list(bvals.values())), spec), unit, len(bvals),
                                         ", +-%.1f%%" % (noise * 100) if noise is not None else "")]
            for m in modes[1:]:
                vals = {r: v[mi] for r, v in by.get(m, {}).items() if v[mi]}
                rr = sorted(vals[r] / bvals[r] for r in vals if r in bvals)
                med = median(rr)
                spread = " [%.3f-%.3f]" % (rr[0], rr[-1]) if len(rr) > 1 else ""
                cells.append("%s%s" % (fmt(med, ".3f"), spread))
                if mi == 0 and med is not None:
                    worst.setdefault(m, []).append((med, "%s %s" % key, noise))
            print("%-20s %-12s" % ("%s %s" % key if mi == 0 else "", metric) +
                  "".join("%-*s" % (col, c) for c in cells))
    print()
    for m, t in zip(modes[1:], titles[1:]):
        if args.judge and m not in args.judge.split(","):
            continue
        w = worst.get(m)
        what = "%s costs the servers at most %.0f%% of throughput" % (
            t, (1 - THROUGHPUT_TARGET) * 100)
        if not w:
            verdict(args, what, "not measured")
            continue
        def lost(rows):
            return ", ".join("%s %+.1f%%%s" % (name, (r - 1) * 100,
                                                " (its runs without latwhy: +-%.1f%%)" % (n * 100)
                                                if n is not None else "")
                             for r, name, n in rows)
        missed = [x for x in w if x[0] < THROUGHPUT_TARGET]
        met = [x for x in w if x[0] >= THROUGHPUT_TARGET]
        if not missed:
            verdict(args, what, "met: %s" % lost(met))
        else:
            verdict(args, what, "MISSED: %s%s%s" % (lost(missed),
                                                    "; met: " + lost(met) if met else "",
                                                    floor_note(worst, missed, args.floor)))


def floor_note(worst, missed, floor):
    """What attaching alone costs the tests a mode missed on: the empty
    programs on the same tracepoints, in the same rounds. A target below it
    cannot be met by cheaper handlers, only by fewer program runs."""
    f = {name: r for r, name, _ in worst.get(floor, [])} if floor else {}
    cut = [(f[name], name) for _, name, _ in missed if name in f]
    if not cut:
        return ""
    return "; empty programs alone: " + ", ".join("%s %+.1f%%" % (n, (r - 1) * 100)
                                                  for r, n in cut)


def half_range(xs):
    """Half the spread of xs around their mean, as a fraction: the noise of
    the runs without latwhy, beside which a cost is judged."""
    if len(xs) < 2:
        return None
    return (max(xs) - min(xs)) / 2 / mean(xs)


def median(xs):
    if not xs:
        return None
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def mean(xs):
    return sum(xs) / len(xs) if xs else None


# ---- table 3 -----------------------------------------------------------------


def self_cost(args):
    print("3. latwhy's own cost: the latwhy process while it traces (steady state, after attach)")
    hdr = "%-38s %8s %9s %8s %10s %10s %8s %10s %9s" % (
        "run", "traced s", "CPU ms/s", "% core", "peak RSS", "records/s", "dropped",
        "BPF % core", "maps MiB")
    print(hdr)
    print("-" * len(hdr))
    worst = None
    with open(args.file) as f:
        for line in f:
            label, secs, cpu_ns, hwm_kb, records, dropped, bpf_ns, map_bytes = \
                line.rstrip("\n").split("\t")
            secs = float(secs)
            cpu = float(cpu_ns) / secs / 1e9 if cpu_ns != "-" and secs else None
            bpf = float(bpf_ns) / secs / 1e9 if bpf_ns != "-" and secs else None
            rec = float(records) / secs if records != "-" and secs else None
            print("%-38s %8.1f %9s %8s %10s %10s %8s %10s %9s" % (
                label[:38], secs, fmt(cpu * 1e3 if cpu is not None else None, ".2f"),
                fmt(cpu * 100 if cpu is not None else None, ".2f"),
                fmt(float(hwm_kb) / 1024 if hwm_kb != "-" else None, ".1f") + " MiB",
                fmt(rec, ".1f"), dropped, fmt(bpf * 100 if bpf is not None else None, ".2f"),
                fmt(float(map_bytes) / 2**20 if map_bytes != "-" else None, ".1f")))
            if cpu is not None and (worst is None or cpu > worst[0]):
                worst = (cpu, label)
    print("   CPU: user+system time of every latwhy thread (/proc/PID/task/*/schedstat); "
          "peak RSS: VmHWM; records: ring-buffer slow-request records it received;")
    print("   BPF % core: its programs' run time (bpf_stats) per second, spent in the traced "
          "tasks' and interrupts' context, not in latwhy's process; maps: their memlock bytes.")
    print()
    if worst is None:
        verdict(args, "latwhy itself under %.0f%% of a core" % (SELF_TARGET * 100), "not measured")
    else:
        verdict(args, "latwhy itself under %.0f%% of a core" % (SELF_TARGET * 100),
                "%s: %.2f%% of a core at most (%s)" % (
                    "met" if worst[0] < SELF_TARGET else "MISSED", worst[0] * 100, worst[1]))


# ---- helpers for run.sh ------------------------------------------------------


def progids(args):
    """PID's attached programs; with --tp, only those on that tracepoint, and
    with --progs, only the raw_tp ones (BPF_PROG_TEST_RUN runs no tp_btf)."""
    raw = None
    if args.progs:
        raw = {i for i, p in progs_by_id(args.progs).items() if p.get("type") == "raw_tracepoint"}
    ids = sorted({e["prog_id"] for e in load_json(args.perf)
                  if e.get("pid") == args.pid
                  and (not args.tp or e.get("tracepoint") == args.tp)
                  and (raw is None or e["prog_id"] in raw)})
    print(" ".join(str(i) for i in ids))


def progsum(args):
    a, b = progs_by_id(args.a), progs_by_id(args.b)
    print(sum(b.get(i, {}).get("run_time_ns", 0) - a.get(i, {}).get("run_time_ns", 0)
              for i in args.ids))


def mapbytes(args):
    progs = progs_by_id(args.progs)
    maps = {m["id"]: m for m in load_json(args.maps)}
    ids = {mid for i in args.ids for mid in progs.get(i, {}).get("map_ids", [])}
    print(sum(maps.get(m, {}).get("bytes_memlock", 0) for m in ids))


def proc_snapshot():
    """Every process's CPU ticks, comm and parent, and when they were read."""
    import time
    procs = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        procs[pid] = [comm, int(fields[1]), int(fields[11]) + int(fields[12])]
    return {"t": time.monotonic(), "procs": procs}


def others_use(a, b, root):
    """CPU share of all CPUs used between snapshots a and b by processes that
    are neither descendants of root nor kernel threads: 'PCT (comm PCT, ...)'."""
    procs = b["procs"]

    def ours(pid):
        seen = 0
        while pid and seen < 64:
            if pid == root:
                return True
            if pid == 2:  # kthreadd: kernel threads (ours cause most of theirs)
                return True
            p = procs.get(str(pid))
            pid = p[1] if p else 0
            seen += 1
        return False

    hz = os.sysconf("SC_CLK_TCK")
    secs = max(b["t"] - a["t"], 1e-3)
    use = {}
    for pid, (comm, ppid, t) in procs.items():
        if pid in a["procs"] and int(pid) != 2 and not ours(int(pid)):
            use[comm] = use.get(comm, 0) + t - a["procs"][pid][2]
    total = sum(use.values()) / hz / secs / (os.cpu_count() or 1) * 100
    top = sorted(use.items(), key=lambda x: -x[1])[:4]
    names = ", ".join("%s %.0f%%" % (c, v / hz / secs * 100) for c, v in top if v)
    return "%.0f%%%s" % (total, " (%s)" % names if names else "")


def procsnap(args):
    with open(args.file, "w") as f:
        json.dump(proc_snapshot(), f)


def busydiff(args):
    print(others_use(load_json(args.a) or {"t": 0, "procs": {}},
                     load_json(args.b) or {"t": 1, "procs": {}}, args.root))


def busy(args):
    import time
    a = proc_snapshot()
    time.sleep(args.secs)
    print(others_use(a, proc_snapshot(), args.root))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--verdicts")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("progcost")
    p.add_argument("dir")
    p = sub.add_parser("servers")
    p.add_argument("file")
    p.add_argument("--modes", required=True)
    p.add_argument("--titles")
    p.add_argument("--judge", help="modes the throughput target applies to")
    p.add_argument("--floor", help="the mode of empty programs, quoted where a judged mode misses")
    p.add_argument("--setup", default="")
    p = sub.add_parser("self")
    p.add_argument("file")
    p = sub.add_parser("progids")
    p.add_argument("perf")
    p.add_argument("pid", type=int)
    p.add_argument("--tp")
    p.add_argument("--progs", help="bpftool prog show JSON: keep the raw_tp programs")
    p = sub.add_parser("progsum")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("ids", type=int, nargs="*")
    p = sub.add_parser("mapbytes")
    p.add_argument("progs")
    p.add_argument("maps")
    p.add_argument("ids", type=int, nargs="*")
    p = sub.add_parser("busy")
    p.add_argument("secs", type=float)
    p.add_argument("root", type=int)
    p = sub.add_parser("procsnap")
    p.add_argument("file")
    p = sub.add_parser("busydiff")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("root", type=int)
    args = ap.parse_args()
    {"progcost": progcost, "servers": servers, "self": self_cost, "progids": progids,
     "progsum": progsum, "mapbytes": mapbytes, "busy": busy,
     "procsnap": procsnap, "busydiff": busydiff}[args.cmd](args)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a bench prints; it does not fail
        print("report.py: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(0)
