/* bpe.c: byte-level BPE from a tiktoken rank file: loading (bounded,
 * with file:line errors), the definition hash, and merging one piece.
 *
 * Merging follows tiktoken's rule: start from single bytes, repeatedly join
 * the adjacent pair whose concatenation has the lowest rank (leftmost on a
 * tie) until no pair is a token.  Short pieces use the plain quadratic scan
 * (fastest for the few bytes of a typical word); long ones (whitespace
 * runs, long unbroken symbols) a heap with lazy deletion, so a megabyte of
 * spaces costs n log n, not n^2.  A small cache remembers recent pieces. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/sha256.h"
#include "common/vec.h"
#include "engine/tok/internal.h"

#define MAX_RANK_FILE (256u << 20) /* bytes */
#define MAX_TOKEN_BYTES 4096
#define MAX_RANKS (1u << 22)
#define SMALL_PIECE 64             /* quadratic merge up to this many bytes */

/* ------------------------------------------------------------ loading */
typedef struct line_ent {
    uint32_t rank, off, len;
} line_ent;

static int cmp_rank(const void *a, const void *b)
{
    uint32_t x = ((const line_ent *)a)->rank, y = ((const line_ent *)b)->rank;
    return x < y ? -1 : x > y;
}

/* One line "<base64 token> <rank>" (line[0, n), not blank): the token's
 * bytes into dst (cap bytes), their count and the rank. */
static int parse_rank_line(const char *path, size_t lineno, const char *line, size_t n, uint8_t *dst, size_t cap,
                           size_t *tl, uint32_t *rank_out, tlm_err *e)
{
    const char *sp = memchr(line, ' ', n), *end = line + n;
    if (!sp)
        return tlm_errf(e, TLM_EDATA, "%s:%zu: expected \"<base64 token> <rank>\"", path, lineno);
    size_t b64len = (size_t)(sp - line);
    if (b64len > (MAX_TOKEN_BYTES / 3 + 1) * 4 || tok_base64_decode(line, b64len, dst, cap, tl) || *tl == 0)
        return tlm_errf(e, TLM_EDATA, "%s:%zu: the token is not valid base64 (of 1 to %d bytes)", path, lineno,
                        MAX_TOKEN_BYTES);
    const char *r = sp + 1;
    uint64_t rank = 0;
    if (r >= end)
        return tlm_errf(e, TLM_EDATA, "%s:%zu: missing rank after the token", path, lineno);
    for (; r < end; r++) {
        if (*r < '0' || *r > '9' || rank >= MAX_RANKS)
            return tlm_errf(e, TLM_EDATA, "%s:%zu: rank must be a whole number below %u", path, lineno, MAX_RANKS);
        rank = rank * 10 + (uint64_t)(*r - '0');
    }
    if (rank >= MAX_RANKS)
        return tlm_errf(e, TLM_EDATA, "%s:%zu: rank must be below %u", path, lineno, MAX_RANKS);
    *rank_out = (uint32_t)rank;
    return 0;
}

int tok_load_ranks_text(eng_tok *t, const char *path, const char *text, size_t len, tlm_err *e)
{
    int rc = 0;
    if (len > MAX_RANK_FILE)
        return tlm_errf(e, TLM_EDATA, "%s: larger than %u bytes", path, MAX_RANK_FILE);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    lines++;
    line_ent *ent = calloc(lines, sizeof *ent);
    uint8_t *tmp = malloc(len + 1); /* decoded bytes are shorter than their base64 */
    if (!ent || !tmp) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    size_t n = 0, used = 0, lineno = 0;
    for (size_t i = 0; i < len;) {
        size_t eol = i;
        while (eol < len && text[eol] != '\n')
            eol++;
        lineno++;
        size_t end = eol;
        if (end > i && text[end - 1] == '\r')
            end--;
        size_t next = eol + 1;
        if (end == i) { /* blank lines are allowed (a trailing newline) */
            i = next;
            continue;
        }
        size_t tl;
        uint32_t rank = 0;
        if ((rc = parse_rank_line(path, lineno, text + i, end - i, tmp + used, len + 1 - used, &tl, &rank, e)))
            goto out;
        ent[n].rank = rank;
        ent[n].off = (uint32_t)used;
        ent[n].len = (uint32_t)tl;
        used += tl;
        n++;
        i = next;
    }
    if (n == 0) {
        rc = tlm_errf(e, TLM_EDATA, "%s: no ranks in the file", path);
        goto out;
    }
    qsort(ent, n, sizeof *ent, cmp_rank);
    for (size_t k = 0; k < n; k++)
        if (ent[k].rank != k) {
            rc = tlm_errf(e, TLM_EDATA, "%s: ranks must be 0..%zu, each once; %s rank %u", path, n - 1,
                          ent[k].rank < k ? "repeated" : "missing", ent[k].rank < k ? ent[k].rank : (unsigned)k);
            goto out;
        }
    t->n_ranks = (uint32_t)n;
    t->arena = malloc(used ? used : 1);
    t->off = malloc((n + 1) * sizeof *t->off);
    if (!t->arena || !t->off) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    uint32_t o = 0;
    for (size_t k = 0; k < n; k++) {
        t->off[k] = o;
        memcpy(t->arena + o, tmp + ent[k].off, ent[k].len);
        o += ent[k].len;
    }
    t->off[n] = o;
    if ((rc = tok_map_build(t, e))) {
        tlm_err_prefix(e, "%s", path);
        goto out;
    }
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        int64_t id = tok_map_get(t, &c, 1);
        if (id < 0) {
            rc = tlm_errf(e, TLM_EDATA, "%s: byte 0x%02x is not a token: a byte-level BPE needs all 256 bytes "
                          "(otherwise some text could not be encoded)", path, b);
            goto out;
        }
        t->byte_id[b] = (uint32_t)id;
    }
