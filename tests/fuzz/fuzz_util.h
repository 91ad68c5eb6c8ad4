/* fuzz_util.h: what the file-reading fuzz targets share: the input as a
 * real regular file (a memfd, reached by its /proc path), so the readers
 * run exactly as in production (tlm_open_input, fstat, mmap), without a
 * temp file per input.  Header-only; one file per process. */
#ifndef TLM_TESTS_FUZZ_UTIL_H
#define TLM_TESTS_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a regular file holding data[0, size); NULL if the memfd
 * cannot be made (the target then does nothing). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("tlm-fuzz", MFD_CLOEXEC);
        if (fd < 0)
            return NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        return NULL;
    return path;
}

#endif
