#!/bin/sh
# test_slurm_preempt.sh: preemption by a higher-priority partition (a slow
# test, about 30 s).  A tlmd job runs in the low partition of a one-node
# cluster; a job of the high partition that needs the whole node preempts
# it (PreemptMode=REQUEUE): the worker checkpoints on Slurm's SIGTERM, Slurm
# requeues the job, tlmd records a new attempt of the same Slurm job which
# resumes once the node is free.  Not counted as a failure; the losses are
# an uninterrupted local run's.  Skips (77) without Slurm.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
SLURM_EXTRA_CONF="PreemptType=preempt/partition_prio
PreemptMode=REQUEUE"
SLURM_PART_EXTRA="PriorityTier=1"
SLURM_EXTRA_PARTS="PartitionName=high Nodes=@NODES@ MaxTime=INFINITE State=UP PriorityTier=2"
slurm_start_cluster 1 0

STEPS=160
sweep one.yaml one $STEPS "resources: {partition: debug}"
reference -b one.yaml --workers 1
start_tlmd run.out --sweeps one.yaml --executor slurm --slurm-poll 0.3 --cpus-per-job 1
wait_for "select count(*) from checkpoints where step >= 16"
printf '#!/bin/sh\nsleep 3\n' >hog.sh
hog=$(sbatch --parsable --partition=high --cpus-per-task=2 --output=/dev/null hog.sh)
ok $? "a job of the high partition takes the whole node (job $hog)"
wait "$tp"
rc=$?
ok $rc "the sweep completes (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run.out | tail -30
wait $refp
ok $? "the local executor's run (the reference, alongside)"
q "select n, reason, slurm_job, slurm_restart, resumed_from_step, message from attempts order by n" | sed 's/^/# /'
ok $([ "$(q "select count(*) from attempts where n = 1 and reason = 'interrupted' and message like 'Slurm requeued%'")" = 1 ] &&
    [ "$(q "select count(*) from attempts where n = 2 and reason = 'done' and slurm_restart = 1 and resumed_from_step >= 16
             and slurm_job = (select slurm_job from attempts where n = 1)")" = 1 ] && echo 0 || echo 1) \
    "preempted and requeued: a new attempt of the same Slurm job resumed from its checkpoint"
ok $([ "$(q "select failures from jobs")" = 0 ] && echo 0 || echo 1) "the preemption is not counted as a failure"
ok $([ "$(q "attach 'ref/results.db' as r; select count(*) from steps a join r.steps b using (job, step)
             where a.loss is not b.loss")" = 0 ] && [ "$(q "select count(*) from steps")" = $STEPS ] && echo 0 || echo 1) \
    "the uninterrupted run's losses, every step once"
finish
