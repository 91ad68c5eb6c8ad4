/* cases_core.h: the cases of the core ops (every backend fills them) for
 * tests/engine/backend/test_backend_ops: matmul, embedding, rmsnorm, rope,
 * attention, swiglu, gate, cross-entropy, axpy, adamw and sumsq, each with
 * its double-precision reference.  Header-only, for test_backend_ops.c. */
#ifndef TLM_TESTS_ENGINE_BACKEND_CASES_CORE_H
#define TLM_TESTS_ENGINE_BACKEND_CASES_CORE_H

#include <stdlib.h>

#include "tests/engine/backend/harness.h"

/* ------------------------------------------------------------ matmul */
typedef struct mm_ctx {
    int ta, tb, M, N, K;
} mm_ctx;
static void ref_mm(const double *in, double *out, void *vc)
{
    mm_ctx *c = vc;
    const double *A = in, *B = in + c->M * c->K;
    for (int i = 0; i < c->M; i++)
        for (int j = 0; j < c->N; j++) {
            double s = 0;
            for (int k = 0; k < c->K; k++)
                s += (c->ta ? A[k * c->M + i] : A[i * c->K + k]) * (c->tb ? B[j * c->K + k] : B[k * c->N + j]);
            out[i * c->N + j] = s;
        }
}
/* a: ta, tb; then the float offsets of A, B and C in their buffers and
 * extra columns in every row stride (0 0 0 0: the arena's 64-byte aligned
 * buffers, packed rows).  Offsets of 1 and 2 floats give the device
 * pointers cuBLASLt sees only 4- or 8-byte alignment.  a[6] = 1: the
 * product goes out of place through matmul_add (X = C0 in C's buffer, D a
 * buffer of its own at the same offset, its padding holding other values):
 * X and D's padding come back as they were. */
static void tb_case_matmul(tcase *t, const int *a, double unused)
{
    const int ta = a[0], tb = a[1], oa = a[2], ob = a[3], oc = a[4], pad = a[5], add = a[6];
    enum { M = 13, N = 11, K = 17 };
    mm_ctx c = {ta, tb, M, N, K};
    const int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
    const int ra = ta ? K : M, rb = tb ? N : K; /* stored rows */
    float *in = t_floats(t, M * K + K * N), *Ab = t_floats(t, oa + ra * lda), *Bb = t_floats(t, ob + rb * ldb),
          *Cb = t_floats(t, oc + M * ldc), *C0 = t_floats(t, M * N), *C = t_floats(t, M * N);
    float *Db = add ? t_floats(t, oc + M * ldc) : Cb, *D0 = add ? t_floats(t, oc + M * ldc) : NULL;
    if (!t->fits)
        return;
    fill(in, M * K + K * N, 1);
    fill(C0, M * N, 1);
    /* the packed operands into their strided, offset buffers */
    for (int r = 0; r < ra; r++)
        for (int q = 0; q < (ta ? M : K); q++)
            Ab[oa + r * lda + q] = in[r * (ta ? M : K) + q];
    for (int r = 0; r < rb; r++)
        for (int q = 0; q < (tb ? K : N); q++)
            Bb[ob + r * ldb + q] = in[M * K + r * (tb ? K : N) + q];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            Cb[oc + i * ldc + j] = C0[i * N + j];
    /* C = 2 op(A) op(B) + 1 C0: accumulate and alpha */
    if (add) {
        fill(D0, oc + M * ldc, 1);
        memcpy(Db, D0, (size_t)(oc + M * ldc) * sizeof *Db);
        OP(t, matmul_add, ta, tb, M, N, K, 2.0f, D(t, Ab + oa), lda, D(t, Bb + ob), ldb, D(t, Cb + oc), D(t, Db + oc),
           ldc, eng_mm_f32());
        t_out(t, Cb, oc + M * ldc, T_FWD, "X");
        t_out(t, Db, oc + M * ldc, T_FWD, "D");
    } else {
        OP(t, matmul, ta, tb, M, N, K, 2.0f, D(t, Ab + oa), lda, D(t, Bb + ob), ldb, 1.0f, D(t, Cb + oc), ldc,
           eng_mm_f32());
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            C[i * N + j] = Db[oc + i * ldc + j];
    t_out(t, C, M * N, T_FWD, "C");
    if (!REF(t))
        return;
    double ref[M * N];
    double din[M * K + K * N];
    for (int i = 0; i < M * K + K * N; i++)
        din[i] = in[i];
    ref_mm(din, ref, &c);
    for (int i = 0; i < M * N; i++)
        ref[i] = 2 * ref[i] + C0[i];
    TAP_OK(rel_err(C, ref, M * N) < TOL_FWD, "matmul%s ta=%d tb=%d alpha/beta, offsets %d %d %d, pad %d: rel err %.2e",
           add ? "_add" : "", ta, tb, oa, ob, oc, pad, rel_err(C, ref, M * N));
    if (add) {
        int kept = 1;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < ldc; j++) {
                const int at = oc + i * ldc + j;
                kept &= Cb[at] == (j < N ? C0[i * N + j] : 0.0f) && (j < N || Db[at] == D0[at]);
            }
        TAP_OK(kept, "matmul_add ta=%d tb=%d: X unchanged, D's columns past N kept", ta, tb);
    }
}

/* K = 0: C = beta C (a device backend cannot hand cuBLASLt k = 0; the
 * CUDA backend scales C with its own kernel), in a strided C; a: beta
 * times 4 */
static void tb_case_matmul_k0(tcase *t, const int *a, double unused)
{
    enum { M = 7, N = 9, ldc = 12 };
    const float beta = (float)a[0] / 4;
    float *A = t_floats(t, 1), *B = t_floats(t, 1), *C = t_floats(t, M * ldc), *C0 = t_floats(t, M * ldc);
    if (!t->fits)
        return;
    fill(C0, M * ldc, 1);
    for (int i = 0; i < M * ldc; i++)
        C[i] = C0[i];
    OP(t, matmul, 0, 0, M, N, 0, 2.0f, D(t, A), 1, D(t, B), N, beta, D(t, C), ldc, eng_mm_f32());
    t_out(t, C, M * ldc, T_FWD, "C");
    if (!REF(t))
        return;
    double e = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < ldc; j++) /* the columns past N kept */
            e = fmax(e, fabs(C[i * ldc + j] - (j < N ? beta * C0[i * ldc + j] : C0[i * ldc + j])));
    TAP_OK(e == 0, "matmul K=0: C = %g C, columns past N kept: max abs err %.2e", beta, e);
}

