/* exec.cc: how the emulator runs a grid.  Blocks run one after another; a
 * block's threads are fibers on their own stacks, 32 consecutive threads a
 * warp, each running until it waits (a barrier, a warp collective) or
 * exits, then handing the CPU to the next runnable thread of the block.
 *
 * Barriers and collectives are checked as compute-sanitizer's synccheck
 * would: a __syncthreads must be reached by every thread of the block at
 * the same call (a thread that exited, or one waiting at another barrier or
 * at a warp primitive, is an error); a warp collective needs every lane of
 * its mask to reach a collective of the same kind with the same mask, the
 * mask must hold the caller, and a lane of it that exited (or that waits
 * at a barrier) is an error.  Collectives complete when the last lane
 * arrives: it computes every lane's result (lockstep semantics: each lane
 * gets the values the others held at the collective).
 *
 * Context switches: a few lines of assembly on x86-64 (callee-saved
 * registers and the FP control words), ucontext elsewhere.  Under
 * AddressSanitizer (a program built with --enable-sanitizers) every switch
 * is announced with __sanitizer_start_switch_fiber / finish_switch_fiber,
 * found as weak symbols: this file itself is never instrumented.
 *
 * Must not: run two blocks at once (the static shared memory is one copy),
 * resume a fiber of an abandoned launch. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "engine/cuda/emu/internal.h"

extern "C" {
/* AddressSanitizer's fiber interface, present only in a sanitized program */
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size) __attribute__((weak));
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old)
    __attribute__((weak));
/* the static shared memory: every __shared__ array of the program */
extern char __start_eng_cu_shared[] __attribute__((weak));
extern char __stop_eng_cu_shared[] __attribute__((weak));
}

