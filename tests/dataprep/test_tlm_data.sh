#!/bin/sh
# test_tlm_data.sh: the tlm-data program end to end: --help everywhere;
# build from a folder of text plus JSONL (manifest contents, shard headers,
# the split rule, every byte accounted for); JSONL errors name file:line;
# a trained bpeN lands in the dataset and is found by name; encode/decode
# round trips; rebuilding replaces a dataset but never a foreign folder;
# --shard-tokens is bounded; a FIFO input is refused; SIGTERM/SIGINT stop a
# build and remove its temp folder; a later build removes the temp folder of
# a SIGKILLed one (and nothing else); token ids out of range are said as
# such; an empty validation split is warned about when written; a slip of
# a tokenizer name gets a did-you-mean; an option missing its value is
# named.
# (make check sets TLM_SRCDIR and TLM_BUILDDIR; tap.sh sets -u)
src=$TLM_SRCDIR build=$TLM_BUILDDIR
. "$src/tests/lib/tap.sh"
T="$build/dataprep/tlm-data"
tap_setup tlmdata
check() { # check "description" command...
    d=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then pass "$d"; else no "$d"; sed 's/^/# /' "$tmp/out" | head -20; fi
}
py() { python3 - "$@"; }

for c in build encode decode train-bpe; do
    check "tlm-data $c --help" sh -c "'$T' $c --help | grep -q '^usage: tlm-data $c'"
done
check "tlm-data --help lists the commands" sh -c "'$T' --help | grep -q train-bpe"
"$T" frobnicate >/dev/null 2>&1
[ $? = 2 ] && pass "an unknown command exits 2" || no "an unknown command exits 2"

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
py "$tmp" <<'PY' >"$tmp/out" 2>&1 && pass "manifest and shards agree with the inputs" || { no "manifest and shards agree with the inputs"; sed 's/^/# /' "$tmp/out"; }
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
grep -q "bad.jsonl:3:.*invalid JSON" "$tmp/out" && pass "invalid JSON: $(cat "$tmp/out")" || { no "invalid JSON names file:line"; cat "$tmp/out"; }
printf '{"text": "ok"}\n{"body": "no text"}\n' >"$tmp/bad.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bad" "$tmp/bad.jsonl" >"$tmp/out" 2>&1
grep -q 'bad.jsonl:2: no "text" field' "$tmp/out" && pass "missing field: $(cat "$tmp/out")" || { no "missing field names file:line"; cat "$tmp/out"; }
printf '{"text": 5}\n' >"$tmp/bad.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bad" "$tmp/bad.jsonl" >"$tmp/out" 2>&1
grep -q 'bad.jsonl:1: field "text" is a number' "$tmp/out" && pass "wrong type: $(cat "$tmp/out")" || { no "wrong field type"; cat "$tmp/out"; }
printf '[1, 2]\n' >"$tmp/bad.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bad" --field body "$tmp/bad.jsonl" >"$tmp/out" 2>&1
grep -q 'bad.jsonl:1: expected a JSON object' "$tmp/out" && pass "not an object" || { no "not an object"; cat "$tmp/out"; }
[ ! -e "$tmp/bad" ] && pass "a failed build leaves nothing behind" || no "a failed build left $tmp/bad"
"$T" build --tokenizer bytes --out "$tmp/none" "$tmp/missing" >"$tmp/out" 2>&1
grep -q "missing: No such file" "$tmp/out" && pass "a missing input is named" || { no "missing input"; cat "$tmp/out"; }

# ---- a trained BPE inside the dataset
check "build --tokenizer bpe300 --train-bpe" "$T" build --tokenizer bpe300 --train-bpe --out "$tmp/bpe" --val-fraction 0.2 --segment-bytes 2k "$tmp/in"
[ -f "$tmp/bpe/bpe300.tiktoken" ] && [ "$(wc -l <"$tmp/bpe/bpe300.tiktoken")" = 299 ] &&
    pass "bpe300.tiktoken (299 ranks) is in the dataset folder" || no "bpe300.tiktoken in the dataset"
py "$tmp" <<'PY' >"$tmp/out" 2>&1 && pass "bpe300 manifest: vocab 300, file, eot, fewer tokens than bytes" || { no "bpe300 manifest"; sed 's/^/# /' "$tmp/out"; }
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
    pass "bpe300 is found from the split folder by name; encode/decode round trip ($ids)" || no "bpe300 encode/decode by name"
