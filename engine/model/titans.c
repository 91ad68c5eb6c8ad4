/* titans.c: the Titans token mixer (`arch: titans`, docs/titans.md).
 *
 * Per layer, x = rmsnorm_1(h) and one fused projection x [Wq Wk Wv | Wmq Wmk
 * Wmv Wg]^T (MAG; MAL splits it in two, see below) gives
 *   attention:  q, k (RoPE), v  ->  swa(q, k, v; persistent kp, vp) = ya
 *   memory:     u = x Wm (q|k|v), c = dconv(u), f = silu(c), q and k heads
 *               L2-normalised; gates z = x Wg + bg (theta, eta, alpha per
 *               head); ym = titans_mem(f_q, f_k, f_v, z; W0)
 *   MAG:  o = rmsnorm_a(ya) * sigmoid(rmsnorm_m(ym)),  resid_mid = h + o Wo^T
 *   MAL:  x2 = x + rmsnorm_m(ym) (the memory layer, with its residual),
 *         q, k, v = x2 [Wq Wk Wv]^T,  resid_mid = h + swa(...) Wo^T
 * and the block's tapered SwiGLU MLP follows (pass.c).
 *
 * Memory: the fused projection lives in the layer's qkvg buffer (m->S is
 * set here), ya in atty and the attention's log-sum-exp in lse; the rest
 * (memory features, its states at chunk boundaries, norms, the gated
 * output, and the backward scratch shared by the layers) is one slab
 * planned here.  The memory's activations inside a chunk are recomputed by
 * the backward from the states (titans_mem), and c from u.
 *
 * The row of titans in the token-mixer table (internal.h) is at the end:
 * this mixer, mlp.c's MLP, the plain AdamW step; it needs the backend's
 * Titans op group.
 *
 * Must not: allocate after the row's plan; be reached for another arch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/arch.h"
#include "engine/model/internal.h"
#include "engine/model/titans_mem.h"

#define NORM_EPS_QK 1e-6f /* inside the L2 norm of the memory's q and k */

typedef struct titans_params {
    size_t wmem;   /* (3d + 3H, d) memory.{q,k,v,gate}_proj: rows right after v_proj */
    size_t bgate;  /* (3H) memory.gate_proj.bias */
    size_t conv;   /* (3d, K) memory.conv.weight */
    size_t w0;     /* depth 2: (H hm, hd) init_w1 then (H hd, hm) init_w2; depth 1: (H hd, hd) init_w */
    size_t norm_m; /* (d) memory.norm.weight */
    size_t norm_a; /* (d) self_attn.norm.weight, MAG */
    size_t pk, pv; /* (Np, Hkv hd) self_attn.persistent_k / persistent_v */
} titans_params;

typedef struct titans_acts {
    eng_act *f;    /* (N, 3d) memory q | k | v after conv, SiLU, L2 norm of q and k */
    float *rn;     /* (N, 2H) the q and k heads' 1/norm */
    eng_act *ym;   /* (N, d) memory reads */
    float *rstd_m; /* (N) */
    eng_act *nm;   /* (N, d) rmsnorm_m(ym) */
    eng_act *na;   /* (N, d) MAG: rmsnorm_a(ya) */
    float *rstd_a; /* (N) MAG */
    eng_act *o;    /* (N, d) MAG: the gated output; MAL: x2 = x + nm */
    float *states; /* (B, H, nc, 2, Pm) the memory at every chunk start */
} titans_acts;

typedef struct eng_titans {
    int variant, window, Np, chunk, depth, hm;
    float max_lr;
    int Sa;   /* attention columns of the fused projection: H hd + 2 Hkv hd */
    int Cm;   /* memory feature columns: 3d */
    titans_params p[ENG_MAX_LAYERS];
    titans_acts a[ENG_MAX_LAYERS];
    void *slab;
    eng_act *ones; /* (N) 1.0 in the activation dtype: adds the gate bias (a product with its weight copy), sums its gradient */
    eng_act *c;    /* (N, 3d) conv output (forward temp, recomputed in backward) */
    eng_act *df;   /* (N, 3d) gradient of f, then of c (in place) */
    eng_act *dym;  /* (N, d) */
    eng_act *dnm;  /* (N, d) */
    eng_act *dna;  /* (N, d) MAG */
    float *swa_ws, *mem_ws;
} eng_titans;

