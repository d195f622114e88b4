#!/usr/bin/env python3
"""serve's HTTP endpoint under abuse (user/export/http.c), without root or BPF.

    python3 tests/tools/test_http.py build/tests/lw_http_serve

Starts lw_http_serve (the exporter and its endpoint, no tracer) on loopback
and checks, exactly, what it answers: GET and HEAD of /metrics and /, 503
for /healthz with no tracer, 404 for other paths, 405 for other methods, 400 for a malformed request, 431 for a
64 KiB header. Then, from ten other loopback addresses, opens 1000
connections at once: slowloris clients trickling a header line a second,
idle ones, garbage and 64 KiB headers. Meanwhile scrapes from 127.0.0.1 must
each succeed with a whole exposition within a generous 5 s (not blocked),
every one of them; and afterwards the server is alive and answers. The one
bound asserted is that timeout: no test here times anything finer. Last,
/healthz against a stand-in tracing loop that ticks, then stops ticking,
then ends (healthz()).
"""
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

SCRAPES = 20  # during the flood, one every 0.4 s
ATTACK_IPS = ["127.0.0.%d" % i for i in range(2, 12)]
CONNS = 1000
TIMEOUT = 5.0  # per scrape: "not blocked"
FAILS = []


def ok(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": " + detail))
    if not cond:
        FAILS.append(name)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def exchange(port, data, src="127.0.0.1", timeout=TIMEOUT):
    """Send data, read until the server closes or the response is whole:
    (status, headers dict, body) or (None, {}, b"") when it closed first."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                 source_address=(src, 0))
    try:
        s.sendall(data)
        buf = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            buf += chunk
            head, sep, body = buf.partition(b"\r\n\r\n")
            if sep:
                hdrs = dict(l.split(": ", 1) for l in head.decode().split("\r\n")[1:] if ": " in l)
                n = int(hdrs.get("Content-Length", "-1"))
                if n >= 0 and len(body) >= n:
                    break
    finally:
        s.close()
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1."):
        return None, {}, b""
    lines = head.decode().split("\r\n")
    hdrs = dict(l.split(": ", 1) for l in lines[1:] if ": " in l)
    return int(lines[0].split()[1]), hdrs, body


def get(port, method="GET", path="/metrics", extra=b""):
    return exchange(port, b"%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n" %
                    (method.encode(), path.encode(), extra))


def valid_metrics(status, hdrs, body):
    """A whole exposition: 200, its content type, every line a comment or a
    sample, the families the exporter always has."""
    if status != 200 or not hdrs.get("Content-Type", "").startswith("text/plain; version=0.0.4"):
        return "status %s, type %s" % (status, hdrs.get("Content-Type"))
    text = body.decode()
    if not text.endswith("\n") or int(hdrs.get("Content-Length", -1)) != len(body):
        return "truncated: %d bytes" % len(body)
    for fam in ("latwhy_requests_total", "latwhy_build_info", "latwhy_events_dropped_total"):
        if "# TYPE %s " % fam not in text:
            return "no " + fam
    for l in text.splitlines():
        if l and not l.startswith("#") and len(l.rsplit(" ", 1)) != 2:
            return "bad line " + l
    return ""


def refusals(port):
    r = [get(port)[0], get(port, "HEAD")[0], get(port, "GET", "/")[0],
         get(port, "GET", "/other")[0], get(port, "GET", "/metrics/x")[0],
         get(port, "POST")[0], get(port, "DELETE", "/")[0], get(port, "PUT", "/other")[0],
         get(port, "GET", "/healthz")[0], get(port, "POST", "/healthz")[0]]
    ok("GET, HEAD /metrics; GET /; /other, /metrics/x; POST, DELETE /, PUT /other;"
       " GET /healthz with no tracer (503), POST /healthz",
       r == [200, 200, 200, 404, 404, 405, 405, 404, 503, 405], str(r))
    st, hdrs, body = get(port, "GET", "/healthz")
    ok("/healthz with no tracer says so", body == b"no tracer: serve has not started one\n",
       repr(body))
    st, hdrs, body = get(port, "POST")
    ok("405 names what is allowed", hdrs.get("Allow") == "GET, HEAD", str(hdrs))
    st, hdrs, body = get(port, "GET", "/")
    ok("/ links to /metrics", b'href="/metrics"' in body, body[:80].decode(errors="replace"))
    st = exchange(port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n")[0]
    ok("garbage (a TLS hello): closed unanswered", st is None, str(st))
    st = exchange(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")[0]
    ok("a header line without a colon: 400", st == 400, str(st))
    st = get(port, extra=b"X-Big: " + b"a" * 65536 + b"\r\n")[0]
    ok("a 64 KiB header: 431", st == 431, str(st))


class Flood:
    """CONNS connections from ATTACK_IPS, held until stop(): kinds in turn."""

    KINDS = ("slowloris", "slowloris", "slowloris", "slowloris", "slowloris",
             "slowloris", "idle", "idle", "garbage", "bigheader")

    def __init__(self, port):
        self.port, self.socks, self.refused, self.lock = port, [], 0, threading.Lock()
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(10)]

    def start(self):
        for t in self.threads:
            t.start()

    def run(self, n):
        mine = []
        for i in range(n, CONNS, 10):
            kind = self.KINDS[i % len(self.KINDS)]
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT,
                                             source_address=(ATTACK_IPS[i % len(ATTACK_IPS)], 0))
                if kind == "slowloris":
                    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                elif kind == "garbage":
                    s.sendall(os.urandom(512))
                elif kind == "bigheader":
                    s.sendall(b"GET /metrics HTTP/1.1\r\nX-Big: " + b"b" * 65536 + b"\r\n\r\n")
                mine.append((kind, s))
            except OSError:
                with self.lock:
                    self.refused += 1
        with self.lock:
            self.socks += mine
        # a header line a second on each slowloris connection, until stopped
        k = 0
        while not self.done.wait(1.0):
            for kind, s in mine:
                if kind == "slowloris":
                    try:
                        s.send(b"X-%d: y\r\n" % k)
                    except OSError:
                        pass
            k += 1
        for kind, s in mine:
            s.close()

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join()


def healthz(binary):
    """/healthz judged on real time: a stand-in tracing loop publishing every
    100 ms answers 200 "ok"; its ticks stopped (SIGUSR1, a hung loop), 503
    within 3 intervals and a little, with the reason; the tracer said ended
    (SIGUSR2), 503 "tracer stopped". /metrics answers throughout."""
    port = free_port()
    srv = subprocess.Popen([binary, str(port), "100"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        line = srv.stdout.readline().decode().strip()
        if line != "serving %d" % port:
            ok("lw_http_serve PORT 100 started", False, repr(line))
            return
        time.sleep(0.3)
        r = [get(port, "GET", "/healthz") for _ in range(10)]
        ok("ticking every 100 ms: /healthz 200 \"ok\" (10 of 10)",
           [(x[0], x[2]) for x in r] == [(200, b"ok\n")] * 10, str(r[:2]))
        st, hdrs, body = get(port, "HEAD", "/healthz")
        ok("HEAD /healthz: 200", st == 200, str(st))
        srv.send_signal(signal.SIGUSR1)
        t0, st, body = time.time(), 200, b""
        while st == 200 and time.time() - t0 < 3:
            st, hdrs, body = get(port, "GET", "/healthz")
            time.sleep(0.02)
        took = time.time() - t0
        # 3 intervals (0.3 s) after the last tick, which came up to 0.1 s
        # before the signal; the upper bound is generous for a loaded CI
        ok("ticks stopped: 503 after 0.2 to 1.5 s (%.2f s)" % took,
           st == 503 and 0.2 <= took <= 1.5, "%s %.2f s" % (st, took))
        ok("its reason: ticks stale", body.startswith(b"ticks stale: the last one 0.")
           and body.endswith(b" s ago, the interval 0.1 s\n") and body.count(b"\n") == 1,
           repr(body))
        ok("/metrics still answers", valid_metrics(*get(port)) == "")
        srv.send_signal(signal.SIGUSR2)
        time.sleep(0.2)
        st, hdrs, body = get(port, "GET", "/healthz")
        ok("tracer ended: 503 \"tracer stopped: every target exited\"",
           (st, body) == (503, b"tracer stopped: every target exited\n"), "%s %r" % (st, body))
    finally:
        srv.terminate()
        srv.wait(10)


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 4096) if hard != resource.RLIM_INFINITY else 4096
    if want < CONNS + 100:
        print("SKIP test_http.py: RLIMIT_NOFILE hard limit %d, below %d" % (hard, CONNS + 100))
        return 0
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    port = free_port()
    srv = subprocess.Popen([sys.argv[1], str(port)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        line = srv.stdout.readline().decode().strip()
        if line != "serving %d" % port:
            print("FAIL lw_http_serve did not start: %r %s" % (line, srv.stderr.read().decode()))
            return 1
        refusals(port)

        fds = lambda: len(os.listdir("/proc/%d/fd" % srv.pid))
        base, most = fds(), 0
        flood = Flood(port)
        flood.start()
        good, bad = 0, []
        for i in range(SCRAPES):
            time.sleep(0.4)
            most = max(most, fds())
            try:
                why = valid_metrics(*get(port))
            except OSError as e:
                why = "%s" % e
            if why:
                bad.append(why)
            else:
                good += 1
        flood.stop()
        held = len(flood.socks)
        print("     %d connections taken, %d refused at connect or first send; the server's"
              " open files %d before, at most %d during" % (held, flood.refused, base, most))
        # LW_HTTP_MAX_PER_IP (8) from each, and the scrape in flight
        ok("the server held at most 8 connections per address", most - base <= 8 * len(ATTACK_IPS) + 1,
           "%d files more than before" % (most - base))
        ok("%d connections from %d addresses: every connect answered (held or refused)"
           % (CONNS, len(ATTACK_IPS)), held + flood.refused == CONNS,
           "%d held, %d refused" % (held, flood.refused))
        ok("%d scrapes from another address during it, each whole within %.0f s"
           % (SCRAPES, TIMEOUT), good == SCRAPES, "%d of %d; %s" % (good, SCRAPES, bad[:3]))
        ok("alive after it", srv.poll() is None, "exited %s" % srv.returncode)
        ok("and scraped after it", valid_metrics(*get(port)) == "")
        refusals(port)
    finally:
        srv.terminate()
        try:
            rc = srv.wait(10)
        except subprocess.TimeoutExpired:
            srv.kill()
            rc = srv.wait()
    ok("stopped by SIGTERM, exit 0", rc == 0, "exit %s" % rc)
    err = srv.stderr.read().decode()
    ok("nothing on stderr", err == "", err[:200])
    healthz(sys.argv[1])
    if FAILS:
        return 1
    print("test_http.py: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
