/* test_cuda_emu.c: the CUDA emulator itself (engine/cuda/emu/, the
 * emulated build of engine/cuda/): that each of its checks fires on a
 * test-only kernel that breaks its rule and stays quiet on the same kernel
 * done right (emu_kernels.cu), that its warp primitives, bf16 conversions
 * and tensor-core fragments compute what CUDA's do, and that the cuBLASLt
 * stand-ins refuse what the library documents it refuses.
 *
 *   - racecheck: a missing __syncthreads in both orders (a read after
 *     another thread's write, a write after another thread's read), a
 *     tiled loop without the barrier that ends an iteration (the next
 *     load overwrites what other threads read), a missing __syncwarp
 *     between two lanes, two blocks writing one word, ops.cu's block
 *     reduction called twice with no barrier between; and their
 *     corrections;
 *   - synccheck: a barrier some threads exited before, divergent barriers,
 *     a shuffle whose mask holds an exited lane, a mask without the
 *     caller, lanes with different masks;
 *   - memcheck, initcheck: a read past an allocation, a host pointer as a
 *     kernel argument, a read of memory nothing wrote, a misaligned read,
 *     a read of another thread's local variable;
 *   - bf16: float -> bf16 (round to nearest even, truncation), bf16 ->
 *     float and double -> bf16 against a table CUDA 13.0's cuda_bf16.hpp
 *     produced (its host path, which rounds as the device's cvt does);
 *   - fragments: D = A B + C through ldmatrix and mma.sync, and through
 *     fragments filled from the PTX ISA tables, against the product
 *     computed here: on the emulator, and on GPU 0 when one is lent
 *     (cuda_frag.cu, built by nvcc too);
 *   - the matmul wrapper on pointers 4 and 8 bytes aligned: the algorithm
 *     is chosen for the alignment the pointers have; more shapes than its
 *     plan table holds, a plan the library refuses and a product it fails
 *     (every cuBLASLt call site of matmul.cu runs); the operands' storage
 *     types (bf16 A and B into fp32 or bf16 C, K = 0 on bf16, mixed A and
 *     B refused);
 *   - stream capture (the backend's graph ops): a memset, a copy and a
 *     matmul recorded, not run, until the graph is launched, each launch
 *     reading the inputs as they are then; each call real CUDA refuses in
 *     a capture (an allocation, a copy from or to pageable memory, a wait
 *     on the stream) fails the capture with a report naming it.
 * Exits 77 in a build without the emulator.
 *
 * Must not: pass when a check reports nothing where it should (every
 * scenario names the words its report must hold). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine/cuda/backend.h"
#include "tests/lib/tap.h"

#ifdef TLM_HAVE_CUDA_EMU
int tlm_emu_run(const char *name, char *report, size_t cap);
int tlm_emu_last_matmul_align(unsigned ptr_align[4], unsigned algo_align[4]);
unsigned tlm_emu_bf16_rn(uint32_t f32_bits);
unsigned tlm_emu_bf16_rz(uint32_t f32_bits);
uint32_t tlm_emu_bf16_to_f32(unsigned b);
unsigned tlm_emu_bf16_from_f64(double d);
int tlm_test_frag_emu(float *d_ld, float *d_direct, const uint16_t *A, const uint16_t *B, const float *C, char *msg,
                      size_t cap);
#ifdef TLM_HAVE_CUDA
int tlm_test_frag_gpu(float *d_ld, float *d_direct, const uint16_t *A, const uint16_t *B, const float *C, char *msg,
                      size_t cap);
#endif

/* ------------------------------------------------------------ the checks */
/* a scenario, whether it must fail, and words its report must hold (NULL:
 * none needed) */
