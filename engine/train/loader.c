/* loader.c: deterministic training order and the fixed validation set over
 * token shards (scheme in loader.h). */
#include "engine/train/loader.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/format/manifest.h"
#include "engine/tok/tokenizer.h"
#include "engine/train/rng.h"
#include "common/sha256.h"
#include "engine/format/shard.h"

/* The windows of one split: a subset of the blocks of one shard set. */
typedef struct split {
    const eng_shardset *set;
    const uint64_t *first_window; /* (set->n + 1): global index of each shard's first window */
    uint64_t *blocks;             /* block ids in this split, ascending */
    uint64_t n_blocks;
    uint64_t n_windows;
} split;

typedef struct windows {
    uint64_t *first; /* (n_shards + 1) cumulative window counts */
    uint64_t total;
} windows;

struct eng_loader {
    int T;
    uint32_t vocab;          /* model.vocab: every token must be below */
    uint64_t seed;
    eng_shardset train_set, val_set;
    int own_val;             /* val_set is open (data.val given) */
    windows train_w, val_w;
    split train, val;
    uint64_t val_seqs;
    uint64_t cursor;
    uint64_t perm_epoch;     /* epoch of `perm` (UINT64_MAX: none yet) */
    eng_perm perm;
    int32_t *scratch;        /* (T + 1) */
    char data_id[65];
};

static int count_windows(const eng_shardset *s, int T, windows *w, tlm_err *e)
{
    w->first = calloc((size_t)s->n + 1, sizeof *w->first);
    if (!w->first)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (int i = 0; i < s->n; i++) {
        uint64_t n = s->shards[i].n_tokens;
        w->first[i + 1] = w->first[i] + (n > 0 ? (n - 1) / (uint64_t)T : 0);
    }
    w->total = w->first[s->n];
    return 0;
}

static uint64_t n_blocks_of(uint64_t n_windows) { return (n_windows + ENG_LOADER_BLOCK - 1) / ENG_LOADER_BLOCK; }

static uint64_t block_size(uint64_t b, uint64_t total_windows)
{
    uint64_t start = b * ENG_LOADER_BLOCK;
    return total_windows - start < ENG_LOADER_BLOCK ? total_windows - start : ENG_LOADER_BLOCK;
}

/* Held out iff floor((b+1) f + 1/2) > floor(b f + 1/2). */
static int held_out(uint64_t b, double f)
{
    double lo = (double)b * f + 0.5, hi = (double)(b + 1) * f + 0.5;
    return (uint64_t)hi > (uint64_t)lo;
}

/* which: 0 = every block, 1 = kept for training, 2 = held out. */
static int make_split(split *sp, const eng_shardset *set, const windows *w, int which, double f, tlm_err *e)
{
    memset(sp, 0, sizeof *sp);
    sp->set = set;
    sp->first_window = w->first;
    uint64_t nb = n_blocks_of(w->total);
    sp->blocks = malloc((nb ? nb : 1) * sizeof *sp->blocks);
    if (!sp->blocks)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    for (uint64_t b = 0; b < nb; b++) {
        int h = which == 0 ? 0 : held_out(b, f);
        if (which == 0 || (which == 1 && !h) || (which == 2 && h)) {
            sp->blocks[sp->n_blocks++] = b;
            sp->n_windows += block_size(b, w->total);
        }
    }
    return 0;
}

/* Split-local window j -> (shard, first token). */
static void locate(const split *sp, uint64_t j, int *shard, uint64_t *start, int T)
{
    uint64_t w = sp->blocks[j / ENG_LOADER_BLOCK] * ENG_LOADER_BLOCK + j % ENG_LOADER_BLOCK;
    int lo = 0, hi = sp->set->n - 1; /* the last shard whose first window <= w */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (sp->first_window[mid] <= w)
            lo = mid;
        else
            hi = mid - 1;
    }
    *shard = lo;
    *start = (w - sp->first_window[lo]) * (uint64_t)T;
}

