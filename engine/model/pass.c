/* pass.c: the forward and backward passes over the whole stack
 * (embedding, blocks, final norm, then the LM head and cross-entropy as
 * the backend's one fused classifier op) and the public
 * eng_model_forward/backward around them.
 *
 * Host round trips (issue 24): a training forward copies nothing back;
 * its loss stays on the device until eng_model_step_report reads it with
 * the gradient norm in one copy.  The (N, V) logits are made only when
 * eng_model_logits asks for them.
 *
 * train.cuda_graph (issue 24, launch overhead): a training forward sends
 * tokens, targets and the tokens' sort, then leaves its device work
 * pending; eng_model_backward runs the stack, the loss and the backward
 * as one graph, captured at the second micro-batch of its key (B, T and
 * dscale's bits; the first runs op by op) and replayed for the next ones.  Everything the graph's
 * ops read that changes per call is in backend memory at a fixed address
 * (the tokens, targets and sort, the distinct ids' count among them);
 * dscale is an argument, so a new value (targets with another count of
 * ignored positions) captures again.  With a grad hook (data parallel
 * overlap: a host fence per range) or when anything else needs the
 * forward first (eng_model_step_report, logits, another forward), the
 * pending work runs op by op.  Evaluation never uses the graph.
 *
 * A block is pre-norm: h += mixer(norm1(h)); h += mlp(norm2(h)), both
 * the architecture's row of the token-mixer table (internal.h): attn.c's
 * attention or titans.c's mixer, then mlp.c's SwiGLU of the layer's
 * tapered width or hope.c's levels.  Nothing here knows which
 * architecture runs.  Every number moves through m->ops; nothing here
 * allocates. */
#include <math.h>
#include <stdlib.h>
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
}

/* The gradient floats [lo, hi) are final: hand them to the hook, after a
 * device backend's queue has finished them (a one-float copy to the host
 * returns only then: ops.h, to_host). */
static void grads_ready(eng_model *m, size_t lo, size_t hi)
{
    if (!m->grad_hook || hi <= lo)
        return;
    if (!m->host_visible) {
        float fence;
        m->ops->to_host(m->ctx, &fence, m->grads + lo, sizeof fence);
    }
    m->grad_hook(m->grad_hook_ud, m->grads + lo, lo, hi - lo);
}

static void eng__model_backward_stack(eng_model *m, float dscale)
{
    const eng_ops *o = m->ops;
    void *ctx = m->ctx;
    const int B = m->cur_B, T = m->cur_T, N = B * T, d = m->d, V = m->V;
    float *Gr = m->grads;
    o->classifier_bwd(ctx, m->dln, Gr + m->off_head, m->lnf, eng__wlp(m, m->off_head), m->targets, N, V, d, dscale,
                      m->cls_ws);
    o->zero(ctx, m->dresid, eng__act_bytes(m, (size_t)N * d));
    o->rmsnorm_bwd(ctx, m->dresid, Gr + m->off_norm, m->dln, eng__resid(m, m->L, N), m->params + m->off_norm, m->rstdf, N,
                   d);
    /* the layout (model.c): embedding, the layers in order, final norm,
     * head (a tied head is the embedding, final only at the end) */
    grads_ready(m, m->off_norm, m->cfg.model.tied ? m->off_norm + (size_t)d : m->n_slab);
    for (int l = m->L - 1; l >= 0; l--) {
        m->mixer->mlp->bwd(m, l, N);
        m->mixer->bwd(m, l, B, T);
        grads_ready(m, m->lp[l].ln1, l + 1 < m->L ? m->lp[l + 1].ln1 : m->off_norm);
    }
    /* emb_sort (sort_tokens): U, order, ids, starts; U read on the device */
    const int32_t *srt = m->emb_sort;
    o->embedding_bwd_sorted(ctx, Gr + m->off_embed, m->dresid, srt + 1, srt + 1 + N, srt + 1 + 2 * (size_t)N, srt,
                            N < V ? N : V, d);
    grads_ready(m, m->off_embed, m->lp[0].ln1);
}

/* The positions of tokens (N) grouped by id, stably (a counting sort):
 * the count U of distinct ids, order (N), the ids (U) ascending, starts
 * (U + 1), laid out as emb_sort (U at 0, order at 1, ids at 1 + N,
 * starts at 1 + 2N: fixed addresses for a graph, whatever U is), and
 * sent with one copy.  O(N + V) on the host, where the tokens are,
 * against a device sort's several launches. */
