/* attention.c: causal softmax attention, forward and backward, per
 * (sequence, head) with the BLAS doing the products; only the per-row
 * log-sum-exp is kept between the passes, the backward recomputes the
 * probabilities (so memory is O(T) per head, not O(T^2), as a fused GPU
 * kernel would do it).
 *
 * Reference (one head, scale = 1/sqrt(hd)):
 *   S = scale Q K^T,  P = softmax over j <= i (row i),  O = P V,
 *   lse_i = log sum_{j <= i} exp(S_ij)   (kept),  P_ij = exp(S_ij - lse_i)
 *   dV = P^T dO,  dP = dO V^T,  dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik)
 *   dQ = scale dS K,  dK = scale dS^T Q
 * Grouped KV heads: query head h reads key/value head h / (H/Hkv); the key
 * and value gradients of a group sum over its query heads.
 *
 * Rows go in blocks of ATT_BLOCK and a block only multiplies against the
 * keys it can see, which saves close to half of the FLOPs of full T x T
 * products.  Threads: OpenMP over (sequence, head) [forward] and over
 * (sequence, kv head) [backward, so a group's dK/dV have one writer]; the
 * BLAS runs on one thread inside those regions.  Each thread's score and
 * probability blocks (ATT_BLOCK x T each) live in the workspace. */
#include <math.h>
#include <string.h>

#include "engine/cpu/internal.h"

#define ATT_BLOCK 64

/* Both passes' set-up: the scale, the query heads per key/value head, and
 * the team the workspace was sized for, with the BLAS on one thread inside
 * it (blas: its thread count before, restored at the end) */
typedef struct att_run {
    float scale;
    int grp, team, blas;
} att_run;

static att_run run_begin(void *ctx, int H, int Hkv, int hd)
{
    att_run r = {1.0f / sqrtf((float)hd), H / Hkv, eng__cpu_ws_team(ctx, ENG__CPU_WS_ATTENTION),
                 eng__blas_threads()};
    eng__blas_set_threads(1);
    return r;
}

/* one thread's slot: the score and probability blocks */
static size_t slot_floats(int T)
{
    return (size_t)2 * ATT_BLOCK * T;
}

size_t eng__cpu_attention_workspace(void *ctx, int B, int T, int H, int hd)
{
    return eng__cpu_ws_size(ctx, ENG__CPU_WS_ATTENTION, slot_floats(T));
}

/* One head: scores, causal softmax, P V, and the rows' log-sum-exp. */
static void head_fwd(void *ctx, float *o, int ldo, float *lse /* (T) */, const float *q, int ldq, const float *k,
                     const float *v, int ldkv, int T, int hd, float scale, float *P /* (ATT_BLOCK, T) */)
{
    for (int r0 = 0; r0 < T; r0 += ATT_BLOCK) {
        int r1 = r0 + ATT_BLOCK < T ? r0 + ATT_BLOCK : T, mrows = r1 - r0;
        /* S[r0:r1, 0:r1] = scale Q[r0:r1] K[0:r1]^T, rows of stride r1 */
        eng__cpu_matmul(ctx, 0, 1, mrows, r1, hd, scale, q + (size_t)r0 * ldq, ldq, k, ldkv, 0.0f, P, r1);
        for (int i = r0; i < r1; i++) {
            float *row = P + (size_t)(i - r0) * r1;
            float m = row[0], s = 0;
#pragma omp simd reduction(max : m)
            for (int j = 1; j <= i; j++)
                m = row[j] > m ? row[j] : m;
#pragma omp simd reduction(+ : s)
            for (int j = 0; j <= i; j++) {
                row[j] = eng__expf(row[j] - m);
                s += row[j];
            }
            float rs = 1.0f / s;
#pragma omp simd
            for (int j = 0; j <= i; j++)
                row[j] *= rs;
            memset(row + i + 1, 0, (size_t)(r1 - i - 1) * sizeof *row);
            lse[i] = m + logf(s);
        }
        /* O[r0:r1] = P[r0:r1, 0:r1] V[0:r1] */
        eng__cpu_matmul(ctx, 0, 0, mrows, hd, r1, 1.0f, P, r1, v, ldkv, 0.0f, o + (size_t)r0 * ldo, ldo);
    }
}

void eng__cpu_attention_fwd(void *ctx, eng_act *out_a /* (B, T, ldo): H x hd */, int ldo, float *lse /* (B, H, T) */,
                            const eng_act *q_a /* (B, T, ldq): H x hd */, int ldq, const eng_act *k_a /* (B, T,
                                                                                                          ldkv) */,
                            const eng_act *v_a /* (B, T, ldkv) */, int ldkv, int B, int T, int H, int Hkv, int hd,
                            float *ws)
{
    float *out = (float *)out_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    const att_run r = run_begin(ctx, H, Hkv, hd);
#pragma omp parallel for schedule(dynamic, 1) num_threads(r.team) if ((double)B * H * T * T * hd >= ENG_PAR_MIN)
    for (int bh = 0; bh < B * H; bh++) {
        int b = bh / H, h = bh % H;
        size_t row0 = (size_t)b * T;
        head_fwd(ctx, out + row0 * ldo + (size_t)h * hd, ldo, lse + (size_t)bh * T, q + row0 * ldq + (size_t)h * hd,
                 ldq, k + row0 * ldkv + (size_t)(h / r.grp) * hd, v + row0 * ldkv + (size_t)(h / r.grp) * hd, ldkv, T,
                 hd, r.scale, eng__cpu_ws_slot(ws, slot_floats(T)));
    }
    eng__blas_set_threads(r.blas);
}

