/* ckpt.h: training checkpoints (layout in docs/protocol.md, "Run folder").
 *
 *   <root>/step-00000120/model.safetensors  parameters, fp32, HF Llama names;
 *                                           metadata format=pt, tlm_config, tlm_step
 *   <root>/step-00000120/optim.safetensors  "<name>.exp_avg", "<name>.exp_avg_sq", and the
 *                                           model's extra optimizer state under its own
 *                                           names (hope_attn: "<name>.grad_acc")
 *   <root>/step-00000120/trainer.json       step, tokens, data cursor, RNG, config_id...
 *   <root>/step-00000120/MANIFEST.json      size and SHA-256 of the three, written last
 *
 * Writing goes to <root>/.tmp-step-N/ (each file written atomically and
 * fsync'ed), then the folder is renamed to step-N and <root> fsync'ed, so a
 * crash leaves either no step-N or a whole one.  Finding a checkpoint to
 * resume from verifies the MANIFEST (every size and hash) and that every
 * value is finite, newest step-* first, and falls back to older ones,
 * reporting each one skipped (a NaN or inf named by its tensor); loading
 * refuses a tensor that is not finite too.
 *
 * This module works on host arrays and tensor descriptions only; the
 * trainer copies them from and to the model.  Must not: print (messages go
 * through the log callback), touch anything outside <root>. */
#ifndef TLM_ENGINE_CKPT_H
#define TLM_ENGINE_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/config/config.h"
#include "common/err.h"
#include "common/fileio.h"
#include "common/protocol.h"
#include "engine/model/model.h"

#define ENG_CKPT_VERSION 1
#define ENG_CKPT_MANIFEST "MANIFEST.json" /* in a checkpoint folder, written last */
#define ENG_CKPT_MODEL "model.safetensors"
#define ENG_CKPT_STATE "trainer.json"
#define ENG_CKPT_PATH_MAX TLM_PATH_CAP /* a checkpoint folder path: any the system allows */

/* Trainer state: everything besides tensors that a resume needs (trainer.json). */
typedef struct eng_train_state {
    int64_t step;            /* optimizer steps done */
    int64_t tokens;          /* tokens trained */
    uint64_t cursor;         /* data loader cursor: training sequences drawn */
    uint64_t train_windows;  /* size of an epoch, for a sanity check */
    char data_id[65];        /* loader's data identity */
    char config_id[65];      /* SHA-256 of the canonical config */
    int64_t seed;            /* data order and initialisation seed (also in the config) */
    double loss;             /* last training loss (NaN: none yet) */
    double val_loss;         /* last validation loss (NaN: none yet) */
    double lr;               /* learning rate of the last step */
    double elapsed_s;        /* training wall time, summed over attempts */
} eng_train_state;

/* Tensors in host memory: every array holds n_floats floats laid out as
 * the tensors describe (a model's slab: eng_model_slab_floats, the
 * padding between tensors included; files hold the tensors by name).  The extra optimizer state (eng_model_optim_extra:
 * none for transformer and gated_attn, whose checkpoints stay as they
 * were) is n_extra more tensors whose offsets index `extra`. */
typedef struct eng_ckpt_data {
    const eng_tensor_info *tensors;
    int n_tensors;
    size_t n_floats;
    float *params, *exp_avg, *exp_avg_sq;
    const eng_tensor_info *extra_tensors;
    int n_extra;
    float *extra;
} eng_ckpt_data;

typedef void (*eng_log_fn)(void *ud, const char *msg);

/* Write <root>/step-N (N = st->step), then keep only the `keep` newest
 * step-* folders.  path receives the folder written.  An existing step-N
 * is replaced. */
int eng_ckpt_write(const char *root, const eng_ckpt_data *d, const eng_config *cfg, const eng_train_state *st,
                   int keep, char path[ENG_CKPT_PATH_MAX], tlm_err *e);

/* Check dir's MANIFEST.json against its files (sizes and SHA-256).
 * TLM_EDATA with the reason when they differ or anything is missing. */
int eng_ckpt_verify(const char *dir, tlm_err *e);

/* The newest step-* under root whose MANIFEST verifies; path[0] = '\0'
 * when there is none (root missing or empty is not an error).  Every
 * folder skipped is reported through log (may be NULL). */
int eng_ckpt_find(const char *root, char path[ENG_CKPT_PATH_MAX], eng_log_fn log, void *ud, tlm_err *e);

/* trainer.json of a checkpoint folder (a regular file of at most 1 MiB). */
int eng_ckpt_read_state(const char *dir, eng_train_state *st, tlm_err *e);
/* The same from its text; path names it in messages.  Every counter must
 * be a non-negative integer, the hashes 64 characters. */
int eng_ckpt_parse_state(const char *path, const char *text, size_t len, eng_train_state *st, tlm_err *e);

/* Load a checkpoint written for config `config_id` into d's arrays (shapes
 * must match d's tensors exactly) and *st.  A different config_id is
 * TLM_ECONFIG; missing or mismatched tensors are TLM_EDATA. */
int eng_ckpt_load(const char *dir, const char *config_id, eng_ckpt_data *d, eng_train_state *st, tlm_err *e);

/* A checkpoint folder's name, tlm_ckpt_name, and its step, tlm_ckpt_step_of:
 * common/protocol.h (tlmd reads run folders too). */

#endif
