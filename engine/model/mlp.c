/* mlp.c: the block's MLP of the transformer, gated_attn and titans rows:
 * a pre-norm SwiGLU of the layer's tapered width,
 *   resid[l+1] = resid_mid + down(silu(gate(n)) * up(n)),  n = rmsnorm_2(resid_mid)
 * with gate_proj and up_proj stacked into one (2F, d) matmul; and that
 * branch itself (eng__swiglu_*), which hope_attn's levels (hope.c) chain
 * in its place.  With train.recompute every layer's gate|up and SwiGLU
 * outputs (gu, h: the largest activations of a layer) share one buffer
 * (model.c plans it), and the backward makes the branch's again from the
 * normed input it keeps, with the same ops on the same inputs: the same
 * bits as kept ones.
 *
 * Must not: allocate (its buffers are the model's planned ones). */
#include "engine/model/internal.h"

/* gu = ln (gate_proj | up_proj)^T, h = silu(gate) * up */
static void gate_up(eng_model *m, const eng_swiglu *b, int N)
{
    const int d = m->d, F = b->F;
    m->ops->matmul(m->ctx, 0, 1, N, 2 * F, d, 1.0f, b->ln, d, eng__wlp(m, b->wgu), d, 0.0f, b->gu, 2 * F,
                   eng__mm_x(m));
    m->ops->swiglu_fwd(m->ctx, b->h, b->gu, eng__act_at(m, b->gu, F), 2 * F, N, F);
}

void eng__swiglu_fwd(eng_model *m, const eng_swiglu *b, eng_act *out, int N)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const int d = m->d, F = b->F;
    const float *P = m->params;
    o->rmsnorm_fwd(ctx, b->ln, b->rstd, b->x, P + b->norm, N, d, (float)m->cfg.model.norm_eps);
    gate_up(m, b, N);
    o->matmul_add(ctx, 0, 1, N, d, F, 1.0f, b->h, F, eng__wlp(m, b->wdown), F, b->x, out, d, eng__mm_x(m));
}

void eng__swiglu_bwd(eng_model *m, const eng_swiglu *b, int N)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const int d = m->d, F = b->F;
    const float *P = m->params;
    float *Gr = m->grads;
    if (m->recompute) /* gu and h as the forward made them */
        gate_up(m, b, N);
    /* down_proj */
    o->matmul(ctx, 0, 0, N, F, d, 1.0f, m->dresid, d, eng__wlp(m, b->wdown), F, 0.0f, m->dh, F, eng__mm_x(m));
    o->matmul(ctx, 1, 0, d, F, N, 1.0f, m->dresid, d, b->h, F, 1.0f, Gr + b->wdown, F, eng__mm_w(m));
    o->swiglu_bwd(ctx, m->dgu, eng__act_at(m, m->dgu, F), m->dh, b->gu, eng__act_at(m, b->gu, F), 2 * F, N, F);
    /* gate_proj | up_proj */
    o->matmul(ctx, 0, 0, N, d, 2 * F, 1.0f, m->dgu, 2 * F, eng__wlp(m, b->wgu), d, 0.0f, m->dln, d, eng__mm_x(m));
    o->matmul(ctx, 1, 0, 2 * F, d, N, 1.0f, m->dgu, 2 * F, b->ln, d, 1.0f, Gr + b->wgu, d, eng__mm_w(m));
    o->rmsnorm_bwd(ctx, m->dresid, Gr + b->norm, m->dln, b->x, P + b->norm, b->rstd, N, d);
}

/* post_attention_layernorm and mlp.* of layer l */
static void mlp_layout(eng_model *m, int cap, int l)
{
    eng_layer_params *p = &m->lp[l];
    const int d = m->d, F = m->widths[l];
    p->ln2 = eng__model_add_tensor(m, cap, 1, d, 0, 0, "model.layers.%d.post_attention_layernorm.weight", l);
    p->wgu = eng__model_add_tensor(m, cap, 2, F, d, 1, "model.layers.%d.mlp.gate_proj.weight", l);
    eng__model_add_rows(m, cap, F, d, "model.layers.%d.mlp.up_proj.weight", l);
    p->wdown = eng__model_add_tensor(m, cap, 2, d, F, 1, "model.layers.%d.mlp.down_proj.weight", l);
}

/* The layer's branch: its parameters and its planned activations */
static eng_swiglu layer_branch(const eng_model *m, int l)
{
    const eng_layer_params *p = &m->lp[l];
    const eng_layer_acts *a = &m->la[l];
    return (eng_swiglu){.F = m->widths[l], .norm = p->ln2, .wgu = p->wgu, .wdown = p->wdown, .x = a->resid_mid,
                        .ln = a->ln2, .rstd = a->rstd2, .gu = a->gu, .h = a->h};
}

static void mlp_fwd(eng_model *m, int l, int N)
{
    const eng_swiglu b = layer_branch(m, l);
    eng__swiglu_fwd(m, &b, eng__resid(m, l + 1, N), N);
}

static void mlp_bwd(eng_model *m, int l, int N)
{
    const eng_swiglu b = layer_branch(m, l);
    eng__swiglu_bwd(m, &b, N);
}

const eng_mlp eng__mlp_swiglu = {.layout = mlp_layout, .fwd = mlp_fwd, .bwd = mlp_bwd};
