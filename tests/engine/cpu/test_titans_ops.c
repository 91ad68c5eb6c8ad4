/* test_titans_ops.c: the Titans ops of the CPU backend (dconv, silu_norm,
 * swa, titans_mem) against plain double-precision references written here:
 * forward values, and every backward output against central finite
 * differences of the reference (h = 1e-6 in double: the numerical gradient
 * is good to ~1e-9, so a disagreement is the op's).
 *
 * The memory's reference is the token-by-token recurrence as the issue
 * states it (S_t = eta_t S_{t-1} - theta_t grad, W_t = (1 - alpha_t) W_{t-1}
 * + S_t, every gradient of a chunk at the chunk-start weights, reads at the
 * chunk-start weights), with the inner gradient written out by hand: it
 * checks the op's closed form and its hand-written backward (second-order
 * terms included) independently.  Errors are relative to the largest
 * reference magnitude of each output. */
#include <math.h>
#include <stdint.h>

#include "engine/model/ops.h"
#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"

static const eng_ops *O;
static void *CX; /* the backend's context */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) /* [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-52 - 1.0;
}
static void fill(float *x, size_t n, double s)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(s * urand());
}

static double rel_err(const float *a, const double *b, size_t n)
{
    double e = 0, s = 1e-30;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return e / s;
}

typedef void (*ref_fn)(const double *in, double *out, void *ctx);

#define MAXIN 8192
#define MAXOUT 8192

/* forward error of the op's out against the reference at the same inputs */
static double fwd_err(ref_fn f, void *ctx, const float *in_f, int nin, const float *out, int nout)
{
    static double in[MAXIN], ref[MAXOUT];
    for (int i = 0; i < nin; i++)
        in[i] = in_f[i];
    f(in, ref, ctx);
    return rel_err(out, ref, (size_t)nout);
}

