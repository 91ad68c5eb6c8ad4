/* server.c: tlm-dash's HTTP side, on GNU libmicrohttpd.
 *
 * MHD parses HTTP, bounds what a request may use (MHD_OPTION_CONNECTION_
 * MEMORY_LIMIT: the request line and headers must fit, or it answers 431
 * or 414 itself), how many connections are open and for how long.  Here:
 * the access token (a query parameter t=, then a cookie the first answer
 * sets), the routes (a fixed list: nothing names a file), conditional
 * answers (ETag from the database's data_version: a page that polls an
 * unchanged database gets 304 without a query), and the error pages.
 *
 * Must not: answer anything but the token's owner, read a file named by a
 * request, or hold the database lock while sending. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "dashboard/dash.h"
#include "reports/rpt.h"

#define TOKEN_HEX 64                  /* 32 random bytes */
#define COOKIE_NAME "tlm_dash"
#define REQUEST_MEMORY (32u * 1024u)  /* request line + headers of one connection */
#define CONN_TIMEOUT_S 30u            /* an idle or trickling connection is closed */

/* uPlot's two files, read once at start from the npm install (--vendor). */
typedef struct vendor_file {
    const char *url, *file, *type;
    char *data;
    size_t len;
} vendor_file;

struct dash_server {
    struct MHD_Daemon *mhd;
    dash_db dbs;
    char token[TOKEN_HEX + 1];
    char cookie[sizeof COOKIE_NAME "=; Path=/; HttpOnly; SameSite=Strict" + TOKEN_HEX];
    char boot[17];    /* part of every ETag: a restarted server never matches an old one */
    char url[TLM_PATH_CAP + 128];
    char unix_path[sizeof ((struct sockaddr_un *)0)->sun_path];
    char tmpdir[TLM_PATH_CAP];
    vendor_file vendor[2];
    char vendor_err[TLM_MSG_MAX];  /* the 404 of uPlot's files when they are missing */
    char vendor_warn[TLM_MSG_MAX]; /* and what main says about it at start */
    /* index.html without its two lines that load uPlot, when uPlot is
     * missing: the page then draws without it (a line where each chart
     * would be) and the browser logs no failed load */
    char *index_plain;
    size_t index_plain_len;
};

/* ------------------------------------------------------------ answers */
static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
/* the CPU time of this thread when its request began (Server-Timing) */
static _Thread_local double cpu0_ms;

static const char CSP[] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
                          " connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type, void *data,
                                size_t len, int must_free, const char *etag, double ms, const dash_server *s,
                                int set_cookie)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, data, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (must_free)
            free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    if (etag)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
    if (ms >= 0) {
        /* wall time, and this thread's CPU time (which a loaded machine does not inflate) */
        char t[96];
        snprintf(t, sizeof t, "app;dur=%.2f, cpu;dur=%.2f", ms, thread_cpu_ms() - cpu0_ms);
        MHD_add_response_header(r, "Server-Timing", t);
    }
    if (set_cookie)
        MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, s->cookie);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A plain-text error for a person (a browser tab or curl): what went wrong and what to do. */
static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *msg, const dash_server *s)
{
    size_t n = strlen(msg);
    char *b = malloc(n + 2);
    if (!b)
        return MHD_NO;
    memcpy(b, msg, n);
    b[n] = '\n';
    return send_buf(c, status, "text/plain; charset=utf-8", b, n + 1, 1, NULL, -1, s, 0);
}

/* An API error as JSON, which the page shows in its banner. */
static enum MHD_Result send_json_error(struct MHD_Connection *c, unsigned status, const char *msg,
                                       const dash_server *s)
{
    char *b = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&b, &n);
    if (!f)
        return MHD_NO;
    fprintf(f, "{\"error\":");
    rpt_json_str(f, msg);
    fprintf(f, ",\"status\":%u}\n", status);
    if (fclose(f)) {
        free(b);
        return MHD_NO;
    }
    return send_buf(c, status, "application/json", b, n, 1, NULL, -1, s, 0);
}

