#!/bin/sh
# test_errors.sh: tlm-worker's failures end with one `error` event of
# the right kind, a clear message and the exit status of docs/protocol.md:
# missing data, a tokenizer or vocabulary mismatch, a corrupt shard, a FIFO
# as data (3, at once), an unwritable run
# folder (6), a bad config or usage (2), divergence to NaN (4, quickly), a
# checkpoint of another config (2); and a corrupt newest checkpoint (a
# hash that differs, or a tensor that holds NaN) is
# skipped for the previous one with a log line.
. "$TLM_SRCDIR/tests/lib/train_common.sh"

# expect NAME STATUS KIND PATTERN [worker args...]: run, check the status,
# that the events end with error KIND and that the message matches PATTERN
expect() {
    name=$1 want=$2 kind=$3 pat=$4
    shift 4
    "$W" "$@" >"$tmp/$name.ev" 2>"$tmp/$name.err"
    rc=$?
    python3 - "$EVCHECK" "$tmp/$name.ev" "$kind" "$pat" <<'P'
import json, re, subprocess, sys
evcheck, path, kind, pat = sys.argv[1:5]
out = subprocess.run([sys.executable, evcheck, path, "--end", "error"], capture_output=True, text=True)
if out.returncode:
    sys.exit(out.stderr)
e = json.loads(out.stdout)["end"]
if e["kind"] != kind:
    sys.exit("kind %r, expected %r: %s" % (e["kind"], kind, e["message"]))
if not re.search(pat, e["message"]):
    sys.exit("message %r does not match %r" % (e["message"], pat))
print("# " + e["message"])
P
    ok $((rc == want ? $? : 1)) "$name: exit $want (got $rc), error kind $kind"
}
small_job "$tmp/job.yaml"

# ---- data
DATA=$tmp/no/such/shards small_job "$tmp/nodata.yaml"
expect missing-data 3 data "data.train: .*/no/such/shards" --config "$tmp/nodata.yaml" --out "$tmp/r1"

"$MK" --tokenizer bpe4096 --vocab 4096 "$tmp/bpe.tlmtok" /usr/share/common-licenses/GPL-3
DATA=$tmp/bpe.tlmtok small_job "$tmp/bpe.yaml"
expect tokenizer 3 data "tokenized with 'bpe4096' but the config's tokenizer is 'bytes'" \
    --config "$tmp/bpe.yaml" --out "$tmp/r2"

"$MK" --vocab 512 "$tmp/wide.tlmtok" /usr/share/common-licenses/GPL-3
DATA=$tmp/wide.tlmtok small_job "$tmp/wide.yaml"
expect vocab 3 data "vocabulary 512 is larger than model.vocab 256" --config "$tmp/wide.yaml" --out "$tmp/r3"

# ---- the dataset's rank file must be the one its shards were made with
# (the headers hold its definition hash): edited or replaced, it is refused
# before the first step (an evaluation would encode text with it)
D="$TLM_BUILDDIR/dataprep/tlm-data"
if "$D" build --tokenizer bpe300 --train-bpe --out "$tmp/bpeds" \
    /usr/share/common-licenses/GPL-3 >"$tmp/bpeds.out" 2>&1; then
    DATA="$tmp/bpeds/train" small_job "$tmp/bpe300.yaml"
    sed -i 's/^tokenizer: bytes$/tokenizer: bpe300/; s/vocab: 256}/vocab: 300}/' "$tmp/bpe300.yaml"
    "$W" --config "$tmp/bpe300.yaml" --out "$tmp/rbpe" --threads 1 >"$tmp/bpeok.ev" 2>"$tmp/bpeok.err"
    ok $? "a bpe300 dataset with its own rank file trains: $(tail -1 "$tmp/bpeok.err")"
    cp "$tmp/bpeds/bpe300.tiktoken" "$tmp/bpe300.orig"
    sed -i '270d' "$tmp/bpeds/bpe300.tiktoken"
    expect tok-edited 3 data "bpe300.tiktoken: ranks must be 0..297, each once; missing rank 269" \
        --config "$tmp/bpe300.yaml" --out "$tmp/rbpe2"
    "$D" train-bpe --vocab 300 --out "$tmp/bpeds/bpe300.tiktoken" /usr/share/common-licenses/GPL-2 >/dev/null 2>&1
    expect tok-swapped 3 data "shards were made with a different 'bpe300' tokenizer \\(definition SHA-256 [0-9a-f]{16}\\.\\.\\., vocab 300\\) than .*bpe300.tiktoken.*retrained or replaced" \
        --config "$tmp/bpe300.yaml" --out "$tmp/rbpe3"
    ok $(grep -q '"ev":"st\(art\|ep\)"' "$tmp/tok-swapped.ev"; echo $((1 - $?))) "...before the start event and any step"
