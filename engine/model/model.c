/* model.c: an eng_model's life outside the passes: the tensor table (Hugging
 * Face Llama names), the memory plan (parameters, gradients, AdamW moments
 * and activations, each one slab, sized once), deterministic initialisation,
 * host copies, the gradient norm and the AdamW step.
 *
 * Init RNG: each tensor draws from its own xoshiro256** stream seeded with
 * splitmix64(seed ^ FNV-1a(name)), normals by Box-Muller in double (the
 * cosine branch only), so a tensor's values depend on the seed and its name
 * and shape, not on the tensors before it.
 *
 * Must not: allocate anything after eng_model_create returns. */
#include "engine/model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/internal.h"
#include "engine/config/taper.h"

/* ------------------------------------------------------------ tensor table */

/* One tensor at the slab's end; align: first at the next multiple of
 * ENG__PARAM_ALIGN floats (internal.h) */
static size_t add_tensor(eng_model *m, int cap, int ndim, int64_t d0, int64_t d1, int decay, const char *fmt,
                         int layer, int align)
{
    const size_t numel = (size_t)d0 * (size_t)(ndim > 1 ? d1 : 1);
    if (align)
        m->n_slab = (m->n_slab + ENG__PARAM_ALIGN - 1) / ENG__PARAM_ALIGN * ENG__PARAM_ALIGN;
    if (m->tensors && m->n_tensors < cap) {
        eng_tensor_info *t = &m->tensors[m->n_tensors];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, fmt, layer);
        t->ndim = ndim;
        t->shape[0] = d0;
        t->shape[1] = d1;
        t->numel = numel;
        t->offset = m->n_slab;
        t->decay = decay;
    }
    size_t off = m->n_slab;
    m->n_slab += numel;
    m->n_params += numel;
    m->n_tensors++;
    return off;
}

size_t eng__model_add_tensor(eng_model *m, int cap, int ndim, int64_t d0, int64_t d1, int decay, const char *fmt,
                             int layer)
{
    return add_tensor(m, cap, ndim, d0, d1, decay, fmt, layer, 1);
}

size_t eng__model_add_rows(eng_model *m, int cap, int64_t d0, int64_t d1, const char *fmt, int layer)
{
    return add_tensor(m, cap, 2, d0, d1, 1, fmt, layer, 0);
}

/* Lays the parameters out (called twice: count, then fill): per layer the
 * input norm, then the row's token mixer and MLP.  Each tensor starts
 * 16-byte aligned in the bf16 copy (eng__model_add_tensor); the padding
 * is no parameter: n_params counts the tensors, n_slab the slab. */
static void layout(eng_model *m, int cap)
{
    const int d = m->d;
    m->n_params = 0;
    m->n_slab = 0;
    m->n_tensors = 0;
    m->off_embed = eng__model_add_tensor(m, cap, 2, m->V, d, 1, "model.embed_tokens.weight", 0);
    for (int l = 0; l < m->L; l++) {
        m->lp[l].ln1 = eng__model_add_tensor(m, cap, 1, d, 0, 0, "model.layers.%d.input_layernorm.weight", l);
        m->mixer->layout(m, cap, l);
        m->mixer->mlp->layout(m, cap, l);
    }
    m->off_norm = eng__model_add_tensor(m, cap, 1, d, 0, 0, "model.norm.weight", 0);
    m->off_head =
        m->cfg.model.tied ? m->off_embed : eng__model_add_tensor(m, cap, 2, m->V, d, 1, "lm_head.weight", 0);
}

/* Zeroes the floats between tensors of a slab (backend memory): padding
 * is zero in every slab, so that no sum over a slab (the gradient norm,
 * the ranks' reductions) and no AdamW segment sees anything there. */
static void zero_padding(eng_model *m, float *slab)
{
    size_t end = 0; /* the table is in slab order */
    for (int i = 0; i < m->n_tensors; i++) {
        const eng_tensor_info *t = &m->tensors[i];
        if (t->offset > end)
            m->ops->zero(m->ctx, slab + end, (t->offset - end) * sizeof(float));
        end = t->offset + t->numel;
    }
}

