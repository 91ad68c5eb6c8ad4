/* test_ops.c: every op of the CPU backend against a plain double-precision
 * reference written here: the forward values, and the backward against
 * central finite differences of the reference (h = 1e-6 in double, so the
 * numerical gradient is accurate to ~1e-9 and any disagreement is the op's).
 * Errors are relative to the largest reference magnitude of each output.
 * Shapes are small but odd (rows not multiples of the vector width,
 * attention longer than one 64-row block, grouped KV heads). */
#include <math.h>
#include <stdint.h>

#include "engine/cpu/internal.h" /* eng__expf */
#include "engine/model/ops.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"

static const eng_ops *O;
static void *CX; /* the backend's context */
static uint64_t rng = 88172645463325252ull;
static double urand(void) /* [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-52 - 1.0;
}
static void fill(float *x, int n, double s)
{
    for (int i = 0; i < n; i++)
        x[i] = (float)(s * urand());
}

/* max |a - b| / max |b| */
static double rel_err_fd(const float *a, const double *b, int n)
{
    double e = 0, s = 1e-30;
    for (int i = 0; i < n; i++) {
        e = fmax(e, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return e / s;
}

/* A reference forward: out (nout) from the inputs (nin) in double. */
typedef void (*ref_fn)(const double *in, double *out, void *ctx);

/* Numerical gradient of sum_o dout[o] out[o] w.r.t. in[0..nin), h = 1e-6. */
static void fd_grad(ref_fn f, void *ctx, const float *in_f, int nin, const float *dout, int nout, double *grad)
{
    static double in[20000], out[40000];
    for (int i = 0; i < nin; i++)
        in[i] = in_f[i];
    for (int i = 0; i < nin; i++) {
        double x = in[i], h = 1e-6, lp = 0, lm = 0;
        in[i] = x + h;
        f(in, out, ctx);
        for (int o = 0; o < nout; o++)
            lp += dout[o] * out[o];
        in[i] = x - h;
        f(in, out, ctx);
        for (int o = 0; o < nout; o++)
            lm += dout[o] * out[o];
        in[i] = x;
        grad[i] = (lp - lm) / (2 * h);
    }
}

static double fwd_err(ref_fn f, void *ctx, const float *in_f, int nin, const float *out, int nout)
{
    static double in[20000], ref[40000];
    for (int i = 0; i < nin; i++)
        in[i] = in_f[i];
    f(in, ref, ctx);
    return rel_err_fd(out, ref, nout);
}

#define TOL_FWD 1e-5
#define TOL_BWD 1e-4

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
static void test_matmul(void)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            mm_ctx c = {ta, tb, 13, 11, 17};
            float in[13 * 17 + 17 * 11], C[13 * 11], C0[13 * 11];
            fill(in, 13 * 17 + 17 * 11, 1);
            fill(C0, 13 * 11, 1);
            for (int i = 0; i < 13 * 11; i++)
                C[i] = C0[i];
            /* C = 2 op(A) op(B) + 1 C0: accumulate and alpha */
            O->matmul(CX, ta, tb, c.M, c.N, c.K, 2.0f, in, ta ? c.M : c.K, in + c.M * c.K, tb ? c.K : c.N, 1.0f, C,
                      c.N);
            double ref[13 * 11];
            double din[13 * 17 + 17 * 11];
            for (int i = 0; i < 13 * 17 + 17 * 11; i++)
                din[i] = in[i];
            ref_mm(din, ref, &c);
            for (int i = 0; i < 13 * 11; i++)
                ref[i] = 2 * ref[i] + C0[i];
            TAP_OK(rel_err_fd(C, ref, 13 * 11) < TOL_FWD, "matmul ta=%d tb=%d alpha/beta: rel err %.2e", ta, tb,
                   rel_err_fd(C, ref, 13 * 11));
        }
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
static void test_embedding(void)
{
    enum { V = 7, N = 9, C = 5 };
    int32_t tok[N] = {3, 1, 3, 0, 6, 6, 2, 3, 5};
    emb_ctx c = {tok, N, C};
    float w[V * C], out[N * C], dout[N * C], dw[V * C] = {0};
    double g[V * C];
    fill(w, V * C, 1);
    fill(dout, N * C, 1);
    O->embedding_fwd(CX, out, w, tok, N, C);
    TAP_OK(fwd_err(ref_emb, &c, w, V * C, out, N * C) == 0, "embedding fwd exact");
    O->embedding_bwd(CX, dw, dout, tok, N, C);
    fd_grad(ref_emb, &c, w, V * C, dout, N * C, g);
    TAP_OK(rel_err_fd(dw, g, V * C) < TOL_BWD, "embedding bwd (repeated tokens): rel err %.2e",
           rel_err_fd(dw, g, V * C));
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
static void test_rmsnorm(void)
{
    enum { N = 6, C = 19 };
    rms_ctx c = {N, C, 1e-5};
    float in[N * C + C], out[N * C], rstd[N], dout[N * C], dg[N * C + C];
    double g[N * C + C];
    fill(in, N * C + C, 1);
    fill(dout, N * C, 1);
    O->rmsnorm_fwd(CX, out, rstd, in, in + N * C, N, C, 1e-5f);
    TAP_OK(fwd_err(ref_rms, &c, in, N * C + C, out, N * C) < TOL_FWD, "rmsnorm fwd");
    for (int i = 0; i < N * C + C; i++)
        dg[i] = 0.5f; /* both gradients accumulate: start from 0.5 */
    O->rmsnorm_bwd(CX, dg, dg + N * C, dout, in, in + N * C, rstd, N, C);
    for (int i = 0; i < N * C + C; i++)
        dg[i] -= 0.5f;
    fd_grad(ref_rms, &c, in, N * C + C, dout, N * C, g);
    TAP_OK(rel_err_fd(dg, g, N * C) < TOL_BWD, "rmsnorm bwd dx (+=): rel err %.2e", rel_err_fd(dg, g, N * C));
    TAP_OK(rel_err_fd(dg + N * C, g + N * C, C) < TOL_BWD, "rmsnorm bwd dw (+=): rel err %.2e",
           rel_err_fd(dg + N * C, g + N * C, C));
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
static void test_rope(void)
{
    enum { T = 5, N = 10, H = 3, hd = 6, ld = 23 }; /* 2 sequences; ld > H*hd: a slice */
    rope_ctx c = {N, T, H, hd, ld, 10000.0};
    float x[N * ld], cs[T * hd], dout[N * ld], d[N * ld];
    double g[N * ld];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < hd / 2; i++) {
            double a = t * pow(10000.0, -2.0 * i / hd);
            cs[t * hd + i] = (float)cos(a);
            cs[t * hd + hd / 2 + i] = (float)sin(a);
        }
    fill(x, N * ld, 1);
    fill(dout, N * ld, 1);
    float y[N * ld];
    for (int i = 0; i < N * ld; i++)
        y[i] = x[i];
    O->rope_fwd(CX, y, ld, N, T, H, hd, cs);
    TAP_OK(fwd_err(ref_rope, &c, x, N * ld, y, N * ld) < TOL_FWD, "rope fwd (strided rows, columns past H*hd kept)");
    for (int i = 0; i < N * ld; i++)
        d[i] = dout[i];
    O->rope_bwd(CX, d, ld, N, T, H, hd, cs);
    fd_grad(ref_rope, &c, x, N * ld, dout, N * ld, g);
    TAP_OK(rel_err_fd(d, g, N * ld) < TOL_BWD, "rope bwd: rel err %.2e", rel_err_fd(d, g, N * ld));
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
static void test_attention(int B, int T, int H, int Hkv, int hd)
{
    att_ctx c = {B, T, H, Hkv, hd};
    int nq = B * T * H * hd, nk = B * T * Hkv * hd, nin = nq + 2 * nk;
    static float in[20000], out[8000], lse[4000], dout[8000], dg[20000], ws[400000];
    static double g[20000];
    if (O->attention_workspace(CX, B, T, H, hd) > sizeof ws / sizeof ws[0]) {
        TAP_OK(0, "attention workspace fits the test");
        return;
    }
    fill(in, nin, 1.5);
    fill(dout, nq, 1);
    O->attention_fwd(CX, out, H * hd, lse, in, H * hd, in + nq, in + nq + nk, Hkv * hd, B, T, H, Hkv, hd, ws);
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
                    double a = 0;
                    for (int e = 0; e < hd; e++)
                        a += (double)in[((b * T + i) * H + h) * hd + e] *
                             in[nq + ((b * T + j) * Hkv + gk) * hd + e];
                    sc[j] = a / sqrt((double)hd);
                    m = fmax(m, sc[j]);
                }
                for (int j = 0; j <= i; j++)
                    z += exp(sc[j] - m);
                lerr = fmax(lerr, fabs(lse[(b * H + h) * T + i] - (m + log(z))));
            }
    TAP_OK(lerr < 1e-5, "attention log-sum-exp: max abs err %.2e", lerr);
    for (int i = 0; i < nin; i++)
        dg[i] = 7.0f; /* written, not accumulated: the 7s must go */
    O->attention_bwd(CX, dg, dg + nq, dg + nq + nk, lse, dout, H * hd, in, H * hd, in + nq, in + nq + nk, Hkv * hd, B,
                     T, H, Hkv, hd, ws);
    fd_grad(ref_att, &c, in, nin, dout, nq, g);
    TAP_OK(rel_err_fd(dg, g, nq) < TOL_BWD, "attention bwd dq: rel err %.2e", rel_err_fd(dg, g, nq));
    TAP_OK(rel_err_fd(dg + nq, g + nq, nk) < TOL_BWD, "attention bwd dk: rel err %.2e",
           rel_err_fd(dg + nq, g + nq, nk));
    TAP_OK(rel_err_fd(dg + nq + nk, g + nq + nk, nk) < TOL_BWD, "attention bwd dv: rel err %.2e",
           rel_err_fd(dg + nq + nk, g + nq + nk, nk));
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
static void test_swiglu(void)
{
    enum { N = 7, F = 13 };
    sw_ctx c = {N, F};
    float in[N * 2 * F], out[N * F], dout[N * F], dg[N * 2 * F];
    double g[N * 2 * F];
    fill(in, N * 2 * F, 3);
    fill(dout, N * F, 1);
    O->swiglu_fwd(CX, out, in, in + F, 2 * F, N, F);
    TAP_OK(fwd_err(ref_swiglu, &c, in, N * 2 * F, out, N * F) < TOL_FWD, "swiglu fwd");
    O->swiglu_bwd(CX, dg, dg + F, dout, in, in + F, 2 * F, N, F);
    fd_grad(ref_swiglu, &c, in, N * 2 * F, dout, N * F, g);
    TAP_OK(rel_err_fd(dg, g, N * 2 * F) < TOL_BWD, "swiglu bwd: rel err %.2e", rel_err_fd(dg, g, N * 2 * F));
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
static void test_gate(int G)
{
    enum { N = 5, D = 12, ldz = 15 };
    gate_ctx c = {N, D, G, ldz};
    float in[N * D + N * ldz], out[N * D], dout[N * D], dg[N * D + N * ldz];
    double g[N * D + N * ldz];
    fill(in, N * D + N * ldz, 2);
    fill(dout, N * D, 1);
    for (int i = 0; i < N * D + N * ldz; i++)
        dg[i] = 0;
    O->gate_fwd(CX, out, in, in + N * D, ldz, N, D, G);
    TAP_OK(fwd_err(ref_gate, &c, in, N * D + N * ldz, out, N * D) < TOL_FWD, "gate fwd G=%d of D=%d", G, D);
    O->gate_bwd(CX, dg, dg + N * D, dout, in, in + N * D, ldz, N, D, G);
    fd_grad(ref_gate, &c, in, N * D + N * ldz, dout, N * D, g);
    TAP_OK(rel_err_fd(dg, g, N * D + N * ldz) < TOL_BWD, "gate bwd G=%d: rel err %.2e", G,
           rel_err_fd(dg, g, N * D + N * ldz));
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
static void test_xent(void)
{
    enum { N = 6, V = 29 };
    int32_t t[N] = {3, -1, 28, 0, 3, 17};
    xe_ctx c = {t, N, V};
    float l[N * V], loss[N], d[N * V], dscale[N];
    double g[N * V];
    fill(l, N * V, 4);
    O->xent_fwd(CX, loss, l, t, N, V);
    TAP_OK(fwd_err(ref_xent, &c, l, N * V, loss, N) < TOL_FWD && loss[1] == 0, "xent fwd (ignored target -> 0)");
    for (int i = 0; i < N * V; i++)
        d[i] = l[i];
    for (int n = 0; n < N; n++)
        dscale[n] = 0.37f;
    O->xent_bwd(CX, d, t, N, V, 0.37f);
    fd_grad(ref_xent, &c, l, N * V, dscale, N, g);
    TAP_OK(rel_err_fd(d, g, N * V) < TOL_BWD, "xent bwd (in place, scaled): rel err %.2e", rel_err_fd(d, g, N * V));
}

/* ------------------------------------------------------------ adamw, sumsq */
static void test_adamw(void)
{
    enum { n = 37 };
    float p[n], g[n], m[n], v[n];
    double P[n], M[n], Vv[n];
    fill(p, n, 1);
    fill(g, n, 1);
    fill(m, n, 0.1);
    for (int i = 0; i < n; i++) {
        v[i] = (float)(0.01 * (1 + urand()));
        P[i] = p[i];
        M[i] = m[i];
        Vv[i] = v[i];
    }
    const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1, gs = 0.5;
    const int t = 3;
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    O->adamw(CX, p, g, m, v, n, (float)lr, (float)b1, (float)b2, (float)eps, (float)wd, (float)bc1, (float)bc2,
             (float)gs);
    double e = 0;
    for (int i = 0; i < n; i++) {
        double gi = gs * g[i];
        M[i] = b1 * M[i] + (1 - b1) * gi;
        Vv[i] = b2 * Vv[i] + (1 - b2) * gi * gi;
        P[i] = P[i] * (1 - lr * wd) - lr / bc1 * M[i] / (sqrt(Vv[i] / bc2) + eps);
        e = fmax(e, fabs(P[i] - p[i]) + fabs(M[i] - m[i]) + fabs(Vv[i] - v[i]));
    }
    TAP_OK(e < 1e-6, "adamw step (decay, bias correction, grad scale): max abs err %.2e", e);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)g[i] * g[i];
    TAP_OK(fabs(O->sumsq(CX, g, n) - s) < 1e-12 * s, "sumsq in double");
}

/* the backend's vectorisable exp against libm's, over the range it serves */
static void test_expf(void)
{
    double worst = 0, at = 0;
    for (double x = -87.0; x <= 88.0; x += 0.001) {
        double e = fabs(eng__expf((float)x) / exp((double)(float)x) - 1);
        if (e > worst) {
            worst = e;
            at = x;
        }
    }
    TAP_OK(worst < 1e-6, "eng__expf on [-87, 88]: max rel err %.2e (at %.3f)", worst, at);
    TAP_OK(eng__expf(-1000.0f) > 0 && eng__expf(-1000.0f) < 1e-37f && isfinite(eng__expf(1000.0f)),
           "eng__expf clamps: exp(-1000) %.3g, exp(1000) %.3g", eng__expf(-1000.0f), eng__expf(1000.0f));
}

int main(int argc, char **argv)
{
    eng_runtime_init(argc, argv);
    eng_backend *be;
    eng_err e = {0};
    if (eng_backend_cpu_create(&be, 0, &e)) {
        printf("Bail out! %s\n", e.msg);
        return 1;
    }
    O = be->ops;
    CX = be->ctx;
    TAP_DIAG("blas %s kernel %s threads %d", eng_runtime_blas(), eng_runtime_kernel(), eng_backend_cpu_threads(be));
    test_expf();
    test_matmul();
    test_embedding();
    test_rmsnorm();
    test_rope();
    test_attention(1, 9, 2, 2, 4);
    test_attention(2, 67, 4, 2, 4); /* two row blocks, grouped KV */
    test_attention(1, 130, 2, 1, 2); /* three row blocks, multi-query */
    test_swiglu();
    test_gate(12);
    test_gate(3);
    test_xent();
    test_adamw();
    return tap_done();
}
