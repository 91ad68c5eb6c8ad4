#!/bin/sh
# test_slurm.sh: tlmd --executor slurm on a private cluster (3 nodes x 2
# fake GPUs, tests/lib/slurm_cluster.sh) with the real worker on tiny
# models: a sweep completes with the local executor's results (losses
# bit-identical on the CPU), one sbatch per attempt with its comment, the
# events read from the run folder's file, the attempts' Slurm job id, state
# and node recorded and shown by `tlmd status`; relative data paths work
# (the batch jobs run in tlmd's folder); a Slurm job is named for its
# sweep, label and seed.  Skips (77) without Slurm.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
slurm_start_cluster
echo "# cluster up in $SLURM_UP_S s"

STEPS=32
schedule_sweep 3 $STEPS \
    "resources: {gpus: 1, cpus: 1}"
reference three.yaml --workers 3
ok $? "the local executor's run (the reference)"

t0=$(date +%s.%N)
"$T" --sweeps three.yaml --executor slurm --slurm-poll 0.5 >run.out 2>&1
rc=$?
ok $rc "--executor slurm: the sweep completes (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run.out | tail -40
echo "# $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s for the sweep; $(grep 'Slurm calls' run.out)"

ok $([ "$(q "select count(*) from jobs where status = 'done'")" = 3 ] && echo 0 || echo 1) "3 jobs done"
ok $([ "$(q "select count(*) from attempts where executor = 'slurm' and reason = 'done' and slurm_job is not null
             and node like 'n_' and slurm_restart = 0 and token is not null")" = 3 ] && echo 0 || echo 1) \
    "each attempt records executor slurm, its job id, restart 0 and node ($(q "select group_concat(slurm_job || '@' || node) from attempts"))"
ok $([ "$(q "select count(*) from attempts a join environment e on e.attempt = a.id")" = 3 ] && echo 0 || echo 1) \
    "the start events reached results.db"
events_read_to_end
ok $? "every events file read to its end (committed offset = file size)"

same steps "job, step" "a.loss is not b.loss or a.tokens <> b.tokens or a.grad_norm is not b.grad_norm"
ok $? "steps: the local executor's rows, losses bit-identical"
same evals "job, step, suite, task, metric" "a.value is not b.value"
ok $? "evals: the same values"
same checkpoints "job, step" "a.tokens <> b.tokens"
ok $? "checkpoints: the same rows"
same_final 3
ok $? "final losses equal the local executor's"
"$T" status >status.out 2>&1
grep -q 'slurm job [0-9]* ended on n[0-9]' status.out
ok $? "tlmd status shows the executor, Slurm job id, state and node"

# a sweep with a relative data path (issue 26): the batch jobs run in the
# folder tlmd runs in, so it means there what it means locally; the job
# keeps its identity (the path as written); its Slurm job is named for its
# sweep, label and seed
mkdir -p data && cp text.tlmtok data/text.tlmtok
sed 's|train: '"$tmp"'/text.tlmtok|train: data/text.tlmtok|' three.yaml | sed 's/^name: three/name: rel/' |
    sed 's/schedule: \[linear, cosine, sigmoid\]/schedule: [cosine]/' >rel.yaml
"$T" --sweeps rel.yaml --executor slurm --slurm-poll 0.3 >rel.out 2>&1
rc=$?
rkey=$(q "select j.key from jobs j join sweep_jobs s on s.job = j.key where s.sweep = 'rel'")
ok $([ $rc = 0 ] && [ "$(q "select status from jobs where key = '$rkey'")" = done ] &&
    grep -q '"train":"data/text.tlmtok"' "runs/$(echo "$rkey" | cut -c1-12)/config.json" && echo 0 || echo 1) \
    "a relative data path under --executor slurm: done (exit $rc; $(q "select status, reason, message from jobs where key = '$rkey'"))"
sj=$(q "select slurm_job from attempts where job = '$rkey'")
name=$(scontrol show job "$sj" 2>/dev/null | grep -o 'JobName=[^ ]*')
ok $([ "$name" = "JobName=rel:cosine_1.5->0.5:s0" ] && echo 0 || echo 1) "its Slurm job is named for sweep, label and seed ($name)"

# SIGINT: tlmd stops its Slurm jobs (SIGTERM through the batch job: they
# checkpoint), exits 75, and the next run resumes them
schedule_sweep 2 240
start_tlmd int.out --sweeps two.yaml --executor slurm --slurm-poll 0.3 --cpus-per-job 1 --kill-grace 30
wait_for "select count(distinct c.job) = 2 from checkpoints c join jobs j on j.key = c.job where j.sweep = 'two'"
kill -INT "$tp"
wait "$tp"
rc=$?
ok $([ $rc = 75 ] && echo 0 || echo 1) "SIGINT: tlmd stops (exit $rc)"
ok $([ -z "$(squeue -h -o %i)" ] && echo 0 || echo 1) "its Slurm jobs are gone from the queue"
ok $([ "$(q "select count(*) from attempts a join jobs j on j.key = a.job where j.sweep = 'two'
             and a.reason = 'interrupted' and a.exit_code = 75 and j.status = 'interrupted'")" = 2 ] && echo 0 || echo 1) \
    "both attempts checkpointed and ended as interrupted (exit 75)"
"$T" --sweeps two.yaml --executor slurm --slurm-poll 0.3 --cpus-per-job 1 >int2.out 2>&1
rc=$?
ok $rc "the next run finishes them (exit $rc)"
ok $([ "$(q "select count(*) from attempts a join jobs j on j.key = a.job where j.sweep = 'two'
             and a.reason = 'done' and a.resumed_from_step > 0")" = 2 ] && echo 0 || echo 1) \
    "resumed from their checkpoints"
# sbatch refuses (no such partition): a fault of the machine, the attempt recorded before sbatch closed
sweep bad.yaml bad 8 "resources: {partition: nosuch}"
"$T" --sweeps bad.yaml --executor slurm --slurm-poll 0.3 --max-machine-faults 2 --retry-delay 0 >bad.out 2>&1
rc=$?
ok $([ $rc = 1 ] && [ "$(q "select count(*) from attempts a join jobs j on j.key = a.job where j.sweep = 'bad'
             and a.reason = 'io' and a.message like '%sbatch failed%' and a.ended_at is not null and a.slurm_job is null")" = 2 ] &&
    [ "$(q "select status from jobs where sweep = 'bad'")" = failed ] && echo 0 || echo 1) \
    "sbatch failing: 2 attempts closed as machine faults naming sbatch's message, then failed (exit $rc)"
# measured, not checked: from the attempt's record (just before sbatch) to the worker's first event
python3 - <<'P'
import glob, json, sqlite3
db = sqlite3.connect("results.db")
lat = []
for token, restart, started in db.execute("select token, slurm_restart, started_at from attempts"):
    for f in glob.glob("runs/*/slurm/%s.%d.events" % (token, restart)):
        lat.append(json.loads(open(f).readline())["t"] - started)
lat.sort()
print("# sbatch to the worker's first event: %s s" % " ".join("%.2f" % x for x in lat))
P
finish
