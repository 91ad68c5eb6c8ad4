/* pairing.c: which database a runs folder belongs to (see pairing.h). */
#include "orchestrator/pairing.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json.h"
#include "orchestrator/jsonline.h"

#define MARKER_MAX 65536
#define UNKNOWN_NAMED 3 /* run folders named in the refusal; the rest are counted */

typedef struct marker {
    char id[DB_ID_LEN + 1];
    char database[PATH_MAX];
} marker;

static int is_hex(const char *s, size_t n)
{
    if (strlen(s) != n)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

/* 1 read, 0 absent, negative on error (a marker that cannot be trusted is
 * an error: the folder's owner is then unknown). */
static int read_marker(const char *path, marker *m, tlm_err *e)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return tlm_errf(e, TLM_EIO, "%s: %s", path, strerror(errno));
    }
    const char *expected = "expected {\"version\": 1, \"database_id\": \"<32 hex digits>\", \"database\": \"PATH\"}";
    if (!S_ISREG(st.st_mode))
        return tlm_errf(e, TLM_ECONFIG, "%s: not a regular file; %s", path, expected);
    char *buf = NULL;
    size_t len = 0;
    if (tlm_read_file(path, MARKER_MAX, &buf, &len, e))
        return tlm_err_prefix(e, "the runs folder's marker");
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        len--;
    size_t cap = len + 2 * ORC_JSON_MAX_MEMBERS + 16;
    char *scratch = malloc(cap);
    orc_json_object *o = malloc(sizeof *o);
    char why[200];
    int rc = 0;
    if (!scratch || !o) {
        rc = tlm_errf(e, TLM_ENOMEM, "out of memory");
    } else if (orc_json_parse_object(buf, len, o, scratch, cap, why, sizeof why)) {
        rc = tlm_errf(e, TLM_ECONFIG, "%s: %s; %s", path, why, expected);
    } else {
        const orc_json_member *v = orc_json_get(o, "version"), *id = orc_json_get(o, "database_id"),
                              *dbm = orc_json_get(o, "database");
        if (!v || v->type != ORC_JSON_NUMBER || !v->integral || v->inum != 1)
            rc = tlm_errf(e, TLM_ECONFIG, "%s: 'version' must be 1 (a newer tlm wrote it?); %s", path, expected);
        else if (!id || id->type != ORC_JSON_STRING || !is_hex(id->str, DB_ID_LEN))
            rc = tlm_errf(e, TLM_ECONFIG, "%s: 'database_id' must be %d lowercase hex digits; %s", path, DB_ID_LEN,
                          expected);
        else if (dbm && dbm->type != ORC_JSON_STRING)
            rc = tlm_errf(e, TLM_ECONFIG, "%s: 'database' must be a string; %s", path, expected);
        else {
            memcpy(m->id, id->str, DB_ID_LEN + 1);
            snprintf(m->database, sizeof m->database, "%s", dbm ? dbm->str : "(not recorded)");
            rc = 1;
        }
    }
    free(o);
    free(scratch);
    free(buf);
    return rc;
}

static int write_marker(const char *path, const char *id, const char *database, tlm_err *e)
{
    char esc[6 * PATH_MAX + 1];
    /* bytes outside ASCII as \u00XX, so the file is valid UTF-8 whatever the
     * path holds (the path is for people: the id decides) */
    if (tlm_json_escape_buf(database, TLM_JSON_DEL | TLM_JSON_ASCII, esc, sizeof esc) >= sizeof esc)
        return tlm_errf(e, TLM_ECONFIG, "%s: the database path is too long to record", path);
    char *text = NULL;
    int n = asprintf(&text, "{\"version\": 1, \"database_id\": \"%s\", \"database\": \"%s\"}\n", id, esc);
    if (n < 0)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    int rc = tlm_write_file_atomic(path, text, (size_t)n, e);
    free(text);
    return rc;
}