out:
    free(ent);
    free(tmp);
    return rc;
}

/* ------------------------------------------------------------ hash */
void tok_compute_sha(eng_tok *t)
{
    tlm_sha256 s;
    tlm_sha256_init(&s);
    char line[8192];
    if (t->kind == ENG_TOK_BYTES) {
        const char *def = "tlm-tokenizer-definition 1\nkind bytes\nvocab 256\n";
        tlm_sha256_update(&s, def, strlen(def));
    } else {
        int k = snprintf(line, sizeof line, "tlm-tokenizer-definition 1\nkind bpe\npattern %s\nranks %u\n",
                         tok_llama3_pattern, t->n_ranks);
        tlm_sha256_update(&s, line, (size_t)k);
        for (uint32_t id = 0; id < t->n_ranks; id++) {
            size_t m = tok_base64_encode(t->arena + t->off[id], t->off[id + 1] - t->off[id], line);
            line[m++] = '\n';
            tlm_sha256_update(&s, line, m);
        }
        k = snprintf(line, sizeof line, "specials %u\n", t->n_special);
        tlm_sha256_update(&s, line, (size_t)k);
        for (uint32_t i = 0; i < t->n_special; i++) {
            k = snprintf(line, sizeof line, "%s %u\n", t->special[i].text, t->special[i].id);
            tlm_sha256_update(&s, line, (size_t)k);
        }
    }
    tlm_sha256_final(&s, t->sha);
}

/* ------------------------------------------------------------ merging */
typedef struct tok_node {
    uint32_t start;   /* byte offset in the piece */
    uint32_t id;      /* token of bytes [start, next's start) */
    int32_t prev, next;
    uint32_t ver;     /* bumped whenever the pair starting here changes */
    uint32_t alive;
} tok_node;

typedef struct tok_heap_ent {
    uint32_t rank, pos, ver;
} tok_heap_ent;