cp "$tmp/bpe/bpe300.tiktoken" "$tmp/keep.tiktoken"
check "build again with the kept rank file (a path)" "$T" build --tokenizer "$tmp/keep.tiktoken" --out "$tmp/bpe2" "$tmp/in"
grep -q '"name": "keep"' "$tmp/bpe2/manifest.json" && pass "a rank file path is named after the file" || no "path naming"

# ---- encode/decode and rebuilding
head -c 3000 /dev/urandom >"$tmp/rand.bin"
"$T" encode --tokenizer bytes <"$tmp/rand.bin" | "$T" decode --tokenizer bytes >"$tmp/back.bin"
cmp -s "$tmp/rand.bin" "$tmp/back.bin" && pass "bytes: encode | decode is the identity on random bytes" || no "bytes round trip"
"$T" encode --tokenizer bpe300 --data "$tmp/bpe" --raw-bytes <"$tmp/rand.bin" | "$T" decode --tokenizer bpe300 --data "$tmp/bpe" >"$tmp/back.bin"
cmp -s "$tmp/rand.bin" "$tmp/back.bin" && pass "bpe300 --raw-bytes: lossless on random bytes" || no "bpe300 raw round trip"
[ "$(printf '' | "$T" encode --tokenizer bytes)" = "" ] && pass "empty input: an empty line" || no "empty input"
check "rebuilding over a dataset replaces it" "$T" build --tokenizer bytes --out "$tmp/ds" --val-fraction 0 "$tmp/in/a"
grep -q '"tokens": 0' "$tmp/ds/manifest.json" && [ ! -d "$tmp/ds/val" ] && [ ! -e "$tmp/ds/train/000001.tlmtok" ] &&
    pass "no stale shards or val folder after the rebuild" || no "stale files after rebuild"
# token ids: what is not a number is told from a number out of range
echo "72 105 999999" | "$T" decode --tokenizer bytes >"$tmp/out" 2>&1
grep -q "stdin: item 3 (999999) is out of range: tokenizer bytes has ids 0 to 255" "$tmp/out" &&
    pass "an id past the vocabulary: out of range, with the range" || { no "an id past the vocabulary"; cat "$tmp/out"; }
echo "72 -5" | "$T" decode --tokenizer bytes >"$tmp/out" 2>&1
grep -q "item 2 (-5) is out of range" "$tmp/out" && pass "a negative id: out of range" || { no "a negative id"; cat "$tmp/out"; }
echo "72 99999999999999999999" | "$T" decode --tokenizer bytes >"$tmp/out" 2>&1
grep -q "item 2 (99999999999999999999) is out of range" "$tmp/out" && pass "an id past 2^32: out of range" ||
    { no "an id past 2^32"; cat "$tmp/out"; }
echo "72 x1" | "$T" decode --tokenizer bytes >"$tmp/out" 2>&1
grep -q "item 2 ('x1') is not a token id (a whole number from 0 to 255)" "$tmp/out" && pass "a word: not a token id" ||
    { no "a word"; cat "$tmp/out"; }
# --tokenizer byte: a slip of a name, said as such
"$T" build --tokenizer byte --out "$tmp/slip" "$tmp/in/a" >"$tmp/out" 2>&1
grep -q "tokenizer 'byte': .*did you mean 'bytes'?" "$tmp/out" && [ ! -e "$tmp/slip" ] && pass "--tokenizer byte: did you mean 'bytes'?" ||
    { no "--tokenizer byte"; cat "$tmp/out"; }
# a built-in name whose rank file is missing is no slip of another name
"$T" build --tokenizer llama3 --out "$tmp/slip" "$tmp/in/a" >"$tmp/out" 2>&1
grep -q "tokenizer 'llama3': no llama3.tiktoken rank file" "$tmp/out" && ! grep -q "did you mean" "$tmp/out" &&
    pass "--tokenizer llama3 without its rank file: the missing file, no did-you-mean" || { no "--tokenizer llama3"; cat "$tmp/out"; }
