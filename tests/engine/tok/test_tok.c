/* test_tok.c: tokenizer unit tests that need no network: bytes identity,
 * WHATWG invalid-UTF-8 replacement and the lossless raw mode, BPE merging
 * against a naive reference (short and long pieces), special tokens, rank
 * file errors, the definition hash, and the BPE trainer (determinism,
 * vocabulary size, round trips), and SentencePiece BPE on a small made-up
 * model (score order, leftmost ties, byte fallback, the dummy prefix, the
 * two file formats and their errors, long runs).  The Llama 3 and Llama 2
 * vocabularies themselves are tested by test_tokconf*.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "engine/tok/tokenizer.h"
#include "tests/lib/tap.h"

static char dir[256];

static const char *varied[] = {
    "The quick brown fox jumps over the lazy dog.",
    "I'm sure you're right; they've gone and we'll see.",
    "int main(void) {\n    return 0;\n}\n",
    "  leading and trailing   \n\n\t\ttabs\r\n",
    "numbers 1234567 and 3.14159",
    "caf\xc3\xa9 na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80 emoji",
    "",
    "x",
};

/* equal byte strings (memcmp is not for NULL, which an empty decode gives) */
static int same(const void *a, size_t an, const void *b, size_t bn)
{
    return an == bn && (an == 0 || !memcmp(a, b, an));
}

static uint32_t xs = 12345;
static uint32_t rnd(uint32_t n)
{
    xs ^= xs << 13;
    xs ^= xs >> 17;
    xs ^= xs << 5;
    return xs % n;
}

/* decode(encode(s)) as a malloc'd buffer */
static int roundtrip(eng_tok *t, const char *s, size_t n, int flags, uint8_t **out, size_t *olen)
{
    eng_tokvec v = {0};
    tlm_err e;
    size_t cap = 0;
    *out = NULL;
    *olen = 0;
    int rc = eng_tok_encode(t, s, n, flags, &v, &e);
    if (!rc)
        rc = eng_tok_decode(t, v.ids, v.n, out, olen, &cap, &e);
    eng_tokvec_clear(&v);
    return rc;
}

/* 1 when every text of varied[] round-trips exactly through t */
static int varied_roundtrip(eng_tok *t)
{
    int ok = 1;
    for (size_t i = 0; i < sizeof varied / sizeof *varied; i++) {
        uint8_t *out;
        size_t n;
        roundtrip(t, varied[i], strlen(varied[i]), 0, &out, &n);
        ok &= same(out, n, varied[i], strlen(varied[i]));
        free(out);
    }
    return ok;
}

static void test_bytes(void)
{
    eng_tok *t;
    tlm_err e;
    TAP_OK(eng_tok_open(&t, "bytes", NULL, &e) == 0, "bytes opens");
    TAP_OK(eng_tok_vocab(t) == 256 && eng_tok_eot(t) == -1 && !strcmp(eng_tok_name(t), "bytes"),
           "bytes: 256 ids, no end-of-text token");
    uint8_t all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)(255 - i);
    eng_tokvec v = {0};
    eng_tok_encode(t, all, 256, 0, &v, &e);
    int ident = v.n == 256;
    for (int i = 0; ident && i < 256; i++)
        ident = v.ids[i] == all[i];
    TAP_OK(ident, "bytes: id = byte value, every byte");
    TAP_OK(varied_roundtrip(t), "bytes: decode(encode(text)) == text on varied text");
    eng_tokvec_clear(&v);
    eng_tok *t2;
    eng_tok_open(&t2, "bytes", NULL, &e);
    TAP_OK(!memcmp(eng_tok_sha256(t), eng_tok_sha256(t2), 32), "bytes: the definition hash is stable");
    eng_tok_free(t2);
    eng_tok_free(t);
}

