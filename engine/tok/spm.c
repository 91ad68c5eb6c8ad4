/* spm.c: SentencePiece BPE as Llama 2 uses it (tokenizer `llama2`):
 * loading a tokenizer.model (the ModelProto protobuf, read by a small
 * bounded reader) or TLM's plain vocabulary file converted from one
 * (docs/data.md, "SentencePiece vocabulary files"), writing that file, and
 * encoding.
 *
 * Encoding, as sentencepiece's BPE model does it with Llama 2's options:
 * the text gets the "dummy prefix" (one space in front), every space is
 * the marker U+2581, the text is cut into characters, and the adjacent pair
 * whose concatenation is a piece with the highest score is joined, leftmost
 * on a tie, until no pair is a piece.  A character that is no piece becomes
 * the byte pieces <0xNN> of its UTF-8 bytes (byte fallback), else <unk>.
 * Joining uses a heap with lazy deletion, so a long run (a megabyte of
 * spaces) costs n log n.  Inside, the marker is kept as a plain space byte
 * (pieces are stored the way they decode), and when no piece holds a
 * non-space followed by a space, which is true of Llama 2, the text is
 * encoded word by word (a word = spaces then non-spaces): no join can
 * cross such a boundary, so the ids are the same and short words can be
 * cached. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checked.h"
#include "common/fileio.h"
#include "common/sha256.h"
#include "common/vec.h"
#include "engine/tok/internal.h"

#define MAX_MODEL_FILE (256u << 20) /* bytes */
#define MAX_PIECES (1u << 20)
#define MAX_PIECE_BYTES 4096
#define MARKER "\xe2\x96\x81"       /* U+2581, SentencePiece's space */
#define VOCAB_MAGIC "tlm-sentencepiece 1"

static const char *const type_names[] = {"", "normal", "unknown", "control", "user_defined", "unused", "byte"};

/* ------------------------------------------------------------ building */
typedef struct spm_build {
    const char *path;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    uint32_t *off;
    uint8_t *type;
    float *score;
    size_t n, off_cap, type_cap, score_cap;
    int have_byte[256];
} spm_build;

static void build_free(spm_build *b)
{
    free(b->arena);
    free(b->off);
    free(b->type);
    free(b->score);
}

/* One piece in its SentencePiece text form (U+2581 for spaces, "<0x0A>"
 * for a byte piece); stored the way it decodes. */
static int add_piece(spm_build *b, const uint8_t *s, size_t len, int type, float score, const char *where,
                     tlm_err *e)
{
    if (b->n >= MAX_PIECES)
        return tlm_errf(e, TLM_EDATA, "%s: more than %u pieces", where, MAX_PIECES);
    if (len == 0 || len > MAX_PIECE_BYTES)
        return tlm_errf(e, TLM_EDATA, "%s: piece %zu is %zu bytes; expected 1 to %d", where, b->n, len,
                        MAX_PIECE_BYTES);
    if (type < TOK_SPM_NORMAL || type > TOK_SPM_BYTE)
        return tlm_errf(e, TLM_EDATA, "%s: piece %zu has type %d; expected 1 (normal) to 6 (byte)", where, b->n,
                        type);
    if (type == TOK_SPM_USER || type == TOK_SPM_UNUSED)
        return tlm_errf(e, TLM_EDATA, "%s: piece %zu is of type %s, which TLM's SentencePiece BPE does not "
                        "implement (Llama 2 has none)", where, b->n, type_names[type]);
    if (!isfinite(score))
        return tlm_errf(e, TLM_EDATA, "%s: piece %zu has a score that is not a finite number", where, b->n);
    if (tlm_grow(&b->off, &b->off_cap, b->n + 2, sizeof *b->off, 1024) ||
        tlm_grow(&b->type, &b->type_cap, b->n + 1, 1, 1024) ||
        tlm_grow(&b->score, &b->score_cap, b->n + 1, sizeof *b->score, 1024) ||
        tlm_grow(&b->arena, &b->arena_cap, b->arena_len + len, 1, 1 << 16))
        return tlm_errf(e, TLM_ENOMEM, "out of memory reading %s", where);
    uint8_t *dst = b->arena + b->arena_len;
    size_t m = 0;
    if (type == TOK_SPM_BYTE) {
        unsigned v;
        char tmp[8];
        if (len != 6 || (memcpy(tmp, s, 6), tmp[6] = '\0', sscanf(tmp, "<0x%2X>", &v) != 1) || s[5] != '>' ||
            !strchr("0123456789ABCDEF", s[3]) || !strchr("0123456789ABCDEF", s[4]))
            return tlm_errf(e, TLM_EDATA, "%s: byte piece %zu is \"%.*s\"; expected <0x00> to <0xFF>", where, b->n,
                            (int)(len < 40 ? len : 40), (const char *)s);
        if (b->have_byte[v])
            return tlm_errf(e, TLM_EDATA, "%s: byte piece <0x%02X> appears twice", where, v);
        b->have_byte[v] = 1;
        dst[m++] = (uint8_t)v;
    } else if (type == TOK_SPM_NORMAL) {
        for (size_t i = 0; i < len;) {
            if (i + 3 <= len && !memcmp(s + i, MARKER, 3)) {
                dst[m++] = ' ';
                i += 3;
            } else {
                dst[m++] = s[i++];
            }
        }
    } else {
        memcpy(dst, s, len);
        m = len;
    }
    b->off[b->n] = (uint32_t)b->arena_len;
    b->type[b->n] = (uint8_t)type;
    b->score[b->n] = score;
    b->arena_len += m;
    b->n++;
    b->off[b->n] = (uint32_t)b->arena_len;
    return 0;
}