/* ------------------------------------------------------------ embedding */
typedef struct emb_ctx {
    const int32_t *tok;
    int N, C;
} emb_ctx;
static void ref_emb(const double *in, double *out, void *vc)
{
    emb_ctx *c = vc;
    for (int n = 0; n < c->N; n++)
        for (int j = 0; j < c->C; j++)
            out[n * c->C + j] = in[c->tok[n] * c->C + j];
}
/* a: V, N, C (0 0 0: 7, 9, 5 with fixed tokens); the backward's CUDA
 * kernel is a thread per channel in blocks of 128: C = 200 spans two */
static void tb_case_embedding(tcase *t, const int *a, double unused)
{
    static const int32_t tok0[9] = {3, 1, 3, 0, 6, 6, 2, 3, 5};
    const int V = a[0] ? a[0] : 7, N = a[1] ? a[1] : 9, C = a[2] ? a[2] : 5;
    int32_t toks[64];
    for (int n = 0; n < N && n < 64; n++)
        toks[n] = a[0] ? (int32_t)((n * 5 + 3) % V) : tok0[n]; /* repeats, and the last token id */
    if (a[0] && N > 1)
        toks[N - 1] = V - 1;
    int32_t *tok = N <= 64 ? t_ints(t, toks, (size_t)N) : NULL;
    float *w = t_floats(t, (size_t)V * C), *out = t_floats(t, (size_t)N * C), *dout = t_floats(t, (size_t)N * C),
          *dw = t_floats(t, (size_t)V * C);
    static double g[MAXIN];
    if (!t->fits || !tok || V * C > MAXIN || N * C > MAXOUT) {
        TAP_OK(0, "embedding V=%d N=%d C=%d fits the test", V, N, C);
        return;
    }
    t_act(t, out, (size_t)N * C);
    t_act(t, dout, (size_t)N * C);
    emb_ctx c = {tok, N, C};
    fill(w, (size_t)V * C, 1);
    fill(dout, (size_t)N * C, 1);
    OP(t, embedding_fwd, D(t, out), D(t, w), D(t, tok), N, C);
    t_out(t, out, (size_t)N * C, T_FWD, "out");
    if (REF(t))
        TAP_OK(fwd_err(ref_emb, &c, w, V * C, out, N * C) == 0, "embedding fwd exact (V=%d N=%d C=%d)", V, N, C);
    OP(t, embedding_bwd, D(t, dw), D(t, dout), D(t, tok), N, C);
    t_out(t, dw, (size_t)V * C, T_BWD, "dwte");
    if (!REF(t))
        return;
    fd_grad(ref_emb, &c, w, V * C, dout, N * C, g);
    TAP_OK(rel_err(dw, g, (size_t)V * C) < TOL_BWD, "embedding bwd (repeated tokens, V=%d N=%d C=%d): rel err %.2e",
           V, N, C, rel_err(dw, g, (size_t)V * C));
}

/* ------------------------------------------------------------ rmsnorm */
typedef struct rms_ctx {
    int N, C;
    double eps;
} rms_ctx;
static void ref_rms(const double *in, double *out, void *vc)
{
    rms_ctx *c = vc;
    const double *x = in, *w = in + c->N * c->C;
    for (int n = 0; n < c->N; n++) {
        double ss = 0;
        for (int j = 0; j < c->C; j++)
            ss += x[n * c->C + j] * x[n * c->C + j];
        double r = 1 / sqrt(ss / c->C + c->eps);
        for (int j = 0; j < c->C; j++)
            out[n * c->C + j] = x[n * c->C + j] * r * w[j];
    }
}
/* a: N, C (0 0: 6, 19); C = 700 is a row longer than the CUDA kernel's
 * block of 256 (several elements a thread in its reduction) and 22 blocks
 * of the gain's gradient */
static void tb_case_rmsnorm(tcase *t, const int *a, double unused)
{
    const int N = a[0] ? a[0] : 6, C = a[1] ? a[1] : 19;
    rms_ctx c = {N, C, 1e-5};
    const size_t nx = (size_t)N * C + C;
    float *in = t_floats(t, nx), *out = t_floats(t, (size_t)N * C), *rstd = t_floats(t, (size_t)N),
          *dout = t_floats(t, (size_t)N * C), *dg = t_floats(t, nx);
    static double g[MAXIN];
    if (!t->fits || nx > MAXIN) {
        TAP_OK(0, "rmsnorm N=%d C=%d fits the test", N, C);
        return;
    }
    t_act(t, in, (size_t)N * C); /* x; the gain after it is a weight */
    t_act(t, out, (size_t)N * C);
    t_act(t, dout, (size_t)N * C);
    t_act(t, dg, (size_t)N * C);
    fill(in, nx, 1);
    fill(dout, (size_t)N * C, 1);
    OP(t, rmsnorm_fwd, D(t, out), D(t, rstd), D(t, in), D(t, in + N * C), N, C, 1e-5f);
    t_out(t, out, (size_t)N * C, T_FWD, "out");
    t_out(t, rstd, (size_t)N, T_FWD, "rstd");
    if (REF(t))
        TAP_OK(fwd_err(ref_rms, &c, in, (int)nx, out, N * C) < TOL_FWD, "rmsnorm fwd (N=%d C=%d)", N, C);
    for (size_t i = 0; i < nx; i++)
        dg[i] = 0.5f; /* both gradients accumulate: start from 0.5 */
    OP(t, rmsnorm_bwd, D(t, dg), D(t, dg + N * C), D(t, dout), D(t, in), D(t, in + N * C), D(t, rstd), N, C);
    for (size_t i = 0; i < nx; i++)
        dg[i] -= 0.5f;
    t_out(t, dg, nx, T_BWD, "dx, dw");
    if (!REF(t))
        return;
    fd_grad(ref_rms, &c, in, (int)nx, dout, N * C, g);
    TAP_OK(rel_err(dg, g, (size_t)N * C) < TOL_BWD, "rmsnorm bwd dx (+=, N=%d C=%d): rel err %.2e", N, C,
           rel_err(dg, g, (size_t)N * C));
    TAP_OK(rel_err(dg + N * C, g + N * C, C) < TOL_BWD, "rmsnorm bwd dw (+=): rel err %.2e",
           rel_err(dg + N * C, g + N * C, C));
}

