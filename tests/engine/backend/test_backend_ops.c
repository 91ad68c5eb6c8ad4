/* test_backend_ops.c: every op of engine/model/ops.h, one table of cases
 * (each op with its shapes) run against every backend that is built, as
 * ggml's test-backend-ops does.
 *
 * The CPU backend is the reference.  Its outputs are checked against plain
 * double-precision references written here: the forward values, and every
 * backward against central finite differences of the reference (h = 1e-6
 * in double, so the numerical gradient is accurate to ~1e-9 and any
 * disagreement is the op's).  Errors are relative to the largest reference
 * magnitude of each output.  Shapes are small but odd (rows not multiples
 * of the vector width, attention longer than one 64-row block, grouped KV
 * heads, chunks that do not divide T).  The cases are in cases_core.h and
 * cases_titans.h (the Titans group), their helpers in harness.h; this file
 * holds the backends, the table of cases and the runs.
 *
 * Any other backend runs the same cases on the same inputs and is checked
 * against the CPU backend's outputs, within the tolerances its row of
 * `backends` gives; a case of an op group the backend does not fill is
 * skipped (said, not counted).  A mirror of the CPU behind copies checks
 * that path itself; with clang++ the CUDA kernels run on the CPU under the
 * emulated execution model (engine/cuda/emu/: cuda-emu, on every machine),
 * and a copy of it with one deliberately wrong kernel (cuda-emu-broken)
 * must fail its cases, which shows the comparison catches a kernel's bug;
 * the real CUDA backend runs where there is a GPU.
 *
 * How a case reaches a device: every buffer it uses comes from one arena
 * (t_floats), mirrored in the backend's memory when the backend is not on
 * the host; OP() copies the arena there before the op and back after it,
 * and D() turns an arena pointer into the backend's.  On the CPU both are
 * nothing, so its cases run exactly as plain C calls.
 *
 * Why here (tests/engine/backend/) and not under tests/engine/cpu/: the
 * test belongs to the op interface every backend fills, not to one of them;
 * the CPU is only its reference (with it, the CPU's own exp, which every
 * softmax and sigmoid leans on, is checked first). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h" /* TLM_HAVE_CUDA, TLM_HAVE_CUDA_EMU: without them those rows are not built */
#include "engine/cpu/backend.h"
#include "engine/cpu/internal.h" /* eng__expf */
#include "engine/cpu/runtime.h"
#include "engine/cuda/backend.h"
#include "tests/engine/backend/harness.h"
#include "tests/engine/backend/cases_core.h"
#include "tests/engine/backend/cases_titans.h"

/* ------------------------------------------------------------ backends */
/* A backend that is built, and the largest relative error of a forward
 * output (tol_fwd) and of a backward output (tol_bwd) it may have against
 * the CPU backend's on the same inputs.  needs_device: the machine may
 * lack what it runs on (a GPU); then its create fails with TLM_ECONFIG and
 * the row is skipped (said, not counted), not failed. */
typedef struct backend_row {
    const char *name;
    int (*create)(eng_backend **out, tlm_err *e);
    double tol_fwd, tol_bwd;
    int needs_device;
    /* the backend's kept error (a device backend's ops return none), or NULL */
    int (*status)(const eng_backend *b, tlm_err *e);
    /* a row that must fail: only this op's cases run, and each must fail */
    const char *must_fail;
    /* a row for one op alone (its other ops are another row's): only this
     * op's cases run, and each must pass */
    const char *only;
    /* activations in bf16: only the cases with activations run, against
     * the CPU on the same bf16-rounded inputs, within bf16_bound's bounds
     * (tol_fwd and tol_bwd unused) */
    int bf16;
} backend_row;

static int cpu_create(eng_backend **out, tlm_err *e)
{
    return eng_backend_cpu_create(out, 0, e);
}

/* A backend wrapped under another table: a copy of the inner backend's,
 * changed by the maker; freeing it frees the inner one. */
typedef struct wrapped {
    eng_backend b;
    eng_backend *inner;
    eng_ops ops;
} wrapped;

static void wrapped_free(eng_backend *b)
{
    eng_backend_free(((wrapped *)b)->inner);
    free(b);
}

/* inner made by make(&inner, 0, e); the copy named name; the caller
 * changes the returned table */
