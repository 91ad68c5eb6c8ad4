/* dp_build.c: `tlm-data build`: text -> a dataset folder
 *
 *   DIR/manifest.json        what was read, how it was split, what was written
 *   DIR/train/NNNNNN.tlmtok  token shards (engine/format/shard.h)
 *   DIR/val/NNNNNN.tlmtok
 *   DIR/<tokenizer>.tiktoken the rank file (BPE tokenizers), or .model /
 *                            .vocab (SentencePiece, llama2), so the dataset
 *                            carries its tokenizer and the engine finds it
 *
 * Split rule: every document (a text file, a JSONL record) is cut into
 * segments of at most --segment-bytes, at the last newline when there is one
 * in the second half of the window; segments are numbered in input order
 * (sources sorted by path) and segment i goes to validation exactly when
 * floor((i+1)*f) > floor(i*f), f = --val-fraction in millionths: an even,
 * deterministic interleave with exactly the requested share.  After a
 * document's last segment the tokenizer's end-of-text token (if it has one)
 * is written to the same split.
 *
 * The dataset is assembled in a sibling temp folder DIR.tmp.PID and renamed
 * into place, so a failed or interrupted build leaves the previous dataset
 * intact.  SIGTERM and SIGINT stop the build at the next segment: the shard
 * being written and the temp folder are removed and the program exits
 * 128 + the signal's number.  A build first removes the DIR.tmp.PID folders
 * of builds whose process is gone (a SIGKILL, a crash), saying so. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "dataprep/dataprep.h"
#include "common/cfgtree.h"
#include "engine/config/config.h"
#include "common/fileio.h"
#include "common/sha256.h"
#include "common/vec.h"
#include "engine/format/manifest.h"
#include "engine/format/shard.h"
#include "engine/tok/tokenizer.h"

typedef struct shard_info {
    char file[64];
    uint64_t tokens;
    uint8_t sha[32];
} shard_info;

typedef struct split_out {
    const char *name;
    char dir[1200];
    eng_shard_writer *w;
    char cur[1300];
    int index;
    uint64_t tokens, segments, bytes, documents;
    shard_info *shards;
    int n_shards;
} split_out;

/* A segment waiting in a batch (--threads > 1): encoded by thread
 * (index % threads), appended in order. */
typedef struct pending {
    size_t off, len;        /* in the batch's bytes */
    int val, ends_doc;
    const char *path;       /* for messages */
    uint64_t line;
    eng_tokvec ids;
    int rc;
    tlm_err e;
} pending;

#define BATCH_BYTES (4u << 20)
#define BATCH_SEGMENTS 256
#define MAX_THREADS 64

typedef struct build {
    /* options (OPTS) */
    const char *tokname, *out, *field, *format_name;
    uint64_t segment_bytes, shard_tokens, max_line;
    uint64_t val_ppm;
    int special, raw, separator, train_bpe, threads;
    /* from the options */
    int flags; /* ENG_TOK_* */
    dp_format format;
    /* state */
    eng_tok *tok;
    char stage[1100];
    dp_sources src;
    split_out split[2]; /* train, val */
    uint64_t seg_index;
    eng_tokvec ids;
    eng_bpe_trainer *trainer;
    dp_progress prog;
    /* --threads > 1: one tokenizer per thread (tok[0] is b->tok) and a batch of segments */
    eng_tok *toks[MAX_THREADS];
    uint8_t *batch;
    size_t batch_len, batch_cap;
    pending pend[BATCH_SEGMENTS];
    int n_pend;
} build;

/* Bounds of --shard-tokens: every shard is one fsync'd file and a training
 * window never crosses a shard (a shard of n tokens holds (n - 1) / seq_len
 * windows), so tiny shards waste files and tokens; a shard is mapped and
 * hashed whole by one thread, so huge ones serialise the loader's check. */
#define SHARD_TOKENS_MIN (1ull << 20)
#define SHARD_TOKENS_MAX (1ull << 32)

/* ------------------------------------------------------------ stopping */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

/* A signal ignored when we started (nohup, a background job of a script)
 * stays ignored, as the shell meant it. */
