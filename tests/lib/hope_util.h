/* hope_util.h: tiny hope_attn models for the Hope tests (test_hope,
 * parity_hope_dump, bench_hope): a resolved config from a few knobs,
 * including the CMS levels, chunk sizes and the width unit. */
#ifndef TLM_TESTS_HOPE_UTIL_H
#define TLM_TESTS_HOPE_UTIL_H

#include <stdio.h>
#include <string.h>

#include "engine/config/config.h"

typedef struct hope_spec {
    const char *name;     /* label for messages and files */
    const char *schedule; /* uniform | cosine (1.5 -> 0.5) */
    int d, L, H, kv, dff, V, tied;
    int levels;           /* CMS levels */
    const char *chunks;   /* "[1, 2, 4]" */
    int multiple;         /* taper.multiple: the levels' width unit */
    double init_std;
} hope_spec;

static inline int hs_config(const hope_spec *s, int T, eng_config *c, tlm_err *e)
{
    char y[1024];
    snprintf(y, sizeof y,
             "arch: hope_attn\n"
             "tokenizer: bpe%d\n"
             "model: {d_model: %d, layers: %d, heads: %d, kv_heads: %d, d_ff: %d, vocab: %d, tied: %s, "
             "init_std: %g, hope: {levels: %d, chunks: %s}}\n"
             "taper: {schedule: %s%s, multiple: %d}\n"
             "train: {seq_len: %d, tokens: 100000}\n",
             s->V, s->d, s->L, s->H, s->kv, s->dff, s->V, s->tied ? "true" : "false", s->init_std, s->levels,
             s->chunks, s->schedule, strcmp(s->schedule, "uniform") ? ", ratio: [1.5, 0.5]" : "", s->multiple, T);
    return eng_config_from_text(s->name, y, strlen(y), c, e);
}

#endif