else
    ok 1 "tlm-data build of a bpe300 dataset: $(tail -1 "$tmp/bpeds.out")"
fi

# ---- corrupt shards are refused before the first step: flipped payload
# bytes (the header's SHA-256 no longer matches) and an all-zero hash
cp "$tmp/text.tlmtok" "$tmp/flip.tlmtok"
printf '\001\002' | dd of="$tmp/flip.tlmtok" bs=1 seek=5000 conv=notrunc 2>/dev/null
DATA=$tmp/flip.tlmtok small_job "$tmp/flip.yaml"
expect corrupt-payload 3 data "flip.tlmtok: the token payload's SHA-256 is .*, the header says" \
    --config "$tmp/flip.yaml" --out "$tmp/r9"
ok $(grep -q '"ev":"step"' "$tmp/corrupt-payload.ev"; echo $((1 - $?))) "...and not one step was trained"
cp "$tmp/text.tlmtok" "$tmp/zero.tlmtok"
dd if=/dev/zero of="$tmp/zero.tlmtok" bs=1 seek=128 count=32 conv=notrunc 2>/dev/null
DATA=$tmp/zero.tlmtok small_job "$tmp/zero.yaml"
expect zero-hash 3 data "zero.tlmtok: the header's payload SHA-256 is all zeros" --config "$tmp/zero.yaml" \
    --out "$tmp/r10"

# ---- inputs that are not regular files fail at once instead of blocking:
# a FIFO as data.train, a folder as the config
mkfifo "$tmp/fifo.tlmtok"
DATA=$tmp/fifo.tlmtok small_job "$tmp/fifo.yaml"
t0=$(date +%s)
expect fifo-data 3 data "fifo.tlmtok: is not a regular file \\(a FIFO\\)" --config "$tmp/fifo.yaml" --out "$tmp/r11"
t1=$(date +%s)
ok $(($t1 - $t0 < 20 ? 0 : 1)) "...without blocking ($(($t1 - $t0)) s)"

# ---- run folder
: >"$tmp/a-file"
expect out-not-a-folder 6 io "a-file" --config "$tmp/job.yaml" --out "$tmp/a-file/run"
if [ "$(id -u)" != 0 ]; then
    mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
    expect out-read-only 6 io "not writable|cannot create" --config "$tmp/job.yaml" --out "$tmp/ro/run"
    chmod 755 "$tmp/ro"
else
    echo "# (running as root: a read-only folder is writable, that case is not tested)"
fi

# ---- an evaluation suite without its input fails before training starts
small_job "$tmp/wiki.yaml" "eval: {suites: [val, wikitext], wikitext: $tmp/no/wiki.test.raw}"
sed -i '/^eval: {every_tokens: 16384, val_tokens: 2048}$/d' "$tmp/wiki.yaml"
expect eval-input 3 data "eval.wikitext: .*no/wiki.test.raw" --config "$tmp/wiki.yaml" --out "$tmp/r8"
ok $(grep -q '"ev":"start"' "$tmp/eval-input.ev"; echo $((1 - $?))) "...before the start event"
# a corrupt evaluation file (its 3rd line) fails in set-up too, not at the
# first evaluation after training time was spent
printf '{"text": "the first line"}\n{"text": "a second line"}\n{"text": ["not", "text"]}\n' >"$tmp/lambada.jsonl"
small_job "$tmp/lam.yaml" "eval: {suites: [val, lambada], lambada: $tmp/lambada.jsonl}"
sed -i '/^eval: {every_tokens: 16384, val_tokens: 2048}$/d' "$tmp/lam.yaml"
expect eval-corrupt 3 data "lambada.jsonl:3: field \"text\" must be a string" --config "$tmp/lam.yaml" --out "$tmp/r13"
ok $(grep -q '"ev":"st\(art\|ep\)"' "$tmp/eval-corrupt.ev"; echo $((1 - $?))) "...before the start event and any step"

