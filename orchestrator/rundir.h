/* rundir.h: a job's run folder, runs/<key12>/ (docs/protocol.md "Run
 * folder"): its config.json, the worker's log, and the checkpoints the
 * worker resumes from.  tlmd keeps the folder consistent with results.db:
 * before a worker resumes, checkpoints newer than the last one the
 * database recorded are removed, so the worker replays exactly the steps
 * whose events may have been lost (a daemon killed with -9 between the
 * worker's checkpoint and the daemon's commit).
 * Must not: delete anything but step-* and .tmp-step-* folders under ckpt/. */
#ifndef TLM_ORC_RUNDIR_H
#define TLM_ORC_RUNDIR_H

#include <stddef.h>
#include <stdint.h>

#include "engine/err.h"

/* "<runs>/<first 12 hex digits of key>"; ENG_ECONFIG when it is longer
 * than ENG_RUN_DIR_MAX or than cap (tlmd refuses such a --runs up front). */
#define ORC_RUNDIR_NAME 13 /* "/" and 12 hex digits */
int orc_rundir_path(const char *runs, const char *key, char *out, size_t cap, eng_err *e);
/* mkdir -p; config.json written (temp + rename) unless it already holds `json`. */
int orc_rundir_prepare(const char *dir, const char *json, eng_err *e);
/* Remove ckpt/step-N with N > keep_step (keep_step < 0: all) and ckpt/.tmp-step-*.
 * *removed (may be NULL) counts the step folders removed. */
int orc_rundir_prune(const char *dir, int64_t keep_step, int *removed, eng_err *e);
/* --rerun: remove every checkpoint. */
int orc_rundir_clear(const char *dir, eng_err *e);

#endif