static const struct {
    const char *name;
    int fails;
    const char *words[3];
} scenarios[] = {
    {"race_missing_barrier", 1, {"racecheck", "k_missing_barrier", "same barrier interval"}},
    {"race_with_barrier", 0, {NULL}},
    {"race_raw", 1, {"racecheck", "thread (1,0,0) reads", "thread (0,0,0) wrote it in the same barrier interval"}},
    {"race_raw_barrier", 0, {NULL}},
    {"race_war", 1, {"racecheck", "thread (1,0,0) writes", "thread (0,0,0) read it in the same barrier interval"}},
    {"race_war_barrier", 0, {NULL}},
    {"race_tile_loop", 1, {"racecheck", "writes 4 bytes at shared memory", "read it in the same barrier interval"}},
    {"race_tile_loop_barrier", 0, {NULL}},
    {"race_warp_unsynced", 1, {"racecheck", "thread (0,0,0)", "warp collective"}},
    {"race_warp_synced", 0, {NULL}},
    {"race_blocks_same_word", 1, {"racecheck", "block (0,0,0)", "same launch"}},
    {"race_blocks_own_words", 0, {NULL}},
    {"race_reduction_twice", 1, {"racecheck", "k_sum_twice", "twice_sum"}},
    {"race_reduction_twice_barrier", 0, {NULL}},
    {"atomic_count", 0, {NULL}},
    {"sync_barrier_after_exit", 1, {"synccheck", "exited without reaching the __syncthreads", "k_barrier_after_exit"}},
    {"sync_divergent_barriers", 1, {"synccheck", "divergent", NULL}},
    {"shfl_exited_lane", 1, {"synccheck", "thread (5,0,0) exited while lanes of its warp wait for it", NULL}},
    {"shfl_mask_without_caller", 1, {"synccheck", "does not hold it", NULL}},
    {"shfl_masks_differ", 1, {"synccheck", "with mask 0xffff0000 while lanes of that mask wait", NULL}},
    {"warp_values", 0, {NULL}},
    {"mem_out_of_bounds", 1, {"memcheck", "past the end of device allocation", "out of bounds"}},
    {"mem_in_bounds", 0, {NULL}},
    {"mem_host_pointer_argument", 1, {"argument 2 (host)", "not a device pointer", "k_read_at"}},
    {"mem_uninitialised", 1, {"initcheck", "uninitialised", "thread (0,0,0)"}},
    {"mem_misaligned", 1, {"memcheck", "misaligned", NULL}},
    {"mem_other_thread_stack", 1, {"memcheck", "another thread's stack", "thread (1,0,0)"}},
    {"lt_aligned_as_promised", 0, {NULL}},
    {"lt_less_aligned_than_promised", 1, {"CUBLAS_STATUS_NOT_SUPPORTED", "16-byte aligned", "stand-in"}},
    {"lt_ld_below_rows", 1, {"CUBLAS_STATUS_INVALID_VALUE", "ld 3 < 4", NULL}},
    {"lt_fp32_inputs_bf16_output", 1, {"CUBLAS_STATUS_NOT_SUPPORTED", "CUDA_R_16BF", NULL}},
    {"lt_matrix_leaves_allocation", 1, {"CUBLAS_STATUS_EXECUTION_FAILED", "leaves its allocation", NULL}},
    {"lt_element_misaligned", 1, {"CUBLAS_STATUS_INVALID_VALUE", "not aligned to its CUDA_R_16BF", NULL}},
    {"lt_batch_aligned_as_promised", 0, {NULL}},
    {"lt_batch_stride_less_aligned", 1, {"CUBLAS_STATUS_NOT_SUPPORTED", "and its batch stride) is 4-byte aligned", NULL}},
    {"lt_bf16_bias_batch", 0, {NULL}},
};

static void test_scenarios(void)
{
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        char report[2048];
        const int rc = tlm_emu_run(scenarios[i].name, report, sizeof report);
        int ok = rc >= 0 && (rc != 0) == scenarios[i].fails;
        for (int k = 0; k < 3 && ok && scenarios[i].words[k]; k++)
            ok = strstr(report, scenarios[i].words[k]) != NULL;
        TAP_OK(ok, "%s: %s%s%s", scenarios[i].name, scenarios[i].fails ? "reported" : "no report",
               report[0] ? ": " : "", report);
    }
}

