/* dconv.c: depthwise causal 1-D convolution over time (Titans: after each
 * of the memory's q, k, v projections), forward and backward.
 *
 * Reference, per channel c and position t of a sequence (t = n % T), kernel
 * width K, tap K-1 on the current position:
 *   y[t, c] = sum_{j=0}^{K-1} w[c, j] x[t - (K-1) + j, c]   (terms before t = 0 are 0)
 *   dx[s, c] = sum_j w[c, j] dy[s + (K-1) - j, c]            (terms past T-1 are 0)
 *   dw[c, j] += sum_t dy[t, c] x[t - (K-1) + j, c]
 * A sequence never sees its neighbour: positions restart at every multiple
 * of T.  Threads split rows for y and dx, and channels for dw (one owner per
 * sum, fixed order: bit-identical runs). */
#include <string.h>

#include "engine/cpu/cpu.h"

void eng__cpu_dconv_fwd(float *y /* (N, ldy) = */, int ldy, const float *x /* (N, ldx) */, int ldx,
                        const float *w /* (C, K) */, int N, int T, int C, int K)
{
#pragma omp parallel for schedule(static) if ((long)N * C * K >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const int t = n % T;
        float *yn = y + (size_t)n * ldy;
        memset(yn, 0, (size_t)C * sizeof *yn);
        for (int j = 0; j < K; j++) {
            const int s = t - (K - 1) + j;
            if (s < 0)
                continue;
            const float *xs = x + (size_t)(n - t + s) * ldx;
#pragma omp simd
            for (int c = 0; c < C; c++)
                yn[c] += w[(size_t)c * K + j] * xs[c];
        }
    }
}

void eng__cpu_dconv_bwd(float *dx /* (N, lddx) = */, int lddx, float *dw /* (C, K) += */,
                        const float *dy /* (N, lddy) */, int lddy, const float *x /* (N, ldx) */, int ldx,
                        const float *w /* (C, K) */, int N, int T, int C, int K)
{
#pragma omp parallel if ((long)N * C * K >= ENG_PAR_MIN)
    {
#pragma omp for schedule(static)
        for (int n = 0; n < N; n++) {
            const int s = n % T;
            float *dxn = dx + (size_t)n * lddx;
            memset(dxn, 0, (size_t)C * sizeof *dxn);
            for (int j = 0; j < K; j++) {
                const int t = s + (K - 1) - j;
                if (t >= T)
                    continue;
                const float *dyt = dy + (size_t)(n - s + t) * lddy;
#pragma omp simd
                for (int c = 0; c < C; c++)
                    dxn[c] += w[(size_t)c * K + j] * dyt[c];
            }
        }
        /* the kernel's gradient sums over rows: each thread owns a range of
         * channels and walks all rows in order */
        int nt = eng__omp_nt(), id = eng__omp_id();
        int c0 = (int)((long)C * id / nt), c1 = (int)((long)C * (id + 1) / nt);
        for (int n = 0; n < N; n++) {
            const int t = n % T;
            const float *dyn = dy + (size_t)n * lddy;
            for (int j = 0; j < K; j++) {
                const int s = t - (K - 1) + j;
                if (s < 0)
                    continue;
                const float *xs = x + (size_t)(n - t + s) * ldx;
                for (int c = c0; c < c1; c++)
                    dw[(size_t)c * K + j] += dyn[c] * xs[c];
            }
        }
    }
}
