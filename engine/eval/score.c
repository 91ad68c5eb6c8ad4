/* score.c: how a request is scored, lm-evaluation-harness's way
 * (its HFLM model class: _encode_pair and _loglikelihood_tokens), greedy
 * generation, and the adapter that scores through a TLM model.
 *
 * A request's input is full[-(max_length+1):][:-1] (the left is cut when
 * too long); the last n_cont positions' log-softmax, in double from the
 * model's fp32 logits, give log p of each continuation token; the request
 * is greedy when every continuation token is its position's argmax (the
 * first maximal index, as torch.argmax).  Requests are batched longest
 * first and right-padded; causal attention keeps padding from touching
 * the scored positions.
 * Must not: know about tasks or files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/eval/internal.h"
#include "engine/model/probe.h"

/* ------------------------------------------------------------ TLM model adapter */
static int model_logits(void *impl, const int32_t *tokens, int B, int T, const float **out, tlm_err *e)
{
    eng_model *m = impl;
    double loss;
    int rc = eng_model_forward(m, tokens, NULL, B, T, &loss, NULL, e);
    if (rc)
        return rc;
    if (!(*out = eng_model_logits(m)))
        return tlm_errf(e, TLM_ENOMEM, "model: no memory for the logits of %d x %d tokens", B, T);
    return 0;
}

static int model_probe(void *impl, const int32_t *tokens, int T, eng_probe_fn fn, void *ud, tlm_err *e)
{
    return eng_model_probe(impl, tokens, T, fn, ud, e);
}

void eng_eval_lm_model(eng_eval_lm *lm, eng_model *m, int max_length)
{
    memset(lm, 0, sizeof *lm);
    lm->impl = m;
    eng_model_probe_dims(m, &lm->max_B, &lm->max_T, &lm->vocab);
    lm->max_length = max_length > 0 && max_length < lm->max_T ? max_length : lm->max_T;
    lm->logits = model_logits;
    lm->probe = model_probe;
}

/* ------------------------------------------------------------ encoding */
int ev_encode(eng_tok *tok, const char *s, size_t n, int32_t **out, size_t *n_out, tlm_err *e)
{
    eng_tokvec v = {0};
    int rc = eng_tok_encode(tok, s, n, 0, &v, e);
    if (rc) {
        eng_tokvec_clear(&v);
        return rc;
    }
    int32_t *ids = malloc((v.n ? v.n : 1) * sizeof *ids);
    if (!ids) {
        eng_tokvec_clear(&v);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < v.n; i++)
        ids[i] = (int32_t)v.ids[i];
    *out = ids;
    *n_out = v.n;
    eng_tokvec_clear(&v);
    return 0;
}

int ev_encode_pair(eng_tok *tok, const char *ctx, size_t ctx_len, const char *cont, size_t cont_len, ev_req *r,
                   tlm_err *e)
{
    memset(r, 0, sizeof *r);
    /* context.rstrip(): the trailing whitespace joins the continuation */
    size_t keep = 0;
    uint32_t cp;
    for (size_t i = 0; i < ctx_len;) {
        size_t k = tlm_utf8_next(ctx + i, ctx_len - i, &cp);
        i += k;
        if (!ev_py_space(cp))
            keep = i;
    }
    ev_buf whole = {0};
    int rc;
    if ((rc = ev_put(&whole, ctx, ctx_len, e)) || (rc = ev_put(&whole, cont, cont_len, e))) {
        ev_buf_clear(&whole);
        return rc;
    }
    int32_t *w = NULL, *c = NULL;
    size_t nw = 0, nc = 0;
    rc = ev_encode(tok, whole.p, whole.n, &w, &nw, e);
    if (!rc)
        rc = ev_encode(tok, ctx, keep, &c, &nc, e);
    ev_buf_clear(&whole);
    if (!rc && nc == 0)
        rc = tlm_errf(e, TLM_EDATA, "a request has an empty context");
    if (!rc && nc >= nw)
        rc = tlm_errf(e, TLM_EDATA, "a request's continuation encodes to no tokens");
    free(c);
    if (rc) {
        free(w);
        return rc;
    }
    /* whole_enc[len(context_enc):] is the continuation, whatever the
     * context's tokens were inside whole_enc */
    r->full = w;
    r->n_ctx = nc;
    r->n_cont = nw - nc;
    r->own = 1;
    return 0;
}

void ev_req_clear(ev_req *r)
{
    if (r->own)
        free(r->full);
    r->full = NULL;
    r->own = 0;
}

/* ------------------------------------------------------------ scoring */
typedef struct req_len {
    size_t idx, start, len; /* input = full[start, start + len) */
} req_len;

