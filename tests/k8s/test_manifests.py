#!/usr/bin/env python3
"""deploy/kubernetes/, checked without a cluster (make unit; no root):

- every manifest against the API schema of its kind (validate.py,
  schema.json), and broken copies of them refused, each with its one line:
  the check can fail;
- what issue 31 asks of the DaemonSet, read from it: hostPID, CAP_BPF and
  CAP_PERFMON added and ALL dropped, a read-only root, /sys and the log
  trees mounted read only, the liveness probe on /healthz, requests and
  limits, serve --pods, the scrape annotations; the PodMonitor selecting
  its pods and port;
- the Containerfile: a Debian slim base, the .deb make deb builds, and an
  ENTRYPOINT the package installs;
- the dashboard: JSON Grafana reads, each panel's queries over families
  serve exports (docs/serve.md's table) or is about to (ISSUE31_PENDING).
"""
import copy
import json
import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import validate  # noqa: E402

D = os.path.join(ROOT, "deploy/kubernetes")
FAILS = []
# families the dashboard reads that no build on main exports yet: issue 31's
# "who took the CPU", being added on another branch
ISSUE31_PENDING = {"latwhy_preempted_seconds_total"}


def ok(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": " + detail))
    if not cond:
        FAILS.append(name)


def docs(path):
    return [d for d in yaml.safe_load_all(open(path)) if d]


def broken(tmp, name, docs_, edit):
    """A copy of docs_ with edit applied to it, written to tmp/name: its errors."""
    d = copy.deepcopy(docs_)
    edit(d)
    p = os.path.join(tmp, name)
    yaml.safe_dump_all(d, open(p, "w"))
    return [e.split(": ", 1)[1] for e in validate.validate(p)]


def schema_checks(tmp):
    for f in ("daemonset.yaml", "podmonitor.yaml"):
        errs = validate.validate(os.path.join(D, f))
        ok("%s: valid against the API schema of its kinds" % f, errs == [], "; ".join(errs[:5]))
    ds = docs(os.path.join(D, "daemonset.yaml"))
    pm = docs(os.path.join(D, "podmonitor.yaml"))
    c = lambda d: d[2]["spec"]["template"]["spec"]["containers"][0]  # noqa: E731
    pre = "DaemonSet latwhy: spec.template.spec.containers[0]"
    cases = [
        ("a misspelt field", ds, lambda d: c(d)["securityContext"].__setitem__(
            "capabilitis", c(d)["securityContext"].pop("capabilities")),
         [pre + ".securityContext.capabilitis: unknown field"]),
        ("a string for an integer", ds, lambda d: c(d)["ports"][0].__setitem__("containerPort", "9462"),
         [pre + ".ports[0].containerPort: must be integer, not str '9462'"]),
        ("a container without its name", ds, lambda d: c(d).pop("name"),
         [pre + ": required field name missing"]),
        ("an enum's wrong value", ds, lambda d: c(d).__setitem__("imagePullPolicy", "Sometimes"),
         [pre + ".imagePullPolicy: 'Sometimes' is not one of 'Always', 'IfNotPresent', 'Never'"]),
        ("a boolean for a list", ds, lambda d: c(d)["securityContext"]["capabilities"].__setitem__("add", True),
         [pre + ".securityContext.capabilities.add: must be array, not bool True"]),
        ("a map for a quantity", ds, lambda d: c(d)["resources"]["limits"].__setitem__("memory", {"Mi": 128}),
         [pre + ".resources.limits.memory: a quantity must be a string or a number, not dict"]),
        ("a DaemonSet without a selector", ds, lambda d: d[2]["spec"].pop("selector"),
         ["DaemonSet latwhy: spec: required field selector missing"]),
        ("a kind the schema has not", ds, lambda d: d[2].__setitem__("apiVersion", "apps/v1beta2"),
         ["DaemonSet latwhy: (top): no schema for apiVersion 'apps/v1beta2' kind 'DaemonSet' "
          "(tests/k8s/schema.json has apps/v1 DaemonSet, monitoring.coreos.com/v1 PodMonitor, "
          "v1 Namespace, v1 ServiceAccount)"]),
        ("a PodMonitor's unknown field", pm, lambda d: d[0]["spec"].__setitem__("endpoints", []),
         ["PodMonitor latwhy: spec.endpoints: unknown field"]),
        ("a PodMonitor relabelling's wrong action", pm,
         lambda d: d[0]["spec"]["podMetricsEndpoints"][0]["relabelings"][0].__setitem__("action", "rename"),
         ["PodMonitor latwhy: spec.podMetricsEndpoints[0].relabelings[0].action: 'rename' is not one of "
          "'replace', 'Replace', 'keep', 'Keep', 'drop', 'Drop', 'hashmod', 'HashMod', 'labelmap', "
          "'LabelMap', 'labeldrop', 'LabelDrop', 'labelkeep', 'LabelKeep', 'lowercase', 'Lowercase', "
          "'uppercase', 'Uppercase', 'keepequal', 'KeepEqual', 'dropequal', 'DropEqual'"]),
        ("a PodMonitor without its spec", pm, lambda d: d[0].pop("spec"),
         ["PodMonitor latwhy: (top): required field spec missing"]),
    ]
    for i, (name, base, edit, want) in enumerate(cases):
        got = broken(tmp, "broken-%d.yaml" % i, base, edit)
        ok("refused: %s" % name, got == want, "got %s" % got)
    # and the command line's exit status and one line
    p = os.path.join(tmp, "broken-0.yaml")
    r = subprocess.run([sys.executable, os.path.join(HERE, "validate.py"), p], capture_output=True, text=True)
    ok("validate.py on a broken manifest: exit 1, one line", r.returncode == 1 and
       r.stdout.count("\n") == 1, "exit %d, %r" % (r.returncode, r.stdout))


