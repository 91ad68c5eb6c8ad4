/* adamw.c: the AdamW update (Loshchilov & Hutter, decoupled weight decay,
 * as torch.optim.AdamW computes it) and the gradient's sum of squares.
 * Reference, per element:
 *   g = grad_scale grad;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p = p - lr wd p - lr (m/bc1) / (sqrt(v/bc2) + eps)
 * (torch decays first, p *= 1 - lr wd, then applies the Adam step).
 * Also the weight copy's rounding (cast, and adamw's p_lp), which the
 * CPU's own models never ask for (their copy is the fp32 master) but
 * test_backend_ops holds a device's against. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/cpu/internal.h"

static void adamw_range(void *ctx, float *p, const float *grad, float *m, float *v, size_t n, float lr, float b1,
                        float b2, float eps, float wd, float bc1, float bc2, float grad_scale)
{
    const float decay = 1.0f - lr * wd, step = lr / bc1, rbc2 = 1.0f / sqrtf(bc2);
#pragma omp parallel for simd num_threads(eng__cpu_nt(ctx)) schedule(static) if (n >= ENG_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float g = grad[i] * grad_scale;
        float mi = b1 * m[i] + (1.0f - b1) * g;
        float vi = b2 * v[i] + (1.0f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] * decay - step * mi / (sqrtf(vi) * rbc2 + eps);
    }
}

/* float -> bf16 bits, round to nearest even on the 16 bits dropped; any
 * NaN becomes the canonical 0x7fff (as cuda_bf16.h's __float2bfloat16_rn,
 * so the CPU's copy and a device's are the same bits) */
static uint16_t bf16_rn(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

void eng__cpu_cast(void *ctx, void *dst, eng_dtype t, const float *src, size_t n)
{
    if (t == ENG_F32) {
        if (dst != src)
            memcpy(dst, src, n * sizeof(float));
        return;
    }
    uint16_t *d = dst;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if (n >= ENG_PAR_MIN)
    for (size_t i = 0; i < n; i++)
        d[i] = bf16_rn(src[i]);
}

/* segment by segment: the same numbers per element as one range each; the
 * weight copy after each segment's update (p's range is still in cache) */
void eng__cpu_adamw(void *ctx, float *p, const float *grad, float *m, float *v, const eng_adamw_seg *seg, int nseg,
                    float lr, float b1, float b2, float eps, float wd, float bc1, float bc2, float grad_scale,
                    void *p_lp, eng_dtype lp_dtype)
{
    for (int k = 0; k < nseg; k++) {
        const size_t o = seg[k].off;
        adamw_range(ctx, p + o, grad + o, m + o, v + o, seg[k].n, lr, b1, b2, eps, seg[k].decay ? wd : 0.0f, bc1, bc2,
                    grad_scale);
        if (p_lp)
            eng__cpu_cast(ctx, (char *)p_lp + o * eng_dtype_size(lp_dtype), lp_dtype, p + o, seg[k].n);
    }
}

/* Partial sums over fixed chunks, combined in chunk order: the result is the
 * same whatever the thread count (an OpenMP reduction may combine in any
 * order, and the norm feeds clipping, so runs would not repeat bit for bit;
 * per-thread partials would tie the result to the thread count). */
#define SUMSQ_MAX_CHUNKS 4096
double eng__cpu_sumsq(void *ctx, const float *x, size_t n)
{
    double part[SUMSQ_MAX_CHUNKS];
    size_t chunk = (n + SUMSQ_MAX_CHUNKS - 1) / SUMSQ_MAX_CHUNKS;
    if (chunk < 16384)
        chunk = 16384;
    const long nc = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if (nc > 1)
    for (long c = 0; c < nc; c++) {
        size_t i0 = (size_t)c * chunk, i1 = i0 + chunk < n ? i0 + chunk : n;
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (size_t i = i0; i < i1; i++)
            s += (double)x[i] * x[i];
        part[c] = s;
    }
    double s = 0;
    for (long c = 0; c < nc; c++)
        s += part[c];
    return s;
}

void eng__cpu_sumsq_into(void *ctx, double *out, const float *x, size_t n)
{
    *out = eng__cpu_sumsq(ctx, x, n);
}
