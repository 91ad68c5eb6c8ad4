/* test_flash.c: issue 24's two attention candidates, the tensor-core flash
 * attention (engine/cuda/flash.cu) and cuDNN's graph (engine/cuda/
 * sdpa_cudnn.cu, through the emulated build's cuDNN stand-ins, which
 * compute the graph its descriptors describe), on the emulated CUDA build
 * (and, in a CUDA build, on GPU 0 when there is one: skipped, said, where
 * the backend finds none), against a plain causal softmax attention
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
 * The cuDNN candidate: the same cases and bounds; the two candidates'
 * results against each other with the same bounds; its forward and
 * backward plans at the 440m, 760m and 1.3b presets' head shapes on a
 * tiny batch (descriptor construction only: graphs finalized, none
 * executed); and three deliberate mapping mistakes (eng__sdpa_cudnn_test_
 * fault): K's row stride taken as hd must put O outside its bound, Q
 * declared fp32 must be refused (NOT_SUPPORTED_DATA_TYPE), and so must
 * O's tensor without its unique id (BAD_PARAM at finalize).  On a GPU
 * without cuDNN its row is skipped, said.
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
                int Hkv, int hd, float scale, float *ws);                                          \
    int P##cudnn_available(void *ctx, char *why, size_t cap);                                               \
    int P##cudnn_prepare(void *ctx, int bwd, int B, int T, int H, int Hkv, int hd, int ldo, int ldq, int ldkv); \
    void P##cudnn_fault(int fault);                                                                          \
    void P##cudnn_fwd(void *ctx, void *out, int ldo, float *lse, const void *q, int ldq, const void *k,      \
                      const void *v, int ldkv, int B, int T, int H, int Hkv, int hd, float scale);          \
    void P##cudnn_bwd(void *ctx, void *dq, void *dk, void *dv, const float *lse, const void *dout,           \
                      const void *out, int ldo, const void *q, int ldq, const void *k, const void *v, int ldkv, \
                      int B, int T, int H, int Hkv, int hd, float scale, float *ws);
FL_DECLARE(tlm_test_flash_emu_)
void tlm_test_flash_emu_cudnn_counts(long *graphs, long *execs);
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
    /* the cuDNN candidate: whether it is there (NULL: flash.cu), its plan
     * alone, the test's mistakes */
    int (*available)(void *ctx, char *why, size_t cap);
    int (*prepare)(void *ctx, int bwd, int B, int T, int H, int Hkv, int hd, int ldo, int ldq, int ldkv);
    void (*fault)(int fault);
} flash_row;
static const flash_row rows[] = {
    {"cuda-emu flash", eng_backend_cuda_emu_create, eng_backend_cuda_emu_status, tlm_test_flash_emu_ws_floats,
     tlm_test_flash_emu_fwd, tlm_test_flash_emu_bwd, 0, NULL, NULL, NULL},
    {"cuda-emu cudnn", eng_backend_cuda_emu_create, eng_backend_cuda_emu_status, tlm_test_flash_emu_ws_floats,
     tlm_test_flash_emu_cudnn_fwd, tlm_test_flash_emu_cudnn_bwd, 0, tlm_test_flash_emu_cudnn_available,
     tlm_test_flash_emu_cudnn_prepare, tlm_test_flash_emu_cudnn_fault},
#ifdef TLM_HAVE_CUDA
    {"cuda flash", eng_backend_cuda_create, eng_backend_cuda_status, tlm_test_flash_gpu_ws_floats,
     tlm_test_flash_gpu_fwd, tlm_test_flash_gpu_bwd, 1, NULL, NULL, NULL},
    {"cuda cudnn", eng_backend_cuda_create, eng_backend_cuda_status, tlm_test_flash_gpu_ws_floats,
     tlm_test_flash_gpu_cudnn_fwd, tlm_test_flash_gpu_cudnn_bwd, 1, tlm_test_flash_gpu_cudnn_available,
     tlm_test_flash_gpu_cudnn_prepare, tlm_test_flash_gpu_cudnn_fault},
#endif
};
#define NROWS (int)(sizeof rows / sizeof rows[0])

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

/* a case's results, kept to hold the two candidates against each other */
typedef struct kept {
    uint16_t *o, *grad;
    float *lse;
} kept;
static void kept_free(kept *k)
{
    free(k->o), free(k->grad), free(k->lse);
    memset(k, 0, sizeof *k);
}

