/* test_cuda_model.c: whole models on the CUDA backend against the CPU: the
 * four architectures (tapered and uniform), 10 AdamW steps from the same
 * weights on the same batches (two micro batches each, clipping), the
 * CUDA losses within 1e-4 relative of the CPU's at every step, and the
 * weights after them within 1e-3 (norm-wise: AdamW moves every weight by
 * about lr whatever its gradient, docs/engine.md).  fp32 on both sides.
 *
 * Exits 77 (skip) in a build without CUDA and on a machine where the
 * backend cannot start (no driver, no GPU: eng_backend_cuda_create's
 * TLM_ECONFIG).  Titans runs in both variants (MAG, MAL: the spec's gate
 * field names the variant, as tm_config only reads it for gated_attn). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "engine/cuda/backend.h"
#include "engine/model/model.h"
#include "tests/lib/model_util.h"
#include "tests/lib/tap.h"

#define STEPS 10

static const tm_spec specs[] = {
    {"transformer cosine tied", "transformer", "", "cosine", 64, 4, 4, 4, 128, 96, 1, 0.02},
    {"transformer uniform untied gqa", "transformer", "", "uniform", 64, 3, 4, 2, 96, 96, 0, 0.02},
    {"gated_attn elementwise cosine", "gated_attn", "elementwise", "cosine", 64, 4, 4, 4, 128, 96, 0, 0.02},
    {"gated_attn headwise uniform mqa", "gated_attn", "headwise", "uniform", 64, 3, 4, 1, 96, 96, 1, 0.02},
    {"hope_attn cosine", "hope_attn", "", "cosine", 64, 4, 4, 4, 192, 96, 0, 0.02},
    {"titans mag cosine tied", "titans", "mag", "cosine", 64, 4, 4, 4, 128, 96, 1, 0.02},
    {"titans mal uniform gqa", "titans", "mal", "uniform", 64, 3, 4, 2, 96, 96, 0, 0.02},
};
#define NSPEC (int)(sizeof specs / sizeof specs[0])

/* 10 steps; losses[] and the final weights out.  0, or the creation's code. */
static int train(const tm_spec *s, const eng_backend *be, double *losses, float **params, size_t *np, tlm_err *e)
{
    enum { Bm = 4, Tm = 64 };
    eng_config c;
    eng_model *m;
    int rc = tm_config(s, Tm, &c, e);
    if (!rc && !strcmp(s->arch, "titans"))
        c.model.titans_variant = strcmp(s->gate, "mal") ? ENG_TITANS_MAG : ENG_TITANS_MAL;
    if (rc || (rc = eng_model_create(&m, &c, be, Bm, Tm, e)))
        return rc;
    eng_model_init_weights(m, 1234);
    static int32_t tok[Bm * Tm], tgt[Bm * Tm];
    for (int st = 0; st < STEPS && !rc; st++) {
        tm_batch((uint64_t)st + 1, Bm, Tm, s->V, tok, tgt);
        eng_model_zero_grads(m);
        double l0, l1;
        rc = eng_model_forward(m, tok, tgt, Bm / 2, Tm, &l0, NULL, e) || eng_model_backward(m, 0.5f, e) ||
             eng_model_forward(m, tok + Bm / 2 * Tm, tgt + Bm / 2 * Tm, Bm / 2, Tm, &l1, NULL, e) ||
             eng_model_backward(m, 0.5f, e);
        double gn = eng_model_grad_norm(m);
        eng_adamw opt = {3e-3, 0.9, 0.95, 1e-8, 0.1, st + 1, gn > 1.0 ? 1.0 / gn : 1.0};
        rc = rc || eng_model_step(m, &opt, e);
        losses[st] = 0.5 * (l0 + l1);
    }
    *np = eng_model_n_params(m);
    *params = malloc(*np * sizeof **params);
    if (!*params)
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    else
        eng_model_get_params(m, *params);
    eng_model_free(m);
    return rc ? (rc < 0 ? rc : TLM_EINTERNAL) : 0;
}

int main(int argc, char **argv)
{
#ifndef TLM_HAVE_CUDA
    printf("1..0 # SKIP built without CUDA\n");
    return 77;
#else
    eng_runtime_init(argc, argv);
    tlm_err e = {0};
    eng_backend *gpu, *cpu;
    if (eng_backend_cuda_create(&gpu, 0, &e)) {
        printf("1..0 # SKIP %s\n", e.msg);
        return e.code == TLM_ECONFIG ? 77 : 1;
    }
    if (eng_backend_cpu_create(&cpu, 0, &e)) {
        printf("Bail out! cpu backend: %s\n", e.msg);
        return 1;
    }
    eng_cuda_device_info info;
    if (!eng_cuda_device_info_get(0, &info, &e))
        TAP_DIAG("cuda:0 %s, sm_%d%d, %zu MiB", info.name, info.cc_major, info.cc_minor, info.total_bytes >> 20);
    for (int i = 0; i < NSPEC; i++) {
        const tm_spec *s = &specs[i];
        double lc[STEPS], lg[STEPS];
        float *pc = NULL, *pg = NULL;
        size_t nc = 0, ng = 0;
        int rc = train(s, cpu, lc, &pc, &nc, &e);
        if (rc) {
            TAP_OK(0, "%s: on the cpu: %s", s->name, e.msg);
            continue;
        }
        rc = train(s, gpu, lg, &pg, &ng, &e);
        tlm_err ce = {0};
        if (!rc && eng_backend_cuda_status(gpu, &ce))
            rc = ce.code, e = ce;
        if (rc) {
            TAP_OK(0, "%s: on cuda: %s", s->name, e.msg);
            free(pc);
            free(pg);
            continue;
        }
        double worst = 0;
        int at = 0;
        for (int st = 0; st < STEPS; st++) {
            double d = fabs(lg[st] - lc[st]) / fmax(1e-30, fabs(lc[st]));
            if (d > worst || !isfinite(d))
                worst = d, at = st;
        }
        TAP_OK(worst <= 1e-4, "%s: %d steps, cuda losses within %.1e of the cpu's (worst at step %d: %.6f vs %.6f)",
               s->name, STEPS, worst, at, lg[at], lc[at]);
        double dn = 0, wn = 1e-30;
        for (size_t k = 0; k < nc && nc == ng; k++) {
            dn += ((double)pg[k] - pc[k]) * ((double)pg[k] - pc[k]);
            wn += (double)pc[k] * pc[k];
        }
        const double wrel = nc == ng ? sqrt(dn / wn) : INFINITY;
        TAP_OK(wrel <= 1e-3, "%s: weights after %d steps within %.1e (norm-wise) of the cpu's", s->name, STEPS, wrel);
        free(pc);
        free(pg);
    }
    size_t now, peak;
    eng_backend_cuda_memory(gpu, &now, &peak);
    TAP_OK(now == 0, "every allocation of the models returned (%zu bytes held; peak %zu MiB)", now, peak >> 20);
    eng_backend_free(cpu);
    eng_backend_free(gpu);
    return tap_done();
#endif
}
