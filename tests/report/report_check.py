#!/usr/bin/env python3
# report_check.py: checks what tlm-report wrote (test_report.sh runs it)
# against results.db read with its own SQL: every number of every table is
# recomputed here (final evaluation = largest step, seeds of finished jobs
# only, mean and sample standard deviation with the statistics module,
# accuracies in percent, differences paired by seed with a t interval whose
# quantile comes from integrating the density), missing cells must say why, and the four formats
# must agree and parse: CSV with the csv module, JSON with json, Markdown
# tables column by column, LaTeX for balanced environments, braces and
# column counts.  Figures: SVG parses as XML with text as text, PNG has its
# signature and the IHDR size (figure_check.py checks their layout).
#
# usage: report_check.py RESULTS_DB OUT_DIR
# OUT_DIR holds NAME[.paper][.SWEEP].{md,csv,tex,json}, figures/*.svg|png|pdf,
# all/ (--all) and list.txt (--list), as test_report.sh writes them.
# Prints TAP; exits 1 when a check failed.
import csv
import io
import json
import math
import os
import re
import shutil
import sqlite3
import statistics
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from report_checks import Tally, close, png_size  # noqa: E402

DB, OUT = sys.argv[1], sys.argv[2]
ok = Tally()


def num(s):
    return None if s in ("", None) else float(s)


# ---------------------------------------------------------------- results.db, independently
con = sqlite3.connect(DB)
JOBS = [dict(zip([c[0] for c in cur.description], row)) for cur in
        [con.execute("SELECT key, sweep, label, arch, scale, schedule, ratio_start, ratio_end, groups, seed, status,"
                     " attempts, reason, message, tokens_total, tokens_done, final_loss FROM jobs")]
        for row in cur.fetchall()]
SWEEP_JOBS = {}
for sweep, job in con.execute("SELECT sweep, job FROM sweep_jobs WHERE active = 1"):
    SWEEP_JOBS.setdefault(sweep, set()).add(job)


def final_eval(job, task=None, metric=None, suite=None):
    """(value, finite?) of the evaluation at the largest step, or None."""
    sql = "SELECT value, nonfinite FROM evals WHERE job = ? AND metric = ?"
    args = [job, metric]
    if task is not None:
        sql += " AND task = ?"
        args.append(task)
    if suite is not None:
        sql += " AND suite = ?"
        args.append(suite)
    row = con.execute(sql + " ORDER BY step DESC LIMIT 1", args).fetchone()
    if row is None:
        return None
    value, nonfinite = row
    if nonfinite is not None or value is None or not math.isfinite(value):
        return ("nonfinite", None)
    return ("ok", value)


def last_layer(job, name):
    row = con.execute("SELECT max(step) FROM layer_stats WHERE job = ? AND name = ?", (job, name)).fetchone()
    if row[0] is None:
        return None
    out = {}
    for layer, value, nonfinite in con.execute(
            "SELECT layer, value, nonfinite FROM layer_stats WHERE job = ? AND name = ? AND step = ?",
            (job, name, row[0])):
        out[layer] = value if nonfinite is None and value is not None else None
    return out


def fmt_tokens(t):
    for div, suf in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if t >= div:
            v = t / div
            return f"{v:.0f}{suf}" if v == int(v) else f"{v:.3g}{suf}"
    return str(t)


def group_key(j):
    return (j["arch"], j["scale"], j["tokens_total"], j["schedule"], j["ratio_start"], j["ratio_end"], j["groups"])


def jobs_of(sweep=None):
    if sweep is None:
        return JOBS
    return [j for j in JOBS if j["key"] in SWEEP_JOBS.get(sweep, set())]


def groups_of(jobs):
    g = {}
    for j in jobs:
        g.setdefault(group_key(j), []).append(j)
    return g


def aggregate(jobs, value_of, scale=1.0):
    """The expected cell: ('value', mean, std, n, note) or ('missing', why)."""
    vals, counts = [], {"running": 0, "pending": 0, "interrupted": 0, "failed": 0, "nonfinite": 0, "absent": 0}
    reason = None
    for j in jobs:
        if j["status"] != "done":
            counts[j["status"]] += 1
            if j["status"] == "failed" and reason is None:
                reason = j["reason"]
            continue
        v = value_of(j)
        if v is None:
            counts["absent"] += 1
        elif v[0] != "ok":
            counts["nonfinite"] += 1
        else:
            vals.append(v[1] * scale)
    if not jobs:
        return ("missing", "not in sweep")
    if not vals:
        for k in ("running", "interrupted", "pending"):
            if counts[k]:
                return ("missing", k)
        if counts["failed"]:
            return ("missing", f"failed ({reason})" if reason else "failed")
        if counts["nonfinite"]:
            return ("missing", "not finite (NaN/inf)")
        return ("missing", "no eval")
    std = statistics.stdev(vals) if len(vals) >= 2 else None
    words = [("running", "running"), ("pending", "pending"), ("interrupted", "interrupted"), ("failed", "failed"),
             ("nonfinite", "NaN/inf"), ("absent", "no eval")]
    note = ", ".join(f"{counts[k]} {w}" for k, w in words if counts[k]) if len(vals) < len(jobs) else ""
    return ("value", statistics.fmean(vals), std, len(vals), note)


