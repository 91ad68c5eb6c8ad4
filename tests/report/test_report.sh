#!/bin/sh
# test_report.sh: tlm-report end to end on a results.db built through the
# db API with known values (test_report_mkdb): every table in every format,
# with and without --paper, one sweep at a time, every figure as SVG and
# PNG, --all and --list; report_check.py then recomputes every number
# from the database with its own SQL and parses every file.  Also: the
# errors a user meets (no database, unknown table or sweep, an older
# schema, not a database, bad options) exit non-zero with a clear message.
# Needs no daemon and no GPU.
# (make check sets TLM_SRCDIR and TLM_BUILDDIR; tap.sh sets -u)
src=$TLM_SRCDIR build=$TLM_BUILDDIR
. "$src/tests/lib/tap.sh"
R="$build/reports/tlm-report"
tap_setup report
PY=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import sqlite3, statistics; statistics.correlation' >/dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
    echo "# SKIP: no python3 (3.10+) with sqlite3 to check the tables against"
    exit 77
fi

# under --enable-sanitizers: the plotting libraries' own caches are not our leaks
LSAN_OPTIONS="suppressions=$src/tests/report/test_report.lsan${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS

db="$tmp/results.db"
out="$tmp/out"
mkdir -p "$out/figures"
if "$build/tests/report/report_mkdb" "$db"; then pass "fixture database written through the db API"; else no "fixture database"; exit 1; fi

# every table x format, with and without --paper
for t in wider_early_vs_late schedule_ratio main alignment niah runs; do
    for f in md csv latex json; do
        ext=$f
        [ "$f" = latex ] && ext=tex
        for paper in "" --paper; do
            sfx=${paper:+.paper}
            if "$R" --db "$db" --table "$t" --format "$f" $paper --out "$out/$t$sfx.$ext" 2>"$tmp/err"; then
                pass "--table $t --format $f $paper"
            else
                no "--table $t --format $f $paper"
                sed 's/^/# /' "$tmp/err"
            fi
        done
    done
done
# one sweep: the second sweep shares a job with the first
for t in wider_early_vs_late schedule_ratio main runs; do
    for f in md csv latex json; do
        ext=$f
        [ "$f" = latex ] && ext=tex
        "$R" --db "$db" --table "$t" --sweep other --format "$f" --out "$out/$t.other.$ext" 2>/dev/null ||
            no "--table $t --sweep other --format $f"
    done
done
# stdout is the default output, and equals --out
"$R" --db "$db" --table schedule_ratio >"$tmp/stdout.md" && cmp -s "$tmp/stdout.md" "$out/schedule_ratio.md" &&
    pass "stdout and --out give the same table" || no "stdout and --out give the same table"

# figures: SVG always; PNG and PDF through rsvg-convert (librsvg2-bin), without which they are skipped
FIGS="loss dff rho wider ppl_ratio delta"
KINDS="svg png pdf"
if ! command -v rsvg-convert >/dev/null 2>&1; then
    KINDS=svg
    pass "# SKIP PNG and PDF figures: no rsvg-convert (the Debian package librsvg2-bin)"
fi
for fig in $FIGS; do
    for e in $KINDS; do
        if "$R" --db "$db" --plot "$fig" --out "$out/figures/$fig.$e" 2>"$tmp/err"; then pass "--plot $fig ($e)"; else
            no "--plot $fig ($e)"
            sed 's/^/# /' "$tmp/err"
        fi
    done
done
# the paper's values are beside ours in every figure that has them: --paper changes nothing there, and says so
"$R" --db "$db" --plot ppl_ratio --paper --out "$tmp/pr.svg" 2>"$tmp/err" && cmp -s "$tmp/pr.svg" "$out/figures/ppl_ratio.svg" &&
    grep -q "warning: --paper does nothing with --plot ppl_ratio" "$tmp/err" &&
    pass "--plot ppl_ratio --paper: the same figure, and a warning" || no "--plot ppl_ratio --paper"
