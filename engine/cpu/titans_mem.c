/* titans_mem.c: the Titans neural long-term memory (Behrouz et al. 2024),
 * forward and backward through its chunked online training, per
 * (sequence, head).  docs/titans.md derives every line below.
 *
 * Memory M_W: R^D -> R^D.  depth 2: M(x) = W2 silu(W1 x), W1 (Hm, D),
 * W2 (D, Hm); depth 1: M(x) = W x, W (D, D).  Inner loss of token t:
 * l_t(W) = ||M_W(k_t) - v_t||^2, gradient G_t(W) = d l_t / dW.
 * Per-token gates from pre-activations z: theta_t = max_lr sigmoid(z_theta),
 * eta_t = sigmoid(z_eta), alpha_t = sigmoid(z_alpha), a_t = 1 - alpha_t.
 *
 * Chunks of b tokens (the last one of a sequence may be shorter).  With W,
 * S the state at the start of a chunk of n tokens (W = the learned initial
 * weights and S = 0 at the start of a sequence):
 *   reads:   y_t = M_W(q_t) for every t of the chunk (the memory as of the
 *            last completed chunk);
 *   updates: G_t = G_t(W) (all at the chunk-start weights), then token by
 *            token S_t = eta_t S_{t-1} - theta_t G_t,  W_t = a_t W_{t-1} + S_t,
 *            computed in closed form:
 *            W' = aW W + aS S - sum_t theta_t ps_t G_t,   S' = eS S - sum_t theta_t qs_t G_t
 *            with pw_n = ps_n = qs_n = 1 and, going back,
 *            pw_{t-1} = a_t pw_t, ps_{t-1} = eta_t ps_t + pw_{t-1}, qs_{t-1} = eta_t qs_t,
 *            aW = a_1 pw_1, aS = eta_1 ps_1, eS = eta_1 qs_1 (1-based t).
 *   The sums of G_t are matrix products (G_t is a sum of outer products).
 *
 * Backward, chunks in reverse, with P = dL/dW', Q = dL/dS' (zero after
 * the last chunk): the state at each chunk start is read back from
 * `states` (kept by the forward) and the chunk recomputed;
 *   dL/dW = aW P + [reads] + d/dW sum_t <C_t, G_t(W)>,   dL/dS = aS P + eS Q,
 *   C_t = -theta_t (ps_t P + qs_t Q)   (the update's cotangent on G_t),
 * and the gates from the adjoint recursion of the token-by-token form:
 *   dtheta_t = -<ps_t P + qs_t Q, G_t>,  deta_t = <ps_t P + qs_t Q, S_{t-1}>,
 *   da_t = <pw_t P, W_{t-1}>, where the inner products with the
 *   intermediate states follow their own scalar recursions.
 * d/dW, d/dk_t, d/dv_t of <C_t, G_t> are the second-order terms: the
 * gradient of the inner gradient.
 *
 * Threads: OpenMP over (sequence, head), the BLAS on one thread inside; the
 * initial weights' gradient of every unit goes to its own workspace slot,
 * added in sequence order at the end (bit-identical runs). */
#include <math.h>
#include <string.h>

#include "engine/cpu/internal.h"
#include "engine/model/titans_mem.h"

/* the unit's sizes and its scratch's shape: engine/model/titans_mem.h */
typedef eng_tmem_dims mdims;
enum { N_H = ENG_TMEM_N_H, N_D = ENG_TMEM_N_D, N_SCAL = 10 };

static size_t slot_floats(const mdims *m)
{
    return eng_tmem_slot_floats(m, N_SCAL);
}

/* the thread slots, then the initial weights' gradient of every
 * (sequence, head) unit */
size_t eng__cpu_titans_mem_workspace(void *ctx, int B, int T, int H, int hd, int hm, int depth, int chunk)
{
    mdims m = eng_tmem_dims_of(hd, hm, depth, chunk, T);
    return eng__cpu_ws_size(ctx, ENG__CPU_WS_TITANS_MEM, slot_floats(&m)) + (size_t)B * H * m.Pm;
}

static inline float sigm(float x)
{
    return 1.0f / (1.0f + eng__expf(-x));
}

/* One thread's scratch for one chunk. */
typedef struct scratch {
    double *th, *et, *aa, *ps, *pw, *qs, *sg[3]; /* (b) each; sg: the gates' sigmoids */
    float *h[N_H];                                 /* (b, Hm) */
    float *dd[N_D];                                /* (b, D) */
    float *P, *Q, *Pn;                             /* (Pm) */
} scratch;

