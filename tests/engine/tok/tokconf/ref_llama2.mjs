// ref_llama2.mjs: the reference side of the Llama 2 conformance test:
// encodes every string of a gen.mjs corpus with llama-tokenizer-js (no
// <s>, the leading space on, as SentencePiece's dummy prefix) and prints
// one line of ids per string.  Bytes become a string the WHATWG way
// (TextDecoder: each maximal invalid subpart -> U+FFFD), the invalid-UTF-8
// behaviour TLM documents.
// usage: node ref_llama2.mjs PACKAGE_DIR CORPUS_BIN > ref.txt
import { readFileSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [pkgDir, corpus] = process.argv.slice(2);
const tok = (await import(pathToFileURL(path.join(pkgDir, 'llama-tokenizer.js')).href)).default;
const dec = new TextDecoder('utf-8', { ignoreBOM: true });
const buf = readFileSync(corpus);
const lines = [];
for (let o = 0; o < buf.length;) {
    const n = buf.readUInt32LE(o);
    const text = dec.decode(buf.subarray(o + 4, o + 4 + n));
    lines.push(tok.encode(text, false, true).join(' '));
    o += 4 + n;
}
writeSync(1, lines.join('\n') + '\n');
