#!/bin/sh
# bench_tlmd.sh: tlmd's orchestration overhead, end to end, beside its peer
# (the same worker runs started one after another by a shell loop).
#
#   1. dispatch: N near-trivial jobs (a 2-layer model, 2 steps) through
#      tlmd with one slot, against the shell loop: the difference per job
#      is the daemon's overhead (target < 10 ms); tlmd's own dispatch time
#      per job and jobs/s with two slots.
#   2. ingestion through a real pipe: one stand-in worker
#      (bench_tlmd_flood) writes 1,000,000 step events as fast as it can;
#      events/s into results.db (target > 100,000).
#   3. memory: a 100,000-job sweep loaded and dispatching (target < 50 MiB),
#      and its --dry-run time.
#
# Run from the build folder:  make bench/bench_tlmd_flood orchestrator/tlmd
#   worker/tlm-worker tests/lib/train_mkshard && sh ../bench/bench_tlmd.sh [N]
set -eu
N=${1:-40}
B=$(pwd)
T="$B/orchestrator/tlmd"
W="$B/worker/tlm-worker"
F="$B/bench/bench_tlmd_flood"
MK="$B/tests/lib/train_mkshard"
for p in "$T" "$W" "$F" "$MK"; do
    [ -x "$p" ] || { echo "bench_tlmd.sh: $p is missing; build it first (see the header)" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-bench-tlmd-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$MK" text.tlmtok /usr/share/common-licenses/GPL-3 >/dev/null
now() { python3 -c 'import time; print("%.6f" % time.time())'; }
# peak RSS (KiB) of a command, its output discarded
peak_rss() { python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"; }

cat >tiny.yaml <<EOF
name: tiny
base:
  model: {d_model: 32, layers: 2, heads: 2, d_ff: 64, vocab: 256}
  tokenizer: bytes
  data: {train: $tmp/text.tlmtok}
  eval: {every_tokens: 0, val_tokens: 256}
  train: {tokens: 512, seq_len: 16, batch_tokens: 256, micro_batch: 16, warmup_tokens: 0, log_every: 1,
          ckpt_every_tokens: 0}
seeds: [$(seq -s, 0 $((N - 1)))]
EOF

echo "== 1. dispatch: $N near-trivial jobs (2 steps of a 2-layer model), one slot"
# tlmd and the shell loop alternate, three rounds each; the best round of
# each counts (other work on the machine only ever slows a round down)
"$T" --dry-run --sweeps tiny.yaml --db none.db >/dev/null
for round in 1 2 3; do
    t0=$(now)
    "$T" --sweeps tiny.yaml --db "one$round.db" --runs "runs$round" --workers 1 --threads-per-worker 1 --no-progress \
        >"one$round.out" 2>&1
    t1=$(now)
    grep -q "$N done" "one$round.out" || { echo "tlmd did not finish:"; tail "one$round.out"; exit 1; }
    for cfg in runs1/*/config.json; do
        "$W" --config "$cfg" --out "loop$round/$(basename "$(dirname "$cfg")")" --threads 1 >/dev/null 2>&1
    done
    t2=$(now)
    echo "$round $t0 $t1 $t2" >>rounds
done
python3 - "$N" <<'P'
import sqlite3, sys, re
n = float(sys.argv[1])
best = None
for line in open("rounds"):
    r, t0, t1, t2 = line.split()
    t0, t1, t2 = float(t0), float(t1), float(t2)
    db = sqlite3.connect("one%s.db" % r)
    life = db.execute("select avg(ended_at - started_at) from attempts").fetchone()[0]
    disp = float(re.search(r"dispatch ([0-9.]+) ms/job", open("one%s.out" % r).read()).group(1))
    row = ((t1 - t0) / n, (t2 - t1) / n, life, disp)
    best = row if best is None else tuple(min(a, b) for a, b in zip(best, row))
tlmd, loop, life, disp = best
print("  %-44s %10.1f ms/job" % ("shell loop, tlm-worker run directly", loop * 1e3))
print("  %-44s %10.1f ms/job" % ("tlmd (load, dispatch, ingest, record)", tlmd * 1e3))
print("  %-44s %10.1f ms/job" % ("  of which the worker process lived", life * 1e3))
print("  %-44s %10.1f ms/job  (target < 10)" % ("daemon overhead: tlmd - shell loop", (tlmd - loop) * 1e3))
print("  %-44s %10.1f ms/job" % ("tlmd's dispatch time (its summary)", disp))
P
t3=$(now)
"$T" --sweeps tiny.yaml --db two.db --runs runs2 --workers 2 --threads-per-worker 1 --no-progress >two.out 2>&1
t4=$(now)
python3 -c "import sys; print('  %-44s %10.1f jobs/s' % ('two slots', $N / ($t4 - $t3)))"

echo "== 2. ingestion through a pipe: 1,000,000 step events from one stand-in worker"
cat >flood.yaml <<EOF
name: flood
base: {scale: 1m, train: {tokens: 16384000000, batch_tokens: 16384}}
EOF
t0=$(now)
"$T" --sweeps flood.yaml --db flood.db --runs runsf --worker "$F" --no-progress >flood.out 2>&1
t1=$(now)
rows=$(python3 -c "import sqlite3; print(sqlite3.connect('flood.db').execute('select count(*) from steps').fetchone()[0])")
python3 -c "import sys; print('  %-44s %10.0f events/s  (%d rows; target > 100,000)' % ('tlmd, pipe to results.db', 1e6 / ($t1 - $t0), $rows))"
grep -o "[0-9]* commits (longest [0-9.]* ms)" flood.out | sed 's/^/  /'

echo "== 3. a 100,000-job sweep"
{
    printf 'name: big\nbase: {scale: 1m, train: {tokens: 32768, batch_tokens: 16384, warmup_tokens: 0}}\n'
    printf 'grid:\n  taper.schedule: [linear, cosine]\n  taper.ratio: [[1.5, 0.5], [1.25, 0.75]]\nseeds: ['
    seq -s, 0 24999 | tr -d '\n'
    printf ']\n'
} >big.yaml
t0=$(now)
rss=$(peak_rss "$T" --dry-run --sweeps big.yaml --db big.db)
t1=$(now)
"$T" --dry-run --sweeps big.yaml --db big.db | grep -q "total: 100000 distinct jobs" || { echo "dry run failed"; exit 1; }
python3 -c "print('  %-44s %10.1f s, %.1f MiB' % ('--dry-run (expand, resolve, account, list)', $t1 - $t0, $rss / 1024))"
t0=$(now)
"$T" --sweeps big.yaml --db big.db --runs runsb --worker "$F" --no-progress >big.out 2>&1 &
tp=$!
while ! grep -q "started on" big.out 2>/dev/null; do
    kill -0 "$tp" 2>/dev/null || { echo "tlmd stopped:"; cat big.out; exit 1; }
    sleep 0.1
done
t1=$(now)
sleep 3
kill -TERM "$tp"
wait "$tp" || true
python3 -c "print('  %-44s %10.1f s' % ('load into results.db until the first start', $t1 - $t0))"
started=$(grep -c "started on" big.out || true)
mem=$(sed -n 's/.*peak memory \([0-9.]*\) MiB.*/\1/p' big.out)
echo "  daemon peak memory, 100,000 jobs loaded, $started started: $mem MiB  (target < 50)"
