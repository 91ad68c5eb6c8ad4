#!/bin/sh
# test_dp_losses.sh: `mpirun -np 2 tlm-worker` trains the same model as one
# process with the same global batch, for each of the four architectures:
# every step's loss and every validation loss within 1e-6 relative (the
# all-reduce sums in another order than one process accumulates), every
# step once, rank 0 alone writing events; the trainer itself checks at
# every checkpoint that both ranks hold the same weights (a run whose ranks
# differ fails).  With ZeRO-1 (train.zero1: the AdamW state sharded, the
# gradients reduce-scattered, the weights all-gathered) the losses are the
# same again, and the final checkpoint's optimizer state, gathered from the
# shards, is byte for byte the plain 2-rank run's.  Also: a batch that
# does not divide among the ranks is refused before training, naming what
# to change.
. "$TLM_SRCDIR/tests/lib/train_common.sh"
. "$TLM_SRCDIR/tests/parallel/dp_lib.sh"

for arch in transformer gated_attn hope_attn titans; do
    dp_job "$tmp/$arch.yaml" "$arch"
    one "$arch-1" "$tmp/$arch.yaml"
    ok $? "$arch: one process"
    ranks 2 "$arch-2" "$tmp/$arch.yaml"
    rc=$?
    ok $rc "$arch: two ranks under mpirun (status $rc)"
    [ $rc = 0 ] || sed 's/^/# /' "$tmp/$arch-2.err" | tail -20
    close "$arch-1" "$arch-2"
    ok $? "$arch: two ranks' losses equal one process's within 1e-6"
    python3 - "$tmp/$arch-2.ev" <<'P'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
starts = [e for e in ev if e["ev"] == "start"]
assert len(starts) == 1 and starts[0]["ranks"] == 2 and starts[0]["comm"] == "mpi", starts
assert sum(e["ev"] == "done" for e in ev) == 1
P
    ok $? "$arch: one start event (ranks 2, comm mpi) and one done: rank 0 alone writes events"

    sed 's/^train: {\(.*\)}$/train: {\1, zero1: true}/' "$tmp/$arch.yaml" >"$tmp/$arch-z.yaml"
    ranks 2 "$arch-z" "$tmp/$arch-z.yaml"
    rc=$?
    ok $rc "$arch: two ranks with ZeRO-1 (status $rc)"
    close "$arch-1" "$arch-z"
    ok $? "$arch: ZeRO-1's losses equal one process's within 1e-6"
    cmp -s "$tmp/$arch-2/ckpt/step-00000016/optim.safetensors" "$tmp/$arch-z/ckpt/step-00000016/optim.safetensors"
    ok $? "$arch: ZeRO-1's checkpoint holds the whole optimizer state, byte for byte the plain run's"
done

# 32 sequences a step do not divide among 3 ranks
ranks 3 bad "$tmp/transformer.yaml"
rc=$?
said=1
grep -q 'do not divide among 3 ranks: make it a multiple of 3 sequences' "$tmp/bad.err" &&
    grep -q '"kind":"config"' "$tmp/bad.ev" && said=0
ok $([ $rc = 2 ] && [ $said = 0 ]; echo $?) "3 ranks for a batch of 32 sequences: refused as a config error (status $rc), what to change said"
[ -d "$tmp/bad/ckpt" ] && [ -n "$(ls "$tmp/bad/ckpt")" ]
ok $((! $?)) "the refused job wrote no checkpoint"
finish
