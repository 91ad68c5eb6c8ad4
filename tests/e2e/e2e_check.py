#!/usr/bin/env python3
# e2e_check.py: checks what tlm-report wrote for the end-to-end sweep of
# test_e2e.sh against results.db read with this script's own SQL: the final
# evaluation of a job is the one at its largest step, seeds aggregate as mean
# and sample standard deviation (statistics module), accuracies are shown in
# percent.  Also checks that the four formats of each table parse and agree
# (JSON = CSV numbers, Markdown rows, LaTeX environments and column counts)
# and that the figures are real SVG / PNG files.
#
# usage: e2e_check.py RESULTS_DB OUT_DIR   (OUT_DIR/NAME.{md,csv,latex,json}, OUT_DIR/figures/)
# Prints TAP lines (as diagnostics of the calling test); exits 1 on a failure.
import csv
import json
import os
import re
import sqlite3
import statistics
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from report_checks import Tally, close, png_size  # noqa: E402

DB, OUT = sys.argv[1], sys.argv[2]
check = Tally(diag=True)

con = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)


def final_eval(job, suite, task, metric):
    row = con.execute(
        "SELECT value FROM evals WHERE job = ? AND suite = ? AND task = ? AND metric = ? ORDER BY step DESC LIMIT 1",
        (job, suite, task, metric)).fetchone()
    return row[0] if row else None


def jobs_of(label, arch="transformer"):
    return [r[0] for r in con.execute("SELECT key FROM jobs WHERE label = ? AND arch = ? AND status = 'done' "
                                      "ORDER BY seed", (label, arch))]


ARCH_TITLE = {"transformer": "Transformer++", "gated_attn": "Gated Attention", "hope_attn": "Hope-attention",
              "titans": "Titans"}


def panel(d, arch="transformer"):
    """The panel of one architecture (titles start with its display name)."""
    ps = [p for p in d["panels"] if p["title"].startswith(ARCH_TITLE[arch] + ",")]
    check(len(ps) == 1, f"one {ARCH_TITLE[arch]} panel among {[p['title'] for p in d['panels']]}")
    return ps[0] if ps else {"rows": []}


def agg(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None, 0
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else None), len(values)


def load(name):
    with open(os.path.join(OUT, name + ".json")) as f:
        return json.load(f)


def stat_matches(cell, expected, what):
    mean, std, n = expected
    check(isinstance(cell, dict) and close(cell.get("value"), mean) and close(cell.get("std"), std)
          and cell.get("n") == n, f"{what}: {cell and cell.get('value')} (n={cell and cell.get('n')}) == SQL {mean} (n={n})")


# ---------------------------------------------------------------- wider_early_vs_late
d = load("wider_early_vs_late")
check(len(d["panels"]) == 1, "wider_early_vs_late: one panel (only the Transformer has block jobs)")
rows = {r["cells"]["allocation"]: r["cells"] for r in panel(d)["rows"] if r["source"] == "ours"}
check(set(rows) == {"uniform", "wider-early", "wider-middle", "wider-late"}, f"allocations {sorted(rows)}")
ppl = {a: agg([final_eval(j, "val", "val", "ppl") for j in jobs_of(a)]) for a in rows}
for a, cells in rows.items():
    stat_matches(cells["val_ppl"], ppl[a], f"wider_early_vs_late {a} val ppl")
    if a != "uniform":
        check(close(cells["delta_vs_uniform"]["value"], ppl[a][0] - ppl["uniform"][0]),
              f"wider_early_vs_late {a} delta = mean - uniform mean")

# ---------------------------------------------------------------- schedule_ratio
d = load("schedule_ratio")
rows = {r["cells"]["ratio"]: r["cells"] for r in panel(d)["rows"] if r["source"] == "ours"}
stat_matches(rows["1.5 -> 0.5"]["cosine"], agg([final_eval(j, "val", "val", "ppl") for j in jobs_of("cosine 1.5->0.5")]),
             "schedule_ratio cosine 1.5->0.5")