static unsigned status_of(int code)
{
    switch (code) {
    case TLM_ECONFIG: return MHD_HTTP_BAD_REQUEST;
    case TLM_EDATA: return MHD_HTTP_NOT_FOUND;
    default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

/* ------------------------------------------------------------ access */
/* Equal strings in a time that does not depend on where they differ. */
static int same_secret(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (!a || strlen(a) != n)
        return 0;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* 1 when the request carries the token: 2 when it came in the URL (the
 * answer then sets the cookie, so that the page's own requests need no
 * token in their URLs). */
static int authorised(struct MHD_Connection *c, const dash_server *s)
{
    if (same_secret(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "t"), s->token))
        return 2;
    return same_secret(MHD_lookup_connection_value(c, MHD_COOKIE_KIND, COOKIE_NAME), s->token);
}

/* ------------------------------------------------------------ routes */
enum { API_SWEEPS, API_JOBS, API_JOB, API_SERIES, API_TABLES, API_TABLE, API_FIGURE };
static const struct {
    const char *url;
    int id;
    int db; /* reads through the shared connection */
} api_routes[] = {
    {"/api/sweeps", API_SWEEPS, 1}, {"/api/jobs", API_JOBS, 1},     {"/api/job", API_JOB, 1},
    {"/api/series", API_SERIES, 1}, {"/api/tables", API_TABLES, 0}, {"/api/table", API_TABLE, 0},
    {"/api/figure", API_FIGURE, 0},
};

static enum MHD_Result collect_key(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    dash_query *q = cls;
    if (!strcmp(key, "key") && value) {
        if (q->n_keys >= DASH_MAX_KEYS) {
            q->n_keys = -1; /* too many: refused below */
            return MHD_NO;
        }
        if (q->n_keys >= 0)
            q->keys[q->n_keys++] = value;
    }
    return MHD_YES;
}

/* A parameter's value, NULL when absent or empty. */
static const char *arg(struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    return v && *v ? v : NULL;
}

/* An integer parameter in [lo, hi] (def when absent); -1 with msg filled when it is not one. */
static int int_arg(struct MHD_Connection *c, const char *name, int64_t lo, int64_t hi, int64_t def, int64_t *out,
                   char *msg, size_t cap)
{
    const char *v = arg(c, name);
    *out = def;
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > hi) {
        snprintf(msg, cap, "%s: expected a whole number from %lld to %lld", name, (long long)lo, (long long)hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* The request's parameters into q; 0, or -1 with msg saying which one is wrong. */
static int parse_query(struct MHD_Connection *c, dash_query *q, char *msg, size_t cap)
{
    memset(q, 0, sizeof *q);
    q->sweep = arg(c, "sweep");
    q->name = arg(c, "name");
    const char *paper = arg(c, "paper");
    q->paper = paper && !strcmp(paper, "1");
    const char *format = arg(c, "format");
    q->page = format && !strcmp(format, "page");
    q->format = !format || q->page ? RPT_FMT_JSON : rpt_format_parse(format);
    if (q->format < 0) {
        snprintf(msg, cap, "format: expected md, csv, latex, json or page");
        return -1;
    }
    q->filter = arg(c, "q");
    q->status = arg(c, "status");
    q->sort = arg(c, "sort");
    q->cols = arg(c, "cols");
    const char *dir = arg(c, "dir");
    if (dir && strcmp(dir, "asc") && strcmp(dir, "desc")) {
        snprintf(msg, cap, "dir: expected asc or desc");
        return -1;
    }
    q->desc = dir && !strcmp(dir, "desc");
    q->metric = arg(c, "metric");
    int64_t v;
    if (int_arg(c, "offset", 0, INT64_C(1) << 40, 0, &q->offset, msg, cap) ||
        int_arg(c, "limit", 1, DASH_JOBS_MAX_LIMIT, 0, &v, msg, cap))
        return -1;
    q->limit = (int)v;
    if (int_arg(c, "points", 2, DASH_SERIES_MAX_POINTS, 0, &v, msg, cap))
        return -1;
    q->points = (int)v;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_key, q);
    if (q->n_keys < 0) {
        snprintf(msg, cap, "too many key= parameters (at most %d jobs at once)", DASH_MAX_KEYS);
        return -1;
    }
    return 0;
}

static enum MHD_Result answer_api(struct MHD_Connection *c, dash_server *s, int id, int uses_db, int set_cookie)
{
    dash_query q;
    char msg[160];
    if (parse_query(c, &q, msg, sizeof msg))
        return send_json_error(c, MHD_HTTP_BAD_REQUEST, msg, s);

    double t0 = tlm_clock_mono();
    cpu0_ms = thread_cpu_ms();
    tlm_err e = {0};
    int rc = dash_db_acquire(&s->dbs, &e);
    if (rc)
        return send_json_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, e.msg, s);
    char ver[48], etag[96];
    rc = dash_db_version(&s->dbs, ver, sizeof ver, &e);
    if (rc) {
        dash_db_release(&s->dbs, 1);
        return send_json_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, e.msg, s);
    }
    snprintf(etag, sizeof etag, "\"%s-%s\"", s->boot, ver);
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    if (inm && !strcmp(inm, etag)) {
        dash_db_release(&s->dbs, 0);
        return send_buf(c, MHD_HTTP_NOT_MODIFIED, "application/json", (void *)"", 0, 0, etag,
                        (tlm_clock_mono() - t0) * 1e3, s, set_cookie);
    }
    if (!uses_db)
        dash_db_release(&s->dbs, 0); /* the version only: reports/ opens its own connection */

    char *b = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&b, &n);
    if (!f) {
        if (uses_db)
            dash_db_release(&s->dbs, 0);
        return MHD_NO;
    }
    /* one thread writes it: no lock per character (glibc locks every fputc otherwise) */
    __fsetlocking(f, FSETLOCKING_BYCALLER);
    char *svg = NULL;
    size_t svg_len = 0;
    switch (id) {
    case API_SWEEPS: rc = dash_api_sweeps(s->dbs.d, f, &e); break;
    case API_JOBS:
        if (!q.limit)
            q.limit = DASH_JOBS_LIMIT;
        rc = dash_api_jobs(s->dbs.d, &s->dbs.jobs, ver, &q, f, &e);
        break;
    case API_JOB: rc = dash_api_job(s->dbs.d, &q, f, &e); break;
    case API_SERIES: rc = dash_api_series(s->dbs.d, &q, f, &e); break;
    case API_TABLES: rc = dash_api_tables(f, &e); break;
    case API_TABLE:
        if (!q.limit)
            q.limit = DASH_JOBS_MAX_LIMIT;
        rc = dash_api_table(s->dbs.path, ver, &q, f, &e);
        break;
    case API_FIGURE: rc = dash_api_figure(s->dbs.path, s->tmpdir, &q, f, &svg, &svg_len, &e); break;
    }
    /* a corrupt or replaced file: the next request opens it again */
    if (uses_db)
        dash_db_release(&s->dbs, rc == TLM_EIO);
    if (fclose(f) && !rc)
        rc = tlm_errf(&e, TLM_ENOMEM, "out of memory");
    double ms = (tlm_clock_mono() - t0) * 1e3;
    if (rc) {
        free(b);
        free(svg);
        return send_json_error(c, status_of(rc), e.msg, s);
    }
    if (svg) {
        free(b);
        return send_buf(c, MHD_HTTP_OK, "image/svg+xml", svg, svg_len, 1, etag, ms, s, set_cookie);
    }
    return send_buf(c, MHD_HTTP_OK, q.format == RPT_FMT_JSON ? "application/json" : "text/plain; charset=utf-8", b,
                    n, 1, etag, ms, s, set_cookie);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **req)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)req;
    dash_server *s = cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "tlm-dash is read-only: GET and HEAD only", s);
    int auth = authorised(c, s);
    if (!auth)
        return send_text(c, MHD_HTTP_FORBIDDEN,
                         "403: no valid access token.  Open the URL tlm-dash printed when it started (it ends in "
                         "?t=...).",
                         s);
    int set_cookie = auth == 2;
    if (!strncmp(url, "/api/", 5)) {
        for (size_t i = 0; i < sizeof api_routes / sizeof api_routes[0]; i++)
            if (!strcmp(url, api_routes[i].url))
                return answer_api(c, s, api_routes[i].id, api_routes[i].db, set_cookie);
        return send_json_error(c, MHD_HTTP_NOT_FOUND, "no such API", s);
    }
    for (size_t i = 0; i < sizeof s->vendor / sizeof s->vendor[0]; i++)
        if (!strcmp(url, s->vendor[i].url)) {
            if (!s->vendor[i].data)
                return send_text(c, MHD_HTTP_NOT_FOUND, s->vendor_err, s);
            return send_buf(c, MHD_HTTP_OK, s->vendor[i].type, s->vendor[i].data, s->vendor[i].len, 0, NULL, -1,
                            s, set_cookie);
        }
    const dash_asset *a = dash_asset_find(!strcmp(url, "/") ? "index.html" : url[0] == '/' ? url + 1 : url);
    if (a && s->index_plain && !strcmp(a->name, "index.html"))
        return send_buf(c, MHD_HTTP_OK, a->type, s->index_plain, s->index_plain_len, 0, NULL, -1, s, set_cookie);
    if (!a)
        return send_text(c, MHD_HTTP_NOT_FOUND, "404: tlm-dash serves its own pages only", s);
    return send_buf(c, MHD_HTTP_OK, a->type, (void *)a->data, a->len, 0, NULL, -1, s, set_cookie);
}