/* numerical gradient of sum_o dout[o] out[o] w.r.t. the inputs */
static void fd_grad(ref_fn f, void *ctx, const float *in_f, int nin, const float *dout, int nout, double *grad)
{
    static double in[MAXIN], out[MAXOUT];
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

static double dsig(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* ------------------------------------------------------------ dconv */
typedef struct conv_ctx {
    int N, T, C, K;
} conv_ctx;

/* in: x (N, C), w (CX, K); out: y (N, C) */
static void ref_conv(const double *in, double *out, void *vc)
{
    const conv_ctx *c = vc;
    const double *x = in, *w = in + c->N * c->C;
    for (int n = 0; n < c->N; n++)
        for (int ch = 0; ch < c->C; ch++) {
            double s = 0;
            for (int j = 0; j < c->K; j++) {
                int t = n % c->T - (c->K - 1) + j;
                if (t >= 0)
                    s += w[ch * c->K + j] * x[(n - n % c->T + t) * c->C + ch];
            }
            out[n * c->C + ch] = s;
        }
}

static void test_dconv(int B, int T, int C, int K)
{
    conv_ctx c = {B * T, T, C, K};
    const int nx = c.N * C, nw = C * K, nin = nx + nw;
    static float in[MAXIN], y[MAXOUT], dy[MAXOUT], dx[MAXIN], dw[MAXIN];
    static double g[MAXIN];
    fill(in, (size_t)nin, 1.0);
    fill(dy, (size_t)nx, 1.0);
    /* the op reads x with a row stride wider than C (a slice of a fused projection) */
    static float xs[MAXIN];
    const int ld = C + 3;
    for (int n = 0; n < c.N; n++)
        for (int ch = 0; ch < C; ch++)
            xs[n * ld + ch] = in[n * C + ch];
    O->dconv_fwd(CX, y, C, xs, ld, in + nx, c.N, T, C, K);
    double ef = fwd_err(ref_conv, &c, in, nin, y, nx);
    for (int i = 0; i < nw; i++)
        dw[i] = 0.5f; /* += */
    O->dconv_bwd(CX, dx, C, dw, dy, C, xs, ld, in + nx, c.N, T, C, K);
    for (int i = 0; i < nw; i++)
        dw[i] -= 0.5f;
    fd_grad(ref_conv, &c, in, nin, dy, nx, g);
    double ex = rel_err(dx, g, (size_t)nx), ew = rel_err(dw, g + nx, (size_t)nw);
    TAP_OK(ef < 1e-6 && ex < 1e-6 && ew < 1e-6, "dconv B %d T %d C %d K %d: fwd %.1e, dx %.1e, dw %.1e", B, T, C, K,
           ef, ex, ew);
}

/* ------------------------------------------------------------ silu_norm */
typedef struct act_ctx {
    int N, C, G, gw;
    double eps;
} act_ctx;

static void ref_act(const double *in, double *out, void *vc)
{
    const act_ctx *c = vc;
    for (int n = 0; n < c->N; n++) {
        for (int ch = 0; ch < c->C; ch++) {
            double x = in[n * c->C + ch];
            out[n * c->C + ch] = x * dsig(x);
        }
        for (int g = 0; g < c->G; g++) {
            double ss = 0, *o = out + n * c->C + g * c->gw;
            for (int j = 0; j < c->gw; j++)
                ss += o[j] * o[j];
            for (int j = 0; j < c->gw; j++)
                o[j] /= sqrt(ss + c->eps);
        }
    }
}

static void test_silu_norm(int N, int G, int gw, int extra)
{
    act_ctx c = {N, G * gw + extra, G, gw, 1e-6};
    const int n = N * c.C;
    static float x[MAXIN], y[MAXOUT], dy[MAXOUT], dx[MAXIN], rn[MAXIN];
    static double g[MAXIN];
    fill(x, (size_t)n, 2.0);
    fill(dy, (size_t)n, 1.0);
    O->silu_norm_fwd(CX, y, c.C, rn, x, c.C, N, c.C, G, gw, (float)c.eps);
    double ef = fwd_err(ref_act, &c, x, n, y, n);
    O->silu_norm_bwd(CX, dx, c.C, dy, c.C, y, c.C, rn, x, c.C, N, c.C, G, gw);
    fd_grad(ref_act, &c, x, n, dy, n, g);
    double eb = rel_err(dx, g, (size_t)n);
    /* in place: dx over dy */
    static float dyi[MAXOUT];
    for (int i = 0; i < n; i++)
        dyi[i] = dy[i];
    O->silu_norm_bwd(CX, dyi, c.C, dyi, c.C, y, c.C, rn, x, c.C, N, c.C, G, gw);
    int same = !memcmp(dyi, dx, (size_t)n * sizeof *dx);
    TAP_OK(ef < 1e-5 && eb < 1e-5 && same, "silu_norm N %d, %d groups of %d + %d: fwd %.1e, dx %.1e%s", N, G, gw,
           extra, ef, eb, same ? ", in place identical" : ", IN PLACE DIFFERS");
}

/* ------------------------------------------------------------ swa */
typedef struct swa_ctx {
    int B, T, H, Hkv, hd, w, Np;
} swa_ctx;

/* in: q (B,T,H,hd), k, v (B,T,Hkv,hd), kp, vp (Np, Hkv, hd); out: o (B,T,H,hd) */
static void ref_swa(const double *in, double *out, void *vc)
{
    const swa_ctx *c = vc;
    const int B = c->B, T = c->T, H = c->H, G = c->Hkv, hd = c->hd, Np = c->Np;
    const double *q = in, *k = q + B * T * H * hd, *v = k + B * T * G * hd, *kp = v + B * T * G * hd,
                 *vp = kp + Np * G * hd;
    const double sc = 1.0 / sqrt((double)hd);
    static double s[4096];
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int g = h / (H / G);
            for (int i = 0; i < T; i++) {
                const double *qi = q + ((b * T + i) * H + h) * hd;
                int n = 0;
                double mx = -1e300;
                for (int j = 0; j < Np; j++) {
                    double d = 0;
                    for (int e = 0; e < hd; e++)
                        d += qi[e] * kp[(j * G + g) * hd + e];
                    s[n] = d * sc;
                    mx = fmax(mx, s[n++]);
                }
                int j0 = i - c->w + 1 > 0 ? i - c->w + 1 : 0;
                for (int j = j0; j <= i; j++) {
                    double d = 0;
                    for (int e = 0; e < hd; e++)
                        d += qi[e] * k[((b * T + j) * G + g) * hd + e];
                    s[n] = d * sc;
                    mx = fmax(mx, s[n++]);
                }
                double z = 0;
                for (int u = 0; u < n; u++)
                    z += (s[u] = exp(s[u] - mx));
                double *o = out + ((b * T + i) * H + h) * hd;
                for (int e = 0; e < hd; e++) {
                    double acc = 0;
                    for (int j = 0; j < Np; j++)
                        acc += s[j] * vp[(j * G + g) * hd + e];
                    for (int j = j0; j <= i; j++)
                        acc += s[Np + j - j0] * v[((b * T + j) * G + g) * hd + e];
                    o[e] = acc / z;
                }
            }
        }
}

static void test_swa(int B, int T, int H, int Hkv, int hd, int w, int Np)
{
    swa_ctx c = {B, T, H, Hkv, hd, w, Np};
    const int nq = B * T * H * hd, nk = B * T * Hkv * hd, np = Np * Hkv * hd;
    const int nin = nq + 2 * nk + 2 * np;
    static float in[MAXIN], o[MAXOUT], dout[MAXOUT], grad[MAXIN], lse[MAXOUT], ws[1 << 20];
    static double g[MAXIN];
    fill(in, (size_t)nin, 1.5);
    fill(dout, (size_t)nq, 1.0);
    float *q = in, *k = q + nq, *v = k + nk, *kp = v + nk, *vp = kp + np;
    if (O->swa_workspace(CX, B, T, Hkv, hd, w, Np) > sizeof ws / sizeof ws[0]) {
        TAP_OK(0, "swa workspace too large for the test");
        return;
    }
    O->swa_fwd(CX, o, H * hd, lse, q, H * hd, k, v, Hkv * hd, kp, vp, Hkv * hd, Np, B, T, H, Hkv, hd, w, ws);
    double ef = fwd_err(ref_swa, &c, in, nin, o, nq);
    float *dq = grad, *dk = dq + nq, *dv = dk + nk, *dkp = dv + nk, *dvp = dkp + np;
    for (int i = 0; i < 2 * np; i++)
        dkp[i] = 0.25f; /* += */
    O->swa_bwd(CX, dq, dk, dv, dkp, dvp, lse, dout, H * hd, q, H * hd, k, v, Hkv * hd, kp, vp, Hkv * hd, Np, B, T, H,
               Hkv, hd, w, ws);
    for (int i = 0; i < 2 * np; i++)
        dkp[i] -= 0.25f;
    fd_grad(ref_swa, &c, in, nin, dout, nq, g);
    double eq = rel_err(dq, g, (size_t)nq), ek = rel_err(dk, g + nq, (size_t)nk), ev = rel_err(dv, g + nq + nk, (size_t)nk);
    double ep = Np ? fmax(rel_err(dkp, g + nq + 2 * nk, (size_t)np), rel_err(dvp, g + nq + 2 * nk + np, (size_t)np)) : 0;
    TAP_OK(ef < 1e-5 && eq < 1e-5 && ek < 1e-5 && ev < 1e-5 && ep < 1e-5,
           "swa B %d T %d H %d/%d hd %d window %d persistent %d: fwd %.1e dq %.1e dk %.1e dv %.1e dkp/dvp %.1e", B, T, H,
           Hkv, hd, w, Np, ef, eq, ek, ev, ep);
}

/* ------------------------------------------------------------ titans_mem */
typedef struct mem_ctx {
    int B, T, H, D, Hm, depth, b;
    double max_lr;
} mem_ctx;

static int mem_pm(const mem_ctx *c)
{
    return c->depth == 2 ? 2 * c->D * c->Hm : c->D * c->D;
}

/* M_W(x) and, when grad != NULL, d||M_W(k) - v||^2/dW for a head's state W */
static void mem_apply(const mem_ctx *c, const double *W, const double *x, double *y)
{
    const int D = c->D, Hm = c->Hm;
    if (c->depth == 1) {
        for (int i = 0; i < D; i++) {
            double s = 0;
            for (int j = 0; j < D; j++)
                s += W[i * D + j] * x[j];
            y[i] = s;
        }
        return;
    }
    double a[64];
    for (int m = 0; m < Hm; m++) {
        double z = 0;
        for (int j = 0; j < D; j++)
            z += W[m * D + j] * x[j];
        a[m] = z * dsig(z);
    }
    for (int i = 0; i < D; i++) {
        double s = 0;
        for (int m = 0; m < Hm; m++)
            s += W[Hm * D + i * Hm + m] * a[m];
        y[i] = s;
    }
}

static void mem_grad(const mem_ctx *c, const double *W, const double *k, const double *v, double *G)
{
    const int D = c->D, Hm = c->Hm;
    double p[64], e[64];
    mem_apply(c, W, k, p);
    for (int i = 0; i < D; i++)
        e[i] = 2 * (p[i] - v[i]);
    if (c->depth == 1) {
        for (int i = 0; i < D; i++)
            for (int j = 0; j < D; j++)
                G[i * D + j] = e[i] * k[j];
        return;
    }
    double z[64], a[64];
    for (int m = 0; m < Hm; m++) {
        z[m] = 0;
        for (int j = 0; j < D; j++)
            z[m] += W[m * D + j] * k[j];
        a[m] = z[m] * dsig(z[m]);
    }
    for (int i = 0; i < D; i++)
        for (int m = 0; m < Hm; m++)
            G[Hm * D + i * Hm + m] = e[i] * a[m];
    for (int m = 0; m < Hm; m++) {
        double g = 0, s = dsig(z[m]);
        for (int i = 0; i < D; i++)
            g += W[Hm * D + i * Hm + m] * e[i];
        double dl = g * s * (1 + z[m] * (1 - s));
        for (int j = 0; j < D; j++)
            G[m * D + j] = dl * k[j];
    }
}

/* in: q, k, v (B,T,H,D), gates (B,T,3H), w0; out: y (B,T,H,D) */
static void ref_mem(const double *in, double *out, void *vc)
{
    const mem_ctx *c = vc;
    const int B = c->B, T = c->T, H = c->H, D = c->D, Hm = c->Hm, Pm = mem_pm(c);
    const int nq = B * T * H * D;
    const double *q = in, *k = q + nq, *v = k + nq, *gt = v + nq, *w0 = gt + B * T * 3 * H;
    static double W[4096], S[4096], W0c[4096], Gs[64][4096];
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            if (c->depth == 2) {
                for (int i = 0; i < Hm * D; i++)
                    W[i] = w0[h * Hm * D + i];
                for (int i = 0; i < D * Hm; i++)
                    W[Hm * D + i] = w0[H * Hm * D + h * D * Hm + i];
            } else {
                for (int i = 0; i < D * D; i++)
                    W[i] = w0[h * D * D + i];
            }
            for (int i = 0; i < Pm; i++)
                S[i] = 0;
            for (int t0 = 0; t0 < T; t0 += c->b) {
                int n = t0 + c->b < T ? c->b : T - t0;
                for (int i = 0; i < Pm; i++)
                    W0c[i] = W[i];
                for (int t = t0; t < t0 + n; t++) {
                    size_t r = ((size_t)(b * T + t) * H + h) * D;
                    mem_apply(c, W0c, q + r, out + r);
                    mem_grad(c, W0c, k + r, v + r, Gs[t - t0]);
                }
                for (int t = t0; t < t0 + n; t++) {
                    const double *g = gt + (size_t)(b * T + t) * 3 * H;
                    double th = c->max_lr * dsig(g[h]), et = dsig(g[H + h]), al = dsig(g[2 * H + h]);
                    for (int i = 0; i < Pm; i++) {
                        S[i] = et * S[i] - th * Gs[t - t0][i];
                        W[i] = (1 - al) * W[i] + S[i];
                    }
                }
            }
        }
}

