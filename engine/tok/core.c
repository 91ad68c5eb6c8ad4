/* core.c: the public tokenizer API (tokenizer.h): opening a tokenizer by
 * name or file, special tokens, encode/decode, and the shard check that
 * training relies on.  BPE internals live in bpe.c, the pattern in
 * pretok.c.  Must not: exit, print, or read unbounded input. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/config/config.h"
#include "common/cfgtree.h"
#include "common/fileio.h"
#include "common/sha256.h"
#include "common/vec.h"
#include "engine/tok/internal.h"

/* ------------------------------------------------------------ id lists */
void eng_tokvec_clear(eng_tokvec *v)
{
    free(v->ids);
    v->ids = NULL;
    v->n = v->cap = 0;
}

int eng_tokvec_push(eng_tokvec *v, uint32_t id, tlm_err *e)
{
    if (TLM_GROW(v->ids, v->cap, v->n + 1, 1024))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (%zu token ids)", tlm_grow_size(v->cap, v->n + 1, 1024));
    v->ids[v->n++] = id;
    return 0;
}

/* ------------------------------------------------------------ finding files */
static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int path_like(const char *s) { return strchr(s, '/') || strchr(s, '.'); }

/* Base name without extension ("data/bpe4096.tiktoken" -> "bpe4096"). */
static void stem_of(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ".");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

typedef struct tried {
    char buf[700];
    size_t len;
} tried;

static void tried_add(tried *t, const char *p)
{
    int k = snprintf(t->buf + t->len, sizeof t->buf - t->len, "%s%s", t->len ? ", " : "", p);
    if (k > 0)
        t->len = t->len + (size_t)k < sizeof t->buf ? t->len + (size_t)k : sizeof t->buf - 1;
}

/* The file names a named tokenizer is looked for under: llama2's
 * SentencePiece model or its vocabulary file, else a tiktoken rank file. */
static const char *const tiktoken_ext[] = {".tiktoken", NULL};
static const char *const llama2_ext[] = {".model", ".vocab", NULL};

static const char *const *exts_of(const char *name)
{
    return strcmp(name, "llama2") ? tiktoken_ext : llama2_ext;
}

static int try_dir(const char *dir, const char *name, char *out, size_t cap, tried *tr)
{
    for (const char *const *x = exts_of(name); *x; x++) {
        char cand[1024];
        snprintf(cand, sizeof cand, "%s/%s%s", dir, name, *x);
        if (is_file(cand)) {
            snprintf(out, cap, "%s", cand);
            return 1;
        }
        tried_add(tr, cand);
    }
    return 0;
}

/* A search entry: a folder, or a shard file standing for its folder; the
 * dataset root above a split folder is tried after it. */
static int try_entry(const char *entry, const char *name, char *out, size_t cap, tried *tr)
{
    char dir[1024];
    if (!*entry)
        return 0;
    snprintf(dir, sizeof dir, "%s", entry);
    if (!is_dir(dir)) {
        if (!is_file(dir))
            return 0;
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s", entry);
        snprintf(dir, sizeof dir, "%s", dirname(tmp));
    }
    if (try_dir(dir, name, out, cap, tr))
        return 1;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s/..", dir);
    return is_dir(tmp) && try_dir(tmp, name, out, cap, tr);
}

static int try_list(const char *list, const char *name, char *out, size_t cap, tried *tr)
{
    if (!list)
        return 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save))
        if (try_entry(d, name, out, cap, tr))
            return 1;
    return 0;
}