/* A toy rank file: the 256 bytes, then merges given as strings. */
static void write_ranks(const char *path, const char *const *merges, int n)
{
    FILE *f = fopen(path, "w");
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int rank = 0;
    for (int i = 0; i < 256 + n; i++) {
        const uint8_t *p;
        uint8_t one;
        size_t len;
        if (i < 256) {
            one = (uint8_t)i;
            p = &one;
            len = 1;
        } else {
            p = (const uint8_t *)merges[i - 256];
            len = strlen(merges[i - 256]);
        }
        for (size_t k = 0; k < len; k += 3) {
            uint32_t v = (uint32_t)p[k] << 16 | (k + 1 < len ? (uint32_t)p[k + 1] << 8 : 0) |
                         (k + 2 < len ? p[k + 2] : 0);
            fputc(b64[v >> 18 & 63], f);
            fputc(b64[v >> 12 & 63], f);
            fputc(k + 1 < len ? b64[v >> 6 & 63] : '=', f);
            fputc(k + 2 < len ? b64[v & 63] : '=', f);
        }
        fprintf(f, " %d\n", rank++);
    }
    fclose(f);
}

/* Naive tiktoken merge: lowest-rank adjacent pair, leftmost first. */
static size_t naive_bpe(eng_tok *t, const uint8_t *p, size_t n, uint32_t *out)
{
    size_t *st = malloc((n + 1) * sizeof *st), m = n;
    for (size_t i = 0; i <= n; i++)
        st[i] = i;
    eng_tokvec one = {0};
    tlm_err e;
    for (;;) {
        uint32_t best = UINT32_MAX;
        size_t bi = 0;
        for (size_t i = 0; i + 1 < m; i++) {
            /* rank of the concatenation: encode it as a single piece and see if it is one token */
            uint32_t r = UINT32_MAX;
            for (uint32_t id = 0; id < eng_tok_vocab(t); id++) {
                size_t len;
                const uint8_t *b = eng_tok_piece(t, id, &len);
                if (len == st[i + 2] - st[i] && !memcmp(b, p + st[i], len)) {
                    r = id;
                    break;
                }
            }
            if (r < best) {
                best = r;
                bi = i;
            }
        }
        if (best == UINT32_MAX)
            break;
        memmove(st + bi + 1, st + bi + 2, (m - bi - 1) * sizeof *st);
        m--;
    }
    for (size_t i = 0; i < m; i++)
        for (uint32_t id = 0; id < eng_tok_vocab(t); id++) {
            size_t len;
            const uint8_t *b = eng_tok_piece(t, id, &len);
            if (len == st[i + 1] - st[i] && !memcmp(b, p + st[i], len)) {
                out[i] = id;
                break;
            }
        }
    free(st);
    eng_tokvec_clear(&one);
    (void)e;
    return m;
}


/* path written (mode "w") or appended to ("a") with text, then opened as
 * a rank file: its status, the message in e */
static int open_ranks(const char *path, const char *mode, const char *text, tlm_err *e)
{
    FILE *f = fopen(path, mode);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    eng_tok *t = NULL;
    int rc = eng_tok_open_file(&t, path, NULL, e);
    eng_tok_free(t);
    return rc;
}

