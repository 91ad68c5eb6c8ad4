#!/bin/sh
# test_slurm_faults.sh: Slurm's own ways of stopping a job, with the slurm
# executor.  `scontrol requeue` of a running job: the worker checkpoints,
# Slurm runs the job again under the same id (SLURM_RESTART_COUNT 1), tlmd
# records a new attempt (the first ends as interrupted, not a failure) that
# resumes from the checkpoint.  A worker killed with SIGKILL on its node:
# a crash, retried in a new Slurm job.  Both end with the losses of an
# uninterrupted local run.  Skips (77) without Slurm.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
slurm_start_cluster

# long enough that neither job can finish between the wait for both
# jobs' step-16 checkpoints and the kill below, on a loaded machine
# (with 96 the second job was seen done before its kill)
STEPS=240
schedule_sweep 2 $STEPS
reference two.yaml --workers 2
ok $? "the local executor's run (the reference)"

start_tlmd run.out --sweeps two.yaml --executor slurm --slurm-poll 0.3 --cpus-per-job 1 --retry-delay 0
wait_for "select count(*) = 2 from (select job from checkpoints where step >= 16 group by job)"
a=$(q "select job from attempts order by job limit 1")
b=$(q "select job from attempts order by job limit 1 offset 1")
ja=$(q "select slurm_job from attempts where job = '$a'")
scontrol requeue "$ja"
ok $? "scontrol requeue $ja (job ${a%"${a#????????????}"})"
# the other job's worker, by the pid its start event gives
ev=$(ls runs/"$(echo "$b" | cut -c1-12)"/slurm/*.0.events)
wp=$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"start\"" in l][0]["pid"])' "$ev")
tr '\0' ' ' <"/proc/$wp/cmdline" 2>/dev/null | grep -q -- "--job $b"
ok $? "the other job's worker is pid $wp"
kill -9 "$wp"
wait "$tp"
rc=$?
ok $rc "the sweep completes (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run.out | tail -30
grep 'Slurm calls' run.out | sed 's/^/# /'
q "select job, n, reason, slurm_job, slurm_restart, resumed_from_step from attempts order by job, n" | sed 's/^/# /'

ok $([ "$(q "select count(*) from attempts where job = '$a' and n = 1 and reason = 'interrupted' and message like 'Slurm requeued%'")" = 1 ] &&
    echo 0 || echo 1) "requeue: the first attempt ends as interrupted by Slurm's requeue"
ok $([ "$(q "select count(*) from attempts where job = '$a' and n = 2 and reason = 'done' and slurm_job = '$ja'
             and slurm_restart = 1 and resumed_from_step >= 16")" = 1 ] && echo 0 || echo 1) \
    "requeue: the second attempt is the same Slurm job, restart 1, resumed from its checkpoint, done"
ok $([ "$(q "select failures from jobs where key = '$a'")" = 0 ] && echo 0 || echo 1) "requeue: not counted as a failure"
ok $([ "$(q "select count(*) from attempts where job = '$b' and n = 1 and reason = 'crash' and signal = 9")" = 1 ] &&
    [ "$(q "select count(*) from attempts where job = '$b' and n = 2 and reason = 'done'
             and slurm_job <> (select slurm_job from attempts where job = '$b' and n = 1)")" = 1 ] && echo 0 || echo 1) \
    "SIGKILL of the worker: a crash (signal 9), retried in a new Slurm job, done"
same steps "job, step" "a.loss is not b.loss or a.tokens <> b.tokens"
ok $? "steps: the uninterrupted run's rows and losses"
same_final 2
ok $? "final losses equal the uninterrupted run's"
finish
