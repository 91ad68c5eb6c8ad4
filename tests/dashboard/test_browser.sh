#!/bin/sh
# test_browser.sh: the dashboard in a real browser (Debian's Chromium driven
# by playwright-core) on a results.db that a real tiny sweep through tlmd
# filled: the jobs table equals SELECT ... FROM results, a job's loss chart
# has one point per step event, two jobs compare on one chart (smoothing,
# log axes), the runs table is tlm-report's, byte for byte; screenshots go
# to tests/dashboard/screenshots/ of the build folder.
. "$TLM_SRCDIR/tests/dashboard/lib.sh"
need_browser

steps=16
sweep tiny.yaml tiny $steps \
    "grid:" \
    "  taper.schedule: [linear, cosine]" \
    "  taper.ratio: [[1.5, 0.5]]"
"$T" --sweeps tiny.yaml --workers 2 --threads-per-worker 1 >tlmd.out 2>&1
rc=$?
ok $rc "a tiny sweep (2 jobs, $steps steps) trained by tlmd"
[ $rc = 0 ] || { sed 's/^/# /' tlmd.out; finish; }
sha_before=$(sha256sum results.db | cut -d' ' -f1)

# what results.db holds, for browser.mjs to compare the pages with
"$TLM_BUILDDIR/reports/tlm-report" --db results.db --table runs >runs.md
"$TLM_BUILDDIR/reports/tlm-report" --db results.db --table wider_early_vs_late --paper >wider.md 2>/dev/null
python3 - results.db runs.md $steps wider.md >expect.json <<'PY'
import json, sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
c.row_factory = sqlite3.Row
q = lambda sql, *a: [dict(r) for r in c.execute(sql, a)]
jobs = q("SELECT key, label, arch, scale, schedule, ratio_start, ratio_end, groups, seed, status, attempts,"
         " tokens_done, tokens_total, train_loss, val_ppl FROM results ORDER BY key")
print(json.dumps({
    "jobs": jobs,
    "sweeps": q("SELECT s.name, count(*) AS jobs, sum(j.status = 'done') AS done, sum(j.status = 'failed') AS failed,"
                " sum(j.status = 'pending') AS pending FROM sweeps s JOIN sweep_jobs sj ON sj.sweep = s.name"
                " JOIN jobs j ON j.key = sj.job GROUP BY s.name"),
    "steps": {j["key"]: q("SELECT count(*) AS n FROM steps WHERE job = ? AND loss IS NOT NULL", j["key"])[0]["n"] for j in jobs},
    "vals": {j["key"]: q("SELECT count(*) AS n FROM evals WHERE job = ? AND suite = 'val' AND metric = 'ppl'", j["key"])[0]["n"]
             for j in jobs},
    "widths": {j["key"]: json.loads(q("SELECT widths FROM jobs WHERE key = ?", j["key"])[0]["widths"]) for j in jobs},
    "step_events": int(sys.argv[3]),
    "runs_md": open(sys.argv[2]).read(),
    "wider_md": open(sys.argv[4]).read(),
}))
PY
ok $? "expected values read from results.db"

start_dash dash.out --db results.db --vendor "$VENDOR"
ok $? "tlm-dash started and printed its URL ($base)"
EXPECT=$tmp/expect.json
export EXPECT
browser static
ls "$SHOTS"/sweeps.png "$SHOTS"/jobs.png "$SHOTS"/job.png "$SHOTS"/compare.png "$SHOTS"/table.png >/dev/null 2>&1
ok $? "screenshots saved in $SHOTS"
kill "$dp" && wait "$dp"
ok $? "tlm-dash stops on SIGTERM with status 0"
[ "$(sha256sum results.db | cut -d' ' -f1)" = "$sha_before" ]
ok $? "results.db is unchanged: the dashboard only read it"
finish