/* ------------------------------------------------------------ listening */
int dash_listen_is_loopback(const char *listen)
{
    if (!strncmp(listen, "unix:", 5))
        return 1;
    return !strncmp(listen, "127.", 4) || !strncmp(listen, "[::1]:", 6) || !strncmp(listen, "localhost:", 10);
}

/* "HOST:PORT" or "[V6]:PORT" into a socket address (numeric hosts, and localhost). */
static int parse_inet(const char *listen, struct sockaddr_storage *ss, socklen_t *len, int *v6, int *port,
                      tlm_err *e)
{
    char host[256];
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen)
        return tlm_errf(e, TLM_ECONFIG, "--listen %s: expected HOST:PORT (127.0.0.1:8080), [::1]:PORT or unix:PATH",
                        listen);
    size_t hl = (size_t)(colon - listen);
    const char *h = listen;
    if (*h == '[' && hl >= 2 && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= sizeof host)
        return tlm_errf(e, TLM_ECONFIG, "--listen %s: host too long", listen);
    memcpy(host, h, hl);
    host[hl] = 0;
    if (!strcmp(host, "localhost"))
        strcpy(host, "127.0.0.1");
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || p < 0 || p > 65535)
        return tlm_errf(e, TLM_ECONFIG, "--listen %s: port '%s': expected 0 to 65535 (0: any free port)", listen,
                        colon + 1);
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(host, colon + 1, &hints, &ai);
    if (g || !ai)
        return tlm_errf(e, TLM_ECONFIG, "--listen %s: '%s' is not a numeric address (%s)", listen, host,
                        gai_strerror(g));
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    *v6 = ai->ai_family == AF_INET6;
    *port = (int)p;
    freeaddrinfo(ai);
    return 0;
}