static void scratch_carve(scratch *s, float *slot, const mdims *m)
{
    double *dp = (double *)slot;
    s->th = dp;
    s->et = dp + m->b;
    s->aa = dp + 2 * m->b;
    s->ps = dp + 3 * m->b;
    s->pw = dp + 4 * m->b;
    s->qs = dp + 5 * m->b;
    for (int i = 0; i < 3; i++)
        s->sg[i] = dp + (6 + i) * m->b;
    float *f = slot + (size_t)N_SCAL * 2 * m->b;
    for (int i = 0; i < N_H; i++, f += m->nH)
        s->h[i] = f;
    for (int i = 0; i < N_D; i++, f += m->nD)
        s->dd[i] = f;
    s->P = f;
    s->Q = f + m->Pm;
    s->Pn = f + 2 * m->Pm;
}

/* Gates of the chunk's n tokens and the closed form's coefficients. */
static void coefficients(scratch *s, const float *gates, int ldg, int H, int h, int n, float max_lr, double *aW,
                         double *aS, double *eS)
{
    for (int t = 0; t < n; t++) {
        const float *g = gates + (size_t)t * ldg;
        double s0 = sigm(g[h]), s1 = sigm(g[H + h]), s2 = sigm(g[2 * H + h]);
        s->sg[0][t] = s0;
        s->sg[1][t] = s1;
        s->sg[2][t] = s2;
        s->th[t] = (double)max_lr * s0;
        s->et[t] = s1;
        s->aa[t] = 1.0 - s2;
    }
    s->pw[n - 1] = s->ps[n - 1] = s->qs[n - 1] = 1.0;
    for (int t = n - 1; t > 0; t--) {
        s->pw[t - 1] = s->aa[t] * s->pw[t];
        s->ps[t - 1] = s->et[t] * s->ps[t] + s->pw[t - 1];
        s->qs[t - 1] = s->et[t] * s->qs[t];
    }
    *aW = s->aa[0] * s->pw[0];
    *aS = s->et[0] * s->ps[0];
    *eS = s->et[0] * s->qs[0];
}

/* silu'(z) and silu''(z) from z and s = sigmoid(z) */
static inline float dsilu(float z, float s)
{
    return s * (1.0f + z * (1.0f - s));
}

static inline float d2silu(float z, float s)
{
    return s * (1.0f - s) * (2.0f + z * (1.0f - 2.0f * s));
}

/* a = silu(z), sz = sigmoid(z) (kept for the derivatives) */
static void silu_rows(float *a, float *sz, const float *z, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        sz[i] = sigm(z[i]);
        a[i] = z[i] * sz[i];
    }
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* x (rows, cols) <- x * c[row] */
static void scale_rows(float *dst, const float *src, const double *c, double mul, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        const float f = (float)(c[r] * mul);
        const float *sr = src + (size_t)r * cols;
        float *dr = dst + (size_t)r * cols;
#pragma omp simd
        for (int j = 0; j < cols; j++)
            dr[j] = sr[j] * f;
    }
}

/* Inner-loss quantities of the chunk at state W:
 * depth 2: Z = K W1^T, A = silu(Z), SZ = sigmoid(Z), E2 = 2 (A W2^T - V),
 *          G = E2 W2, Dl = silu'(Z) G
 * depth 1: E2 = 2 (K W^T - V) */
static void inner(void *ctx, const mdims *m, const float *W, const float *K, const float *V, int ldkv, int n, float *Z,
                  float *A, float *SZ, float *E2, float *G, float *Dl)
{
    const int D = m->D, Hm = m->Hm;
    if (m->depth == 2) {
        const float *W1 = W, *W2 = W + (size_t)Hm * D;
        eng__cpu_matmul(ctx, 0, 1, n, Hm, D, 1.0f, K, ldkv, W1, D, 0.0f, Z, Hm);
        silu_rows(A, SZ, Z, (size_t)n * Hm);
        eng__cpu_matmul(ctx, 0, 1, n, D, Hm, 1.0f, A, Hm, W2, Hm, 0.0f, E2, D);
    } else {
        eng__cpu_matmul(ctx, 0, 1, n, D, D, 1.0f, K, ldkv, W, D, 0.0f, E2, D);
    }
    for (int t = 0; t < n; t++) {
        float *e = E2 + (size_t)t * D;
        const float *v = V + (size_t)t * ldkv;
#pragma omp simd
        for (int c = 0; c < D; c++)
            e[c] = 2.0f * (e[c] - v[c]);
    }
    if (m->depth == 2) {
        const float *W2 = W + (size_t)Hm * D;
        eng__cpu_matmul(ctx, 0, 0, n, Hm, D, 1.0f, E2, D, W2, Hm, 0.0f, G, Hm);
#pragma omp simd
        for (size_t i = 0; i < (size_t)n * Hm; i++)
            Dl[i] = dsilu(Z[i], SZ[i]) * G[i];
    }
}

