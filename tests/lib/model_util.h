/* model_util.h: helpers shared by the model tests (test_model,
 * test_grad_model, test_hope, test_titans*, parity_dump, test_gpu_plan,
 * test_cuda_plans): a resolved config for a tiny model from a few knobs,
 * deterministic token batches, one step the trainer's way, the
 * whole-model finite-difference gradient check, and the TAP checks of a
 * model's layout and gradients that every architecture's test makes. */
#ifndef TLM_TESTS_TEST_MODEL_UTIL_H
#define TLM_TESTS_TEST_MODEL_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/account.h"
#include "engine/config/config.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/model/model.h"
#include "tests/lib/tap.h"

typedef struct tm_spec {
    const char *name;     /* label for messages and files */
    const char *arch;     /* transformer | gated_attn */
    const char *gate;     /* elementwise | headwise (gated_attn) */
    const char *schedule; /* uniform | cosine (1.5 -> 0.5) | ... */
    int d, L, H, kv, dff, V, tied;
    double init_std;
} tm_spec;

static inline int tm_config(const tm_spec *s, int T, eng_config *c, tlm_err *e)
{
    char y[1024];
    int gated = !strcmp(s->arch, "gated_attn");
    snprintf(y, sizeof y,
             "arch: %s\n"
             "tokenizer: bpe%d\n"
             "model: {d_model: %d, layers: %d, heads: %d, kv_heads: %d, d_ff: %d, vocab: %d, tied: %s, "
             "init_std: %g%s%s}\n"
             "taper: {schedule: %s%s}\n"
             "train: {seq_len: %d, tokens: 100000}\n",
             s->arch, s->V, s->d, s->L, s->H, s->kv, s->dff, s->V, s->tied ? "true" : "false", s->init_std,
             gated ? ", gate: " : "", gated ? s->gate : "", s->schedule,
             strcmp(s->schedule, "uniform") ? ", ratio: [1.5, 0.5]" : "", T);
    return eng_config_from_text(s->name, y, strlen(y), c, e);
}

/* A model test's start: the runtime, then the CPU backend every model of
 * the test runs on (NULL after a TAP "Bail out!"). */
static inline eng_backend *tm_cpu_backend(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    eng_backend *be;
    tlm_err e = {0};
    if (eng_backend_cpu_create(&be, 0, &e)) {
        printf("Bail out! %s\n", e.msg);
        return NULL;
    }
    return be;
}

/* tokens (B*T) in [0, V); targets = next token, the last position ignored (-1)
 * in every other sequence so that uncounted targets are exercised */
static inline void tm_batch(uint64_t seed, int B, int T, int V, int32_t *tok, int32_t *tgt)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    int32_t seq[4096];
    for (int b = 0; b < B; b++) {
        for (int t = 0; t <= T && t < 4096; t++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            seq[t] = (int32_t)(s % (uint64_t)V);
        }
        for (int t = 0; t < T; t++) {
            tok[b * T + t] = seq[t];
            tgt[b * T + t] = seq[t + 1];
        }
        if (b % 2)
            tgt[b * T + T - 1] = -1;
    }
}

/* Every tensor's slab offset is a multiple of this many floats: 16 bytes
 * of the bf16 weight copy, 32 of the fp32 master (engine/model/model.h). */
#define TM_PARAM_ALIGN 8

/* The tensors lie in the parameter slab in table order (offsets, sizes),
 * each right after the one before it (rows of one matrix) or at the next
 * multiple of TM_PARAM_ALIGN floats, the slab ending with the last:
 * *tiles; every offset a multiple of TM_PARAM_ALIGN (the test models'
 * d_model are multiples of 8): *aligned; weight decay is on the matrices
 * only: *decay_on_matrices. */
static inline void tm_slab_checks(const eng_model *m, int *tiles, int *aligned, int *decay_on_matrices)
{
    size_t off = 0, counted = 0;
    int ok = 1, al = 1, decay_ok = 1;
    for (int i = 0; i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        const size_t up = (off + TM_PARAM_ALIGN - 1) / TM_PARAM_ALIGN * TM_PARAM_ALIGN;
        ok &= (t->offset == off || t->offset == up) &&
              t->numel == (size_t)t->shape[0] * (t->ndim > 1 ? (size_t)t->shape[1] : 1);
        al &= t->offset % TM_PARAM_ALIGN == 0;
        decay_ok &= t->decay == (t->ndim == 2);
        off = t->offset + t->numel;
        counted += t->numel;
    }
    *tiles = ok && off == eng_model_slab_floats(m) && counted == eng_model_param_count(m);
    *aligned = al;
    *decay_on_matrices = decay_ok;
}