static int read_window(eng_loader *l, const split *sp, uint64_t j, int32_t *tokens, int32_t *targets, tlm_err *e)
{
    int s;
    uint64_t start;
    locate(sp, j, &s, &start, l->T);
    const eng_shard *sh = &sp->set->shards[s];
    int rc = eng_shard_read(sh, start, (size_t)l->T + 1, l->scratch, e);
    if (rc)
        return rc;
    for (int i = 0; i <= l->T; i++)
        if (l->scratch[i] < 0 || (uint32_t)l->scratch[i] >= l->vocab)
            return tlm_errf(e, TLM_EDATA, "%s: token %" PRIu64 " is %" PRId32 ", outside the vocabulary of %u",
                            sh->path, start + (uint64_t)i, l->scratch[i], l->vocab);
    memcpy(tokens, l->scratch, (size_t)l->T * sizeof *tokens);
    memcpy(targets, l->scratch + 1, (size_t)l->T * sizeof *targets);
    return 0;
}

/* The one place that decides whether shards fit the config's tokenizer.
 * Today: the tokenizer name and the vocabulary size.  A deeper check (the
 * shard's tokenizer SHA-256 against the tokenizer definition the config
 * names) belongs here too. */
static int check_tokenizer(const eng_shardset *set, const eng_config *cfg, const char *key, tlm_err *e)
{
    for (int i = 0; i < set->n; i++) {
        const eng_shard *s = &set->shards[i];
        if (strcmp(s->tokenizer, cfg->tokenizer))
            return tlm_errf(e, TLM_EDATA,
                            "%s: %s: shard was tokenized with '%s' but the config's tokenizer is '%s' "
                            "(re-tokenize the data or set tokenizer: %s)",
                            key, s->path, s->tokenizer, cfg->tokenizer, s->tokenizer);
        if (s->vocab > (uint32_t)cfg->model.vocab)
            return tlm_errf(e, TLM_EDATA,
                            "%s: %s: shard vocabulary %u is larger than model.vocab %d (tokens would fall "
                            "outside the embedding)",
                            key, s->path, s->vocab, cfg->model.vocab);
    }
    return 0;
}

static void hash_set(tlm_sha256 *h, const char *tag, const eng_shardset *s)
{
    char buf[96];
    int n = snprintf(buf, sizeof buf, "%s:%d;", tag, s->n);
    tlm_sha256_update(h, buf, (size_t)n);
    for (int i = 0; i < s->n; i++) {
        n = snprintf(buf, sizeof buf, "%" PRIu64 ",%u;", s->shards[i].n_tokens, s->shards[i].vocab);
        tlm_sha256_update(h, buf, (size_t)n);
        tlm_sha256_update(h, s->shards[i].payload_sha256, 32);
    }
}

/* A split folder of a tlm-data dataset (DIR/train, DIR/val) must match its
 * manifest (engine/format/manifest.h); other shards have only their own headers. */
static int check_manifest(const eng_shardset *set, const char *path, tlm_err *e)
{
    struct stat st;
    int folder = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    char mpath[4200], sname[16];
    if (!eng_manifest_locate(path, folder, mpath, sizeof mpath, sname) || (strcmp(sname, "train") && strcmp(sname, "val")))
        return 0;
    eng_manifest m;
    int rc = eng_manifest_load(mpath, &m, e);
    if (rc)
        return m.foreign ? 0 : rc;
    rc = eng_manifest_check(&m, sname, set, folder, e);
    eng_manifest_clear(&m);
    return rc;
}

/* Header checks, the manifest, then every payload hash (the one cost that
 * grows with the data: docs/data.md). */
