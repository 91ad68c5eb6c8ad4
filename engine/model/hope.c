/* hope.c: Hope-attention's Continuum Memory System (CMS), the part of
 * `arch: hope_attn` that differs from the Transformer (docs/hope.md).  The
 * token mixer is the Transformer's attention (attn.c); after it, in
 * place of the one SwiGLU MLP, each layer runs a chain of k levels
 *
 *   x_0 = resid_mid
 *   x_{i+1} = x_i + down_i(silu(gate_i(n_i)) * up_i(n_i)),  n_i = rmsnorm_i(x_i)
 *   resid[l+1] = x_k
 *
 * whose widths F_0..F_{k-1} split the layer's tapered d_ff (eng_hope_split),
 * and the optimizer updates level i only every C_i steps, from the mean of
 * its (clipped) gradients over those steps, kept in an accumulator that is
 * part of the optimizer state (eng_model_optim_extra).
 *
 * Memory: level 0 uses the layer's planned ln2/rstd2 buffers, and every
 * level's gate|up and SwiGLU outputs are consecutive blocks of the layer's
 * gu (N, 2F) and h (N, F) buffers (sum F_i = F); only levels 1..k-1 need
 * their own input x_i, normed input and RMS reciprocals, in one slab
 * planned here.  Backward scratch (dgu, dh, dln) is the model's.
 *
 * Must not: allocate after eng__hope_plan; be reached for another arch. */
#include "engine/model/hope.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/internal.h"

/* ------------------------------------------------------------ state */

typedef struct hope_level {
    int F;          /* width */
    int C;          /* update period in optimizer steps */
    size_t norm;    /* (d) offsets in the parameter slab */
    size_t wgu;     /* (2F, d) gate_proj then up_proj */
    size_t wdown;   /* (d, F) */
    int tensor;     /* index of the level's first tensor (norm, gate, up, down follow) */
    float *x;       /* (N, d) input: resid_mid for level 0, else the previous level's output */
    float *ln;      /* (N, d) normed input */
    float *rstd;    /* (N) */
    float *gu;      /* (N, 2F) gate | up outputs */
    float *h;       /* (N, F) SwiGLU output */
} hope_level;

struct eng_hope {
    int k;
    hope_level lv[ENG_MAX_LAYERS][ENG_HOPE_MAX_LEVELS];
    int *period;     /* (n_tensors) update period of each tensor (1 outside the slow levels) */
    size_t *acc;     /* (n_tensors) offset of the tensor's accumulator in m->xopt_slab (period > 1) */
    float *act_slab; /* levels 1..k-1: x, ln, rstd */
};

int eng__hope_create(eng_model *m, tlm_err *e)
{
    const eng_model_cfg *mc = &m->cfg.model;
    const int k = mc->hope_levels;
    if (k < 1 || k > ENG_HOPE_MAX_LEVELS || mc->n_hope_chunks != k)
        return tlm_errf(e, TLM_ECONFIG, "hope: %d levels with %d chunk sizes", k, mc->n_hope_chunks);
    struct eng_hope *h = calloc(1, sizeof *h);
    if (!h)
        return tlm_errf(e, TLM_ENOMEM, "model: out of memory");
    h->k = k;
    for (int l = 0; l < m->L; l++) {
        int w[ENG_HOPE_MAX_LEVELS];
        int rc = eng_hope_split(m->widths[l], k, m->cfg.taper.multiple, w, e);
        if (rc) {
            free(h);
            tlm_err_prefix(e, "model: layer %d", l);
            return rc;
        }
        for (int i = 0; i < k; i++) {
            double c = mc->hope_chunks[i];
            if (c < 1 || c > 1e6 || c != floor(c)) {
                free(h);
                return tlm_errf(e, TLM_ECONFIG, "hope: chunk size %g of level %d is not a whole number of steps", c,
                                i);
            }
            h->lv[l][i].F = w[i];
            h->lv[l][i].C = (int)c;
        }
    }
    m->hope = h;
    return 0;
}

void eng__hope_layout(eng_model *m, int cap, int l)
{
    const int d = m->d;
    char fmt[96];
    for (int i = 0; i < m->hope->k; i++) {
        hope_level *v = &m->hope->lv[l][i];
        v->tensor = m->n_tensors;
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.norm.weight", i);
        v->norm = eng__model_add_tensor(m, cap, 1, d, 0, 0, fmt, l);
        /* gate and up adjacent: one (2F, d) matmul */
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.gate_proj.weight", i);
        v->wgu = eng__model_add_tensor(m, cap, 2, v->F, d, 1, fmt, l);
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.up_proj.weight", i);
        eng__model_add_tensor(m, cap, 2, v->F, d, 1, fmt, l);
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.down_proj.weight", i);
        v->wdown = eng__model_add_tensor(m, cap, 2, d, v->F, 1, fmt, l);
    }
}

