/* check.cc: the emulator's checks on every load and store a kernel makes.
 * The emulated .cu files are compiled with
 * -fsanitize-coverage=trace-loads,trace-stores, so clang calls
 * __sanitizer_cov_load<n>(addr) / __sanitizer_cov_store<n>(addr) before
 * each access; outside a kernel (no current thread) the hooks return at
 * once.  Inside one, as compute-sanitizer would:
 *   - memcheck: the address must be in the thread's own stack, the kernel's
 *     parameters or the built-in variables (read only), the program's
 *     read-only data, shared memory, or inside a device (or pinned)
 *     allocation; a red zone, another thread's stack or any other host
 *     address is an error, and so is an address not aligned to its size;
 *   - initcheck: a read of a byte of device or shared memory nothing wrote
 *     (a host copy, a memset, a kernel) is an error;
 *   - racecheck: two threads of a block touching the same 2-byte granule
 *     in one barrier interval, one of them writing, is a race (two lanes
 *     of one warp are ordered by a warp collective whose mask holds both);
 *     two blocks of one launch touching the same global granule, one
 *     writing, is a race too.  Atomics are checked for bounds only.
 * The first failure ends the launch with its report (exec.cc).
 *
 * Compiled without coverage instrumentation, so the hooks do not call
 * themselves.
 *
 * Must not: report what a correct kernel may do (a false report blocks a
 * correct change); allocate on the paths every access takes. */
#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cuda/emu/internal.h"

namespace eng_cu_emu {

int launch_stack_owner(uintptr_t a);

/* ------------------------------------------------------------ the program image */
enum { MAX_RO = 64 };
static struct {
    uintptr_t lo, hi;
} g_ro[MAX_RO];
static int g_n_ro = -1;

static int phdr_cb(struct dl_phdr_info *info, size_t, void *)
{
    for (int i = 0; i < info->dlpi_phnum && g_n_ro < MAX_RO; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if ((p->p_type == PT_LOAD && !(p->p_flags & PF_W)) || p->p_type == PT_GNU_RELRO) {
            g_ro[g_n_ro].lo = info->dlpi_addr + p->p_vaddr;
            g_ro[g_n_ro].hi = g_ro[g_n_ro].lo + p->p_memsz;
            g_n_ro++;
        }
    }
    return 0;
}

int image_readonly(uintptr_t a)
{
    if (g_n_ro < 0) {
        g_n_ro = 0;
        dl_iterate_phdr(phdr_cb, NULL);
    }
    for (int i = 0; i < g_n_ro; i++)
        if (a >= g_ro[i].lo && a < g_ro[i].hi)
            return 1;
    return 0;
}

/* The program's own symbols (.symtab of /proc/self/exe, static ones
 * included: the shared arrays are function-local statics), read once, on
 * the first report. */
struct sym {
    uintptr_t lo;
    size_t size;
    const char *name;
};
static sym *g_syms;
static int g_n_syms = -1;
static char *g_strtab;
static uintptr_t g_bias;

static int bias_cb(struct dl_phdr_info *info, size_t, void *)
{
    g_bias = info->dlpi_addr; /* the first object is the program */
    return 1;
}

static int sym_cmp(const void *a, const void *b)
{
    const sym *x = (const sym *)a, *y = (const sym *)b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int read_at(int fd, void *buf, size_t n, off_t at)
{
    return pread(fd, buf, n, at) == (ssize_t)n ? 0 : -1;
}

static void syms_load(void)
{
    g_n_syms = 0;
    dl_iterate_phdr(bias_cb, NULL);
    const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ElfW(Ehdr) eh;
    ElfW(Shdr) *sh = NULL;
    ElfW(Sym) *st = NULL;
    if (read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_shentsize != sizeof *sh)
        goto done;
    sh = (ElfW(Shdr) *)calloc(eh.e_shnum, sizeof *sh);
    if (!sh || read_at(fd, sh, (size_t)eh.e_shnum * sizeof *sh, (off_t)eh.e_shoff))
        goto done;
    for (int i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum)
            continue;
        const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
        const size_t n = sh[i].sh_size / sizeof(ElfW(Sym));
        st = (ElfW(Sym) *)malloc(sh[i].sh_size);
        g_strtab = (char *)malloc(strs->sh_size + 1);
        g_syms = (sym *)calloc(n ? n : 1, sizeof *g_syms);
        if (!st || !g_strtab || !g_syms || read_at(fd, st, sh[i].sh_size, (off_t)sh[i].sh_offset) ||
            read_at(fd, g_strtab, strs->sh_size, (off_t)strs->sh_offset))
            goto done;
        g_strtab[strs->sh_size] = 0;
        for (size_t k = 0; k < n; k++) {
            const int type = ELF64_ST_TYPE(st[k].st_info);
            if ((type != STT_FUNC && type != STT_OBJECT) || !st[k].st_value || st[k].st_name >= strs->sh_size)
                continue;
            g_syms[g_n_syms].lo = g_bias + st[k].st_value;
            g_syms[g_n_syms].size = st[k].st_size;
            g_syms[g_n_syms++].name = g_strtab + st[k].st_name;
        }
        qsort(g_syms, (size_t)g_n_syms, sizeof *g_syms, sym_cmp);
        break;
    }
done:
    free(st);
    free(sh);
    close(fd);
}

void symbolize(uintptr_t a, char *buf, size_t cap)
{
    if (g_n_syms < 0)
        syms_load();
    int lo = 0, hi = g_n_syms - 1, best = -1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        if (g_syms[mid].lo <= a)
            best = mid, lo = mid + 1;
        else
            hi = mid - 1;
    }
    if (best < 0 || a - g_syms[best].lo >= (g_syms[best].size ? g_syms[best].size : 1)) {
        snprintf(buf, cap, "%p", (void *)a);
        return;
    }
    int st = 0;
    char *dm = abi::__cxa_demangle(g_syms[best].name, NULL, NULL, &st);
    snprintf(buf, cap, "%s+%zu", dm && !st ? dm : g_syms[best].name, (size_t)(a - g_syms[best].lo));
    free(dm);
}

