/* rmsnorm.c: RMSNorm forward and backward.
 * Reference:  r = 1/sqrt(mean_c x_c^2 + eps),  y_c = x_c r w_c
 *   dx_c = r w_c dy_c - x_c r^3 / C * sum_k dy_k w_k x_k
 *   dw_c = sum_n dy_nc x_nc r_n
 * Sums are accumulated in double-free float with C-long loops; tests
 * compare against a double-precision reference. */
#include <math.h>

#include "engine/cpu/internal.h"

void eng__cpu_rmsnorm_fwd(void *ctx, eng_act *out_a /* (N, C) */, float *rstd /* (N) */,
                          const eng_act *x_a /* (N, C) */,
                          const float *w /* (C) */, int N, int C, float eps)
{
    float *out = (float *)out_a;
    const float *x = (const float *)x_a;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * C >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *xn = x + (size_t)n * C;
        float *on = out + (size_t)n * C;
        float ss = 0;
#pragma omp simd reduction(+ : ss)
        for (int c = 0; c < C; c++)
            ss += xn[c] * xn[c];
        float r = 1.0f / sqrtf(ss / (float)C + eps);
        rstd[n] = r;
#pragma omp simd
        for (int c = 0; c < C; c++)
            on[c] = xn[c] * r * w[c];
    }
}

void eng__cpu_rmsnorm_bwd(void *ctx, eng_act *dx_a /* (N, C) += */, float *dw /* (C) += */,
                          const eng_act *dout_a /* (N, C) */,
                          const eng_act *x_a /* (N, C) */, const float *w /* (C) */, const float *rstd /* (N) */, int N,
                          int C)
{
    float *dx = (float *)dx_a;
    const float *dout = (const float *)dout_a;
    const float *x = (const float *)x_a;
#pragma omp parallel num_threads(eng__cpu_nt(ctx)) if ((long)N * C >= ENG_PAR_MIN)
    {
#pragma omp for schedule(static)
        for (int n = 0; n < N; n++) {
            const float *xn = x + (size_t)n * C, *dn = dout + (size_t)n * C;
            float *dxn = dx + (size_t)n * C;
            float r = rstd[n], dot = 0;
#pragma omp simd reduction(+ : dot)
            for (int c = 0; c < C; c++)
                dot += dn[c] * w[c] * xn[c];
            float k = dot * r * r * r / (float)C;
#pragma omp simd
            for (int c = 0; c < C; c++)
                dxn[c] += r * w[c] * dn[c] - xn[c] * k;
        }
        /* the gain's gradient sums over rows: threads split the channels so
         * every sum has one owner and a fixed order */
        int nt = eng__omp_nt(), id = eng__omp_id();
        int c0 = (int)((long)C * id / nt), c1 = (int)((long)C * (id + 1) / nt);
        for (int n = 0; n < N; n++) {
            const float *xn = x + (size_t)n * C, *dn = dout + (size_t)n * C;
            float r = rstd[n];
#pragma omp simd
            for (int c = c0; c < c1; c++)
                dw[c] += dn[c] * xn[c] * r;
        }
    }
}
