#!/bin/sh
# bench_slurm.sh: the slurm executor's costs on a private test cluster
# (tests/lib/slurm_cluster.sh: 3 nodes x 2 CPUs, on this one machine).
#   - scheduler calls per minute for an N-job sweep (default 100 near-trivial
#     jobs: a 2-layer model, 2 steps), counted by wrappers of sbatch, squeue
#     and scancel put first on PATH (independent of tlmd's own count);
#   - time from the attempt's record (just before sbatch) to the worker's
#     first event in its events file: median and max over the jobs;
#   - tlmd's overhead per job: its CPU time (with the sbatch and squeue it
#     runs, which it waits for) over the sweep, per job.
# Run from the build folder:  make orchestrator/tlmd worker/tlm-worker
#   tests/lib/train_mkshard && sh ../bench/bench_slurm.sh [N] [POLL_S]
set -eu
N=${1:-100}
POLL=${2:-15}
B=$(pwd)
S=$(cd "$(dirname "$0")/.." && pwd)
T="$B/orchestrator/tlmd"
W="$B/worker/tlm-worker"
MK="$B/tests/lib/train_mkshard"
for p in "$T" "$W" "$MK"; do
    [ -x "$p" ] || { echo "bench_slurm.sh: $p is missing; build it first (see the header)" >&2; exit 2; }
done
. "$S/tests/lib/slurm_cluster.sh"
slurm_need
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-bench-slurm-XXXXXX")
trap 'slurm_down; rm -rf "$tmp"' EXIT
cd "$tmp"
slurm_up "$tmp/cluster" >/dev/null
echo "test cluster up in $SLURM_UP_S s"
mkdir bin
for c in sbatch squeue scancel; do
    real=$(command -v $c)
    printf '#!/bin/sh\necho "$(date +%%s.%%N) %s" >>%s/calls.log\nexec %s "$@"\n' "$c" "$tmp" "$real" >bin/$c
    chmod +x bin/$c
done
"$MK" text.tlmtok /usr/share/common-licenses/GPL-3 >/dev/null
seeds=$(seq -s, 0 $((N - 1)))
cat >bench.yaml <<Y
name: bench
base:
  model: {d_model: 32, layers: 2, heads: 2, d_ff: 64, vocab: 256}
  tokenizer: bytes
  data: {train: $tmp/text.tlmtok}
  eval: {every_tokens: 0}
  train: {tokens: 512, seq_len: 32, batch_tokens: 256, micro_batch: 8, lr: 1e-3, warmup_tokens: 0, log_every: 1}
seeds: [$seeds]
Y
t0=$(date +%s.%N)
PATH="$tmp/bin:$PATH" python3 - "$T" "$POLL" >rusage.out <<'P'
import os, subprocess, sys
p = subprocess.Popen([sys.argv[1], "--sweeps", "bench.yaml", "--executor", "slurm", "--slurm-poll", sys.argv[2],
                      "--cpus-per-job", "1"], stdout=open("run.out", "w"), stderr=subprocess.STDOUT)
_, status, ru = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime)
P
t1=$(date +%s.%N)
read rc cpu <rusage.out
[ "$rc" = 0 ] || { echo "tlmd exited $rc"; tail -20 run.out; exit 1; }
python3 - "$t0" "$t1" "$cpu" "$N" <<'P'
import glob, json, sqlite3, statistics, sys
t0, t1, cpu, n = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
calls = [l.split()[1] for l in open("calls.log")]
mins = (t1 - t0) / 60
db = sqlite3.connect("results.db")
done = db.execute("select count(*) from jobs where status = 'done'").fetchone()[0]
lat = []
for token, started in db.execute("select token, started_at from attempts where executor = 'slurm'"):
    f = glob.glob("runs/*/slurm/%s.0.events" % token)
    if f:
        first = json.loads(open(f[0]).readline())["t"]
        lat.append(first - started)
print("%d jobs (%d done) in %.1f s: sbatch %d, squeue %d, scancel %d: %.1f scheduler calls per minute "
      "(%.1f squeue per minute)" % (n, done, t1 - t0, calls.count("sbatch"), calls.count("squeue"),
                                     calls.count("scancel"), len(calls) / mins, calls.count("squeue") / mins))
print("record/sbatch to the worker's first event: median %.2f s, max %.2f s (%d jobs)" %
      (statistics.median(lat), max(lat), len(lat)))
print("tlmd's CPU time (with its sbatch and squeue): %.1f ms per job (%.2f s in all)" % (cpu * 1000 / n, cpu))
P
grep 'Slurm calls' run.out