namespace eng_cu_emu {

builtins g_builtins;
launch_state g_launch;
__thread ethread *g_cur;
region g_shared, g_dyn_shared;
uintptr_t g_shared_dirty_lo = UINTPTR_MAX, g_shared_dirty_hi;
uintptr_t g_param_lo;
size_t g_param_bytes;

/* ------------------------------------------------------------ fibers */
enum { STACK_BYTES = 128 << 10, GUARD_BYTES = 4096 };

#if defined(__x86_64__) && !defined(ENG_CU_EMU_UCONTEXT) /* -DENG_CU_EMU_UCONTEXT tries the portable path */
#define EMU_ASM_SWITCH 1
extern "C" void eng_cu_emu_ctx_switch(void **save_sp, void *new_sp);
extern "C" void eng_cu_emu_ctx_start(void);
/* Saves the callee-saved registers on the current stack, stores the stack
 * pointer, loads the other one and restores the same from it.  (The SSE
 * and x87 control words are left alone: no emulated code changes them, and
 * saving them made the switch cost twice as much.)  A new fiber's stack is
 * laid out as if it had switched out, returning into eng_cu_emu_ctx_start,
 * which calls r13(r12). */
asm(".text\n"
    ".globl eng_cu_emu_ctx_switch\n"
    ".hidden eng_cu_emu_ctx_switch\n"
    ".type eng_cu_emu_ctx_switch,@function\n"
    "eng_cu_emu_ctx_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size eng_cu_emu_ctx_switch,.-eng_cu_emu_ctx_switch\n"
    ".globl eng_cu_emu_ctx_start\n"
    ".hidden eng_cu_emu_ctx_start\n"
    ".type eng_cu_emu_ctx_start,@function\n"
    "eng_cu_emu_ctx_start:\n"
    "  movq %r12, %rdi\n  callq *%r13\n  ud2\n"
    ".size eng_cu_emu_ctx_start,.-eng_cu_emu_ctx_start\n");
#endif

/* the launching thread's context while a fiber runs */
#ifdef EMU_ASM_SWITCH
static void *g_main_sp;
#else
static ucontext_t g_main_uc;
#endif
static const void *g_main_bottom;  /* and its stack's bounds, for AddressSanitizer */
static size_t g_main_size;
static int g_from_main;            /* the switch now finishing came from the launching thread */
static char *g_stacks;             /* the fibers' stacks, STACK_BYTES + a guard page each */
static int g_n_stacks;
static ethread *g_threads;         /* as many records */

static void fiber_main(ethread *t);

static int stacks_reserve(int n)
{
    if (n <= g_n_stacks)
        return 0;
    if (g_stacks) {
        munmap(g_stacks, (size_t)g_n_stacks * (STACK_BYTES + GUARD_BYTES));
        for (int i = 0; i < g_n_stacks; i++)
            free(g_threads[i].uc);
        free(g_threads);
    }
    g_stacks = NULL, g_threads = NULL, g_n_stacks = 0;
    const size_t bytes = (size_t)n * (STACK_BYTES + GUARD_BYTES);
    char *s = (char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ethread *th = (ethread *)calloc((size_t)n, sizeof *th);
    if (s == MAP_FAILED || !th) {
        if (s != MAP_FAILED)
            munmap(s, bytes);
        free(th);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char *lo = s + (size_t)i * (STACK_BYTES + GUARD_BYTES);
        mprotect(lo, GUARD_BYTES, PROT_NONE); /* an overflow faults instead of writing the neighbour's stack */
        th[i].stack_lo = lo + GUARD_BYTES;
        th[i].stack_bytes = STACK_BYTES;
#ifndef EMU_ASM_SWITCH
        th[i].uc = calloc(1, sizeof(ucontext_t));
        if (!th[i].uc) {
            munmap(s, bytes);
            free(th);
            return -1;
        }
#endif
    }
    g_stacks = s, g_threads = th, g_n_stacks = n;
    return 0;
}

/* the stack pool, for reports of a thread touching another's locals */
static int stack_owner(uintptr_t a)
{
    const uintptr_t lo = (uintptr_t)g_stacks, span = STACK_BYTES + GUARD_BYTES;
    if (!g_stacks || a < lo || a - lo >= (uintptr_t)g_n_stacks * span)
        return -1;
    return (int)((a - lo) / span);
}

#ifndef EMU_ASM_SWITCH
static ethread *g_starting;
static void fiber_trampoline(void)
{
    fiber_main(g_starting);
}
#endif

static void fiber_prepare(ethread *t)
{
#ifdef EMU_ASM_SWITCH
    /* Stacks an equal stride apart would put every thread's top frame in
     * the same cache sets: each starts at its own offset (64 cache lines,
     * 4 pages), which made switching three times as fast. */
    const size_t color = (t->tid % 64) * 64 + (t->tid / 64 % 4) * 4096;
    uint64_t *top = (uint64_t *)((uintptr_t)(t->stack_lo + t->stack_bytes - color) & ~(uintptr_t)15);
    uint64_t *sp = top - 9; /* (sp + 56) % 16 == 0 at eng_cu_emu_ctx_start's call */
    sp[0] = 0;                     /* r15 */
    sp[1] = 0;                     /* r14 */
    sp[2] = (uint64_t)&fiber_main; /* r13: the function */
    sp[3] = (uint64_t)t;           /* r12: its argument */
    sp[4] = 0;                     /* rbx */
    sp[5] = 0;                     /* rbp */
    sp[6] = (uint64_t)&eng_cu_emu_ctx_start;
    t->sp = sp;
#else
    ucontext_t *uc = (ucontext_t *)t->uc;
    getcontext(uc);
    uc->uc_stack.ss_sp = t->stack_lo;
    uc->uc_stack.ss_size = t->stack_bytes;
    uc->uc_link = NULL;
    makecontext(uc, fiber_trampoline, 0);
#endif
}

/* From `from` (NULL: the launching thread) to `to` (NULL: back to it).  A
 * dying fiber is never resumed: AddressSanitizer may drop its fake stack. */
static void switch_to(ethread *from, ethread *to, int dying)
{
    g_cur = to;
    if (to)
        g_builtins.thread_idx = to->idx;
    void *fake = NULL;
    if (__sanitizer_start_switch_fiber)
        __sanitizer_start_switch_fiber(dying ? NULL : &fake, to ? (const void *)to->stack_lo : g_main_bottom,
                                       to ? to->stack_bytes : g_main_size);
    g_from_main = from == NULL;
#ifdef EMU_ASM_SWITCH
    eng_cu_emu_ctx_switch(from ? &from->sp : &g_main_sp, to ? to->sp : g_main_sp);
#else
    if (to && !to->sp) { /* first entry */
        to->sp = to;
        g_starting = to;
    }
    swapcontext(from ? (ucontext_t *)from->uc : &g_main_uc, to ? (ucontext_t *)to->uc : &g_main_uc);
#endif
    if (__sanitizer_finish_switch_fiber) {
        const void *b;
        size_t s;
        __sanitizer_finish_switch_fiber(fake, &b, &s);
    }
}

/* The next runnable thread: a lane of t's warp after t first, then the
 * other warps from t's on (round robin).  Keeping to one warp while it can
 * run keeps the working set to 32 stacks, which fit the CPU's cache (going
 * round the whole block at every collective made each switch a miss). */
static ethread *pick_next(const ethread *t)
{
    block_state *b = &g_launch.blk;
    const int n = b->n;
    if (t) {
        const int w0 = (int)(t->tid & ~31u), lanes = n - w0 < 32 ? n - w0 : 32;
        for (int k = 1, l = (int)(t->tid & 31) + 1; k < lanes; k++, l++) {
            if (l == lanes)
                l = 0;
            if (b->th[w0 + l].state == TH_RUNNABLE)
                return &b->th[w0 + l];
        }
    }
    int i = t ? (int)t->tid + 1 : 0;
    for (int k = 0; k < n; k++, i++) {
        if (i == n)
            i = 0;
        if (b->th[i].state == TH_RUNNABLE)
            return &b->th[i];
    }
    return NULL;
}

/* t waits: another thread runs, or the launching thread when none can (a
 * deadlock, which it reports) */
static void yield(ethread *t)
{
    switch_to(t, pick_next(t), 0);
}

static void fiber_exit(ethread *t);

static void fiber_main(ethread *t)
{
    if (__sanitizer_finish_switch_fiber) {
        const void *b;
        size_t s;
        __sanitizer_finish_switch_fiber(NULL, &b, &s);
        if (g_from_main)
            g_main_bottom = b, g_main_size = s;
    }
    g_launch.li->entry(g_launch.li->pack);
    fiber_exit(t);
}

/* ------------------------------------------------------------ reports */
static const char *state_name(const ethread *t)
{
    switch (t->state) {
    case TH_RUNNABLE:
        return "runnable";
    case TH_BARRIER:
        return "waits at __syncthreads";
    case TH_WARP:
        return "waits at a warp primitive";
    default:
        return "exited";
    }
}

void describe_thread(const ethread *t, char *buf, size_t cap)
{
    snprintf(buf, cap, "thread (%u,%u,%u)", t->idx.x, t->idx.y, t->idx.z);
}

static char g_fail_msg[2048];
static cudaError_t g_fail_code;

static void fail_prefix(char *buf, size_t cap)
{
    const launch_info *li = g_launch.li;
    snprintf(buf, cap, "%s (launched at %s), block (%u,%u,%u): ", li->kernel, li->site, g_builtins.block_idx.x,
             g_builtins.block_idx.y, g_builtins.block_idx.z);
}

[[noreturn]] __attribute__((noinline, cold)) static void fail_v(cudaError_t code, const char *fmt, va_list ap)
{
    fail_prefix(g_fail_msg, sizeof g_fail_msg);
    const size_t at = strlen(g_fail_msg);
    vsnprintf(g_fail_msg + at, sizeof g_fail_msg - at, fmt, ap);
    g_fail_code = code;
    g_launch.failed = 1;
    switch_to(g_cur, NULL, 1); /* the launch is abandoned: no fiber of it runs again */
    abort();                   /* unreachable */
}

__attribute__((noinline, cold)) void kernel_fail(cudaError_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(code, fmt, ap);
}

/* a failure of t's, its name first: "synccheck: thread (x,y,z) ..." */
[[noreturn]] static void thread_fail(const ethread *t, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noinline, cold));
static void thread_fail(const ethread *t, const char *check, const char *fmt, ...)
{
    char f[512];
    snprintf(f, sizeof f, "%s: thread (%u,%u,%u) %s", check, t->idx.x, t->idx.y, t->idx.z, fmt);
    va_list ap;
    va_start(ap, fmt);
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wformat-nonliteral"
    fail_v(cudaErrorLaunchFailure, f, ap);
#pragma clang diagnostic pop
}

static const char *coll_name(int kind)
{
    static const char *names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                                  "__ballot_sync", "__any_sync", "__all_sync", "__syncwarp",
                                  "ldmatrix", "mma.sync"};
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

/* ------------------------------------------------------------ barriers */
/* the lanes of t's warp waiting at a collective whose mask holds t */
static const wgroup *waited_on_by(const ethread *t)
{
    const warp_state *w = &g_launch.blk.warps[t->tid >> 5];
    for (int i = 0; i < w->n_groups; i++)
        if (w->groups[i].mask >> (t->tid & 31) & 1u)
            return &w->groups[i];
    return NULL;
}

static void barrier_release(block_state *b)
{
    for (int i = 0; i < b->n; i++)
        if (b->th[i].state == TH_BARRIER)
            b->th[i].state = TH_RUNNABLE;
    b->n_bar = 0;
    b->phase++;
    b->bar_site = NULL;
}

static const ethread *first_in_state(const block_state *b, int state)
{
    for (int i = 0; i < b->n; i++)
        if (b->th[i].state == state)
            return &b->th[i];
    return NULL;
}

void syncthreads(const char *site)
{
    ethread *t = g_cur;
    if (!t) {
        fprintf(stderr, "cuda emulator: __syncthreads outside a kernel (%s)\n", site);
        abort();
    }
    block_state *b = &g_launch.blk;
    const wgroup *g = waited_on_by(t);
    if (g)
        thread_fail(t, "synccheck", "reached __syncthreads at %s while lanes of its warp wait for it at %s (%s)", site,
                    coll_name(g->kind), g->site);
    if (b->n_bar && strcmp(site, b->bar_site)) {
        const ethread *o = first_in_state(b, TH_BARRIER);
        thread_fail(t, "synccheck", "reached __syncthreads at %s while thread (%u,%u,%u) waits at the one at %s (divergent barriers)",
                    site, o->idx.x, o->idx.y, o->idx.z, b->bar_site);
    }
    t->state = TH_BARRIER;
    t->site = site;
    if (!b->n_bar++)
        b->bar_site = site;
    if (b->n_bar == b->n - b->n_done) {
        if (b->n_done) {
            const ethread *o = first_in_state(b, TH_DONE);
            thread_fail(t, "synccheck",
                        "reached __syncthreads at %s, which not every thread of the block reaches: thread (%u,%u,%u) "
                        "had exited",
                        site, o->idx.x, o->idx.y, o->idx.z);
        }
        barrier_release(b);
        return;
    }
    yield(t);
}

static void fiber_exit(ethread *t)
{
    block_state *b = &g_launch.blk;
    const wgroup *g = waited_on_by(t);
    if (g)
        thread_fail(t, "synccheck", "exited while lanes of its warp wait for it at %s (%s)", coll_name(g->kind),
                    g->site);
    t->state = TH_DONE;
    b->n_done++;
    if (b->n_bar && b->n_bar == b->n - b->n_done)
        thread_fail(t, "synccheck", "exited without reaching the __syncthreads at %s that the rest of the block waits at",
                    b->bar_site);
    switch_to(t, pick_next(t), 1);
    abort(); /* an exited fiber is never resumed */
}

void *dynamic_smem(void)
{
    return g_dyn_shared.size ? (void *)g_dyn_shared.base : NULL;
}

/* ------------------------------------------------------------ warp collectives */
int warp_synced(const warp_state *w, unsigned lane_a, uint32_t gen, unsigned lane_b)
{
    const uint32_t GEN_MASK = (1u << 22) - 1, now = w->gen & GEN_MASK;
    const uint32_t since = (now - gen) & GEN_MASK;
    if (since == 0)
        return 0;
    if (since > WARP_RING) /* older than the ring remembers: assume a full-warp one came */
        return 1;
    const unsigned both = 1u << lane_a | 1u << lane_b;
    for (uint32_t k = 0; k < since; k++) {
        const uint32_t g = (now - k) & GEN_MASK;
        const int slot = (int)(g % WARP_RING);
        if ((w->ring_gen[slot] & GEN_MASK) == g && (w->ring_mask[slot] & both) == both)
            return 1;
    }
    return 0;
}

/* the source lane of a shuffle, or -1 when the lane keeps its own value */
static int shfl_source(int kind, int lane, int arg, int width)
{
    const int base = lane & ~(width - 1), in = lane & (width - 1);
    switch (kind) {
    case COLL_SHFL:
        return base + (arg & (width - 1));
    case COLL_SHFL_UP:
        return in - arg < 0 ? -1 : lane - arg;
    case COLL_SHFL_DOWN:
        return in + arg >= width ? -1 : lane + arg;
    default: { /* xor: a later group's lane is not reachable */
        const int s = lane ^ arg;
        return s >= base + width ? -1 : s;
    }
    }
}

__attribute__((noinline)) static void mma_complete(ethread *lanes);
__attribute__((noinline)) static void ldmatrix_complete(ethread *lanes, int n, int trans);

static void collective_complete(warp_state *w, wgroup *g, ethread *lanes)
{
    const unsigned mask = g->mask;
    switch (g->kind) {
    case COLL_SHFL:
    case COLL_SHFL_UP:
    case COLL_SHFL_DOWN:
    case COLL_SHFL_XOR:
        for (int l = 0; l < 32; l++) {
            if (!(mask >> l & 1))
                continue;
            ethread *t = &lanes[l];
            const int s = shfl_source(g->kind, l, t->carg, t->cwidth);
            if (s >= 0 && !(mask >> s & 1))
                thread_fail(t, "synccheck", "calls %s at %s reading lane %d, which is not in the mask 0x%08x (its value is undefined)",
                            coll_name(g->kind), g->site, s, mask);
            t->cout = s < 0 ? t->cval : lanes[s].cval;
        }
        break;
    case COLL_BALLOT:
    case COLL_ANY:
    case COLL_ALL: {
        unsigned bits = 0;
        for (int l = 0; l < 32; l++)
            if (mask >> l & 1 && lanes[l].cval)
                bits |= 1u << l;
        const uint64_t r = g->kind == COLL_BALLOT ? bits : g->kind == COLL_ANY ? bits != 0 : bits == mask;
        for (int l = 0; l < 32; l++)
            if (mask >> l & 1)
                lanes[l].cout = r;
        break;
    }
    case COLL_LDMATRIX:
        ldmatrix_complete(lanes, g->variant >> 1, g->variant & 1);
        break;
    case COLL_MMA:
        mma_complete(lanes);
        break;
    default:
        break;
    }
    w->gen++;
    const int slot = (int)(w->gen % WARP_RING);
    w->ring_gen[slot] = w->gen;
    w->ring_mask[slot] = mask;
    for (int l = 0; l < 32; l++)
        if (mask >> l & 1 && lanes[l].state == TH_WARP)
            lanes[l].state = TH_RUNNABLE;
    *g = w->groups[--w->n_groups];
}

static uint64_t collective(int kind, int variant, unsigned mask, uint64_t value, int arg, int width,
                           const char *site)
{
    ethread *t = g_cur;
    if (!t) {
        fprintf(stderr, "cuda emulator: %s outside a kernel (%s)\n", coll_name(kind), site);
        abort();
    }
    block_state *b = &g_launch.blk;
    const int lane = (int)(t->tid & 31);
    warp_state *w = &b->warps[t->tid >> 5];
    ethread *lanes = &b->th[t->tid & ~31u];
    if (!(mask >> lane & 1))
        thread_fail(t, "synccheck", "calls %s at %s with mask 0x%08x, which does not hold it", coll_name(kind), site,
                    mask);
    if (mask & ~w->exist)
        thread_fail(t, "synccheck", "calls %s at %s with mask 0x%08x, which holds lanes the block does not have (0x%08x)",
                    coll_name(kind), site, mask, mask & ~w->exist);
    if ((kind == COLL_SHFL || kind == COLL_SHFL_UP || kind == COLL_SHFL_DOWN || kind == COLL_SHFL_XOR) &&
        (width < 1 || width > 32 || (width & (width - 1))))
        thread_fail(t, "synccheck", "calls %s at %s with width %d (a power of 2 up to 32)", coll_name(kind), site,
                    width);
    wgroup *g = NULL;
    for (int i = 0; i < w->n_groups; i++)
        if (w->groups[i].mask & mask) {
            g = &w->groups[i];
            if (g->mask != mask || g->kind != kind || g->variant != variant)
                thread_fail(t, "synccheck", "calls %s at %s with mask 0x%08x while lanes of that mask wait at %s (%s) with mask 0x%08x",
                            coll_name(kind), site, mask, coll_name(g->kind), g->site, g->mask);
            break;
        }
    if (!g) {
        /* the first lane to arrive checks the others: one that has exited
         * or waits at a barrier will never come (a later exit or barrier
         * checks waited_on_by itself) */
        for (int l = 0; l < 32; l++) {
            if (!(mask >> l & 1) || l == lane)
                continue;
            if (lanes[l].state == TH_DONE)
                thread_fail(t, "synccheck", "calls %s at %s with mask 0x%08x, but lane %d of the mask has exited",
                            coll_name(kind), site, mask, l);
            if (lanes[l].state == TH_BARRIER)
                thread_fail(t, "synccheck", "calls %s at %s with mask 0x%08x, but lane %d of the mask waits at __syncthreads (%s)",
                            coll_name(kind), site, mask, l, lanes[l].site);
        }
        g = &w->groups[w->n_groups++];
        g->mask = mask, g->kind = kind, g->variant = variant, g->count = 0, g->site = site;
    }
    t->ckind = kind, t->cmask = mask, t->cval = value, t->carg = arg, t->cwidth = width, t->site = site;
    if (++g->count == __builtin_popcount(mask)) {
        collective_complete(w, g, lanes);
        return t->cout;
    }
    t->state = TH_WARP;
    yield(t);
    return t->cout;
}

uint64_t warp_collective(int kind, unsigned mask, uint64_t value, int arg, int width, const char *site)
{
    return collective(kind, width, mask, value, arg, width, site);
}

/* ------------------------------------------------------------ tensor-core fragments */
/* bf16 <-> float for the fragments' halves */
static float bf16_lo(uint32_t r)
{
    return bf16_bits_f32(r << 16);
}
static float bf16_hi(uint32_t r)
{
    return bf16_bits_f32(r & 0xffff0000u);
}

/* PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
 * groupID = lane >> 2, tig = lane % 4.  A (16x16, row): a_i (i = 0..7, two
 * per register, the lower index in the lower half) at row groupID (+8 for
 * i in 2,3,6,7), column tig*2 + (i & 1) (+8 for i >= 4).  B (16x8, col):
 * b_i (i = 0..3) at row tig*2 + (i & 1) (+8 for i >= 2), column groupID.
 * C, D (16x8 f32): c_i at row groupID (+8 for i >= 2), column
 * tig*2 + (i & 1). */
static void mma_complete(ethread *lanes)
{
    float A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < 32; l++) {
        const ethread *t = &lanes[l];
        const int g = l >> 2, q = l & 3;
        for (int i = 0; i < 8; i++) {
            const uint32_t reg = t->frag_in[i >> 1];
            const float v = i & 1 ? bf16_hi(reg) : bf16_lo(reg);
            A[g + ((i & 2) ? 8 : 0)][q * 2 + (i & 1) + (i >= 4 ? 8 : 0)] = v;
        }
        for (int i = 0; i < 4; i++) {
            const uint32_t reg = t->frag_in[4 + (i >> 1)];
            B[q * 2 + (i & 1) + (i >= 2 ? 8 : 0)][g] = i & 1 ? bf16_hi(reg) : bf16_lo(reg);
        }
        for (int i = 0; i < 4; i++)
            C[g + (i >= 2 ? 8 : 0)][q * 2 + (i & 1)] = t->frag_c[i];
    }
    for (int l = 0; l < 32; l++) {
        ethread *t = &lanes[l];
        const int g = l >> 2, q = l & 3;
        for (int i = 0; i < 4; i++) {
            const int r = g + (i >= 2 ? 8 : 0), c = q * 2 + (i & 1);
            double s = C[r][c];
            for (int k = 0; k < 16; k++)
                s += (double)A[r][k] * B[k][c];
            float f = (float)s;
            memcpy(&t->frag_out[i], &f, sizeof f);
        }
    }
}

