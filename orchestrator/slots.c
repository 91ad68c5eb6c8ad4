/* slots.c: device slots (see slots.h). */
#include "orchestrator/slots.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "engine/config/build.h"

/* Usable CPU cores (affinity-aware). */
static int orc_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* GPUs the NVIDIA driver knows, without linking CUDA: one folder each. */
static int gpu_count(void)
{
#if defined(TLM_HAVE_CUDA) && ENG_GPU_BACKEND
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
#else
    return 0; /* this build's worker cannot use them */
#endif
}

int orc_slots_plan(const char *devices, int workers, int tpw, orc_slot_spec *slots, int *n, int *threads, tlm_err *e)
{
    int ncpu = orc_cpu_count();
    int gpus[ORC_MAX_SLOTS], ngpu = 0;
    if (!strcmp(devices, "auto")) {
        ngpu = gpu_count();
        for (int i = 0; i < ngpu && i < ORC_MAX_SLOTS; i++)
            gpus[i] = i;
    } else if (!*devices) {
        return tlm_errf(e, TLM_ECONFIG, "--devices : is empty (expected auto, cpu, or GPU ids separated by commas)");
    } else if (strcmp(devices, "cpu") != 0) {
        const char *p = devices;
        while (*p) {
            char *end;
            long id = strtol(p, &end, 10);
            if (end == p || id < 0 || id > 1023 || (*end && *end != ','))
                return tlm_errf(e, TLM_ECONFIG,
                                "--devices %s: expected auto, cpu, or GPU ids separated by commas (0,1,3)", devices);
            for (int i = 0; i < ngpu; i++)
                if (gpus[i] == id)
                    return tlm_errf(e, TLM_ECONFIG, "--devices %s: GPU %ld is listed twice", devices, id);
            if (ngpu == ORC_MAX_SLOTS)
                return tlm_errf(e, TLM_ECONFIG, "--devices: more than %d GPUs", ORC_MAX_SLOTS);
            gpus[ngpu++] = (int)id;
            p = *end ? end + 1 : end;
        }
#if defined(TLM_HAVE_CUDA) && ENG_GPU_BACKEND
        /* a GPU the driver does not list would fail every job on it */
        const int have = gpu_count();
        for (int i = 0; i < ngpu; i++)
            if (gpus[i] >= have)
                return tlm_errf(e, TLM_ECONFIG, "--devices %s: the NVIDIA driver lists no GPU %d (%d GPUs: %s)",
                                devices, gpus[i], have,
                                have ? "ids from 0" : "none on this machine; use --devices cpu, or auto");
#endif
        /* refused here, before anything is recorded: a worker would fail every
         * job with a config error, and those are not retried */
#if !(defined(TLM_HAVE_CUDA) && ENG_GPU_BACKEND)
        return tlm_errf(e, TLM_ECONFIG,
                        "--devices %s: this build cannot train on GPUs (%s); use --devices cpu, or auto", devices,
#ifdef TLM_HAVE_CUDA
                        "CUDA was found at configure time, but the engine has no GPU backend yet: tlm-worker "
                        "trains on the CPU only"
#else
                        "built without CUDA, and the engine has no GPU backend yet: tlm-worker trains on the CPU only"
#endif
        );
#endif
    }
    if (ngpu > 0) {
        for (int i = 0; i < ngpu; i++) {
            snprintf(slots[i].name, sizeof slots[i].name, "cuda:%d", gpus[i]);
            slots[i].gpu = gpus[i];
        }
        *n = ngpu;
        *threads = tpw > 0 ? tpw : (ncpu / ngpu > 0 ? ncpu / ngpu : 1);
        return 0;
    }
    if (workers < 0 || workers > ORC_MAX_SLOTS)
        return tlm_errf(e, TLM_ECONFIG, "--workers %d: expected 1 to %d", workers, ORC_MAX_SLOTS);
    if (tpw < 0)
        return tlm_errf(e, TLM_ECONFIG, "--threads-per-worker %d: expected at least 1", tpw);
    if (!workers)
        workers = tpw > 0 ? (ncpu / tpw > 0 ? ncpu / tpw : 1) : 1;
    if (!tpw)
        tpw = ncpu / workers > 0 ? ncpu / workers : 1;
    for (int i = 0; i < workers; i++) {
        snprintf(slots[i].name, sizeof slots[i].name, "cpu:%d", i);
        slots[i].gpu = -1;
    }
    *n = workers;
    *threads = tpw;
    return 0;
}