static int cmp_len(const void *a, const void *b)
{
    const req_len *x = a, *y = b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* log p(target) and argmax == target at one position of `V` logits. */
static double position_logp(const float *x, int V, int32_t target, int *is_argmax)
{
    float mx = x[0];
    int arg = 0;
    for (int v = 1; v < V; v++)
        if (x[v] > mx) {
            mx = x[v];
            arg = v;
        }
    double s = 0;
    for (int v = 0; v < V; v++)
        s += exp((double)x[v] - (double)mx);
    *is_argmax = arg == target;
    return (double)x[target] - (double)mx - log(s);
}

int ev_score(const eng_eval_lm *lm, int max_length, ev_req *reqs, size_t n, const eng_eval_sink *s, tlm_err *e)
{
    if (!n)
        return 0;
    if (max_length < 1 || max_length > lm->max_T)
        max_length = lm->max_T;
    req_len *order = malloc(n * sizeof *order);
    int32_t *tok = malloc((size_t)lm->max_B * (size_t)max_length * sizeof *tok);
    int rc = 0;
    if (!order || !tok) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        ev_req *r = &reqs[i];
        size_t nf = r->n_ctx + r->n_cont;
        if (r->n_ctx < 1 || r->n_cont < 1) {
            rc = tlm_errf(e, TLM_EINTERNAL, "request %zu: %zu context and %zu continuation tokens", i, r->n_ctx,
                          r->n_cont);
            goto out;
        }
        if (r->n_cont > (size_t)max_length) {
            rc = tlm_errf(e, TLM_EDATA, "a continuation of %zu tokens is longer than the context length %d",
                          r->n_cont, max_length);
            goto out;
        }
        size_t start = nf > (size_t)max_length + 1 ? nf - ((size_t)max_length + 1) : 0;
        order[i] = (req_len){i, start, nf - 1 - start};
    }
    qsort(order, n, sizeof *order, cmp_len);
    const int V = lm->vocab;
    for (size_t b0 = 0; b0 < n;) {
        int B = (int)(n - b0 < (size_t)lm->max_B ? n - b0 : (size_t)lm->max_B);
        int T = (int)order[b0].len;
        memset(tok, 0, (size_t)B * T * sizeof *tok);
        for (int r = 0; r < B; r++) {
            const req_len *o = &order[b0 + r];
            memcpy(tok + (size_t)r * T, reqs[o->idx].full + o->start, o->len * sizeof *tok);
        }
        const float *logits;
        if ((rc = lm->logits(lm->impl, tok, B, T, &logits, e)))
            goto out;
        for (int r = 0; r < B; r++) {
            const req_len *o = &order[b0 + r];
            ev_req *q = &reqs[o->idx];
            double ll = 0;
            int greedy = 1;
            /* input position p predicts full[start + p + 1] */
            for (size_t p = o->len - q->n_cont; p < o->len; p++) {
                int am;
                int32_t target = q->full[o->start + p + 1];
                ll += position_logp(logits + ((size_t)r * T + p) * V, V, target, &am);
                greedy &= am;
            }
            q->loglik = ll;
            q->greedy = greedy;
        }
        b0 += (size_t)B;
        if ((rc = ev_tick(s, e)))
            goto out;
    }
out:
    free(order);
    free(tok);
    return rc;
}

/* ------------------------------------------------------------ generation */
int ev_generate(const eng_eval_lm *lm, const int32_t *prompt, size_t n, int max_new,
                int (*stop)(void *ud, const int32_t *gen, size_t k), void *ud, int32_t *out, size_t *n_out,
                tlm_err *e)
{
    *n_out = 0;
    if (n < 1)
        return tlm_errf(e, TLM_EINTERNAL, "generation needs a prompt");
    int32_t *seq = malloc((n + (size_t)max_new) * sizeof *seq);
    if (!seq)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    memcpy(seq, prompt, n * sizeof *seq);
    int rc = 0;
    size_t k = 0;
    while (k < (size_t)max_new && n + k <= (size_t)lm->max_T) {
        const float *logits;
        int T = (int)(n + k);
        if ((rc = lm->logits(lm->impl, seq, 1, T, &logits, e)))
            break;
        const float *x = logits + (size_t)(T - 1) * lm->vocab;
        int arg = 0;
        for (int v = 1; v < lm->vocab; v++)
            if (x[v] > x[arg])
                arg = v;
        seq[n + k] = arg;
        out[k++] = arg;
        if (stop && stop(ud, out, k))
            break;
    }
    *n_out = k;
    free(seq);
    return rc;
}