static void install_stop(void)
{
    static const int sigs[] = {SIGTERM, SIGINT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Checked between segments: TLM_EINTERRUPTED once a stop was asked for. */
static int stopped(tlm_err *e)
{
    if (!stop_signal)
        return 0;
    return tlm_errf(e, TLM_EINTERRUPTED, "stopped by %s", stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
}

static int is_val(const build *b, uint64_t i)
{
    return (i + 1) * b->val_ppm / 1000000 > i * b->val_ppm / 1000000;
}

/* ------------------------------------------------------------ shards */
static int split_close_shard(build *b, split_out *s, tlm_err *e)
{
    if (!s->w)
        return 0;
    int rc = eng_shard_writer_close(s->w, e);
    s->w = NULL;
    if (rc)
        return rc;
    eng_shard sh;
    if ((rc = eng_shard_open(&sh, s->cur, 0, e)))
        return rc;
    shard_info *g = realloc(s->shards, (size_t)(s->n_shards + 1) * sizeof *g);
    if (!g) {
        eng_shard_close(&sh);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    s->shards = g;
    shard_info *si = &s->shards[s->n_shards++];
    snprintf(si->file, sizeof si->file, "%s/%06d" ENG_SHARD_EXT, s->name, s->index - 1);
    si->tokens = sh.n_tokens;
    memcpy(si->sha, sh.payload_sha256, 32);
    eng_shard_close(&sh);
    (void)b;
    return 0;
}

static int split_append(build *b, split_out *s, const uint32_t *ids, size_t n, tlm_err *e)
{
    int rc;
    while (n) {
        if (!s->w) {
            if (s->index == 0 && (rc = tlm_mkdir_p(s->dir, e)))
                return rc;
            snprintf(s->cur, sizeof s->cur, "%s/%06d" ENG_SHARD_EXT, s->dir, s->index++);
            if ((rc = eng_shard_writer_open(&s->w, s->cur, 0, eng_tok_vocab(b->tok), eng_tok_name(b->tok),
                                            eng_tok_sha256(b->tok), e)))
                return rc;
        }
        uint64_t room = b->shard_tokens - eng_shard_writer_count(s->w);
        size_t m = n < room ? n : (size_t)room;
        if ((rc = eng_shard_writer_append(s->w, ids, m, e)))
            return rc;
        s->tokens += m;
        ids += m;
        n -= m;
        if (eng_shard_writer_count(s->w) >= b->shard_tokens && (rc = split_close_shard(b, s, e)))
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ documents */
/* End of the segment that starts at pos: at most seg bytes, at the last
 * newline in the window's second half, else not inside a UTF-8 character. */
static size_t segment_end(const uint8_t *doc, size_t len, size_t pos, uint64_t seg)
{
    if (len - pos <= seg)
        return len;
    size_t end = pos + (size_t)seg;
    for (size_t k = end; k > pos + (size_t)seg / 2; k--)
        if (doc[k - 1] == '\n')
            return k;
    while (end > pos + 1 && (doc[end] & 0xC0) == 0x80)
        end--;
    return end;
}

/* ------------------------------------------------------------ threads */
typedef struct worker_arg {
    build *b;
    int k;
} worker_arg;

/* Thread k encodes the pending segments k, k + threads, ... with its own tokenizer. */
static void *encode_share(void *arg)
{
    worker_arg *w = arg;
    build *b = w->b;
    for (int i = w->k; i < b->n_pend; i += b->threads) {
        pending *p = &b->pend[i];
        p->ids.n = 0;
        p->rc = eng_tok_encode(b->toks[w->k], b->batch + p->off, p->len, b->flags, &p->ids, &p->e);
    }
    return NULL;
}

/* Encode the batch on all threads, then append it in input order. */
static int batch_flush(build *b, tlm_err *e)
{
    if (b->n_pend == 0)
        return 0;
    pthread_t th[MAX_THREADS];
    worker_arg wa[MAX_THREADS];
    int started = 0, rc = 0;
    for (int k = 1; k < b->threads; k++) {
        wa[k] = (worker_arg){b, k};
        if (pthread_create(&th[k], NULL, encode_share, &wa[k]))
            break;
        started = k;
    }
    wa[0] = (worker_arg){b, 0};
    encode_share(&wa[0]);
    for (int k = 1; k <= started; k++)
        pthread_join(th[k], NULL);
    for (int k = started + 1; k < b->threads; k++) { /* a thread that could not start: its share here */
        wa[k] = (worker_arg){b, k};
        encode_share(&wa[k]);
    }
    int32_t eot = eng_tok_eot(b->tok);
    for (int i = 0; i < b->n_pend && !rc; i++) {
        pending *p = &b->pend[i];
        split_out *s = &b->split[p->val];
        if (p->rc) {
            *e = p->e;
            rc = tlm_err_prefix(e, "%s%s%.0llu", p->path, p->line ? ":" : "", (unsigned long long)p->line);
        } else if ((rc = split_append(b, s, p->ids.ids, p->ids.n, e))) {
            rc = tlm_err_prefix(e, "%s%s%.0llu", p->path, p->line ? ":" : "", (unsigned long long)p->line);
        } else if (p->ends_doc && b->separator && eot >= 0) {
            uint32_t id = (uint32_t)eot;
            rc = split_append(b, s, &id, 1, e);
        }
    }
    b->n_pend = 0;
    b->batch_len = 0;
    return rc;
}

static int batch_add(build *b, const uint8_t *p, size_t n, int val, const char *path, uint64_t line, tlm_err *e)
{
    int rc;
    if ((b->n_pend == BATCH_SEGMENTS || (b->batch_len > 0 && b->batch_len + n > BATCH_BYTES)) &&
        (rc = batch_flush(b, e)))
        return rc;
    if (tlm_grow(&b->batch, &b->batch_cap, b->batch_len + n, 1, BATCH_BYTES))
        return tlm_errf(e, TLM_ENOMEM, "out of memory (a batch of %zu bytes)", b->batch_len + n);
    pending *q = &b->pend[b->n_pend++];
    q->off = b->batch_len;
    q->len = n;
    q->val = val;
    q->ends_doc = 0;
    q->path = path;
    q->line = line;
    memcpy(b->batch + b->batch_len, p, n);
    b->batch_len += n;
    return 0;
}

/* The tokenizers of threads 1.. : copies of thread 0's. */
static int open_thread_toks(build *b, tlm_err *e)
{
    b->toks[0] = b->tok;
    for (int k = 1; k < b->threads; k++) {
        int rc = eng_tok_clone(&b->toks[k], b->tok, e);
        if (rc)
            return rc;
    }
    return 0;
}

static int on_doc(void *arg, const dp_source *src, uint64_t line, const uint8_t *doc, size_t len, tlm_err *e)
{
    build *b = arg;
    (void)src;
    (void)line;
    int rc, last = -1;
    for (size_t pos = 0; pos < len;) {
        if ((rc = stopped(e)))
            return rc;
        size_t end = segment_end(doc, len, pos, b->segment_bytes);
        int v = is_val(b, b->seg_index++);
        split_out *s = &b->split[v];
        if (b->trainer) {
            if (!v && (rc = eng_bpe_trainer_feed(b->trainer, doc + pos, end - pos, e)))
                return rc;
        } else if (b->threads > 1) {
            if ((rc = batch_add(b, doc + pos, end - pos, v, src->path, line, e)))
                return rc;
        } else {
            b->ids.n = 0;
            if ((rc = eng_tok_encode(b->tok, doc + pos, end - pos, b->flags, &b->ids, e)) ||
                (rc = split_append(b, s, b->ids.ids, b->ids.n, e)))
                return tlm_err_prefix(e, "%s%s%.0llu", src->path, line ? ":" : "",
                                      (unsigned long long)line);
        }
        s->segments++;
        s->bytes += end - pos;
        last = v;
        pos = end;
    }
    if (last >= 0 && !b->trainer && b->threads > 1) {
        b->split[last].documents++;
        b->pend[b->n_pend - 1].ends_doc = 1; /* the separator follows its ids when the batch is written */
    } else if (last >= 0 && !b->trainer) {
        b->split[last].documents++;
        int32_t eot = eng_tok_eot(b->tok);
        if (b->separator && eot >= 0) {
            uint32_t id = (uint32_t)eot;
            if ((rc = split_append(b, &b->split[last], &id, 1, e)))
                return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ folders */
/* DIR must be absent, empty, or a dataset (has manifest.json): never
 * replace a folder that tlm-data did not make. */
static int check_out(const char *out, tlm_err *e)
{
    struct stat st;
    if (stat(out, &st))
        return errno == ENOENT ? 0 : tlm_errf(e, TLM_EIO, "%s: %s", out, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tlm_errf(e, TLM_ECONFIG, "--out %s exists and is not a folder", out);
    char m[1200];
    snprintf(m, sizeof m, "%s/" ENG_MANIFEST_FILE, out);
    if (access(m, F_OK) == 0)
        return 0;
    int rc = rmdir(out); /* only succeeds when empty */
    if (rc)
        return tlm_errf(e, TLM_ECONFIG, "--out %s is a folder that is not a tlm-data dataset (no manifest.json); "
                        "refusing to replace it", out);
    return 0;
}

/* Is `name` exactly "<base><tag><pid>" (tag ".tmp." or ".old.")?  Returns
 * the pid, or 0. */
static long stage_pid(const char *name, const char *base, const char *tag)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) || strncmp(name + bl, tag, 5))
        return 0;
    const char *p = name + bl + 5;
    long pid = 0;
    if (!*p || *p == '0')
        return 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || pid > 1000000000L)
            return 0;
        pid = pid * 10 + (*p - '0');
    }
    return pid;
}

/* The extension a tokenizer file keeps in the dataset: .tiktoken for rank
 * files; a SentencePiece model stays .model, its vocabulary file .vocab. */
static const char *tok_file_ext(const char *found, const eng_tok *t)
{
    if (eng_tok_kind_of(t) != ENG_TOK_SPM)
        return ".tiktoken";
    size_t n = strlen(found);
    return n > 6 && !strcmp(found + n - 6, ".model") ? ".model" : ".vocab";
}

static int is_tok_file(const char *n, size_t l)
{
    return (l > 9 && !strcmp(n + l - 9, ".tiktoken")) || (l > 6 && !strcmp(n + l - 6, ".model")) ||
           (l > 6 && !strcmp(n + l - 6, ".vocab"));
}

/* What tlm-data leaves in a stage: train/ and val/ holding shards (and
 * their temp files), manifest.json, the tokenizer file (*.tiktoken, *.model,
 * *.vocab), temp files.  Anything else
 * means the folder is not ours to delete. */
static int only_ours(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int ok = 1;
    struct dirent *de;
    while (ok && (de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        char path[2400];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        struct stat st;
        if (lstat(path, &st)) {
            ok = 0;
            break;
        }
        size_t l = strlen(n);
        int tmpfile = strstr(n, ".tmp.") != NULL;
        if (S_ISDIR(st.st_mode))
            ok = depth == 0 && (!strcmp(n, "train") || !strcmp(n, "val")) && only_ours(path, 1);
        else if (!S_ISREG(st.st_mode))
            ok = 0;
        else if (depth == 1)
            ok = eng_shard_is_name(n) || tmpfile;
        else
            ok = !strncmp(n, ENG_MANIFEST_FILE, strlen(ENG_MANIFEST_FILE)) ||
                 is_tok_file(n, l) || tmpfile;
    }
    closedir(d);
    return ok;
}

/* Remove the DIR.tmp.PID folders beside `out` whose build process is gone
 * (killed, crashed).  Only that exact name pattern, only folders, only
 * when the process no longer exists and the folder holds nothing but what
 * a build writes; each one removed (or kept) is reported on stderr. */
static void remove_stale_stages(const char *out)
{
    char dir[1200], base[1200];
    snprintf(dir, sizeof dir, "%s", out);
    snprintf(base, sizeof base, "%s", out);
    const char *parent = dirname(dir), *name = basename(base);
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        long pid = stage_pid(de->d_name, name, ".tmp."), old = 0;
        if (!pid)
            pid = old = stage_pid(de->d_name, name, ".old.");
        if (!pid || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive (or not ours to signal): a build in progress */
        char path[2500];
        snprintf(path, sizeof path, "%s/%s", parent, de->d_name);
        struct stat st;
        if (lstat(path, &st) || !S_ISDIR(st.st_mode))
            continue;
        if (old) {
            /* the previous dataset, moved aside by a build killed before it
             * put the new one in place: the only copy when DIR is missing */
            if (access(out, F_OK) != 0 && errno == ENOENT && rename(path, out) == 0)
                fprintf(stderr, "tlm-data: restored %s from %s, left by an interrupted build (process %ld is "
                        "gone)\n", out, path, pid);
            else
                fprintf(stderr, "tlm-data: %s holds the dataset an interrupted build replaced (process %ld is "
                        "gone); kept: remove it when you no longer need it\n", path, pid);
            continue;
        }
        if (!only_ours(path, 0)) {
            fprintf(stderr, "tlm-data: %s looks like the temp folder of an interrupted build (process %ld is gone) "
                    "but holds files tlm-data does not write; leaving it\n", path, pid);
            continue;
        }
        (void)tlm_rm_tree(path);
        fprintf(stderr, "tlm-data: removed %s, left by an interrupted build (process %ld is gone)\n", path, pid);
    }
    closedir(d);
}

static int copy_file(const char *from, const char *to, tlm_err *e)
{
    char *data = NULL;
    size_t len = 0;
    int rc = tlm_read_file(from, 1u << 30, &data, &len, e);
    if (!rc)
        rc = tlm_write_file_atomic(to, data, len, e);
    free(data);
    return rc;
}

/* ------------------------------------------------------------ manifest */
static json_t *hexj(const uint8_t *sha)
{
    char h[65];
    tlm_hex(sha, 32, h);
    return json_string(h);
}

static int write_manifest(build *b, const char *tokfile, tlm_err *e)
{
    json_t *m = json_object(), *t = json_object(), *sp = json_object(), *srcs = json_array(), *splits = json_object();
    json_object_set_new(m, "format", json_string(ENG_MANIFEST_FORMAT)); /* what engine/format/manifest.c reads */
    json_object_set_new(m, "version", json_integer(ENG_MANIFEST_VERSION));
    json_object_set_new(t, "name", json_string(eng_tok_name(b->tok)));
    eng_tok_kind kind = eng_tok_kind_of(b->tok);
    json_object_set_new(t, "kind", json_string(kind == ENG_TOK_BYTES ? "bytes"
                                               : kind == ENG_TOK_SPM ? "sentencepiece" : "bpe"));
    json_object_set_new(t, "vocab", json_integer(eng_tok_vocab(b->tok)));
    json_object_set_new(t, "sha256", hexj(eng_tok_sha256(b->tok)));
    json_object_set_new(t, "file", tokfile ? json_string(tokfile) : json_null());
    int32_t eot = eng_tok_eot(b->tok);
    json_object_set_new(t, "eot", eot >= 0 ? json_integer(eot) : json_null());
    json_object_set_new(t, "invalid_utf8", json_string(b->flags & ENG_TOK_RAW_BYTES ? "raw-bytes" : "replace"));
    json_object_set_new(t, "special_tokens_in_text",
                        json_string(b->flags & ENG_TOK_ALLOW_SPECIAL ? "encoded as special" : "encoded as text"));
    json_object_set_new(m, "tokenizer", t);
    size_t sl = 0;
    const char *sep = NULL;
    if (b->separator && eot >= 0)
        sep = (const char *)eng_tok_piece(b->tok, (uint32_t)eot, &sl);
    json_object_set_new(m, "document_separator", sep ? json_stringn(sep, sl) : json_string("none"));
    json_object_set_new(sp, "rule", json_string("documents are cut into segments of at most segment_bytes (at a "
                                                "newline when possible); segments are numbered in input order and "
                                                "segment i is validation when floor((i+1)*val_ppm/1e6) > "
                                                "floor(i*val_ppm/1e6)"));
    json_object_set_new(sp, "val_fraction", json_real((double)b->val_ppm / 1e6));
    json_object_set_new(sp, "val_ppm", json_integer((json_int_t)b->val_ppm));
    json_object_set_new(sp, "segment_bytes", json_integer((json_int_t)b->segment_bytes));
    json_object_set_new(sp, "segments", json_integer((json_int_t)b->seg_index));
    json_object_set_new(m, "split", sp);
    for (size_t i = 0; i < b->src.n; i++) {
        const dp_source *s = &b->src.v[i];
        json_t *o = json_object();
        json_object_set_new(o, "path", json_string(s->path));
        json_object_set_new(o, "format", json_string(s->format == DP_JSONL ? "jsonl" : "text"));
        if (s->format == DP_JSONL)
            json_object_set_new(o, "field", json_string(b->field));
        json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
        json_object_set_new(o, "sha256", hexj(s->sha256));
        json_object_set_new(o, "documents", json_integer((json_int_t)s->documents));
        json_array_append_new(srcs, o);
    }
    json_object_set_new(m, "sources", srcs);
    for (int k = 0; k < 2; k++) {
        split_out *s = &b->split[k];
        json_t *o = json_object(), *sh = json_array();
        json_object_set_new(o, "tokens", json_integer((json_int_t)s->tokens));
        json_object_set_new(o, "bytes", json_integer((json_int_t)s->bytes));
        json_object_set_new(o, "segments", json_integer((json_int_t)s->segments));
        json_object_set_new(o, "documents_ended", json_integer((json_int_t)s->documents));
        json_object_set_new(o, "bytes_per_token", json_real(s->tokens ? (double)s->bytes / (double)s->tokens : 0));
        for (int i = 0; i < s->n_shards; i++) {
            json_t *x = json_object();
            json_object_set_new(x, "file", json_string(s->shards[i].file));
            json_object_set_new(x, "tokens", json_integer((json_int_t)s->shards[i].tokens));
            json_object_set_new(x, "sha256", hexj(s->shards[i].sha));
            json_array_append_new(sh, x);
        }
        json_object_set_new(o, "shards", sh);
        json_object_set_new(splits, s->name, o);
    }
    json_object_set_new(m, "splits", splits);
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(m);
    if (!text)
        return tlm_errf(e, TLM_ENOMEM, "out of memory (manifest)");
    size_t n = strlen(text);
    char path[1300];
    snprintf(path, sizeof path, "%s/" ENG_MANIFEST_FILE, b->stage);
    char *withnl = malloc(n + 2);
    int rc;
    if (!withnl) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory (manifest)");
    } else {
        memcpy(withnl, text, n);
        withnl[n] = '\n';
        rc = tlm_write_file_atomic(path, withnl, n + 1, e);
    }
    free(withnl);
    free(text);
    return rc;
}

/* ------------------------------------------------------------ command */
static const char build_about[] =
    "Reads text files, folders of them (recursively, in name order, hidden\n"
    "entries skipped) and JSONL files, and writes a dataset folder:\n"
    "DIR/manifest.json, DIR/train/*.tlmtok, DIR/val/*.tlmtok and the tokenizer\n"
    "file, DIR/NAME.tiktoken (BPE) or DIR/llama2.model|vocab.  Point a job at\n"
    "it with `data: {train: DIR/train, val: DIR/val}` and the same `tokenizer:`.\n";

static const char build_tail[] = "A progress bar is drawn when stderr is a terminal, plain lines otherwise.\n";

static int val_fraction_arg(const tlm_opt *row, const char *val, void *opts, tlm_err *e)
{
    double f = -1;
    (void)row;
    if (tlm_cfg_parse_number_text(val, &f) != TLM_CFG_NUM_OK || !(f >= 0 && f < 1))
        return tlm_errf(e, TLM_ECONFIG, "--val-fraction must be a number in [0, 1)");
    ((build *)opts)->val_ppm = (uint64_t)(f * 1e6 + 0.5);
    return 0;
}

/* --segment-bytes, --max-line: bytes with an optional k, M or G, at least the row's lo */
static int bytes_arg(const tlm_opt *row, const char *val, void *opts, tlm_err *e)
{
    uint64_t *v = (uint64_t *)((char *)opts + row->off);
    if (dp_parse_size(val, v) || *v < (uint64_t)row->lo)
        return tlm_errf(e, TLM_ECONFIG,
                        "--%s %s: expected a whole number of bytes, at least %.0f, with an optional k, M or G "
                        "(e.g. %s)",
                        row->name, val, row->lo, row->def);
    return 0;
}

static int shard_tokens_arg(const tlm_opt *row, const char *val, void *opts, tlm_err *e)
{
    uint64_t *v = (uint64_t *)((char *)opts + row->off);
    (void)row;
    if (dp_parse_size(val, v) || *v < SHARD_TOKENS_MIN || *v > SHARD_TOKENS_MAX)
        return tlm_errf(e, TLM_ECONFIG,
                        "--shard-tokens %s is out of range: give a count from 1M (%llu) to 4G (%llu) tokens, e.g. "
                        "32M (every shard is one fsync'd file, a training window never crosses shards, and one "
                        "thread hashes a whole shard when training opens it)",
                        val, SHARD_TOKENS_MIN, SHARD_TOKENS_MAX);
    return 0;
}

#define O(m) offsetof(build, m)
static const tlm_opt OPTS[] = {
    {"tokenizer", "T", TLM_OPT_STR, O(tokname), .flags = TLM_OPT_REQUIRED,
     .help = "bytes, llama3, llama2, bpeN or a tokenizer file; a name is looked up as T.tiktoken (llama2: "
             "llama2.model or llama2.vocab) in DIR and $TLM_TOKENIZERS"},
    {"train-bpe", NULL, TLM_OPT_FLAG, O(train_bpe),
     .help = "(with bpeN) first learn bpeN on the training split of the inputs and store it as DIR/bpeN.tiktoken"},
    {"out", "DIR", TLM_OPT_STR, O(out), .flags = TLM_OPT_REQUIRED,
     .help = "the dataset folder (replaced as a whole when it is one)"},
    {"val-fraction", "F", TLM_OPT_FUNC, O(val_ppm), .parse = val_fraction_arg, .def = "0.01",
     .help = "share of segments for validation, in [0, 1)"},
    {"segment-bytes", "N", TLM_OPT_FUNC, O(segment_bytes), .parse = bytes_arg, .lo = 64, .def = "64k",
     .help = "split unit, at least 64 bytes"},
    {"shard-tokens", "N", TLM_OPT_FUNC, O(shard_tokens), .parse = shard_tokens_arg, .def = "32M",
     .help = "tokens per shard file, 1M to 4G"},
    {"format", NULL, TLM_OPT_CHOICE, O(format_name), .choices = dp_format_names, .def = "auto",
     .help = "auto: *.jsonl is JSONL, else text"},
    {"field", "NAME", TLM_OPT_STR, O(field), .def = "text", .help = "JSONL field with the document text"},
    {"max-line", "N", TLM_OPT_FUNC, O(max_line), .parse = bytes_arg, .lo = 1, .def = "256M",
     .help = "longest JSONL line accepted"},
    {"special", NULL, TLM_OPT_FLAG, O(special), .help = "special-token text in documents becomes special ids"},
    {"raw-bytes", NULL, TLM_OPT_FLAG, O(raw), .help = "keep invalid UTF-8 as byte tokens instead of U+FFFD"},
    {"no-separator", NULL, TLM_OPT_OFF, O(separator), .def = "1",
     .help = "no end-of-text token between documents"},
    {"threads", "N", TLM_OPT_INT, O(threads), .lo = 1, .hi = MAX_THREADS, .def = "1",
     .help = "encode on N threads; the dataset is the same for every N"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

/* The absolute path `path` names, links resolved as far as it exists (the
 * rest, not yet made, appended as written); 0 when it cannot be worked out. */
static int resolve_path(const char *path, char *out, size_t cap)
{
    char head[TLM_PATH_CAP], tail[TLM_PATH_CAP] = "";
    if (snprintf(head, sizeof head, "%s", path) >= (int)sizeof head)
        return 0;
    for (;;) {
        char *r = realpath(head, NULL);
        if (r) {
            int n = snprintf(out, cap, "%s%s", r, tail);
            free(r);
            return n > 0 && (size_t)n < cap;
        }
        char *slash = strrchr(head, '/');
        char part[TLM_PATH_CAP];
        if (snprintf(part, sizeof part, "/%s%s", slash ? slash + 1 : head, tail) >= (int)sizeof part)
            return 0;
        memcpy(tail, part, strlen(part) + 1);
        if (!slash)
            snprintf(head, sizeof head, ".");
        else if (slash == head)
            head[1] = '\0';
        else
            *slash = '\0';
        if (!strcmp(head, ".") && !slash) {
            r = realpath(".", NULL);
            if (!r)
                return 0;
            int n = snprintf(out, cap, "%s%s", r, tail);
            free(r);
            return n > 0 && (size_t)n < cap;
        }
    }
}

/* 1 when the folder --out names is an input folder or lies under one: the
 * next build would walk its own shards and manifest as text. */
static int out_inside(const char *out, const char *input)
{
    struct stat st;
    char o[TLM_PATH_CAP], in[TLM_PATH_CAP];
    if (stat(input, &st) != 0 || !S_ISDIR(st.st_mode) || !resolve_path(out, o, sizeof o) ||
        !resolve_path(input, in, sizeof in))
        return 0;
    size_t n = strlen(in);
    if (n == 1) /* the input is / */
        return 1;
    return !strncmp(o, in, n) && (o[n] == '\0' || o[n] == '/');
}

/* What the options say together, the paths, the inputs: 0 to go on,
 * else the exit status (said on stderr). */
static int check_usage(build *b, const tlm_cli *cli, int argc, char **argv)
{
    if (!b->tokname || !b->out) {
        fprintf(stderr, "tlm-data: --tokenizer and --out are required\n");
        dp_cli_usage(stderr, cli, build_about, build_tail);
        return DP_EXIT_USAGE;
    }
    if (tlm_cli_given(cli, "field") && b->format == DP_TEXT) {
        fprintf(stderr, "tlm-data: --field does nothing with --format text (it names the JSONL field); leave it out\n");
        return DP_EXIT_USAGE;
    }
    /* the stage folder, shards and manifest under --out are built in fixed buffers sized for this */
    tlm_err e;
    if (tlm_path_check_len("--out", b->out, 1000, &e)) {
        fprintf(stderr, "tlm-data: %s\n", e.msg);
        return DP_EXIT_USAGE;
    }
    if (dp_check_tokenizer_arg(b->tokname))
        return DP_EXIT_USAGE;
    if (cli->next >= argc) {
        fprintf(stderr, "tlm-data: no inputs (text files, folders or JSONL files)\n");
        dp_cli_usage(stderr, cli, build_about, build_tail);
        return DP_EXIT_USAGE;
    }
    for (int i = cli->next; i < argc; i++)
        if (out_inside(b->out, argv[i])) {
            fprintf(stderr, "tlm-data: --out %s lies inside the input folder %s: a rebuild would read the dataset "
                    "(shards, manifest, rank file) as text; put --out outside the inputs\n", b->out, argv[i]);
            return DP_EXIT_USAGE;
        }
    return 0;
}

/* -1: --help was printed; 0 to go on; else the exit status */
static int parse(build *b, tlm_cli *cli, int argc, char **argv)
{
    int rc = dp_cli_parse(cli, argc, argv, b, build_about, build_tail);
    if (rc >= 0)
        return rc == DP_EXIT_OK ? -1 : rc;
    b->format = (dp_format)tlm_cli_choice(dp_format_names, b->format_name);
    b->flags = (b->special ? ENG_TOK_ALLOW_SPECIAL : 0) | (b->raw ? ENG_TOK_RAW_BYTES : 0);
    return check_usage(b, cli, argc, argv);
}

/* --train-bpe: learns bpeN on the training split into tokpath (the stage's
 * tokfile), then opens it as the tokenizer; the split counters start
 * again for the encoding pass. */
static int train_tokenizer(build *b, char *tokpath, size_t cap, char *tokfile, size_t fcap, tlm_err *e)
{
    /* the config's own rule for bpeN names (no atoi: "bpe99999999999" overflowed it) */
    int v = strncmp(b->tokname, "bpe", 3) ? 0 : eng_tokenizer_vocab(b->tokname);
    if (v < 257)
        return tlm_errf(e, TLM_ECONFIG, "--train-bpe needs --tokenizer bpeN (N from 257 to %d), not '%s'", 1 << 20,
                        b->tokname);
    snprintf(tokfile, fcap, "%s.tiktoken", b->tokname);
    snprintf(tokpath, cap, "%s/%s", b->stage, tokfile);
    int rc = eng_bpe_trainer_new(&b->trainer, e);
    if (rc)
        return rc;
    dp_progress_start(&b->prog, "training tokenizer: reading", b->src.total_bytes);
    rc = dp_sources_walk(&b->src, b->field, b->max_line, &b->prog, on_doc, b, e);
    dp_progress_end(&b->prog, NULL);
    if (!rc) {
        dp_progress_start(&b->prog, "training tokenizer: merging", (uint64_t)v - 257);
        rc = eng_bpe_trainer_finish(b->trainer, (uint32_t)v, tokpath, NULL, NULL, e);
        char msg[1500];
        snprintf(msg, sizeof msg, "trained %s on %.1f MB of training text", tokfile, (double)b->split[0].bytes / 1e6);
        dp_progress_end(&b->prog, rc ? NULL : msg);
    }
    eng_bpe_trainer_free(b->trainer);
    b->trainer = NULL;
    if (!rc)
        rc = stopped(e); /* merging does not look at signals: stop once it is done */
    b->seg_index = 0;
    for (int k = 0; k < 2; k++)
        b->split[k].tokens = b->split[k].segments = b->split[k].bytes = b->split[k].documents = 0;
    return rc ? rc : eng_tok_open_file(&b->tok, tokpath, b->tokname, e);
}

/* The tokenizer by name; its file (if it has one) copied into the stage as
 * tokfile, under its name with the extension of its format: a job finds
 * it there by name. */
static int open_tokenizer(build *b, char *tokpath, size_t cap, char *tokfile, size_t fcap, tlm_err *e)
{
    int rc = eng_tok_open(&b->tok, b->tokname, b->out, e);
    if (rc || eng_tok_kind_of(b->tok) == ENG_TOK_BYTES)
        return rc;
    char found[1300];
    if ((rc = eng_tok_find(b->tokname, b->out, found, sizeof found, e)))
        return rc;
    snprintf(tokfile, fcap, "%s%s", eng_tok_name(b->tok), tok_file_ext(found, b->tok));
    snprintf(tokpath, cap, "%s/%s", b->stage, tokfile);
    return copy_file(found, tokpath, e);
}

/* The complete dataset in place of --out: the old one (if any) aside, the
 * new one in, the old one gone.  Two renames: a stop asked for meanwhile
 * waits for them. */
static int publish(build *b, tlm_err *e)
{
    char old[1300];
    snprintf(old, sizeof old, "%s.old.%ld", b->out, (long)getpid());
    int had_old = access(b->out, F_OK) == 0;
    if (had_old && rename(b->out, old))
        return tlm_errf(e, TLM_EIO, "cannot move the old %s aside: %s", b->out, strerror(errno));
    if (rename(b->stage, b->out)) {
        int rc = tlm_errf(e, TLM_EIO, "cannot rename %s to %s: %s", b->stage, b->out, strerror(errno));
        if (had_old)
            rename(old, b->out);
        return rc;
    }
    b->stage[0] = '\0';
    tlm_fsync_dir(b->out);
    char parent[1300];
    snprintf(parent, sizeof parent, "%s", b->out);
    tlm_fsync_dir(dirname(parent));
    if (had_old)
        (void)tlm_rm_tree(old);
    return 0;
}

static int run(build *b, char **inputs, int n_inputs, tlm_err *e)
{
    int rc;
    if ((rc = dp_sources_collect(&b->src, inputs, n_inputs, b->format, e)) || (rc = check_out(b->out, e)))
        return rc;
    remove_stale_stages(b->out);
    snprintf(b->stage, sizeof b->stage, "%s.tmp.%ld", b->out, (long)getpid());
    (void)tlm_rm_tree(b->stage);
    if ((rc = tlm_mkdir_p(b->stage, e)))
        return rc;
    for (int k = 0; k < 2; k++)
        snprintf(b->split[k].dir, sizeof b->split[k].dir, "%s/%s", b->stage, b->split[k].name);

    char tokpath[1300] = "", tokfile[128] = "";
    rc = b->train_bpe ? train_tokenizer(b, tokpath, sizeof tokpath, tokfile, sizeof tokfile, e)
                      : open_tokenizer(b, tokpath, sizeof tokpath, tokfile, sizeof tokfile, e);
    if (rc || (b->threads > 1 && (rc = open_thread_toks(b, e))))
        return rc;
    dp_progress_start(&b->prog, "encoding", b->src.total_bytes);
    rc = dp_sources_walk(&b->src, b->field, b->max_line, &b->prog, on_doc, b, e);
    if (!rc)
        rc = batch_flush(b, e);
    for (int k = 0; k < 2 && !rc; k++)
        rc = split_close_shard(b, &b->split[k], e);
    if (!rc && b->split[0].tokens == 0)
        rc = tlm_errf(e, TLM_EDATA, "no training text: the inputs hold %llu bytes", (unsigned long long)
                      b->src.total_bytes);
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %llu train + %llu val tokens (%s) from %zu files, %.1f MB", b->out,
             (unsigned long long)b->split[0].tokens, (unsigned long long)b->split[1].tokens, eng_tok_name(b->tok),
             b->src.n, (double)b->src.total_bytes / 1e6);
    dp_progress_end(&b->prog, rc ? NULL : msg);
    /* said now, when the dataset is made, not when a job that names
     * DIR/val fails at its start */
    if (!rc && b->split[1].tokens == 0 && b->val_ppm > 0) /* --val-fraction 0 asks for none */
        fprintf(stderr,
                "tlm-data: warning: %s/val is empty: %llu segment(s) of at most %llu bytes, and --val-fraction %g "
                "makes one in %.0f a validation segment; a job with data.val %s/val will fail. Give more text, a "
                "smaller --segment-bytes (4k), a larger --val-fraction, or leave data.val empty (a job then holds "
                "out data.val_fraction of the training shards)\n",
                b->out, (unsigned long long)b->seg_index, (unsigned long long)b->segment_bytes,
                (double)b->val_ppm / 1e6, 1e6 / (double)b->val_ppm, b->out);
    if (!rc)
        rc = stopped(e);
    if (rc || (rc = write_manifest(b, tokfile[0] ? tokfile : NULL, e)) || (rc = stopped(e)))
        return rc;
    /* from here on the dataset is complete */
    return publish(b, e);
}

int dp_cmd_build(int argc, char **argv)
{
    build b;
    memset(&b, 0, sizeof b);
    b.split[0].name = "train";
    b.split[1].name = "val";
    tlm_cli cli = {.cmd = "tlm-data build", .opts = OPTS, .col = 23, .operands = "INPUT..."};
    int rc = parse(&b, &cli, argc, argv);
    if (rc)
        return rc < 0 ? DP_EXIT_OK : rc;
    tlm_err e = {0};
    install_stop();
    rc = run(&b, argv + cli.next, argc - cli.next, &e);
    for (int k = 0; k < 2; k++) {
        eng_shard_writer_abort(b.split[k].w);
        free(b.split[k].shards);
    }
    if (b.stage[0])
        (void)tlm_rm_tree(b.stage);
    eng_bpe_trainer_free(b.trainer);
    for (int k = 1; k < MAX_THREADS; k++)
        eng_tok_free(b.toks[k]);
    eng_tok_free(b.tok);
    eng_tokvec_clear(&b.ids);
    for (int i = 0; i < BATCH_SEGMENTS; i++)
        eng_tokvec_clear(&b.pend[i].ids);
    free(b.batch);
    dp_sources_clear(&b.src);
    if (rc == TLM_EINTERRUPTED) {
        fprintf(stderr, "tlm-data: %s: the partial dataset was removed, %s is as it was\n", e.msg, b.out);
        return 128 + (int)stop_signal;
    }
    return rc ? dp_fail(&e) : DP_EXIT_OK;
}
