# 10-config.sh: job configs (docs/config.md), read by `tlm-worker --describe
# --config c.yaml`: syntax errors, wrong types, out-of-range numbers, unknown
# keys, duplicate and overlapping keys, YAML tags and aliases, empty, huge,
# binary, BOM and non-UTF-8 files, deep nesting.  A refused config exits 2
# with file:line:col, the key and what was expected.  Sourced by trial.sh.

# base: a config complete without a preset, except train.tokens
CB='model: {d_model: 64, layers: 2, heads: 2, d_ff: 128, vocab: 256}'
CBT="$CB
train.tokens: 16384"

# cfg ID WHAT PATTERN TEXT: c.yaml holds TEXT; --describe must exit 2 saying PATTERN
cfg() {
    selected "$1" || return 0
    in_case "$1"
    printf '%s\n' "$4" >c.yaml
    tc "$1" "$2" 2 "$3" "$W" --describe --config c.yaml
}
# cfg_same ID WHAT TEXT REFTEXT: TEXT must be read (exit 0) as the same job as REFTEXT
cfg_same() {
    selected "$1" || return 0
    in_case "$1"
    printf '%s\n' "$3" >c.yaml
    printf '%s\n' "$4" >ref.yaml
    "$W" --describe --config ref.yaml >ref.json 2>&1
    AFTER='[ "$(grep -m1 "\"id\"" "$OUT/$id.out")" = "$(grep -m1 "\"id\"" ref.json)" ]' \
        AFTER_MSG="read as another job than $(printf '%s' "$4" | oneline 80)" \
        tc "$1" "$2" 0 '"id": "[0-9a-f]{64}"' "$W" --describe --config c.yaml
}
# cfg_val ID WHAT TEXT JSONKEY VALUE: TEXT is accepted and --describe shows "JSONKEY": VALUE
cfg_val() {
    selected "$1" || return 0
    in_case "$1"
    printf '%s\n' "$3" >c.yaml
    AFTER="grep -q -F '\"$4\": $5' \"\$OUT/\$id.out\"" AFTER_MSG="--describe does not show \"$4\": $5" \
        tc "$1" "$2" 0 '"id": "[0-9a-f]{64}"' "$W" --describe --config c.yaml
}

# ---- unknown keys, with suggestions
cfg cfg.unknown-top "an unknown top-level key (sede)" "c\.yaml:3:1: unknown key 'sede'.*did you mean 'seed'" "$CBT
sede: 1"
cfg cfg.unknown-nested "an unknown key in a section (train: {lrr})" "c\.yaml:2:24: unknown key 'lrr' in train; did you mean 'lr'" "$CB
train: {tokens: 16384, lrr: 1}"
cfg cfg.unknown-dotted "an unknown dotted key (train.lrr)" "c\.yaml:3:1: unknown key .*lrr.*did you mean 'lr'" "$CBT
train.lrr: 1"
cfg cfg.unknown-section "an unknown section (trian)" "c\.yaml:3:1: unknown key 'trian'.*did you mean 'train'" "$CBT
trian: {lr: 1}"
cfg cfg.unknown-deep "an unknown key three levels down (eval.niah.lenghts)" "c\.yaml:3:[0-9]+: unknown key 'lenghts'.*did you mean 'lengths'" "$CBT
eval: {suites: [val, niah], niah: {lenghts: [32]}}"
cfg cfg.key-lookalike "a key spelt with a Cyrillic letter (ѕeed)" "c\.yaml:3:1: unknown key 'ѕeed'; did you mean 'seed'" "$CBT
ѕeed: 1"
cfg cfg.key-trailing-space "a quoted key with a trailing space ('seed ')" "c\.yaml:3:1: unknown key 'seed '; did you mean 'seed'" "$CBT
\"seed \": 1"
cfg cfg.key-empty "an empty key" "c\.yaml:3:1: unknown key ''.*expected one of" "$CBT
\"\": 1"
cfg cfg.key-int "an integer as a key" "c\.yaml:3:1: unknown key '1'.*expected one of" "$CBT
1: 2"
cfg cfg.key-null "null as a key" "c\.yaml:3:1: unknown key '~'.*expected one of" "$CBT
~: 1"
cfg cfg.key-complex "a list as a key (? [a])" "c\.yaml:3:[0-9]+: a mapping key must be a plain name, not a list" "$CBT
? [a]
: 1"