/* ------------------------------------------------------------ rope */
typedef struct rope_ctx {
    int N, T, H, hd, ld;
    double theta;
} rope_ctx;
static void ref_rope(const double *in, double *out, void *vc)
{
    rope_ctx *c = vc;
    int h2 = c->hd / 2;
    for (int i = 0; i < c->N * c->ld; i++)
        out[i] = in[i];
    for (int n = 0; n < c->N; n++)
        for (int h = 0; h < c->H; h++)
            for (int i = 0; i < h2; i++) {
                double a = (n % c->T) * pow(c->theta, -2.0 * i / c->hd);
                const double *x = in + n * c->ld + h * c->hd;
                double *y = out + n * c->ld + h * c->hd;
                y[i] = x[i] * cos(a) - x[i + h2] * sin(a);
                y[i + h2] = x[i + h2] * cos(a) + x[i] * sin(a);
            }
}
static void tb_case_rope(tcase *t, const int *a, double unused)
{
    enum { T = 5, N = 10, H = 3, hd = 6, ld = 23 }; /* 2 sequences; ld > H*hd: a slice */
    rope_ctx c = {N, T, H, hd, ld, 10000.0};
    float *x = t_floats(t, N * ld), *cs = t_floats(t, T * hd), *dout = t_floats(t, N * ld), *d = t_floats(t, N * ld),
          *y = t_floats(t, N * ld);
    if (!t->fits)
        return;
    t_act(t, y, N * ld);
    t_act(t, d, N * ld);
    double g[N * ld];
    for (int s = 0; s < T; s++)
        for (int i = 0; i < hd / 2; i++) {
            double an = s * pow(10000.0, -2.0 * i / hd);
            cs[s * hd + i] = (float)cos(an);
            cs[s * hd + hd / 2 + i] = (float)sin(an);
        }
    fill(x, N * ld, 1);
    fill(dout, N * ld, 1);
    for (int i = 0; i < N * ld; i++)
        y[i] = x[i];
    OP(t, rope_fwd, D(t, y), ld, N, T, H, hd, D(t, cs));
    t_out(t, y, N * ld, T_FWD, "x");
    if (REF(t))
        TAP_OK(fwd_err(ref_rope, &c, x, N * ld, y, N * ld) < TOL_FWD,
               "rope fwd (strided rows, columns past H*hd kept)");
    for (int i = 0; i < N * ld; i++)
        d[i] = dout[i];
    OP(t, rope_bwd, D(t, d), ld, N, T, H, hd, D(t, cs));
    t_out(t, d, N * ld, T_BWD, "dx");
    if (!REF(t))
        return;
    fd_grad(ref_rope, &c, x, N * ld, dout, N * ld, g);
    TAP_OK(rel_err(d, g, N * ld) < TOL_BWD, "rope bwd: rel err %.2e", rel_err(d, g, N * ld));
}

/* ------------------------------------------------------------ attention */
typedef struct att_ctx {
    int B, T, H, Hkv, hd;
} att_ctx;
/* in: q (B,T,H,hd) | k (B,T,Hkv,hd) | v (B,T,Hkv,hd); out (B,T,H,hd) */
static void ref_att(const double *in, double *out, void *vc)
{
    att_ctx *c = vc;
    int B = c->B, T = c->T, H = c->H, Hk = c->Hkv, hd = c->hd;
    const double *q = in, *k = q + B * T * H * hd, *v = k + B * T * Hk * hd;
    double s[512];
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int g = h / (H / Hk);
            for (int i = 0; i < T; i++) {
                double m = -1e300, z = 0;
                for (int j = 0; j <= i; j++) {
                    double a = 0;
                    for (int e = 0; e < hd; e++)
                        a += q[((b * T + i) * H + h) * hd + e] * k[((b * T + j) * Hk + g) * hd + e];
                    s[j] = a / sqrt((double)hd);
                    m = fmax(m, s[j]);
                }
                for (int j = 0; j <= i; j++)
                    z += (s[j] = exp(s[j] - m));
                for (int e = 0; e < hd; e++) {
                    double o = 0;
                    for (int j = 0; j <= i; j++)
                        o += s[j] / z * v[((b * T + j) * Hk + g) * hd + e];
                    out[((b * T + i) * H + h) * hd + e] = o;
                }
            }
        }
}
/* a: B, T, H, Hkv, hd; a[5] 1: no finite differences (a shape too large
 * for them: the backward is compared across backends only, the CPU's is
 * checked on the smaller shapes) */
