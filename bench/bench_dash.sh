#!/bin/sh
# bench_dash.sh: tlm-dash's server time and answer sizes on a results.db
# of 100,000 jobs (bench_report_gen writes it, plus one long run of
# 100,000 steps that this script adds, so that a job page has curves to
# thin): the jobs page (its first page, its last, a filter, a sort by val
# ppl: computed, then the next page of it; a sort by every other column, and
# by val ppl of the done jobs and within a sweep), a job page (/api/job and
# /api/series, of a short job and of the long one), the sweeps page, the
# runs table (built, then its next page) and the 304 of a page that polls
# an unchanged database.  Each is asked 10 times; printed: the server's own
# time (its Server-Timing header: wall, and its thread's CPU time, which
# other load does not inflate) best and median, the client's median, the
# answer's size, and whether the targets hold: the jobs page and a job page
# under 100 ms of server time and 200 KB.  Then the server's memory.
# A benchmark, not a test.  Run from the build folder:
#   make bench/bench_report_gen dashboard/tlm-dash && ../bench/bench_dash.sh [JOBS] [DB] [TLM-DASH]
# (TLM-DASH: another build of it to measure, such as an older one.)  A DB
# written before schema version 7 is upgraded first: tlmd migrate --db DB.
set -u
jobs=${1:-100000}
build=$(pwd)
db=${2:-$build/bench/dash-$jobs.db}
D=${3:-$build/dashboard/tlm-dash}
[ -x "$D" ] && [ -x "$build/bench/bench_report_gen" ] || {
    echo "bench_dash.sh: build first: make bench/bench_report_gen dashboard/tlm-dash" >&2
    exit 1
}
command -v curl >/dev/null 2>&1 && command -v sqlite3 >/dev/null 2>&1 || {
    echo "bench_dash.sh: needs curl and sqlite3" >&2
    exit 1
}
LONG=ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0001
LONG_STEPS=100000
if [ ! -s "$db" ]; then
    echo "bench_dash.sh: writing $db ($jobs jobs: minutes for 100,000)" >&2
    "$build/bench/bench_report_gen" "$db" --jobs "$jobs" >&2 || exit 1
fi
if [ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE key = '$LONG'")" = 0 ]; then
    # the long run: a job of 100,000 steps (one row each) and an evaluation every 1,000
    sqlite3 "$db" >/dev/null <<EOF || exit 1
BEGIN;
INSERT INTO jobs (key, sweep, config, arch, scale, schedule, seed, label, tokens_total, params, flops_per_token,
                  status, attempts, tokens_done, created_at, updated_at, widths, final_loss, train_seconds)
SELECT '$LONG', sweep, config, arch, scale, 'uniform', 99, 'long run', $LONG_STEPS * 4096, params, flops_per_token,
       'done', 1, $LONG_STEPS * 4096, created_at, updated_at, widths, 2.1, 36000 FROM jobs LIMIT 1;
INSERT INTO sweep_jobs (sweep, job, ord, active) SELECT sweep, key, 1000000, 1 FROM jobs WHERE key = '$LONG';
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $LONG_STEPS)
INSERT INTO steps (job, step, tokens, loss, lr, grad_norm, tokens_per_s, step_ms)
SELECT '$LONG', k, k * 4096, 2.0 + 8.0 / (1 + k / 500.0) + (k % 7) * 0.01, 3e-4, 0.5 + (k % 13) * 0.02,
       11000 + (k % 17) * 10, 370 FROM n;
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $LONG_STEPS / 1000)
INSERT INTO evals (job, step, tokens, suite, task, metric, value, n)
SELECT '$LONG', k * 1000, k * 1000 * 4096, 'val', 'val', m.metric, CASE m.metric WHEN 'loss' THEN 2.1 + 1.0 / k
       ELSE 8.2 + 4.0 / k END, 100000 FROM n, (SELECT 'loss' AS metric UNION ALL SELECT 'ppl') m;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
EOF
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-bench-dash.XXXXXX") || exit 1
"$D" --db "$db" >"$tmp/out" 2>"$tmp/err" &
dp=$!
trap 'kill $dp 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ $i -lt 1200 ] && ! grep -q "serving" "$tmp/out"; do
    # a database of an older schema: tlm-dash says so (and names `tlmd migrate --db FILE`) and exits
    kill -0 $dp 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }
    sleep 0.05
    i=$((i + 1))
