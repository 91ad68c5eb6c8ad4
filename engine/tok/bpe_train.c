/* bpe_train.c: a small byte-level BPE trainer (tlm-data train-bpe) for the
 * CPU-sized models, whose 128K-id Llama 3 embedding would dominate the cost.
 *
 * Text is pre-tokenised with the same pattern the encoder uses and counted
 * as unique pieces ("words").  Each step merges the most frequent adjacent
 * pair (ties: lowest left id, then lowest right id, so the result never
 * depends on hash order), touching only the words that hold that pair (an
 * index from pair to words) and updating pair counts incrementally; a heap
 * with lazy deletion finds the next best pair.  When a merge would recreate
 * bytes that are already a token (two routes to the same string), the words
 * are rewritten with the existing id and no rank is spent: a rank file must
 * not repeat a token.  Ranks 0..255 are the bytes themselves, so every byte
 * string stays encodable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/vec.h"
#include "engine/tok/internal.h"

typedef struct word {
    uint32_t bytes, nbytes; /* piece in the trainer's arena */
    uint64_t count;
    uint32_t sym, nsym;     /* symbols in syms[] (nsym shrinks as merges apply) */
    uint32_t stamp;         /* last merge that visited this word */
} word;

typedef struct pair {
    uint32_t a, b;
    int64_t count;
    uint32_t *where;        /* words holding the pair (may repeat or be stale) */
    uint32_t nwhere, capwhere;
    uint32_t stamp;         /* last merge that changed its count */
} pair;

typedef struct heap_ent {
    int64_t count;
    uint32_t a, b;
} heap_ent;

struct eng_bpe_trainer {
    pcre2_code *re;
    pcre2_match_data *md;
    uint8_t *fixed;
    size_t fixed_cap;
    /* words */
    uint8_t *arena;
    size_t arena_len, arena_cap;
    word *words;
    uint32_t nwords;
    size_t capwords;
    uint32_t *wslots;       /* open addressing: word index + 1 */
    uint32_t wmask;
    tlm_err *e;             /* during feed */
};

/* ------------------------------------------------------------ feeding */
int eng_bpe_trainer_new(eng_bpe_trainer **out, tlm_err *e)
{
    eng_bpe_trainer *tr = calloc(1, sizeof *tr);
    if (!tr)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    tr->wmask = (1u << 16) - 1;
    tr->wslots = calloc(tr->wmask + 1, sizeof *tr->wslots);
    int rc = tr->wslots ? tok_regex_compile(&tr->re, &tr->md, e) : tlm_errf(e, TLM_ENOMEM, "out of memory");
    if (rc) {
        eng_bpe_trainer_free(tr);
        return rc;
    }
    *out = tr;
    return 0;
}

void eng_bpe_trainer_free(eng_bpe_trainer *tr)
{
    if (!tr)
        return;
    if (tr->md)
        pcre2_match_data_free(tr->md);
    if (tr->re)
        pcre2_code_free(tr->re);
    free(tr->fixed);
    free(tr->arena);
    free(tr->words);
    free(tr->wslots);
    free(tr);
}

/* Doubles an open-addressing table of entry numbers (0: empty, k + 1:
 * entry k; linear probing) and places its n entries again by hash(ctx, k).
 * -1 when out of memory (the table is as it was). */
static int slots_grow(uint32_t **slots, uint32_t *mask, uint32_t n, uint64_t (*hash)(const void *ctx, uint32_t k),
                      const void *ctx)
{
    uint32_t size = (*mask + 1) * 2;
    uint32_t *s = calloc(size, sizeof *s);
    if (!s)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (uint32_t)hash(ctx, k) & (size - 1);
        while (s[i])
            i = (i + 1) & (size - 1);
        s[i] = k + 1;
    }
    free(*slots);
    *slots = s;
    *mask = size - 1;
    return 0;
}

static uint64_t word_hash(const void *ctx, uint32_t w)
{
    const eng_bpe_trainer *tr = ctx;
    return tok_hash(tr->arena + tr->words[w].bytes, tr->words[w].nbytes);
}

static int wgrow(eng_bpe_trainer *tr, tlm_err *e)
{
    if (slots_grow(&tr->wslots, &tr->wmask, tr->nwords, word_hash, tr))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (%u distinct pieces)", tr->nwords);
    return 0;
}

