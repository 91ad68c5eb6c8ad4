/* account.h: parameter and FLOP account of a resolved config.
 *
 * Parameters are counted tensor by tensor as the engine allocates them.
 * FLOPs count multiply-adds as 2: a forward pass costs 2 per matmul weight
 * per token (the LM head included, tied or not) plus causal attention,
 * 2 x 2 x d_attn x (T+1)/2 per layer per token (scores and weighted sum over
 * the average causal context); training costs 3x the forward pass.  Norms,
 * activations and the softmax are not counted (they are O(d), not O(d^2)). */
#ifndef TLM_ENGINE_ACCOUNT_H
#define TLM_ENGINE_ACCOUNT_H

#include <stdint.h>

#include "engine/config/config.h"
#include "common/err.h"

typedef struct eng_layer_account {
    int d_ff;
    int64_t attn;    /* q, k, v, o projections */
    int64_t mlp;     /* gate, up, down (SwiGLU) */
    int64_t norm;    /* RMSNorm gains */
    int64_t extra;   /* output gate, memory, ... (architecture-specific) */
    int64_t total;
    double flops_fwd; /* per token */
    int n_levels;     /* hope_attn: CMS levels (0 for the other architectures) */
    int level_d_ff[ENG_HOPE_MAX_LEVELS]; /* hope_attn: their widths (sum d_ff) */
    int level_chunk[ENG_HOPE_MAX_LEVELS]; /* hope_attn: their update periods in optimizer steps */
} eng_layer_account;

typedef struct eng_account {
    int64_t total;
    int64_t embedding;      /* token embedding, plus lm_head when untied */
    int64_t non_embedding;  /* total - embedding */
    int64_t mlp, attn, norm, extra;
    double mlp_share;       /* mlp / non_embedding */
    double flops_fwd;       /* per token, forward */
    double flops_train;     /* per token, forward + backward */
    double flops_attention; /* per token, forward, the attention-score part */
    int n_layers;
    eng_layer_account layer[ENG_MAX_LAYERS];
} eng_account;

int eng_account_compute(const eng_config *c, eng_account *a, tlm_err *e);

#endif