# ---- wrong types
cfg cfg.type-seed-list "seed: [1]" "c\.yaml:3:7: seed: expected an integer, got a list" "$CBT
seed: [1]"
cfg cfg.type-seed-map "seed: {a: 1}" "c\.yaml:3:7: seed: expected an integer, got a mapping" "$CBT
seed: {a: 1}"
cfg cfg.type-seed-bool "seed: true" "c\.yaml:3:7: seed: expected an integer, got 'true'" "$CBT
seed: true"
cfg cfg.type-seed-null "seed: ~" "c\.yaml:3:7: seed: expected an integer, got null" "$CBT
seed: ~"
cfg cfg.type-seed-empty "seed: (no value)" "c\.yaml:3:[0-9]+: seed: expected an integer, got null" "$CBT
seed:"
cfg cfg.type-seed-hex "seed: 0x10 (hex is not a TLM number)" "c\.yaml:3:7: seed: expected an integer, got '0x10'" "$CBT
seed: 0x10"
cfg cfg.type-seed-underscore "seed: 1_000" "c\.yaml:3:7: seed: expected an integer, got '1_000'" "$CBT
seed: 1_000"
cfg issue.quoted-number "seed: \"0\" (a quoted number)" 'c\.yaml:3:7: seed: expected an integer, got the quoted string "0" \(quotes make a string' "$CBT
seed: \"0\""
cfg cfg.type-seed-True "seed: True" "c\.yaml:3:7: seed: expected an integer, got 'True'" "$CBT
seed: True"
cfg cfg.type-tied-yes "model.tied: yes (not a boolean here)" "c\.yaml:3:13: model.tied: expected true or false, got 'yes'" "$CBT
model.tied: yes"
cfg cfg.type-tied-quoted "model.tied: \"true\"" 'c\.yaml:3:13: model.tied: expected true or false, got the quoted string "true"' "$CBT
model.tied: \"true\""
cfg cfg.type-lr-quoted "train.lr: \"3e-3\"" 'c\.yaml:3:11: train.lr: expected a number, got the quoted string "3e-3"' "$CBT
train.lr: \"3e-3\""
cfg cfg.type-lr-nan "train.lr: nan" "c\.yaml:3:11: train.lr: expected a number, got 'nan'" "$CBT
train.lr: nan"
cfg cfg.type-lr-inf "train.lr: .inf" "c\.yaml:3:11: train.lr: expected a number, got '.inf'" "$CBT
train.lr: .inf"
cfg cfg.type-lr-neginf "train.lr: -.inf" "c\.yaml:3:11: train.lr: expected a number, got '-.inf'" "$CBT
train.lr: -.inf"
cfg cfg.type-tokens-frac "train.tokens: 1000.5" "c\.yaml:2:15: train.tokens: expected an integer, got '1000.5'" "$CB
train.tokens: 1000.5"
cfg cfg.type-suites-string "eval.suites: val (not a list)" "c\.yaml:3:14: eval.suites: expected a list" "$CBT
eval.suites: val"
cfg cfg.type-ratio-string "taper.ratio: \"1.5,0.5\"" "c\.yaml:3:[0-9]+: taper.ratio: expected .*(list|pair)" "$CBT
taper: {schedule: cosine, ratio: \"1.5,0.5\"}"
cfg cfg.type-ratio-one "taper.ratio: [1.5] (not a pair)" "c\.yaml:3:[0-9]+: taper.ratio: .*(two|pair|\[start, end\])" "$CBT
taper: {schedule: cosine, ratio: [1.5]}"
cfg cfg.type-section-scalar "train: 5 beside train.lr (a value with keys under it)" "c\.yaml:3:1: 'train' is set to a number at c\.yaml:2:1, and 'train.lr' under it at c\.yaml:3:1 \(keep one\)" "$CB
train: 5
train.lr: 1e-3"
cfg cfg.type-data-list "data.train: [a, b] (a list for a path)" "c\.yaml:3:[0-9]+: data.train: expected (a string|text)" "$CBT
data.train: [a, b]"
cfg cfg.type-scale-int "scale: 1 (a number for a preset name)" "c\.yaml:1:8: scale: .*(unknown preset '1'|expected)" "scale: 1"
cfg cfg.type-arch-list "arch: [transformer]" "c\.yaml:3:7: arch: expected one of transformer .*got a list" "$CBT
arch: [transformer]"

# ---- numbers out of range: the range is named, however far out
cfg issue.range-int64 "seed: 9223372036854775807" "c\.yaml:3:7: seed: 9223372036854775807 is out of range \(expected an integer from 0 to 2\^32-1\)" "$CBT
seed: 9223372036854775807"
cfg issue.range-1e30 "seed: 1e30" "c\.yaml:3:7: seed: 1e30 is out of range \(expected an integer from 0 to 2\^32-1\)" "$CBT
seed: 1e30"
cfg issue.range-26digits "seed: a 26-digit number" "c\.yaml:3:7: seed: 12345678901234567890123456 is out of range \(expected an integer from 0 to 2\^32-1\)" "$CBT
seed: 12345678901234567890123456"
cfg cfg.range-seed-2p32 "seed: 4294967296 (2^32)" "c\.yaml:3:7: seed: 4294967296 is out of range \(expected an integer from 0 to 2\^32-1\)" "$CBT
seed: 4294967296"
cfg cfg.range-seed-neg "seed: -1" "c\.yaml:3:7: seed: -1 is out of range \(expected an integer from 0" "$CBT
seed: -1"
cfg cfg.range-seed-frac "seed: 1.5" "c\.yaml:3:7: seed: (expected an integer, got '1.5'|1.5 is not an integer)" "$CBT
seed: 1.5"
cfg cfg.range-lr-zero "train.lr: 0" "c\.yaml:3:11: train.lr: 0 is out of range \(expected a number above 0 and at most 10\)" "$CBT
train.lr: 0"
cfg cfg.range-lr-underflow "train.lr: 1e-400 (rounds to 0)" "c\.yaml:3:11: train.lr: 1e-400 is out of range \(expected a number above 0" "$CBT
train.lr: 1e-400"
cfg cfg.range-lr-overflow "train.lr: 1e400" "c\.yaml:3:11: train.lr: 1e400 is out of range \(expected a number above 0 and at most 10\)" "$CBT
train.lr: 1e400"
cfg cfg.range-lr-neg "train.lr: -1" "c\.yaml:3:11: train.lr: -1 is out of range" "$CBT
train.lr: -1"
cfg cfg.range-tokens-1e19 "train.tokens: 1e19" "c\.yaml:2:15: train.tokens: 1e19 is out of range \(expected an integer from 1 to 9e18\)" "$CB
train.tokens: 1e19"
cfg cfg.range-tokens-zero "train.tokens: 0" "c\.yaml:2:15: train.tokens: 0 is out of range \(expected an integer from 1" "$CB
train.tokens: 0"
cfg cfg.range-tokens-below-batch "train.tokens below one batch (no step to train)" "c\.yaml:2:[0-9]+: train.tokens: 100 is less than one batch \(1024\)" "$CB
train: {tokens: 100, batch_tokens: 1024, seq_len: 32}"
cfg cfg.range-batch-multiple "train.batch_tokens not a multiple of seq_len" "c\.yaml:3:[0-9]+: train.batch_tokens: 1000 is not a multiple of seq_len 32" "$CBT
train: {batch_tokens: 1000, seq_len: 32}"
cfg cfg.range-seq-zero "train.seq_len: 0" "c\.yaml:3:[0-9]+: train.seq_len: 0 is out of range \(expected an integer from" "$CBT
train.seq_len: 0"
cfg cfg.range-micro-divide "train.micro_batch: 3 (does not divide the batch)" "c\.yaml:3:[0-9]+: train.micro_batch: 3 does not divide the 16 sequences of a batch" "$CBT
train: {micro_batch: 3, batch_tokens: 512, seq_len: 32}"
cfg cfg.range-min-lr "train.min_lr_ratio: 1.5" "c\.yaml:3:[0-9]+: train.min_lr_ratio: 1.5 is out of range \(expected" "$CBT
train.min_lr_ratio: 1.5"
cfg cfg.range-beta1 "train.beta1: 1" "c\.yaml:3:14: train.beta1: 1 is out of range \(expected a number from 0 to 0.999999\)" "$CBT
train.beta1: 1"
cfg cfg.range-wd "train.weight_decay: -0.1" "c\.yaml:3:[0-9]+: train.weight_decay: -0.1 is out of range \(expected" "$CBT
train.weight_decay: -0.1"
cfg cfg.range-clip "train.grad_clip: -1" "c\.yaml:3:[0-9]+: train.grad_clip: -1 is out of range \(expected" "$CBT
train.grad_clip: -1"
cfg cfg.range-keep "train.keep_checkpoints: 0" "c\.yaml:3:25: train.keep_checkpoints: 0 is out of range \(expected an integer from 1 to 1000\)" "$CBT
train.keep_checkpoints: 0"
cfg cfg.range-log-every "train.log_every: 0" "c\.yaml:3:18: train.log_every: 0 is out of range \(expected an integer from 1 to 2\^30\)" "$CBT
train.log_every: 0"
cfg cfg.range-layers-0 "model.layers: 0" "c\.yaml:1:[0-9]+: model.layers: 0 is out of range \(expected an integer from 1 to 256\)" "model: {d_model: 64, layers: 0, heads: 2, d_ff: 128, vocab: 256}
train.tokens: 16384"
cfg cfg.range-layers-257 "model.layers: 257" "c\.yaml:2:[0-9]+: model.layers: 257 is out of range \(expected an integer from 1 to 256\)" "scale: 1m
model.layers: 257"
cfg cfg.range-dmodel-huge "model.d_model: 1e9" "c\.yaml:1:[0-9]+: model.d_model: 1e9 is out of range \(expected an integer from 1 to 2\^16\)" "model: {d_model: 1e9, layers: 2, heads: 2, d_ff: 128, vocab: 256}
train.tokens: 16384"
cfg cfg.range-dff-neg "model.d_ff: -5" "c\.yaml:2:[0-9]+: model.d_ff: -5 is out of range \(expected" "scale: 1m
model.d_ff: -5"
cfg cfg.range-vocab-small "model.vocab: 100, below the tokenizer's 256" "c\.yaml:[0-9]+:[0-9]+: model.vocab: 100 .*(256|tokenizer)" "scale: 1m
model.vocab: 100"
cfg cfg.range-heads-divide "model.heads: 3 (does not divide d_model)" "c\.yaml:2:[0-9]+: model.heads: 3 does not divide d_model 128" "scale: 1m
model.heads: 3"
cfg cfg.range-head-odd "64 heads of size 1 (RoPE needs even)" "c\.yaml:1:[0-9]+: model.heads: head size 1 must be even for RoPE" "model: {d_model: 64, layers: 2, heads: 64, d_ff: 128, vocab: 256}
train.tokens: 16384"
cfg cfg.range-kv-heads "model.kv_heads: 3 (does not divide heads)" "c\.yaml:3:[0-9]+: model.kv_heads: 3 must divide heads \(2\)" "$CBT
model.kv_heads: 3"
cfg cfg.range-norm-eps "model.norm_eps: 0" "c\.yaml:3:[0-9]+: model.norm_eps: 0 is out of range \(expected" "$CBT
model.norm_eps: 0"
cfg cfg.range-valfrac "data.val_fraction: 1.5" "c\.yaml:3:[0-9]+: data.val_fraction: 1.5 is out of range \(expected a number above 0 and at most 0.5\)" "$CBT
data.val_fraction: 1.5"
cfg cfg.range-every-neg "eval.every_tokens: -1" "c\.yaml:3:[0-9]+: eval.every_tokens: -1 is out of range \(expected" "$CBT
eval.every_tokens: -1"
cfg cfg.range-eval-batch "eval.batch: 100000" "c\.yaml:3:[0-9]+: eval.batch: 100000 is out of range \(expected an integer from 0 to 4096\)" "$CBT
eval: {suites: [val, wikitext], wikitext: w.raw, batch: 100000}"
cfg cfg.range-niah-n "eval.niah.n: 0" "c\.yaml:3:[0-9]+: eval.niah.n: 0 is out of range \(expected" "$CBT
eval: {suites: [val, niah], niah: {n: 0}}"
cfg cfg.range-hope-levels "model.hope.levels: 9" "c\.yaml:4:[0-9]+: model.hope.levels: 9 is out of range \(expected an integer from 1 to 8\)" "$CBT
arch: hope_attn
model.hope.levels: 9"
cfg cfg.range-titans-chunk "model.titans.chunk: 513" "c\.yaml:4:[0-9]+: model.titans.chunk: 513 is out of range \(expected an integer from 1 to 512\)" "$CBT
arch: titans
model.titans.chunk: 513"
cfg cfg.range-titans-persistent "model.titans.persistent: 1025" "c\.yaml:4:[0-9]+: model.titans.persistent: 1025 is out of range \(expected an integer from 0 to 1024\)" "$CBT
arch: titans
model.titans.persistent: 1025"
cfg cfg.range-titans-depth "model.titans.mem_depth: 3" "c\.yaml:4:[0-9]+: model.titans.mem_depth: 3 is out of range \(expected an integer from 1 to 2\)" "$CBT
arch: titans
model.titans.mem_depth: 3"
cfg cfg.range-multiple "taper.multiple: 0" "c\.yaml:3:[0-9]+: taper.multiple: 0 is out of range \(expected" "$CBT
taper.multiple: 0"
cfg_val cfg.exact-int "train.tokens: 9.007199254740993e15 is read exactly" "$CB
train.tokens: 9.007199254740993e15" tokens 9007199254740993
cfg_val cfg.exact-30e9 "train.tokens: 30e9 is 30000000000" "$CB
train.tokens: 30e9" tokens 30000000000

# ---- names and tapers that cannot be honoured
cfg cfg.name-scale "scale: 99m (no such preset)" "c\.yaml:1:8: scale: unknown preset '99m' \(expected one of: 1m, 3m" "scale: 99m"
cfg cfg.name-arch "arch: foo" "c\.yaml:2:7: arch: 'foo' is not one of transformer \| gated_attn \| hope_attn \| titans" "scale: 1m
arch: foo"
cfg cfg.name-schedule "taper.schedule: cosin" "c\.yaml:2:[0-9]+: taper.schedule: 'cosin' is not one of uniform" "scale: 1m
taper.schedule: cosin"
cfg cfg.name-gate "model.gate: bogus (gated_attn)" "c\.yaml:3:[0-9]+: model.gate: 'bogus' is not one of elementwise" "scale: 1m
arch: gated_attn
model.gate: bogus"
cfg cfg.name-variant "model.titans.variant: mac" "c\.yaml:3:[0-9]+: model.titans.variant: 'mac' is not one of mag" "scale: 1m
arch: titans
model.titans.variant: mac"
cfg cfg.name-suite "eval.suites: [val, bogus]" "c\.yaml:2:[0-9]+: eval.suites: unknown suite 'bogus' \(expected val, wikitext" "scale: 1m
eval.suites: [val, bogus]"
cfg cfg.name-suite-twice "eval.suites: [val, val]" "c\.yaml:2:[0-9]+: eval.suites: 'val' is listed twice" "scale: 1m
eval.suites: [val, val]"
cfg cfg.name-niah-task "eval.niah.tasks: [s_niah_9]" "c\.yaml:2:[0-9]+: eval.niah.tasks: unknown task 's_niah_9' \(expected s_niah_1" "scale: 1m
eval: {suites: [val, niah], niah: {tasks: [s_niah_9]}}"
cfg cfg.name-bpe1 "tokenizer: bpe1 (N below 257)" "c\.yaml:2:12: tokenizer: .*bpeN.*(257|range)" "scale: 1m
tokenizer: bpe1"
cfg cfg.taper-mean "taper.ratio [1.5, 0.6]: mean is not 1" "c\.yaml:2:[0-9]+: taper.ratio \[1.5, 0.6\]: the mean of start and end must be 1" "scale: 1m
taper: {schedule: cosine, ratio: [1.5, 0.6]}"
cfg cfg.taper-negative "taper.ratio [2.5, -0.5]: a negative end" "c\.yaml:2:[0-9]+: taper.ratio.*(-0.5|negative|zero width|positive)" "scale: 1m
taper: {schedule: linear, ratio: [2.5, -0.5]}"
cfg cfg.taper-ratio-uniform "taper.ratio with schedule uniform" "c\.yaml:2:[0-9]+: taper.ratio: only used with linear, cosine and sigmoid \(schedule is uniform\)" "scale: 1m
taper: {schedule: uniform, ratio: [1.5, 0.5]}"
cfg cfg.taper-k-cosine "taper.k with schedule cosine" "c\.yaml:2:[0-9]+: taper.k: only used with schedule sigmoid \(schedule is cosine\)" "scale: 1m
taper: {schedule: cosine, k: 5}"
cfg cfg.taper-groups-cosine "taper.groups with schedule cosine" "c\.yaml:2:[0-9]+: taper.groups: only used with schedule blocks \(schedule is cosine\)" "scale: 1m
taper: {schedule: cosine, groups: [1.5, 1, 0.5]}"
cfg cfg.taper-blocks-nogroups "schedule blocks without groups" "c\.yaml:2:[0-9]+: taper.groups is required with schedule blocks" "scale: 1m
taper: {schedule: blocks}"
cfg cfg.taper-groups-mean "taper.groups [1.5, 1, 0.4]: mean is not 1" "c\.yaml:2:[0-9]+: taper.groups.*mean" "scale: 1m
taper: {schedule: blocks, groups: [1.5, 1, 0.4]}"
cfg cfg.taper-groups-split "taper.groups: 3 groups for 2 layers" "c\.yaml:3:[0-9]+: taper.groups: 3 groups do not split 2 layers into equal groups" "$CBT
taper: {schedule: blocks, groups: [1.5, 1, 0.5]}"
cfg cfg.hope-without-arch "model.hope.levels with arch transformer" "c\.yaml:2:[0-9]+: model.hope.*(only|hope_attn)" "scale: 1m
model.hope.levels: 2"
cfg cfg.hope-chunks-count "model.hope.chunks: 2 chunks for 3 levels" "c\.yaml:[0-9]+:[0-9]+: model.hope.(chunks|levels).*(3|levels|one per level)" "scale: 1m
arch: hope_attn
model.hope: {levels: 3, chunks: [1, 4]}"
cfg cfg.titans-without-arch "model.titans.window with arch transformer" "c\.yaml:2:[0-9]+: model.titans.*(only|titans)" "scale: 1m
model.titans.window: 64"
cfg cfg.titans-hidden-depth1 "model.titans.mem_hidden with mem_depth 1" "c\.yaml:[0-9]+:[0-9]+: model.titans.mem_hidden.*(depth|mem_depth)" "scale: 1m
arch: titans
model.titans: {mem_depth: 1, mem_hidden: 32}"
cfg cfg.gate-transformer "model.gate with arch transformer (a key that does not apply)" "c\.yaml:2:[0-9]+: model.gate.*(only|gated_attn)" "scale: 1m
model.gate: headwise"
cfg cfg.preset-derived "scale 3m with model.d_model 78 (the preset's 6 heads give odd head sizes)" "c\.yaml:1:[0-9]+: model\.(d_model|heads).*(even|head size)" "model: {d_model: 78}
scale: 3m"
cfg cfg.required "no scale and no model.d_model" "c\.yaml.*model.d_model.*(required|missing)" "model: {layers: 2, heads: 2, d_ff: 128}
train.tokens: 16384"
cfg cfg.path-too-long "data.train of 600 bytes (longer than the key holds)" "c\.yaml:2:[0-9]+: data.train: 600 bytes, longer than the 511 this key allows" "scale: 1m
data.train: $(printf 'x%.0s' $(seq 600))"

# ---- duplicates and overlaps
cfg cfg.dup-exact "seed given twice" "c\.yaml:4:1: duplicate key 'seed' \(first given at c\.yaml:3:1\)" "$CBT
seed: 1
seed: 2"
cfg cfg.dup-quoted "seed and \"seed\" (one key quoted)" "c\.yaml:4:1: duplicate key 'seed' \(first given at c\.yaml:3:1\)" "$CBT
\"seed\": 1
seed: 2"
cfg issue.dup-nested-dotted "model: {d_model: 32} beside model.d_model: 64" "c\.yaml:3:1: 'model.d_model' is set twice: here and at c\.yaml:2:9" "scale: 1m
model: {d_model: 32}
model.d_model: 64"
cfg cfg.dup-dotted "train.lr given twice, dotted" "c\.yaml:4:1: duplicate key 'train.lr' \(first given at c\.yaml:3:1\)" "$CBT
train.lr: 1e-3
train.lr: 2e-3"
cfg cfg.dup-two-sections "train: {lr} and a second train: {seed}" "c\.yaml:3:1: duplicate key 'train' \(first given at c\.yaml:2:1\)" "$CB
train: {tokens: 16384}
train: {lr: 1e-3}"
cfg cfg.dup-deep "eval.niah: {n: 3} beside eval.niah.n: 4" "c\.yaml:[34]:[0-9]+: 'eval.niah.n' is set twice" "$CBT
eval: {suites: [val, niah], niah: {n: 3}}
eval.niah.n: 4"
cfg cfg.dup-json "a JSON config with a key twice" "c\.yaml:1:[0-9]+: duplicate key 'seed'" '{"scale": "1m", "seed": 1, "seed": 2}'

# ---- YAML tags, aliases, documents
cfg issue.yaml-python-tag "a !!python/object tag" "c\.yaml:3:[0-9]+: YAML tag '!!python/object:os.system' is not supported here" "$CBT
seed: !!python/object:os.system [ls]"
cfg cfg.tag-custom "a !custom tag" "c\.yaml:3:[0-9]+: YAML tag '!custom' is not supported here" "$CBT
seed: !custom 5"
cfg cfg.tag-directive "a %TAG shorthand" "c\.yaml:3:8: YAML tag 'tag:example.com,2000:foo' is not supported here" "%TAG ! tag:example.com,2000:
---
scale: !foo 1m"
cfg cfg.tag-str-number "seed: !!str 5 (a string, not a number)" "c\.yaml:3:[0-9]+: seed: expected an integer, got .*(!!str|string)" "$CBT
seed: !!str 5"
cfg_same cfg.tag-int-quoted "seed: !!int \"5\" is the number 5" "$CBT
seed: !!int \"5\"" "$CBT
seed: 5"
cfg cfg.tag-int-bad "seed: !!int abc" "c\.yaml:3:[0-9]+: seed: .*(integer|!!int)" "$CBT
seed: !!int abc"
cfg cfg.alias "an alias (*x)" "c\.yaml:4:[0-9]+: YAML aliases \(\*x\) are not supported; write the value out" "$CBT
model.kv_heads: &x 2
seed: *x"
cfg cfg.alias-bomb "a billion-laughs alias bomb" "c\.yaml:[0-9]+:[0-9]+: YAML aliases \(\*a\) are not supported" "$CBT
a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]"
cfg_same cfg.anchor-only "an anchor without an alias (&a 5 is 5)" "$CBT
seed: &a 5" "$CBT
seed: 5"
cfg cfg.merge-key "a << merge key" "c\.yaml:3:[0-9]+: .*(unknown key '<<'|alias|merge)" "$CBT
<<: {seed: 1}"
cfg cfg.two-docs "two YAML documents" "c\.yaml:2:1: more than one document in the file \(one is expected\)" "scale: 1m
---
scale: 3m"