static int count_piece(void *arg, const uint8_t *p, size_t n)
{
    eng_bpe_trainer *tr = arg;
    tlm_err *e = tr->e;
    if (n > UINT32_MAX / 2)
        return tlm_errf(e, TLM_EDATA, "a piece of %zu bytes is too long to train on", n);
    uint64_t h = tok_hash(p, n);
    uint32_t i = (uint32_t)h & tr->wmask;
    for (; tr->wslots[i]; i = (i + 1) & tr->wmask) {
        word *w = &tr->words[tr->wslots[i] - 1];
        if (w->nbytes == n && !memcmp(tr->arena + w->bytes, p, n)) {
            w->count++;
            return 0;
        }
    }
    if (tr->arena_len + n > tr->arena_cap) {
        size_t c = tr->arena_cap ? tr->arena_cap : 1 << 20;
        while (c < tr->arena_len + n)
            c *= 2;
        if (c > UINT32_MAX)
            return tlm_errf(e, TLM_EDATA, "training text has more than 4 GiB of distinct pieces");
        uint8_t *a = realloc(tr->arena, c);
        if (!a)
            return tlm_errf(e, TLM_ENOMEM, "out of memory (trainer pieces)");
        tr->arena = a;
        tr->arena_cap = c;
    }
    if (TLM_GROW(tr->words, tr->capwords, (size_t)tr->nwords + 1, 4096))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (trainer pieces)");
    memcpy(tr->arena + tr->arena_len, p, n);
    tr->words[tr->nwords] = (word){(uint32_t)tr->arena_len, (uint32_t)n, 1, 0, 0, 0};
    tr->arena_len += n;
    tr->wslots[i] = ++tr->nwords;
    if (tr->nwords * 2u > tr->wmask)
        return wgrow(tr, e);
    return 0;
}

int eng_bpe_trainer_feed(eng_bpe_trainer *tr, const void *text, size_t len, tlm_err *e)
{
    const uint8_t *p = text;
    size_t n = len;
    int rc = tlm_utf8_fix(&tr->fixed, &tr->fixed_cap, p, n, &n, e);
    if (rc < 0)
        return rc;
    if (rc == 1)
        p = tr->fixed;
    tr->e = e;
    return tok_pretokenize(tr->re, tr->md, p, n, count_piece, tr, e);
}

/* ------------------------------------------------------------ training */
typedef struct trainer_state {
    eng_bpe_trainer *tr;
    uint32_t *syms;
    pair *pairs;
    uint32_t npairs;
    size_t cappairs;
    uint32_t *pslots;       /* pair index + 1 */
    uint32_t pmask;
    heap_ent *heap;
    size_t nheap, capheap;
    uint32_t *changed;      /* pairs whose count changed in this merge */
    size_t nchanged, capchanged;
    /* tokens: bytes of every id so far */
    uint8_t *tb;
    size_t tb_len, tb_cap;
    uint32_t *toff;         /* ntok + 1 */
    uint32_t ntok, captok;
    uint32_t *tslots;       /* token bytes -> id + 1 */
    uint32_t tmask;
    tlm_err *e;
} trainer_state;

