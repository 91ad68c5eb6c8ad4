/* model_util.h: helpers shared by the model tests (test_model,
 * test_grad_model, parity_dump): a resolved config for a tiny model from a
 * few knobs, and deterministic token batches. */
#ifndef TLM_TESTS_TEST_MODEL_UTIL_H
#define TLM_TESTS_TEST_MODEL_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/config/config.h"

typedef struct tm_spec {
    const char *name;     /* label for messages and files */
    const char *arch;     /* transformer | gated_attn */
    const char *gate;     /* elementwise | headwise (gated_attn) */
    const char *schedule; /* uniform | cosine (1.5 -> 0.5) | ... */
    int d, L, H, kv, dff, V, tied;
    double init_std;
} tm_spec;

static inline int tm_config(const tm_spec *s, int T, eng_config *c, tlm_err *e)
{
    char y[1024];
    int gated = !strcmp(s->arch, "gated_attn");
    snprintf(y, sizeof y,
             "arch: %s\n"
             "tokenizer: bpe%d\n"
             "model: {d_model: %d, layers: %d, heads: %d, kv_heads: %d, d_ff: %d, vocab: %d, tied: %s, "
             "init_std: %g%s%s}\n"
             "taper: {schedule: %s%s}\n"
             "train: {seq_len: %d, tokens: 100000}\n",
             s->arch, s->V, s->d, s->L, s->H, s->kv, s->dff, s->V, s->tied ? "true" : "false", s->init_std,
             gated ? ", gate: " : "", gated ? s->gate : "", s->schedule,
             strcmp(s->schedule, "uniform") ? ", ratio: [1.5, 0.5]" : "", T);
    return eng_config_from_text(s->name, y, strlen(y), c, e);
}

/* tokens (B*T) in [0, V); targets = next token, the last position ignored (-1)
 * in every other sequence so that uncounted targets are exercised */
static inline void tm_batch(uint64_t seed, int B, int T, int V, int32_t *tok, int32_t *tgt)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    int32_t seq[4096];
    for (int b = 0; b < B; b++) {
        for (int t = 0; t <= T && t < 4096; t++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            seq[t] = (int32_t)(s % (uint64_t)V);
        }
        for (int t = 0; t < T; t++) {
            tok[b * T + t] = seq[t];
            tgt[b * T + t] = seq[t + 1];
        }
        if (b % 2)
            tgt[b * T + T - 1] = -1;
    }
}

#endif