static void test_mem(int B, int T, int H, int D, int Hm, int depth, int chunk, double max_lr)
{
    mem_ctx c = {B, T, H, D, depth == 2 ? Hm : D, depth, chunk, max_lr};
    const int nq = B * T * H * D, ng = B * T * 3 * H, nw = H * mem_pm(&c);
    const int nin = 3 * nq + ng + nw;
    static float in[MAXIN], y[MAXOUT], dy[MAXOUT], grad[MAXIN], states[1 << 18], ws[1 << 20];
    static double g[MAXIN];
    /* keys and queries of unit norm as the model feeds them, values O(1) */
    fill(in, (size_t)3 * nq, 1.0);
    for (int r = 0; r < 2 * B * T * H; r++) {
        double ss = 0;
        for (int j = 0; j < D; j++)
            ss += in[r * D + j] * in[r * D + j];
        for (int j = 0; j < D; j++)
            in[r * D + j] = (float)(in[r * D + j] / sqrt(ss));
    }
    float *q = in, *k = q + nq, *v = k + nq, *gates = v + nq, *w0 = gates + ng;
    fill(gates, (size_t)ng, 2.0);
    fill(w0, (size_t)nw, 0.8);
    fill(dy, (size_t)nq, 1.0);
    int nc = (T + (chunk < T ? chunk : T) - 1) / (chunk < T ? chunk : T);
    if ((size_t)B * H * nc * 2 * mem_pm(&c) > sizeof states / sizeof states[0] ||
        O->titans_mem_workspace(CX, B, T, H, D, Hm, depth, chunk) > sizeof ws / sizeof ws[0]) {
        TAP_OK(0, "titans_mem: buffers too small for the test");
        return;
    }
    const int ld = H * D;
    O->titans_mem_fwd(CX, y, ld, states, q, k, v, ld, gates, 3 * H, w0, B, T, H, D, Hm, depth, chunk, (float)max_lr,
                      ws);
    double ef = fwd_err(ref_mem, &c, in, nin, y, nq);
    float *dq = grad, *dk = dq + nq, *dv = dk + nq, *dg = dv + nq, *dw = dg + ng;
    for (int i = 0; i < nw; i++)
        dw[i] = 0.5f; /* += */
    O->titans_mem_bwd(CX, dq, dk, dv, ld, dg, 3 * H, dw, dy, ld, states, q, k, v, ld, gates, 3 * H, B, T, H, D, Hm,
                      depth, chunk, (float)max_lr, ws);
    for (int i = 0; i < nw; i++)
        dw[i] -= 0.5f;
    fd_grad(ref_mem, &c, in, nin, dy, nq, g);
    double eq = rel_err(dq, g, (size_t)nq), ek = rel_err(dk, g + nq, (size_t)nq), ev = rel_err(dv, g + 2 * nq, (size_t)nq);
    double eg = rel_err(dg, g + 3 * nq, (size_t)ng), ew = rel_err(dw, g + 3 * nq + ng, (size_t)nw);
    const double tol = 2e-5;
    TAP_OK(ef < tol && eq < tol && ek < tol && ev < tol && eg < tol && ew < tol,
           "titans_mem depth %d B %d T %d H %d D %d Hm %d chunk %d max_lr %g: fwd %.1e dq %.1e dk %.1e dv %.1e "
           "dgates %.1e dw0 %.1e",
           depth, B, T, H, D, c.Hm, chunk, max_lr, ef, eq, ek, ev, eg, ew);
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
    test_dconv(2, 7, 5, 4);
    test_dconv(3, 3, 9, 4); /* T < K: the window reaches past the sequence start */
    test_dconv(1, 6, 3, 1);
    test_silu_norm(5, 2, 7, 0);
    test_silu_norm(4, 2, 8, 13); /* q, k normalised; v only activated */
    test_swa(2, 9, 2, 2, 4, 3, 0);
    test_swa(2, 9, 2, 2, 4, 3, 3);
    test_swa(1, 9, 4, 2, 4, 20, 2);  /* window larger than T: causal */
    test_swa(1, 70, 2, 1, 4, 9, 2);  /* two row blocks, multi-query */
    test_swa(1, 70, 2, 2, 4, 1, 1);  /* window 1: itself and the persistent entry */
    test_swa(1, 130, 1, 1, 2, 100, 0); /* three blocks, wide window */
    for (int depth = 1; depth <= 2; depth++) {
        test_mem(2, 7, 2, 4, 6, depth, 3, 0.5);  /* chunk does not divide T */
        test_mem(1, 8, 2, 4, 5, depth, 4, 0.9);  /* chunk divides T */
        test_mem(2, 5, 1, 3, 4, depth, 1, 0.7);  /* b = 1: token by token */
        test_mem(1, 6, 2, 3, 4, depth, 16, 0.5); /* one chunk: reads only see the initial weights */
    }
    return tap_done();
}
