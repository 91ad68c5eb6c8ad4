/* test_flash.c: the tensor-core flash attention (engine/cuda/flash.cu) on
 * the emulated CUDA build (and, in a CUDA build, on GPU 0 when there is
 * one: skipped, said, where the backend finds none), against a plain causal softmax attention
 * computed here in double from the SAME bf16-rounded inputs, forward
 * (O, lse) and backward (dQ, dK, dV); the emulator's race, barrier and
 * memory checks run on every launch (a failed one is the backend's kept
 * error, and fails the case; on a GPU only the numbers are checked).
 *
 * Cases: head size 64 and 128; GQA (H 4 over Hkv 2) and MHA; T 1, 17 and
 * 77 (one row; one partial tile; a full tile and a partial one, so the
 * diagonal tile, a tile below it and rows past T all occur); one case with
 * B 2.  q, k and v are column slices of one fused (B T, (H + 2 Hkv) hd)
 * projection, O and dO rows of H hd + 8 (the strides the op passes).
 *
 * Bounds (errors as max |x - ref| over a tensor, divided by its scale):
 *   - O, by max |v|: P is rounded to bf16 as the mma operand (2^-9
 *     relative per weight, the weights sum to 1) while l sums the unrounded
 *     P (another 2^-9), and O is stored in bf16 (2^-9 of |O| <= max |v|):
 *     3 * 2^-9 < 2^-7;
 *   - lse, absolute: fp32 products of bf16 values, fp32 sums: 1e-4;
 *   - dQ, dK, dV, by the reference's max |x|: each is a sum of products
 *     with a bf16-rounded operand (P or dS, 2^-9 each), D is computed from
 *     the bf16 O (2^-9 |O| |dO| per row, which cancels in dS = P (dP - D)
 *     only approximately), and the result is stored in bf16 (2^-9): a
 *     handful of 2^-9 relative terms, bounded by 2^-6 normwise; plus 2e-5
 *     absolute for the ones that vanish: at T 1, dS = P (dP - D) is 0 in
 *     exact arithmetic, but dP (dO . v, the mma's fp32 order) and D
 *     (dO . O with O = v, a warp's fp32 order) are one sum rounded two
 *     ways, apart by up to hd 2^-24 max|dO v| (128 * 2^-24 * 2 < 2e-5);
 *   - the backward twice: the same bits (no atomics: the project's rule).
 * Exits 77 in a build without the emulator.
 *
 * Must not: compare the kernel with anything computed from unrounded
 * inputs (the bounds are about the kernel, not about bf16 inputs). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/cuda/backend.h"
#include "tests/lib/tap.h"

#ifdef TLM_HAVE_CUDA_EMU
/* flash_entry.cu's C entries, per build */
#define FL_DECLARE(P)                                                                                           \
    size_t P##ws_floats(int B, int T, int H);                                                                  \
    void P##fwd(void *ctx, void *out, int ldo, float *lse, const void *q, int ldq, const void *k, const void *v, \
                int ldkv, int B, int T, int H, int Hkv, int hd, float scale);                                  \
    void P##bwd(void *ctx, void *dq, void *dk, void *dv, const float *lse, const void *dout, const void *out,   \
                int ldo, const void *q, int ldq, const void *k, const void *v, int ldkv, int B, int T, int H,   \
                int Hkv, int hd, float scale, float *ws);
FL_DECLARE(tlm_test_flash_emu_)
#ifdef TLM_HAVE_CUDA
FL_DECLARE(tlm_test_flash_gpu_)
#endif

