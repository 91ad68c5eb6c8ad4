/* build.h: what this build of the engine can do, for the programs that
 * must know before they make a backend (tlmd refuses GPU slots, tlm-worker
 * --device cuda:K, on the same fact).  A config fact, so that tlmd, which
 * links only the config, reads it without the model's headers. */
#ifndef TLM_ENGINE_CONFIG_BUILD_H
#define TLM_ENGINE_CONFIG_BUILD_H

/* Whether this engine can train on a GPU.  The CUDA backend (docs/engine.md,
 * "How the CUDA backend plugs in") is not written yet, so whatever
 * configure found (nvcc, cuBLAS: TLM_HAVE_CUDA), the engine trains on the
 * CPU only; it becomes 1 with the backend. */
#define ENG_GPU_BACKEND 0

#endif