stat_matches(rows["1.25 -> 0.75"]["linear"],
             agg([final_eval(j, "val", "val", "ppl") for j in jobs_of("linear 1.25->0.75")]),
             "schedule_ratio linear 1.25->0.75")
check(rows["1.25 -> 0.75"]["cosine"].get("missing") == "not in sweep", "a cell outside the sweep says why")
check(close(rows["1.5 -> 0.5"]["cosine_delta"]["value"], rows["1.5 -> 0.5"]["cosine"]["value"] - ppl["uniform"][0]),
      "schedule_ratio delta against uniform")

# ---------------------------------------------------------------- main
d = load("main")
check(len(d["panels"]) == 1, "main: one panel (one scale)")
rows, arch = {}, None
for r in d["panels"][0]["rows"]:  # an architecture's row, then its "+ tapered" row
    if r["source"] != "ours":
        continue
    c = r["cells"]
    if c["model"] != "+ tapered":
        arch = next((a for a, t in ARCH_TITLE.items() if t == c["model"]), c["model"])
        rows[(arch, "uniform")] = c
    else:
        rows[(arch, "cosine 1.5->0.5")] = c
check(sorted(rows) == sorted((a, l) for a in ARCH_TITLE for l in ("uniform", "cosine 1.5->0.5")),
      f"main: uniform and tapered rows of the four architectures ({sorted(rows)})")
for (arch, label) in sorted(rows):
    model = f"{ARCH_TITLE[arch]} {label}"
    js = jobs_of(label, arch)
    row = rows[(arch, label)]
    stat_matches(row["lambada_ppl"], agg([final_eval(j, "lambada", "lambada", "perplexity") for j in js]),
                 f"main {model} lambada ppl")
    acc = agg([final_eval(j, "lambada", "lambada", "acc") for j in js])
    stat_matches(row["lambada_acc"], (acc[0] * 100, acc[1] * 100 if acc[1] is not None else None, acc[2]),
                 f"main {model} lambada acc (%)")
    acc = agg([final_eval(j, "commonsense", "piqa", "acc") for j in js])
    stat_matches(row["piqa"], (acc[0] * 100, acc[1] * 100 if acc[1] is not None else None, acc[2]),
                 f"main {model} piqa acc (%)")
    check(row["wikitext_ppl"].get("missing") == "no eval", f"main {model}: wikitext says 'no eval'")
    stat_matches(row["val_ppl"], agg([final_eval(j, "val", "val", "ppl") for j in js]),
                 f"main {model} val ppl (our column)")

# ---------------------------------------------------------------- niah
d = load("niah")
check(len(d["panels"]) == 4, f"niah: a panel per architecture ({len(d['panels'])})")
rows = {r["cells"]["task"]: r["cells"] for r in panel(d)["rows"] if r["source"] == "ours"}
for col, label in (("512_uniform", "uniform"), ("512_tapered", "cosine 1.5->0.5")):
    em = agg([final_eval(j, "niah", "s_niah_1@512", "exact_match") for j in jobs_of(label)])
    stat_matches(rows["s_niah_1"][col], (em[0] * 100, em[1] * 100 if em[1] is not None else None, em[2]),
                 f"niah s_niah_1@512 {label} (%)")

# ---------------------------------------------------------------- alignment
d = load("alignment")
p = panel(d)
layers = sorted({r[0] for r in con.execute("SELECT layer FROM layer_stats WHERE name = 'rho_mlp'")})  # 6 in every arch
check(len([r for r in p["rows"] if r["cells"]["layer"].isdigit()]) == len(layers) == 6, "alignment: one row per layer")
for r in p["rows"]:
    if not r["cells"]["layer"].isdigit():
        continue
    layer = int(r["cells"]["layer"])
    for label in ("uniform", "wider-early", "cosine 1.5->0.5"):
        for name in ("rho_mlp", "rho_block"):
            vals = []
            for j in jobs_of(label):
                row = con.execute("SELECT value FROM layer_stats WHERE job = ? AND layer = ? AND name = ? "
                                  "ORDER BY step DESC LIMIT 1", (j, layer, name)).fetchone()
                vals.append(row[0] if row else None)
            stat_matches(r["cells"][f"{name}[{label}]"], agg(vals), f"alignment layer {layer} {name} {label}")

