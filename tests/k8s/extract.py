#!/usr/bin/env python3
"""Make tests/k8s/schema.json, the fixture validate.py checks manifests with.

    python3 tests/k8s/extract.py SWAGGER.json PODMONITOR_CRD.yaml > tests/k8s/schema.json

SWAGGER.json: Kubernetes' api/openapi-spec/swagger.json (the official
OpenAPI v2 definitions). PODMONITOR_CRD.yaml: prometheus-operator's
example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml.
Kept: the definitions reachable from the kinds the manifests use
(DaemonSet, Namespace, ServiceAccount), and the PodMonitor's schema
(inline), with what validation needs (type, format, properties, required,
items, additionalProperties, enum, $ref, x-kubernetes-int-or-string) and
no descriptions. The sources are named in the fixture's "source" (the
environment's LW_K8S_SOURCE, LW_CRD_SOURCE), run by hand once per update;
no network.
"""
import json
import os
import sys

import yaml

KINDS = {"apps/v1 DaemonSet": "io.k8s.api.apps.v1.DaemonSet",
         "v1 Namespace": "io.k8s.api.core.v1.Namespace",
         "v1 ServiceAccount": "io.k8s.api.core.v1.ServiceAccount"}
# Kubernetes' v2 definitions carry no enum (the v3 spec has them, from the
# Go API's +enum types): those of the fields the manifests set, with their
# values as k8s.io/api's core/v1 and apps/v1 types.go declare them.
ENUMS = {
    ("io.k8s.api.core.v1.Container", "imagePullPolicy"): ["Always", "IfNotPresent", "Never"],
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): ["SCTP", "TCP", "UDP"],
    ("io.k8s.api.core.v1.HostPathVolumeSource", "type"):
        ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
         "FileOrCreate", "Socket"],
    ("io.k8s.api.apps.v1.DaemonSetUpdateStrategy", "type"): ["OnDelete", "RollingUpdate"],
    ("io.k8s.api.core.v1.SeccompProfile", "type"): ["Localhost", "RuntimeDefault", "Unconfined"],
    ("io.k8s.api.core.v1.HTTPGetAction", "scheme"): ["HTTP", "HTTPS"],
    ("io.k8s.api.core.v1.Toleration", "operator"): ["Equal", "Exists"],
    ("io.k8s.api.core.v1.VolumeMount", "recursiveReadOnly"): ["Disabled", "Enabled", "IfPossible"],
    ("io.k8s.api.core.v1.Toleration", "effect"): ["NoExecute", "NoSchedule", "PreferNoSchedule"],
}
KEEP = ("type", "format", "properties", "required", "items", "additionalProperties",
        "enum", "$ref", "x-kubernetes-int-or-string", "anyOf", "allOf", "oneOf")


def strip(s, refs):
    """s with the keys validation reads only; the $refs it holds into refs."""
    if not isinstance(s, dict):
        return s
    out = {}
    for k in KEEP:
        if k not in s:
            continue
        v = s[k]
        if k == "$ref":
            name = v.rsplit("/", 1)[1]
            refs.append(name)
            out[k] = name
        elif k == "properties":
            out[k] = {p: strip(ps, refs) for p, ps in sorted(v.items())}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            out[k] = strip(v, refs)
        elif k in ("anyOf", "allOf", "oneOf"):
            out[k] = [strip(x, refs) for x in v]
        else:
            out[k] = v
    return out


def main():
    swagger = json.load(open(sys.argv[1]))
    crd = yaml.safe_load(open(sys.argv[2]))
    defs, todo = {}, list(KINDS.values())
    while todo:
        name = todo.pop()
        if name in defs:
            continue
        refs = []
        defs[name] = strip(swagger["definitions"][name], refs)
        todo += refs
    for (name, prop), values in ENUMS.items():
        assert "enum" not in defs[name]["properties"][prop], (name, prop)
        defs[name]["properties"][prop]["enum"] = values
    kinds = dict(KINDS)
    for v in crd["spec"]["versions"]:
        if not v.get("served"):
            continue
        key = "%s/%s %s" % (crd["spec"]["group"], v["name"], crd["spec"]["names"]["kind"])
        name = "crd.%s.%s.%s" % (crd["spec"]["group"], v["name"], crd["spec"]["names"]["kind"])
        refs = []
        defs[name] = strip(v["schema"]["openAPIV3Schema"], refs)
        assert not refs, "a CRD schema is inline"
        # a custom resource's metadata is ObjectMeta, as for every kind
        defs[name]["properties"]["metadata"] = {"$ref": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
        kinds[key] = name
    out = {
        "source": {
            "kubernetes": os.environ.get("LW_K8S_SOURCE", sys.argv[1]),
            "podmonitor": os.environ.get("LW_CRD_SOURCE", sys.argv[2]),
            "enums": "the Kubernetes kinds' enums: extract.py's ENUMS (k8s.io/api +enum types)",
            "made_by": "tests/k8s/extract.py",
        },
        "kinds": kinds,
        "definitions": dict(sorted(defs.items())),
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
