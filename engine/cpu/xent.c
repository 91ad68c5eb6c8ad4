/* xent.c: softmax cross-entropy over the vocabulary.
 * Reference: loss_n = logsumexp(l_n) - l_n[t_n];
 *   dl_nv = dscale (softmax(l_n)_v - [v == t_n]), rows with t_n < 0 zero. */
#include <math.h>
#include <string.h>

#include "engine/cpu/internal.h"

static float row_max(const float *x, int V)
{
    float m = x[0];
#pragma omp simd reduction(max : m)
    for (int v = 1; v < V; v++)
        m = x[v] > m ? x[v] : m;
    return m;
}

void eng__cpu_xent_fwd(void *ctx, float *losses /* (N) */, const float *logits /* (N, V) */,
                       const int32_t *targets /* (N) */, int N, int V)
{
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * V >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *l = logits + (size_t)n * V;
        if (targets[n] < 0) {
            losses[n] = 0;
            continue;
        }
        float m = row_max(l, V), s = 0;
#pragma omp simd reduction(+ : s)
        for (int v = 0; v < V; v++)
            s += eng__expf(l[v] - m);
        losses[n] = logf(s) + m - l[targets[n]];
    }
}

void eng__cpu_xent_bwd(void *ctx, float *logits /* (N, V), in: logits, out: gradient */,
                       const int32_t *targets /* (N) */, int N, int V, float dscale)
{
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * V >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        float *l = logits + (size_t)n * V;
        if (targets[n] < 0) {
            memset(l, 0, (size_t)V * sizeof *l);
            continue;
        }
        float m = row_max(l, V), s = 0;
#pragma omp simd reduction(+ : s)
        for (int v = 0; v < V; v++) {
            l[v] = eng__expf(l[v] - m);
            s += l[v];
        }
        float k = dscale / s;
#pragma omp simd
        for (int v = 0; v < V; v++)
            l[v] *= k;
        l[targets[n]] -= dscale;
    }
}
