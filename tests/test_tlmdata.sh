#!/bin/sh
# test_tlmdata.sh: the tlm-data program end to end: --help everywhere;
# build from a folder of text plus JSONL (manifest contents, shard headers,
# the split rule, every byte accounted for); JSONL errors name file:line;
# a trained bpeN lands in the dataset and is found by name; encode/decode
# round trips; rebuilding replaces a dataset but never a foreign folder.
set -u
src=${TLM_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${TLM_BUILDDIR:-$src}
T="$build/dataprep/tlm-data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-tlmdata.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
no() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # check "description" command...
    d=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then ok "$d"; else no "$d"; sed 's/^/# /' "$tmp/out" | head -20; fi
}
py() { python3 - "$@"; }

for c in build encode decode train-bpe; do
    check "tlm-data $c --help" sh -c "'$T' $c --help | grep -q '^usage: tlm-data $c'"
done
check "tlm-data --help lists the commands" sh -c "'$T' --help | grep -q train-bpe"
"$T" frobnicate >/dev/null 2>&1
[ $? = 2 ] && ok "an unknown command exits 2" || no "an unknown command exits 2"

# ---- a small corpus: text files in folders, hidden files, JSONL
mkdir -p "$tmp/in/a" "$tmp/in/b"
i=0
while [ $i -lt 400 ]; do
    echo "Line $i of the first file: the quick brown fox jumps over the lazy dog."
    i=$((i + 1))
done >"$tmp/in/a/one.txt"
printf 'caf\303\251 \346\227\245\346\234\254 second file\nwithout a final newline' >"$tmp/in/b/two.txt"
echo "hidden" >"$tmp/in/.hidden.txt"
cat >"$tmp/in/docs.jsonl" <<'J'
{"text": "first record", "id": 1}

{"text": "second record\nwith a newline \u00e9", "id": 2}
J

check "build with bytes" "$T" build --tokenizer bytes --out "$tmp/ds" --val-fraction 0.25 --segment-bytes 1k "$tmp/in"
py "$tmp" <<'PY' >"$tmp/out" 2>&1 && ok "manifest and shards agree with the inputs" || { no "manifest and shards agree with the inputs"; sed 's/^/# /' "$tmp/out"; }
import json, os, struct, sys, hashlib
d = sys.argv[1] + "/ds"
m = json.load(open(d + "/manifest.json"))
assert m["format"] == "tlm-dataset" and m["version"] == 1, m
t = m["tokenizer"]
assert t["name"] == "bytes" and t["vocab"] == 256 and t["file"] is None and t["eot"] is None, t
paths = [os.path.basename(s["path"]) for s in m["sources"]]
assert paths == ["one.txt", "two.txt", "docs.jsonl"], paths      # name order, hidden skipped
assert m["sources"][2]["format"] == "jsonl" and m["sources"][2]["documents"] == 2, m["sources"][2]
for s in m["sources"]:
    assert s["sha256"] == hashlib.sha256(open(s["path"], "rb").read()).hexdigest(), s
    assert s["bytes"] == os.path.getsize(s["path"])
text_bytes = sum(os.path.getsize(s["path"]) for s in m["sources"][:2]) + len("first record") + len("second record\nwith a newline \u00e9".encode())
tot = 0
for split in ("train", "val"):
    sp = m["splits"][split]
    n = 0
    for sh in sp["shards"]:
        raw = open(d + "/" + sh["file"], "rb").read()
        assert raw[:8] == b"TLMSHARD"
        tb, vocab, count = struct.unpack_from("<IIQ", raw, 16)
        name = raw[32:96].rstrip(b"\0").decode()
        assert (tb, vocab, name) == (2, 256, "bytes"), (tb, vocab, name)
        assert raw[96:128].hex() == t["sha256"]
        assert count == sh["tokens"] and hashlib.sha256(raw[192:]).hexdigest() == sh["sha256"]
        n += count
    assert n == sp["tokens"] == sp["bytes"], (split, n, sp)      # bytes: one token per byte
    tot += n