static inline uint64_t pkey_hash(uint32_t a, uint32_t b)
{
    uint64_t h = ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

static uint64_t pair_hash(const void *ctx, uint32_t k)
{
    const trainer_state *s = ctx;
    return pkey_hash(s->pairs[k].a, s->pairs[k].b);
}

static int pairs_grow(trainer_state *s)
{
    if (slots_grow(&s->pslots, &s->pmask, s->npairs, pair_hash, s))
        return tlm_errf(s->e, TLM_ENOMEM, "out of memory (%u pairs)", s->npairs);
    return 0;
}

/* The pair (a, b), created with count 0 if new; -1 on OOM. */
static int64_t pair_get(trainer_state *s, uint32_t a, uint32_t b, int create)
{
    uint32_t i = (uint32_t)pkey_hash(a, b) & s->pmask;
    for (; s->pslots[i]; i = (i + 1) & s->pmask) {
        pair *p = &s->pairs[s->pslots[i] - 1];
        if (p->a == a && p->b == b)
            return s->pslots[i] - 1;
    }
    if (!create)
        return -2;
    if (TLM_GROW(s->pairs, s->cappairs, (size_t)s->npairs + 1, 1 << 16))
        return -1;
    s->pairs[s->npairs] = (pair){a, b, 0, NULL, 0, 0, 0};
    s->pslots[i] = ++s->npairs;
    if (s->npairs * 2u > s->pmask && pairs_grow(s))
        return -1;
    return s->npairs - 1;
}

static int where_add(trainer_state *s, pair *p, uint32_t w)
{
    if (p->nwhere && p->where[p->nwhere - 1] == w)
        return 0;
    if (p->nwhere == p->capwhere) {
        uint32_t c = p->capwhere ? 2 * p->capwhere : 4;
        uint32_t *q = realloc(p->where, c * sizeof *q);
        if (!q)
            return tlm_errf(s->e, TLM_ENOMEM, "out of memory (pair index)");
        p->where = q;
        p->capwhere = c;
    }
    p->where[p->nwhere++] = w;
    return 0;
}

static int heap_better(const heap_ent *x, const heap_ent *y)
{
    if (x->count != y->count)
        return x->count > y->count;
    if (x->a != y->a)
        return x->a < y->a;
    return x->b < y->b;
}

static int heap_push(trainer_state *s, heap_ent x)
{
    if (TLM_GROW(s->heap, s->capheap, s->nheap + 1, 1 << 16))
        return tlm_errf(s->e, TLM_ENOMEM, "out of memory (merge heap)");
    size_t i = s->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_better(&x, &s->heap[p]))
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = x;
    return 0;
}

static heap_ent heap_pop(trainer_state *s)
{
    heap_ent top = s->heap[0], x = s->heap[--s->nheap];
    size_t i = 0, n = s->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_better(&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!heap_better(&s->heap[c], &x))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n)
        s->heap[i] = x;
    return top;
}

/* Add delta to pair (a,b)'s count and remember that it changed; index word
 * w under the pair when it holds the new token z (other pairs of w already
 * list w; z = UINT32_MAX indexes every pair, for the initial count). */
static int bump(trainer_state *s, uint32_t a, uint32_t b, int64_t delta, uint32_t w, uint32_t stamp, uint32_t z)
{
    int64_t k = pair_get(s, a, b, 1);
    if (k < 0)
        return tlm_errf(s->e, TLM_ENOMEM, "out of memory (pairs)");
    pair *p = &s->pairs[k];
    p->count += delta;
    if (delta > 0 && (z == UINT32_MAX || a == z || b == z)) {
        int rc = where_add(s, p, w);
        if (rc)
            return rc;
    }
    if (p->stamp != stamp) {
        p->stamp = stamp;
        if (TLM_GROW(s->changed, s->capchanged, s->nchanged + 1, 1024))
            return tlm_errf(s->e, TLM_ENOMEM, "out of memory");
        s->changed[s->nchanged++] = (uint32_t)k;
    }
    return 0;
}

/* ---- token table (bytes of each id, and bytes -> id for duplicates) */
static int64_t tok_lookup(const trainer_state *s, const uint8_t *p, size_t n)
{
    uint32_t i = (uint32_t)tok_hash(p, n) & s->tmask;
    for (; s->tslots[i]; i = (i + 1) & s->tmask) {
        uint32_t id = s->tslots[i] - 1;
        if (s->toff[id + 1] - s->toff[id] == n && !memcmp(s->tb + s->toff[id], p, n))
            return id;
    }
    return -1;
}

static int tok_add(trainer_state *s, const uint8_t *p, size_t n)
{
    if (TLM_GROW(s->tb, s->tb_cap, s->tb_len + n, 1 << 16))
        return tlm_errf(s->e, TLM_ENOMEM, "out of memory");
    memcpy(s->tb + s->tb_len, p, n);
    s->tb_len += n;
    uint32_t id = s->ntok++;
    s->toff[id + 1] = (uint32_t)s->tb_len;
    uint32_t i = (uint32_t)tok_hash(p, n) & s->tmask;
    while (s->tslots[i])
        i = (i + 1) & s->tmask;
    s->tslots[i] = id + 1;
    return 0;
}

