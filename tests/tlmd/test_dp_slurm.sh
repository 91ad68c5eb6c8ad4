#!/bin/sh
# test_dp_slurm.sh: tlmd's slurm executor runs a job of 2 nodes x 1 rank
# (resources: {nodes: 2, ranks_per_node: 1}) as one Slurm job on the
# private cluster (tests/lib/slurm_cluster.sh): sbatch --nodes 2
# --ntasks-per-node 1, the batch script starting the ranks with srun
# --mpi=pmix, rank 0's events read from the run folder's file; the losses
# are the local executor's one-rank run's within 1e-6 relative.  Then tlmd
# stopped with SIGINT: the batch script passes SIGTERM on through srun to
# both ranks, which checkpoint and exit 75, and the next tlmd resumes the
# job.  A sweep of 2 ranks a node with 1 GPU a node is refused before
# anything is recorded.  Skips (77) without Slurm or mpirun.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
command -v mpirun >/dev/null 2>&1 || { echo "# Open MPI is missing (Debian: openmpi-bin; scripts/setup.sh --test): skip"; exit 77; }
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
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
                              where j.sweep = 'long'")" = "interrupted:75" ] && echo 0 || echo 1) \
    "SIGINT: tlmd stops (exit $rc), both ranks checkpointed, the attempt interrupted with 75 ($(q "select a.reason, a.exit_code, a.signal, a.message from attempts a join jobs j on j.key = a.job where j.sweep = 'long'"))"
ok $([ -z "$(squeue -h -o %i)" ] && echo 0 || echo 1) "no Slurm job left"

# refused before anything is recorded: GPUs per node that are not one a rank
sweep gpu.yaml gpu 8 "seeds: [7]" "resources: {nodes: 2, ranks_per_node: 2, gpus: 1}"
"$T" --sweeps gpu.yaml --executor slurm --db gpu.db --runs gpu-runs >gpu.out 2>&1
rc=$?
ok $([ $rc != 0 ] && grep -q 'sweep gpu: gpus 1 (per node) for 2 ranks per node: .*one rank per GPU; set resources.gpus equal to ranks_per_node' gpu.out &&
    [ ! -e gpu.db ] && [ -z "$(squeue -h -o %i)" ] && echo 0 || echo 1) \
    "2 ranks a node on 1 GPU a node: refused before anything is recorded or submitted (exit $rc: $(head -c 300 gpu.out))"
finish