static void sort_tokens(eng_model *m, const int32_t *tokens, int N)
{
    int32_t *order = m->sort_host + 1, *ids = order + N, *starts = order + 2 * (size_t)N, *cnt = m->sort_count;
    memset(cnt, 0, (size_t)m->V * sizeof *cnt);
    for (int n = 0; n < N; n++)
        cnt[tokens[n]]++;
    int U = 0, at = 0;
    for (int v = 0; v < m->V; v++)
        if (cnt[v]) {
            ids[U] = v;
            starts[U++] = at;
            const int c = cnt[v];
            cnt[v] = at; /* the bucket's next free slot */
            at += c;
        }
    starts[U] = at;
    for (int n = 0; n < N; n++)
        order[cnt[tokens[n]]++] = n;
    m->sort_host[0] = U;
    m->ops->to_device(m->ctx, m->emb_sort, m->sort_host, (2 + 2 * (size_t)N + (size_t)U) * sizeof(int32_t));
}

/* A training forward's device work: the stack, then the loss added to the
 * step's sum (classifier_fwd). */
static void train_forward(eng_model *m)
{
    const int N = m->cur_B * m->cur_T;
    eng__model_forward_stack(m, m->cur_B, m->cur_T);
    m->ops->classifier_fwd(m->ctx, m->losses, m->stats + ENG__STAT_STEP_LOSS, m->lnf, eng__wlp(m, m->off_head),
                           m->targets, N, m->V, m->d, m->cls_ws);
}

/* The pending training forward (train.cuda_graph) run op by op, for what
 * needs it before its backward. */
static void flush_pending(eng_model *m)
{
    if (m->pending) {
        m->pending = 0;
        train_forward(m);
    }
}

/* Checks the batch, sends tokens (and targets with the tokens' sort),
 * then runs the stack, or with pending (a training forward with a graph)
 * leaves it to the backward; the loss (classifier_fwd) is the caller's. */
static int forward_common(eng_model *m, const int32_t *tokens, const int32_t *targets, int B, int T, int pending,
                          tlm_err *e)
{
    flush_pending(m);
    if (B < 1 || B > m->max_B || T < 1 || T > m->max_T)
        return tlm_errf(e, TLM_EINTERNAL, "model: batch %d x %d exceeds the planned %d x %d", B, T, m->max_B,
                        m->max_T);
    const int N = B * T;
    for (int n = 0; n < N; n++)
        if (tokens[n] < 0 || tokens[n] >= m->V || (targets && targets[n] >= m->V))
            return tlm_errf(e, TLM_EDATA, "model: token %d at position %d is outside the vocabulary (%d)",
                            tokens[n] < 0 || tokens[n] >= m->V ? tokens[n] : targets[n], n, m->V);
    /* every host copy before the stack: a graph holds none */
    m->ops->to_device(m->ctx, m->tokens, tokens, (size_t)N * sizeof(int32_t));
    m->cur_B = B;
    m->cur_T = T;
    m->have_forward = 0;
    m->have_logits = 0;
    if (targets) {
        m->ops->to_device(m->ctx, m->targets, targets, (size_t)N * sizeof(int32_t));
        sort_tokens(m, tokens, N);
        int64_t cnt = 0;
        for (int n = 0; n < N; n++)
            cnt += targets[n] >= 0;
        m->n_counted = cnt;
        m->have_forward = 1;
    }
    m->pending = pending;
    if (!pending)
        eng__model_forward_stack(m, B, T);
    return 0;
}

int eng_model_forward(eng_model *m, const int32_t *tokens, const int32_t *targets, int B, int T, double *loss,
                      float *nll, tlm_err *e)
{
    int rc = forward_common(m, tokens, targets, B, T, 0, e);
    if (rc)
        return rc;
    const int N = B * T;
    if (!targets) {
        /* inference: the stack only (eng_model_logits makes the logits on
         * request); backward is refused */
        if (loss)
            *loss = NAN;
        return 0;
    }
    double *acc = m->stats + ENG__STAT_LOSS;
    m->ops->zero(m->ctx, acc, sizeof(double));
    m->ops->classifier_fwd(m->ctx, m->losses, acc, m->lnf, eng__wlp(m, m->off_head), m->targets, N, m->V, m->d,
                           m->cls_ws);
    if (nll)
        m->ops->to_host(m->ctx, nll, m->losses, (size_t)N * sizeof(float));
    if (loss)
        m->ops->to_host(m->ctx, loss, acc, sizeof(double));
    return 0;
}

