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
 * The row of hope_attn in the token-mixer table (internal.h) is at the
 * end: attn.c's attention as the mixer, these levels as the MLP, this
 * file's optimizer step.
 *
 * Must not: allocate after the row's plan; be reached for another arch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/arch.h"
#include "engine/model/internal.h"

/* ------------------------------------------------------------ state */

typedef struct hope_level {
    int C;        /* update period in optimizer steps */
    int tensor;   /* index of the level's first tensor (norm, gate, up, down follow) */
    eng_swiglu b; /* the branch: x is resid_mid for level 0, else the previous level's output */
} hope_level;

typedef struct eng_hope {
    int k;
    hope_level lv[ENG_MAX_LAYERS][ENG_HOPE_MAX_LEVELS];
    int *period;     /* (n_tensors) update period of each tensor (1 outside the slow levels) */
    size_t *acc;     /* (n_tensors) offset of the tensor's accumulator in m->xopt_slab (period > 1) */
    eng_adamw_seg *fast; /* the period-1 tensors as AdamW segments (one launch a step) */
    int n_fast;
    float *act_slab; /* levels 1..k-1: x, ln, rstd */
} eng_hope;

static int hope_create(eng_model *m, tlm_err *e)
{
    const eng_model_cfg *mc = &m->cfg.model;
    const int k = mc->hope_levels;
    if (k < 1 || k > ENG_HOPE_MAX_LEVELS || mc->n_hope_chunks != k)
        return tlm_errf(e, TLM_ECONFIG, "hope: %d levels with %d chunk sizes", k, mc->n_hope_chunks);
    eng_hope *h = calloc(1, sizeof *h);
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
            h->lv[l][i].b.F = w[i];
            h->lv[l][i].C = (int)c;
        }
    }
    m->mixer_ctx = h;
    return 0;
}

/* In place of post_attention_layernorm and mlp.*: the layer's levels
 * (norm, gate_proj, up_proj, down_proj each). */
static void hope_layout(eng_model *m, int cap, int l)
{
    eng_hope *h = m->mixer_ctx;
    const int d = m->d;
    char fmt[96];
    for (int i = 0; i < h->k; i++) {
        hope_level *v = &h->lv[l][i];
        v->tensor = m->n_tensors;
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.norm.weight", i);
        v->b.norm = eng__model_add_tensor(m, cap, 1, d, 0, 0, fmt, l);
        /* gate and up adjacent: one (2F, d) matmul */
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.gate_proj.weight", i);
        v->b.wgu = eng__model_add_tensor(m, cap, 2, v->b.F, d, 1, fmt, l);
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.up_proj.weight", i);
        eng__model_add_tensor(m, cap, 2, v->b.F, d, 1, fmt, l);
        snprintf(fmt, sizeof fmt, "model.layers.%%d.mlp.levels.%d.down_proj.weight", i);
        v->b.wdown = eng__model_add_tensor(m, cap, 2, d, v->b.F, 1, fmt, l);
    }
}

static int fast_tensor(const eng_model *m, int i)
{
    return ((const eng_hope *)m->mixer_ctx)->period[i] == 1;
}

/* The slow levels' gradient accumulators (the model's extra optimizer
 * state), then the levels' own activations. */
static int hope_plan(eng_model *m, tlm_err *e)
{
    eng_hope *h = m->mixer_ctx;
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
    /* the period-1 tensors' AdamW table: the same every step, made here
     * so that a step allocates nothing */
    if (!(h->fast = malloc((size_t)m->n_tensors * sizeof *h->fast)))
        return tlm_errf(e, TLM_ENOMEM, "model: out of memory");
    h->n_fast = eng__model_adamw_table(m, h->fast, fast_tensor);

    /* activations of levels 1..k-1; level 0 runs on the layer's planned
     * buffers, and every level's gate|up and SwiGLU outputs are blocks of
     * the layer's */
    eng_plan p = {0};
    for (int l = 0; l < m->L; l++)
        for (int i = 1; i < k; i++) {
            eng_swiglu *b = &h->lv[l][i].b;
            eng__plan_act(m, &p, &b->x, N * d);
            eng__plan_act(m, &p, &b->ln, N * d);
            eng__plan_f32(&p, &b->rstd, N);
        }
    size_t total = 0;
    if (p.n) {
        h->act_slab = eng__plan_alloc(m, &p, &total);
        if (!h->act_slab)
            return tlm_errf(e, TLM_ENOMEM, "model: cannot allocate %.1f MiB of Hope level activations",
                            (double)total / 1048576);
    }
    for (int l = 0; l < m->L; l++) {
        eng_layer_acts *a = &m->la[l];
        size_t off = 0; /* columns of the layer's width taken by the levels before */
        for (int i = 0; i < k; i++) {
            eng_swiglu *b = &h->lv[l][i].b;
            if (i == 0) {
                b->x = a->resid_mid;
                b->ln = a->ln2;
                b->rstd = a->rstd2;
            }
            b->gu = eng__act_at(m, a->gu, N * 2 * off);
            b->h = eng__act_at(m, a->h, N * off);
            off += (size_t)b->F;
        }
    }
    return 0;
}

