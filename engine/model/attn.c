/* attn.c: the attention token mixer of `transformer`, `gated_attn` and
 * `hope_attn`, and the rows of the first two in the token-mixer table
 * (internal.h; hope_attn's is in hope.c): norm1, one fused q/k/v[/gate]
 * projection, RoPE on q and k, causal attention, for gated_attn the
 * sigmoid output gate (Qiu et al. 2025: sigmoid(x W_g) with x the normed
 * block input, elementwise or per head), o_proj added onto the residual
 * stream.
 *   forward:  resid_mid = resid[l] + o_proj([gate](attn(rope(q), rope(k), v)))
 *   backward: takes d/d resid_mid in m->dresid, leaves d/d resid[l] there.
 * The two rows share the passes' halves before and after the gate.
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
    eng__model_add_rows(m, cap, dkv, d, "model.layers.%d.self_attn.k_proj.weight", l);
    eng__model_add_rows(m, cap, dkv, d, "model.layers.%d.self_attn.v_proj.weight", l);
}

void eng__attn_layout_o(eng_model *m, int cap, int l)
{
    m->lp[l].wo = eng__model_add_tensor(m, cap, 2, m->d, m->d, 1, "model.layers.%d.self_attn.o_proj.weight", l);
}

void eng__attn_layout(eng_model *m, int cap, int l)
{
    eng__attn_layout_qkv(m, cap, l);
    eng__attn_layout_o(m, cap, l);
}

/* ------------------------------------------------------------ passes */

/* norm1, the fused projection, RoPE, attention: atty, lse */
static void in_fwd(eng_model *m, int l, int B, int T)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const eng_layer_params *p = &m->lp[l];
    eng_layer_acts *a = &m->la[l];
    const int N = B * T, d = m->d, S = m->S, hd = m->hd, H = m->H, Hkv = m->Hkv;
    eng_act *q = a->qkvg, *k = eng__act_at(m, q, (size_t)H * hd), *v = eng__act_at(m, k, (size_t)Hkv * hd);
    o->rmsnorm_fwd(ctx, a->ln1, a->rstd1, eng__resid(m, l, N), m->params + p->ln1, N, d, (float)m->cfg.model.norm_eps);
    o->matmul(ctx, 0, 1, N, S, d, 1.0f, a->ln1, d, eng__wlp(m, p->wqkvg), d, 0.0f, a->qkvg, S, eng__mm_x(m));
    o->rope_fwd(ctx, q, S, N, T, H, hd, m->rope_cs);
    o->rope_fwd(ctx, k, S, N, T, Hkv, hd, m->rope_cs);
    o->attention_fwd(ctx, a->atty, d, a->lse, q, S, k, v, S, B, T, H, Hkv, hd, m->att_ws);
}

/* resid_mid = resid[l] + oin o_proj^T */
static void out_fwd(eng_model *m, int l, int N, const eng_act *oin)
{
    const int d = m->d;
    m->ops->matmul_add(m->ctx, 0, 1, N, d, d, 1.0f, oin, d, eng__wlp(m, m->lp[l].wo), d, eng__resid(m, l, N),
                       m->la[l].resid_mid, d, eng__mm_x(m));
}

/* o_proj's backward: doin (=) from m->dresid, and its weight's gradient */
static void out_bwd(eng_model *m, int l, int N, const eng_act *oin, eng_act *doin)
{
    const int d = m->d;
    const size_t wo = m->lp[l].wo;
    m->ops->matmul(m->ctx, 0, 0, N, d, d, 1.0f, m->dresid, d, eng__wlp(m, wo), d, 0.0f, doin, d, eng__mm_x(m));
    m->ops->matmul(m->ctx, 1, 0, d, d, N, 1.0f, m->dresid, d, oin, d, 1.0f, m->grads + wo, d, eng__mm_w(m));
}

/* In: m->datty.  The attention, RoPE, the fused projection and norm1:
 * m->dresid += d/d resid[l] through them. */
