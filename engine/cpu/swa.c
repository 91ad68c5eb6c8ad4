/* swa.c: sliding-window causal softmax attention with persistent
 * key/value entries (Titans' attention branch), forward and backward, per
 * (sequence, head) with the BLAS doing the products.
 *
 * Reference (one head, scale = 1/sqrt(hd), window w, Np persistent entries
 * kp, vp shared by every sequence and visible to every query):
 *   visible(i) = { persistent 0..Np-1 } U { key j : max(0, i-w+1) <= j <= i }
 *   S_ij = scale q_i . k_j,  P = softmax over visible(i),  o_i = sum_j P_ij v_j
 *   lse_i = log sum_{j in visible(i)} exp(S_ij)   (kept; the backward
 *   recomputes P from it, as attention.c does)
 *   dV = P^T dO, dP = dO V^T, dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik),
 *   dQ = scale dS K, dK = scale dS^T Q (persistent entries included).
 * Rows go in blocks of SWA_BLOCK; a block multiplies only against the
 * persistent entries and the keys its rows can see, [max(0, r0-w+1), r1),
 * so the cost is O(T (w + Np)) per head.  Grouped KV heads as in
 * attention.c.  The persistent entries' gradients sum over sequences: each
 * (sequence, kv head) unit writes its own slot of the workspace, and the
 * slots are added in sequence order afterwards (bit-identical runs). */
#include <math.h>
#include <string.h>

#include "engine/cpu/internal.h"

#define SWA_BLOCK 64

static int key_span(int T, int window)
{
    long span = (long)SWA_BLOCK + window - 1;
    return span < T ? (int)span : T;
}

static size_t slot_floats(int T, int window, int Np)
{
    return (size_t)2 * SWA_BLOCK * (size_t)(Np + key_span(T, window));
}

/* the thread slots, then the persistent entries' gradient of every
 * (sequence, kv head) unit */
size_t eng__cpu_swa_workspace(void *ctx, int B, int T, int Hkv, int hd, int window, int Np)
{
    return eng__cpu_ws_size(ctx, ENG__CPU_WS_SWA, slot_floats(T, window, Np)) + (size_t)B * Hkv * 2 * Np * hd;
}

/* Scores of rows [r0, r1) against the persistent entries (columns 0..Np-1)
 * and keys [k0, r1) (columns Np..), rows of stride W = Np + r1 - k0. */
static void scores(void *ctx, float *P, int W, const float *q, int ldq, const float *k, int ldkv, const float *kp,
                   int ldp, int Np, int r0, int r1, int k0, int hd, float scale)
{
    const int m = r1 - r0;
    if (Np)
        eng__cpu_matmul(ctx, 0, 1, m, Np, hd, scale, q + (size_t)r0 * ldq, ldq, kp, ldp, 0.0f, P, W);
    eng__cpu_matmul(ctx, 0, 1, m, r1 - k0, hd, scale, q + (size_t)r0 * ldq, ldq, k + (size_t)k0 * ldkv, ldkv, 0.0f,
                    P + Np, W);
}

static void head_fwd(void *ctx, float *o, int ldo, float *lse, const float *q, int ldq, const float *k, const float *v,
                     int ldkv, const float *kp, const float *vp, int ldp, int Np, int T, int hd, int window,
                     float scale, float *P)
{
    for (int r0 = 0; r0 < T; r0 += SWA_BLOCK) {
        const int r1 = r0 + SWA_BLOCK < T ? r0 + SWA_BLOCK : T, m = r1 - r0;
        const int k0 = r0 - window + 1 > 0 ? r0 - window + 1 : 0, W = Np + r1 - k0;
        scores(ctx, P, W, q, ldq, k, ldkv, kp, ldp, Np, r0, r1, k0, hd, scale);
        for (int i = r0; i < r1; i++) {
            float *row = P + (size_t)(i - r0) * W;
            const int lo = Np + (i - window + 1 > k0 ? i - window + 1 - k0 : 0), hi = Np + i - k0; /* inclusive */
            float mx = row[hi], s = 0;
            for (int j = 0; j < Np; j++)
                mx = row[j] > mx ? row[j] : mx;
#pragma omp simd reduction(max : mx)
            for (int j = lo; j <= hi; j++)
                mx = row[j] > mx ? row[j] : mx;
            for (int j = 0; j < Np; j++) {
                row[j] = eng__expf(row[j] - mx);
                s += row[j];
            }
#pragma omp simd reduction(+ : s)
            for (int j = lo; j <= hi; j++) {
                row[j] = eng__expf(row[j] - mx);
                s += row[j];
            }
            const float rs = 1.0f / s;
            for (int j = 0; j < Np; j++)
                row[j] *= rs;
#pragma omp simd
            for (int j = lo; j <= hi; j++)
                row[j] *= rs;
            memset(row + Np, 0, (size_t)(lo - Np) * sizeof *row);
            memset(row + hi + 1, 0, (size_t)(W - hi - 1) * sizeof *row);
            lse[i] = mx + logf(s);
        }
        float *ob = o + (size_t)r0 * ldo;
        if (Np)
            eng__cpu_matmul(ctx, 0, 0, m, hd, Np, 1.0f, P, W, vp, ldp, 0.0f, ob, ldo);
        eng__cpu_matmul(ctx, 0, 0, m, hd, r1 - k0, 1.0f, P + Np, W, v + (size_t)k0 * ldkv, ldkv, Np ? 1.0f : 0.0f, ob,
                        ldo);
    }
}