/* ------------------------------------------------------------ bf16 */
/* float bits -> (rn, rz) bf16 bits and rn back to float, from CUDA 13.0's
 * cuda_bf16.hpp (__float2bfloat16_rn, __float2bfloat16_rz,
 * __bfloat162float), compiled for the host */
static const struct {
    uint32_t f;
    unsigned rn, rz;
    uint32_t back;
} bf16_table[] = {
    {0x00000000u, 0x0000, 0x0000, 0x00000000u}, {0x80000000u, 0x8000, 0x8000, 0x80000000u},
    {0x3f800000u, 0x3f80, 0x3f80, 0x3f800000u}, {0xbf800000u, 0xbf80, 0xbf80, 0xbf800000u},
    {0x3f808000u, 0x3f80, 0x3f80, 0x3f800000u}, /* a tie, even: stays */
    {0x3f818000u, 0x3f82, 0x3f81, 0x3f820000u}, /* a tie, odd: up */
    {0x3f808001u, 0x3f81, 0x3f80, 0x3f810000u}, {0x3f807fffu, 0x3f80, 0x3f80, 0x3f800000u},
    {0x3f80ffffu, 0x3f81, 0x3f80, 0x3f810000u}, {0x7f7fffffu, 0x7f80, 0x7f7f, 0x7f800000u}, /* FLT_MAX: inf */
    {0xff7fffffu, 0xff80, 0xff7f, 0xff800000u}, {0x7f7f7fffu, 0x7f7f, 0x7f7f, 0x7f7f0000u},
    {0x7f7f8000u, 0x7f80, 0x7f7f, 0x7f800000u}, {0x7f800000u, 0x7f80, 0x7f80, 0x7f800000u},
    {0xff800000u, 0xff80, 0xff80, 0xff800000u}, {0x7fc00000u, 0x7fff, 0x7fff, 0x7fff0000u}, /* NaN: canonical */
    {0x7f800001u, 0x7fff, 0x7fff, 0x7fff0000u}, {0xffc00000u, 0x7fff, 0x7fff, 0x7fff0000u},
    {0x7fffffffu, 0x7fff, 0x7fff, 0x7fff0000u}, {0x00800000u, 0x0080, 0x0080, 0x00800000u},
    {0x00000001u, 0x0000, 0x0000, 0x00000000u}, {0x00008000u, 0x0000, 0x0000, 0x00000000u}, /* subnormals */
    {0x00018000u, 0x0002, 0x0001, 0x00020000u}, {0x00008001u, 0x0001, 0x0000, 0x00010000u},
    {0x807fffffu, 0x8080, 0x807f, 0x80800000u}, {0x40490fdbu, 0x4049, 0x4049, 0x40490000u},
    {0xc2f6e979u, 0xc2f7, 0xc2f6, 0xc2f70000u}, {0x3eaaaaabu, 0x3eab, 0x3eaa, 0x3eab0000u},
    {0x4b7fffffu, 0x4b80, 0x4b7f, 0x4b800000u}, {0x33800000u, 0x3380, 0x3380, 0x33800000u},
};
/* __double2bfloat16 (one rounding), same source */
static const struct {
    double d;
    unsigned bf;
} bf16_double_table[] = {
    {1.0039062500010001, 0x3f81}, {1.0039062499989999, 0x3f80}, {1.01171875, 0x3f82},
    {3.0000000000000004, 0x4040}, {-0.66666666666666663, 0xbf2b}, {1e300, 0x7f80},
    {-1e-300, 0x8000},            {3.4028235677973366e+38, 0x7f80},
};