def t975(df):
    """Student t's 0.975 quantile by integrating its density (Simpson) and bisecting: a different road from
    tlm-report's closed form."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    pdf = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)

    def cdf_half(t, n=4000):  # P(0 < T < t)
        h = t / n
        return h / 3 * (pdf(0) + pdf(t) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, n)))

    lo, hi = 0.0, 64.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf_half(mid) < 0.475 else (lo, mid)
    return (lo + hi) / 2


def value_by_seed(jobs, value_of, scale=1.0):
    out = {}
    for j in jobs:
        if j["status"] != "done":
            continue
        v = value_of(j)
        if v is not None and v[0] == "ok":
            out.setdefault(j["seed"], v[1] * scale)
    return out


def paired(ga, gb, value_of, scale=1.0, b_name="uniform"):
    """The expected difference a - b: ('missing', why) or ('delta', mean, lo, hi, n, sig, note)."""
    a, b = value_by_seed(ga, value_of, scale), value_by_seed(gb, value_of, scale)
    if not a or not b:
        ea, eb = aggregate(ga, value_of, scale), aggregate(gb, value_of, scale)
        return ("missing", ea[1]) if not a else ("missing", f"{b_name} {eb[1]}")
    both = sorted(set(a) & set(b))
    alone = sorted(set(a) ^ set(b))
    if not both:
        return ("delta", statistics.fmean(a.values()) - statistics.fmean(b.values()), None, None, 0, None,
                "no seed in common: no interval")
    d = [a[s] - b[s] for s in both]
    mean = statistics.fmean(d)
    lo = hi = sig = None
    if len(d) >= 2:
        half = t975(len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d))
        lo, hi = mean - half, mean + half
        sig = lo > 0 or hi < 0
    words = ["no interval"] if len(d) < 2 else []
    if alone:
        shown = ", ".join(str(s) for s in alone[:4]) + (f" and {len(alone) - 4} more" if len(alone) > 4 else "")
        words.append(f"{'seeds' if len(alone) > 1 else 'seed'} {shown} unpaired")
    return ("delta", mean, lo, hi, len(d), sig, "; ".join(words))


def check_delta(row, key, exp, what):
    """A CSV row's X, X_lo, X_hi, X_n, X_sig, X_note against an expected difference."""
    if exp[0] == "missing":
        return ok(row[key] == "" and row[key + "_note"] == exp[1],
                  f"{what}: Δ empty, says '{exp[1]}' (got '{row[key]}', '{row[key + '_note']}')")
    _, mean, lo, hi, n, sig, note = exp
    want_sig = "" if sig is None else "1" if sig else "0"
    good = close(num(row[key]), mean) and close(num(row[key + "_lo"]), lo, 1e-7) and \
        close(num(row[key + "_hi"]), hi, 1e-7) and int(row[key + "_n"]) == n and row[key + "_sig"] == want_sig and \
        row[key + "_note"] == note
    return ok(good, f"{what}: Δ {mean:.6g} [{lo}, {hi}] (n={n}) sig '{want_sig}' '{note}' (got {row[key]}, "
                    f"[{row[key + '_lo']}, {row[key + '_hi']}], {row[key + '_n']}, '{row[key + '_sig']}', "
                    f"'{row[key + '_note']}')")


def check_cell(row, key, exp, what):
    """A CSV row's X, X_std, X_n, X_note against an expected cell."""
    if exp[0] == "missing":
        return ok(row[key] == "" and row[key + "_note"] == exp[1],
                  f"{what}: empty, says '{exp[1]}' (got '{row[key]}', '{row[key + '_note']}')")
    _, mean, std, n, note = exp
    good = close(num(row[key]), mean) and close(num(row[key + "_std"]), std) and int(row[key + "_n"]) == n \
        and row[key + "_note"] == note
    return ok(good, f"{what}: {mean:.6g} ± {std if std is None else round(std, 6)} (n={n}) '{note}' "
                    f"(got {row[key]}, {row[key + '_std']}, {row[key + '_n']}, '{row[key + '_note']}')")