/* Reads of the chunk: Y = M_W(Q) (rows of ldy); depth 2 leaves Zq, Aq and
 * SZq = sigmoid(Zq). */
static void reads(void *ctx, const mdims *m, const float *W, const float *Qm, int ldq, int n, float *Y, int ldy,
                  float *Zq, float *Aq, float *SZq)
{
    const int D = m->D, Hm = m->Hm;
    if (m->depth == 2) {
        eng__cpu_matmul(ctx, 0, 1, n, Hm, D, 1.0f, Qm, ldq, W, D, 0.0f, Zq, Hm);
        silu_rows(Aq, SZq, Zq, (size_t)n * Hm);
        eng__cpu_matmul(ctx, 0, 1, n, D, Hm, 1.0f, Aq, Hm, W + (size_t)Hm * D, Hm, 0.0f, Y, ldy);
    } else {
        eng__cpu_matmul(ctx, 0, 1, n, D, D, 1.0f, Qm, ldq, W, D, 0.0f, Y, ldy);
    }
}

/* Wout = cw W + cs S - sum_t c_t G_t  (G_t from the chunk's Dl, K, E2, A). */
static void update(void *ctx, const mdims *m, float *Wout, const float *W, double cw, const float *S, double cs,
                   const double *c, const float *K, int ldkv, const float *E2, const float *A, const float *Dl, int n,
                   float *tmpH, float *tmpD)
{
    const int D = m->D, Hm = m->Hm;
    for (size_t i = 0; i < m->Pm; i++)
        Wout[i] = (float)(cw * W[i] + cs * S[i]);
    scale_rows(tmpD, E2, c, 1.0, n, D);
    if (m->depth == 2) {
        scale_rows(tmpH, Dl, c, 1.0, n, Hm);
        /* G1_t = Dl_t k_t^T (Hm, D);  G2_t = E2_t a_t^T (D, Hm) */
        eng__cpu_matmul(ctx, 1, 0, Hm, D, n, -1.0f, tmpH, Hm, K, ldkv, 1.0f, Wout, D);
        eng__cpu_matmul(ctx, 1, 0, D, Hm, n, -1.0f, tmpD, D, A, Hm, 1.0f, Wout + (size_t)Hm * D, Hm);
    } else {
        /* G_t = E2_t k_t^T (D, D) */
        eng__cpu_matmul(ctx, 1, 0, D, D, n, -1.0f, tmpD, D, K, ldkv, 1.0f, Wout, D);
    }
}

static void load_w0(const mdims *m, float *dst, const float *w0, int H, int h)
{
    const size_t D = (size_t)m->D, Hm = (size_t)m->Hm;
    if (m->depth == 2) {
        memcpy(dst, w0 + (size_t)h * Hm * D, Hm * D * sizeof *dst);
        memcpy(dst + Hm * D, w0 + (size_t)H * Hm * D + (size_t)h * D * Hm, D * Hm * sizeof *dst);
    } else {
        memcpy(dst, w0 + (size_t)h * D * D, D * D * sizeof *dst);
    }
}