static void test_bf16(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof bf16_table / sizeof bf16_table[0]; i++) {
        const unsigned rn = tlm_emu_bf16_rn(bf16_table[i].f), rz = tlm_emu_bf16_rz(bf16_table[i].f);
        const uint32_t back = tlm_emu_bf16_to_f32(rn);
        if (rn != bf16_table[i].rn || rz != bf16_table[i].rz || back != bf16_table[i].back) {
            bad++;
            TAP_DIAG("bf16 of 0x%08x: rn 0x%04x rz 0x%04x back 0x%08x; cuda_bf16.hpp: 0x%04x 0x%04x 0x%08x",
                     bf16_table[i].f, rn, rz, back, bf16_table[i].rn, bf16_table[i].rz, bf16_table[i].back);
        }
    }
    for (size_t i = 0; i < sizeof bf16_double_table / sizeof bf16_double_table[0]; i++) {
        const unsigned b = tlm_emu_bf16_from_f64(bf16_double_table[i].d);
        if (b != bf16_double_table[i].bf) {
            bad++;
            TAP_DIAG("bf16 of the double %.17g: 0x%04x; cuda_bf16.hpp: 0x%04x", bf16_double_table[i].d, b,
                     bf16_double_table[i].bf);
        }
    }
    TAP_OK(!bad, "bf16 conversions: %zu floats (ties, overflow, NaN, subnormals) and %zu doubles as cuda_bf16.hpp",
           sizeof bf16_table / sizeof bf16_table[0], sizeof bf16_double_table / sizeof bf16_double_table[0]);
}

/* ------------------------------------------------------------ fragments */
static uint16_t bf16_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)tlm_emu_bf16_rn(u);
}

static double f_of(uint16_t b)
{
    const uint32_t u = tlm_emu_bf16_to_f32(b);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

typedef int (*frag_fn)(float *, float *, const uint16_t *, const uint16_t *, const float *, char *, size_t);

static void test_fragments(const char *where, frag_fn run)
{
    uint16_t A[256], B[128];
    float C[128], d_ld[128], d_direct[128];
    double want[128];
    /* distinct values everywhere (a swapped pair shows), exact in bf16 */
    for (int i = 0; i < 256; i++)
        A[i] = bf16_of((float)((i * 37) % 29 - 14) / 8.0f);
    for (int i = 0; i < 128; i++) {
        B[i] = bf16_of((float)((i * 11) % 23 - 11) / 4.0f);
        C[i] = (float)i / 16.0f;
    }
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) {
            double s = 0;
            for (int k = 0; k < 16; k++)
                s += f_of(A[r * 16 + k]) * f_of(B[k * 8 + c]);
            want[r * 8 + c] = s;
        }
    char msg[512] = "";
    const int rc = run(d_ld, d_direct, A, B, C, msg, sizeof msg);
    if (rc == 77) {
        TAP_DIAG("%s: fragments skipped: %s", where, msg);
        return;
    }
    double e_ld = 0, e_dir = 0;
    int at_ld = 0, at_dir = 0;
    for (int i = 0; i < 128 && !rc; i++) {
        const double a = fabs(d_ld[i] - (want[i] + C[i])), b = fabs(d_direct[i] - want[i]);
        if (!(a <= e_ld))
            e_ld = a, at_ld = i;
        if (!(b <= e_dir))
            e_dir = b, at_dir = i;
    }
    /* the products are exact in fp32; a GPU may add them in another order */
    TAP_OK(!rc && e_ld <= 1e-5, "%s: ldmatrix .x4 / .x2.trans + mma.sync m16n8k16: D = A B + C, worst |error| %.1e at "
                                "(%d, %d)%s%s",
           where, e_ld, at_ld / 8, at_ld % 8, rc ? ": " : "", msg);
    TAP_OK(!rc && e_dir <= 1e-5, "%s: fragments from the PTX ISA tables + mma.sync: D = A B, worst |error| %.1e at "
                                 "(%d, %d)",
           where, e_dir, at_dir / 8, at_dir % 8);
}

/* ------------------------------------------------------------ the matmul wrapper */
/* C = A B with A, B and C at 4- and 8-byte aligned offsets: the plan asks
 * the heuristic for what the pointers have, and the stand-in runs it */
