// bench_tok_ref.mjs: the JavaScript side of bench_tok.sh: encodes a text
// file in one call, best of REPS runs, with one reference tokenizer, and
// prints "MB/s CPU-MB/s tokens" (MB = 10^6 bytes of UTF-8 input; CPU: the
// process's user + system time, which on a shared machine leaves out the
// time other programs held the cores).
//   tiktoken  npm tiktoken (its Rust core built to WebAssembly), loaded with
//             the given Llama 3 rank file and Llama 3's pattern, no specials
//             (encode_ordinary; the text has none)
//   llama3js  npm llama3-tokenizer-js (pure JavaScript)
//   llama2js  npm llama-tokenizer-js (pure JavaScript, Llama 2)
// usage: node bench_tok_ref.mjs KIND NODE_MODULES_DIR RANK_FILE|- TEXT REPS
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [kind, mods, ranks, textFile, repsArg] = process.argv.slice(2);
const reps = parseInt(repsArg, 10);
const text = readFileSync(textFile, 'utf8');
const bytes = Buffer.byteLength(text);
const imp = (p) => import(pathToFileURL(path.join(mods, p)).href);
let encode;
if (kind === 'tiktoken') {
    const { Tiktoken } = createRequire(path.join(mods, 'x.js'))('tiktoken/lite');
    const pat = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|" +
        "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    const enc = new Tiktoken(readFileSync(ranks, 'utf8'), {}, pat);
    encode = () => enc.encode_ordinary(text);
} else if (kind === 'llama3js') {
    const t = (await imp('llama3-tokenizer-js/bundle/llama3-tokenizer-with-baked-data.js')).default;
    encode = () => t.encode(text, { bos: false, eos: false });
} else if (kind === 'llama2js') {
    const t = (await imp('llama-tokenizer-js/llama-tokenizer.js')).default;
    encode = () => t.encode(text, false, true);
} else {
    console.error(`bench_tok_ref.mjs: unknown kind ${kind}`);
    process.exit(2);
}
let best = Infinity, bestCpu = Infinity, n = 0;
for (let r = 0; r < reps; r++) {
    const s = process.hrtime.bigint(), c = process.cpuUsage();
    n = encode().length;
    const d = Number(process.hrtime.bigint() - s) / 1e9, u = process.cpuUsage(c);
    const dc = (u.user + u.system) / 1e6;
    if (d < best) best = d;
    if (dc < bestCpu) bestCpu = dc;
}
console.log(`${(bytes / best / 1e6).toFixed(2)} ${(bytes / bestCpu / 1e6).toFixed(2)} ${n}`);
