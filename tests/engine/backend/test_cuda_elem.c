/* test_cuda_elem.c: the CUDA kernels' per-element and per-row arithmetic
 * (engine/cuda/elem.h, compiled here by the C compiler) against the CPU
 * backend's ops on the same inputs.  It runs on every machine, GPU or not:
 * what a kernel computes for an element is checked here, how the kernels
 * split the work (blocks, warps, their reduction trees) only on a GPU
 * (test_backend_ops' cuda row).  Rows are reduced as the kernels do: in
 * per-thread strides merged in a fixed tree, emulated below.
 *
 * Tolerances: the helpers use libm's expf, the CPU its polynomial eng__expf
 * (< 2e-7 apart), and sums are cut differently, so agreement is to a few
 * float ulps of the largest value, not bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cpu/backend.h"
#include "engine/cuda/elem.h"
#include "tests/lib/tap.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float urandf(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) * 0x1.0p-52 - 1.0);
}
static void fill(float *x, size_t n, float s)
{
    for (size_t i = 0; i < n; i++)
        x[i] = s * urandf();
}
static double rel(const float *a, const float *b, size_t n)
{
    double e = 0, m = 1e-30;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return e / m;
}

static const eng_ops *O;
static void *X;

/* a row's sum as a block of `nt` threads reduces it: strided partials,
 * then pairwise in a tree (what block_sum's shuffles do) */
static float tree_sum(const float *x, int n, int nt)
{
    float part[512];
    for (int t = 0; t < nt; t++) {
        part[t] = 0;
        for (int i = t; i < n; i += nt)
            part[t] += x[i];
    }
    for (int w = nt / 2; w > 0; w /= 2)
        for (int t = 0; t < w; t++)
            part[t] += part[t + w];
    return part[0];
}

static void test_swiglu(void)
{
    enum { N = 7, F = 45, LD = 50 };
    static float g[N * LD], u[N * LD], out[N * F], dout[N * F], dg[N * LD], du[N * LD];
    static float h_out[N * F], h_dg[N * LD], h_du[N * LD];
    fill(g, N * LD, 6), fill(u, N * LD, 2), fill(dout, N * F, 1);
    O->swiglu_fwd(X, (eng_act *)out, (const eng_act *)g, (const eng_act *)u, LD, N, F);
    O->swiglu_bwd(X, (eng_act *)dg, (eng_act *)du, (const eng_act *)dout, (const eng_act *)g, (const eng_act *)u, LD, N,
                  F);
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++) {
            h_out[n * F + f] = eng_cu_swiglu_fwd(g[n * LD + f], u[n * LD + f]);
            eng_cu_swiglu_bwd(dout[n * F + f], g[n * LD + f], u[n * LD + f], &h_dg[n * LD + f], &h_du[n * LD + f]);
        }
    double ef = rel(h_out, out, N * F), eg = rel(h_dg, dg, N * LD), eu = rel(h_du, du, N * LD);
    TAP_OK(ef < 1e-6 && eg < 1e-6 && eu < 1e-6, "swiglu: out %.1e, dg %.1e, du %.1e against the cpu", ef, eg, eu);
}

static void test_gate(int G)
{
    enum { N = 5, D = 12, LDZ = 14 };
    static float a[N * D], z[N * LDZ], out[N * D], dout[N * D], da[N * D], dz[N * LDZ];
    static float h_out[N * D], h_da[N * D], h_dz[N * LDZ];
    fill(a, N * D, 1), fill(z, N * LDZ, 4), fill(dout, N * D, 1);
    memset(dz, 0, sizeof dz), memset(h_dz, 0, sizeof h_dz);
    O->gate_fwd(X, (eng_act *)out, (const eng_act *)a, (const eng_act *)z, LDZ, N, D, G);
    O->gate_bwd(X, (eng_act *)da, (eng_act *)dz, (const eng_act *)dout, (const eng_act *)a, (const eng_act *)z, LDZ, N,
                D, G);
    const int w = D / G;
    for (int n = 0; n < N; n++)
        for (int g = 0; g < G; g++) {
            float s = eng_cu_sigmoid(z[n * LDZ + g]), acc = 0;
            for (int j = g * w; j < (g + 1) * w; j++) {
                h_out[n * D + j] = a[n * D + j] * s;
                h_da[n * D + j] = dout[n * D + j] * s;
                acc += dout[n * D + j] * a[n * D + j];
            }
            h_dz[n * LDZ + g] = eng_cu_gate_dz(s, acc);
        }
    double e1 = rel(h_out, out, N * D), e2 = rel(h_da, da, N * D), e3 = rel(h_dz, dz, N * LDZ);
    TAP_OK(e1 < 1e-6 && e2 < 1e-6 && e3 < 1e-6, "gate (G %d): out %.1e, da %.1e, dz %.1e against the cpu", G, e1, e2,
           e3);
}