# ---- what the file is: empty, not a mapping, broken syntax, bytes
cfg cfg.empty "an empty file" "c\.yaml: the file is empty \(a mapping was expected\)" ""
cfg cfg.comments-only "only comments" "c\.yaml: .*(empty|mapping was expected)" "# nothing here
# at all"
cfg cfg.null-doc "a document that is ~" "c\.yaml:1:1: expected a mapping of keys, got null" "~"
cfg cfg.dashes-only "a document that is ---" "c\.yaml:[12]:1: expected a mapping of keys, got null" "---"
cfg cfg.list-doc "a list instead of a mapping" "c\.yaml:1:1: expected a mapping of keys, got a list" "[1, 2]"
cfg cfg.scalar-doc "a bare word" "c\.yaml:1:1: expected a mapping of keys, got" "hello"
cfg cfg.unclosed "an unclosed flow list" "c\.yaml:2:[0-9]+: invalid YAML/JSON: did not find expected ',' or '\]'" "scale: 1m
taper: {schedule: cosine, ratio: [1.5, 0.5}"
cfg cfg.tab-indent "a tab used for indentation" "c\.yaml:[23]:[0-9]+: invalid YAML/JSON: .*tab" "$(printf 'model:\n\td_model: 64\n')"
cfg cfg.bad-indent "a key indented wrongly" "c\.yaml:3:[0-9]+: invalid YAML/JSON" "model:
  d_model: 64
   layers: 2"
cfg cfg.json-trailing "a JSON object followed by junk" "c\.yaml:1:[0-9]+: invalid YAML/JSON" '{"scale": "1m"} x'
cfg cfg.unterminated-string "an unterminated quoted string" "c\.yaml:[0-9]+:[0-9]+: invalid YAML/JSON: .*(quoted|end of stream)" "scale: \"1m"
selected cfg.nul-byte && { in_case cfg.nul-byte; printf 'scale: 1m\nseed: 1\0002\n' >c.yaml
    tc cfg.nul-byte "a NUL byte inside a value" 2 "c\.yaml:2:[0-9]+: invalid YAML/JSON: control characters are not allowed" "$W" --describe --config c.yaml; }
selected cfg.latin1 && { in_case cfg.latin1; printf 'scale: 1m\ndata: {train: "caf\351"}\n' >c.yaml
    tc cfg.latin1 "a Latin-1 byte on line 2 (not UTF-8)" 2 "c\.yaml:2:[0-9]+: invalid YAML/JSON: invalid .*UTF-8" "$W" --describe --config c.yaml; }
selected cfg.binary && { in_case cfg.binary; head -c 4096 /dev/urandom >c.yaml
    tc cfg.binary "4 KiB of random bytes" 2 "c\.yaml(:[0-9]+:[0-9]+)?: invalid YAML/JSON" "$W" --describe --config c.yaml; }
selected cfg.elf && { in_case cfg.elf; cp "$W" c.yaml
    tc cfg.elf "a program (ELF) as the config" 2 "c\.yaml(:[0-9]+:[0-9]+)?: invalid YAML/JSON" "$W" --describe --config c.yaml; }
cfg_same cfg.bom "a UTF-8 byte-order mark" "$(printf '\357\273\277scale: 1m')" "scale: 1m"
selected cfg.utf16 && { in_case cfg.utf16; printf 'scale: 1m\n' >ref.yaml; "$W" --describe --config ref.yaml >ref.json 2>&1
    printf 'scale: 1m\n' | iconv -f UTF-8 -t UTF-16 >c.yaml
    AFTER='[ "$(grep -m1 "\"id\"" "$OUT/$id.out")" = "$(grep -m1 "\"id\"" ref.json)" ]' AFTER_MSG="read as another job" \
        tc cfg.utf16 "UTF-16 with a byte-order mark (YAML allows it)" 0 '"id"' "$W" --describe --config c.yaml; }
cfg_same cfg.crlf "CRLF line ends" "$(printf 'scale: 1m\r\nseed: 3\r')" "scale: 1m
seed: 3"
cfg_same cfg.json "the same job as JSON" '{"scale": "1m", "seed": 3, "train": {"lr": 1e-3}}' "scale: 1m
seed: 3
train.lr: 0.001"
cfg_same cfg.identity-exec "train.micro_batch is not part of the identity" "scale: 1m
train.micro_batch: 4" "scale: 1m"
selected cfg.deep-lists && { in_case cfg.deep-lists; { printf 'scale: 1m\nseed: '; head -c 100000 /dev/zero | tr '\0' '['; echo; } >c.yaml
    tc cfg.deep-lists "100,000 nested lists" 2 "c\.yaml:2:[0-9]+: .*(deep|nest|invalid YAML/JSON|expected an integer)" "$W" --describe --config c.yaml; }
selected cfg.deep-maps && { in_case cfg.deep-maps; { printf 'scale: 1m\nseed: '; for i in $(seq 20000); do printf '{a: '; done; echo; } >c.yaml
    tc cfg.deep-maps "20,000 nested flow mappings" 2 "c\.yaml:2:[0-9]+: .*(deep|nest|invalid YAML/JSON|expected an integer)" "$W" --describe --config c.yaml; }
selected cfg.deep-block && { in_case cfg.deep-block; python3 -c "
print('scale: 1m')
print('train:')
for i in range(3000): print('  ' * (i + 1) + 'k%d:' % i)
" >c.yaml
    tc cfg.deep-block "3,000 nested block mappings" 2 "c\.yaml:[0-9]+:[0-9]+: .*(deep|nest|unknown key 'k0')" "$W" --describe --config c.yaml; }
selected cfg.huge && { in_case cfg.huge; { echo "scale: 1m"; echo "# padding"; head -c 20000000 /dev/zero | tr '\0' '#'; echo; } >c.yaml
    tc cfg.huge "a 20 MB config (a comment line)" 0\|2 "(\"id\"|c\.yaml: .*(MiB|large|bytes))" "$W" --describe --config c.yaml; }
selected cfg.many-keys && { in_case cfg.many-keys; { echo "scale: 1m"; seq -f 'k%.0f: 1' 200000; } >c.yaml
    tc cfg.many-keys "200,000 unknown keys (a 2.3 MB file, within the 16 MiB limit)" 2 "c\.yaml:2:1: unknown key 'k1'" "$W" --describe --config c.yaml; }
selected cfg.long-key && { in_case cfg.long-key; { echo "scale: 1m"; printf '%s: 1\n' "$(head -c 100000 /dev/zero | tr '\0' k)"; } >c.yaml
    tc cfg.long-key "a 100,000-character key (YAML allows 1024 for a plain key)" 2 "c\.yaml:2:1: .*(key|1024)" "$W" --describe --config c.yaml; }
selected cfg.long-key-1000 && { in_case cfg.long-key-1000; { echo "scale: 1m"; printf '%s: 1\n' "$(head -c 1000 /dev/zero | tr '\0' k)"; } >c.yaml
    tc cfg.long-key-1000 "an unknown key of 1,000 characters" 2 "c\.yaml:2:1: (unknown )?key 'k+' is too long|c\.yaml:2:1: unknown key 'kkkk" "$W" --describe --config c.yaml; }

# ---- issue 26: a slip of a tokenizer name; a preset's warm-up past a small budget
cfg issue26.config-tokenizer-byte "tokenizer: byte (a slip of bytes)" "c\.yaml:2:12: tokenizer: unknown name 'byte'; did you mean 'bytes'\?" "scale: 1m
tokenizer: byte"
cfg issue26.config-warmup-preset "scale 1m with train.tokens 20000 (the preset's warm-up is 1M tokens)" "c\.yaml:2:17: train\.tokens: 20000 is less than the warm-up of preset '1m' \(1000000 tokens, its train\.warmup_tokens\); set train\.warmup_tokens too" "scale: 1m
train: {tokens: 20000}"
