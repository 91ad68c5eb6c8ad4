/* attn.c: the attention token mixer of `transformer` and
 * `gated_attn`: norm1, one fused q/k/v[/gate] projection, RoPE on q and k,
 * causal attention, the optional sigmoid output gate (Qiu et al. 2025:
 * sigmoid(x W_g) with x the normed block input, elementwise or per head),
 * o_proj added onto the residual stream.
 *   forward:  resid_mid = resid[l] + o_proj(gate(attn(rope(q), rope(k), v)))
 *   backward: takes d/d resid_mid in m->dresid, leaves d/d resid[l] there. */
#include "engine/model/internal.h"

void eng__attn_fwd(eng_model *m, int l, int B, int T)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const eng_layer_params *p = &m->lp[l];
    eng_layer_acts *a = &m->la[l];
    const int N = B * T, d = m->d, S = m->S, hd = m->hd, H = m->H, Hkv = m->Hkv;
    const float *P = m->params;
    const float *x = m->resid + (size_t)l * N * d;
    float *q = a->qkvg, *k = q + H * hd, *v = k + Hkv * hd, *z = v + Hkv * hd;
    o->rmsnorm_fwd(ctx, a->ln1, a->rstd1, x, P + p->ln1, N, d, (float)m->cfg.model.norm_eps);
    o->matmul(ctx, 0, 1, N, S, d, 1.0f, a->ln1, d, P + p->wqkvg, d, 0.0f, a->qkvg, S);
    o->rope_fwd(ctx, q, S, N, T, H, hd, m->rope_cs);
    o->rope_fwd(ctx, k, S, N, T, Hkv, hd, m->rope_cs);
    o->attention_fwd(ctx, a->atty, d, a->lse, q, S, k, v, S, B, T, H, Hkv, hd, m->att_ws);
    const float *oin = a->atty;
    if (m->G) {
        o->gate_fwd(ctx, a->gated, a->atty, z, S, N, d, m->G);
        oin = a->gated;
    }
    o->copy(ctx, a->resid_mid, x, (size_t)N * d);
    o->matmul(ctx, 0, 1, N, d, d, 1.0f, oin, d, P + p->wo, d, 1.0f, a->resid_mid, d);
}

void eng__attn_bwd(eng_model *m, int l, int B, int T)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const eng_layer_params *p = &m->lp[l];
    eng_layer_acts *a = &m->la[l];
    const int N = B * T, d = m->d, S = m->S, hd = m->hd, H = m->H, Hkv = m->Hkv;
    const float *P = m->params;
    float *Gr = m->grads;
    const float *x = m->resid + (size_t)l * N * d;
    const float *q = a->qkvg, *k = q + H * hd, *v = k + Hkv * hd, *z = v + Hkv * hd;
    float *dq = m->dqkvg, *dk = dq + H * hd, *dv = dk + Hkv * hd, *dz = dv + Hkv * hd;
    /* o_proj: its input's gradient, and the weight's */
    const float *oin = m->G ? a->gated : a->atty;
    float *doin = m->G ? m->dgated : m->datty;
    o->matmul(ctx, 0, 0, N, d, d, 1.0f, m->dresid, d, P + p->wo, d, 0.0f, doin, d);
    o->matmul(ctx, 1, 0, d, d, N, 1.0f, m->dresid, d, oin, d, 1.0f, Gr + p->wo, d);
    if (m->G)
        o->gate_bwd(ctx, m->datty, dz, m->dgated, a->atty, z, S, N, d, m->G);
    o->attention_bwd(ctx, dq, dk, dv, a->lse, m->datty, d, q, S, k, v, S, B, T, H, Hkv, hd, m->att_ws);
    o->rope_bwd(ctx, dq, S, N, T, H, hd, m->rope_cs);
    o->rope_bwd(ctx, dk, S, N, T, Hkv, hd, m->rope_cs);
    /* the fused projection */
    o->matmul(ctx, 0, 0, N, d, S, 1.0f, m->dqkvg, S, P + p->wqkvg, d, 0.0f, m->dln, d);
    o->matmul(ctx, 1, 0, S, d, N, 1.0f, m->dqkvg, S, a->ln1, d, 1.0f, Gr + p->wqkvg, d);
    o->rmsnorm_bwd(ctx, m->dresid, Gr + p->ln1, m->dln, x, P + p->ln1, a->rstd1, N, d);
}
