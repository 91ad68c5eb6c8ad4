#!/bin/sh
# test_describe.sh: `tlm-worker --describe` on the 440m preset with cosine
# 1.5 -> 0.5 prints widths that sum to L x d_base and the uniform model's
# parameter count; bad input exits 2 with a positioned message; the
# defaults --config-keys lists are the ones a config resolves to.
set -u
W="$TLM_BUILDDIR/worker/tlm-worker"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

cat >"$tmp/job.yaml" <<'Y'
scale: 440m
taper: {schedule: cosine, ratio: [1.5, 0.5]}
Y
"$W" --describe --config "$tmp/job.yaml" >"$tmp/out.json"
ok $? "describe exits 0"
python3 - "$tmp/out.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["widths"]["d_ff"]
L, base = d["config"]["model"]["layers"], d["config"]["model"]["d_ff"]
assert len(w) == L == 24, w
assert sum(w) == L * base == d["widths"]["budget"], (sum(w), L * base)
assert w[0] == 4224 and w[-1] == 1408, w
assert all(a >= b for a, b in zip(w, w[1:])), w
assert d["params"]["total"] == d["uniform_params"]["total"], (d["params"], d["uniform_params"])
assert abs(d["params"]["total"] - 440e6) < 0.03 * 440e6, d["params"]["total"]
assert d["flops_per_token"]["train"] > 6 * d["params"]["non_embedding"]
print("# widths", w)
print("# params", d["params"]["total"], "uniform", d["uniform_params"]["total"])
P
ok $? "widths sum to L x d_base, ends pinned, monotone, params equal the uniform model's"

printf 'scale: 440m\ntrain: {lrr: 1}\n' >"$tmp/bad.yaml"
"$W" --describe --config "$tmp/bad.yaml" 2>"$tmp/err"; rc=$?
grep -q "bad.yaml:2:9: unknown key 'lrr'" "$tmp/err"
ok $(( rc == 2 ? $? : 1 )) "bad config: exit 2 and a positioned message ($(cat "$tmp/err"))"

"$W" --help >/dev/null
ok $? "--help exits 0"

# --config-keys tells the default the code uses (it said 0.01 for max_lr
# while a titans job got 0.002)
"$W" --config-keys >"$tmp/keys"
ok $? "--config-keys exits 0"
printf 'scale: 1m\narch: titans\n' >"$tmp/titans.yaml"
"$W" --describe --config "$tmp/titans.yaml" >"$tmp/titans.json"
python3 - "$tmp/keys" "$tmp/titans.json" <<'P'
import json, re, sys
keys = {l.split()[0]: l for l in open(sys.argv[1])}
got = json.load(open(sys.argv[2]))["config"]["model"]["titans"]
for k in ("max_lr", "chunk", "window", "persistent", "mem_depth"):
    said = re.search(r"\(default: ([^)]*)\)", keys["model.titans." + k]).group(1)
    assert float(said) == got[k], (k, said, got[k])
    print("# model.titans.%s: --config-keys %s, resolved %s" % (k, said, got[k]))
assert got["max_lr"] == 0.002, got
P
ok $? "--config-keys gives the titans defaults a resolved config holds (max_lr 0.002)"

# the GPU memory estimate: parts that add up, weights/grads/AdamW from the
# parameter count, activations that grow in proportion to the micro-batch.
# The slabs hold each tensor 16-byte aligned in the bf16 weight copy: at
# most 7 floats of padding before a tensor (pad_max bounds them by 32
# tensors a layer; the 440m preset has none, titans' 3 x heads gate bias
# some)
for mb in 2 4; do
    printf 'scale: 440m\ntrain: {seq_len: 4096, micro_batch: %d}\n' $mb >"$tmp/mb$mb.yaml"
    "$W" --describe --config "$tmp/mb$mb.yaml" >"$tmp/mb$mb.json" || echo "# describe failed for micro_batch $mb"
done
printf 'scale: 1m\narch: titans\nmodel: {titans: {variant: mal}}\ntrain: {micro_batch: 4}\n' >"$tmp/tmal.yaml"
"$W" --describe --config "$tmp/tmal.yaml" >"$tmp/tmal.json" || echo "# describe failed for titans mal"
python3 - "$tmp/mb2.json" "$tmp/mb4.json" "$tmp/tmal.json" <<'P'
import json, sys
a, b, t = (json.load(open(f)) for f in sys.argv[1:4])
for d in (a, b, t):
    g = d["gpu_memory"]
    parts = g["weights"] + g["weight_copy"] + g["grads"] + g["adamw"] + g["activations"] + g["workspace"]
    assert parts == g["total"], (parts, g)
    n, pad_max = d["params"]["total"], 4 * 7 * (32 * d["config"]["model"]["layers"] + 3)
    assert 4 * n <= g["weights"] < 4 * n + 256 + pad_max, (n, g)
    assert g["grads"] == g["weights"] and g["adamw"] >= 2 * g["weights"], g
    assert g["activations"] > 0 and g["workspace"] >= 32 << 20, g