static void rope_helper(float *x, int ld, int N, int T, int H, int hd, const float *cs, float sign)
{
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < hd / 2; i++) {
                float *a = x + n * ld + h * hd;
                const float *c = cs + (n % T) * hd;
                eng_cu_rope_pair(a + i, a + i + hd / 2, c[i], c[hd / 2 + i], sign);
            }
}

static void test_rope(void)
{
    enum { N = 6, T = 4, H = 2, HD = 8, LD = 20 };
    static float x[N * LD], y[N * LD], cs[T * HD];
    fill(x, N * LD, 1);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < HD / 2; i++) {
            double ang = t * pow(10000.0, -2.0 * i / HD);
            cs[t * HD + i] = (float)cos(ang);
            cs[t * HD + HD / 2 + i] = (float)sin(ang);
        }
    double err[2];
    for (int pass = 0; pass < 2; pass++) {
        memcpy(y, x, sizeof y);
        if (pass)
            O->rope_bwd(X, (eng_act *)y, LD, N, T, H, HD, cs);
        else
            O->rope_fwd(X, (eng_act *)y, LD, N, T, H, HD, cs);
        static float h[N * LD];
        memcpy(h, x, sizeof h);
        rope_helper(h, LD, N, T, H, HD, cs, pass ? -1.0f : 1.0f);
        err[pass] = rel(h, y, N * LD);
    }
    TAP_OK(err[0] < 1e-6 && err[1] < 1e-6, "rope: forward %.1e, backward %.1e against the cpu", err[0], err[1]);
}

static void test_rmsnorm(void)
{
    enum { N = 4, C = 301, NT = 256 };
    static float x[N * C], w[C], out[N * C], rstd[N], dout[N * C], dx[N * C], dw[C];
    static float h_out[N * C], h_rstd[N], h_dx[N * C], h_dw[C], sq[C];
    fill(x, N * C, 2), fill(w, C, 1), fill(dout, N * C, 1);
    memset(dx, 0, sizeof dx), memset(dw, 0, sizeof dw), memset(h_dx, 0, sizeof h_dx), memset(h_dw, 0, sizeof h_dw);
    O->rmsnorm_fwd(X, (eng_act *)out, rstd, (const eng_act *)x, w, N, C, 1e-5f);
    O->rmsnorm_bwd(X, (eng_act *)dx, dw, (const eng_act *)dout, (const eng_act *)x, w, rstd, N, C);
    for (int n = 0; n < N; n++) {
        const float *xn = x + n * C, *dn = dout + n * C;
        for (int c = 0; c < C; c++)
            sq[c] = xn[c] * xn[c];
        float r = eng_cu_rmsnorm_rstd(tree_sum(sq, C, NT), C, 1e-5f);
        h_rstd[n] = r;
        for (int c = 0; c < C; c++) {
            h_out[n * C + c] = xn[c] * r * w[c];
            sq[c] = dn[c] * w[c] * xn[c];
        }
        float k = eng_cu_rmsnorm_k(tree_sum(sq, C, NT), r, C);
        for (int c = 0; c < C; c++)
            h_dx[n * C + c] += eng_cu_rmsnorm_dx(r, w[c], dn[c], xn[c], k);
    }
    for (int c = 0; c < C; c++) /* 8 row slices, added in order */
        for (int sl = 0; sl < 8; sl++) {
            float s = 0;
            for (int n = sl; n < N; n += 8)
                s += dout[n * C + c] * x[n * C + c] * h_rstd[n];
            h_dw[c] += s;
        }
    double e1 = rel(h_out, out, N * C), e2 = rel(h_rstd, rstd, N), e3 = rel(h_dx, dx, N * C), e4 = rel(h_dw, dw, C);
    TAP_OK(e1 < 1e-6 && e2 < 1e-6 && e3 < 1e-6 && e4 < 1e-6,
           "rmsnorm: out %.1e, rstd %.1e, dx %.1e, dw %.1e against the cpu", e1, e2, e3, e4);
}

