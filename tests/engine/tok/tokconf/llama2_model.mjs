// llama2_model.mjs: writes a SentencePiece tokenizer.model (the ModelProto
// protobuf) for Llama 2 from what the npm package llama-tokenizer-js ships:
// its 32,000 pieces in id order and its merge list (Hugging Face's form of
// the model: pairs in the order they are applied).  The package has no
// scores, so they are made from the merges: a piece's score is minus the
// priority of the first merge that makes it, so that joining by score
// (SentencePiece's rule) applies merges in the package's order; pieces no
// merge makes (single characters) score below all of those.  Types: <unk>
// unknown, <s> and </s> control, <0x00>..<0xFF> byte, the rest normal;
// trainer: BPE with byte fallback; normalizer: identity, dummy prefix on,
// extra whitespace kept, spaces escaped, as Llama 2's.
// usage: node llama2_model.mjs PACKAGE_DIR OUT.model
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [pkgDir, out] = process.argv.slice(2);
if (!pkgDir || !out) {
    console.error('usage: node llama2_model.mjs PACKAGE_DIR OUT.model');
    process.exit(2);
}
const tok = (await import(pathToFileURL(path.join(pkgDir, 'llama-tokenizer.js')).href)).default;
const vocab = tok.vocabById;
if (vocab.length !== 32000) {
    console.error(`llama2_model.mjs: the package has ${vocab.length} pieces, expected 32000`);
    process.exit(1);
}
const prio = new Map();
for (const [pair, p] of tok.merges) {
    const id = tok.vocabByString.get(pair.replace(' ', ''));
    if (id !== undefined && !prio.has(id)) prio.set(id, p);
}

// protobuf writing: each helper returns the bytes of one field
function varint(v) {
    const b = [];
    v = BigInt(v);
    do {
        let c = Number(v & 0x7fn);
        v >>= 7n;
        if (v) c |= 0x80;
        b.push(c);
    } while (v);
    return b;
}
const key = (field, wt) => varint(field * 8 + wt);
const intField = (field, v) => [...key(field, 0), ...varint(v)];
const lenField = (field, body) => Buffer.concat([Buffer.from([...key(field, 2), ...varint(body.length)]),
    Buffer.from(body)]);
function floatField(field, x) {
    const f = Buffer.alloc(4);
    f.writeFloatLE(x);
    return Buffer.concat([Buffer.from(key(field, 5)), f]);
}
const chunks = [];
for (let id = 0; id < vocab.length; id++) {
    const s = vocab[id];
    const type = id === 0 ? 2 : id <= 2 ? 3 : /^<0x[0-9A-F]{2}>$/.test(s) ? 6 : 1;
    const score = type !== 1 ? 0 : prio.has(id) ? -prio.get(id) : -1e6 - id;
    const parts = [lenField(1, Buffer.from(s, 'utf8')), floatField(2, score)];
    if (type !== 1) parts.push(Buffer.from(intField(3, type)));
    chunks.push(lenField(1, Buffer.concat(parts)));
}
chunks.push(lenField(2, Buffer.from([...intField(3, 2), ...intField(35, 1)])));
chunks.push(lenField(3, Buffer.concat([lenField(1, Buffer.from('identity')),
    Buffer.from([...intField(3, 1), ...intField(4, 0), ...intField(5, 1)])])));
writeFileSync(out, Buffer.concat(chunks));
console.log(`llama2_model.mjs: ${vocab.length} pieces (${prio.size} made by merges) written to ${out}`);
