/* dash.h: tlm-dash's internals, shared by its files (not a public API).
 *
 * tlm-dash is a read-only web view of results.db: server.c runs GNU
 * libmicrohttpd (the HTTP parsing, limits and threads are the library's),
 * checks the access token and routes a request to a static asset
 * (assets_gen.c, compiled in from dashboard/assets/), to uPlot's files in
 * the npm install, or to a JSON answer of api.c, which reads results.db
 * through one read-only connection and the paper's tables through
 * reports/ (the same code as tlm-report --table).
 *
 * Must not: write to results.db, block tlmd (WAL reader, short read
 * transactions), serve a file outside its own assets and the two uPlot
 * files, or put request text into SQL (every value is a bound parameter). */
#ifndef TLM_DASHBOARD_DASH_H
#define TLM_DASHBOARD_DASH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "db/db.h"

/* ------------------------------------------------------------ assets */
typedef struct dash_asset {
    const char *name; /* "index.html", "app.js", "app.css" */
    const char *type; /* Content-Type */
    const char *data;
    size_t len;
} dash_asset;
extern const dash_asset dash_assets[];
extern const int dash_n_assets;
const dash_asset *dash_asset_find(const char *name);

/* ------------------------------------------------------------ the database */
/* One read-only connection shared by the server's threads under a mutex,
 * opened on first use and again after a failure, so that a database that
 * is missing at start (tlmd not run yet) or was replaced is picked up. */
/* The jobs table's order for one request at one version of the database
 * (jobs.c): the row ids of the jobs that matched, sorted (every one, or the
 * first of them: see jobs.c), so that the next page of the same query
 * costs no search. */
typedef struct dash_jobs_cache {
    char *sig;     /* what they are for (version, sweep, status, words, sort); NULL: empty */
    int64_t *ids;  /* row ids in order */
    int64_t n;     /* of ids */
    int64_t total; /* jobs that matched: n when ids holds all of them */
} dash_jobs_cache;
void dash_jobs_cache_clear(dash_jobs_cache *c);

typedef struct dash_db {
    const char *path;
    db *d;            /* NULL until opened */
    unsigned gen;     /* opens so far: part of the ETag, since data_version is per connection */
    pthread_mutex_t mu;
    dash_jobs_cache jobs; /* under mu, as the connection */
} dash_db;

void dash_db_init(dash_db *s, const char *path);
void dash_db_clear(dash_db *s);
/* Locks s and makes sure the connection is open: 0 (locked, s->d usable)
 * or negative with e filled (not locked). */
int dash_db_acquire(dash_db *s, tlm_err *e);
/* Unlocks; failed != 0 closes the connection so that the next request
 * opens it again (a corrupt or replaced file). */
void dash_db_release(dash_db *s, int failed);
/* What the data looks like now, for ETags: changes whenever tlmd commits. */
int dash_db_version(dash_db *s, char *out, size_t cap, tlm_err *e);

/* ------------------------------------------------------------ JSON answers */
#define DASH_MAX_KEYS 64         /* jobs in one /api/series request */
#define DASH_JOBS_MAX_LIMIT 1000 /* rows of one jobs page, and of one page of a table */
#define DASH_JOBS_LIMIT 100      /* when limit= is not given: the jobs page's */
#define DASH_JOBS_MAX_WORDS 8    /* words of the jobs filter */
#define DASH_JOBS_MAX_FILTER 256 /* and its characters */
/* Points of all curves of one /api/series answer together (each job's
 * thinned evenly to its share), so that an answer stays a few MB at most. */
#define DASH_SERIES_BUDGET 200000
#define DASH_SERIES_MAX_POINTS 20000 /* of one curve */
#define DASH_SERIES_POINTS 1500      /* of one curve when points= is not given */

/* A request's parameters (query string values, already decoded by MHD). */
typedef struct dash_query {
    const char *sweep;                /* jobs, tables */
    const char *keys[DASH_MAX_KEYS];  /* job: 1; series: up to DASH_MAX_KEYS */
    int n_keys;
    int paper;                        /* tables */
    int format;                       /* tables: RPT_FMT_* (JSON by default) */
    int page;                         /* tables: format=page, the JSON and the Markdown of one build */
    const char *name;                 /* tables, figures */
    /* jobs: the filter's words (q=), one status, the sort column and
     * direction, the page (offset, limit), the columns (cols=, comma-separated) */
    const char *filter, *status, *sort, *cols;
    int desc;
    int64_t offset;
    int limit; /* 0: the answer's default */
    /* series: one metric only (tokens and it), at most this many points per curve */
    const char *metric;
    int points;
} dash_query;