void eng__cpu_titans_mem_fwd(void *ctx, eng_act *y_a /* (N, ldy): H x hd = */, int ldy,
                             float *states /* (B, H, nc, 2, Pm): W, S at every chunk start */,
                             const eng_act *q_a /* (N,
                                                    ldqkv): H x hd */, const eng_act *k_a, const eng_act *v_a,
                                                    int ldqkv,
                             const eng_act *gates_a /* (N,
                                                        ldg): theta (H), eta (H), alpha (H) pre-activations */, int ldg,
                             const float *w0 /* depth 2: W1 (H, hm, hd), W2 (H, hd, hm); 1: (H, hd, hd) */, int B,
                             int T, int H, int hd, int hm, int depth, int chunk, float max_lr, float *ws)
{
    float *y = (float *)y_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    const float *gates = (const float *)gates_a;
    const mdims m = eng_tmem_dims_of(hd, hm, depth, chunk, T);
    const int nc = m.nc;
    const int blas = eng__blas_threads();
    const int team = eng__cpu_ws_team(ctx, ENG__CPU_WS_TITANS_MEM);
    eng__blas_set_threads(1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) if ((double)B * H * T * m.Pm >= ENG_PAR_MIN)
    for (int bh = 0; bh < B * H; bh++) {
        const int b = bh / H, h = bh % H;
        scratch s;
        scratch_carve(&s, eng__cpu_ws_slot(ws, slot_floats(&m)), &m);
        float *st = states + eng_tmem_states_offset(&m, bh);
        load_w0(&m, st, w0, H, h);
        memset(st + m.Pm, 0, m.Pm * sizeof *st);
        for (int c = 0; c < nc; c++) {
            const int t0 = c * m.b, n = t0 + m.b < T ? m.b : T - t0;
            const size_t r0 = (size_t)b * T + t0;
            const float *W = st + (size_t)c * 2 * m.Pm, *S = W + m.Pm;
            const float *Qc = q + r0 * ldqkv + (size_t)h * hd, *Kc = k + r0 * ldqkv + (size_t)h * hd,
                        *Vc = v + r0 * ldqkv + (size_t)h * hd;
            reads(ctx, &m, W, Qc, ldqkv, n, y + r0 * ldy + (size_t)h * hd, ldy, s.h[0], s.h[1], s.h[5]);
            if (c == nc - 1)
                break; /* the final state is never read */
            float *Z = s.h[0], *A = s.h[1], *G = s.h[2], *Dl = s.h[3], *E2 = s.dd[0];
            inner(ctx, &m, W, Kc, Vc, ldqkv, n, Z, A, s.h[5], E2, G, Dl);
            double aW, aS, eS;
            coefficients(&s, gates + r0 * ldg, ldg, H, h, n, max_lr, &aW, &aS, &eS);
            double gam[512], mu[512]; /* chunk <= 512 (config) */
            for (int t = 0; t < n; t++) {
                gam[t] = s.th[t] * s.ps[t];
                mu[t] = s.th[t] * s.qs[t];
            }
            float *Wn = st + (size_t)(c + 1) * 2 * m.Pm, *Sn = Wn + m.Pm;
            update(ctx, &m, Wn, W, aW, S, aS, gam, Kc, ldqkv, E2, A, Dl, n, s.h[4], s.dd[1]);
            update(ctx, &m, Sn, W, 0.0, S, eS, mu, Kc, ldqkv, E2, A, Dl, n, s.h[4], s.dd[1]);
        }
    }
    eng__blas_set_threads(blas);
}

/* The gates' gradients by the scalar recursions of <P, S_t>, <Q, S_t> and
 * <P, W_t> through the chunk (sP, sQ, wP: their values at its start; pg,
 * qg: <P, G_t>, <Q, G_t>), and the update's coefficients on G_t,
 * c1 = -theta ps, c2 = -theta qs. */
static void gate_adjoints(const scratch *s, int n, const double *pg, const double *qg, double sP, double sQ,
                          double wP, double *dth, double *det, double *da, double *c1, double *c2)
{
    for (int t = 0; t < n; t++) {
        dth[t] = -(s->ps[t] * pg[t] + s->qs[t] * qg[t]);
        det[t] = s->ps[t] * sP + s->qs[t] * sQ;
        da[t] = s->pw[t] * wP;
        sP = s->et[t] * sP - s->th[t] * pg[t];
        sQ = s->et[t] * sQ - s->th[t] * qg[t];
        wP = s->aa[t] * wP + sP;
        c1[t] = -s->th[t] * s->ps[t];
        c2[t] = -s->th[t] * s->qs[t];
    }
}

/* What the backward of a chunk recomputes at its start state W (inner()
 * and the reads' hidden layer), shared by its parts. */
typedef struct chunk_acts {
    const float *Z, *A, *SZ, *G, *Dl; /* (n, Hm): inner()'s, depth 2 */
    const float *E2;                  /* (n, D) */
    const float *Zq, *Aq, *SZq;       /* (n, Hm): the reads' hidden layer, depth 2 */
} chunk_acts;

/* Backward through the update of a depth-2 memory, given P, Q (the state
 * after the chunk): the gates' adjoints dth, det, da, the cotangents of the
 * inner gradients added to Pn (dL/dW), and dk, dv (=). */