static void tb_case_attention(tcase *t, const int *a, double unused)
{
    const int B = a[0], T = a[1], H = a[2], Hkv = a[3], hd = a[4], no_fd = a[5];
    att_ctx c = {B, T, H, Hkv, hd};
    int nq = B * T * H * hd, nk = B * T * Hkv * hd, nin = nq + 2 * nk;
    static double g[MAXIN];
    float *in = t_floats(t, nin), *out = t_floats(t, nq), *lse = t_floats(t, (size_t)B * H * T),
          *dout = t_floats(t, nq), *dg = t_floats(t, nin);
    float *ws = t_floats(t, t->o->attention_workspace(t->ctx, B, T, H, hd));
    if (!t->fits || nin > MAXIN) {
        TAP_OK(0, "attention workspace fits the test");
        return;
    }
    t_act(t, in, nin);
    t_act(t, out, nq);
    t_act(t, dout, nq);
    t_act(t, dg, nin);
    fill(in, nin, 1.5);
    fill(dout, nq, 1);
    OP(t, attention_fwd, D(t, out), H * hd, D(t, lse), D(t, in), H * hd, D(t, in + nq), D(t, in + nq + nk), Hkv * hd,
       B, T, H, Hkv, hd, D(t, ws));
    t_out(t, out, nq, T_FWD, "out");
    t_out(t, lse, (size_t)B * H * T, T_FWD, "lse");
    if (REF(t)) {
        TAP_OK(fwd_err(ref_att, &c, in, nin, out, nq) < TOL_FWD, "attention fwd B=%d T=%d H=%d Hkv=%d hd=%d: %.2e", B,
               T, H, Hkv, hd, fwd_err(ref_att, &c, in, nin, out, nq));
        /* the kept log-sum-exp, against the reference's */
        double lerr = 0;
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < T; i++) {
                    double m = -1e300, z = 0, sc[512];
                    int gk = h / (H / Hkv);
                    for (int j = 0; j <= i; j++) {
                        double s = 0;
                        for (int e = 0; e < hd; e++)
                            s += (double)in[((b * T + i) * H + h) * hd + e] *
                                 in[nq + ((b * T + j) * Hkv + gk) * hd + e];
                        sc[j] = s / sqrt((double)hd);
                        m = fmax(m, sc[j]);
                    }
                    for (int j = 0; j <= i; j++)
                        z += exp(sc[j] - m);
                    lerr = fmax(lerr, fabs(lse[(b * H + h) * T + i] - (m + log(z))));
                }
        TAP_OK(lerr < 1e-5, "attention log-sum-exp: max abs err %.2e", lerr);
    }
    for (int i = 0; i < nin; i++)
        dg[i] = 7.0f; /* written, not accumulated: the 7s must go */
    OP(t, attention_bwd, D(t, dg), D(t, dg + nq), D(t, dg + nq + nk), D(t, lse), D(t, dout), D(t, out), H * hd,
       D(t, in), H * hd,
       D(t, in + nq), D(t, in + nq + nk), Hkv * hd, B, T, H, Hkv, hd, D(t, ws));
    t_out(t, dg, nin, T_BWD, "dq, dk, dv");
    if (!REF(t) || no_fd)
        return;
    fd_grad(ref_att, &c, in, nin, dout, nq, g);
    TAP_OK(rel_err(dg, g, nq) < TOL_BWD, "attention bwd dq: rel err %.2e", rel_err(dg, g, nq));
    TAP_OK(rel_err(dg + nq, g + nq, nk) < TOL_BWD, "attention bwd dk: rel err %.2e", rel_err(dg + nq, g + nq, nk));
    TAP_OK(rel_err(dg + nq + nk, g + nq + nk, nk) < TOL_BWD, "attention bwd dv: rel err %.2e",
           rel_err(dg + nq + nk, g + nq + nk, nk));
}

/* ------------------------------------------------------------ swiglu */
typedef struct sw_ctx {
    int N, F;
} sw_ctx;
static void ref_swiglu(const double *in, double *out, void *vc)
{
    sw_ctx *c = vc; /* in: (N, 2F) g | u per row */
    for (int n = 0; n < c->N; n++)
        for (int f = 0; f < c->F; f++) {
            double g = in[n * 2 * c->F + f], u = in[n * 2 * c->F + c->F + f];
            out[n * c->F + f] = g / (1 + exp(-g)) * u;
        }
}
static void tb_case_swiglu(tcase *t, const int *a, double unused)
{
    enum { N = 7, F = 13 };
    sw_ctx c = {N, F};
    float *in = t_floats(t, N * 2 * F), *out = t_floats(t, N * F), *dout = t_floats(t, N * F),
          *dg = t_floats(t, N * 2 * F);
    if (!t->fits)
        return;
    t_act(t, in, N * 2 * F);
    t_act(t, out, N * F);
    t_act(t, dout, N * F);
    t_act(t, dg, N * 2 * F);
    double g[N * 2 * F];
    fill(in, N * 2 * F, 3);
    fill(dout, N * F, 1);
    OP(t, swiglu_fwd, D(t, out), D(t, in), D(t, in + F), 2 * F, N, F);
    t_out(t, out, N * F, T_FWD, "out");
    if (REF(t))
        TAP_OK(fwd_err(ref_swiglu, &c, in, N * 2 * F, out, N * F) < TOL_FWD, "swiglu fwd");
    OP(t, swiglu_bwd, D(t, dg), D(t, dg + F), D(t, dout), D(t, in), D(t, in + F), 2 * F, N, F);
    t_out(t, dg, N * 2 * F, T_BWD, "dg, du");
    if (!REF(t))
        return;
    fd_grad(ref_swiglu, &c, in, N * 2 * F, dout, N * F, g);
    TAP_OK(rel_err(dg, g, N * 2 * F) < TOL_BWD, "swiglu bwd: rel err %.2e", rel_err(dg, g, N * 2 * F));
}

/* ------------------------------------------------------------ gate */
typedef struct gate_ctx {
    int N, D, G, ldz;
} gate_ctx;
static void ref_gate(const double *in, double *out, void *vc)
{
    gate_ctx *c = vc; /* in: a (N, D) | z (N, ldz) */
    const double *a = in, *z = in + c->N * c->D;
    for (int n = 0; n < c->N; n++)
        for (int j = 0; j < c->D; j++)
            out[n * c->D + j] = a[n * c->D + j] / (1 + exp(-z[n * c->ldz + j / (c->D / c->G)]));
}
/* a: G */
static void tb_case_gate(tcase *t, const int *a, double unused)
{
    enum { N = 5, Dm = 12, ldz = 15 };
    const int G = a[0];
    gate_ctx c = {N, Dm, G, ldz};
    float *in = t_floats(t, N * Dm + N * ldz), *out = t_floats(t, N * Dm), *dout = t_floats(t, N * Dm),
          *dg = t_floats(t, N * Dm + N * ldz);
    if (!t->fits)
        return;
    t_act(t, in, N * Dm + N * ldz);
    t_act(t, out, N * Dm);
    t_act(t, dout, N * Dm);
    t_act(t, dg, N * Dm + N * ldz);
    double g[N * Dm + N * ldz];
    fill(in, N * Dm + N * ldz, 2);
    fill(dout, N * Dm, 1);
    for (int i = 0; i < N * Dm + N * ldz; i++)
        dg[i] = 0;
    OP(t, gate_fwd, D(t, out), D(t, in), D(t, in + N * Dm), ldz, N, Dm, G);
    t_out(t, out, N * Dm, T_FWD, "out");
    if (REF(t))
        TAP_OK(fwd_err(ref_gate, &c, in, N * Dm + N * ldz, out, N * Dm) < TOL_FWD, "gate fwd G=%d of D=%d", G, Dm);
    OP(t, gate_bwd, D(t, dg), D(t, dg + N * Dm), D(t, dout), D(t, in), D(t, in + N * Dm), ldz, N, Dm, G);
    t_out(t, dg, N * Dm + N * ldz, T_BWD, "da, dz");
    if (!REF(t))
        return;
    fd_grad(ref_gate, &c, in, N * Dm + N * ldz, dout, N * Dm, g);
    TAP_OK(rel_err(dg, g, N * Dm + N * ldz) < TOL_BWD, "gate bwd G=%d: rel err %.2e", G,
           rel_err(dg, g, N * Dm + N * ldz));
}