void mma_m16n8k16_bf16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], const char *site)
{
    ethread *t = g_cur;
    if (!t) {
        fprintf(stderr, "cuda emulator: mma.sync outside a kernel (%s)\n", site);
        abort();
    }
    memcpy(t->frag_in, a, 4 * sizeof *a);
    memcpy(t->frag_in + 4, b, 2 * sizeof *b);
    memcpy(t->frag_c, c, 4 * sizeof *c);
    collective(COLL_MMA, 0, 0xffffffffu, 0, 0, 32, site);
    memcpy(d, t->frag_out, 4 * sizeof *d);
}

/* PTX ISA, ldmatrix: matrix j's 8 rows come from the addresses lanes
 * 8j..8j+7 give (16 bytes each, in shared memory, 16-byte aligned); lane l
 * receives in r[j] the elements (row l/4, columns 2(l%4), 2(l%4)+1), or
 * with .trans (rows 2(l%4), 2(l%4)+1 of column l/4). */
static void ldmatrix_complete(ethread *lanes, int n, int trans)
{
    uint16_t m[4][8][8];
    for (int j = 0; j < n; j++)
        for (int row = 0; row < 8; row++) {
            ethread *src = &lanes[8 * j + row];
            const uintptr_t a = (uintptr_t)src->caddr;
            if (a % 16 || !(a - g_shared.base < g_shared.size || a - g_dyn_shared.base < g_dyn_shared.size))
                thread_fail(src, "memcheck", "gives ldmatrix (%s) the row address %p, not a 16-byte aligned shared-memory address",
                            src->site, src->caddr);
            for (int k = 0; k < 16; k += 4)
                check_access(src, a + k, 4, ACC_READ, NULL);
            memcpy(m[j][row], src->caddr, 16);
        }
    for (int l = 0; l < 32; l++)
        for (int j = 0; j < n; j++) {
            const int r = l >> 2, c = 2 * (l & 3);
            uint16_t lo, hi;
            if (trans)
                lo = m[j][c][r], hi = m[j][c + 1][r];
            else
                lo = m[j][r][c], hi = m[j][r][c + 1];
            lanes[l].frag_out[j] = (uint32_t)lo | (uint32_t)hi << 16;
        }
}

