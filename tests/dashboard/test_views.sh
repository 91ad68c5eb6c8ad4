#!/bin/sh
# test_views.sh: every view of the dashboard in Chromium on a fixed
# database (dash_mkdb: two sweeps, 23 jobs, fixed times and curves):
# sweeps; jobs paged, sorted and filtered by the server, chosen columns,
# select all; a job's charts (y axes labelled, layers ticked at whole
# numbers); compare (titles per metric, de-biased smoothing against its
# definition, raw points, log x that stops with the data, grouping by
# axes into a mean and a band, the runs behind a group); parallel
# coordinates with a brush; the tables (every cell as tlm-report prints
# it, the paper's rows labelled, a figure without data a placeholder);
# then the same pages without uPlot.  Each view's screenshot is compared
# with the reviewed one in tests/dashboard/shots/ (views.mjs says how);
# TLM_UPDATE_SHOTS=1 writes this run's as the references instead: look
# at each before committing it.
. "$TLM_SRCDIR/tests/dashboard/lib.sh"
need_browser

"$TLM_BUILDDIR/tests/dashboard/dash_mkdb" fixed.db >/dev/null
ok $? "the fixed database"
sha_before=$(sha256sum fixed.db | cut -d' ' -f1)
R="$TLM_BUILDDIR/reports/tlm-report"
"$R" --db fixed.db --table wider_early_vs_late >wider.md &&
    "$R" --db fixed.db --table schedule_ratio --paper >ratio_paper.md
ok $? "tlm-report's tables of it"
python3 - fixed.db wider.md ratio_paper.md >expect.json <<'PY'
import json, sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
c.row_factory = sqlite3.Row
q = lambda sql, *a: [dict(r) for r in c.execute(sql, a)]
g = lambda v: ("%g" % v)
jobs = q("SELECT j.rowid AS rowid, r.key, r.label, r.arch, r.scale, r.schedule, r.ratio_start, r.ratio_end, r.groups,"
         " r.seed, r.status, r.attempts, r.tokens_done, r.tokens_total, r.train_loss, r.val_loss, r.val_ppl, r.sweep"
         " FROM results r JOIN jobs j ON j.key = r.key ORDER BY j.rowid")
for j in jobs:
    j["ratio"] = (g(j["ratio_start"]) + "\u2192" + g(j["ratio_end"]) if j["ratio_start"] is not None
                  else "[" + j["groups"] + "]" if j["groups"] else "")
steps = {j["key"]: [r["loss"] for r in q("SELECT loss FROM steps WHERE job = ? ORDER BY step", j["key"])] for j in jobs}
sweeps = q("SELECT s.name, count(*) AS jobs, sum(j.status = 'pending') AS pending, sum(j.status = 'running') AS running,"
           " sum(j.status = 'done') AS done, sum(j.status = 'failed') AS failed, sum(j.status = 'interrupted') AS interrupted"
           " FROM sweeps s JOIN sweep_jobs sj ON sj.sweep = s.name AND sj.active = 1 JOIN jobs j ON j.key = sj.job GROUP BY s.name")
compare = [j["key"] for j in jobs if j["sweep"] == "taper" and j["label"] in ("uniform", "cosine 1.5->0.5")]
print(json.dumps({
    "jobs": jobs, "sweeps": sweeps, "steps": steps,
    "steps_tokens": [r["tokens"] for r in q("SELECT tokens FROM steps WHERE job = ? ORDER BY step", compare[0])],
    "vals": {j["key"]: [r["value"] for r in q("SELECT value FROM evals WHERE job = ? AND suite = 'val' AND metric = 'ppl'"
                                              " ORDER BY step", j["key"])] for j in jobs},
    "widths": {j["key"]: json.loads(q("SELECT widths FROM jobs WHERE key = ?", j["key"])[0]["widths"]) for j in jobs},
    "job": [j["key"] for j in jobs if j["sweep"] == "taper" and j["label"] == "cosine 1.5->0.5" and j["seed"] == 0][0],
    "compare": compare,
    "parallel": [j["val_ppl"] for j in jobs if j["sweep"] == "taper" and j["status"] == "done" and j["val_ppl"] is not None],
    "md": {"wider": open(sys.argv[2]).read(), "ratio_paper": open(sys.argv[3]).read()},
}))
PY
ok $? "what the pages must show, read from the database with sqlite3"

EXPECT=$tmp/expect.json REF="$TLM_SRCDIR/tests/dashboard/shots" UPDATE=${TLM_UPDATE_SHOTS:-0}
export EXPECT REF UPDATE
start_dash dash.out --db fixed.db --vendor "$VENDOR"
ok $? "tlm-dash started ($base)"
browser views views.mjs 300
kill "$dp" && wait "$dp"
ok $? "tlm-dash stops on SIGTERM with status 0"

# without the charting library: a warning at start, every page still drawn
start_dash dash2.out --db fixed.db --vendor "$tmp/no-uplot-here"
grep -q "warning: uPlot, the charting library, is missing .*the pages show their tables, and a line where each chart would be; install it with scripts/setup.sh" dash2.out.err
ok $? "without uPlot: tlm-dash warns at start, saying how to install it ($(head -c 160 dash2.out.err))"
browser nouplot views.mjs 120
kill "$dp" && wait "$dp"
[ "$(sha256sum fixed.db | cut -d' ' -f1)" = "$sha_before" ]
ok $? "the database is unchanged: the dashboard only read it"
finish