/* ------------------------------------------------------------ cross-entropy */
typedef struct xe_ctx {
    const int32_t *t;
    int N, V;
} xe_ctx;
static void ref_xent(const double *in, double *out, void *vc)
{
    xe_ctx *c = vc;
    for (int n = 0; n < c->N; n++) {
        const double *l = in + n * c->V;
        if (c->t[n] < 0) {
            out[n] = 0;
            continue;
        }
        double m = -1e300, z = 0;
        for (int v = 0; v < c->V; v++)
            m = fmax(m, l[v]);
        for (int v = 0; v < c->V; v++)
            z += exp(l[v] - m);
        out[n] = log(z) + m - l[c->t[n]];
    }
}
/* a: N, V (0 0: 6, 29 with fixed targets); V = 1100 spans the CUDA
 * kernel's block of 512 more than twice, and is no multiple of it */
static void tb_case_xent(tcase *t, const int *a, double unused)
{
    static const int32_t tgt0[6] = {3, -1, 28, 0, 3, 17};
    const int N = a[0] ? a[0] : 6, V = a[1] ? a[1] : 29;
    int32_t tg[64];
    for (int n = 0; n < N && n < 64; n++)
        tg[n] = a[0] ? (n % 3 == 1 ? -1 : (int32_t)((n * 389 + 7) % V)) : tgt0[n];
    if (a[0] && N > 2)
        tg[N - 1] = V - 1;
    int32_t *tgt = N <= 64 ? t_ints(t, tg, (size_t)N) : NULL;
    float *l = t_floats(t, (size_t)N * V), *loss = t_floats(t, (size_t)N), *d = t_floats(t, (size_t)N * V);
    static double g[MAXIN];
    float dscale[64];
    if (!t->fits || !tgt || N * V > MAXIN) {
        TAP_OK(0, "xent N=%d V=%d fits the test", N, V);
        return;
    }
    xe_ctx c = {tgt, N, V};
    fill(l, (size_t)N * V, 4);
    OP(t, xent_fwd, D(t, loss), D(t, l), D(t, tgt), N, V);
    t_out(t, loss, (size_t)N, T_FWD, "losses");
    if (REF(t))
        TAP_OK(fwd_err(ref_xent, &c, l, N * V, loss, N) < TOL_FWD && loss[1] == 0,
               "xent fwd (N=%d V=%d; ignored target -> 0)", N, V);
    for (int i = 0; i < N * V; i++)
        d[i] = l[i];
    for (int n = 0; n < N; n++)
        dscale[n] = 0.37f;
    OP(t, xent_bwd, D(t, d), D(t, tgt), N, V, 0.37f);
    t_out(t, d, (size_t)N * V, T_BWD, "dlogits");
    if (!REF(t))
        return;
    fd_grad(ref_xent, &c, l, N * V, dscale, N, g);
    TAP_OK(rel_err(d, g, (size_t)N * V) < TOL_BWD, "xent bwd (in place, scaled, N=%d V=%d): rel err %.2e", N, V,
           rel_err(d, g, (size_t)N * V));
}

/* ------------------------------------------------------------ axpy */
/* y += alpha x; a: n */
static void tb_case_axpy(tcase *t, const int *a, double unused)
{
    const size_t n = (size_t)a[0];
    float *x = t_floats(t, n), *y = t_floats(t, n), *y0 = t_floats(t, n);
    if (!t->fits)
        return;
    fill(x, n, 1);
    fill(y0, n, 1);
    for (size_t i = 0; i < n; i++)
        y[i] = y0[i];
    OP(t, axpy, D(t, y), D(t, x), n, -0.75f);
    t_out(t, y, n, T_FWD, "y");
    if (!REF(t))
        return;
    double e = 0;
    for (size_t i = 0; i < n; i++)
        e = fmax(e, fabs(y[i] - ((double)y0[i] - 0.75 * x[i])));
    TAP_OK(e < 1e-6, "axpy (n=%zu): max abs err %.2e", n, e);
}

/* y += alpha x on activations (act_axpy: Titans MAL's residual add); a: n */
static void tb_case_act_axpy(tcase *t, const int *a, double unused)
{
    const size_t n = (size_t)a[0];
    float *x = t_floats(t, n), *y = t_floats(t, n), *y0 = t_floats(t, n);
    if (!t->fits)
        return;
    t_act(t, x, n);
    t_act(t, y, n);
    fill(x, n, 1);
    fill(y0, n, 1);
    for (size_t i = 0; i < n; i++)
        y[i] = y0[i];
    OP(t, act_axpy, D(t, y), D(t, x), n, 1.0f);
    t_out(t, y, n, T_FWD, "y");
    if (!REF(t))
        return;
    double e = 0;
    for (size_t i = 0; i < n; i++)
        e = fmax(e, fabs(y[i] - ((double)y0[i] + x[i])));
    TAP_OK(e < 1e-6, "act_axpy (n=%zu): max abs err %.2e", n, e);
}

/* ------------------------------------------------------------ adamw, sumsq */
/* a: n (0: 37); 300000 is more than the CUDA sumsq's 1024 blocks of 256
 * threads hold, so its threads sum several elements each */
/* AdamW's inputs: weights, gradients, first moments, second moments > 0 */
static void tb_adamw_inputs(float *p, float *g, float *m, float *v, size_t n)
{
    fill(p, n, 1);
    fill(g, n, 1);
    fill(m, n, 0.1);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(0.01 * (1 + urand()));
}

