// ref.mjs: the reference side of the conformance tests: encodes every
// string of a gen.mjs corpus with the npm package's JavaScript encoder and
// prints one line of ids per string.  llama3: llama3-tokenizer-js (no
// <|begin_of_text|>); llama2: llama-tokenizer-js (no <s>, the leading space
// on, as SentencePiece's dummy prefix).  Bytes become a string the WHATWG
// way (TextDecoder: each maximal invalid subpart -> U+FFFD; a leading BOM
// kept), which is the invalid-UTF-8 behaviour TLM documents.
// usage: node ref.mjs llama3|llama2 PACKAGE_DIR CORPUS_BIN > ref.txt
import { readFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [flavour, pkgDir, corpus] = process.argv.slice(2);
const flavours = {
    llama3: ['bundle/llama3-tokenizer-with-baked-data.js', (t, s) => t.encode(s, { bos: false, eos: false })],
    llama2: ['llama-tokenizer.js', (t, s) => t.encode(s, false, true)],
};
if (!flavours[flavour]) {
    console.error(`ref.mjs: unknown tokenizer '${flavour}' (llama3 or llama2)`);
    process.exit(2);
}
const [file, encode] = flavours[flavour];
const tok = (await import(pathToFileURL(path.join(pkgDir, file)).href)).default;
const dec = new TextDecoder('utf-8', { ignoreBOM: true });
const buf = readFileSync(corpus);
const lines = [];
for (let o = 0; o < buf.length;) {
    const n = buf.readUInt32LE(o);
    const text = dec.decode(buf.subarray(o + 4, o + 4 + n));
    lines.push(encode(tok, text).join(' '));
    o += 4 + n;
}
writeSync(1, lines.join('\n') + '\n');
