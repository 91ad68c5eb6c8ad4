/* inputs.h: the files a job reads (data.train, data.val, a tokenizer
 * file, the evaluation files of the suites it runs), checked by --dry-run
 * so that a sweep whose jobs would fail at once on a missing or unreadable
 * file does not dry-run clean.  A relative path is read from the folder
 * tlmd runs in (the workers run there too: docs/tlmd.md), and the
 * message says which folder that is.  Each distinct path is checked once.
 * Must not: change a path (a job's identity holds it as written). */
#ifndef TLM_ORC_INPUTS_H
#define TLM_ORC_INPUTS_H

#include <stddef.h>
#include <stdio.h>

#include "common/err.h"
#include "common/fileio.h"
#include "engine/config/config.h"

typedef struct orc_inputs {
    struct orc_input *v;   /* every path checked so far, with its verdict */
    size_t n, cap;
    size_t bad;            /* of those, the ones that cannot be read */
    char cwd[TLM_PATH_CAP];
} orc_inputs;

void orc_inputs_init(orc_inputs *in);
/* The job's input paths; each bad one not seen before is said on `err`
 * ("FILE: data.train PATH: why"), `file` being the sweep file.  0, or
 * TLM_ENOMEM. */
int orc_inputs_check(orc_inputs *in, const eng_config *cfg, const char *file, FILE *err, tlm_err *e);
void orc_inputs_clear(orc_inputs *in);

#endif