static int open_set(eng_shardset *set, const char *path, const char *key, tlm_err *e)
{
    if (!path[0])
        return tlm_errf(e, TLM_EDATA, "%s is empty: the config must name the token shards (a .tlmtok file or a folder)",
                        key);
    int rc = eng_shardset_open(set, path, 0, e);
    if (!rc && (rc = check_manifest(set, path, e)))
        eng_shardset_close(set);
    if (!rc && (rc = eng_shardset_verify(set, e)))
        eng_shardset_close(set);
    if (rc)
        tlm_err_prefix(e, "%s", key);
    return rc;
}

int eng_loader_open(eng_loader **out, const eng_config *cfg, tlm_err *e)
{
    *out = NULL;
    eng_loader *l = calloc(1, sizeof *l);
    if (!l)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    l->T = cfg->train.seq_len;
    l->vocab = (uint32_t)cfg->model.vocab;
    l->seed = (uint64_t)cfg->seed;
    l->perm_epoch = UINT64_MAX;
    int rc = 0;
    const double f = cfg->data.val_fraction;
    const int own_val = cfg->data.val[0] != '\0';

    if ((rc = open_set(&l->train_set, cfg->data.train, "data.train", e)))
        goto fail;
    if ((rc = check_tokenizer(&l->train_set, cfg, "data.train", e)))
        goto fail;
    /* the rank file beside the shards must be the one they were made with
     * (its definition hash is in every header): an edited one is refused
     * by its reader, another one by the hash; an evaluation would encode
     * text with it that the model never saw */
    if ((rc = eng_tok_check_shards(cfg->tokenizer, &l->train_set, cfg->data.train, e)))
        goto fail;
    if (own_val) {
        if ((rc = open_set(&l->val_set, cfg->data.val, "data.val", e)))
            goto fail;
        l->own_val = 1;
        if ((rc = check_tokenizer(&l->val_set, cfg, "data.val", e)) ||
            (rc = eng_tok_check_shards(cfg->tokenizer, &l->val_set, cfg->data.val, e)))
            goto fail;
    }
    if (!(l->scratch = malloc(((size_t)l->T + 1) * sizeof *l->scratch))) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = count_windows(&l->train_set, l->T, &l->train_w, e)))
        goto fail;
    if (own_val) {
        if ((rc = count_windows(&l->val_set, l->T, &l->val_w, e)) ||
            (rc = make_split(&l->train, &l->train_set, &l->train_w, 0, 0, e)) ||
            (rc = make_split(&l->val, &l->val_set, &l->val_w, 0, 0, e)))
            goto fail;
    } else if ((rc = make_split(&l->train, &l->train_set, &l->train_w, 1, f, e)) ||
               (rc = make_split(&l->val, &l->train_set, &l->train_w, 2, f, e))) {
        goto fail;
    }
    if (l->train.n_windows == 0) {
        rc = tlm_errf(e, TLM_EDATA, "data.train: %s: %" PRIu64 " tokens hold no training window of %d tokens",
                      cfg->data.train, l->train_set.n_tokens, l->T + 1);
        goto fail;
    }
    if (l->val.n_windows == 0) {
        if (own_val)
            rc = tlm_errf(e, TLM_EDATA, "data.val: %s: %" PRIu64 " tokens hold no window of %d tokens",
                          cfg->data.val, l->val_set.n_tokens, l->T + 1);
        else
            rc = tlm_errf(e, TLM_EDATA,
                          "data.train: %s: %" PRIu64 " windows of %d tokens are too few to hold out "
                          "data.val_fraction %g in blocks of %d (give data.val, more data or a larger fraction)",
                          cfg->data.train, l->train_w.total, l->T + 1, f, ENG_LOADER_BLOCK);
        goto fail;
    }
    uint64_t want = ((uint64_t)cfg->eval.val_tokens + (uint64_t)l->T - 1) / (uint64_t)l->T;
    l->val_seqs = want < l->val.n_windows ? want : l->val.n_windows;
    if (l->val_seqs == 0)
        l->val_seqs = 1;

    tlm_sha256 h;
    tlm_sha256_init(&h);
    hash_set(&h, "train", &l->train_set);
    if (own_val)
        hash_set(&h, "val", &l->val_set);
    char buf[64];
    int n = snprintf(buf, sizeof buf, "split:%s:%.17g", own_val ? "folder" : "held-out", own_val ? 0.0 : f);
    tlm_sha256_update(&h, buf, (size_t)n);
    uint8_t d[32];
    tlm_sha256_final(&h, d);
    tlm_hex(d, 32, l->data_id);
    *out = l;
    return 0;