static void test_matmul_alignment(void)
{
    tlm_err e = {0};
    eng_backend *b;
    if (eng_backend_cuda_emu_create(&b, 0, &e)) {
        TAP_OK(0, "cuda-emu backend: %s", e.msg);
        return;
    }
    enum { M = 3, N = 5, K = 4 };
    float *dev = b->ops->alloc(b->ctx, 4096);
    float host[3 * 64] = {0};
    for (int i = 0; i < 64; i++)
        host[i] = (float)(i % 7) - 3, host[64 + i] = (float)(i % 5) - 2;
    b->ops->to_device(b->ctx, dev, host, sizeof host);
    /* A at float 1 (4-byte aligned), B at 66 (8), C at 129 (4) */
    b->ops->matmul(b->ctx, 0, 0, M, N, K, 1.0f, dev + 1, K, dev + 66, N, 0.0f, dev + 129, N, eng_mm_f32());
    float C[M * N];
    b->ops->to_host(b->ctx, C, dev + 129, sizeof C);
    double err = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)host[1 + i * K + k] * host[66 + k * N + j];
            err = fmax(err, fabs(C[i * N + j] - s));
        }
    unsigned pa[4], aa[4];
    const int ran = tlm_emu_last_matmul_align(pa, aa);
    tlm_err ce = {0};
    const int st = eng_backend_cuda_emu_status(b, &ce);
    /* the wrapper hands cuBLASLt B first (row-major to column-major) */
    TAP_OK(!st && ran && err < 1e-5 && pa[0] == 8 && pa[1] == 4 && pa[3] == 4 && aa[0] == 4 && aa[1] == 4 &&
               aa[3] == 4,
           "matmul on 4- and 8-byte aligned operands: error %.1e; pointers aligned %u %u %u %u, algorithm chosen for "
           "%u %u %u %u%s%s",
           err, pa[0], pa[1], pa[2], pa[3], aa[0], aa[1], aa[2], aa[3], st ? ": " : "", ce.msg);
    b->ops->free(b->ctx, dev);
    eng_backend_free(b);
}

/* The wrapper's other paths, so that every cuBLASLt call site of
 * matmul.cu runs: more shapes than its plan table holds (a plan made past
 * the table is used once and destroyed), a plan the library refuses (ld
 * below the rows: the plan's failure path), and a product the library
 * fails (a matrix that leaves its allocation: cublasLtMatmul's failure).
 * A refusal must become the backend's sticky error, naming the call. */
