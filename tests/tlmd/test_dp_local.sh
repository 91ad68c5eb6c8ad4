#!/bin/sh
# test_dp_local.sh: tlmd's local executor runs a job of several ranks
# (resources: {ranks_per_node: 2}) as one attempt through mpirun:
#   - the dry run shows the ranks and each rank's share and micro-batch;
#   - the job trains to the losses of the same sweep on one rank (within
#     1e-6 relative), rank 0's events reaching tlmd through mpirun's stdout;
#   - one rank killed with SIGKILL ends the attempt (a crash by signal 9,
#     however mpirun reports it), tlmd retries it from the last checkpoint
#     on 2 ranks again, every step is stored once with the uninterrupted
#     losses, and no rank is left behind;
#   - refused before anything is recorded, saying what to change: a batch
#     that does not divide among the ranks, nodes: 2 on this machine, and
#     mpirun missing from PATH.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
command -v mpirun >/dev/null 2>&1 || { echo "# mpirun is missing (Debian: openmpi-bin; scripts/setup.sh --test): skip"; exit 77; }
. "$TLM_SRCDIR/tests/lib/mpi_env.sh"

# lr 1e-3: at the library's 3e-3 this small model amplifies the
# all-reduce's rounding to 1e-4 by step 48 (docs/parallel.md), at 1e-3
# the two runs stay within 1e-7
STEPS=48
LR=1e-3
sweep one.yaml dp $STEPS "seeds: [5]"
sweep dp.yaml dp $STEPS "seeds: [5]" "resources: {ranks_per_node: 2}"
reference one.yaml
ok $? "reference: the sweep on one rank"

# close: every step of results.db once, each loss within 1e-6 of the reference's
close() {
    d=$(q "attach 'ref/results.db' as r;
           select count(*), min(step), max(step), count(distinct step),
                  (select count(*) from steps a join r.steps b using (step) where abs(a.loss - b.loss) > 1e-6 * b.loss)
           from steps")
    [ "$d" = "$STEPS|1|$STEPS|$STEPS|0" ]
}
# ranks_left: tlm-worker processes of this test's runs folder still alive
ranks_left() {
    pgrep -f -- "--out $tmp/runs/" | wc -l
}

"$T" --dry-run --sweeps dp.yaml >dry.out 2>&1
grep -q 'one attempt of 2 ranks (1 node x 2)' dry.out &&
    grep -q 'on 2 ranks: 16 of the 32 sequences of a step each, micro-batch 8 (2 passes)' dry.out
ok $? "--dry-run shows the ranks and each rank's share and micro-batch"

start_tlmd run.out --sweeps dp.yaml --threads-per-worker 2 --retry-delay 0.2
wait_for "select count(*) from steps where step > 20 and exists (select 1 from checkpoints where step >= 16)"
ok $? "2 ranks reached step 20 with a checkpoint"
mp=$(q "select pid from attempts where ended_at is null")
set -- $(cat /proc/"$mp"/task/*/children 2>/dev/null)
ok $([ $# = 2 ] && echo 0 || echo 1) "the attempt is mpirun ($mp) with 2 ranks ($*)"
at=$(q "select max(step) from steps")
kill -9 "$2"
echo "# killed rank 1 ($2) near step $at"
wait "$tp"
rc=$?
ok $rc "tlmd finished the job (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' run.out | tail -20
ok $([ "$(q "select reason || ':' || signal from attempts where n = 1")" = "crash:9" ] && echo 0 || echo 1) \
    "the first attempt ended as a crash by signal 9 ($(q "select reason, exit_code, signal, message from attempts where n = 1"))"
resumed=$(q "select resumed_from_step from attempts where n = 2")
ok $([ "$(q "select count(*) from attempts")" = 2 ] && [ -n "$resumed" ] && [ "$resumed" -ge 16 ] &&
    [ "$(q "select reason from attempts where n = 2")" = done ] && echo 0 || echo 1) \
    "a second attempt resumed from checkpoint step $resumed and finished"
close
ok $? "every step stored once, each loss within 1e-6 of one rank's ($(q "select count(*), count(distinct step) from steps"))"
ok $([ "$(ranks_left)" = 0 ] && echo 0 || echo 1) "no rank left behind"
ok $([ "$(q "select count(*) from evals where step = $STEPS")" -gt 0 ] && echo 0 || echo 1) "the final evaluation is recorded"

# tlmd stopped with SIGTERM: it signals the ranks (not mpirun), they
# checkpoint after the same step and exit 75, and mpirun with them; the
# next tlmd resumes the job to the same losses
mkdir stop && cd stop || exit 1
cp ../dp.yaml . && mkdir ref && cp -r ../ref/results.db ref/
start_tlmd run.out --sweeps dp.yaml --threads-per-worker 2
wait_for "select count(*) from steps where step > 8"
kill -TERM "$tp"
wait "$tp"
rc=$?
ok $([ "$(q "select reason || ':' || exit_code from attempts where n = 1")" = "interrupted:75" ] &&
    [ "$(q "select status from jobs")" = interrupted ] && echo 0 || echo 1) \
    "tlmd stopped (exit $rc): the ranks checkpointed and exited 75 ($(q "select reason, exit_code, signal, message from attempts"))"
"$T" --sweeps dp.yaml --threads-per-worker 2 >run2.out 2>&1
rc=$?
close
same=$?
ok $([ $rc = 0 ] && [ $same = 0 ] && [ "$(q "select reason from attempts where n = 2")" = done ] && [ "$(ranks_left)" = 0 ] && echo 0 || echo 1) \
    "the next tlmd resumed it to the end (exit $rc), every step once within 1e-6, no rank left"
cd ..

# refusals, before results.db exists
mkdir bad && cd bad || exit 1
sweep three.yaml three $STEPS "resources: {ranks_per_node: 3}"
"$T" --sweeps three.yaml >out 2>&1
rc=$?
ok $([ $rc != 0 ] && grep -q 'do not divide among 3 ranks' out && grep -q 'three.yaml:[0-9]*: sweep three' out &&
    [ ! -e results.db ] && echo 0 || echo 1) "3 ranks for 32 sequences: refused (exit $rc): $(head -c 300 out)"
sweep nodes.yaml nodes $STEPS "resources: {nodes: 2, ranks_per_node: 1}"
"$T" --sweeps nodes.yaml >out 2>&1
rc=$?
ok $([ $rc != 0 ] && grep -q 'local executor runs on this machine only' out && [ ! -e results.db ] && echo 0 || echo 1) \
    "nodes: 2 on the local executor: refused (exit $rc): $(head -c 200 out)"
PATH=/nonexistent "$T" --sweeps ../dp.yaml >out 2>&1
rc=$?
ok $([ $rc != 0 ] && grep -q 'mpirun is not on PATH' out && [ ! -e results.db ] && echo 0 || echo 1) \
    "mpirun missing: refused (exit $rc): $(head -c 200 out)"
cd ..
finish
