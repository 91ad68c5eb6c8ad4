#!/bin/sh
# test_layers.sh: the tree's layering (README.md, "Where things are"): each
# part includes only the headers of the parts it may use, and a folder's
# private headers (<folder>/internal.h, and those named in PRIVATE below)
# only from inside that folder (or from tests/).  A new include that breaks
# the layering fails here, with the file, the line and the rule.
set -u
cd "${TLM_SRCDIR:-.}" || exit 1
python3 - <<'P'
import os, re, subprocess, sys
# part -> the parts whose headers it may include (itself always)
MAY = {
    "common":        [],
    "engine/config": ["common"],
    "engine/format": ["common"],
    "engine/tok":    ["engine/format", "engine/config", "common"],
    "engine/model":  ["engine/config", "common"],
    "engine/cpu":    ["engine/model/ops.h", "engine/model/titans_mem.h", "common"],
    "engine/comm":   ["common"],
    "engine/train":  ["engine/model", "engine/comm", "engine/format", "engine/tok", "engine/config", "common"],
    "engine/eval":   ["engine/train", "engine/model", "engine/format", "engine/tok", "engine/config", "common"],
    "engine/cuda":   ["engine/model/ops.h", "engine/model/titans_mem.h", "engine/cpu/runtime.h", "common"],
    "db":            ["common"],
    "orchestrator":  ["db", "engine/config", "common"],
    "reports":       ["db", "common"],
    "dashboard":     ["reports", "db", "common"],
    "dataprep":      ["engine/tok", "engine/format", "engine/config", "common"],
    "worker":        ["engine", "common"],
    "bench":         ["engine", "orchestrator", "db", "reports", "dashboard", "dataprep", "common", "tests/lib"],
    "tests":         ["engine", "orchestrator", "db", "reports", "dashboard", "dataprep", "worker", "common", "tests"],
}
# private headers beside the internal.h of every folder: a folder's own,
# under another name (each must exist, so a rename updates this list)
PRIVATE = ["orchestrator/daemon.h", "orchestrator/executor.h", "orchestrator/exits.h"]
def private(h):
    return os.path.basename(h) == "internal.h" or h in PRIVATE
parts = sorted(MAY, key=len, reverse=True)
def part_of(path):
    for p in parts:
        if path == p or path.startswith(p + "/"):
            return p
    return None
files = subprocess.run(["git", "ls-files", "*.c", "*.h", "*.cu"], capture_output=True, text=True).stdout.split()
if not files:  # not a git checkout (a dist tarball): walk the folders
    files = [os.path.join(d, f)[2:] for d, _, fs in os.walk(".") for f in fs if f.endswith((".c", ".h", ".cu"))]
bad, n = [], 0
for h in PRIVATE:
    if h not in files and not os.path.exists(h):
        bad.append("%s is listed as private but does not exist" % h)
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
for f in files:
    me = part_of(f)
    if me is None:
        continue
    for ln, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        m = inc.match(line)
        if not m or "/" not in m.group(1):
            continue
        h = m.group(1)
        hp = part_of(h)
        if hp is None:
            continue  # config.h (autoconf), generated headers
        n += 1
        if private(h) and os.path.dirname(h) != os.path.dirname(f) and me != "tests":
            bad.append("%s:%d: %s is private to %s/" % (f, ln, h, os.path.dirname(h)))
            continue
        if hp == me or me == "tests" and not h.endswith("/internal.h") or any(h == a or h.startswith(a + "/") for a in MAY[me]):
            continue
        bad.append("%s:%d: %s may not include %s (it may use: %s)" % (f, ln, me, h, ", ".join(MAY[me]) or "nothing of TLM"))
if n < 100:  # the walk found nothing to check: a broken test, not a clean tree
    bad.append("only %d includes found under %s" % (n, os.getcwd()))
for b in bad:
    print("not ok - " + b)
print("# %d includes of TLM headers checked in %d files, %d outside the layering" % (n, len(files), len(bad)))
print("%sok 1 - every part includes only what it may use" % ("not " if bad else ""))
print("1..1")
sys.exit(1 if bad else 0)
P