# the delta figure: one row per comparison of the 5m panel (4), the paper's Δ beside each (4), two legend keys
"$R" --db "$db" --list --scale 5m 2>/dev/null | grep -q "^delta  *10  *8  " &&
    pass "--list --scale 5m: delta draws 10 series, 8 points" || no "--list --scale 5m: delta draws 10 series, 8 points"
"$R" --db "$db" --all --out "$out/all" >/dev/null 2>"$tmp/err" && pass "--all" || { no "--all"; sed 's/^/# /' "$tmp/err"; }
# report.md opens with the summary in words, from the 5m panel's numbers
for want in "wider-late is worse than uniform by 1.10 [0.85, 1.35] ppl, 3 seeds" \
    "wider-early is not distinguishable from uniform (+0.03 [-0.25, +0.32] ppl, 3 seeds)" \
    "wider-late has no result to compare with uniform (failed (diverged))"; do
    sed -n '/^## What the runs support/,/^## Wider/p' "$out/all/report.md" | grep -qF -- "$want" &&
        pass "report.md summary: $want" || no "report.md summary: $want"
done
"$R" --db "$db" --list >"$out/list.txt" 2>"$tmp/err" && pass "--list" || no "--list"
"$R" --help | grep -q "^usage: tlm-report" && pass "--help" || no "--help"
ls "$out/all" | grep -v -q '\.tmp\.' && ! ls -a "$out/all" "$out" | grep -q '\.tmp\.' && pass "no temporary files left" ||
    no "no temporary files left"

# three seeds: the paired differences and their 95% intervals, worked by hand from the fixture's
# perplexities (uniform 10.0, 10.3, 9.9; wider-late 11.0, 11.5, 11.0: differences 1.0, 1.2, 1.1, mean 1.10,
# sd 0.10, half-width t(2) 4.3027 x 0.10 / sqrt(3) = 0.248; wider-early 0.1, -0.1, 0.1: +0.03 +- 0.287;
# wider-middle 0.4, 0.3 over two seeds: t(1) 12.706 x 0.0707 / sqrt(2) = 0.635; cosine -0.2, -0.3, 0.0)
"$R" --db "$db" --table wider_early_vs_late --scale 5m >"$tmp/w5.md" 2>/dev/null
for want in "| wider-late | 0.5,1,1.5 | 11.17 ± 0.29 (n=3) | +1.10 [+0.85, +1.35] (n=3) † |" \
    "| wider-early | 1.5,1,0.5 | 10.10 ± 0.10 (n=3) | +0.03 [-0.25, +0.32] (n=3) |" \
    "| wider-middle | 0.75,1.5,0.75 | 10.50 ± 0.14 (n=2) | +0.35 [-0.29, +0.99] (n=2; seed 2 unpaired) |"; do
    grep -qxF -- "$want" "$tmp/w5.md" && pass "3 seeds, md: $want" || { no "3 seeds, md: $want"; sed 's/^/# /' "$tmp/w5.md"; }
done
"$R" --db "$db" --table schedule_ratio --scale 5m >"$tmp/r5.md" 2>/dev/null
grep -qF -- "| 1.5 -> 0.5 | **9.90** ± 0.10 (n=3) | -0.17 [-0.55, +0.21] (n=3) |" "$tmp/r5.md" &&
    pass "3 seeds, schedule_ratio: cosine -0.17 [-0.55, +0.21]" || no "3 seeds, schedule_ratio"
"$R" --db "$db" --table wider_early_vs_late --scale 5m --format csv >"$tmp/w5.csv" 2>/dev/null
"$PY" - "$tmp/w5.csv" <<'PY' && pass "3 seeds, csv: wider-late 1.10, lo 0.85, hi 1.35, n 3, sig 1" ||
import csv, sys
r = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["allocation"] == "wider-late"][0]
sys.exit(0 if [round(float(r["delta_vs_uniform" + k]), 4) for k in ("", "_lo", "_hi")] == [1.1, 0.8516, 1.3484]
         and r["delta_vs_uniform_n"] == "3" and r["delta_vs_uniform_sig"] == "1" else 1)
