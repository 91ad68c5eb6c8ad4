# 80-report.sh: tlm-report (docs/report.md): queries that match nothing are
# errors naming what exists (exit 1); bad --db files (empty, not SQLite, a
# newer or older schema, truncated, another program's); every option
# missing, malformed, repeated or in a mode that ignores it (exit 2); and
# every table, figure and format on a real database (exit 0).  Sourced by
# trial.sh.

need_db
DB=$FX/db/results.db
# rp ID WHAT STATUS PATTERN ARGS...: tlm-report ARGS
rp() {
    local id=$1 what=$2 st=$3 pat=$4
    shift 4
    selected "$id" || return 0
    in_case "$id"
    tc "$id" "$what" "$st" "$pat" "$R" "$@"
}
# ---- filters that match nothing
rp issue.report-job "--job ffffffffffff" 1 "--job ffffffffffff matches no job in .*results\.db \(its jobs: [0-9a-f]{12} " --db "$DB" --table runs --job ffffffffffff
rp report.job-short "--job abc (too short a key, no such label)" 1 "--job abc matches no job in .*a key prefix needs 6 or more hex digits" --db "$DB" --table runs --job abc
rp report.job-label "--job wider-early (a label not in the database)" 1 "--job wider-early matches no job in .*\(its jobs: " --db "$DB" --table runs --job wider-early
K1=$(q "$DB" "select substr(key, 1, 12) from jobs order by key limit 1")
rp report.job-second "a second --job that matches nothing (the first does)" 1 "--job ffffffffffff matches no job" --db "$DB" --table runs --job "$K1" --job ffffffffffff
rp report.job-key "--job of a job's key prefix (handled)" 0 "$K1" --db "$DB" --table runs --job "$K1"
rp issue.report-arch "--arch bogus" 1 "--arch bogus matches no job in .*results\.db \(its architectures: transformer\)" --db "$DB" --table runs --arch bogus
rp report.scale-none "--scale 1m (the jobs are custom)" 1 "--scale 1m matches no job in .*results\.db \(its scales: custom\)" --db "$DB" --table runs --scale 1m
rp report.sweep-none "--sweep nope" 1 "no sweep named 'nope' \(sweeps: two\)" --db "$DB" --table runs --sweep nope
rp report.arch-scale "--arch and --scale that exist apart but not together" 1 "(together match no job|matches no job)" --db "$DB" --table runs --arch gated_attn --scale custom
rp report.list-filter "--list with --arch bogus" 1 "--arch bogus matches no job" --db "$DB" --list --arch bogus
rp report.plot-filter "--plot with --job ffffffffffff" 1 "--job ffffffffffff matches no job" --db "$DB" --plot loss --out l.svg --job ffffffffffff

# ---- bad databases
selected report.db-empty && { in_case report.db-empty; : >r.db
    tc report.db-empty "an empty (0-byte) --db" 1 "r\.db: not a TLM results database \(no schema\); tlmd creates it" "$R" --db r.db --list; }
selected report.db-text && { in_case report.db-text; echo "not a database, just text" >r.db
    tc report.db-text "a text file as --db" 1 "r\.db: not an SQLite database" "$R" --db r.db --table runs; }
selected report.db-newer-foreign && { in_case report.db-newer-foreign; sqlite3 r.db "pragma user_version = 99; create table t(x)"
    tc report.db-newer-foreign "a database of schema 99 without TLM's tables" 1 "r\.db: .*(schema version 99|newer)" "$R" --db r.db --table runs; }
selected report.db-newer && { in_case report.db-newer; cp "$DB" r.db; sqlite3 r.db "pragma user_version = 99"
    tc report.db-newer "a TLM database marked schema 99 (a newer file can be read)" 0\|1 "cosine|r\.db: .*(schema version 99|newer)" "$R" --db r.db --table runs; }
selected report.db-older && { in_case report.db-older; sqlite3 r.db "create table jobs (key text); pragma user_version = 1"
    tc report.db-older "a database of schema 1" 1 "older than this program" "$R" --db r.db --table runs; }
selected report.db-foreign && { in_case report.db-foreign; sqlite3 r.db "create table t(x)"
    tc report.db-foreign "another program's SQLite database" 1 "r\.db: .*(no TLM schema|not a TLM results database)" "$R" --db r.db --table runs; }
selected report.db-truncated && { in_case report.db-truncated; head -c 50000 "$DB" >r.db
    tc report.db-truncated "a database cut to 50 KB" 1 "r\.db: .*malformed" "$R" --db r.db --table runs; }
selected report.db-wal-left && { in_case report.db-wal-left; cp "$DB" r.db; printf 'junk junk junk junk' >r.db-wal
    tc report.db-wal-left "a junk r.db-wal beside the database (read-only open)" 0\|1 "cosine|r\.db" "$R" --db r.db --table runs; }