static void in_bwd(eng_model *m, int l, int B, int T)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const eng_layer_params *p = &m->lp[l];
    const eng_layer_acts *a = &m->la[l];
    const int N = B * T, d = m->d, S = m->S, hd = m->hd, H = m->H, Hkv = m->Hkv;
    const eng_act *q = a->qkvg, *k = eng__act_at(m, q, (size_t)H * hd), *v = eng__act_at(m, k, (size_t)Hkv * hd);
    eng_act *dq = m->dqkvg, *dk = eng__act_at(m, dq, (size_t)H * hd), *dv = eng__act_at(m, dk, (size_t)Hkv * hd);
    o->attention_bwd(ctx, dq, dk, dv, a->lse, m->datty, a->atty, d, q, S, k, v, S, B, T, H, Hkv, hd, m->att_ws);
    o->rope_bwd(ctx, dq, S, N, T, H, hd, m->rope_cs);
    o->rope_bwd(ctx, dk, S, N, T, Hkv, hd, m->rope_cs);
    /* the fused projection */
    o->matmul(ctx, 0, 0, N, d, S, 1.0f, m->dqkvg, S, eng__wlp(m, p->wqkvg), d, 0.0f, m->dln, d, eng__mm_x(m));
    o->matmul(ctx, 1, 0, S, d, N, 1.0f, m->dqkvg, S, a->ln1, d, 1.0f, m->grads + p->wqkvg, d, eng__mm_w(m));
    o->rmsnorm_bwd(ctx, m->dresid, m->grads + p->ln1, m->dln, eng__resid(m, l, N), m->params + p->ln1, a->rstd1, N,
                   d);
}

void eng__attn_fwd(eng_model *m, int l, int B, int T)
{
    in_fwd(m, l, B, T);
    out_fwd(m, l, B * T, m->la[l].atty);
}

void eng__attn_bwd(eng_model *m, int l, int B, int T)
{
    out_bwd(m, l, B * T, m->la[l].atty, m->datty);
    in_bwd(m, l, B, T);
}

/* gated_attn: the gate's pre-activations z are the projection's last G
 * columns */
static eng_act *gate_z(const eng_model *m, eng_act *qkvg)
{
    return eng__act_at(m, qkvg, (size_t)(m->H + 2 * m->Hkv) * m->hd);
}

static void gated_fwd(eng_model *m, int l, int B, int T)
{
    eng_layer_acts *a = &m->la[l];
    in_fwd(m, l, B, T);
    m->ops->gate_fwd(m->ctx, a->gated, a->atty, gate_z(m, a->qkvg), m->S, B * T, m->d, m->G);
    out_fwd(m, l, B * T, a->gated);
}

static void gated_bwd(eng_model *m, int l, int B, int T)
{
    eng_layer_acts *a = &m->la[l];
    out_bwd(m, l, B * T, a->gated, m->dgated);
    m->ops->gate_bwd(m->ctx, m->datty, gate_z(m, m->dqkvg), m->dgated, a->atty, gate_z(m, a->qkvg), m->S, B * T,
                     m->d, m->G);
    in_bwd(m, l, B, T);
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
    .arch = ENG_ARCH_TRANSFORMER, .groups = 0, .mlp = &eng__mlp_swiglu,
    .create = transformer_create, .layout = eng__attn_layout, .plan = transformer_plan, .init = eng__mixer_no_init,
    .fwd = eng__attn_fwd, .bwd = eng__attn_bwd, .step = eng__model_adamw_step, .free = transformer_free,
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

/* q, k, v, g_proj, o_proj */
static void gated_layout(eng_model *m, int cap, int l)
{
    eng__attn_layout_qkv(m, cap, l);
    eng__model_add_rows(m, cap, m->G, m->d, "model.layers.%d.self_attn.g_proj.weight", l);
    eng__attn_layout_o(m, cap, l);
}

/* the gated output of every layer, one slab (the row's context) */
static int gated_plan(eng_model *m, tlm_err *e)
{
    eng_plan p = {0};
    const size_t N = (size_t)m->max_B * m->max_T;
    for (int l = 0; l < m->L; l++)
        eng__plan_act(m, &p, &m->la[l].gated, N * m->d);
    size_t bytes;
    m->mixer_ctx = eng__plan_alloc(m, &p, &bytes);
    if (!m->mixer_ctx)
        return tlm_errf(e, TLM_ENOMEM, "model: cannot allocate %.1f MiB of gated outputs (batch %d x %d)",
                        (double)bytes / 1048576, m->max_B, m->max_T);
    return 0;
}

static void gated_free(eng_model *m)
{
    if (m->mixer_ctx)
        m->ops->free(m->ctx, m->mixer_ctx);
    m->mixer_ctx = NULL;
}

const eng_mixer eng__mixer_gated_attn = {
    .arch = ENG_ARCH_GATED_ATTN, .groups = 0, .mlp = &eng__mlp_swiglu,
    .create = gated_create, .layout = gated_layout, .plan = gated_plan, .init = eng__mixer_no_init,
    .fwd = gated_fwd, .bwd = gated_bwd, .step = eng__model_adamw_step, .free = gated_free,
};
