/* elem.h: the per-element and per-row arithmetic of the CUDA kernels, as
 * small inline functions that nvcc compiles for the device and a C compiler
 * for the host, so that tests/engine/backend/test_cuda_elem checks them
 * against the CPU backend's ops on a machine without a GPU.  A kernel only
 * decides which thread does which element and how sums are cut; what is
 * computed for an element, and how partial sums combine, is here.
 *
 * exp: the device uses expf (full precision, not __expf), the host libm's;
 * both are within 2 ulp, so against the CPU's polynomial eng__expf the
 * helpers agree to ~1e-6 relative, not bit for bit.
 *
 * Must not: include CUDA headers (the C test compiles it), hold state. */
#ifndef TLM_ENGINE_CUDA_ELEM_H
#define TLM_ENGINE_CUDA_ELEM_H

#include <math.h>

#ifdef __CUDACC__
#define ENG_CU_HD static __host__ __device__ __forceinline__
#else
#define ENG_CU_HD static inline
#endif

ENG_CU_HD float eng_cu_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* ---- SwiGLU: y = g s(g) u */
ENG_CU_HD float eng_cu_swiglu_fwd(float g, float u)
{
    return g * eng_cu_sigmoid(g) * u;
}
ENG_CU_HD void eng_cu_swiglu_bwd(float d, float g, float u, float *dg, float *du)
{
    float s = eng_cu_sigmoid(g);
    *du = d * g * s;
    *dg = d * u * s * (1.0f + g * (1.0f - s));
}

/* ---- gate: y = a s(z); dz = s (1 - s) sum(dy a) over the group */
ENG_CU_HD float eng_cu_gate_dz(float s, float sum_dy_a)
{
    return sum_dy_a * s * (1.0f - s);
}

/* ---- RoPE, rotate-half: the pair (x1, x2) by the angle (c, s); sign -1: back */
ENG_CU_HD void eng_cu_rope_pair(float *x1, float *x2, float c, float s, float sign)
{
    float a = *x1, b = *x2, sn = sign * s;
    *x1 = a * c - b * sn;
    *x2 = b * c + a * sn;
}

/* ---- RMSNorm: rstd from the row's sum of squares; the backward's
 * per-element dx term with k = dot(dy, w, x) r^3 / C */
ENG_CU_HD float eng_cu_rmsnorm_rstd(float sumsq, int C, float eps)
{
    return 1.0f / sqrtf(sumsq / (float)C + eps);
}
ENG_CU_HD float eng_cu_rmsnorm_k(float dot, float r, int C)
{
    return dot * r * r * r / (float)C;
}
ENG_CU_HD float eng_cu_rmsnorm_dx(float r, float w, float dy, float x, float k)
{
    return r * w * dy - x * k;
}

/* ---- online softmax: a running (max m, sum s of exp(x - m)) pair; merge
 * two, add one value.  m starts at -INFINITY, s at 0. */
ENG_CU_HD void eng_cu_lse_merge(float *m, float *s, float m2, float s2)
{
    if (m2 == -INFINITY)
        return;
    if (*m == -INFINITY) {
        *m = m2, *s = s2;
        return;
    }
    float mx = *m > m2 ? *m : m2;
    *s = *s * expf(*m - mx) + s2 * expf(m2 - mx);
    *m = mx;
}
ENG_CU_HD void eng_cu_lse_add(float *m, float *s, float x)
{
    eng_cu_lse_merge(m, s, x, 1.0f);
}
/* loss of a row from its (m, s) and the target's logit */
ENG_CU_HD float eng_cu_xent_loss(float m, float s, float l_target)
{
    return logf(s) + m - l_target;
}
/* d loss/dlogit for one element: dscale (softmax - [v == target]) */
ENG_CU_HD float eng_cu_xent_grad(float l, float m, float s, int is_target, float dscale)
{
    float p = expf(l - m) * (dscale / s);
    return is_target ? p - dscale : p;
}

