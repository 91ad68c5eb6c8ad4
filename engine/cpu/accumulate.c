/* accumulate.c: y += alpha x over a flat range: the optimizer's gradient
 * accumulation for parameters updated less often than every step
 * (hope_attn's slow levels, engine/model/hope.c), and on activations
 * (act_axpy: Titans MAL's residual add; the CPU stores them in fp32).
 * Element-wise, so the result does not depend on the thread count. */
#include "engine/cpu/internal.h"

void eng__cpu_axpy(void *ctx, float *y, const float *x, size_t n, float alpha)
{
#pragma omp parallel for simd num_threads(eng__cpu_nt(ctx)) schedule(static) if (n >= ENG_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        y[i] += alpha * x[i];
}

void eng__cpu_act_axpy(void *ctx, eng_act *y, const eng_act *x, size_t n, float alpha)
{
    eng__cpu_axpy(ctx, (float *)y, (const float *)x, n, alpha);
}