/* ------------------------------------------------------------ create / layout */

/* After the widths are known, before the layout: dimensions, the
 * memory's and the gates' columns of the fused projection. */
static int titans_create(eng_model *m, tlm_err *e)
{
    const eng_model_cfg *mc = &m->cfg.model;
    eng_titans *t = calloc(1, sizeof *t);
    if (!t)
        return tlm_errf(e, TLM_ENOMEM, "titans: out of memory");
    t->variant = mc->titans_variant;
    t->window = mc->titans_window;
    t->Np = mc->titans_persistent;
    t->chunk = mc->titans_chunk;
    t->depth = mc->titans_mem_depth;
    t->hm = t->depth == 2 ? mc->titans_mem_hidden : m->hd;
    t->max_lr = (float)mc->titans_max_lr;
    if (t->window < 1 || t->chunk < 1 || t->chunk > 512 || t->Np < 0 || (t->depth != 1 && t->depth != 2) ||
        t->hm < 1 || !(t->max_lr > 0)) {
        free(t);
        return tlm_errf(e, TLM_ECONFIG,
                        "titans: bad memory settings (window %d, chunk %d, persistent %d, depth %d, hidden %d, "
                        "max_lr %g)",
                        mc->titans_window, mc->titans_chunk, mc->titans_persistent, mc->titans_mem_depth,
                        mc->titans_mem_hidden, mc->titans_max_lr);
    }
    t->Sa = m->S; /* q, k, v */
    t->Cm = 3 * m->d;
    m->S += t->Cm + 3 * m->H;
    m->mixer_ctx = t;
    return 0;
}

/* q, k, v, then the memory's tensors (its projections first, so that q, k,
 * v and they form one matrix), then o_proj */
static void titans_layout(eng_model *m, int cap, int l)
{
    eng_titans *t = m->mixer_ctx;
    titans_params *p = &t->p[l];
    const int d = m->d, H = m->H, hd = m->hd, dkv = m->Hkv * hd;
    eng__attn_layout_qkv(m, cap, l);
    p->wmem = eng__model_add_rows(m, cap, d, d, "model.layers.%d.memory.q_proj.weight", l);
    eng__model_add_rows(m, cap, d, d, "model.layers.%d.memory.k_proj.weight", l);
    eng__model_add_rows(m, cap, d, d, "model.layers.%d.memory.v_proj.weight", l);
    eng__model_add_rows(m, cap, 3 * H, d, "model.layers.%d.memory.gate_proj.weight", l);
    p->bgate = eng__model_add_tensor(m, cap, 1, 3 * H, 0, 0, "model.layers.%d.memory.gate_proj.bias", l);
    p->conv = eng__model_add_tensor(m, cap, 2, 3 * d, ENG_TITANS_CONV, 1, "model.layers.%d.memory.conv.weight", l);
    if (t->depth == 2) {
        p->w0 = eng__model_add_tensor(m, cap, 2, (int64_t)H * t->hm, hd, 1, "model.layers.%d.memory.init_w1", l);
        eng__model_add_rows(m, cap, (int64_t)H * hd, t->hm, "model.layers.%d.memory.init_w2", l);
    } else {
        p->w0 = eng__model_add_tensor(m, cap, 2, (int64_t)H * hd, hd, 1, "model.layers.%d.memory.init_w", l);
    }
    p->norm_m = eng__model_add_tensor(m, cap, 1, d, 0, 0, "model.layers.%d.memory.norm.weight", l);
    if (t->variant == ENG_TITANS_MAG)
        p->norm_a = eng__model_add_tensor(m, cap, 1, d, 0, 0, "model.layers.%d.self_attn.norm.weight", l);
    if (t->Np) {
        p->pk = eng__model_add_tensor(m, cap, 2, t->Np, dkv, 1, "model.layers.%d.self_attn.persistent_k", l);
        p->pv = eng__model_add_tensor(m, cap, 2, t->Np, dkv, 1, "model.layers.%d.self_attn.persistent_v", l);
    }
    eng__attn_layout_o(m, cap, l);
}

