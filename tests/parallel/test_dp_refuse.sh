#!/bin/sh
# test_dp_refuse.sh: a job of several ranks on GPUs whose ranks do not each
# have a GPU is refused by every rank before training, naming the rank and
# what to change; nothing trained, no checkpoint.  On this machine (no
# NVIDIA driver) every rank finds no GPU at all; on a 1-GPU machine rank 1
# finds none for its local rank; with 2 GPUs or more the case cannot be
# made here and is skipped.  In a build without CUDA, --device cuda:0 is
# refused as a CPU-only build (the same refusal, before training).
. "$TLM_SRCDIR/tests/lib/train_common.sh"
. "$TLM_SRCDIR/tests/parallel/dp_lib.sh"

gpus=$(ls /proc/driver/nvidia/gpus 2>/dev/null | wc -l)
if [ "$gpus" -ge 2 ]; then
    echo "ok 1 # skip this machine has $gpus GPUs: 2 ranks would each have one"
    echo "1..1"
    exit 0
fi
dp_job "$tmp/job.yaml" transformer
ranks 2 nogpu "$tmp/job.yaml" --device cuda:0
rc=$?
sed 's/^/# /' "$tmp/nogpu.err" | grep -v '^# *$' | head -8
ok $([ $rc = 2 ] && echo 0 || echo 1) "2 ranks on --device cuda:0 with $gpus GPU(s): refused as a config error (mpirun status $rc)"
grep -qE 'rank [01] of 2 \(--device cuda:0\): no NVIDIA driver or GPU found|rank 1 of 2 \(local rank 1 on [^)]*\) has no GPU: .*run one rank per GPU|this build trains on the CPU only' \
    "$tmp/nogpu.err" && grep -q '"kind":"config"' "$tmp/nogpu.ev"
ok $? "the refusal names the rank and the missing GPU, and what to do"
grep -q '"ev":"step"' "$tmp/nogpu.ev"
ok $((! $?)) "no step was trained"
[ -d "$tmp/nogpu/ckpt" ] && [ -n "$(ls "$tmp/nogpu/ckpt")" ]
ok $((! $?)) "no checkpoint was written"
finish