static void update_bwd_deep(void *ctx, const mdims *m, scratch *s, const chunk_acts *c, const float *W,
                            const float *S, const float *Kc, int ldqkv, int n, double *dth, double *det, double *da,
                            float *dk, float *dv, int ldd)
{
    const int D = m->D, Hm = m->Hm;
    const size_t Pm = m->Pm;
    const float *Z = c->Z, *A = c->A, *G = c->G, *Dl = c->Dl, *SZ = c->SZ, *E2 = c->E2;
    const float *P = s->P, *Q = s->Q;
    double pg[512], qg[512], c1[512], c2[512];
    const float *W1 = W, *W2 = W + (size_t)Hm * D;
    const float *P1 = P, *P2 = P + (size_t)Hm * D, *Q1 = Q, *Q2 = Q + (size_t)Hm * D;
    float *Pn1 = s->Pn, *Pn2 = s->Pn + (size_t)Hm * D;
    float *RP2 = s->dd[1], *RQ2 = s->dd[2], *UP1 = s->dd[3], *UQ1 = s->dd[4], *Pb = s->dd[5];
    float *SP1 = s->h[6], *SQ1 = s->h[7], *TP2 = s->h[8], *TQ2 = s->h[9], *Zb = s->h[10];
    /* P2 a_t, Q2 a_t, P1 k_t, Q1 k_t */
    eng__cpu_matmul(ctx, 0, 1, n, D, Hm, 1.0f, A, Hm, P2, Hm, 0.0f, RP2, D);
    eng__cpu_matmul(ctx, 0, 1, n, D, Hm, 1.0f, A, Hm, Q2, Hm, 0.0f, RQ2, D);
    eng__cpu_matmul(ctx, 0, 1, n, Hm, D, 1.0f, Kc, ldqkv, P1, D, 0.0f, SP1, Hm);
    eng__cpu_matmul(ctx, 0, 1, n, Hm, D, 1.0f, Kc, ldqkv, Q1, D, 0.0f, SQ1, Hm);
    for (int t = 0; t < n; t++) {
        pg[t] = dot(E2 + (size_t)t * D, RP2 + (size_t)t * D, D) + dot(Dl + (size_t)t * Hm, SP1 + (size_t)t * Hm, Hm);
        qg[t] = dot(E2 + (size_t)t * D, RQ2 + (size_t)t * D, D) + dot(Dl + (size_t)t * Hm, SQ1 + (size_t)t * Hm, Hm);
    }
    /* the gates, through the scalar recursions of <P|Q, state> */
    gate_adjoints(s, n, pg, qg, dot(P, S, Pm), dot(Q, S, Pm), dot(P, W, Pm), dth, det, da, c1, c2);
    /* E2 P2, E2 Q2 (rows: P2^T e2_t), Dl P1, Dl Q1 (rows: P1^T dl_t) */
    eng__cpu_matmul(ctx, 0, 0, n, Hm, D, 1.0f, E2, D, P2, Hm, 0.0f, TP2, Hm);
    eng__cpu_matmul(ctx, 0, 0, n, Hm, D, 1.0f, E2, D, Q2, Hm, 0.0f, TQ2, Hm);
    eng__cpu_matmul(ctx, 0, 0, n, D, Hm, 1.0f, Dl, Hm, P1, D, 0.0f, UP1, D);
    eng__cpu_matmul(ctx, 0, 0, n, D, Hm, 1.0f, Dl, Hm, Q1, D, 0.0f, UQ1, D);
    for (int t = 0; t < n; t++) {
        const float a1 = (float)c1[t], a2 = (float)c2[t];
        float *r = RP2 + (size_t)t * D, *u = UP1 + (size_t)t * D;
        const float *rq = RQ2 + (size_t)t * D, *uq = UQ1 + (size_t)t * D;
#pragma omp simd
        for (int j = 0; j < D; j++) {
            r[j] = a1 * r[j] + a2 * rq[j]; /* r_t = C2_t a_t */
            u[j] = a1 * u[j] + a2 * uq[j]; /* C1_t^T dl_t: dk, direct */
        }
        float *sp = SP1 + (size_t)t * Hm, *tp = TP2 + (size_t)t * Hm, *zb = Zb + (size_t)t * Hm;
        const float *sq = SQ1 + (size_t)t * Hm, *tq = TQ2 + (size_t)t * Hm, *z = Z + (size_t)t * Hm,
                    *g = G + (size_t)t * Hm, *sz = SZ + (size_t)t * Hm;
#pragma omp simd
        for (int j = 0; j < Hm; j++) {
            float sv = a1 * sp[j] + a2 * sq[j];      /* s_t = C1_t k_t */
            zb[j] = d2silu(z[j], sz[j]) * g[j] * sv; /* through dl = silu'(z) g */
            sp[j] = dsilu(z[j], sz[j]) * sv;         /* gs: d/dg */
            tp[j] = a1 * tp[j] + a2 * tq[j];         /* C2_t^T e2_t: d/da, direct */
        }
    }
    float *GS = SP1;
    /* d/dE2 = r + W2 gs;  Pb = d/dp = 2 d/dE2 */
    eng__cpu_matmul(ctx, 0, 1, n, D, Hm, 1.0f, GS, Hm, W2, Hm, 1.0f, RP2, D);
    for (size_t i = 0; i < (size_t)n * D; i++)
        Pb[i] = 2.0f * RP2[i];
    /* W2 from g = W2^T E2, and from p = W2 a */
    eng__cpu_matmul(ctx, 1, 0, D, Hm, n, 1.0f, E2, D, GS, Hm, 1.0f, Pn2, Hm);
    eng__cpu_matmul(ctx, 1, 0, D, Hm, n, 1.0f, Pb, D, A, Hm, 1.0f, Pn2, Hm);
    /* d/da = direct + W2^T Pb;  d/dz += silu'(z) d/da */
    eng__cpu_matmul(ctx, 0, 0, n, Hm, D, 1.0f, Pb, D, W2, Hm, 1.0f, TP2, Hm);
    for (size_t i = 0; i < (size_t)n * Hm; i++)
        Zb[i] += dsilu(Z[i], SZ[i]) * TP2[i];
    /* z = W1 k */
    eng__cpu_matmul(ctx, 1, 0, Hm, D, n, 1.0f, Zb, Hm, Kc, ldqkv, 1.0f, Pn1, D);
    eng__cpu_matmul(ctx, 0, 0, n, D, Hm, 1.0f, Zb, Hm, W1, D, 1.0f, UP1, D);
    for (int t = 0; t < n; t++) {
        float *dkr = dk + (size_t)t * ldd, *dvr = dv + (size_t)t * ldd;
        const float *u = UP1 + (size_t)t * D, *pb = Pb + (size_t)t * D;
        for (int j = 0; j < D; j++) {
            dkr[j] = u[j];
            dvr[j] = -pb[j];
        }
    }
}

