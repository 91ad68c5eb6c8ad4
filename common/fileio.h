/* fileio.h: file helpers shared by every module.
 *
 * Writing is durable: write to a temp file beside the target, fsync, rename
 * over it, fsync the folder.  A crash at any point leaves either the old
 * file or the new one, never a torn one.
 *
 * Reading an input (a shard, a tokenizer, a checkpoint, an evaluation file,
 * a config) goes through tlm_open_input, the one place that refuses what is
 * not a regular file: a FIFO would block the reader for ever in open() or
 * read(), a device could stream without end, a folder cannot be read. */
#ifndef TLM_COMMON_FILEIO_H
#define TLM_COMMON_FILEIO_H

#include <stdio.h>
#include <sys/stat.h>

#include "common/err.h"

/* Bytes of a buffer that holds a whole path: this system's PATH_MAX, the
 * NUL included.  A longer path cannot be opened, so it is refused with a
 * message (tlm_path_check_len), never cut. */
#define TLM_PATH_CAP 4096
/* The longest run folder (tlm-worker --out, tlmd's runs/<id>): the rest
 * of TLM_PATH_CAP is room for the names TLM writes under it
 * (ckpt/.tmp-step-N/optim.safetensors.tmp.PID, worker logs...). */
#define TLM_NAMES_UNDER_RUN_DIR 256
#define TLM_RUN_DIR_MAX (TLM_PATH_CAP - 1 - TLM_NAMES_UNDER_RUN_DIR)

typedef struct tlm_atomic {
    FILE *f;                 /* write here */
    char path[TLM_PATH_CAP]; /* final name */
    char tmp[TLM_PATH_CAP];  /* temp name in the same folder */
} tlm_atomic;

/* Refuses (TLM_ECONFIG) a path that names a folder, a FIFO or a device:
 * the rename into place would replace it. */
int tlm_atomic_open(tlm_atomic *a, const char *path, tlm_err *e);
/* Flush, fsync, close, rename into place, fsync the folder. */
int tlm_atomic_commit(tlm_atomic *a, tlm_err *e);
/* Close and remove the temp file (safe after a failed commit too). */
void tlm_atomic_abort(tlm_atomic *a);

int tlm_write_file_atomic(const char *path, const void *data, size_t n, tlm_err *e);

/* Open an input file read-only without blocking, whatever it is: refuses a
 * folder ("PATH: is a directory") and anything else that is not a regular
 * file ("PATH: is not a regular file (a FIFO)"), and a missing file, with
 * `code` (TLM_EDATA for data, TLM_ECONFIG for configs); other failures are
 * TLM_EIO.  *fd is blocking again on return; st (may be NULL) receives its
 * fstat. */
int tlm_open_input(const char *path, int code, int *fd, struct stat *st, tlm_err *e);
/* Opens path as tlm_open_input does and maps the whole file read-only:
 * *fd stays open for the map's life (close both with munmap and close).  A
 * file of fewer than min bytes is refused with `code`: "PATH: N bytes is
 * shorter than WHAT (MIN)"; one larger than the address space with
 * TLM_EDATA.  The shard and safetensors readers share it. */
int tlm_map_input(const char *path, int code, size_t min, const char *what, int *fd, const unsigned char **map,
                  size_t *len, tlm_err *e);
/* Only the checks, by stat (for sizes, before anything is opened). */
int tlm_stat_input(const char *path, int code, struct stat *st, tlm_err *e);
/* The same as a stdio stream ("rb"). */
int tlm_fopen_input(const char *path, int code, FILE **f, tlm_err *e);
/* Read a whole input file (tlm_open_input's checks, TLM_EDATA for a missing
 * one; at most max bytes, else TLM_EDATA); *out is malloc'd and NUL-terminated. */
int tlm_read_file(const char *path, size_t max, char **out, size_t *len, tlm_err *e);
/* The same with `code` for a missing, unusable or oversized file (a
 * config's reader says TLM_ECONFIG). */
int tlm_read_input(const char *path, size_t max, int code, char **out, size_t *len, tlm_err *e);

/* A parser of a whole file's text: name for its messages, its result in out. */
typedef int tlm_text_parser(const char *name, const char *text, size_t len, void *out, tlm_err *e);
/* Reads path as tlm_read_input does and hands the text to parse(path,
 * text, len, out, e); the text is freed after.  what (or NULL) names what
 * the file should be, for a folder given instead: "PATH: is a directory
 * (expected WHAT)", with `code`. */
int tlm_parse_input(const char *path, size_t max, int code, const char *what, tlm_text_parser *parse, void *out,
                    tlm_err *e);
/* fsync the folder that holds `path` (or `path` itself if it is a folder). */
int tlm_fsync_dir(const char *path);
/* mkdir -p; existing folders are fine. */
int tlm_mkdir_p(const char *path, tlm_err *e);
/* rm -r: path and everything under it (links are removed, never
 * followed).  0 when path is gone, removed or never there; -1 with errno
 * set at the first entry that cannot be removed, and then what was not
 * reached stays.  tlmd reports that failure; tlm-data's clean-up of its
 * own staging folders is best effort and goes on without it. */
int tlm_rm_tree(const char *path);

/* out = "dir/name", or TLM_EIO ("dir/name: longer than the 4095 bytes
 * this system allows") when it does not fit in cap: never cut. */
int tlm_path_join(char *out, size_t cap, const char *dir, const char *name, tlm_err *e);

/* Checks of paths given on a command line, before anything uses them;
 * `what` names the option ("--runs").  Each fails with TLM_ECONFIG. */
/* At most `max` bytes: "--runs: the path is 4200 bytes, longer than the
 * 3813 TLM allows here (...)". */
int tlm_path_check_len(const char *what, const char *path, size_t max, tlm_err *e);
/* Where a file is expected, a folder is refused: "--db x: is a directory
 * (expected an SQLite database file)".  A missing path passes (the caller
 * knows what a missing one means). */
int tlm_path_not_dir(const char *what, const char *path, const char *expected, tlm_err *e);
/* Where a folder is expected, anything else is refused: "--out x: is not
 * a directory (expected ...)".  A missing path passes. */
int tlm_path_not_file(const char *what, const char *path, const char *expected, tlm_err *e);

#endif
