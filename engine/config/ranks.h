/* ranks.h: a global batch shared among the ranks of a data-parallel job
 * (docs/parallel.md), a pure function of the config and the rank count, so
 * the trainer, tlm-worker and tlmd's --dry-run agree on it.
 *
 * A step's S = batch_tokens / seq_len sequences split into `ranks`
 * contiguous shares of S / ranks: rank r trains sequences
 * [r S/ranks, (r+1) S/ranks) of the step, so the union over the ranks is
 * exactly the batch one process trains.  Each rank passes its share in
 * micro-batches of the largest divisor of S / ranks that is at most
 * train.micro_batch (train.micro_batch itself when it divides the share).
 * Must not: depend on anything but the config. */
#ifndef TLM_ENGINE_CONFIG_RANKS_H
#define TLM_ENGINE_CONFIG_RANKS_H

#include "common/err.h"
#include "engine/config/config.h"

typedef struct eng_rank_split {
    int ranks;
    int seqs;   /* sequences per step, all ranks (S) */
    int share;  /* sequences per step and rank (S / ranks) */
    int micro;  /* sequences per forward pass on a rank */
    int accum;  /* passes per step on a rank (share / micro) */
} eng_rank_split;

/* TLM_ECONFIG, saying what to change, when S does not divide among the
 * ranks. */
int eng_rank_split_of(const eng_train_cfg *t, int ranks, eng_rank_split *out, tlm_err *e);

#endif