static eng_ops *wrap(eng_backend **out, int (*make)(eng_backend **, int, tlm_err *), const char *name, tlm_err *e)
{
    wrapped *w = calloc(1, sizeof *w);
    if (!w) {
        tlm_errf(e, TLM_ENOMEM, "out of memory");
        return NULL;
    }
    if (make(&w->inner, 0, e)) {
        free(w);
        return NULL;
    }
    w->ops = *w->inner->ops;
    w->ops.name = name;
    w->ops.backend_free = wrapped_free;
    w->b.ops = &w->ops;
    w->b.ctx = w->inner->ctx;
    *out = &w->b;
    return &w->ops;
}

/* "cpu-mirror": the CPU's ops on memory the harness must copy to and from,
 * as a device backend's (is_host 0); it checks this test's path for other
 * backends, and must agree with the CPU bit for bit. */
static int mirror_create(eng_backend **out, tlm_err *e)
{
    eng_ops *o = wrap(out, eng_backend_cpu_create, "cpu-mirror", e);
    if (!o)
        return e->code ? e->code : TLM_EINTERNAL;
    o->is_host = 0;
    return 0;
}

#ifdef TLM_HAVE_CUDA
/* GPU 0 of those the runtime lists (CUDA_VISIBLE_DEVICES picks it) */
static int cuda_create(eng_backend **out, tlm_err *e)
{
    return eng_backend_cuda_create(out, 0, e);
}
#endif

#ifdef TLM_HAVE_CUDA_EMU
/* the same kernels on the CPU under the emulated execution model */
static int cuda_emu_create(eng_backend **out, tlm_err *e)
{
    return eng_backend_cuda_emu_create(out, 0, e);
}

/* "cuda-emu-broken": the emulated backend with rmsnorm_fwd replaced by a
 * test-only kernel that reads the gain at a wrong index
 * (tests/engine/backend/emu_kernels.cu): its rmsnorm cases must fail
 * against the CPU, which shows the comparison catches a kernel's bug. */
void tlm_emu_rmsnorm_fwd_wrong_index(void *ctx, eng_act *out, float *rstd, const eng_act *x, const float *w, int N,
                                     int C,
                                     float eps);

static int broken_create(eng_backend **out, tlm_err *e)
{
    eng_ops *o = wrap(out, eng_backend_cuda_emu_create, "cuda-emu-broken", e);
    if (!o)
        return e->code ? e->code : TLM_EINTERNAL;
    o->rmsnorm_fwd = tlm_emu_rmsnorm_fwd_wrong_index;
    return 0;
}

static int broken_status(const eng_backend *b, tlm_err *e)
{
    return eng_backend_cuda_emu_status(((const wrapped *)b)->inner, e);
}

#endif

#if defined TLM_HAVE_CUDA || defined TLM_HAVE_CUDA_EMU
/* A CUDA backend (make) with bf16 activations (set: the trainer's
 * eng_backend_cuda[_emu]_set_dtype), its fused attention through cuDNN's
 * SDPA graph when cudnn is given (train.attention: cudnn) */
static int bf16_create(eng_backend **out, int (*make)(eng_backend **, int, tlm_err *),
                       int (*set)(eng_backend *, eng_dtype, tlm_err *), int (*cudnn)(eng_backend *, int), tlm_err *e)
{
    int rc = make(out, 0, e);
    if (!rc && (rc = set(*out, ENG_BF16, e)))
        eng_backend_free(*out);
    if (!rc && cudnn)
        cudnn(*out, 1);
    return rc;
}
#endif
#ifdef TLM_HAVE_CUDA
static int cuda_bf16_create(eng_backend **out, tlm_err *e)
{
    return bf16_create(out, eng_backend_cuda_create, eng_backend_cuda_set_dtype, NULL, e);
}
/* "cuda-bf16-cudnn" */
static int cuda_bf16_cudnn_create(eng_backend **out, tlm_err *e)
{
    return bf16_create(out, eng_backend_cuda_create, eng_backend_cuda_set_dtype, eng_backend_cuda_set_attention_cudnn,
                       e);
}
#endif
#ifdef TLM_HAVE_CUDA_EMU
/* "cuda-emu-bf16": the emulated kernels with bf16 activations */
static int cuda_emu_bf16_create(eng_backend **out, tlm_err *e)
{
    return bf16_create(out, eng_backend_cuda_emu_create, eng_backend_cuda_emu_set_dtype, NULL, e);
}
/* "cuda-emu-bf16-cudnn": and attention through the cuDNN stand-ins */
static int cuda_emu_bf16_cudnn_create(eng_backend **out, tlm_err *e)
{
    return bf16_create(out, eng_backend_cuda_emu_create, eng_backend_cuda_emu_set_dtype,
                       eng_backend_cuda_emu_set_attention_cudnn, e);
}
/* test_flash's entry to the cuDNN stand-ins' counts (flash_entry.cu) */
void tlm_test_flash_emu_cudnn_counts(long *graphs, long *execs);
#endif

