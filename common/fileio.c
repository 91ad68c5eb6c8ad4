/* fileio.c: atomic writes, the input-file gate and small file helpers (see
 * fileio.h). */
#include "common/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int tlm_fsync_dir(const char *path)
{
    struct stat st;
    char dir[TLM_PATH_CAP];
    if (strlen(path) >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(dir, path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            strcpy(dir, ".");
        else if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static const char *kind_of(mode_t m)
{
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "of an unknown type";
}

int tlm_atomic_open(tlm_atomic *a, const char *path, tlm_err *e)
{
    memset(a, 0, sizeof *a);
    size_t n = strlen(path);
    if ((size_t)snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof a->tmp)
        return tlm_errf(e, TLM_EIO, "%s: the path is %zu bytes; with its temporary name (.tmp.PID) it is longer than the "
                        "%d this system allows", path, n, TLM_PATH_CAP - 1);
    /* the rename would put a file in place of a FIFO or a device (as root,
     * of /dev/null): anything there that is not a file is refused */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return tlm_errf(e, TLM_ECONFIG, "%s: is a directory (expected a file to write)", path);
        return tlm_errf(e, TLM_ECONFIG, "%s: is not a regular file (%s); TLM writes a new file and renames it into "
                        "place, which would replace it: give a file name", path, kind_of(st.st_mode));
    }
    strcpy(a->path, path);
    a->f = fopen(a->tmp, "wb");
    if (!a->f)
        return tlm_errf(e, TLM_EIO, "%s: cannot create (as %s): %s", path, a->tmp, strerror(errno));
    return 0;
}

int tlm_atomic_commit(tlm_atomic *a, tlm_err *e)
{
    int rc = 0;
    if (!a->f)
        return tlm_errf(e, TLM_EIO, "%s: not open", a->path);
    if (fflush(a->f) || fsync(fileno(a->f)))
        rc = tlm_errf(e, TLM_EIO, "%s: write failed: %s", a->tmp, strerror(errno));
    if (fclose(a->f) && !rc)
        rc = tlm_errf(e, TLM_EIO, "%s: close failed: %s", a->tmp, strerror(errno));
    a->f = NULL;
    if (!rc && rename(a->tmp, a->path))
        rc = tlm_errf(e, TLM_EIO, "%s: rename failed: %s", a->path, strerror(errno));
    if (rc) {
        unlink(a->tmp);
        return rc;
    }
    tlm_fsync_dir(a->path);
    return 0;
}

void tlm_atomic_abort(tlm_atomic *a)
{
    if (a->f)
        fclose(a->f);
    a->f = NULL;
    if (a->tmp[0])
        unlink(a->tmp);
}

int tlm_write_file_atomic(const char *path, const void *data, size_t n, tlm_err *e)
{
    tlm_atomic a;
    int rc = tlm_atomic_open(&a, path, e);
    if (rc)
        return rc;
    if (n && fwrite(data, 1, n, a.f) != n) {
        rc = tlm_errf(e, TLM_EIO, "%s: write failed: %s", a.tmp, strerror(errno));
        tlm_atomic_abort(&a);
        return rc;
    }
    return tlm_atomic_commit(&a, e);
}

static int not_regular(const char *path, mode_t m, int code, tlm_err *e)
{
    if (S_ISDIR(m))
        return tlm_errf(e, code, "%s: is a directory", path);
    return tlm_errf(e, code, "%s: is not a regular file (%s)", path, kind_of(m));
}

int tlm_stat_input(const char *path, int code, struct stat *st, tlm_err *e)
{
    if (stat(path, st))
        return tlm_errf(e, errno == ENOENT || errno == ENOTDIR ? code : TLM_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
    if (!S_ISREG(st->st_mode))
        return not_regular(path, st->st_mode, code, e);
    return 0;
}

int tlm_open_input(const char *path, int code, int *fd, struct stat *st, tlm_err *e)
{
    *fd = -1;
    struct stat sb;
    /* stat first, so that a device is never opened at all; the fstat after
     * the non-blocking open closes the gap to a file swapped meanwhile */
    int rc = tlm_stat_input(path, code, &sb, e);
    if (rc)
        return rc;
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (f < 0)
        return tlm_errf(e, errno == ENOENT ? code : TLM_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(f, &sb))
        rc = tlm_errf(e, TLM_EIO, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        rc = not_regular(path, sb.st_mode, code, e);
    else {
        int fl = fcntl(f, F_GETFL);
        if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) < 0)
            rc = tlm_errf(e, TLM_EIO, "%s: %s", path, strerror(errno));
    }
    if (rc) {
        close(f);
        return rc;
    }
    if (st)
        *st = sb;
    *fd = f;
    return 0;
}

int tlm_map_input(const char *path, int code, size_t min, const char *what, int *fd, const unsigned char **map,
                  size_t *len, tlm_err *e)
{
    struct stat st = {0};
    int f;
    *map = NULL;
    *len = 0;
    int rc = tlm_open_input(path, code, &f, &st, e);
    if (rc)
        return rc;
    /* checked before mmap, which refuses an empty length */
    if ((uint64_t)st.st_size < min)
        rc = tlm_errf(e, code, "%s: %lld bytes is shorter than %s (%zu)", path, (long long)st.st_size, what, min);
    else if ((uint64_t)st.st_size > SIZE_MAX)
        rc = tlm_errf(e, TLM_EDATA, "%s: %lld bytes do not fit this machine's address space", path,
                      (long long)st.st_size);
    if (rc) {
        close(f);
        return rc;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, f, 0);
    if (m == MAP_FAILED) {
        rc = tlm_errf(e, TLM_EIO, "%s: mmap: %s", path, strerror(errno));
        close(f);
        return rc;
    }
    *fd = f;
    *map = m;
    *len = (size_t)st.st_size;
    return 0;
}

int tlm_fopen_input(const char *path, int code, FILE **out, tlm_err *e)
{
    *out = NULL;
    int fd;
    int rc = tlm_open_input(path, code, &fd, NULL, e);
    if (rc)
        return rc;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        rc = tlm_errf(e, TLM_EIO, "%s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    *out = f;
    return 0;
}

int tlm_read_file(const char *path, size_t max, char **out, size_t *len, tlm_err *e)
{
    return tlm_read_input(path, max, TLM_EDATA, out, len, e);
}

int tlm_read_input(const char *path, size_t max, int code, char **out, size_t *len, tlm_err *e)
{
    *out = NULL;
    FILE *f;
    int rc = tlm_fopen_input(path, code, &f, e);
    if (rc)
        return rc;
    if (max == SIZE_MAX) {
        fclose(f);
        return tlm_errf(e, TLM_EINTERNAL, "%s: no size limit given", path);
    }
    char *buf = malloc(max + 1);
    if (!buf) {
        fclose(f);
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    }
    size_t n = fread(buf, 1, max + 1, f);
    int bad = ferror(f) ? errno : 0;
    fclose(f);
    if (bad) {
        free(buf);
        return tlm_errf(e, TLM_EIO, "%s: read error: %s", path, strerror(bad));
    }
    if (n > max) {
        free(buf);
        return tlm_errf(e, code, "%s: larger than %zu bytes", path, max);
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

int tlm_parse_input(const char *path, size_t max, int code, const char *what, tlm_text_parser *parse, void *out,
                    tlm_err *e)
{
    struct stat st;
    if (what && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return tlm_errf(e, code, "%s: is a directory (expected %s)", path, what);
    char *text;
    size_t len;
    int rc = tlm_read_input(path, max, code, &text, &len, e);
    if (rc)
        return rc;
    rc = parse(path, text, len, out, e);
    free(text);
    return rc;
}

int tlm_mkdir_p(const char *path, tlm_err *e)
{
    char tmp[TLM_PATH_CAP];
    if (strlen(path) >= sizeof tmp)
        return tlm_errf(e, TLM_EIO, "%s: the path is %zu bytes, longer than the %d this system allows", path,
                        strlen(path), TLM_PATH_CAP - 1);
    strcpy(tmp, path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) && errno != EEXIST)
            return tlm_errf(e, TLM_EIO, "%s: cannot create folder: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) && errno != EEXIST)
        return tlm_errf(e, TLM_EIO, "%s: cannot create folder: %s", tmp, strerror(errno));
    struct stat st;
    if (stat(tmp, &st) || !S_ISDIR(st.st_mode))
        return tlm_errf(e, TLM_EIO, "%s: exists and is not a folder", tmp);
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path); /* unlink, or rmdir for a folder (FTW_DEPTH: its entries went first) */
}

int tlm_rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

/* ------------------------------------------------------------ checks of given paths */
int tlm_path_check_len(const char *what, const char *path, size_t max, tlm_err *e)
{
    size_t n = strlen(path);
    if (n <= max)
        return 0;
    if (max >= TLM_PATH_CAP - 1)
        return tlm_errf(e, TLM_ECONFIG, "%s: the path is %zu bytes, longer than the %d this system allows", what, n,
                        TLM_PATH_CAP - 1);
    return tlm_errf(e, TLM_ECONFIG,
                    "%s: the path is %zu bytes, longer than the %zu TLM allows here (the system's %d, less room for "
                    "the names TLM puts under it)",
                    what, n, max, TLM_PATH_CAP - 1);
}

int tlm_path_not_dir(const char *what, const char *path, const char *expected, tlm_err *e)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    return tlm_errf(e, TLM_ECONFIG, "%s%s%s: is a directory (expected %s)", what ? what : "", what ? " " : "", path,
                    expected);
}

int tlm_path_not_file(const char *what, const char *path, const char *expected, tlm_err *e)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
        return 0;
    return tlm_errf(e, TLM_ECONFIG, "%s%s%s: is not a directory (expected %s)", what ? what : "", what ? " " : "",
                    path, expected);
}

int tlm_path_join(char *out, size_t cap, const char *dir, const char *name, tlm_err *e)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = '\0';
        return tlm_errf(e, TLM_EIO, "%s/%s: longer than the %zu bytes this system allows", dir, name,
                        (cap < TLM_PATH_CAP ? cap : TLM_PATH_CAP) - 1);
    }
    return 0;
}