def read_csv(name):
    path = os.path.join(OUT, name + ".csv")
    with open(path, newline="") as f:
        text = f.read()
    ok(text.endswith("\r\n") or text == "", f"{name}.csv: rows end with CRLF (RFC 4180)")
    rows = list(csv.DictReader(io.StringIO(text)))
    with open(path, newline="") as f:
        widths = {len(r) for r in csv.reader(f)}
    ok(len(widths) <= 1, f"{name}.csv: every record has the header's {widths} fields")
    return rows


VAL_PPL = lambda j: final_eval(j["key"], metric="ppl", suite="val")


def blocks_kind(groups):
    g = [float(x) for x in groups.split(",")]
    w = max(range(len(g)), key=lambda i: g[i])
    if g.count(g[w]) > 1:
        return "flat"
    t = w / (len(g) - 1)
    return "wider-early" if t < 1 / 3 else "wider-late" if t > 2 / 3 else "wider-middle"


# ---------------------------------------------------------------- tables: numbers against SQL
def check_wider(name, sweep=None):
    rows = read_csv(name)
    groups = groups_of(jobs_of(sweep))
    seen = 0
    for r in rows:
        if r.get("source", "ours") != "ours":
            continue
        panel = [k for k in groups if k[0] == r["arch"] and k[1] == r["scale"] and fmt_tokens(k[2]) == r["tokens"]]
        if r["allocation"] == "uniform":
            gk = [k for k in panel if k[3] == "uniform"]
        else:
            gk = [k for k in panel if k[3] == "blocks" and k[6] == r["groups"]]
            ok(not r["groups"] or blocks_kind(r["groups"]) == r["allocation"],
               f"{name}: groups {r['groups']} is {r['allocation']}")
        exp = aggregate(groups[gk[0]] if gk else [], VAL_PPL)
        check_cell(r, "val_ppl", exp, f"{name} {r['arch']} {r['scale']} {r['allocation']} {r['groups']} val ppl")
        uni = [k for k in panel if k[3] == "uniform"]
        if r["allocation"] != "uniform":
            d = paired(groups[gk[0]] if gk else [], groups[uni[0]] if uni else [], VAL_PPL)
            check_delta(r, "delta_vs_uniform", d, f"{name} {r['scale']} {r['allocation']}: paired against uniform")
        seen += 1
    # every blocks group of the selection has a row
    n_blocks = sum(1 for k in groups if k[3] == "blocks")
    ok(sum(1 for r in rows if r.get("source", "ours") == "ours" and r["groups"]) == n_blocks,
       f"{name}: one row per blocks group ({n_blocks})")
    return seen


def check_ratio(name, sweep=None):
    rows = read_csv(name)
    groups = groups_of(jobs_of(sweep))
    for r in rows:
        if r.get("source", "ours") != "ours":
            continue
        panel = [k for k in groups if k[0] == r["arch"] and k[1] == r["scale"] and fmt_tokens(k[2]) == r["tokens"]]
        uni = [k for k in panel if k[3] == "uniform"]
        u = aggregate(groups[uni[0]] if uni else [], VAL_PPL)
        for s in ("cosine", "linear", "sigmoid"):
            if r["ratio"] == "uniform":
                exp = u
            else:
                a, b = (float(x) for x in r["ratio"].split(" -> "))
                gk = [k for k in panel if k[3] == s and abs(k[4] - a) < 1e-9 and abs(k[5] - b) < 1e-9]
                exp = aggregate(groups[gk[0]] if gk else [], VAL_PPL)
                d = paired(groups[gk[0]] if gk else [], groups[uni[0]] if uni else [], VAL_PPL)
                check_delta(r, s + "_delta", d, f"{name} {r['arch']} {r['scale']} {r['ratio']} {s}")
            check_cell(r, s, exp, f"{name} {r['arch']} {r['scale']} {r['ratio']} {s}")
    ratios = {(k[0], k[1], k[4], k[5]) for k in groups if k[3] in ("cosine", "linear", "sigmoid")}
    listed = {(r["arch"], r["scale"], *[float(x) for x in r["ratio"].split(" -> ")]) for r in rows
              if r["ratio"] != "uniform"}
    ok(ratios <= listed, f"{name}: every ratio of the selection has a row")


MAIN = [("val_ppl", "val", "val", "ppl", 1), ("wikitext_ppl", "wikitext", None, "word_perplexity", 1), ("lambada_ppl", "lambada", None, "perplexity", 1),
        ("lambada_acc", "lambada", None, "acc", 100), ("piqa", None, "piqa", "acc", 100),
        ("hellaswag", None, "hellaswag", "acc_norm", 100), ("winogrande", None, "winogrande", "acc", 100),
        ("arc_easy", None, "arc_easy", "acc", 100), ("arc_challenge", None, "arc_challenge", "acc_norm", 100),
        ("siqa", None, "siqa", "acc", 100), ("boolq", None, "boolq", "acc", 100)]