void ldmatrix(uint32_t *r, int n, int trans, const void *row, const char *site)
{
    ethread *t = g_cur;
    if (!t) {
        fprintf(stderr, "cuda emulator: ldmatrix outside a kernel (%s)\n", site);
        abort();
    }
    if (n != 1 && n != 2 && n != 4)
        kernel_fail(cudaErrorLaunchFailure, "ldmatrix at %s: .x%d (1, 2 or 4)", site, n);
    t->caddr = row;
    collective(COLL_LDMATRIX, n << 1 | (trans != 0), 0xffffffffu, 0, 0, 32, site);
    memcpy(r, t->frag_out, (size_t)n * sizeof *r);
}

/* ------------------------------------------------------------ atomics */
#define ATOMIC(name, T, expr)                                                                                  \
    T name(T *p, T v)                                                                                          \
    {                                                                                                          \
        check_access(g_cur, (uintptr_t)p, sizeof(T), ACC_ATOMIC, __builtin_return_address(0));               \
        const T old = *p;                                                                                      \
        *p = (expr);                                                                                           \
        return old;                                                                                            \
    }
ATOMIC(atomic_add_f32, float, old + v)
ATOMIC(atomic_add_f64, double, old + v)
ATOMIC(atomic_add_i32, int, (int)((unsigned)old + (unsigned)v))
ATOMIC(atomic_add_u32, unsigned, old + v)
ATOMIC(atomic_add_u64, unsigned long long, old + v)
ATOMIC(atomic_max_i32, int, old > v ? old : v)
ATOMIC(atomic_min_i32, int, old < v ? old : v)
ATOMIC(atomic_max_u32, unsigned, old > v ? old : v)
ATOMIC(atomic_exch_i32, int, v)
ATOMIC(atomic_exch_u32, unsigned, v)
ATOMIC(atomic_exch_f32, float, v)
#undef ATOMIC
#define ATOMIC_CAS(name, T)                                                                                    \
    T name(T *p, T compare, T v)                                                                               \
    {                                                                                                          \
        check_access(g_cur, (uintptr_t)p, sizeof(T), ACC_ATOMIC, __builtin_return_address(0));               \
        const T old = *p;                                                                                      \
        if (old == compare)                                                                                    \
            *p = v;                                                                                            \
        return old;                                                                                            \
    }