/* The bf16 rows' bound on an output's error, relative to its largest
 * reference magnitude as every row's (bf16's unit roundoff u = 2^-8: 8
 * significant bits).  Both sides read the same bf16-rounded inputs and
 * compute in fp32, so what differs is the device's rounding of what it
 * stores, and the fp32 order of sums the fp32 rows bound (1e-4 here):
 *   - every op but attention: each stored activation is one rounding of
 *     an fp32 value (<= u of it); an op that reads an earlier op's bf16
 *     output (silu_norm's backward reads y) may see it one ulp (2u) away
 *     where the two fp32 values straddle a rounding boundary: 2u + 1e-4
 *     for the backward, u + 1e-4 for the forward.  fp32 outputs (rstd,
 *     lse, the weights' gradients) meet the same bounds with room;
 *   - attention, on flash.cu's kernels at head sizes 64 and 128: P and dS
 *     are rounded to bf16 as mma operands, so test_flash's analysis
 *     holds: O within 2^-7, the gradients within 2^-6. */
static double bf16_bound(const char *op, int kind)
{
    const double u = 0x1p-8;
    if (!strcmp(op, "attention"))
        return kind == T_BWD ? 0x1p-6 : 0x1p-7;
    return (kind == T_BWD ? 2 * u : u) + 1e-4;
}

/* The first row is the reference (checked against the double references;
 * its tolerances are not used).  A backend that is built adds its row.
 * cuda: fp32 kernels and cuBLASLt in fp32 (no TF32), so only the order of
 * sums differs from the CPU's. */
static const backend_row backends[] = {
    {"cpu", cpu_create, 0, 0, 0, NULL, NULL, NULL, 0},
    {"cpu-mirror", mirror_create, 0, 0, 0, NULL, NULL, NULL, 0},
#ifdef TLM_HAVE_CUDA
    {"cuda", cuda_create, 1e-5, 5e-5, 1, eng_backend_cuda_status, NULL, NULL, 0},
    {"cuda-bf16", cuda_bf16_create, 0, 0, 1, eng_backend_cuda_status, NULL, NULL, 1},
    {"cuda-bf16-cudnn", cuda_bf16_cudnn_create, 0, 0, 1, eng_backend_cuda_status, NULL, "attention", 1},
#endif
#ifdef TLM_HAVE_CUDA_EMU
    {"cuda-emu", cuda_emu_create, 1e-5, 5e-5, 0, eng_backend_cuda_emu_status, NULL, NULL, 0},
    {"cuda-emu-broken", broken_create, 1e-5, 5e-5, 0, broken_status, "rmsnorm", NULL, 0},
    {"cuda-emu-bf16", cuda_emu_bf16_create, 0, 0, 0, eng_backend_cuda_emu_status, NULL, NULL, 1},
    /* attention's bf16 cases at head sizes 64 and 128 through cuDNN's
     * graphs (the stand-ins compute what the descriptors describe), the
     * other cases on the plain kernels as in the row above */
    {"cuda-emu-bf16-cudnn", cuda_emu_bf16_cudnn_create, 0, 0, 0, eng_backend_cuda_emu_status, NULL, "attention", 1},
#endif
};
#define N_BACKENDS (int)(sizeof backends / sizeof backends[0])

/* ------------------------------------------------------------ the cases */
/* Each op group draws its inputs from its own stream, seeded as the two
 * tests these cases came from were (test_ops.c, test_titans_ops.c), so every
 * case sees the inputs it always did. */
static const struct {
    unsigned group;
    uint64_t seed;
} streams[] = {{0, 88172645463325252ull}, {ENG_OPS_TITANS, 0x9e3779b97f4a7c15ull}};

typedef struct op_case {
    const char *op;
    unsigned group; /* ENG_OPS_* the op belongs to; 0: a core op */
    void (*run)(tcase *t, const int *a, double d);
    int a[8];
    double d;
} op_case;

