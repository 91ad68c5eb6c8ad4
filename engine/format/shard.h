/* shard.h: the token-shard file format (version 1), reader and writer.
 *
 * A shard is a fixed 192-byte little-endian header followed by the tokens:
 *
 *   offset size  field
 *   0      8     magic "TLMSHARD"
 *   8      4     u32 version (1)
 *   12     4     u32 header_bytes (192)
 *   16     4     u32 token_bytes (2 or 4)
 *   20     4     u32 vocab (every token < vocab)
 *   24     8     u64 n_tokens
 *   32     64    tokenizer name, NUL-padded ("bytes", "llama3", "bpe4096", ...)
 *   96     32    SHA-256 of the tokenizer definition (see tokenizer docs)
 *   128    32    SHA-256 of the token payload (as stored)
 *   160    32    reserved, zero
 *   192    ...   n_tokens x token_bytes, little-endian
 *
 * Files are named *.tlmtok.  A dataset split is a folder of shards (read in
 * name order) or one shard file.  Writers produce the file atomically (temp
 * file, fsync, rename).  Readers check magic, version, sizes and (on
 * request) the payload hash, and bound every access.  A header whose
 * payload SHA-256 is all zeros is refused: zero is never "unset". */
#ifndef TLM_ENGINE_SHARD_H
#define TLM_ENGINE_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define ENG_SHARD_MAGIC "TLMSHARD"
#define ENG_SHARD_VERSION 1
#define ENG_SHARD_HEADER 192
#define ENG_SHARD_TOKNAME 64
#define ENG_SHARD_EXT ".tlmtok" /* a shard file's name: at least one character, then this */

/* Is `name` (a file name, no folder) a shard's name? */
int eng_shard_is_name(const char *name);

typedef struct eng_shard {
    char path[512];
    int fd;
    const uint8_t *map;     /* whole file, read-only */
    size_t map_len;
    uint32_t token_bytes;
    uint32_t vocab;
    uint64_t n_tokens;
    char tokenizer[ENG_SHARD_TOKNAME + 1];
    uint8_t tokenizer_sha256[32];
    uint8_t payload_sha256[32];
} eng_shard;

/* Open and validate a shard: a regular file (common/fileio.h), every header
 * field consistent with the others and with the file's size, the reserved
 * bytes zero, a payload hash that is not all zeros.  verify=1 also hashes
 * the payload (eng_shard_verify).  Errors are TLM_EDATA (bad file, the
 * message names it and what is wrong) or TLM_EIO. */
int eng_shard_open(eng_shard *s, const char *path, int verify, tlm_err *e);
void eng_shard_close(eng_shard *s);

static inline uint32_t eng_shard_token(const eng_shard *s, uint64_t i)
{
    const uint8_t *p = s->map + ENG_SHARD_HEADER + i * s->token_bytes;
    return s->token_bytes == 2 ? (uint32_t)p[0] | (uint32_t)p[1] << 8
                               : (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Copy tokens [start, start+n) into out; TLM_EDATA when out of bounds. */
int eng_shard_read(const eng_shard *s, uint64_t start, size_t n, int32_t *out, tlm_err *e);

typedef struct eng_shard_writer eng_shard_writer;

/* token_bytes 0 picks 2 when vocab <= 65536, else 4. */
int eng_shard_writer_open(eng_shard_writer **w, const char *path, uint32_t token_bytes, uint32_t vocab,
                          const char *tokenizer, const uint8_t tokenizer_sha256[32], tlm_err *e);
/* Every token must be < vocab (TLM_EDATA otherwise). */
int eng_shard_writer_append(eng_shard_writer *w, const uint32_t *tokens, size_t n, tlm_err *e);
uint64_t eng_shard_writer_count(const eng_shard_writer *w);
/* Finish: header with hashes, fsync, rename into place, fsync the folder. */
int eng_shard_writer_close(eng_shard_writer *w, tlm_err *e);
/* Give up: remove the temp file. */
void eng_shard_writer_abort(eng_shard_writer *w);

/* A split: one shard file, or every *.tlmtok in a folder (name order). */
typedef struct eng_shardset {
    eng_shard *shards;
    int n;
    uint64_t n_tokens;   /* sum over shards */
} eng_shardset;

/* verify=1 hashes every shard (eng_shard_verify), in parallel over the
 * OpenMP threads when there are several. */
int eng_shardset_open(eng_shardset *set, const char *path, int verify, tlm_err *e);
/* What verify=1 does, on a set opened without it. */
int eng_shardset_verify(const eng_shardset *set, tlm_err *e);
void eng_shardset_close(eng_shardset *set);

#endif