/* The slabs' padding (the floats no tensor covers) after whatever ran:
 * *pad of them per slab, *nonzero the floats among them, in the
 * parameters, gradients and both AdamW moments, whose bits are not +0.
 * -1 when the host copies cannot be made. */
static inline int tm_padding(const eng_model *m, size_t *pad, size_t *nonzero)
{
    const size_t n = eng_model_slab_floats(m);
    float *buf = malloc(4 * n * sizeof *buf);
    char *covered = calloc(n, 1);
    *pad = *nonzero = 0;
    if (!buf || !covered) {
        free(buf);
        free(covered);
        return -1;
    }
    eng_model_get_params(m, buf);
    eng_model_get_grads(m, buf + n);
    eng_model_get_optim(m, buf + 2 * n, buf + 3 * n);
    for (int i = 0; i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        memset(covered + t->offset, 1, t->numel);
    }
    for (size_t j = 0; j < n; j++) {
        if (covered[j])
            continue;
        (*pad)++;
        for (int k = 0; k < 4; k++) {
            uint32_t u;
            memcpy(&u, buf + (size_t)k * n + j, sizeof u);
            *nonzero += u != 0;
        }
    }
    free(buf);
    free(covered);
    return 0;
}

/* `steps` AdamW steps (lr 3e-3, clipped to norm 1) of a model planned for
 * (B, T) on a learnable stream (token t+1 = (3 token t + 1) mod V), each
 * step two micro batches of B/2 sequences (gradient accumulation);
 * losses[] out.  tok, tgt (B*T) are the caller's, so that the steps
 * allocate nothing of their own. */
static inline int tm_train_stream(eng_model *m, int B, int T, int V, int steps, int32_t *tok, int32_t *tgt,
                                  double *losses, tlm_err *e)
{
    int rc = 0;
    for (int st = 0; st < steps && !rc; st++) {
        for (int i = 0; i < B * T; i++) {
            int b = i / T, t = i % T;
            int x = (7 * b + 5 * st + 1) % V;
            for (int u = 0; u < t; u++)
                x = (3 * x + 1) % V;
            tok[i] = x;
            tgt[i] = (3 * x + 1) % V;
        }
        eng_model_zero_grads(m);
        double l0, l1;
        rc = eng_model_forward(m, tok, tgt, B / 2, T, &l0, NULL, e) || eng_model_backward(m, 0.5f, e) ||
             eng_model_forward(m, tok + B / 2 * T, tgt + B / 2 * T, B / 2, T, &l1, NULL, e) ||
             eng_model_backward(m, 0.5f, e);
        double gn = eng_model_grad_norm(m);
        eng_adamw opt = {3e-3, 0.9, 0.95, 1e-8, 0.1, st + 1, gn > 1.0 ? 1.0 / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, e);
        losses[st] = 0.5 * (l0 + l1);
    }
    return rc;
}

/* One step the trainer's way on one micro batch of (B, T): the gradients
 * zeroed, eng_model_forward_train, eng_model_backward, the step's scalars
 * (eng_model_step_report: *loss, *gn), AdamW at lr 1e-3 unclipped.  0, or
 * the failure's code (e says, where the failing call does). */
static inline int tm_trainer_step(eng_model *m, const int32_t *tok, const int32_t *tgt, int B, int T, double *loss,
                                  double *gn, tlm_err *e)
{
    eng_model_zero_grads(m);
    const int rc = eng_model_forward_train(m, tok, tgt, B, T, e) || eng_model_backward(m, 1.0f, e) ||
                   eng_model_step_report(m, loss, gn);
    eng_adamw opt = {1e-3, 0.9, 0.95, 1e-8, 0.1, 1, 1.0};
    return rc ? TLM_EINTERNAL : eng_model_step(m, &opt, e);
}

/* tm_train_stream on a fresh model: config_rc is what made c (its message
 * in *e), the model is planned for (B, T) on be with weights from seed;
 * params_out (or NULL): its initial weights.  *allocs: how far *counter
 * (tests/lib/alloc_count.h's n_allocs) moved during the steps alone, whose
 * buffers are made before.  pad, pad_nonzero (NULL: not read): the
 * slabs' padding after training (tm_padding).  -1 after a TAP diagnostic
 * when there is no model. */