int eng_tok_find(const char *spec, const char *search, char *out, size_t cap, tlm_err *e)
{
    out[0] = '\0';
    if (!strcmp(spec, "bytes"))
        return 0;
    if (is_file(spec)) {
        snprintf(out, cap, "%s", spec);
        return 0;
    }
    if (path_like(spec)) {
        /* there, but not a file: say what it is (a FIFO is never opened) */
        struct stat st;
        if (stat(spec, &st) == 0)
            return tlm_stat_input(spec, TLM_EDATA, &st, e);
        return tlm_errf(e, TLM_EDATA, "tokenizer file %s: not found", spec);
    }
    tried tr = {.len = 0};
    if (try_list(search, spec, out, cap, &tr) || try_list(getenv("TLM_TOKENIZERS"), spec, out, cap, &tr))
        return 0;
    /* a slip of a built-in name ("byte") is more likely than a file of that
     * name; a built-in name whose rank file is missing ("llama3") is no slip
     * of another one ("llama2"): it gets the missing file's message below */
    static const char *const builtin[] = {"bytes", "llama3", "llama2"};
    size_t nb = sizeof builtin / sizeof *builtin, known = 0;
    for (size_t i = 0; i < nb; i++)
        known |= !strcmp(spec, builtin[i]);
    for (size_t i = 0; i < nb && !known; i++)
        if (tlm_cfg_edit_distance(spec, builtin[i]) <= 1)
            return tlm_errf(e, TLM_ECONFIG,
                            "tokenizer '%s': not a tokenizer name, and no %s.tiktoken file where tokenizer files are "
                            "looked for; did you mean '%s'?",
                            spec, spec, builtin[i]);
    int l2 = !strcmp(spec, "llama2");
    return tlm_errf(e, TLM_EDATA,
                    "tokenizer '%s': no %s%s file (looked in: %s); give the dataset folder that holds it, or a "
                    "folder in TLM_TOKENIZERS (docs/tokenizers.md)",
                    spec, spec, l2 ? ".model (SentencePiece) or llama2.vocab" : ".tiktoken rank",
                    tr.len ? tr.buf : "nowhere: no data folder and TLM_TOKENIZERS is not set");
}

/* ------------------------------------------------------------ opening */
static const char *const llama3_named[] = {
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
};
#define LLAMA3_RANKS 128000
#define LLAMA3_SPECIALS 256

static int add_special(eng_tok *t, const char *text, tlm_err *e)
{
    tok_special *s = &t->special[t->n_special];
    size_t n = strlen(text);
    if (n > TOK_MAX_SPECIAL_LEN)
        return tlm_errf(e, TLM_EINTERNAL, "special token %s is too long", text);
    memcpy(s->text, text, n + 1);
    s->len = (uint32_t)n;
    s->id = t->n_ranks + t->n_special;
    t->n_special++;
    return 0;
}

static int set_specials(eng_tok *t, const char *path, tlm_err *e)
{
    int rc = 0;
    t->eot = -1;
    if (!strcmp(t->name, "llama3")) {
        if (t->n_ranks != LLAMA3_RANKS)
            return tlm_errf(e, TLM_EDATA, "%s: a llama3 rank file holds %d ranks, this one %u", path, LLAMA3_RANKS,
                            t->n_ranks);
        t->special = calloc(LLAMA3_SPECIALS, sizeof *t->special);
        if (!t->special)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        size_t named = sizeof llama3_named / sizeof *llama3_named;
        for (size_t i = 0; !rc && i < named; i++)
            rc = add_special(t, llama3_named[i], e);
        for (int k = 3; !rc && t->n_special < LLAMA3_SPECIALS; k++) {
            char buf[64];
            snprintf(buf, sizeof buf, "<|reserved_special_token_%d|>", k);
            rc = add_special(t, buf, e);
        }
        t->eot = LLAMA3_RANKS + 1; /* <|end_of_text|> */
    } else if (!strncmp(t->name, "bpe", 3) && eng_tokenizer_vocab(t->name) > 0) {
        int v = eng_tokenizer_vocab(t->name);
        if (t->n_ranks != (uint32_t)v - 1)
            return tlm_errf(e, TLM_EDATA, "%s: tokenizer %s has %d ids, so its rank file must hold %d ranks (it "
                            "holds %u)", path, t->name, v, v - 1, t->n_ranks);
        t->special = calloc(1, sizeof *t->special);
        if (!t->special)
            return tlm_errf(e, TLM_ENOMEM, "out of memory");
        rc = add_special(t, "<|endoftext|>", e);
        t->eot = v - 1;
    }
    t->vocab = t->n_ranks + t->n_special;
    return rc;
}

