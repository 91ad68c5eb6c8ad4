/* test_safetensors.c: write/read round trip of the safetensors container,
 * and the damaged files the reader must refuse: truncated, garbled, sizes
 * that wrap around, overlapping tensors, and what is not a regular file. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "engine/format/safetensors.h"
#include "tests/lib/tap.h"

int main(void)
{
    char dir[200];
    if (!tap_tmpdir(dir, sizeof dir, "tlm-st"))
        return 1;
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/a.safetensors", dir);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", dir);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {-1.5f, 0.25f, 1e30f};
    int64_t sa[2] = {2, 3}, sb[1] = {3};
    eng_st_writer *w;
    tlm_err e = {0};
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
    tlm_read_file(path, 1 << 20, &buf, &len, &e);
    tlm_write_file_atomic(bad, buf, len - 4, &e);
    rc = eng_st_open(&f, bad, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "truncated"), "truncated file refused: %s", e.msg);
    char orig[8];
    memcpy(orig, buf, 8);
    buf[0] = (char)0xff;
    buf[5] = 0x10;
    tlm_write_file_atomic(bad, buf, len, &e);
    rc = eng_st_open(&f, bad, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "header length"), "absurd header length refused: %s", e.msg);
    memcpy(buf, orig, 8);
    memcpy(buf + 8, "{\"x\":", 5); /* the header's JSON, broken */
    tlm_write_file_atomic(bad, buf, len, &e);
    rc = eng_st_open(&f, bad, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "not valid JSON"), "garbled header refused: %s", e.msg);
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
    rc = tlm_mkdir_p(deep, &e) || tlm_write_file_atomic(deepfile, buf, len, &e);
    TAP_OK(rc == 0, "a %zu-byte file name: %s", strlen(deepfile), rc ? e.msg : "written");
    rc = eng_st_open(&f, deepfile, &e);
    TAP_OK(rc == TLM_EDATA && !strncmp(e.msg, deepfile, strlen(deepfile)) && strstr(e.msg, "not valid JSON"),
           "...is whole in the message (%zu bytes)", strlen(e.msg));
    unlink(deepfile);
    for (int i = 0; i < 5; i++) {
        rmdir(deep);
        *strrchr(deep, '/') = '\0';
    }
    free(buf);

    /* headers whose numbers lie: sizes must be computed without wrapping */
    static const struct {
        const char *hdr, *want, *what;
    } H[] = {
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1099511627776,1099511627776],\"data_offsets\":[0,0]}}",
         "more than 2^40 elements", "shape [2^40, 2^40] (its byte size wraps to 0)"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,0],\"data_offsets\":[0,0]}}", NULL,
         "an empty tensor whose other dimensions are large"},
        {"{\"t\":{\"dtype\":\"F64\",\"shape\":[1099511627776,2],\"data_offsets\":[0,0]}}",
         "more than 2^40 elements", "2^41 elements"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1099511627777],\"data_offsets\":[0,0]}}", "bad shape",
         "a dimension above 2^40"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,18446744073709551615]}}",
         "not valid JSON", "an offset beyond int64"},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[16],\"data_offsets\":[0,16]},"
         "\"b\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,4]},"
         "\"c\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,12]}}",
         "overlap", "overlapping tensors with an empty one between them"},
        /* each field said by name: which is missing, what is wrong with it */
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
         "tensor 't' has 9 dimensions; this reader takes at most 8", "9 dimensions (dtype, shape, offsets all there)"},
        {"{\"t\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}",
         "tensor 't' has no shape (each tensor needs dtype, shape and data_offsets)", "no shape"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}",
         "tensor 't': data_offsets [4, 0] end before they begin", "offsets that end before they begin"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}",
         "tensor 't': data_offsets must be two whole numbers of bytes, not negative", "a negative offset"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}",
         "tensor 't': data_offsets must be a list of two byte offsets [begin, end]", "one offset"},
    };
    for (size_t i = 0; i < sizeof H / sizeof H[0]; i++) {
        size_t hl = strlen(H[i].hdr);
        uint8_t file[1024] = {0};
        for (int k = 0; k < 8; k++)
            file[k] = (uint8_t)((uint64_t)hl >> (8 * k));
        memcpy(file + 8, H[i].hdr, hl);
        tlm_write_file_atomic(bad, file, 8 + hl + 16, &e);
        rc = eng_st_open(&f, bad, &e);
        if (!H[i].want)
            TAP_OK(rc == 0, "%s is accepted%s%s", H[i].what, rc ? ": " : "", rc ? e.msg : "");
        else
            TAP_OK(rc == TLM_EDATA && strstr(e.msg, H[i].want), "%s is refused (%s)", H[i].what, e.msg);
        if (!rc)
            eng_st_close(&f);
    }

    /* not a regular file */
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/fifo.safetensors", dir);
    alarm(20);
    rc = mkfifo(fifo, 0600) ? -1 : eng_st_open(&f, fifo, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is not a regular file (a FIFO)"), "a FIFO is refused at once (%s)", e.msg);
    rc = eng_st_open(&f, dir, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is a directory"), "a folder: is a directory (%s)", e.msg);
    alarm(0);
    unlink(fifo);
    rc = eng_st_open(&f, "/nonexistent/x.safetensors", &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "cannot open"), "missing file: %s", e.msg);
    unlink(path);
    unlink(bad);
    rmdir(dir);
    return tap_done();
}
