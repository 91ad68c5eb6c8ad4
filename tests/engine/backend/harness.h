/* harness.h: what the cases of tests/engine/backend/test_backend_ops share
 * (test_backend_ops.c says how a case runs on a backend): the arena a case
 * takes its buffers from and the OP() and D() that reach a device through
 * it; the input stream; the double-precision helpers (relative error,
 * central finite differences).  Header-only: cases_core.h and
 * cases_titans.h build on it, test_backend_ops.c (one program, one TAP
 * count) includes the three. */
#ifndef TLM_TESTS_ENGINE_BACKEND_HARNESS_H
#define TLM_TESTS_ENGINE_BACKEND_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/model/ops.h"
#include "tests/lib/tap.h"

/* ------------------------------------------------------------ a case's run */
enum { T_REF, T_CAPTURE, T_COMPARE }; /* the reference checked; the reference kept; another backend */
enum { T_FWD, T_BWD };
#define T_ARENA ((size_t)16 << 20)
#define T_MAX_OUT 16
#define T_MAX_ACT 16

typedef struct tcase {
    const eng_ops *o;
    void *ctx;
    int mode;
    unsigned char *host; /* the arena, T_ARENA bytes */
    size_t used;
    void *dev;           /* its mirror on a backend that is not on the host; else NULL */
    int fits;            /* every t_floats of this run fitted */
    struct {
        size_t off, n;
        int kind; /* T_FWD | T_BWD */
        const char *name;
    } out[T_MAX_OUT];
    int n_out;
    double value[4]; /* scalar results (sumsq) */
    int n_value;
    /* Activations (t_act): the ranges of the arena an op reads or writes
     * as eng_act.  A backend with bf16 activations (bf16) holds each
     * range as bf16 at the range's start (element i at byte 2 i), staged
     * through stage (T_ARENA bytes); the CPU's capture for such a backend
     * (round) rounds them to bf16 in place before every op, so both see
     * the same inputs.  On every other run they are plain floats. */
    struct {
        size_t off, n;
    } act[T_MAX_ACT];
    int n_act;
    int bf16, round;
    unsigned char *stage;
    /* round: each output as t_out saw it, at its arena offset (a later
     * op's rounding of the arena must not reach the reference) */
    unsigned char *keep;
} tcase;

/* n zeroed floats of the arena, 64-byte aligned; NULL when it is full */
static inline float *t_floats(tcase *t, size_t n)
{
    size_t at = (t->used + 63) & ~(size_t)63, bytes = n * sizeof(float);
    if (at + bytes > T_ARENA) {
        t->fits = 0;
        return NULL;
    }
    t->used = at + bytes;
    return (float *)(t->host + at);
}

static inline int32_t *t_ints(tcase *t, const int32_t *src, size_t n)
{
    int32_t *p = (int32_t *)t_floats(t, n);
    if (p)
        memcpy(p, src, n * sizeof *p);
    return p;
}

/* An output compared across backends (n floats at p). */
static inline void t_out(tcase *t, const float *p, size_t n, int kind, const char *name)
{
    if (t->n_out < T_MAX_OUT && p) {
        t->out[t->n_out].off = (size_t)((const unsigned char *)p - t->host);
        t->out[t->n_out].n = n;
        t->out[t->n_out].kind = kind;
        t->out[t->n_out].name = name;
        t->n_out++;
        if (t->round && t->keep)
            memcpy(t->keep + t->out[t->n_out - 1].off, p, n * sizeof *p);
    }
}

static inline void t_value(tcase *t, double v)
{
    if (t->n_value < 4)
        t->value[t->n_value++] = v;
}

/* n floats at p are activations (tcase's act): before the case's first op */
static inline void t_act(tcase *t, const float *p, size_t n)
{
    if (p && t->n_act < T_MAX_ACT) {
        t->act[t->n_act].off = (size_t)((const unsigned char *)p - t->host);
        t->act[t->n_act].n = n;
        t->n_act++;
    }
}

/* float <-> bf16 bits: round to nearest even (NaN to 0x7fff), as the
 * device's cvt.rn.bf16.f32; widening is exact */
