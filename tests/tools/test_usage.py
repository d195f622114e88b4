#!/usr/bin/env python3
"""Every command's --help against its documentation, and the README's
synopsis and length.

For each command: the synopsis `latwhy CMD --help` prints is the one in
docs/usage.md's Synopsis (whitespace aside); every option the help lists is
documented in the command's section of the docs; every option the section
documents as a bullet is in the help. Run from the repository root, after
the build (./latwhy).
"""
import re
import subprocess
import sys

USAGE = open("docs/usage.md").read()
SERVE = open("docs/serve.md").read()


def section(text, start, end):
    i = text.index(start)
    j = text.index(end, i + len(start)) if end else len(text)
    return text[i:j]


# command: its docs section (the options' bullets), where else its options
# may be told (the help's options must be somewhere in it)
SECTIONS = {
    "trace": (section(USAGE, "## Live tracing", "## Node check"),) * 2,
    "check": (section(USAGE, "## Node check", "## Captures"),) * 2,
    "record": (section(USAGE, "### Options of `record`", "### Options of `report`"),) * 2,
    "report": (section(USAGE, "### Options of `report`", "### `diff`"),) * 2,
    "diff": (section(USAGE, "### `diff`", "### Examples"),) * 2,
    "serve": (section(SERVE, "## Usage", "## Cheap by design"), SERVE),
}

fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL " + msg)


def squash(s):
    return " ".join(s.split())


def synopses():
    block = section(USAGE, "## Synopsis", "## Live tracing")
    block = block[block.index("```") + 3 : block.rindex("```")]
    entries, cur = [], None
    for line in block.splitlines():
        if line.startswith("latwhy "):
            cur = [line]
            entries.append(cur)
        elif line.startswith(" ") and cur is not None:
            cur.append(line)
        else:
            cur = None
    return {squash(" ".join(e)) for e in entries}


def help_of(cmd):
    p = subprocess.run(["./latwhy", cmd, "--help"], capture_output=True, text=True)
    if p.returncode != 0 or p.stderr:
        fail(f"{cmd}: --help exit {p.returncode}, stderr {p.stderr!r}")
    return p.stdout


def help_synopsis(text):
    lines = text.splitlines()
    out = []
    for line in lines:
        if line.startswith("Usage: ") or (out and line.startswith(" ")):
            out.append(line[len("Usage: ") :] if line.startswith("Usage: ") else line)
        elif out:
            break
    return squash(" ".join(out))


def help_options(text):
    """--long names of the help's option lines (the words before the
    description column)."""
    opts = set()
    for line in text.splitlines():
        if not re.match(r"^ {2,}-", line):
            continue
        words = re.split(r"\s{2,}", line.strip())[0]
        opts.update(re.findall(r"--[a-z][a-z-]*", words))
    return opts


def doc_bullets(text):
    opts = set()
    for m in re.finditer(r"^- `([^`]*)`", text, re.M):
        opts.update(re.findall(r"--[a-z][a-z-]*", m.group(1)))
    return opts


syn = synopses()
for cmd, (sec, anywhere) in SECTIONS.items():
    h = help_of(cmd)
    s = help_synopsis(h)
    if s not in syn:
        fail(f"{cmd}: the help's synopsis is not docs/usage.md's:\n  help: {s}\n  docs: "
             + "\n        ".join(sorted(x for x in syn if x.split()[:2] == s.split()[:2])))
    for o in sorted(help_options(h) - {"--help"}):
        if not re.search(re.escape(o) + r"(?![a-z-])", anywhere):
            fail(f"{cmd}: the help lists {o}, its docs do not")
    for o in sorted(doc_bullets(sec)):
        if not re.search(re.escape(o) + r"(?![a-z-])", h):
            fail(f"{cmd}: the docs list {o}, its --help does not")

# the README, the front door: short, and its synopsis is docs/usage.md's
readme = open("README.md").read()
if readme.count("\n") > 250:
    fail(f"README.md: {readme.count(chr(10))} lines, at most 250")
block = section(USAGE, "## Synopsis", "## Live tracing")
block = block[block.index("```") : block.rindex("```") + 3]
if block not in readme:
    fail("README.md: its Usage block is not docs/usage.md's Synopsis")

print("test_usage.py: all passed" if not fails else f"test_usage.py: {fails} failed")
sys.exit(1 if fails else 0)
