#!/bin/sh
# test_tokconf.sh: Llama 3 tokenizer conformance.  Installs the npm package
# llama3-tokenizer-js (the Llama 3 vocabulary and a JavaScript reference
# encoder) into a scratch folder, converts its vocabulary to a tiktoken rank
# file, and checks that TLM's encoder gives the reference's ids on a varied
# corpus: tokconf/cases.txt (prose, code, numbers, whitespace runs, CJK,
# emoji, accents, contractions, special tokens, invalid UTF-8), the
# paragraphs of real files, and 3000 seeded random strings.  Prints how
# many strings and tokens were compared.  Skips (77) when node/npm are
# missing or npm cannot fetch the package.
set -u
src=${TLM_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
build=${TLM_BUILDDIR:-$src}
. "$src/tests/engine/tok/tokconf/npm_pkg.sh"
npm_pkg llama3-tokenizer-js 1.2.0

fail() { echo "not ok - $*"; echo "1..1"; exit 1; }
node "$src/tests/engine/tok/tokconf/convert.mjs" "$pkg" "$tmp/llama3.tiktoken" | sed 's/^/# /' ||
    fail "could not convert the package's vocabulary"
texts="/usr/share/common-licenses/GPL-3 $src/README.md $src/engine/tok/bpe.c $src/docs/config.md"
# shellcheck disable=SC2086
node "$src/tests/engine/tok/tokconf/gen.mjs" "$src/tests/engine/tok/tokconf/cases.txt" "$tmp/corpus.bin" 3000 $texts | sed 's/^/# /' ||
    fail "could not generate the corpus"
node "$src/tests/engine/tok/tokconf/ref.mjs" llama3 "$pkg" "$tmp/corpus.bin" >"$tmp/ref.txt" || fail "the reference encoder failed"

# The library, string by string ...
"$build/tests/engine/tok/tokconf_run" "$tmp/llama3.tiktoken" "$tmp/corpus.bin" "$tmp/ref.txt" || exit 1

# ... and the command line that scripts use, on one mixed string.
printf 'Hello, world! I\047m 12345 caf\303\251 \346\227\245\346\234\254 \360\237\230\200\n\n  x' >"$tmp/one.txt"
mine=$("$build/dataprep/tlm-data" encode --tokenizer "$tmp/llama3.tiktoken" <"$tmp/one.txt") || fail "tlm-data encode"
cat >"$tmp/one.mjs" <<JS
import { readFileSync } from 'node:fs';
const t = (await import('$pkg/bundle/llama3-tokenizer-with-baked-data.js')).default;
console.log(t.encode(readFileSync('$tmp/one.txt', 'utf8'), { bos: false, eos: false }).join(' '));
JS
theirs=$(node "$tmp/one.mjs") || fail "node one.mjs"
[ "$mine" = "$theirs" ] || fail "tlm-data encode: '$mine' != reference '$theirs'"
back=$(echo "$mine" | "$build/dataprep/tlm-data" decode --tokenizer "$tmp/llama3.tiktoken" | od -An -c)
orig=$(od -An -c <"$tmp/one.txt")
[ "$back" = "$orig" ] || fail "tlm-data decode does not give the text back"
echo "ok 2 - tlm-data encode equals the reference and decode inverts it ($(echo "$mine" | wc -w) ids)"
echo "1..2"
