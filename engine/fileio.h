/* fileio.h: durable file writes shared by every module: write to a temp file
 * beside the target, fsync, rename over it, fsync the folder.  A crash at any
 * point leaves either the old file or the new one, never a torn one. */
#ifndef TLM_ENGINE_FILEIO_H
#define TLM_ENGINE_FILEIO_H

#include <stdio.h>

#include "engine/err.h"

typedef struct eng_atomic {
    FILE *f;            /* write here */
    char path[1024];    /* final name */
    char tmp[1100];     /* temp name in the same folder */
} eng_atomic;

int eng_atomic_open(eng_atomic *a, const char *path, eng_err *e);
/* Flush, fsync, close, rename into place, fsync the folder. */
int eng_atomic_commit(eng_atomic *a, eng_err *e);
/* Close and remove the temp file (safe after a failed commit too). */
void eng_atomic_abort(eng_atomic *a);

int eng_write_file_atomic(const char *path, const void *data, size_t n, eng_err *e);
/* Read a whole file (at most max bytes, else ENG_EDATA); *out is malloc'd and NUL-terminated. */
int eng_read_file(const char *path, size_t max, char **out, size_t *len, eng_err *e);
/* fsync the folder that holds `path` (or `path` itself if it is a folder). */
int eng_fsync_dir(const char *path);
/* mkdir -p; existing folders are fine. */
int eng_mkdir_p(const char *path, eng_err *e);

#endif
