/* test_grad_model.c: whole-model gradient check by finite differences, for
 * tiny models of each architecture, tapered (cosine 1.5 -> 0.5) and
 * uniform, tied and untied, grouped and full KV heads.
 *
 * The model runs in fp32, so the numerical derivative uses the 4-point
 * central stencil (truncation O(h^4)) with h = 2e-3 and a large init_std
 * (so gradients are O(0.1) and not buried in fp32 rounding).  Checked per
 * tensor: the 4 largest-gradient coordinates and 4 random ones.  Asserted:
 * the norm-wise relative error over all checked coordinates, and per
 * tensor the largest error relative to that tensor's gradient scale. */
#include <math.h>
#include <stdlib.h>

#include "engine/model/model.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"
#include "tests/lib/model_util.h"

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

static void check(const tm_spec *s)
{
    eng_config c;
    tlm_err e = {0};
    eng_model *m;
    if (tm_config(s, T, &c, &e) || eng_model_create(&m, &c, BE, B, T, &e)) {
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
    const float h = 2e-3f;
    double num2 = 0, err2 = 0, worst = 0;
    const char *worst_name = "";
    int checked = 0;
    uint64_t r = 12345;
    for (int i = 0; i < eng_model_n_tensors(m); i++) {
        const eng_tensor_info *t = eng_model_tensor(m, i);
        size_t idx[8];
        int k = 0;
        /* the 4 largest |grad| */
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
            double f[4];
            const float steps[4] = {-2 * h, -h, h, 2 * h};
            for (int u = 0; u < 4; u++) {
                p[o] = x + steps[u];
                eng_model_set_params(m, p);
                f[u] = loss_at(m, tok, tgt);
            }
            p[o] = x;
            double fd = (8 * (f[2] - f[1]) - (f[3] - f[0])) / (12.0 * h);
            double d = fd - g[o];
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
    TAP_OK(glob < TOL_GLOBAL, "%s: %d coordinates, norm-wise rel err %.2e (bound %.0e)", s->name, checked, glob,
           TOL_GLOBAL);
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
    static const tm_spec specs[] = {
        {"transformer cosine tied", "transformer", "", "cosine", 16, 4, 2, 2, 64, 32, 1, 0.3},
        {"transformer uniform untied gqa", "transformer", "", "uniform", 16, 2, 4, 2, 32, 32, 0, 0.3},
        {"gated_attn elementwise cosine untied", "gated_attn", "elementwise", "cosine", 16, 4, 2, 2, 64, 32, 0, 0.3},
        {"gated_attn headwise cosine gqa", "gated_attn", "headwise", "cosine", 16, 4, 4, 2, 64, 32, 1, 0.3},
        {"gated_attn elementwise uniform", "gated_attn", "elementwise", "uniform", 16, 2, 2, 2, 32, 32, 1, 0.3},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        check(&specs[i]);
    return tap_done();
}
