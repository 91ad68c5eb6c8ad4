// gen.mjs: writes the conformance corpus as length-prefixed byte strings
// (u32 little-endian length, then the bytes), so that strings may hold any
// byte, invalid UTF-8 included.  Sources, in order:
//   1. cases.txt (hand-written; escapes as described there)
//   2. every paragraph, and every whole file, of the given prose/code files
//   3. random strings from a mixed alphabet (fixed seed: the same corpus
//      every run), some with invalid bytes spliced in
// usage: node gen.mjs CASES_TXT OUT_BIN N_RANDOM [TEXT_FILE...]
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

const [casesTxt, outBin, nRandomArg, ...textFiles] = process.argv.slice(2);
const cases = [];

function unescape(line) {
    const out = [];
    for (let i = 0; i < line.length;) {
        const c = line[i];
        if (c !== '\\') {
            const cp = line.codePointAt(i);
            out.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
            i += cp > 0xffff ? 2 : 1;
            continue;
        }
        const d = line[i + 1];
        if (d === 'n') { out.push(10); i += 2; }
        else if (d === 'r') { out.push(13); i += 2; }
        else if (d === 't') { out.push(9); i += 2; }
        else if (d === '\\') { out.push(92); i += 2; }
        else if (d === 'x') { out.push(parseInt(line.slice(i + 2, i + 4), 16)); i += 4; }
        else if (d === 'u' && line[i + 2] === '{') {
            const end = line.indexOf('}', i);
            out.push(...Buffer.from(String.fromCodePoint(parseInt(line.slice(i + 3, end), 16)), 'utf8'));
            i = end + 1;
        } else { throw new Error(`cases.txt: bad escape in: ${line}`); }
    }
    return Buffer.from(out);
}

for (const line of readFileSync(casesTxt, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    cases.push(unescape(line));
}

for (const f of textFiles) {
    if (!existsSync(f)) continue;
    const text = readFileSync(f);
    cases.push(text);
    for (const para of text.toString('latin1').split(/\n\s*\n/)) {
        if (para.trim()) cases.push(Buffer.from(para, 'latin1'));
    }
}

// A tiny seeded generator (xorshift32): the corpus must not change between runs.
let state = 0x2545f491;
function rnd(n) {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state % n;
}
// Pieces chosen to exercise every branch of the pattern.  Left out on
// purpose: U+0085, U+180E, U+FEFF (JavaScript's \s and Unicode White_Space
// disagree on them; see docs/tokenizers.md) and letters newer than Unicode 14.
const pool = [
    ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    ...'          \n\n\t\r',
    ...'.,;:!?\'"()[]{}<>-_=+*/\\|@#$%^&~`',
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'Re", "n't",
    'the', ' the', 'and', ' of', 'ing', 'tion', ' Hello', 'world', '123', '4567', '  ', '   ', '\n\n', '\r\n', ' \n',
    ...'éèêëàâäçñüößøåæœÉÀÇÑÜ', 'e\u0301', 'a\u0308',
    ...'αβγδεζηθλμπσωΑΒΓΔ', ...'абвгдежзийклмнопрстуфхцчшщыэюяАБВ',
    ...'日本語中文字漢ひらがなカタカナ한국어', '。', '、', '！',
    ...'😀😂🎉👍❤✨☕🚀', '👍🏽', '👨‍👩‍👧', '🇫🇷',
    ...'אבגדהوالعربيةहिन्दीภาษาไทย', '\u00a0', '\u2003', '\u3000', '\u2009', '\u2028',
    ...'½²³Ⅻ①٣७', '\u000b', '\u000c', '\u001f', '\u0000', '\ufffd',
    '<|eot_id|>', '<|end_of_text|>', '<|', '|>',
];
const badBytes = [[0x80], [0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0xc0, 0xaf], [0xf5]];
const nRandom = parseInt(nRandomArg, 10);
for (let k = 0; k < nRandom; k++) {
    const len = 1 + rnd(k % 10 === 0 ? 400 : 40);
    const parts = [];
    for (let i = 0; i < len; i++) {
        if (k % 7 === 3 && rnd(25) === 0) parts.push(Buffer.from(badBytes[rnd(badBytes.length)]));
        else parts.push(Buffer.from(pool[rnd(pool.length)], 'utf8'));
    }
    cases.push(Buffer.concat(parts));
}
// Long runs: the encoder's large-piece path.
cases.push(Buffer.from(' '.repeat(5000) + 'x' + '\n'.repeat(300) + '='.repeat(3000) + 'a'.repeat(2000)));
cases.push(Buffer.from('ab'.repeat(3000) + ' ' + '9'.repeat(1000) + ' ' + '日'.repeat(700)));

const chunks = [];
for (const c of cases) {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(c.length);
    chunks.push(len, c);
}
writeFileSync(outBin, Buffer.concat(chunks));
console.log(`gen.mjs: ${cases.length} strings, ${cases.reduce((a, c) => a + c.length, 0)} bytes`);