ATOMIC_CAS(atomic_cas_i32, int)
ATOMIC_CAS(atomic_cas_u32, unsigned)
ATOMIC_CAS(atomic_cas_u64, unsigned long long)
#undef ATOMIC_CAS

/* ------------------------------------------------------------ launches */
/* dynamic shared memory limits raised with cudaFuncSetAttribute */
enum { MAX_FUNC_ATTRS = 64, DEFAULT_DYN_SMEM = 48 << 10, MAX_DYN_SMEM = 227 << 10 };
static struct {
    const void *fn;
    int bytes;
} g_func_smem[MAX_FUNC_ATTRS];
static int g_n_func_smem;

cudaError_t func_set_max_dynamic_smem(const void *fn, int bytes)
{
    if (bytes < 0 || bytes > MAX_DYN_SMEM)
        return api_fail(cudaErrorInvalidValue, "cudaFuncSetAttribute: %d bytes of dynamic shared memory (at most %d)",
                        bytes, MAX_DYN_SMEM);
    for (int i = 0; i < g_n_func_smem; i++)
        if (g_func_smem[i].fn == fn) {
            g_func_smem[i].bytes = bytes;
            return cudaSuccess;
        }
    if (g_n_func_smem == MAX_FUNC_ATTRS)
        return api_fail(cudaErrorInvalidValue, "cudaFuncSetAttribute: more than %d kernels", MAX_FUNC_ATTRS);
    g_func_smem[g_n_func_smem].fn = fn;
    g_func_smem[g_n_func_smem++].bytes = bytes;
    return cudaSuccess;
}