static void test_matmul_paths(void)
{
    tlm_err e = {0};
    eng_backend *b;
    if (eng_backend_cuda_emu_create(&b, 0, &e)) {
        TAP_OK(0, "cuda-emu backend: %s", e.msg);
        return;
    }
    enum { M = 2, K = 3, SHAPES = 524 }; /* past the table's 512 plans */
    float *dev = b->ops->alloc(b->ctx, 4096 * sizeof(float));
    static float host[2048];
    for (int i = 0; i < 2048; i++)
        host[i] = (float)(i % 9) - 4;
    b->ops->to_device(b->ctx, dev, host, sizeof host);
    double err = 0;
    for (int n = 1; n <= SHAPES; n++) {
        float C[M * SHAPES];
        b->ops->matmul(b->ctx, 0, 0, M, n, K, 1.0f, dev, K, dev + 64, n, 0.0f, dev + 2048, n, eng_mm_f32());
        b->ops->to_host(b->ctx, C, dev + 2048, (size_t)M * n * sizeof(float));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int k = 0; k < K; k++)
                    sum += (double)host[i * K + k] * host[64 + k * n + j];
                err = fmax(err, fabs(C[i * n + j] - sum));
            }
    }
    tlm_err ce = {0};
    int st = eng_backend_cuda_emu_status(b, &ce);
    TAP_OK(!st && err == 0, "matmul in %d shapes (more than the plan table holds): error %.1e%s%s", SHAPES, err,
           st ? ": " : "", ce.msg);
    eng_backend_free(b);

    static const struct {
        const char *what;
        int lda, past_end;
        const char *words[2];
    } bad[] = {
        {"lda below the rows: the plan is refused", 2, 0, {"cuBLASLt plan", "ld 2 < 3"}},
        {"A leaves its allocation: cublasLtMatmul fails", K, 1, {"cublasLtMatmul", "leaves its allocation"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (eng_backend_cuda_emu_create(&b, 0, &e)) {
            TAP_OK(0, "cuda-emu backend: %s", e.msg);
            return;
        }
        dev = b->ops->alloc(b->ctx, 4096 * sizeof(float));
        /* past_end: A's last row lies past the allocation's end */
        const float *A = bad[i].past_end ? dev + 4096 - K : dev;
        b->ops->matmul(b->ctx, 0, 0, M, 4, K, 1.0f, A, bad[i].lda, dev + 64, 4, 0.0f, dev + 2048, 4, eng_mm_f32());
        memset(&ce, 0, sizeof ce);
        st = eng_backend_cuda_emu_status(b, &ce);
        TAP_OK(st != 0 && strstr(ce.msg, bad[i].words[0]) && strstr(ce.msg, bad[i].words[1]), "matmul, %s: %s",
               bad[i].what, ce.msg);
        eng_backend_free(b);
    }
}

/* matmul's operand types (ops.h eng_mm) on the stand-in: bf16 A and B
 * into fp32 C and into bf16 C (beta 1), the same shape in fp32 first (the
 * plan is kept per types: reusing the fp32 one would read bf16 as fp32),
 * C = beta C on bf16 when K = 0, and A and B of different types refused.
 * The reference is the product of the same bf16 values in double. */
static uint16_t bf(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (uint16_t)tlm_emu_bf16_rn(u);
}
static double unbf(uint16_t h)
{
    uint32_t u = tlm_emu_bf16_to_f32(h);
    float x;
    memcpy(&x, &u, 4);
    return x;
}
static void test_matmul_dtypes(void)
{
    tlm_err e = {0};
    eng_backend *b;
    if (eng_backend_cuda_emu_create(&b, 0, &e)) {
        TAP_OK(0, "cuda-emu backend: %s", e.msg);
        return;
    }
    enum { M = 5, N = 6, K = 7 };
    char *dev = b->ops->alloc(b->ctx, 8192);
    float af[M * K], bfl[K * N], c0[M * N];
    uint16_t ah[M * K], bh[K * N], ch[M * N];
    for (int i = 0; i < M * K; i++)
        af[i] = (float)sin(0.7 * i + 0.1) * 1.3f, ah[i] = bf(af[i]);
    for (int i = 0; i < K * N; i++)
        bfl[i] = (float)cos(0.3 * i) * 0.9f, bh[i] = bf(bfl[i]);
    for (int i = 0; i < M * N; i++)
        c0[i] = 0.25f * (float)(i % 5) - 0.5f, ch[i] = bf(c0[i]);
    /* fp32 first, same shape and ld */
    b->ops->to_device(b->ctx, dev, af, sizeof af);
    b->ops->to_device(b->ctx, dev + 256, bfl, sizeof bfl);
    b->ops->matmul(b->ctx, 0, 0, M, N, K, 1.0f, dev, K, dev + 256, N, 0.0f, dev + 1024, N, eng_mm_f32());
    /* bf16 A, B -> fp32 C */
    b->ops->to_device(b->ctx, dev + 2048, ah, sizeof ah);
    b->ops->to_device(b->ctx, dev + 2304, bh, sizeof bh);
    b->ops->matmul(b->ctx, 0, 0, M, N, K, 1.0f, dev + 2048, K, dev + 2304, N, 0.0f, dev + 2560, N,
                   eng_mm_of(ENG_BF16, ENG_BF16, ENG_F32));
    /* bf16 A, B -> bf16 C += */
    b->ops->to_device(b->ctx, dev + 3072, ch, sizeof ch);
    b->ops->matmul(b->ctx, 0, 0, M, N, K, 1.0f, dev + 2048, K, dev + 2304, N, 1.0f, dev + 3072, N,
                   eng_mm_of(ENG_BF16, ENG_BF16, ENG_BF16));
    /* K = 0 on bf16 C: C = 0.5 C */
    b->ops->to_device(b->ctx, dev + 3584, ch, sizeof ch);
    b->ops->matmul(b->ctx, 0, 0, M, N, 0, 1.0f, dev + 2048, 1, dev + 2304, N, 0.5f, dev + 3584, N,
                   eng_mm_of(ENG_BF16, ENG_BF16, ENG_BF16));
    float cf[M * N];
    uint16_t cb[M * N], cs[M * N];
    b->ops->to_host(b->ctx, cf, dev + 2560, sizeof cf);
    b->ops->to_host(b->ctx, cb, dev + 3072, sizeof cb);
    b->ops->to_host(b->ctx, cs, dev + 3584, sizeof cs);
    double e32 = 0, e16 = 0, escale = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double r = 0;
            for (int k = 0; k < K; k++)
                r += unbf(ah[i * K + k]) * unbf(bh[k * N + j]);
            const double rc = r + unbf(ch[i * N + j]);
            e32 = fmax(e32, fabs(cf[i * N + j] - r) / (fabs(r) + 1e-3));
            e16 = fmax(e16, fabs(unbf(cb[i * N + j]) - rc) / (fabs(rc) + 1e-3));
            escale = fmax(escale, fabs(unbf(cs[i * N + j]) - 0.5 * unbf(ch[i * N + j])));
        }
    tlm_err ce = {0};
    const int st = eng_backend_cuda_emu_status(b, &ce);
    /* fp32 accumulation of exact bf16 products: fp32 rounding only; a bf16
     * C adds one rounding, at most 2^-8 relative (half an ulp: 7 stored
     * bits of significand) */
    TAP_OK(!st && e32 < 1e-6, "matmul bf16 A, B into fp32 C (after the fp32 plan of the same shape): rel err %.1e%s%s",
           e32, st ? ": " : "", ce.msg);
    TAP_OK(!st && e16 <= 1.0 / 256 + 1e-6, "matmul bf16 A, B into bf16 C (beta 1): rel err %.1e (bound 2^-8)", e16);
    TAP_OK(!st && escale == 0, "matmul K = 0 on bf16 C: C = 0.5 C exactly (max err %.1e)", escale);
    b->ops->matmul(b->ctx, 0, 0, M, N, K, 1.0f, dev, K, dev + 2304, N, 0.0f, dev + 2560, N,
                   eng_mm_of(ENG_F32, ENG_BF16, ENG_F32));
    memset(&ce, 0, sizeof ce);
    TAP_OK(eng_backend_cuda_emu_status(b, &ce) != 0 && strstr(ce.msg, "different storage types"),
           "matmul, fp32 A with bf16 B: refused (%s)", ce.msg);
    eng_backend_free(b);
}