def daemonset_checks():
    ds = [d for d in docs(os.path.join(D, "daemonset.yaml")) if d["kind"] == "DaemonSet"][0]
    t = ds["spec"]["template"]
    spec = t["spec"]
    ctr = spec["containers"][0]
    sc = ctr["securityContext"]
    ok("hostPID", spec.get("hostPID") is True)
    ok("no service account token", spec.get("automountServiceAccountToken") is False)
    ok("capabilities: add exactly BPF, PERFMON; drop ALL",
       sorted(sc["capabilities"]["add"]) == ["BPF", "PERFMON"] and sc["capabilities"]["drop"] == ["ALL"],
       str(sc["capabilities"]))
    ok("read-only root, no privilege escalation, not privileged",
       sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False
       and sc.get("privileged") is False)
    vols = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in ctr["volumeMounts"]}
    for path in ("/sys", "/var/log/pods", "/var/log/containers"):
        m = mounts.get(path)
        ok("%s: the node's, read only" % path, m is not None and m.get("readOnly") is True
           and vols[m["name"]].get("hostPath", {}).get("path") == path, str(m))
    ok("no writable hostPath", all(m.get("readOnly") for m in ctr["volumeMounts"]
                                   if "hostPath" in vols[m["name"]]))
    cap = [m for m in ctr["volumeMounts"] if "emptyDir" in vols[m["name"]]]
    ok("the captures' emptyDir, writable, at /var/lib/latwhy",
       [m["mountPath"] for m in cap] == ["/var/lib/latwhy"] and not cap[0].get("readOnly"))
    lp = ctr.get("livenessProbe", {}).get("httpGet", {})
    ok("liveness probe: GET /healthz on the metrics port", lp.get("path") == "/healthz"
       and lp.get("port") == "metrics" and ctr["ports"][0]["name"] == "metrics")
    r = ctr.get("resources", {})
    ok("requests and limits: cpu and memory", all(k in r.get(w, {}) for w in ("requests", "limits")
                                                 for k in ("cpu", "memory")), str(r))
    ok("args: serve --pods, listening on the metrics port",
       ctr["args"][:2] == ["serve", "--pods"] and ctr["args"][ctr["args"].index("--listen") + 1]
       .endswith(":%d" % ctr["ports"][0]["containerPort"]), str(ctr["args"]))
    a = t["metadata"]["annotations"]
    ok("scrape annotations", a.get("prometheus.io/scrape") == "true" and
       a.get("prometheus.io/port") == str(ctr["ports"][0]["containerPort"]) and
       a.get("prometheus.io/path") == "/metrics", str(a))
    pm = docs(os.path.join(D, "podmonitor.yaml"))[0]
    ok("PodMonitor: selects the DaemonSet's pods, in its namespace, on its port",
       pm["spec"]["selector"]["matchLabels"].items() <= t["metadata"]["labels"].items() and
       pm["metadata"]["namespace"] == ds["metadata"]["namespace"] and
       pm["spec"]["podMetricsEndpoints"][0]["port"] == ctr["ports"][0]["name"])
    return ds