static size_t max_dyn_smem(const void *fn)
{
    for (int i = 0; i < g_n_func_smem; i++)
        if (g_func_smem[i].fn == fn)
            return (size_t)g_func_smem[i].bytes;
    return DEFAULT_DYN_SMEM;
}

/* the kernels launched so far, for the tests' account of what ran */
enum { MAX_KERNELS = 256 };
static struct {
    const char *name;
    unsigned long launches, blocks;
    double seconds; /* the emulation's time, for its cost per kernel */
} g_kernels[MAX_KERNELS];
static int g_n_kernels;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The first launch of each kernel in this process appends "name site" as
 * one line to the file TLM_CUDA_EMU_KERNEL_LOG names, when it is set: the
 * account of which kernels a test program ran, across all of them
 * (bench/cuda_kernels_run.sh compares it with engine/cuda/'s __global__
 * functions).  O_APPEND and one write() a line: programs running at once
 * do not interleave their lines. */
static void log_kernel(const launch_info *li)
{
    const char *path = getenv("TLM_CUDA_EMU_KERNEL_LOG");
    if (!path || !*path)
        return;
    char line[512];
    const int n = snprintf(line, sizeof line, "%s %s\n", li->kernel, li->site);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return; /* an account, not a check: the launch goes on */
    if (write(fd, line, (size_t)n) != n) {
        /* nothing to do: the script reports the kernel as not run */
    }
    close(fd);
}