# a validation split that comes out empty is said when the dataset is made
printf 'a few words\n' >"$tmp/tiny.txt"
"$T" build --tokenizer bytes --out "$tmp/tinyds" "$tmp/tiny.txt" >"$tmp/out" 2>&1
grep -q "warning: $tmp/tinyds/val is empty: 1 segment(s) of at most 65536 bytes, and --val-fraction 0.01" "$tmp/out" &&
    pass "an empty validation split: a warning at build time" || { no "an empty validation split"; cat "$tmp/out"; }
"$T" build --tokenizer bytes --out "$tmp/tinyds" --val-fraction 0 "$tmp/tiny.txt" >"$tmp/out" 2>&1
grep -q "warning" "$tmp/out" && { no "--val-fraction 0 asks for no split: no warning"; cat "$tmp/out"; } ||
    pass "--val-fraction 0 asks for no split: no warning"
mkdir -p "$tmp/precious" && echo keep >"$tmp/precious/file"
"$T" build --tokenizer bytes --out "$tmp/precious" "$tmp/in" >"$tmp/out" 2>&1
grep -q "not a tlm-data dataset" "$tmp/out" && [ -f "$tmp/precious/file" ] && pass "a foreign folder is never replaced" || no "foreign folder"
ls "$tmp" | grep -q '\.tmp\.' && no "temp folders left behind" || pass "no temp folders left behind"