void eng__cpu_swa_fwd(void *ctx, eng_act *out_a /* (B, T, ldo): H x hd */, int ldo, float *lse /* (B, H, T) */,
                      const eng_act *q_a /* (B, T, ldq) */, int ldq, const eng_act *k_a /* (B, T, ldkv) */,
                      const eng_act *v_a /* (B, T, ldkv) */, int ldkv, const float *kp /* (Np, ldp): Hkv x hd */,
                      const float *vp /* (Np, ldp) */, int ldp, int Np, int B, int T, int H, int Hkv, int hd,
                      int window, float *ws)
{
    float *out = (float *)out_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    const float scale = 1.0f / sqrtf((float)hd);
    const int grp = H / Hkv;
    const int blas = eng__blas_threads();
    const int team = eng__cpu_ws_team(ctx, ENG__CPU_WS_SWA);
    eng__blas_set_threads(1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) \
    if ((double)B * H * T * (window < T ? window : T) * hd >= ENG_PAR_MIN)
    for (int bh = 0; bh < B * H; bh++) {
        const int b = bh / H, h = bh % H, g = h / grp;
        const size_t row0 = (size_t)b * T;
        head_fwd(ctx, out + row0 * ldo + (size_t)h * hd, ldo, lse + (size_t)bh * T, q + row0 * ldq + (size_t)h * hd,
                 ldq, k + row0 * ldkv + (size_t)g * hd, v + row0 * ldkv + (size_t)g * hd, ldkv,
                 Np ? kp + (size_t)g * hd : NULL, Np ? vp + (size_t)g * hd : NULL, ldp, Np, T, hd, window, scale,
                 eng__cpu_ws_slot(ws, slot_floats(T, window, Np)));
    }
    eng__blas_set_threads(blas);
}

/* One query head: dq written; dk, dv, dkp, dvp (rows of hd for the
 * persistent slots) accumulated. */
static void head_bwd(void *ctx, float *dq, float *dk, float *dv, float *dkp, float *dvp, const float *lse,
                     const float *dout, int ldo, const float *q, int ldq, const float *k, const float *v, int ldkv,
                     const float *kp, const float *vp, int ldp, int Np, int T, int hd, int window, float scale,
                     float *P, float *dP)
{
    for (int r0 = 0; r0 < T; r0 += SWA_BLOCK) {
        const int r1 = r0 + SWA_BLOCK < T ? r0 + SWA_BLOCK : T, m = r1 - r0;
        const int k0 = r0 - window + 1 > 0 ? r0 - window + 1 : 0, nk = r1 - k0, W = Np + nk;
        const float *dob = dout + (size_t)r0 * ldo, *qb = q + (size_t)r0 * ldq;
        scores(ctx, P, W, q, ldq, k, ldkv, kp, ldp, Np, r0, r1, k0, hd, scale);
        for (int i = r0; i < r1; i++) {
            float *row = P + (size_t)(i - r0) * W;
            const int lo = Np + (i - window + 1 > k0 ? i - window + 1 - k0 : 0), hi = Np + i - k0;
            const float l = lse[i];
            for (int j = 0; j < Np; j++)
                row[j] = eng__expf(row[j] - l);
#pragma omp simd
            for (int j = lo; j <= hi; j++)
                row[j] = eng__expf(row[j] - l);
            memset(row + Np, 0, (size_t)(lo - Np) * sizeof *row);
            memset(row + hi + 1, 0, (size_t)(W - hi - 1) * sizeof *row);
        }
        /* dV += P^T dO;  dP = dO V^T */
        if (Np) {
            eng__cpu_matmul(ctx, 1, 0, Np, hd, m, 1.0f, P, W, dob, ldo, 1.0f, dvp, hd);
            eng__cpu_matmul(ctx, 0, 1, m, Np, hd, 1.0f, dob, ldo, vp, ldp, 0.0f, dP, W);
        }
        eng__cpu_matmul(ctx, 1, 0, nk, hd, m, 1.0f, P + Np, W, dob, ldo, 1.0f, dv + (size_t)k0 * ldkv, ldkv);
        eng__cpu_matmul(ctx, 0, 1, m, nk, hd, 1.0f, dob, ldo, v + (size_t)k0 * ldkv, ldkv, 0.0f, dP + Np, W);
        for (int i = 0; i < m; i++) {
            float *p = P + (size_t)i * W;
            const float *dp = dP + (size_t)i * W;
            float dot = 0;
#pragma omp simd reduction(+ : dot)
            for (int j = 0; j < W; j++)
                dot += p[j] * dp[j];
#pragma omp simd
            for (int j = 0; j < W; j++)
                p[j] = p[j] * (dp[j] - dot); /* now dS; 0 where not visible */
        }
        float *dqb = dq + (size_t)r0 * ldq;
        if (Np) {
            eng__cpu_matmul(ctx, 0, 0, m, hd, Np, scale, P, W, kp, ldp, 0.0f, dqb, ldq);
            eng__cpu_matmul(ctx, 1, 0, Np, hd, m, scale, P, W, qb, ldq, 1.0f, dkp, hd);
        }
        eng__cpu_matmul(ctx, 0, 0, m, hd, nk, scale, P + Np, W, k + (size_t)k0 * ldkv, ldkv, Np ? 1.0f : 0.0f, dqb,
                        ldq);
        eng__cpu_matmul(ctx, 1, 0, nk, hd, m, scale, P + Np, W, qb, ldq, 1.0f, dk + (size_t)k0 * ldkv, ldkv);
    }
}