/* ------------------------------------------------------------ reports */
static void thread_name(unsigned tid, char *buf, size_t cap)
{
    const dim3 b = g_builtins.block_dim;
    snprintf(buf, cap, "thread (%u,%u,%u)", tid % b.x, tid / b.x % b.y, tid / (b.x * b.y));
}

static void block_name(uint32_t key, char *buf, size_t cap)
{
    const dim3 g = g_builtins.grid_dim;
    const uint32_t k = key - 1;
    snprintf(buf, cap, "block (%u,%u,%u)", k % g.x, k / g.x % g.y, k / (g.x * g.y));
}

static const char *kind_verb(int kind)
{
    return kind == ACC_WRITE ? "writes" : kind == ACC_ATOMIC ? "atomically updates" : "reads";
}

[[noreturn]] __attribute__((noinline, cold)) static void access_fail(const ethread *t, cudaError_t code, const char *check, const char *what,
                                     uintptr_t a, unsigned size, int kind, const region *r, const void *pc)
{
    char where[600], in[600] = "?";
    if (r)
        region_describe(r, a, where, sizeof where);
    else
        snprintf(where, sizeof where, "%p", (void *)a);
    if (pc)
        symbolize((uintptr_t)pc, in, sizeof in);
    kernel_fail(code, "%s: thread (%u,%u,%u) %s %u bytes at %s (in %s): %s", check, t->idx.x, t->idx.y, t->idx.z,
                kind_verb(kind), size, where, in, what);
}

/* ------------------------------------------------------------ racecheck */
static inline uint32_t tg_tid(uint32_t tg)
{
    return tg & 0x3ffu;
}
static inline uint32_t tg_gen(uint32_t tg)
{
    return tg >> 10;
}

/* whether an earlier access by thread tg of this block and barrier interval
 * is ordered before the access of thread tid now */
static int ordered(uint32_t tg, unsigned tid)
{
    const unsigned other = tg_tid(tg);
    if (other == tid)
        return 1;
    if (other >> 5 != tid >> 5)
        return 0; /* another warp: only a barrier orders them */
    return warp_synced(&g_launch.blk.warps[tid >> 5], other & 31, tg_gen(tg), tid & 31);
}