/* a build of flash.cu: its backend, its kept error, its entries */
typedef struct flash_row {
    const char *name;
    int (*create)(eng_backend **out, int device, tlm_err *e);
    int (*status)(const eng_backend *b, tlm_err *e);
    size_t (*ws_floats)(int B, int T, int H);
    void (*fwd)(void *ctx, void *out, int ldo, float *lse, const void *q, int ldq, const void *k, const void *v,
                int ldkv, int B, int T, int H, int Hkv, int hd, float scale);
    void (*bwd)(void *ctx, void *dq, void *dk, void *dv, const float *lse, const void *dout, const void *out,
                int ldo, const void *q, int ldq, const void *k, const void *v, int ldkv, int B, int T, int H,
                int Hkv, int hd, float scale, float *ws);
    int needs_device; /* may find no GPU: then skipped */
} flash_row;
static const flash_row rows[] = {
    {"cuda-emu", eng_backend_cuda_emu_create, eng_backend_cuda_emu_status, tlm_test_flash_emu_ws_floats,
     tlm_test_flash_emu_fwd, tlm_test_flash_emu_bwd, 0},
#ifdef TLM_HAVE_CUDA
    {"cuda", eng_backend_cuda_create, eng_backend_cuda_status, tlm_test_flash_gpu_ws_floats, tlm_test_flash_gpu_fwd,
     tlm_test_flash_gpu_bwd, 1},
#endif
};

#define BOUND_O 0.0078125   /* 2^-7 of max |v| */
#define BOUND_LSE 1e-4      /* absolute */
#define BOUND_GRAD 0.015625 /* 2^-6 of the reference's max |x| */
#define FLOOR_GRAD 2e-5     /* absolute, for gradients that vanish (T 1) */

static const struct {
    int B, T, H, Hkv, hd;
} cases[] = {
    {1, 1, 4, 2, 64},  {1, 17, 4, 2, 64},  {1, 77, 4, 2, 64},  {2, 77, 2, 2, 64},
    {1, 1, 2, 2, 128}, {1, 17, 4, 2, 128}, {1, 77, 4, 2, 128}, {1, 77, 2, 2, 128},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static uint32_t rng = 12345u;
static double urand(void) /* in [-1, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (double)(rng >> 8) / (double)(1u << 23) - 1.0;
}

static uint16_t to_bf16(float f) /* round to nearest even (finite inputs) */
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static double from_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* the worst |a - ref| over n elements of strided rows, and the max |ref| */
typedef struct worst {
    double err, scale;
} worst;
static void worst_add(worst *w, double got, double ref)
{
    double d = fabs(got - ref);
    if (!(d <= w->err))
        w->err = d; /* NaN wins */
    if (fabs(ref) > w->scale)
        w->scale = fabs(ref);
}

/* The reference, in double: O, lse and dQ, dK, dV (fused layout, as the
 * kernel's) from the bf16 values of qkv and dout. */
static void reference(const double *qkv, int ld, const double *dout, int ldo, int B, int T, int H, int Hkv, int hd,
                      double scale, double *o, double *lse, double *dqkv)
{
    const int G = H / Hkv;
    double *p = malloc(sizeof(double) * T), *dp = malloc(sizeof(double) * T);
    memset(dqkv, 0, sizeof(double) * (size_t)B * T * ld);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const int kh = h / G;
                const double *qi = qkv + ((size_t)b * T + t) * ld + (size_t)h * hd;
                double mx = -INFINITY, l = 0, D = 0;
                for (int j = 0; j <= t; j++) {
                    const double *kj = qkv + ((size_t)b * T + j) * ld + (size_t)(H + kh) * hd;
                    double s = 0;
                    for (int d = 0; d < hd; d++)
                        s += qi[d] * kj[d];
                    p[j] = s * scale;
                    mx = fmax(mx, p[j]);
                }
                for (int j = 0; j <= t; j++)
                    l += (p[j] = exp(p[j] - mx));
                lse[((size_t)b * H + h) * T + t] = mx + log(l);
                double *oi = o + ((size_t)b * T + t) * ldo + (size_t)h * hd;
                const double *doi = dout + ((size_t)b * T + t) * ldo + (size_t)h * hd;
                for (int d = 0; d < hd; d++)
                    oi[d] = 0;
                for (int j = 0; j <= t; j++) {
                    const double *vj = qkv + ((size_t)b * T + j) * ld + (size_t)(H + Hkv + kh) * hd;
                    p[j] /= l;
                    dp[j] = 0;
                    for (int d = 0; d < hd; d++) {
                        oi[d] += p[j] * vj[d];
                        dp[j] += doi[d] * vj[d];
                    }
                    D += p[j] * dp[j];
                }
                double *dqi = dqkv + ((size_t)b * T + t) * ld + (size_t)h * hd;
                for (int j = 0; j <= t; j++) {
                    const double ds = p[j] * (dp[j] - D);
                    const double *kj = qkv + ((size_t)b * T + j) * ld + (size_t)(H + kh) * hd;
                    double *dkj = dqkv + ((size_t)b * T + j) * ld + (size_t)(H + kh) * hd;
                    double *dvj = dqkv + ((size_t)b * T + j) * ld + (size_t)(H + Hkv + kh) * hd;
                    for (int d = 0; d < hd; d++) {
                        dqi[d] += scale * ds * kj[d];
                        dkj[d] += scale * ds * qi[d];
                        dvj[d] += p[j] * doi[d];
                    }
                }
            }
    free(p);
    free(dp);
}

