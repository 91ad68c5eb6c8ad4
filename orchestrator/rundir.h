/* rundir.h: a job's run folder, runs/<key12>/ (docs/protocol.md "Run
 * folder"): its config.json, the worker's log, and the checkpoints the
 * worker resumes from.  tlmd keeps the folder consistent with results.db:
 * before a worker resumes, checkpoints newer than the last one the
 * database recorded are set aside, so the worker replays exactly the steps
 * whose events may have been lost (a daemon killed with -9 between the
 * worker's checkpoint and the daemon's commit); --rerun sets every
 * checkpoint aside.  "Set aside" moves step-N folders (one rename each, on
 * the same file system) into runs/<key12>/set-aside/<UTC time>[-k]-<why>/,
 * with a README.txt that says why and what to do with them; tlmd never
 * reads them again and never deletes them.
 * Must not: delete anything but ckpt/.tmp-step-* (a checkpoint write that
 * never finished; the worker removes them too) and its own temp files. */
#ifndef TLM_ORC_RUNDIR_H
#define TLM_ORC_RUNDIR_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define ORC_ASIDE_DIR "set-aside"

/* "<runs>/<first 12 hex digits of key>"; TLM_ECONFIG when it is longer
 * than TLM_RUN_DIR_MAX or than cap (tlmd refuses such a --runs up front). */
#define ORC_RUNDIR_NAME 13 /* "/" and 12 hex digits */
int orc_rundir_path(const char *runs, const char *key, char *out, size_t cap, tlm_err *e);
/* mkdir -p; config.json written (temp + rename) unless it already holds
 * `json`.  A config.json that holds something else is set aside first
 * (`aside` receives the folder, "" if none; cap >= 1). */
int orc_rundir_prepare(const char *dir, const char *json, char *aside, size_t cap, tlm_err *e);
/* Set aside ckpt/step-N with N > keep_step (keep_step < 0: all) and remove
 * ckpt/.tmp-step-*.  `why` (a word: "unrecorded", "rerun") names the aside
 * folder, `note` is written into its README.txt.  *moved counts the step
 * folders set aside, `aside` receives their folder ("" if none). */
int orc_rundir_set_aside(const char *dir, int64_t keep_step, const char *why, const char *note, int *moved,
                         char *aside, size_t cap, tlm_err *e);

#endif
