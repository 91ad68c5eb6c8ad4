/* account.c: parameter and FLOP account (see account.h).  Must agree with
 * the tensors model.c allocates: tests/test_account checks the two. */
#include "engine/config/account.h"

#include <string.h>

#include "engine/config/arch.h"
#include "engine/config/taper.h"

int eng_account_compute(const eng_config *c, eng_account *a, tlm_err *e)
{
    memset(a, 0, sizeof *a);
    const eng_model_cfg *m = &c->model;
    int widths[ENG_MAX_LAYERS];
    int rc = eng_taper_widths(c, widths, e);
    if (rc)
        return rc;
    const int64_t d = m->d_model;
    const int64_t hd = d / m->heads;
    const int64_t kv = (int64_t)m->kv_heads * hd;
    const double ctx = (c->train.seq_len + 1) / 2.0;
    /* hope_attn: the same MLP parameters split into levels, each with its
     * own pre-norm (level 0's replaces post_attention_layernorm) */
    const int hope = c->arch == ENG_ARCH_HOPE_ATTN;
    int lw[ENG_MAX_LAYERS * ENG_HOPE_MAX_LEVELS];
    if (hope && (rc = eng_hope_widths(c, lw, e)))
        return rc;
    a->n_layers = m->layers;
    for (int l = 0; l < m->layers; l++) {
        eng_layer_account *la = &a->layer[l];
        la->d_ff = widths[l];
        la->attn = d * d + 2 * d * kv + d * d;
        la->mlp = 3 * d * widths[l];
        la->norm = 2 * d;
        if (hope) {
            la->n_levels = m->hope_levels;
            la->norm = d + (int64_t)m->hope_levels * d;
            for (int i = 0; i < m->hope_levels; i++) {
                la->level_d_ff[i] = lw[l * ENG_HOPE_MAX_LEVELS + i];
                la->level_chunk[i] = (int)m->hope_chunks[i];
            }
        }
        if (c->arch == ENG_ARCH_GATED_ATTN)
            la->extra = m->gate == ENG_GATE_HEADWISE ? d * m->heads : d * d;
        la->total = la->attn + la->mlp + la->norm + la->extra;
        double attn_flops = 2.0 * 2.0 * (double)d * ctx;
        la->flops_fwd = 2.0 * (double)(la->attn + la->mlp + la->extra) + attn_flops;
        if (c->arch == ENG_ARCH_TITANS) { /* the memory, its gates and the persistent entries (docs/titans.md) */
            double xflops;
            eng_titans_account(c, &la->extra, &xflops, &attn_flops);
            la->total = la->attn + la->mlp + la->norm + la->extra;
            la->flops_fwd = 2.0 * (double)(la->attn + la->mlp) + xflops + attn_flops;
        }
        a->flops_attention += attn_flops;
        a->attn += la->attn;
        a->mlp += la->mlp;
        a->norm += la->norm;
        a->extra += la->extra;
        a->flops_fwd += la->flops_fwd;
    }
    a->norm += d; /* final norm */
    a->embedding = (int64_t)m->vocab * d * (m->tied ? 1 : 2);
    a->non_embedding = a->attn + a->mlp + a->norm + a->extra;
    a->total = a->non_embedding + a->embedding;
    a->mlp_share = a->non_embedding ? (double)a->mlp / (double)a->non_embedding : 0;
    a->flops_fwd += 2.0 * (double)m->vocab * (double)d; /* LM head */
    a->flops_train = 3.0 * a->flops_fwd;
    return 0;
}
