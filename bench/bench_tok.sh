#!/bin/sh
# bench_tok.sh: Llama 3 encoding speed, TLM beside the JavaScript reference
# (npm llama3-tokenizer-js, installed into a scratch folder) on the same
# text: the demonstration corpus (data/corpus, scripts/make-demo-data.sh)
# when it is there, else the licence texts and docs on this machine.
# Prints MB/s of input text for both.  Not a test: numbers, no thresholds.
#   bench/bench_tok.sh [--bytes N] [--reps R]      (run from the build folder)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(pwd)
bytes=4000000
reps=3
while [ $# -gt 0 ]; do
    case "$1" in
    --bytes) bytes=$2; shift ;;
    --reps) reps=$2; shift ;;
    *) echo "usage: bench/bench_tok.sh [--bytes N] [--reps R]" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$build/bench/bench_tok" ] || { echo "bench_tok.sh: build bench/bench_tok first (make bench/bench_tok)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "bench_tok.sh: needs node and npm" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-benchtok.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
npm install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error llama3-tokenizer-js@1.2.0 >/dev/null
pkg="$tmp/node_modules/llama3-tokenizer-js"
node "$here/tests/engine/tok/tokconf/convert.mjs" "$pkg" "$tmp/llama3.tiktoken" >/dev/null

if ls "$here"/data/corpus/*.txt >/dev/null 2>&1; then
    src="$here/data/corpus (demo corpus)"
    cat "$here"/data/corpus/*.txt | head -c "$bytes" >"$tmp/text.txt"
else
    src="licence texts and docs"
    cat /usr/share/common-licenses/* "$here"/docs/*.md "$here"/README.md 2>/dev/null | head -c "$bytes" >"$tmp/text.txt"
fi
echo "text: $(wc -c <"$tmp/text.txt") bytes of $src; one thread each"

"$build/bench/bench_tok" --tokenizer "$tmp/llama3.tiktoken" --text "$tmp/text.txt" --reps "$reps"

cat >"$tmp/bench.mjs" <<JS
import { readFileSync } from 'node:fs';
const t = (await import('$pkg/bundle/llama3-tokenizer-with-baked-data.js')).default;
const text = readFileSync('$tmp/text.txt', 'utf8');
const n = Buffer.byteLength(text);
let best = Infinity, ids = [];
for (let r = 0; r < $reps; r++) {
    const s = process.hrtime.bigint();
    ids = t.encode(text, { bos: false, eos: false });
    const d = Number(process.hrtime.bigint() - s) / 1e9;
    if (d < best) best = d;
}
console.log('llama3-tokenizer-js llama3   ' + (n / best / 1e6).toFixed(2).padStart(8) + ' MB/s  ' + n + ' bytes -> ' +
    ids.length + ' tokens, best of $reps, node ' + process.version);
JS
node "$tmp/bench.mjs"