/* ------------------------------------------------------------ plan */

/* After the model's activations: the mixer's own, its scratch and the
 * ops' workspaces, one slab. */
static int titans_plan(eng_model *m, tlm_err *e)
{
    eng_titans *t = m->mixer_ctx;
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const size_t N = (size_t)m->max_B * m->max_T, d = (size_t)m->d, H = (size_t)m->H;
    const eng_tmem_dims md = eng_tmem_dims_of(m->hd, t->hm, t->depth, t->chunk, m->max_T);
    eng_plan p = {0};
    for (int l = 0; l < m->L; l++) {
        titans_acts *a = &t->a[l];
        eng__plan_act(m, &p, &a->f, N * t->Cm);
        eng__plan_f32(&p, &a->rn, N * 2 * H);
        eng__plan_act(m, &p, &a->ym, N * d);
        eng__plan_f32(&p, &a->rstd_m, N);
        eng__plan_act(m, &p, &a->nm, N * d);
        if (t->variant == ENG_TITANS_MAG) {
            eng__plan_act(m, &p, &a->na, N * d);
            eng__plan_f32(&p, &a->rstd_a, N);
        }
        eng__plan_act(m, &p, &a->o, N * d);
        eng__plan_f32(&p, &a->states, eng_tmem_states_floats(&md, m->max_B, m->H));
    }
    eng__plan_act(m, &p, &t->ones, N);
    eng__plan_act(m, &p, &t->c, N * t->Cm);
    eng__plan_act(m, &p, &t->df, N * t->Cm);
    eng__plan_act(m, &p, &t->dym, N * d);
    eng__plan_act(m, &p, &t->dnm, N * d);
    if (t->variant == ENG_TITANS_MAG)
        eng__plan_act(m, &p, &t->dna, N * d);
    eng__plan_f32(&p, &t->swa_ws, o->swa_workspace(ctx, m->max_B, m->max_T, m->Hkv, m->hd, t->window, t->Np));
    eng__plan_f32(&p, &t->mem_ws,
                   o->titans_mem_workspace(ctx, m->max_B, m->max_T, m->H, m->hd, t->hm, t->depth, t->chunk));
    size_t total;
    t->slab = eng__plan_alloc(m, &p, &total);
    if (!t->slab)
        return tlm_errf(e, TLM_ENOMEM, "titans: cannot allocate %.1f MiB of memory activations (batch %d x %d)",
                        (double)total / 1048576, m->max_B, m->max_T);
    /* 1.0 as the activations store it (bf16: 0x3f80, exact) */
    union {
        float f[1024];
        uint16_t h[1024];
    } buf;
    for (int i = 0; i < 1024; i++)
        buf.f[i] = 1.0f;
    if (m->act_dtype == ENG_BF16)
        for (int i = 0; i < 1024; i++)
            buf.h[i] = 0x3f80;
    for (size_t i = 0; i < N; i += 1024)
        o->to_device(ctx, eng__act_at(m, t->ones, i), &buf, eng__act_bytes(m, N - i < 1024 ? N - i : 1024));
    return 0;
}

static void titans_free(eng_model *m)
{
    eng_titans *t = m->mixer_ctx;
    if (!t)
        return;
    if (t->slab)
        m->ops->free(m->ctx, t->slab);
    free(t);
    m->mixer_ctx = NULL;
}

/* ------------------------------------------------------------ init */

/* Initial gate pre-activations: theta = max_lr sigmoid(0) = max_lr / 2,
 * eta = sigmoid(0) = 0.5, alpha = sigmoid(-6) ~ 0.0025 (the memory keeps
 * ~half of what it holds over 256 tokens). */
#define BIAS_THETA 0.0f
#define BIAS_ETA 0.0f
#define BIAS_ALPHA -6.0f

static void scale_tensor(eng_model *m, size_t off, size_t n, float s)
{
    float buf[4096];
    for (size_t i = 0; i < n; i += 4096) {
        size_t k = n - i < 4096 ? n - i : 4096;
        m->ops->to_host(m->ctx, buf, m->params + off + i, k * sizeof(float));
        for (size_t j = 0; j < k; j++)
            buf[j] *= s;
        m->ops->to_device(m->ctx, m->params + off + i, buf, k * sizeof(float));
    }
}