selected report.db-busy && { in_case report.db-busy; cp "$DB" r.db
    # a writer holds an exclusive transaction for 3 s; the report waits or says so, never hangs
    (timeout 10 python3 -c 'import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute("begin exclusive"); time.sleep(3); c.execute("rollback")' r.db &)
    sleep 0.5
    TO=15 tc report.db-busy "a database another process holds locked for 3 s (WAL mode: readers go on)" 0\|1 "cosine|locked|busy" "$R" --db r.db --table runs; }

# ---- options
rp report.nomode "no mode" 2 "nothing to do" --db "$DB"
rp report.two-modes "--list with --table" 2 "choose one of" --db "$DB" --list --table runs
rp report.unknown "an unknown option" 2 "unrecognized option '--tabel'" --db "$DB" --tabel runs
rp report.table-novalue "--table without its value" 2 "option '--table' requires an argument" --db "$DB" --table
rp report.table-unknown "--table frob" 2 "unknown table 'frob' \(tables: wider_early_vs_late" --db "$DB" --table frob
rp report.table-twice "--table twice" 2 "--table is given twice; give it once" --db "$DB" --table runs --table main
rp report.db-twice "--db twice" 2 "--db is given twice; give it once" --db "$DB" --db "$DB" --list
rp report.format-bad "--format xls" 2 "expected md, csv, latex or json" --db "$DB" --table runs --format xls
rp report.format-plot "--format with --plot" 2 "--format does nothing with --plot" --db "$DB" --plot loss --out l.svg --format csv
rp report.plot-unknown "--plot frob" 2 "unknown figure" --db "$DB" --plot frob --out l.svg
rp report.plot-noout "--plot without --out" 2 "needs --out" --db "$DB" --plot loss
rp report.plot-jpg "--plot into a .jpg" 2 "\.svg, \.png or \.pdf" --db "$DB" --plot loss --out l.jpg
rp report.all-noout "--all without --out" 2 "--all.*(needs|requires) --out|needs --out" --db "$DB" --all
rp report.series-0 "--max-series 0" 2 "--max-series 0: out of range \(expected an integer from 1 to 1000\)" --db "$DB" --plot loss --out l.svg --max-series 0
rp report.series-big "--max-series 1001" 2 "--max-series 1001: out of range \(expected an integer from 1 to 1000\)" --db "$DB" --plot loss --out l.svg --max-series 1001
rp report.series-frac "--max-series 1.5" 2 "--max-series 1.5: not an integer \(expected an integer from 1 to 1000\)" --db "$DB" --plot loss --out l.svg --max-series 1.5
rp report.series-table "--max-series with --table" 2 "--max-series does nothing with --table" --db "$DB" --table runs --max-series 3
rp report.out-list "--out with --list" 2 "--out does nothing with --list" --db "$DB" --list --out l.txt
rp report.taper-short "--taper cosine (no ratio)" 2 "--taper 'cosine': expected SCHEDULE:START:END" --db "$DB" --table main --taper cosine
rp report.taper-schedule "--taper bogus:1.5:0.5" 2 "--taper 'bogus:1\.5:0\.5': expected SCHEDULE:START:END with SCHEDULE linear, cosine or sigmoid" --db "$DB" --table main --taper bogus:1.5:0.5
rp report.taper-words "--taper cosine:a:b" 2 "--taper 'cosine:a:b': expected SCHEDULE:START:END" --db "$DB" --table main --taper cosine:a:b
rp report.taper-runs "--taper with --table runs (a warning)" 0 "warning: --taper does nothing with --table runs; ignored" --db "$DB" --table runs --taper cosine:1.5:0.5
rp report.paper-list "--paper with --list" 0\|2 "warning: --paper|--paper does nothing with --list|2 jobs" --db "$DB" --list --paper

# ---- every table, figure and format (handled)
for t in wider_early_vs_late schedule_ratio main alignment niah runs; do
    rp "report.table-$t" "--table $t (md)" 0 "" --db "$DB" --table "$t"
done
for f in csv latex json; do
    rp "report.format-$f" "--table runs --format $f" 0 "" --db "$DB" --table runs --format "$f"
done
rp report.plot-svg "--plot loss (svg)" 0 "" --db "$DB" --plot loss --out l.svg
rp report.plot-png "--plot dff (png)" 0 "" --db "$DB" --plot dff --out d.png
rp report.plot-empty "--plot rho with no alignment statistics: nothing to draw" 1 "rho: nothing to draw from" --db "$DB" --plot rho --out r.svg
selected report.all && { in_case report.all
    AFTER='[ -f a/report.md ] && ! ls -a a | grep -q "\.tmp\."' AFTER_MSG="no report.md, or temporary files left" \
        tc report.all "--all --out a" 0 "wrote a/report\.md" "$R" --db "$DB" --all --out a; }
rp report.list "--list" 0 "2 jobs \(2 done" --db "$DB" --list
selected report.readonly && { in_case report.readonly; cp "$DB" r.db; sum=$(sha256sum <r.db)
    AFTER='[ "$(sha256sum <r.db)" = "'"$sum"'" ]' AFTER_MSG="the report changed the database" \
        tc report.readonly "a report leaves the database byte for byte as it was" 0 "" "$R" --db r.db --all --out a; }