static size_t pad16(size_t n)
{
    return (n + 15) & ~(size_t)15; /* 64-byte aligned starts */
}

int eng__hope_plan(eng_model *m, tlm_err *e)
{
    struct eng_hope *h = m->hope;
    const int k = h->k;
    const size_t N = (size_t)m->max_B * m->max_T, d = (size_t)m->d;
    h->period = malloc((size_t)m->n_tensors * sizeof *h->period);
    h->acc = calloc((size_t)m->n_tensors, sizeof *h->acc);
    if (!h->period || !h->acc)
        return tlm_errf(e, TLM_ENOMEM, "model: out of memory");
    for (int i = 0; i < m->n_tensors; i++)
        h->period[i] = 1;

    /* the slow levels' accumulators, in tensor order (consecutive tensors
     * of one level are consecutive in the accumulator slab too) */
    size_t acc = 0;
    int n_slow = 0;
    for (int l = 0; l < m->L; l++)
        for (int i = 0; i < k; i++) {
            const hope_level *v = &h->lv[l][i];
            if (v->C == 1)
                continue;
            for (int t = v->tensor; t < v->tensor + 4; t++) {
                h->period[t] = v->C;
                h->acc[t] = acc;
                acc += m->tensors[t].numel;
                n_slow++;
            }
        }
    if (n_slow) {
        m->xopt = calloc((size_t)n_slow, sizeof *m->xopt);
        m->xopt_slab = m->ops->alloc(m->ctx, acc * sizeof(float));
        if (!m->xopt || !m->xopt_slab)
            return tlm_errf(e, TLM_ENOMEM, "model: cannot allocate %.1f MiB of gradient accumulators",
                            (double)acc * 4 / 1048576);
        for (int t = 0; t < m->n_tensors; t++) {
            if (h->period[t] == 1)
                continue;
            eng_tensor_info *x = &m->xopt[m->n_xopt++];
            *x = m->tensors[t];
            snprintf(x->name, sizeof x->name, "%.86s.grad_acc", m->tensors[t].name); /* names are < 64 */
            x->offset = h->acc[t];
        }
        m->xopt_floats = acc;
    }

    /* activations of levels 1..k-1 */
    const size_t per = pad16(N * d) * 2 + pad16(N);
    const size_t total = per * (size_t)(k - 1) * (size_t)m->L;
    if (total) {
        h->act_slab = m->ops->alloc(m->ctx, total * sizeof(float));
        if (!h->act_slab)
            return tlm_errf(e, TLM_ENOMEM, "model: cannot allocate %.1f MiB of Hope level activations",
                            (double)total * 4 / 1048576);
    }
    float *at = h->act_slab;
    for (int l = 0; l < m->L; l++) {
        eng_layer_acts *a = &m->la[l];
        size_t off = 0; /* columns of the layer's width taken by the levels before */
        for (int i = 0; i < k; i++) {
            hope_level *v = &h->lv[l][i];
            if (i == 0) {
                v->x = a->resid_mid;
                v->ln = a->ln2;
                v->rstd = a->rstd2;
            } else {
                v->x = at;
                v->ln = at + pad16(N * d);
                v->rstd = at + 2 * pad16(N * d);
                at += per;
            }
            v->gu = a->gu + N * 2 * off;
            v->h = a->h + N * off;
            off += (size_t)v->F;
        }
    }
    return 0;
}

void eng__hope_free(eng_model *m)
{
    struct eng_hope *h = m->hope;
    if (!h)
        return;
    if (h->act_slab)
        m->ops->free(m->ctx, h->act_slab);
    free(h->period);
    free(h->acc);
    free(h);
    m->hope = NULL;
}

/* ------------------------------------------------------------ passes */