int eng_model_forward_train(eng_model *m, const int32_t *tokens, const int32_t *targets, int B, int T, tlm_err *e)
{
    if (!targets)
        return tlm_errf(e, TLM_EINTERNAL, "model: a training forward needs targets");
    int rc = forward_common(m, tokens, targets, B, T, m->graph_on, e);
    if (!rc && !m->pending)
        train_forward(m);
    return rc;
}

int eng_model_step_report(eng_model *m, double *loss_sum, double *grad_norm)
{
    const eng_ops *o = m->ops;
    double st[ENG__STATS];
    flush_pending(m);
    if (grad_norm)
        o->sumsq_into(m->ctx, m->stats + ENG__STAT_GRAD_SQ, m->grads, m->n_slab);
    o->to_host(m->ctx, st, m->stats, sizeof st);
    o->zero(m->ctx, m->stats + ENG__STAT_STEP_LOSS, sizeof(double));
    *loss_sum = st[ENG__STAT_STEP_LOSS];
    if (grad_norm)
        *grad_norm = sqrt(st[ENG__STAT_GRAD_SQ]);
    return 0;
}

const float *eng_model_logits(eng_model *m)
{
    const int N = m->cur_B * m->cur_T;
    if (N < 1)
        return NULL;
    flush_pending(m);
    if (m->have_logits)
        return m->logits_host;
    const size_t n = (size_t)m->max_B * m->max_T * m->V;
    if (!m->logits && !(m->logits = m->ops->alloc(m->ctx, n * sizeof(float))))
        return NULL;
    if (m->host_visible)
        m->logits_host = m->logits;
    else if (!m->logits_host && !(m->logits_host = malloc(n * sizeof(float))))
        return NULL;
    m->ops->matmul(m->ctx, 0, 1, N, m->V, m->d, 1.0f, m->lnf, m->d, eng__wlp(m, m->off_head), m->d, 0.0f, m->logits,
                   m->V, eng_mm_of(m->act_dtype, m->wlp_dtype, ENG_F32));
    if (!m->host_visible)
        m->ops->to_host(m->ctx, m->logits_host, m->logits, (size_t)N * m->V * sizeof(float));
    m->have_logits = 1;
    return m->logits_host;
}

/* The pending forward and the backward as one graph.  A key (shape,
 * dscale) seen for the first time runs op by op, so that every kernel's
 * first launch, every matmul plan and the libraries' own first-call work
 * happen outside a capture; its next micro-batch captures the graph, and
 * the ones after launch it.  The capture records the same ops the direct
 * path runs, in the same order, so the bits are the same. */
static int train_graph(eng_model *m, float dscale, tlm_err *e)
{
    const eng_ops *o = m->ops;
    uint32_t bits;
    memcpy(&bits, &dscale, sizeof bits);
    m->pending = 0;
    /* a new key (graph_B is 0 until the first: no batch matches it) */
    if (m->graph_B != m->cur_B || m->graph_T != m->cur_T || m->graph_dscale != bits) {
        if (m->graph)
            o->graph_free(m->ctx, m->graph);
        m->graph = NULL;
        m->graph_B = m->cur_B, m->graph_T = m->cur_T, m->graph_dscale = bits;
        train_forward(m);
        eng__model_backward_stack(m, dscale);
        return 0;
    }
    if (!m->graph) {
        if (o->graph_begin(m->ctx))
            return tlm_errf(e, TLM_EINTERNAL, "model: the training step's graph capture did not start");
        train_forward(m);
        eng__model_backward_stack(m, dscale);
        if (!(m->graph = o->graph_end(m->ctx)))
            return tlm_errf(e, TLM_EINTERNAL, "model: the training step (%d x %d) could not be captured as a graph",
                            m->cur_B, m->cur_T);
    }
    o->graph_launch(m->ctx, m->graph);
    return 0;
}

int eng_model_backward(eng_model *m, float scale, tlm_err *e)
{
    if (!m->have_forward)
        return tlm_errf(e, TLM_EINTERNAL, "model: backward needs a forward with targets just before it");
    m->have_forward = 0;
    float dscale = m->n_counted ? scale / (float)m->n_counted : 0.0f;
    if (m->pending && !m->grad_hook)
        return train_graph(m, dscale, e);
    flush_pending(m);
    eng__model_backward_stack(m, dscale);
    return 0;
}