/* Move the pieces into t, check the special ones, build the map. */
static int finish(eng_tok *t, spm_build *b, int dummy_prefix, int byte_fallback, tlm_err *e)
{
    const char *path = b->path;
    if (b->n == 0)
        return tlm_errf(e, TLM_EDATA, "%s: no pieces", path);
    t->kind = ENG_TOK_SPM;
    t->n_ranks = t->vocab = (uint32_t)b->n;
    t->arena = b->arena;
    t->off = b->off;
    t->spm_type = b->type;
    t->spm_score = b->score;
    b->arena = NULL;
    b->off = NULL;
    b->type = NULL;
    b->score = NULL;
    t->spm_dummy_prefix = dummy_prefix;
    t->spm_byte_fallback = byte_fallback;
    t->spm_unk = t->spm_bos = t->eot = -1;
    t->spm_split = 1;
    int nbytes = 0;
    for (uint32_t id = 0; id < t->n_ranks; id++) {
        const uint8_t *p = t->arena + t->off[id];
        size_t n = t->off[id + 1] - t->off[id];
        switch (t->spm_type[id]) {
        case TOK_SPM_UNKNOWN:
            if (t->spm_unk >= 0)
                return tlm_errf(e, TLM_EDATA, "%s: two unknown pieces (%d and %u); expected one", path, t->spm_unk,
                                id);
            t->spm_unk = (int32_t)id;
            break;
        case TOK_SPM_CONTROL:
            if (n == 3 && !memcmp(p, "<s>", 3))
                t->spm_bos = (int32_t)id;
            else if (n == 4 && !memcmp(p, "</s>", 4))
                t->eot = (int32_t)id;
            break;
        case TOK_SPM_BYTE:
            t->byte_id[p[0]] = id;
            nbytes++;
            break;
        default:
            for (size_t i = 1; i < n; i++)
                if (p[i] == ' ' && p[i - 1] != ' ')
                    t->spm_split = 0; /* a piece joins a word to the next: encode the text whole */
        }
    }
    if (t->spm_unk < 0)
        return tlm_errf(e, TLM_EDATA, "%s: no unknown piece (<unk>); a SentencePiece model has one", path);
    if (byte_fallback && nbytes != 256)
        return tlm_errf(e, TLM_EDATA, "%s: byte fallback needs the 256 byte pieces <0x00>..<0xFF>; there are %d",
                        path, nbytes);
    if (!strcmp(t->name, "llama2") &&
        (t->n_ranks != 32000 || t->spm_unk != 0 || t->spm_bos != 1 || t->eot != 2 || !byte_fallback))
        return tlm_errf(e, TLM_EDATA, "%s: not Llama 2's tokenizer: expected 32000 pieces with <unk> <s> </s> at "
                        "0, 1, 2 and byte fallback; it has %u pieces, <unk> %d, <s> %d, </s> %d, byte fallback %s",
                        path, t->n_ranks, t->spm_unk, t->spm_bos, t->eot, byte_fallback ? "on" : "off");
    return tok_map_build(t, e) ? tlm_err_prefix(e, "%s", path) : 0;
}

