/* test_ckpt.c: checkpoints round-trip bit for bit, carry the protocol's
 * layout and metadata, keep the newest N, and a corrupt or truncated
 * checkpoint is detected and skipped for the previous one; a checkpoint of
 * another config is refused; trainer.json is parsed as untrusted text; a
 * FIFO or a folder in a checkpoint is refused without blocking. */
#include <dirent.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "engine/train/ckpt.h"
#include "engine/config/config.h"
#include "engine/train/rng.h"
#include "engine/format/safetensors.h"
#include "tests/lib/tap.h"

static char root[300];
static int n_logged;
static char last_log[4096];

static void on_log(void *ud, const char *msg)
{
    (void)ud;
    n_logged++;
    snprintf(last_log, sizeof last_log, "%s", msg);
}

static int exists(const char *dir, const char *name)
{
    char p[800];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void fill(float *x, size_t n, uint64_t seed)
{
    eng_rng r;
    eng_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(eng_rng_uniform(&r) * 2 - 1);
}

static void state_for(eng_train_state *st, const char *cid, int64_t step)
{
    memset(st, 0, sizeof *st);
    st->step = step;
    st->tokens = step * 4096;
    st->cursor = (uint64_t)step * 16 + 3;
    st->train_windows = 1000;
    memset(st->data_id, 'd', 64);
    snprintf(st->config_id, sizeof st->config_id, "%s", cid);
    st->seed = 5;
    st->loss = 2.0 + 1.0 / (double)step;
    st->val_loss = step > 10 ? 2.5 : NAN;
    st->lr = 3e-4;
    st->elapsed_s = 1.5 * (double)step;
}

/* A checkpoint's folder name and its step (common/protocol.h: tlmd reads
 * them too), to the last step an int64 holds. */
static void test_names(void)
{
    static const struct {
        const char *name;
        int64_t step;
    } cases[] = {
        {"step-00000120", 120},          {"step-0", 0},      {"step-", -1},    {"step-12a", -1},
        {"steps-1", -1},                 {".tmp-step-1", -1}, {"step--1", -1}, {"step-9223372036854775807", INT64_MAX},
        {"step-9223372036854775800", 9223372036854775800LL}, {"step-9223372036854775808", -1},
        {"step-99999999999999999999", -1},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (tlm_ckpt_step_of(cases[i].name) != cases[i].step) {
            TAP_DIAG("%s: step %lld, expected %lld", cases[i].name, (long long)tlm_ckpt_step_of(cases[i].name),
                     (long long)cases[i].step);
            bad++;
        }
    char name[TLM_CKPT_NAME_MAX];
    tlm_ckpt_name(120, name);
    int ok = !strcmp(name, "step-00000120");
    tlm_ckpt_name(INT64_MAX, name);
    ok &= tlm_ckpt_step_of(name) == INT64_MAX;
    TAP_OK(!bad && ok, "checkpoint names: step-00000120 and back, every step up to 2^63-1, nothing else");
}

int main(void)
{
    test_names();
    if (!tap_tmpdir(root, sizeof root, "tlm-test-ckpt"))
        return 99;
    char ckroot[400];
    snprintf(ckroot, sizeof ckroot, "%s/ckpt", root);

    eng_config cfg, other;
    tlm_err e = {0};
    int rc = eng_config_from_json("{\"scale\": \"1m\", \"taper\": {\"schedule\": \"cosine\", \"ratio\": [1.5, 0.5]}}",
                                  &cfg, &e);
    TAP_OK(rc == 0, "a config (%s)", e.msg);
    rc = eng_config_from_json("{\"scale\": \"1m\", \"seed\": 1}", &other, &e);
    char cid[65], oid[65];
    eng_config_id(&cfg, cid);
    eng_config_id(&other, oid);

    /* three tensors in the protocol's naming */
    eng_tensor_info t[3];
    memset(t, 0, sizeof t);
    strcpy(t[0].name, "model.embed_tokens.weight");
    t[0].ndim = 2, t[0].shape[0] = 256, t[0].shape[1] = 32, t[0].numel = 256 * 32, t[0].offset = 0;
    strcpy(t[1].name, "model.layers.0.input_layernorm.weight");
    t[1].ndim = 1, t[1].shape[0] = 32, t[1].numel = 32, t[1].offset = 256 * 32;
    strcpy(t[2].name, "model.layers.0.mlp.up_proj.weight");
    t[2].ndim = 2, t[2].shape[0] = 48, t[2].shape[1] = 32, t[2].numel = 48 * 32, t[2].offset = 256 * 32 + 32;
    const size_t N = 256 * 32 + 32 + 48 * 32;
    float *p = malloc(N * 4), *m = malloc(N * 4), *v = malloc(N * 4);
    float *p2 = calloc(N, 4), *m2 = calloc(N, 4), *v2 = calloc(N, 4);
    eng_ckpt_data d = {t, 3, N, p, m, v, NULL, 0, NULL}, back = {t, 3, N, p2, m2, v2, NULL, 0, NULL};

    /* ---- write one and read it back */
    fill(p, N, 1), fill(m, N, 2), fill(v, N, 3);
    /* the values at the edges of float travel bit for bit (a value that is
     * not finite is refused: below) */
    p[7] = -0.0f, p[8] = 1e-45f, p[9] = FLT_MAX, p[10] = -FLT_MIN;
    eng_train_state st, st2;
    state_for(&st, cid, 10);
    char path[ENG_CKPT_PATH_MAX];
    rc = eng_ckpt_write(ckroot, &d, &cfg, &st, 3, path, &e);
    TAP_OK(rc == 0 && strstr(path, "/ckpt/step-00000010"), "write step 10 -> %s (%s)", path, e.msg);
    TAP_OK(exists(path, "model.safetensors") && exists(path, "optim.safetensors") && exists(path, "trainer.json") &&
               exists(path, "MANIFEST.json") && count_entries(path) == 4,
           "the folder holds exactly model, optim, trainer.json, MANIFEST");
    TAP_OK(eng_ckpt_verify(path, &e) == 0, "its manifest verifies (%s)", e.msg);
    rc = eng_ckpt_load(path, cid, &back, &st2, &e);
    TAP_OK(rc == 0, "load it (%s)", e.msg);
    TAP_OK(!memcmp(p, p2, N * 4) && !memcmp(m, m2, N * 4) && !memcmp(v, v2, N * 4),
           "parameters and both moments round-trip bit for bit");
    TAP_OK(st2.step == 10 && st2.tokens == 40960 && st2.cursor == 163 && st2.train_windows == 1000 &&
               st2.seed == 5 && !strcmp(st2.config_id, cid) && !strcmp(st2.data_id, st.data_id) &&
               st2.loss == st.loss && isnan(st2.val_loss) && st2.lr == 3e-4 && st2.elapsed_s == 15,
           "trainer state round-trips (step, tokens, cursor, ids, loss exactly, val_loss null -> NaN)");

    /* protocol details of the files */
    char fpath[ENG_CKPT_PATH_MAX + 100];
    snprintf(fpath, sizeof fpath, "%s/model.safetensors", path);
    eng_st_file sf;
    rc = eng_st_open(&sf, fpath, &e);
    TAP_OK(rc == 0, "model.safetensors opens with the safetensors reader");
    if (!rc) {
        const char *fmt = eng_st_meta(&sf, "format"), *step = eng_st_meta(&sf, "tlm_step");
        const char *cj = eng_st_meta(&sf, "tlm_config");
        eng_config back_cfg;
        char bid[65] = "";
        if (cj && !eng_config_from_json(cj, &back_cfg, &e))
            eng_config_id(&back_cfg, bid);
        TAP_OK(fmt && !strcmp(fmt, "pt") && step && !strcmp(step, "10") && !strcmp(bid, cid),
               "metadata: format=pt, tlm_step=10, tlm_config resolves to the same job id");
        const eng_st_tensor *up = eng_st_find(&sf, "model.layers.0.mlp.up_proj.weight");
        TAP_OK(up && !strcmp(up->dtype, "F32") && up->ndim == 2 && up->shape[0] == 48 && up->shape[1] == 32,
               "tensors keep their HF names and (out, in) shapes, F32");
        eng_st_close(&sf);
    }
    snprintf(fpath, sizeof fpath, "%s/optim.safetensors", path);
    rc = eng_st_open(&sf, fpath, &e);
    if (!rc) {
        TAP_OK(sf.n == 6 && eng_st_find(&sf, "model.embed_tokens.weight.exp_avg") &&
                   eng_st_find(&sf, "model.embed_tokens.weight.exp_avg_sq"),
               "optim.safetensors: <name>.exp_avg and <name>.exp_avg_sq for each tensor");
        eng_st_close(&sf);
    }
    snprintf(fpath, sizeof fpath, "%s/MANIFEST.json", path);
    json_error_t je;
    json_t *man = json_load_file(fpath, 0, &je);
    json_t *mf = json_object_get(json_object_get(man, "files"), "model.safetensors");
    TAP_OK(man && json_integer_value(json_object_get(man, "version")) == 1 &&
               json_integer_value(json_object_get(man, "step")) == 10 &&
               strlen(json_string_value(json_object_get(mf, "sha256"))) == 64 &&
               json_integer_value(json_object_get(mf, "bytes")) > (json_int_t)(N * 4),
           "MANIFEST.json: version, step, bytes and sha256 per file");
    json_decref(man);

    /* ---- a different config is refused */
    rc = eng_ckpt_load(path, oid, &back, &st2, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "refusing"), "another config's checkpoint: TLM_ECONFIG (%s)", e.msg);

    /* ---- shapes that differ are refused */
    eng_tensor_info t2[3];
    memcpy(t2, t, sizeof t);
    t2[2].shape[0] = 24, t2[2].numel = 24 * 32;
    eng_ckpt_data narrow = {t2, 3, N, p2, m2, v2, NULL, 0, NULL};
    rc = eng_ckpt_load(path, cid, &narrow, &st2, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "up_proj"), "a tensor of another shape: TLM_EDATA (%s)", e.msg);

    /* ---- a value that is not finite: refused at verification (so that
     * find falls back past it) and at load, the tensor named */
    char nanroot[420];
    snprintf(nanroot, sizeof nanroot, "%s/cknan", root);
    state_for(&st, cid, 10);
    rc = eng_ckpt_write(nanroot, &d, &cfg, &st, 3, path, &e);
    v[N - 1] = INFINITY; /* the last exp_avg_sq element, of the last tensor */
    state_for(&st, cid, 11);
    rc = rc || eng_ckpt_write(nanroot, &d, &cfg, &st, 3, path, &e);
    v[N - 1] = 1;
    TAP_OK(rc == 0 && eng_ckpt_verify(path, &e) == TLM_EDATA &&
               strstr(e.msg, "optim.safetensors: tensor model.layers.0.mlp.up_proj.weight.exp_avg_sq holds 1 value(s) "
                             "that are not finite (element 1535 is inf)"),
           "a checkpoint holding inf fails verification, naming the tensor and element (%s)", e.msg);
    rc = eng_ckpt_load(path, cid, &back, &st2, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "up_proj.weight.exp_avg_sq holds 1 value(s) that are not finite"),
           "...and loading it (%s)", e.msg);
    int logged = n_logged;
    rc = eng_ckpt_find(nanroot, path, on_log, NULL, &e);
    TAP_OK(rc == 0 && strstr(path, "step-00000010") && n_logged == logged + 1 && strstr(last_log, "step-00000011") &&
               strstr(last_log, "not finite"),
           "find skips it with a log line, as a corrupt one, for step 10 (%s)", last_log);
    n_logged = logged;

    /* ---- newest N kept, fallback past corrupt and truncated ones */
    for (int s = 20; s <= 40; s += 10) {
        fill(p, N, (uint64_t)s);
        state_for(&st, cid, s);
        rc = eng_ckpt_write(ckroot, &d, &cfg, &st, 3, path, &e);
    }
    TAP_OK(rc == 0 && count_entries(ckroot) == 3 && !exists(ckroot, "step-00000010") &&
               exists(ckroot, "step-00000040"),
           "keep_checkpoints 3: steps 20, 30, 40 remain");
    /* a crashed write leaves only a temp folder, which is never used */
    char stale[500];
    snprintf(stale, sizeof stale, "%s/.tmp-step-00000050", ckroot);
    mkdir(stale, 0777);
    rc = eng_ckpt_find(ckroot, path, on_log, NULL, &e);
    TAP_OK(rc == 0 && strstr(path, "step-00000040") && n_logged == 0, "find: the newest is step 40 (%s)", path);

    snprintf(fpath, sizeof fpath, "%s/step-00000040/model.safetensors", ckroot);
    FILE *f = fopen(fpath, "r+b");
    fseek(f, -100, SEEK_END);
    int c = fgetc(f);
    fseek(f, -100, SEEK_END);
    fputc(c ^ 0x20, f);
    fclose(f);
    char dir40[500];
    snprintf(dir40, sizeof dir40, "%s/step-00000040", ckroot);
    TAP_OK(eng_ckpt_verify(dir40, &e) == TLM_EDATA, "a flipped byte is detected (%s)", e.msg);
    rc = eng_ckpt_find(ckroot, path, on_log, NULL, &e);
    TAP_OK(rc == 0 && strstr(path, "step-00000030") && n_logged == 1 && strstr(last_log, "step-00000040") &&
               strstr(last_log, "SHA-256"),
           "corrupt step 40 is skipped with a log line, step 30 used (%s)", last_log);

    snprintf(fpath, sizeof fpath, "%s/step-00000030/optim.safetensors", ckroot);
    struct stat sb;
    stat(fpath, &sb);
    if (truncate(fpath, sb.st_size / 2))
        TAP_DIAG("truncate failed");
    rc = eng_ckpt_find(ckroot, path, on_log, NULL, &e);
    TAP_OK(rc == 0 && strstr(path, "step-00000020") && n_logged == 3 && strstr(last_log, "truncated"),
           "truncated step 30 is skipped too, step 20 used (%s)", last_log);
    rc = eng_ckpt_load(path, cid, &back, &st2, &e);
    fill(p, N, 20);
    TAP_OK(rc == 0 && st2.step == 20 && !memcmp(p, p2, N * 4), "step 20 loads with its own parameters");

    snprintf(fpath, sizeof fpath, "%s/step-00000020/MANIFEST.json", ckroot);
    unlink(fpath);
    snprintf(fpath, sizeof fpath, "%s/step-00000030/MANIFEST.json", ckroot);
    f = fopen(fpath, "w");
    fputs("{\"version\": 1, \"files\": [", f);
    fclose(f);
    rc = eng_ckpt_find(ckroot, path, on_log, NULL, &e);
    TAP_OK(rc == 0 && path[0] == '\0' && n_logged == 6, "no valid checkpoint left: none found, each one logged");

    /* the next write cleans the temp folder and replaces a same-step folder */
    state_for(&st, cid, 40);
    rc = eng_ckpt_write(ckroot, &d, &cfg, &st, 2, path, &e);
    TAP_OK(rc == 0 && !exists(ckroot, ".tmp-step-00000050") && eng_ckpt_verify(path, &e) == 0 &&
               count_entries(ckroot) == 2,
           "rewriting step 40 replaces the corrupt folder, clears temp folders, prunes to 2");
    rc = eng_ckpt_find("/nonexistent/tlm/ckpt", path, on_log, NULL, &e);
    TAP_OK(rc == 0 && !path[0], "a missing checkpoint folder means no checkpoint, not an error");

    /* ---- extra optimizer state (hope_attn's gradient accumulators) */
    eng_tensor_info xt[1];
    memset(xt, 0, sizeof xt);
    strcpy(xt[0].name, "model.layers.0.mlp.up_proj.weight.grad_acc");
    xt[0].ndim = 2, xt[0].shape[0] = 48, xt[0].shape[1] = 32, xt[0].numel = 48 * 32, xt[0].offset = 0;
    float *x = malloc(48 * 32 * 4), *x2 = calloc(48 * 32, 4);
    fill(x, 48 * 32, 9);
    eng_ckpt_data dx = {t, 3, N, p, m, v, xt, 1, x}, backx = {t, 3, N, p2, m2, v2, xt, 1, x2};
    char xroot[420];
    snprintf(xroot, sizeof xroot, "%s/ckx", root);
    state_for(&st, cid, 7);
    rc = eng_ckpt_write(xroot, &dx, &cfg, &st, 1, path, &e);
    snprintf(fpath, sizeof fpath, "%s/optim.safetensors", path);
    int nopt = -1;
    if (!rc && !eng_st_open(&sf, fpath, &e)) {
        nopt = eng_st_find(&sf, "model.layers.0.mlp.up_proj.weight.grad_acc") ? sf.n : -1;
        eng_st_close(&sf);
    }
    rc = rc || eng_ckpt_load(path, cid, &backx, &st2, &e);
    TAP_OK(rc == 0 && nopt == 7 && !memcmp(x, x2, 48 * 32 * 4) && !memcmp(v, v2, N * 4),
           "extra optimizer state: saved in optim.safetensors under its own name (%d tensors), loaded bit for bit",
           nopt);
    rc = eng_ckpt_load(path, cid, &back, &st2, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "7 tensors, the model has 6 (1 the model does not know)"),
           "a model without it refuses it: %s", e.msg);
    state_for(&st, cid, 8);
    rc = eng_ckpt_write(xroot, &d, &cfg, &st, 1, path, &e);
    if (!rc)
        rc = eng_ckpt_load(path, cid, &backx, &st2, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "optim.safetensors: no tensor model.layers.0.mlp.up_proj.weight.grad_acc"),
           "a checkpoint without it cannot resume a model that needs it, and names it: %s", e.msg);
    free(x), free(x2);

    /* ---- trainer.json as untrusted text */
    static const struct {
        const char *text, *want;
    } S[] = {
        {"{\"version\": 1, \"step\": -1, \"tokens\": 0, \"seed\": 1, \"config_id\": \"%s\", \"data\": "
         "{\"cursor\": 0, \"train_windows\": 1, \"data_id\": \"%s\"}}", "step is -1 (expected a count, 0 or more)"},
        {"{\"version\": 1, \"step\": 1, \"tokens\": 0, \"seed\": 1, \"config_id\": \"%s\", \"data\": "
         "{\"cursor\": -5, \"train_windows\": 1, \"data_id\": \"%s\"}}", "data.cursor is -5 (expected a count"},
        {"{\"version\": 1, \"step\": 1e3, \"tokens\": 0, \"seed\": 1, \"config_id\": \"%s\", \"data\": "
         "{\"cursor\": 0, \"train_windows\": 1, \"data_id\": \"%s\"}}", "\"step\" is missing or not an integer"},
        {"{\"version\": 1, \"step\": 99999999999999999999, \"tokens\": 0}", "too big integer"},
        {"{\"version\": 1, \"step\": 1, \"tokens\": 0, \"seed\": 1, \"config_id\": \"%s\", \"data\": "
         "{\"cursor\": 0, \"train_windows\": 1, \"data_id\": \"xyz\"}}", "not a SHA-256"},
        {"{\"version\": 1, \"step\": 1, \"tokens\": 0, \"seed\": 1, \"config_id\": \"%s\", \"data\": "
         "{\"cursor\": 0, \"train_windows\": 1, \"data_id\": \"%s\"}, \"step\": 2}", "duplicate"},
        {"[1, 2]", "not a JSON object"},
        {"{\"version\": 2}", "version 2"},
    };
    const char *hx = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const char *bad_hex = "0011223344556677889XaabbccddeeffZZ112233445566778899aabbccddeeff";
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, S[i].text, hx, hx);
        rc = eng_ckpt_parse_state("trainer.json", text, strlen(text), &st2, &e);
        TAP_OK(rc == TLM_EDATA && strstr(e.msg, "trainer.json") && strstr(e.msg, S[i].want),
               "trainer.json refused: %s (%s)", S[i].want, e.msg);
    }
    {
        char text[1024];
        snprintf(text, sizeof text, S[4].text, bad_hex);
        rc = eng_ckpt_parse_state("trainer.json", text, strlen(text), &st2, &e);
        TAP_OK(rc == TLM_EDATA && strstr(e.msg, "not a SHA-256"), "a config_id that is not hex is refused (%s)",
               e.msg);
    }

    /* ---- checkpoint files that are not regular files */
    state_for(&st, cid, 9);
    rc = eng_ckpt_write(xroot, &d, &cfg, &st, 1, path, &e);
    snprintf(fpath, sizeof fpath, "%s/trainer.json", path);
    unlink(fpath);
    alarm(20);
    rc = rc || mkfifo(fpath, 0600);
    int vrc = eng_ckpt_verify(path, &e);
    TAP_OK(!rc && vrc == TLM_EDATA && strstr(e.msg, "trainer.json: is not a regular file (a FIFO)"),
           "a FIFO in a checkpoint fails verification at once (%s)", e.msg);
    rc = eng_ckpt_read_state(path, &st2, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "(a FIFO)"), "and reading its state (%s)", e.msg);
    unlink(fpath);
    mkdir(fpath, 0700);
    rc = eng_ckpt_read_state(path, &st2, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "trainer.json: is a directory"), "a folder there: is a directory (%s)",
           e.msg);
    rmdir(fpath);
    alarm(0);

    free(p), free(m), free(v), free(p2), free(m2), free(v2);
    if (tlm_rm_tree(root))
        TAP_DIAG("could not remove %s", root);
    return tap_done();
}