ARCH_TITLE = {"Transformer++": "transformer", "Gated Attention": "gated_attn", "Hope-attention": "hope_attn",
              "Titans": "titans"}


def avg8(j):
    vals = []
    for key, suite, task, metric, _ in MAIN[3:]:
        v = final_eval(j["key"], task=task, metric=metric, suite=suite)
        if v is None:
            return None
        if v[0] != "ok":
            return ("nonfinite", None)
        vals.append(v[1])
    return ("ok", sum(vals) / 8)


def check_main(name, sweep=None):
    rows = read_csv(name)
    groups = groups_of(jobs_of(sweep))
    arch = None
    n = 0
    cells = {}
    for r in rows:
        if r.get("source") == "derived":
            # tapered - uniform of the architecture above, paired by seed, per column
            ok(r["model"] == "Δ tapered − uniform", f"{name} {r['scale']} {arch}: a Δ row under the two")
            for key, suite, task, metric, scale in MAIN + [("avg", None, None, None, 100)]:
                value_of = avg8 if key == "avg" else \
                    (lambda j, suite=suite, task=task, metric=metric: final_eval(j["key"], task=task, metric=metric,
                                                                                 suite=suite))
                d = paired(cells.get(True, []), cells.get(False, []), value_of, scale)
                check_delta(r, key, d, f"{name} {r['scale']} {arch} Δ {key}")
            continue
        if r.get("source", "ours") != "ours":
            continue
        tapered = r["model"] == "+ tapered"
        if not tapered:
            arch = ARCH_TITLE.get(r["model"], r["model"])
        gk = [k for k in groups if k[0] == arch and k[1] == r["scale"] and fmt_tokens(k[2]) == r["tokens"] and
              (k[3] == "uniform" if not tapered else (k[3] == "cosine" and k[4] == 1.5 and k[5] == 0.5))]
        g = groups[gk[0]] if gk else []
        cells[tapered] = g
        for key, suite, task, metric, scale in MAIN:
            exp = aggregate(g, lambda j: final_eval(j["key"], task=task, metric=metric, suite=suite), scale)
            check_cell(r, key, exp, f"{name} {r['scale']} {arch} {r['model']} {key}")
        check_cell(r, "avg", aggregate(g, avg8, 100), f"{name} {r['scale']} {arch} {r['model']} avg of eight")
        n += 1
    return n


def check_niah(name, sweep=None):
    rows = read_csv(name)
    groups = groups_of(jobs_of(sweep))
    ctxs = sorted({int(k.split("_")[0]) for k in rows[0] if re.match(r"^\d+_uniform$", k)}) if rows else []
    for r in rows:
        panel = [k for k in groups if k[0] == r["arch"] and k[1] == r["scale"] and fmt_tokens(k[2]) == r["tokens"]]
        g = {}
        for m, pick in (("uniform", lambda k: k[3] == "uniform"),
                        ("tapered", lambda k: k[3] == "cosine" and k[4] == 1.5 and k[5] == 0.5)):
            gk = [k for k in panel if pick(k)]
            g[m] = groups[gk[0]] if gk else []
        for c in ctxs:
            task = f"{r['task']}@{c}"
            e = {}
            for m in ("uniform", "tapered"):
                e[m] = aggregate(g[m], lambda j: final_eval(j["key"], task=task, metric="exact_match", suite="niah"), 100)
                check_cell(r, f"{c}_{m}", e[m], f"{name} {r['arch']} {task} {m}")
            if e["uniform"][0] == "value" and e["tapered"][0] == "value":
                ok(close(num(r[f"{c}_delta"]), e["tapered"][1] - e["uniform"][1]), f"{name} {task}: delta")
    return len(rows)


