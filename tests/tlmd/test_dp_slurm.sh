#!/bin/sh
# test_dp_slurm.sh: tlmd's slurm executor runs a job of 2 nodes x 1 rank
# (resources: {nodes: 2, ranks_per_node: 1}) as one Slurm job on the
# private cluster (tests/lib/slurm_cluster.sh): sbatch --nodes 2
# --ntasks-per-node 1, the batch script starting the ranks with srun
# --mpi=pmix, rank 0's events read from the run folder's file; the losses
# are the local executor's one-rank run's within 1e-6 relative.  Then tlmd
# stopped with SIGINT: the batch script passes SIGTERM on through srun to
# both ranks, which checkpoint and exit 75, and the next tlmd resumes the
# job.  Faults: Slurm's requeue, and rank 1 killed with -9 (a crash,
# retried from the last checkpoint), every step once, no rank left;
# tlmd killed with -9 and the next one adopting the running job.
# A sweep of 2 ranks a node with 1 GPU a node is refused before
# anything is recorded.  Skips (77) without Slurm or mpirun.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
command -v mpirun >/dev/null 2>&1 || { echo "# Open MPI is missing (Debian: openmpi-bin; scripts/setup.sh --test): skip"; exit 77; }
. "$TLM_SRCDIR/tests/lib/mpi_env.sh"
slurm_start_cluster
echo "# cluster up in $SLURM_UP_S s"

STEPS=32
LR=1e-3 # the regime where rounding is not amplified (test_dp_local.sh)
sweep one.yaml dp $STEPS "seeds: [5]"
sweep dp.yaml dp $STEPS "seeds: [5]" "resources: {nodes: 2, ranks_per_node: 1, cpus: 1}"
reference one.yaml
ok $? "reference: the local executor, one rank"

"$T" --sweeps dp.yaml --executor slurm --slurm-poll 0.3 >run.out 2>&1
rc=$?
ok $rc "--executor slurm: the 2-node job completes (exit $rc)"
[ $rc = 0 ] || { sed 's/^/# /' run.out | tail -20; sed 's/^/# /' runs/*/worker.log | tail -20; }
ok $([ "$(q "select count(*) from attempts where executor = 'slurm' and reason = 'done' and slurm_job is not null")" = 1 ] &&
    echo 0 || echo 1) "one attempt, one Slurm job ($(q "select slurm_job, node, reason from attempts"))"
d=$(q "attach 'ref/results.db' as r;
       select count(*), count(distinct step),
              (select count(*) from steps a join r.steps b using (step) where abs(a.loss - b.loss) > 1e-6 * b.loss)
       from steps")
ok $([ "$d" = "$STEPS|$STEPS|0" ] && echo 0 || echo 1) "every step once, each loss within 1e-6 of one rank's ($d)"
grep -q 'on each of 2 ranks (pmix, mpi)' runs/*/worker.log
ok $? "the worker says it ran as 2 ranks launched by srun's PMIx"
events_read_to_end
ok $? "the events file read to its end"

# SIGINT: tlmd stops the job; the ranks checkpoint, the next run resumes
sweep long.yaml long 400 "seeds: [6]" "resources: {nodes: 2, ranks_per_node: 1, cpus: 1}"
start_tlmd int.out --sweeps long.yaml --executor slurm --slurm-poll 0.3 --kill-grace 30
wait_for "select count(*) from checkpoints c join jobs j on j.key = c.job where j.sweep = 'long'"
kill -INT "$tp"
wait "$tp"
rc=$?
ok $([ $rc = 75 ] && [ "$(q "select a.reason || ':' || a.exit_code from attempts a join jobs j on j.key = a.job
                              where j.sweep = 'long'")" = "interrupted:75" ] &&
    [ "$(q "select count(*) from logs where message like 'protocol:%'")" = 0 ] && echo 0 || echo 1) \
    "SIGINT: tlmd stops (exit $rc), both ranks checkpointed, the attempt interrupted with 75, every event line valid ($(q "select a.reason, a.exit_code, a.signal, a.message from attempts a join jobs j on j.key = a.job where j.sweep = 'long'"))"
q "select message from logs where message like 'protocol:%'" | sed "s/^/# /" | head -5
ok $([ -z "$(squeue -h -o %i)" ] && echo 0 || echo 1) "no Slurm job left"

# Faults, the 2-node job: Slurm requeues it (the ranks checkpoint, the same
# Slurm job runs again, restart 1, resuming); then rank 1 is killed with -9:
# srun ends the step, tlmd records a crash and retries from the last
# checkpoint in a new Slurm job.  Every step once, each loss within 1e-6 of
# an uninterrupted run on 2 ranks (the local executor's mpirun: a sum of
# two is the same in any order, so the resumed run must continue it; over
# 320 steps one rank's rounding grows past 1e-6), no rank of the job left.
FS=320 # long enough to act on it mid-run
sweep f.yaml f $FS "seeds: [8]" "resources: {nodes: 2, ranks_per_node: 1, cpus: 1}"
sweep f2.yaml f $FS "seeds: [8]" "resources: {ranks_per_node: 2, cpus: 1}"
mkdir ref2 && cp f2.yaml ref2/ && (cd ref2 && exec "$T" --sweeps f2.yaml --threads-per-worker 1 >run.out 2>&1) &
refp=$!
kids="$kids $refp"
start_tlmd f.out --sweeps f.yaml --executor slurm --slurm-poll 0.3 --retry-delay 0
wait_for "select count(*) from jobs where sweep = 'f'"
fk=$(q "select key from jobs where sweep = 'f'")
wait_for "select count(*) from checkpoints where job = '$fk' and step >= 16"
ja=$(q "select slurm_job from attempts where job = '$fk' and n = 1")
scontrol requeue "$ja"
ok $? "scontrol requeue $ja (the 2-node job)"
wait_for "select count(*) from attempts a join checkpoints c on c.job = a.job
          where a.job = '$fk' and a.n = 2 and c.step > a.resumed_from_step"
# rank_pids RANK: this job's tlm-worker processes of that PMIx rank under
# Slurm (not srun's or the batch script's, whose arguments name the worker
# too, nor the reference's ranks under mpirun)
rank_pids() {
    ps -eo pid=,args= | awk -v k="--job $fk" '$2 ~ /tlm-worker$/ && index($0, k) { print $1 }' | while read -r p; do
        env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null)
        printf '%s\n' "$env" | grep -qx "PMIX_RANK=$1" && printf '%s\n' "$env" | grep -q '^SLURM_JOB_ID=' && echo "$p"
    done
}
r1=$(rank_pids 1)
ok $([ -n "$r1" ] && [ -n "$(rank_pids 0)" ] && echo 0 || echo 1) "the two ranks of the second attempt (rank 1: $r1)"
kill -9 $r1
wait "$tp"
rc=$?
ok $rc "tlmd finishes the job (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' f.out | tail -20
q "select n, reason, exit_code, signal, slurm_job, slurm_restart, resumed_from_step, message from attempts
   where job = '$fk' order by n" | sed 's/^/# /'