/* The same for a depth-1 (linear) memory. */
static void update_bwd_linear(void *ctx, const mdims *m, scratch *s, const chunk_acts *c, const float *W,
                              const float *S, const float *Kc, int ldqkv, int n, double *dth, double *det, double *da,
                              float *dk, float *dv, int ldd)
{
    const int D = m->D;
    const size_t Pm = m->Pm;
    const float *E2 = c->E2, *P = s->P, *Q = s->Q;
    float *Pn = s->Pn;
    double pg[512], qg[512], c1[512], c2[512];
    float *RP = s->dd[1], *RQ = s->dd[2], *UP = s->dd[3], *UQ = s->dd[4];
    eng__cpu_matmul(ctx, 0, 1, n, D, D, 1.0f, Kc, ldqkv, P, D, 0.0f, RP, D);
    eng__cpu_matmul(ctx, 0, 1, n, D, D, 1.0f, Kc, ldqkv, Q, D, 0.0f, RQ, D);
    for (int t = 0; t < n; t++) {
        pg[t] = dot(E2 + (size_t)t * D, RP + (size_t)t * D, D);
        qg[t] = dot(E2 + (size_t)t * D, RQ + (size_t)t * D, D);
    }
    gate_adjoints(s, n, pg, qg, dot(P, S, Pm), dot(Q, S, Pm), dot(P, W, Pm), dth, det, da, c1, c2);
    eng__cpu_matmul(ctx, 0, 0, n, D, D, 1.0f, E2, D, P, D, 0.0f, UP, D);
    eng__cpu_matmul(ctx, 0, 0, n, D, D, 1.0f, E2, D, Q, D, 0.0f, UQ, D);
    for (int t = 0; t < n; t++) {
        const float a1 = (float)c1[t], a2 = (float)c2[t];
        float *r = RP + (size_t)t * D, *u = UP + (size_t)t * D;
        const float *rq = RQ + (size_t)t * D, *uq = UQ + (size_t)t * D;
#pragma omp simd
        for (int j = 0; j < D; j++) {
            r[j] = 2.0f * (a1 * r[j] + a2 * rq[j]); /* Pb = 2 C_t k_t */
            u[j] = a1 * u[j] + a2 * uq[j];          /* C_t^T e2_t */
        }
    }
    float *Pb = RP;
    eng__cpu_matmul(ctx, 1, 0, D, D, n, 1.0f, Pb, D, Kc, ldqkv, 1.0f, Pn, D);
    eng__cpu_matmul(ctx, 0, 0, n, D, D, 1.0f, Pb, D, W, D, 1.0f, UP, D);
    for (int t = 0; t < n; t++) {
        float *dkr = dk + (size_t)t * ldd, *dvr = dv + (size_t)t * ldd;
        const float *u = UP + (size_t)t * D, *pb = Pb + (size_t)t * D;
        for (int j = 0; j < D; j++) {
            dkr[j] = u[j];
            dvr[j] = -pb[j];
        }
    }
}

/* The gates' pre-activation gradients (=) from the adjoints of theta =
 * max_lr s0, eta = s1, a = 1 - s2. */
