/* test_shard.c: token shards as training reads them: a written shard reads
 * back exactly (2- and 4-byte tokens, a folder of several), damaged shards
 * are refused with messages that say what is wrong (truncated, a flipped
 * payload byte, an all-zero hash, header fields that do not add up, bad
 * magic, another format version), inputs that are not regular files (a
 * FIFO, a folder, a device) are refused without blocking, and shards made with
 * another tokenizer than the job's are refused by eng_tok_check_shards. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "engine/format/shard.h"
#include "engine/tok/tokenizer.h"
#include "tests/lib/tap.h"

static char dir[256];

static int write_shard(const char *path, uint32_t vocab, const char *tokname, const uint8_t *sha, const uint32_t *t,
                       size_t n, tlm_err *e)
{
    eng_shard_writer *w;
    int rc = eng_shard_writer_open(&w, path, 0, vocab, tokname, sha, e);
    if (rc)
        return rc;
    if ((rc = eng_shard_writer_append(w, t, n, e))) {
        eng_shard_writer_abort(w);
        return rc;
    }
    return eng_shard_writer_close(w, e);
}

static void patch(const char *path, long off, uint8_t x)
{
    int fd = open(path, O_RDWR);
    uint8_t b;
    if (pread(fd, &b, 1, off) == 1) {
        b ^= x;
        if (pwrite(fd, &b, 1, off) != 1)
            TAP_DIAG("patch failed");
    }
    close(fd);
}

static void copy(const char *from, const char *to)
{
    char *d;
    size_t n;
    tlm_err e;
    tlm_read_file(from, 1 << 26, &d, &n, &e);
    tlm_write_file_atomic(to, d, n, &e);
    free(d);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/tlm-test-shard.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    tlm_err e;
    tlm_mkdir_p(dir, &e);
    char p1[400], p2[400], sub[300];
    eng_tok *bytes;
    eng_tok_open(&bytes, "bytes", NULL, &e);

    /* round trip, 2-byte tokens */
    uint32_t *toks = malloc(100000 * sizeof *toks);
    for (int i = 0; i < 100000; i++)
        toks[i] = (uint32_t)(i * 7919u % 256);
    snprintf(sub, sizeof sub, "%s/train", dir);
    tlm_mkdir_p(sub, &e);
    snprintf(p1, sizeof p1, "%s/000000.tlmtok", sub);
    int rc = write_shard(p1, 256, "bytes", eng_tok_sha256(bytes), toks, 100000, &e);
    TAP_OK(rc == 0, "write a bytes shard");
    eng_shard s;
    rc = eng_shard_open(&s, p1, 1, &e);
    TAP_OK(rc == 0 && s.n_tokens == 100000 && s.token_bytes == 2 && s.vocab == 256 && !strcmp(s.tokenizer, "bytes") &&
               !memcmp(s.tokenizer_sha256, eng_tok_sha256(bytes), 32),
           "header reads back: 100000 tokens, 2 bytes each, vocab 256, tokenizer name and hash");
    int32_t *back = malloc(100000 * sizeof *back);
    rc = eng_shard_read(&s, 0, 100000, back, &e);
    int same = rc == 0;
    for (int i = 0; same && i < 100000; i++)
        same = back[i] == (int32_t)toks[i];
    TAP_OK(same, "every token reads back");
    rc = eng_shard_read(&s, 99990, 11, back, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "past the end"), "reading past the end is refused (%s)", e.msg);
    eng_shard_close(&s);

    /* 4-byte tokens, second shard in the folder */
    for (int i = 0; i < 1000; i++)
        toks[i] = 128000u + (uint32_t)i % 256;
    snprintf(p2, sizeof p2, "%s/000001.tlmtok", sub);
    uint8_t fake[32] = {1, 2, 3};
    rc = write_shard(p2, 128256, "llama3", fake, toks, 1000, &e);
    rc = eng_shard_open(&s, p2, 1, &e);
    TAP_OK(rc == 0 && s.token_bytes == 4 && eng_shard_token(&s, 999) == 128000u + 999 % 256,
           "a 128256-id vocabulary gets 4-byte tokens that read back");
    eng_shard_close(&s);
    eng_shardset set;
    rc = eng_shardset_open(&set, sub, 1, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "differs"), "a folder mixing tokenizers is refused (%s)", e.msg);
    unlink(p2);
    for (int i = 0; i < 5000; i++)
        toks[i] = (uint32_t)i % 256;
    write_shard(p2, 256, "bytes", eng_tok_sha256(bytes), toks, 5000, &e);
    rc = eng_shardset_open(&set, sub, 1, &e);
    TAP_OK(rc == 0 && set.n == 2 && set.n_tokens == 105000, "a folder of two shards: %d shards, %llu tokens", set.n,
           (unsigned long long)set.n_tokens);

    /* the training-time tokenizer check */
    rc = eng_tok_check_shards("bytes", &set, sub, &e);
    TAP_OK(rc == 0, "bytes shards are accepted for tokenizer: bytes%s%s", rc ? ": " : "", rc ? e.msg : "");
    rc = eng_tok_check_shards("bpe4096", &set, sub, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "made with tokenizer 'bytes'") && strstr(e.msg, "'bpe4096'"),
           "bytes shards are refused for tokenizer: bpe4096 (%s)", e.msg);
    rc = eng_tok_check_shards("llama3", &set, sub, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "made with tokenizer 'bytes'"), "and for llama3");
    eng_shardset_close(&set);

    /* same name, other definition: a retrained bpe */
    char bdir[300], rankfile[400], sh[400];
    snprintf(bdir, sizeof bdir, "%s/bpeset", dir);
    tlm_mkdir_p(bdir, &e);
    snprintf(rankfile, sizeof rankfile, "%s/bpe260.tiktoken", bdir);
    const char *texts[2] = {"aaaa bbbb aaaa bbbb abab abab cdcd", "xyxy zzzz xyxy zzzz wwww wwww vvvv"};
    uint8_t shas[2][32];
    for (int k = 0; k < 2; k++) {
        eng_bpe_trainer *tr;
        eng_bpe_trainer_new(&tr, &e);
        eng_bpe_trainer_feed(tr, texts[k], strlen(texts[k]), &e);
        rc = eng_bpe_trainer_finish(tr, 260, rankfile, NULL, NULL, &e);
        eng_bpe_trainer_free(tr);
        eng_tok *t;
        rc |= eng_tok_open(&t, "bpe260", bdir, &e);
        if (!rc)
            memcpy(shas[k], eng_tok_sha256(t), 32);
        if (k == 0) {
            eng_tokvec v = {0};
            eng_tok_encode(t, texts[0], strlen(texts[0]), 0, &v, &e);
            snprintf(sh, sizeof sh, "%s/000000.tlmtok", bdir);
            write_shard(sh, eng_tok_vocab(t), eng_tok_name(t), eng_tok_sha256(t), v.ids, v.n, &e);
            eng_tokvec_clear(&v);
        }
        eng_tok_free(t);
        if (k == 0) {
            rc = eng_shardset_open(&set, bdir, 1, &e);
            rc = rc ? rc : eng_tok_check_shards("bpe260", &set, bdir, &e);
            TAP_OK(rc == 0, "bpe260 shards match the bpe260 file beside them%s%s", rc ? ": " : "", rc ? e.msg : "");
            eng_shardset_close(&set);
        }
    }
    TAP_OK(memcmp(shas[0], shas[1], 32) != 0, "retraining on other text changes the definition hash");
    rc = eng_shardset_open(&set, bdir, 1, &e);
    rc = rc ? rc : eng_tok_check_shards("bpe260", &set, bdir, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "different 'bpe260' tokenizer") && strstr(e.msg, "rebuild"),
           "shards of the old bpe260 are refused after retraining (%s)", e.msg);
    eng_shardset_close(&set);

    /* damage */
    char bad[400];
    snprintf(bad, sizeof bad, "%s/damaged.tlmtok", dir);
    copy(p1, bad);
    if (truncate(bad, 192 + 2 * 100000 - 10)) {
    }
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "truncated or corrupt"), "a truncated shard is refused (%s)", e.msg);
    if (truncate(bad, 100)) {
    }
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "shorter than a shard header"), "a shard cut inside its header (%s)",
           e.msg);
    copy(p1, bad);
    patch(bad, 192 + 777, 0x01);
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == 0, "a flipped payload byte passes the cheap open (verify=0)");
    eng_shard_close(&s);
    rc = eng_shard_open(&s, bad, 1, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, bad) && strstr(e.msg, "payload's SHA-256") &&
               strstr(e.msg, "the header says"),
           "and is caught by the payload hash (verify=1), naming the file and both hashes: %s", e.msg);
    eng_shardset set1;
    rc = eng_shardset_open(&set1, bad, 1, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "payload's SHA-256"), "a set of that one shard is refused too (%s)", e.msg);

    /* header fields the payload hash does not cover */
    copy(p1, bad);
    {   /* zero the payload hash */
        int fd = open(bad, O_RDWR);
        uint8_t z[32] = {0};
        if (pwrite(fd, z, 32, 128) != 32)
            TAP_DIAG("pwrite failed");
        close(fd);
    }
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, bad) && strstr(e.msg, "all zeros"),
           "an all-zero payload hash is an error even without verify (%s)", e.msg);
    copy(p1, bad);
    patch(bad, 170, 0x01);
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "reserved"), "non-zero reserved header bytes are refused (%s)", e.msg);
    copy(p1, bad);
    patch(bad, 32 + 10, 'x');
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "NUL-padded"), "junk after the tokenizer name is refused (%s)", e.msg);
    copy(p1, bad);
    patch(bad, 32, 0x80 ^ 'b');
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "not printable"), "a non-printable tokenizer name is refused (%s)", e.msg);
    {   /* n_tokens 2^63 + 0: times 2 bytes wraps to 0, so the header "fits" a header-only file */
        copy(p1, bad);
        if (truncate(bad, ENG_SHARD_HEADER)) {
        }
        int fd = open(bad, O_RDWR);
        uint8_t n[8] = {0, 0, 0, 0, 0, 0, 0, 0x80};
        if (pwrite(fd, n, 8, 24) != 8)
            TAP_DIAG("pwrite failed");
        close(fd);
        rc = eng_shard_open(&s, bad, 0, &e);
        TAP_OK(rc == TLM_EDATA && strstr(e.msg, "9223372036854775808 tokens"),
               "a token count whose byte size wraps around is refused (%s)", e.msg);
    }
    /* inputs that are not regular files are refused at once, never read */
    char fifo[400], sdir[400];
    snprintf(fifo, sizeof fifo, "%s/fifo.tlmtok", dir);
    snprintf(sdir, sizeof sdir, "%s/adir.tlmtok", dir);
    TAP_OK(mkfifo(fifo, 0600) == 0 && mkdir(sdir, 0700) == 0, "a FIFO and a folder named *.tlmtok");
    alarm(20); /* a blocking open would hang here: SIGALRM fails the test instead */
    rc = eng_shard_open(&s, fifo, 1, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, fifo) && strstr(e.msg, "is not a regular file (a FIFO)"),
           "a FIFO shard is refused without blocking (%s)", e.msg);
    rc = eng_shardset_open(&set1, fifo, 1, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is not a regular file (a FIFO)"), "and as a split (%s)", e.msg);
    rc = eng_shard_open(&s, sdir, 1, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is a directory"), "a folder opened as a shard: is a directory (%s)",
           e.msg);
    rc = eng_shard_open(&s, "/dev/zero", 1, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "(a character device)"), "a device is refused (%s)", e.msg);
    char *txt = NULL;
    size_t tl = 0;
    rc = tlm_read_file(fifo, 100, &txt, &tl, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "(a FIFO)"), "tlm_read_file refuses a FIFO too (%s)", e.msg);
    rc = tlm_read_file(sdir, 100, &txt, &tl, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is a directory"), "and a folder (%s)", e.msg);
    alarm(0);
    rmdir(sdir);
    unlink(fifo);
    copy(p1, bad);
    patch(bad, 0, 0x20);
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "bad magic"), "bad magic is refused (%s)", e.msg);
    copy(p1, bad);
    patch(bad, 8, 0x02);
    rc = eng_shard_open(&s, bad, 0, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "version 3"), "another format version is refused (%s)", e.msg);
    rc = write_shard(bad, 256, "bytes", NULL, (const uint32_t[]){1, 256}, 2, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "outside the vocabulary"), "the writer refuses a token >= vocab (%s)",
           e.msg);

    free(toks);
    free(back);
    eng_tok_free(bytes);
    if (tlm_rm_tree(dir))
        TAP_DIAG("could not remove %s", dir);
    return tap_done();
}
