/* swiglu.c: the SwiGLU activation of the MLP.
 * Reference: y = silu(g) u = g s u with s = sigmoid(g);
 *   du = dy g s,   dg = dy u s (1 + g (1 - s)). */
#include <math.h>

#include "engine/cpu/internal.h"

void eng__cpu_swiglu_fwd(void *ctx, eng_act *out_a /* (N, F) */, const eng_act *g_a /* (N, ldgu) */,
                         const eng_act *u_a /* (N, ldgu) */, int ldgu, int N, int F)
{
    float *out = (float *)out_a;
    const float *g = (const float *)g_a;
    const float *u = (const float *)u_a;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * F >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *gn = g + (size_t)n * ldgu, *un = u + (size_t)n * ldgu;
        float *on = out + (size_t)n * F;
#pragma omp simd
        for (int f = 0; f < F; f++) {
            float s = 1.0f / (1.0f + eng__expf(-gn[f]));
            on[f] = gn[f] * s * un[f];
        }
    }
}

void eng__cpu_swiglu_bwd(void *ctx, eng_act *dg_a /* (N, ldgu) = */, eng_act *du_a /* (N, ldgu) = */,
                         const eng_act *dout_a /* (N,
                                                   F) */, const eng_act *g_a, const eng_act *u_a, int ldgu, int N,
                                                   int F)
{
    float *dg = (float *)dg_a;
    float *du = (float *)du_a;
    const float *dout = (const float *)dout_a;
    const float *g = (const float *)g_a;
    const float *u = (const float *)u_a;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * F >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *gn = g + (size_t)n * ldgu, *un = u + (size_t)n * ldgu, *dn = dout + (size_t)n * F;
        float *dgn = dg + (size_t)n * ldgu, *dun = du + (size_t)n * ldgu;
#pragma omp simd
        for (int f = 0; f < F; f++) {
            float x = gn[f], s = 1.0f / (1.0f + eng__expf(-x));
            float d = dn[f];
            dun[f] = d * x * s;
            dgn[f] = d * un[f] * s * (1.0f + x * (1.0f - s));
        }
    }
}