static void tb_case_adamw(tcase *t, const int *a, double unused)
{
    const size_t n = a[0] ? (size_t)a[0] : 37;
    float *p = t_floats(t, n), *g = t_floats(t, n), *m = t_floats(t, n), *v = t_floats(t, n);
    double *P = malloc(3 * n * sizeof *P), *M = P ? P + n : NULL, *Vv = P ? P + 2 * n : NULL;
    if (!t->fits || !P) {
        TAP_OK(0, "adamw n=%zu fits the test", n);
        free(P);
        return;
    }
    tb_adamw_inputs(p, g, m, v, n);
    for (size_t i = 0; i < n; i++) {
        P[i] = p[i];
        M[i] = m[i];
        Vv[i] = v[i];
    }
    const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1, gs = 0.5;
    const int st = 3;
    double bc1 = 1 - pow(b1, st), bc2 = 1 - pow(b2, st);
    /* three segments in one op: decay on, off, a gap of 2 that no segment
     * covers (left as it is), decay on */
    const size_t a3 = n / 3, b3 = 2 * n / 3;
    const eng_adamw_seg seg[3] = {{0, a3, 1}, {a3, b3 - a3, 0}, {b3 + 2, n - b3 - 2, 1}};
    OP(t, adamw, D(t, p), D(t, g), D(t, m), D(t, v), seg, 3, (float)lr, (float)b1, (float)b2, (float)eps, (float)wd,
       (float)bc1, (float)bc2, (float)gs, NULL, ENG_F32);
    t_out(t, p, n, T_FWD, "p");
    t_out(t, m, n, T_FWD, "m");
    t_out(t, v, n, T_FWD, "v");
    t_push(t);
    const double sumsq = t->o->sumsq(t->ctx, D(t, g), n);
    t_value(t, sumsq);
    if (!REF(t)) {
        free(P);
        return;
    }
    double e = 0;
    double gap = 0;
    for (size_t i = 0; i < n; i++) {
        if (i >= b3 && i < b3 + 2) { /* in no segment: untouched */
            gap = fmax(gap, fabs(P[i] - p[i]) + fabs(M[i] - m[i]) + fabs(Vv[i] - v[i]));
            continue;
        }
        double gi = gs * g[i], wdi = i >= a3 && i < b3 ? 0 : wd;
        M[i] = b1 * M[i] + (1 - b1) * gi;
        Vv[i] = b2 * Vv[i] + (1 - b2) * gi * gi;
        P[i] = P[i] * (1 - lr * wdi) - lr / bc1 * M[i] / (sqrt(Vv[i] / bc2) + eps);
        e = fmax(e, fabs(P[i] - p[i]) + fabs(M[i] - m[i]) + fabs(Vv[i] - v[i]));
    }
    free(P);
    TAP_OK(e < 1e-6, "adamw step over 3 segments (decay on/off, bias correction, grad scale; n=%zu): max abs err %.2e",
           n, e);
    TAP_OK(gap == 0, "adamw leaves what no segment covers as it is (n=%zu)", n);
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)g[i] * g[i];
    TAP_OK(fabs(sumsq - s) < 1e-12 * s, "sumsq in double (n=%zu)", n);
}

/* ------------------------------------------------------------ fused classifier */
/* losses (N) of softmax(x W^T) against targets; in: x (N, C), then W (V, C) */
typedef struct cls_ctx {
    const int32_t *t;
    int N, V, C;
} cls_ctx;
static void ref_cls(const double *in, double *out, void *vc)
{
    cls_ctx *c = vc;
    static double lg[MAXIN];
    const double *x = in, *w = in + c->N * c->C;
    for (int n = 0; n < c->N; n++)
        for (int v = 0; v < c->V; v++) {
            double s = 0;
            for (int k = 0; k < c->C; k++)
                s += x[n * c->C + k] * w[v * c->C + k];
            lg[n * c->V + v] = s;
        }
    xe_ctx xc = {c->t, c->N, c->V};
    ref_xent(lg, out, &xc);
}
/* a: N, V, C (0 0 0: 6, 29, 5).  The emulated CUDA build's chunks are
 * 1024 floats of logits: V = 300 makes chunks of 3 rows (N = 10: 3, 3, 3,
 * 1), V = 1100 a chunk a row and a row over two blocks of the kernel. */
static void tb_case_classifier(tcase *t, const int *a, double unused)
{
    const int N = a[0] ? a[0] : 6, V = a[1] ? a[1] : 29, C = a[2] ? a[2] : 5;
    int32_t tg[64];
    for (int n = 0; n < N && n < 64; n++)
        tg[n] = n % 4 == 1 ? -1 : (int32_t)((n * 389 + 7) % V); /* ignored targets */
    if (N > 2)
        tg[N - 1] = V - 1;
    int32_t *tgt = N <= 64 ? t_ints(t, tg, (size_t)N) : NULL;
    float *in = t_floats(t, (size_t)(N + V) * C), *loss = t_floats(t, (size_t)N), *acc = t_floats(t, 2),
          *dx = t_floats(t, (size_t)N * C), *dw = t_floats(t, (size_t)V * C), *dw0 = t_floats(t, (size_t)V * C),
          *ws = t_floats(t, t->o->classifier_workspace(t->ctx, N, V, C));
    static double g[MAXIN];
    float dsc[64];
    if (!t->fits || !tgt || (N + V) * C > MAXIN) {
        TAP_OK(0, "classifier N=%d V=%d C=%d fits the test", N, V, C);
        return;
    }
    const float *x = in, *w = in + (size_t)N * C;
    t_act(t, x, (size_t)N * C);
    t_act(t, w, (size_t)V * C); /* the head's weight copy: the activation dtype (ops.h w_lp) */
    t_act(t, dx, (size_t)N * C);
    cls_ctx c = {tgt, N, V, C};
    fill(in, (size_t)(N + V) * C, 1.5);
    fill(dw0, (size_t)V * C, 1);
    memcpy(dw, dw0, (size_t)V * C * sizeof *dw);
    double *accd = (double *)acc;
    *accd = 0.25; /* the forward adds to it */
    OP(t, classifier_fwd, D(t, loss), D(t, acc), D(t, x), D(t, w), D(t, tgt), N, V, C, D(t, ws));
    t_out(t, loss, (size_t)N, T_FWD, "losses");
    t_value(t, *accd);
    OP(t, classifier_bwd, D(t, dx), D(t, dw), D(t, x), D(t, w), D(t, tgt), N, V, C, 0.37f, D(t, ws));
    for (size_t i = 0; i < (size_t)V * C; i++)
        dw[i] -= dw0[i]; /* what the backward added */
    t_out(t, dx, (size_t)N * C, T_BWD, "dx");
    t_out(t, dw, (size_t)V * C, T_BWD, "dW (added)");
    if (!REF(t))
        return;
    double sum = 0;
    int cnt = 0;
    for (int n = 0; n < N; n++)
        if (tg[n] >= 0)
            sum += loss[n], cnt++;
    TAP_OK(fwd_err(ref_cls, &c, in, (N + V) * C, loss, N) < TOL_FWD && loss[1] == 0 &&
               *accd == 0.25 + sum / cnt,
           "classifier fwd (N=%d V=%d C=%d; ignored targets 0; the accumulator += the mean of %d counted)", N, V, C,
           cnt);
    for (int n = 0; n < N; n++)
        dsc[n] = 0.37f;
    fd_grad(ref_cls, &c, in, (N + V) * C, dsc, N, g);
    double e = fmax(rel_err(dx, g, (size_t)N * C), rel_err(dw, g + (size_t)N * C, (size_t)V * C));
    TAP_OK(e < TOL_BWD, "classifier bwd (dx written, dW added; N=%d V=%d C=%d): rel err %.2e", N, V, C, e);
}