/* One query head's contribution; dk, dv accumulate (+=), dq is written. */
static void head_bwd(void *ctx, float *dq, float *dk, float *dv, const float *lse /* (T) */, const float *dout, int ldo,
                     const float *q, int ldq, const float *k, const float *v, int ldkv, int T, int hd, float scale,
                     float *P /* (ATT_BLOCK, T) */, float *dP /* (ATT_BLOCK, T) */)
{
    for (int r0 = 0; r0 < T; r0 += ATT_BLOCK) {
        int r1 = r0 + ATT_BLOCK < T ? r0 + ATT_BLOCK : T, m = r1 - r0;
        const float *dob = dout + (size_t)r0 * ldo, *qb = q + (size_t)r0 * ldq;
        /* P[r0:r1, 0:r1] = exp(scale Q K^T - lse), recomputed */
        eng__cpu_matmul(ctx, 0, 1, m, r1, hd, scale, qb, ldq, k, ldkv, 0.0f, P, r1);
        for (int i = r0; i < r1; i++) {
            float *row = P + (size_t)(i - r0) * r1, l = lse[i];
#pragma omp simd
            for (int j = 0; j <= i; j++)
                row[j] = eng__expf(row[j] - l);
            memset(row + i + 1, 0, (size_t)(r1 - i - 1) * sizeof *row);
        }
        /* dV[0:r1] += P^T dO[r0:r1] */
        eng__cpu_matmul(ctx, 1, 0, r1, hd, m, 1.0f, P, r1, dob, ldo, 1.0f, dv, ldkv);
        /* dP = dO[r0:r1] V[0:r1]^T */
        eng__cpu_matmul(ctx, 0, 1, m, r1, hd, 1.0f, dob, ldo, v, ldkv, 0.0f, dP, r1);
        for (int i = r0; i < r1; i++) {
            float *p = P + (size_t)(i - r0) * r1;
            const float *dp = dP + (size_t)(i - r0) * r1;
            float dot = 0;
#pragma omp simd reduction(+ : dot)
            for (int j = 0; j <= i; j++)
                dot += p[j] * dp[j];
#pragma omp simd
            for (int j = 0; j <= i; j++)
                p[j] = p[j] * (dp[j] - dot); /* now dS; 0 above the diagonal */
        }
        /* dQ[r0:r1] = scale dS K[0:r1] */
        eng__cpu_matmul(ctx, 0, 0, m, hd, r1, scale, P, r1, k, ldkv, 0.0f, dq + (size_t)r0 * ldq, ldq);
        /* dK[0:r1] += scale dS^T Q[r0:r1] */
        eng__cpu_matmul(ctx, 1, 0, r1, hd, m, scale, P, r1, qb, ldq, 1.0f, dk, ldkv);
    }
}

void eng__cpu_attention_bwd(void *ctx, eng_act *dq_a /* (B, T, ldq) = */, eng_act *dk_a /* (B, T, ldkv) = */,
                            eng_act *dv_a /* (B, T, ldkv) = */, const float *lse /* (B, H, T) */,
                            const eng_act *dout_a /* (B, T, ldo) */,
                            const eng_act *out /* not read: D comes from P and dP, a row's sum as head_bwd has them */,
                            int ldo, const eng_act *q_a, int ldq, const eng_act *k_a, const eng_act *v_a, int ldkv, int B,
                            int T, int H, int Hkv, int hd, float *ws)
{
    (void)out;
    float *dq = (float *)dq_a;
    float *dk = (float *)dk_a;
    float *dv = (float *)dv_a;
    const float *dout = (const float *)dout_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    const att_run r = run_begin(ctx, H, Hkv, hd);
#pragma omp parallel for schedule(dynamic, 1) num_threads(r.team) if ((double)B * H * T * T * hd >= ENG_PAR_MIN)
    for (int bg = 0; bg < B * Hkv; bg++) {
        int b = bg / Hkv, g = bg % Hkv;
        size_t row0 = (size_t)b * T;
        float *dkg = dk + row0 * ldkv + (size_t)g * hd, *dvg = dv + row0 * ldkv + (size_t)g * hd;
        for (int t = 0; t < T; t++) {
            memset(dkg + (size_t)t * ldkv, 0, (size_t)hd * sizeof *dk);
            memset(dvg + (size_t)t * ldkv, 0, (size_t)hd * sizeof *dv);
        }
        float *P = eng__cpu_ws_slot(ws, slot_floats(T)), *dP = P + (size_t)ATT_BLOCK * T;
        for (int h = g * r.grp; h < (g + 1) * r.grp; h++)
            head_bwd(ctx, dq + row0 * ldq + (size_t)h * hd, dkg, dvg, lse + ((size_t)b * H + h) * T,
                     dout + row0 * ldo + (size_t)h * hd, ldo, q + row0 * ldq + (size_t)h * hd, ldq,
                     k + row0 * ldkv + (size_t)g * hd, v + row0 * ldkv + (size_t)g * hd, ldkv, T, hd, r.scale, P, dP);
    }
    eng__blas_set_threads(r.blas);
}
