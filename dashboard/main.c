/* main.c: tlm-dash, a local web dashboard of results.db.
 * Parses the command line, starts the server (server.c), prints the URL
 * with its access token and serves until SIGINT or SIGTERM.  The only
 * place that prints errors and exits: 0 stopped by a signal, 1 failed,
 * 2 usage. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/fileio.h"
#include "dashboard/dash.h"

#ifndef DASH_VENDOR_DIR
#define DASH_VENDOR_DIR "dashboard/node_modules/uplot/dist"
#endif

#define O(m) offsetof(dash_opts, m)
static const tlm_opt OPTS[] = {
    {"db", "PATH", TLM_OPT_STR, O(db_path), .def = DB_DEFAULT_PATH,
     .help = "the results database (opened read-only; it may be missing at start)"},
    {"listen", "ADDR", TLM_OPT_STR, O(listen),
     .help = "127.0.0.1:PORT (default 127.0.0.1:0, any free port), [::1]:PORT, HOST:PORT (warned about unless "
             "loopback), or unix:PATH (a socket, mode 0600)"},
    {"vendor", "DIR", TLM_OPT_STR, O(vendor_dir), .def = DASH_VENDOR_DIR, .help = "uPlot's dist/ folder"},
    {"max-connections", "N", TLM_OPT_INT, O(max_conns), .lo = 1, .hi = 10000, .def = "64",
     .help = "connections at once (more wait or are refused)"},
    {"threads", "N", TLM_OPT_INT, O(threads), .lo = 1, .hi = 64, .def = "4", .help = "threads answering requests"},
    {"token-file", "FILE", TLM_OPT_STR, O(token_file),
     .help = "keep the access token in FILE (mode 0600; drawn into it when missing), so that the URL stays the "
             "same across restarts; refused when its group or others can read it"},
    /* for tests that script several servers: not in --help, since a token on a command line is visible in ps */
    {"token", "TOKEN", TLM_OPT_STR, O(token), .help = NULL},
    {"help", NULL, TLM_OPT_HELP, .help = "this text"},
    {0},
};
#undef O

static void usage(FILE *f, const tlm_cli *cli)
{
    tlm_cli_synopsis(f, cli, "usage: ");
    fputs("\n"
          "Serves a read-only web view of results.db (sweeps, jobs, one job's curves,\n"
          "comparisons, the paper's tables and figures) that follows tlmd as it trains.\n"
          "Prints the URL to open, with its access token; every request without the\n"
          "token gets 403.\n"
          "\n",
          f);
    tlm_cli_options(f, cli);
    fputs("\ndocs/dashboard.md describes the pages and the security model.\n", f);
}

int main(int argc, char **argv)
{
    dash_opts o;
    memset(&o, 0, sizeof o);
    tlm_cli cli = {.cmd = "tlm-dash", .opts = OPTS, .col = 23};
    tlm_err e = {0};
    int rc = tlm_cli_parse(&cli, argc, argv, &o, &e);
    if (rc == TLM_CLI_HELP) {
        usage(stdout, &cli);
        return 0;
    }
    if (rc) {
        fprintf(stderr, "tlm-dash: %s\n", e.msg);
        return rc == TLM_ECONFIG ? 2 : 1;
    }
    if (tlm_path_check_len("--db", o.db_path, TLM_PATH_CAP - 1 - 16, &e) ||
        tlm_path_not_dir("--db", o.db_path, "an SQLite database file, such as results.db", &e)) {
        fprintf(stderr, "tlm-dash: %s\n", e.msg);
        return 2;
    }
    if (o.token && o.token_file) {
        fprintf(stderr, "tlm-dash: --token and --token-file: give one of them\n");
        return 2;
    }
    char token[80];
    if (o.token_file) {
        int created;
        if (tlm_path_check_len("--token-file", o.token_file, TLM_PATH_CAP - 1 - 32, &e) ||
            dash_token_file(o.token_file, token, sizeof token, &created, &e)) {
            fprintf(stderr, "tlm-dash: %s\n", e.msg);
            return e.code == TLM_ECONFIG ? 2 : 1;
        }
        o.token = token;
        if (created)
            fprintf(stderr, "tlm-dash: a new access token in %s (mode 0600): the URL stays the same at the next start\n",
                    o.token_file);
    }
    if (o.listen && !dash_listen_is_loopback(o.listen))
        fprintf(stderr,
                "tlm-dash: warning: --listen %s is reachable from other machines; anyone who learns the token "
                "can read results.db, and HTTP is not encrypted\n",
                o.listen);

    /* blocked here, so that every thread MHD starts inherits the mask and sigwait below receives them */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    dash_server *s;
    const char *url;
    if (dash_server_start(&o, &s, &url, &e)) {
        fprintf(stderr, "tlm-dash: %s\n", e.msg);
        return 1;
    }
    if (dash_server_warning(s))
        fprintf(stderr, "tlm-dash: warning: %s\n", dash_server_warning(s));
    printf("tlm-dash: serving %s at %s\n", o.db_path, url);
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    dash_server_stop(s);
    fprintf(stderr, "tlm-dash: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}
