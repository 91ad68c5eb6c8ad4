#!/bin/sh
# bench_report.sh: how long tlm-report takes on a results.db of 10,000 jobs
# (bench_report_gen writes it through the db API): every table in every
# format, --list, --all and each figure, best of three runs, beside the
# sqlite3 shell reading the same final numbers from the `results` view.
# The goal: every table under a second.  A benchmark, not a test.
# Run from the build folder:
#   make bench/bench_report_gen reports/tlm-report && ../bench/bench_report.sh [JOBS] [DB]
set -u
jobs=${1:-10000}
build=$(pwd)
db=${2:-$build/bench/report-$jobs.db}
R="$build/reports/tlm-report"
[ -x "$R" ] && [ -x "$build/bench/bench_report_gen" ] || {
    echo "bench_report.sh: build first: make bench/bench_report_gen reports/tlm-report" >&2
    exit 1
}
if [ ! -s "$db" ]; then
    "$build/bench/bench_report_gen" "$db" --jobs "$jobs" || exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-bench-report.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# best of three wall-clock seconds of a command (output discarded)
best() {
    b=
    for i in 1 2 3; do
        s=$(date +%s%N)
        "$@" >/dev/null 2>&1 || { echo "failed"; return; }
        e=$(date +%s%N)
        t=$(((e - s) / 1000000))
        if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
    done
    printf '%d.%03d' $((b / 1000)) $((b % 1000))
}

printf '%s: %s jobs, %s MB\n\n' "$db" "$(sqlite3 "$db" 'SELECT count(*) FROM jobs' 2>/dev/null || echo "$jobs")" \
    "$(($(stat -c %s "$db") / 1048576))"
printf '%-22s %8s %8s %8s %8s   (seconds, best of 3)\n' table md csv latex json
for t in wider_early_vs_late schedule_ratio main alignment niah runs; do
    printf '%-22s' "$t"
    for f in md csv latex json; do
        printf ' %8s' "$(best "$R" --db "$db" --table "$t" --format "$f")"
    done
    printf '\n'
done
printf '%-22s %8s\n' "main --paper" "$(best "$R" --db "$db" --table main --paper)"
printf '%-22s %8s\n' "--list" "$(best "$R" --db "$db" --list)"
printf '%-22s %8s   (every table in 4 formats, every figure as SVG, PNG and PDF)\n' "--all" \
    "$(best "$R" --db "$db" --all --out "$tmp/all")"
for fig in loss dff rho wider ppl_ratio delta; do
    printf '%-22s %8s %8s %8s   (svg, png, pdf)\n' "--plot $fig" "$(best "$R" --db "$db" --plot "$fig" --out "$tmp/f.svg")" \
        "$(best "$R" --db "$db" --plot "$fig" --out "$tmp/f.png")" "$(best "$R" --db "$db" --plot "$fig" --out "$tmp/f.pdf")"
done
if command -v sqlite3 >/dev/null 2>&1; then
    printf '\npeer: the sqlite3 shell on the `results` view (one row per job, final numbers as columns)\n'
    printf '%-40s %8s\n' "SELECT arch, schedule, val_ppl" "$(best sqlite3 "$db" 'SELECT arch, schedule, ratio_start, val_ppl FROM results')"
    printf '%-40s %8s\n' "SELECT * (every final metric)" "$(best sqlite3 "$db" 'SELECT * FROM results')"
fi
