#!/bin/sh
# test_llama2_train.sh: `tokenizer: llama2` from text to a trained model,
# without the network: a made-up Llama 2-shaped SentencePiece vocabulary
# (32,000 pieces: <unk> <s> </s>, the 256 byte pieces, then characters,
# pairs and triples of letters with and without the space marker), found by
# name through TLM_TOKENIZERS; tlm-data build writes llama2 shards, the
# manifest and the vocabulary file into the dataset, the same with
# --threads 3; encode/decode go
# through the dataset; a tiny model (vocab 32000 from the name) trains
# through tlmd and the real tlm-worker into results.db; shards of another
# tokenizer are refused for a llama2 job.  The real vocabulary is checked
# by test_tokconf_llama2.sh.
. "$TLM_SRCDIR/tests/tlmd/lib.sh"
D="$TLM_BUILDDIR/dataprep/tlm-data"

mkdir tok
awk 'BEGIN {
    m = "\342\226\201"
    print "tlm-sentencepiece 1"; print "pieces 32000"; print "add_dummy_prefix 1"; print "byte_fallback 1"
    print "unknown\t0\t<unk>"; print "control\t0\t<s>"; print "control\t0\t</s>"
    for (b = 0; b < 256; b++) printf "byte\t0\t<0x%02X>\n", b
    chars = "etaoinshrdlucmfwypvbgkjqxzETAOINSHRDLUCMFWYPVBGKJQXZ0123456789.,;:!?()-\047\"/"
    n = 259; s = 0
    printf "normal\t%d\t%s\n", --s, m; n++
    for (i = 1; i <= length(chars); i++) { printf "normal\t%d\t%s\n", --s, substr(chars, i, 1); n++ }
    for (i = 1; i <= 26 && n < 32000; i++) { printf "normal\t%d\t%s%s\n", --s, m, substr(chars, i, 1); n++ }
    for (i = 1; i <= 26; i++) for (j = 1; j <= 26 && n < 32000; j++) {
        printf "normal\t%d\t%s%s\n", --s, substr(chars, i, 1), substr(chars, j, 1); n++
        printf "normal\t%d\t%s%s%s\n", --s, m, substr(chars, i, 1), substr(chars, j, 1); n++
    }
    for (i = 1; i <= 26; i++) for (j = 1; j <= 26; j++) for (k = 1; k <= 26 && n < 32000; k++) {
        printf "normal\t%d\t%s%s%s\n", --s, substr(chars, i, 1), substr(chars, j, 1), substr(chars, k, 1); n++
        if (n < 32000) { printf "normal\t%d\t%s%s%s%s\n", --s, m, substr(chars, i, 1), substr(chars, j, 1), substr(chars, k, 1); n++ }
    }
}' >tok/llama2.vocab
ok $([ "$(grep -c '' tok/llama2.vocab)" = 32004 ] && echo 0 || echo 1) "a made-up llama2.vocab of 32000 pieces"

# shellcheck disable=SC2086
TLM_TOKENIZERS=$tmp/tok "$D" build --tokenizer llama2 --out ds --val-fraction 0.2 --segment-bytes 4k $LICENSES \
    >build.out 2>&1
ok $? "tlm-data build --tokenizer llama2 (found through TLM_TOKENIZERS): $(tail -n 1 build.out)"
grep -q '"name": "llama2"' ds/manifest.json && grep -q '"kind": "sentencepiece"' ds/manifest.json &&
    grep -q '"vocab": 32000' ds/manifest.json && grep -q '"file": "llama2.vocab"' ds/manifest.json &&
    grep -q '"eot": 2' ds/manifest.json && grep -q '"document_separator": "</s>"' ds/manifest.json &&
    cmp -s tok/llama2.vocab ds/llama2.vocab
ok $? "the manifest names llama2 (sentencepiece, 32000 ids, </s> = 2 between documents) and the dataset holds llama2.vocab"
ok $([ -n "$(ls ds/train/*.tlmtok 2>/dev/null)" ] && [ -n "$(ls ds/val/*.tlmtok 2>/dev/null)" ] && echo 0 || echo 1) \
    "train and val shards"

# shellcheck disable=SC2086
TLM_TOKENIZERS=$tmp/tok "$D" build --tokenizer llama2 --threads 3 --out ds3 --val-fraction 0.2 --segment-bytes 4k \
    $LICENSES >build3.out 2>&1 && sed 's|ds3|ds|g' ds3/manifest.json | cmp -s - ds/manifest.json && diff -r -x manifest.json ds ds3
ok $? "--threads 3 writes the same dataset, shard for shard"

printf 'the program is free software\n\tcaf\303\251' >one.txt
ids=$("$D" encode --tokenizer llama2 --data ds/train <one.txt)
echo "$ids" | "$D" decode --tokenizer llama2 --data ds >back.txt
ok $(cmp -s one.txt back.txt && echo 0 || echo 1) "encode/decode through the dataset give the text back ($ids)"

cat >l2.yaml <<Y
name: l2
base:
  model: {d_model: 32, layers: 2, heads: 2, d_ff: 64}
  tokenizer: llama2
  data: {train: $tmp/ds/train, val: $tmp/ds/val}
  eval: {every_tokens: 4096, val_tokens: 1024}
  train: {tokens: 8192, seq_len: 32, batch_tokens: 512, micro_batch: 8, lr: 3e-3, warmup_tokens: 1024, log_every: 1}
seeds: [0]
Y
"$T" --sweeps l2.yaml --threads-per-worker 1 >run.out 2>&1
ok $? "tlmd trains the llama2 job ($(tail -n 1 run.out))"
ok $([ "$(q "select count(*) from results where status = 'done'")" = 1 ] && echo 0 || echo 1) "its result is done"
steps=$(q "select count(*) from steps")
first=$(q "select printf('%.3f', loss) from steps order by step limit 1")
ok $([ "$steps" = 16 ] && awk -v l="$first" 'BEGIN { exit !(l > 9.5 && l < 11.5) }' && echo 0 || echo 1) \
    "16 steps logged, the first loss near ln 32000 = 10.37 ($first)"

# shards made with another tokenizer are refused for a llama2 job
"$MK" bytes.tlmtok /usr/share/common-licenses/GPL-3 >/dev/null
sed "s|data: {train: $tmp/ds/train, val: $tmp/ds/val}|data: {train: $tmp/bytes.tlmtok}|; s/name: l2/name: l2b/" l2.yaml >l2b.yaml
"$T" --sweeps l2b.yaml --threads-per-worker 1 --db bad.db --runs badruns >bad.out 2>&1
msg=$(cat bad.out)
echo "$msg" | grep -q "shard was tokenized with 'bytes' but the config's tokenizer is 'llama2'"
ok $? "bytes shards for a llama2 job: refused, naming both tokenizers"
finish