PY
    { no "3 seeds, csv"; sed 's/^/# /' "$tmp/w5.csv"; }
"$R" --db "$db" --table wider_early_vs_late --scale 5m --format latex >"$tmp/w5.tex" 2>/dev/null
grep -qF -- '+1.10 [+0.85, +1.35] (n=3)$^{\dagger}$' "$tmp/w5.tex" && pass "3 seeds, latex: the interval and the dagger" ||
    no "3 seeds, latex"
"$R" --db "$db" --table wider_early_vs_late --scale 5m --format json >"$tmp/w5.json" 2>/dev/null
"$PY" - "$tmp/w5.json" <<'PY' && pass "3 seeds, json: lo, hi, n, significant" || no "3 seeds, json"
import json, sys
rows = {r["cells"]["allocation"]: r["cells"]["delta_vs_uniform"] for r in json.load(open(sys.argv[1]))["panels"][0]["rows"]}
late, early = rows["wider-late"], rows["wider-early"]
sys.exit(0 if abs(late["lo"] - (1.1 - 0.2484138)) < 1e-6 and abs(late["hi"] - (1.1 + 0.2484138)) < 1e-6
         and late["n"] == 3 and late["significant"] is True and early["significant"] is False else 1)
PY

# issue 26: a sweep whose first run failed on a wrong data path, corrected and run again (report_mkdb
# rerun): the failed jobs stay in results.db under other keys, and the sweep no longer lists them.  The
# tables read the latest definition: both seeds paired on both sides, the failed jobs left out of the
# cells and counted in a note (before: "-2.21 (n=1; no interval; seeds 0, 1 unpaired)", "(n=2; 2 failed)").
mk() { "$build/tests/report/report_mkdb" "$tmp/$1.db" "$1" || no "report_mkdb $1"; }
mk rerun
for sweep in "" rr; do
    "$R" --db "$tmp/rerun.db" --table schedule_ratio ${sweep:+--sweep $sweep} >"$tmp/rr.md" 2>"$tmp/err"
    note="- Left out: 4 jobs that an earlier definition of a sweep listed and no current one does"
    [ -n "$sweep" ] && note="- Left out: 4 jobs that an earlier definition of sweep rr listed and the current one does not"
    for want in "| uniform | 14.20 ± 0.28 (n=2) |" "| 1.5 -> 0.5 | **12.04** ± 0.35 (n=2) | -2.16 [-2.80, -1.52] (n=2) † |" \
        "$note"; do
        grep -qF -- "$want" "$tmp/rr.md" && pass "a corrected sweep${sweep:+ (--sweep rr)}: $want" ||
            { no "a corrected sweep${sweep:+ (--sweep rr)}: $want"; sed 's/^/# /' "$tmp/rr.md"; }
    done
done
"$R" --db "$tmp/rerun.db" --table runs --format csv >"$tmp/rr.csv" 2>/dev/null
[ "$(grep -c ',rr,' "$tmp/rr.csv")" = 4 ] && ! grep -q ',failed,' "$tmp/rr.csv" &&
    pass "a corrected sweep: the runs table lists its 4 current jobs, not the 4 failed ones" ||
    { no "a corrected sweep: runs"; sed 's/^/# /' "$tmp/rr.csv"; }
