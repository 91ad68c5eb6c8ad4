# 70-corrupt.sh: corrupt inputs are detected, never trained on
# (docs/data.md "What training checks", docs/protocol.md "Run folder"):
# shards with flipped bytes, truncated or with wrong header fields; dataset
# manifests that disagree with their shards; checkpoints whose safetensors,
# trainer.json or MANIFEST.json are corrupt, truncated or edited; evaluation
# files that are broken.  Sourced by trial.sh.

need_run
TOOLS="python3 $here/trial/tools.py"

# ---- one shard file (no manifest): refused in set-up, exit 3, no step trained
# sh ID WHAT PATTERN EDITS...: a copy s.tlmtok of the train shard edited by
# tools.py shard EDITS (or by the shell code $PREP) is data.train
sh_case() {
    local id=$1 what=$2 pat=$3
    shift 3
    selected "$id" || return 0
    in_case "$id"
    cp "$SHARD" s.tlmtok
    [ $# -gt 0 ] && $TOOLS shard s.tlmtok "$@"
    [ -n "${PREP:-}" ] && eval "$PREP"
    DATA="train: $PWD/s.tlmtok, val: $FX/ds/val" job j.yaml
    AFTER='! grep -q "\"ev\":\"st\(art\|ep\)\"" "$OUT/$id.out"' AFTER_MSG="training started on the corrupt shard" \
        tc "$id" "$what" 3 "$pat" "$W" --config j.yaml --out r --threads 1
}
PREP='printf "\001\002" | dd of=s.tlmtok bs=1 seek=5000 conv=notrunc 2>/dev/null' \
    sh_case issue.shard-flip "two flipped payload bytes" "s\.tlmtok: the token payload's SHA-256 is [0-9a-f]+(\.\.\.)?, the header says [0-9a-f]+(\.\.\.)? \(corrupt shard"
PREP='printf "\377" | dd of=s.tlmtok bs=1 seek=$(($(wc -c <s.tlmtok) - 1)) conv=notrunc 2>/dev/null' \
    sh_case shard.flip-last "the last payload byte flipped" "s\.tlmtok: the token payload's SHA-256 is"
sh_case issue.shard-zero-hash "a payload hash of zeros" "s\.tlmtok: the header's payload SHA-256 is all zeros" payload_sha=zero
PREP='truncate -s -100 s.tlmtok' sh_case shard.truncated "100 bytes cut off the end" "s\.tlmtok: .*(bytes|size|n_tokens)"
PREP='truncate -s 100 s.tlmtok' sh_case shard.short "a file of 100 bytes (shorter than the header)" "s\.tlmtok: .*(192|header|bytes|short)"
PREP=': >s.tlmtok' sh_case shard.empty "an empty shard file" "s\.tlmtok: .*(empty|192|header|bytes)"
sh_case shard.magic "a wrong magic" "s\.tlmtok: .*(magic|not a (TLM )?shard|TLMSHARD)" magic=NOTSHARD
sh_case shard.version "version 2" "s\.tlmtok: .*version 2" version=2
sh_case shard.header-bytes "header_bytes 100" "s\.tlmtok: .*header.*100" header_bytes=100
sh_case shard.width-3 "token_bytes 3" "s\.tlmtok: .*(token width|token_bytes).*3" token_bytes=3
sh_case shard.vocab-0 "vocab 0" "s\.tlmtok: .*vocab.*0" vocab=0
sh_case shard.vocab-wide "vocab 70000 with 2-byte tokens" "s\.tlmtok: .*(70000|vocab)" vocab=70000
sh_case shard.ntokens-huge "n_tokens 2^63 (overflows n x width)" "s\.tlmtok: .*(n_tokens|tokens|size)" n_tokens=9223372036854775808
sh_case shard.ntokens-wrap "n_tokens (2^64 - 192)/2, whose size wraps to the file's" "s\.tlmtok: .*(n_tokens|tokens|size|overflow)" n_tokens=9223372036854775712
sh_case shard.name-ctrl "a tokenizer name with a control byte" "s\.tlmtok: .*(tokenizer name|printable)" $'name=by\x01tes'
sh_case shard.reserved "reserved bytes not zero" "s\.tlmtok: .*reserved" reserved=7
sh_case shard.token-range "a token above the vocabulary (hash recomputed)" "s\.tlmtok: .*token.*(300|vocab)" token:100=300 --rehash
sh_case shard.vocab-model "a shard vocabulary of 512 for model.vocab 256" "s\.tlmtok.*vocabulary 512 is larger than model\.vocab 256" vocab=512
sh_case shard.tokenizer-name "a shard made with bpe300 for a bytes job" "s\.tlmtok.*tokenized with 'bpe300' but the config's tokenizer is 'bytes'" name=bpe300
selected shard.rehashed && { in_case shard.rehashed; cp "$SHARD" s.tlmtok; $TOOLS shard s.tlmtok token:100=65 --rehash
    DATA="train: $PWD/s.tlmtok, val: $FX/ds/val" job j.yaml
    tc shard.rehashed "an edited token with its hash recomputed, no manifest (consistent: trains)" 0 '"ev":"done"' "$W" --config j.yaml --out r --threads 1; }

# ---- a dataset folder: its shards against manifest.json
# ds_case ID WHAT PATTERN [SHELL]: a copy ds of the dataset, changed by SHELL, trains (3 expected)
ds_case() {
    selected "$1" || return 0
    in_case "$1"
    cp -a "$FX/ds" ds
    eval "${4:-:}"
    DATA="train: $PWD/ds/train, val: $PWD/ds/val" job j.yaml
    AFTER='! grep -q "\"ev\":\"st\(art\|ep\)\"" "$OUT/$id.out"' AFTER_MSG="training started on the inconsistent dataset" \
        tc "$1" "$2" 3 "$3" "$W" --config j.yaml --out r --threads 1
}
ds_case manifest.rehashed "an edited token with its header hash recomputed (the manifest still has the old)" \
    "000000\.tlmtok.*(manifest|sha256|SHA-256)" "$TOOLS shard ds/train/000000.tlmtok token:100=65 --rehash"
ds_case manifest.extra-shard "an extra shard in train/" "extra\.tlmtok.*(manifest|not listed|extra)" "cp ds/train/000000.tlmtok ds/train/extra.tlmtok"
ds_case manifest.missing-shard "the manifest lists a shard that is not there" "000001\.tlmtok.*(missing|not found|No such file|manifest)" \
    "$TOOLS dataset-manifest ds train add-shard=train/000001.tlmtok"
ds_case manifest.count "the manifest's token count differs from the header's" "(tokens|count).*(274|manifest)" \
    "$TOOLS dataset-manifest ds train shards.0.tokens=1000"
ds_case manifest.sum "the split's tokens differ from the sum of its shards" "manifest\.json.*(tokens|add up|sum)" \
    "$TOOLS dataset-manifest ds train tokens=5"
ds_case manifest.hash "the manifest's shard hash differs from the header's" "000000\.tlmtok.*(sha256|SHA-256|hash)" \
    "$TOOLS dataset-manifest ds train shards.0.sha256=$(printf 'ab%.0s' $(seq 32))"
ds_case manifest.zero-hash "a shard hash of zeros in the manifest" "manifest\.json.*(zero|sha256|hash)" \
    "$TOOLS dataset-manifest ds train shards.0.sha256=$(printf '00%.0s' $(seq 32))"
ds_case manifest.escape "a shard path that leaves the split folder (../../x)" "manifest\.json: \"splits\.train\.shards\[0\]\.file\" must be \"train/<name>\.tlmtok\" \(a shard in the split's folder\)" \
    "$TOOLS dataset-manifest ds train shards.0.file=../../etc/passwd"
ds_case manifest.negative "a negative token count" "manifest\.json.*(negative|tokens)" \
    "$TOOLS dataset-manifest ds train shards.0.tokens=-5"
ds_case manifest.tokenizer "the manifest names another tokenizer than the shards" "(tokenizer|manifest).*(bpe300|bytes)" \
    "$TOOLS dataset-manifest ds train tokenizer.name=bpe300"
ds_case manifest.syntax "a manifest.json that is not JSON" "manifest\.json.*(JSON|invalid|parse)" "echo '{\"format\": \"tlm-dataset\", ' >ds/manifest.json"
ds_case manifest.empty "an empty manifest.json" "manifest\.json.*(empty|JSON|invalid)" ": >ds/manifest.json"
ds_case manifest.fifo "manifest.json is a FIFO" "manifest\.json: is not a regular file \(a FIFO\)" "rm ds/manifest.json; mkfifo ds/manifest.json"
ds_case manifest.dir "manifest.json is a folder" "manifest\.json: is a directory" "rm ds/manifest.json; mkdir ds/manifest.json"
selected manifest.foreign && { in_case manifest.foreign; cp -a "$FX/ds" ds; echo '{"format": "something-else", "rows": 3}' >ds/manifest.json
    DATA="train: $PWD/ds/train, val: $PWD/ds/val" job j.yaml
    tc manifest.foreign "a manifest.json of another program (left alone: trains)" 0 '"ev":"done"' "$W" --config j.yaml --out r --threads 1; }

# ---- checkpoints: a copy r of the finished run (step-8 and step-16), resumed
S16=r/ckpt/step-00000016
S8=r/ckpt/step-00000008
# ck_case ID WHAT STATUS PATTERN SHELL [CHECK]: SHELL corrupts the copy, then --resume; CHECK must hold
ck_case() {
    selected "$1" || return 0
    in_case "$1"
    cp -a "$FX/run" r
    eval "$5"
    AFTER="${6:-true}" AFTER_MSG="${7:-}" tc "$1" "$2" "$3" "$4" "$W" --config "$FX/job.yaml" --out r --threads 1 --resume
}
# the resumed run started at step 8 and ended with the losses of the uninterrupted one
FROM8='grep -q "\"resumed_from_step\":8" "$OUT/$id.out" && [ "$(grep "\"ev\":\"done\"" "$OUT/$id.out" | sed "s/.*\"loss\":\([^,]*\).*/\1/")" = "$(grep "\"ev\":\"done\"" "$FX/run.ev" | sed "s/.*\"loss\":\([^,]*\).*/\1/")" ]'
FROM8_MSG="did not resume from step 8 with the uninterrupted run's losses"
ck_case ckpt.flip-model "a flipped byte in the newest model.safetensors" 0 "step-00000016 is not usable, skipping it: .*SHA-256" \
    'printf X | dd of=$S16/model.safetensors bs=1 seek=3000 conv=notrunc 2>/dev/null' "$FROM8" "$FROM8_MSG"
ck_case ckpt.truncate-optim "the newest optim.safetensors cut to 1000 bytes" 0 "step-00000016 is not usable.*optim\.safetensors: 1000 bytes" \
    'truncate -s 1000 $S16/optim.safetensors' "$FROM8" "$FROM8_MSG"
ck_case ckpt.no-manifest "the newest checkpoint without MANIFEST.json" 0 "step-00000016 is not usable.*MANIFEST" \
    'rm $S16/MANIFEST.json' "$FROM8" "$FROM8_MSG"
ck_case ckpt.manifest-junk "a MANIFEST.json that is not JSON" 0 "step-00000016 is not usable.*MANIFEST" \
    'echo "{ not json" >$S16/MANIFEST.json' "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-missing "the newest trainer.json removed" 0 "step-00000016 is not usable.*trainer\.json" \
    'rm $S16/trainer.json' "$FROM8" "$FROM8_MSG"
ck_case ckpt.model-fifo "the newest model.safetensors is a FIFO" 0 "step-00000016 is not usable.*model\.safetensors.*(FIFO|regular)" \
    'rm $S16/model.safetensors; mkfifo $S16/model.safetensors' "$FROM8" "$FROM8_MSG"
ck_case ckpt.step-file "ckpt/step-00000024 is a file" 0 "step-00000024.*(not usable|not a directory|skipping)" \
    'echo junk >r/ckpt/step-00000024' '[ "$(cat r/ckpt/step-00000024)" = junk ]' "the user's file step-00000024 was removed"
ck_case ckpt.tmp-leftover "a leftover .tmp-step-00000024 of a crashed write" 0 '"ev":"done"' \
    'cp -a $S16 r/ckpt/.tmp-step-00000024' '! grep -q "\"resumed_from_step\":24" "$OUT/$id.out"' "the unfinished write was resumed from"
ck_case ckpt.all-corrupt "both checkpoints corrupt: trained from scratch to the same losses" 0 "step-00000008 is not usable, skipping it" \
    'truncate -s 1000 $S16/model.safetensors $S8/model.safetensors' \
    '[ "$(grep "\"ev\":\"done\"" "$OUT/$id.out" | sed "s/.*\"loss\":\([^,]*\).*/\1/")" = "$(grep "\"ev\":\"done\"" "$FX/run.ev" | sed "s/.*\"loss\":\([^,]*\).*/\1/")" ]' \
    "the fresh run does not end with the uninterrupted run's loss"
# trainer.json edited with MANIFEST.json recomputed (the hash is right, the
# state is a lie): refused (3) naming the file and what is wrong, or skipped
# for step 8 (0); either way both checkpoints are kept
TJ=$S16/trainer.json
FROM8=$'if [ $rc = 0 ]; then '"$FROM8"$'; else [ -d $S16 ] && [ -d $S8 ]; fi'
FROM8_MSG="did not resume from step 8 with the uninterrupted run's losses, or lost a checkpoint"
ck_case ckpt.trainer-step "trainer.json step 12 (tokens no longer step x batch)" 0\|3 "model\.safetensors: tlm_step 16, but trainer\.json says step 12" \
    "sed -i 's/\"step\": 16/\"step\": 12/' $TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-frac "trainer.json step 16.5" 0\|3 "trainer\.json: \"step\" is missing or not an integer" \
    "sed -i 's/\"step\": 16/\"step\": 16.5/' $TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-neg "trainer.json step -16" 0\|3 "trainer\.json: [^\"]*step" \
    "sed -i 's/\"step\": 16/\"step\": -16/' $TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-huge "trainer.json step 2^63 and tokens to match (overflow)" 0\|3 "tlm_step 16, but trainer\.json says step 9223372036854775807" \
    "sed -i 's/\"step\": 16/\"step\": 9223372036854775807/; s/\"tokens\": 16384/\"tokens\": 9223372036854775807/' $TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-cursor "trainer.json cursor 513 (not step x sequences)" 0\|3 "step-00000016: step 16, tokens 16384 and cursor 513 do not fit" \
    "sed -i 's/\"cursor\": 512/\"cursor\": 513/' $TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-dup "trainer.json with step given twice" 0\|3 "trainer\.json:[0-9]+:[0-9]+: duplicate object key near .\"step" \
    "sed -i 's/\"step\": 16,/\"step\": 16, \"step\": 16,/' $TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-hex "trainer.json config_id in upper case" 0\|3 "trainer\.json: \"config_id\" is missing or not a SHA-256" \
    "sed -i 's/\"config_id\": \"\([0-9a-f]*\)\"/\"config_id\": \"\U\1\"/' $TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-junk "trainer.json that is not JSON (hash recomputed)" 0\|3 "trainer\.json:[0-9]+:[0-9]+: " \
    "echo '{' >$TJ; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.trainer-config "trainer.json of another config (hash recomputed)" 2 "written for config .*refusing" \
    "sed -i 's/\"config_id\": \"[0-9a-f]*\"/\"config_id\": \"$(printf 'ab%.0s' $(seq 32))\"/' $TJ; $TOOLS manifest $S16" \
    '[ -d $S16 ] && [ -d $S8 ]' "checkpoints were lost"
ck_case ckpt.trainer-data "trainer.json of other data (hash recomputed)" 3 "(data_id|other data|trained on)" \
    "sed -i 's/\"data_id\": \"[0-9a-f]*\"/\"data_id\": \"$(printf 'cd%.0s' $(seq 32))\"/' $TJ; $TOOLS manifest $S16" \
    '[ -d $S16 ] && [ -d $S8 ]' "checkpoints were lost"
# safetensors edited with MANIFEST.json recomputed
M16=$S16/model.safetensors
ck_case ckpt.st-shape-huge "a tensor of shape [2^40, 2^40] (the size guard)" 0\|3 "(step-00000016 is not usable|step-00000016).*model\.safetensors: tensor 'model\.norm\.weight' has more than 2\^40 elements" \
    "$TOOLS st $M16 'shape:model.norm.weight=[1099511627776,1099511627776]'; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.st-hdrlen "a header length of 2^63" 0\|3 "model\.safetensors: header length 9223372036854775808 does not fit the file" \
    "$TOOLS st $M16 hdrlen=9223372036854775808; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.st-junk "a header that is not JSON" 0\|3 "model\.safetensors: header is not valid JSON" \
    "$TOOLS st $M16 junk; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.st-dtype "a tensor stored as F16 (its shape and bytes consistent)" 0\|3 "tensor model\.norm\.weight is F16 \(128\), the model.s is F32 \(64\)" \
    "$TOOLS st $M16 dtype:model.norm.weight=F16 'shape:model.norm.weight=[128]'; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.st-overlap "two tensors' data overlapping" 0\|3 "model\.safetensors: tensors 'model\.embed_tokens\.weight' and 'model\.layers\.0\.input_layernorm\.weight' overlap" \
    "$TOOLS st $M16 'offsets:model.layers.0.input_layernorm.weight=[0,256]'; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.st-beyond "a tensor's data past the end of the file" 0\|3 "tensor 'model\.norm\.weight' ends at byte 999999999 past the data" \
    "$TOOLS st $M16 'offsets:model.norm.weight=[397000,999999999]'; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.st-missing "a tensor missing" 0\|3 "model\.safetensors: [^\"]*model\.norm\.weight" \
    "$TOOLS st $M16 drop:model.norm.weight; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case ckpt.st-shape "a tensor of another shape (the same bytes)" 0\|3 "tensor model\.layers\.0\.mlp\.up_proj\.weight is F32 \(64, 128\), the model.s is F32 \(128, 64\)" \
    "$TOOLS st $M16 'shape:model.layers.0.mlp.up_proj.weight=[64,128]'; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
# issue 26: a tensor holding NaN or inf (its manifest agrees: weights that had
# gone bad when it was written) is refused by name and skipped for step 8;
# the reader says which field of a tensor's entry is wrong
NAN16="python3 -c 'import json, struct, sys
p = sys.argv[1]; raw = bytearray(open(p, \"rb\").read()); n = struct.unpack(\"<Q\", raw[:8])[0]
o = 8 + n + json.loads(raw[8:8 + n])[sys.argv[2]][\"data_offsets\"][0]
raw[o:o + 4] = struct.pack(\"<f\", float(sys.argv[3])); open(p, \"wb\").write(raw)' "
FROM8=$'grep -q "\\"resumed_from_step\\":8" "$OUT/$id.out" && [ "$(grep "\\"ev\\":\\"done\\"" "$OUT/$id.out" | sed "s/.*\\"loss\\":\\([^,]*\\).*/\\1/")" = "$(grep "\\"ev\\":\\"done\\"" "$FX/run.ev" | sed "s/.*\\"loss\\":\\([^,]*\\).*/\\1/")" ]'
FROM8_MSG="did not resume from step 8 with the uninterrupted run's losses"
ck_case issue26.ckpt-nan "a NaN in the newest checkpoint's model.norm.weight (manifest recomputed)" 0 \
    "step-00000016 is not usable, skipping it: .*model\.safetensors: tensor model\.norm\.weight holds 1 value\(s\) that are not finite \(element 0 is nan\)" \
    "$NAN16 $M16 model.norm.weight nan; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case issue26.ckpt-inf-optim "an inf in the newest checkpoint's AdamW state (manifest recomputed)" 0 \
    "step-00000016 is not usable, skipping it: .*optim\.safetensors: tensor model\.norm\.weight\.exp_avg_sq holds 1 value\(s\) that are not finite \(element 0 is inf\)" \
    "$NAN16 $S16/optim.safetensors model.norm.weight.exp_avg_sq inf; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case issue26.st-dims "a tensor of 9 dimensions (dtype, shape and offsets all there)" 0\|3 \
    "model\.safetensors: tensor 'model\.norm\.weight' has 9 dimensions; this reader takes at most 8" \
    "$TOOLS st $M16 'shape:model.norm.weight=[1,1,1,1,1,1,1,1,64]'; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"
ck_case issue26.st-offsets-reversed "a tensor's data_offsets that end before they begin" 0\|3 \
    "model\.safetensors: tensor 'model\.norm\.weight': data_offsets \[[0-9]+, 0\] end before they begin" \
    "$TOOLS st $M16 'offsets:model.norm.weight=[256,0]'; $TOOLS manifest $S16" "$FROM8" "$FROM8_MSG"

# --eval of one corrupt step folder: refused (3) naming the file
ev_case() {
    selected "$1" || return 0
    in_case "$1"
    cp -a "$FX/run" r
    eval "$4"
    tc "$1" "$2" 3 "$3" "$W" --eval --checkpoint "$S16" --config "$FX/eval.yaml" --suites alignment --threads 1
}
EVAL=", suites: [val, alignment], alignment: {text: $FX/corpus/GPL-2, tokens: 256}" job "$FX/eval.yaml"
ev_case ckpt.eval-flip "--eval of a step folder with a flipped byte" "model\.safetensors.*SHA-256" 'printf X | dd of=$M16 bs=1 seek=3000 conv=notrunc 2>/dev/null'
ev_case issue.safetensors-wrap "--eval of a tensor of shape [2^40, 2^40]" "model\.safetensors: tensor 'model\.norm\.weight' has more than 2\^40 elements" \
    "$TOOLS st $M16 'shape:model.norm.weight=[1099511627776,1099511627776]'; $TOOLS manifest $S16"
ev_case ckpt.eval-no-manifest "--eval of a step folder without MANIFEST.json" "MANIFEST" 'rm $S16/MANIFEST.json'
ev_case issue26.eval-nan "--eval of a step folder holding NaN (manifest recomputed)" "tensor model\.norm\.weight holds 1 value\(s\) that are not finite \(element 0 is nan\): not a usable checkpoint" \
    "$NAN16 $M16 model.norm.weight nan; $TOOLS manifest $S16"

# ---- evaluation files: checked in set-up, before any step (exit 3)
# ef ID WHAT PATTERN EVAL-KEYS [SHELL]: a job with these eval keys fails in set-up
ef() {
    selected "$1" || return 0
    in_case "$1"
    eval "${5:-:}"
    EVAL=", $4" job j.yaml
    AFTER='! grep -q "\"ev\":\"st\(art\|ep\)\"" "$OUT/$id.out"' AFTER_MSG="training started before the evaluation file was checked" \
        TO=15 tc "$1" "$2" 3 "$3" "$W" --config j.yaml --out r --threads 1
}
ef eval.wikitext-missing "eval.wikitext that does not exist" "eval\.wikitext: .*nowiki\.raw" "suites: [val, wikitext], wikitext: $tmp/none/nowiki.raw"
ef eval.wikitext-empty "an empty WikiText file" "w\.raw: no WikiText document \(no \" = Title = \" heading line\)" "suites: [val, wikitext], wikitext: $tmp/c/eval.wikitext-empty/w.raw" ": >w.raw"
ef eval.wikitext-dir "eval.wikitext of a folder" "w\.raw: is a directory" "suites: [val, wikitext], wikitext: $tmp/c/eval.wikitext-dir/w.raw" "mkdir w.raw"
ef issue.eval-lambada-setup "a LAMBADA line that is not an object" "l\.jsonl:2: .*(object|JSON)" "suites: [val, lambada], lambada: $tmp/c/issue.eval-lambada-setup/l.jsonl" \
    "printf '{\"text\": \"a b c\"}\n[1, 2]\n' >l.jsonl"
ef eval.lambada-nofield "a LAMBADA record without text" 'l\.jsonl:1: .*"?text"?' "suites: [val, lambada], lambada: $tmp/c/eval.lambada-nofield/l.jsonl" \
    "printf '{\"body\": \"a b c\"}\n' >l.jsonl"
ef eval.lambada-oneword "a LAMBADA passage of one word (no context)" 'l\.jsonl:1: .*(word|context|target)' "suites: [val, lambada], lambada: $tmp/c/eval.lambada-oneword/l.jsonl" \
    "printf '{\"text\": \"alone\"}\n' >l.jsonl"
ef eval.lambada-empty "an empty LAMBADA file" "l\.jsonl.*(empty|no item|no record)" "suites: [val, lambada], lambada: $tmp/c/eval.lambada-empty/l.jsonl" ": >l.jsonl"
ef eval.lambada-fifo "a FIFO as the LAMBADA file" "l\.jsonl: is not a regular file \(a FIFO\)" "suites: [val, lambada], lambada: $tmp/c/eval.lambada-fifo/l.jsonl" "mkfifo l.jsonl"
ef eval.cs-missing "eval.commonsense of a folder that does not exist" "eval\.commonsense.*nocs" "suites: [val, commonsense], commonsense: $tmp/none/nocs"
ef eval.cs-task-missing "a commonsense folder without piqa.jsonl" "piqa\.jsonl.*(No such file|missing|not found)" \
    "suites: [val, commonsense], commonsense: $tmp/c/eval.cs-task-missing/cs, commonsense_tasks: [piqa]" "mkdir cs"
ef eval.cs-bad-json "a piqa line that is not JSON" "piqa\.jsonl:2(:[0-9]+)?: .*JSON" \
    "suites: [val, commonsense], commonsense: $tmp/c/eval.cs-bad-json/cs, commonsense_tasks: [piqa]" \
    "mkdir cs; printf '{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\", \"label\": 0}\n{oops\n' >cs/piqa.jsonl"
ef eval.cs-label "a piqa label of 7" "piqa\.jsonl:1: .*label.*7" \
    "suites: [val, commonsense], commonsense: $tmp/c/eval.cs-label/cs, commonsense_tasks: [piqa]" \
    "mkdir cs; printf '{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\", \"label\": 7}\n' >cs/piqa.jsonl"
ef eval.cs-labels-count "piqa-labels.lst with fewer labels than items" "piqa-labels\.lst.*(lines|labels|items)" \
    "suites: [val, commonsense], commonsense: $tmp/c/eval.cs-labels-count/cs, commonsense_tasks: [piqa]" \
    "mkdir cs; printf '{\"goal\": \"g\", \"sol1\": \"a\", \"sol2\": \"b\"}\n{\"goal\": \"h\", \"sol1\": \"a\", \"sol2\": \"b\"}\n' >cs/piqa.jsonl; echo 1 >cs/piqa-labels.lst"
ef eval.cs-boolq-type "a boolq answer that is a string" "boolq\.jsonl:1: .*answer" \
    "suites: [val, commonsense], commonsense: $tmp/c/eval.cs-boolq-type/cs, commonsense_tasks: [boolq]" \
    "mkdir cs; printf '{\"question\": \"q\", \"passage\": \"p\", \"answer\": \"yes\"}\n' >cs/boolq.jsonl"
ef eval.align-empty "an empty alignment text" "eval\.alignment\.text.*(empty|tokens|no text)" \
    "suites: [val, alignment], alignment: {text: $tmp/c/eval.align-empty/t.txt}" ": >t.txt"
ef eval.align-ids-junk "alignment ids with a word among them" "eval\.alignment\.ids.*(abc|not a token id|integer)" \
    "suites: [val, alignment], alignment: {ids: '1 2 abc 3', tokens: 3}"
ef eval.align-ids-range "an alignment id above model.vocab" "eval\.alignment\.ids.*(99999|vocab)" \
    "suites: [val, alignment], alignment: {ids: '1 2 99999 3', tokens: 3}"
selected eval.align-short && { in_case eval.align-short; echo 'a few words' >t.txt
    EVAL=", suites: [val, alignment], alignment: {text: $PWD/t.txt, tokens: 100000}" job j.yaml
    tc eval.align-short "an alignment text shorter than eval.alignment.tokens (handled: a warning)" 0 \
        "alignment: only 12 tokens available \(eval\.alignment\.tokens asks for 100000\)" "$W" --config j.yaml --out r --threads 1; }
ef eval.niah-haystack-missing "an eval.niah.haystack that does not exist" "eval\.niah\.haystack.*nohay" "suites: [val, niah], niah: {tasks: [s_niah_2], lengths: [32], haystack: $tmp/none/nohay.txt}"
selected eval.niah-haystack && { in_case eval.niah-haystack; EVAL=", suites: [val, niah], niah: {tasks: [s_niah_2], lengths: [32]}" job j.yaml
    tc eval.niah-haystack "s_niah_2 without a haystack file (a config error)" 2 "s_niah_2: eval\.niah\.haystack: no file given" "$W" --config j.yaml --out r --threads 1; }
selected eval.niah-length && { in_case eval.niah-length; EVAL=", suites: [val, niah], niah: {tasks: [s_niah_1], lengths: [8]}" job j.yaml
    tc eval.niah-length "an S-NIAH length of 8 tokens" 2 "j\.yaml:4:[0-9]+: eval\.niah\.lengths: 8 is out of range \(expected a number from 16 to 2\^24\)" "$W" --config j.yaml --out r --threads 1; }
