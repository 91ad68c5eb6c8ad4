/* test_fileio.c: tlm_rm_tree (common/fileio.c), the one rm -r of the
 * tree, with both of its callers' expectations: tlmd needs "gone" (a
 * missing folder is fine) told apart from a failure it reports with
 * errno; tlm-data removes its own staging folders and goes on when that
 * fails, so a failure must leave what it did not reach in place and
 * never follow a link out of the tree.  And tlm_parse_input, the read
 * then parse of config, sweep, manifest and checkpoint JSON files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "tests/lib/tap.h"

static char root[4096];

static void put(const char *rel)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, "x", 1) != 1) {
            /* the existence checks below report it */
        }
        close(fd);
    }
}

static int exists(const char *rel)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return lstat(p, &st) == 0;
}

static void dir(const char *rel)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    mkdir(p, 0755);
}

/* root/rel in one of two buffers, so that two can be passed at once */
static const char *at(const char *rel)
{
    static char p[2][4200];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", root, rel);
    return p[k];
}

/* a parser that keeps what it was given: the name and the text */
static int keep_text(const char *name, const char *text, size_t len, void *out, tlm_err *e)
{
    (void)e;
    snprintf(out, 64, "%s|%.*s", strrchr(name, '/') + 1, (int)len, text);
    return 0;
}

static void test_parse_input(void)
{
    char got[64] = "";
    tlm_err e = {0};
    put("p.txt"); /* "x" */
    TAP_OK(tlm_parse_input(at("p.txt"), 16, TLM_EDATA, NULL, keep_text, got, &e) == 0 && !strcmp(got, "p.txt|x"),
           "tlm_parse_input: the parser gets the path and the whole text (%s)", got);
    dir("pd");
    int rc = tlm_parse_input(at("pd"), 16, TLM_ECONFIG, "a sweep file", keep_text, got, &e);
    TAP_OK(rc == TLM_ECONFIG && strstr(e.msg, "pd: is a directory (expected a sweep file)"),
           "tlm_parse_input: a folder is refused with what was expected (%s)", e.msg);
    rc = tlm_parse_input(at("pd"), 16, TLM_EDATA, NULL, keep_text, got, &e);
    TAP_OK(rc == TLM_EDATA && strstr(e.msg, "is a directory"), "tlm_parse_input: without it, as tlm_read_input (%s)",
           e.msg);
    rc = tlm_parse_input(at("nope"), 16, TLM_EDATA, NULL, keep_text, got, &e);
    TAP_OK(rc == TLM_EDATA, "tlm_parse_input: a missing file is the caller's code (%s)", e.msg);
}

static void test_map_input(void)
{
    tlm_err e = {0};
    int fd = -1;
    const unsigned char *map = NULL;
    size_t len = 99;
    put("m.bin"); /* "x" */
    int rc = tlm_map_input(at("m.bin"), TLM_EDATA, 1, "a header", &fd, &map, &len, &e);
    TAP_OK(rc == 0 && fd >= 0 && map && len == 1 && map[0] == 'x', "tlm_map_input: the whole file, mapped (rc %d)", rc);
    if (!rc) {
        munmap((void *)map, len);
        close(fd);
    }
    fd = -1;
    rc = tlm_map_input(at("m.bin"), TLM_EDATA, 8, "a header", &fd, &map, &len, &e);
    TAP_OK(rc == TLM_EDATA && fd == -1 && !map && len == 0 &&
               strstr(e.msg, "m.bin: 1 bytes is shorter than a header (8)"),
           "tlm_map_input: a file shorter than min is refused with the caller's code, nothing open (%s)", e.msg);
    dir("md");
    rc = tlm_map_input(at("md"), TLM_ECONFIG, 1, "a header", &fd, &map, &len, &e);
    TAP_OK(rc == TLM_ECONFIG && fd == -1 && strstr(e.msg, "is a directory"),
           "tlm_map_input: a folder is refused as every input is (%s)", e.msg);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/tlm-test-fileio-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        printf("# mkdtemp %s failed\n", root);
        return 99;
    }
    /* a tree with files, nested folders, and a link to a file outside it */
    put("outside");
    dir("t");
    dir("t/a");
    dir("t/a/b");
    put("t/f");
    put("t/a/g");
    put("t/a/b/h");
    TAP_OK(symlink(at("outside"), at("t/a/link")) == 0 && exists("t/a/link"), "set-up: a link in the tree");
    TAP_OK(tlm_rm_tree(at("t")) == 0 && !exists("t"), "a tree with nested folders is removed");
    TAP_OK(exists("outside"), "a link inside is removed, its target outside is not");

    errno = 0;
    TAP_OK(tlm_rm_tree(at("never-there")) == 0, "a missing path is gone already: 0");
    put("plain");
    TAP_OK(tlm_rm_tree(at("plain")) == 0 && !exists("plain"), "a plain file is removed");

    /* a folder whose entries cannot be removed (not writable) */
    dir("ro");
    dir("ro/sub");
    put("ro/sub/keep");
    chmod(at("ro/sub"), 0555);
    if (geteuid() != 0) {
        errno = 0;
        int rc = tlm_rm_tree(at("ro"));
        int err = errno;
        TAP_OK(rc == -1 && err == EACCES, "a failure is -1 with errno (EACCES: %d)", err);
        TAP_OK(exists("ro/sub/keep") && exists("ro/sub"), "what could not be removed stays");
    } else {
        /* root ignores the permissions; a file of /proc cannot be removed by anyone */
        struct stat st;
        errno = 0;
        int rc = tlm_rm_tree("/proc/self/comm");
        int err = errno;
        TAP_OK(rc == -1 && err == EPERM, "as root, a failure (a /proc file) is -1 with errno (EPERM: %d)", err);
        TAP_OK(stat("/proc/self/comm", &st) == 0, "what could not be removed stays");
    }
    chmod(at("ro/sub"), 0755);
    TAP_OK(tlm_rm_tree(at("ro")) == 0 && !exists("ro"), "once writable, the rest goes");

    test_parse_input();
    test_map_input();

    tlm_rm_tree(root);
    return tap_done();
}