static void hope_free(eng_model *m)
{
    eng_hope *h = m->mixer_ctx;
    if (!h)
        return;
    if (h->act_slab)
        m->ops->free(m->ctx, h->act_slab);
    free(h->period);
    free(h->acc);
    free(h->fast);
    free(h);
    m->mixer_ctx = NULL;
}

/* ------------------------------------------------------------ passes */

/* The CMS of layer l: resid[l+1] from resid_mid through the levels */
static void hope_mlp_fwd(eng_model *m, int l, int N)
{
    const eng_hope *h = m->mixer_ctx;
    for (int i = 0; i < h->k; i++)
        eng__swiglu_fwd(m, &h->lv[l][i].b, i + 1 < h->k ? h->lv[l][i + 1].b.x : eng__resid(m, l + 1, N), N);
}

/* m->dresid = d/d x_{i+1} on entry to each level, d/d x_i after it */
static void hope_mlp_bwd(eng_model *m, int l, int N)
{
    const eng_hope *h = m->mixer_ctx;
    for (int i = h->k - 1; i >= 0; i--)
        eng__swiglu_bwd(m, &h->lv[l][i].b, N);
}

/* ------------------------------------------------------------ optimizer */

/* Every tensor of period 1 as eng_model_step does it.  A slow level
 * (period C): its gradient, scaled by this step's clipping factor, is added
 * to its accumulator; at steps t with t % C == 0 AdamW runs on the
 * accumulator's mean (grad_scale 1/C), with this step's learning rate and
 * the bias correction of the level's own update count t / C, and the
 * accumulator is cleared.  In between the level's weights and moments stay
 * as they are (weight decay included). */
static int hope_step(eng_model *m, const eng_adamw *opt, tlm_err *e)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    eng_hope *h = m->mixer_ctx;
    (void)e;
    eng__model_adamw_segs(m, opt, h->fast, h->n_fast, m->grads, (double)opt->t, (float)opt->grad_scale);
    for (int i = 0; i < m->n_tensors;) {
        const int C = h->period[i], decay = m->tensors[i].decay;
        int j = i + 1;
        while (j < m->n_tensors && m->tensors[j].decay == decay && h->period[j] == C)
            j++;
        const size_t off = m->tensors[i].offset, n = m->tensors[j - 1].offset + m->tensors[j - 1].numel - off;
        if (C > 1) {
            /* eng_model_step_range: only the accumulator's part of the range */
            size_t o2 = off, n2 = n, skip;
            if (eng__step_clip(m, &o2, &n2, &skip)) {
                float *acc = m->xopt_slab + h->acc[i] + skip;
                o->axpy(ctx, acc, m->grads + o2, n2, (float)opt->grad_scale);
                if (opt->t % C == 0) {
                    /* the accumulator is indexed from the range's start: the
                     * slabs are handed over from there too */
                    const eng_adamw_seg one = {0, n2, decay};
                    const double t = (double)(opt->t / C);
                    o->adamw(ctx, m->params + o2, acc, m->m + o2, m->v + o2, &one, 1, (float)opt->lr,
                             (float)opt->beta1, (float)opt->beta2, (float)opt->eps, (float)opt->weight_decay,
                             (float)(1.0 - pow(opt->beta1, t)), (float)(1.0 - pow(opt->beta2, t)), (float)(1.0 / C),
                             eng__lp_at(m, o2), m->wlp_dtype);
                    o->zero(ctx, acc, n2 * sizeof(float));
                }
            }
        }
        i = j;
    }
    return 0;
}

/* ------------------------------------------------------------ the row */

/* in place of the SwiGLU MLP */
static const eng_mlp hope_cms = {.layout = hope_layout, .fwd = hope_mlp_fwd, .bwd = hope_mlp_bwd};

const eng_mixer eng__mixer_hope_attn = {
    .arch = ENG_ARCH_HOPE_ATTN, .groups = 0, .mlp = &hope_cms,
    .create = hope_create, .layout = eng__attn_layout, .plan = hope_plan, .init = eng__mixer_no_init,
    .fwd = eng__attn_fwd, .bwd = eng__attn_bwd, .step = hope_step, .free = hope_free,
};