void eng__hope_mlp_fwd(eng_model *m, int l, int N)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const int d = m->d, k = m->hope->k;
    const float *P = m->params;
    const float eps = (float)m->cfg.model.norm_eps;
    for (int i = 0; i < k; i++) {
        const hope_level *v = &m->hope->lv[l][i];
        const int F = v->F;
        float *out = i + 1 < k ? m->hope->lv[l][i + 1].x : m->resid + (size_t)(l + 1) * N * d;
        o->rmsnorm_fwd(ctx, v->ln, v->rstd, v->x, P + v->norm, N, d, eps);
        o->matmul(ctx, 0, 1, N, 2 * F, d, 1.0f, v->ln, d, P + v->wgu, d, 0.0f, v->gu, 2 * F);
        o->swiglu_fwd(ctx, v->h, v->gu, v->gu + F, 2 * F, N, F);
        o->copy(ctx, out, v->x, (size_t)N * d);
        o->matmul(ctx, 0, 1, N, d, F, 1.0f, v->h, F, P + v->wdown, F, 1.0f, out, d);
    }
}

void eng__hope_mlp_bwd(eng_model *m, int l, int N)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const int d = m->d;
    const float *P = m->params;
    float *Gr = m->grads;
    /* m->dresid = d/d x_{i+1} on entry to each level, d/d x_i after it
     * (rmsnorm_bwd adds the branch's share onto the skip path's) */
    for (int i = m->hope->k - 1; i >= 0; i--) {
        const hope_level *v = &m->hope->lv[l][i];
        const int F = v->F;
        o->matmul(ctx, 0, 0, N, F, d, 1.0f, m->dresid, d, P + v->wdown, F, 0.0f, m->dh, F);
        o->matmul(ctx, 1, 0, d, F, N, 1.0f, m->dresid, d, v->h, F, 1.0f, Gr + v->wdown, F);
        o->swiglu_bwd(ctx, m->dgu, m->dgu + F, m->dh, v->gu, v->gu + F, 2 * F, N, F);
        o->matmul(ctx, 0, 0, N, d, 2 * F, 1.0f, m->dgu, 2 * F, P + v->wgu, d, 0.0f, m->dln, d);
        o->matmul(ctx, 1, 0, 2 * F, d, N, 1.0f, m->dgu, 2 * F, v->ln, d, 1.0f, Gr + v->wgu, d);
        o->rmsnorm_bwd(ctx, m->dresid, Gr + v->norm, m->dln, v->x, P + v->norm, v->rstd, N, d);
    }
}

/* ------------------------------------------------------------ optimizer */

/* Every tensor of period 1 as eng_model_step does it.  A slow level
 * (period C): its gradient, scaled by this step's clipping factor, is added
 * to its accumulator; at steps t with t % C == 0 AdamW runs on the
 * accumulator's mean (grad_scale 1/C), with this step's learning rate and
 * the bias correction of the level's own update count t / C, and the
 * accumulator is cleared.  In between the level's weights and moments stay
 * as they are (weight decay included). */
int eng__hope_step(eng_model *m, const eng_adamw *opt, tlm_err *e)
{
    (void)e;
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const struct eng_hope *h = m->hope;
    for (int i = 0; i < m->n_tensors;) {
        const int C = h->period[i], decay = m->tensors[i].decay;
        int j = i + 1;
        while (j < m->n_tensors && m->tensors[j].decay == decay && h->period[j] == C)
            j++;
        const size_t off = m->tensors[i].offset, n = m->tensors[j - 1].offset + m->tensors[j - 1].numel - off;
        const float wd = decay ? (float)opt->weight_decay : 0.0f;
        if (C == 1) {
            o->adamw(ctx, m->params + off, m->grads + off, m->m + off, m->v + off, n, (float)opt->lr, (float)opt->beta1,
                     (float)opt->beta2, (float)opt->eps, wd, (float)(1.0 - pow(opt->beta1, (double)opt->t)),
                     (float)(1.0 - pow(opt->beta2, (double)opt->t)), (float)opt->grad_scale);
        } else {
            float *acc = m->xopt_slab + h->acc[i];
            o->axpy(ctx, acc, m->grads + off, n, (float)opt->grad_scale);
            if (opt->t % C == 0) {
                const double tl = (double)(opt->t / C);
                o->adamw(ctx, m->params + off, acc, m->m + off, m->v + off, n, (float)opt->lr, (float)opt->beta1,
                         (float)opt->beta2, (float)opt->eps, wd, (float)(1.0 - pow(opt->beta1, tl)),
                         (float)(1.0 - pow(opt->beta2, tl)), (float)(1.0 / C));
                o->zero(ctx, acc, n);
            }
        }
        i = j;
    }
    return 0;
}