# ---------------------------------------------------------------- runs
d = load("runs")
rows = d["panels"][0]["rows"]
check(len(rows) == con.execute("SELECT count(*) FROM jobs").fetchone()[0], f"runs: {len(rows)} rows, one per job")
for r in rows:
    c = r["cells"]
    key, = con.execute("SELECT key FROM jobs WHERE key LIKE ?", (c["job"] + "%",)).fetchone()
    status, attempts, tokens = con.execute("SELECT status, attempts, tokens_done FROM jobs WHERE key = ?",
                                           (key,)).fetchone()
    loss = con.execute("SELECT loss FROM steps WHERE job = ? ORDER BY step DESC LIMIT 1", (key,)).fetchone()[0]
    check(c["state"] == status and c["attempts"]["value"] == attempts and c["tokens"]["value"] == tokens
          and close(c["last_loss"]["value"], loss), f"runs {c['job']}: {status}, {attempts} attempt(s), {tokens} tokens")

# ---------------------------------------------------------------- formats agree and parse
for name in ("wider_early_vs_late", "schedule_ratio", "main", "alignment", "niah", "runs"):
    js = load(name)
    with open(os.path.join(OUT, name + ".csv"), newline="") as f:
        table = list(csv.DictReader(f))
    n_rows = sum(len(p["rows"]) for p in js["panels"])
    check(len(table) == n_rows, f"{name}.csv parses: {len(table)} rows == JSON's {n_rows}")
    # every JSON number appears in the CSV row at the same position
    flat = [r for p in js["panels"] for r in p["rows"]]
    agree = True
    for jr, cr in zip(flat, table):
        for k, v in jr["cells"].items():
            if isinstance(v, dict) and v.get("value") is not None and k in cr:
                if not close(float(cr[k]), float(v["value"]), 1e-12):
                    agree = False
    check(agree, f"{name}: CSV numbers equal JSON numbers")
    with open(os.path.join(OUT, name + ".md")) as f:
        md = f.read()
    widths = set()
    for block in re.split(r"\n\s*\n", md):
        lines = [ln for ln in block.splitlines() if ln.startswith("|")]
        if lines:
            widths.add(len({ln.count("|") - ln.count("\\|") for ln in lines}))
    check(widths == {1}, f"{name}.md: every row of each table has its header's column count")
    with open(os.path.join(OUT, name + ".latex")) as f:
        tex = f.read()
    begins, ends = re.findall(r"\\begin\{(\w+)\}", tex), re.findall(r"\\end\{(\w+)\}", tex)
    check(begins and sorted(begins) == sorted(ends), f"{name}.latex: environments balanced ({len(begins)})")
    good = True
    for spec, body in re.findall(r"\\begin\{tabular\}\{([^}]*)\}(.*?)\\end\{tabular\}", tex, re.S):
        ncol = len(re.sub(r"[^lcrp]", "", spec))
        for line in body.split("\\\\"):
            line = line.replace("\\hline", "").strip()
            if line and line.count("&") - line.count("\\&") + 1 != ncol:
                good = False
    check(good and tex.count("{") == tex.count("}"), f"{name}.latex: every row fills its tabular's columns, braces balance")

# ---------------------------------------------------------------- figures
for fig in ("loss", "dff", "rho", "ppl_ratio"):
    svg = os.path.join(OUT, "figures", fig + ".svg")
    try:
        root = ET.parse(svg).getroot()
        good = root.tag.endswith("svg") and os.path.getsize(svg) > 2000
    except ET.ParseError:
        good = False
    check(good, f"{fig}.svg is an SVG document of {os.path.getsize(svg)} bytes")
    png = os.path.join(OUT, "figures", fig + ".png")
    w, h = png_size(png) or (0, 0)
    check(w >= 400 and h >= 300 and os.path.getsize(png) > 5000,
          f"{fig}.png is a {w}x{h} PNG of {os.path.getsize(png)} bytes")

print(f"# {check.n - check.failed} of {check.n} checks passed")
sys.exit(1 if check.failed else 0)