def check_alignment(name, sweep=None):
    rows = read_csv(name)
    groups = groups_of(jobs_of(sweep))
    cols = [k for k in (rows[0] if rows else {}) if re.match(r"^rho_(mlp|block)\[[^\]]*\]$", k)]
    checked = 0
    for col in cols:
        stat, label = re.match(r"^(rho_mlp|rho_block)\[(.*)\]$", col).groups()
        means = {}
        for r in rows:
            if r["layer"] == "r (depth)":
                continue
            gk = [k for k in groups if k[0] == r["arch"] and k[1] == r["scale"] and fmt_tokens(k[2]) == r["tokens"]
                  and groups[k][0]["label"] == label]
            if not gk:
                continue
            layer = int(r["layer"])
            stats = {j["key"]: last_layer(j["key"], stat) for j in groups[gk[0]]}

            def value_of(j):
                s = stats[j["key"]]
                if not s:
                    return None
                v = s.get(layer)
                return ("ok", v) if v is not None and math.isfinite(v) else ("nonfinite", None)

            exp = aggregate(groups[gk[0]], value_of)
            check_cell(r, col, exp, f"{name} {label} {stat} layer {layer}")
            means[layer] = exp[1] if exp[0] == "value" else None
            checked += 1
        depth = [r for r in rows if r["layer"] == "r (depth)" and r[col] != ""]
        pts = [(l, m) for l, m in sorted(means.items()) if m is not None]
        if len(pts) >= 3 and depth:
            rr = statistics.correlation([p[0] for p in pts], [p[1] for p in pts])
            ok(close(num(depth[0][col]), rr, 1e-6), f"{name} {label} {stat}: Pearson r with depth {rr:.4f}")
    return checked


def check_runs(name, sweep=None):
    rows = read_csv(name)
    jobs = jobs_of(sweep)
    ok(len(rows) == len(jobs), f"{name}: one row per job ({len(jobs)})")
    by = {j["key"][:12]: j for j in jobs}
    for r in rows:
        j = by.get(r["job"])
        if not ok(j is not None, f"{name}: job {r['job']} is in the selection"):
            continue
        last = j["final_loss"]
        if last is None:
            row = con.execute("SELECT loss FROM steps WHERE job = ? ORDER BY step DESC LIMIT 1", (j["key"],)).fetchone()
            last = row[0] if row else None
            has = row is not None
        else:
            has = True
        good = r["state"] == j["status"] and int(float(r["attempts"])) == j["attempts"] \
            and int(float(r["tokens"])) == j["tokens_done"] and int(float(r["tokens_total"])) == j["tokens_total"] \
            and r["label"] == j["label"] and r["seed"] == str(j["seed"])
        if has and last is not None:
            good = good and close(num(r["last_loss"]), last)
        else:
            good = good and r["last_loss"] == "" and r["last_loss_note"] != ""
        if j["reason"]:
            good = good and r["reason"].startswith(j["reason"])
        ok(good, f"{name}: {j['label']} seed {j['seed']} {j['status']}: state, attempts, tokens, last loss, reason")


# ---------------------------------------------------------------- the formats agree and parse
def load_json(name):
    with open(os.path.join(OUT, name + ".json")) as f:
        doc = json.load(f)
    ok(doc.get("tlm_report") == 1 and isinstance(doc.get("panels"), list), f"{name}.json parses, format 1")
    return doc


def json_vs_csv(name):
    doc = load_json(name)
    rows = read_csv(name)
    flat = [(p, row) for p in doc["panels"] for row in p["rows"]]
    if not ok(len(flat) == len(rows), f"{name}: JSON and CSV have the same {len(rows)} rows"):
        return doc
    bad = 0
    for (p, jr), cr in zip(flat, rows):
        for k, v in p["keys"].items():
            bad += cr[k] != v
        for col in p["columns"]:
            cell, key = jr["cells"][col["key"]], col["key"]
            if col["kind"] == "text":
                bad += (cell or "") != cr[key]
            elif isinstance(cell, dict):
                bad += not close(cell.get("value"), num(cr[key]))
                if "missing" in cell:
                    bad += cell["missing"] != cr[key + "_note"]
                if "lo" in cell:  # a paired difference
                    sig = cell["significant"]
                    bad += int(cr[key + "_n"]) != cell["n"] or not close(cell["lo"], num(cr[key + "_lo"])) or \
                        not close(cell["hi"], num(cr[key + "_hi"])) or \
                        cr[key + "_sig"] != ("" if sig is None else "1" if sig else "0") or \
                        (cell["note"] or "") != cr[key + "_note"]
                elif col["kind"] == "stat" and cell.get("n") is not None:
                    bad += int(cr[key + "_n"]) != cell["n"] or not close(cell["std"], num(cr[key + "_std"]))
            else:
                bad += cr[key] != ""
    ok(bad == 0, f"{name}: every JSON cell equals its CSV field ({bad} differ)")
    return doc


def md_panels(text):
    """[(title, header, rows)] of the Markdown tables."""
    panels, title, lines = [], None, text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("### "):
            title = lines[i][4:]
        if lines[i].startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            cells = [[c.strip() for c in re.split(r"(?<!\\)\|", b)[1:-1]] for b in block]
            panels.append((title, cells[0], cells[2:], cells[1]))
            continue
        i += 1
    return panels


def fmt(v, d, signed):
    s = f"{v:.{d}f}"
    if float(s) == 0:
        s = f"{0:.{d}f}"
    elif signed and v > 0:
        s = "+" + s
    return s


