/* shard.c: token shards (format in shard.h).  Reading maps the file; writing
 * streams tokens to a temp file and publishes it with a rename. */
#include "engine/format/shard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/checked.h"
#include "common/fileio.h"
#include "common/sha256.h"

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The header's own consistency: every field against the others and
 * against the file's size.  The payload hash covers only the tokens, so
 * these checks are all that stands between a flipped header bit and a
 * wrong vocabulary or count. */
static int check_header(eng_shard *s, tlm_err *e)
{
    const char *path = s->path;
    const uint8_t *h = s->map;
    if (memcmp(h, ENG_SHARD_MAGIC, 8) != 0)
        return tlm_errf(e, TLM_EDATA, "%s: not a TLM token shard (bad magic)", path);
    if (rd32(h + 8) != ENG_SHARD_VERSION)
        return tlm_errf(e, TLM_EDATA, "%s: shard format version %u, this build reads version %d", path, rd32(h + 8),
                        ENG_SHARD_VERSION);
    if (rd32(h + 12) != ENG_SHARD_HEADER)
        return tlm_errf(e, TLM_EDATA, "%s: header size %u, expected %d", path, rd32(h + 12), ENG_SHARD_HEADER);
    s->token_bytes = rd32(h + 16);
    s->vocab = rd32(h + 20);
    s->n_tokens = rd64(h + 24);
    memcpy(s->tokenizer, h + 32, ENG_SHARD_TOKNAME);
    s->tokenizer[ENG_SHARD_TOKNAME] = '\0';
    memcpy(s->tokenizer_sha256, h + 96, 32);
    memcpy(s->payload_sha256, h + 128, 32);
    if (s->token_bytes != 2 && s->token_bytes != 4)
        return tlm_errf(e, TLM_EDATA, "%s: token width %u bytes (2 or 4 expected)", path, s->token_bytes);
    if (s->vocab == 0 || (s->token_bytes == 2 && s->vocab > 65536))
        return tlm_errf(e, TLM_EDATA, "%s: vocabulary %u does not fit %u-byte tokens", path, s->vocab,
                        s->token_bytes);
    uint64_t payload, total;
    if (tlm_mul_u64(s->n_tokens, s->token_bytes, &payload) || tlm_add_u64(payload, ENG_SHARD_HEADER, &total) ||
        total != s->map_len)
        return tlm_errf(e, TLM_EDATA,
                        "%s: header says %llu tokens of %u bytes but the file holds %zu bytes of tokens (truncated "
                        "or corrupt)",
                        path, (unsigned long long)s->n_tokens, s->token_bytes, s->map_len - ENG_SHARD_HEADER);
    size_t name_len = strnlen(s->tokenizer, ENG_SHARD_TOKNAME);
    if (!name_len)
        return tlm_errf(e, TLM_EDATA, "%s: no tokenizer name in the header", path);
    for (size_t i = 0; i < name_len; i++)
        if (s->tokenizer[i] < 0x21 || s->tokenizer[i] > 0x7e)
            return tlm_errf(e, TLM_EDATA, "%s: the tokenizer name in the header is not printable (byte %zu is 0x%02x)",
                            path, i, (unsigned)(uint8_t)s->tokenizer[i]);
    if (!all_zero(h + 32 + name_len, ENG_SHARD_TOKNAME - name_len))
        return tlm_errf(e, TLM_EDATA, "%s: the tokenizer name in the header is not NUL-padded", path);
    if (!all_zero(h + 160, 32))
        return tlm_errf(e, TLM_EDATA, "%s: the reserved header bytes 160-191 are not zero (corrupt, or a newer "
                        "format)", path);
    if (all_zero(s->payload_sha256, 32))
        return tlm_errf(e, TLM_EDATA, "%s: the header's payload SHA-256 is all zeros: the shard has no checksum "
                        "(corrupt, or not written by TLM; re-create it with tlm-data)", path);
    return 0;
}

/* Hash the payload against the header's SHA-256 and check every token
 * against the header's vocabulary (TLM_EDATA naming the shard and what
 * differs).  Costs a pass over the file at the speed of common/sha256.c. */
static int eng_shard_verify(const eng_shard *s, tlm_err *e)
{
    uint8_t d[32];
    tlm_sha256 ctx;
    tlm_sha256_init(&ctx);
    tlm_sha256_update(&ctx, s->map + ENG_SHARD_HEADER, s->map_len - ENG_SHARD_HEADER);
    tlm_sha256_final(&ctx, d);
    if (memcmp(d, s->payload_sha256, 32) != 0) {
        char got[65], want[65];
        tlm_hex(d, 32, got);
        tlm_hex(s->payload_sha256, 32, want);
        return tlm_errf(e, TLM_EDATA,
                        "%s: the token payload's SHA-256 is %.16s..., the header says %.16s... (corrupt shard: "
                        "re-create it with tlm-data)",
                        s->path, got, want);
    }
    for (uint64_t i = 0; i < s->n_tokens; i++)
        if (eng_shard_token(s, i) >= s->vocab)
            return tlm_errf(e, TLM_EDATA, "%s: token %llu is %u, outside the header's vocabulary of %u", s->path,
                            (unsigned long long)i, eng_shard_token(s, i), s->vocab);
    return 0;
}