static inline int tm_train_counted(int config_rc, const eng_config *c, tlm_err *e, eng_backend *be, int B, int T,
                                   uint64_t seed, int steps, double *losses, float *params_out, const long *counter,
                                   long *allocs, size_t *pad, size_t *pad_nonzero)
{
    eng_model *m = NULL;
    int32_t *tok = malloc(sizeof(int32_t) * B * T), *tgt = malloc(sizeof(int32_t) * B * T);
    int rc = config_rc || !tok || !tgt || eng_model_create(&m, c, be, B, T, e);
    if (rc) {
        TAP_DIAG("%s", tok && tgt ? e->msg : "out of memory");
        free(tok);
        free(tgt);
        return -1;
    }
    eng_model_init_weights(m, seed);
    if (params_out)
        eng_model_get_params(m, params_out);
    long before = *counter;
    rc = tm_train_stream(m, B, T, c->model.vocab, steps, tok, tgt, losses, e);
    *allocs = *counter - before;
    if (!rc && pad && tm_padding(m, pad, pad_nonzero)) /* the slabs' padding after training (tm_padding) */
        rc = -1;
    eng_model_free(m);
    free(tok);
    free(tgt);
    return rc;
}

/* ------------------------------------------------------------ finite differences
 *
 * The model runs in fp32, so the numerical derivative uses the 4-point
 * central stencil (truncation O(h^4)).  Checked per tensor: the 4
 * largest-gradient coordinates and 4 random ones; each coordinate takes
 * the estimate, of the step sizes h[0..n_h-1], closest to the analytic
 * gradient (a wrong gradient matches none). */
typedef struct tm_fd {
    const float *h;                /* step sizes */
    int n_h;
    uint64_t seed;                 /* of the random coordinates */
    int (*marked)(const char *t);  /* tensors reported apart (NULL: none) */
} tm_fd;

typedef struct tm_fd_result {
    int ran;                /* forward and backward ran, the loss finite */
    double loss;
    int checked;            /* coordinates */
    double glob;            /* norm-wise relative error over all of them */
    double worst;           /* the largest error of a tensor relative to its gradient scale */
    const char *worst_name; /* of that tensor (the model's) */
    int n_marked;           /* marked tensors */
    double worst_marked;    /* the largest of `worst`'s measure over them */
} tm_fd_result;

static inline double tm_fd_loss(eng_model *m, const int32_t *tok, const int32_t *tgt, int B, int T)
{
    double loss;
    tlm_err e;
    return eng_model_forward(m, tok, tgt, B, T, &loss, NULL, &e) ? NAN : loss;
}

/* The coordinates of tensor t to check: the 4 largest |grad|, then 4
 * random ones; returns their count. */
static inline int tm_fd_coords(const eng_tensor_info *t, const float *g, uint64_t *r, size_t idx[8])
{
    int k = 0;
    for (int j = 0; j < 4 && j < (int)t->numel; j++) {
        size_t best = 0;
        double bv = -1;
        for (size_t q = 0; q < t->numel; q++) {
            int taken = 0;
            for (int u = 0; u < k; u++)
                taken |= idx[u] == q;
            if (!taken && fabs(g[t->offset + q]) > bv) {
                bv = fabs(g[t->offset + q]);
                best = q;
            }
        }
        idx[k++] = best;
    }
    for (int j = 0; j < 4; j++) {
        *r ^= *r << 13;
        *r ^= *r >> 7;
        *r ^= *r << 17;
        idx[k++] = *r % t->numel;
    }
    return k;
}

/* The model from seed 7 on tm_batch(3) of (B, T): the errors go to *res
 * for the caller's bounds. */
static inline void tm_fd_check(eng_model *m, int B, int T, int V, const tm_fd *fd, tm_fd_result *res)
{
    tlm_err e = {0};
    eng_model_init_weights(m, 7);
    int32_t *tok = malloc((size_t)B * T * sizeof *tok), *tgt = malloc((size_t)B * T * sizeof *tgt);
    size_t n = eng_model_slab_floats(m);
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
    tm_batch(3, B, T, V, tok, tgt);
    memset(res, 0, sizeof *res);
    res->worst_name = "";
    eng_model_zero_grads(m);
    int rc = eng_model_forward(m, tok, tgt, B, T, &res->loss, NULL, &e) || eng_model_backward(m, 1.0f, &e);
    res->ran = rc == 0 && isfinite(res->loss);
    eng_model_get_params(m, p);
    eng_model_get_grads(m, g);
    double num2 = 0, err2 = 0;
    uint64_t r = fd->seed;
    for (int i = 0; i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        size_t idx[8];
        const int k = tm_fd_coords(t, g, &r, idx);
        double tscale = 0, terr = 0;
        for (size_t q = 0; q < t->numel; q++)
            tscale = fmax(tscale, fabs(g[t->offset + q]));
        for (int j = 0; j < k; j++) {
            size_t o = t->offset + idx[j];
            float x = p[o];
            double fd_best = 0, d = INFINITY;
            for (int hi = 0; hi < fd->n_h; hi++) {
                const float h = fd->h[hi], steps[4] = {-2 * h, -h, h, 2 * h};
                double f[4];
                for (int u = 0; u < 4; u++) {
                    p[o] = x + steps[u];
                    eng_model_set_params(m, p);
                    f[u] = tm_fd_loss(m, tok, tgt, B, T);
                }
                double fdh = (8 * (f[2] - f[1]) - (f[3] - f[0])) / (12.0 * h);
                if (fabs(fdh - g[o]) < fabs(d)) {
                    fd_best = fdh;
                    d = fdh - g[o];
                }
            }
            p[o] = x;
            num2 += fd_best * fd_best;
            err2 += d * d;
            terr = fmax(terr, fabs(d));
            res->checked++;
        }
        eng_model_set_params(m, p);
        double rel = terr / fmax(tscale, 1e-8);
        if (fd->marked && fd->marked(t->name)) {
            res->n_marked++;
            res->worst_marked = fmax(res->worst_marked, rel);
        }
        if (rel > res->worst) {
            res->worst = rel;
            res->worst_name = t->name;
        }
    }
    res->glob = sqrt(err2 / fmax(num2, 1e-30));
    free(p);
    free(g);
    free(tok);
    free(tgt);
}

