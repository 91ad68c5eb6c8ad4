#!/bin/sh
# bench_tok.sh: tokenizer encoding speed, TLM beside the references on the
# same text, one thread each, MB/s of UTF-8 input (10^6 bytes), best of
# --reps runs of one call over the whole text:
#   llama3  TLM against tiktoken (npm `tiktoken`, its Rust core as
#           WebAssembly, loaded with the same Llama 3 ranks and pattern) and
#           the pure-JavaScript llama3-tokenizer-js
#   llama2  TLM against llama-tokenizer-js (pure JavaScript)
# on English prose (the demonstration corpus, data/corpus, when
# scripts/make-demo-data.sh has made it, else the licence texts) and code
# (this tree's C sources).  The ranks and the Llama 2 model are made from
# the npm packages, installed into a scratch folder.  Token counts are
# printed beside the speeds: equal counts show both encoded the same way.
# Not a test: numbers, no thresholds.
#   bench/bench_tok.sh [--bytes N] [--llama2-bytes N] [--reps R]   (from the build folder)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(pwd)
bytes=4000000
l2bytes=1000000
reps=3
while [ $# -gt 0 ]; do
    case "$1" in
    --bytes) bytes=$2; shift ;;
    --llama2-bytes) l2bytes=$2; shift ;;
    --reps) reps=$2; shift ;;
    *) echo "usage: bench/bench_tok.sh [--bytes N] [--llama2-bytes N] [--reps R]" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$build/bench/bench_tok" ] || { echo "bench_tok.sh: build bench/bench_tok first (make bench/bench_tok)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "bench_tok.sh: needs node and npm" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlm-benchtok.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
npm install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error llama3-tokenizer-js@1.2.0 \
    tiktoken@1.0.22 llama-tokenizer-js@1.2.2 >/dev/null
mods="$tmp/node_modules"
node "$here/tests/engine/tok/tokconf/convert.mjs" "$mods/llama3-tokenizer-js" "$tmp/llama3.tiktoken" >/dev/null
node "$here/tests/engine/tok/tokconf/llama2_model.mjs" "$mods/llama-tokenizer-js" "$tmp/llama2.model" >/dev/null

if ls "$here"/data/corpus/*.txt >/dev/null 2>&1; then
    prose_src="data/corpus (demo corpus)"
    cat "$here"/data/corpus/*.txt | head -c "$bytes" >"$tmp/prose.txt"
else
    prose_src="licence texts"
    cat /usr/share/common-licenses/* | head -c "$bytes" >"$tmp/prose.txt"
fi
# "<|" apart: the sources quote special tokens, which TLM and llama3-tokenizer-js read as special ids and
# tiktoken's encode_ordinary as text
find "$here" -name '*.[ch]' -not -path '*/data/*' | sort | xargs cat | sed 's/<|/< |/g' | head -c "$bytes" >"$tmp/code.txt"
head -c "$l2bytes" "$tmp/prose.txt" >"$tmp/prose2.txt"
head -c "$l2bytes" "$tmp/code.txt" >"$tmp/code2.txt"
echo "prose: $(wc -c <"$tmp/prose.txt") bytes of $prose_src; code: $(wc -c <"$tmp/code.txt") bytes of TLM's C sources"
echo "llama2 rows: the first $(wc -c <"$tmp/prose2.txt") bytes of each; best of $reps, one thread, node $(node --version)"

tlm() { # TOKENIZER TEXT -> "MB/s CPU-MB/s tokens"
    "$build/bench/bench_tok" --tokenizer "$1" --text "$2" --reps "$reps" |
        awk '{ for (i = 1; i <= NF; i++) { if ($i == "MB/s") m = $(i - 1); if ($i == "CPU-MB/s") c = $(i - 1)
                                           if ($i == "tokens") t = $(i - 1) } } END { print m, c, t }'
}
ref() { node "$here/bench/bench_tok_ref.mjs" "$1" "$mods" "$2" "$3" "$reps"; }
row() { # TOKENIZER TEXT-NAME ENGINE "MB/s CPU-MB/s tokens" ["TLM's MB/s CPU-MB/s tokens"]
    set -- "$1" "$2" "$3" $4 ${5:-}
    if [ $# -gt 6 ]; then
        r=$(awk -v a="$4" -v b="$7" -v c="$5" -v d="$8" 'BEGIN { printf "%.3f | %.3f", a / b, c / d }')
    else
        r="1 | 1"
    fi
    printf '| %-7s | %-5s | %-29s | %8s | %8s | %9s | %s |\n' "$1" "$2" "$3" "$4" "$5" "$6" "$r"
}
echo
echo "| tokenizer | text | encoder | MB/s | CPU-MB/s | tokens | speed / TLM's | CPU speed / TLM's |"
echo "|---|---|---|---|---|---|---|---|"
for kind in prose code; do
    a=$(tlm "$tmp/llama3.tiktoken" "$tmp/$kind.txt")
    row llama3 "$kind" "TLM (C, PCRE2 JIT)" "$a"
    row llama3 "$kind" "tiktoken 1.0.22 (WebAssembly)" "$(ref tiktoken "$tmp/llama3.tiktoken" "$tmp/$kind.txt")" "$a"
    row llama3 "$kind" "llama3-tokenizer-js 1.2.0" "$(ref llama3js - "$tmp/$kind.txt")" "$a"
done
for kind in prose code; do
    a=$(tlm "$tmp/llama2.model" "$tmp/${kind}2.txt")
    row llama2 "$kind" "TLM (C)" "$a"
    row llama2 "$kind" "llama-tokenizer-js 1.2.2" "$(ref llama2js - "$tmp/${kind}2.txt")" "$a"
done
