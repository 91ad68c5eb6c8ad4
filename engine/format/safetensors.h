/* safetensors.h: read and write the safetensors format (the Hugging Face
 * tensor container TLM's checkpoints use, so PyTorch and HF tools load them).
 *
 *   u64 little-endian N | N bytes of JSON header | tensor bytes
 *   header: {"__metadata__": {"key": "string", ...},
 *            "name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...}
 *   offsets are relative to the first byte after the header.
 *
 * The reader maps the file and validates everything before use: header size
 * bounded (100 MiB), JSON well formed, every dtype known, every tensor's bytes
 * = numel x dtype size, every range inside the file and no two overlapping.
 * The writer is atomic (common/fileio.h) and can report the SHA-256 of what
 * it wrote. */
#ifndef TLM_ENGINE_SAFETENSORS_H
#define TLM_ENGINE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/fileio.h"

#define ENG_ST_MAX_DIMS 8
#define ENG_ST_NAME_MAX 160

typedef struct eng_st_tensor {
    char name[ENG_ST_NAME_MAX];
    char dtype[8];      /* "F32", "BF16", "F16", "I32", "I64", "U8", ... */
    int ndim;
    int64_t shape[ENG_ST_MAX_DIMS];
    uint64_t begin, end; /* byte range, relative to the data section */
} eng_st_tensor;

typedef struct eng_st_file {
    char path[TLM_PATH_CAP]; /* for messages: checkpoints under long run folders fit whole */
    int fd;
    const uint8_t *map;
    size_t map_len;
    size_t data_off;     /* 8 + header length */
    eng_st_tensor *tensors;
    int n;
    char **meta_keys, **meta_vals;
    int n_meta;
} eng_st_file;

int eng_st_open(eng_st_file *f, const char *path, tlm_err *e);
void eng_st_close(eng_st_file *f);
const eng_st_tensor *eng_st_find(const eng_st_file *f, const char *name);
const void *eng_st_data(const eng_st_file *f, const eng_st_tensor *t);
uint64_t eng_st_numel(const eng_st_tensor *t);
/* Metadata value or NULL. */
const char *eng_st_meta(const eng_st_file *f, const char *key);
/* Bytes per element of a dtype name; 0 if unknown. */
int eng_st_dtype_size(const char *dtype);

typedef struct eng_st_writer eng_st_writer;

int eng_st_writer_new(eng_st_writer **w, tlm_err *e);
void eng_st_writer_free(eng_st_writer *w);
/* `data` is borrowed until eng_st_writer_write returns. */
int eng_st_writer_add(eng_st_writer *w, const char *name, const char *dtype, int ndim, const int64_t *shape,
                      const void *data, tlm_err *e);
int eng_st_writer_meta(eng_st_writer *w, const char *key, const char *value, tlm_err *e);
/* Write atomically; sha256_hex (65 bytes, may be NULL) receives the file's hash. */
int eng_st_writer_write(eng_st_writer *w, const char *path, char *sha256_hex, tlm_err *e);

#endif