/* ------------------------------------------------------------ activation plan */

struct eng_plan_req {
    void **ptr;
    size_t bytes;
};

void eng__plan_want(eng_plan *p, void *ptr, size_t bytes)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        struct eng_plan_req *r = realloc(p->req, (size_t)cap * sizeof *r);
        if (!r) {
            p->oom = 1;
            return;
        }
        p->req = r;
        p->cap = cap;
    }
    p->req[p->n].ptr = (void **)ptr;
    p->req[p->n].bytes = (bytes + 63) & ~(size_t)63; /* 64-byte aligned starts (cuBLASLt wants 16) */
    p->n++;
}

void *eng__plan_alloc(eng_model *m, eng_plan *p, size_t *bytes)
{
    size_t total = 0;
    for (int i = 0; i < p->n; i++)
        total += p->req[i].bytes;
    *bytes = total;
    char *slab = p->oom ? NULL : m->ops->alloc(m->ctx, total);
    char *at = slab;
    for (int i = 0; slab && i < p->n; i++) {
        *p->req[i].ptr = at;
        at += p->req[i].bytes;
    }
    free(p->req);
    memset(p, 0, sizeof *p);
    return slab;
}

/* What every row uses: the stack's buffers, each layer's norms, fused
 * projection, attention output and MLP activations, the backward's
 * scratch.  A row plans what only it needs (its plan entry). */
static int plan_activations(eng_model *m, tlm_err *e)
{
    eng_plan p = {0};
    const size_t N = (size_t)m->max_B * m->max_T, d = (size_t)m->d;
    eng__plan_want(&p, &m->tokens, N * sizeof(int32_t));
    eng__plan_want(&p, &m->targets, N * sizeof(int32_t));
    eng__plan_f32(&p, &m->rope_cs, (size_t)m->max_T * m->hd);
    eng__plan_act(m, &p, &m->resid, (size_t)(m->L + 1) * N * d);
    for (int l = 0; l < m->L; l++) {
        eng_layer_acts *a = &m->la[l];
        const size_t F = (size_t)m->widths[l];
        eng__plan_act(m, &p, &a->ln1, N * d);
        eng__plan_f32(&p, &a->rstd1, N);
        eng__plan_act(m, &p, &a->qkvg, N * (size_t)m->S);
        eng__plan_f32(&p, &a->lse, (size_t)m->max_B * m->H * m->max_T);
        eng__plan_act(m, &p, &a->atty, N * d);
        eng__plan_act(m, &p, &a->resid_mid, N * d);
        eng__plan_act(m, &p, &a->ln2, N * d);
        eng__plan_f32(&p, &a->rstd2, N);
        if (!m->recompute || l == 0) {
            eng__plan_act(m, &p, &a->gu, N * 2 * (m->recompute ? (size_t)m->max_F : F));
            eng__plan_act(m, &p, &a->h, N * (m->recompute ? (size_t)m->max_F : F));
        }
    }
    eng__plan_act(m, &p, &m->lnf, N * d);
    eng__plan_f32(&p, &m->rstdf, N);
    eng__plan_f32(&p, &m->cls_ws, m->ops->classifier_workspace(m->ctx, (int)N, m->V, m->d));
    eng__plan_f32(&p, &m->losses, N);
    eng__plan_want(&p, &m->stats, ENG__STATS * sizeof(double));
    eng__plan_want(&p, &m->tensor_sq, (size_t)m->n_tensors * sizeof(double));
    eng__plan_want(&p, &m->emb_sort, (3 * N + 2) * sizeof(int32_t));
    eng__plan_act(m, &p, &m->dresid, N * d);
    eng__plan_act(m, &p, &m->dqkvg, N * (size_t)m->S);
    eng__plan_act(m, &p, &m->datty, N * d);
    eng__plan_act(m, &p, &m->dgated, N * d);
    eng__plan_act(m, &p, &m->dln, N * d);
    eng__plan_act(m, &p, &m->dgu, N * 2 * (size_t)m->max_F);
    eng__plan_act(m, &p, &m->dh, N * (size_t)m->max_F);
    eng__plan_f32(&p, &m->att_ws, m->ops->attention_workspace(m->ctx, m->max_B, m->max_T, m->H, m->hd));
    m->act_slab = eng__plan_alloc(m, &p, &m->act_bytes);
    if (!m->act_slab)
        return tlm_errf(e, TLM_ENOMEM, "model: cannot allocate %.1f MiB of activations (batch %d x %d)",
                        (double)m->act_bytes / 1048576, m->max_B, m->max_T);
    for (int l = 1; l < m->L && m->recompute; l++) /* one gu and h for every layer (mlp.c remakes them) */
        m->la[l].gu = m->la[0].gu, m->la[l].h = m->la[0].h;
    return 0;
}

