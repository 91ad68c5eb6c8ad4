/* embedding.c: token embedding lookup and its backward (scatter-add).
 * Reference: out[n] = wte[tok[n]]; dwte[tok[n]] += dout[n]. */
#include <string.h>

#include "engine/cpu/internal.h"

void eng__cpu_embedding_fwd(void *ctx, eng_act *out_a /* (N, C) */, const float *wte /* (V, C) */,
                            const int32_t *tok /* (N) */, int N, int C)
{
    float *out = (float *)out_a;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * C >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++)
        memcpy(out + (size_t)n * C, wte + (size_t)tok[n] * C, (size_t)C * sizeof *out);
}

void eng__cpu_embedding_bwd(void *ctx, float *dwte /* (V, C) */, const eng_act *dout_a /* (N, C) */,
                            const int32_t *tok /* (N) */, int N, int C)
{
    const float *dout = (const float *)dout_a;
    /* Threads split the channels, not the tokens: two tokens may share a row,
     * and each channel is then summed in token order (deterministic). */
#pragma omp parallel num_threads(eng__cpu_nt(ctx)) if ((long)N * C >= ENG_PAR_MIN)
    {
        int nt = eng__omp_nt(), id = eng__omp_id();
        int c0 = (int)((long)C * id / nt), c1 = (int)((long)C * (id + 1) / nt);
        for (int n = 0; n < N; n++) {
            float *d = dwte + (size_t)tok[n] * C;
            const float *s = dout + (size_t)n * C;
#pragma omp simd
            for (int c = c0; c < c1; c++)
                d[c] += s[c];
        }
    }
}

void eng__cpu_embedding_bwd_sorted(void *ctx, float *dwte /* (V, C) */, const eng_act *dout_a /* (N, C) */,
                                   const int32_t *order /* (N) */, const int32_t *ids /* (U) */,
                                   const int32_t *starts /* (U + 1) */, const int32_t *n_ids, int max_U, int C)
{
    const float *dout = (const float *)dout_a;
    const int U = *n_ids;
    (void)max_U; /* host memory: U is read in place */
    /* a thread per id: each row of dwte has one owner, and adds its rows in
     * position order, as eng__cpu_embedding_bwd does channel by channel */
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)starts[U] * C >= ENG_PAR_MIN)
    for (int u = 0; u < U; u++) {
        float *d = dwte + (size_t)ids[u] * C;
        for (int i = starts[u]; i < starts[u + 1]; i++) {
            const float *s = dout + (size_t)order[i] * C;
#pragma omp simd
            for (int c = 0; c < C; c++)
                d[c] += s[c];
        }
    }
}