static void test_bpe_merge(void)
{
    static const char *const merges[] = {"ab", "abc", "ba", "bab", "cc", "aa", "abab", "ca", "cab", "bb", "aaa"};
    char path[300];
    snprintf(path, sizeof path, "%s/toy.tiktoken", dir);
    write_ranks(path, merges, 11);
    eng_tok *t;
    tlm_err e;
    int rc = eng_tok_open_file(&t, path, NULL, &e);
    TAP_OK(rc == 0, "toy rank file opens%s%s", rc ? ": " : "", rc ? e.msg : "");
    if (rc)
        return;
    TAP_OK(!strcmp(eng_tok_name(t), "toy") && eng_tok_vocab(t) == 267 && eng_tok_eot(t) == -1,
           "named after the file, ranks only, no specials");
    eng_tokvec v = {0};
    eng_tok_encode(t, "abcab", 5, 0, &v, &e);
    TAP_OK(v.n == 2 && v.ids[0] == 257 && v.ids[1] == 256, "abcab -> [abc, ab] by lowest rank");
    /* random letter strings are one piece each: compare with the naive merge */
    int agree = 1, tested_long = 0;
    for (int k = 0; k < 300 && agree; k++) {
        size_t n = 1 + rnd(k % 5 == 0 ? 300 : 40);
        uint8_t s[400];
        for (size_t i = 0; i < n; i++)
            s[i] = (uint8_t)("abc"[rnd(3)]);
        tested_long += n > 64;
        v.n = 0;
        eng_tok_encode(t, s, n, 0, &v, &e);
        uint32_t ref[400];
        size_t m = naive_bpe(t, s, n, ref);
        agree = m == v.n && !memcmp(ref, v.ids, m * sizeof *ref);
        if (!agree)
            TAP_DIAG("differs on %.*s", (int)n, s);
    }
    TAP_OK(agree && tested_long > 10, "BPE merge equals the naive lowest-rank merge (300 strings, %d over 64 bytes)",
           tested_long);
    eng_tok *cl = NULL;
    eng_tokvec w = {0};
    rc = eng_tok_clone(&cl, t, &e);
    eng_tok_free(t); /* the clone owns its copy */
    t = NULL;
    if (!rc) {
        v.n = 0;
        eng_tok_encode(cl, "abcab", 5, 0, &v, &e);
        eng_tok_encode(cl, "x  abc", 6, 0, &w, &e);
    }
    TAP_OK(rc == 0 && v.n == 2 && v.ids[0] == 257 && v.ids[1] == 256 && w.n == 4 && !strcmp(eng_tok_name(cl), "toy"),
           "eng_tok_clone of a BPE tokenizer encodes alike after the original is freed");
    t = cl;
    eng_tokvec_clear(&w);
    eng_tokvec_clear(&v);
    /* errors in rank files name the line */
    rc = open_ranks(path, "w", "YQ== 0\nnot-base64! 1\n", &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "toy.tiktoken:2:"), "bad base64 is an error at file:line (%s)", e.msg);
    rc = open_ranks(path, "w", "YQ== 0\nYg== 2\n", &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "missing rank 1"), "a gap in the ranks is an error (%s)", e.msg);
    write_ranks(path, merges, 0);
    rc = open_ranks(path, "a", "YWI= 256\nYWI= 257\n", &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "repeats"), "a repeated token is an error (%s)", e.msg);
    rc = open_ranks(path, "w", "YQ== 0\n", &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "byte 0x00 is not a token"), "a rank file must cover all 256 bytes (%s)",
           e.msg);
    eng_tok *bad;
    rc = eng_tok_open(&bad, "bpe4096", dir, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "bpe4096.tiktoken"), "a missing named tokenizer says where it looked (%s)",
           e.msg);
    {   /* a rank file that is a FIFO or a folder: refused, never read */
        char fifo[600];
        snprintf(fifo, sizeof fifo, "%s/fifo.tiktoken", dir);
        alarm(20);
        rc = mkfifo(fifo, 0600) ? -1 : eng_tok_open_file(&bad, fifo, NULL, &e);
        TAP_OK(rc == TLM_EDATA && strstr(e.msg, "fifo.tiktoken: is not a regular file (a FIFO)"),
               "a FIFO rank file is refused without blocking (%s)", e.msg);
        rc = eng_tok_open_file(&bad, dir, "bpe300", &e);
        TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is a directory"), "a folder as the rank file (%s)", e.msg);
        alarm(0);
        unlink(fifo);
        rc = eng_tok_open_text(&bad, "text.tiktoken", NULL, "YQ== 0\nYg== 1\n", 14, &e);
        TAP_OK(rc == TLM_EDATA && strstr(e.msg, "text.tiktoken") && strstr(e.msg, "byte 0x00"),
               "eng_tok_open_text reads rank-file text with the same checks (%s)", e.msg);
    }
    eng_tok_free(t);
}