static const op_case cases[] = {
    {"matmul", 0, tb_case_matmul, {0, 0}, 0},
    {"matmul", 0, tb_case_matmul, {0, 1}, 0},
    {"matmul", 0, tb_case_matmul, {1, 0}, 0},
    {"matmul", 0, tb_case_matmul, {1, 1}, 0},
    {"embedding", 0, tb_case_embedding, {0}, 0},
    {"rmsnorm", 0, tb_case_rmsnorm, {0}, 0},
    {"rope", 0, tb_case_rope, {0}, 0},
    {"attention", 0, tb_case_attention, {1, 9, 2, 2, 4}, 0},
    {"attention", 0, tb_case_attention, {2, 67, 4, 2, 4}, 0},  /* two row blocks, grouped KV */
    {"attention", 0, tb_case_attention, {1, 130, 2, 1, 2}, 0}, /* three row blocks, multi-query */
    {"swiglu", 0, tb_case_swiglu, {0}, 0},
    {"gate", 0, tb_case_gate, {12}, 0},
    {"gate", 0, tb_case_gate, {3}, 0},
    {"xent", 0, tb_case_xent, {0}, 0},
    {"adamw, sumsq", 0, tb_case_adamw, {0}, 0},
    /* shapes that reach every path of a device backend's kernels (the
     * reference checks run on them too) */
    {"matmul", 0, tb_case_matmul, {0, 0, 1, 2, 3, 0}, 0}, /* pointers 4, 8 and 4 bytes aligned */
    {"matmul", 0, tb_case_matmul, {1, 0, 2, 1, 1, 3}, 0}, /* and padded row strides */
    {"matmul", 0, tb_case_matmul, {0, 1, 1, 1, 2, 5}, 0},
    {"matmul", 0, tb_case_matmul, {1, 1, 3, 2, 1, 1}, 0},
    {"matmul", 0, tb_case_matmul_k0, {2}, 0}, /* K = 0: C = 0.5 C */
    {"matmul", 0, tb_case_matmul_k0, {0}, 0}, /* and C = 0 */
    {"embedding", 0, tb_case_embedding, {37, 9, 200}, 0}, /* channels over two blocks */
    {"rmsnorm", 0, tb_case_rmsnorm, {3, 700}, 0},         /* a row longer than a block */
    {"attention", 0, tb_case_attention, {1, 9, 4, 2, 64}, 0},  /* head size 64 */
    {"attention", 0, tb_case_attention, {1, 5, 2, 1, 128}, 0}, /* head size 128 */
    {"xent", 0, tb_case_xent, {5, 1100}, 0},                   /* a vocabulary over two blocks, no multiple */
    {"adamw, sumsq", 0, tb_case_adamw, {300000}, 0},           /* several elements a thread */
    {"axpy", 0, tb_case_axpy, {1000}, 0},
    /* issue 24's ops: the fused classifier (one chunk; chunks of 3 rows,
     * the last short; a chunk a row over two kernel blocks), the sorted
     * embedding backward, the norm into backend memory */
    {"classifier", 0, tb_case_classifier, {0}, 0},
    {"classifier", 0, tb_case_classifier, {10, 300, 6}, 0},
    {"classifier", 0, tb_case_classifier, {4, 1100, 3}, 0},
    {"embedding_bwd_sorted", 0, tb_case_embedding_sorted, {9, 40, 5}, 0},
    {"embedding_bwd_sorted", 0, tb_case_embedding_sorted, {37, 23, 200}, 0}, /* channels over two blocks */
    {"sumsq_into", 0, tb_case_sumsq_into, {300000}, 0},
    /* the products' weight copy: adamw's p_lp, cast */
    {"weight copy", 0, tb_case_weight_copy, {37}, 0},
    {"weight copy", 0, tb_case_weight_copy, {300000}, 0}, /* several elements a thread */
    /* flash.cu's tiles (bf16 rows): 64 query rows and a partial tile, key
     * tiles of 32 query rows in the backward; last of the core cases, so
     * the ones before it draw the inputs they always did */
    {"attention", 0, tb_case_attention, {1, 70, 2, 1, 64, 1}, 0},
    /* added after flash's, for the same reason: x2 = x + nm (Titans MAL);
     * 300000 is several elements a thread */
    {"act_axpy", 0, tb_case_act_axpy, {37}, 0},
    {"act_axpy", 0, tb_case_act_axpy, {300000}, 0},
    /* matmul_add, the residual add out of place (after the cases above
     * for the same reason): packed, and offset with padded strides */
    {"matmul_add", 0, tb_case_matmul, {0, 1, 0, 0, 0, 0, 1}, 0},
    {"matmul_add", 0, tb_case_matmul, {1, 0, 2, 1, 1, 3, 1}, 0},
    {"dconv", ENG_OPS_TITANS, tb_case_dconv, {2, 7, 5, 4}, 0},
    {"dconv", ENG_OPS_TITANS, tb_case_dconv, {3, 3, 9, 4}, 0}, /* T < K: the window reaches past the sequence start */
    {"dconv", ENG_OPS_TITANS, tb_case_dconv, {1, 6, 3, 1}, 0},
    {"silu_norm", ENG_OPS_TITANS, tb_case_silu_norm, {5, 2, 7, 0}, 0},
    {"silu_norm", ENG_OPS_TITANS, tb_case_silu_norm, {4, 2, 8, 13}, 0}, /* q, k normalised; v only activated */
    {"swa", ENG_OPS_TITANS, tb_case_swa, {2, 9, 2, 2, 4, 3, 0}, 0},
    {"swa", ENG_OPS_TITANS, tb_case_swa, {2, 9, 2, 2, 4, 3, 3}, 0},
    {"swa", ENG_OPS_TITANS, tb_case_swa, {1, 9, 4, 2, 4, 20, 2}, 0},    /* window larger than T: causal */
    {"swa", ENG_OPS_TITANS, tb_case_swa, {1, 70, 2, 1, 4, 9, 2}, 0},    /* two row blocks, multi-query */
    {"swa", ENG_OPS_TITANS, tb_case_swa, {1, 70, 2, 2, 4, 1, 1}, 0},    /* window 1: itself and the persistent entry */
    {"swa", ENG_OPS_TITANS, tb_case_swa, {1, 130, 1, 1, 2, 100, 0}, 0}, /* three blocks, wide window */
    /* titans_mem: B, T, H, D, Hm, depth, chunk; max_lr */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {2, 7, 2, 4, 6, 1, 3}, 0.5},  /* chunk does not divide T */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {1, 8, 2, 4, 5, 1, 4}, 0.9},  /* chunk divides T */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {2, 5, 1, 3, 4, 1, 1}, 0.7},  /* b = 1: token by token */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {1, 6, 2, 3, 4, 1, 16}, 0.5}, /* one chunk: reads see only w0 */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {2, 7, 2, 4, 6, 2, 3}, 0.5},
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {1, 8, 2, 4, 5, 2, 4}, 0.9},
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {2, 5, 1, 3, 4, 2, 1}, 0.7},
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {1, 6, 2, 3, 4, 2, 16}, 0.5},
    {"swa", ENG_OPS_TITANS, tb_case_swa, {1, 9, 2, 1, 64, 4, 2}, 0},           /* head size 64 */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {1, 9, 2, 8, 12, 2, 4}, 0.6}, /* 3 chunks, the last short */
    /* the CUDA memory's block of 256 threads with several elements each:
     * state (Pm 768, 576), chunk rows (n x D 320, 288) and hidden rows */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {1, 45, 1, 16, 24, 2, 20}, 0.5}, /* 3 chunks, the last short */
    {"titans_mem", ENG_OPS_TITANS, tb_case_mem, {1, 29, 1, 24, 24, 1, 12}, 0.5},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