/* After the generic initialisation: the gate biases, the convolutions and
 * the memory's initial weights. */
static void titans_init(eng_model *m, uint64_t seed)
{
    (void)seed; /* the generic pass drew every tensor from its own stream; this only rescales or sets */
    const eng_titans *t = m->mixer_ctx;
    const int d = m->d, H = m->H, hd = m->hd;
    const float std = (float)m->cfg.model.init_std;
    for (int l = 0; l < m->L; l++) {
        const titans_params *p = &t->p[l];
        float b[3 * 1024];
        for (int i = 0; i < 3 * H; i++)
            b[i] = i < H ? BIAS_THETA : (i < 2 * H ? BIAS_ETA : BIAS_ALPHA);
        m->ops->to_device(m->ctx, m->params + p->bgate, b, (size_t)3 * H * sizeof(float));
        /* the convolutions start as the identity (the current token's tap) */
        float row[ENG_TITANS_CONV] = {0};
        row[ENG_TITANS_CONV - 1] = 1.0f;
        for (int c = 0; c < 3 * d; c++)
            m->ops->to_device(m->ctx, m->params + p->conv + (size_t)c * ENG_TITANS_CONV, row, sizeof row);
        /* the memory's initial weights (drawn normal(0, init_std)): depth 2
         * W1 ~ N(0, 4/hm), so unit-norm keys give hidden activations a of
         * |a|^2 ~ 1 (the inner step on W2 moves M(k) by 2 theta |a|^2 e:
         * stable for theta < 1), and W2 ~ N(0, 0.0625/hm); depth 1
         * W ~ N(0, 0.15^2): first reads of about the values' size */
        if (t->depth == 2) {
            scale_tensor(m, p->w0, (size_t)H * t->hm * hd, 2.0f / sqrtf((float)t->hm) / std);
            scale_tensor(m, p->w0 + (size_t)H * t->hm * hd, (size_t)H * hd * t->hm,
                         0.25f / sqrtf((float)t->hm) / std);
        } else {
            scale_tensor(m, p->w0, (size_t)H * hd * hd, 0.15f / std);
        }
    }
}

/* ------------------------------------------------------------ passes */

/* What a pass over layer l reads, gathered once */
typedef struct tlayer {
    const eng_ops *o;
    void *ctx;
    const eng_titans *t;
    const titans_params *p;     /* the layer's Titans parameters */
    const eng_layer_params *lp; /* and its attention's and norm's */
    titans_acts *ta;
    eng_layer_acts *a;
    const float *P; /* parameters */
    float *Gr;      /* gradients */
    const eng_act *x; /* resid[l] */
    int B, T, N, d, S, H, Hkv, hd;
    float eps;
    eng_dtype act; /* the activations' storage type */
} tlayer;

static tlayer layer_of(eng_model *m, int l, int B, int T)
{
    eng_titans *t = m->mixer_ctx;
    return (tlayer){.o = m->ops, .ctx = m->ctx, .t = t, .p = &t->p[l], .lp = &m->lp[l], .ta = &t->a[l],
                    .a = &m->la[l], .P = m->params, .Gr = m->grads, .x = eng__resid(m, l, B * T), .B = B, .T = T,
                    .N = B * T, .d = m->d, .S = m->S, .H = m->H, .Hkv = m->Hkv, .hd = m->hd,
                    .eps = (float)m->cfg.model.norm_eps, .act = m->act_dtype};
}

/* n activations on from p */
static eng_act *at(const tlayer *v, const eng_act *p, size_t n)
{
    return eng_act_off(v->act, p, n);
}