# an empty alignment text: refused in set-up, not averaged over nothing after training
: >"$tmp/empty.txt"
small_job "$tmp/alempty.yaml" "eval: {suites: [val, alignment], alignment: {text: $tmp/empty.txt}}"
sed -i '/^eval: {every_tokens: 16384, val_tokens: 2048}$/d' "$tmp/alempty.yaml"
expect eval-align-empty 3 data "eval.alignment.text: .*empty.txt: no tokens \\(the file is empty" \
    --config "$tmp/alempty.yaml" --out "$tmp/r14"
ok $(grep -q '"ev":"st\(art\|ep\)"' "$tmp/eval-align-empty.ev"; echo $((1 - $?))) "...before the start event and any step"

# ---- out of memory (a 1.6B-parameter model under a 2 GB address space):
# said with what the model needs and what the machine has, and what to do
printf 'model: {d_model: 2048, layers: 24, heads: 16, d_ff: 8192, vocab: 256}\ndata: {train: %s}\ntrain: {tokens: 8192, seq_len: 32, batch_tokens: 1024, micro_batch: 8, warmup_tokens: 1024}\n' \
    "$tmp/text.tlmtok" >"$tmp/big.yaml"
if (ulimit -v 2000000 && "$W" --help >/dev/null 2>&1); then
    (ulimit -v 2000000 && "$W" --config "$tmp/big.yaml" --out "$tmp/rbig" --threads 1 >"$tmp/big.ev" 2>"$tmp/big.err")
    rc=$?
    ok $([ $rc = 5 ] && grep -q '"kind":"oom"' "$tmp/big.ev" &&
        grep -q "the model needs about 2[0-9.]* GiB on the CPU (tlm-worker --describe: cpu_memory), [0-9.]* GiB is available (MemAvailable)" "$tmp/big.err" &&
        echo 0 || echo 1) "out of memory: the need beside what is available (exit $rc: $(tail -1 "$tmp/big.err"))"
else
    ok 0 "# SKIP out of memory under ulimit -v (this build cannot start in 2 GB of address space: a sanitizer build)"
fi

# ---- config and usage
printf 'scale: 1m\ntrain: {lrr: 1}\n' >"$tmp/bad.yaml"
expect bad-config 2 config "bad.yaml:2:9: unknown key 'lrr'" --config "$tmp/bad.yaml" --out "$tmp/r4"
# bf16 storage needs a GPU: the CPU backend stores fp32 only
sed 's/^train: {/train: {precision: bf16, /' "$tmp/job.yaml" >"$tmp/bf16.yaml"
grep -q 'precision: bf16' "$tmp/bf16.yaml" || echo "bf16.yaml: no train mapping to add the key to" >&2
expect bf16-cpu 2 config "train.precision: bf16 needs a CUDA device .*the CPU backend stores fp32 only" --config "$tmp/bf16.yaml" --out "$tmp/r4b" --device cpu
# a GPU: refused by a CPU-only build, or (CUDA build) not there: no GPU on
# this machine, or not that many
expect device 2 config "CPU only|no GPU|no such GPU|no NVIDIA driver or GPU found" --config "$tmp/job.yaml" --out "$tmp/r5" --device cuda:1023
expect device-name 2 config "--device gpu0: expected cpu or cuda:K" --config "$tmp/job.yaml" --out "$tmp/r5b" --device gpu0
# a CUDA build on a machine without an NVIDIA driver (the runtime then says
# "driver version is insufficient"): said as no driver or GPU, with the way
# to train on the CPU
if grep -q '^#define TLM_HAVE_CUDA 1' "$TLM_BUILDDIR/config.h" && [ ! -e /proc/driver/nvidia/version ]; then
    expect nodriver 2 config "--device cuda:0: no NVIDIA driver or GPU found on this machine .*; train on the CPU instead: tlm-worker --device cpu" \
        --config "$tmp/job.yaml" --out "$tmp/r5c" --device cuda:0
else
    ok 0 "# SKIP --device cuda:0 without a driver (a build without CUDA, or a machine with an NVIDIA driver)"
