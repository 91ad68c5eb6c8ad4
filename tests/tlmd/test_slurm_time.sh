#!/bin/sh
# test_slurm_time.sh: a Slurm job that outlives its time limit (a slow
# test, about a minute: Slurm sends --signal at its own pace, up to 30 s
# late).  The signal before the limit (--slurm-signal-before) makes the
# worker checkpoint and exit; tlmd submits the job again at once, not as a
# failure, and it resumes and finishes with the losses of an uninterrupted
# local run.  Skips (77) without Slurm.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
slurm_start_cluster 1 0

# 2500 steps: about 70 s on one thread of a 2024 server, longer than the
# time limit's signal can be late (45 s before a 1-minute limit, up to 30 s
# late); at 1000 the job could end before the signal came.
STEPS=2500
sweep one.yaml one $STEPS "resources: {time: '1'}"
reference -b one.yaml --workers 1
"$T" --sweeps one.yaml --executor slurm --slurm-poll 0.5 --cpus-per-job 1 --slurm-signal-before 45 >run.out 2>&1
rc=$?
ok $rc "the sweep completes (exit $rc)"
[ $rc = 0 ] || sed "s/^/# /" run.out | tail -30
grep " done in " run.out | sed "s/^/# /"
wait $refp
ok $? "the local executor's run (the reference, alongside)"
q "select n, reason, slurm_job, resumed_from_step, step, message from attempts order by n" | sed 's/^/# /'
ok $([ "$(q "select count(*) from attempts where reason = 'timeout' and message like '%time limit came%'")" -ge 1 ] &&
    echo 0 || echo 1) "an attempt ended at the time limit's signal, checkpointed"
ok $([ "$(q "select count(*) from attempts a where reason = 'done' and resumed_from_step > 0
             and slurm_job <> (select slurm_job from attempts where n = 1)")" = 1 ] && echo 0 || echo 1) \
    "tlmd submitted it again (a new Slurm job), which resumed from the checkpoint and finished"
ok $([ "$(q "select failures from jobs")" = 0 ] && [ "$(q "select status from jobs")" = done ] && echo 0 || echo 1) \
    "the time limit is not counted as a failure"
ok $([ "$(q "attach 'ref/results.db' as r; select count(*) from steps a join r.steps b using (job, step)
             where a.loss is not b.loss")" = 0 ] && [ "$(q "select count(*) from steps")" = $STEPS ] &&
    [ "$(q "attach 'ref/results.db' as r; select count(*) from results a join r.results b using (key)
             where a.train_loss = b.train_loss")" = 1 ] && echo 0 || echo 1) "the uninterrupted run's losses, every step once"
finish
