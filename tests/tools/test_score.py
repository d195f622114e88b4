#!/usr/bin/env python3
"""Unit tests of tools/accuracy/score.py: the accuracy lab's judge.

Each test writes scenario directories as tools/accuracy/run.sh does (meta,
the client's latencies, latwhy's NDJSON) with synthetic numbers, and checks
the row score() makes of them.
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "accuracy"))
import score  # noqa: E402

US = 1000
N = 10000  # client requests per scenario
SLOW_NS = 1000 * US


def write_scenario(root, name, inject, bar, n_slow, slow_cause=None):
    """N requests of 300 us; n_slow of them 2 ms, which latwhy blames on
    slow_cause (1.5 ms of it), or on nothing traced."""
    d = os.path.join(root, name)
    os.mkdir(d)
    lat = [300 * US] * (N - n_slow) + [2000 * US] * n_slow
    with open(os.path.join(d, "lat"), "w") as f:
        f.write("\n".join(str(v) for v in lat) + "\n")
    with open(os.path.join(d, "trace.json"), "w") as f:
        for i in range(n_slow):
            ns = {b: 0 for b in ("run", "frequency", "irq", "softirq", "thp", "sched", "idle", "blocked")}
            ns["run"] = 500 * US if slow_cause else 2000 * US
            if slow_cause:
                ns[slow_cause] = 1500 * US
            f.write(json.dumps({"type": "request", "start_ns": i * 10 ** 6, "latency_ns": 2000 * US,
                                "ns": ns, "cause": slow_cause or "none"}) + "\n")
        f.write(json.dumps({"type": "summary", "requests": N, "p50_ns": 300 * US}) + "\n")
    base = os.path.join(root, "baseline")
    with open(os.path.join(d, "meta"), "w") as f:
        f.write("name=%s\nkind=lab\ninject=%s\nslow_ns=%d\nlw_slow_ns=%d\nbaseline=%s\nbar=%s\n" %
                (name, inject, SLOW_NS, SLOW_NS, base, bar))
    return d


class TailRows(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        # The baseline has 20 slow requests of its own (host stalls).
        self.base = write_scenario(self.root, "baseline", "-", "baseline", 20)
        self.cache = {}

    def tearDown(self):
        self.tmp.cleanup()

    def row(self, name, inject, n_slow, cause=None):
        d = write_scenario(self.root, name, inject, "single", n_slow, cause)
        r = score.score(d, self.cache)
        return r, score.table([r])[2]

    def test_irq_without_a_tail_is_not_scored(self):
        # 26 slow against the baseline's 20 is within two standard deviations.
        r, line = self.row("irq", "irq", 26)
        self.assertTrue(r.get("no_tail"))
        self.assertNotIn("pass", r)
        self.assertAlmostEqual(r["base_slow"], 20.0)
        self.assertTrue(line.endswith("n/a (no tail)"), line)

    def test_irq_with_a_tail_is_scored(self):
        # 30 > 20 + 2 * sqrt(20): the injection made slow requests.
        r, line = self.row("irq", "irq", 30, "irq")
        self.assertFalse(r.get("no_tail"))
        self.assertTrue(r["pass"], r.get("why"))
        self.assertAlmostEqual(r["explained"], 1500 / 1700, places=3)
        self.assertTrue(line.endswith("PASS"), line)

    def test_irq_with_a_tail_latwhy_misses(self):
        r, line = self.row("irq", "irq", 30)
        self.assertIs(r["pass"], False)
        self.assertTrue(line.endswith("MISS (cause ok < 90%, explained < 80%)"), line)

    def test_other_injectors_are_always_scored(self):
        # thp makes a tail by its nature: no baseline count excuses a row.
        r, line = self.row("thp", "thp", 20)
        self.assertFalse(r.get("no_tail"))
        self.assertIs(r["pass"], False)
        self.assertTrue(line.endswith("MISS (cause ok < 90%, explained < 80%)"), line)

    def test_cause_ok_beyond_the_baselines_own(self):
        # memory's first scored run: 554 of 669 named memory, the baseline's
        # 99 (scaled) slow without any injection among them
        slow = [{"cause": "memory"}] * 554 + [{"cause": "idle"}] * 60 + [{"cause": "none"}] * 55
        self.assertAlmostEqual(score.cause_ok(slow, {"memory"}, 99), 554 / 570)
        self.assertAlmostEqual(score.cause_ok(slow, {"memory"}, None), 554 / 669)
        # stalls named for the injected cause count as right, at most all
        self.assertEqual(score.cause_ok([{"cause": "sched"}] * 30, {"sched"}, 20), 1.0)
        # no request beyond the baseline's: nothing to grade
        self.assertIsNone(score.cause_ok([{"cause": "none"}] * 20, {"thp"}, 20))
        self.assertIsNone(score.cause_ok([], {"thp"}, 0))

    def test_thp_row_graded_beyond_the_baseline(self):
        # 60 slow, all named thp, against the baseline's 20: 60/40, at most 1
        r, line = self.row("thp", "thp", 60, "thp")
        self.assertAlmostEqual(r["base_slow"], 20.0)
        self.assertEqual(r["cause_ok"], 1.0)
        self.assertTrue(line.endswith("PASS"), line)

    def reclaim_row(self, name, reclaims, before, after):
        d = write_scenario(self.root, name, "reclaim", "single", 60, "memory")
        path = os.path.join(d, "trace.json")
        with open(path) as f:
            lines = f.read().splitlines()
        summ = json.loads(lines[-1])
        summ["evidence"] = {"memory": {"reclaims_memcg": reclaims}}
        lines[-1] = json.dumps(summ)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        for file, v in (("memcg.before", before), ("memcg.after", after)):
            with open(os.path.join(d, file), "w") as f:
                f.write("limit_hits=%d\n" % v)
        return score.score(d, self.cache)

    def test_reclaim_held_to_the_cgroups_own_count(self):
        # the group's limit hits bound latwhy's reclaims of it
        bad = "memcg reclaims not within the cgroup's limit hits"
        r = self.reclaim_row("reclaim", 1462, 100, 11823)
        self.assertEqual((r["kernel_hits"], r["lw_reclaims"]), (11723, 1462))
        self.assertNotIn(bad, r["why"])
        # more reclaims than the group ever hit its limit: a wrong count
        r = self.reclaim_row("reclaim-over", 500, 100, 400)
        self.assertIs(r["pass"], False)
        self.assertIn(bad, r["why"])
        # none at all in a group that hit its limit
        r = self.reclaim_row("reclaim-none", 0, 100, 400)
        self.assertIn(bad, r["why"])
        # without the group's counts (no memory controller): not held to them
        d = write_scenario(self.root, "memory", "memory", "single", 60, "memory")
        self.assertNotIn("kernel_hits", score.score(d, self.cache))

    def table_rc(self, name):
        with contextlib.redirect_stdout(io.StringIO()):
            return score.main(["score.py", "table", self.base, os.path.join(self.root, name)])

    def test_only_missed_rows_fail_the_table(self):
        self.row("irq", "irq", 26)
        self.assertEqual(self.table_rc("irq"), 0)
        self.row("thp", "thp", 20)
        self.assertEqual(self.table_rc("thp"), 1)


def rec(start, latency, thp):
    ns = {b: 0 for b in ("run", "frequency", "irq", "softirq", "thp", "sched", "idle", "blocked")}
    ns["thp"] = thp
    ns["run"] = latency - thp
    return {"type": "request", "start_ns": start, "latency_ns": latency, "ns": ns,
            "cause": "thp" if thp else "none"}


class MatchedRows(unittest.TestCase):
    """With lat.t each client-slow request is scored by latwhy's record of it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.cache = {}

    def tearDown(self):
        self.tmp.cleanup()

    def scenario(self, name, inject, slow_idx, records):
        """1000 requests sent 1 ms apart, 300 us each but the slow_idx ones
        (2 ms); records: latwhy's NDJSON request lines."""
        d = os.path.join(self.root, name)
        os.mkdir(d)
        pairs = [(i * 10 ** 6, 2000 * US if i in slow_idx else 300 * US) for i in range(1000)]
        with open(os.path.join(d, "lat"), "w") as f:
            f.write("requests=1000\n" + "\n".join(str(v) for _, v in pairs) + "\n")
        with open(os.path.join(d, "lat.t"), "w") as f:
            f.write("".join("%d %d\n" % p for p in pairs))
        with open(os.path.join(d, "trace.json"), "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
            f.write(json.dumps({"type": "summary", "requests": 1000, "p50_ns": 250 * US}) + "\n")
        base = os.path.join(self.root, "baseline")
        with open(os.path.join(d, "meta"), "w") as f:
            f.write("name=%s\nkind=lab\ninject=%s\nslow_ns=%d\nlw_slow_ns=%d\nbaseline=%s\nbar=%s\n" %
                    (name, inject, SLOW_NS, SLOW_NS - 50 * US, base, "single" if inject != "-" else "baseline"))
        return d

    def test_polled_idle_is_no_cause(self):
        # latwhy's rule: a polling idle CPU's part of idle names no cause
        r = rec(0, 1000, 0)
        r["ns"].update({"idle": 600, "idle_polled": 500})
        self.assertEqual(score.cause_ns(r, "idle"), 100)
        r["ns"]["idle_polled"] = None  # cpu_idle not attached: all of it
        self.assertEqual(score.cause_ns(r, "idle"), 600)

    def test_match_by_end(self):
        pairs = [(1000, 500), (2000, 500), (3000, 500)]
        reqs = [rec(900, 400, 0),    # starts before the send (its last reply), ends inside
                rec(2100, 600, 0),   # ends after the reply arrived: not this request's
                rec(3100, 300, 0)]
        m = score.match(pairs, reqs)
        self.assertIs(m[0], reqs[0])
        self.assertIsNone(m[1])
        self.assertIs(m[2], reqs[2])

    def test_explained_over_the_clients_slow_requests(self):
        self.scenario("baseline", "-", set(), [])
        slow = set(range(0, 400, 10))  # 40 slow requests, 1.7 ms extra each
        recs = []
        for k, i in enumerate(sorted(slow)):
            if k < 10:
                continue  # slow outside latwhy's window: no record of it
            thp = 1800 * US if k == 10 else 1500 * US  # 1.8 ms: more than its extra
            recs.append(rec(i * 10 ** 6 + 50 * US, 1900 * US, thp))
        # latwhy found 20 requests slow that the client did not: not scored
        recs += [rec(i * 10 ** 6 + 10 * US, 1000 * US, 900 * US) for i in range(500, 520)]
        d = self.scenario("thp", "thp", slow, recs)
        r = score.score(d, self.cache)
        self.assertEqual(r["gt_slow"], 40)
        self.assertEqual(r["unmatched"], 10)
        self.assertEqual(len(r["matched"]), 30)
        self.assertEqual(r["lw_slow"], 30)
        self.assertAlmostEqual(r["extra"], 40 * 1700 * US)
        # 29 x 1.5 ms, and 1.7 ms (not 1.8 ms) for the request whose thp exceeds its extra
        self.assertAlmostEqual(r["explained"], (29 * 1500 + 1700) / (40 * 1700), places=6)
        self.assertEqual(r["cause_ok"], 1.0)
        self.assertIs(r["pass"], False)
        self.assertEqual(r["why"], "explained < 80%")
        line = score.details([r])[0]
        self.assertIn("client-slow requests latwhy has: 30 of 40 (30 over its threshold)", line)


if __name__ == "__main__":
    unittest.main()