fi
"$W" --config "$tmp/job.yaml" --out "$tmp/r6" --bogus >/dev/null 2>&1
ok $(($? == 2 ? 0 : 1)) "unknown option: exit 2"
"$W" --config "$tmp/job.yaml" --out "$tmp/r6" --events-fd 9 >/dev/null 2>"$tmp/fd.err"
rc=$?
grep -q "events-fd 9" "$tmp/fd.err"
ok $((rc == 2 ? $? : 1)) "--events-fd of a closed descriptor: exit 2"
"$W" --config "$tmp/job.yaml" >/dev/null 2>&1
ok $(($? == 2 ? 0 : 1)) "no --out: exit 2"
# usage PATTERN DESCRIPTION ARGS...: exit 2 with PATTERN on stderr, no event
usage() {
    pat=$1 what=$2
    shift 2
    "$W" "$@" >"$tmp/u.ev" 2>"$tmp/u.err"
    rc=$?
    ok $([ $rc = 2 ] && grep -q -- "$pat" "$tmp/u.err" && [ ! -s "$tmp/u.ev" ] && echo 0 || echo 1) \
        "$what: exit $rc: $(head -c 300 "$tmp/u.err" | tr '\n' ' ')"
}
usage "--config is given twice" "--config twice" --config "$tmp/job.yaml" --config "$tmp/bad.yaml" --describe
usage "--out does nothing with --describe" "--describe with --out" --describe --config "$tmp/job.yaml" --out "$tmp/r9"
usage "--resume does nothing with --describe" "--describe with --resume" --describe --config "$tmp/job.yaml" --resume
usage "--config does nothing with --config-keys" "--config-keys with --config" --config-keys --config "$tmp/job.yaml"
usage "--device does nothing with --eval" "--eval with --device" --eval --checkpoint "$tmp" --device cpu
mkdir "$tmp/cfgdir"
usage "--config $tmp/cfgdir: is a directory (expected a job config file" "--config a folder" \
    --config "$tmp/cfgdir" --out "$tmp/r9"
usage "--threads 1.5: not an integer (expected an integer from 0 to 4096)" "--threads 1.5" \
    --config "$tmp/job.yaml" --out "$tmp/r9" --threads 1.5
usage "--threads 99999999999999999999: out of range (expected an integer from 0 to 4096)" "a huge --threads" \
    --config "$tmp/job.yaml" --out "$tmp/r9" --threads 99999999999999999999
usage "--heartbeat inf: not a number" "--heartbeat inf" --config "$tmp/job.yaml" --out "$tmp/r9" --heartbeat inf
usage "--events-fd 0: read-only, not open for writing" "--events-fd of a descriptor open for reading only" \
    --config "$tmp/job.yaml" --out "$tmp/r9" --events-fd 0 </dev/null
expect suites-empty 2 config "--suites: '' is empty \\(expected a comma-separated list of suites: val, wikitext, lambada" \
    --eval --checkpoint "$tmp" --config "$tmp/job.yaml" --suites ''
# --eval --checkpoint of what is not a checkpoint folder: data (3), by name
"$W" --eval --checkpoint "$tmp/none/run" >/dev/null 2>"$tmp/u.err"
ok $([ $? = 3 ] && grep -q -- "--checkpoint: $tmp/none/run: No such file or directory" "$tmp/u.err" && echo 0 || echo 1) \
    "--eval --checkpoint of a missing folder: $(cat "$tmp/u.err")"

# ---- a long --out (about 1,200 bytes, each part below NAME_MAX): the
# checkpoints land in it whole; a --out with no room for them is refused
long=$tmp
for part in 1 2 3 4 5; do long=$long/$(printf "o%.0s" $(seq 240))$part; done
text=/usr/share/common-licenses/GPL-3
small_job "$tmp/longjob.yaml" "eval: {every_tokens: 16384, val_tokens: 2048, suites: [val, alignment], alignment: {text: $text, tokens: 256}}"
sed -i '/^eval: {every_tokens: 16384, val_tokens: 2048}$/d' "$tmp/longjob.yaml"
"$W" --config "$tmp/longjob.yaml" --out "$long" --threads 1 >"$tmp/long.ev" 2>"$tmp/long.err"
rc=$?
ok $([ $rc = 0 ] && [ -f "$long/ckpt/step-00000048/model.safetensors" ] && [ -f "$long/config.json" ] &&
    grep -q '"ev":"done"' "$tmp/long.ev" && echo 0 || echo 1) "a ${#long}-byte --out: trained to the end (exit $rc), checkpoints inside it"
