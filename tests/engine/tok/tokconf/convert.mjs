// convert.mjs: writes the Llama 3 tiktoken rank file (llama3.tiktoken) from
// the vocabulary that the npm package llama3-tokenizer-js ships.
//
// The package stores Hugging Face "byte-level" token strings: every byte is
// shown as one printable character (GPT-2's byte-to-unicode table).  Token
// id i of the first 128,000 is Llama 3's rank i; the 256 special tokens
// after them are not part of a rank file (TLM defines them by name).
//
// usage: node convert.mjs PACKAGE_DIR OUT_FILE
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [pkgDir, out] = process.argv.slice(2);
if (!pkgDir || !out) {
    console.error('usage: node convert.mjs PACKAGE_DIR OUT_FILE');
    process.exit(2);
}
const mod = await import(pathToFileURL(path.join(pkgDir, 'bundle/llama3-tokenizer-with-baked-data.js')).href);
const tok = mod.default;

// The byte <-> character table: bytes that are printable Latin-1 stand for
// themselves, the other 68 are moved to U+0100.. in byte order.
const charToByte = new Map();
let shifted = 0;
for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    charToByte.set(String.fromCodePoint(printable ? b : 256 + shifted++), b);
}

const RANKS = 128000;
if (tok.vocabById.length < RANKS) {
    console.error(`convert.mjs: the package has ${tok.vocabById.length} tokens, expected at least ${RANKS}`);
    process.exit(1);
}
const lines = [];
for (let id = 0; id < RANKS; id++) {
    const bytes = [];
    for (const ch of tok.vocabById[id]) {
        const b = charToByte.get(ch);
        if (b === undefined) {
            console.error(`convert.mjs: token ${id} has a character outside the byte table: U+${ch.codePointAt(0).toString(16)}`);
            process.exit(1);
        }
        bytes.push(b);
    }
    lines.push(Buffer.from(bytes).toString('base64') + ' ' + id);
}
writeFileSync(out, lines.join('\n') + '\n');
console.log(`convert.mjs: ${RANKS} ranks written to ${out}`);