/* The memory branch from the projection's memory columns: ym (forward). */
static void memory_fwd(const eng_model *m, const tlayer *v)
{
    const eng_ops *o = v->o;
    const eng_titans *t = v->t;
    const titans_params *p = v->p;
    titans_acts *ta = v->ta;
    const int N = v->N, d = v->d, S = v->S, H = v->H;
    eng_act *u = at(v, v->a->qkvg, t->Sa), *z = at(v, u, t->Cm);
    /* gates: z += 1 b^T */
    o->matmul(v->ctx, 0, 0, N, 3 * H, 1, 1.0f, t->ones, 1, eng__wlp(m, p->bgate), 3 * H, 1.0f, z, S, eng__mm_x(m));
    o->dconv_fwd(v->ctx, t->c, t->Cm, u, S, v->P + p->conv, N, v->T, t->Cm, ENG_TITANS_CONV);
    o->silu_norm_fwd(v->ctx, ta->f, t->Cm, ta->rn, t->c, t->Cm, N, t->Cm, 2 * H, v->hd, NORM_EPS_QK);
    o->titans_mem_fwd(v->ctx, ta->ym, d, ta->states, ta->f, at(v, ta->f, d), at(v, ta->f, 2 * (size_t)d), t->Cm, z,
                      S, v->P + p->w0, v->B, v->T, H, v->hd, t->hm, t->depth, t->chunk, t->max_lr, t->mem_ws);
    o->rmsnorm_fwd(v->ctx, ta->nm, ta->rstd_m, ta->ym, v->P + p->norm_m, N, d, v->eps);
}

/* In: t->dnm = d/d nm.  Out: the memory columns of m->dqkvg (=), the
 * memory's parameter gradients (+=). */
static void memory_bwd(eng_model *m, const tlayer *v)
{
    const eng_ops *o = v->o;
    const eng_titans *t = v->t;
    const titans_params *p = v->p;
    const titans_acts *ta = v->ta;
    const int N = v->N, d = v->d, S = v->S, H = v->H;
    const eng_act *u = at(v, v->a->qkvg, t->Sa), *z = at(v, u, t->Cm);
    eng_act *du = at(v, m->dqkvg, t->Sa), *dz = at(v, du, t->Cm);
    o->zero(v->ctx, t->dym, eng__act_bytes(m, (size_t)N * d));
    o->rmsnorm_bwd(v->ctx, t->dym, v->Gr + p->norm_m, t->dnm, ta->ym, v->P + p->norm_m, ta->rstd_m, N, d);
    o->titans_mem_bwd(v->ctx, t->df, at(v, t->df, d), at(v, t->df, 2 * (size_t)d), t->Cm, dz, S, v->Gr + p->w0,
                      t->dym, d, ta->states, ta->f, at(v, ta->f, d), at(v, ta->f, 2 * (size_t)d), t->Cm, z, S, v->B,
                      v->T, H, v->hd, t->hm, t->depth, t->chunk, t->max_lr, t->mem_ws);
    /* the gate bias: column sums of dz */
    o->matmul(v->ctx, 1, 0, 3 * H, 1, N, 1.0f, dz, S, t->ones, 1, 1.0f, v->Gr + p->bgate, 1, eng__mm_w(m));
    o->dconv_fwd(v->ctx, t->c, t->Cm, u, S, v->P + p->conv, N, v->T, t->Cm, ENG_TITANS_CONV); /* recomputed */
    o->silu_norm_bwd(v->ctx, t->df, t->Cm, t->df, t->Cm, ta->f, t->Cm, ta->rn, t->c, t->Cm, N, t->Cm, 2 * H, v->hd);
    o->dconv_bwd(v->ctx, du, S, v->Gr + p->conv, t->df, t->Cm, u, S, v->P + p->conv, N, v->T, t->Cm,
                 ENG_TITANS_CONV);
}

/* q, k (RoPE), v in the projection's attention columns -> atty, lse */
static void attention_fwd(eng_model *m, const tlayer *v)
{
    const eng_ops *o = v->o;
    const int S = v->S, H = v->H, Hkv = v->Hkv, hd = v->hd;
    const int Np = v->t->Np;
    eng_act *q = v->a->qkvg, *k = at(v, q, (size_t)H * hd), *val = at(v, k, (size_t)Hkv * hd);
    const float *kp = Np ? v->P + v->p->pk : NULL, *vp = Np ? v->P + v->p->pv : NULL;
    o->rope_fwd(v->ctx, q, S, v->N, v->T, H, hd, m->rope_cs);
    o->rope_fwd(v->ctx, k, S, v->N, v->T, Hkv, hd, m->rope_cs);
    o->swa_fwd(v->ctx, v->a->atty, v->d, v->a->lse, q, S, k, val, S, kp, vp, Hkv * hd, Np, v->B, v->T, H, Hkv, hd,
               v->t->window, v->t->swa_ws);
}