/* ------------------------------------------------------------ protobuf */
/* Just enough of the protobuf wire format for ModelProto: every length is
 * checked against what is left before use, varints are at most 10 bytes. */
typedef struct pb {
    const uint8_t *p, *end;
} pb;

static int pb_varint(pb *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int k = 0; k < 10; k++) {
        if (r->p >= r->end)
            return -1;
        uint8_t c = *r->p++;
        if (k == 9 && c > 1)
            return -1; /* more than 64 bits */
        x |= (uint64_t)(c & 0x7f) << (7 * k);
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

typedef struct pb_field {
    uint32_t num;
    int wt;
    uint64_t v;          /* varint, fixed32 and fixed64 values */
    const uint8_t *data; /* length-delimited */
    size_t len;
} pb_field;

/* Next field of r; 1 at the end, 0 read one, -1 malformed. */
static int pb_next(pb *r, pb_field *f)
{
    if (r->p >= r->end)
        return 1;
    uint64_t key;
    if (pb_varint(r, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
        return -1;
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    size_t left;
    switch (f->wt) {
    case 0:
        return pb_varint(r, &f->v);
    case 1:
    case 5: {
        size_t k = f->wt == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < k)
            return -1;
        f->v = 0;
        for (size_t i = 0; i < k; i++)
            f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += k;
        return 0;
    }
    case 2:
        if (pb_varint(r, &f->v))
            return -1;
        left = (size_t)(r->end - r->p);
        if (f->v > left)
            return -1;
        f->data = r->p;
        f->len = (size_t)f->v;
        r->p += f->len;
        return 0;
    default:
        return -1; /* groups (3, 4) and reserved types */
    }
}

static float pb_float(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static int pb_bad(const char *path, const uint8_t *base, const pb *r, const char *what, tlm_err *e)
{
    return tlm_errf(e, TLM_EDATA, "%s: byte %zu: %s is not well-formed protobuf (a SentencePiece tokenizer.model "
                    "was expected)", path, (size_t)(r->p - base), what);
}

int tok_spm_load_model(eng_tok *t, const char *path, const uint8_t *data, size_t len, tlm_err *e)
{
    if (len > MAX_MODEL_FILE)
        return tlm_errf(e, TLM_EDATA, "%s: larger than %u bytes", path, MAX_MODEL_FILE);
    spm_build b = {.path = path};
    pb top = {data, data + len};
    pb_field f;
    int rc = 0, r, model_type = 1 /* proto default: unigram */, byte_fallback = 0, dummy_prefix = 1,
        remove_ws = 1, escape_ws = 1, charsmap = 0;
    char normname[64] = "";
    while (!rc && (r = pb_next(&top, &f)) == 0) {
        if (f.wt != 2 || f.num > 3)
            continue; /* self-test data, denormaliser, unknown fields: not needed to encode */
        pb sub = {f.data, f.data + f.len};
        pb_field g;
        if (f.num == 1) { /* SentencePiece { piece = 1; score = 2; type = 3 } */
            const uint8_t *s = NULL;
            size_t slen = 0;
            float score = 0;
            int type = TOK_SPM_NORMAL;
            while ((r = pb_next(&sub, &g)) == 0) {
                if (g.num == 1 && g.wt == 2) {
                    s = g.data;
                    slen = g.len;
                } else if (g.num == 2 && g.wt == 5) {
                    score = pb_float(g.v);
                } else if (g.num == 3 && g.wt == 0) {
                    type = g.v > 100 ? 100 : (int)g.v;
                }
            }
            if (r < 0)
                return build_free(&b), pb_bad(path, data, &sub, "a piece", e);
            if (!s)
                return build_free(&b), tlm_errf(e, TLM_EDATA, "%s: piece %zu has no text", path, b.n);
            rc = add_piece(&b, s, slen, type, score, path, e);
        } else if (f.num == 2) { /* TrainerSpec: model_type = 3, byte_fallback = 35 */
            while ((r = pb_next(&sub, &g)) == 0)
                if (g.wt == 0 && g.num == 3)
                    model_type = g.v > 100 ? 100 : (int)g.v;
                else if (g.wt == 0 && g.num == 35)
                    byte_fallback = g.v != 0;
            if (r < 0)
                return build_free(&b), pb_bad(path, data, &sub, "the trainer spec", e);
        } else { /* NormalizerSpec: name 1, precompiled_charsmap 2, add_dummy_prefix 3, remove_extra_whitespaces 4,
                    escape_whitespaces 5 */
            while ((r = pb_next(&sub, &g)) == 0) {
                if (g.num == 1 && g.wt == 2)
                    snprintf(normname, sizeof normname, "%.*s", (int)(g.len < 60 ? g.len : 60),
                             (const char *)g.data);
                else if (g.num == 2 && g.wt == 2)
                    charsmap = g.len > 0;
                else if (g.wt == 0 && g.num == 3)
                    dummy_prefix = g.v != 0;
                else if (g.wt == 0 && g.num == 4)
                    remove_ws = g.v != 0;
                else if (g.wt == 0 && g.num == 5)
                    escape_ws = g.v != 0;
            }
            if (r < 0)
                return build_free(&b), pb_bad(path, data, &sub, "the normalizer spec", e);
        }
    }
    if (!rc && r < 0)
        rc = pb_bad(path, data, &top, "the model", e);
    if (!rc && model_type != 2)
        rc = tlm_errf(e, TLM_EDATA, "%s: a SentencePiece model of type %d (%s); TLM implements BPE (type 2) only, "
                      "as Llama 2 uses it", path, model_type, model_type == 1 ? "unigram" : "not BPE");
    if (!rc && (charsmap || remove_ws || !escape_ws))
        rc = tlm_errf(e, TLM_EDATA, "%s: the normalizer '%s' %s; TLM implements the identity normalizer without "
                      "removing extra whitespace, as Llama 2 uses it", path, normname,
                      charsmap ? "rewrites characters" : remove_ws ? "removes extra whitespace"
                                                               : "does not mark spaces");
    if (!rc)
        rc = finish(t, &b, dummy_prefix, byte_fallback, e);
    build_free(&b);
    return rc;
}

/* ------------------------------------------------------------ vocabulary files */
int tok_spm_is_vocab(const char *text, size_t len)
{
    size_t m = strlen(VOCAB_MAGIC);
    return len >= m && !memcmp(text, VOCAB_MAGIC, m) && (len == m || text[m] == '\n' || text[m] == '\r');
}

static int unescape(const char *s, size_t n, uint8_t *out, size_t *m)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            out[o++] = (uint8_t)s[i];
            continue;
        }
        if (++i >= n)
            return -1;
        char c = s[i];
        if (c == '\\' || c == 't' || c == 'n' || c == 'r') {
            out[o++] = c == '\\' ? '\\' : c == 't' ? '\t' : c == 'n' ? '\n' : '\r';
        } else if (c == 'x' && i + 2 < n) {
            unsigned v = 0;
            for (size_t k = 1; k <= 2; k++) {
                char h = s[i + k];
                int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (d < 0)
                    return -1;
                v = v * 16 + (unsigned)d;
            }
            out[o++] = (uint8_t)v;
            i += 2;
        } else {
            return -1;
        }
    }
    *m = o;
    return 0;
}