def md_vs_json(name, doc):
    with open(os.path.join(OUT, name + ".md")) as f:
        text = f.read()
    panels = md_panels(text)
    ok(len(panels) == len(doc["panels"]), f"{name}.md: one table per panel ({len(panels)})")
    bad, bests = 0, 0
    for (title, header, rows, rule), p in zip(panels, doc["panels"]):
        ok(len(header) == len(p["columns"]) and len(rule) == len(header) and all(len(r) == len(header) for r in rows),
           f"{name}.md {title}: {len(header)} columns in every row")
        ok(len(rows) == len(p["rows"]), f"{name}.md {title}: {len(p['rows'])} rows")
        for mr, jr in zip(rows, p["rows"]):
            for i, col in enumerate(p["columns"]):
                cell, txt = jr["cells"][col["key"]], mr[i]
                if i == 0 and jr["source"] in ("paper", "ours-paper"):
                    bad += txt not in ("_paper_", "_ours − paper_")
                elif col["kind"] == "text":
                    bad += txt != ((cell or "-").replace("|", "\\|") if cell else "-")
                elif cell is None:
                    bad += txt != "-"
                elif "missing" in cell:
                    bad += txt != f"_{cell['missing']}_"
                elif "lo" in cell:
                    d = col["decimals"]
                    want = fmt(cell["value"], d, True)
                    if cell["n"] >= 2 and cell["lo"] is not None:
                        want += f" [{fmt(cell['lo'], d, True)}, {fmt(cell['hi'], d, True)}]"
                    if cell["paired"]:
                        want += f" (n={cell['n']}" + (f"; {cell['note']})" if cell["note"] else ")")
                    elif cell["note"]:
                        want += f" ({cell['note']})"
                    if cell["significant"]:
                        want += " †"
                    if txt != want:
                        bad += 1
                        print(f"# {name}.md: '{txt}' != '{want}'")
                else:
                    v = fmt(cell["value"], col["decimals"], col["signed"] or jr["source"] == "ours-paper")
                    want = f"**{v}**" if cell.get("best") else v
                    bests += bool(cell.get("best"))
                    if cell.get("n", 0) and cell["n"] >= 2:
                        want += f" ± {fmt(cell['std'], col['decimals'], False)} (n={cell['n']}"
                        want += f"; {cell['note']})" if cell.get("note") else ")"
                    elif cell.get("note"):
                        want += f" (n={cell['n']}; {cell['note']})"
                    if txt != want:
                        bad += 1
                        print(f"# {name}.md: '{txt}' != '{want}'")
    ok(bad == 0, f"{name}.md: every cell shows its JSON value rounded, best in bold, why when empty ({bad} differ)")
    return bests


def best_marks(name, doc):
    """The best value per column (of our rows) is the one marked."""
    bad = 0
    for p in doc["panels"]:
        for col in p["columns"]:
            if not col["better"] or col["source"] != "ours":
                continue
            vals = [(r["cells"][col["key"]] or {}).get("value") for r in p["rows"] if r["source"] == "ours"]
            finite = [v for v in vals if v is not None]
            best = (min if col["better"] == "lower" else max)(finite) if len(finite) >= 2 else None
            for r in p["rows"]:
                c = r["cells"][col["key"]] or {}
                marked = bool(c.get("best"))
                should = r["source"] == "ours" and best is not None and c.get("value") == best
                bad += marked != should
    ok(bad == 0, f"{name}: best values marked exactly where they are ({bad} wrong)")


def latex_ok(name, doc):
    with open(os.path.join(OUT, name + ".tex")) as f:
        text = f.read()
    body = "\n".join(l for l in text.split("\n") if not l.startswith("%"))
    stack, bad_env = [], 0
    for kind, env in re.findall(r"\\(begin|end)\{([a-z*]+)\}", body):
        if kind == "begin":
            stack.append(env)
        elif not stack or stack.pop() != env:
            bad_env += 1
    ok(bad_env == 0 and not stack, f"{name}.tex: environments balanced and nested")
    depth, bad_brace = 0, 0
    for m in re.finditer(r"\\\\|\\[{}]|[{}]", body):
        t = m.group(0)
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            bad_brace += depth < 0
    ok(depth == 0 and bad_brace == 0, f"{name}.tex: braces balanced")
    tabs = re.findall(r"\\begin\{tabular\}\{([lrc]+)\}(.*?)\\end\{tabular\}", body, re.S)
    ok(len(tabs) == len(doc["panels"]), f"{name}.tex: one tabular per panel ({len(tabs)})")
    bad_rows = 0
    for (spec, inner), p in zip(tabs, doc["panels"]):
        rows = [l for l in inner.split("\n") if l.strip().endswith("\\\\")]
        for l in rows:
            amps = len(re.findall(r"(?<!\\)&", l))
            bad_rows += amps != len(spec) - 1
            bad_rows += len(re.findall(r"(?<!\\)\$", l)) % 2
            bad_rows += bool(re.search(r"(?<![\\])[_#%]", l.replace("\\_", "")))
        bad_rows += len(rows) != len(p["rows"]) + 1
        bad_rows += len(spec) != len(p["columns"])
    ok(bad_rows == 0, f"{name}.tex: every row has its tabular's column count, balanced $, escaped specials")