/* In: m->datty.  Out: the attention columns of m->dqkvg (=). */
static void attention_bwd(eng_model *m, const tlayer *v)
{
    const eng_ops *o = v->o;
    const int S = v->S, H = v->H, Hkv = v->Hkv, hd = v->hd;
    const int Np = v->t->Np;
    const eng_act *q = v->a->qkvg, *k = at(v, q, (size_t)H * hd), *val = at(v, k, (size_t)Hkv * hd);
    const float *kp = Np ? v->P + v->p->pk : NULL, *vp = Np ? v->P + v->p->pv : NULL;
    eng_act *dq = m->dqkvg, *dk = at(v, dq, (size_t)H * hd), *dv = at(v, dk, (size_t)Hkv * hd);
    float *dkp = Np ? v->Gr + v->p->pk : NULL, *dvp = Np ? v->Gr + v->p->pv : NULL;
    o->swa_bwd(v->ctx, dq, dk, dv, dkp, dvp, v->a->lse, m->datty, v->d, q, S, k, val, S, kp, vp, Hkv * hd, Np, v->B,
               v->T, H, Hkv, hd, v->t->window, v->t->swa_ws);
    o->rope_bwd(v->ctx, dq, S, v->N, v->T, H, hd, m->rope_cs);
    o->rope_bwd(v->ctx, dk, S, v->N, v->T, Hkv, hd, m->rope_cs);
}

static void titans_fwd(eng_model *m, int l, int B, int T)
{
    const tlayer v = layer_of(m, l, B, T);
    const eng_ops *o = v.o;
    void *ctx = v.ctx;
    const eng_titans *t = v.t;
    titans_acts *ta = v.ta;
    eng_layer_acts *a = v.a;
    const int N = v.N, d = v.d, S = v.S;
    o->rmsnorm_fwd(ctx, a->ln1, a->rstd1, v.x, v.P + v.lp->ln1, N, d, v.eps);
    if (t->variant == ENG_TITANS_MAG) {
        /* every projection at once: attention q, k, v, memory q, k, v, gates */
        o->matmul(ctx, 0, 1, N, S, d, 1.0f, a->ln1, d, eng__wlp(m, v.lp->wqkvg), d, 0.0f, a->qkvg, S, eng__mm_x(m));
        attention_fwd(m, &v);
        memory_fwd(m, &v);
        o->rmsnorm_fwd(ctx, ta->na, ta->rstd_a, a->atty, v.P + v.p->norm_a, N, d, v.eps);
        o->gate_fwd(ctx, ta->o, ta->na, ta->nm, d, N, d, d);
        o->matmul_add(ctx, 0, 1, N, d, d, 1.0f, ta->o, d, eng__wlp(m, v.lp->wo), d, v.x, a->resid_mid, d, eng__mm_x(m));
    } else {
        /* the memory layer first, its output added to its input (x2), then
         * attention on x2 */
        o->matmul(ctx, 0, 1, N, S - t->Sa, d, 1.0f, a->ln1, d, eng__wlp(m, v.p->wmem), d, 0.0f,
                  eng__act_at(m, a->qkvg, t->Sa), S, eng__mm_x(m));
        memory_fwd(m, &v);
        o->copy(ctx, ta->o, a->ln1, eng__act_bytes(m, (size_t)N * d));
        o->act_axpy(ctx, ta->o, ta->nm, (size_t)N * d, 1.0f);
        o->matmul(ctx, 0, 1, N, t->Sa, d, 1.0f, ta->o, d, eng__wlp(m, v.lp->wqkvg), d, 0.0f, a->qkvg, S, eng__mm_x(m));
        attention_fwd(m, &v);
        o->matmul_add(ctx, 0, 1, N, d, d, 1.0f, a->atty, d, eng__wlp(m, v.lp->wo), d, v.x, a->resid_mid, d,
                      eng__mm_x(m));
    }
}

