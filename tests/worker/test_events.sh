#!/bin/sh
# test_events.sh: tlm-worker's event stream is what docs/protocol.md
# says: valid JSON lines with the listed fields, start (matching --describe:
# id, widths, parameters, FLOPs) then one layer d_ff event per layer, every
# step with its learning rate, evaluations and checkpoints at their periods,
# heartbeats when silent, exactly one done; events on --events-fd only,
# human progress on stderr; the run folder holds config.json and the newest
# keep_checkpoints checkpoints.
. "$TLM_SRCDIR/tests/lib/train_common.sh"

small_job "$tmp/job.yaml"
"$W" --describe --config "$tmp/job.yaml" >"$tmp/describe.json"
ok $? "--describe the job"

job=$(printf 'k"1\\\tz\303\251')   # a quote, a backslash, a tab and an e-acute
"$W" --config "$tmp/job.yaml" --out "$tmp/run" --threads 1 --job "$job" --events-fd 3 \
    3>"$tmp/ev" >"$tmp/stdout" 2>"$tmp/stderr"
ok $? "train with --events-fd 3 and --job"
events "$tmp/ev" --job "$job" --end done >"$tmp/sum"
ok $? "every line is a protocol event carrying the job key; one done, last"
ok $([ ! -s "$tmp/stdout" ]; echo $?) "nothing on stdout when events go to fd 3"
grep -q "step 48/48" "$tmp/stderr" && grep -q "done: 48 steps" "$tmp/stderr"
ok $? "progress and the summary go to stderr"

python3 - "$tmp/sum" "$tmp/describe.json" "$tmp/run" "$W" "$tmp/job.yaml" "$job" <<'P'
import json, math, os, re, sys
s = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
run, W, cfgpath, job = sys.argv[3:7]
st = s["start"]
fails = []
def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what)
    if not cond:
        fails.append(what)
check(st["config_id"] == d["id"], "start.config_id is the job id of --describe")
check(s["widths"] == d["widths"]["d_ff"], "layer d_ff events: %r" % s["widths"])
check(st["params"] == d["params"]["total"], "start.params = the account's total (%d)" % st["params"])
check(abs(st["flops_per_token"] - d["flops_per_token"]["train"]) <= 1e-9 * st["flops_per_token"], "start.flops_per_token")
check(st["step"] == 0 and st["tokens"] == 0 and st["resumed_from_step"] is None, "a fresh start: step 0, resumed_from_step null")
check(st["total_steps"] == 48 and st["total_tokens"] == 49152, "total_steps 48, total_tokens 49152")
check(st["device"] == "cpu" and st["threads"] == 1 and st["pid"] > 0, "device cpu, threads 1, pid")
check(bool(st["blas"]) and bool(st["blas_kernel"]) and bool(st["compiler"]) and bool(st["host"]) and bool(st["os"]),
      "blas %r, kernel %r, compiler %r, host, os" % (st["blas"], st["blas_kernel"], st["compiler"]))
