/* test_loader.c: the data loader's order is a pure function of (data,
 * seq_len, seed, cursor): every epoch visits each training window once,
 * training and validation never share a window, a seek to a saved cursor
 * continues exactly, the validation set is fixed, and shards that do not fit
 * the config (tokenizer, vocabulary, size, a corrupt payload) or their
 * dataset manifest are refused. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "common/fileio.h"
#include "engine/train/loader.h"
#include "common/sha256.h"
#include "engine/format/shard.h"
#include "tests/lib/tap.h"

static char tmpdir[256];

/* A shard whose token i is base + i (so a window names its own start). */
static void make_shard(const char *path, uint32_t vocab, const char *tok, uint32_t base, uint32_t n)
{
    eng_shard_writer *w;
    tlm_err e = {0};
    uint8_t sha[32] = {0};
    sha[31] = 0xaa; /* the tokenizer hash the manifests below name */
    if (eng_shard_writer_open(&w, path, 0, vocab, tok, sha, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        exit(99);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t t = base + i;
        if (eng_shard_writer_append(w, &t, 1, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            exit(99);
        }
    }
    if (eng_shard_writer_close(w, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        exit(99);
    }
}

static void base_cfg(eng_config *c, const char *train, const char *val, int T, int64_t seed)
{
    memset(c, 0, sizeof *c);
    strcpy(c->tokenizer, "bpe65536");
    c->model.vocab = 65536;
    c->train.seq_len = T;
    c->seed = seed;
    c->eval.val_tokens = 10 * T;
    c->data.val_fraction = 0.1;
    snprintf(c->data.train, sizeof c->data.train, "%s", train);
    snprintf(c->data.val, sizeof c->data.val, "%s", val ? val : "");
}

/* Window id of a sequence: shard (0 or 1 by base) * 1e6 + start. */
static long window_id(const int32_t *tok) { return tok[0] >= 30000 ? 1000000L + (tok[0] - 30000) : tok[0]; }

static int check_contiguous(const int32_t *tok, const int32_t *tgt, int T)
{
    for (int t = 0; t < T; t++) {
        if (tgt[t] != tok[t] + 1)
            return 0;
        if (t && tok[t] != tok[t - 1] + 1)
            return 0;
    }
    long start = tok[0] >= 30000 ? tok[0] - 30000 : tok[0];
    return start % T == 0;
}

/* ---- the dataset manifest beside train/ and val/ */
static void shard_fields(const char *path, char sha[65], unsigned long long *n)
{
    eng_shard sh;
    tlm_err e;
    if (eng_shard_open(&sh, path, 0, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        exit(99);
    }
    tlm_hex(sh.payload_sha256, 32, sha);
    *n = (unsigned long long)sh.n_tokens;
    eng_shard_close(&sh);
}

/* manifest.json for train/{a,b}.tlmtok and val/v.tlmtok; `edit` names one
 * deliberate fault. */
static void write_manifest(const char *root, const char *s0, const char *s1, const char *v0, const char *edit)
{
    char h0[65], h1[65], hv[65], path[400], text[4096];
    unsigned long long n0, n1, nv;
    shard_fields(s0, h0, &n0);
    shard_fields(s1, h1, &n1);
    shard_fields(v0, hv, &nv);
    const char *z = "0000000000000000000000000000000000000000000000000000000000000000";
    unsigned long long t1 = !strcmp(edit, "count") ? n1 + 1 : n1;
    int k = snprintf(text, sizeof text,
                     "{\"format\": \"%s\", \"version\": 1, \"tokenizer\": {\"name\": \"bpe65536\", \"vocab\": %d, "
                     "\"sha256\": \"%s\"}, \"splits\": {"
                     "\"train\": {\"tokens\": %llu, \"shards\": [{\"file\": \"train/a.tlmtok\", \"tokens\": %llu, "
                     "\"sha256\": \"%s\"}, {\"file\": \"%s\", \"tokens\": %llu, \"sha256\": \"%s\"}%s]}, "
                     "\"val\": {\"tokens\": %llu, \"shards\": [{\"file\": \"val/v.tlmtok\", \"tokens\": %llu, "
                     "\"sha256\": \"%s\"}]}}}\n",
                     !strcmp(edit, "foreign") ? "something-else" : "tlm-dataset", !strcmp(edit, "vocab") ? 4096 : 65536,
                     "00000000000000000000000000000000000000000000000000000000000000aa",
                     n0 + t1 + (!strcmp(edit, "extra") ? 7 : 0), n0, h0,
                     !strcmp(edit, "escape") ? "train/../../x.tlmtok" : "train/b.tlmtok", t1,
                     !strcmp(edit, "sha") ? z : !strcmp(edit, "othersha") ? h0 : h1,
                     !strcmp(edit, "extra") ? ", {\"file\": \"train/c.tlmtok\", \"tokens\": 7, \"sha256\": "
                                             "\"00000000000000000000000000000000000000000000000000000000000000bb\"}"
                                           : "",
                     nv, nv, hv);
    if (!strcmp(edit, "json"))
        k = snprintf(text, sizeof text, "{\"format\": \"tlm-dataset\", \"version\": 1,\n  \"splits\": {\n");
    snprintf(path, sizeof path, "%s/manifest.json", root);
    tlm_err e;
    if (tlm_write_file_atomic(path, text, (size_t)k, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        exit(99);
    }
}

static void manifest_cases(const char *root, const char *dir, const char *valdir, const char *s0, const char *s1,
                           const char *v0, int T)
{
    static const struct {
        const char *edit, *want, *what;
    } C[] = {
        {"", NULL, "a manifest that matches the folders: opens"},
        {"foreign", NULL, "another program's manifest.json (format not tlm-dataset) is left alone"},
        {"count", "header says 977 tokens", "a token count other than the manifest's"},
        {"othersha", "differs from", "a payload hash other than the manifest's"},
        {"vocab", "vocab 4096", "a vocabulary other than the manifest's"},
        {"extra", "train/c.tlmtok, which is missing", "a shard the manifest lists is missing from the folder"},
        {"sha", "all zeros", "an all-zero hash in the manifest"},
        {"escape", "must be \"train/<name>.tlmtok\"", "a file name leaving the split folder"},
        {"json", "manifest.json:3:", "a manifest that is not JSON (line and column)"},
    };
    eng_config c;
    tlm_err e;
    eng_loader *l;
    char out[400];
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        write_manifest(root, s0, s1, v0, C[i].edit);
        base_cfg(&c, dir, valdir, T, 7);
        e.msg[0] = '\0';
        int rc = eng_loader_open(&l, &c, &e);
        if (!rc)
            eng_loader_free(l);
        if (!C[i].want)
            TAP_OK(rc == 0, "manifest: %s%s%s", C[i].what, rc ? ": " : "", rc ? e.msg : "");
        else
            TAP_OK(rc == TLM_EDATA && strstr(e.msg, C[i].want) && strstr(e.msg, "manifest.json"),
                   "manifest: %s is refused (%s)", C[i].what, e.msg);
    }
    /* a shard in the folder that the manifest does not list */
    write_manifest(root, s0, s1, v0, "");
    snprintf(out, sizeof out, "%s/z.tlmtok", dir);
    make_shard(out, 65536, "bpe65536", 0, 100);
    base_cfg(&c, dir, valdir, T, 7);
    int rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "z.tlmtok: not listed in"), "manifest: an unlisted shard is refused (%s)",
           e.msg);
    if (!rc)
        eng_loader_free(l);
    unlink(out);
    snprintf(out, sizeof out, "%s/manifest.json", root);
    unlink(out);
}

int main(void)
{
    if (!tap_tmpdir(tmpdir, sizeof tmpdir, "tlm-test-loader"))
        return 99;
    char dir[300], s0[400], s1[400], valdir[300], v0[400];
    snprintf(dir, sizeof dir, "%s/train", tmpdir);
    snprintf(valdir, sizeof valdir, "%s/val", tmpdir);
    mkdir(dir, 0777);
    mkdir(valdir, 0777);
    snprintf(s0, sizeof s0, "%s/a.tlmtok", dir);
    snprintf(s1, sizeof s1, "%s/b.tlmtok", dir);
    snprintf(v0, sizeof v0, "%s/v.tlmtok", valdir);
    const int T = 16;
    make_shard(s0, 65536, "bpe65536", 0, 16 * 100 + 5);  /* 100 windows */
    make_shard(s1, 65536, "bpe65536", 30000, 16 * 61 + 1); /* 61 windows */
    make_shard(v0, 65536, "bpe65536", 0, 16 * 20 + 1);     /* 20 windows */

    eng_config c;
    tlm_err e = {0};
    eng_loader *l, *l2;
    eng_loader_info info;
    int32_t tok[8 * 16], tgt[8 * 16];

    /* ---- held-out split */
    base_cfg(&c, dir, NULL, T, 7);
    int rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == 0, "open a folder of two shards (%s)", e.msg);
    if (rc)
        return tap_done();
    eng_loader_get_info(l, &info);
    uint64_t M = info.train_windows, V = info.val_windows;
    TAP_OK(M + V == 161, "train %llu + held-out %llu windows = the 161 windows of the shards",
           (unsigned long long)M, (unsigned long long)V);
    TAP_OK(V >= 8 && V <= 3 * 8 && V % 8 == 0, "held-out windows come in whole blocks, about 10%% (%llu)",
           (unsigned long long)V);
    TAP_OK(info.held_out == 1 && info.val_seqs == 10, "validation set is ceil(val_tokens / T) = 10 sequences (%llu)",
           (unsigned long long)info.val_seqs);

    /* validation windows, and that training never sees them */
    char *is_val = calloc(2000000, 1);
    int32_t vt[16], vg[16];
    int ok = 1;
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < info.val_seqs; i++) {
            if (eng_loader_val_batch(l, i, 1, vt, vg, &e) || !check_contiguous(vt, vg, T))
                ok = 0;
            is_val[window_id(vt)] = 1;
        }
    TAP_OK(ok, "validation sequences are whole windows with shifted targets");

    /* one epoch: each train window exactly once, never a validation window */
    char *seen = calloc(2000000, 1);
    int dup = 0, leak = 0, bad = 0;
    long first_epoch[200];
    for (uint64_t k = 0; k < M; k++) {
        if (eng_loader_next(l, 1, tok, tgt, &e)) {
            bad++;
            break;
        }
        long id = window_id(tok);
        first_epoch[k] = id;
        bad += !check_contiguous(tok, tgt, T);
        dup += seen[id]++ != 0;
        leak += is_val[id];
    }
    TAP_OK(!bad && !dup, "an epoch visits every training window once (%d bad, %d repeated)", bad, dup);
    TAP_OK(!leak, "no validation window is trained on (%d)", leak);
    int same_order = 1, sorted = 1;
    for (uint64_t k = 0; k < M; k++) {
        eng_loader_next(l, 1, tok, tgt, &e);
        same_order &= window_id(tok) == first_epoch[k];
        if (k)
            sorted &= first_epoch[k] > first_epoch[k - 1];
    }
    TAP_OK(!same_order && !sorted, "epochs are shuffled, each differently");
    TAP_OK(eng_loader_cursor(l) == 2 * M, "the cursor counts sequences drawn (%llu)",
           (unsigned long long)eng_loader_cursor(l));

    /* ---- cursor restore, across an epoch boundary, in batches */
    TAP_OK(eng_loader_open(&l2, &c, &e) == 0, "open a second loader");
    eng_loader_seek(l, M - 3);
    int32_t tokA[8 * 16], tgtA[8 * 16];
    eng_loader_next(l, 8, tokA, tgtA, &e);
    eng_loader_seek(l2, 0);
    for (uint64_t k = 0; k < M - 3; k++)
        eng_loader_next(l2, 1, tok, tgt, &e);
    eng_loader_next(l2, 8, tok, tgt, &e);
    TAP_OK(!memcmp(tok, tokA, sizeof tok) && !memcmp(tgt, tgtA, sizeof tgt),
           "seek(k) then 8 sequences = drawing k then 8 (crosses the epoch end)");
    eng_loader_seek(l2, 5);
    eng_loader_next(l2, 1, tok, tgt, &e);
    TAP_OK((long)window_id(tok) == first_epoch[5] && eng_loader_window_at(l2, 5) == eng_loader_window_at(l, 5),
           "seek back to 5 gives the epoch's 6th window again");
    eng_loader_free(l2);

    /* same seed, same order; other seed, other order */
    base_cfg(&c, dir, NULL, T, 8);
    TAP_OK(eng_loader_open(&l2, &c, &e) == 0, "open with seed 8");
    int differ = 0;
    for (uint64_t k = 0; k < M; k++)
        differ += eng_loader_window_at(l2, k) != eng_loader_window_at(l, k);
    eng_loader_get_info(l2, &info);
    TAP_OK(differ > (int)M / 2, "another seed shuffles differently (%d of %llu positions differ)", differ,
           (unsigned long long)M);
    TAP_OK(info.val_windows == V, "the held-out set does not depend on the seed");
    eng_loader_free(l2);
    eng_loader_free(l);

    /* ---- a separate validation folder */
    base_cfg(&c, dir, valdir, T, 7);
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == 0, "open with data.val (%s)", e.msg);
    if (!rc) {
        eng_loader_get_info(l, &info);
        TAP_OK(info.train_windows == 161 && info.val_windows == 20 && info.val_seqs == 10 && !info.held_out,
               "data.val: all 161 train windows train, 10 of the 20 validation windows evaluate");
        int spread = 1;
        for (uint64_t i = 0; i < 10; i++) {
            eng_loader_val_batch(l, i, 1, vt, vg, &e);
            spread &= vt[0] == (int32_t)(16 * (i * 20 / 10));
        }
        TAP_OK(spread, "validation windows are evenly spaced (i * V / n)");
        TAP_OK(eng_loader_val_batch(l, 5, 6, tok, tgt, &e) == TLM_EINTERNAL, "a batch past the set is refused");
        eng_loader_free(l);
    }

    /* ---- refusals */
    base_cfg(&c, dir, NULL, T, 7);
    strcpy(c.tokenizer, "bytes");
    c.model.vocab = 256;
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "'bpe65536'") && strstr(e.msg, "'bytes'"),
           "other tokenizer: TLM_EDATA naming both (%s)", e.msg);
    base_cfg(&c, dir, NULL, T, 7);
    c.model.vocab = 1000;
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "model.vocab 1000"), "vocabulary above model.vocab: TLM_EDATA (%s)",
           e.msg);
    base_cfg(&c, "/nonexistent/tlm/shards", NULL, T, 7);
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "data.train") && strstr(e.msg, "/nonexistent/tlm/shards"),
           "missing data: TLM_EDATA naming the key and path (%s)", e.msg);
    base_cfg(&c, "", NULL, T, 7);
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "data.train"), "no data.train: TLM_EDATA (%s)", e.msg);
    base_cfg(&c, v0, NULL, 512, 7);
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "no training window"), "shards shorter than a window: TLM_EDATA (%s)",
           e.msg);
    base_cfg(&c, v0, NULL, 16, 7);
    c.data.val_fraction = 0.01;
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "val_fraction"), "too few windows to hold out: TLM_EDATA (%s)", e.msg);

    /* a token outside the vocabulary (a corrupt payload) is caught on read */
    char bad_path[400];
    snprintf(bad_path, sizeof bad_path, "%s/bad.tlmtok", tmpdir);
    make_shard(bad_path, 4096, "bpe4096", 0, 16 * 40 + 1);
    FILE *f = fopen(bad_path, "r+b");
    if (f) {
        fseek(f, ENG_SHARD_HEADER, SEEK_SET);
        for (int i = 0; i < 2 * (16 * 40 + 1); i++)
            fputc(0xff, f);
        fclose(f);
    }
    base_cfg(&c, bad_path, NULL, T, 7);
    strcpy(c.tokenizer, "bpe4096");
    c.model.vocab = 4096;
    rc = eng_loader_open(&l, &c, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "data.train") && strstr(e.msg, bad_path) &&
               strstr(e.msg, "payload's SHA-256"),
           "a shard with a corrupt payload is refused at open, naming it (%s)", e.msg);
    if (!rc)
        eng_loader_free(l);

    manifest_cases(tmpdir, dir, valdir, s0, s1, v0, T);

    free(seen);
    free(is_val);
    if (tlm_rm_tree(tmpdir))
        TAP_DIAG("could not remove %s", tmpdir);
    return tap_done();
}