/* ------------------------------------------------------------ the runs */
static unsigned char *arena, *stage, *keep;

/* One case on one backend in one mode, from the stream state `at`; bf16:
 * for a bf16 row (its device run, or the CPU's capture for it) */
static void run_case(tcase *t, const eng_backend *b, void *dev, int mode, const op_case *c, uint64_t at, int bf16)
{
    memset(t, 0, sizeof *t);
    t->o = b->ops;
    t->ctx = b->ctx;
    t->mode = mode;
    t->host = arena;
    t->dev = dev;
    t->fits = 1;
    t->bf16 = bf16 && dev;
    t->round = bf16 && !dev;
    t->stage = stage;
    t->keep = keep;
    memset(arena, 0, T_ARENA);
    tb_rng = at;
    c->run(t, c->a, c->d);
}

/* max |a - b| / max |b| over n floats */
static double rel_err_f(const float *a, const float *b, size_t n)
{
    double e = 0, s = 1e-30;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs((double)a[i] - b[i]));
        s = fmax(s, fabs((double)b[i]));
    }
    return e / s;
}

/* A bf16 row's forward output element by element: a stored element is one
 * rounding to nearest of an fp32 value computed from the same inputs as
 * the CPU's, so within half an ulp of it, u |b_i| (u = 2^-8), plus the
 * fp32 order of sums (1e-5 of the output's largest magnitude).  The worst
 * ratio of error to that allowance: over 1 fails.  It catches what the
 * normwise bound cannot: a store that truncates is off by up to one ulp
 * (2u |b_i|) in about half the elements, while the largest errors of a
 * small output may all stay under u max |b|. */
