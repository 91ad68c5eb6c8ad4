/* gate.c: the sigmoid output gate of Gated Attention (Qiu et al. 2025).
 * Reference: y_nj = a_nj s(z_n,g(j)), s = sigmoid, g(j) = j for the
 * elementwise gate (G = D), j / (D/G) for the headwise one (G = heads);
 *   da_nj = dy_nj s,   dz_ng = s (1 - s) sum_{j in g} dy_nj a_nj. */
#include <math.h>

#include "engine/cpu/internal.h"

void eng__cpu_gate_fwd(void *ctx, eng_act *out_a /* (N, D) */, const eng_act *a_a /* (N, D) */,
                       const eng_act *z_a /* (N, ldz): G used */, int ldz, int N, int D, int G)
{
    float *out = (float *)out_a;
    const float *a = (const float *)a_a;
    const float *z = (const float *)z_a;
    const int w = D / G;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * D >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *an = a + (size_t)n * D, *zn = z + (size_t)n * ldz;
        float *on = out + (size_t)n * D;
        for (int g = 0; g < G; g++) {
            float s = 1.0f / (1.0f + eng__expf(-zn[g]));
#pragma omp simd
            for (int j = g * w; j < (g + 1) * w; j++)
                on[j] = an[j] * s;
        }
    }
}

void eng__cpu_gate_bwd(void *ctx, eng_act *da_a /* (N, D) = */, eng_act *dz_a /* (N, ldz) = */,
                       const eng_act *dout_a /* (N, D) */,
                       const eng_act *a_a, const eng_act *z_a, int ldz, int N, int D, int G)
{
    float *da = (float *)da_a;
    float *dz = (float *)dz_a;
    const float *dout = (const float *)dout_a;
    const float *a = (const float *)a_a;
    const float *z = (const float *)z_a;
    const int w = D / G;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * D >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *an = a + (size_t)n * D, *zn = z + (size_t)n * ldz, *dn = dout + (size_t)n * D;
        float *dan = da + (size_t)n * D, *dzn = dz + (size_t)n * ldz;
        for (int g = 0; g < G; g++) {
            float s = 1.0f / (1.0f + eng__expf(-zn[g])), acc = 0;
#pragma omp simd reduction(+ : acc)
            for (int j = g * w; j < (g + 1) * w; j++) {
                dan[j] = dn[j] * s;
                acc += dn[j] * an[j];
            }
            dzn[g] = acc * s * (1.0f - s);
        }
    }
}