ga, gb = a["gpu_memory"], b["gpu_memory"]
assert (ga["micro_batch"], gb["micro_batch"], ga["seq_len"]) == (2, 4, 4096), (ga, gb)
assert gb["weights"] == ga["weights"] and gb["adamw"] == ga["adamw"], (ga, gb)
r = gb["activations"] / ga["activations"]
assert 1.95 < r <= 2.0, r
assert t["gpu_memory"]["micro_batch"] == 4, t["gpu_memory"]
print("# 440m seq 4096: micro-batch 2 %.2f GB, 4 %.2f GB (activations x%.3f)" % (ga["total"] / 1e9, gb["total"] / 1e9, r))
P
ok $? "gpu_memory: parts add up to the total, weights from the parameter count, activations x2 with the micro-batch"
# the GPU plan in the precision the worker would run (precision.gpu:
# auto is bf16 on a GPU), and the plan in each
# precision: bf16 holds the weight copy (2 bytes a parameter, its own
# allocation) and about half the activations (2-byte activations and
# their gradients; statistics and workspaces stay fp32), the parameter
# state unchanged.  `gpu_memory_by_precision` shows both plans whatever
# the job asks for (docs/protocol.md).
printf 'scale: 440m\ntrain: {seq_len: 4096, micro_batch: 2, precision: fp32}\n' >"$tmp/p32.yaml"
printf 'scale: 440m\ntrain: {seq_len: 4096, micro_batch: 2, precision: bf16}\n' >"$tmp/p16.yaml"
for p in p32 p16; do
    "$W" --describe --gpu-memory 131.3 --config "$tmp/$p.yaml" >"$tmp/$p.json" || echo "# describe failed for $p"
done
python3 - "$tmp/mb2.json" "$tmp/tmal.json" "$tmp/p32.json" "$tmp/p16.json" <<'P'
import json, sys
a, t, p32, p16 = (json.load(open(f)) for f in sys.argv[1:5])
for d in (a, t):
    by, g, n = d["gpu_memory_by_precision"], d["gpu_memory"], d["params"]["total"]
    f, b = by["fp32"], by["bf16"]
    assert (f["precision"], b["precision"]) == ("fp32", "bf16"), by
    assert g["precision"] == d["precision"]["gpu"] and g == by[g["precision"]], (d["precision"], g)
    assert f["weight_copy"] == 0 and 2 * n <= b["weight_copy"] <= f["weights"] // 2 + 256, (n, f, b)
    for k in ("micro_batch", "seq_len", "weights", "grads", "adamw", "workspace"):
        assert f[k] == b[k], (k, f, b)
    parts = b["weights"] + b["weight_copy"] + b["grads"] + b["adamw"] + b["activations"] + b["workspace"]
    assert parts == b["total"], (parts, b)
    # the transformer's activations about halve; titans' memory scratch
    # and states stay fp32 (0.69 at 1m, seq 256)
    r = b["activations"] / f["activations"]
    assert 0.5 <= r < (0.6 if d is a else 0.8), r
    print("# %s: bf16 plan %.2f GB (copy %.2f GB, activations x%.3f of fp32's), fp32 plan %.2f GB" % (
        d["config"]["arch"], b["total"] / 1e9, b["weight_copy"] / 1e9, r, f["total"] / 1e9))