int tok_spm_load_vocab(eng_tok *t, const char *path, const char *text, size_t len, tlm_err *e)
{
    spm_build b = {.path = path};
    int rc = 0, dummy_prefix = -1, byte_fallback = -1;
    long want = -1;
    uint8_t *buf = malloc(MAX_PIECE_BYTES + 1);
    if (!buf)
        return tlm_errf(e, TLM_ENOMEM, "out of memory reading %s", path);
    size_t lineno = 0;
    for (size_t i = 0; !rc && i < len;) {
        size_t eol = i;
        while (eol < len && text[eol] != '\n')
            eol++;
        size_t end = eol > i && text[eol - 1] == '\r' ? eol - 1 : eol;
        const char *l = text + i;
        size_t n = end - i;
        i = eol + 1;
        if (++lineno == 1) {
            if (!tok_spm_is_vocab(l, n))
                rc = tlm_errf(e, TLM_EDATA, "%s:1: expected \"%s\"", path, VOCAB_MAGIC);
            continue;
        }
        if (n == 0)
            continue;
        char key[32];
        if (l[0] >= 'a' && l[0] <= 'z' && memchr(l, '\t', n) == NULL) { /* an option: "name value" */
            long v;
            char extra;
            char line[96];
            snprintf(line, sizeof line, "%.*s", (int)(n < 90 ? n : 90), l);
            if (n >= 90 || sscanf(line, "%31s %ld %c", key, &v, &extra) != 2) {
                rc = tlm_errf(e, TLM_EDATA, "%s:%zu: expected an option (\"pieces N\", \"add_dummy_prefix 0|1\", "
                              "\"byte_fallback 0|1\") or a piece (\"TYPE<tab>SCORE<tab>PIECE\")", path, lineno);
            } else if (!strcmp(key, "pieces") && v >= 1 && v <= (long)MAX_PIECES && want < 0) {
                want = v;
            } else if (!strcmp(key, "add_dummy_prefix") && (v == 0 || v == 1) && dummy_prefix < 0) {
                dummy_prefix = (int)v;
            } else if (!strcmp(key, "byte_fallback") && (v == 0 || v == 1) && byte_fallback < 0) {
                byte_fallback = (int)v;
            } else {
                rc = tlm_errf(e, TLM_EDATA, "%s:%zu: option '%s %ld' is unknown, given twice or out of range "
                              "(pieces 1..%u, the others 0 or 1)", path, lineno, key, v, MAX_PIECES);
            }
            continue;
        }
        const char *t1 = memchr(l, '\t', n), *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(l + n - t1 - 1)) : NULL;
        if (!t2) {
            rc = tlm_errf(e, TLM_EDATA, "%s:%zu: expected \"TYPE<tab>SCORE<tab>PIECE\"", path, lineno);
            break;
        }
        int type = 0;
        for (int k = 1; k <= TOK_SPM_BYTE; k++)
            if ((size_t)(t1 - l) == strlen(type_names[k]) && !memcmp(l, type_names[k], (size_t)(t1 - l)))
                type = k;
        char num[48];
        size_t sl = (size_t)(t2 - t1 - 1);
        char *numend;
        snprintf(num, sizeof num, "%.*s", (int)(sl < 40 ? sl : 40), t1 + 1);
        double score = sl > 0 && sl < 40 ? strtod(num, &numend) : NAN;
        size_t plen = (size_t)(l + n - t2 - 1), m = 0;
        if (!type)
            rc = tlm_errf(e, TLM_EDATA, "%s:%zu: type '%.*s'; expected normal, unknown, control or byte", path,
                          lineno, (int)((t1 - l) < 20 ? (t1 - l) : 20), l);
        else if (isnan(score) || *numend || score < -3.4e38 || score > 3.4e38)
            rc = tlm_errf(e, TLM_EDATA, "%s:%zu: score '%s' is not a number", path, lineno, num);
        else if (plen > 4 * MAX_PIECE_BYTES || unescape(t2 + 1, plen, buf, &m) || m > MAX_PIECE_BYTES)
            rc = tlm_errf(e, TLM_EDATA, "%s:%zu: the piece has a bad escape (\\\\ \\t \\n \\r \\xHH) or is over %d "
                          "bytes", path, lineno, MAX_PIECE_BYTES);
        else {
            char where[1100];
            snprintf(where, sizeof where, "%s:%zu", path, lineno);
            rc = add_piece(&b, buf, m, type, (float)score, where, e);
        }
    }
    free(buf);
    if (!rc && lineno == 0)
        rc = tlm_errf(e, TLM_EDATA, "%s: empty; expected \"%s\"", path, VOCAB_MAGIC);
    if (!rc && (want < 0 || dummy_prefix < 0 || byte_fallback < 0))
        rc = tlm_errf(e, TLM_EDATA, "%s: the options pieces, add_dummy_prefix and byte_fallback must all be given",
                      path);
    if (!rc && (size_t)want != b.n)
        rc = tlm_errf(e, TLM_EDATA, "%s: says pieces %ld but holds %zu", path, want, b.n);
    if (!rc)
        rc = finish(t, &b, dummy_prefix, byte_fallback, e);
    build_free(&b);
    return rc;
}