/* WHATWG: how many U+FFFD each invalid input becomes. */
static void test_utf8(eng_tok *t)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\x80z", "a\xef\xbf\xbdz"},
        {"\xc3", "\xef\xbf\xbd"},
        {"\xe2\x82", "\xef\xbf\xbd"},
        {"\xe2\x82X", "\xef\xbf\xbdX"},
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xf0\x9f\x98", "\xef\xbf\xbd"},
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd"},
        {"ok\xe2\x82\xac", "ok\xe2\x82\xac"},
        {"\xf0\x9f\x98\x80\xc3", "\xf0\x9f\x98\x80\xef\xbf\xbd"},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint8_t *out;
        size_t n;
        roundtrip(t, cases[i].in, strlen(cases[i].in), 0, &out, &n);
        if (!same(out, n, cases[i].out, strlen(cases[i].out))) {
            ok = 0;
            TAP_DIAG("case %zu: got %zu bytes", i, n);
        }
        free(out);
    }
    TAP_OK(ok, "invalid UTF-8 becomes U+FFFD per maximal subpart (WHATWG), %zu cases", sizeof cases / sizeof *cases);
    /* raw mode is lossless on arbitrary bytes */
    int lossless = 1;
    for (int k = 0; k < 200 && lossless; k++) {
        char s[300];
        size_t n = rnd(300);
        for (size_t i = 0; i < n; i++)
            s[i] = k % 2 ? (char)rnd(256) : "ab \n\xc3\xa9\xff"[rnd(8)];
        uint8_t *out;
        size_t m;
        roundtrip(t, s, n, ENG_TOK_RAW_BYTES, &out, &m);
        lossless = same(out, m, s, n);
        free(out);
    }
    TAP_OK(lossless, "ENG_TOK_RAW_BYTES: decode(encode(bytes)) == bytes for 200 random byte strings");
    TAP_OK(varied_roundtrip(t), "valid UTF-8 round-trips exactly (%zu varied texts)", sizeof varied / sizeof *varied);
}

static char *corpus(size_t *len)
{
    /* English-like text with enough repetition to learn merges from */
    static const char *const words[] = {"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "with",
                                        "as", "was", "on", "be", "by", "this", "are", "from", "at", "which",
                                        "tokenizer", "model", "layer", "width", "taper", "I'm", "don't",
                                        "2024", "12", "(x)", "==", "\xc3\xa9t\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac"};
    size_t cap = 200000, n = 0;
    char *s = malloc(cap);
    uint32_t saved = xs;
    xs = 777;
    while (n + 40 < cap) {
        const char *w = words[rnd(sizeof words / sizeof *words)];
        n += (size_t)snprintf(s + n, cap - n, "%s%s", w, rnd(12) == 0 ? ".\n" : " ");
    }
    xs = saved;
    *len = n;
    return s;
}

