#!/usr/bin/python3
"""latwhy report --html of each golden capture, opened in headless Chromium.

For every tests/captures/*.lwy: the page loads from file:// with no console
error and no network request but the file itself, its charts are there and
their marks hold what `latwhy report --json` of the same capture says (slow
requests per time bin, the histogram's requests, the causes, interrupt rows,
preemptors, findings and their commands), and a full-page screenshot is saved
to build/test-artifacts/report-NAME.png for a person to look at.

Debian's chromium, driven by chromium-driver through python3-selenium
(tools/deps.sh installs them). No root needed; as root, Chromium runs with
--no-sandbox.

  tests/browser/check_html.py [CAPTURE.lwy ...]
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ARTIFACTS = os.path.join(ROOT, "build", "test-artifacts")
CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"


def skip(why):
    print(f"SKIP browser: {why}")
    sys.exit(0)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def report_json(cap):
    out = subprocess.run([os.path.join(ROOT, "latwhy"), "report", "--json", cap],
                         capture_output=True, text=True, check=True).stdout
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    reqs = [l for l in lines if l["type"] == "request"]
    summary = [l for l in lines if l["type"] == "summary"][0]
    return reqs, summary


def report_html(cap, path):
    subprocess.run([os.path.join(ROOT, "latwhy"), "report", cap, "--html", path],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)


def browser(profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    o = Options()
    o.binary_location = CHROMIUM
    for a in ("--headless=new", "--disable-gpu", "--no-first-run",
              "--disable-extensions", "--disable-background-networking",
              "--disable-component-update", "--disable-sync",
              "--window-size=820,1000", "--hide-scrollbars",
              "--user-data-dir=" + profile):
        o.add_argument(a)
    if os.geteuid() == 0:
        o.add_argument("--no-sandbox")  # Chromium refuses root otherwise
    o.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=o)


def network_requests(driver, page):
    """URLs asked for since the log was last read, from the DevTools Network
    events: those of the page, and any request off this machine."""
    urls = []
    for e in driver.get_log("performance"):
        m = json.loads(e["message"])["message"]
        if m.get("method") != "Network.requestWillBeSent":
            continue
        url = m["params"]["request"]["url"]
        if m["params"].get("documentURL") == page or not url.startswith(("chrome:", "file:")):
            urls.append(url)
    return urls


def marks(driver, kind):
    """Each mark of a kind: its data-* attributes and its rendered box."""
    return driver.execute_script(
        """
        return Array.from(document.querySelectorAll('.mark.' + arguments[0])).map(
            e => { const r = e.getBoundingClientRect();
                   return Object.assign({w: r.width, h: r.height}, e.dataset); });
        """, kind)


def expected_bins(reqs, t0, width, nbins):
    bins = {}
    for r in reqs:
        end = r["start_ns"] + r["latency_ns"]
        b = max(0, end - t0) // width if end > t0 else 0
        b = min(b, nbins - 1)
        bins[b] = bins.get(b, 0) + 1
    return bins


def check_timeline(driver, reqs):
    svg = driver.find_elements("css selector", "#timeline svg")
    got = marks(driver, "slow-bin")
    if not reqs:
        check(not got, "slow-bin marks without slow requests")
        return 0
    check(len(svg) == 1, "no timeline chart")
    d = svg[0]
    t0 = int(d.get_attribute("data-t0-ns"))
    width = int(d.get_attribute("data-bin-ns"))
    nbins = int(d.get_attribute("data-bins"))
    want = expected_bins(reqs, t0, width, nbins)
    have = {int(m["bin"]): int(m["count"]) for m in got}
    check(have == want, f"slow-bin marks {sorted(have.items())} != the JSON's "
          f"requests per bin {sorted(want.items())}")
    check(all(m["h"] > 0 and m["w"] > 0 for m in got), "a slow-bin mark is not drawn")
    return len(got)


def check_hist(driver, summary):
    got = marks(driver, "hist-bin")
    total = sum(int(m["count"]) for m in got)
    check(total == summary["requests"],
          f"histogram holds {total} requests, the JSON {summary['requests']}")
    if summary["threshold_ns"] is not None:
        th = driver.find_elements("css selector", "#latency .threshold")
        check(len(th) == 1 and int(th[0].get_attribute("data-ns")) == summary["threshold_ns"],
              "the slow threshold is not marked at the JSON's threshold_ns")
    return len(got)


def check_causes(driver, summary):
    got = {m["cause"]: int(m["ns"]) for m in marks(driver, "cause-share")}
    want = {c: v["ns"] for c, v in summary["causes"].items() if v["ns"]}
    for c, ns in want.items():
        check(got.get(c) == ns, f"cause {c}: mark {got.get(c)} ns, JSON {ns} ns")
    for c in got:
        check(c in want or c in ("run", "blocked"), f"a cause-share mark for {c}")
    if summary["ns"]["blocked"]:
        check(got.get("blocked") == summary["ns"]["blocked"], "blocked share")
    return len(got)


def check_irqs(driver, summary):
    got = marks(driver, "irq-vec")
    by = {(m["kind"], m["vec"]): int(m["ns"]) for m in got}
    ev = summary["evidence"]
    names = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
             "HRTIMER", "RCU", "NET_RX_BACKLOG", "KSOFTIRQD"]
    # the JSON's rows are per CPU, the page's per vector over CPUs
    for q in ev["irqs"]:
        ns = by.get(("irq", str(q["irq"])))
        check(ns is not None and ns >= q["ns"], f"IRQ {q['irq']}: {ns} against {q['ns']}")
    for q in ev["softirqs"]:
        ns = by.get(("softirq", str(names.index(q["vec"]))))
        check(ns is not None and ns >= q["ns"], f"softirq {q['vec']}: {ns} against {q['ns']}")
    cpus = marks(driver, "irq-cpu")
    if ev["irqs"] or ev["softirqs"]:
        check(cpus, "no per-CPU interrupt rows")
    return len(got) + len(cpus)


def check_preempt(driver, summary):
    ev = summary["evidence"]
    got = marks(driver, "preempt")
    check([int(m["pid"]) for m in got] == [p["pid"] for p in ev["preempted_by"]],
          "preempt marks are not the JSON's preempted_by")
    check([m["tracer"] == "1" for m in got] == [p["tracer"] for p in ev["preempted_by"]],
          "the tracer is not named as in the JSON")
    waits = marks(driver, "slow-wait")
    check([int(m["pid"]) for m in waits] == [w["pid"] for w in ev["slow_waits"]],
          "slow-wait marks are not the JSON's slow_waits")
    return len(got) + len(waits)


def check_clock(driver, summary):
    got = marks(driver, "clock-cpu")
    nodata = driver.find_elements("css selector", "#no-freq")
    if summary["evidence"]["clock"]["min_khz"] is None:
        check(nodata and nodata[0].text == "no frequency data" and not got,
              "no clock measured, yet no \"no frequency data\"")
        check("0 MHz" not in driver.find_element("css selector", "#clock").text,
              "an unmeasured clock shown as a number")
    else:
        check(got, "a measured clock without its line")
    return len(got)


def check_findings(driver, summary):
    arts = driver.find_elements("css selector", "#findings article.finding")
    check(len(arts) == len(summary["findings"]),
          f"{len(arts)} findings on the page, {len(summary['findings'])} in the JSON")
    pre = "\n".join(p.text for p in driver.find_elements("css selector", "pre.cmd.fix"))
    for f in summary["findings"]:
        for c in f["fix"]:
            check(c in pre, f"fix command not in a <pre>: {c}")
    return len(arts)


def screenshot(driver, name):
    h = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(820, h + 40)
    path = os.path.join(ARTIFACTS, f"report-{name}.png")
    driver.save_screenshot(path)
    return path


def check_capture(driver, cap, tmp):
    name = os.path.basename(cap)[:-4]
    page = os.path.join(tmp, name + ".html")
    reqs, summary = report_json(cap)
    report_html(cap, page)
    url = "file://" + page
    driver.get_log("performance")  # what an earlier page left
    driver.set_window_size(820, 1000)
    driver.get(url)
    check(driver.title.startswith("latwhy report:"), f"title {driver.title!r}")
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    check(not errors, f"console: {errors}")
    other = [u for u in network_requests(driver, url) if u != url]
    check(not other, f"network requests: {other}")
    check(not driver.find_elements("css selector", "script, img, link, iframe, object"),
          "an element that loads something")
    n = {
        "slow-bin": check_timeline(driver, reqs),
        "hist-bin": check_hist(driver, summary),
        "cause-share": check_causes(driver, summary),
        "irq": check_irqs(driver, summary),
        "preempt": check_preempt(driver, summary),
        "clock-cpu": check_clock(driver, summary),
        "finding": check_findings(driver, summary),
    }
    shot = screenshot(driver, name)
    marks_said = " ".join(f"{k} {v}" for k, v in n.items())
    return f"{name}: {len(reqs)} slow requests; marks: {marks_said}; screenshot {shot}"


def main():
    caps = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "tests/captures/*.lwy")))
    if not os.access(CHROMIUM, os.X_OK):
        skip(f"no {CHROMIUM} (tools/deps.sh installs chromium)")
    if not os.access(DRIVER, os.X_OK):
        skip(f"no {DRIVER} (tools/deps.sh installs chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        skip(f"no selenium for {sys.executable} (tools/deps.sh installs python3-selenium)")
    os.makedirs(ARTIFACTS, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="latwhy-browser.")
    fails = 0
    driver = browser(os.path.join(tmp, "profile"))
    driver.get("about:blank")  # the browser's own start-up requests, drained per page
    try:
        for cap in caps:
            try:
                print("ok   " + check_capture(driver, cap, tmp))
            except (Failed, subprocess.CalledProcessError) as e:
                print(f"FAIL {cap}: {e}")
                fails += 1
    finally:
        driver.quit()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"browser: {len(caps) - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
