/* backend.c: the CPU backend (backend.h): its op table, its context (the
 * thread count and the workspace slots), and the workspace-slot helper
 * that attention, swa and titans_mem share (internal.h). */
#include "engine/cpu/backend.h"

#include <limits.h>
#include <stdlib.h>

#include "engine/cpu/internal.h"

static void cpu_backend_free(eng_backend *b);

/* the CPU stores fp32 only (train.precision bf16 is refused before) */
static eng_dtype cpu_act_dtype(void *ctx)
{
    (void)ctx;
    return ENG_F32;
}

static const eng_ops cpu_ops = {
    .name = "cpu",
    .is_host = 1,
    .groups = ENG_OPS_TITANS,
    .backend_free = cpu_backend_free,
    .alloc = eng__cpu_alloc,
    .free = eng__cpu_free,
    .to_device = eng__cpu_memcpy,
    .to_host = eng__cpu_memcpy,
    .zero = eng__cpu_zero,
    .copy = eng__cpu_copy,
    .matmul = eng__cpu_matmul_op,
    .matmul_add = eng__cpu_matmul_add_op,
    .embedding_fwd = eng__cpu_embedding_fwd,
    .embedding_bwd = eng__cpu_embedding_bwd,
    .rmsnorm_fwd = eng__cpu_rmsnorm_fwd,
    .rmsnorm_bwd = eng__cpu_rmsnorm_bwd,
    .rope_fwd = eng__cpu_rope_fwd,
    .rope_bwd = eng__cpu_rope_bwd,
    .attention_workspace = eng__cpu_attention_workspace,
    .attention_fwd = eng__cpu_attention_fwd,
    .attention_bwd = eng__cpu_attention_bwd,
    .swiglu_fwd = eng__cpu_swiglu_fwd,
    .swiglu_bwd = eng__cpu_swiglu_bwd,
    .gate_fwd = eng__cpu_gate_fwd,
    .gate_bwd = eng__cpu_gate_bwd,
    .dconv_fwd = eng__cpu_dconv_fwd,
    .dconv_bwd = eng__cpu_dconv_bwd,
    .silu_norm_fwd = eng__cpu_silu_norm_fwd,
    .silu_norm_bwd = eng__cpu_silu_norm_bwd,
    .swa_workspace = eng__cpu_swa_workspace,
    .swa_fwd = eng__cpu_swa_fwd,
    .swa_bwd = eng__cpu_swa_bwd,
    .titans_mem_workspace = eng__cpu_titans_mem_workspace,
    .titans_mem_fwd = eng__cpu_titans_mem_fwd,
    .titans_mem_bwd = eng__cpu_titans_mem_bwd,
    .xent_fwd = eng__cpu_xent_fwd,
    .xent_bwd = eng__cpu_xent_bwd,
    .adamw = eng__cpu_adamw,
    .sumsq = eng__cpu_sumsq,
    .axpy = eng__cpu_axpy,
    .classifier_workspace = eng__cpu_classifier_workspace,
    .classifier_fwd = eng__cpu_classifier_fwd,
    .classifier_bwd = eng__cpu_classifier_bwd,
    .embedding_bwd_sorted = eng__cpu_embedding_bwd_sorted,
    .sumsq_into = eng__cpu_sumsq_into,
    .act_dtype = cpu_act_dtype,
    .cast = eng__cpu_cast,
    .act_axpy = eng__cpu_act_axpy,
};

/* The backend and its context in one allocation. */
typedef struct cpu_backend {
    eng_backend b;
    eng__cpu ctx;
} cpu_backend;

int eng_backend_cpu_create(eng_backend **out, int threads, tlm_err *e)
{
    *out = NULL;
    cpu_backend *cb = calloc(1, sizeof *cb);
    if (!cb)
        return tlm_errf(e, TLM_ENOMEM, "cpu backend: out of memory");
    cb->b.ops = &cpu_ops;
    cb->b.ctx = &cb->ctx;
    for (int i = 0; i < ENG__CPU_WS_FAMILIES; i++)
        cb->ctx.ws_slots[i] = INT_MAX;
    eng_backend_cpu_set_threads(&cb->b, threads);
    *out = &cb->b;
    return 0;
}

static void cpu_backend_free(eng_backend *b)
{
    free((cpu_backend *)b); /* b is the first member */
}

int eng_backend_cpu_set_threads(eng_backend *b, int threads)
{
    if (b->ops != &cpu_ops)
        return 0;
    eng__cpu *c = b->ctx;
    c->threads = threads > 0 ? threads : eng__cpu_cores();
    return c->threads;
}

int eng_backend_cpu_threads(const eng_backend *b)
{
    return b->ops == &cpu_ops ? ((const eng__cpu *)b->ctx)->threads : 0;
}

/* ------------------------------------------------------------ workspace slots */

size_t eng__cpu_ws_size(void *ctx, int family, size_t slot_floats)
{
    eng__cpu *c = ctx;
    const int nt = c->threads;
    /* keeps the bookkeeping right should two threads plan models on one backend */
#pragma omp critical(eng_cpu_ws)
    if (nt < c->ws_slots[family])
        c->ws_slots[family] = nt;
    return (size_t)nt * slot_floats;
}

int eng__cpu_ws_team(const void *ctx, int family)
{
    const eng__cpu *c = ctx;
    return c->threads < c->ws_slots[family] ? c->threads : c->ws_slots[family];
}