/* ------------------------------------------------------------ graphs */
/* a fresh emulated backend and 64 floats on it (NULL: said why) */
static eng_backend *graph_backend(float **dev)
{
    tlm_err e = {0};
    eng_backend *b;
    if (eng_backend_cuda_emu_create(&b, 0, &e)) {
        TAP_OK(0, "cuda-emu backend: %s", e.msg);
        return NULL;
    }
    *dev = b->ops->alloc(b->ctx, 64 * sizeof(float));
    return b;
}

/* Recorded, not run, then replayed on the inputs of each launch: C = A B
 * (2 x 2 by 2 x 2) after C is zeroed and A copied from another buffer. */
static void test_graph_replay(void)
{
    tlm_err ce = {0};
    float *dev; /* src 0, A 8, B 16, C 24 */
    eng_backend *b = graph_backend(&dev);
    if (!b)
        return;
    const eng_ops *o = b->ops;
    const float in[20] = {1, 2, 3, 4, 0, 0, 0, 0, 9, 9, 9, 9, 0, 0, 0, 0, 1, 0, 0, 1}, seven[4] = {7, 7, 7, 7};
    o->to_device(b->ctx, dev, in, sizeof in);
    o->to_device(b->ctx, dev + 24, seven, sizeof seven);
    long captures, launches;
    eng_cuda_emu_graph_counts(&captures, &launches, 1);
    void *g = NULL;
    if (!o->graph_begin(b->ctx)) {
        o->zero(b->ctx, dev + 24, 4 * sizeof(float));
        o->copy(b->ctx, dev + 8, dev, 4 * sizeof(float));
        o->matmul(b->ctx, 0, 0, 2, 2, 2, 1.0f, dev + 8, 2, dev + 16, 2, 0.0f, dev + 24, 2, eng_mm_f32());
        g = o->graph_end(b->ctx);
    }
    float c0[4], c1[4], c2[4];
    o->to_host(b->ctx, c0, dev + 24, sizeof c0);
    if (g)
        o->graph_launch(b->ctx, g);
    o->to_host(b->ctx, c1, dev + 24, sizeof c1);
    const float in2[4] = {5, 6, 7, 8};
    o->to_device(b->ctx, dev, in2, sizeof in2);
    if (g)
        o->graph_launch(b->ctx, g);
    o->to_host(b->ctx, c2, dev + 24, sizeof c2);
    eng_cuda_emu_graph_counts(&captures, &launches, 1);
    const int st = eng_backend_cuda_emu_status(b, &ce);
    TAP_OK(g && !st && !memcmp(c0, seven, sizeof c0), "graph: the captured memset, copy and matmul did not run%s%s",
           st ? ": " : "", ce.msg);
    TAP_OK(g && c1[0] == 1 && c1[1] == 2 && c1[2] == 3 && c1[3] == 4 && c2[0] == 5 && c2[1] == 6 && c2[2] == 7 &&
               c2[3] == 8,
           "graph: each launch runs them on the inputs it finds (%g %g %g %g, then %g %g %g %g)", c1[0], c1[1], c1[2],
           c1[3], c2[0], c2[1], c2[2], c2[3]);
    TAP_OK(captures == 1 && launches == 2, "graph: 1 capture and 2 launches counted (%ld, %ld)", captures, launches);
    if (g)
        o->graph_free(b->ctx, g);
    eng_backend_free(b);
}

