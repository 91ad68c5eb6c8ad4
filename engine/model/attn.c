/* attn.c: the attention token mixer of `transformer`, `gated_attn` and
 * `hope_attn`, and the rows of the first two in the token-mixer table
 * (internal.h; hope_attn's is in hope.c): norm1, one fused q/k/v[/gate] projection, RoPE on q and k,
 * causal attention, the optional sigmoid output gate (Qiu et al. 2025:
 * sigmoid(x W_g) with x the normed block input, elementwise or per head),
 * o_proj added onto the residual stream.
 *   forward:  resid_mid = resid[l] + o_proj(gate(attn(rope(q), rope(k), v)))
 *   backward: takes d/d resid_mid in m->dresid, leaves d/d resid[l] there.
 * gated_attn's row sets the gate's width G (0 in the others) and plans the
 * gated output; nothing else here differs between the rows.
 *
 * Must not: allocate outside a row's create and plan. */
#include <stdlib.h>

#include "engine/model/internal.h"

/* ------------------------------------------------------------ tensors */

void eng__attn_layout_qkv(eng_model *m, int cap, int l)
{
    const int d = m->d, dkv = m->Hkv * m->hd;
    /* q, k, v (and what the row adds to the projection) are adjacent: the block multiplies them as one */
    m->lp[l].wqkvg = eng__model_add_tensor(m, cap, 2, d, d, 1, "model.layers.%d.self_attn.q_proj.weight", l);
    eng__model_add_tensor(m, cap, 2, dkv, d, 1, "model.layers.%d.self_attn.k_proj.weight", l);
    eng__model_add_tensor(m, cap, 2, dkv, d, 1, "model.layers.%d.self_attn.v_proj.weight", l);
}

void eng__attn_layout_o(eng_model *m, int cap, int l)
{
    m->lp[l].wo = eng__model_add_tensor(m, cap, 2, m->d, m->d, 1, "model.layers.%d.self_attn.o_proj.weight", l);
}

void eng__attn_layout(eng_model *m, int cap, int l)
{
    eng__attn_layout_qkv(m, cap, l);
    if (m->G)
        eng__model_add_tensor(m, cap, 2, m->G, m->d, 1, "model.layers.%d.self_attn.g_proj.weight", l);
    eng__attn_layout_o(m, cap, l);
}

/* ------------------------------------------------------------ passes */

void eng__attn_fwd(eng_model *m, int l, int B, int T)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const eng_layer_params *p = &m->lp[l];
    eng_layer_acts *a = &m->la[l];
    const int N = B * T, d = m->d, S = m->S, hd = m->hd, H = m->H, Hkv = m->Hkv;
    const float *P = m->params;
    const float *x = eng__resid(m, l, N);
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
    const float *x = eng__resid(m, l, N);
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

/* ------------------------------------------------------------ the rows */

static int transformer_create(eng_model *m, tlm_err *e)
{
    (void)m;
    (void)e;
    return 0;
}

static int transformer_plan(eng_model *m, tlm_err *e)
{
    (void)m;
    (void)e;
    return 0;
}

static void transformer_free(eng_model *m)
{
    (void)m;
}

const eng_mixer eng__mixer_transformer = {
    .arch = ENG_ARCH_TRANSFORMER,
    .groups = 0,
    .create = transformer_create,
    .layout = eng__attn_layout,
    .mlp_layout = eng__mlp_layout,
    .plan = transformer_plan,
    .init = eng__mixer_no_init,
    .fwd = eng__attn_fwd,
    .bwd = eng__attn_bwd,
    .mlp_fwd = eng__mlp_fwd,
    .mlp_bwd = eng__mlp_bwd,
    .step = eng__model_adamw_step,
    .free = transformer_free,
};

/* gated_attn: the gate's columns (sigmoid(x W_g), elementwise: d, headwise:
 * H) continue the fused projection */
static int gated_create(eng_model *m, tlm_err *e)
{
    (void)e;
    m->G = m->cfg.model.gate == ENG_GATE_HEADWISE ? m->H : m->d;
    m->S += m->G;
    return 0;
}

/* the gated output of every layer, one slab (the row's context) */
static int gated_plan(eng_model *m, tlm_err *e)
{
    eng_plan p = {0};
    const size_t N = (size_t)m->max_B * m->max_T;
    for (int l = 0; l < m->L; l++)
        eng__plan_want(&p, &m->la[l].gated, N * m->d);
    size_t floats;
    m->mixer_ctx = eng__plan_alloc(m, &p, &floats);
    if (!m->mixer_ctx)
        return tlm_errf(e, TLM_ENOMEM, "model: cannot allocate %.1f MiB of gated outputs (batch %d x %d)",
                        (double)floats * 4 / 1048576, m->max_B, m->max_T);
    return 0;
}

static void gated_free(eng_model *m)
{
    if (m->mixer_ctx)
        m->ops->free(m->ctx, m->mixer_ctx);
    m->mixer_ctx = NULL;
}

const eng_mixer eng__mixer_gated_attn = {
    .arch = ENG_ARCH_GATED_ATTN,
    .groups = 0,
    .create = gated_create,
    .layout = eng__attn_layout,
    .mlp_layout = eng__mlp_layout,
    .plan = gated_plan,
    .init = eng__mixer_no_init,
    .fwd = eng__attn_fwd,
    .bwd = eng__attn_bwd,
    .mlp_fwd = eng__mlp_fwd,
    .mlp_bwd = eng__mlp_bwd,
    .step = eng__model_adamw_step,
    .free = gated_free,
};
