#!/usr/bin/env python3
"""Check Kubernetes manifests against the API schema of their kinds.

    python3 tests/k8s/validate.py FILE.yaml ...

Each document's apiVersion and kind name its schema in tests/k8s/schema.json
(extract.py made it from Kubernetes' and prometheus-operator's own
definitions); a kind it does not hold is an error. Checked, as the API
server's schema would: unknown fields (strict decoding), required fields,
types (an integer for an int-or-string or a quantity too), enums. One line
per error, "FILE: KIND NAME: PATH: what", exit 1; nothing and exit 0 when
every document passes. No network, python3 and python3-yaml only.
"""
import json
import os
import sys

import yaml

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema.json")
TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
         "array": (list,), "object": (dict,)}


class Checker:
    def __init__(self, schema):
        self.defs = schema["definitions"]
        self.kinds = schema["kinds"]
        self.errors = []

    def err(self, path, what):
        self.errors.append("%s: %s" % (path or "(top)", what))

    def resolve(self, s):
        while "$ref" in s:
            name = s["$ref"]
            if name not in self.defs:
                raise KeyError(name)
            s = self.defs[name]
        return s

    def type_ok(self, s, v):
        t = s.get("type")
        if s.get("x-kubernetes-int-or-string") or s.get("format") == "int-or-string":
            return isinstance(v, (int, str)) and not isinstance(v, bool)
        if t is None:
            return True
        if t in ("integer", "number") and isinstance(v, bool):
            return False
        return isinstance(v, TYPES[t])

    def check(self, s, v, path, ref=None):
        ref = s.get("$ref", ref)
        s = self.resolve(s)
        # a quantity ("100m", "64Mi") may also be written as a number
        if ref == "io.k8s.apimachinery.pkg.api.resource.Quantity":
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                self.err(path, "a quantity must be a string or a number, not %s" % type(v).__name__)
            return
        if v is None:
            return  # null: the field unset, as the API server reads it
        if "anyOf" in s and "type" not in s:
            if not any(self.type_ok(self.resolve(a), v) for a in s["anyOf"]):
                self.err(path, "%r is none of the types allowed" % (v,))
            return
        if not self.type_ok(s, v):
            self.err(path, "must be %s, not %s %r" % (
                "an integer or a string" if s.get("format") == "int-or-string"
                or s.get("x-kubernetes-int-or-string") else s["type"], type(v).__name__, v))
            return
        if "enum" in s and v not in s["enum"]:
            self.err(path, "%r is not one of %s" % (v, ", ".join(repr(e) for e in s["enum"])))
        if isinstance(v, list) and "items" in s:
            for i, x in enumerate(v):
                self.check(s["items"], x, "%s[%d]" % (path, i))
        if isinstance(v, dict):
            props = s.get("properties")
            addl = s.get("additionalProperties")
            for r in s.get("required", []):
                if r not in v:
                    self.err(path, "required field %s missing" % r)
            for k, x in v.items():
                sub = "%s.%s" % (path, k) if path else k
                if props is not None and k in props:
                    self.check(props[k], x, sub)
                elif isinstance(addl, dict):
                    self.check(addl, x, sub)
                elif props is not None and addl is not True:
                    self.err(sub, "unknown field")

    def document(self, doc):
        if not isinstance(doc, dict):
            self.err("", "a manifest must be a mapping")
            return None
        key = "%s %s" % (doc.get("apiVersion"), doc.get("kind"))
        if key not in self.kinds:
            self.err("", "no schema for apiVersion %r kind %r (tests/k8s/schema.json has %s)"
                     % (doc.get("apiVersion"), doc.get("kind"), ", ".join(sorted(self.kinds))))
            return None
        try:
            self.check({"$ref": self.kinds[key]}, doc, "")
        except KeyError as e:
            self.err("", "definition %s is not in tests/k8s/schema.json: run extract.py again" % e)
        return key


def validate(path, schema=None):
    """The errors of every document in path, each "PATH: KIND NAME: ...". """
    schema = schema or json.load(open(SCHEMA))
    out = []
    try:
        docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
    except yaml.YAMLError as e:
        return ["%s: not YAML: %s" % (path, str(e).replace("\n", " "))]
    if not docs:
        return ["%s: no document" % path]
    for d in docs:
        c = Checker(schema)
        c.document(d)
        name = "%s %s" % (d.get("kind", "?") if isinstance(d, dict) else "?",
                          ((d.get("metadata") or {}).get("name", "?")) if isinstance(d, dict) else "?")
        out += ["%s: %s: %s" % (path, name, e) for e in c.errors]
    return out


def main(argv):
    if not argv:
        print("usage: validate.py FILE.yaml ...", file=sys.stderr)
        return 2
    schema = json.load(open(SCHEMA))
    errors = []
    for p in argv:
        errors += validate(p, schema)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