check(re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", st["git_commit"]) is not None, "git_commit %r" % st["git_commit"])
check(st["argv"] == [W, "--config", cfgpath, "--out", run, "--threads", "1", "--job", job, "--events-fd", "3"],
      "argv is the command line")
steps = sorted(int(k) for k in s["losses"])
check(steps == list(range(1, 49)), "a step event for every step (log_every 1)")
L = s["losses"]
check(all(math.isfinite(v) for v in L.values()), "finite losses")
early, late = L["1"], sum(L[str(k)] for k in range(39, 49)) / 10
check(late < early - 1.0, "the loss falls (%.3f -> %.3f)" % (early, late))
ev = [json.loads(l) for l in open(os.path.join(os.path.dirname(sys.argv[1]), "ev"))]
se = [e for e in ev if e["ev"] == "step"]
check(all(e["tokens"] == 1024 * e["step"] for e in se), "step.tokens = 1024 x step")
check(abs(se[0]["lr"] - 3e-3 * 1024 / 4096) < 1e-15 and abs(se[4]["lr"] - 3e-3) < 1e-15,
      "warm-up: lr 7.5e-4 at step 1, the peak 3e-3 at step 5")
check(all(e["step_ms"] > 0 and e["tokens_per_s"] > 0 and e["grad_norm"] > 0 for e in se), "step timings, grad norms")
evals = s["evals"]
at = sorted({e["step"] for e in evals})
check(at == [16, 32, 48], "evaluations after steps 16, 32, 48 (every 16384 tokens) %r" % at)
byk = {(e["step"], e["metric"]): e for e in evals}
check(all(abs(byk[(k, "ppl")]["value"] - math.exp(byk[(k, "loss")]["value"])) < 1e-9 * byk[(k, "ppl")]["value"]
          for k in at), "ppl = exp(loss)")
check(all(e["suite"] == "val" and e["task"] == "val" and e["n"] == 2048 and e["stderr"] > 0 for e in evals),
      "suite val, 2048 tokens scored (eval.val_tokens), a standard error")
ck = s["ckpts"]
check([c["step"] for c in ck] == [8, 16, 24, 32, 40, 48], "a checkpoint every 8192 tokens and at the end")
kept = sorted(os.listdir(os.path.join(run, "ckpt")))
check(kept == ["step-00000040", "step-00000048"], "keep_checkpoints 2: %r" % kept)
check(sorted(os.listdir(ck[-1]["path"])) == ["MANIFEST.json", "model.safetensors", "optim.safetensors", "trainer.json"],
      "the last checkpoint's files")
end = s["end"]
check(end["step"] == 48 and end["tokens"] == 49152 and end["loss"] == L["48"] and end["val_loss"] == byk[(48, "loss")]["value"],
      "done: step, tokens, the last loss and validation loss")
check(end["elapsed_s"] > 0, "done.elapsed_s")
cj = json.load(open(os.path.join(run, "config.json")))
check(cj["model"]["d_model"] == 64 and cj["train"]["log_every"] == 1, "run/config.json holds the resolved config")
sys.exit(1 if fails else 0)
P
ok $? "start, layer, step, eval, ckpt and done carry the right values"
"$W" --describe --config "$tmp/run/config.json" | grep -q "\"id\": \"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/describe.json")\""
ok $? "run/config.json describes the same job"

# ---- heartbeats: a quiet run (few step events) still speaks every period
LOG_EVERY=1000 small_job "$tmp/quiet.yaml"
"$W" --config "$tmp/quiet.yaml" --out "$tmp/quiet" --threads 1 --heartbeat 0.05 >"$tmp/qev" 2>/dev/null
ok $? "a quiet run with --heartbeat 0.05 (events on stdout by default)"
events "$tmp/qev" --end done >"$tmp/qsum"
ok $? "its events follow the protocol"
python3 - "$tmp/qsum" "$tmp/qev" <<'P'
import json, sys
s = json.load(open(sys.argv[1]))
hb = s["heartbeats"]
assert len(hb) >= 5, "only %d heartbeats" % len(hb)
assert all(h["phase"] in ("setup", "train", "eval", "ckpt") for h in hb), hb
assert [h["step"] for h in hb] == sorted(h["step"] for h in hb), "heartbeat steps go backwards"
# a heartbeat means progress: its counter never goes back and moves over the run
pr = [h["progress"] for h in hb]
assert pr == sorted(pr), "heartbeat progress goes backwards: %r" % pr
assert pr[-1] > pr[0], "heartbeat progress never moves: %r" % pr
assert sorted(s["losses"]) == ["1", "48"], sorted(s["losses"])
t = [json.loads(l)["t"] for l in open(sys.argv[2])]
gap = max(b - a for a, b in zip(t, t[1:]))
assert gap < 1.0, "a silence of %.2f s" % gap
print("# %d heartbeats, longest silence %.3f s, phases %s" % (len(hb), gap, sorted({h["phase"] for h in hb})))
P
ok $? "heartbeats fill the silences (phase, step, a progress counter that moves) and no silence lasts"