/* ---- flash attention's running row: the factor the accumulator is
 * scaled by when a new score arrives, and the new score's weight */
ENG_CU_HD void eng_cu_flash_step(float *m, float *l, float score, float *rescale, float *w)
{
    float mn = *m > score ? *m : score;
    *rescale = *m == -INFINITY ? 0.0f : expf(*m - mn);
    *w = expf(score - mn);
    *l = *l * *rescale + *w;
    *m = mn;
}

/* ---- AdamW, one element (engine/cpu/adamw.c: decay first, then the step);
 * decay = 1 - lr wd, step = lr / bc1, rbc2 = 1 / sqrt(bc2) */
ENG_CU_HD void eng_cu_adamw(float *p, float grad, float *m, float *v, float b1, float b2, float eps, float decay,
                            float step, float rbc2, float grad_scale)
{
    float g = grad * grad_scale;
    float mi = b1 * *m + (1.0f - b1) * g;
    float vi = b2 * *v + (1.0f - b2) * g * g;
    *m = mi;
    *v = vi;
    *p = *p * decay - step * mi / (sqrtf(vi) * rbc2 + eps);
}

/* ---- Titans (engine/cpu/dconv.c, silu_norm.c, titans_mem.c) */

/* dconv: the source row of tap j for output position t of a sequence
 * (K taps, tap K-1 on t); < 0 before the sequence start.  The backward's
 * dx at s reads dy at s + K-1 - j (past T-1: none). */
ENG_CU_HD int eng_cu_dconv_src(int t, int j, int K)
{
    return t - (K - 1) + j;
}
ENG_CU_HD int eng_cu_dconv_dst(int s, int j, int K, int T)
{
    int t = s + (K - 1) - j;
    return t >= T ? -1 : t;
}

/* silu and its first two derivatives from z and s = sigmoid(z) */
ENG_CU_HD float eng_cu_silu(float z)
{
    return z * eng_cu_sigmoid(z);
}
ENG_CU_HD float eng_cu_dsilu(float z, float s)
{
    return s * (1.0f + z * (1.0f - s));
}
ENG_CU_HD float eng_cu_d2silu(float z, float s)
{
    return s * (1.0f - s) * (2.0f + z * (1.0f - 2.0f * s));
}

/* silu_norm: a group's r from the sum of squares of its silu values, and
 * dx of one element of a normalised group (dot = sum dy y over the group) */
ENG_CU_HD float eng_cu_silu_norm_r(float ss, float eps)
{
    return 1.0f / sqrtf(ss + eps);
}
ENG_CU_HD float eng_cu_silu_norm_dx(float r, float dy, float y, float dot, float x)
{
    return r * (dy - y * dot) * eng_cu_dsilu(x, eng_cu_sigmoid(x));
}

/* titans_mem's closed form, one step back through a chunk (1-based t > 1):
 * from (pw, ps, qs) at t and the gates (a, eta) at t, the values at t-1 */
ENG_CU_HD void eng_cu_mem_coef_back(double *pw, double *ps, double *qs, double a_t, double eta_t)
{
    double pw1 = a_t * *pw;
    *ps = eta_t * *ps + pw1;
    *qs = eta_t * *qs;
    *pw = pw1;
}
/* the gates' adjoint recursion, one token: the running <P, S>, <Q, S>,
 * <P, W> (sP, sQ, wP) and the token's <P, G>, <Q, G> give d theta, d eta,
 * d a, then the running values move past the token */
ENG_CU_HD void eng_cu_mem_gate_adj(double ps, double qs, double pw, double th, double et, double aa, double pg,
                                   double qg, double *sP, double *sQ, double *wP, double *dth, double *det,
                                   double *da)
{
    *dth = -(ps * pg + qs * qg);
    *det = ps * *sP + qs * *sQ;
    *da = pw * *wP;
    *sP = et * *sP - th * pg;
    *sQ = et * *sQ - th * qg;
    *wP = aa * *wP + *sP;
}

#endif