# ... and a taper is paired with the uniform model that differs from it by the taper alone: a grid over
# train.lr gives each lr its own panel (before: one panel, four uniform jobs, seeds paired across lrs)
mk lrgrid
"$R" --db "$tmp/lrgrid.db" --table schedule_ratio >"$tmp/lr.md" 2>/dev/null
for want in "### Transformer++, 1m, 492K tokens, train.lr=0.001" "### Transformer++, 1m, 492K tokens, train.lr=0.003" \
    "| 1.5 -> 0.5 | **12.85** ± 0.35 (n=2) | -0.35 [-0.99, +0.29] (n=2) |" "| 1.5 -> 0.5 | 12.65 ± 0.21 (n=2) | +0.55 [-0.09, +1.19] (n=2) |"; do
    grep -qF -- "$want" "$tmp/lr.md" && pass "a grid over train.lr: $want" || { no "a grid over train.lr: $want"; sed 's/^/# /' "$tmp/lr.md"; }
done
"$R" --db "$tmp/lrgrid.db" --table schedule_ratio --format csv 2>/dev/null | head -1 | grep -q '^arch,scale,tokens,setting,ratio,' &&
    pass "a grid over train.lr: CSV says the setting of each row" || no "a grid over train.lr: CSV setting column"
# issue 26: --paper never subtracts the paper's 440M token-level perplexity from another setting's: the
# paper's values and Δ beside ours; ours - paper only in the paper's own setting (440M, 30B Llama 3 tokens)
mk paper440
"$R" --db "$tmp/paper440.db" --table wider_early_vs_late --paper >"$tmp/p.md" 2>/dev/null
sed -n '/^### Transformer++, 1m/,/^### /p' "$tmp/p.md" >"$tmp/p1m.md"
sed -n '/^### Transformer++, 440m/,$p' "$tmp/p.md" >"$tmp/p440.md"
grep -qF "| allocation | groups | val ppl | Δ vs uniform | paper val ppl | paper Δ |" "$tmp/p1m.md" && ! grep -q "| val ppl − paper" "$tmp/p1m.md" &&
    pass "--paper, 1M byte-level: the paper's val ppl and Δ beside ours, no ours − paper" ||
    { no "--paper, 1M byte-level: no ours − paper"; sed 's/^/# /' "$tmp/p1m.md"; }
grep -qF "| val ppl − paper | Δ − paper Δ |" "$tmp/p440.md" &&
    pass "--paper, the paper's setting: ours − paper and Δ − paper Δ" || { no "--paper, 440M: ours − paper"; sed 's/^/# /' "$tmp/p440.md"; }
"$R" --db "$tmp/paper440.db" --table schedule_ratio --paper --format csv >"$tmp/p.csv" 2>/dev/null
! grep -q '^transformer,1m,.*,ours-paper,' "$tmp/p.csv" && grep -q '^transformer,440m,.*,ours-paper,' "$tmp/p.csv" &&
    pass "--paper, schedule_ratio: a difference row at 440M only" || { no "--paper, schedule_ratio"; sed 's/^/# /' "$tmp/p.csv"; }
# issue 26: the runs table shows val ppl, and every loss with three decimals
"$R" --db "$db" --table runs >"$tmp/runs.md" 2>/dev/null
"$PY" - "$tmp/runs.md" <<'PY' && pass "runs: a val ppl column; losses with three decimals, perplexities with two" ||
import re, sys
rows = [l.strip().strip("|").split(" | ") for l in open(sys.argv[1]) if l.startswith("| ")]
head, body = rows[0], rows[1:]
loss, ppl = head.index("last loss"), head.index("val ppl")
nums = lambda k, d: [r[k] for r in body if not r[k].startswith("_")]
good = all(re.fullmatch(r"\d+\.\d{3}", v) for v in nums(loss, 3)) and all(re.fullmatch(r"\d+\.\d{2}", v) for v in nums(ppl, 2))
sys.exit(0 if good and len(nums(loss, 3)) > 10 and len(nums(ppl, 2)) > 10 else 1)
PY
    { no "runs: val ppl and loss digits"; sed 's/^/# /' "$tmp/runs.md"; }