static void count_kernel(const launch_info *li, unsigned long blocks, double seconds)
{
    for (int i = 0; i < g_n_kernels; i++)
        if (!strcmp(g_kernels[i].name, li->kernel)) {
            g_kernels[i].launches++;
            g_kernels[i].blocks += blocks;
            g_kernels[i].seconds += seconds;
            return;
        }
    log_kernel(li);
    if (g_n_kernels < MAX_KERNELS) {
        g_kernels[g_n_kernels].name = li->kernel;
        g_kernels[g_n_kernels].launches = 1;
        g_kernels[g_n_kernels].blocks = blocks;
        g_kernels[g_n_kernels++].seconds = seconds;
    }
}

/* the n-th name of a launch's argument list ("out, wte, tok, N, C") */
static void arg_name(const char *list, int n, char *buf, size_t cap)
{
    int depth = 0, k = 0;
    const char *s = list, *start = list;
    for (;; s++) {
        if (*s == '(' || *s == '[')
            depth++;
        else if (*s == ')' || *s == ']')
            depth--;
        else if ((*s == ',' && depth == 0) || !*s) {
            if (k == n) {
                while (start < s && *start == ' ')
                    start++;
                snprintf(buf, cap, "%.*s", (int)(s - start), start);
                return;
            }
            k++;
            start = s + 1;
        }
        if (!*s)
            break;
    }
    snprintf(buf, cap, "#%d", n);
}

static cudaError_t launch_check(const launch_info *li, char *msg, size_t cap)
{
    const dim3 g = li->grid, b = li->block;
    const unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    if (!g.x || !g.y || !g.z || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535) {
        snprintf(msg, cap, "grid (%u,%u,%u) outside (1..2^31-1, 1..65535, 1..65535)", g.x, g.y, g.z);
        return cudaErrorInvalidConfiguration;
    }
    if (!threads || threads > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64) {
        snprintf(msg, cap, "block (%u,%u,%u): more than 1024 threads, or a dimension out of range", b.x, b.y, b.z);
        return cudaErrorInvalidConfiguration;
    }
    if (li->smem > max_dyn_smem(li->fn)) {
        snprintf(msg, cap, "%zu bytes of dynamic shared memory (the kernel may have %zu)", li->smem,
                 max_dyn_smem(li->fn));
        return cudaErrorInvalidValue;
    }
    for (int i = 0; i < li->n_ptr; i++) {
        const void *p = li->ptr[i];
        if (!p)
            continue;
        const region *r = region_find((uintptr_t)p);
        if (!r || (uintptr_t)p < r->base || (uintptr_t)p - r->base > r->size) {
            char name[128], where[256] = "";
            arg_name(li->argnames, li->ptr_arg[i], name, sizeof name);
            if (r)
                region_describe(r, (uintptr_t)p, where, sizeof where);
            snprintf(msg, cap, "argument %d (%s) is %p, %s%s", li->ptr_arg[i] + 1, name, p,
                     r ? "which points to " : "not a device pointer (host memory?)", where);
            return cudaErrorInvalidValue;
        }
    }
    return cudaSuccess;
}

static void shared_reset(void)
{
    if (g_shared_dirty_lo < g_shared_dirty_hi) {
        const size_t off = g_shared_dirty_lo - g_shared.base, n = g_shared_dirty_hi - g_shared_dirty_lo;
        memset((void *)g_shared_dirty_lo, 0xff, n); /* a read before a write finds NaNs, not the last block's values */
        memset(g_shared.init + off, 0, n);
        const size_t g0 = off / GRANULE, g1 = (off + n + GRANULE - 1) / GRANULE;
        memset(g_shared.race + g0, 0, (g1 - g0) * sizeof(race_rec));
    }
    g_shared_dirty_lo = UINTPTR_MAX, g_shared_dirty_hi = 0;
    if (g_dyn_shared.size) {
        memset((void *)g_dyn_shared.base, 0xff, g_dyn_shared.size);
        memset(g_dyn_shared.init, 0, g_dyn_shared.init_bytes);
        memset(g_dyn_shared.race, 0, g_dyn_shared.race_bytes);
    }
}

static int shared_setup(size_t dyn_bytes)
{
    if (!g_shared.kind && __start_eng_cu_shared && __stop_eng_cu_shared > __start_eng_cu_shared) {
        g_shared.kind = REG_SHARED;
        g_shared.base = (uintptr_t)__start_eng_cu_shared;
        g_shared.size = (size_t)(__stop_eng_cu_shared - __start_eng_cu_shared);
        if (region_shadows(&g_shared))
            return -1;
    }
    if (g_dyn_shared.size != dyn_bytes) {
        region_shadows_free(&g_dyn_shared);
        free(g_dyn_shared.map);
        memset(&g_dyn_shared, 0, sizeof g_dyn_shared);
        g_dyn_shared.kind = REG_DYN_SHARED;
        if (dyn_bytes) {
            g_dyn_shared.map = (char *)aligned_alloc(256, (dyn_bytes + 255) & ~(size_t)255);
            if (!g_dyn_shared.map)
                return -1;
            g_dyn_shared.base = (uintptr_t)g_dyn_shared.map;
            g_dyn_shared.size = dyn_bytes;
            if (region_shadows(&g_dyn_shared))
                return -1;
        }
    }
    return 0;
}