/* a row's (max, sum) as a 512-thread block of the xent kernel merges it */
static void row_lse(const float *l, int V, float *m, float *s)
{
    enum { NT = 512 };
    float pm[NT], ps[NT];
    for (int t = 0; t < NT; t++) {
        pm[t] = -INFINITY, ps[t] = 0;
        for (int v = t; v < V; v += NT)
            eng_cu_lse_add(&pm[t], &ps[t], l[v]);
    }
    for (int w = NT / 2; w > 0; w /= 2)
        for (int t = 0; t < w; t++)
            eng_cu_lse_merge(&pm[t], &ps[t], pm[t + w], ps[t + w]);
    *m = pm[0], *s = ps[0];
}

static void test_xent(void)
{
    enum { N = 5, V = 1301 };
    static float logits[N * V], grad[N * V], h_grad[N * V], loss[N], h_loss[N];
    int32_t tgt[N] = {3, -1, 1300, 0, 777};
    fill(logits, N * V, 8);
    O->xent_fwd(X, loss, logits, tgt, N, V);
    memcpy(grad, logits, sizeof grad);
    O->xent_bwd(X, grad, tgt, N, V, 0.25f);
    for (int n = 0; n < N; n++) {
        const float *l = logits + n * V;
        float m, s;
        row_lse(l, V, &m, &s);
        h_loss[n] = tgt[n] < 0 ? 0 : eng_cu_xent_loss(m, s, l[tgt[n]]);
        for (int v = 0; v < V; v++)
            h_grad[n * V + v] = tgt[n] < 0 ? 0 : eng_cu_xent_grad(l[v], m, s, v == tgt[n], 0.25f);
    }
    double el = rel(h_loss, loss, N), eg = rel(h_grad, grad, N * V);
    TAP_OK(el < 1e-6 && eg < 1e-6, "xent: losses %.1e, logit gradients %.1e against the cpu (online max/sum)", el,
           eg);
}

/* One key of the flash kernels' running row (max m, sum l, accumulator
 * acc of hd values), by eng_cu_flash_step: what test_flash and test_swa
 * replay on the host for each key a query sees; online_end writes the
 * row's output and log-sum-exp. */
static void online_key(float *m, float *l, float *acc, int hd, const float *qi, const float *kj, const float *vj,
                       float scale)
{
    float d = 0, resc, w;
    for (int e = 0; e < hd; e++)
        d += qi[e] * kj[e];
    eng_cu_flash_step(m, l, d * scale, &resc, &w);
    for (int e = 0; e < hd; e++)
        acc[e] = acc[e] * resc + w * vj[e];
}
static void online_end(float m, float l, const float *acc, int hd, float *out, float *lse)
{
    for (int e = 0; e < hd; e++)
        out[e] = acc[e] / l;
    *lse = m + logf(l);
}

/* attention's forward for every row by the flash kernel's running
 * (max, sum, accumulator), against the CPU's out and lse */
static void test_flash(void)
{
    enum { B = 2, T = 70, H = 4, HKV = 2, HD = 8 };
    const int ldq = H * HD, ldkv = HKV * HD;
    static float q[B * T * H * HD], k[B * T * HKV * HD], v[B * T * HKV * HD], out[B * T * H * HD], lse[B * H * T];
    static float h_out[B * T * H * HD], h_lse[B * H * T];
    fill(q, sizeof q / 4, 1), fill(k, sizeof k / 4, 1), fill(v, sizeof v / 4, 1);
    size_t ws_n = O->attention_workspace(X, B, T, H, HD);
    float *ws = O->alloc(X, ws_n * sizeof(float));
    O->attention_fwd(X, (eng_act *)out, ldq, lse, (const eng_act *)q, ldq, (const eng_act *)k, (const eng_act *)v, ldkv,
                     B, T, H, HKV, HD, ws);
    O->free(X, ws);
    const float scale = 1.0f / sqrtf((float)HD);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const int kh = h / (H / HKV);
                const float *qi = q + (b * T + t) * ldq + h * HD;
                float m = -INFINITY, l = 0, acc[HD] = {0};
                for (int j = 0; j <= t; j++) {
                    const float *kj = k + (b * T + j) * ldkv + kh * HD, *vj = v + (b * T + j) * ldkv + kh * HD;
                    online_key(&m, &l, acc, HD, qi, kj, vj, scale);
                }
                online_end(m, l, acc, HD, h_out + (b * T + t) * ldq + h * HD, h_lse + (b * H + h) * T + t);
            }
    double eo = rel(h_out, out, sizeof out / 4), el = rel(h_lse, lse, sizeof lse / 4);
    TAP_OK(eo < 2e-6 && el < 2e-6, "flash attention's online softmax: out %.1e, lse %.1e against the cpu", eo, el);
}

