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

    def table_rc(self, name):
        with contextlib.redirect_stdout(io.StringIO()):
            return score.main(["score.py", "table", self.base, os.path.join(self.root, name)])

    def test_only_missed_rows_fail_the_table(self):
        self.row("irq", "irq", 26)
        self.assertEqual(self.table_rc("irq"), 0)
        self.row("thp", "thp", 20)
        self.assertEqual(self.table_rc("thp"), 1)


if __name__ == "__main__":
    unittest.main()