/* embedding_bwd_sorted: the positions grouped by id on the host, as the
 * model does (emb_sort's layout: U, order, ids, starts); it must add what
 * embedding_bwd adds, bit for bit (the same order of sums).  The count U
 * is read from backend memory: max_U is N, and the ids and starts past U
 * describe one more id (the first position's row added to id 0), which a
 * backend that ran max_U ids would add.  a: V, N, C */
static void tb_case_embedding_sorted(tcase *t, const int *a, double unused)
{
    const int V = a[0], N = a[1], C = a[2];
    int32_t toks[64], srt[3 * 64 + 2], cnt[64] = {0};
    int32_t *order = srt + 1, *ids = order + N, *starts = order + 2 * N;
    for (int n = 0; n < N && n < 64; n++)
        toks[n] = (int32_t)((n * 7 + 3) % V) % (V / 2 + 1); /* repeats; half the ids unused */
    int U = 0, at = 0;
    for (int n = 0; n < N && n < 64 && V <= 64; n++)
        cnt[toks[n]]++;
    for (int v = 0; v < V && V <= 64; v++)
        if (cnt[v]) {
            ids[U] = v;
            starts[U++] = at;
            at += cnt[v];
            cnt[v] = at - cnt[v];
        }
    starts[U] = at;
    for (int n = 0; n < N && n < 64 && V <= 64; n++)
        order[cnt[toks[n]]++] = n;
    srt[0] = U;
    for (int u = U; u < N && N <= 64; u++) /* past U: id 0 again, with position order[0] */
        ids[u] = 0, starts[u] = u == U ? at : u == U + 1 ? 0 : 1;
    if (N <= 64)
        starts[N] = 1;
    int32_t *tok = N <= 64 && V <= 64 && U + 2 <= N ? t_ints(t, toks, (size_t)N) : NULL,
            *sorted = tok ? t_ints(t, srt, 3 * (size_t)N + 2) : NULL;
    float *dout = t_floats(t, (size_t)N * C), *dw = t_floats(t, (size_t)V * C), *dw1 = t_floats(t, (size_t)V * C),
          *dw0 = t_floats(t, (size_t)V * C);
    static double g[MAXIN];
    if (!t->fits || !sorted || V * C > MAXIN || N * C > MAXOUT) {
        TAP_OK(0, "embedding_bwd_sorted V=%d N=%d C=%d fits the test", V, N, C);
        return;
    }
    t_act(t, dout, (size_t)N * C);
    fill(dout, (size_t)N * C, 1);
    fill(dw0, (size_t)V * C, 1);
    memcpy(dw, dw0, (size_t)V * C * sizeof *dw);
    memcpy(dw1, dw0, (size_t)V * C * sizeof *dw);
    OP(t, embedding_bwd_sorted, D(t, dw), D(t, dout), D(t, sorted + 1), D(t, sorted + 1 + N),
       D(t, sorted + 1 + 2 * N), D(t, sorted), N, C);
    OP(t, embedding_bwd, D(t, dw1), D(t, dout), D(t, tok), N, C);
    const int same = !memcmp(dw, dw1, (size_t)V * C * sizeof *dw);
    for (size_t i = 0; i < (size_t)V * C; i++)
        dw[i] -= dw0[i];
    t_out(t, dw, (size_t)V * C, T_BWD, "dwte (added)");
    /* on every backend: its own scatter's bits (not again in the CPU's capture passes) */
    if (t->mode != T_CAPTURE)
        TAP_OK(same, "%s: embedding_bwd_sorted adds what embedding_bwd adds, bit for bit (%d ids of %d, N=%d C=%d)",
               t->o->name, U, V, N, C);
    if (!REF(t))
        return;
    emb_ctx c = {tok, N, C};
    fd_grad(ref_emb, &c, dw0, V * C, dout, N * C, g);
    TAP_OK(rel_err(dw, g, (size_t)V * C) < TOL_BWD, "embedding_bwd_sorted (V=%d N=%d C=%d): rel err %.2e", V, N, C,
           rel_err(dw, g, (size_t)V * C));
}

/* sumsq_into: sumsq's number, into backend memory; a: n */
static void tb_case_sumsq_into(tcase *t, const int *a, double unused)
{
    const size_t n = (size_t)a[0];
    float *x = t_floats(t, n), *out = t_floats(t, 2);
    if (!t->fits)
        return;
    fill(x, n, 1);
    OP(t, sumsq_into, D(t, out), D(t, x), n);
    const double got = *(double *)out;
    t_value(t, got);
    t_push(t);
    const double want = t->o->sumsq(t->ctx, D(t, x), n);
    if (t->mode != T_CAPTURE)
        TAP_OK(got == want, "%s: sumsq_into gives sumsq's number bit for bit (n=%zu): %.17g", t->o->name, n, got);
}

/* ------------------------------------------------------------ the weight copy */
/* float -> bf16 bits by value: of the two bf16 around |x| the nearer, on a
 * tie the one with an even last bit; past the largest finite bf16 the next
 * step up is 2^128 (infinity), as IEEE rounding treats overflow; NaN is
 * the canonical 0x7fff.  (Not the bit trick the backends use: the same
 * rule reached another way.) */
