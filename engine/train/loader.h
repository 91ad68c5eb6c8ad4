/* loader.h: training and validation sequences from token shards, in an
 * order that is a pure function of (data, seq_len, seed, cursor).
 *
 * The scheme (docs/protocol.md, "Data order"):
 * - A window is seq_len + 1 consecutive tokens of one shard, starting at a
 *   multiple of seq_len within that shard (a shard of n tokens holds
 *   floor((n - 1) / seq_len) windows; windows never cross shards).  Inputs
 *   are the first seq_len tokens, targets the last seq_len.
 * - Windows are numbered in shard order (shards in name order) and grouped
 *   into blocks of ENG_LOADER_BLOCK consecutive windows.
 * - Split: with data.val, train is every window of data.train and
 *   validation every window of data.val.  Without it, block b of data.train
 *   is held out for validation iff floor((b+1) f + 1/2) > floor(b f + 1/2)
 *   (f = data.val_fraction): evenly spread, the same for every seed.
 * - Training order: the train windows, numbered 0..M-1, are visited epoch
 *   after epoch, each epoch in a fresh keyed permutation (engine/train/rng.h
 *   eng_perm, key from seed and epoch).  The k-th sequence drawn (k = 0, 1,
 *   ...: the cursor) is window perm_{seed, k / M}(k mod M).  Resuming needs
 *   only the cursor.
 * - Validation set: n = min(V, ceil(eval.val_tokens / seq_len)) of the V
 *   validation windows, evenly spaced (i * V / n), the same at every
 *   evaluation and for every seed.
 *
 * Opening refuses (TLM_EDATA, with the file named) shards tokenized with a
 * tokenizer other than the config's, vocabularies larger than model.vocab,
 * splits too small to hold one window, shards whose payload does not hash
 * to their header's SHA-256 (every shard is hashed at open: the cost is in
 * docs/data.md), and split folders that do not match their dataset's
 * manifest (engine/format/manifest.h).  Reads are bounded and every token is
 * checked against the vocabulary.  Nothing allocates after open.
 *
 * Must not: emit anything (no printing), depend on the model. */
#ifndef TLM_ENGINE_LOADER_H
#define TLM_ENGINE_LOADER_H

#include <stdint.h>

#include "engine/config/config.h"
#include "common/err.h"

#define ENG_LOADER_BLOCK 8

typedef struct eng_loader eng_loader;

typedef struct eng_loader_info {
    int seq_len;
    int held_out;              /* 1: validation held out of data.train */
    uint64_t train_tokens;     /* tokens in the train shards */
    uint64_t train_windows;    /* M */
    uint64_t val_windows;      /* V */
    uint64_t val_seqs;         /* sequences per evaluation */
    char data_id[65];          /* SHA-256 over the shards' payload hashes and the split */
} eng_loader_info;

/* Uses cfg->data, tokenizer, model.vocab, train.seq_len, seed, eval.val_tokens. */
int eng_loader_open(eng_loader **out, const eng_config *cfg, tlm_err *e);
void eng_loader_free(eng_loader *l);
void eng_loader_get_info(const eng_loader *l, eng_loader_info *info);

/* The number of training sequences drawn so far (the whole data-order state). */
uint64_t eng_loader_cursor(const eng_loader *l);
void eng_loader_seek(eng_loader *l, uint64_t cursor);
/* The train window index (0..M-1) of the k-th sequence drawn. */
uint64_t eng_loader_window_at(const eng_loader *l, uint64_t k);

/* The next B training sequences: tokens and targets are (B, seq_len). */
int eng_loader_next(eng_loader *l, int B, int32_t *tokens, int32_t *targets, tlm_err *e);

/* Validation sequences [first, first + B) of the fixed evaluation set
 * (first + B <= val_seqs). */
int eng_loader_val_batch(eng_loader *l, uint64_t first, int B, int32_t *tokens, int32_t *targets, tlm_err *e);

#endif