/* one case: 0 when it ran (its checks counted), -1 on a setup failure.
 * fault (cuDNN's row): the forward alone with row->fault(fault) on, which
 * must miss the bound; keep: where the results go (NULL: nowhere). */
static int run_case(const flash_row *row, eng_backend *be, int B, int T, int H, int Hkv, int hd, int fault,
                    kept *keep)
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
    /* the case's inputs from its shape alone: each candidate sees the same */
    rng = 12345u + 7919u * (unsigned)(((B * 131 + T) * 131 + H) * 131 + Hkv) + (unsigned)hd;
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
    if (fault)
        row->fault(fault);
    row->fwd(ctx, dout_o, ldo, dlse, q, ld, k, v, ld, B, T, H, Hkv, hd, (float)scale);
    if (fault)
        row->fault(0);
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
    if (fault) { /* the mistake must show */
        TAP_OK(!(wo.err <= BOUND_O * vmax),
               "%s: with a wrong mapping (mistake %d) O misses 2^-7 max|v|: worst |error| %.3g of max|v|", name, fault,
               wo.err / vmax);
        goto done;
    }
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
    if (keep) {
        keep->o = ho, keep->lse = hl, keep->grad = hd1;
        ho = NULL, hl = NULL, hd1 = NULL;
    }
done:
    op->free(ctx, dqkv_in), op->free(ctx, ddo), op->free(ctx, dout_o), op->free(ctx, dgrad), op->free(ctx, dlse);
    op->free(ctx, dws);
    free(hqkv), free(hdo), free(ho), free(hd1), free(hd2), free(qkv), free(dout), free(ro), free(rl), free(rd);
    free(hl);
    return 0;
}

/* The two candidates' results of one case against each other, with the
 * bounds each meets against the reference (O by max|v| of the case,
 * taken here as the larger |O| of the two; gradients by the larger |x|). */
static void cross_check(const char *name, const kept *a, const kept *b, int B, int T, int H, int Hkv, int hd)
{
    const int ld = (H + 2 * Hkv) * hd, ldo = H * hd + 8, N = B * T;
    worst wo = {0, 0}, wl = {0, 0}, wg = {0, 0};
    for (int n = 0; n < N; n++)
        for (int c = 0; c < H * hd; c++)
            worst_add(&wo, from_bf16(a->o[(size_t)n * ldo + c]), from_bf16(b->o[(size_t)n * ldo + c]));
    for (size_t i = 0; i < (size_t)B * H * T; i++)
        worst_add(&wl, a->lse[i], b->lse[i]);
    for (size_t i = 0; i < (size_t)N * ld; i++)
        worst_add(&wg, from_bf16(a->grad[i]), from_bf16(b->grad[i]));
    TAP_OK(wo.err <= BOUND_O * wo.scale && wl.err <= BOUND_LSE && wg.err <= BOUND_GRAD * wg.scale + FLOOR_GRAD,
           "%s: flash and cudnn agree: O %.3g of max|O|, lse %.3g, dQKV %.3g of max|x|", name,
           wo.scale > 0 ? wo.err / wo.scale : 0.0, wl.err, wg.scale > 0 ? wg.err / wg.scale : 0.0);
}

/* The cuDNN candidate's plans at the shapes of the 440m, 760m and 1.3b
 * presets (engine/config/presets.c: d 1024, 1536, 2048 over 16, 24, 32
 * heads, as many kv heads, head size 64), forward and backward, on a tiny
 * batch: descriptor construction only (issue 24), nothing executed. */
static void preset_plans(const flash_row *row, eng_backend *be)
{
    static const struct {
        const char *name;
        int H, Hkv, hd;
    } pr[] = {{"440m", 16, 16, 64}, {"760m", 24, 24, 64}, {"1.3b", 32, 32, 64}};
    for (int i = 0; i < 3; i++) {
        const int ld = (pr[i].H + 2 * pr[i].Hkv) * pr[i].hd, ldo = pr[i].H * pr[i].hd;
        long g0, x0, g1, x1;
        tlm_test_flash_emu_cudnn_counts(&g0, &x0);
        int rc = row->prepare(be->ctx, 0, 1, 8, pr[i].H, pr[i].Hkv, pr[i].hd, ldo, ld, ld);
        rc = rc ? rc : row->prepare(be->ctx, 1, 1, 8, pr[i].H, pr[i].Hkv, pr[i].hd, ldo, ld, ld);
        tlm_test_flash_emu_cudnn_counts(&g1, &x1);
        tlm_err e = {0};
        const int st = row->status(be, &e);
        TAP_OK(!rc && !st && g1 - g0 == 2 && x1 == x0,
               "%s: the %s preset's shapes (H %d, Hkv %d, hd %d; B 1, T 8): forward and backward plans made, "
               "%ld graphs finalized, %ld executed%s%s",
               row->name, pr[i].name, pr[i].H, pr[i].Hkv, pr[i].hd, g1 - g0, x1 - x0, st ? ": " : "", st ? e.msg : "");
    }
}

