/* test_titans_grad.c: whole tiny Titans models against finite differences
 * of the fp32 model (as test_grad_model does for the other architectures):
 * both variants (MAG, MAL), a tapered (cosine 1.5 -> 0.5) and a uniform
 * schedule, memory depth 1 and 2, chunk sizes that divide T = 9 (3), that
 * do not (4, 5), b = 1 and one chunk longer than T, sliding windows shorter
 * and longer than T, with and without persistent entries, grouped KV.
 *
 * 4-point central stencil (truncation O(h^4)), init_std 0.3 and max_lr
 * 0.3-0.5 so that gradients are O(0.1) and the memory moves a lot within a
 * sequence (its second-order terms matter).  The memory makes the loss
 * nonlinear enough that no single step suits every coordinate in fp32 (the
 * small gate-bias gradients want h >= 5e-3 against rounding noise, the
 * b = 1 recurrence h <= 2e-3 against truncation): each coordinate takes
 * the closer of the h = 2e-3 and h = 5e-3 estimates (a wrong gradient
 * matches neither).  Checked per tensor:
 * the 4 largest-gradient coordinates and 4 random ones.  Asserted: the
 * norm-wise relative error over all checked coordinates, and per tensor the
 * largest error relative to that tensor's gradient scale. */
#include <math.h>
#include <stdlib.h>

#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"
#include "tests/lib/model_util.h"
#include "tests/lib/titans_util.h"

static eng_backend *BE; /* the CPU backend every model here runs on */

#define B 2
#define T 9
#define TOL_GLOBAL 5e-3
#define TOL_TENSOR 2e-2

static double loss_at(eng_model *m, const int32_t *tok, const int32_t *tgt)
{
    double loss;
    tlm_err e;
    if (eng_model_forward(m, tok, tgt, B, T, &loss, NULL, &e))
        return NAN;
    return loss;
}

static void check(const titans_spec *s)
{
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    if (ts_config(s, T, &c, &e) || eng_model_create(&m, &c, BE, B, T, &e)) {
        TAP_OK(0, "%s: build: %s", s->name, e.msg);
        return;
    }
    eng_model_init_weights(m, 7);
    int32_t tok[B * T], tgt[B * T];
    tm_batch(3, B, T, s->V, tok, tgt);
    size_t n = eng_model_n_params(m);
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
    double loss;
    eng_model_zero_grads(m);
    int rc = eng_model_forward(m, tok, tgt, B, T, &loss, NULL, &e) || eng_model_backward(m, 1.0f, &e);
    TAP_OK(rc == 0 && isfinite(loss), "%s: forward/backward, loss %.4f", s->name, loss);
    eng_model_get_params(m, p);
    eng_model_get_grads(m, g);
    const float h[2] = {2e-3f, 5e-3f};
    double num2 = 0, err2 = 0, worst = 0;
    const char *worst_name = "";
    int checked = 0, memory_tensors = 0;
    uint64_t r = 12345;
    for (int i = 0; i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        memory_tensors += strstr(t->name, "memory.") != NULL || strstr(t->name, "persistent") != NULL ||
                          strstr(t->name, "self_attn.norm") != NULL;
        size_t idx[8];
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
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            idx[k++] = r % t->numel;
        }
        double tscale = 0, terr = 0;
        for (size_t q = 0; q < t->numel; q++)
            tscale = fmax(tscale, fabs(g[t->offset + q]));
        for (int j = 0; j < k; j++) {
            size_t o = t->offset + idx[j];
            float x = p[o];
            double fd = 0, d = INFINITY;
            for (int hi = 0; hi < 2; hi++) {
                double f[4];
                const float steps[4] = {-2 * h[hi], -h[hi], h[hi], 2 * h[hi]};
                for (int u = 0; u < 4; u++) {
                    p[o] = x + steps[u];
                    eng_model_set_params(m, p);
                    f[u] = loss_at(m, tok, tgt);
                }
                double fdh = (8 * (f[2] - f[1]) - (f[3] - f[0])) / (12.0 * h[hi]);
                if (fabs(fdh - g[o]) < fabs(d)) {
                    fd = fdh;
                    d = fdh - g[o];
                }
            }
            p[o] = x;
            num2 += fd * fd;
            err2 += d * d;
            terr = fmax(terr, fabs(d));
            checked++;
        }
        eng_model_set_params(m, p);
        double rel = terr / fmax(tscale, 1e-8);
        if (rel > worst) {
            worst = rel;
            worst_name = t->name;
        }
    }
    double glob = sqrt(err2 / fmax(num2, 1e-30));
    TAP_OK(glob < TOL_GLOBAL, "%s: %d coordinates of %d tensors (%d Titans-only), norm-wise rel err %.2e (bound %.0e)",
           s->name, checked, eng_model_n_tensors(m), memory_tensors, glob, TOL_GLOBAL);
    TAP_OK(worst < TOL_TENSOR, "%s: worst tensor %s rel err %.2e (bound %.0e)", s->name, worst_name, worst,
           TOL_TENSOR);
    free(p);
    free(g);
    eng_model_free(m);
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    tlm_err be_err = {0};
    if (eng_backend_cpu_create(&BE, 0, &be_err)) {
        printf("Bail out! %s\n", be_err.msg);
        return 1;
    }
    /* name, variant, schedule, d, L, H, kv, dff, V, tied, window, persistent, chunk, depth, hidden, max_lr, std */
    static const titans_spec specs[] = {
        {"mag cosine tied, chunk 3 | 9, window 4 < T, 2 persistent, depth 2", "mag", "cosine", 16, 4, 2, 2, 32, 32, 1,
         4, 2, 3, 2, 0, 0.5, 0.3},
        {"mag cosine untied gqa, chunk 4 (does not divide 9), window 16 > T, depth 1", "mag", "cosine", 16, 4, 4, 2,
         32, 32, 0, 16, 0, 4, 1, 0, 0.5, 0.3},
        {"mal cosine, b = 1, window 3, 3 persistent, depth 2 hidden 12", "mal", "cosine", 16, 4, 2, 2, 32, 32, 1, 3,
         3, 1, 2, 12, 0.3, 0.3},
        {"mal uniform gqa, chunk 5, window 20 > T, 1 persistent, depth 1", "mal", "uniform", 16, 2, 4, 2, 32, 32, 0,
         20, 1, 5, 1, 0, 0.5, 0.3},
        {"mag uniform, one chunk longer than T (16), window 1, 1 persistent, depth 2", "mag", "uniform", 16, 2, 2, 1,
         32, 32, 1, 1, 1, 16, 2, 0, 0.5, 0.3},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        check(&specs[i]);
    return tap_done();
}
