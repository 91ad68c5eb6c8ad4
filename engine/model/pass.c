/* pass.c: the forward and backward passes over the whole stack
 * (embedding, blocks, final norm, LM head, cross-entropy) and the public
 * eng_model_forward/backward around them.
 *
 * A block is pre-norm: h += mixer(norm1(h)); h += mlp(norm2(h)), both
 * the architecture's row of the token-mixer table (internal.h): attn.c's
 * attention or titans.c's mixer, then mlp.c's SwiGLU of the layer's
 * tapered width or hope.c's levels.  Nothing here knows which
 * architecture runs.  Every number moves through m->ops; nothing here
 * allocates. */
#include <math.h>
#include <string.h>

#include "engine/model/internal.h"

static void eng__model_forward_stack(eng_model *m, int B, int T)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const int N = B * T, d = m->d;
    o->embedding_fwd(ctx, m->resid, m->params + m->off_embed, m->tokens, N, d);
    for (int l = 0; l < m->L; l++) {
        m->mixer->fwd(m, l, B, T);
        m->mixer->mlp->fwd(m, l, N);
    }
    o->rmsnorm_fwd(ctx, m->lnf, m->rstdf, eng__resid(m, m->L, N), m->params + m->off_norm, N, d,
                   (float)m->cfg.model.norm_eps);
    o->matmul(ctx, 0, 1, N, m->V, d, 1.0f, m->lnf, d, m->params + m->off_head, d, 0.0f, m->logits, m->V);
}

static void eng__model_backward_stack(eng_model *m, float dscale)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const int B = m->cur_B, T = m->cur_T, N = B * T, d = m->d, V = m->V;
    float *Gr = m->grads;
    o->xent_bwd(ctx, m->logits, m->targets, N, V, dscale);
    o->matmul(ctx, 0, 0, N, d, V, 1.0f, m->logits, V, m->params + m->off_head, d, 0.0f, m->dln, d);
    o->matmul(ctx, 1, 0, V, d, N, 1.0f, m->logits, V, m->lnf, d, 1.0f, Gr + m->off_head, d);
    o->zero(ctx, m->dresid, (size_t)N * d);
    o->rmsnorm_bwd(ctx, m->dresid, Gr + m->off_norm, m->dln, eng__resid(m, m->L, N), m->params + m->off_norm, m->rstdf, N,
                   d);
    for (int l = m->L - 1; l >= 0; l--) {
        m->mixer->mlp->bwd(m, l, N);
        m->mixer->bwd(m, l, B, T);
    }
    o->embedding_bwd(ctx, Gr + m->off_embed, m->dresid, m->tokens, N, d);
}

int eng_model_forward(eng_model *m, const int32_t *tokens, const int32_t *targets, int B, int T, double *loss,
                      float *nll, tlm_err *e)
{
    if (B < 1 || B > m->max_B || T < 1 || T > m->max_T)
        return tlm_errf(e, TLM_EINTERNAL, "model: batch %d x %d exceeds the planned %d x %d", B, T, m->max_B,
                        m->max_T);
    const int N = B * T;
    for (int n = 0; n < N; n++)
        if (tokens[n] < 0 || tokens[n] >= m->V || (targets && targets[n] >= m->V))
            return tlm_errf(e, TLM_EDATA, "model: token %d at position %d is outside the vocabulary (%d)",
                            tokens[n] < 0 || tokens[n] >= m->V ? tokens[n] : targets[n], n, m->V);
    m->ops->to_device(m->ctx, m->tokens, tokens, (size_t)N * sizeof(int32_t));
    m->cur_B = B;
    m->cur_T = T;
    m->have_forward = 0;
    eng__model_forward_stack(m, B, T);
    if (!targets) {
        /* inference: logits only; backward is refused */
        if (loss)
            *loss = NAN;
        if (!m->host_visible)
            m->ops->to_host(m->ctx, m->logits_host, m->logits, (size_t)N * m->V * sizeof(float));
        return 0;
    }
    m->ops->to_device(m->ctx, m->targets, targets, (size_t)N * sizeof(int32_t));
    m->ops->xent_fwd(m->ctx, m->losses, m->logits, m->targets, N, m->V);
    if (!m->host_visible)
        m->ops->to_host(m->ctx, m->logits_host, m->logits, (size_t)N * m->V * sizeof(float));
    m->ops->to_host(m->ctx, m->losses_host, m->losses, (size_t)N * sizeof(float));
    double sum = 0;
    int64_t cnt = 0;
    for (int n = 0; n < N; n++)
        if (targets[n] >= 0) {
            sum += m->losses_host[n];
            cnt++;
        }
    if (nll)
        memcpy(nll, m->losses_host, (size_t)N * sizeof(float));
    m->n_counted = cnt;
    m->have_forward = 1;
    if (loss)
        *loss = cnt ? sum / (double)cnt : 0.0;
    return 0;
}

const float *eng_model_logits(eng_model *m)
{
    return m->logits_host;
}

int eng_model_backward(eng_model *m, float scale, tlm_err *e)
{
    if (!m->have_forward)
        return tlm_errf(e, TLM_EINTERNAL, "model: backward needs a forward with targets just before it");
    m->have_forward = 0;
    float dscale = m->n_counted ? scale / (float)m->n_counted : 0.0f;
    eng__model_backward_stack(m, dscale);
    return 0;
}