int main(void)
{
    kept flash_kept[NCASES];
    memset(flash_kept, 0, sizeof flash_kept);
    for (int r = 0; r < NROWS; r++) {
        const flash_row *row = &rows[r];
        eng_backend *be = NULL;
        tlm_err e = {0};
        if (row->create(&be, 0, &e)) {
            if (row->needs_device && e.code == TLM_ECONFIG)
                TAP_DIAG("%s: skipped: %s", row->name, e.msg);
            else
                TAP_OK(0, "%s: the backend: %s", row->name, e.msg);
            continue;
        }
        char why[320];
        if (row->available && !row->available(be->ctx, why, sizeof why)) {
            /* on the emulator the stand-ins are always there */
            if (row->needs_device)
                TAP_DIAG("%s: skipped: %s", row->name, why);
            else
                TAP_OK(0, "%s: %s", row->name, why);
            eng_backend_free(be);
            continue;
        }
        /* the emulated rows: flash's results kept, cudnn's held against them */
        const int emu = !row->needs_device;
        for (int i = 0; i < NCASES; i++) {
            kept mine = {0};
            const int B = cases[i].B, T = cases[i].T, H = cases[i].H, Hkv = cases[i].Hkv, hd = cases[i].hd;
            if (run_case(row, be, B, T, H, Hkv, hd, 0, emu ? &mine : NULL))
                break; /* the backend keeps its first error: later cases cannot run */
            if (emu && !row->available) {
                flash_kept[i] = mine;
                continue;
            }
            if (emu && flash_kept[i].o) {
                char name[96];
                snprintf(name, sizeof name, "cuda-emu: hd %d, B %d, T %d, H %d over Hkv %d", hd, B, T, H, Hkv);
                cross_check(name, &flash_kept[i], &mine, B, T, H, Hkv, hd);
            }
            kept_free(&mine);
        }
        if (emu && row->available) {
            preset_plans(row, be);
            /* a wrong K row stride gives a wrong O (no refusal: it is in bounds) */
            run_case(row, be, 1, 77, 4, 2, 64, 1, NULL);
        }
        eng_backend_free(be);
        /* mistakes the stand-in refuses, as cuDNN would (a fresh backend
         * each: the error is kept): Q declared fp32 (the fused path takes
         * bf16 or fp16), O's tensor finalized without its unique id */
        static const struct {
            int fault, code;
            const char *status, *what;
        } refused[] = {{2, TLM_ECONFIG, "NOT_SUPPORTED_DATA_TYPE", "Q declared fp32"},
                       {3, TLM_EINTERNAL, "CUDNN_STATUS_BAD_PARAM", "O's tensor without its unique id"}};
        for (int i = 0; emu && row->available && i < 2; i++) {
            eng_backend *b2 = NULL;
            if (row->create(&b2, 0, &e)) {
                TAP_OK(0, "%s: the backend: %s", row->name, e.msg);
                continue;
            }
            row->fault(refused[i].fault);
            const int rc = row->prepare(b2->ctx, 0, 1, 8, 4, 2, 64, 4 * 64, 8 * 64, 8 * 64);
            row->fault(0);
            const int st = row->status(b2, &e);
            TAP_OK(rc && st == refused[i].code && strstr(e.msg, refused[i].status), "%s: %s is refused: %s",
                   row->name, refused[i].what, st ? e.msg : "(no error)");
            eng_backend_free(b2);
        }
    }
    for (int i = 0; i < NCASES; i++)
        kept_free(&flash_kept[i]);
    return tap_done();
}
#else
int main(void)
{
    return tap_skip("no emulated CUDA build (clang++)");
}
#endif