def containerfile_checks():
    lines = open(os.path.join(D, "Containerfile")).read()
    lines = re.sub(r"\\\n", " ", lines).splitlines()
    ins = [l.split(None, 1) for l in lines if l.strip() and not l.startswith("#")]
    frm = [a for k, a in ins if k == "FROM"]
    ok("Containerfile: FROM a Debian slim base (bookworm or trixie)",
       len(frm) == 1 and re.fullmatch(r"(docker\.io/library/)?debian:(bookworm|trixie)-slim", frm[0]), str(frm))
    ver = subprocess.run(["dpkg-parsechangelog", "-l", os.path.join(ROOT, "tools/debian/changelog"), "-S",
                          "Version"], capture_output=True, text=True).stdout.strip()
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
    deb = "latwhy_%s_%s.deb" % (ver, arch)
    cp = [a.split() for k, a in ins if k == "COPY"]
    import fnmatch
    ok("COPY: the .deb make deb builds (%s)" % deb, len(cp) == 1 and fnmatch.fnmatch(deb, cp[0][0]), str(cp))
    ep = [json.loads(a) for k, a in ins if k == "ENTRYPOINT"]
    ok("ENTRYPOINT: /usr/bin/latwhy, which the package installs (tests/install/check.sh)",
       ep == [["/usr/bin/latwhy"]] and "/usr/bin/latwhy" in open(os.path.join(ROOT, "tests/install/check.sh")).read())
    return deb


def dashboard_checks():
    d = json.load(open(os.path.join(D, "dashboard.json")))
    serve = open(os.path.join(ROOT, "docs/serve.md")).read()
    known = set(re.findall(r"^\| `(latwhy_[a-z_]+)` \|", serve, re.M)) | {"latwhy_pod_info", "latwhy_pods_over_bound"}
    exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
    ok("dashboard: %d panels, every one with a query" % len(d["panels"]),
       all(p.get("targets") for p in d["panels"]) and len({p["id"] for p in d["panels"]}) == len(d["panels"]))
    fams = set()
    for e in exprs:
        for m in re.findall(r"\b(latwhy_[a-z_]+)", e):
            fams.add(re.sub(r"_(bucket|count|sum)$", "", m))
    unknown = sorted(f for f in fams if f not in known and f not in ISSUE31_PENDING)
    ok("dashboard: every family it reads is exported (docs/serve.md) or pending (%s)"
       % ", ".join(sorted(ISSUE31_PENDING)), unknown == [], str(unknown))
    want = {"latwhy_slow_requests_total", "latwhy_request_duration_seconds", "latwhy_preempted_seconds_total",
            "latwhy_thp_enabled_info", "latwhy_irqbalance_running"}
    ok("dashboard: slow requests by cause, p99, who took the CPU, the node's drift",
       want <= fams, str(sorted(want - fams)))


def main():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        schema_checks(tmp)
    daemonset_checks()
    containerfile_checks()
    dashboard_checks()
    if FAILS:
        print("test_manifests.py: %d failed" % len(FAILS))
        return 1
    print("test_manifests.py: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
