/* titans_util.h: tiny titans models for the Titans tests (test_titans,
 * test_titans_grad, parity_titans_dump) and bench_titans: a resolved
 * config from a few knobs, the memory's included. */
#ifndef TLM_TESTS_TITANS_UTIL_H
#define TLM_TESTS_TITANS_UTIL_H

#include <stdio.h>
#include <string.h>

#include "engine/config/config.h"

typedef struct titans_spec {
    const char *name;     /* label for messages and files */
    const char *variant;  /* mag | mal */
    const char *schedule; /* uniform | cosine (1.5 -> 0.5) */
    int d, L, H, kv, dff, V, tied;
    int window, persistent, chunk, depth, hidden; /* hidden 0: the default (2 x head size) */
    double max_lr, init_std;
} titans_spec;

static inline int ts_config(const titans_spec *s, int T, eng_config *c, tlm_err *e)
{
    char y[1024], hidden[64] = "";
    if (s->hidden)
        snprintf(hidden, sizeof hidden, ", mem_hidden: %d", s->hidden);
    snprintf(y, sizeof y,
             "arch: titans\n"
             "tokenizer: bpe%d\n"
             "model: {d_model: %d, layers: %d, heads: %d, kv_heads: %d, d_ff: %d, vocab: %d, tied: %s, "
             "init_std: %g, titans: {variant: %s, window: %d, persistent: %d, chunk: %d, mem_depth: %d, "
             "max_lr: %g%s}}\n"
             "taper: {schedule: %s%s}\n"
             "train: {seq_len: %d, tokens: 100000}\n",
             s->V, s->d, s->L, s->H, s->kv, s->dff, s->V, s->tied ? "true" : "false", s->init_std, s->variant,
             s->window, s->persistent, s->chunk, s->depth, s->max_lr, hidden, s->schedule,
             strcmp(s->schedule, "uniform") ? ", ratio: [1.5, 0.5]" : "", T);
    return eng_config_from_text(s->name, y, strlen(y), c, e);
}

#endif
