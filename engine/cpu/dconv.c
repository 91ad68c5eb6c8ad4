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

#include "engine/cpu/internal.h"

/* One output row: y = sum_j w[., j] x_j, with x_j = NULL for a tap
 * before the sequence start.  The K = 4 of Titans gets an unrolled loop
 * (the four taps of a channel are adjacent in w). */
static void conv_row(float *y, const float *const *xj, const float *w, int C, int K)
{
    if (K == 4 && xj[0] && xj[1] && xj[2] && xj[3]) {
        const float *x0 = xj[0], *x1 = xj[1], *x2 = xj[2], *x3 = xj[3];
#pragma omp simd
        for (int c = 0; c < C; c++)
            y[c] = w[4 * c] * x0[c] + w[4 * c + 1] * x1[c] + w[4 * c + 2] * x2[c] + w[4 * c + 3] * x3[c];
        return;
    }
    memset(y, 0, (size_t)C * sizeof *y);
    for (int j = 0; j < K; j++) {
        const float *x = xj[j];
        if (!x)
            continue;
#pragma omp simd
        for (int c = 0; c < C; c++)
            y[c] += w[(size_t)c * K + j] * x[c];
    }
}

#define MAXK 16

void eng__cpu_dconv_fwd(void *ctx, eng_act *y_a /* (N, ldy) = */, int ldy, const eng_act *x_a /* (N, ldx) */, int ldx,
                        const float *w /* (C, K) */, int N, int T, int C, int K)
{
    float *y = (float *)y_a;
    const float *x = (const float *)x_a;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * C * K >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const int t = n % T;
        const float *xj[MAXK];
        for (int j = 0; j < K; j++) {
            const int s = t - (K - 1) + j;
            xj[j] = s < 0 ? NULL : x + (size_t)(n - t + s) * ldx;
        }
        conv_row(y + (size_t)n * ldy, xj, w, C, K);
    }
}

void eng__cpu_dconv_bwd(void *ctx, eng_act *dx_a /* (N, lddx) = */, int lddx, float *dw /* (C, K) += */,
                        const eng_act *dy_a /* (N, lddy) */, int lddy, const eng_act *x_a /* (N, ldx) */, int ldx,
                        const float *w /* (C, K) */, int N, int T, int C, int K)
{
    float *dx = (float *)dx_a;
    const float *dy = (const float *)dy_a;
    const float *x = (const float *)x_a;
#pragma omp parallel num_threads(eng__cpu_nt(ctx)) if ((long)N * C * K >= ENG_PAR_MIN)
    {
        /* dx[s] = sum_j w[., j] dy[s + K-1 - j]: the same row kernel with the
         * taps reversed (tap j reads dy at offset K-1-j) */
#pragma omp for schedule(static)
        for (int n = 0; n < N; n++) {
            const int s = n % T;
            const float *dyj[MAXK];
            for (int j = 0; j < K; j++) {
                const int t = s + (K - 1) - j;
                dyj[j] = t >= T ? NULL : dy + (size_t)(n - s + t) * lddy;
            }
            conv_row(dx + (size_t)n * lddx, dyj, w, C, K);
        }
        /* the kernel's gradient sums over rows: each thread owns a range of
         * channels and walks all rows in order */
        int nt = eng__omp_nt(), id = eng__omp_id();
        int c0 = (int)((long)C * id / nt), c1 = (int)((long)C * (id + 1) / nt);
        for (int n = 0; n < N; n++) {
            const int t = n % T;
            const float *dyn = dy + (size_t)n * lddy;
            if (K == 4 && t >= 3) {
                const float *x0 = x + (size_t)(n - 3) * ldx, *x1 = x0 + ldx, *x2 = x1 + ldx, *x3 = x2 + ldx;
#pragma omp simd
                for (int c = c0; c < c1; c++) {
                    dw[4 * c] += dyn[c] * x0[c];
                    dw[4 * c + 1] += dyn[c] * x1[c];
                    dw[4 * c + 2] += dyn[c] * x2[c];
                    dw[4 * c + 3] += dyn[c] * x3[c];
                }
                continue;
            }
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
