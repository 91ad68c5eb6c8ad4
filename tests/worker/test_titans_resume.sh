#!/bin/sh
# test_titans_resume.sh: a titans run through tlm-worker checkpoints its
# new tensors and resumes bit for bit.  The job (tests/lib/train_common.sh's
# small job, linear taper, as titans MAG: window 8 < seq_len 32, chunk 5
# that does not divide it, 2 persistent entries) runs uninterrupted (A),
# is killed with SIGKILL after a random step and resumed (C): the same
# losses, validation losses and byte-identical final model.safetensors and
# optim.safetensors.  Its model.safetensors holds every Titans tensor of
# every layer under the layer's prefix, with the shapes of docs/titans.md,
# and a run of the same job twice gives the same losses (determinism).
# Also `tlm-worker --describe` of a tapered 1m titans job: the Titans parts
# of each layer.
. "$TLM_SRCDIR/tests/lib/train_common.sh"
. "$TLM_SRCDIR/tests/worker/resume_lib.sh"

small_job "$tmp/job.yaml" "arch: titans"
sed -i -e 's/^model: {\(.*\)}$/model: {\1, titans: {window: 8, chunk: 5, persistent: 2}}/' "$tmp/job.yaml"
grep -q 'titans: {window: 8' "$tmp/job.yaml" || { echo "not ok - cannot write the titans job"; exit 1; }

# --describe: the Titans parts of every layer, the taper on the MLP only
printf 'scale: 1m\narch: titans\ntaper: {schedule: cosine, ratio: [1.5, 0.5]}\n' >"$tmp/d.yaml"
"$W" --describe --config "$tmp/d.yaml" >"$tmp/d.json" && python3 - "$tmp/d.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
L = d["layers"]
assert d["params"]["total"] == d["uniform_params"]["total"], (d["params"], d["uniform_params"])
assert [l["d_ff"] for l in L] == d["widths"]["d_ff"] and L[0]["d_ff"] > L[-1]["d_ff"]
for l in L:
    t = l["titans"]
    assert t["memory"] + t["gates"] + t["persistent"] + t["attention_norm"] == l["extra"] == L[0]["extra"], l
    assert t["memory_flops_fwd_per_token"] > 0 and t["persistent"] == 2 * 4 * 128 and t["gates"] == 3 * 4 * 128 + 12
assert sum(l["extra"] for l in L) == d["params"]["extra"]
print("# 1m titans: %d parameters, extra %d per layer (memory %d, gates %d, persistent %d), d_ff %s" % (
    d["params"]["total"], L[0]["extra"], L[0]["titans"]["memory"], L[0]["titans"]["gates"],
    L[0]["titans"]["persistent"], d["widths"]["d_ff"]))
P
ok $? "--describe: Titans parts per layer sum to its extra, equal in every layer; tapered total = uniform total"

run A
ok $? "uninterrupted titans run A (48 steps)"
events "$tmp/A.ev" --end done >/dev/null
ok $? "A's events follow the protocol"
python3 - "$tmp/A/ckpt/step-00000048" <<'P'
import json, struct, sys
def header(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    h = json.loads(raw[8:8 + n])
    h.pop("__metadata__", None)
    return h
m = header(sys.argv[1] + "/model.safetensors")
o = header(sys.argv[1] + "/optim.safetensors")
d, H, hd, hm, Np = 64, 2, 32, 64, 2
want = {"memory.q_proj.weight": [d, d], "memory.k_proj.weight": [d, d], "memory.v_proj.weight": [d, d],
        "memory.gate_proj.weight": [3 * H, d], "memory.gate_proj.bias": [3 * H], "memory.conv.weight": [3 * d, 4],
        "memory.init_w1": [H * hm, hd], "memory.init_w2": [H * hd, hm], "memory.norm.weight": [d],
        "self_attn.norm.weight": [d], "self_attn.persistent_k": [Np, d], "self_attn.persistent_v": [Np, d]}
bad = []
for l in range(2):
    for k, shape in want.items():
        name = "model.layers.%d.%s" % (l, k)
        if name not in m or m[name]["shape"] != shape:
            bad.append(name)
        if name + ".exp_avg" not in o or name + ".exp_avg_sq" not in o:
            bad.append(name + " (moments)")
if bad:
    sys.exit("missing or misshapen: %s" % bad[:6])
print("# %d tensors, %d of them Titans-only, all with their AdamW moments" % (len(m), 2 * len(want)))
P
ok $? "the checkpoint holds every Titans tensor of both layers, shaped as documented, with its moments"

run B
same A B
ok $? "the same job again: bit-identical losses and validation losses"

k=$(rand_step 8 40)
kill_resume C "$k"
same A C
ok $? "killed + resumed: the uninterrupted run's losses and validation losses, bit for bit"
same_files A C
ok $? "killed + resumed: byte-identical final weights and moments"
finish