static eng_tok *tok_alloc(void)
{
    eng_tok *t = calloc(1, sizeof *t);
    if (t)
        t->eot = -1;
    return t;
}

static int open_bytes(eng_tok **out, tlm_err *e)
{
    eng_tok *t = tok_alloc();
    if (!t)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    t->kind = ENG_TOK_BYTES;
    strcpy(t->name, "bytes");
    t->n_ranks = t->vocab = 256;
    t->arena = malloc(256);
    t->off = malloc(257 * sizeof *t->off);
    if (!t->arena || !t->off) {
        eng_tok_free(t);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    for (int b = 0; b < 256; b++) {
        t->arena[b] = (uint8_t)b;
        t->off[b] = (uint32_t)b;
        t->byte_id[b] = (uint32_t)b;
    }
    t->off[256] = 256;
    tok_compute_sha(t);
    *out = t;
    return 0;
}

/* A BPE tokenizer from a rank file (text NULL: read path) or from text. */
static int open_bpe(eng_tok **out, const char *path, const char *name, const char *text, size_t len, tlm_err *e)
{
    *out = NULL;
    eng_tok *t = tok_alloc();
    if (!t)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    t->kind = ENG_TOK_BPE;
    char stem[256];
    stem_of(path, stem, sizeof stem);
    const char *nm = name ? name : stem;
    int rc = 0;
    if (!*nm || strlen(nm) > ENG_SHARD_TOKNAME)
        rc = tlm_errf(e, TLM_ECONFIG, "%s: tokenizer name '%s' must be 1 to %d bytes", path, nm, ENG_SHARD_TOKNAME);
    char *owned = NULL;
    if (!rc) {
        snprintf(t->name, sizeof t->name, "%s", nm);
        if (!text) {
            rc = tlm_read_file(path, TOK_MAX_FILE, &owned, &len, e);
            if (rc)
                tlm_err_prefix(e, "tokenizer file");
            text = owned;
        }
    }
    size_t pl = strlen(path);
    int spm_model = !strcmp(nm, "llama2") || (pl > 6 && !strcmp(path + pl - 6, ".model"));
    if (!rc && (tok_spm_is_vocab(text, len) || spm_model)) {
        rc = tok_spm_is_vocab(text, len) ? tok_spm_load_vocab(t, path, text, len, e)
                                         : tok_spm_load_model(t, path, (const uint8_t *)text, len, e);
        free(owned);
        if (rc) {
            eng_tok_free(t);
            return rc;
        }
        tok_spm_sha(t);
        *out = t;
        return 0;
    }
    if (!rc)
        rc = tok_load_ranks_text(t, path, text, len, e);
    free(owned);
    if (!rc)
        rc = set_specials(t, path, e);
    if (!rc)
        rc = tok_regex_compile(&t->re, &t->md, e);
    if (rc) {
        eng_tok_free(t);
        return rc;
    }
    tok_compute_sha(t);
    *out = t;
    return 0;
}

int eng_tok_open_file(eng_tok **out, const char *path, const char *name, tlm_err *e)
{
    return open_bpe(out, path, name, NULL, 0, e);
}

int eng_tok_open_text(eng_tok **out, const char *label, const char *name, const char *text, size_t len, tlm_err *e)
{
    return open_bpe(out, label, name, text ? text : "", len, e);
}

int eng_tok_open(eng_tok **out, const char *spec, const char *search, tlm_err *e)
{
    *out = NULL;
    if (!spec || !*spec)
        return tlm_errf(e, TLM_ECONFIG, "no tokenizer given (bytes, llama3, bpeN or a rank file)");
    if (!strcmp(spec, "bytes"))
        return open_bytes(out, e);
    char path[1024];
    int rc = eng_tok_find(spec, search, path, sizeof path, e);
    if (rc)
        return rc;
    return eng_tok_open_file(out, path, path_like(spec) ? NULL : spec, e);
}

static void *dup_mem(const void *p, size_t n, int *fail)
{
    if (!p)
        return NULL;
    void *q = malloc(n ? n : 1);
    if (!q)
        *fail = 1;
    else
        memcpy(q, p, n);
    return q;
}

int eng_tok_clone(eng_tok **out, const eng_tok *t, tlm_err *e)
{
    *out = NULL;
    eng_tok *c = tok_alloc();
    if (!c)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (copying tokenizer %s)", t->name);
    /* the definition is copied; the scratch space, cache and regex match state start empty */
    c->kind = t->kind;
    memcpy(c->name, t->name, sizeof c->name);
    c->vocab = t->vocab;
    c->n_ranks = t->n_ranks;
    c->n_special = t->n_special;
    c->eot = t->eot;
    memcpy(c->sha, t->sha, sizeof c->sha);
    memcpy(c->byte_id, t->byte_id, sizeof c->byte_id);
    c->map.mask = t->map.mask;
    c->spm_dummy_prefix = t->spm_dummy_prefix;
    c->spm_byte_fallback = t->spm_byte_fallback;
    c->spm_split = t->spm_split;
    c->spm_unk = t->spm_unk;
    c->spm_bos = t->spm_bos;
    int fail = 0;
    c->arena = dup_mem(t->arena, t->off[t->n_ranks], &fail);
    c->off = dup_mem(t->off, ((size_t)t->n_ranks + 1) * sizeof *t->off, &fail);
    c->map.slots = dup_mem(t->map.slots, t->map.slots ? ((size_t)t->map.mask + 1) * sizeof *t->map.slots : 0, &fail);
    c->special = dup_mem(t->special, t->n_special * sizeof *t->special, &fail);
    c->spm_type = dup_mem(t->spm_type, t->spm_type ? t->n_ranks : 0, &fail);
    c->spm_score = dup_mem(t->spm_score, t->spm_score ? t->n_ranks * sizeof *t->spm_score : 0, &fail);
    int rc = fail ? tlm_errf(e, TLM_ENOMEM, "out of memory (copying tokenizer %s)", t->name) : 0;
    if (!rc && t->re)
        rc = tok_regex_compile(&c->re, &c->md, e);
    if (rc) {
        eng_tok_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void eng_tok_free(eng_tok *t)
{
    if (!t)
        return;
    free(t->arena);
    free(t->off);
    free(t->map.slots);
    free(t->special);
    if (t->md)
        pcre2_match_data_free(t->md);
    if (t->re)
        pcre2_code_free(t->re);
    free(t->fixed);
    free(t->nodes);
    free(t->heap);
    free(t->cache);
    free(t->cache_bytes);
    free(t->cache_ids);
    free(t->spm_type);
    free(t->spm_score);
    free(t->spm_norm);
    free(t->syms);
    free(t->sheap);
    free(t->spm_at);
    free(t);
}

const char *eng_tok_name(const eng_tok *t) { return t->name; }
eng_tok_kind eng_tok_kind_of(const eng_tok *t) { return t->kind; }
uint32_t eng_tok_vocab(const eng_tok *t) { return t->vocab; }
const uint8_t *eng_tok_sha256(const eng_tok *t) { return t->sha; }
int32_t eng_tok_eot(const eng_tok *t) { return t->eot; }

int32_t eng_tok_special(const eng_tok *t, const char *text)
{
    if (t->kind == ENG_TOK_SPM)
        return tok_spm_special(t, text);
    size_t n = strlen(text);
    for (uint32_t i = 0; i < t->n_special; i++)
        if (t->special[i].len == n && !memcmp(t->special[i].text, text, n))
            return (int32_t)t->special[i].id;
    return -1;
}

const uint8_t *eng_tok_piece(const eng_tok *t, uint32_t id, size_t *len)
{
    if (id < t->n_ranks) {
        *len = t->off[id + 1] - t->off[id];
        return t->arena + t->off[id];
    }
    if (id < t->vocab) {
        const tok_special *s = &t->special[id - t->n_ranks];
        *len = s->len;
        return (const uint8_t *)s->text;
    }
    *len = 0;
    return NULL;
}

/* ------------------------------------------------------------ encoding */
typedef struct enc_ctx {
    eng_tok *t;
    eng_tokvec *out;
    tlm_err *e;
} enc_ctx;

static int on_piece(void *arg, const uint8_t *p, size_t n)
{
    enc_ctx *c = arg;
    return tok_bpe_piece(c->t, p, n, c->out, c->e);
}

/* Ordinary text (no special tokens inside). */
static int encode_plain(eng_tok *t, const uint8_t *p, size_t n, int raw, eng_tokvec *out, tlm_err *e)
{
    enc_ctx c = {t, out, e};
    if (!raw)
        return tok_pretokenize(t->re, t->md, p, n, on_piece, &c, e);
    /* lossless: valid runs are pre-tokenised on their own, invalid bytes are byte tokens */
    size_t i = 0, run = 0, bad;
    int rc;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = tlm_utf8_seq(p + i, n - i, &bad);
        if (k) {
            i += k;
            continue;
        }
        if (i > run && (rc = tok_pretokenize(t->re, t->md, p + run, i - run, on_piece, &c, e)))
            return rc;
        for (size_t j = 0; j < bad; j++)
            if ((rc = eng_tokvec_push(out, t->byte_id[p[i + j]], e)))
                return rc;
        i += bad;
        run = i;
    }
    return i > run ? tok_pretokenize(t->re, t->md, p + run, i - run, on_piece, &c, e) : 0;
}

/* The special token whose text starts at p (which starts with "<|"), or NULL. */
static const tok_special *special_at(const eng_tok *t, const uint8_t *p, size_t n)
{
    size_t lim = n < TOK_MAX_SPECIAL_LEN ? n : TOK_MAX_SPECIAL_LEN;
    for (size_t j = 2; j + 1 < lim; j++)
        if (p[j] == '|' && p[j + 1] == '>') {
            size_t len = j + 2;
            for (uint32_t i = 0; i < t->n_special; i++)
                if (t->special[i].len == len && !memcmp(t->special[i].text, p, len))
                    return &t->special[i];
            return NULL;
        }
    return NULL;
}

int eng_tok_encode(eng_tok *t, const void *text, size_t len, int flags, eng_tokvec *out, tlm_err *e)
{
    const uint8_t *p = text;
    int rc;
    if (t->kind == ENG_TOK_BYTES) {
        if (out->cap - out->n < len) {
            size_t c = out->n + len;
            uint32_t *q = realloc(out->ids, c * sizeof *q);
            if (!q)
                return tlm_errf(e, TLM_ENOMEM, "out of memory (%zu token ids)", c);
            out->ids = q;
            out->cap = c;
        }
        for (size_t i = 0; i < len; i++)
            out->ids[out->n++] = p[i];
        return 0;
    }
    int raw = (flags & ENG_TOK_RAW_BYTES) != 0;
    size_t n = len;
    if (!raw) {
        size_t fixed_len;
        if ((rc = tlm_utf8_fix(&t->fixed, &t->fixed_cap, p, n, &fixed_len, e)) < 0)
            return rc;
        if (rc == 1) {
            p = t->fixed;
            n = fixed_len;
        }
    }
    if (t->kind == ENG_TOK_SPM)
        return tok_spm_encode(t, p, n, (flags & ENG_TOK_ALLOW_SPECIAL) != 0, out, e);
    if (!(flags & ENG_TOK_ALLOW_SPECIAL) || t->n_special == 0)
        return encode_plain(t, p, n, raw, out, e);
    size_t start = 0;
    for (size_t i = 0; i + 1 < n;) {
        const uint8_t *q = memchr(p + i, '<', n - i - 1);
        if (!q)
            break;
        i = (size_t)(q - p);
        const tok_special *s = p[i + 1] == '|' ? special_at(t, p + i, n - i) : NULL;
        if (!s) {
            i++;
            continue;
        }
        if (i > start && (rc = encode_plain(t, p + start, i - start, raw, out, e)))
            return rc;
        if ((rc = eng_tokvec_push(out, s->id, e)))
            return rc;
        i += s->len;
        start = i;
    }
    return start < n ? encode_plain(t, p + start, n - start, raw, out, e) : 0;
}

int eng_tok_decode(const eng_tok *t, const uint32_t *ids, size_t n, uint8_t **buf, size_t *len, size_t *cap,
                   tlm_err *e)
{
    for (size_t i = 0; i < n; i++) {
        size_t m;
        const uint8_t *piece = eng_tok_piece(t, ids[i], &m);
        if (!piece)
            return tlm_errf(e, TLM_EDATA, "token id %u (position %zu) is outside tokenizer %s's %u ids", ids[i], i,
                            t->name, t->vocab);
        /* SentencePiece: the dummy prefix that encoding put before the text (and after <s>, </s>) goes */
        if (t->kind == ENG_TOK_SPM && t->spm_dummy_prefix && m > 0 && piece[0] == ' ' &&
            t->spm_type[ids[i]] == TOK_SPM_NORMAL && (i == 0 || t->spm_type[ids[i - 1]] == TOK_SPM_CONTROL)) {
            piece++;
            m--;
        }
        if (m == 0)
            continue; /* "▁" after its space went: nothing (and *buf may still be NULL) */
        if (TLM_GROW(*buf, *cap, *len + m, 4096))
            return tlm_errf(e, TLM_ENOMEM, "out of memory (%zu bytes of text)", tlm_grow_size(*cap, *len + m, 4096));
        memcpy(*buf + *len, piece, m);
        *len += m;
    }
    return 0;
}

/* ------------------------------------------------------------ shard check */
int eng_tok_check_shards(const char *cfg_tokenizer, const eng_shardset *set, const char *data_path, tlm_err *e)
{
    if (!set || set->n < 1)
        return tlm_errf(e, TLM_EDATA, "%s: no shards to check", data_path ? data_path : "data");
    const eng_shard *s = &set->shards[0];
    char want[ENG_SHARD_TOKNAME + 1];
    if (path_like(cfg_tokenizer))
        stem_of(cfg_tokenizer, want, sizeof want);
    else
        snprintf(want, sizeof want, "%s", cfg_tokenizer);
    if (strcmp(s->tokenizer, want))
        return tlm_errf(e, TLM_EDATA,
                        "%s: shards were made with tokenizer '%s' but the job's tokenizer is '%s'; re-encode the data "
                        "(tlm-data build --tokenizer %s) or set `tokenizer: %s` in the config",
                        s->path, s->tokenizer, cfg_tokenizer, cfg_tokenizer, s->tokenizer);
    int known = eng_tokenizer_vocab(want);
    if (known > 0 && s->vocab != (uint32_t)known)
        return tlm_errf(e, TLM_EDATA, "%s: tokenizer '%s' has %d ids but the shards say %u; the shards are not "
                        "from this tokenizer", s->path, want, known, s->vocab);
    static const uint8_t zero[32];
    if (!memcmp(s->tokenizer_sha256, zero, 32))
        return 0; /* written without a definition hash: name and size are all we can check */
    char path[1024];
    tlm_err ignore;
    if (strcmp(want, "bytes") && eng_tok_find(cfg_tokenizer, data_path, path, sizeof path, &ignore))
        return 0; /* no tokenizer file here (training needs only ids): name and size must do */
    eng_tok *t = NULL;
    int rc = strcmp(want, "bytes") ? eng_tok_open_file(&t, path, want, e) : open_bytes(&t, e);
    if (rc)
        return tlm_err_prefix(e, "checking %s against the job's tokenizer", s->path);
    char hs[65], ht[65];
    tlm_hex(s->tokenizer_sha256, 32, hs);
    tlm_hex(t->sha, 32, ht);
    if (memcmp(s->tokenizer_sha256, t->sha, 32) || s->vocab != t->vocab)
        rc = tlm_errf(e, TLM_EDATA,
                      "%s: shards were made with a different '%s' tokenizer (definition SHA-256 %.16s..., vocab %u) "
                      "than %s (definition SHA-256 %.16s..., vocab %u): it was retrained or replaced; rebuild the "
                      "shards with tlm-data build",
                      s->path, want, hs, s->vocab, strcmp(want, "bytes") ? path : "the built-in bytes tokenizer", ht,
                      t->vocab);
    eng_tok_free(t);
    return rc;
}
