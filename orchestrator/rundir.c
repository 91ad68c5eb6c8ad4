/* rundir.c: run folders (see rundir.h). */
#include "orchestrator/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/fileio.h"

int orc_rundir_path(const char *runs, const char *key, char *out, size_t cap, eng_err *e)
{
    size_t n = strlen(runs);
    size_t len = (size_t)snprintf(out, cap, "%s%s%.12s", runs, n && runs[n - 1] == '/' ? "" : "/", key);
    if (len >= cap || len > ENG_RUN_DIR_MAX)
        return eng_errf(e, ENG_ECONFIG, "--runs %s: a run folder in it would be %zu bytes, longer than the %d TLM "
                        "allows (the system's %d, less room for the files under it)",
                        runs, len, ENG_RUN_DIR_MAX, ENG_PATH_CAP - 1);
    return 0;
}

int orc_rundir_prepare(const char *dir, const char *json, eng_err *e)
{
    if (eng_mkdir_p(dir, e))
        return ENG_EIO;
    char path[ENG_PATH_CAP];
    if ((size_t)snprintf(path, sizeof path, "%s/config.json", dir) >= sizeof path)
        return eng_errf(e, ENG_EIO, "%s/config.json: longer than the %d bytes this system allows", dir,
                        ENG_PATH_CAP - 1);
    char *old = NULL;
    size_t len = 0;
    eng_err ignore;
    if (eng_read_file(path, 1 << 20, &old, &len, &ignore) == 0) {
        int same = len == strlen(json) && !memcmp(old, json, len);
        free(old);
        if (same)
            return 0;
    }
    /* Written atomically (temp file, rename) but not fsync'ed: the file is
     * derived from results.db and compared with it before every start, so
     * a copy lost or torn by a power cut is rewritten, never trusted; the
     * two fsyncs cost more than the rest of a dispatch on a busy disk. */
    char tmp[ENG_PATH_CAP];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/.config.json.tmp-%ld", dir, (long)getpid()) >= sizeof tmp)
        return eng_errf(e, ENG_EIO, "%s/.config.json.tmp-PID: longer than the %d bytes this system allows", dir,
                        ENG_PATH_CAP - 1);
    FILE *f = fopen(tmp, "wb");
    size_t n = strlen(json);
    int ok = f && fwrite(json, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        int rc = eng_errf(e, ENG_EIO, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return rc;
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

static int rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* step-00000120 -> 120; -1 if the name is not a checkpoint folder */
static int64_t step_of(const char *name)
{
    if (strncmp(name, "step-", 5) != 0 || !name[5])
        return -1;
    int64_t v = 0;
    for (const char *p = name + 5; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

int orc_rundir_prune(const char *dir, int64_t keep_step, int *removed, eng_err *e)
{
    if (removed)
        *removed = 0;
    char ckpt[ENG_PATH_CAP];
    if ((size_t)snprintf(ckpt, sizeof ckpt, "%s/ckpt", dir) >= sizeof ckpt)
        return eng_errf(e, ENG_EIO, "%s/ckpt: longer than the %d bytes this system allows", dir, ENG_PATH_CAP - 1);
    DIR *d = opendir(ckpt);
    if (!d)
        return errno == ENOENT ? 0 : eng_errf(e, ENG_EIO, "%s: %s", ckpt, strerror(errno));
    int rc = 0, n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int64_t step = step_of(de->d_name);
        int stale_tmp = !strncmp(de->d_name, ".tmp-step-", 10);
        if (!stale_tmp && (step < 0 || step <= keep_step))
            continue;
        char path[ENG_PATH_CAP + 256];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", ckpt, de->d_name) >= sizeof path) {
            rc = eng_errf(e, ENG_EIO, "%s/%s: longer than the %d bytes this system allows", ckpt, de->d_name,
                          ENG_PATH_CAP - 1);
            break;
        }
        if (rm_tree(path)) {
            rc = eng_errf(e, ENG_EIO, "%s: cannot remove: %s", path, strerror(errno));
            break;
        }
        n += !stale_tmp;
    }
    closedir(d);
    if (removed)
        *removed = n;
    if (!rc && n)
        eng_fsync_dir(ckpt);
    return rc;
}

int orc_rundir_clear(const char *dir, eng_err *e) { return orc_rundir_prune(dir, -1, NULL, e); }