static void fill_rope(eng_model *m)
{
    /* computed in double on the host, one row at a time (no allocation of
     * the full table on the host: the row goes straight to the backend) */
    float row[2 * 512];
    const int h2 = m->hd / 2;
    for (int t = 0; t < m->max_T; t++) {
        for (int i = 0; i < h2; i++) {
            double ang = (double)t * pow(m->cfg.model.rope_theta, -2.0 * i / m->hd);
            row[i] = (float)cos(ang);
            row[h2 + i] = (float)sin(ang);
        }
        m->ops->to_device(m->ctx, m->rope_cs + (size_t)t * m->hd, row, (size_t)m->hd * sizeof(float));
    }
}

/* ------------------------------------------------------------ create / free */

/* The rows of the token-mixer table by eng_arch (each defined beside its
 * mixer). */
static const eng_mixer *const MIXERS[ENG_ARCH_COUNT] = {
    [ENG_ARCH_TRANSFORMER] = &eng__mixer_transformer,
    [ENG_ARCH_GATED_ATTN] = &eng__mixer_gated_attn,
    [ENG_ARCH_HOPE_ATTN] = &eng__mixer_hope_attn,
    [ENG_ARCH_TITANS] = &eng__mixer_titans,
};

/* The optional op groups (engine/model/ops.h), for the message. */
static const struct {
    unsigned group;
    const char *what;
} GROUPS[] = {
    {ENG_OPS_TITANS, "the Titans ops (dconv, silu_norm, swa, titans_mem)"},
};

/* Once, at creation: the backend fills every group the row's passes call,
 * so no pass meets a missing op. */
static int check_backend(const eng_backend *b, const eng_mixer *mx, tlm_err *e)
{
    const eng_ops *o = b->ops;
    for (size_t i = 0; i < sizeof GROUPS / sizeof GROUPS[0]; i++)
        if ((mx->groups & GROUPS[i].group) && !(o->groups & GROUPS[i].group))
            return tlm_errf(e, TLM_ECONFIG, "model: architecture %s needs %s, which the %s backend does not have",
                            eng_arch_name(mx->arch), GROUPS[i].what, o->name);
    /* a table that claims a group must fill all of it */
    const char *missing = NULL;
#define ENG_CHECK_OP(op) missing = missing ? missing : o->op ? NULL : #op;
    if (o->groups & ENG_OPS_TITANS) {
        ENG_OPS_TITANS_LIST(ENG_CHECK_OP)
    }
#undef ENG_CHECK_OP
    if (missing)
        return tlm_errf(e, TLM_EINTERNAL, "model: the %s backend claims the Titans ops but has no %s", o->name,
                        missing);
    return 0;
}