static void test_trainer(void)
{
    size_t n;
    char *text = corpus(&n);
    char a[300], b[300], c[300];
    snprintf(a, sizeof a, "%s/bpe360.tiktoken", dir);
    snprintf(b, sizeof b, "%s/again.tiktoken", dir);
    snprintf(c, sizeof c, "%s/other.tiktoken", dir);
    tlm_err e;
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        eng_bpe_trainer *tr;
        rc = eng_bpe_trainer_new(&tr, &e);
        /* feed in two pieces: the split point must not matter beyond the pieces */
        if (!rc)
            rc = eng_bpe_trainer_feed(tr, text, k == 2 ? n / 2 : n, &e);
        if (!rc)
            rc = eng_bpe_trainer_finish(tr, 360, k == 0 ? a : k == 1 ? b : c, NULL, NULL, &e);
        eng_bpe_trainer_free(tr);
    }
    TAP_OK(rc == 0, "trainer learns 360 ids%s%s", rc ? ": " : "", rc ? e.msg : "");
    char *fa = NULL, *fb = NULL, *fc = NULL;
    size_t la = 0, lb = 0, lc = 0;
    tlm_read_file(a, 1 << 24, &fa, &la, &e);
    tlm_read_file(b, 1 << 24, &fb, &lb, &e);
    tlm_read_file(c, 1 << 24, &fc, &lc, &e);
    TAP_OK(fa && fb && la == lb && !memcmp(fa, fb, la), "trainer is deterministic: same text, same rank file (%zu bytes)",
           la);
    TAP_OK(fc && (la != lc || memcmp(fa, fc, la)), "different text gives a different rank file");
    eng_tok *t, *t2;
    rc = eng_tok_open(&t, "bpe360", dir, &e);
    TAP_OK(rc == 0, "bpe360 is found in the folder by name%s%s", rc ? ": " : "", rc ? e.msg : "");
    if (rc)
        return;
    TAP_OK(eng_tok_vocab(t) == 360 && eng_tok_eot(t) == 359 && eng_tok_special(t, "<|endoftext|>") == 359,
           "bpe360: 359 ranks + <|endoftext|> = id 359");
    eng_tokvec v = {0};
    eng_tok_encode(t, text, n, 0, &v, &e);
    TAP_OK(v.n < n / 3, "the trained BPE compresses its text: %zu bytes -> %zu tokens", n, v.n);
    uint32_t maxid = 0;
    for (size_t i = 0; i < v.n; i++)
        maxid = v.ids[i] > maxid ? v.ids[i] : maxid;
    TAP_OK(maxid < 359, "ordinary text never produces the special id (max id %u)", maxid);
    uint8_t *out;
    size_t m;
    roundtrip(t, text, n, 0, &out, &m);
    TAP_OK(m == n && !memcmp(out, text, n), "bpe360: decode(encode(text)) == text");
    free(out);
    TAP_OK(varied_roundtrip(t),
           "bpe360 round-trips text it was not trained on (unseen bytes fall back to byte tokens)");
    v.n = 0;
    eng_tok_encode(t, "a<|endoftext|>b", 15, ENG_TOK_ALLOW_SPECIAL, &v, &e);
    int has = 0;
    for (size_t i = 0; i < v.n; i++)
        has |= v.ids[i] == 359;
    TAP_OK(has, "special token text becomes its id when allowed");
    v.n = 0;
    eng_tok_encode(t, "a<|endoftext|>b", 15, 0, &v, &e);
    has = 0;
    for (size_t i = 0; i < v.n; i++)
        has |= v.ids[i] == 359;
    TAP_OK(!has, "and stays text when not allowed");
    test_utf8(t);
    rc = eng_tok_open_file(&t2, b, "bpe360", &e);
    TAP_OK(rc == 0 && !memcmp(eng_tok_sha256(t), eng_tok_sha256(t2), 32), "same ranks, same definition hash");
    eng_tok_free(t2);
    rc = eng_tok_open_file(&t2, c, "bpe360", &e);
    TAP_OK(rc == 0 && memcmp(eng_tok_sha256(t), eng_tok_sha256(t2), 32), "other ranks, other definition hash");
    eng_tok_free(t2);
    /* too small a corpus for the vocabulary */
    eng_bpe_trainer *tr;
    eng_bpe_trainer_new(&tr, &e);
    eng_bpe_trainer_feed(tr, "abc abc", 7, &e);
    rc = eng_bpe_trainer_finish(tr, 4096, c, NULL, NULL, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "too small"), "a corpus too small for N ids is an error (%s)", e.msg);
    eng_bpe_trainer_free(tr);
    eng_tokvec_clear(&v);
    eng_tok_free(t);
    free(fa);
    free(fb);
    free(fc);
    free(text);
}

/* ------------------------------------------------------------ SentencePiece */
#define M "\xe2\x96\x81" /* the space marker */
static const struct {
    const char *type, *piece;
    float score;
} spm_pieces[] = {
    {"normal", M, -1}, {"normal", "a", -2}, {"normal", "b", -3}, {"normal", "c", -4}, {"normal", "ab", -10},
    {"normal", "bc", -5}, {"normal", M "a", -20}, {"normal", "aa", -6}, {"normal", M M, -7},
    {"normal", "\\t", -8},
};
#define SPM_N (3 + 256 + sizeof spm_pieces / sizeof *spm_pieces)
enum { ID_M = 259, ID_A, ID_B, ID_C, ID_AB, ID_BC, ID_MA, ID_AA, ID_MM, ID_TAB };

static char *spm_vocab_text(void)
{
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n, "tlm-sentencepiece 1\npieces %zu\nadd_dummy_prefix 1\nbyte_fallback 1\n"
                          "unknown\t0\t<unk>\ncontrol\t0\t<s>\ncontrol\t0\t</s>\n", SPM_N);
    for (int b = 0; b < 256; b++)
        n += (size_t)snprintf(s + n, cap - n, "byte\t0\t<0x%02X>\n", b);
    for (size_t i = 0; i < sizeof spm_pieces / sizeof *spm_pieces; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s\t%g\t%s\n", spm_pieces[i].type, (double)spm_pieces[i].score,
                              spm_pieces[i].piece);
    return s;
}