static inline int heap_less(const tok_heap_ent *a, const tok_heap_ent *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

TOK_HEAP_DEFINE(heap, tok_heap_ent, heap_less)

static int grow(void *p, size_t *cap, size_t need, size_t elem, tlm_err *e)
{
    if (tlm_grow(p, cap, need, elem, 64))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (merging a piece of %zu bytes)", need);
    return 0;
}

/* Quadratic merge for short pieces: parts as start offsets, pair ranks cached. */
static int merge_small(eng_tok *t, const uint8_t *p, size_t n, eng_tokvec *out, tlm_err *e)
{
    uint32_t start[SMALL_PIECE + 1];
    uint32_t rank[SMALL_PIECE + 1]; /* rank of the pair starting at part i */
    size_t m = n;                   /* number of parts */
    for (size_t i = 0; i <= n; i++)
        start[i] = (uint32_t)i;
    for (size_t i = 0; i + 1 < m; i++) {
        int64_t r = tok_map_get(t, p + i, 2);
        rank[i] = r < 0 ? UINT32_MAX : (uint32_t)r;
    }
    while (m > 1) {
        uint32_t best = UINT32_MAX;
        size_t bi = 0;
        for (size_t i = 0; i + 1 < m; i++)
            if (rank[i] < best) {
                best = rank[i];
                bi = i;
            }
        if (best == UINT32_MAX)
            break;
        /* join parts bi and bi+1 */
        memmove(start + bi + 1, start + bi + 2, (m - bi - 1) * sizeof *start);
        if (m > bi + 3) /* ranks 0..m-2 are live; drop the one at bi+1 */
            memmove(rank + bi + 1, rank + bi + 2, (m - bi - 3) * sizeof *rank);
        m--;
        if (bi + 1 < m) {
            int64_t r = tok_map_get(t, p + start[bi], start[bi + 2] - start[bi]);
            rank[bi] = r < 0 ? UINT32_MAX : (uint32_t)r;
        }
        if (bi > 0) {
            int64_t r = tok_map_get(t, p + start[bi - 1], start[bi + 1] - start[bi - 1]);
            rank[bi - 1] = r < 0 ? UINT32_MAX : (uint32_t)r;
        }
    }
    for (size_t i = 0; i < m; i++) {
        int64_t id = tok_map_get(t, p + start[i], start[i + 1] - start[i]);
        if (id < 0)
            return tlm_errf(e, TLM_EINTERNAL, "merged part is not a token");
        int rc = eng_tokvec_push(out, (uint32_t)id, e);
        if (rc)
            return rc;
    }
    return 0;
}

static inline uint32_t node_end(const eng_tok *t, int32_t i, size_t n)
{
    int32_t nx = t->nodes[i].next;
    return nx < 0 ? (uint32_t)n : t->nodes[nx].start;
}

/* Rank of the pair (i, next(i)), or UINT32_MAX. */
static uint32_t pair_rank(const eng_tok *t, const uint8_t *p, int32_t i, size_t n)
{
    int32_t j = t->nodes[i].next;
    if (j < 0)
        return UINT32_MAX;
    uint32_t s = t->nodes[i].start, end = node_end(t, j, n);
    int64_t r = tok_map_get(t, p + s, end - s);
    return r < 0 ? UINT32_MAX : (uint32_t)r;
}

static int merge_large(eng_tok *t, const uint8_t *p, size_t n, eng_tokvec *out, tlm_err *e)
{
    int rc;
    if ((rc = grow(&t->nodes, &t->nodes_cap, n, sizeof *t->nodes, e)) ||
        (rc = grow(&t->heap, &t->heap_cap, 3 * n, sizeof *t->heap, e)))
        return rc;
    tok_node *nd = t->nodes;
    for (size_t i = 0; i < n; i++)
        nd[i] = (tok_node){(uint32_t)i, t->byte_id[p[i]], (int32_t)i - 1, i + 1 < n ? (int32_t)i + 1 : -1, 0, 1};
    size_t hn = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        uint32_t r = pair_rank(t, p, (int32_t)i, n);
        if (r != UINT32_MAX)
            heap_push(t->heap, &hn, (tok_heap_ent){r, (uint32_t)i, 0});
    }
    while (hn) {
        tok_heap_ent x = heap_pop(t->heap, &hn);
        tok_node *a = &nd[x.pos];
        if (!a->alive || a->ver != x.ver || a->next < 0)
            continue; /* stale: the pair changed since it was pushed */
        tok_node *b = &nd[a->next];
        b->alive = 0;
        a->id = x.rank;
        a->next = b->next;
        if (a->next >= 0)
            nd[a->next].prev = (int32_t)x.pos;
        a->ver++;
        uint32_t r = pair_rank(t, p, (int32_t)x.pos, n);
        if (r != UINT32_MAX) {
            if (hn + 2 > t->heap_cap && (rc = grow(&t->heap, &t->heap_cap, hn + 2, sizeof *t->heap, e)))
                return rc;
            heap_push(t->heap, &hn, (tok_heap_ent){r, x.pos, a->ver});
        }
        if (a->prev >= 0) {
            tok_node *pv = &nd[a->prev];
            pv->ver++;
            r = pair_rank(t, p, a->prev, n);
            if (r != UINT32_MAX) {
                if (hn + 2 > t->heap_cap &&
                    (rc = grow(&t->heap, &t->heap_cap, hn + 2, sizeof *t->heap, e)))
                    return rc;
                heap_push(t->heap, &hn, (tok_heap_ent){r, pv->start, pv->ver});
            }
        }
    }
    for (int32_t i = 0; i >= 0; i = nd[i].next)
        if ((rc = eng_tokvec_push(out, nd[i].id, e)))
            return rc;
    return 0;
}