void eng__cpu_swa_bwd(void *ctx, eng_act *dq_a /* (B, T, ldq) = */, eng_act *dk_a /* (B, T, ldkv) = */,
                      eng_act *dv_a /* (B, T, ldkv) = */, float *dkp /* (Np, ldp) += */, float *dvp /* (Np, ldp) += */,
                      const float *lse, const eng_act *dout_a, int ldo, const eng_act *q_a, int ldq, const eng_act *k_a,
                      const eng_act *v_a, int ldkv, const float *kp, const float *vp, int ldp, int Np, int B, int T,
                      int H,
                      int Hkv, int hd, int window, float *ws)
{
    float *dq = (float *)dq_a;
    float *dk = (float *)dk_a;
    float *dv = (float *)dv_a;
    const float *dout = (const float *)dout_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    const float scale = 1.0f / sqrtf((float)hd);
    const int grp = H / Hkv;
    const int nt = eng__cpu_ws_team(ctx, ENG__CPU_WS_SWA);
    float *pslots = ws + (size_t)nt * slot_floats(T, window, Np); /* (B, Hkv, 2, Np, hd) */
    const int blas = eng__blas_threads();
    eng__blas_set_threads(1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) \
    if ((double)B * H * T * (window < T ? window : T) * hd >= ENG_PAR_MIN)
    for (int bg = 0; bg < B * Hkv; bg++) {
        const int b = bg / Hkv, g = bg % Hkv;
        const size_t row0 = (size_t)b * T;
        float *dkg = dk + row0 * ldkv + (size_t)g * hd, *dvg = dv + row0 * ldkv + (size_t)g * hd;
        for (int t = 0; t < T; t++) {
            memset(dkg + (size_t)t * ldkv, 0, (size_t)hd * sizeof *dk);
            memset(dvg + (size_t)t * ldkv, 0, (size_t)hd * sizeof *dv);
        }
        float *sk = pslots + (size_t)bg * 2 * Np * hd, *sv = sk + (size_t)Np * hd;
        memset(sk, 0, (size_t)2 * Np * hd * sizeof *sk);
        float *P = eng__cpu_ws_slot(ws, slot_floats(T, window, Np));
        float *dP = P + (size_t)SWA_BLOCK * (Np + key_span(T, window));
        for (int h = g * grp; h < (g + 1) * grp; h++)
            head_bwd(ctx, dq + row0 * ldq + (size_t)h * hd, dkg, dvg, sk, sv, lse + ((size_t)b * H + h) * T,
                     dout + row0 * ldo + (size_t)h * hd, ldo, q + row0 * ldq + (size_t)h * hd, ldq,
                     k + row0 * ldkv + (size_t)g * hd, v + row0 * ldkv + (size_t)g * hd, ldkv,
                     Np ? kp + (size_t)g * hd : NULL, Np ? vp + (size_t)g * hd : NULL, ldp, Np, T, hd, window, scale, P,
                     dP);
    }
    eng__blas_set_threads(blas);
    /* persistent gradients: sequences added in order */
    for (int b = 0; b < B && Np; b++)
        for (int g = 0; g < Hkv; g++) {
            const float *sk = pslots + ((size_t)b * Hkv + g) * 2 * Np * hd, *sv = sk + (size_t)Np * hd;
            for (int j = 0; j < Np; j++) {
                float *dkr = dkp + (size_t)j * ldp + (size_t)g * hd, *dvr = dvp + (size_t)j * ldp + (size_t)g * hd;
#pragma omp simd
                for (int c = 0; c < hd; c++) {
                    dkr[c] += sk[(size_t)j * hd + c];
                    dvr[c] += sv[(size_t)j * hd + c];
                }
            }
        }
}