/* the same model as a tokenizer.model protobuf */
static size_t pb_varint(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    do {
        o[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        o[n++] |= v ? 0x80 : 0;
    } while (v);
    return n;
}

static size_t pb_piece(uint8_t *o, const char *text, int type, float score)
{
    uint8_t body[256];
    size_t n = 0, len = strlen(text), m = 0;
    body[n++] = 0x0a;
    n += pb_varint(body + n, len);
    memcpy(body + n, text, len);
    n += len;
    body[n++] = 0x15;
    memcpy(body + n, &score, 4);
    n += 4;
    if (type != 1) {
        body[n++] = 0x18;
        body[n++] = (uint8_t)type;
    }
    o[m++] = 0x0a;
    m += pb_varint(o + m, n);
    memcpy(o + m, body, n);
    return m + n;
}

static uint8_t *spm_model_bytes(size_t *len)
{
    uint8_t *o = malloc(1 << 16);
    size_t n = 0;
    n += pb_piece(o + n, "<unk>", 2, 0);
    n += pb_piece(o + n, "<s>", 3, 0);
    n += pb_piece(o + n, "</s>", 3, 0);
    for (int b = 0; b < 256; b++) {
        char t[8];
        snprintf(t, sizeof t, "<0x%02X>", b);
        n += pb_piece(o + n, t, 6, 0);
    }
    for (size_t i = 0; i < sizeof spm_pieces / sizeof *spm_pieces; i++)
        n += pb_piece(o + n, strcmp(spm_pieces[i].piece, "\\t") ? spm_pieces[i].piece : "\t", 1,
                      spm_pieces[i].score);
    static const uint8_t trainer[] = {0x12, 5, 0x18, 2, 0x98, 0x02, 1};   /* model_type BPE, byte_fallback */
    static const uint8_t norm[] = {0x1a, 6, 0x18, 1, 0x20, 0, 0x28, 1}; /* dummy prefix, keep whitespace */
    memcpy(o + n, trainer, sizeof trainer);
    n += sizeof trainer;
    memcpy(o + n, norm, sizeof norm);
    n += sizeof norm;
    *len = n;
    return o;
}

static int ids_are(eng_tok *t, const char *text, size_t n, int flags, const uint32_t *want, size_t nw)
{
    eng_tokvec v = {0};
    tlm_err e;
    int ok = eng_tok_encode(t, text, n, flags, &v, &e) == 0 && v.n == nw && (nw == 0 || !memcmp(v.ids, want, nw * 4));
    if (!ok) {
        printf("# got:");
        for (size_t i = 0; i < v.n && i < 20; i++)
            printf(" %u", v.ids[i]);
        printf("\n");
    }
    eng_tokvec_clear(&v);
    return ok;
}

static void test_spm(void)
{
    eng_tok *t = NULL, *t2 = NULL;
    tlm_err e;
    char *vt = spm_vocab_text();
    int rc = eng_tok_open_text(&t, "tiny.vocab", NULL, vt, strlen(vt), &e);
    TAP_OK(rc == 0, "a SentencePiece vocabulary file opens (%s)", rc ? e.msg : "ok");
    if (rc)
        return;
    TAP_OK(eng_tok_kind_of(t) == ENG_TOK_SPM && eng_tok_vocab(t) == SPM_N && eng_tok_eot(t) == 2 &&
           eng_tok_special(t, "<s>") == 1 && eng_tok_special(t, "</s>") == 2 && eng_tok_special(t, "a") == -1,
           "kind, vocabulary, </s> as end of text, <s> and </s> as special tokens");
    const uint32_t w1[] = {ID_MA, ID_BC};
    TAP_OK(ids_are(t, "abc", 3, 0, w1, 2), "the highest score joins first: abc -> " M "a bc, not " M " ab c");
    const uint32_t w2[] = {ID_M, ID_AA, ID_A};
    TAP_OK(ids_are(t, "aaa", 3, 0, w2, 3), "equal scores join leftmost: aaa -> " M " aa a");
    const uint32_t w3[] = {ID_M, 3 + 0xc3, 3 + 0xa9, 3 + '\n'};
    TAP_OK(ids_are(t, "\xc3\xa9\n", 3, 0, w3, 4), "characters that are no piece become byte pieces");
    const uint32_t w4[] = {ID_MA, 3 + 0xef, 3 + 0xbf, 3 + 0xbd, ID_B};
    TAP_OK(ids_are(t, "a\xff" "b", 3, 0, w4, 5), "invalid UTF-8 is U+FFFD by default (its bytes here)");
    const uint32_t w5[] = {ID_MA, 3 + 0xff, ID_B};
    TAP_OK(ids_are(t, "a\xff" "b", 3, ENG_TOK_RAW_BYTES, w5, 3), "raw bytes: an invalid byte is its byte piece");
    const uint32_t w6[] = {1, ID_M, ID_AB, 2, ID_MM, ID_A};
    TAP_OK(ids_are(t, "<s>ab</s> a", 11, ENG_TOK_ALLOW_SPECIAL, w6, 6),
           "<s> and </s> in the text are control ids with --special, each stretch with its dummy prefix");
    const uint32_t w7[] = {ID_M, 3 + '<', 3 + 's', 3 + '>'};
    TAP_OK(ids_are(t, "<s>", 3, 0, w7, 4), "without it they are text");
    const uint32_t w8[] = {ID_MM, ID_MA};
    TAP_OK(ids_are(t, M "\xe2\x96\x81" "a", 7, 0, w8, 2), "U+2581 in the text is a space, as in SentencePiece");
    const uint32_t w9[] = {ID_M, ID_TAB, 3 + 'x'};
    TAP_OK(ids_are(t, "\tx", 2, 0, w9, 3), "an escaped piece (\\t) reads as its bytes");
    TAP_OK(ids_are(t, "", 0, 0, NULL, 0), "empty text: no ids (no lone dummy prefix)");
    for (size_t k = 0; k < sizeof varied / sizeof *varied; k++) {
        uint8_t *out;
        size_t olen;
        rc = roundtrip(t, varied[k], strlen(varied[k]), 0, &out, &olen);
        TAP_OK(rc == 0 && same(out, olen, varied[k], strlen(varied[k])), "decode(encode(varied[%zu])) is the text",
               k);
        free(out);
    }
    uint8_t raw[300], *out;
    size_t olen;
    for (int i = 0; i < 300; i++)
        raw[i] = (uint8_t)rnd(256);
    rc = roundtrip(t, (const char *)raw, 300, ENG_TOK_RAW_BYTES, &out, &olen);
    TAP_OK(rc == 0 && same(out, olen, raw, 300), "raw bytes: random bytes round-trip");
    free(out);
    uint8_t *dout = NULL;
    size_t dlen = 0, dcap = 0;
    const uint32_t seq[] = {ID_MA, 2, ID_MM, ID_B};
    rc = eng_tok_decode(t, seq, 4, &dout, &dlen, &dcap, &e);
    TAP_OK(rc == 0 && same(dout, dlen, "a</s> b", 7), "decode drops the dummy prefix after </s> too");
    free(dout);

    /* a long run of spaces: n log n, not n^2 (a quadratic join would take
     * minutes): ten times the spaces may take at most 40 times as long as
     * the shorter run (n^2 takes 100x); a fixed limit would fail on a slow
     * machine or under the sanitizers */
    double dt[2] = {0, 0};
    int good = 1;
    size_t got = 0;
    for (int r = 0; r < 2; r++) {
        size_t big = r ? 200000 : 20000;
        char *sp = malloc(big + 1);
        memset(sp, ' ', big);
        sp[big] = 'a';
        eng_tokvec v = {0};
        double t0 = tlm_clock_mono();
        rc = eng_tok_encode(t, sp, big + 1, 0, &v, &e);
        dt[r] = tlm_clock_mono() - t0;
        good &= rc == 0 && v.n == big / 2 + 1 && v.ids[0] == ID_MM && v.ids[v.n - 1] == ID_MA;
        got = v.n;
        free(sp);
        eng_tokvec_clear(&v);
    }
    TAP_OK(good && dt[1] <= 40 * (dt[0] > 0.005 ? dt[0] : 0.005),
           "200,000 spaces and a: %zu ids in %.3f s, 20,000 in %.3f s (at most 40x)", got, dt[1], dt[0]);

    /* the protobuf and the vocabulary file are the same tokenizer; writing the vocabulary gives it back */
    size_t mlen;
    uint8_t *mb = spm_model_bytes(&mlen);
    rc = eng_tok_open_text(&t2, "tiny.model", NULL, (const char *)mb, mlen, &e);
    TAP_OK(rc == 0 && !memcmp(eng_tok_sha256(t), eng_tok_sha256(t2), 32),
           "tokenizer.model and the vocabulary file have the same definition hash (%s)", rc ? e.msg : "ok");
    eng_tok_free(t2);
    char vf[600];
    snprintf(vf, sizeof vf, "%s/llama2x.vocab", dir);
    rc = eng_tok_write_vocab(t, vf, &e);
    if (!rc)
        rc = eng_tok_open_file(&t2, vf, NULL, &e);
    TAP_OK(rc == 0 && !memcmp(eng_tok_sha256(t), eng_tok_sha256(t2), 32) && ids_are(t2, "abc", 3, 0, w1, 2),
           "eng_tok_write_vocab writes a file that reads back the same (%s)", rc ? e.msg : "ok");
    eng_tok_free(t2);
    /* truncated or corrupt protobuf: refused with the byte offset, never read past the end */
    int all_refused = 1;
    for (size_t cut = 1; cut < 200; cut += 7) {
        rc = eng_tok_open_text(&t2, "cut.model", NULL, (const char *)mb, cut, &e);
        if (rc == 0)
            eng_tok_free(t2);
        all_refused &= rc == TLM_EDATA;
    }
    TAP_OK(all_refused, "a truncated tokenizer.model is refused (%s)", e.msg);
    uint8_t huge[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f};
    rc = eng_tok_open_text(&t2, "huge.model", NULL, (const char *)huge, sizeof huge, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "huge.model: byte"), "a length past the end is refused (%s)", e.msg);
    mb[mlen - 3] = 1; /* remove_extra_whitespaces */
    rc = eng_tok_open_text(&t2, "ws.model", NULL, (const char *)mb, mlen, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "removes extra whitespace"),
           "a normalizer TLM does not implement is refused (%s)", e.msg);
    free(mb);
    rc = eng_tok_open_text(&t2, "tiny.vocab", "llama2", vt, strlen(vt), &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "not Llama 2's tokenizer"), "name llama2 needs Llama 2's 32000 pieces "
           "(%s)", e.msg);
    char *bad = strdup(vt);
    char *line = strstr(bad, "normal\t-2\ta");
    memcpy(line, "nurmal", 6);
    rc = eng_tok_open_text(&t2, "bad.vocab", NULL, bad, strlen(bad), &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "bad.vocab:265: type 'nurmal'"), "a bad line is named by file:line (%s)",
           e.msg);
    free(bad);
    bad = strdup(vt);
    memcpy(strstr(bad, "pieces "), "pieces 9", 8);
    rc = eng_tok_open_text(&t2, "count.vocab", NULL, bad, strlen(bad), &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "says pieces 9"), "the piece count is checked (%s)", e.msg);
    free(bad);
    /* a clone (another thread's tokenizer) encodes alike and outlives its source */
    rc = eng_tok_clone(&t2, t, &e);
    TAP_OK(rc == 0 && !memcmp(eng_tok_sha256(t), eng_tok_sha256(t2), 32) && ids_are(t2, "abc", 3, 0, w1, 2) &&
           ids_are(t2, "aaa", 3, 0, w2, 3) && eng_tok_vocab(t2) == SPM_N, "eng_tok_clone of a SentencePiece tokenizer");
    eng_tok_free(t2);
    /* found by name in a folder */
    char found[1024];
    rc = eng_tok_find("llama2", dir, found, sizeof found, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "llama2.model") && strstr(e.msg, "llama2.vocab"),
           "llama2 not found: both file names are in the message (%s)", e.msg);
    eng_tok_free(t);
    free(vt);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/tlm-test-tok.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    tlm_err e;
    tlm_mkdir_p(dir, &e);
    test_bytes();
    test_bpe_merge();
    test_trainer();
    test_spm();
    if (tlm_rm_tree(dir))
        TAP_DIAG("could not remove %s", dir);
    return tap_done();
}
