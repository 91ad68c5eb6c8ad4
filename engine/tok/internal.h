/* internal.h: the inside of eng_tok, shared by the files of engine/tok/ only.
 * Nothing here is part of the engine's API (see tokenizer.h). */
#ifndef TLM_ENGINE_TOK_INTERNAL_H
#define TLM_ENGINE_TOK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/utf8.h"
#include "engine/tok/tokenizer.h"

#define TOK_MAX_SPECIAL_LEN 64  /* bytes of a special token's text */
#define TOK_MAX_FILE (256u << 20) /* bytes of a tokenizer file */
#define TOK_CACHE_SLOTS 65536   /* piece -> ids cache (power of two) */
#define TOK_CACHE_MAX_PIECE 48  /* longer pieces are not cached */

/* An open-addressing map from byte strings to ids, over an arena where id's
 * bytes are arena[off[id] .. off[id+1]).  Slots hold (hash32 << 32 | id+1). */
typedef struct tok_map {
    uint64_t *slots;
    uint32_t mask;
} tok_map;

typedef struct tok_cache_slot {
    uint64_t hash;   /* 0 = empty */
    uint32_t key;    /* offset of the piece's bytes in cache_bytes */
    uint32_t ids;    /* offset of its ids in cache_ids */
    uint16_t klen, nids;
} tok_cache_slot;

typedef struct tok_special {
    char text[TOK_MAX_SPECIAL_LEN + 1];
    uint32_t len;
    uint32_t id;
} tok_special;

struct eng_tok {
    eng_tok_kind kind;
    char name[ENG_SHARD_TOKNAME + 1];
    uint32_t vocab;          /* n_ranks + n_special */
    uint32_t n_ranks;        /* ordinary tokens: ids 0..n_ranks-1 */
    uint8_t *arena;          /* token bytes */
    uint32_t *off;           /* (n_ranks + 1) offsets into arena */
    tok_map map;             /* bytes -> rank */
    uint32_t byte_id[256];   /* rank of each single byte */
    tok_special *special;    /* n_special, ids n_ranks.. */
    uint32_t n_special;
    int32_t eot;
    uint8_t sha[32];

    /* encoding state (one thread at a time) */
    pcre2_code *re;
    pcre2_match_data *md;
    uint8_t *fixed;          /* text with invalid UTF-8 replaced */
    size_t fixed_cap;
    struct tok_node *nodes;  /* merge scratch */
    size_t nodes_cap;
    struct tok_heap_ent *heap;
    size_t heap_cap;
    tok_cache_slot *cache;
    uint8_t *cache_bytes;
    uint32_t *cache_ids;
    uint32_t cache_used, cache_bytes_used, cache_ids_used;

    /* SentencePiece (kind ENG_TOK_SPM; spm.c): pieces are ids 0..n_ranks-1,
     * stored as they decode; the map holds the normal pieces only */
    uint8_t *spm_type;       /* TOK_SPM_* of each piece */
    float *spm_score;
    int spm_dummy_prefix, spm_byte_fallback;
    int spm_split;           /* words can be encoded apart (see spm.c) */
    int32_t spm_unk, spm_bos; /* </s> is eot */
    uint8_t *spm_norm;         /* the normalised text */
    size_t spm_norm_cap;
    struct tok_sym *syms;
    size_t syms_cap;
    struct tok_spm_ent *sheap;
    size_t sheap_cap;
    int32_t *spm_at;         /* byte offset -> symbol starting there, or -1 */
    size_t spm_at_cap;
};

/* SentencePiece piece types, numbered as in sentencepiece_model.proto */
enum { TOK_SPM_NORMAL = 1, TOK_SPM_UNKNOWN, TOK_SPM_CONTROL, TOK_SPM_USER, TOK_SPM_UNUSED, TOK_SPM_BYTE };

/* ---- hash.c: hashing and the rank map */
uint64_t tok_hash(const uint8_t *p, size_t n);
int tok_map_build(eng_tok *t, tlm_err *e);
/* rank of bytes p[0, n), or -1 */
int64_t tok_map_get(const eng_tok *t, const uint8_t *p, size_t n);