/* one case: 0 when it ran (its checks counted), -1 on a setup failure */
static int run_case(const flash_row *row, eng_backend *be, int B, int T, int H, int Hkv, int hd)
{
    const int ld = (H + 2 * Hkv) * hd, ldo = H * hd + 8, N = B * T;
    const double scale = 1.0 / sqrt((double)hd);
    const size_t nqkv = (size_t)N * ld, no = (size_t)N * ldo, nl = (size_t)B * H * T;
    const size_t nws = row->ws_floats(B, T, H);
    uint16_t *hqkv = malloc(2 * nqkv), *hdo = malloc(2 * no), *ho = malloc(2 * no);
    uint16_t *hd1 = malloc(2 * nqkv), *hd2 = malloc(2 * nqkv);
    double *qkv = malloc(sizeof(double) * nqkv), *dout = malloc(sizeof(double) * no);
    double *ro = calloc(no, sizeof(double)), *rl = malloc(sizeof(double) * nl), *rd = malloc(sizeof(double) * nqkv);
    float *hl = malloc(sizeof(float) * nl);
    void *ctx = be->ctx;
    const eng_ops *op = be->ops;
    void *dqkv_in = op->alloc(ctx, 2 * nqkv), *ddo = op->alloc(ctx, 2 * no), *dout_o = op->alloc(ctx, 2 * no);
    void *dgrad = op->alloc(ctx, 2 * nqkv);
    float *dlse = op->alloc(ctx, sizeof(float) * nl), *dws = op->alloc(ctx, sizeof(float) * (nws ? nws : 1));
    char name[96];
    snprintf(name, sizeof name, "%s: hd %d, B %d, T %d, H %d over Hkv %d", row->name, hd, B, T, H, Hkv);
    if (!hqkv || !hdo || !ho || !hd1 || !hd2 || !qkv || !dout || !ro || !rl || !rd || !hl || !dqkv_in || !ddo ||
        !dout_o || !dgrad || !dlse || !dws) {
        TAP_OK(0, "%s: memory for the case", name);
        return -1;
    }
    /* q, k larger than v: scores of a few units, a peaked softmax */
    for (size_t i = 0; i < nqkv; i++) {
        const int col = (int)(i % ld);
        hqkv[i] = to_bf16((float)(urand() * (col < (H + Hkv) * hd ? 2.0 : 1.0)));
        qkv[i] = from_bf16(hqkv[i]);
    }
    for (size_t i = 0; i < no; i++) {
        hdo[i] = to_bf16((float)urand());
        dout[i] = from_bf16(hdo[i]);
    }
    reference(qkv, ld, dout, ldo, B, T, H, Hkv, hd, scale, ro, rl, rd);
    op->to_device(ctx, dqkv_in, hqkv, 2 * nqkv);
    op->to_device(ctx, ddo, hdo, 2 * no);
    const uint16_t *q = dqkv_in, *k = q + (size_t)H * hd, *v = k + (size_t)Hkv * hd;
    uint16_t *gq = dgrad, *gk = gq + (size_t)H * hd, *gv = gk + (size_t)Hkv * hd;

    tlm_err e = {0};
    row->fwd(ctx, dout_o, ldo, dlse, q, ld, k, v, ld, B, T, H, Hkv, hd, (float)scale);
    int rc = row->status(be, &e);
    TAP_OK(!rc, "%s: forward ran, no kept error (on cuda-emu: its checks)%s%s", name, rc ? ": " : "", rc ? e.msg : "");
    if (rc)
        return -1;
    op->to_host(ctx, ho, dout_o, 2 * no);
    op->to_host(ctx, hl, dlse, sizeof(float) * nl);
    worst wo = {0, 0}, wl = {0, 0};
    double vmax = 0;
    for (int n = 0; n < N; n++) {
        for (int c = 0; c < H * hd; c++)
            worst_add(&wo, from_bf16(ho[(size_t)n * ldo + c]), ro[(size_t)n * ldo + c]);
        for (int c = 0; c < Hkv * hd; c++)
            vmax = fmax(vmax, fabs(qkv[(size_t)n * ld + (size_t)(H + Hkv) * hd + c]));
    }
    for (size_t i = 0; i < nl; i++)
        worst_add(&wl, hl[i], rl[i]);
    TAP_OK(wo.err <= BOUND_O * vmax, "%s: O within 2^-7 max|v|: worst |error| %.3g, %.3g of max|v| %.3g", name,
           wo.err, wo.err / vmax, vmax);
    TAP_OK(wl.err <= BOUND_LSE, "%s: lse within %g: worst |error| %.3g", name, BOUND_LSE, wl.err);

    for (int pass = 0; pass < 2; pass++) {
        op->to_device(ctx, dgrad, hqkv, 2 * nqkv); /* stale values: the kernels must overwrite each one */
        row->bwd(ctx, gq, gk, gv, dlse, ddo, dout_o, ldo, q, ld, k, v, ld, B, T, H, Hkv, hd,
                           (float)scale, dws);
        rc = row->status(be, &e);
        TAP_OK(!rc, "%s: backward %d ran, no kept error%s%s", name, pass + 1, rc ? ": " : "",
               rc ? e.msg : "");
        if (rc)
            return -1;
        op->to_host(ctx, pass ? hd2 : hd1, dgrad, 2 * nqkv);
    }
    TAP_OK(!memcmp(hd1, hd2, 2 * nqkv), "%s: the backward twice gives the same bits", name);
    static const char *gname[3] = {"dQ", "dK", "dV"};
    for (int t = 0; t < 3; t++) {
        const int c0 = t == 0 ? 0 : t == 1 ? H * hd : (H + Hkv) * hd, nc = t == 0 ? H * hd : Hkv * hd;
        worst w = {0, 0};
        for (int n = 0; n < N; n++)
            for (int c = c0; c < c0 + nc; c++)
                worst_add(&w, from_bf16(hd1[(size_t)n * ld + c]), rd[(size_t)n * ld + c]);
        TAP_OK(w.err <= BOUND_GRAD * w.scale + FLOOR_GRAD,
               "%s: %s within 2^-6 of max|ref| %.3g + 2e-5: worst |error| %.3g (%.3g of it)",
               name, gname[t], w.scale, w.err, w.scale > 0 ? w.err / w.scale : 0.0);
    }
    op->free(ctx, dqkv_in), op->free(ctx, ddo), op->free(ctx, dout_o), op->free(ctx, dgrad), op->free(ctx, dlse);
    op->free(ctx, dws);
    free(hqkv), free(hdo), free(ho), free(hd1), free(hd2), free(qkv), free(dout), free(ro), free(rl), free(rd);
    free(hl);
    return 0;
}

int main(void)
{
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        eng_backend *be = NULL;
        tlm_err e = {0};
        if (rows[r].create(&be, 0, &e)) {
            if (rows[r].needs_device && e.code == TLM_ECONFIG)
                TAP_DIAG("%s: skipped: %s", rows[r].name, e.msg);
            else
                TAP_OK(0, "%s: the backend: %s", rows[r].name, e.msg);
            continue;
        }
        for (int i = 0; i < NCASES; i++)
            if (run_case(&rows[r], be, cases[i].B, cases[i].T, cases[i].H, cases[i].Hkv, cases[i].hd))
                break; /* the backend keeps its first error: later cases cannot run */
        eng_backend_free(be);
    }
    return tap_done();
}
#else
int main(void)
{
    printf("1..0 # SKIP no emulated CUDA build (clang++)\n");
    return 77;
}
#endif
