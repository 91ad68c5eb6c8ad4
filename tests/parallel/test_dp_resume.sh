#!/bin/sh
# test_dp_resume.sh: a data-parallel job resumes on another number of
# ranks, because its checkpoints hold the global data cursor: a 2-rank run
# stopped with SIGTERM (sent to one rank only: the stop flag is any rank's,
# so both stop after the same step and exit 75, and mpirun with them)
# resumes on 1 process, and a 1-process run stopped the same way resumes
# on 2 ranks; either way the losses go on as the uninterrupted run's, within
# 1e-6 relative.  Transformer, and hope_attn with ZeRO-1 (its moments and
# slow levels' gradient accumulators, sharded over the ranks, gathered into
# the checkpoint, cross the change of rank count).
. "$TLM_SRCDIR/tests/lib/train_common.sh"
. "$TLM_SRCDIR/tests/parallel/dp_lib.sh"

# stop_ranks NAME JOB K: 2 ranks into NAME, SIGTERM to rank 1 after step K
stop_ranks() {
    $MPIRUN -np 2 "$W" --config "$2" --out "$tmp/$1" --threads 1 >>"$tmp/$1.ev" 2>>"$tmp/$1.err" &
    mp=$!
    kids="$kids $mp"
    wait_step "$tmp/$1.ev" "$3" "$mp"
    set -- $(children "$mp")
    [ $# = 2 ] || echo "# mpirun has $# children: $*"
    kill -TERM "$2"
    wait "$mp"
}
# stop_one NAME JOB K: one process, SIGTERM after step K
stop_one() {
    "$W" --config "$2" --out "$tmp/$1" --threads 1 >>"$tmp/$1.ev" 2>>"$tmp/$1.err" &
    p=$!
    kids="$kids $p"
    wait_step "$tmp/$1.ev" "$3" "$p"
    kill -TERM "$p"
    wait "$p"
}
# stopped NAME: the step of NAME's stopped event, with a checkpoint of it
stopped() {
    python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
s = [e for e in ev if e["ev"] == "stopped"]
assert len(s) == 1 and s[0]["ckpt"].endswith("step-%08d" % s[0]["step"]), s
print(s[0]["step"])' "$tmp/$1.ev"
}

for arch in transformer hope_attn; do
    dp_job "$tmp/$arch.yaml" "$arch"
    one "$arch-U" "$tmp/$arch.yaml"
    ok $? "$arch: uninterrupted, one process"

    job=$tmp/$arch.yaml
    if [ $arch = hope_attn ]; then
        sed 's/^train: {\(.*\)}$/train: {\1, zero1: true}/' "$job" >"$tmp/$arch-z.yaml"
        job=$tmp/$arch-z.yaml
    fi
    stop_ranks "$arch-A" "$job" 5
    rc=$?
    at=$(stopped "$arch-A")
    ok $([ $rc = 75 ] && [ -n "$at" ]; echo $?) "$arch: 2 ranks$([ $arch = hope_attn ] && echo ' (ZeRO-1)'), SIGTERM to rank 1 after step 5: stopped at step $at with a checkpoint, mpirun status $rc"
    one "$arch-A" "$tmp/$arch.yaml" --resume
    ok $? "$arch: resumed on one process"
    close "$arch-U" "$arch-A"
    ok $? "$arch: 2 ranks then 1: the uninterrupted run's losses"

    [ $arch = transformer ] || continue
    stop_one "$arch-B" "$tmp/$arch.yaml" 7
    rc=$?
    at=$(stopped "$arch-B")
    ok $([ $rc = 75 ] && [ -n "$at" ]; echo $?) "$arch: one process, SIGTERM after step 7: stopped at step $at, status $rc"
    ranks 2 "$arch-B" "$tmp/$arch.yaml" --resume
    ok $? "$arch: resumed on 2 ranks"
    close "$arch-U" "$arch-B"
    ok $? "$arch: 1 then 2 ranks: the uninterrupted run's losses"
done
finish