# issue 26: report.md leaves out the tables that do not apply (no "Nothing in the database" sections)
mk demo
"$R" --db "$tmp/demo.db" --all --out "$tmp/demo" >/dev/null 2>"$tmp/err" || { no "--all on the demo's database"; sed 's/^/# /' "$tmp/err"; }
grep -q "^- tables with nothing in this database, left out: alignment, niah$" "$tmp/demo/report.md" &&
    ! grep -qi "nothing in the database for this table\|^## .*\(Alignment\|Needle\)" "$tmp/demo/report.md" &&
    pass "report.md: alignment and niah left out, named once" || { no "report.md leaves out tables"; sed -n '1,12s/^/# /p' "$tmp/demo/report.md"; }

# issue 27: every figure of --all, on the fixture, the demo's database (sweeps/demo.yaml's 15 jobs) and four
# architectures x nine configurations x three seeds: marks inside their axes and off the frame, the legend
# inside the canvas and over no plot, text as text, inside the canvas and overlapping nothing
mk arch4
"$R" --db "$tmp/arch4.db" --all --out "$tmp/arch4" >/dev/null 2>"$tmp/err" || { no "--all on 4 architectures"; sed 's/^/# /' "$tmp/err"; }
# rho draws one setting, at most 6 configurations: its caption says what it left out, and how to choose
grep -qF "Drawn: the first 6 configurations of this setting; 3 other settings not drawn (choose others with --arch" \
    "$tmp/arch4/report.md" && pass "rho on 4 architectures: the caption says that 6 configurations of one setting are drawn, 3 settings not" ||
    no "rho on 4 architectures: the caption says what it left out"
figcheck() { # DIR FIGURE...
    "$PY" "$src/tests/report/figure_check.py" "$@" >"$tmp/fc" 2>&1
    st=$?
    sed 's/^\(not \)\{0,1\}ok [0-9]* - /&figure: /' "$tmp/fc" | while IFS= read -r line; do echo "$line"; done
    c=$(grep -c '^ok\|^not ok' "$tmp/fc")
    [ "$st" = 0 ] && pass "figure_check.py $1: $c checks" || no "figure_check.py $1 ($st)"
}
figcheck "$out/figures" $FIGS
figcheck "$tmp/demo/figures" loss dff wider ppl_ratio delta
figcheck "$tmp/arch4/figures" $FIGS

# errors: exit status and message
expect() { # expect STATUS PATTERN DESCRIPTION -- command...
    st=$1 pat=$2 d=$3
    shift 4
    "$@" >"$tmp/o" 2>"$tmp/e"
    got=$?
    if [ "$got" = "$st" ] && grep -q -- "$pat" "$tmp/e"; then pass "$d"; else
        no "$d (status $got)"
        sed 's/^/# /' "$tmp/e"
    fi
}
expect 1 "no such file" "a missing database: says so, status 1" -- "$R" --db "$tmp/nope.db" --table runs
expect 2 "unknown table 'frob' (tables: wider_early_vs_late" "an unknown table lists the tables" -- \
    "$R" --db "$db" --table frob
expect 1 "no sweep named 'nope' (sweeps: fx, other)" "an unknown sweep lists the sweeps" -- \
    "$R" --db "$db" --table runs --sweep nope
expect 2 "unknown figure" "an unknown figure" -- "$R" --db "$db" --plot frob --out "$tmp/x.svg"
expect 2 "needs --out" "--plot without --out" -- "$R" --db "$db" --plot loss
expect 2 ".svg, .png or .pdf" "--plot into a .jpg" -- "$R" --db "$db" --plot loss --out "$tmp/x.jpg"
expect 2 "expected md, csv, latex or json" "an unknown format" -- "$R" --db "$db" --table runs --format xls
expect 2 "nothing to do" "no mode" -- "$R" --db "$db"
expect 2 "choose one of" "two modes" -- "$R" --db "$db" --list --table runs
expect 2 "unrecognized option '--tabel'" "an unknown option" -- "$R" --db "$db" --tabel runs
# a malformed --taper is a usage error (docs/report.md: status 2), found before the database is read
expect 2 "--taper 'cosine': expected SCHEDULE:START:END" "a bad --taper: status 2" -- "$R" --db "$db" --table main --taper cosine
expect 2 "--taper 'bogus:1.5:0.5': expected SCHEDULE:START:END" "an unknown --taper schedule: status 2" -- \
    "$R" --db "$tmp/nope.db" --table main --taper bogus:1.5:0.5