ok $([ "$(q "select count(*) from attempts where job = '$fk' and n = 1 and reason = 'interrupted' and message like 'Slurm requeued%'")" = 1 ] &&
    [ "$(q "select count(*) from attempts where job = '$fk' and n = 2 and slurm_job = '$ja' and slurm_restart = 1
             and resumed_from_step >= 16")" = 1 ] && echo 0 || echo 1) \
    "requeue: the first attempt interrupted by Slurm's requeue, the second the same Slurm job resumed from its checkpoint"
ok $([ "$(q "select reason from attempts where job = '$fk' and n = 2")" = crash ] &&
    [ "$(q "select count(*) from attempts where job = '$fk' and n = 3 and reason = 'done' and slurm_job <> '$ja'
             and resumed_from_step >= 16")" = 1 ] && echo 0 || echo 1) \
    "rank 1 killed with -9: the attempt ends as a crash, retried in a new Slurm job from the last checkpoint, done"
wait "$refp"
ok $? "reference: the local executor, 2 ranks under mpirun, uninterrupted"
d=$(q "attach 'ref2/results.db' as r;
       select count(*), count(distinct step),
              (select count(*) from steps a join r.steps b using (step) where a.job = '$fk' and abs(a.loss - b.loss) > 1e-6 * b.loss)
       from steps where job = '$fk'")
ok $([ "$d" = "$FS|$FS|0" ] && echo 0 || echo 1) "every step once, each loss within 1e-6 of the uninterrupted run's ($d)"
ok $([ -z "$(rank_pids 0)$(rank_pids 1)" ] && [ -z "$(squeue -h -o %i)" ] && echo 0 || echo 1) \
    "no rank of the job left, no Slurm job left"

# Adoption: tlmd killed with -9 leaves the 2-node job running; the next
# tlmd adopts it (no sbatch) and records its end: one attempt, every step
# once
sweep ad.yaml ad $FS "seeds: [9]" "resources: {nodes: 2, ranks_per_node: 1, cpus: 1}"
start_tlmd ad1.out --sweeps ad.yaml --executor slurm --slurm-poll 0.3
wait_for "select count(*) from jobs where sweep = 'ad'"
ak=$(q "select key from jobs where sweep = 'ad'")
wait_for "select count(*) from checkpoints where job = '$ak' and step >= 16"
kill -9 "$tp"
wait "$tp" 2>/dev/null
ok $([ "$(squeue -h -o %i | wc -l)" = 1 ] && echo 0 || echo 1) "kill -9 of tlmd leaves the 2-node job running"
start_tlmd ad2.out --sweeps ad.yaml --executor slurm --slurm-poll 0.3
wait "$tp"
rc=$?
ok $([ $rc = 0 ] && grep -q "1 Slurm job(s) of a previous daemon adopted" ad2.out && grep -q 'Slurm calls: 0 sbatch' ad2.out &&
    echo 0 || echo 1) "the next tlmd adopts the job, submits nothing, and finishes (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' ad2.out | tail -10
d=$(q "select (select group_concat(reason) from attempts where job = '$ak'), count(*), count(distinct step)
       from steps where job = '$ak'")
ok $([ "$d" = "done|$FS|$FS" ] && echo 0 || echo 1) "one attempt, done, every step once ($d)"
ok $([ -z "$(squeue -h -o %i)" ] && echo 0 || echo 1) "no Slurm job left"

# refused before anything is recorded: GPUs per node that are not one a rank
sweep gpu.yaml gpu 8 "seeds: [7]" "resources: {nodes: 2, ranks_per_node: 2, gpus: 1}"
"$T" --sweeps gpu.yaml --executor slurm --db gpu.db --runs gpu-runs >gpu.out 2>&1
rc=$?
ok $([ $rc != 0 ] && grep -q 'sweep gpu: gpus 1 (per node) for 2 ranks per node: .*one rank per GPU; set resources.gpus equal to ranks_per_node' gpu.out &&
    [ ! -e gpu.db ] && [ -z "$(squeue -h -o %i)" ] && echo 0 || echo 1) \
    "2 ranks a node on 1 GPU a node: refused before anything is recorded or submitted (exit $rc: $(head -c 300 gpu.out))"
finish
