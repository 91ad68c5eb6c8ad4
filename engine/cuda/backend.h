/* backend.h: the CUDA backend (engine/cuda/, built when configure finds the
 * toolkit: TLM_HAVE_CUDA): how a program makes one and asks which GPUs
 * there are.  Everything else goes through the op table
 * (engine/model/ops.h); eng_backend_free destroys it.
 *
 * The driver is found at run time by the CUDA runtime (linked statically;
 * libcuda is never linked), so a binary built with CUDA runs on a machine
 * without a GPU: these functions then say so with TLM_ECONFIG ("no GPU")
 * and the caller falls back or skips.  Declared in every build; defined
 * only in a CUDA build (callers test TLM_HAVE_CUDA).
 *
 * The emulated build of the same sources (engine/libtlmcuda_emu.a, built
 * when configure finds clang++: TLM_HAVE_CUDA_EMU; docs/engine.md, "The
 * emulated CUDA build") defines the same functions with an _emu_ infix
 * (eng_backend_cuda_emu_create ...): a backend whose kernels run on the
 * CPU under an emulated CUDA execution model, with memory, race and
 * barrier checks.  It is for tests; it is not a GPU and never says so. */
#ifndef TLM_ENGINE_CUDA_BACKEND_H
#define TLM_ENGINE_CUDA_BACKEND_H

#include <stddef.h>

#include "common/err.h"
#include "engine/model/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GPUs the driver reports (CUDA_VISIBLE_DEVICES applies).  0 with *n
 * set, or TLM_ECONFIG with the runtime's reason (no driver, no device). */
int eng_cuda_device_count(int *n, tlm_err *e);

/* Device k's name and memory, for the `start` event and tlmd's listing. */
typedef struct eng_cuda_device_info {
    char name[128];
    size_t total_bytes, free_bytes;
    int cc_major, cc_minor, sm_count;
} eng_cuda_device_info;
int eng_cuda_device_info_get(int k, eng_cuda_device_info *out, tlm_err *e);

/* A backend on device k (its stream, cuBLASLt handle and workspace).
 * TLM_ECONFIG when there is no such GPU, TLM_ENOMEM when its workspace
 * does not fit. */
int eng_backend_cuda_create(eng_backend **out, int device, tlm_err *e);

/* The storage type of b's activations and of the products' weight copy
 * (engine/model/ops.h, eng_dtype; train.precision: ENG_F32 or ENG_BF16),
 * set before a model is made on b.  ENG_F32 is the default;
 * TLM_EINTERNAL when b is not a CUDA backend or t no storage type. */
int eng_backend_cuda_set_dtype(eng_backend *b, eng_dtype t, tlm_err *e);

/* The first CUDA error an op met since the backend was made (ops return
 * nothing: a failed launch or copy is kept here, and the ops after it do
 * nothing); 0 when none.  TLM_ENOMEM for out-of-memory, TLM_EINTERNAL
 * otherwise.  The trainer's caller checks it after each step. */
int eng_backend_cuda_status(const eng_backend *b, tlm_err *e);

/* on: matmuls from now on as bf16 tensor-core products with fp32 storage
 * and accumulation (CUBLAS_COMPUTE_32F_FAST_16BF), off (the default): fp32
 * products, for parity with the CPU.  For bench/bench_cuda: no job config
 * reaches it yet.  -1 when b is not a CUDA backend. */
int eng_backend_cuda_set_fast_matmul(eng_backend *b, int on);

/* Which fused attention b runs where it has a choice (bf16 activations,
 * head size 64 or 128, flash's layouts; elsewhere attention.cu's plain
 * kernels): cudnn 0, flash.cu (train.attention auto or flash), 1, cuDNN's
 * SDPA graph (sdpa_cudnn.cu; where cuDNN cannot be loaded the op fails
 * with TLM_ECONFIG, saying why).  -1 when b is not a CUDA backend. */
int eng_backend_cuda_set_attention_cudnn(eng_backend *b, int cudnn);

/* Bytes the backend's allocations hold now and at most so far. */
void eng_backend_cuda_memory(const eng_backend *b, size_t *now, size_t *peak);

/* The emulated build's same functions (TLM_HAVE_CUDA_EMU).  Its one
 * device is the emulator; a failed check in a kernel is the backend's
 * sticky error (eng_backend_cuda_emu_status), with the emulator's report. */
int eng_cuda_emu_device_count(int *n, tlm_err *e);
int eng_cuda_emu_device_info_get(int k, eng_cuda_device_info *out, tlm_err *e);
int eng_backend_cuda_emu_create(eng_backend **out, int device, tlm_err *e);
int eng_backend_cuda_emu_status(const eng_backend *b, tlm_err *e);
int eng_backend_cuda_emu_set_fast_matmul(eng_backend *b, int on);
int eng_backend_cuda_emu_set_dtype(eng_backend *b, eng_dtype t, tlm_err *e);
int eng_backend_cuda_emu_set_attention_cudnn(eng_backend *b, int cudnn);
void eng_backend_cuda_emu_memory(const eng_backend *b, size_t *now, size_t *peak);
/* The kernels the emulator has run in this process, one a line ("name
 * launches blocks seconds", the last its time under emulation), into buf
 * (cap bytes); returns how many. */
int eng_cuda_emu_kernels_run(char *buf, size_t cap);
/* Plan-only (on 1; off, 0, the default): from now on every call is made
 * and checked as in a normal run (each cuBLASLt plan's descriptors and
 * heuristic, each matmul's alignments and extents, each launch's
 * configuration and pointer arguments, each copy's and memset's range)
 * but nothing is computed or stored on the device, and device memory is
 * reserved address space only (256 GiB of it): a model of any preset can
 * be made and stepped for what it asks of cuBLASLt, at no memory and
 * little time.  Its values then mean nothing.  Only while the emulator
 * holds no allocation (no backend alive): -1 otherwise, 0 when set.  For
 * tests (tests/engine/backend/test_cuda_plans.c); nothing else sets it. */
int eng_cuda_emu_set_plan_only(int on);
/* The cuBLASLt stand-ins' account since the process began or the last
 * reset: the distinct problems the heuristic gave an algorithm for
 * (descriptor, layouts, alignments), the heuristic's and the matmul's
 * successful calls; reset (nonzero): the account starts afresh after. */
void eng_cuda_emu_lt_counts(long *plans, long *heuristics, long *matmuls, int reset);
/* The emulator's stream captures ended with a graph, and its graph
 * launches, since the process began or the last reset (nonzero: the
 * account starts afresh after): how a test knows a graph was made once
 * and replayed (train.cuda_graph). */
void eng_cuda_emu_graph_counts(long *captures, long *launches, int reset);

#ifdef __cplusplus
}
#endif

#endif
