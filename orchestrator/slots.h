/* slots.h: device slots from --devices / --workers / --threads-per-worker.
 * A slot runs one worker at a time; GPU slots are one per listed GPU (the
 * worker sees only that GPU through CUDA_VISIBLE_DEVICES), CPU slots share
 * the cores between --workers workers.
 * Must not: start anything (detection reads /proc only). */
#ifndef TLM_ORC_SLOTS_H
#define TLM_ORC_SLOTS_H

#include "common/err.h"

#define ORC_MAX_SLOTS 256

typedef struct orc_slot_spec {
    char name[24];  /* "cpu:0", "cuda:3": recorded as the attempt's device */
    int gpu;        /* GPU id, or -1 for a CPU slot */
} orc_slot_spec;

/* Fills slots[ORC_MAX_SLOTS]; *n slots, *threads per worker. */
int orc_slots_plan(const char *devices, int workers, int threads_per_worker, orc_slot_spec *slots, int *n,
                   int *threads, tlm_err *e);


#endif