int eng_shard_open(eng_shard *s, const char *path, int verify, tlm_err *e)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    snprintf(s->path, sizeof s->path, "%s", path);
    int rc = tlm_map_input(path, TLM_EDATA, ENG_SHARD_HEADER, "a shard header", &s->fd, &s->map, &s->map_len, e);
    if (rc)
        return rc;
    rc = check_header(s, e);
    if (!rc && verify)
        rc = eng_shard_verify(s, e);
    if (rc)
        eng_shard_close(s);
    return rc;
}

void eng_shard_close(eng_shard *s)
{
    if (s->map)
        munmap((void *)s->map, s->map_len);
    if (s->fd >= 0)
        close(s->fd);
    s->map = NULL;
    s->fd = -1;
}

int eng_shard_read(const eng_shard *s, uint64_t start, size_t n, int32_t *out, tlm_err *e)
{
    if (start > s->n_tokens || n > s->n_tokens - start)
        return tlm_errf(e, TLM_EDATA, "%s: read of %zu tokens at %llu is past the end (%llu tokens)", s->path, n,
                        (unsigned long long)start, (unsigned long long)s->n_tokens);
    for (size_t i = 0; i < n; i++)
        out[i] = (int32_t)eng_shard_token(s, start + i);
    return 0;
}

/* ------------------------------------------------------------ writer */
struct eng_shard_writer {
    tlm_atomic a; /* written as path.tmp.PID, renamed into place by close */
    uint32_t token_bytes, vocab;
    uint64_t n;
    char tokenizer[ENG_SHARD_TOKNAME];
    uint8_t tok_sha[32];
    tlm_sha256 payload;
};

int eng_shard_writer_open(eng_shard_writer **out, const char *path, uint32_t token_bytes, uint32_t vocab,
                          const char *tokenizer, const uint8_t tokenizer_sha256[32], tlm_err *e)
{
    *out = NULL;
    if (!token_bytes)
        token_bytes = vocab <= 65536 ? 2 : 4;
    if ((token_bytes != 2 && token_bytes != 4) || vocab == 0 || (token_bytes == 2 && vocab > 65536))
        return tlm_errf(e, TLM_ECONFIG, "%s: vocabulary %u with %u-byte tokens is not a valid shard", path, vocab,
                        token_bytes);
    if (strlen(tokenizer) == 0 || strlen(tokenizer) > ENG_SHARD_TOKNAME)
        return tlm_errf(e, TLM_ECONFIG, "%s: tokenizer name must be 1 to %d bytes", path, ENG_SHARD_TOKNAME);
    eng_shard_writer *w = calloc(1, sizeof *w);
    if (!w)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    /* a cut name would write the shard somewhere else: tlm_atomic_open refuses it */
    int rc = tlm_atomic_open(&w->a, path, e);
    if (rc) {
        free(w);
        return rc;
    }
    w->token_bytes = token_bytes;
    w->vocab = vocab;
    memcpy(w->tokenizer, tokenizer, strlen(tokenizer)); /* NUL padding comes from calloc */
    if (tokenizer_sha256)
        memcpy(w->tok_sha, tokenizer_sha256, 32);
    tlm_sha256_init(&w->payload);
    uint8_t zero[ENG_SHARD_HEADER] = {0};
    if (fwrite(zero, 1, sizeof zero, w->a.f) != sizeof zero) {
        eng_shard_writer_abort(w);
        return tlm_errf(e, TLM_EIO, "%s: write failed", path);
    }
    *out = w;
    return 0;
}

int eng_shard_writer_append(eng_shard_writer *w, const uint32_t *tokens, size_t n, tlm_err *e)
{
    uint8_t buf[4096];
    size_t per = sizeof buf / w->token_bytes;
    for (size_t i = 0; i < n; i += per) {
        size_t m = n - i < per ? n - i : per;
        for (size_t j = 0; j < m; j++) {
            uint32_t t = tokens[i + j];
            if (t >= w->vocab)
                return tlm_errf(e, TLM_EDATA, "%s: token %u is outside the vocabulary of %u", w->a.path, t,
                                w->vocab);
            for (uint32_t b = 0; b < w->token_bytes; b++)
                buf[j * w->token_bytes + b] = (uint8_t)(t >> (8 * b));
        }
        size_t bytes = m * w->token_bytes;
        tlm_sha256_update(&w->payload, buf, bytes);
        if (fwrite(buf, 1, bytes, w->a.f) != bytes)
            return tlm_errf(e, TLM_EIO, "%s: write failed: %s", w->a.tmp, strerror(errno));
    }
    w->n += n;
    return 0;
}

uint64_t eng_shard_writer_count(const eng_shard_writer *w) { return w->n; }