[[noreturn]] __attribute__((noinline, cold)) static void race_fail(const ethread *t, const region *r, uintptr_t a, unsigned size, int kind,
                                   const void *pc, const char *other_kind, uint32_t other_block, uint32_t other_tg,
                                   uint32_t warps)
{
    char who[64], blk[64], what[400];
    if (other_tg != TG_NONE)
        thread_name(tg_tid(other_tg), who, sizeof who);
    else
        snprintf(who, sizeof who, "a thread of warp %d", warps ? __builtin_ctz(warps) : -1);
    if (other_block != g_launch.blk.key) {
        block_name(other_block, blk, sizeof blk);
        snprintf(what, sizeof what,
                 "%s of %s %s it in the same launch (no order between blocks; only atomics may share a word)", who,
                 blk, other_kind);
    } else {
        snprintf(what, sizeof what, "%s %s it in the same barrier interval (no __syncthreads%s between)", who,
                 other_kind, tg_tid(other_tg) >> 5 == t->tid >> 5 ? " or warp collective" : "");
    }
    access_fail(t, cudaErrorLaunchFailure, "racecheck", what, a, size, kind, r, pc);
}

static void race_granule(const ethread *t, const region *r, race_rec *e, uintptr_t a, unsigned size, int kind,
                         const void *pc)
{
    const uint32_t L = g_launch.id, B = g_launch.blk.key, P = g_launch.blk.phase;
    const unsigned tid = t->tid, W = tid >> 5;
    const uint32_t tg = tid | (g_launch.blk.warps[W].gen << 10);
    const int global = r->kind == REG_DEVICE || r->kind == REG_PINNED;
    if (e->launch != L) {
        memset(e, 0, sizeof *e);
        e->launch = L;
        e->r_last = e->r_prev = TG_NONE;
    }
    if (e->w_block) {
        if (e->w_block != B) {
            if (global)
                race_fail(t, r, a, size, kind, pc, "wrote", e->w_block, e->w_tg, 0);
        } else if (e->w_phase == P && !ordered(e->w_tg, tid)) {
            race_fail(t, r, a, size, kind, pc, "wrote", B, e->w_tg, 0);
        }
    }
    if (kind == ACC_READ) {
        if (e->r_block == B && e->r_phase == P) {
            e->r_warps |= 1u << W;
            if (e->r_last != TG_NONE && tg_tid(e->r_last) != tid)
                e->r_prev = e->r_last;
            e->r_last = tg;
        } else {
            if (e->r_block && e->r_block != B)
                e->r_other = e->r_block;
            e->r_block = B, e->r_phase = P, e->r_warps = 1u << W;
            e->r_last = tg, e->r_prev = TG_NONE;
        }
        return;
    }
    if (e->r_block) {
        if (e->r_block != B) {
            if (global)
                race_fail(t, r, a, size, kind, pc, "read", e->r_block, e->r_last, 0);
        } else {
            if (global && e->r_other && e->r_other != B)
                race_fail(t, r, a, size, kind, pc, "read", e->r_other, TG_NONE, 0);
            if (e->r_phase == P) {
                const uint32_t others = e->r_warps & ~(1u << W);
                if (others) {
                    const uint32_t o = e->r_last != TG_NONE && tg_tid(e->r_last) >> 5 != W ? e->r_last
                                       : e->r_prev != TG_NONE && tg_tid(e->r_prev) >> 5 != W ? e->r_prev
                                                                                              : TG_NONE;
                    race_fail(t, r, a, size, kind, pc, "read", B, o, others);
                }
                const uint32_t o = e->r_last != TG_NONE && tg_tid(e->r_last) != tid ? e->r_last : e->r_prev;
                if (o != TG_NONE && !ordered(o, tid))
                    race_fail(t, r, a, size, kind, pc, "read", B, o, 0);
            }
        }
    }
    e->w_block = B, e->w_phase = P, e->w_tg = tg;
}

