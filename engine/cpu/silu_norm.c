/* silu_norm.c: SiLU on C columns, then unit L2 norm over each of the first
 * G groups of gw columns (Titans: the memory's q and k heads are
 * normalised, its v heads only activated).
 * Reference, per row:
 *   s_c = silu(x_c) = x_c sigmoid(x_c)
 *   in a normalised group:  r = 1/sqrt(sum_{c in g} s_c^2 + eps),  y_c = s_c r
 *   elsewhere:              y_c = s_c
 *   backward: ds_c = r (dy_c - y_c sum_{c' in g} dy_c' y_c')   (normalised)
 *             ds_c = dy_c                                       (elsewhere)
 *             dx_c = ds_c sigmoid(x_c) (1 + x_c (1 - sigmoid(x_c)))
 * rn (N, G) keeps r for the backward; s is recomputed from x. */
#include <math.h>

#include "engine/cpu/internal.h"

void eng__cpu_silu_norm_fwd(void *ctx, eng_act *y_a /* (N, ldy) = */, int ldy, float *rn /* (N, G) */,
                            const eng_act *x_a /* (N, ldx) */, int ldx, int N, int C, int G, int gw, float eps)
{
    float *y = (float *)y_a;
    const float *x = (const float *)x_a;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * C >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *xn = x + (size_t)n * ldx;
        float *yn = y + (size_t)n * ldy;
#pragma omp simd
        for (int c = 0; c < C; c++)
            yn[c] = xn[c] / (1.0f + eng__expf(-xn[c]));
        for (int g = 0; g < G; g++) {
            float *yg = yn + (size_t)g * gw, ss = 0;
#pragma omp simd reduction(+ : ss)
            for (int c = 0; c < gw; c++)
                ss += yg[c] * yg[c];
            float r = 1.0f / sqrtf(ss + eps);
            rn[(size_t)n * G + g] = r;
#pragma omp simd
            for (int c = 0; c < gw; c++)
                yg[c] *= r;
        }
    }
}

/* dx may be dy (same ld): each row reads its dy before writing dx. */
void eng__cpu_silu_norm_bwd(void *ctx, eng_act *dx_a /* (N, lddx) = */, int lddx, const eng_act *dy_a /* (N, lddy) */,
                            int lddy,
                            const eng_act *y_a /* (N, ldy) */, int ldy, const float *rn /* (N, G) */,
                            const eng_act *x_a /* (N, ldx) */, int ldx, int N, int C, int G, int gw)
{
    float *dx = (float *)dx_a;
    const float *dy = (const float *)dy_a;
    const float *y = (const float *)y_a;
    const float *x = (const float *)x_a;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * C >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *xn = x + (size_t)n * ldx, *dyn = dy + (size_t)n * lddy, *yn = y + (size_t)n * ldy;
        float *dxn = dx + (size_t)n * lddx;
        for (int g = 0; g < G; g++) {
            const float *dyg = dyn + (size_t)g * gw, *yg = yn + (size_t)g * gw, *xg = xn + (size_t)g * gw;
            float *dxg = dxn + (size_t)g * gw, dot = 0, r = rn[(size_t)n * G + g];
#pragma omp simd reduction(+ : dot)
            for (int c = 0; c < gw; c++)
                dot += dyg[c] * yg[c];
#pragma omp simd
            for (int c = 0; c < gw; c++) {
                float sg = 1.0f / (1.0f + eng__expf(-xg[c]));
                dxg[c] = r * (dyg[c] - yg[c] * dot) * sg * (1.0f + xg[c] * (1.0f - sg));
            }
        }
#pragma omp simd
        for (int c = G * gw; c < C; c++) {
            float sg = 1.0f / (1.0f + eng__expf(-xn[c]));
            dxn[c] = dyn[c] * sg * (1.0f + xn[c] * (1.0f - sg));
        }
    }
}