/* ------------------------------------------------------------ TAP checks */

/* A model of config c (cfg_rc: what making c returned) built on be for
 * (B, T), with its parameter account.  TAP: the build when it fails; else
 * the parameter count against the account, the tensors tiling the slab
 * and weight decay on the matrices only.  0 when *m was built (the caller
 * frees it). */
static inline int tm_tap_layout(const char *name, int cfg_rc, const eng_config *c, eng_backend *be, int B, int T,
                                eng_model **m, eng_account *a, tlm_err *e)
{
    if (cfg_rc || eng_account_compute(c, a, e) || eng_model_create(m, c, be, B, T, e)) {
        TAP_OK(0, "%s: build: %s", name, e->msg);
        return -1;
    }
    TAP_OK((int64_t)eng_model_param_count(*m) == a->total, "%s: %zu parameters allocated, account says %lld", name,
           eng_model_param_count(*m), (long long)a->total);
    int tiles, aligned, decay_ok;
    tm_slab_checks(*m, &tiles, &aligned, &decay_ok);
    TAP_OK(tiles, "%s: tensors tile the slab (%zu floats), padded to %d floats at most", name,
           eng_model_slab_floats(*m), TM_PARAM_ALIGN - 1);
    TAP_OK(aligned, "%s: every tensor's offset 16-byte aligned in the bf16 weight copy (a multiple of %d floats)",
           name, TM_PARAM_ALIGN);
    TAP_OK(decay_ok, "%s: weight decay on matrices only", name);
    return 0;
}

/* The bounds of the finite-difference check: the norm-wise relative error
 * over every checked coordinate, and per tensor the largest error relative
 * to that tensor's gradient scale */
#define TM_FD_TOL_GLOBAL 5e-3
#define TM_FD_TOL_TENSOR 2e-2

/* tm_fd_check of a model of config c (cfg_rc as above) on (B, T), as TAP:
 * the build (when it fails), forward/backward, and the two bounds;
 * `marked` names fd->marked's tensors in the messages. */
static inline void tm_tap_fd(const char *name, int cfg_rc, const eng_config *c, eng_backend *be, int B, int T,
                             const tm_fd *fd, const char *marked)
{
    tlm_err e = {0};
    eng_model *m;
    if (cfg_rc || eng_model_create(&m, c, be, B, T, &e)) {
        TAP_OK(0, "%s: build: %s", name, e.msg);
        return;
    }
    tm_fd_result r;
    tm_fd_check(m, B, T, c->model.vocab, fd, &r);
    TAP_OK(r.ran, "%s: forward/backward, loss %.4f", name, r.loss);
    char of[96] = "", worst[96] = "";
    if (marked) {
        snprintf(of, sizeof of, " of %d tensors (%d %s)", eng_model_n_tensors(m), r.n_marked, marked);
        snprintf(worst, sizeof worst, ", worst %s tensor %.2e", marked, r.worst_marked);
    }
    TAP_OK(r.glob < TM_FD_TOL_GLOBAL, "%s: %d coordinates%s, norm-wise rel err %.2e (bound %.0e)", name, r.checked, of,
           r.glob, TM_FD_TOL_GLOBAL);
    TAP_OK(r.worst < TM_FD_TOL_TENSOR, "%s: worst tensor %s rel err %.2e%s (bound %.0e)", name, r.worst_name, r.worst,
           worst, TM_FD_TOL_TENSOR);
    eng_model_free(m);
}

#endif