# a filter that selects nothing is an error naming what exists, like an unknown sweep (status 1)
expect 1 "--job ffffffffffff matches no job in $db (its jobs: [0-9a-f]\{12\} " "an unknown --job names the jobs" -- \
    "$R" --db "$db" --table runs --job ffffffffffff
expect 1 "--job ffffffffffff matches no job in sweep other (its jobs: " "...in a sweep, that sweep's" -- \
    "$R" --db "$db" --table main --sweep other --job ffffffffffff
expect 1 "--job abc matches no job in .*a key prefix needs 6 or more hex digits" "a short --job says why" -- \
    "$R" --db "$db" --table runs --job abc
expect 1 "--arch bogus matches no job in $db (its architectures: gated_attn, transformer)" \
    "an unknown --arch names the architectures" -- "$R" --db "$db" --table runs --arch bogus
expect 1 "--arch gated_attn matches no job in sweep other (its architectures: transformer)" \
    "...of the sweep" -- "$R" --db "$db" --table runs --arch gated_attn --sweep other
expect 1 "--scale 9z matches no job in $db (its scales: 1m, 3m, 5m)" "an unknown --scale names the scales" -- \
    "$R" --db "$db" --list --scale 9z
expect 1 "--arch gated_attn --scale 3m together match no job in $db (its architecture and scale pairs: " \
    "--arch and --scale that exist but not together" -- "$R" --db "$db" --plot loss --out "$tmp/x.svg" \
    --arch gated_attn --scale 3m
# options given twice, or that the chosen mode ignores
expect 2 "--db is given twice; give it once" "--db twice" -- "$R" --db "$db" --db "$db" --list
expect 2 "--max-series 1.5: not an integer (expected an integer from 1 to 1000)" "--max-series 1.5" -- \
    "$R" --db "$db" --plot loss --out "$tmp/x.svg" --max-series 1.5
expect 2 "--format does nothing with --plot" "--format with --plot" -- "$R" --db "$db" --plot loss --out "$tmp/x.svg" \
    --format csv
expect 2 "--max-series does nothing with --table" "--max-series with --table" -- "$R" --db "$db" --table runs \
    --max-series 3
expect 2 "--out does nothing with --list" "--out with --list" -- "$R" --db "$db" --list --out "$tmp/list.txt"
expect 0 "warning: --taper does nothing with --table runs; ignored" "--taper with a table that has no taper: a warning" \
    -- "$R" --db "$db" --table runs --taper cosine:1.5:0.5
# a folder where a file is expected, and back
expect 2 "--db $tmp: is a directory (expected an SQLite database file" "--db a folder" -- "$R" --db "$tmp" --table runs
expect 2 "--out $out: is a directory (expected a file" "a table --out into a folder" -- \
    "$R" --db "$db" --table runs --out "$out"
expect 2 "--out $db: is not a directory (expected the folder --all writes into)" "--all --out a file" -- \
    "$R" --db "$db" --all --out "$db"
"$PY" - "$tmp/old.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE jobs (key TEXT)")
c.execute("PRAGMA user_version = 1")
c.commit()
PY
expect 1 "older than this program" "a database of an older schema: run tlmd to migrate" -- \
    "$R" --db "$tmp/old.db" --table runs
# what SQLite calls "unable to open database file", or blocks on, said plainly
mkfifo "$tmp/fifo.db"
expect 1 "fifo.db: is not a regular file (a FIFO) (expected an SQLite database file)" "--db a FIFO: refused, never opened" \
    -- timeout 10 "$R" --db "$tmp/fifo.db" --list
