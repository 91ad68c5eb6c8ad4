#!/bin/sh
# bench_dash.sh: tlm-dash's server time on a results.db of 10,000 jobs
# (bench_report_gen writes it, as for bench_report.sh): the jobs page's
# answer (/api/jobs), a job page's two (/api/job, /api/series), the sweeps
# page and the runs table, each asked 10 times; the server's own time
# (its Server-Timing header: wall and its thread's CPU time) best and
# median, the client's total, the answer's size, the 304 of a page that
# polls an unchanged database, and the server's memory (VmRSS, VmHWM).
# The goal: under 100 ms for the jobs page and a job page.  A benchmark,
# not a test.  Run from the build folder:
#   make bench/bench_report_gen dashboard/tlm-dash && ../bench/bench_dash.sh [JOBS] [DB]
set -u
jobs=${1:-10000}
build=$(pwd)
db=${2:-$build/bench/report-$jobs.db}
D="$build/dashboard/tlm-dash"
[ -x "$D" ] && [ -x "$build/bench/bench_report_gen" ] || {
    echo "bench_dash.sh: build first: make bench/bench_report_gen dashboard/tlm-dash" >&2
    exit 1
}
command -v curl >/dev/null 2>&1 || { echo "bench_dash.sh: needs curl" >&2; exit 1; }
[ -s "$db" ] || "$build/bench/bench_report_gen" "$db" --jobs "$jobs" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-bench-dash.XXXXXX") || exit 1
"$D" --db "$db" >"$tmp/out" 2>"$tmp/err" &
dp=$!
trap 'kill $dp 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ $i -lt 100 ] && ! grep -q "serving" "$tmp/out"; do sleep 0.05; i=$((i + 1)); done
url=$(sed -n 's/.* at \(http[^ ]*\).*/\1/p' "$tmp/out")
base=${url%%/\?t=*}
token=${url##*\?t=}
key=$(sqlite3 "$db" "SELECT key FROM jobs WHERE status = 'done' LIMIT 1")

# measure URL [CURL ARGS]: the URL 10 times: the Server-Timing durations and curl's total, in ms
measure() {
    u=$1
    shift
    : >"$tmp/t"
    for n in 1 2 3 4 5 6 7 8 9 10; do
        rm -f "$tmp/body"
        total=$(curl -s -o "$tmp/body" -D "$tmp/h" -w '%{time_total}' "$@" "$u")
        st=$(tr -d '\r' <"$tmp/h" | sed -n 's/^Server-Timing: app;dur=\([0-9.]*\), cpu;dur=\([0-9.]*\)/\1 \2/p')
        echo "$st $total" >>"$tmp/t"
    done
    size=$(stat -c %s "$tmp/body" 2>/dev/null || echo 0)
    awk -v size="$size" -v code="$(head -n 1 "$tmp/h" | cut -d' ' -f2)" '
        { w[NR] = $1; c[NR] = $2; t[NR] = $3 * 1000 }
        function best(a,   i, b) { b = a[1]; for (i = 2; i <= NR; i++) if (a[i] < b) b = a[i]; return b }
        function median(a,   i, j, x, s) { for (i = 1; i <= NR; i++) s[i] = a[i]
            for (i = 2; i <= NR; i++) { x = s[i]; for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]; s[j + 1] = x }
            return (s[int((NR + 1) / 2)] + s[int(NR / 2) + 1]) / 2 }
        END { printf "%8.1f %8.1f %8.1f %8.1f %8.1f %10d %4s\n", best(w), median(w), best(c), median(c), median(t), size, code }
    ' "$tmp/t"
}
printf '%s: %s jobs, %s MB; load average %s\n\n' "$db" "$(sqlite3 "$db" 'SELECT count(*) FROM jobs')" \
    "$(($(stat -c %s "$db") / 1048576))" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %8s %8s %8s %8s %8s %10s %4s\n' "answer (ms)" wall wall-med cpu cpu-med client bytes code
printf '%-26s %s\n' "/api/jobs (jobs page)" "$(measure "$base/api/jobs?t=$token")"
printf '%-26s %s\n' "/api/job (a job page)" "$(measure "$base/api/job?key=$key&t=$token")"
printf '%-26s %s\n' "/api/series (its curves)" "$(measure "$base/api/series?key=$key&t=$token")"
printf '%-26s %s\n' "/api/sweeps" "$(measure "$base/api/sweeps?t=$token")"
printf '%-26s %s\n' "/api/table?name=runs" "$(measure "$base/api/table?name=runs&t=$token")"
etag=$(curl -s -D - -o /dev/null "$base/api/jobs?t=$token" | tr -d '\r' | sed -n 's/^ETag: //p')
printf '%-26s %s\n' "/api/jobs, unchanged (304)" "$(measure "$base/api/jobs?t=$token" -H "If-None-Match: $etag")"
printf '\nserver memory: %s\n' "$(grep -E '^(VmHWM|VmRSS|RssAnon|RssFile)' /proc/$dp/status | tr -s ' \t' ' ' | tr '\n' ' ')"
printf '(RssFile: pages of results.db mapped by SQLite (mmap_size), shared with the page cache; RssAnon: the server'"'"'s own)\n'
printf '(wall: the server from the request to its answer; cpu: its thread'"'"'s CPU time, which other load does not inflate)\n'
