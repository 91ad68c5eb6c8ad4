/* sweep.h: sweep files (docs/sweeps.md): parse and check one YAML sweep,
 * then expand it into jobs.  Each job's tree is base + grid point (or an
 * include entry) + seed, resolved by the engine's job-config code, so that a
 * bad value in a sweep is reported at its line and column in the sweep
 * file.  Expansion streams jobs to a callback: a 100,000-job grid never
 * sits in memory.
 * Must not: touch the database or the file system beyond reading the file. */
#ifndef TLM_ORC_SWEEP_H
#define TLM_ORC_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "common/cfgtree.h"
#include "engine/config/config.h"
#include "common/err.h"
#include "orchestrator/resources.h"

#define ORC_SWEEP_NAME_MAX 100
#define ORC_SWEEP_MAX_JOBS 10000000 /* a grid larger than this is refused */

typedef struct orc_sweep {
    char *file;          /* as given */
    char *source;        /* the file's text */
    size_t source_len;
    tlm_cfg_node *root;
    char name[ORC_SWEEP_NAME_MAX + 1];
    const char *description;   /* "" when absent */
    tlm_cfg_node *base;            /* normalised: dotted keys expanded (owned) */
    size_t n_axes;
    const tlm_cfg_node **axis_key; /* grid keys (scalars) */
    const tlm_cfg_node **axis_val; /* their value lists */
    size_t n_include;
    const tlm_cfg_node **include;  /* mappings */
    size_t n_exclude;
    const tlm_cfg_node **exclude;  /* mappings */
    size_t n_seeds;
    int64_t *seeds;            /* empty when seeds is not given */
    const tlm_cfg_node **seed_node;
    orc_resources res;         /* resources: (what each of its Slurm jobs asks for) */
} orc_sweep;

/* Read and check a sweep file. */
int orc_sweep_load(const char *path, orc_sweep **out, tlm_err *e);
/* The same from memory (`name` is used in messages). */
int orc_sweep_parse(const char *name, const char *buf, size_t len, orc_sweep **out, tlm_err *e);
void orc_sweep_free(orc_sweep *s);

typedef struct orc_sweep_job {
    size_t index;            /* 0-based among the jobs emitted */
    const eng_config *cfg;   /* resolved */
    const char *key;         /* eng_config_id */
    const char *axes;        /* "taper.schedule=cosine taper.ratio=[1.5,0.5] seed=0" */
    int include;             /* -1: a grid point; else the include entry's index */
} orc_sweep_job;

/* Called per job in expansion order; a non-zero return stops the expansion
 * and is returned (cb fills e). */
typedef int (*orc_sweep_job_fn)(void *ctx, const orc_sweep_job *j, tlm_err *e);

/* A grid key dropped from the points it does not apply to (docs/sweeps.md):
 * "taper.ratio does not apply to schedule uniform", over `points` grid
 * points that became `jobs` new jobs (the rest merged by their key). */
#define ORC_SWEEP_MAX_DROPS 16
typedef struct orc_sweep_drop {
    char what[200];
    size_t points, jobs;
} orc_sweep_drop;

typedef struct orc_sweep_stats {
    size_t n_jobs, n_dups;
    size_t n_drops;  /* kinds of drop, at most ORC_SWEEP_MAX_DROPS listed */
    size_t more_drops; /* kinds beyond those */
    orc_sweep_drop drops[ORC_SWEEP_MAX_DROPS];
} orc_sweep_stats;

/* Expands grid x seeds (minus exclude patterns), then include x seeds.
 * A grid key that does not apply to a grid point (taper.ratio where the
 * point's schedule is uniform) is dropped from that point; a grid key that
 * applies to no point, and such a key in base or include, stay errors.
 * Jobs with the same key as an earlier one of this sweep are skipped
 * (*n_dups counts them).  Zero jobs, or an exclude pattern that removes
 * nothing, is an error. */
int orc_sweep_expand(const orc_sweep *s, orc_sweep_job_fn cb, void *ctx, size_t *n_jobs, size_t *n_dups,
                     tlm_err *e);
/* The same, with what was dropped and merged in *st (may be NULL). */
int orc_sweep_expand_stats(const orc_sweep *s, orc_sweep_job_fn cb, void *ctx, orc_sweep_stats *st, tlm_err *e);


#endif
