#!/bin/sh
# test_tokconf_llama2.sh: Llama 2 tokenizer conformance.  Installs the npm
# package llama-tokenizer-js (Llama 2's vocabulary and merges and a
# JavaScript reference encoder) into a scratch folder, makes a SentencePiece
# tokenizer.model from it (tokconf/llama2_model.mjs), converts that to a
# vocabulary file with `tlm-data vocab`, and checks that TLM's encoder, from
# either file, gives the reference's ids on the corpus of test_tokconf.sh
# (tokconf/cases.txt, paragraphs of real files, 3000 seeded random strings
# with invalid UTF-8 in some).  Prints how many strings and tokens were
# compared.  Then tlm-data finds `--tokenizer llama2` by name in a folder,
# encodes like the reference and decodes back.  Skips (77) when node/npm
# are missing or npm cannot fetch the package.
set -u
src=${TLM_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
build=${TLM_BUILDDIR:-$src}
. "$src/tests/engine/tok/tokconf/npm_pkg.sh"
npm_pkg llama-tokenizer-js 1.2.2
T="$build/dataprep/tlm-data"
conf="$src/tests/engine/tok/tokconf"

fail() { echo "not ok - $*"; echo "1..$n"; exit 1; }
n=0
node "$conf/llama2_model.mjs" "$pkg" "$tmp/llama2.model" | sed 's/^/# /'
[ -s "$tmp/llama2.model" ] || fail "could not make a tokenizer.model from the package"
"$T" vocab --tokenizer "$tmp/llama2.model" --out "$tmp/llama2.vocab" 2>&1 | sed 's/^/# /'
[ "$(head -n 1 "$tmp/llama2.vocab")" = "tlm-sentencepiece 1" ] && [ "$(grep -c '' "$tmp/llama2.vocab")" = 32004 ] ||
    fail "tlm-data vocab did not write a vocabulary file of 32000 pieces"
texts="/usr/share/common-licenses/GPL-3 $src/README.md $src/engine/tok/spm.c $src/docs/config.md"
# shellcheck disable=SC2086
node "$conf/gen.mjs" "$conf/cases.txt" "$tmp/corpus.bin" 3000 $texts | sed 's/^/# /' ||
    fail "could not generate the corpus"
node "$conf/ref.mjs" llama2 "$pkg" "$tmp/corpus.bin" >"$tmp/ref.txt" || fail "the reference encoder failed"

# The library, string by string, from the model and from the vocabulary file ...
for f in llama2.model llama2.vocab; do
    n=$((n + 1))
    "$build/tests/engine/tok/tokconf_run" "$tmp/$f" "$tmp/corpus.bin" "$tmp/ref.txt" llama2 || fail "ids differ ($f)"
done

# ... and the command line, finding llama2 by name in a folder.
mkdir "$tmp/ds" && cp "$tmp/llama2.vocab" "$tmp/ds/"
printf 'Hello, world! I\047m 12345 caf\303\251   \346\227\245\346\234\254 \360\237\230\200\n\n\tx \342\226\201y' >"$tmp/one.txt"
mine=$("$T" encode --tokenizer llama2 --data "$tmp/ds" <"$tmp/one.txt") || fail "tlm-data encode --tokenizer llama2"
cat >"$tmp/one.mjs" <<JS
import { readFileSync } from 'node:fs';
const t = (await import('$pkg/llama-tokenizer.js')).default;
console.log(t.encode(readFileSync('$tmp/one.txt', 'utf8'), false, true).join(' '));
JS
theirs=$(node "$tmp/one.mjs") || fail "node one.mjs"
n=$((n + 1))
[ "$mine" = "$theirs" ] || fail "tlm-data encode: '$mine' != reference '$theirs'"
echo "ok $n - tlm-data encode --tokenizer llama2 (found as llama2.vocab) equals the reference ($(echo "$mine" | wc -w) ids)"
# decoding gives the text back, the marker typed as U+2581 read as a space (as SentencePiece does)
back=$(echo "$mine" | "$T" decode --tokenizer llama2 --data "$tmp/ds" | od -An -c)
orig=$(sed 's/\xe2\x96\x81/ /' "$tmp/one.txt" | od -An -c)
n=$((n + 1))
[ "$back" = "$orig" ] || fail "tlm-data decode does not give the text back"
echo "ok $n - tlm-data decode --tokenizer llama2 gives the text back"
echo "1..$n"
