/* ckpt.c: write, verify, find and load training checkpoints (ckpt.h). */
#include "engine/train/ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "engine/format/safetensors.h"
#include "common/sha256.h"
#include "common/vec.h"

#define MANIFEST_MAX (64 * 1024)
#define STATE_MAX (1024 * 1024)

static const char *const FILES[] = {ENG_CKPT_MODEL, "optim.safetensors", ENG_CKPT_STATE};
enum { N_FILES = 3 };

static int join(char *out, size_t cap, const char *a, const char *b, tlm_err *e)
{
    if ((size_t)snprintf(out, cap, "%s/%s", a, b) >= cap)
        return tlm_errf(e, TLM_EIO, "%s/%s: path too long", a, b);
    return 0;
}

/* Remove a folder of plain files (a checkpoint); best effort. */
static void remove_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        char p[ENG_CKPT_PATH_MAX + 300];
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(dir);
}

typedef struct step_dir {
    int64_t step;
    char name[256];
} step_dir;

static int cmp_step_desc(const void *a, const void *b)
{
    int64_t x = ((const step_dir *)a)->step, y = ((const step_dir *)b)->step;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* step-* folders of root, newest first; *n = 0 when root does not exist. */
static int list_steps(const char *root, step_dir **out, int *n, tlm_err *e)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(root);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        return tlm_errf(e, TLM_EIO, "%s: cannot list: %s", root, strerror(errno));
    }
    step_dir *v = NULL;
    size_t cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int64_t s = tlm_ckpt_step_of(de->d_name);
        if (s < 0 || strlen(de->d_name) >= sizeof v->name)
            continue;
        if (TLM_GROW(v, cap, (size_t)*n + 1, 16)) {
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
            break;
        }
        v[*n].step = s;
        strcpy(v[*n].name, de->d_name);
        (*n)++;
    }
    closedir(d);
    if (rc) {
        free(v);
        *n = 0;
        return rc;
    }
    if (*n)
        qsort(v, (size_t)*n, sizeof *v, cmp_step_desc);
    *out = v;
    return 0;
}

/* ------------------------------------------------------------ writing */
static json_t *num_or_null(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static char *state_json(const eng_train_state *st)
{
    uint64_t M = st->train_windows ? st->train_windows : 1;
    json_t *o = json_pack(
        "{s:i, s:I, s:I, s:s, s:I, s:{s:I, s:I, s:s, s:s}, s:{s:s, s:I, s:I, s:I}, s:o, s:o, s:o, s:f}", "version",
        ENG_CKPT_VERSION, "step", (json_int_t)st->step, "tokens", (json_int_t)st->tokens, "config_id",
        st->config_id, "seed", (json_int_t)st->seed, "data", "cursor", (json_int_t)st->cursor, "train_windows",
        (json_int_t)st->train_windows, "data_id", st->data_id, "order", "window-permutation/1", "rng", "kind",
        "splitmix64-feistel", "seed", (json_int_t)st->seed, "epoch", (json_int_t)(st->cursor / M), "position",
        (json_int_t)(st->cursor % M), "lr", num_or_null(st->lr), "loss", num_or_null(st->loss), "val_loss",
        num_or_null(st->val_loss), "elapsed_s", st->elapsed_s);
    if (!o)
        return NULL;
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

static int write_tensors(const char *path, const eng_ckpt_data *d, const eng_config *cfg, int64_t step, int optim,
                         char sha[65], tlm_err *e)
{
    eng_st_writer *w;
    int rc = eng_st_writer_new(&w, e);
    if (rc)
        return rc;
    char stepbuf[32], name[ENG_ST_NAME_MAX];
    snprintf(stepbuf, sizeof stepbuf, "%" PRId64, step);
    rc = eng_st_writer_meta(w, "format", "pt", e);
    if (!rc)
        rc = eng_st_writer_meta(w, "tlm_step", stepbuf, e);
    if (!rc && !optim) {
        char *cj = eng_config_json(cfg);
        rc = cj ? eng_st_writer_meta(w, "tlm_config", cj, e) : tlm_errf(e, TLM_ENOMEM, "out of memory");
        free(cj);
    }
    for (int i = 0; !rc && i < d->n_tensors; i++) {
        const eng_tensor_info *t = &d->tensors[i];
        if (!optim) {
            rc = eng_st_writer_add(w, t->name, "F32", t->ndim, t->shape, d->params + t->offset, e);
            continue;
        }
        snprintf(name, sizeof name, "%s.exp_avg", t->name);
        rc = eng_st_writer_add(w, name, "F32", t->ndim, t->shape, d->exp_avg + t->offset, e);
        snprintf(name, sizeof name, "%s.exp_avg_sq", t->name);
        if (!rc)
            rc = eng_st_writer_add(w, name, "F32", t->ndim, t->shape, d->exp_avg_sq + t->offset, e);
    }
    for (int i = 0; !rc && optim && i < d->n_extra; i++) {
        const eng_tensor_info *t = &d->extra_tensors[i];
        rc = eng_st_writer_add(w, t->name, "F32", t->ndim, t->shape, d->extra + t->offset, e);
    }
    if (!rc)
        rc = eng_st_writer_write(w, path, sha, e);
    eng_st_writer_free(w);
    return rc;
}

static int file_size(const char *path, int64_t *size, tlm_err *e)
{
    struct stat st;
    int rc = tlm_stat_input(path, TLM_EDATA, &st, e);
    if (rc)
        return rc;
    *size = (int64_t)st.st_size;
    return 0;
}

static void remove_stale_tmp(const char *root)
{
    DIR *d = opendir(root);
    if (!d)
        return;
    struct dirent *de;
    char p[ENG_CKPT_PATH_MAX + 300];
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, TLM_CKPT_TMP_PREFIX, sizeof TLM_CKPT_TMP_PREFIX - 1) ||
            !strncmp(de->d_name, ".old-" TLM_CKPT_PREFIX, sizeof ".old-" TLM_CKPT_PREFIX - 1)) {
            snprintf(p, sizeof p, "%s/%s", root, de->d_name);
            remove_flat(p);
        }
    closedir(d);
}