/* A piece in its SentencePiece text form, escaped for a vocabulary line. */
static void put_piece(FILE *f, const eng_tok *t, uint32_t id)
{
    const uint8_t *p = t->arena + t->off[id];
    size_t n = t->off[id + 1] - t->off[id];
    if (t->spm_type[id] == TOK_SPM_BYTE) {
        fprintf(f, "<0x%02X>", p[0]);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == ' ' && t->spm_type[id] == TOK_SPM_NORMAL)
            fputs(MARKER, f);
        else if (c == '\\')
            fputs("\\\\", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

int eng_tok_write_vocab(const eng_tok *t, const char *path, tlm_err *e)
{
    if (t->kind != ENG_TOK_SPM)
        return tlm_errf(e, TLM_ECONFIG, "tokenizer %s is not a SentencePiece model: nothing to write as a "
                        "vocabulary file", t->name);
    tlm_atomic a;
    if (tlm_atomic_open(&a, path, e))
        return tlm_err_prefix(e, "writing the vocabulary");
    fprintf(a.f, "%s\npieces %u\nadd_dummy_prefix %d\nbyte_fallback %d\n", VOCAB_MAGIC, t->n_ranks,
            t->spm_dummy_prefix, t->spm_byte_fallback);
    for (uint32_t id = 0; id < t->n_ranks; id++) {
        fprintf(a.f, "%s\t%.9g\t", type_names[t->spm_type[id]], (double)t->spm_score[id]);
        put_piece(a.f, t, id);
        fputc('\n', a.f);
    }
    return tlm_atomic_commit(&a, e);
}

void tok_spm_sha(eng_tok *t)
{
    tlm_sha256 s;
    tlm_sha256_init(&s);
    char line[2 * MAX_PIECE_BYTES];
    int k = snprintf(line, sizeof line, "tlm-tokenizer-definition 1\nkind sentencepiece-bpe\npieces %u\n"
                     "add_dummy_prefix %d\nbyte_fallback %d\n", t->n_ranks, t->spm_dummy_prefix,
                     t->spm_byte_fallback);
    tlm_sha256_update(&s, line, (size_t)k);
    for (uint32_t id = 0; id < t->n_ranks; id++) {
        k = snprintf(line, sizeof line, "%d %.9g ", t->spm_type[id], (double)t->spm_score[id]);
        size_t m = (size_t)k + tok_base64_encode(t->arena + t->off[id], t->off[id + 1] - t->off[id], line + k);
        line[m++] = '\n';
        tlm_sha256_update(&s, line, m);
    }
    tlm_sha256_final(&s, t->sha);
}

/* ------------------------------------------------------------ encoding */
typedef struct tok_sym {
    uint32_t start, end; /* bytes of the word */
    int32_t prev, next;
    int32_t id;          /* the piece, or -1: not a piece (byte fallback) */
    uint32_t ver;
} tok_sym;

typedef struct tok_spm_ent {
    float score;
    uint32_t pos, ver;
    int32_t id;
} tok_spm_ent;

static inline int ent_before(const tok_spm_ent *a, const tok_spm_ent *b)
{
    return a->score > b->score || (a->score == b->score && a->pos < b->pos);
}

TOK_HEAP_DEFINE(ent, tok_spm_ent, ent_before)

/* The pair (i, next(i)) as a heap entry when it is a piece. */
static void push_pair(eng_tok *t, const uint8_t *w, int32_t i, size_t *hn)
{
    tok_sym *s = t->syms;
    int32_t j = s[i].next;
    if (j < 0)
        return;
    int64_t id = tok_map_get(t, w + s[i].start, s[j].end - s[i].start);
    if (id >= 0)
        ent_push(t->sheap, hn, (tok_spm_ent){t->spm_score[id], s[i].start, s[i].ver, (int32_t)id});
}

static int emit(eng_tok *t, const uint8_t *w, const tok_sym *s, eng_tokvec *out, tlm_err *e)
{
    if (s->id >= 0)
        return eng_tokvec_push(out, (uint32_t)s->id, e);
    for (uint32_t k = s->start; k < s->end; k++) {
        int rc = eng_tokvec_push(out, t->spm_byte_fallback ? t->byte_id[w[k]] : (uint32_t)t->spm_unk, e);
        if (rc || !t->spm_byte_fallback)
            return rc; /* without byte fallback the whole character is one <unk> */
    }
    return 0;
}

static int merge_word(eng_tok *t, const uint8_t *w, size_t n, eng_tokvec *out, tlm_err *e)
{
    int rc;
    if (tlm_grow(&t->syms, &t->syms_cap, n, sizeof *t->syms, 64) ||
        tlm_grow(&t->sheap, &t->sheap_cap, 3 * n, sizeof *t->sheap, 64))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (merging a word of %zu bytes)", n);
    tok_sym *s = t->syms;
    size_t m = 0, bad;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; m++) {
        size_t k = w[i] < 0x80 ? 1 : tlm_utf8_seq(w + i, n - i, &bad);
        if (!k)
            k = 1; /* raw bytes: each invalid byte is a character of its own */
        int64_t id = tok_map_get(t, w + i, k);
        s[m] = (tok_sym){(uint32_t)i, (uint32_t)(i + k), (int32_t)m - 1, (int32_t)m + 1, (int32_t)id, 0};
        i += k;
    }
    s[m - 1].next = -1;
    size_t hn = 0;
    for (size_t i = 0; i + 1 < m; i++)
        push_pair(t, w, (int32_t)i, &hn);
    /* positions are byte offsets; map them back to symbols through a side index */
    while (hn) {
        tok_spm_ent x = ent_pop(t->sheap, &hn);
        int32_t a = t->spm_at[x.pos];
        if (a < 0 || s[a].ver != x.ver || s[a].next < 0)
            continue; /* stale: the pair changed since it was pushed */
        int32_t b = s[a].next;
        s[a].end = s[b].end;
        s[a].id = x.id;
        s[a].next = s[b].next;
        if (s[a].next >= 0)
            s[s[a].next].prev = a;
        t->spm_at[s[b].start] = -1;
        s[a].ver++;
        if (hn + 2 > t->sheap_cap && tlm_grow(&t->sheap, &t->sheap_cap, hn + 2, sizeof *t->sheap, 64))
            return tlm_errf(e, TLM_ENOMEM, "out of memory (merging a word of %zu bytes)", n);
        push_pair(t, w, a, &hn);
        if (s[a].prev >= 0) {
            s[s[a].prev].ver++;
            if (hn + 2 > t->sheap_cap && tlm_grow(&t->sheap, &t->sheap_cap, hn + 2, sizeof *t->sheap, 64))
                return tlm_errf(e, TLM_ENOMEM, "out of memory (merging a word of %zu bytes)", n);
            push_pair(t, w, s[a].prev, &hn);
        }
    }
    for (int32_t i = 0; i >= 0; i = s[i].next)
        if ((rc = emit(t, w, &s[i], out, e)))
            return rc;
    return 0;
}

/* The side index from a symbol's first byte to the symbol (heap entries
 * carry byte positions so that ties break leftmost without a lookup). */
static int word(eng_tok *t, const uint8_t *w, size_t n, eng_tokvec *out, tlm_err *e)
{
    if (tlm_grow(&t->spm_at, &t->spm_at_cap, n, sizeof *t->spm_at, 64))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (merging a word of %zu bytes)", n);
    size_t m = 0, bad;
    for (size_t i = 0; i < n;) {
        size_t k = w[i] < 0x80 ? 1 : tlm_utf8_seq(w + i, n - i, &bad);
        if (!k)
            k = 1;
        t->spm_at[i] = (int32_t)m++;
        for (size_t j = 1; j < k; j++)
            t->spm_at[i + j] = -1;
        i += k;
    }
    return merge_word(t, w, n, out, e);
}

/* No shortcut for a word that is a piece as a whole (tiktoken's rule): in
 * SentencePiece the joins by score decide, and they need not reach it. */
static int word_cached(eng_tok *t, const uint8_t *w, size_t n, eng_tokvec *out, tlm_err *e)
{
    return tok_cached(t, w, n, word, out, e);
}

/* One stretch of ordinary text: the dummy prefix, spaces as the marker, words. */
static int encode_text(eng_tok *t, const uint8_t *p, size_t n, eng_tokvec *out, tlm_err *e)
{
    if (n == 0)
        return 0;
    size_t need;
    if (tlm_add_size(n, 1, &need) || tlm_grow(&t->spm_norm, &t->spm_norm_cap, need, 1, 4096))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (normalising %zu bytes)", n);
    uint8_t *w = t->spm_norm;
    size_t m = 0;
    if (t->spm_dummy_prefix)
        w[m++] = ' ';
    for (size_t i = 0; i < n;) {
        if (p[i] == 0xe2 && i + 2 < n && p[i + 1] == 0x96 && p[i + 2] == 0x81) { /* U+2581 is a space */
            w[m++] = ' ';
            i += 3;
        } else {
            w[m++] = p[i++];
        }
    }
    if (!t->spm_split)
        return word(t, w, m, out, e);
    int rc;
    size_t start = 0;
    for (size_t i = 1; i < m; i++)
        if (w[i] == ' ' && w[i - 1] != ' ') {
            if ((rc = word_cached(t, w + start, i - start, out, e)))
                return rc;
            start = i;
        }
    return word_cached(t, w + start, m - start, out, e);
}

int tok_spm_encode(eng_tok *t, const uint8_t *p, size_t n, int allow_special, eng_tokvec *out, tlm_err *e)
{
    if (!allow_special)
        return encode_text(t, p, n, out, e);
    /* "<s>" and "</s>" in the text are the control ids; the text between is encoded piece by piece, each
     * with its dummy prefix (so decoding gives each back) */
    size_t start = 0;
    int rc;
    for (size_t i = 0; i + 2 < n;) {
        const uint8_t *q = memchr(p + i, '<', n - i - 2);
        if (!q)
            break;
        i = (size_t)(q - p);
        int32_t id = -1;
        size_t len = 0;
        if (t->spm_bos >= 0 && !memcmp(p + i, "<s>", 3))
            id = t->spm_bos, len = 3;
        else if (t->eot >= 0 && i + 3 < n && !memcmp(p + i, "</s>", 4))
            id = t->eot, len = 4;
        if (id < 0) {
            i++;
            continue;
        }
        if ((rc = encode_text(t, p + start, i - start, out, e)) || (rc = eng_tokvec_push(out, (uint32_t)id, e)))
            return rc;
        i += len;
        start = i;
    }
    return encode_text(t, p + start, n - start, out, e);
}

int32_t tok_spm_special(const eng_tok *t, const char *text)
{
    size_t n = strlen(text);
    for (uint32_t id = 0; id < t->n_ranks; id++)
        if (t->spm_type[id] == TOK_SPM_CONTROL && t->off[id + 1] - t->off[id] == n &&
            !memcmp(t->arena + t->off[id], text, n))
            return (int32_t)id;
    return -1;
}