/* Each writes its JSON into f; 0, or negative with e filled
 * (TLM_ECONFIG: a bad parameter, answered 400; TLM_EDATA: not found, 404). */
int dash_api_sweeps(db *d, FILE *f, tlm_err *e);
/* A page of the jobs table (jobs.c); version: the database's now (dash_db_version),
 * for which cache may hold the order already. */
int dash_api_jobs(db *d, dash_jobs_cache *cache, const char *version, const dash_query *q, FILE *f, tlm_err *e);
int dash_api_job(db *d, const dash_query *q, FILE *f, tlm_err *e);
int dash_api_series(db *d, const dash_query *q, FILE *f, tlm_err *e);
/* The paper's tables and figures (tables.c): the list; a table as
 * tlm-report renders it (q->format, or q->page: its JSON and Markdown for
 * the page), a page of its rows at a time (offset, limit: all of a table
 * that fits, at most DASH_JOBS_MAX_LIMIT rows), sorted by a column when
 * its rows are all ours; built once per version of the database. */
int dash_api_tables(FILE *f, tlm_err *e);
int dash_api_table(const char *db_path, const char *version, const dash_query *q, FILE *f, tlm_err *e);
/* A figure of reports/ as SVG into *svg (PLplot is not thread-safe: one at
 * a time), or, when it has nothing to draw yet, {"figure", "why"} into f. */
int dash_api_figure(const char *db_path, const char *tmpdir, const dash_query *q, FILE *f, char **svg, size_t *len,
                    tlm_err *e);
/* Frees the table kept between requests. */
void dash_tables_clear(void);

/* Shared by api.c and jobs.c: a statement (TLM_EIO with SQLite's message),
 * SQLite's message as the error, a column as JSON (text, number, null),
 * and a read transaction around an answer's queries (one snapshot). */
int dash__prepare(sqlite3 *h, const char *sql, sqlite3_stmt **st, tlm_err *e);
int dash__sql_fail(sqlite3 *h, tlm_err *e);
void dash__put_col(FILE *f, sqlite3_stmt *st, int i);
int dash__begin(sqlite3 *h, tlm_err *e);
void dash__end(sqlite3 *h);

/* A job key as the URL gives it: 64 lowercase hex digits. */
int dash_key_ok(const char *key);

/* ------------------------------------------------------------ the server */
typedef struct dash_opts {
    const char *db_path;
    const char *listen;     /* "127.0.0.1:PORT", "HOST:PORT", "unix:PATH" */
    const char *vendor_dir; /* uPlot's dist/ folder */
    const char *token;      /* NULL: draw one (--token, or what --token-file holds) */
    const char *token_file; /* --token-file (main reads it into token) */
    int max_conns;          /* connections at once (default 64) */
    int threads;            /* worker threads (default 4) */
} dash_opts;

typedef struct dash_server dash_server;
/* Starts serving; *url is the address to open (with the token), owned by
 * the server.  A non-loopback address is allowed; main warns about it. */
int dash_server_start(const dash_opts *o, dash_server **out, const char **url, tlm_err *e);
void dash_server_stop(dash_server *s);
/* What a user should know about a started server (uPlot missing), NULL when nothing. */
const char *dash_server_warning(const dash_server *s);

/* ------------------------------------------------------------ the token file */
/* --token-file PATH (token.c): the token in PATH, which must be the
 * caller's own regular file that neither group nor others can access
 * (mode 0600); a missing one is created so, with a new random token.
 * token receives it (cap > 64); *created says which. */
int dash_token_file(const char *path, char *token, size_t cap, int *created, tlm_err *e);
/* 1 when t can be a token: 16 to 64 letters, digits, '-' or '_' (it goes
 * into a cookie and a URL as it is). */
int dash_token_ok(const char *t);
/* b as 2n lowercase hex digits and a NUL into out. */
void dash__hex(char *out, const unsigned char *b, size_t n);
/* 1 when the host of a "HOST:PORT" listen address is a loopback one. */
int dash_listen_is_loopback(const char *listen);

#endif