assert tot == text_bytes, (tot, text_bytes)
segs = m["split"]["segments"]
want_val = sum(1 for i in range(segs) if (i + 1) * 250000 // 1000000 > i * 250000 // 1000000)
assert m["splits"]["val"]["segments"] == want_val and want_val > 0, (segs, want_val, m["splits"])
PY

# ---- JSONL errors name file and line
printf '{"text": "ok"}\n{"text": "ok"}\n{"text": oops}\n' >"$tmp/bad.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bad" "$tmp/bad.jsonl" >"$tmp/out" 2>&1
grep -q "bad.jsonl:3:.*invalid JSON" "$tmp/out" && ok "invalid JSON: $(cat "$tmp/out")" || { no "invalid JSON names file:line"; cat "$tmp/out"; }
printf '{"text": "ok"}\n{"body": "no text"}\n' >"$tmp/bad.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bad" "$tmp/bad.jsonl" >"$tmp/out" 2>&1
grep -q 'bad.jsonl:2: no "text" field' "$tmp/out" && ok "missing field: $(cat "$tmp/out")" || { no "missing field names file:line"; cat "$tmp/out"; }
printf '{"text": 5}\n' >"$tmp/bad.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bad" "$tmp/bad.jsonl" >"$tmp/out" 2>&1
grep -q 'bad.jsonl:1: field "text" is a number' "$tmp/out" && ok "wrong type: $(cat "$tmp/out")" || { no "wrong field type"; cat "$tmp/out"; }
printf '[1, 2]\n' >"$tmp/bad.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bad" --field body "$tmp/bad.jsonl" >"$tmp/out" 2>&1
grep -q 'bad.jsonl:1: expected a JSON object' "$tmp/out" && ok "not an object" || { no "not an object"; cat "$tmp/out"; }
[ ! -e "$tmp/bad" ] && ok "a failed build leaves nothing behind" || no "a failed build left $tmp/bad"
"$T" build --tokenizer bytes --out "$tmp/none" "$tmp/missing" >"$tmp/out" 2>&1
grep -q "missing: No such file" "$tmp/out" && ok "a missing input is named" || { no "missing input"; cat "$tmp/out"; }

# ---- a trained BPE inside the dataset
check "build --tokenizer bpe300 --train-bpe" "$T" build --tokenizer bpe300 --train-bpe --out "$tmp/bpe" --val-fraction 0.2 --segment-bytes 2k "$tmp/in"
[ -f "$tmp/bpe/bpe300.tiktoken" ] && [ "$(wc -l <"$tmp/bpe/bpe300.tiktoken")" = 299 ] &&
    ok "bpe300.tiktoken (299 ranks) is in the dataset folder" || no "bpe300.tiktoken in the dataset"
py "$tmp" <<'PY' >"$tmp/out" 2>&1 && ok "bpe300 manifest: vocab 300, file, eot, fewer tokens than bytes" || { no "bpe300 manifest"; sed 's/^/# /' "$tmp/out"; }
import json, sys
m = json.load(open(sys.argv[1] + "/bpe/manifest.json"))
t = m["tokenizer"]
assert (t["name"], t["vocab"], t["file"], t["eot"]) == ("bpe300", 300, "bpe300.tiktoken", 299), t
assert m["document_separator"] == "<|endoftext|>"
tr = m["splits"]["train"]
assert tr["tokens"] < tr["bytes"] / 2, tr
PY
ids=$(printf 'the quick brown fox' | "$T" encode --tokenizer bpe300 --data "$tmp/bpe/train") &&
    [ "$(echo "$ids" | "$T" decode --tokenizer bpe300 --data "$tmp/bpe")" = "the quick brown fox" ] &&
    ok "bpe300 is found from the split folder by name; encode/decode round trip ($ids)" || no "bpe300 encode/decode by name"
cp "$tmp/bpe/bpe300.tiktoken" "$tmp/keep.tiktoken"
check "build again with the kept rank file (a path)" "$T" build --tokenizer "$tmp/keep.tiktoken" --out "$tmp/bpe2" "$tmp/in"
grep -q '"name": "keep"' "$tmp/bpe2/manifest.json" && ok "a rank file path is named after the file" || no "path naming"

# ---- encode/decode and rebuilding
head -c 3000 /dev/urandom >"$tmp/rand.bin"
"$T" encode --tokenizer bytes <"$tmp/rand.bin" | "$T" decode --tokenizer bytes >"$tmp/back.bin"
cmp -s "$tmp/rand.bin" "$tmp/back.bin" && ok "bytes: encode | decode is the identity on random bytes" || no "bytes round trip"
"$T" encode --tokenizer bpe300 --data "$tmp/bpe" --raw-bytes <"$tmp/rand.bin" | "$T" decode --tokenizer bpe300 --data "$tmp/bpe" >"$tmp/back.bin"
cmp -s "$tmp/rand.bin" "$tmp/back.bin" && ok "bpe300 --raw-bytes: lossless on random bytes" || no "bpe300 raw round trip"
[ "$(printf '' | "$T" encode --tokenizer bytes)" = "" ] && ok "empty input: an empty line" || no "empty input"
check "rebuilding over a dataset replaces it" "$T" build --tokenizer bytes --out "$tmp/ds" --val-fraction 0 "$tmp/in/a"
grep -q '"tokens": 0' "$tmp/ds/manifest.json" && [ ! -d "$tmp/ds/val" ] && [ ! -e "$tmp/ds/train/000001.tlmtok" ] &&
    ok "no stale shards or val folder after the rebuild" || no "stale files after rebuild"
mkdir -p "$tmp/precious" && echo keep >"$tmp/precious/file"
"$T" build --tokenizer bytes --out "$tmp/precious" "$tmp/in" >"$tmp/out" 2>&1
grep -q "not a tlm-data dataset" "$tmp/out" && [ -f "$tmp/precious/file" ] && ok "a foreign folder is never replaced" || no "foreign folder"
ls "$tmp" | grep -q '\.tmp\.' && no "temp folders left behind" || ok "no temp folders left behind"

# ---- long paths are measured, never cut: a 700-byte --out holds its shards
# (the shard writer kept 511 bytes of their names), a 1,001-byte one is refused
long=$tmp/long
for part in 1 2 3; do long=$long/$(printf "d%.0s" $(seq 220))$part; done
mkdir -p "$(dirname "$long")"
"$T" build --tokenizer bytes --out "$long" "$tmp/in/a" >"$tmp/out" 2>&1
st=$?
[ $st = 0 ] && [ -f "$long/train/000000.tlmtok" ] && [ -f "$long/manifest.json" ] &&
    [ -z "$(find "$tmp/long" -name '*.tlmtok*' ! -path "$long/*")" ] &&
    ok "a ${#long}-byte --out: the shards are inside it, none elsewhere" || { no "a ${#long}-byte --out (status $st)"; sed 's/^/# /' "$tmp/out" | head -3; }
toolong=$long/$(printf "d%.0s" $(seq $((1001 - ${#long} - 1))))
"$T" build --tokenizer bytes --out "$toolong" "$tmp/in/a" >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q -- "--out: the path is 1001 bytes, longer than the 1000 TLM allows here" "$tmp/out" &&
    ok "a 1001-byte --out is refused by size" || { no "a 1001-byte --out"; cat "$tmp/out"; }
# a rank file deeper than the tokenizer lookup can name is refused by size, not "not found"
deep=$tmp/long
for part in 1 2 3 4 5; do deep=$deep/$(printf "t%.0s" $(seq 220))$part; done
mkdir -p "$deep" && cp "$tmp/keep.tiktoken" "$deep/keep.tiktoken"
usage1() { "$T" "$@" </dev/null >"$tmp/out" 2>&1; }
usage1 encode --tokenizer "$deep/keep.tiktoken"
[ $? = 2 ] && grep -q -- "--tokenizer: the path is $((${#deep} + 14)) bytes, longer than the 1000 TLM allows here" "$tmp/out" &&
    ok "a $((${#deep} + 14))-byte rank file path is refused by size" || { no "a long rank file path"; cat "$tmp/out"; }
rm -rf "$tmp/long"

# ---- options: given twice, pointless together, a folder for a file
usage() { # usage PATTERN DESCRIPTION ARGS...: exit 2 saying PATTERN
    pat=$1 d=$2
    shift 2
    "$T" "$@" </dev/null >"$tmp/out" 2>&1
    st=$?
    [ $st = 2 ] && grep -q -- "$pat" "$tmp/out" && ok "$d: $(head -1 "$tmp/out")" || { no "$d (status $st)"; cat "$tmp/out"; }
}
usage "--out is given twice; give it once" "build --out twice" build --tokenizer bytes --out "$tmp/x" --out "$tmp/y" "$tmp/in"
usage "--tokenizer is given twice" "encode --tokenizer twice" encode --tokenizer bytes --tokenizer bytes
usage "--field does nothing with --format text" "build --field with --format text" \
    build --tokenizer bytes --out "$tmp/x" --format text --field body "$tmp/in"
usage "--field does nothing with --format text" "train-bpe --field with --format text" \
    train-bpe --vocab 300 --format text --field body "$tmp/in"
usage "decode: --special does nothing when decoding" "decode --special" decode --tokenizer bytes --special
usage "--vocab 300.5: not an integer (expected an integer from 257 to 2^20)" "train-bpe --vocab 300.5" \
    train-bpe --vocab 300.5 "$tmp/in"
for v in 100.5 nan 0x100 1e400; do
    usage "--segment-bytes $v: expected a whole number of bytes, at least 64" "--segment-bytes $v" \
        build --tokenizer bytes --out "$tmp/x" --segment-bytes "$v" "$tmp/in"
done
usage "--max-line 1.5: expected a whole number of bytes" "--max-line 1.5 is not 1" \
    build --tokenizer bytes --out "$tmp/x" --max-line 1.5 "$tmp/in"
mkdir -p "$tmp/tok.tiktoken"
usage "--tokenizer $tmp/tok.tiktoken: is a directory (expected a tokenizer name or a tiktoken rank file)" \
    "a folder as the rank file" encode --tokenizer "$tmp/tok.tiktoken"
usage "--out $tmp/tok.tiktoken: is a directory (expected the rank file to write" "train-bpe --out a folder" \
    train-bpe --vocab 300 --out "$tmp/tok.tiktoken" "$tmp/in"
usage "--data $tmp/keep.tiktoken: is not a directory (expected a dataset folder)" "encode --data a file" \
    encode --tokenizer bytes --data "$tmp/keep.tiktoken"

echo "1..$n"
[ $failed = 0 ]
