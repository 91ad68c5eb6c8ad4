/* manifest.h: the dataset manifest (DIR/manifest.json, format "tlm-dataset"
 * version 1, written by tlm-data: docs/data.md) as training reads it.
 *
 * The loader opens a split folder DIR/train (or DIR/val); when
 * DIR/manifest.json exists,
 * the folder must hold exactly the shards the manifest lists for that split
 * (no file missing, none extra), each with the manifest's token count and
 * payload SHA-256 in its header, and the headers' tokenizer and vocabulary
 * must be the manifest's.  Together with the payload hash (engine/format/shard.h)
 * that ties every token trained on back to what tlm-data wrote.
 *
 * The reader trusts nothing: sizes and counts are checked (no overflow,
 * totals add up), shard file names are plain relative names inside the
 * dataset.  Errors are TLM_EDATA naming the manifest and the field.
 * Must not: read the shards themselves (the loader hands them in). */
#ifndef TLM_ENGINE_MANIFEST_H
#define TLM_ENGINE_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "engine/format/shard.h"

#define ENG_MANIFEST_FILE "manifest.json" /* in the dataset folder, beside the split folders */
#define ENG_MANIFEST_FORMAT "tlm-dataset"
#define ENG_MANIFEST_VERSION 1
#define ENG_MANIFEST_MAX ((size_t)256 << 20) /* bytes: the sources list grows with the inputs */

typedef struct eng_manifest_shard {
    char file[ENG_SHARD_TOKNAME * 2]; /* "train/000000.tlmtok", relative to the dataset folder */
    uint64_t tokens;
    uint8_t sha256[32];               /* payload hash */
} eng_manifest_shard;

typedef struct eng_manifest_split {
    char name[16];                    /* "train", "val" */
    uint64_t tokens;                  /* the sum over its shards */
    eng_manifest_shard *shards;
    size_t n;
} eng_manifest_split;

typedef struct eng_manifest {
    char path[1024];                  /* for messages */
    int foreign;                      /* a JSON object of another format: not a dataset manifest, not checked */
    char tokenizer[ENG_SHARD_TOKNAME + 1];
    uint32_t vocab;
    uint8_t tokenizer_sha256[32];
    eng_manifest_split splits[2];     /* train, val */
} eng_manifest;

/* Parse manifest text; name is used in messages.  A JSON object whose
 * "format" is not "tlm-dataset" is TLM_EDATA with m->foreign set (some
 * other program's manifest.json: the loader leaves it alone). */
int eng_manifest_parse(const char *name, const char *text, size_t len, eng_manifest *m, tlm_err *e);
/* Read and parse a manifest file (a regular file of at most ENG_MANIFEST_MAX bytes). */
int eng_manifest_load(const char *path, eng_manifest *m, tlm_err *e);
void eng_manifest_clear(eng_manifest *m);
/* The split called `split`, or NULL. */
const eng_manifest_split *eng_manifest_find(const eng_manifest *m, const char *split);

/* Check an opened split against the manifest (see above).  set holds the
 * shards of the split folder (a single shard file is checked alone). */
int eng_manifest_check(const eng_manifest *m, const char *split, const eng_shardset *set, int whole_folder,
                       tlm_err *e);

/* The manifest that governs a data path, if any: for a split folder
 * DIR/S, DIR/manifest.json; for a shard file DIR/S/x.tlmtok the same.
 * Fills manifest (path) and split (S) and returns 1 when that file
 * exists, 0 when not. */
int eng_manifest_locate(const char *data_path, int is_folder, char *manifest, size_t cap, char split[16]);

#endif