# ---- suites besides val: alignment's per-layer statistics become layer events
text=$(echo $LICENSES | cut -d' ' -f1)
small_job "$tmp/align.yaml" "eval: {every_tokens: 16384, val_tokens: 2048, suites: [val, alignment], alignment: {text: $text, tokens: 256}}"
sed -i '/^eval: {every_tokens: 16384, val_tokens: 2048}$/d' "$tmp/align.yaml"
"$W" --config "$tmp/align.yaml" --out "$tmp/align" --threads 1 >"$tmp/aev" 2>/dev/null
ok $? "a run with eval.suites [val, alignment]"
events "$tmp/aev" --end done >"$tmp/asum"
ok $? "its events follow the protocol"
python3 - "$tmp/aev" <<'P'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
for step in (16, 32, 48):
    suites = {e["suite"] for e in ev if e["ev"] == "eval" and e["step"] == step}
    assert suites == {"val", "alignment"}, (step, suites)
    lay = [(e["layer"], e["name"]) for e in ev if e["ev"] == "layer" and e["step"] == step]
    assert sorted(lay) == [(0, "rho_block"), (0, "rho_mlp"), (1, "rho_block"), (1, "rho_mlp")], (step, lay)
print("# alignment at steps 16, 32, 48:", [round(e["value"], 3) for e in ev if e["ev"] == "layer" and e["step"] == 48])
P
ok $? "every evaluation reports val and alignment, with rho_mlp and rho_block per layer"

# ---- --eval: the suites on a saved checkpoint give what the run measured
"$W" --eval --checkpoint "$tmp/align" --suites alignment --threads 1 --job j2 >"$tmp/eev" 2>"$tmp/eerr"
ok $? "--eval --checkpoint RUN --suites alignment"
events "$tmp/eev" --mode eval --end done --job j2 >/dev/null
ok $? "its events: eval and layer events, then done"
python3 - "$tmp/aev" "$tmp/eev" <<'P'
import json, sys
run = [json.loads(l) for l in open(sys.argv[1])]
ev = [json.loads(l) for l in open(sys.argv[2])]
key = lambda e: (e["ev"], e.get("layer"), e["name"] if e["ev"] == "layer" else e["metric"])
want = {key(e): e["value"] for e in run if e["step"] == 48 and e["ev"] in ("eval", "layer") and (e["ev"] == "layer" or e["suite"] == "alignment")}
got = {key(e): e["value"] for e in ev if e["ev"] in ("eval", "layer")}
assert got == want, (got, want)
assert all(e["step"] == 48 and e["tokens"] == 49152 for e in ev if e["ev"] != "heartbeat"), "step/tokens of the checkpoint"
assert ev[-1]["loss"] is None and ev[-1]["val_loss"] is None
P
ok $? "the newest checkpoint (step 48) scores exactly what training reported at step 48"
# val: the job's validation split scored again on the checkpoint, as training scored it
"$W" --eval --checkpoint "$tmp/align" --suites val,alignment --threads 1 >"$tmp/vev" 2>"$tmp/verr"
ok $? "--eval --suites val,alignment"
python3 - "$tmp/aev" "$tmp/vev" <<'P'
import json, sys
run = [json.loads(l) for l in open(sys.argv[1])]
ev = [json.loads(l) for l in open(sys.argv[2])]
key = lambda e: (e["ev"], e.get("layer"), e["name"] if e["ev"] == "layer" else e["suite"] + "/" + e["metric"])
want = {key(e): e["value"] for e in run if e["step"] == 48 and e["ev"] in ("eval", "layer")}
got = {key(e): e["value"] for e in ev if e["ev"] in ("eval", "layer")}
assert got == want, (got, want)
assert ("eval", None, "val/ppl") in got, got
assert all(e["step"] == 48 and e["tokens"] == 49152 for e in ev if e["ev"] != "heartbeat"), "step/tokens of the checkpoint"
assert ev[-1]["ev"] == "done" and ev[-1]["val_loss"] == want[("eval", None, "val/loss")], ev[-1]
print("# val ppl at step 48: %.6g, again: %.6g" % (want[("eval", None, "val/ppl")], got[("eval", None, "val/ppl")]))
P
ok $? "val loss and ppl are the run's at step 48 exactly, and done carries the val loss"
# --config given: the events still carry the checkpoint's own step and tokens (docs/protocol.md)
"$W" --eval --checkpoint "$tmp/align/ckpt/step-00000040" --config "$tmp/align.yaml" --suites val --threads 1 >"$tmp/cev" 2>/dev/null
ok $? "--eval --checkpoint STEP --config FILE"
python3 - "$tmp/cev" <<'P'
import json, math, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
got = {e["metric"]: e["value"] for e in ev if e["ev"] == "eval"}
assert sorted(got) == ["loss", "ppl"] and all(math.isfinite(v) for v in got.values()), got
assert all(e["step"] == 40 and e["tokens"] == 40960 for e in ev if e["ev"] != "heartbeat"), [(e["ev"], e["step"]) for e in ev]
P
ok $? "...reports that checkpoint's own step 40 and its tokens, with its val numbers"