[ $rc = 0 ] || sed 's/^/# /' "$tmp/long.err" | tail -3
"$W" --eval --checkpoint "$long" --suites alignment --threads 1 >"$tmp/longeval.ev" 2>"$tmp/longeval.err"
rc=$?
ok $([ $rc = 0 ] && grep -q '"ev":"done"' "$tmp/longeval.ev" && echo 0 || echo 1) \
    "--eval --checkpoint of that run folder finds its newest checkpoint (exit $rc)"
[ $rc = 0 ] || sed 's/^/# /' "$tmp/longeval.err" | tail -3
mkfifo "$tmp/ck.fifo"
timeout 20 "$W" --eval --checkpoint "$tmp/ck.fifo" --config "$tmp/longjob.yaml" --suites alignment >/dev/null 2>"$tmp/u.err"
ok $([ $? = 3 ] && grep -q "ck.fifo: is not a directory (expected a checkpoint folder" "$tmp/u.err" && echo 0 || echo 1) \
    "--eval --checkpoint of a FIFO: $(cat "$tmp/u.err")"
"$W" --eval --checkpoint "$tmp/job.yaml" --config "$tmp/longjob.yaml" --suites alignment >/dev/null 2>"$tmp/u.err"
ok $([ $? = 3 ] && grep -q "job.yaml: is not a directory" "$tmp/u.err" && echo 0 || echo 1) \
    "--eval --checkpoint of a file: $(cat "$tmp/u.err")"
# a step folder whose MANIFEST.json (written last) is gone is an interrupted save, not a checkpoint
cp -r "$long/ckpt/step-00000048" "$tmp/step-00000048"
rm "$tmp/step-00000048/MANIFEST.json"
"$W" --eval --checkpoint "$tmp/step-00000048" --suites alignment --threads 1 >/dev/null 2>"$tmp/nomani.err"
ok $([ $? = 3 ] && grep -q "step-00000048: no MANIFEST.json beside its trainer.json: an incomplete checkpoint" \
    "$tmp/nomani.err" && echo 0 || echo 1) "--eval of a step folder without MANIFEST.json: $(tail -1 "$tmp/nomani.err")"
