/* rundir.c: run folders (see rundir.h).  Every path here is under a run
 * folder of at most TLM_RUN_DIR_MAX bytes (orc_rundir_path refuses longer
 * ones), so the TLM_NAMES_UNDER_RUN_DIR bytes of room bound the names
 * built below. */
#include "orchestrator/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/protocol.h"
#include "common/vec.h"

int orc_rundir_path(const char *runs, const char *key, char *out, size_t cap, tlm_err *e)
{
    size_t n = strlen(runs);
    size_t len = (size_t)snprintf(out, cap, "%s%s%.12s", runs, n && runs[n - 1] == '/' ? "" : "/", key);
    if (len >= cap || len > TLM_RUN_DIR_MAX)
        return tlm_errf(e, TLM_ECONFIG, "--runs %s: a run folder in it would be %zu bytes, longer than the %d TLM "
                        "allows (the system's %d, less room for the files under it)",
                        runs, len, TLM_RUN_DIR_MAX, TLM_PATH_CAP - 1);
    return 0;
}

/* A new <dir>/set-aside/<UTC time>[-k]-<why>/ holding README.txt (`note`). */
static int make_aside(const char *dir, const char *why, const char *note, char *out, size_t cap, tlm_err *e)
{
    char root[TLM_PATH_CAP], stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    if (tlm_path_join(root, sizeof root, dir, ORC_ASIDE_DIR, e) || tlm_mkdir_p(root, e))
        return TLM_EIO;
    for (int k = 1; k < 100; k++) {
        int n = k == 1 ? snprintf(out, cap, "%s/%s-%s", root, stamp, why)
                       : snprintf(out, cap, "%s/%s-%d-%s", root, stamp, k, why);
        if (n < 0 || (size_t)n >= cap)
            return tlm_errf(e, TLM_EIO, "%s: path too long", root);
        if (mkdir(out, 0777) == 0)
            break;
        if (errno != EEXIST)
            return tlm_errf(e, TLM_EIO, "%s: cannot create folder: %s", out, strerror(errno));
        if (k == 99)
            return tlm_errf(e, TLM_EIO, "%s: too many folders of this second", out);
    }
    char readme[TLM_PATH_CAP];
    if (tlm_path_join(readme, sizeof readme, out, "README.txt", e) ||
        tlm_write_file_atomic(readme, note, strlen(note), e)) {
        rmdir(out);
        return TLM_EIO;
    }
    tlm_fsync_dir(root);
    return 0;
}

int orc_rundir_prepare(const char *dir, const char *json, char *aside, size_t cap, tlm_err *e)
{
    aside[0] = '\0';
    if (tlm_mkdir_p(dir, e))
        return TLM_EIO;
    char path[TLM_PATH_CAP], tmp[TLM_PATH_CAP], tmpname[64];
    snprintf(tmpname, sizeof tmpname, "." TLM_RUN_CONFIG ".tmp-%ld", (long)getpid());
    if (tlm_path_join(path, sizeof path, dir, TLM_RUN_CONFIG, e) || tlm_path_join(tmp, sizeof tmp, dir, tmpname, e))
        return TLM_EIO;
    char *old = NULL;
    size_t len = 0;
    tlm_err ignore;
    if (tlm_read_file(path, 1 << 20, &old, &len, &ignore) == 0) {
        int same = len == strlen(json) && !memcmp(old, json, len);
        free(old);
        if (same)
            return 0;
    }
    struct stat st;
    if (lstat(path, &st) == 0) {
        /* another config (a copy torn by a power cut, or a folder another
         * database used): kept, for whoever needs to know */
        static const char note[] =
            "tlmd set this config.json aside: it is not the config the database holds for the job of this run "
            "folder (the database's copy replaced it).\nDelete this folder when it is no longer needed.\n";
        char to[TLM_PATH_CAP];
        if (make_aside(dir, "config", note, aside, cap, e) || tlm_path_join(to, sizeof to, aside, TLM_RUN_CONFIG, e))
            return TLM_EIO;
        if (rename(path, to) != 0)
            return tlm_errf(e, TLM_EIO, "%s: cannot set it aside: %s", path, strerror(errno));
        tlm_fsync_dir(to);
    }
    /* Written atomically (temp file, rename) but not fsync'ed: the file is
     * derived from results.db and compared with it before every start, so
     * a copy lost or torn by a power cut is rewritten, never trusted; the
     * two fsyncs cost more than the rest of a dispatch on a busy disk. */
    FILE *f = fopen(tmp, "wb");
    size_t n = strlen(json);
    int ok = f && fwrite(json, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        int rc = tlm_errf(e, TLM_EIO, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return rc;
    }
    return 0;
}

typedef struct {
    char (*v)[256];
    size_t n, cap;
} names;

static int names_add(names *l, const char *s)
{
    if (TLM_GROW(l->v, l->cap, l->n + 1, 8))
        return -1;
    snprintf(l->v[l->n++], 256, "%s", s);
    return 0;
}

int orc_rundir_set_aside(const char *dir, int64_t keep_step, const char *why, const char *note, int *moved,
                         char *aside, size_t cap, tlm_err *e)
{
    *moved = 0;
    aside[0] = '\0';
    char ckpt[TLM_PATH_CAP];
    if (tlm_path_join(ckpt, sizeof ckpt, dir, TLM_RUN_CKPT, e))
        return TLM_EIO;
    DIR *d = opendir(ckpt);
    if (!d)
        return errno == ENOENT ? 0 : tlm_errf(e, TLM_EIO, "%s: %s", ckpt, strerror(errno));
    names move = {0};
    int rc = 0, removed = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        char path[TLM_PATH_CAP];
        if (!strncmp(de->d_name, TLM_CKPT_TMP_PREFIX, sizeof TLM_CKPT_TMP_PREFIX - 1)) {
            if (tlm_path_join(path, sizeof path, ckpt, de->d_name, e))
                rc = TLM_EIO;
            else if (tlm_rm_tree(path))
                rc = tlm_errf(e, TLM_EIO, "%s: cannot remove: %s", path, strerror(errno));
            removed = 1;
            continue;
        }
        int64_t step = tlm_ckpt_step_of(de->d_name);
        if (step >= 0 && step > keep_step && names_add(&move, de->d_name))
            rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    closedir(d);
    if (!rc && move.n)
        rc = make_aside(dir, why, note, aside, cap, e);
    for (size_t i = 0; !rc && i < move.n; i++) {
        char from[TLM_PATH_CAP], to[TLM_PATH_CAP];
        if (tlm_path_join(from, sizeof from, ckpt, move.v[i], e) || tlm_path_join(to, sizeof to, aside, move.v[i], e))
            rc = TLM_EIO;
        else if (rename(from, to) != 0)
            rc = tlm_errf(e, TLM_EIO, "%s: cannot set it aside in %s: %s", from, aside, strerror(errno));
        else
            (*moved)++;
    }
    if (*moved)
        tlm_fsync_dir(aside);
    if (*moved || removed)
        tlm_fsync_dir(ckpt);
    free(move.v);
    return rc;
}