# ---- a user's OPENBLAS_CORETYPE slower than a kernel this CPU runs: said
# once on stderr and in the start event, with the measured rates
if grep -q '"blas": *"OpenBLAS' "$tmp/ev" && grep -q -w avx2 /proc/cpuinfo; then
    OPENBLAS_CORETYPE=Prescott "$W" --config "$tmp/job.yaml" --out "$tmp/slow" --threads 1 >"$tmp/sev" 2>"$tmp/serr"
    rc=$?
    python3 - "$tmp/sev" "$tmp/serr" <<'P'
import json, re, sys
st = [json.loads(l) for l in open(sys.argv[1]) if '"start"' in l][0]
err = open(sys.argv[2]).read()
adv = st.get("blas_advice")
assert st["blas_kernel"] == "Prescott", st["blas_kernel"]
assert adv and re.search(r"OPENBLAS_CORETYPE=Prescott: .* [0-9]+ GFLOP/s .* kernel at [0-9]+ \([0-9.]+x\); unset OPENBLAS_CORETYPE", adv), adv
assert err.count("warning: OPENBLAS_CORETYPE") == 1 and adv in err, err
P
    ok $((rc | $?)) "OPENBLAS_CORETYPE=Prescott: a warning with the measured rates, once on stderr and in start.blas_advice"
else
    echo "# not checked here: the kernel warning (not OpenBLAS, or no AVX2 kernel to compare with)"
fi
python3 -c 'import json,sys; st=[json.loads(l) for l in open(sys.argv[1]) if "\"start\"" in l][0]; sys.exit(0 if "blas_advice" in st and (st["blas_advice"] is None or "OPENBLAS_CORETYPE" in st["blas_advice"]) else 1)' "$tmp/ev"
ok $? "start.blas_advice: null, or a sentence naming OPENBLAS_CORETYPE"

# ---- --events-file: the same events, appended to a file (tlmd's slurm executor reads it)
echo '{"ev":"earlier"}' >"$tmp/efile"
"$W" --config "$tmp/job.yaml" --out "$tmp/run-ef" --threads 1 --job "$job" --events-file "$tmp/efile" \
    >"$tmp/ef-stdout" 2>/dev/null