/* ---- pretok.c: the Llama 3 pre-tokenisation pattern */
extern const char tok_llama3_pattern[];
int tok_regex_compile(pcre2_code **re, pcre2_match_data **md, tlm_err *e);
/* Call fn(arg, start, len) for each piece of the valid UTF-8 text p[0, n). */
int tok_pretokenize(pcre2_code *re, pcre2_match_data *md, const uint8_t *p, size_t n,
                    int (*fn)(void *arg, const uint8_t *piece, size_t len), void *arg, tlm_err *e);

/* ---- bpe.c: rank files and byte-pair merging */
/* From the file's text (path names it in messages). */
int tok_load_ranks_text(eng_tok *t, const char *path, const char *text, size_t len, tlm_err *e);
/* Append the ids of one pre-tokenised piece. */
int tok_bpe_piece(eng_tok *t, const uint8_t *p, size_t n, eng_tokvec *out, tlm_err *e);
/* The canonical definition hash (sets t->sha). */
void tok_compute_sha(eng_tok *t);
/* Appends the ids of the piece p[0, n) (a word, a pre-tokenised piece). */
typedef int tok_piece_fn(eng_tok *t, const uint8_t *p, size_t n, eng_tokvec *out, tlm_err *e);
/* fn's ids for p through the piece -> ids cache of recent short pieces
 * (at most TOK_CACHE_MAX_PIECE bytes; a longer one goes to fn alone): a
 * hit appends the ids fn gave before, a miss calls fn and keeps them. */
int tok_cached(eng_tok *t, const uint8_t *p, size_t n, tok_piece_fn *fn, eng_tokvec *out, tlm_err *e);

/* ---- spm.c: SentencePiece BPE (llama2) */
int tok_spm_load_model(eng_tok *t, const char *path, const uint8_t *data, size_t len, tlm_err *e);
int tok_spm_is_vocab(const char *text, size_t len);
int tok_spm_load_vocab(eng_tok *t, const char *path, const char *text, size_t len, tlm_err *e);
void tok_spm_sha(eng_tok *t);
/* Append the ids of valid (or, raw, any) text; allow_special: <s>, </s> are the control ids. */
int tok_spm_encode(eng_tok *t, const uint8_t *p, size_t n, int allow_special, eng_tokvec *out, tlm_err *e);
int32_t tok_spm_special(const eng_tok *t, const char *text);

/* ---- shared helpers */
int tok_base64_decode(const char *s, size_t n, uint8_t *out, size_t cap, size_t *out_len);
size_t tok_base64_encode(const uint8_t *p, size_t n, char *out /* 4*ceil(n/3)+1 */);

/* A binary min-heap of T ordered by `before` (a strict order: before(a, b)
 * when a comes out first), as PREFIX_push and PREFIX_pop on an array the
 * caller sizes; one definition for the BPE merge (rank) and SentencePiece's
 * (score), each with its own entry type and order, inlined in its loop. */
#define TOK_HEAP_DEFINE(PREFIX, T, before)                                                                     \
    static void PREFIX##_push(T *h, size_t *n, T x)                                                           \
    {                                                                                                          \
        size_t i = (*n)++;                                                                                     \
        while (i > 0) {                                                                                        \
            size_t p = (i - 1) / 2;                                                                            \
            if (!before(&x, &h[p]))                                                                            \
                break;                                                                                         \
            h[i] = h[p];                                                                                       \
            i = p;                                                                                             \
        }                                                                                                      \
        h[i] = x;                                                                                              \
    }                                                                                                          \
    static T PREFIX##_pop(T *h, size_t *n)                                                                     \
    {                                                                                                          \
        T top = h[0], x = h[--(*n)];                                                                           \
        size_t i = 0;                                                                                          \
        for (;;) {                                                                                             \
            size_t c = 2 * i + 1;                                                                              \
            if (c >= *n)                                                                                       \
                break;                                                                                         \
            if (c + 1 < *n && before(&h[c + 1], &h[c]))                                                        \
                c++;                                                                                           \
            if (!before(&h[c], &x))                                                                            \
                break;                                                                                         \
            h[i] = h[c];                                                                                       \
            i = c;                                                                                             \
        }                                                                                                      \
        if (*n)                                                                                                \
            h[i] = x;                                                                                          \
        return top;                                                                                            \
    }

#endif