static double bf16_elem_ratio(const float *a, const float *b, size_t n)
{
    double s = 1e-30, worst = 0;
    for (size_t i = 0; i < n; i++)
        s = fmax(s, fabs((double)b[i]));
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)a[i] - b[i]) / (0x1p-8 * fabs((double)b[i]) + 1e-5 * s));
    return worst;
}

/* Another backend: each case of the groups it fills, against the CPU's
 * outputs from the same inputs. */
static void compare_backend(const backend_row *row, const eng_backend *b, const eng_backend *ref,
                            const uint64_t *starts)
{
    void *dev = b->ops->is_host ? NULL : b->ops->alloc(b->ctx, T_ARENA);
    unsigned char *want = malloc(T_ARENA);
    if ((!b->ops->is_host && !dev) || !want) {
        TAP_OK(0, "%s: %zu MiB for the cases", row->name, T_ARENA >> 20);
        free(want);
        return;
    }
    static tcase t, r;
    for (int i = 0; i < N_CASES; i++) {
        const op_case *c = &cases[i];
        if (c->group & ~b->ops->groups) {
            TAP_DIAG("%s: %s skipped: the backend does not fill its op group", row->name, c->op);
            continue;
        }
        if ((row->must_fail && strcmp(c->op, row->must_fail)) || (row->only && strcmp(c->op, row->only)))
            continue;
        run_case(&r, ref, NULL, T_CAPTURE, c, starts[i], row->bf16);
        if (row->bf16 && !r.n_act) /* no activations: the fp32 rows cover it */
            continue;
        memcpy(want, arena, r.used);
        for (int k = 0; row->bf16 && k < r.n_out; k++) /* the CPU's fp32 outputs, not rounded by a later op */
            memcpy(want + r.out[k].off, keep + r.out[k].off, r.out[k].n * sizeof(float));
        run_case(&t, b, dev, T_COMPARE, c, starts[i], row->bf16);
        double worst = 0, tol_worst = 1, elem_worst = 0;
        int elem_checked = 0;
        const char *at = "";
        int ok = t.fits && r.fits && t.n_out == r.n_out && t.n_value == r.n_value;
        for (int k = 0; ok && k < t.n_out; k++) {
            const double tol = row->bf16                  ? bf16_bound(c->op, t.out[k].kind)
                               : t.out[k].kind == T_BWD ? row->tol_bwd
                                                        : row->tol_fwd;
            const double err = rel_err_f((const float *)(arena + t.out[k].off),
                                         (const float *)(want + r.out[k].off), t.out[k].n);
            if (!(err <= tol))
                ok = 0;
            /* the forward outputs but attention's (flash rounds P inside) */
            if (row->bf16 && t.out[k].kind == T_FWD && strcmp(c->op, "attention")) {
                const double ratio = bf16_elem_ratio((const float *)(arena + t.out[k].off),
                                                     (const float *)(want + r.out[k].off), t.out[k].n);
                elem_worst = fmax(elem_worst, ratio);
                elem_checked = 1;
                if (!(ratio <= 1))
                    ok = 0;
            }
            if (!at[0] || (tol > 0 ? err / tol : err) > (tol_worst > 0 ? worst / tol_worst : worst)) {
                worst = err, tol_worst = tol, at = t.out[k].name;
            }
        }
        for (int k = 0; ok && k < t.n_value; k++)
            ok = fabs(t.value[k] - r.value[k]) <= (row->bf16 ? bf16_bound(c->op, T_FWD) : row->tol_fwd) * fabs(r.value[k]);
        if (row->must_fail)
            TAP_OK(!ok, "%s: %s (%d %d %d %d %d %d %d) fails against the cpu, as it must: worst %s %.1e (tolerance %.0e)",
                   row->name, c->op, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5], c->a[6], at, worst,
                   tol_worst);
        else if (row->bf16) {
            char el[64] = "";
            if (elem_checked)
                snprintf(el, sizeof el, "; forward elements within %.2f of half an ulp", elem_worst);
            TAP_OK(ok, "%s: %s (%d %d %d %d %d %d %d) against the cpu: worst %s %.1e (bound %.1e)%s", row->name, c->op,
                   c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5], c->a[6], at, worst, tol_worst, el);
        } else
            TAP_OK(ok, "%s: %s (%d %d %d %d %d %d %d) against the cpu: worst %s %.1e (tolerance %.0e)", row->name,
                   c->op, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5], c->a[6], at, worst, tol_worst);
    }
    if (dev)
        b->ops->free(b->ctx, dev);
    free(want);
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
    tlm_err e = {0};
    eng_backend *ref;
    arena = aligned_alloc(64, T_ARENA);
    stage = aligned_alloc(64, T_ARENA);
    keep = aligned_alloc(64, T_ARENA);
    if (!arena || !stage || !keep || backends[0].create(&ref, &e)) {
        printf("Bail out! the reference backend: %s\n", arena ? e.msg : "out of memory");
        return 1;
    }
    TAP_DIAG("blas %s kernel %s threads %d", eng_runtime_blas(), eng_runtime_kernel(), eng_backend_cpu_threads(ref));
    test_expf();
    /* the reference pass: every case, in order, each stream continuing
     * from one case to the next; where each case started is kept for the
     * other backends */
    static uint64_t starts[N_CASES];
    static tcase t;
    unsigned group = ~0u;
    for (int i = 0; i < N_CASES; i++) {
        if (cases[i].group != group) {
            group = cases[i].group;
            for (size_t s = 0; s < sizeof streams / sizeof streams[0]; s++)
                if (streams[s].group == group)
                    tb_rng = streams[s].seed;
        }
        starts[i] = tb_rng;
        run_case(&t, ref, NULL, T_REF, &cases[i], tb_rng, 0);
    }
    for (int i = 1; i < N_BACKENDS; i++) {
        eng_backend *b;
        if (backends[i].create(&b, &e)) {
            if (backends[i].needs_device && e.code == TLM_ECONFIG)
                TAP_DIAG("%s: every case skipped: %s", backends[i].name, e.msg);
            else
                TAP_OK(0, "%s backend: %s", backends[i].name, e.msg);
            continue;
        }
        compare_backend(&backends[i], b, ref, starts);
        if (backends[i].status) {
            tlm_err ce = {0};
            TAP_OK(!backends[i].status(b, &ce), "%s: no error kept by the backend%s%s", backends[i].name,
                   ce.msg[0] ? ": " : "", ce.msg);
        }
        eng_backend_free(b);
    }