ok $? "train with --events-file"
tail -n +2 "$tmp/efile" >"$tmp/ef-ev"
python3 - "$tmp/ev" "$tmp/ef-ev" "$tmp/efile" <<'P'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert open(sys.argv[3]).readline() == '{"ev":"earlier"}\n', "the file's earlier content was not kept"
pick = lambda ev: [(e["ev"], e.get("step"), e.get("loss")) for e in ev if e["ev"] in ("step", "ckpt", "done")]
assert pick(a) == pick(b), "the events differ from those on --events-fd"
assert b[-1]["ev"] == "done", b[-1]
P
ok $? "--events-file appends the events that --events-fd carries (same steps, losses, checkpoints, done)"
ok $([ ! -s "$tmp/ef-stdout" ]; echo $?) "nothing on stdout with --events-file"
"$W" --config "$tmp/job.yaml" --out "$tmp/run-ef2" --events-file "$tmp/ef2" --events-fd 3 3>/dev/null 2>"$tmp/ef-err"
rc=$?
ok $([ $rc = 2 ] && grep -q 'give one' "$tmp/ef-err"; echo $?) "--events-file with --events-fd is refused (exit $rc)"

# ---- train.grad_norms_every: per-layer gradient norms that add up to the step's
small_job "$tmp/gn.yaml" "train: grad_norms_every: 16"
"$W" --config "$tmp/gn.yaml" --out "$tmp/gn" --threads 1 >"$tmp/gnev" 2>/dev/null
ok $? "a run with train.grad_norms_every 16"
events "$tmp/gnev" --end done >/dev/null
ok $? "its events follow the protocol"
python3 - "$tmp/gnev" "$tmp/ev" <<'P'
import json, math, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
steps = {e["step"]: e for e in ev if e["ev"] == "step"}
gn = {}
for e in ev:
    if e["ev"] == "layer" and e["name"].startswith("grad_norm"):
        gn.setdefault(e["step"], {})[(e["layer"], e["name"])] = e["value"]
assert sorted(gn) == [1, 16, 32, 48], sorted(gn)  # step 1, every 16th, the last
for s, g in gn.items():
    want = {(l, n) for l in (0, 1) for n in ("grad_norm_attn", "grad_norm_mlp", "grad_norm")} | {(0, "grad_norm_embed"), (1, "grad_norm_head")}
    assert set(g) == want, (s, sorted(g))
    for l in (0, 1):
        assert g[(l, "grad_norm_attn")] > 0 and g[(l, "grad_norm_mlp")] > 0, (s, g)
        assert g[(l, "grad_norm")] ** 2 >= g[(l, "grad_norm_attn")] ** 2 + g[(l, "grad_norm_mlp")] ** 2 - 1e-12, (s, g)
    total = math.sqrt(g[(0, "grad_norm")] ** 2 + g[(1, "grad_norm")] ** 2 + g[(0, "grad_norm_embed")] ** 2 + g[(1, "grad_norm_head")] ** 2)
    assert abs(total - steps[s]["grad_norm"]) <= 1e-5 * steps[s]["grad_norm"], (s, total, steps[s]["grad_norm"])
# an execution setting: the same losses as the run without it
base = {e["step"]: e["loss"] for e in map(json.loads, open(sys.argv[2])) if e["ev"] == "step"}
assert all(steps[s]["loss"] == base[s] for s in steps), "grad_norms_every changed the training"
print("# step 16: layer norms", [round(gn[16][(l, "grad_norm")], 4) for l in (0, 1)], "embed", round(gn[16][(0, "grad_norm_embed")], 4), "head", round(gn[16][(1, "grad_norm_head")], 4), "total", round(steps[16]["grad_norm"], 4))
P
ok $? "per-layer gradient norms at steps 1, 16, 32, 48 whose squares add up to the step's grad_norm, training unchanged"

# ---- --help documents the flags
"$W" --help >"$tmp/help"
rc=$?
for flag in --config --out --resume --threads --device --events-fd --events-file --job --heartbeat --die-with-parent --describe; do
    grep -q -- "$flag" "$tmp/help" || rc=1
done
ok $rc "--help lists every flag"
finish
