#!/bin/sh
# test_train.sh: the issue's "done when": a tiny tapered model
# (scale 1m, cosine taper 1.5 -> 0.5) trains from `tlm-worker --config` on
# byte tokens of real English text (the licence texts every Debian system
# ships) and its validation loss falls well below the unigram (byte)
# entropy of that text, computed here from the shard itself.  One thread,
# so that a parallel `make check` stays within its time.
. "$TLM_SRCDIR/tests/lib/train_common.sh"

cat >"$tmp/job.yaml" <<EOF
scale: 1m
taper: {schedule: cosine, ratio: [1.5, 0.5]}
data: {train: $tmp/text.tlmtok, val_fraction: 0.05}
train: {tokens: 300000, seq_len: 64, batch_tokens: 2048, lr: 2e-3, warmup_tokens: 20000, log_every: 10}
eval: {every_tokens: 100000, val_tokens: 16384}
EOF
"$W" --describe --config "$tmp/job.yaml" | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = d["widths"]["d_ff"]
assert d["config"]["scale"] == "1m" and len(w) == 6 and w[0] == 384 and w[-1] == 128 and sum(w) == 6 * 256, w
print("# widths", w)'
ok $? "the job is the 1m preset with the cosine 1.5 -> 0.5 taper (384 ... 128, sum 6 x 256)"
start=$(date +%s)
"$W" --config "$tmp/job.yaml" --out "$tmp/run" --threads 1 >"$tmp/ev" 2>"$tmp/err"
rc=$?
end=$(date +%s)
ok $rc "trained in $((end - start)) s"
tail -3 "$tmp/err" | sed 's/^/# /'
events "$tmp/ev" --end done >"$tmp/sum"
ok $? "events follow the protocol, ending with done"
python3 - "$tmp/sum" "$tmp/text.tlmtok" <<'P'
import json, math, struct, sys
s = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], "rb").read()
n, = struct.unpack_from("<Q", raw, 24)
width, = struct.unpack_from("<I", raw, 16)
assert width == 2 and len(raw) == 192 + 2 * n
counts = [0] * 256
for (t,) in struct.iter_unpack("<H", raw[192:]):
    counts[t] += 1
H = -sum(c / n * math.log(c / n) for c in counts if c)
curve = [(e["step"], e["value"]) for e in s["evals"] if e["metric"] == "loss"]
print("# unigram entropy of the text: %.4f nats/byte (%.3f bits) over %d bytes" % (H, H / math.log(2), n))
print("# validation loss by step: " + ", ".join("%d: %.4f" % c for c in curve))
print("# first training loss %.4f (ln 256 = %.4f)" % (s["losses"]["1"], math.log(256)))
final = s["end"]["val_loss"]
ok = True
if abs(s["losses"]["1"] - math.log(256)) > 0.3:
    print("# the untrained model should predict about uniformly"); ok = False
if not all(b[1] < a[1] for a, b in zip(curve, curve[1:])):
    print("# the validation loss did not fall at every evaluation"); ok = False
if not final < H - 1.0:
    print("# final validation loss %.4f is not 1 nat below the entropy %.4f" % (final, H)); ok = False
print("# final validation loss %.4f = entropy - %.3f nats (%.1f%% below)" % (final, H - final, 100 * (H - final) / H))
sys.exit(0 if ok else 1)
P
ok $? "validation loss falls at every evaluation and ends more than 1 nat below the unigram entropy"
finish
