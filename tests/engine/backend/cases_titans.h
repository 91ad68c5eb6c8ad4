/* cases_titans.h: the cases of the Titans op group (ENG_OPS_TITANS) for
 * tests/engine/backend/test_backend_ops: dconv, silu_norm, swa and
 * titans_mem, each with its double-precision reference.  The memory's
 * reference is the token-by-token recurrence as the issue states it (S_t =
 * eta_t S_{t-1} - theta_t grad, W_t = (1 - alpha_t) W_{t-1} + S_t, every
 * gradient of a chunk at the chunk-start weights, reads at the chunk-start
 * weights), with the inner gradient written out by hand: it checks the
 * op's closed form and its hand-written backward (second-order terms
 * included) independently.  Header-only, for test_backend_ops.c. */
#ifndef TLM_TESTS_ENGINE_BACKEND_CASES_TITANS_H
#define TLM_TESTS_ENGINE_BACKEND_CASES_TITANS_H

#include "tests/engine/backend/harness.h"

/* ------------------------------------------------------------ dconv */
typedef struct conv_ctx {
    int N, T, C, K;
} conv_ctx;

/* in: x (N, C), w (C, K); out: y (N, C) */
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

/* a: B, T, C, K */
static void tb_case_dconv(tcase *t, const int *a, double unused)
{
    const int B = a[0], T = a[1], C = a[2], K = a[3];
    conv_ctx c = {B * T, T, C, K};
    const int nx = c.N * C, nw = C * K, nin = nx + nw;
    /* the op reads x with a row stride wider than C (a slice of a fused projection) */
    const int ld = C + 3;
    static double g[MAXIN];
    float *in = t_floats(t, nin), *y = t_floats(t, nx), *dy = t_floats(t, nx), *dx = t_floats(t, nx),
          *dw = t_floats(t, nw), *xs = t_floats(t, (size_t)c.N * ld);
    if (!t->fits)
        return;
    t_act(t, y, nx);
    t_act(t, dy, nx);
    t_act(t, dx, nx);
    t_act(t, xs, (size_t)c.N * ld);
    fill(in, (size_t)nin, 1.0);
    fill(dy, (size_t)nx, 1.0);
    for (int n = 0; n < c.N; n++)
        for (int ch = 0; ch < C; ch++)
            xs[n * ld + ch] = in[n * C + ch];
    OP(t, dconv_fwd, D(t, y), C, D(t, xs), ld, D(t, in + nx), c.N, T, C, K);
    t_out(t, y, nx, T_FWD, "y");
    for (int i = 0; i < nw; i++)
        dw[i] = 0.5f; /* += */
    OP(t, dconv_bwd, D(t, dx), C, D(t, dw), D(t, dy), C, D(t, xs), ld, D(t, in + nx), c.N, T, C, K);
    for (int i = 0; i < nw; i++)
        dw[i] -= 0.5f;
    t_out(t, dx, nx, T_BWD, "dx");
    t_out(t, dw, nw, T_BWD, "dw");
    if (!REF(t))
        return;
    double ef = fwd_err(ref_conv, &c, in, nin, y, nx);
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

/* a: N, G, gw, extra columns */
static void tb_case_silu_norm(tcase *t, const int *a, double unused)
{
    const int N = a[0], G = a[1], gw = a[2], extra = a[3];
    act_ctx c = {N, G * gw + extra, G, gw, 1e-6};
    const int n = N * c.C;
    static double g[MAXIN];
    float *x = t_floats(t, n), *y = t_floats(t, n), *dy = t_floats(t, n), *dx = t_floats(t, n),
          *rn = t_floats(t, (size_t)N * G), *dyi = t_floats(t, n);
    if (!t->fits)
        return;
    t_act(t, x, n);
    t_act(t, y, n);
    t_act(t, dy, n);
    t_act(t, dx, n);
    t_act(t, dyi, n);
    fill(x, (size_t)n, 2.0);
    fill(dy, (size_t)n, 1.0);
    OP(t, silu_norm_fwd, D(t, y), c.C, D(t, rn), D(t, x), c.C, N, c.C, G, gw, (float)c.eps);
    t_out(t, y, n, T_FWD, "y");
    t_out(t, rn, (size_t)N * G, T_FWD, "rn");
    OP(t, silu_norm_bwd, D(t, dx), c.C, D(t, dy), c.C, D(t, y), c.C, D(t, rn), D(t, x), c.C, N, c.C, G, gw);
    /* in place: dx over dy */
    for (int i = 0; i < n; i++)
        dyi[i] = dy[i];
    OP(t, silu_norm_bwd, D(t, dyi), c.C, D(t, dyi), c.C, D(t, y), c.C, D(t, rn), D(t, x), c.C, N, c.C, G, gw);
    t_out(t, dx, n, T_BWD, "dx");
    t_out(t, dyi, n, T_BWD, "dx in place");
    if (!REF(t))
        return;
    double ef = fwd_err(ref_act, &c, x, n, y, n);
    fd_grad(ref_act, &c, x, n, dy, n, g);
    double eb = rel_err(dx, g, (size_t)n);
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

/* a: B, T, H, Hkv, hd, window, persistent entries */
static void tb_case_swa(tcase *t, const int *a, double unused)
{
    const int B = a[0], T = a[1], H = a[2], Hkv = a[3], hd = a[4], w = a[5], Np = a[6];
    swa_ctx c = {B, T, H, Hkv, hd, w, Np};
    const int nq = B * T * H * hd, nk = B * T * Hkv * hd, np = Np * Hkv * hd;
    const int nin = nq + 2 * nk + 2 * np;
    static double g[MAXIN];
    float *in = t_floats(t, nin), *o = t_floats(t, nq), *dout = t_floats(t, nq), *grad = t_floats(t, nin),
          *lse = t_floats(t, (size_t)B * H * T);
    float *ws = t_floats(t, t->o->swa_workspace(t->ctx, B, T, Hkv, hd, w, Np));
    if (!t->fits || nin > MAXIN) {
        TAP_OK(0, "swa workspace too large for the test");
        return;
    }
    t_act(t, in, nq + 2 * nk); /* q, k, v; the persistent entries after them are parameters */
    t_act(t, o, nq);
    t_act(t, dout, nq);
    t_act(t, grad, nq + 2 * nk);
    fill(in, (size_t)nin, 1.5);
    fill(dout, (size_t)nq, 1.0);
    float *q = in, *k = q + nq, *v = k + nk, *kp = v + nk, *vp = kp + np;
    OP(t, swa_fwd, D(t, o), H * hd, D(t, lse), D(t, q), H * hd, D(t, k), D(t, v), Hkv * hd, D(t, kp), D(t, vp),
       Hkv * hd, Np, B, T, H, Hkv, hd, w, D(t, ws));
    t_out(t, o, nq, T_FWD, "out");
    t_out(t, lse, (size_t)B * H * T, T_FWD, "lse");
    float *dq = grad, *dk = dq + nq, *dv = dk + nk, *dkp = dv + nk, *dvp = dkp + np;
    for (int i = 0; i < 2 * np; i++)
        dkp[i] = 0.25f; /* += */
    OP(t, swa_bwd, D(t, dq), D(t, dk), D(t, dv), D(t, dkp), D(t, dvp), D(t, lse), D(t, dout), H * hd, D(t, q), H * hd,
       D(t, k), D(t, v), Hkv * hd, D(t, kp), D(t, vp), Hkv * hd, Np, B, T, H, Hkv, hd, w, D(t, ws));
    for (int i = 0; i < 2 * np; i++)
        dkp[i] -= 0.25f;
    t_out(t, grad, nin, T_BWD, "dq, dk, dv, dkp, dvp");
    if (!REF(t))
        return;
    double ef = fwd_err(ref_swa, &c, in, nin, o, nq);
    fd_grad(ref_swa, &c, in, nin, dout, nq, g);
    double eq = rel_err(dq, g, (size_t)nq), ek = rel_err(dk, g + nq, (size_t)nk),
           ev = rel_err(dv, g + nq + nk, (size_t)nk);
    double ep = Np ? fmax(rel_err(dkp, g + nq + 2 * nk, (size_t)np), rel_err(dvp, g + nq + 2 * nk + np, (size_t)np))
                   : 0;
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

/* M_W(x) for a head's state W */
static void mem_apply(const mem_ctx *c, const double *W, const double *x, double *y)
{
    const int Dd = c->D, Hm = c->Hm;
    if (c->depth == 1) {
        for (int i = 0; i < Dd; i++) {
            double s = 0;
            for (int j = 0; j < Dd; j++)
                s += W[i * Dd + j] * x[j];
            y[i] = s;
        }
        return;
    }
    double a[64];
    for (int m = 0; m < Hm; m++) {
        double z = 0;
        for (int j = 0; j < Dd; j++)
            z += W[m * Dd + j] * x[j];
        a[m] = z * dsig(z);
    }
    for (int i = 0; i < Dd; i++) {
        double s = 0;
        for (int m = 0; m < Hm; m++)
            s += W[Hm * Dd + i * Hm + m] * a[m];
        y[i] = s;
    }
}

/* d||M_W(k) - v||^2/dW */
static void mem_grad(const mem_ctx *c, const double *W, const double *k, const double *v, double *G)
{
    const int Dd = c->D, Hm = c->Hm;
    double p[64], e[64];
    mem_apply(c, W, k, p);
    for (int i = 0; i < Dd; i++)
        e[i] = 2 * (p[i] - v[i]);
    if (c->depth == 1) {
        for (int i = 0; i < Dd; i++)
            for (int j = 0; j < Dd; j++)
                G[i * Dd + j] = e[i] * k[j];
        return;
    }
    double z[64], a[64];
    for (int m = 0; m < Hm; m++) {
        z[m] = 0;
        for (int j = 0; j < Dd; j++)
            z[m] += W[m * Dd + j] * k[j];
        a[m] = z[m] * dsig(z[m]);
    }
    for (int i = 0; i < Dd; i++)
        for (int m = 0; m < Hm; m++)
            G[Hm * Dd + i * Hm + m] = e[i] * a[m];
    for (int m = 0; m < Hm; m++) {
        double g = 0, s = dsig(z[m]);
        for (int i = 0; i < Dd; i++)
            g += W[Hm * Dd + i * Hm + m] * e[i];
        double dl = g * s * (1 + z[m] * (1 - s));
        for (int j = 0; j < Dd; j++)
            G[m * Dd + j] = dl * k[j];
    }
}

/* in: q, k, v (B,T,H,D), gates (B,T,3H), w0; out: y (B,T,H,D) */
static void ref_mem(const double *in, double *out, void *vc)
{
    const mem_ctx *c = vc;
    const int B = c->B, T = c->T, H = c->H, Dd = c->D, Hm = c->Hm, Pm = mem_pm(c);
    const int nq = B * T * H * Dd;
    const double *q = in, *k = q + nq, *v = k + nq, *gt = v + nq, *w0 = gt + B * T * 3 * H;
    static double W[4096], S[4096], W0c[4096], Gs[64][4096];
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            if (c->depth == 2) {
                for (int i = 0; i < Hm * Dd; i++)
                    W[i] = w0[h * Hm * Dd + i];
                for (int i = 0; i < Dd * Hm; i++)
                    W[Hm * Dd + i] = w0[H * Hm * Dd + h * Dd * Hm + i];
            } else {
                for (int i = 0; i < Dd * Dd; i++)
                    W[i] = w0[h * Dd * Dd + i];
            }
            for (int i = 0; i < Pm; i++)
                S[i] = 0;
            for (int t0 = 0; t0 < T; t0 += c->b) {
                int n = t0 + c->b < T ? c->b : T - t0;
                for (int i = 0; i < Pm; i++)
                    W0c[i] = W[i];
                for (int t = t0; t < t0 + n; t++) {
                    size_t r = ((size_t)(b * T + t) * H + h) * Dd;
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

/* a: B, T, H, D, Hm, depth, chunk; max_lr */
static void tb_case_mem(tcase *t, const int *a, double max_lr)
{
    const int B = a[0], T = a[1], H = a[2], Dd = a[3], Hm = a[4], depth = a[5], chunk = a[6];
    mem_ctx c = {B, T, H, Dd, depth == 2 ? Hm : Dd, depth, chunk, max_lr};
    const int nq = B * T * H * Dd, ng = B * T * 3 * H, nw = H * mem_pm(&c);
    const int nin = 3 * nq + ng + nw;
    static double g[MAXIN];
    int nc = (T + (chunk < T ? chunk : T) - 1) / (chunk < T ? chunk : T);
    float *in = t_floats(t, nin), *y = t_floats(t, nq), *dy = t_floats(t, nq), *grad = t_floats(t, nin),
          *states = t_floats(t, (size_t)B * H * nc * 2 * mem_pm(&c));
    float *ws = t_floats(t, t->o->titans_mem_workspace(t->ctx, B, T, H, Dd, Hm, depth, chunk));
    if (!t->fits || nin > MAXIN) {
        TAP_OK(0, "titans_mem: buffers too small for the test");
        return;
    }
    t_act(t, in, (size_t)3 * nq + ng); /* q, k, v, gates; w0 after them is a parameter */
    t_act(t, y, nq);
    t_act(t, dy, nq);
    t_act(t, grad, (size_t)3 * nq + ng);
    /* keys and queries of unit norm as the model feeds them, values O(1) */
    fill(in, (size_t)3 * nq, 1.0);
    for (int r = 0; r < 2 * B * T * H; r++) {
        double ss = 0;
        for (int j = 0; j < Dd; j++)
            ss += in[r * Dd + j] * in[r * Dd + j];
        for (int j = 0; j < Dd; j++)
            in[r * Dd + j] = (float)(in[r * Dd + j] / sqrt(ss));
    }
    float *q = in, *k = q + nq, *v = k + nq, *gates = v + nq, *w0 = gates + ng;
    fill(gates, (size_t)ng, 2.0);
    fill(w0, (size_t)nw, 0.8);
    fill(dy, (size_t)nq, 1.0);
    const int ld = H * Dd;
    OP(t, titans_mem_fwd, D(t, y), ld, D(t, states), D(t, q), D(t, k), D(t, v), ld, D(t, gates), 3 * H, D(t, w0), B,
       T, H, Dd, Hm, depth, chunk, (float)max_lr, D(t, ws));
    t_out(t, y, nq, T_FWD, "y");
    float *dq = grad, *dk = dq + nq, *dv = dk + nq, *dg = dv + nq, *dw = dg + ng;
    for (int i = 0; i < nw; i++)
        dw[i] = 0.5f; /* += */
    OP(t, titans_mem_bwd, D(t, dq), D(t, dk), D(t, dv), ld, D(t, dg), 3 * H, D(t, dw), D(t, dy), ld, D(t, states),
       D(t, q), D(t, k), D(t, v), ld, D(t, gates), 3 * H, B, T, H, Dd, Hm, depth, chunk, (float)max_lr, D(t, ws));
    for (int i = 0; i < nw; i++)
        dw[i] -= 0.5f;
    t_out(t, grad, nin, T_BWD, "dq, dk, dv, dgates, dw0");
    if (!REF(t))
        return;
    double ef = fwd_err(ref_mem, &c, in, nin, y, nq);
    fd_grad(ref_mem, &c, in, nin, dy, nq, g);
    double eq = rel_err(dq, g, (size_t)nq), ek = rel_err(dk, g + nq, (size_t)nq),
           ev = rel_err(dv, g + 2 * nq, (size_t)nq);
    double eg = rel_err(dg, g + 3 * nq, (size_t)ng), ew = rel_err(dw, g + 3 * nq + ng, (size_t)nw);
    const double tol = 2e-5;
    TAP_OK(ef < tol && eq < tol && ek < tol && ev < tol && eg < tol && ew < tol,
           "titans_mem depth %d B %d T %d H %d D %d Hm %d chunk %d max_lr %g: fwd %.1e dq %.1e dk %.1e dv %.1e "
           "dgates %.1e dw0 %.1e",
           depth, B, T, H, Dd, c.Hm, chunk, max_lr, ef, eq, ek, ev, eg, ew);
}

#endif