def table_formats(name):
    doc = json_vs_csv(name)
    best_marks(name, doc)
    md_vs_json(name, doc)
    latex_ok(name, doc)
    return doc


# ---------------------------------------------------------------- run everything
for paper in ("", ".paper"):
    for t in ("wider_early_vs_late", "schedule_ratio", "main", "alignment", "niah", "runs"):
        table_formats(t + paper)

ok(check_wider("wider_early_vs_late") == 8, "wider_early_vs_late: uniform and the three allocations, 1m and 5m")
check_wider("wider_early_vs_late.paper")
check_ratio("schedule_ratio")
check_ratio("schedule_ratio.paper")
ok(check_main("main") == 8,
   "main: uniform and tapered rows of the two architectures at 1m, and 3m's and 5m's transformer")
check_main("main.paper")
ok(check_niah("niah") == 2, "niah: two tasks")
ok(check_alignment("alignment") == 24, "alignment: six layers x two groups x two statistics")
check_runs("runs")

# --sweep: only that sweep's jobs (a job shared by two sweeps belongs to both)
for t in ("schedule_ratio", "main", "runs"):
    table_formats(t + ".other")
check_ratio("schedule_ratio.other", "other")
check_main("main.other", "other")
check_runs("runs.other", "other")
with open(os.path.join(OUT, "wider_early_vs_late.other.md")) as f:
    ok("Nothing in results.db" in f.read(), "--sweep other: wider_early_vs_late says the sweep has nothing for it")

# specific cells that must say why, and the best marks
doc = load_json("wider_early_vs_late")
cells = {r["cells"]["allocation"]: r["cells"]["val_ppl"] for r in doc["panels"][0]["rows"]}
ok(cells["wider-late"] == {"value": None, "missing": "failed (diverged)"}, "wider-late: 'failed (diverged)'")
ok(cells["wider-middle"]["n"] == 1 and cells["wider-middle"]["note"] == "1 pending", "wider-middle: 1 pending noted")
ok(cells["uniform"]["n"] == 3, "uniform: three seeds")
ok(abs(t975(1) - 12.7062) < 1e-4 and abs(t975(2) - 4.3027) < 1e-4 and abs(t975(30) - 2.0423) < 1e-4,
   f"the checker's own t quantiles: {t975(1):.4f}, {t975(2):.4f}, {t975(30):.4f}")
five = {r["cells"]["allocation"]: r["cells"]["delta_vs_uniform"] for r in doc["panels"][1]["rows"]}
ok(five["wider-late"]["significant"] is True and five["wider-early"]["significant"] is False
   and five["wider-middle"]["n"] == 2 and five["wider-middle"]["note"] == "seed 2 unpaired",
   "5m: wider-late's interval excludes 0, wider-early's does not, wider-middle lacks seed 2")
doc = load_json("schedule_ratio")
p = doc["panels"][0]
r15 = [r for r in p["rows"] if r["cells"]["ratio"] == "1.5 -> 0.5"][0]["cells"]
ok(r15["linear"]["missing"] == "running" and r15["sigmoid"]["missing"] == "interrupted",
   "schedule_ratio: a running and an interrupted job say so")
r125 = [r for r in p["rows"] if r["cells"]["ratio"] == "1.25 -> 0.75"][0]["cells"]
ok(r125["cosine"]["n"] == 1 and r125["cosine"]["note"] == "1 NaN/inf", "schedule_ratio: a NaN perplexity is left out")
ok(r125["sigmoid"]["missing"] == "not in sweep", "schedule_ratio: 'not in sweep'")

# --paper: the paper's figures beside ours
doc = load_json("wider_early_vs_late.paper")
cells = {r["cells"]["allocation"]: r["cells"] for r in doc["panels"][0]["rows"]}
ok(cells["wider-early"]["paper_val_ppl"]["value"] == 15.96 and cells["wider-early"]["paper_delta"]["value"] == -0.32,
   "--paper: Figure 2's wider-early 15.96 (-0.32)")