# auto plans what the worker trains a GPU run in, bf16 (the CPU: fp32);
# bf16 in words the same, refused on the CPU; fp32 in words plans fp32
assert a["precision"] == {"cpu": "fp32", "gpu": "bf16"} and a["gpu_memory"]["precision"] == "bf16", a["precision"]
assert p32["precision"] == {"cpu": "fp32", "gpu": "fp32"} and p32["gpu_memory"] == a["gpu_memory_by_precision"]["fp32"]
assert p32["gpu_fit"]["fits"], p32["gpu_fit"]
assert p16["precision"] == {"cpu": None, "gpu": "bf16"} and p16["gpu_memory"] == a["gpu_memory"], p16
assert p16["gpu_fit"]["fits"] and p16["gpu_fit"]["micro_batch"] >= p32["gpu_fit"]["micro_batch"], p16["gpu_fit"]
assert p16["gpu_memory_by_precision"] == a["gpu_memory_by_precision"], p16["gpu_memory_by_precision"]
P
ok $? "gpu_memory in the worker's precision (auto: bf16 on a GPU); the bf16 plan holds the weight copy and about half the activations"
# the CPU estimate too (issue 26): the same parts, the CPU backend's own workspaces
python3 - "$tmp/mb2.json" "$tmp/mb4.json" "$tmp/tmal.json" <<'P'
import json, sys
a, b, t = (json.load(open(f)) for f in sys.argv[1:4])
for d in (a, b, t):
    c = d["cpu_memory"]
    parts = c["weights"] + c["grads"] + c["adamw"] + c["activations"] + c["workspace"]
    assert parts == c["total"] and c["workspace"] == 0, c
    n, pad_max = d["params"]["total"], 4 * 7 * (32 * d["config"]["model"]["layers"] + 3)
    assert 4 * n <= c["weights"] < 4 * n + 64 + pad_max, (n, c)
    if d is a:  # d_model and heads multiples of 8: no padding at all
        assert c["weights"] == 4 * n and d["gpu_memory"]["weights"] == -(-4 * n // 256) * 256, (n, c)
    assert c["grads"] == c["weights"] and c["adamw"] >= 2 * c["weights"], c
    assert 0 < c["activations"] < 4 * d["gpu_memory"]["activations"], (c, d["gpu_memory"])
ca, cb = a["cpu_memory"], b["cpu_memory"]
r = cb["activations"] / ca["activations"]
assert 1.9 < r <= 2.0, r
print("# 440m seq 4096 on the CPU: micro-batch 2 %.2f GB, 4 %.2f GB" % (ca["total"] / 1e9, cb["total"] / 1e9))
P
ok $? "cpu_memory: parts add up to the total, no GPU workspace, activations x2 with the micro-batch"
# the micro-batch fitted to a GPU's memory (issue 24: the paper's three
# large scales at seq 4096 on one H200, 141 GB = 131.3 GiB): the largest
# divisor of the batch whose plan fits 95% of it, checked against the plan
# of the next larger divisor, which must not fit
for s in 440m 760m 1.3b; do
    printf 'scale: %s\ntokenizer: llama3\n' $s >"$tmp/fit$s.yaml"
    "$W" --describe --gpu-memory 131.3 --config "$tmp/fit$s.yaml" >"$tmp/fit$s.json" || echo "# describe --gpu-memory failed for $s"
done
python3 - "$W" "$tmp" <<'P'
import json, subprocess, sys
W, tmp = sys.argv[1:3]
def describe(scale, mb):
    y = "%s/mb.yaml" % tmp
    open(y, "w").write("scale: %s\ntokenizer: llama3\ntrain: {micro_batch: %d}\n" % (scale, mb))
    return json.loads(subprocess.run([W, "--describe", "--config", y], check=True, capture_output=True,
                                     text=True).stdout)
for s in ("440m", "760m", "1.3b"):
    d = json.load(open("%s/fit%s.json" % (tmp, s)))
    f, t = d["gpu_fit"], d["config"]["train"]
    S = t["batch_tokens"] // t["seq_len"]
    assert t["seq_len"] == 4096 and f["budget"] == int(131.3 * 2**30), (t, f)
    assert f["fits"] and S % f["micro_batch"] == 0 and f["accum_steps"] * f["micro_batch"] == S, f
    assert f["total"] <= f["budget"] * 0.95, f
    # the plan at the fitted micro-batch is gpu_memory's at that micro-batch
    same = describe(s, f["micro_batch"])
    assert same["gpu_memory"]["total"] == f["total"], (same["gpu_memory"], f)
    up = [m for m in range(f["micro_batch"] + 1, t["micro_batch"] + 1) if S % m == 0]
    if up:
        big = describe(s, up[0])
        assert big["gpu_memory"]["total"] > f["budget"] * 0.95, (up[0], big["gpu_memory"])
    print("# %s seq 4096 on 131.3 GiB: micro-batch %d of %d (%d accumulated), %.1f GiB planned" %
          (s, f["micro_batch"], t["micro_batch"], f["accum_steps"], f["total"] / 2**30))
P
ok $? "--gpu-memory: 440m, 760m and 1.3b at seq 4096 fit an H200 with the largest micro-batch that does"
printf 'scale: 440m\n' >"$tmp/tiny.yaml"
"$W" --describe --gpu-memory 1 --config "$tmp/tiny.yaml" | python3 -c '
import json, sys
f = json.load(sys.stdin)["gpu_fit"]
assert not f["fits"] and f["micro_batch"] is None and f["total"] is None, f'
ok $? "--gpu-memory 1: nothing fits, said as fits false"
"$W" --describe --gpu-memory 80 --device cuda:0 --config "$tmp/tiny.yaml" >/dev/null 2>"$tmp/err"; rc=$?
ok $([ $rc = 2 ] && grep -q "give one" "$tmp/err" && echo 0 || echo 1) "--gpu-memory with --device cuda:0: exit 2, give one ($rc: $(cat "$tmp/err"))"
echo "1..$n"
exit $fail