static void test_adamw(void)
{
    enum { N = 1000 };
    static float p[N], g[N], m[N], v[N], hp[N], hm[N], hv[N];
    fill(p, N, 1), fill(g, N, 0.1f), fill(m, N, 0.01f), fill(v, N, 0.001f);
    for (int i = 0; i < N; i++)
        v[i] = fabsf(v[i]);
    memcpy(hp, p, sizeof p), memcpy(hm, m, sizeof m), memcpy(hv, v, sizeof v);
    const float lr = 3e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f, bc1 = 1 - 0.9f * 0.9f,
                bc2 = 1 - 0.95f * 0.95f, gs = 0.5f;
    const eng_adamw_seg all = {0, N, 1};
    O->adamw(X, p, g, m, v, &all, 1, lr, b1, b2, eps, wd, bc1, bc2, gs, NULL, ENG_F32);
    for (int i = 0; i < N; i++)
        eng_cu_adamw(&hp[i], g[i], &hm[i], &hv[i], b1, b2, eps, 1.0f - lr * wd, lr / bc1, 1.0f / sqrtf(bc2), gs);
    double ep = rel(hp, p, N), em = rel(hm, m, N), ev = rel(hv, v, N);
    TAP_OK(ep < 1e-7 && em < 1e-7 && ev < 1e-7, "adamw: p %.1e, m %.1e, v %.1e against the cpu", ep, em, ev);
}

/* dconv by the kernels' per-element loops (a thread per output element,
 * taps through eng_cu_dconv_src/dst; dw a thread per (channel, tap), rows
 * in order), against the CPU */
static void test_dconv(int T, int K)
{
    enum { N = 15, C = 7, LD = 9 }; /* N rows of whole sequences: a multiple of T (5 and 3) */
    static float x[N * LD], w[C * 16], y[N * LD], dy[N * LD], dx[N * LD], dw[C * 16];
    static float h_y[N * LD], h_dx[N * LD], h_dw[C * 16];
    fill(x, N * LD, 1), fill(w, C * K, 1), fill(dy, N * LD, 1);
    memset(y, 0, sizeof y), memset(dx, 0, sizeof dx), memset(h_y, 0, sizeof h_y), memset(h_dx, 0, sizeof h_dx);
    memset(dw, 0, sizeof dw), memset(h_dw, 0, sizeof h_dw);
    O->dconv_fwd(X, (eng_act *)y, LD, (const eng_act *)x, LD, w, N, T, C, K);
    O->dconv_bwd(X, (eng_act *)dx, LD, dw, (const eng_act *)dy, LD, (const eng_act *)x, LD, w, N, T, C, K);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            const int t = n % T;
            float a = 0, b = 0;
            for (int j = 0; j < K; j++) {
                const int s = eng_cu_dconv_src(t, j, K), u = eng_cu_dconv_dst(t, j, K, T);
                if (s >= 0)
                    a += w[c * K + j] * x[(n - t + s) * LD + c];
                if (u >= 0)
                    b += w[c * K + j] * dy[(n - t + u) * LD + c];
            }
            h_y[n * LD + c] = a, h_dx[n * LD + c] = b;
        }
    for (int c = 0; c < C; c++)
        for (int j = 0; j < K; j++) {
            float acc = 0;
            for (int n = 0; n < N; n++) {
                const int t = n % T, s = eng_cu_dconv_src(t, j, K);
                if (s >= 0)
                    acc += dy[n * LD + c] * x[(n - t + s) * LD + c];
            }
            h_dw[c * K + j] = acc;
        }
    double e1 = rel(h_y, y, N * LD), e2 = rel(h_dx, dx, N * LD), e3 = rel(h_dw, dw, C * K);
    TAP_OK(e1 < 1e-6 && e2 < 1e-6 && e3 < 1e-6, "dconv (T %d, K %d): y %.1e, dx %.1e, dw %.1e against the cpu", T, K,
           e1, e2, e3);
}

/* silu_norm as its kernels do it: a warp per (row, group), the group's sums
 * cut over 32 lanes, the columns after the groups only activated */
