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
typedef struct dash_db {
    const char *path;
    db *d;            /* NULL until opened */
    unsigned gen;     /* opens so far: part of the ETag, since data_version is per connection */
    pthread_mutex_t mu;
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
/* A request's parameters (query string values, already decoded by MHD). */
typedef struct dash_query {
    const char *sweep;        /* jobs, tables */
    const char *keys[16];     /* job: 1; series: up to 16 */
    int n_keys;
    int paper;                /* tables */
    int format;               /* tables: RPT_FMT_* (JSON by default) */
    const char *name;         /* tables, figures */
} dash_query;

/* Each writes its JSON into f; 0, or negative with e filled
 * (TLM_ECONFIG: a bad parameter, answered 400; TLM_EDATA: not found, 404). */
int dash_api_sweeps(db *d, FILE *f, tlm_err *e);
int dash_api_jobs(db *d, const dash_query *q, FILE *f, tlm_err *e);
int dash_api_job(db *d, const dash_query *q, FILE *f, tlm_err *e);
int dash_api_series(db *d, const dash_query *q, FILE *f, tlm_err *e);
/* The paper's tables: rpt_table_build + rpt_render_json, on their own connection. */
int dash_api_tables(FILE *f, tlm_err *e);
int dash_api_table(const char *db_path, const dash_query *q, FILE *f, tlm_err *e);
/* A figure of reports/ as SVG (PLplot is not thread-safe: one at a time). */
int dash_api_figure(const char *db_path, const char *tmpdir, const dash_query *q, char **svg, size_t *len,
                    tlm_err *e);

/* A job key as the URL gives it: 64 lowercase hex digits. */
int dash_key_ok(const char *key);

/* ------------------------------------------------------------ the server */
typedef struct dash_opts {
    const char *db_path;
    const char *listen;     /* "127.0.0.1:PORT", "HOST:PORT", "unix:PATH" */
    const char *vendor_dir; /* uPlot's dist/ folder */
    const char *token;      /* NULL: draw one */
    int max_conns;          /* connections at once (default 64) */
    int threads;            /* worker threads (default 4) */
} dash_opts;

typedef struct dash_server dash_server;
/* Starts serving; *url is the address to open (with the token), owned by
 * the server.  A non-loopback address is allowed; main warns about it. */
int dash_server_start(const dash_opts *o, dash_server **out, const char **url, tlm_err *e);
void dash_server_stop(dash_server *s);
/* 1 when the host of a "HOST:PORT" listen address is a loopback one. */
int dash_listen_is_loopback(const char *listen);

#endif