/* ------------------------------------------------------------ one access */
static void region_access(const ethread *t, region *r, uintptr_t a, unsigned size, int kind, const void *pc)
{
    if (a < r->base || a - r->base > r->size || size > r->size - (a - r->base))
        access_fail(t, cudaErrorIllegalAddress, "memcheck", "out of bounds", a, size, kind, r, pc);
    if (a & (size - 1))
        access_fail(t, cudaErrorMisalignedAddress, "memcheck", "misaligned (a GPU faults on it)", a, size, kind, r,
                    pc);
    const size_t off = a - r->base;
    if (r->kind == REG_SHARED) {
        if (a < g_shared_dirty_lo)
            g_shared_dirty_lo = a;
        if (a + size > g_shared_dirty_hi)
            g_shared_dirty_hi = a + size;
    }
    if (kind != ACC_WRITE)
        for (unsigned i = 0; i < size; i++)
            if (!r->init[off + i])
                access_fail(t, cudaErrorIllegalAddress, "initcheck",
                            "uninitialised (no copy, memset or kernel wrote it)", a, size, kind, r, pc);
    if (kind != ACC_READ)
        memset(r->init + off, 1, size);
    if (kind == ACC_ATOMIC)
        return;
    for (size_t gi = off / GRANULE; gi <= (off + size - 1) / GRANULE; gi++)
        race_granule(t, r, &r->race[gi], a, size, kind, pc);
}

/* the rarer places, after the common ones missed */
__attribute__((noinline)) static void check_other(ethread *t, uintptr_t a, unsigned size, int kind, const void *pc)
{
    if (a - g_param_lo < g_param_bytes || a - (uintptr_t)&g_builtins < sizeof g_builtins) {
        if (kind != ACC_READ)
            access_fail(t, cudaErrorIllegalAddress, "memcheck",
                        "the kernel's parameters and built-in variables are read-only", a, size, kind, NULL, pc);
        return;
    }
    if (a - g_dyn_shared.base < g_dyn_shared.size) {
        region_access(t, &g_dyn_shared, a, size, kind, pc);
        return;
    }
    region *r = region_find(a);
    if (r) {
        region_access(t, r, a, size, kind, pc);
        return;
    }
    const int owner = launch_stack_owner(a);
    char what[200];
    if (owner >= 0) {
        char who[64];
        thread_name((unsigned)owner, who, sizeof who);
        snprintf(what, sizeof what, "a local variable of %s (another thread's stack)", who);
    } else if (kind == ACC_READ && image_readonly(a)) {
        return; /* the program's constants */
    } else {
        snprintf(what, sizeof what, "not device memory (no allocation, shared memory or the thread's stack holds it)");
    }
    access_fail(t, cudaErrorIllegalAddress, "memcheck", what, a, size, kind, NULL, pc);
}

void check_access(ethread *t, uintptr_t a, unsigned size, int kind, const void *pc)
{
    if (a - (uintptr_t)t->stack_lo < t->stack_bytes)
        return;
    if (a - g_shared.base < g_shared.size) {
        region_access(t, &g_shared, a, size, kind, pc);
        return;
    }
    region *h = g_region_hit;
    if (h && a - (uintptr_t)h->map < h->map_bytes) {
        region_access(t, h, a, size, kind, pc);
        return;
    }
    check_other(t, a, size, kind, pc);
}

} /* namespace eng_cu_emu */

/* ------------------------------------------------------------ the hooks */
/* Called by clang before every load and store of the emulated .cu files
 * (-fsanitize-coverage=trace-loads,trace-stores); the counters that
 * coverage mode needs beside them (inline-8bit-counters) are not used. */
#define ENG_CU_EMU_HOOK(name, bytes, kind)                                                                     \
    extern "C" void __sanitizer_cov_##name(void *a)                                                            \
    {                                                                                                          \
        eng_cu_emu::ethread *t = eng_cu_emu::g_cur;                                                            \
        if (t)                                                                                                 \
            eng_cu_emu::check_access(t, (uintptr_t)a, bytes, eng_cu_emu::kind, __builtin_return_address(0));   \
    }
ENG_CU_EMU_HOOK(load1, 1, ACC_READ)
ENG_CU_EMU_HOOK(load2, 2, ACC_READ)
ENG_CU_EMU_HOOK(load4, 4, ACC_READ)
ENG_CU_EMU_HOOK(load8, 8, ACC_READ)
ENG_CU_EMU_HOOK(load16, 16, ACC_READ)
ENG_CU_EMU_HOOK(store1, 1, ACC_WRITE)
ENG_CU_EMU_HOOK(store2, 2, ACC_WRITE)
ENG_CU_EMU_HOOK(store4, 4, ACC_WRITE)
ENG_CU_EMU_HOOK(store8, 8, ACC_WRITE)
ENG_CU_EMU_HOOK(store16, 16, ACC_WRITE)

extern "C" void __sanitizer_cov_8bit_counters_init(char *, char *) {}