sqlite3 "$tmp/newer.db" "pragma user_version = 99; create table t(x)"
expect 1 "newer.db: schema version 99 is newer than this program's" "a newer database without TLM's tables" -- \
    "$R" --db "$tmp/newer.db" --table runs
if [ "$(id -u)" != 0 ]; then
    cp "$db" "$tmp/unreadable.db" && chmod 000 "$tmp/unreadable.db"
    expect 1 "unreadable.db: cannot open: Permission denied" "an unreadable --db" -- "$R" --db "$tmp/unreadable.db" --list
    rm -f "$tmp/unreadable.db"
else
    pass "# SKIP an unreadable --db (root reads every file)"
fi
expect 1 "nodir/t.md: cannot create (as $tmp/nodir/t.md.tmp.[0-9]*): No such file or directory" \
    "--out in a folder that does not exist names --out" -- "$R" --db "$db" --table runs --out "$tmp/nodir/t.md"
mkfifo "$tmp/out.fifo"
expect 1 "out.fifo: is not a regular file (a FIFO)" "--out a FIFO: refused, not replaced by a file" -- \
    timeout 10 "$R" --db "$db" --table runs --out "$tmp/out.fifo"
[ -p "$tmp/out.fifo" ] && pass "...the FIFO is still there" || no "the FIFO given as --out was replaced"
echo "not a database, just text" >"$tmp/text.db"
# (the db layer's words since issue 26: what the file is, and what to give instead)
expect 1 "text.db: not an SQLite database (the file does not begin with SQLite's header); give --db the results" \
    "a file that is not a database" -- "$R" --db "$tmp/text.db" --table runs
"$R" --db "$db" --table wider_early_vs_late --sweep other >"$tmp/o" 2>"$tmp/e"
[ $? = 0 ] && grep -q "nothing in" "$tmp/e" && grep -q "Nothing in results.db" "$tmp/o" &&
    pass "a table the sweep cannot fill: status 0, says so" || no "a table the sweep cannot fill"
"$R" --db "$db" --plot rho --scale 3m --out "$tmp/rho.svg" >/dev/null 2>"$tmp/e"
[ $? = 1 ] && grep -q "nothing to draw" "$tmp/e" && [ ! -e "$tmp/rho.svg" ] &&
    pass "a figure with nothing to draw: status 1, no file" || no "a figure with nothing to draw"

# a report while the daemon is in the middle of a write: not blocked, and
# it sees the last committed state, not the uncommitted one
"$PY" - "$db" "$R" <<'PY' && pass "a report during an open write transaction: not blocked, sees committed data" ||
import csv, io, sqlite3, subprocess, sys
db, report = sys.argv[1], sys.argv[2]
w = sqlite3.connect(db, isolation_level=None, timeout=10)
w.execute("BEGIN IMMEDIATE")
w.execute("UPDATE jobs SET status = 'failed', reason = 'crash' WHERE status = 'done'")
r = subprocess.run([report, "--db", db, "--table", "runs", "--format", "csv"], capture_output=True, text=True,
                   timeout=30)
w.execute("ROLLBACK")
states = [row["state"] for row in csv.DictReader(io.StringIO(r.stdout))]
sys.exit(0 if r.returncode == 0 and states.count("done") > 0 and "crash" not in r.stdout else 1)
PY
    no "a report during an open write transaction"

# the numbers
"$PY" "$src/tests/report/report_check.py" "$db" "$out" >"$tmp/check" 2>&1
st=$?
sed -e '/^1\.\./d' -e 's/^\(not \)\{0,1\}ok [0-9]* - /&check: /' "$tmp/check" | while IFS= read -r line; do
    echo "$line"
done
checks=$(grep -c '^ok\|^not ok' "$tmp/check")
[ "$st" = 0 ] && pass "report_check.py: $checks checks against SQL" || no "report_check.py ($st)"
finish