static void test_silu_norm(void)
{
    enum { N = 5, G = 2, GW = 37, C = 2 * 37 + 11, LD = 90 };
    static float x[N * LD], y[N * LD], rn[N * G], dy[N * LD], dx[N * LD];
    static float h_y[N * LD], h_rn[N * G], h_dx[N * LD], sq[GW];
    fill(x, N * LD, 3), fill(dy, N * LD, 1);
    memset(y, 0, sizeof y), memset(dx, 0, sizeof dx), memset(h_y, 0, sizeof h_y), memset(h_dx, 0, sizeof h_dx);
    O->silu_norm_fwd(X, (eng_act *)y, LD, rn, (const eng_act *)x, LD, N, C, G, GW, 1e-6f);
    O->silu_norm_bwd(X, (eng_act *)dx, LD, (const eng_act *)dy, LD, (const eng_act *)y, LD, rn, (const eng_act *)x, LD,
                     N, C, G, GW);
    for (int n = 0; n < N; n++) {
        const float *xn = x + n * LD, *dyn = dy + n * LD, *yn = y + n * LD;
        for (int g = 0; g < G; g++) {
            for (int c = 0; c < GW; c++) {
                float s = eng_cu_silu(xn[g * GW + c]);
                sq[c] = s * s;
            }
            float r = eng_cu_silu_norm_r(tree_sum(sq, GW, 32), 1e-6f);
            h_rn[n * G + g] = r;
            for (int c = 0; c < GW; c++) {
                h_y[n * LD + g * GW + c] = eng_cu_silu(xn[g * GW + c]) * r;
                sq[c] = dyn[g * GW + c] * yn[g * GW + c];
            }
            float dot = tree_sum(sq, GW, 32);
            for (int c = 0; c < GW; c++)
                h_dx[n * LD + g * GW + c] = eng_cu_silu_norm_dx(r, dyn[g * GW + c], yn[g * GW + c], dot, xn[g * GW + c]);
        }
        for (int c = G * GW; c < C; c++) {
            h_y[n * LD + c] = eng_cu_silu(xn[c]);
            h_dx[n * LD + c] = dyn[c] * eng_cu_dsilu(xn[c], eng_cu_sigmoid(xn[c]));
        }
    }
    double e1 = rel(h_y, y, N * LD), e2 = rel(h_rn, rn, N * G), e3 = rel(h_dx, dx, N * LD);
    TAP_OK(e1 < 1e-6 && e2 < 1e-6 && e3 < 2e-6, "silu_norm: y %.1e, rn %.1e, dx %.1e against the cpu", e1, e2, e3);
}

/* swa's forward by the kernel's running row over the persistent entries,
 * then the window's keys (eng_cu_flash_step), against the CPU */
static void test_swa(int window, int Np)
{
    enum { B = 2, T = 70, H = 4, HKV = 2, HD = 8, NPM = 4 };
    const int ldq = H * HD, ldkv = HKV * HD;
    static float q[B * T * H * HD], k[B * T * HKV * HD], v[B * T * HKV * HD], kp[NPM * HKV * HD],
        vp[NPM * HKV * HD], out[B * T * H * HD], lse[B * H * T];
    static float h_out[B * T * H * HD], h_lse[B * H * T];
    fill(q, sizeof q / 4, 2), fill(k, sizeof k / 4, 2), fill(v, sizeof v / 4, 1);
    fill(kp, sizeof kp / 4, 2), fill(vp, sizeof vp / 4, 1);
    size_t ws_n = O->swa_workspace(X, B, T, HKV, HD, window, Np);
    float *ws = O->alloc(X, (ws_n ? ws_n : 1) * sizeof(float));
    O->swa_fwd(X, (eng_act *)out, ldq, lse, (const eng_act *)q, ldq, (const eng_act *)k, (const eng_act *)v, ldkv, kp,
               vp, ldkv, Np, B, T, H, HKV, HD, window, ws);
    O->free(X, ws);
    const float scale = 1.0f / sqrtf((float)HD);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const int kh = h / (H / HKV), lo = t - window + 1 > 0 ? t - window + 1 : 0;
                const float *qi = q + (b * T + t) * ldq + h * HD;
                float m = -INFINITY, l = 0, acc[HD] = {0};
                for (int j = 0; j < Np + t - lo + 1; j++) {
                    const float *kj, *vj;
                    if (j < Np)
                        kj = kp + j * ldkv + kh * HD, vj = vp + j * ldkv + kh * HD;
                    else
                        kj = k + (b * T + lo + j - Np) * ldkv + kh * HD, vj = v + (b * T + lo + j - Np) * ldkv + kh * HD;
                    online_key(&m, &l, acc, HD, qi, kj, vj, scale);
                }
                online_end(m, l, acc, HD, h_out + (b * T + t) * ldq + h * HD, h_lse + (b * H + h) * T + t);
            }
    double eo = rel(h_out, out, sizeof out / 4), el = rel(h_lse, lse, sizeof lse / 4);
    TAP_OK(eo < 2e-6 && el < 2e-6, "swa (window %d, %d persistent): out %.1e, lse %.1e against the cpu", window, Np,
           eo, el);
}

