/* backend.h: the CPU backend (C, OpenMP and a CBLAS on host memory): how a
 * program makes one and sets its threads.  Everything else goes through
 * the op table (engine/model/ops.h); eng_backend_free destroys it.
 *
 * Its context holds the thread count every op runs on and the bookkeeping
 * of its workspaces, so each backend is independent of the others and of
 * process-wide settings (engine/cpu/runtime.h keeps only what is the
 * process's: the BLAS and its kernel, OpenMP's default team). */
#ifndef TLM_ENGINE_CPU_BACKEND_H
#define TLM_ENGINE_CPU_BACKEND_H

#include "common/err.h"
#include "engine/model/ops.h"

/* threads <= 0: every core this process may run on (its CPU affinity). */
int eng_backend_cpu_create(eng_backend **out, int threads, tlm_err *e);

/* The threads its ops run on from now on (<= 0: every core); returns the
 * count set.  Models planned before keep working: a pass never runs on
 * more threads than its workspace has slots (engine/cpu/internal.h). 0 and
 * nothing done when b is not a CPU backend. */
int eng_backend_cpu_set_threads(eng_backend *b, int threads);
/* Its thread count; 0 when b is not a CPU backend. */
int eng_backend_cpu_threads(const eng_backend *b);

#endif