static void state_clear(trainer_state *s)
{
    for (uint32_t k = 0; k < s->npairs; k++)
        free(s->pairs[k].where);
    free(s->syms);
    free(s->pairs);
    free(s->pslots);
    free(s->heap);
    free(s->changed);
    free(s->tb);
    free(s->toff);
    free(s->tslots);
}

static int write_ranks(trainer_state *s, const char *path, tlm_err *e)
{
    size_t cap = 64 + (size_t)s->ntok * 16 + s->tb_len * 2;
    char *buf = malloc(cap), *line = malloc(4 * (s->tb_len + 3) / 3 + 8);
    if (!buf || !line) {
        free(buf);
        free(line);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    size_t o = 0;
    for (uint32_t id = 0; id < s->ntok; id++) {
        size_t m = tok_base64_encode(s->tb + s->toff[id], s->toff[id + 1] - s->toff[id], line);
        if (o + m + 16 > cap) {
            cap = 2 * cap + m + 16;
            char *q = realloc(buf, cap);
            if (!q) {
                free(buf);
                free(line);
                return tlm_errf(e, TLM_ENOMEM, "out of memory");
            }
            buf = q;
        }
        memcpy(buf + o, line, m);
        o += m;
        o += (size_t)snprintf(buf + o, cap - o, " %u\n", id);
    }
    int rc = tlm_write_file_atomic(path, buf, o, e);
    free(buf);
    free(line);
    return rc;
}

/* The tables for `ranks` ids, the 256 byte tokens, every word as byte
 * symbols and every initial pair on the heap. */
static int trainer_setup(trainer_state *s, uint32_t ranks)
{
    eng_bpe_trainer *tr = s->tr;
    tlm_err *e = s->e;
    int rc = 0;
    uint64_t total_sym = 0;
    for (uint32_t w = 0; w < tr->nwords; w++)
        total_sym += tr->words[w].nbytes;
    if (total_sym >= UINT32_MAX)
        return tlm_errf(e, TLM_EDATA, "training text has too many distinct pieces (%llu bytes)",
                        (unsigned long long)total_sym);
    s->syms = malloc((total_sym ? total_sym : 1) * sizeof *s->syms);
    s->pmask = (1u << 16) - 1;
    s->pslots = calloc(s->pmask + 1, sizeof *s->pslots);
    uint32_t tsize = 1024;
    while (tsize < 2 * ranks)
        tsize <<= 1;
    s->tmask = tsize - 1;
    s->tslots = calloc(tsize, sizeof *s->tslots);
    s->toff = calloc(ranks + 1, sizeof *s->toff);
    if (!s->syms || !s->pslots || !s->tslots || !s->toff)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (trainer)");
    for (int b = 0; b < 256 && !rc; b++) {
        uint8_t c = (uint8_t)b;
        rc = tok_add(s, &c, 1);
    }
    /* words as byte symbols, and every initial pair */
    uint32_t o = 0;
    for (uint32_t w = 0; w < tr->nwords && !rc; w++) {
        word *wd = &tr->words[w];
        wd->sym = o;
        wd->nsym = wd->nbytes;
        for (uint32_t i = 0; i < wd->nbytes; i++)
            s->syms[o + i] = tr->arena[wd->bytes + i];
        for (uint32_t i = 0; i + 1 < wd->nsym && !rc; i++)
            rc = bump(s, s->syms[o + i], s->syms[o + i + 1], (int64_t)wd->count, w, 0, UINT32_MAX);
        o += wd->nbytes;
    }
    for (uint32_t k = 0; k < s->npairs && !rc; k++)
        rc = heap_push(s, (heap_ent){s->pairs[k].count, s->pairs[k].a, s->pairs[k].b});
    s->nchanged = 0;
    return rc;
}

/* The token of a's bytes then b's (made when new) into *z; *cat, *catcap:
 * the caller's scratch for the bytes. */
static int merged_token(trainer_state *s, uint32_t a, uint32_t b, uint8_t **cat, size_t *catcap, int64_t *z)
{
    size_t la = s->toff[a + 1] - s->toff[a], lb = s->toff[b + 1] - s->toff[b];
    if (la + lb > *catcap) {
        size_t cap = 2 * (la + lb);
        uint8_t *q = realloc(*cat, cap);
        if (!q)
            return tlm_errf(s->e, TLM_ENOMEM, "out of memory");
        *cat = q;
        *catcap = cap;
    }
    memcpy(*cat, s->tb + s->toff[a], la);
    memcpy(*cat + la, s->tb + s->toff[b], lb);
    *z = tok_lookup(s, *cat, la + lb);
    if (*z >= 0)
        return 0;
    *z = s->ntok;
    return tok_add(s, *cat, la + lb);
}

/* Rewrites each word that holds the pair (a, b) with z in its place,
 * moves the counts of the pairs around it, and pushes every pair whose
 * count changed. */
static int merge_words(trainer_state *s, pair *p, uint32_t a, uint32_t b, uint32_t z, uint32_t stamp)
{
    int rc = 0;
    s->nchanged = 0;
    /* p may move as pairs grow, so take its list */
    uint32_t nwhere = p->nwhere, *where = p->where;
    p->where = NULL;
    p->nwhere = p->capwhere = 0;
    for (uint32_t j = 0; j < nwhere && !rc; j++) {
        uint32_t w = where[j];
        word *wd = &s->tr->words[w];
        if (wd->stamp == stamp)
            continue;
        wd->stamp = stamp;
        uint32_t *sy = s->syms + wd->sym, n = wd->nsym;
        int found = 0;
        for (uint32_t i = 0; i + 1 < n; i++)
            if (sy[i] == a && sy[i + 1] == b) {
                found = 1;
                break;
            }
        if (!found)
            continue;
        int64_t c = (int64_t)wd->count;
        for (uint32_t i = 0; i + 1 < n && !rc; i++)
            rc = bump(s, sy[i], sy[i + 1], -c, w, stamp, z);
        uint32_t m = 0;
        for (uint32_t i = 0; i < n;) {
            if (i + 1 < n && sy[i] == a && sy[i + 1] == b) {
                sy[m++] = z;
                i += 2;
            } else {
                sy[m++] = sy[i++];
            }
        }
        wd->nsym = m;
        for (uint32_t i = 0; i + 1 < m && !rc; i++)
            rc = bump(s, sy[i], sy[i + 1], c, w, stamp, z);
    }
    free(where);
    for (size_t q = 0; q < s->nchanged && !rc; q++) {
        pair *c = &s->pairs[s->changed[q]];
        if (c->count > 0)
            rc = heap_push(s, (heap_ent){c->count, c->a, c->b});
    }
    return rc;
}

int eng_bpe_trainer_finish(eng_bpe_trainer *tr, uint32_t vocab, const char *out_path,
                           void (*progress)(void *arg, uint64_t done, uint64_t total), void *arg, tlm_err *e)
{
    if (vocab < 257 || vocab > (1u << 20))
        return tlm_errf(e, TLM_ECONFIG, "vocabulary %u: a trained BPE has 257 to %u ids (256 bytes, merges, "
                        "<|endoftext|>)", vocab, 1u << 20);
    uint32_t ranks = vocab - 1, merges = ranks - 256;
    trainer_state st = {.tr = tr, .e = e};
    trainer_state *s = &st;
    int rc = trainer_setup(s, ranks);
    uint32_t stamp = 0;
    uint8_t *cat = NULL;
    size_t catcap = 0;
    while (!rc && s->ntok < ranks) {
        if (!s->nheap) {
            rc = tlm_errf(e, TLM_EDATA, "the training text is too small for %u ids: only %u merges were possible "
                          "(give more text or a smaller vocabulary)", vocab, s->ntok - 256);
            break;
        }
        heap_ent top = heap_pop(s);
        int64_t k = pair_get(s, top.a, top.b, 0);
        if (k < 0 || s->pairs[k].count != top.count || top.count <= 0)
            continue; /* stale entry: the count moved and was pushed again */
        pair *p = &s->pairs[k];
        int64_t z = 0;
        if ((rc = merged_token(s, p->a, p->b, &cat, &catcap, &z)))
            break;
        stamp++;
        rc = merge_words(s, p, p->a, p->b, (uint32_t)z, stamp);
        if (progress && (s->ntok % 64 == 0 || s->ntok == ranks))
            progress(arg, s->ntok - 256, merges);
    }
    free(cat);
    if (!rc)
        rc = write_ranks(s, out_path, e);
    state_clear(s);
    return rc;
}
