#!/bin/sh
# test_hope_resume.sh: a hope_attn run through tlm-worker resumes bit for
# bit although its slow levels hold half-accumulated gradients.  The job
# (tests/lib/train_common.sh's small job as hope_attn, CMS chunks 1, 4, 16,
# checkpoints every 6 steps: none of 6, 12, ..., 42 is a multiple of 16, so
# every checkpoint a run resumes from is in the middle of the slowest
# level's chunk) is killed with SIGKILL after a random step, and stopped
# with SIGTERM, then continued with --resume: the same losses, validation
# losses and byte-identical final model.safetensors and optim.safetensors
# as the uninterrupted run; the checkpoint resumed from holds the
# accumulators (<name>.grad_acc) and they are not empty.
. "$TLM_SRCDIR/tests/lib/train_common.sh"
. "$TLM_SRCDIR/tests/worker/resume_lib.sh"

small_job "$tmp/job.yaml" "arch: hope_attn"
sed -i -e 's/^model: {\(.*\)}$/model: {\1, hope: {levels: 3, chunks: [1, 4, 16]}}/' \
    -e 's/ckpt_every_tokens: 8192/ckpt_every_tokens: 6144/' "$tmp/job.yaml"
grep -q 'hope: {levels: 3' "$tmp/job.yaml" && grep -q 'ckpt_every_tokens: 6144' "$tmp/job.yaml" ||
    { echo "not ok - cannot write the hope job"; exit 1; }

# accumulators CKPT_DIR: the grad_acc tensors of optim.safetensors, and how
# many are not all zero ("N M")
accumulators() {
    python3 - "$1/optim.safetensors" <<'P'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
h = json.loads(raw[8:8 + n])
h.pop("__metadata__", None)
acc = [k for k in h if k.endswith(".grad_acc")]
body = raw[8 + n:]
live = sum(1 for k in acc if any(body[h[k]["data_offsets"][0]:h[k]["data_offsets"][1]]))
moments = sum(1 for k in h if k.endswith(".exp_avg"))
print(len(acc), live, moments)
P
}

# --describe: every layer's levels (widths summing to its d_ff, chunks)
"$W" --describe --config "$tmp/job.yaml" >"$tmp/describe.json"
python3 - "$tmp/describe.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["model"]["hope"] == {"levels": 3, "chunks": [1, 4, 16]}, d["config"]["model"]
for l in d["layers"]:
    lv = l["levels"]
    assert [x["chunk"] for x in lv] == [1, 4, 16], lv
    assert sum(x["d_ff"] for x in lv) == l["d_ff"] and all(x["d_ff"] % 16 == 0 for x in lv), l
    assert sum(x["params"] for x in lv) == l["mlp"] + 3 * 64, l
assert d["params"]["total"] == d["uniform_params"]["total"]
print("# levels:", [[x["d_ff"] for x in l["levels"]] for l in d["layers"]])
P
ok $? "--describe lists each layer's levels: widths summing to d_ff, chunks 1, 4, 16, parameters"

run A
ok $? "uninterrupted hope_attn run A (48 steps, chunks 1, 4, 16)"
events "$tmp/A.ev" --end done >/dev/null
ok $? "A's events follow the protocol"
set -- $(accumulators "$tmp/A/ckpt/step-00000042")
ok $([ "$1" = 16 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ]; echo $?) \
    "a checkpoint at step 42 carries the slow levels' accumulators: $1 grad_acc tensors ($2 not empty) beside $3 moments"

# ---- SIGKILL at a random step, then --resume from the newest checkpoint
k=$(rand_step 8 40)
kill_resume C "$k"
from=$(start_field C resumed_from_step)
echo "# resumed from step $from (chunk positions: $((from % 4)) of 4, $((from % 16)) of 16)"
ok $([ "$from" != None ] && [ $((from % 16)) != 0 ]; echo $?) \
    "it resumed from step $from, in the middle of the slowest level's chunk"
same A C
ok $? "killed + resumed: the uninterrupted run's losses and validation losses, bit for bit"
same_files A C
ok $? "killed + resumed: byte-identical final weights, moments and accumulators"

# ---- SIGTERM: stop at the step, checkpoint it, resume from it
k=$(rand_step 17 40)
[ $((k % 16)) = 0 ] && k=$((k + 1))
signal_at D "$k" TERM 75
run D --resume
from=$(start_field D resumed_from_step)
echo "# resumed from step $from (chunk positions: $((from % 4)) of 4, $((from % 16)) of 16)"
same A D
ok $? "stopped at step $from + resumed: identical losses"
same_files A D
ok $? "stopped + resumed: identical final weights, moments and accumulators"
finish