#ifdef TLM_HAVE_CUDA_EMU
    /* which kernels the emulated rows ran (docs/engine.md's table) */
    static char run[16384];
    TAP_DIAG("cuda-emu: %d kernels ran (name, launches, blocks, seconds emulated):",
             eng_cuda_emu_kernels_run(run, sizeof run));
    /* the bf16 row's attention at head sizes 64 and 128 went to flash.cu
     * (its results alone would not say: the scalar kernels in bf16 meet
     * the same bounds) */
    TAP_OK(strstr(run, "k_flash_fwd") && strstr(run, "k_flash_bwd_kv") && strstr(run, "k_flash_bwd_q"),
           "cuda-emu-bf16: attention at head sizes 64 and 128 ran flash.cu's kernels");
    /* and the cudnn row's through cuDNN's graphs: a forward and a backward
     * plan for each of its 3 cases at those head sizes */
    long graphs = 0, execs = 0;
    tlm_test_flash_emu_cudnn_counts(&graphs, &execs);
    TAP_OK(execs >= 6 && graphs >= 6,
           "cuda-emu-bf16-cudnn: attention at head sizes 64 and 128 ran cuDNN's graphs (%ld finalized, %ld plans "
           "executed)",
           graphs, execs);
    for (char *line = strtok(run, "\n"); line; line = strtok(NULL, "\n"))
        TAP_DIAG("  %s", line);
#endif
    eng_backend_free(ref);
    free(arena);
    free(stage);
    free(keep);
    return tap_done();
}