/* Each op whose call CUDA refuses in a capture: the capture fails, and
 * the backend's kept error names the call. */
static void test_graph_refused(void)
{
    static const char *const what[] = {"alloc", "to_device from pageable memory", "to_host",
                                       "sumsq (waits on the stream)"};
    static const char *const words[] = {"cudaMalloc during stream capture",
                                        "cudaMemcpyAsync from pageable host memory during stream capture",
                                        "cudaMemcpyAsync to pageable host memory during stream capture",
                                        "cudaStreamSynchronize during stream capture"};
    for (int i = 0; i < 4; i++) {
        tlm_err ce = {0};
        float *dev, host[4] = {0};
        eng_backend *b = graph_backend(&dev);
        if (!b)
            return;
        const eng_ops *o = b->ops;
        void *g = (void *)1;
        if (!o->graph_begin(b->ctx)) {
            if (i == 0)
                o->alloc(b->ctx, 64);
            else if (i == 1)
                o->to_device(b->ctx, dev, host, sizeof host);
            else if (i == 2)
                o->to_host(b->ctx, host, dev, sizeof host);
            else
                (void)o->sumsq(b->ctx, dev, 64);
            g = o->graph_end(b->ctx);
        }
        const int st = eng_backend_cuda_emu_status(b, &ce);
        TAP_OK(!g && st && strstr(ce.msg, words[i]) && strstr(ce.msg, "invalidated"),
               "graph: %s in a capture fails it, naming the call: %s", what[i], ce.msg);
        eng_backend_free(b);
    }
}
#endif

int main(void)
{
#ifndef TLM_HAVE_CUDA_EMU
    return tap_skip("built without the CUDA emulator (configure found no clang++)");
#else
    test_scenarios();
    test_bf16();
    test_fragments("cuda-emu", tlm_test_frag_emu);
#ifdef TLM_HAVE_CUDA
    test_fragments("cuda (GPU 0)", tlm_test_frag_gpu);
#endif
    test_matmul_alignment();
    test_matmul_paths();
    test_matmul_dtypes();
    test_graph_replay();
    test_graph_refused();
    return tap_done();
#endif
}