/* Run folders (12 lowercase hex digits, a folder) the database does not know. */
static int unknown_folders(const char *runs, db *d, char *names, size_t cap, int *n_unknown, int *n_folders,
                           tlm_err *e)
{
    *n_unknown = *n_folders = 0;
    names[0] = '\0';
    DIR *dir = opendir(runs);
    if (!dir)
        return tlm_errf(e, TLM_EIO, "%s: %s", runs, strerror(errno));
    int rc = 0;
    struct dirent *de;
    size_t at = 0;
    while (!rc && (de = readdir(dir))) {
        if (!is_hex(de->d_name, 12))
            continue;
        char path[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", runs, de->d_name) >= sizeof path || lstat(path, &st) != 0 ||
            !S_ISDIR(st.st_mode))
            continue;
        (*n_folders)++;
        int known = db_job_prefix_known(d, de->d_name, e);
        if (known < 0)
            rc = known;
        else if (!known && (*n_unknown)++ < UNKNOWN_NAMED)
            at += (size_t)snprintf(names + at, at < cap ? cap - at : 0, "%s%s", at ? ", " : "", de->d_name);
    }
    closedir(dir);
    return rc;
}

int orc_pairing_claim(const char *runs_dir, const char *db_path, db *d, int adopt, FILE *log, tlm_err *e)
{
    char id[DB_ID_LEN + 1], path[PATH_MAX], database[PATH_MAX];
    int rc = db_database_id(d, id, e);
    if (rc)
        return rc;
    size_t rl = strlen(runs_dir);
    if ((size_t)snprintf(path, sizeof path, "%s%s" ORC_PAIRING_FILE, runs_dir,
                         rl && runs_dir[rl - 1] == '/' ? "" : "/") >= sizeof path)
        return tlm_errf(e, TLM_ECONFIG, "--runs %s: the path is too long", runs_dir);
    if (!realpath(db_path, database))
        snprintf(database, sizeof database, "%s", db_path);

    marker m;
    int found = read_marker(path, &m, e);
    if (found < 0)
        return tlm_err_prefix(e, "--runs %s: cannot tell which database this folder belongs to (remove %s to let "
                                 "--db %s claim it)",
                              runs_dir, path, db_path);
    if (found && !strcmp(m.id, id)) {
        if (!strcmp(m.database, database))
            return 0;
        /* the same database under another name (moved, or a link): keep the pairing, update the note */
        if ((rc = write_marker(path, id, database, e)))
            return rc;
        fprintf(log, "tlmd: --runs %s belongs to this database, recorded as %s; now %s\n", runs_dir, m.database,
                database);
        return 0;
    }
    if (found && !adopt)
        return tlm_errf(e, TLM_ECONFIG,
                        "--runs %s belongs to another database: %s pairs it with %s (database id %.8s), but --db %s "
                        "is database %.8s; nothing was changed.  Give --db %s to continue that work, or another "
                        "--runs folder for %s (or --adopt-runs to let %s take this folder over: checkpoints it "
                        "never recorded are set aside, never deleted)",
                        runs_dir, path, m.database, m.id, db_path, id, m.database, db_path, db_path);
    if (!found) {
        char names[256];
        int n_unknown, n_folders;
        if ((rc = unknown_folders(runs_dir, d, names, sizeof names, &n_unknown, &n_folders, e)))
            return rc;
        if (n_unknown && !adopt)
            return tlm_errf(e, TLM_ECONFIG,
                            "--runs %s holds %d run folder(s) that --db %s does not know (%s%s), and no %s says "
                            "which database they belong to; nothing was changed.  Give the --db they belong to, or "
                            "another --runs folder (or --adopt-runs to let %s take this folder over: checkpoints it "
                            "never recorded are set aside, never deleted)",
                            runs_dir, n_unknown, db_path, names, n_unknown > UNKNOWN_NAMED ? ", ..." : "", path,
                            db_path);
        if ((rc = write_marker(path, id, database, e)))
            return rc;
        if (n_folders)
            fprintf(log, "tlmd: --runs %s (%d run folder(s), no %s yet) now belongs to --db %s\n", runs_dir,
                    n_folders, ORC_PAIRING_FILE, db_path);
        return 0;
    }
    if ((rc = write_marker(path, id, database, e)))
        return rc;
    fprintf(log, "tlmd: --adopt-runs: --runs %s belonged to %s (database id %.8s); it now belongs to --db %s\n",
            runs_dir, m.database, m.id, db_path);
    return 0;
}