static void deadlock_report(const block_state *b)
{
    char buf[1024];
    size_t at = 0;
    int shown = 0;
    for (int i = 0; i < b->n && shown < 6; i++) {
        const ethread *t = &b->th[i];
        if (t->state == TH_DONE)
            continue;
        char who[64];
        describe_thread(t, who, sizeof who);
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s %s%s%s%s", shown ? "; " : "", who, state_name(t),
                               t->state == TH_WARP ? " " : "", t->state == TH_WARP ? coll_name(t->ckind) : "",
                               "");
        if (t->site && at < sizeof buf)
            at += (size_t)snprintf(buf + at, sizeof buf - at, " (%s)", t->site);
        if (at >= sizeof buf)
            break;
        shown++;
    }
    fail_prefix(g_fail_msg, sizeof g_fail_msg);
    const size_t p = strlen(g_fail_msg);
    snprintf(g_fail_msg + p, sizeof g_fail_msg - p, "synccheck: deadlock, no thread can go on: %s", buf);
    g_fail_code = cudaErrorLaunchFailure;
    g_launch.failed = 1;
}

static void run_block(launch_info *li, unsigned bx, unsigned by, unsigned bz)
{
    block_state *b = &g_launch.blk;
    const dim3 bd = li->block;
    const int n = (int)(bd.x * bd.y * bd.z);
    g_builtins.block_idx = uint3{bx, by, bz};
    b->th = g_threads;
    b->n = n;
    b->n_done = b->n_bar = 0;
    b->phase = 0;
    b->key = 1 + bx + li->grid.x * (by + li->grid.y * bz);
    b->bar_site = NULL;
    for (int w = 0; w < (n + 31) / 32; w++) {
        warp_state *ws = &b->warps[w];
        memset(ws, 0, sizeof *ws);
        const int lanes = n - 32 * w < 32 ? n - 32 * w : 32;
        ws->exist = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    }
    for (int i = 0; i < n; i++) {
        ethread *t = &g_threads[i];
        t->tid = (unsigned)i;
        t->idx = uint3{(unsigned)i % bd.x, (unsigned)i / bd.x % bd.y, (unsigned)i / (bd.x * bd.y)};
        t->state = TH_RUNNABLE;
        t->site = NULL;
        t->sp = NULL;
        fiber_prepare(t);
    }
    shared_reset();
    switch_to(NULL, &g_threads[0], 0);
    /* back here: the block finished, failed, or no thread can go on */
    g_cur = NULL;
    if (!g_launch.failed && b->n_done < b->n)
        deadlock_report(b);
}

cudaError_t run_launch(launch_info *li)
{
    emu_lock();
    char msg[1024];
    cudaError_t rc = launch_check(li, msg, sizeof msg);
    if (rc == cudaSuccess && capture_on(li->stream)) { /* checked, then kept for the graph (graph.cc) */
        emu_unlock();
        rc = capture_launch(li);
        if (rc != cudaSuccess)
            set_last_error(rc, NULL);
        return rc;
    }
    if (rc == cudaSuccess && g_plan_only) { /* checked, counted, not run */
        count_kernel(li, 0, 0.0);
        emu_unlock();
        return cudaSuccess;
    }
    if (rc == cudaSuccess && (stacks_reserve((int)(li->block.x * li->block.y * li->block.z)) ||
                              shared_setup(li->smem))) {
        rc = cudaErrorMemoryAllocation;
        snprintf(msg, sizeof msg, "no host memory for the emulated threads");
    }
    if (rc != cudaSuccess) {
        char rep[1400];
        snprintf(rep, sizeof rep, "%s (launched at %s): %s", li->kernel, li->site, msg);
        emu_unlock();
        set_last_error(rc, rep);
        return rc;
    }
    g_launch.li = li;
    g_launch.id++;
    g_param_lo = (uintptr_t)li->pack;
    g_param_bytes = li->pack_bytes;
    g_launch.failed = 0;
    g_builtins.grid_dim = li->grid;
    g_builtins.block_dim = li->block;
    unsigned long blocks = 0;
    const double t0 = now_s();
    for (unsigned z = 0; z < li->grid.z && !g_launch.failed; z++)
        for (unsigned y = 0; y < li->grid.y && !g_launch.failed; y++)
            for (unsigned x = 0; x < li->grid.x && !g_launch.failed; x++, blocks++)
                run_block(li, x, y, z);
    count_kernel(li, blocks, now_s() - t0);
    g_launch.li = NULL;
    g_param_lo = 0, g_param_bytes = 0;
    const int failed = g_launch.failed;
    emu_unlock();
    if (failed)
        set_last_error(g_fail_code, g_fail_msg);
    return failed ? g_fail_code : cudaSuccess;
}

/* for check.cc: the stack pool */
int launch_stack_owner(uintptr_t a)
{
    return stack_owner(a);
}

} /* namespace eng_cu_emu */

/* "name launches blocks seconds" per kernel launched so far, one a line;
 * the number of kernels.  For the tests' account of what ran. */
extern "C" int eng_cuda_emu_kernels_run(char *buf, size_t cap)
{
    using namespace eng_cu_emu;
    size_t at = 0;
    if (cap)
        buf[0] = 0;
    for (int i = 0; i < g_n_kernels && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s %lu %lu %.2f\n", g_kernels[i].name, g_kernels[i].launches,
                               g_kernels[i].blocks, g_kernels[i].seconds);
    return g_n_kernels;
}