static void gates_bwd(const scratch *s, const double *dth, const double *det, const double *da, float *dgates,
                      int lddg, int H, int h, int n, float max_lr)
{
    for (int t = 0; t < n; t++) {
        float *dg = dgates + (size_t)t * lddg;
        const double s0 = s->sg[0][t], s1 = s->sg[1][t], s2 = s->sg[2][t];
        dg[h] = (float)(dth[t] * max_lr * s0 * (1 - s0));
        dg[H + h] = (float)(det[t] * s1 * (1 - s1));
        dg[2 * H + h] = (float)(-da[t] * s2 * (1 - s2));
    }
}

/* Backward of the reads y = M_W(q): dL/dW added to s->Pn, dq (=). */
static void reads_bwd(void *ctx, const mdims *m, scratch *s, const chunk_acts *c, const float *W, const float *Qc,
                      int ldqkv, const float *dY, int ldy, float *dq, int ldd, int n)
{
    const int D = m->D, Hm = m->Hm;
    float *Pn = s->Pn;
    if (m->depth == 2) {
        const float *W1 = W, *W2 = W + (size_t)Hm * D;
        float *Pn1 = Pn, *Pn2 = Pn + (size_t)Hm * D, *dAq = s->h[11];
        eng__cpu_matmul(ctx, 1, 0, D, Hm, n, 1.0f, dY, ldy, c->Aq, Hm, 1.0f, Pn2, Hm);
        eng__cpu_matmul(ctx, 0, 0, n, Hm, D, 1.0f, dY, ldy, W2, Hm, 0.0f, dAq, Hm);
        for (size_t i = 0; i < (size_t)n * Hm; i++)
            dAq[i] *= dsilu(c->Zq[i], c->SZq[i]);
        eng__cpu_matmul(ctx, 1, 0, Hm, D, n, 1.0f, dAq, Hm, Qc, ldqkv, 1.0f, Pn1, D);
        eng__cpu_matmul(ctx, 0, 0, n, D, Hm, 1.0f, dAq, Hm, W1, D, 0.0f, dq, ldd);
    } else {
        eng__cpu_matmul(ctx, 1, 0, D, D, n, 1.0f, dY, ldy, Qc, ldqkv, 1.0f, Pn, D);
        eng__cpu_matmul(ctx, 0, 0, n, D, D, 1.0f, dY, ldy, W, D, 0.0f, dq, ldd);
    }
}

/* Backward of one chunk.  In: s->P, s->Q = dL/d(state after the chunk)
 * (have_pq = 0: zero).  Out: s->P, s->Q = dL/d(state at the chunk start);
 * dq, dk, dv rows (=) and the gates' gradients (=).  The chunk is first
 * recomputed from its start state, then taken back in reverse: the
 * update (its inner gradients and gates), then the reads. */
static void chunk_bwd(void *ctx, const mdims *m, scratch *s, int have_pq, const float *W, const float *S,
                      const float *Qc, const float *Kc, const float *Vc, int ldqkv, const float *dY, int ldy,
                      const float *gates, int ldg, float *dgates, int lddg, float *dq, float *dk, float *dv, int ldd,
                      int H, int h, int n, float max_lr)
{
    const int D = m->D, Hm = m->Hm;
    const size_t Pm = m->Pm;
    float *Z = s->h[0], *A = s->h[1], *G = s->h[2], *Dl = s->h[3], *Zq = s->h[4], *Aq = s->h[5];
    float *SZ = s->h[12], *SZq = s->h[13];
    float *E2 = s->dd[0];
    inner(ctx, m, W, Kc, Vc, ldqkv, n, Z, A, SZ, E2, G, Dl);
    if (m->depth == 2) {
        eng__cpu_matmul(ctx, 0, 1, n, Hm, D, 1.0f, Qc, ldqkv, W, D, 0.0f, Zq, Hm);
        silu_rows(Aq, SZq, Zq, (size_t)n * Hm);
    }
    const chunk_acts acts = {Z, A, SZ, G, Dl, E2, Zq, Aq, SZq};
    double aW, aS, eS;
    coefficients(s, gates, ldg, H, h, n, max_lr, &aW, &aS, &eS);
    float *P = s->P, *Q = s->Q, *Pn = s->Pn;
    /* dL/dW starts as aW P (zero without P) */
    if (have_pq)
        for (size_t i = 0; i < Pm; i++)
            Pn[i] = (float)(aW * P[i]);
    else
        memset(Pn, 0, Pm * sizeof *Pn);
    double dth[512], det[512], da[512];
    if (have_pq && m->depth == 2) {
        update_bwd_deep(ctx, m, s, &acts, W, S, Kc, ldqkv, n, dth, det, da, dk, dv, ldd);
    } else if (have_pq) {
        update_bwd_linear(ctx, m, s, &acts, W, S, Kc, ldqkv, n, dth, det, da, dk, dv, ldd);
    } else {
        for (int t = 0; t < n; t++) {
            dth[t] = det[t] = da[t] = 0;
            memset(dk + (size_t)t * ldd, 0, (size_t)D * sizeof *dk);
            memset(dv + (size_t)t * ldd, 0, (size_t)D * sizeof *dv);
        }
    }
    gates_bwd(s, dth, det, da, dgates, lddg, H, h, n, max_lr);
    reads_bwd(ctx, m, s, &acts, W, Qc, ldqkv, dY, ldy, dq, ldd, n);
    /* state gradients at the chunk start */
    if (have_pq)
        for (size_t i = 0; i < Pm; i++)
            Q[i] = (float)(aS * P[i] + eS * Q[i]);
    else
        memset(Q, 0, Pm * sizeof *Q);
    s->P = Pn;
    s->Pn = P;
}

