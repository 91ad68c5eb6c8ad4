/* db_util.h: helpers shared by the tests of results.db and of tlmd
 * (tests/db, tests/tlmd): one integer from a query, and a file of the
 * source tree as text (the schema, the docs they are checked against).
 * Header-only; not a test. */
#ifndef TLM_TESTS_DB_UTIL_H
#define TLM_TESTS_DB_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"

/* The first column of the first row, or -999 when there is none. */
static inline int64_t q_int(db *d, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -999;
    if (sqlite3_prepare_v2(db_handle(d), sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* $TLM_SRCDIR/rel (.. without it) into text, NUL-terminated; its length (0
 * when it cannot be read); *path (may be NULL) the path it read. */
static inline size_t src_text(const char *rel, char *text, size_t cap, char *path, size_t path_cap)
{
    const char *src = getenv("TLM_SRCDIR") ? getenv("TLM_SRCDIR") : "..";
    char p[1024];
    snprintf(p, sizeof p, "%.900s/%s", src, rel);
    if (path)
        snprintf(path, path_cap, "%s", p);
    FILE *f = fopen(p, "rb");
    size_t n = f ? fread(text, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    return n;
}

#endif