/* A listening Unix socket at path, mode 0600.  A socket left by an earlier
 * run (nobody answers on it) is replaced; anything else there is refused,
 * never removed. */
static int listen_unix(const char *path, int *fd_out, tlm_err *e)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa.sun_path)
        return tlm_errf(e, TLM_ECONFIG, "--listen unix:%s: path longer than %zu bytes", path,
                        sizeof sa.sun_path - 1);
    strcpy(sa.sun_path, path);
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return tlm_errf(e, TLM_ECONFIG, "--listen unix:%s: exists and is not a socket; choose another path",
                            path);
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (probe >= 0)
            close(probe);
        if (live)
            return tlm_errf(e, TLM_ECONFIG, "--listen unix:%s: another server answers on it", path);
        if (unlink(path))
            return tlm_errf(e, TLM_EIO, "--listen unix:%s: cannot replace the stale socket: %s", path,
                            strerror(errno));
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return tlm_errf(e, TLM_EIO, "socket: %s", strerror(errno));
    /* 0600 from the start: no moment in which another user could connect */
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc || chmod(path, 0600) || listen(fd, 64)) {
        rc = tlm_errf(e, TLM_EIO, "--listen unix:%s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

static int read_vendor(dash_server *s, const char *dir)
{
    static const struct {
        const char *url, *file, *type;
    } files[2] = {
        {"/vendor/uPlot.iife.min.js", "uPlot.iife.min.js", "text/javascript; charset=utf-8"},
        {"/vendor/uPlot.min.css", "uPlot.min.css", "text/css; charset=utf-8"},
    };
    /* every route is set before any file is read: a missing first file must
     * leave the second's route a 404, not a NULL (it crashed the server) */
    for (int i = 0; i < 2; i++) {
        s->vendor[i].url = files[i].url;
        s->vendor[i].file = files[i].file;
        s->vendor[i].type = files[i].type;
    }
    for (int i = 0; i < 2; i++) {
        char path[TLM_PATH_CAP];
        tlm_err e;
        if (tlm_path_join(path, sizeof path, dir, files[i].file, &e) ||
            tlm_read_file(path, 16u << 20, &s->vendor[i].data, &s->vendor[i].len, &e)) {
            tlm_msg_printf(s->vendor_err, sizeof s->vendor_err,
                           "404: the charting library is not installed (%s); scripts/setup.sh installs it "
                           "(npm ci --prefix dashboard), or pass --vendor DIR",
                           e.msg);
            tlm_msg_printf(s->vendor_warn, sizeof s->vendor_warn,
                           "uPlot, the charting library, is missing (%s): the pages show their tables, and a line "
                           "where each chart would be; install it with scripts/setup.sh (or npm ci --prefix "
                           "dashboard --omit=dev), or pass --vendor DIR",
                           e.msg);
            return -1;
        }
    }
    return 0;
}

/* index.html less its lines that name /vendor/ (uPlot's script and style). */
static int plain_index(dash_server *s, tlm_err *e)
{
    const dash_asset *a = dash_asset_find("index.html");
    s->index_plain = malloc(a->len + 1);
    if (!s->index_plain)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    size_t n = 0;
    for (const char *p = a->data, *end = a->data + a->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        if (!memmem(p, len, "/vendor/", 8)) {
            memcpy(s->index_plain + n, p, len);
            n += len;
        }
        p += len;
    }
    s->index_plain_len = n;
    return 0;
}

int dash_server_start(const dash_opts *o, dash_server **out, const char **url, tlm_err *e)
{
    *out = NULL;
    dash_server *s = calloc(1, sizeof *s);
    if (!s)
        return tlm_errf(e, TLM_ENOMEM, "out of memory");
    dash_db_init(&s->dbs, o->db_path);
    int rc = 0, fd = -1;
    unsigned char rnd[32 + 8];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        rc = tlm_errf(e, TLM_EIO, "getrandom: %s", strerror(errno));
        goto fail;
    }
    if (o->token) {
        if (!dash_token_ok(o->token)) {
            rc = tlm_errf(e, TLM_ECONFIG, "--token: expected 16 to %d letters, digits, '-' or '_'", TOKEN_HEX);
            goto fail;
        }
        strcpy(s->token, o->token);
    } else {
        dash__hex(s->token, rnd, 32);
    }
    dash__hex(s->boot, rnd + 32, 8);
    snprintf(s->cookie, sizeof s->cookie, COOKIE_NAME "=%s; Path=/; HttpOnly; SameSite=Strict", s->token);
    if (read_vendor(s, o->vendor_dir) && (rc = plain_index(s, e))) /* a missing library costs the charts only */
        goto fail;

    const char *tmp = getenv("TMPDIR");
    snprintf(s->tmpdir, sizeof s->tmpdir, "%s/tlm-dash.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s->tmpdir)) {
        rc = tlm_errf(e, TLM_EIO, "%s: cannot make a scratch folder for figures: %s", s->tmpdir, strerror(errno));
        s->tmpdir[0] = 0;
        goto fail;
    }

    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    int v6 = 0, port = 0;
    const char *listen_at = o->listen ? o->listen : "127.0.0.1:0";
    if (!strncmp(listen_at, "unix:", 5)) {
        if ((rc = listen_unix(listen_at + 5, &fd, e)))
            goto fail;
        snprintf(s->unix_path, sizeof s->unix_path, "%s", listen_at + 5);
    } else if ((rc = parse_inet(listen_at, &ss, &sl, &v6, &port, e))) {
        goto fail;
    }
    if (v6)
        flags |= MHD_USE_IPv6;
    unsigned conns = o->max_conns > 0 ? (unsigned)o->max_conns : 64u;
    unsigned threads = o->threads > 0 ? (unsigned)o->threads : 4u;
    if (fd >= 0)
        s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
                                  MHD_OPTION_CONNECTION_LIMIT, conns, MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S,
                                  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
                                  MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_END);
    else
        s->mhd = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR,
                                  (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, conns,
                                  MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                  (size_t)REQUEST_MEMORY, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_END);
    if (!s->mhd) {
        rc = tlm_errf(e, TLM_EIO, "cannot listen on %s (%s)", listen_at,
                      errno ? strerror(errno) : "libmicrohttpd refused the options");
        goto fail;
    }
    fd = -1; /* MHD owns it now */
    if (s->unix_path[0]) {
        snprintf(s->url, sizeof s->url, "http://localhost/?t=%s (on the socket unix:%s)", s->token, s->unix_path);
    } else {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
        char host[INET6_ADDRSTRLEN + 2];
        if (v6) {
            char a[INET6_ADDRSTRLEN];
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof a);
            snprintf(host, sizeof host, "[%s]", a);
        } else {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof host);
        }
        snprintf(s->url, sizeof s->url, "http://%s:%u/?t=%s", host, info ? info->port : (unsigned)port, s->token);
    }
    *out = s;
    *url = s->url;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    dash_server_stop(s);
    return rc;
}

const char *dash_server_warning(const dash_server *s)
{
    return s->vendor_warn[0] ? s->vendor_warn : NULL;
}

void dash_server_stop(dash_server *s)
{
    if (!s)
        return;
    if (s->mhd)
        MHD_stop_daemon(s->mhd);
    if (s->unix_path[0])
        unlink(s->unix_path); /* our own socket, made by listen_unix */
    if (s->tmpdir[0])
        rmdir(s->tmpdir);
    for (int i = 0; i < 2; i++)
        free(s->vendor[i].data);
    free(s->index_plain);
    dash_db_clear(&s->dbs);
    dash_tables_clear();
    free(s);
}