static inline uint16_t t_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline float t_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* the activation range holding arena offset off, or -1 */
static inline int t_act_of(const tcase *t, size_t off)
{
    for (int k = 0; k < t->n_act; k++)
        if (off >= t->act[k].off && off < t->act[k].off + t->act[k].n * sizeof(float))
            return k;
    return -1;
}

/* An arena pointer as the backend sees it (in a bf16 range: its bf16 element). */
static inline void *D(const tcase *t, const void *p)
{
    if (!t->dev || !p)
        return (void *)p;
    const size_t off = (size_t)((const unsigned char *)p - t->host);
    const int k = t->bf16 ? t_act_of(t, off) : -1;
    if (k >= 0)
        return (unsigned char *)t->dev + t->act[k].off + (off - t->act[k].off) / 2;
    return (unsigned char *)t->dev + off;
}

static inline void t_push(tcase *t)
{
    if (t->round)
        for (int k = 0; k < t->n_act; k++) {
            float *x = (float *)(t->host + t->act[k].off);
            for (size_t i = 0; i < t->act[k].n; i++)
                x[i] = t_f32(t_bf16(x[i]));
        }
    if (!t->dev)
        return;
    if (!t->bf16) {
        t->o->to_device(t->ctx, t->dev, t->host, t->used);
        return;
    }
    memcpy(t->stage, t->host, t->used);
    for (int k = 0; k < t->n_act; k++) {
        const float *x = (const float *)(t->host + t->act[k].off);
        uint16_t *h = (uint16_t *)(t->stage + t->act[k].off);
        for (size_t i = 0; i < t->act[k].n; i++)
            h[i] = t_bf16(x[i]);
    }
    t->o->to_device(t->ctx, t->dev, t->stage, t->used);
}

static inline void t_pull(tcase *t)
{
    if (!t->dev)
        return;
    if (!t->bf16) {
        t->o->to_host(t->ctx, t->host, t->dev, t->used);
        return;
    }
    t->o->to_host(t->ctx, t->stage, t->dev, t->used);
    memcpy(t->host, t->stage, t->used);
    for (int k = 0; k < t->n_act; k++) {
        float *x = (float *)(t->host + t->act[k].off);
        const uint16_t *h = (const uint16_t *)(t->stage + t->act[k].off);
        for (size_t i = 0; i < t->act[k].n; i++)
            x[i] = t_f32(h[i]);
    }
}

/* One op call on the case's backend, the arena in its memory meanwhile. */
#define OP(t, op, ...) (t_push(t), (t)->o->op((t)->ctx, __VA_ARGS__), t_pull(t))
/* The reference's own checks run only in the reference pass. */
#define REF(t) ((t)->mode == T_REF)

/* ------------------------------------------------------------ references */
/* the input stream (xorshift64), set by the runner before each case */
static uint64_t tb_rng;
static inline double urand(void) /* [-1, 1) */
{
    tb_rng ^= tb_rng << 13;
    tb_rng ^= tb_rng >> 7;
    tb_rng ^= tb_rng << 17;
    return (double)(tb_rng >> 11) * 0x1.0p-52 - 1.0;
}
static inline void fill(float *x, size_t n, double s)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(s * urand());
}

/* max |a - b| / max |b| */
static inline double rel_err(const float *a, const double *b, size_t n)
{
    double e = 0, s = 1e-30;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return e / s;
}

/* A reference forward: out (nout) from the inputs (nin) in double. */
typedef void (*ref_fn)(const double *in, double *out, void *ctx);

#define MAXIN 20000
#define MAXOUT 40000

/* Numerical gradient of sum_o dout[o] out[o] w.r.t. in[0..nin), h = 1e-6. */
static inline void fd_grad(ref_fn f, void *ctx, const float *in_f, int nin, const float *dout, int nout, double *grad)
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

/* forward error of the op's out against the reference at the same inputs */
static inline double fwd_err(ref_fn f, void *ctx, const float *in_f, int nin, const float *out, int nout)
{
    static double in[MAXIN], ref[MAXOUT];
    for (int i = 0; i < nin; i++)
        in[i] = in_f[i];
    f(in, ref, ctx);
    return rel_err(out, ref, (size_t)nout);
}

static inline double dsig(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* the reference checks' tolerances (the Titans cases give theirs) */
#define TOL_FWD 1e-5
#define TOL_BWD 1e-4

#endif