fail:
    eng_loader_free(l);
    return rc;
}

void eng_loader_free(eng_loader *l)
{
    if (!l)
        return;
    free(l->train.blocks);
    free(l->val.blocks);
    free(l->train_w.first);
    free(l->val_w.first);
    free(l->scratch);
    eng_shardset_close(&l->train_set);
    if (l->own_val)
        eng_shardset_close(&l->val_set);
    free(l);
}

void eng_loader_get_info(const eng_loader *l, eng_loader_info *info)
{
    memset(info, 0, sizeof *info);
    info->seq_len = l->T;
    info->held_out = !l->own_val;
    info->train_tokens = l->train_set.n_tokens;
    info->train_windows = l->train.n_windows;
    info->val_windows = l->val.n_windows;
    info->val_seqs = l->val_seqs;
    memcpy(info->data_id, l->data_id, sizeof info->data_id);
}

uint64_t eng_loader_cursor(const eng_loader *l) { return l->cursor; }

void eng_loader_seek(eng_loader *l, uint64_t cursor) { l->cursor = cursor; }

/* Epoch e of seed s is shuffled by the permutation keyed mix(s) ^ mix(e + c). */
static void epoch_perm(eng_perm *p, uint64_t M, uint64_t seed, uint64_t epoch)
{
    eng_perm_init(p, M, eng_mix64(seed) ^ eng_mix64(epoch + 0x7f4a7c15ULL));
}

static uint64_t window_at(eng_loader *l, uint64_t k)
{
    uint64_t M = l->train.n_windows, epoch = k / M;
    if (epoch != l->perm_epoch) {
        epoch_perm(&l->perm, M, l->seed, epoch);
        l->perm_epoch = epoch;
    }
    return eng_perm_at(&l->perm, k % M);
}

uint64_t eng_loader_window_at(const eng_loader *l, uint64_t k)
{
    uint64_t M = l->train.n_windows;
    eng_perm p;
    epoch_perm(&p, M, l->seed, k / M);
    return eng_perm_at(&p, k % M);
}

int eng_loader_next(eng_loader *l, int B, int32_t *tokens, int32_t *targets, tlm_err *e)
{
    for (int b = 0; b < B; b++) {
        uint64_t j = window_at(l, l->cursor);
        int rc = read_window(l, &l->train, j, tokens + (size_t)b * l->T, targets + (size_t)b * l->T, e);
        if (rc)
            return rc;
        l->cursor++;
    }
    return 0;
}

int eng_loader_val_batch(eng_loader *l, uint64_t first, int B, int32_t *tokens, int32_t *targets, tlm_err *e)
{
    if (first + (uint64_t)B > l->val_seqs)
        return tlm_errf(e, TLM_EINTERNAL, "validation batch [%" PRIu64 ", %" PRIu64 ") past the %" PRIu64 " sequences",
                        first, first + (uint64_t)B, l->val_seqs);
    for (int b = 0; b < B; b++) {
        /* evenly spaced over the V validation windows */
        uint64_t i = first + (uint64_t)b;
        unsigned __int128 pos = (unsigned __int128)i * l->val.n_windows / l->val_seqs;
        int rc = read_window(l, &l->val, (uint64_t)pos, tokens + (size_t)b * l->T, targets + (size_t)b * l->T, e);
        if (rc)
            return rc;
    }
    return 0;
}