static uint16_t tb_bf16_rn(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if (isnan(x))
        return 0x7fff;
    if (isinf(x))
        return (uint16_t)(u >> 16);
    const uint32_t mag = u & 0x7fffffffu, lo = mag & 0xffff0000u, hi = lo + 0x10000u;
    float flo, fhi;
    memcpy(&flo, &lo, sizeof flo);
    memcpy(&fhi, &hi, sizeof fhi);
    const double a = fabs((double)x), dlo = a - flo, dhi = (hi >= 0x7f800000u ? ldexp(1.0, 128) : fhi) - a;
    const uint32_t r = dlo < dhi || (dlo == dhi && !((lo >> 16) & 1u)) ? lo : hi;
    return (uint16_t)(((u >> 16) & 0x8000u) | (r >> 16));
}

/* how many of n bf16 elements differ from tb_bf16_rn(x) */
static size_t tb_bf16_misses(const uint16_t *b, const float *x, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b[i] != tb_bf16_rn(x[i]);
    return bad;
}

/* adamw's weight copy (p_lp) in bf16 and in fp32 over the three segments
 * of tb_case_adamw, and cast on edge values.  On every backend each copy
 * element must be that backend's own updated p rounded to nearest even,
 * bit for bit (p, m, v are held against the CPU's as in tb_case_adamw);
 * what no segment covers keeps its sentinel.  a: n */
static void tb_case_weight_copy(tcase *t, const int *a, double unused)
{
    const size_t n = (size_t)a[0], a3 = n / 3, b3 = 2 * n / 3;
    float *p = t_floats(t, n), *g = t_floats(t, n), *m = t_floats(t, n), *v = t_floats(t, n);
    float *lp32 = t_floats(t, n), *x = t_floats(t, n), *x32 = t_floats(t, n);
    uint16_t *lp16 = (uint16_t *)t_floats(t, (n + 1) / 2), *x16 = (uint16_t *)t_floats(t, (n + 1) / 2);
    if (!t->fits) {
        TAP_OK(0, "weight copy n=%zu fits the test", n);
        return;
    }
    tb_adamw_inputs(p, g, m, v, n);
    for (size_t i = 0; i < n; i++)
        lp16[i] = 0x1234, lp32[i] = -7.0f; /* sentinels */
    const eng_adamw_seg seg[3] = {{0, a3, 1}, {a3, b3 - a3, 0}, {b3 + 2, n - b3 - 2, 1}};
    const float lr = 1e-2f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f, bc1 = 0.271f, bc2 = 0.142625f;
    OP(t, adamw, D(t, p), D(t, g), D(t, m), D(t, v), seg, 3, lr, b1, b2, eps, wd, bc1, bc2, 0.5f, D(t, lp16),
       ENG_BF16);
    /* the same update again, from the same state, with an fp32 copy: p must
     * come out as the bf16 call's (the copy changes nothing else) */
    float *p1 = malloc(3 * n * sizeof *p1);
    if (!p1) {
        TAP_OK(0, "weight copy: host memory");
        return;
    }
    memcpy(p1, p, n * sizeof *p1);
    memcpy(p1 + n, m, n * sizeof *p1);
    memcpy(p1 + 2 * n, v, n * sizeof *p1);
    t_out(t, p, n, T_FWD, "p");
    t_out(t, m, n, T_FWD, "m");
    t_out(t, v, n, T_FWD, "v");
    OP(t, adamw, D(t, p), D(t, g), D(t, m), D(t, v), seg, 3, lr, b1, b2, eps, wd, bc1, bc2, 0.5f, D(t, lp32),
       ENG_F32);
    /* cast: random values, then edge cases at the start (ties to even both
     * ways, the last value below infinity's halfway, overflow, infinity,
     * NaN, -0, a subnormal, the largest float) */
    static const uint32_t edge[] = {0x3f808000u, 0x3f818000u, 0xbf808000u, 0x7f7f7fffu, 0x7f7f8000u, 0x7f800000u,
                                    0xff800000u, 0x7fc00001u, 0x80000000u, 0x00012345u, 0x7f7fffffu, 0x3f80ffffu};
    fill(x, n, 3);
    for (size_t k = 0; k < sizeof edge / sizeof edge[0] && k < n; k++)
        memcpy(&x[k], &edge[k], sizeof x[k]);
    OP(t, cast, D(t, x16), ENG_BF16, D(t, x), n);
    OP(t, cast, D(t, x32), ENG_F32, D(t, x), n);
    if (t->mode == T_CAPTURE) {
        free(p1);
        return;
    }
    size_t bad16 = 0, bad32 = 0, gap = 0, same = 0;
    for (size_t i = 0; i < n; i++) {
        const int in_gap = i >= b3 && i < b3 + 2;
        if (in_gap) {
            gap += lp16[i] != 0x1234 || lp32[i] != -7.0f;
            continue;
        }
        bad16 += lp16[i] != tb_bf16_rn(p1[i]);
        bad32 += memcmp(&lp32[i], &p[i], sizeof p[i]) != 0;
    }
    /* the second update's p, m, v against a third from the first's state
     * without any copy: the copy must not change the update */
    float *q = t_floats(t, n), *qm = t_floats(t, n), *qv = t_floats(t, n);
    if (q && qm && qv) {
        memcpy(q, p1, n * sizeof *q);
        memcpy(qm, p1 + n, n * sizeof *q);
        memcpy(qv, p1 + 2 * n, n * sizeof *q);
        OP(t, adamw, D(t, q), D(t, g), D(t, qm), D(t, qv), seg, 3, lr, b1, b2, eps, wd, bc1, bc2, 0.5f, NULL,
           ENG_F32);
        same = !memcmp(q, p, n * sizeof *q) && !memcmp(qm, m, n * sizeof *q) && !memcmp(qv, v, n * sizeof *q);
    }
    TAP_OK(!bad16 && !gap, "%s: adamw's bf16 weight copy is its updated p rounded to nearest even (n=%zu): %zu of %zu "
           "differ, %zu outside the segments touched", t->o->name, n, bad16, n - 2, gap);
    TAP_OK(!bad32 && same, "%s: adamw's fp32 weight copy is p bit for bit, and a copy leaves p, m, v as without one "
           "(n=%zu): %zu differ", t->o->name, n, bad32);
    TAP_OK(!tb_bf16_misses(x16, x, n) && !memcmp(x32, x, n * sizeof *x),
           "%s: cast to bf16 rounds to nearest even (ties, overflow, NaN, subnormal; n=%zu): %zu differ; to fp32 "
           "copies", t->o->name, n, tb_bf16_misses(x16, x, n));
    free(p1);
}

#endif