# the fixture's 1m and 5m byte-free panels are not the paper's 440M setting: the paper's numbers and Δ beside
# ours, never ours - paper (issue 26; test_report.sh checks the paper's own setting on another database)
ok(all(k not in r["cells"] for p in doc["panels"] for r in p["rows"]
       for k in ("val_ppl_minus_paper", "delta_minus_paper")) and
   all(p["columns"][-1]["key"] == "paper_delta" for p in doc["panels"]),
   "--paper outside the paper's setting: its val ppl and Δ beside ours, no ours - paper")
doc = load_json("schedule_ratio.paper")
rows = doc["panels"][0]["rows"]
i = [k for k, r in enumerate(rows) if r["cells"]["ratio"] == "1.5 -> 0.5"][0]
ok(rows[i + 1]["source"] == "paper" and rows[i + 1]["cells"]["cosine"]["value"] == 14.44
   and rows[i + 1]["cells"]["sigmoid"]["value"] == 16.12, "--paper: Table 1's 1.5 -> 0.5 row under ours")
ok(not any(r["source"] == "ours-paper" for p in doc["panels"] for r in p["rows"]),
   "--paper outside the paper's setting: no ours - paper row")
ok(len([r for r in rows if r["source"] == "ours"]) == 6, "--paper: the paper's five ratios listed with uniform")

# ---------------------------------------------------------------- figures
figs = os.path.join(OUT, "figures")
CONVERTER = shutil.which("rsvg-convert") is not None  # PNG and PDF need it (figure_check.py checks the layout)
for name in ("loss", "dff", "rho", "wider", "ppl_ratio", "delta"):
    svg, png = os.path.join(figs, name + ".svg"), os.path.join(figs, name + ".png")
    try:
        root = ET.parse(svg).getroot()
        w, h = (float(re.match(r"[\d.]+", root.get(a)).group(0)) for a in ("width", "height"))
        paths = sum(1 for e in root.iter() if e.tag.endswith("path"))
        texts = sum(1 for e in root.iter() if e.tag.endswith("text"))
        good = root.tag.endswith("svg") and 400 <= w <= 3000 and 300 <= h <= 3000 and paths > 10 and texts > 5
    except (ET.ParseError, OSError, AttributeError, TypeError) as exc:
        print(f"# {svg}: {exc}")
        good = False
    size = os.path.getsize(svg) if os.path.exists(svg) else 0
    ok(good and 3000 < size < 200_000, f"{name}.svg: XML with an <svg> root, text as text, {size} bytes")
    if not CONVERTER:
        continue
    dims = png_size(png) if os.path.exists(png) else None
    size = os.path.getsize(png) if os.path.exists(png) else 0
    ok(dims is not None and 800 <= dims[0] <= 3000 and 600 <= dims[1] <= 3000 and 5000 < size < 5_000_000,
       f"{name}.png: PNG signature, IHDR {dims}, {size} bytes")

# ---------------------------------------------------------------- --all and --list
alldir = os.path.join(OUT, "all")
with open(os.path.join(alldir, "report.md")) as f:
    report = f.read()
for t in ("wider_early_vs_late", "schedule_ratio", "main", "alignment", "niah", "runs"):
    ok(all(os.path.getsize(os.path.join(alldir, "tables", f"{t}.{e}")) > 0 for e in ("csv", "json", "tex")),
       f"--all: tables/{t}.csv, .json, .tex")
links = re.findall(r"\]\(([^)]+)\)", report)
want = 6 * (3 if CONVERTER else 1)  # every figure as SVG (and PNG and PDF)
ok(len(links) == want and all(os.path.exists(os.path.join(alldir, l)) for l in links),
   f"--all: report.md links {len(links)} figure files ({want}), all present")
ok(report.count("\n## ") >= 6 and "Wider early vs late" in report, "--all: report.md holds the tables")

with open(os.path.join(OUT, "list.txt")) as f:
    listing = f.read()
for t in ("wider_early_vs_late", "schedule_ratio", "main", "alignment", "niah"):
    doc = load_json(t)
    filled = total = 0
    for p in doc["panels"]:
        for r in p["rows"]:
            if r["source"] != "ours":
                continue
            for col in p["columns"]:
                if col["kind"] == "stat" and col["source"] == "ours":
                    c = r["cells"][col["key"]]
                    filled += c is not None and "missing" not in c
                    total += c is not None
    m = re.search(rf"^{t}\s+(\d+)\s+(\d+) of (\d+)", listing, re.M)
    ok(m is not None and (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (len(doc["panels"]), filled, total),
       f"--list: {t} {len(doc['panels'])} panels, {filled} of {total} cells")

print(f"1..{ok.n}")
if ok.failed:
    print(f"# {ok.failed} of {ok.n} checks failed")
sys.exit(1 if ok.failed else 0)