int eng_model_create(eng_model **out, const eng_config *cfg, const eng_backend *backend, int max_batch, int seq_len,
                     tlm_err *e)
{
    *out = NULL;
    const eng_model_cfg *mc = &cfg->model;
    const eng_ops *ops = backend->ops;
    const eng_mixer *mx = (unsigned)cfg->arch < ENG_ARCH_COUNT ? MIXERS[cfg->arch] : NULL;
    int rc;
    if (!mx)
        return tlm_errf(e, TLM_ECONFIG, "model: unknown architecture %d", (int)cfg->arch);
    if ((rc = check_backend(backend, mx, e)))
        return rc;
    if (mc->d_model <= 0 || mc->heads <= 0 || mc->d_model % mc->heads || mc->layers <= 0 ||
        mc->layers > ENG_MAX_LAYERS || mc->vocab <= 0)
        return tlm_errf(e, TLM_ECONFIG, "model: bad shape (d_model %d, heads %d, layers %d, vocab %d)", mc->d_model,
                        mc->heads, mc->layers, mc->vocab);
    int kvh = mc->kv_heads > 0 ? mc->kv_heads : mc->heads;
    if (mc->heads % kvh)
        return tlm_errf(e, TLM_ECONFIG, "model: heads (%d) must be a multiple of kv_heads (%d)", mc->heads, kvh);
    int hd = mc->d_model / mc->heads;
    if (hd % 2 || hd > 1024)
        return tlm_errf(e, TLM_ECONFIG, "model: head size %d must be even and at most 1024 (RoPE)", hd);
    if (max_batch <= 0 || seq_len <= 0)
        return tlm_errf(e, TLM_ECONFIG, "model: batch %d x seq_len %d", max_batch, seq_len);
    eng_model *m = calloc(1, sizeof *m);
    if (!m)
        return tlm_errf(e, TLM_ENOMEM, "model: out of memory");
    m->ops = ops;
    m->ctx = backend->ctx;
    m->act_dtype = ops->act_dtype(backend->ctx);
    /* the weight copy is in the activations' type: a product's A and B
     * share one (cuBLASLt's rule, ops.h matmul) */
    m->wlp_dtype = m->act_dtype;
    m->mixer = mx;
    m->cfg = *cfg;
    m->d = mc->d_model;
    m->L = mc->layers;
    m->H = mc->heads;
    m->Hkv = kvh;
    m->hd = hd;
    m->V = mc->vocab;
    m->S = m->H * hd + 2 * kvh * hd; /* q, k, v; the row adds its columns */
    m->max_B = max_batch;
    m->max_T = seq_len;
    m->recompute = cfg->train.recompute != 0;
    /* on only where the backend has graphs (the worker refuses on with the
     * CPU: eng_cuda_graph_resolve); auto is off until measured */
    m->graph_on = cfg->train.cuda_graph == ENG_GRAPH_ON && ops->graph_begin != NULL;
    if ((rc = eng_taper_widths(cfg, m->widths, e)) || (rc = mx->create(m, e)))
        goto fail;
    for (int l = 0; l < m->L; l++)
        m->max_F = m->widths[l] > m->max_F ? m->widths[l] : m->max_F;

    layout(m, 0);
    int cap = m->n_tensors;
    m->tensors = calloc((size_t)cap, sizeof *m->tensors);
    if (!m->tensors) {
        rc = tlm_errf(e, TLM_ENOMEM, "model: out of memory");
        goto fail;
    }
    layout(m, cap);
    m->adamw_seg = malloc((size_t)cap * sizeof *m->adamw_seg);
    if (!m->adamw_seg) {
        rc = tlm_errf(e, TLM_ENOMEM, "model: out of memory");
        goto fail;
    }
    m->n_adamw_seg = eng__model_adamw_table(m, m->adamw_seg, NULL);
    m->step_hi = m->n_slab;

    size_t bytes = m->n_slab * sizeof(float);
    m->params = ops->alloc(m->ctx, bytes);
    m->grads = ops->alloc(m->ctx, bytes);
    m->m = ops->alloc(m->ctx, bytes);
    m->v = ops->alloc(m->ctx, bytes);
    m->losses_host = malloc((size_t)max_batch * seq_len * sizeof(float));
    m->sort_host = malloc((3 * (size_t)max_batch * seq_len + 2) * sizeof(int32_t));
    m->sort_count = malloc((size_t)m->V * sizeof(int32_t));
    /* fp32: the products read the master weights; bf16: their copy */
    m->params_lp = m->wlp_dtype == ENG_F32 ? (void *)m->params
                                           : ops->alloc(m->ctx, m->n_slab * eng_dtype_size(m->wlp_dtype));
    if (!m->params || !m->grads || !m->m || !m->v || !m->params_lp || !m->losses_host || !m->sort_host ||
        !m->sort_count) {
        rc = tlm_errf(e, TLM_ENOMEM, "model: cannot allocate 4 x %.1f MiB for %zu parameters",
                      (double)bytes / 1048576, m->n_params);
        goto fail;
    }
    zero_padding(m, m->params);
    zero_padding(m, m->grads);
    zero_padding(m, m->m);
    zero_padding(m, m->v);
    if ((rc = plan_activations(m, e)) || (rc = mx->plan(m, e)))
        goto fail;
    m->host_visible = ops->is_host;
    fill_rope(m);
    *out = m;
    return 0;
fail:
    eng_model_free(m);
    return rc;
}

