/* internal.h: what the emulator's files share (emu/memory.cc: allocations
 * and the runtime API; emu/exec.cc: fibers, the scheduler, barriers, warp
 * primitives, launches; emu/check.cc: the checks on every access and the
 * reports; emu/cublaslt.cc: the cuBLASLt stand-ins; emu/graph.cc: stream
 * capture and graphs).
 *
 * Memory the kernels may touch is a list of regions (device allocations,
 * pinned host allocations, the static and the dynamic shared memory), each
 * with two shadows: one byte per byte (written or not: initcheck) and one
 * race record per 2-byte granule (who last wrote and read it, in which
 * launch, block and barrier interval: racecheck).  Device allocations have
 * red zones before and after (memcheck).
 *
 * Must not: be included by the .cu files (they see emu/cuda.h only). */
#ifndef TLM_ENGINE_CUDA_EMU_INTERNAL_H
#define TLM_ENGINE_CUDA_EMU_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/cuda/emu/cuda.h"

namespace eng_cu_emu {

/* ------------------------------------------------------------ regions */
enum { REG_DEVICE, REG_PINNED, REG_SHARED, REG_DYN_SHARED };
enum { RED_ZONE = 256 }; /* bytes of red zone each side of a device allocation */
enum { GRANULE = 2 };    /* bytes per race record: bf16 neighbours written by two lanes do not race */

/* One granule's accesses in the launch `launch` (a record of an earlier
 * launch is empty).  block: the block's linear index + 1 (0: none); tg: a
 * thread's index in its block (10 bits) and its warp's count of completed
 * collectives when it accessed (22 bits). */
struct race_rec {
    uint32_t launch;
    uint32_t w_block, w_phase, w_tg;         /* the last write */
    uint32_t r_block, r_phase, r_warps;      /* reads in r_block's barrier interval r_phase, by these warps */
    uint32_t r_last, r_prev;                 /* the last reader; the last one before it that was another thread */
    uint32_t r_other;                        /* a block other than r_block that read it in this launch */
};
enum { TG_NONE = 0xffffffffu };

struct region {
    uintptr_t base; /* first byte a kernel may use */
    size_t size;    /* bytes */
    int kind;       /* REG_* */
    unsigned id;    /* allocation number, for reports */
    char *map;      /* the mapping (red zones included), for device and pinned */
    size_t map_bytes;
    uint8_t *init;  /* 1 when the byte was written (host copy, memset or a kernel) */
    race_rec *race; /* one per granule */
    size_t init_bytes, race_bytes;
};

/* the device or pinned allocation whose mapping (red zones included) holds a */
region *region_find(uintptr_t a);
extern region *g_region_hit; /* the last one found: kernels touch a few at a time */
/* the allocation whose bytes [p, p + n) lie inside, else NULL */
region *region_span(const void *p, size_t n);
/* shadows of n bytes at base: mapped, zero (nothing written) */
int region_shadows(region *r);
void region_shadows_free(region *r);
/* a region's name for reports: "device allocation #3 (1024 bytes)" */
void region_describe(const region *r, uintptr_t a, char *buf, size_t cap);

/* ------------------------------------------------------------ threads */
enum { TH_RUNNABLE, TH_BARRIER, TH_WARP, TH_DONE };

struct ethread {
    void *sp;          /* the saved stack pointer while switched out */
    void *uc;          /* ucontext_t, where there is no assembler switch */
    char *stack_lo;    /* its stack */
    size_t stack_bytes;
    void *asan_fake;   /* AddressSanitizer's fake stack while switched out */
    int state;         /* TH_* */
    unsigned tid;      /* index in the block */
    uint3 idx;         /* threadIdx */
    const char *site;  /* where it waits */
    /* a warp collective's operands and result */
    int ckind, carg, cwidth, cvariant;
    unsigned cmask;
    uint64_t cval, cout;
    const void *caddr;
    uint32_t frag_in[10];
    float frag_c[4];
    uint32_t frag_out[4];
};

struct wgroup { /* lanes waiting at one collective */
    unsigned mask;
    int kind, variant, count;
    const char *site;
};
enum { WARP_RING = 16 };
struct warp_state {
    uint32_t gen;                  /* collectives completed */
    uint32_t ring_gen[WARP_RING];  /* the last ones: their numbers */
    unsigned ring_mask[WARP_RING]; /* and masks */
    wgroup groups[32];
    int n_groups;
    unsigned exist; /* lanes that exist (a partial last warp has fewer) */
};

struct block_state {
    ethread *th;
    int n;           /* threads */
    int n_done, n_bar;
    uint32_t phase;  /* barrier intervals completed */
    uint32_t key;    /* linear block index + 1 */
    const char *bar_site;
    warp_state warps[32];
};

/* the launch being run (exec.cc) */
struct launch_state {
    launch_info *li;
    uint32_t id;
    block_state blk;
    int failed;
};
extern launch_state g_launch;
extern __thread ethread *g_cur; /* the thread running, NULL outside a kernel */
extern region g_shared, g_dyn_shared;
extern uintptr_t g_param_lo;  /* the running launch's parameters (read only) */
extern size_t g_param_bytes;
extern uintptr_t g_shared_dirty_lo, g_shared_dirty_hi;

/* true when a collective of lane a's warp with both lanes in its mask
 * completed after lane a's access at warp generation gen */
int warp_synced(const warp_state *w, unsigned lane_a, uint32_t gen, unsigned lane_b);

/* ------------------------------------------------------------ checks */
enum { ACC_READ, ACC_WRITE, ACC_ATOMIC };
/* one access by thread t (not necessarily the one running: ldmatrix reads
 * for the lane that gave the address); reports and ends the launch on a
 * failed check */
void check_access(ethread *t, uintptr_t a, unsigned size, int kind, const void *pc);
/* the readable parts of the program image (constants); computed once */
int image_readonly(uintptr_t a);
/* the nearest symbol at or below a, demangled: for reports */
void symbolize(uintptr_t a, char *buf, size_t cap);

/* ------------------------------------------------------------ errors */
/* Ends the launch from inside a kernel: the report (kernel, block, thread,
 * what), the launch's error code; never returns. */
[[noreturn]] void kernel_fail(cudaError_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An API call's failure outside a kernel: kept as the last error with its
 * report (cudaGetErrorString gives it back); returns code. */
cudaError_t api_fail(cudaError_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void set_last_error(cudaError_t code, const char *report);
/* "thread (x,y,z) of block (x,y,z) of kernel k" */
void describe_thread(const ethread *t, char *buf, size_t cap);

/* ------------------------------------------------------------ plan-only */
/* Set by eng_cuda_emu_set_plan_only (memory.cc) while no allocation is
 * live: every call is checked as usual but nothing is computed or stored
 * (launches stop after launch_check, the cuBLASLt and cuDNN stand-ins
 * after their checks, copies to the device and memsets after their range
 * checks); allocations are address space without shadows (init, race
 * NULL), and the memory budget is PLAN_ONLY_BUDGET. */
extern int g_plan_only;

/* ------------------------------------------------------------ capture */
/* Stream capture (graph.cc; emu/cuda.h says what is recorded and what is
 * refused).  capture_on: s is the capturing stream (its capture valid or
 * invalidated); capture_any: some stream captures. */
int capture_on(cudaStream_t s);
int capture_any(void);
/* An operation of s's capture, kept for every launch of its graph: run
 * does it on the launch's stream, free (may be NULL) releases what it
 * holds when the last graph made from the capture is destroyed.  The
 * operation's error, or cudaErrorStreamCaptureInvalidated (nothing kept,
 * free called) when the capture is invalidated already. */
struct capture_op {
    cudaError_t (*run)(void *arg, cudaStream_t s);
    void (*free)(void *arg);
    void *arg;
};
cudaError_t capture_record(capture_op op);
/* what real CUDA refuses during a capture, called as `call`: the capture
 * invalidated, the report ("cudaMalloc during stream capture ..."), and
 * cudaErrorStreamCaptureUnsupported */
cudaError_t capture_refuse(const char *call);
/* a launch on the capturing stream, kept with a copy of its arguments */
cudaError_t capture_launch(const launch_info *li);

/* one host thread at a time in the emulator */
void emu_lock(void);
void emu_unlock(void);

} /* namespace eng_cu_emu */

#endif