toolong=$long
while [ ${#toolong} -lt 3900 ]; do toolong=$toolong/$(printf "o%.0s" $(seq 200)); done
usage "--out: the path is ${#toolong} bytes, longer than the 3839 TLM allows here" "a ${#toolong}-byte --out" \
    --config "$tmp/job.yaml" --out "$toolong"
ok $([ ! -e "$toolong" ] && echo 0 || echo 1) "...and nothing is created"
rm -rf "$tmp/$(printf "o%.0s" $(seq 240))1"

# ---- divergence: lr x weight_decay = 100 makes the decoupled decay blow
# the weights up geometrically; the first non-finite value must stop the run
LR=10 small_job "$tmp/div.yaml" "train: weight_decay: 10, grad_clip: 0"
t0=$(date +%s)
expect diverged 4 diverged "diverged at step [0-9]+: the (loss|gradient norm) is (nan|inf|-inf)" \
    --config "$tmp/div.yaml" --out "$tmp/r7" --threads 1
t1=$(date +%s)
ok $(($t1 - $t0 < 30 ? 0 : 1)) "divergence is reported quickly ($(($t1 - $t0)) s)"
python3 - "$tmp/diverged.ev" <<'P'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
steps = [e for e in ev if e["ev"] == "step"]
assert ev[-1]["ev"] == "error" and ev[-1]["step"] == steps[-1]["step"], (ev[-1], steps[-1])
assert ev[-1]["step"] < 48, "ran to the end"
P
ok $? "the error comes right after the last finite step, long before the end"

# ---- checkpoints: another config is refused; a corrupt one is skipped
"$W" --config "$tmp/job.yaml" --out "$tmp/run" --threads 1 >"$tmp/run.ev" 2>/dev/null
ok $? "a complete run to work on"
SEED=4 small_job "$tmp/seed4.yaml"
expect other-config 2 config "written for config .*refusing" --config "$tmp/seed4.yaml" --out "$tmp/run" --resume
expect no-resume 2 config "already holds checkpoints.*--resume" --config "$tmp/job.yaml" --out "$tmp/run"

ls "$tmp/run/ckpt" | tr '\n' ' ' | sed 's/^/# checkpoints: /'
echo
f="$tmp/run/ckpt/step-00000048/model.safetensors"
size=$(wc -c <"$f")
printf 'X' | dd of="$f" bs=1 seek=$((size - 17)) conv=notrunc 2>/dev/null
"$W" --config "$tmp/job.yaml" --out "$tmp/run" --threads 1 --resume >"$tmp/fallback.ev" 2>"$tmp/fallback.err"
rc=$?
grep -q "step-00000048 is not usable, skipping it: .*SHA-256" "$tmp/fallback.err"
ok $((rc == 0 ? $? : 1)) "a corrupt newest checkpoint: skipped with a log line (status $rc)"
python3 - "$tmp/run.ev" "$tmp/fallback.ev" <<'P'
import json, sys
ref = {e["step"]: e["loss"] for e in map(json.loads, open(sys.argv[1])) if e["ev"] == "step"}
ev = [json.loads(l) for l in open(sys.argv[2])]
assert ev[0]["ev"] == "start" and ev[0]["resumed_from_step"] == 40, ev[0]
got = {e["step"]: e["loss"] for e in ev if e["ev"] == "step"}
assert sorted(got) == list(range(41, 49)), sorted(got)
assert all(ref[k] == v for k, v in got.items()), "losses differ"
P
ok $? "...and the run continued from step 40 to the same losses"
truncate -s 1000 "$tmp/run/ckpt/step-00000048/optim.safetensors"
"$W" --config "$tmp/job.yaml" --out "$tmp/run" --threads 1 --resume >"$tmp/trunc.ev" 2>"$tmp/trunc.err"
rc=$?
grep -q "step-00000048 is not usable.*optim.safetensors: 1000 bytes" "$tmp/trunc.err"
ok $((rc == 0 ? $? : 1)) "a truncated checkpoint is detected and skipped too"

# a NaN in a tensor of a checkpoint whose manifest agrees (weights that had
# gone bad when it was written): refused naming the tensor, and skipped as
# a corrupt one is; --eval refuses it too
python3 - "$tmp/run/ckpt/step-00000048" <<'P'
import hashlib, json, struct, sys
d = sys.argv[1]
path = d + "/model.safetensors"
raw = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
begin = head["model.norm.weight"]["data_offsets"][0]
raw[8 + n + begin:8 + n + begin + 4] = struct.pack("<f", float("nan"))
open(path, "wb").write(raw)
man = json.load(open(d + "/MANIFEST.json"))
man["files"]["model.safetensors"] = {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
json.dump(man, open(d + "/MANIFEST.json", "w"))
P
"$W" --eval --checkpoint "$tmp/run/ckpt/step-00000048" --suites alignment >"$tmp/evnan.ev" 2>"$tmp/evnan.err"
rc=$?
ok $([ $rc = 3 ] && grep -q "tensor model.norm.weight holds 1 value(s) that are not finite (element 0 is nan)" "$tmp/evnan.err" &&
    echo 0 || echo 1) "--eval of a checkpoint holding NaN: refused, naming the tensor (exit $rc: $(tail -1 "$tmp/evnan.err"))"
"$W" --config "$tmp/job.yaml" --out "$tmp/run" --threads 1 --resume >"$tmp/nanck.ev" 2>"$tmp/nanck.err"
rc=$?
grep -q "step-00000048 is not usable, skipping it: .*tensor model.norm.weight holds 1 value(s) that are not finite" "$tmp/nanck.err"
ok $((rc == 0 ? $? : 1)) "a checkpoint holding NaN: skipped, the tensor named (status $rc: $(grep -m1 'not usable' "$tmp/nanck.err"))"
python3 - "$tmp/run.ev" "$tmp/nanck.ev" <<'P'
import json, sys
ref = {e["step"]: e["loss"] for e in map(json.loads, open(sys.argv[1])) if e["ev"] == "step"}
ev = [json.loads(l) for l in open(sys.argv[2])]
assert ev[0]["ev"] == "start" and ev[0]["resumed_from_step"] == 40, ev[0]
got = {e["step"]: e["loss"] for e in ev if e["ev"] == "step"}
assert all(ref[k] == v for k, v in got.items()), "losses differ"
assert ev[-1]["ev"] == "done", ev[-1]
P
ok $? "...the run resumed from step 40, to the same losses, and is done"
finish