/* ------------------------------------------------------------ cache */
static int cache_init(eng_tok *t, tlm_err *e)
{
    t->cache = calloc(TOK_CACHE_SLOTS, sizeof *t->cache);
    t->cache_bytes = malloc((size_t)TOK_CACHE_SLOTS / 2 * TOK_CACHE_MAX_PIECE);
    t->cache_ids = malloc((size_t)TOK_CACHE_SLOTS / 2 * TOK_CACHE_MAX_PIECE * sizeof(uint32_t));
    if (!t->cache || !t->cache_bytes || !t->cache_ids)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (tokenizer cache)");
    return 0;
}

static int cache_get(eng_tok *t, const uint8_t *p, size_t n, uint64_t h, eng_tokvec *out, tlm_err *e)
{
    int rc;
    if (!t->cache && (rc = cache_init(t, e)))
        return rc;
    for (uint32_t i = (uint32_t)h & (TOK_CACHE_SLOTS - 1);; i = (i + 1) & (TOK_CACHE_SLOTS - 1)) {
        tok_cache_slot *s = &t->cache[i];
        if (!s->hash)
            return 0;
        if (s->hash == h && s->klen == n && memcmp(t->cache_bytes + s->key, p, n) == 0) {
            if (TLM_GROW(out->ids, out->cap, out->n + s->nids, 1024))
                return tlm_errf(e, TLM_ENOMEM, "out of memory (%zu token ids)", out->n + s->nids);
            memcpy(out->ids + out->n, t->cache_ids + s->ids, s->nids * sizeof(uint32_t));
            out->n += s->nids;
            return 1;
        }
    }
}

/* Pieces are at most TOK_CACHE_MAX_PIECE bytes and give at most one id per byte, so the arenas hold
 * TOK_CACHE_SLOTS / 2 of them. */
static int cache_put(eng_tok *t, const uint8_t *p, size_t n, uint64_t h, const uint32_t *ids, size_t nids,
                     tlm_err *e)
{
    int rc;
    if (n > TOK_CACHE_MAX_PIECE || nids > n)
        return 0;
    if (!t->cache && (rc = cache_init(t, e)))
        return rc;
    if (t->cache_used >= TOK_CACHE_SLOTS / 2) { /* full: start over (cheap, and keeps probing short) */
        memset(t->cache, 0, TOK_CACHE_SLOTS * sizeof *t->cache);
        t->cache_used = t->cache_bytes_used = t->cache_ids_used = 0;
    }
    uint32_t i = (uint32_t)h & (TOK_CACHE_SLOTS - 1);
    while (t->cache[i].hash)
        i = (i + 1) & (TOK_CACHE_SLOTS - 1);
    tok_cache_slot *s = &t->cache[i];
    s->hash = h;
    s->key = t->cache_bytes_used;
    s->klen = (uint16_t)n;
    s->ids = t->cache_ids_used;
    s->nids = (uint16_t)nids;
    memcpy(t->cache_bytes + s->key, p, n);
    memcpy(t->cache_ids + s->ids, ids, nids * sizeof(uint32_t));
    t->cache_bytes_used += (uint32_t)n;
    t->cache_ids_used += (uint32_t)nids;
    t->cache_used++;
    return 0;
}

int tok_cached(eng_tok *t, const uint8_t *p, size_t n, tok_piece_fn *fn, eng_tokvec *out, tlm_err *e)
{
    if (n > TOK_CACHE_MAX_PIECE)
        return fn(t, p, n, out, e);
    uint64_t h = tok_hash(p, n);
    int rc = cache_get(t, p, n, h, out, e);
    if (rc)
        return rc < 0 ? rc : 0;
    size_t before = out->n;
    if ((rc = fn(t, p, n, out, e)))
        return rc;
    return cache_put(t, p, n, h, out->ids + before, out->n - before, e);
}

int tok_bpe_piece(eng_tok *t, const uint8_t *p, size_t n, eng_tokvec *out, tlm_err *e)
{
    if (n == 1)
        return eng_tokvec_push(out, t->byte_id[p[0]], e);
    int64_t whole = tok_map_get(t, p, n);
    if (whole >= 0)
        return eng_tokvec_push(out, (uint32_t)whole, e);
    if (n > TOK_CACHE_MAX_PIECE)
        return n <= SMALL_PIECE ? merge_small(t, p, n, out, e) : merge_large(t, p, n, out, e);
    return tok_cached(t, p, n, merge_small, out, e);
}
