/* test_safetensors.c: write/read round trip of the safetensors container,
 * and the damaged files the reader must refuse. */
#include <stdint.h>
#include <unistd.h>

#include "engine/fileio.h"
#include "engine/safetensors.h"
#include "tests/tap.h"

int main(void)
{
    char dir[] = "/tmp/tlm-st-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/a.safetensors", dir);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {-1.5f, 0.25f, 1e30f};
    int64_t sa[2] = {2, 3}, sb[1] = {3};
    eng_st_writer *w;
    eng_err e = {0};
    char sha[65];
    int rc = eng_st_writer_new(&w, &e) || eng_st_writer_add(w, "model.a.weight", "F32", 2, sa, a, &e) ||
             eng_st_writer_add(w, "model.b", "F32", 1, sb, b, &e) || eng_st_writer_meta(w, "format", "pt", &e) ||
             eng_st_writer_meta(w, "tlm_step", "42", &e) || eng_st_writer_write(w, path, sha, &e);
    eng_st_writer_free(w);
    TAP_OK(rc == 0, "write: %s", rc ? e.msg : sha);

    eng_st_file f;
    rc = eng_st_open(&f, path, &e);
    TAP_OK(rc == 0 && f.n == 2, "read back 2 tensors: %s", rc ? e.msg : "ok");
    if (!rc) {
        const eng_st_tensor *t = eng_st_find(&f, "model.a.weight");
        TAP_OK(t && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 && !memcmp(eng_st_data(&f, t), a, sizeof a),
               "tensor a: shape and bytes");
        t = eng_st_find(&f, "model.b");
        TAP_OK(t && !memcmp(eng_st_data(&f, t), b, sizeof b), "tensor b: bytes");
        TAP_OK(eng_st_meta(&f, "tlm_step") && !strcmp(eng_st_meta(&f, "tlm_step"), "42"), "metadata");
        TAP_OK(f.data_off % 8 == 0, "data section 8-byte aligned (offset %zu)", f.data_off);
        eng_st_close(&f);
    }

    /* damaged copies */
    char *buf;
    size_t len;
    eng_read_file(path, 1 << 20, &buf, &len, &e);
    eng_write_file_atomic(bad, buf, len - 4, &e);
    rc = eng_st_open(&f, bad, &e);
    TAP_OK(rc == ENG_EDATA && strstr(e.msg, "truncated"), "truncated file refused: %s", e.msg);
    char orig[8];
    memcpy(orig, buf, 8);
    buf[0] = (char)0xff;
    buf[5] = 0x10;
    eng_write_file_atomic(bad, buf, len, &e);
    rc = eng_st_open(&f, bad, &e);
    TAP_OK(rc == ENG_EDATA && strstr(e.msg, "header length"), "absurd header length refused: %s", e.msg);
    memcpy(buf, orig, 8);
    memcpy(buf + 8, "{\"x\":", 5); /* the header's JSON, broken */
    eng_write_file_atomic(bad, buf, len, &e);
    rc = eng_st_open(&f, bad, &e);
    TAP_OK(rc == ENG_EDATA && strstr(e.msg, "not valid JSON"), "garbled header refused: %s", e.msg);
    /* under a long run folder its message names the file whole (it kept 1,023 bytes of the name) */
    char deep[1400], deepfile[1450];
    snprintf(deep, sizeof deep, "%s", dir);
    for (int i = 0; i < 5; i++) {
        size_t at = strlen(deep);
        deep[at++] = '/';
        memset(deep + at, 'd', 240);
        deep[at + 240] = '\0';
    }
    snprintf(deepfile, sizeof deepfile, "%s/bad.safetensors", deep);
    rc = eng_mkdir_p(deep, &e) || eng_write_file_atomic(deepfile, buf, len, &e);
    TAP_OK(rc == 0, "a %zu-byte file name: %s", strlen(deepfile), rc ? e.msg : "written");
    rc = eng_st_open(&f, deepfile, &e);
    TAP_OK(rc == ENG_EDATA && !strncmp(e.msg, deepfile, strlen(deepfile)) && strstr(e.msg, "not valid JSON"),
           "...is whole in the message (%zu bytes)", strlen(e.msg));
    unlink(deepfile);
    for (int i = 0; i < 5; i++) {
        rmdir(deep);
        *strrchr(deep, '/') = '\0';
    }
    free(buf);
    rc = eng_st_open(&f, "/nonexistent/x.safetensors", &e);
    TAP_OK(rc == ENG_EDATA && strstr(e.msg, "cannot open"), "missing file: %s", e.msg);
    unlink(path);
    unlink(bad);
    rmdir(dir);
    return tap_done();
}