/* titans_mem's scalar parts on one scalar "weight": the closed form's
 * coefficients (eng_cu_mem_coef_back) give the chunk's end state of the
 * token-by-token recursion S_t = eta_t S - theta_t G_t, W_t = a_t W + S_t;
 * the gates' adjoints (eng_cu_mem_gate_adj) match central differences of
 * L = P W' + Q S' with the G_t held fixed (the op's chunk-start gradients) */
static void mem_run(int n, const double *th, const double *et, const double *aa, const double *G, double W, double S,
                    double *Wn, double *Sn)
{
    for (int t = 0; t < n; t++) {
        S = et[t] * S - th[t] * G[t];
        W = aa[t] * W + S;
    }
    *Wn = W, *Sn = S;
}

static void test_mem_scalars(void)
{
    enum { n = 6 };
    double th[n], et[n], aa[n], G[n], pw[n], ps[n], qs[n];
    for (int t = 0; t < n; t++) {
        th[t] = 0.3 + 0.2 * urandf(), et[t] = 0.6 + 0.3 * urandf(), aa[t] = 0.8 + 0.15 * urandf();
        G[t] = urandf();
    }
    const double W = 0.7, S = -0.4, P = 1.3, Q = -0.6;
    double pwv = 1, psv = 1, qsv = 1;
    pw[n - 1] = ps[n - 1] = qs[n - 1] = 1;
    for (int t = n - 1; t > 0; t--) {
        eng_cu_mem_coef_back(&pwv, &psv, &qsv, aa[t], et[t]);
        pw[t - 1] = pwv, ps[t - 1] = psv, qs[t - 1] = qsv;
    }
    double Wc = aa[0] * pw[0] * W + et[0] * ps[0] * S, Sc = et[0] * qs[0] * S, Wr, Sr;
    for (int t = 0; t < n; t++)
        Wc -= th[t] * ps[t] * G[t], Sc -= th[t] * qs[t] * G[t];
    mem_run(n, th, et, aa, G, W, S, &Wr, &Sr);
    double ec = fmax(fabs(Wc - Wr), fabs(Sc - Sr));
    /* adjoints: the running inner products start at the chunk-start state */
    double sP = P * S, sQ = Q * S, wP = P * W, ea = 0;
    for (int t = 0; t < n; t++) {
        double dth, det, da;
        eng_cu_mem_gate_adj(ps[t], qs[t], pw[t], th[t], et[t], aa[t], P * G[t], Q * G[t], &sP, &sQ, &wP, &dth, &det,
                            &da);
        double *gate[3] = {th, et, aa}, an[3] = {dth, det, da};
        for (int i = 0; i < 3; i++) {
            const double h = 1e-6, g0 = gate[i][t];
            double Wp, Sp, Wm, Sm;
            gate[i][t] = g0 + h;
            mem_run(n, th, et, aa, G, W, S, &Wp, &Sp);
            gate[i][t] = g0 - h;
            mem_run(n, th, et, aa, G, W, S, &Wm, &Sm);
            gate[i][t] = g0;
            ea = fmax(ea, fabs((P * (Wp - Wm) + Q * (Sp - Sm)) / (2 * h) - an[i]));
        }
    }
    TAP_OK(ec < 1e-12 && ea < 1e-7,
           "titans_mem scalars: closed form vs token by token %.1e, gate adjoints vs differences %.1e", ec, ea);
}

int main(void)
{
    tlm_err e = {0};
    eng_backend *cpu;
    if (eng_backend_cpu_create(&cpu, 1, &e)) {
        printf("Bail out! cpu backend: %s\n", e.msg);
        return 1;
    }
    O = cpu->ops, X = cpu->ctx;
    test_swiglu();
    test_gate(12);
    test_gate(3);
    test_rope();
    test_rmsnorm();
    test_xent();
    test_flash();
    test_adamw();
    test_dconv(5, 4);
    test_dconv(3, 4); /* T < K */
    test_dconv(6, 1);
    test_silu_norm();
    test_swa(3, 0);
    test_swa(9, 3);
    test_swa(100, 2); /* window over T: causal */
    test_mem_scalars();
    eng_backend_free(cpu);
    return tap_done();
}