void eng__cpu_titans_mem_bwd(void *ctx, eng_act *dq_a /* (N, ldd) = */, eng_act *dk_a, eng_act *dv_a, int ldd,
                             eng_act *dgates_a /* (N, lddg) = */, int lddg, float *dw0 /* like w0, += */,
                             const eng_act *dy_a /* (N, ldy) */, int ldy, const float *states, const eng_act *q_a,
                             const eng_act *k_a, const eng_act *v_a, int ldqkv, const eng_act *gates_a, int ldg, int B,
                             int T,
                             int H, int hd, int hm, int depth, int chunk, float max_lr, float *ws)
{
    float *dq = (float *)dq_a;
    float *dk = (float *)dk_a;
    float *dv = (float *)dv_a;
    float *dgates = (float *)dgates_a;
    const float *dy = (const float *)dy_a;
    const float *q = (const float *)q_a;
    const float *k = (const float *)k_a;
    const float *v = (const float *)v_a;
    const float *gates = (const float *)gates_a;
    const mdims m = eng_tmem_dims_of(hd, hm, depth, chunk, T);
    const int nc = m.nc;
    const int nt = eng__cpu_ws_team(ctx, ENG__CPU_WS_TITANS_MEM);
    float *dslots = ws + (size_t)nt * slot_floats(&m); /* (B, H, Pm) */
    const int blas = eng__blas_threads();
    eng__blas_set_threads(1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if ((double)B * H * T * m.Pm >= ENG_PAR_MIN)
    for (int bh = 0; bh < B * H; bh++) {
        const int b = bh / H, h = bh % H;
        scratch s;
        scratch_carve(&s, eng__cpu_ws_slot(ws, slot_floats(&m)), &m);
        const float *st = states + eng_tmem_states_offset(&m, bh);
        for (int c = nc - 1; c >= 0; c--) {
            const int t0 = c * m.b, n = t0 + m.b < T ? m.b : T - t0;
            const size_t r0 = (size_t)b * T + t0, col = (size_t)h * hd;
            const float *W = st + (size_t)c * 2 * m.Pm, *S = W + m.Pm;
            chunk_bwd(ctx, &m, &s, c < nc - 1, W, S, q + r0 * ldqkv + col, k + r0 * ldqkv + col, v + r0 * ldqkv + col,
                      ldqkv, dy + r0 * ldy + col, ldy, gates + r0 * ldg, ldg, dgates + r0 * lddg, lddg,
                      dq + r0 * ldd + col, dk + r0 * ldd + col, dv + r0 * ldd + col, ldd, H, h, n, max_lr);
        }
        memcpy(dslots + (size_t)bh * m.Pm, s.P, m.Pm * sizeof *dslots);
    }
    eng__blas_set_threads(blas);
    /* the initial weights' gradient: sequences added in order */
    const size_t D = (size_t)hd, Hm = (size_t)m.Hm;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *src = dslots + ((size_t)b * H + h) * m.Pm;
            if (depth == 2) {
                float *d1 = dw0 + (size_t)h * Hm * D, *d2 = dw0 + (size_t)H * Hm * D + (size_t)h * D * Hm;
                for (size_t i = 0; i < Hm * D; i++)
                    d1[i] += src[i];
                for (size_t i = 0; i < D * Hm; i++)
                    d2[i] += src[Hm * D + i];
            } else {
                float *d1 = dw0 + (size_t)h * D * D;
                for (size_t i = 0; i < D * D; i++)
                    d1[i] += src[i];
            }
        }
}
