#!/usr/bin/env python3
"""What tests/integration/85-k8s.sh runs, read from the DaemonSet itself:

    python3 tests/k8s/pod_spec.py deploy/kubernetes/daemonset.yaml

prints shell exports: K8S_ARGS (the container's args, one a line, its
--listen port as PORT), K8S_CAPS (setpriv's form: +bpf,+perfmon), K8S_DROP
(ALL or not), K8S_RO_ROOT, K8S_NNP (no_new_privs), K8S_UID, K8S_HOSTPID,
K8S_MOUNTS (one a line: "hostpath HOST PATH ro|rw recursive|top" or
"emptydir PATH rw SIZE"), K8S_MEM_LIMIT (bytes) and K8S_CPU_LIMIT (millicores).
"""
import shlex
import sys

import yaml

UNITS = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1000, "M": 10 ** 6, "G": 10 ** 9}


def bytes_of(q):
    q = str(q)
    for u, m in UNITS.items():
        if q.endswith(u):
            return int(float(q[: -len(u)]) * m)
    return int(q)


def milli(q):
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def main():
    ds = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"][0]
    spec = ds["spec"]["template"]["spec"]
    c = spec["containers"][0]
    sc = c["securityContext"]
    vols = {v["name"]: v for v in spec["volumes"]}
    args = [a.rsplit(":", 1)[0] + ":PORT" if i and c["args"][i - 1] == "--listen" else a
            for i, a in enumerate(c["args"])]
    mounts = []
    for m in c["volumeMounts"]:
        v = vols[m["name"]]
        if "hostPath" in v:
            rec = "recursive" if m.get("recursiveReadOnly") in ("Enabled", "IfPossible") else "top"
            mounts.append("hostpath %s %s %s %s" % (v["hostPath"]["path"], m["mountPath"],
                                                   "ro" if m.get("readOnly") else "rw", rec))
        elif "emptyDir" in v:
            mounts.append("emptydir %s rw %s" % (m["mountPath"], v["emptyDir"].get("sizeLimit", "64Mi")))
        else:
            sys.exit("pod_spec.py: volume %s: only hostPath and emptyDir are run" % m["name"])
    out = {
        "K8S_ARGS": "\n".join(args),
        "K8S_LISTEN": c["args"][c["args"].index("--listen") + 1],
        "K8S_CAPS": ",".join("+" + x.lower() for x in sc["capabilities"]["add"]),
        "K8S_DROP": ",".join(sc["capabilities"]["drop"]),
        "K8S_RO_ROOT": "1" if sc.get("readOnlyRootFilesystem") else "0",
        "K8S_NNP": "0" if sc.get("allowPrivilegeEscalation", True) else "1",
        "K8S_UID": str(sc.get("runAsUser", 0)),
        "K8S_HOSTPID": "1" if spec.get("hostPID") else "0",
        "K8S_MOUNTS": "\n".join(mounts),
        "K8S_MEM_LIMIT": str(bytes_of(c["resources"]["limits"]["memory"])),
        "K8S_CPU_LIMIT": str(milli(c["resources"]["limits"]["cpu"])),
        "K8S_PROBE": c["livenessProbe"]["httpGet"]["path"],
    }
    for k, v in out.items():
        print("export %s=%s" % (k, shlex.quote(v)))


if __name__ == "__main__":
    main()