static void titans_bwd(eng_model *m, int l, int B, int T)
{
    const tlayer v = layer_of(m, l, B, T);
    const eng_ops *o = v.o;
    void *ctx = v.ctx;
    const eng_titans *t = v.t;
    const titans_params *p = v.p;
    const eng_layer_params *lp = v.lp;
    const titans_acts *ta = v.ta;
    const eng_layer_acts *a = v.a;
    const int N = v.N, d = v.d, S = v.S;
    const float *P = v.P;
    float *Gr = v.Gr;
    if (t->variant == ENG_TITANS_MAG) {
        /* o_proj, the gate, the two norms */
        o->matmul(ctx, 0, 0, N, d, d, 1.0f, m->dresid, d, eng__wlp(m, lp->wo), d, 0.0f, m->dgated, d, eng__mm_x(m));
        o->matmul(ctx, 1, 0, d, d, N, 1.0f, m->dresid, d, ta->o, d, 1.0f, Gr + lp->wo, d, eng__mm_w(m));
        o->gate_bwd(ctx, t->dna, t->dnm, m->dgated, ta->na, ta->nm, d, N, d, d);
        o->zero(ctx, m->datty, eng__act_bytes(m, (size_t)N * d));
        o->rmsnorm_bwd(ctx, m->datty, Gr + p->norm_a, t->dna, a->atty, P + p->norm_a, ta->rstd_a, N, d);
        attention_bwd(m, &v);
        memory_bwd(m, &v);
        /* the fused projection */
        o->matmul(ctx, 0, 0, N, d, S, 1.0f, m->dqkvg, S, eng__wlp(m, lp->wqkvg), d, 0.0f, m->dln, d, eng__mm_x(m));
        o->matmul(ctx, 1, 0, S, d, N, 1.0f, m->dqkvg, S, a->ln1, d, 1.0f, Gr + lp->wqkvg, d, eng__mm_w(m));
    } else {
        o->matmul(ctx, 0, 0, N, d, d, 1.0f, m->dresid, d, eng__wlp(m, lp->wo), d, 0.0f, m->datty, d, eng__mm_x(m));
        o->matmul(ctx, 1, 0, d, d, N, 1.0f, m->dresid, d, a->atty, d, 1.0f, Gr + lp->wo, d, eng__mm_w(m));
        attention_bwd(m, &v);
        /* q, k, v from x2: dnm = d/d x2 */
        o->matmul(ctx, 0, 0, N, d, t->Sa, 1.0f, m->dqkvg, S, eng__wlp(m, lp->wqkvg), d, 0.0f, t->dnm, d, eng__mm_x(m));
        o->matmul(ctx, 1, 0, t->Sa, d, N, 1.0f, m->dqkvg, S, ta->o, d, 1.0f, Gr + lp->wqkvg, d, eng__mm_w(m));
        memory_bwd(m, &v);
        /* x feeds x2 directly and the memory projection */
        o->matmul_add(ctx, 0, 0, N, d, S - t->Sa, 1.0f, eng__act_at(m, m->dqkvg, t->Sa), S, eng__wlp(m, p->wmem), d,
                      t->dnm, m->dln, d, eng__mm_x(m));
        o->matmul(ctx, 1, 0, S - t->Sa, d, N, 1.0f, eng__act_at(m, m->dqkvg, t->Sa), S, a->ln1, d, 1.0f, Gr + p->wmem,
                  d, eng__mm_w(m));
    }
    o->rmsnorm_bwd(ctx, m->dresid, Gr + lp->ln1, m->dln, v.x, P + lp->ln1, a->rstd1, N, d);
}

/* ------------------------------------------------------------ the row */

const eng_mixer eng__mixer_titans = {
    .arch = ENG_ARCH_TITANS, .groups = ENG_OPS_TITANS, .mlp = &eng__mlp_swiglu,
    .create = titans_create, .layout = titans_layout, .plan = titans_plan, .init = titans_init,
    .fwd = titans_fwd, .bwd = titans_bwd, .step = eng__model_adamw_step, .free = titans_free,
};
