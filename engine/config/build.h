/* build.h: what this build of the engine can do, for the programs that
 * must know before they make a backend (tlmd refuses GPU slots, tlm-worker
 * --device cuda:K, on the same fact).  A config fact, so that tlmd, which
 * links only the config, reads it without the model's headers. */
#ifndef TLM_ENGINE_CONFIG_BUILD_H
#define TLM_ENGINE_CONFIG_BUILD_H

/* Whether this engine can train on a GPU: 1 when the CUDA backend is built
 * (configure found the toolkit: TLM_HAVE_CUDA; engine/cuda/backend.h).
 * tlm-worker accepts --device cuda:K and tlmd GPU slots (--devices) on this
 * one fact; in a build without it both refuse them before anything is
 * recorded.  Whether a GPU is there is asked at run time. */
#include "config.h"
#ifdef TLM_HAVE_CUDA
#define ENG_GPU_BACKEND 1
#else
#define ENG_GPU_BACKEND 0
#endif

#endif
