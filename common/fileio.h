/* fileio.h: file helpers shared by every module.
 *
 * Writing is durable: write to a temp file beside the target, fsync, rename
 * over it, fsync the folder.  A crash at any point leaves either the old
 * file or the new one, never a torn one.
 *
 * Reading an input (a shard, a tokenizer, a checkpoint, an evaluation file,
 * a config) goes through eng_open_input, the one place that refuses what is
 * not a regular file: a FIFO would block the reader for ever in open() or
 * read(), a device could stream without end, a folder cannot be read. */
#ifndef TLM_ENGINE_FILEIO_H
#define TLM_ENGINE_FILEIO_H

#include <stdio.h>
#include <sys/stat.h>

#include "common/err.h"

/* Bytes of a buffer that holds a whole path: this system's PATH_MAX, the
 * NUL included.  A longer path cannot be opened, so it is refused with a
 * message (eng_path_check_len), never cut. */
#define ENG_PATH_CAP 4096
/* The longest run folder (tlm-worker --out, tlmd's runs/<id>): the rest
 * of ENG_PATH_CAP is room for the names TLM writes under it
 * (ckpt/.tmp-step-N/optim.safetensors.tmp.PID, worker logs...). */
#define ENG_NAMES_UNDER_RUN_DIR 256
#define ENG_RUN_DIR_MAX (ENG_PATH_CAP - 1 - ENG_NAMES_UNDER_RUN_DIR)

typedef struct eng_atomic {
    FILE *f;                 /* write here */
    char path[ENG_PATH_CAP]; /* final name */
    char tmp[ENG_PATH_CAP];  /* temp name in the same folder */
} eng_atomic;

/* Refuses (ENG_ECONFIG) a path that names a folder, a FIFO or a device:
 * the rename into place would replace it. */
int eng_atomic_open(eng_atomic *a, const char *path, eng_err *e);
/* Flush, fsync, close, rename into place, fsync the folder. */
int eng_atomic_commit(eng_atomic *a, eng_err *e);
/* Close and remove the temp file (safe after a failed commit too). */
void eng_atomic_abort(eng_atomic *a);

int eng_write_file_atomic(const char *path, const void *data, size_t n, eng_err *e);

/* Open an input file read-only without blocking, whatever it is: refuses a
 * folder ("PATH: is a directory") and anything else that is not a regular
 * file ("PATH: is not a regular file (a FIFO)"), and a missing file, with
 * `code` (ENG_EDATA for data, ENG_ECONFIG for configs); other failures are
 * ENG_EIO.  *fd is blocking again on return; st (may be NULL) receives its
 * fstat. */
int eng_open_input(const char *path, int code, int *fd, struct stat *st, eng_err *e);
/* Only the checks, by stat (for sizes, before anything is opened). */
int eng_stat_input(const char *path, int code, struct stat *st, eng_err *e);
/* The same as a stdio stream ("rb"). */
int eng_fopen_input(const char *path, int code, FILE **f, eng_err *e);
/* Read a whole input file (eng_open_input's checks, ENG_EDATA for a missing
 * one; at most max bytes, else ENG_EDATA); *out is malloc'd and NUL-terminated. */
int eng_read_file(const char *path, size_t max, char **out, size_t *len, eng_err *e);
/* The same with `code` for a missing, unusable or oversized file (a
 * config's reader says ENG_ECONFIG). */
int eng_read_input(const char *path, size_t max, int code, char **out, size_t *len, eng_err *e);
/* fsync the folder that holds `path` (or `path` itself if it is a folder). */
int eng_fsync_dir(const char *path);
/* mkdir -p; existing folders are fine. */
int eng_mkdir_p(const char *path, eng_err *e);
/* rm -r: path and everything under it (links are removed, never
 * followed).  0 when path is gone, removed or never there; -1 with errno
 * set at the first entry that cannot be removed, and then what was not
 * reached stays.  tlmd reports that failure; tlm-data's clean-up of its
 * own staging folders is best effort and goes on without it. */
int eng_rm_tree(const char *path);

/* out = "dir/name", or ENG_EIO ("dir/name: longer than the 4095 bytes
 * this system allows") when it does not fit in cap: never cut. */
int eng_path_join(char *out, size_t cap, const char *dir, const char *name, eng_err *e);

/* Checks of paths given on a command line, before anything uses them;
 * `what` names the option ("--runs").  Each fails with ENG_ECONFIG. */
/* At most `max` bytes: "--runs: the path is 4200 bytes, longer than the
 * 3813 TLM allows here (...)". */
int eng_path_check_len(const char *what, const char *path, size_t max, eng_err *e);
/* Where a file is expected, a folder is refused: "--db x: is a directory
 * (expected an SQLite database file)".  A missing path passes (the caller
 * knows what a missing one means). */
int eng_path_not_dir(const char *what, const char *path, const char *expected, eng_err *e);
/* Where a folder is expected, anything else is refused: "--out x: is not
 * a directory (expected ...)".  A missing path passes. */
int eng_path_not_file(const char *what, const char *path, const char *expected, eng_err *e);

#endif