done
url=$(sed -n 's/.* at \(http[^ ]*\).*/\1/p' "$tmp/out")
base=${url%%/\?t=*}
token=${url##*\?t=}
key=$(sqlite3 "$db" "SELECT key FROM jobs WHERE status = 'done' ORDER BY rowid LIMIT 1") # the same job whatever the indexes
# a database tlm-dash cannot read (an older schema: it names `tlmd migrate --db FILE`) is no benchmark
probe=$(curl -s -o "$tmp/probe" -w '%{http_code}' "$base/api/jobs?limit=1&t=$token")
[ "$probe" = 200 ] || { echo "bench_dash.sh: tlm-dash answers $probe: $(head -c 400 "$tmp/probe")" >&2; exit 1; }

# measure URL [URL2]: 10 answers (alternating with URL2 when given: two sorts
# that each undo the other's kept order, so that each answer computes its
# own): the Server-Timing durations, curl's total, in ms; the size of the last
measure() {
    : >"$tmp/t"
    for n in 1 2 3 4 5 6 7 8 9 10; do
        u=$1
        [ $# -gt 1 ] && [ $((n % 2)) = 0 ] && u=$2
        rm -f "$tmp/body"
        total=$(curl -s -o "$tmp/body" -D "$tmp/h" -w '%{time_total}' $HDR "$base$u&t=$token")
        st=$(tr -d '\r' <"$tmp/h" | sed -n 's/^Server-Timing: app;dur=\([0-9.]*\), cpu;dur=\([0-9.]*\)/\1 \2/p')
        echo "$st $total" >>"$tmp/t"
    done
    size=$(stat -c %s "$tmp/body" 2>/dev/null || echo 0)
    awk -v size="$size" -v code="$(head -n 1 "$tmp/h" | cut -d' ' -f2)" -v target="${TARGET:-}" '
        { w[NR] = $1; c[NR] = $2; t[NR] = $3 * 1000 }
        function best(a,   i, b) { b = a[1]; for (i = 2; i <= NR; i++) if (a[i] < b) b = a[i]; return b }
        function median(a,   i, j, x, s) { for (i = 1; i <= NR; i++) s[i] = a[i]
            for (i = 2; i <= NR; i++) { x = s[i]; for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]; s[j + 1] = x }
            return (s[int((NR + 1) / 2)] + s[int(NR / 2) + 1]) / 2 }
        END {
            met = ""
            if (target != "") met = code !~ /^(200|304)$/ ? "  NOT ANSWERED" : (median(c) < 100 && size < 200 * 1024) ? "  target met" : "  TARGET MISSED"
            printf "%8.1f %8.1f %8.1f %8.1f %8.1f %9d %4s%s\n", best(w), median(w), best(c), median(c), median(t), size, code, met
        }
    ' "$tmp/t"
}
HDR=
row() { printf '%-40s %s\n' "$1" "$(shift; measure "$@")"; }
printf '%s: %s jobs, %s MB; load average %s\n\n' "$db" "$(sqlite3 "$db" 'SELECT count(*) FROM jobs')" \
    "$(($(stat -c %s "$db") / 1048576))" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-40s %8s %8s %8s %8s %8s %9s %4s\n' "answer (ms)" wall wall-med cpu cpu-med client bytes code
# the order of the jobs is kept while the database does not change: "computed" rows alternate two
# orders, as every answer of a live sweep (whose database changes at each step) computes its own
TARGET=1 row "jobs page (order computed)" "/api/jobs?limit=100" "/api/jobs?limit=100&dir=desc"
TARGET=1 row "jobs page (order kept)" "/api/jobs?limit=100"
TARGET=1 row "jobs page, the last one (computed)" "/api/jobs?limit=100&offset=$((jobs - 100))" "/api/jobs?limit=100&offset=$((jobs - 100))&dir=desc"
TARGET=1 row "jobs page, filter (computed)" "/api/jobs?limit=100&q=titans+seed%3D3" "/api/jobs?limit=100&q=titans+seed%3D3&dir=desc"
TARGET=1 row "jobs page, sort by val ppl (computed)" "/api/jobs?limit=100&sort=val_ppl" "/api/jobs?limit=100&sort=val_ppl&dir=desc"
TARGET=1 row "jobs page, sorted, its next page" "/api/jobs?limit=100&sort=val_ppl&offset=100"
# every other key the jobs page sorts by (the columns of dashboard/jobs.c), each alternating its two directions
for col in key sweep label arch scale schedule ratio ratio_start ratio_end groups seed status attempts reason \
    tokens_done tokens_total train_loss val_loss tokens_per_s eta params flops_per_token created_at finished_at \
    train_seconds; do
    TARGET=1 row "jobs page, sort by $col (computed)" "/api/jobs?limit=100&sort=$col" "/api/jobs?limit=100&sort=$col&dir=desc"
done
TARGET=1 row "jobs page, done, sort by val ppl (computed)" "/api/jobs?limit=100&sort=val_ppl&status=done" \
    "/api/jobs?limit=100&sort=val_ppl&status=done&dir=desc"
TARGET=1 row "jobs page, sort by val ppl, sweep (computed)" "/api/jobs?limit=100&sort=val_ppl&sweep=transformer_1m" \
    "/api/jobs?limit=100&sort=val_ppl&sweep=transformer_1m&dir=desc"
TARGET=1 row "job page: /api/job" "/api/job?key=$key"
TARGET=1 row "job page: /api/series" "/api/series?key=$key"
TARGET=1 row "long run ($LONG_STEPS steps): /api/job" "/api/job?key=$LONG"
TARGET=1 row "long run: /api/series (thinned)" "/api/series?key=$LONG"
row "sweeps page" "/api/sweeps?"
row "runs table, built (page 1 of 100)" "/api/table?name=runs&format=page&limit=100" "/api/table?name=runs&format=page&limit=100&sweep=transformer_1m"
row "runs table, its next page" "/api/table?name=runs&format=page&limit=100&offset=100"
etag=$(curl -s -D - -o /dev/null "$base/api/jobs?limit=100&t=$token" | tr -d '\r' | sed -n 's/^ETag: //p')
HDR="-H If-None-Match:$etag"
row "jobs page, unchanged (304)" "/api/jobs?limit=100"
HDR=
printf '\nserver memory: %s\n' "$(grep -E '^(VmHWM|VmRSS|RssAnon|RssFile)' /proc/$dp/status | tr -s ' \t' ' ' | tr '\n' ' ')"
printf '(RssFile: pages of results.db mapped by SQLite (mmap_size), shared with the page cache; RssAnon: the server'"'"'s own)\n'
printf '(wall: the server from the request to its answer; cpu: its thread'"'"'s CPU time, which other load does not inflate;\n'
printf ' the targets are read on the median CPU time: the machine'"'"'s load is not the server'"'"'s)\n'