static void prune(const char *root, int keep)
{
    step_dir *v;
    int n;
    tlm_err ignored;
    if (keep < 1 || list_steps(root, &v, &n, &ignored))
        return;
    char p[ENG_CKPT_PATH_MAX + 300];
    for (int i = keep; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", root, v[i].name);
        remove_flat(p);
    }
    free(v);
    tlm_fsync_dir(root);
}

int eng_ckpt_write(const char *root, const eng_ckpt_data *d, const eng_config *cfg, const eng_train_state *st,
                   int keep, char path[ENG_CKPT_PATH_MAX], tlm_err *e)
{
    char name[32], tmp[ENG_CKPT_PATH_MAX], fin[ENG_CKPT_PATH_MAX], old[ENG_CKPT_PATH_MAX];
    char fpath[N_FILES][ENG_CKPT_PATH_MAX + 32], sha[N_FILES][65];
    int rc = tlm_mkdir_p(root, e);
    if (rc)
        return rc;
    remove_stale_tmp(root);
    tlm_ckpt_name(st->step, name);
    char tmpname[48], oldname[48];
    snprintf(tmpname, sizeof tmpname, ".tmp-%s", name);
    snprintf(oldname, sizeof oldname, ".old-%s", name);
    if ((rc = join(tmp, sizeof tmp, root, tmpname, e)) || (rc = join(fin, sizeof fin, root, name, e)) ||
        (rc = join(old, sizeof old, root, oldname, e)))
        return rc;
    if (mkdir(tmp, 0777))
        return tlm_errf(e, TLM_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    for (int i = 0; i < N_FILES; i++)
        if ((rc = join(fpath[i], sizeof fpath[i], tmp, FILES[i], e)))
            goto fail;

    if ((rc = write_tensors(fpath[0], d, cfg, st->step, 0, sha[0], e)) ||
        (rc = write_tensors(fpath[1], d, cfg, st->step, 1, sha[1], e)))
        goto fail;
    char *sj = state_json(st);
    if (!sj) {
        rc = tlm_errf(e, TLM_ENOMEM, "trainer.json: cannot serialise the trainer state");
        goto fail;
    }
    tlm_sha256_hex(sj, strlen(sj), sha[2]);
    rc = tlm_write_file_atomic(fpath[2], sj, strlen(sj), e);
    free(sj);
    if (rc)
        goto fail;

    /* MANIFEST last: its presence means every file above is complete. */
    json_t *files = json_object();
    for (int i = 0; files && i < N_FILES; i++) {
        int64_t size = 0;
        if ((rc = file_size(fpath[i], &size, e))) {
            json_decref(files);
            goto fail;
        }
        json_object_set_new(files, FILES[i], json_pack("{s:I, s:s}", "bytes", (json_int_t)size, "sha256", sha[i]));
    }
    json_t *man = files ? json_pack("{s:i, s:I, s:I, s:o}", "version", ENG_CKPT_VERSION, "step",
                                    (json_int_t)st->step, "tokens", (json_int_t)st->tokens, "files", files)
                        : NULL;
    char *mtext = man ? json_dumps(man, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(man);
    if (!mtext) {
        rc = tlm_errf(e, TLM_ENOMEM, "MANIFEST.json: cannot serialise");
        goto fail;
    }
    char mpath[ENG_CKPT_PATH_MAX + 32];
    if (!(rc = join(mpath, sizeof mpath, tmp, ENG_CKPT_MANIFEST, e)))
        rc = tlm_write_file_atomic(mpath, mtext, strlen(mtext), e);
    free(mtext);
    if (rc)
        goto fail;

    /* Publish: an older folder of the same step moves aside first (rename
     * cannot replace a non-empty folder). */
    struct stat sb;
    if (!stat(fin, &sb) && rename(fin, old)) {
        rc = tlm_errf(e, TLM_EIO, "%s: cannot move aside: %s", fin, strerror(errno));
        goto fail;
    }
    if (rename(tmp, fin)) {
        rc = tlm_errf(e, TLM_EIO, "%s: cannot rename to %s: %s", tmp, fin, strerror(errno));
        goto fail;
    }
    if (tlm_fsync_dir(root)) {
        rc = tlm_errf(e, TLM_EIO, "%s: fsync: %s", root, strerror(errno));
        return rc;
    }
    remove_flat(old);
    prune(root, keep);
    snprintf(path, ENG_CKPT_PATH_MAX, "%s", fin);
    return 0;
fail:
    remove_flat(tmp);
    return rc;
}

/* ------------------------------------------------------------ verifying */
static int hash_file(const char *path, int64_t expect_size, char hex[65], tlm_err *e)
{
    FILE *f;
    int rc = tlm_fopen_input(path, TLM_EDATA, &f, e);
    if (rc)
        return rc;
    static const size_t BUF = 1 << 20;
    unsigned char *buf = malloc(BUF);
    if (!buf) {
        fclose(f);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    tlm_sha256 h;
    tlm_sha256_init(&h);
    int64_t total = 0;
    size_t n;
    while ((n = fread(buf, 1, BUF, f)) > 0) {
        tlm_sha256_update(&h, buf, n);
        total += (int64_t)n;
    }
    int bad = ferror(f);
    fclose(f);
    free(buf);
    if (bad)
        return tlm_errf(e, TLM_EIO, "%s: read error", path);
    if (total != expect_size)
        return tlm_errf(e, TLM_EDATA, "%s: %" PRId64 " bytes, the manifest says %" PRId64, path, total, expect_size);
    uint8_t d[32];
    tlm_sha256_final(&h, d);
    tlm_hex(d, 32, hex);
    return 0;
}

static int parse_json(const char *path, const char *text, size_t len, json_t **out, tlm_err *e);

static int parse_text(const char *name, const char *text, size_t len, void *out, tlm_err *e)
{
    return parse_json(name, text, len, out, e);
}

static int load_json(const char *path, size_t max, json_t **out, tlm_err *e)
{
    return tlm_parse_input(path, max, TLM_EDATA, NULL, parse_text, out, e);
}

/* The first value of an F32 array that is NaN or infinite: its index, or
 * n when there is none (*count: how many there are). */
static size_t first_nonfinite(const void *data, size_t n, size_t *count)
{
    size_t first = n;
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, (const char *)data + i * sizeof v, sizeof v); /* the data section need not be aligned */
        if (!isfinite(v)) {
            if (first == n)
                first = i;
            (*count)++;
        }
    }
    return first;
}

/* A tensor that holds NaN or inf: named, with where and what (TLM_EDATA).
 * A checkpoint written from weights that had gone bad hashes as well as a
 * good one; resuming from it would train on NaN. */
static int nonfinite_error(const char *path, const char *name, const void *data, size_t n, tlm_err *e)
{
    size_t count;
    size_t first = first_nonfinite(data, n, &count);
    if (first == n)
        return 0;
    float v;
    memcpy(&v, (const char *)data + first * sizeof v, sizeof v);
    return tlm_errf(e, TLM_EDATA,
                    "%s: tensor %s holds %zu value(s) that are not finite (element %zu is %s): not a usable "
                    "checkpoint",
                    path, name, count, first, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* Every F32 tensor of the two safetensors files is finite. */
static int verify_finite(const char *dir, tlm_err *e)
{
    for (int which = 0; which < 2; which++) {
        char path[ENG_CKPT_PATH_MAX + 32];
        eng_st_file f;
        int rc = join(path, sizeof path, dir, FILES[which], e);
        if (rc || (rc = eng_st_open(&f, path, e)))
            return rc;
        for (int i = 0; !rc && i < f.n; i++)
            if (!strcmp(f.tensors[i].dtype, "F32"))
                rc = nonfinite_error(path, f.tensors[i].name, eng_st_data(&f, &f.tensors[i]),
                                     (size_t)((f.tensors[i].end - f.tensors[i].begin) / 4), e);
        eng_st_close(&f);
        if (rc)
            return rc;
    }
    return 0;
}

int eng_ckpt_verify(const char *dir, tlm_err *e)
{
    char mpath[ENG_CKPT_PATH_MAX + 32];
    int rc = join(mpath, sizeof mpath, dir, ENG_CKPT_MANIFEST, e);
    if (rc)
        return rc;
    json_t *man;
    if ((rc = load_json(mpath, MANIFEST_MAX, &man, e)))
        return rc;
    json_t *files = json_object_get(man, "files");
    json_t *ver = json_object_get(man, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != ENG_CKPT_VERSION) {
        rc = tlm_errf(e, TLM_EDATA, "%s: manifest version %s, this build reads version %d", mpath,
                      json_is_integer(ver) ? "other" : "missing", ENG_CKPT_VERSION);
    } else if (!json_is_object(files)) {
        rc = tlm_errf(e, TLM_EDATA, "%s: no \"files\" object", mpath);
    }
    for (int i = 0; !rc && i < N_FILES; i++) {
        json_t *f = json_object_get(files, FILES[i]);
        json_t *bytes = json_object_get(f, "bytes"), *sha = json_object_get(f, "sha256");
        if (!json_is_integer(bytes) || !json_is_string(sha) || strlen(json_string_value(sha)) != 64) {
            rc = tlm_errf(e, TLM_EDATA, "%s: no valid entry for %s", mpath, FILES[i]);
            break;
        }
        char fpath[ENG_CKPT_PATH_MAX + 32], hex[65];
        if ((rc = join(fpath, sizeof fpath, dir, FILES[i], e)))
            break;
        int64_t size = 0;
        if ((rc = file_size(fpath, &size, e)))
            break;
        if (size != json_integer_value(bytes)) {
            rc = tlm_errf(e, TLM_EDATA, "%s: %" PRId64 " bytes, the manifest says %" PRId64 " (truncated?)", fpath,
                          size, (int64_t)json_integer_value(bytes));
            break;
        }
        if ((rc = hash_file(fpath, size, hex, e)))
            break;
        if (strcmp(hex, json_string_value(sha)))
            rc = tlm_errf(e, TLM_EDATA, "%s: SHA-256 %.12s... differs from the manifest's %.12s... (corrupt)", fpath,
                          hex, json_string_value(sha));
    }
    json_decref(man);
    return rc ? rc : verify_finite(dir, e);
}

int eng_ckpt_find(const char *root, char path[ENG_CKPT_PATH_MAX], eng_log_fn log, void *ud, tlm_err *e)
{
    path[0] = '\0';
    step_dir *v;
    int n, rc = list_steps(root, &v, &n, e);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++) {
        char dir[ENG_CKPT_PATH_MAX];
        if ((size_t)snprintf(dir, sizeof dir, "%s/%s", root, v[i].name) >= sizeof dir)
            continue;
        tlm_err ve = {0};
        int vrc = eng_ckpt_verify(dir, &ve);
        if (!vrc) {
            snprintf(path, ENG_CKPT_PATH_MAX, "%s", dir);
            break;
        }
        if (vrc == TLM_ENOMEM) {
            free(v);
            return tlm_errf(e, TLM_ENOMEM, "%s", ve.msg);
        }
        if (log) {
            char msg[ENG_CKPT_PATH_MAX + sizeof ve.msg + 64];
            snprintf(msg, sizeof msg, "checkpoint %s is not usable, skipping it: %s", dir, ve.msg);
            log(ud, msg);
        }
    }
    free(v);
    return 0;
}

/* ------------------------------------------------------------ loading */
static int get_int(json_t *o, const char *key, int64_t *out, const char *path, tlm_err *e)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return tlm_errf(e, TLM_EDATA, "%s: \"%s\" is missing or not an integer", path, key);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static double get_num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int get_hex(json_t *o, const char *key, char out[65], const char *path, tlm_err *e)
{
    json_t *v = json_object_get(o, key);
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    int hex = strlen(s) == 64;
    for (int i = 0; hex && i < 64; i++)
        hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
    if (!hex)
        return tlm_errf(e, TLM_EDATA, "%s: \"%s\" is missing or not a SHA-256 (64 lower-case hex digits)", path, key);
    strcpy(out, json_string_value(v));
    return 0;
}

static int parse_json(const char *path, const char *text, size_t len, json_t **out, tlm_err *e)
{
    json_error_t je;
    *out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!*out)
        return tlm_errf(e, TLM_EDATA, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return tlm_errf(e, TLM_EDATA, "%s: not a JSON object", path);
    }
    return 0;
}

int eng_ckpt_read_state(const char *dir, eng_train_state *st, tlm_err *e)
{
    memset(st, 0, sizeof *st);
    char path[ENG_CKPT_PATH_MAX + 32];
    int rc = join(path, sizeof path, dir, ENG_CKPT_STATE, e);
    char *text = NULL;
    size_t len = 0;
    if (rc || (rc = tlm_read_file(path, STATE_MAX, &text, &len, e)))
        return rc;
    rc = eng_ckpt_parse_state(path, text, len, st, e);
    free(text);
    return rc;
}

int eng_ckpt_parse_state(const char *path, const char *text, size_t len, eng_train_state *st, tlm_err *e)
{
    memset(st, 0, sizeof *st);
    json_t *o = NULL;
    int rc = parse_json(path, text, len, &o, e);
    if (rc)
        return rc;
    int64_t ver = 0, cursor = 0, windows = 0;
    json_t *data = json_object_get(o, "data");
    if (!(rc = get_int(o, "version", &ver, path, e)) && ver != ENG_CKPT_VERSION)
        rc = tlm_errf(e, TLM_EDATA, "%s: trainer state version %" PRId64 ", this build reads version %d", path, ver,
                      ENG_CKPT_VERSION);
    if (!rc && !json_is_object(data))
        rc = tlm_errf(e, TLM_EDATA, "%s: no \"data\" object", path);
    if (!rc)
        rc = get_int(o, "step", &st->step, path, e);
    if (!rc)
        rc = get_int(o, "tokens", &st->tokens, path, e);
    if (!rc)
        rc = get_int(o, "seed", &st->seed, path, e);
    if (!rc)
        rc = get_hex(o, "config_id", st->config_id, path, e);
    if (!rc)
        rc = get_int(data, "cursor", &cursor, path, e);
    if (!rc)
        rc = get_int(data, "train_windows", &windows, path, e);
    if (!rc)
        rc = get_hex(data, "data_id", st->data_id, path, e);
    if (!rc && (st->step < 0 || st->tokens < 0 || cursor < 0 || windows < 0)) {
        const char *what = st->step < 0 ? "step" : st->tokens < 0 ? "tokens" : cursor < 0 ? "data.cursor" :
                                                                                          "data.train_windows";
        long long v = st->step < 0 ? st->step : st->tokens < 0 ? st->tokens : cursor < 0 ? cursor : windows;
        rc = tlm_errf(e, TLM_EDATA, "%s: %s is %lld (expected a count, 0 or more)", path, what, v);
    }
    if (!rc) {
        st->cursor = (uint64_t)cursor;
        st->train_windows = (uint64_t)windows;
        st->lr = get_num(o, "lr");
        st->loss = get_num(o, "loss");
        st->val_loss = get_num(o, "val_loss");
        st->elapsed_s = get_num(o, "elapsed_s");
        if (!isfinite(st->elapsed_s) || st->elapsed_s < 0)
            st->elapsed_s = 0;
    }
    json_decref(o);
    return rc;
}

static int load_tensor(const eng_st_file *f, const char *name, const eng_tensor_info *t, float *dst, tlm_err *e)
{
    const eng_st_tensor *s = eng_st_find(f, name);
    if (!s)
        return tlm_errf(e, TLM_EDATA, "%s: no tensor %s", f->path, name);
    int same = !strcmp(s->dtype, "F32") && s->ndim == t->ndim;
    for (int i = 0; same && i < t->ndim; i++)
        same = s->shape[i] == t->shape[i];
    if (!same || eng_st_numel(s) != t->numel) {
        char have[96] = "", want[96] = "";
        for (int i = 0; i < s->ndim && i < ENG_ST_MAX_DIMS; i++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", i ? ", " : "", (long long)s->shape[i]);
        for (int i = 0; i < t->ndim && i < 4; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        return tlm_errf(e, TLM_EDATA, "%s: tensor %s is %s (%s), the model's is F32 (%s)", f->path, name, s->dtype,
                        have, want);
    }
    memcpy(dst, eng_st_data(f, s), t->numel * sizeof *dst);
    return nonfinite_error(f->path, name, dst, t->numel, e);
}

static int check_step_meta(const eng_st_file *f, int64_t step, tlm_err *e)
{
    const char *m = eng_st_meta(f, "tlm_step");
    char want[32];
    snprintf(want, sizeof want, "%" PRId64, step);
    if (!m || strcmp(m, want))
        return tlm_errf(e, TLM_EDATA, "%s: tlm_step %s, but trainer.json says step %s", f->path, m ? m : "(none)",
                        want);
    return 0;
}

int eng_ckpt_load(const char *dir, const char *config_id, eng_ckpt_data *d, eng_train_state *st, tlm_err *e)
{
    int rc = eng_ckpt_read_state(dir, st, e);
    if (rc)
        return rc;
    if (strcmp(st->config_id, config_id))
        return tlm_errf(e, TLM_ECONFIG,
                        "%s was written for config %.12s, this job's config is %.12s: refusing to resume a "
                        "different job (use a fresh --out folder)",
                        dir, st->config_id, config_id);
    char path[ENG_CKPT_PATH_MAX + 32];
    eng_st_file f;
    for (int which = 0; which < 2; which++) {
        if ((rc = join(path, sizeof path, dir, FILES[which], e)) || (rc = eng_st_open(&f, path, e)))
            return rc;
        int expect = which == 0 ? d->n_tensors : 2 * d->n_tensors + d->n_extra;
        rc = check_step_meta(&f, st->step, e);
        char name[ENG_ST_NAME_MAX];
        for (int i = 0; !rc && i < d->n_tensors; i++) {
            const eng_tensor_info *t = &d->tensors[i];
            if (which == 0) {
                rc = load_tensor(&f, t->name, t, d->params + t->offset, e);
                continue;
            }
            snprintf(name, sizeof name, "%s.exp_avg", t->name);
            rc = load_tensor(&f, name, t, d->exp_avg + t->offset, e);
            snprintf(name, sizeof name, "%s.exp_avg_sq", t->name);
            if (!rc)
                rc = load_tensor(&f, name, t, d->exp_avg_sq + t->offset, e);
        }
        for (int i = 0; !rc && which == 1 && i < d->n_extra; i++)
            rc = load_tensor(&f, d->extra_tensors[i].name, &d->extra_tensors[i], d->extra + d->extra_tensors[i].offset,
                             e);
        /* counted after the loads, so that a missing tensor is named by them;
         * what is left is a file with tensors the model does not have */
        if (!rc && f.n != expect)
            rc = tlm_errf(e, TLM_EDATA, "%s: %d tensors, the model has %d (%d the model does not know)", path, f.n,
                          expect, f.n - expect);
        eng_st_close(&f);
        if (rc)
            return rc;
    }
    return 0;
}