void eng_model_free(eng_model *m)
{
    if (!m)
        return;
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    if (m->graph)
        o->graph_free(ctx, m->graph);
    if (m->params_lp && m->params_lp != (void *)m->params)
        o->free(ctx, m->params_lp);
    if (m->params)
        o->free(ctx, m->params);
    if (m->grads)
        o->free(ctx, m->grads);
    if (m->m)
        o->free(ctx, m->m);
    if (m->v)
        o->free(ctx, m->v);
    if (m->act_slab)
        o->free(ctx, m->act_slab);
    if (m->xopt_slab)
        o->free(ctx, m->xopt_slab);
    if (m->logits)
        o->free(ctx, m->logits);
    free(m->xopt);
    m->mixer->free(m);
    if (!m->host_visible)
        free(m->logits_host);
    free(m->losses_host);
    free(m->sort_host);
    free(m->sort_count);
    free(m->tensors);
    free(m->adamw_seg);
    free(m);
}

/* ------------------------------------------------------------ init */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

typedef struct xoshiro {
    uint64_t s[4];
} xoshiro;

static uint64_t xoshiro_next(xoshiro *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* uniform in (0, 1]: 53 random bits */
static double uniform01(xoshiro *r)
{
    return ((double)(xoshiro_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

void eng_model_init_weights(eng_model *m, uint64_t seed)
{
    const double std = m->cfg.model.init_std, out_std = std / sqrt(2.0 * m->L);
    float buf[4096];
    for (int i = 0; i < m->n_tensors; i++) {
        const eng_tensor_info *t = &m->tensors[i];
        uint64_t h = 1469598103934665603ull;
        for (const char *c = t->name; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        uint64_t sm = (uint64_t)seed ^ h;
        xoshiro r;
        for (int k = 0; k < 4; k++)
            r.s[k] = splitmix64(&sm);
        int is_norm = t->ndim == 1;
        int is_out = strstr(t->name, "o_proj") || strstr(t->name, "down_proj");
        double sd = is_out ? out_std : std;
        for (size_t done = 0; done < t->numel;) {
            size_t n = t->numel - done < 4096 ? t->numel - done : 4096;
            for (size_t j = 0; j < n; j++) {
                if (is_norm) {
                    buf[j] = 1.0f;
                } else {
                    double u1 = uniform01(&r), u2 = uniform01(&r);
                    buf[j] = (float)(sd * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
                }
            }
            m->ops->to_device(m->ctx, m->params + t->offset + done, buf, n * sizeof(float));
            done += n;
        }
    }
    m->mixer->init(m, seed);
    eng_model_sync_weight_copy(m);
    m->ops->zero(m->ctx, m->grads, m->n_slab * sizeof(float));
    m->ops->zero(m->ctx, m->m, m->n_slab * sizeof(float));
    m->ops->zero(m->ctx, m->v, m->n_slab * sizeof(float));
    if (m->xopt_slab)
        m->ops->zero(m->ctx, m->xopt_slab, m->xopt_floats * sizeof(float));
}

/* ------------------------------------------------------------ accessors */

size_t eng_model_param_count(const eng_model *m)
{
    return m->n_params;
}

size_t eng_model_slab_floats(const eng_model *m)
{
    return m->n_slab;
}

int eng_model_n_tensors(const eng_model *m)
{
    return m->n_tensors;
}

const eng_tensor_info *eng_model_tensor(const eng_model *m, int i)
{
    return i >= 0 && i < m->n_tensors ? &m->tensors[i] : NULL;
}

const eng_tensor_info *eng_model_find_tensor(const eng_model *m, const char *name)
{
    for (int i = 0; i < m->n_tensors; i++)
        if (!strcmp(m->tensors[i].name, name))
            return &m->tensors[i];
    return NULL;
}

const int *eng_model_widths(const eng_model *m)
{
    return m->widths;
}

int eng_model_get_params(const eng_model *m, float *dst)
{
    m->ops->to_host(m->ctx, dst, m->params, m->n_slab * sizeof(float));
    return 0;
}

int eng_model_set_params(eng_model *m, const float *src)
{
    m->ops->to_device(m->ctx, m->params, src, m->n_slab * sizeof(float));
    zero_padding(m, m->params); /* whatever src held there */
    eng_model_sync_weight_copy(m);
    return 0;
}

void eng_model_sync_weight_copy(eng_model *m)
{
    if (m->params_lp != (void *)m->params)
        m->ops->cast(m->ctx, m->params_lp, m->wlp_dtype, m->params, m->n_slab);
}

int eng_model_get_grads(const eng_model *m, float *dst)
{
    m->ops->to_host(m->ctx, dst, m->grads, m->n_slab * sizeof(float));
    return 0;
}

int eng_model_get_optim(const eng_model *m, float *exp_avg, float *exp_avg_sq)
{
    m->ops->to_host(m->ctx, exp_avg, m->m, m->n_slab * sizeof(float));
    m->ops->to_host(m->ctx, exp_avg_sq, m->v, m->n_slab * sizeof(float));
    return 0;
}

int eng_model_set_optim(eng_model *m, const float *exp_avg, const float *exp_avg_sq)
{
    m->ops->to_device(m->ctx, m->m, exp_avg, m->n_slab * sizeof(float));
    m->ops->to_device(m->ctx, m->v, exp_avg_sq, m->n_slab * sizeof(float));
    zero_padding(m, m->m);
    zero_padding(m, m->v);
    return 0;
}

int eng_model_n_optim_extra(const eng_model *m)
{
    return m->n_xopt;
}

const eng_tensor_info *eng_model_optim_extra(const eng_model *m, int i)
{
    return i >= 0 && i < m->n_xopt ? &m->xopt[i] : NULL;
}

size_t eng_model_optim_extra_floats(const eng_model *m)
{
    return m->xopt_floats;
}

int eng_model_get_optim_extra(const eng_model *m, float *dst)
{
    if (m->xopt_floats)
        m->ops->to_host(m->ctx, dst, m->xopt_slab, m->xopt_floats * sizeof(float));
    return 0;
}

int eng_model_set_optim_extra(eng_model *m, const float *src)
{
    if (m->xopt_floats)
        m->ops->to_device(m->ctx, m->xopt_slab, src, m->xopt_floats * sizeof(float));
    return 0;
}

void eng_model_zero_grads(eng_model *m)
{
    m->ops->zero(m->ctx, m->grads, m->n_slab * sizeof(float));
}

float *eng_model_grad_slab(eng_model *m)
{
    return m->grads;
}

void eng_model_set_grad_hook(eng_model *m, eng_grad_ready_fn fn, void *ud)
{
    m->grad_hook = fn;
    m->grad_hook_ud = ud;
}

double eng_model_grad_norm(eng_model *m)
{
    return sqrt(m->ops->sumsq(m->ctx, m->grads, m->n_slab));
}

/* every tensor's sum into backend memory, then one copy (a device
 * backend no longer waits once per tensor) */
void eng_model_grad_sumsq(eng_model *m, double *out)
{
    for (int i = 0; i < m->n_tensors; i++)
        m->ops->sumsq_into(m->ctx, m->tensor_sq + i, m->grads + m->tensors[i].offset, m->tensors[i].numel);
    m->ops->to_host(m->ctx, out, m->tensor_sq, (size_t)m->n_tensors * sizeof(double));
}

int eng_model_step(eng_model *m, const eng_adamw *opt, tlm_err *e)
{
    return eng_model_step_range(m, opt, 0, m->n_slab, e);
}

int eng_model_step_range(eng_model *m, const eng_adamw *opt, size_t lo, size_t hi, tlm_err *e)
{
    if (opt->t < 1)
        return tlm_errf(e, TLM_EINTERNAL, "model: AdamW step number must be >= 1 (got %lld)", (long long)opt->t);
    if (lo > hi || hi > m->n_slab)
        return tlm_errf(e, TLM_EINTERNAL, "model: step range [%zu, %zu) outside the slab's %zu floats", lo, hi,
                        m->n_slab);
    m->step_lo = lo;
    m->step_hi = hi;
    int rc = m->mixer->step(m, opt, e);
    m->step_lo = 0;
    m->step_hi = m->n_slab;
    return rc;
}

float *eng_model_param_slab(eng_model *m)
{
    return m->params;
}

double eng_model_grad_sumsq_range(eng_model *m, size_t off, size_t n)
{
    return n ? m->ops->sumsq(m->ctx, m->grads + off, n) : 0.0;
}

void eng__mixer_no_init(eng_model *m, uint64_t seed)
{
    (void)m;
    (void)seed;
}

void eng__model_adamw_segs(eng_model *m, const eng_adamw *opt, const eng_adamw_seg *seg, int nseg,
                           const float *grad, double t, float grad_scale)
{
    const float lr = (float)opt->lr, b1 = (float)opt->beta1, b2 = (float)opt->beta2, eps = (float)opt->eps,
                wd = (float)opt->weight_decay, bc1 = (float)(1.0 - pow(opt->beta1, t)),
                bc2 = (float)(1.0 - pow(opt->beta2, t));
    if (m->step_lo == 0 && m->step_hi == m->n_slab) {
        m->ops->adamw(m->ctx, m->params, grad, m->m, m->v, seg, nseg, lr, b1, b2, eps, wd, bc1, bc2, grad_scale,
                      eng__lp_at(m, 0), m->wlp_dtype);
        return;
    }
    /* eng_model_step_range (ZeRO-1's shard): each segment's part of the
     * range, one launch each */
    for (int i = 0; i < nseg; i++) {
        size_t off = seg[i].off, n = seg[i].n, skip;
        if (!eng__step_clip(m, &off, &n, &skip))
            continue;
        const eng_adamw_seg one = {0, n, seg[i].decay};
        m->ops->adamw(m->ctx, m->params + off, grad + off, m->m + off, m->v + off, &one, 1, lr, b1, b2, eps, wd, bc1,
                      bc2, grad_scale, eng__lp_at(m, off), m->wlp_dtype);
    }
}

/* The tensors as AdamW segments into seg (cap n_tensors): consecutive
 * tensors with the same decay flag are one segment; keep(i) 0 leaves
 * tensor i out (NULL: every tensor).  Returns how many. */
int eng__model_adamw_table(const eng_model *m, eng_adamw_seg *seg, int (*keep)(const eng_model *m, int i))
{
    int n = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        if (keep && !keep(m, i))
            continue;
        const eng_tensor_info *t = &m->tensors[i];
        if (n && seg[n - 1].decay == t->decay && seg[n - 1].off + seg[n - 1].n == t->offset)
            seg[n - 1].n += t->numel;
        else
            seg[n++] = (eng_adamw_seg){t->offset, t->numel, t->decay};
    }
    return n;
}

int eng__model_adamw_step(eng_model *m, const eng_adamw *opt, tlm_err *e)
{
    (void)e;
    /* every tensor in one launch (the table is the same every step) */
    eng__model_adamw_segs(m, opt, m->adamw_seg, m->n_adamw_seg, m->grads, (double)opt->t, (float)opt->grad_scale);
    return 0;
}