int eng_shard_writer_close(eng_shard_writer *w, tlm_err *e)
{
    uint8_t h[ENG_SHARD_HEADER] = {0};
    memcpy(h, ENG_SHARD_MAGIC, 8);
    wr32(h + 8, ENG_SHARD_VERSION);
    wr32(h + 12, ENG_SHARD_HEADER);
    wr32(h + 16, w->token_bytes);
    wr32(h + 20, w->vocab);
    wr64(h + 24, w->n);
    memcpy(h + 32, w->tokenizer, strnlen(w->tokenizer, ENG_SHARD_TOKNAME));
    memcpy(h + 96, w->tok_sha, 32);
    tlm_sha256_final(&w->payload, h + 128);
    int rc;
    if (fseek(w->a.f, 0, SEEK_SET) || fwrite(h, 1, sizeof h, w->a.f) != sizeof h) {
        rc = tlm_errf(e, TLM_EIO, "%s: write failed: %s", w->a.tmp, strerror(errno));
        tlm_atomic_abort(&w->a);
    } else
        rc = tlm_atomic_commit(&w->a, e); /* flush, fsync, close, rename, fsync the folder */
    free(w);
    return rc;
}

void eng_shard_writer_abort(eng_shard_writer *w)
{
    if (!w)
        return;
    tlm_atomic_abort(&w->a);
    free(w);
}

/* ------------------------------------------------------------ sets */
/* Every shard's payload hash, shards spread over the engine's threads
 * (hashing is the whole cost of opening a large dataset: docs/data.md);
 * the first failure in name order is the one reported. */
int eng_shardset_verify(const eng_shardset *set, tlm_err *e)
{
    int *rcs = calloc((size_t)set->n, sizeof *rcs);
    tlm_err *errs = calloc((size_t)set->n, sizeof *errs);
    if (!rcs || !errs) {
        free(rcs);
        free(errs);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) if (set->n > 1)
#endif
    for (int i = 0; i < set->n; i++)
        rcs[i] = eng_shard_verify(&set->shards[i], &errs[i]);
    int rc = 0;
    for (int i = 0; i < set->n && !rc; i++)
        if ((rc = rcs[i]) && e)
            *e = errs[i];
    free(rcs);
    free(errs);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int eng_shard_is_name(const char *name)
{
    size_t len = strlen(name), ext = sizeof ENG_SHARD_EXT - 1;
    return len > ext && !strcmp(name + len - ext, ENG_SHARD_EXT);
}

int eng_shardset_open(eng_shardset *set, const char *path, int verify, tlm_err *e)
{
    memset(set, 0, sizeof *set);
    struct stat st;
    if (stat(path, &st))
        return tlm_errf(e, TLM_EDATA, "%s: %s", path, strerror(errno));
    char **names = NULL;
    int n = 0, rc = 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            return tlm_errf(e, TLM_EIO, "%s: cannot list: %s", path, strerror(errno));
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!eng_shard_is_name(de->d_name))
                continue;
            size_t len = strlen(de->d_name);
            char **grown = realloc(names, (size_t)(n + 1) * sizeof *names);
            if (!grown) {
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                break;
            }
            names = grown;
            size_t need = strlen(path) + len + 2;
            names[n] = malloc(need);
            if (!names[n]) {
                rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
                break;
            }
            snprintf(names[n++], need, "%s/%s", path, de->d_name);
        }
        closedir(d);
        if (!rc && n == 0)
            rc = tlm_errf(e, TLM_EDATA, "%s: no .tlmtok shards in this folder (make them with tlm-data)", path);
        if (!rc)
            qsort(names, (size_t)n, sizeof *names, cmp_str);
    } else {
        names = malloc(sizeof *names);
        if (!names || !(names[0] = strdup(path)))
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
        else
            n = 1;
    }
    if (!rc) {
        set->shards = calloc((size_t)n, sizeof *set->shards);
        if (!set->shards)
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    for (int i = 0; !rc && i < n; i++) {
        rc = eng_shard_open(&set->shards[i], names[i], 0, e);
        if (rc)
            break;
        set->n = i + 1;
        const eng_shard *a = &set->shards[0], *b = &set->shards[i];
        if (strcmp(a->tokenizer, b->tokenizer) || memcmp(a->tokenizer_sha256, b->tokenizer_sha256, 32) ||
            a->vocab != b->vocab)
            rc = tlm_errf(e, TLM_EDATA, "%s: tokenizer %s (vocab %u) differs from %s's %s (vocab %u)", b->path,
                          b->tokenizer, b->vocab, a->path, a->tokenizer, a->vocab);
        set->n_tokens += b->n_tokens;
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (!rc && verify)
        rc = eng_shardset_verify(set, e);
    if (rc)
        eng_shardset_close(set);
    return rc;
}

void eng_shardset_close(eng_shardset *set)
{
    for (int i = 0; i < set->n; i++)
        eng_shard_close(&set->shards[i]);
    free(set->shards);
    memset(set, 0, sizeof *set);
}