# ---- long paths are measured, never cut: a 700-byte --out holds its shards
# (the shard writer kept 511 bytes of their names), a 1,001-byte one is refused
long=$tmp/long
for part in 1 2 3; do long=$long/$(printf "d%.0s" $(seq 220))$part; done
mkdir -p "$(dirname "$long")"
"$T" build --tokenizer bytes --out "$long" "$tmp/in/a" >"$tmp/out" 2>&1
st=$?
[ $st = 0 ] && [ -f "$long/train/000000.tlmtok" ] && [ -f "$long/manifest.json" ] &&
    [ -z "$(find "$tmp/long" -name '*.tlmtok*' ! -path "$long/*")" ] &&
    pass "a ${#long}-byte --out: the shards are inside it, none elsewhere" || { no "a ${#long}-byte --out (status $st)"; sed 's/^/# /' "$tmp/out" | head -3; }
toolong=$long/$(printf "d%.0s" $(seq $((1001 - ${#long} - 1))))
"$T" build --tokenizer bytes --out "$toolong" "$tmp/in/a" >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q -- "--out: the path is 1001 bytes, longer than the 1000 TLM allows here" "$tmp/out" &&
    pass "a 1001-byte --out is refused by size" || { no "a 1001-byte --out"; cat "$tmp/out"; }
# a rank file deeper than the tokenizer lookup can name is refused by size, not "not found"
deep=$tmp/long
for part in 1 2 3 4 5; do deep=$deep/$(printf "t%.0s" $(seq 220))$part; done
mkdir -p "$deep" && cp "$tmp/keep.tiktoken" "$deep/keep.tiktoken"
usage1() { "$T" "$@" </dev/null >"$tmp/out" 2>&1; }
usage1 encode --tokenizer "$deep/keep.tiktoken"
[ $? = 2 ] && grep -q -- "--tokenizer: the path is $((${#deep} + 14)) bytes, longer than the 1000 TLM allows here" "$tmp/out" &&
    pass "a $((${#deep} + 14))-byte rank file path is refused by size" || { no "a long rank file path"; cat "$tmp/out"; }
rm -rf "$tmp/long"

# ---- options: given twice, pointless together, a folder for a file
usage() { # usage PATTERN DESCRIPTION ARGS...: exit 2 saying PATTERN
    pat=$1 d=$2
    shift 2
    "$T" "$@" </dev/null >"$tmp/out" 2>&1
    st=$?
    [ $st = 2 ] && grep -q -- "$pat" "$tmp/out" && pass "$d: $(head -1 "$tmp/out")" || { no "$d (status $st)"; cat "$tmp/out"; }
}
usage "--out is given twice; give it once" "build --out twice" build --tokenizer bytes --out "$tmp/x" --out "$tmp/y" "$tmp/in"
usage "--tokenizer is given twice" "encode --tokenizer twice" encode --tokenizer bytes --tokenizer bytes
# an option whose value is missing is said as such, naming the option
# (issue 26: it read "unknown or incomplete option")
usage "option '--out' requires an argument (try tlm-data build --help)" "build --out without its value" \
    build --tokenizer bytes --out
usage "option '--tokenizer' requires an argument (try tlm-data decode --help)" "decode --tokenizer without its value" \
    decode --tokenizer
usage "--field does nothing with --format text" "build --field with --format text" \
    build --tokenizer bytes --out "$tmp/x" --format text --field body "$tmp/in"
usage "--field does nothing with --format text" "train-bpe --field with --format text" \
    train-bpe --vocab 300 --format text --field body "$tmp/in"
usage "decode: --special does nothing when decoding" "decode --special" decode --tokenizer bytes --special
usage "--vocab 300.5: not an integer (expected an integer from 257 to 2^20)" "train-bpe --vocab 300.5" \
    train-bpe --vocab 300.5 "$tmp/in"
for v in 100.5 nan inf -1 1e30 0x100 1e400; do
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
usage "no input files or folders given" "train-bpe without inputs: a usage error" train-bpe --vocab 300
# --out inside an input folder: the next build would read the dataset as text
mkdir -p "$tmp/oin" && cp "$tmp/in/a" "$tmp/oin/"
usage "--out $tmp/oin/ds lies inside the input folder $tmp/oin" "build --out inside the input folder" \
    build --tokenizer bytes --out "$tmp/oin/ds" "$tmp/oin"
usage "lies inside the input folder" "...also a level deeper, not yet made" \
    build --tokenizer bytes --out "$tmp/oin/a/b/ds" "$tmp/oin"
ok $([ ! -e "$tmp/oin/ds" ] && echo 0 || echo 1) "...and nothing is made"
rm -r "$tmp/oin"
# a rank file that is a FIFO: named as such, never opened
mkfifo "$tmp/r.tiktoken"
timeout 10 "$T" encode --tokenizer "$tmp/r.tiktoken" </dev/null >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q "r.tiktoken: is not a regular file (a FIFO)" "$tmp/out" && pass "a FIFO as the rank file: $(cat "$tmp/out")" ||
    { no "a FIFO as the rank file"; cat "$tmp/out"; }
rm "$tmp/r.tiktoken"
# a JSONL file that starts with a byte-order mark says so
printf '\357\273\277{"text": "a"}\n' >"$tmp/bom.jsonl"
"$T" build --tokenizer bytes --out "$tmp/bom" "$tmp/bom.jsonl" >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q "bom.jsonl:1:1: a byte-order mark (U+FEFF) starts the line" "$tmp/out" &&
    pass "a JSONL file with a BOM: $(tail -1 "$tmp/out")" || { no "a JSONL file with a BOM"; cat "$tmp/out"; }
# ---- --shard-tokens is bounded
"$T" build --tokenizer bytes --out "$tmp/tiny" --shard-tokens 1 "$tmp/in" >"$tmp/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "shard-tokens 1 is out of range: give a count from 1M (1048576) to 4G" "$tmp/out" &&
    [ ! -e "$tmp/tiny" ] && pass "--shard-tokens 1 is refused with the range: $(head -c 120 "$tmp/out")" ||
    { no "--shard-tokens 1 (exit $rc)"; cat "$tmp/out"; }
"$T" build --tokenizer bytes --out "$tmp/huge" --shard-tokens 8G "$tmp/in" >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "out of range" "$tmp/out" && pass "--shard-tokens 8G is refused" || no "--shard-tokens 8G"
"$T" build --tokenizer bpe99999999999 --train-bpe --out "$tmp/big-bpe" "$tmp/in" >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q "bpeN (N from 257 to 1048576)" "$tmp/out" && pass "--train-bpe bpe99999999999 is refused with the range" ||
    { no "--train-bpe bpe99999999999"; cat "$tmp/out"; }
check "--shard-tokens 1M is accepted" "$T" build --tokenizer bytes --out "$tmp/onem" --shard-tokens 1M "$tmp/in"

# ---- inputs that are not regular files are refused, not read
mkfifo "$tmp/in.fifo"
"$T" build --tokenizer bytes --out "$tmp/fifo" "$tmp/in.fifo" >"$tmp/out" 2>&1 &
p=$!
i=0
while kill -0 $p 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $p 2>/dev/null; then
    kill -9 $p
    no "a FIFO input blocks the build"
else
    wait $p
    rc=$?
    [ $rc = 1 ] && grep -q "in.fifo: is not a regular file (a FIFO)" "$tmp/out" && pass "a FIFO input is refused at once" ||
        { no "a FIFO input (exit $rc)"; cat "$tmp/out"; }
fi

# ---- SIGTERM stops a build cleanly; a SIGKILLed build's temp folder is
# removed by the next build
yes "All work and no play makes a dataset slow to build, sentence after sentence." | head -c 120000000 >"$tmp/big.txt"
check "a first dataset to keep" "$T" build --tokenizer bytes --out "$tmp/keep" "$tmp/in/a"
cp "$tmp/keep/manifest.json" "$tmp/keep.manifest"
# start_build: a build of big.txt into $tmp/keep in the background, waiting
# until its temp folder holds a shard being written
start_build() {
    # a background job of a script starts with SIGINT ignored: undo that
    env --default-signal=INT "$T" build --tokenizer bytes --out "$tmp/keep" "$tmp/big.txt" >"$tmp/big.out" 2>&1 &
    p=$!
    i=0
    while [ $i -lt 500 ] && ! ls "$tmp/keep.tmp.$p/train/" 2>/dev/null | grep -q tmp; do sleep 0.01; i=$((i + 1)); done
}
start_build
kill -TERM $p
wait $p
rc=$?
[ $rc = 143 ] && grep -q "stopped by SIGTERM: the partial dataset was removed" "$tmp/big.out" && pass "SIGTERM: exit 143 with a message" ||
    { no "SIGTERM: exit $rc"; cat "$tmp/big.out"; }
[ ! -e "$tmp/keep.tmp.$p" ] && cmp -s "$tmp/keep/manifest.json" "$tmp/keep.manifest" &&
    pass "...its temp folder is gone and the previous dataset is as it was" || { no "SIGTERM left $(ls "$tmp" | tr '\n' ' ')"; }
start_build
kill -INT $p
wait $p
rc=$?
[ $rc = 130 ] && [ ! -e "$tmp/keep.tmp.$p" ] && pass "SIGINT: exit 130, temp folder removed" || no "SIGINT: exit $rc"
start_build
kill -KILL $p
wait $p 2>/dev/null
[ -d "$tmp/keep.tmp.$p" ] && pass "SIGKILL leaves keep.tmp.$p" || no "SIGKILL left no temp folder to test with"
killed=$p
# beside it: a live build's folder (this shell's pid), a folder with a
# foreign file, and names outside the exact pattern: all must stay
mkdir -p "$tmp/keep.tmp.$$/train" "$tmp/keep.tmp.1x" "$tmp/keeper.tmp.$killed"
sh -c 'exit 0' &
gone=$!
wait $gone
mkdir -p "$tmp/keep.tmp.$gone" && echo mine >"$tmp/keep.tmp.$gone/notes.txt"
"$T" build --tokenizer bytes --out "$tmp/keep" "$tmp/in/a" >"$tmp/out" 2>&1
rc=$?
grep -q "removed $tmp/keep.tmp.$killed, left by an interrupted build (process $killed is gone)" "$tmp/out" &&
    [ $rc = 0 ] && [ ! -e "$tmp/keep.tmp.$killed" ] && pass "the next build removes the SIGKILLed build's temp folder and says so" ||
    { no "stale temp folder (exit $rc)"; cat "$tmp/out"; }
[ -d "$tmp/keep.tmp.$$" ] && [ -d "$tmp/keep.tmp.1x" ] && [ -d "$tmp/keeper.tmp.$killed" ] &&
    [ -f "$tmp/keep.tmp.$gone/notes.txt" ] && grep -q "keep.tmp.$gone .*holds files tlm-data does not write; leaving it" "$tmp/out" &&
    pass "a live build's folder, other names and a folder with foreign files are left alone" ||
    { no "stale cleanup removed too much"; ls "$tmp"; cat "$tmp/out"; }
rm -rf "$tmp/keep.tmp.$$" "$tmp/keep.tmp.1x" "$tmp/keeper.tmp.$killed" "$tmp/keep.tmp.$gone" "$tmp/big.txt"

finish
