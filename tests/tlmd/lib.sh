# lib.sh: sourced by the tlmd end-to-end tests (tests/test_tlmd_*.sh),
# not a test itself.  Sets T (tlmd), W (tlm-worker), a temp folder $tmp
# (the tests run inside it: results.db, runs/), ok/finish TAP helpers, and
# $tmp/text.tlmtok: the bytes of the licence texts every Debian system
# ships, the same corpus the worker's own tests train on.  Every process a
# test starts in the background is killed on exit.
. "$TLM_SRCDIR/tests/lib/tap.sh"
T="$TLM_BUILDDIR/orchestrator/tlmd"
W="$TLM_BUILDDIR/worker/tlm-worker"
command -v sqlite3 >/dev/null 2>&1 || { echo "# the sqlite3 command is needed (apt-get install sqlite3): skip"; exit 77; }
tap_setup tlmd wait
cd "$tmp" || exit 1
text_shard "$tmp/text.tlmtok" GPL-3 GPL-2 LGPL-2.1 Apache-2.0 MPL-2.0 GFDL-1.3 Artistic

# q SQL: one query on results.db, plain output
q() { sqlite3 -batch results.db "$1"; }

# sweep FILE NAME STEPS [extra YAML lines...]: a sweep of small jobs on the
# text shard (d=64, 4 layers, 1024 tokens a step, a checkpoint every 8
# steps, an evaluation every 16); the caller appends grid/seeds lines.
sweep() {
    file=$1 name=$2 steps=$3
    shift 3
    cat >"$file" <<EOF
name: $name
base:
  model: {d_model: 64, layers: 4, heads: 2, d_ff: 128, vocab: 256}
  tokenizer: bytes
  data: {train: $tmp/text.tlmtok}
  eval: {every_tokens: 16384, val_tokens: 2048}
  train: {tokens: $((steps * 1024)), seq_len: 32, batch_tokens: 1024, micro_batch: 8, lr: ${LR:-3e-3},
          warmup_tokens: 4096, log_every: 1, ckpt_every_tokens: 8192${TRAIN_EXTRA:-}}
EOF
    for line in "$@"; do echo "$line" >>"$file"; done
}

# schedule_sweep N STEPS [extra YAML lines...]: the sweep most tests run,
# the first N (2 or 3) of the schedules linear, cosine, sigmoid at 1.5 -> 0.5,
# N jobs of STEPS steps; its file and name are two.yaml/two or three.yaml/three
schedule_sweep() {
    case $1 in
    2) set -- two "  taper.schedule: [linear, cosine]" "$@" ;;
    3) set -- three "  taper.schedule: [linear, cosine, sigmoid]" "$@" ;;
    *) echo "schedule_sweep: N is 2 or 3, not '$1'" >&2; return 1 ;;
    esac
    ss_name=$1 ss_sched=$2 ss_steps=$4
    shift 4
    sweep "$ss_name.yaml" "$ss_name" "$ss_steps" "grid:" "$ss_sched" "  taper.ratio: [[1.5, 0.5]]" "$@"
}

# start_tlmd LOG ARGS...: tlmd in the background; $tp is its pid
start_tlmd() {
    log=$1
    shift
    "$T" "$@" >"$log" 2>&1 &
    tp=$!
    kids="$kids $tp"
}

# wait_for SQL [SECONDS]: until the query prints something other than 0 or nothing
wait_for() {
    limit=${2:-120}
    i=0
    while [ $i -lt $((limit * 20)) ]; do
        v=$(q "$1" 2>/dev/null)
        [ -n "$v" ] && [ "$v" != 0 ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    echo "# timed out waiting for: $1"
    return 1
}

# reference [-b] FILE ARGS...: the sweep FILE trained by the local executor
# in ref/ (ref/results.db: what a test compares its results with), one
# thread a worker; its exit status.  -b: alongside the test ($refp is its
# pid).
reference() {
    bg=0
    [ "$1" = -b ] && { bg=1; shift; }
    f=$1
    shift
    mkdir -p ref && cp "$f" ref/ || return 1
    if [ $bg = 1 ]; then
        (cd ref && exec "$T" --sweeps "$f" "$@" --threads-per-worker 1 >run.out 2>&1) &
        refp=$!
        kids="$kids $refp"
        return 0
    fi
    (cd ref && exec "$T" --sweeps "$f" "$@" --threads-per-worker 1 >run.out 2>&1)
}

# same TABLE COLUMNS WHERE: TABLE has as many rows as the reference's, and
# none of those matched by COLUMNS differs by WHERE (a. this run, b. the
# reference's)
same() {
    d=$(q "attach 'ref/results.db' as r;
           select (select count(*) from $1) = (select count(*) from r.$1),
                  (select count(*) from $1 a join r.$1 b using ($2) where $3)")
    [ "$d" = "1|0" ]
}

# same_rows WHOSE: four checks: steps (rows and losses as WHOSE's),
# evaluations, checkpoints and layer statistics are the reference's
same_rows() {
    same steps "job, step" "a.loss is not b.loss or a.tokens <> b.tokens"
    ok $? "steps: same rows and losses as $1"
    same evals "job, step, suite, task, metric" "a.value is not b.value"
    ok $? "evals: same rows and values"
    same checkpoints "job, step" "a.tokens <> b.tokens"
    ok $? "checkpoints: same rows"
    same layer_stats "job, step, layer, name" "a.value is not b.value"
    ok $? "layer_stats: same rows"
}

# same_final N: N jobs end with the reference's training and validation losses
same_final() {
    [ "$(q "attach 'ref/results.db' as r; select count(*) from results a join r.results b using (key)
            where a.train_loss = b.train_loss and a.val_loss = b.val_loss")" = "$1" ]
}

# steps_once N STEPS: N jobs hold steps 1..STEPS, each once
steps_once() {
    [ "$(q "select count(*) from (select job from steps group by job
            having count(*) = $2 and min(step) = 1 and max(step) = $2)")" = "$1" ]
}

# slurm_start_cluster [NODES] [GPUS]: for the tests of the slurm executor, a
# private cluster (tests/lib/slurm_cluster.sh; 77 without Slurm), stopped
# on exit.  The SLURM_EXTRA_* settings of slurm_cluster.sh apply.
slurm_start_cluster() {
    . "$TLM_SRCDIR/tests/lib/slurm_cluster.sh"
    slurm_need
    trap 'slurm_down; tap_cleanup' EXIT
    slurm_up "$tmp/cluster" "$@" || { echo "# the test cluster did not start"; exit 1; }
}

# events_read_to_end: every Slurm attempt's events file was read to its end
# (the committed offset is the file's size)
events_read_to_end() {
    for f in runs/*/slurm/*.events; do
        off=$(q "select events_offset from attempts where token = '$(basename "$f" | cut -d. -f1)'")
        [ "$off" = "$(stat -c %s "$f")" ] || return 1
    done
}
