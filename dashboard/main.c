/* main.c: tlm-dash, a local web dashboard of results.db.
 * Parses the command line, starts the server (server.c), prints the URL
 * with its access token and serves until SIGINT or SIGTERM.  The only
 * place that prints errors and exits: 0 stopped by a signal, 1 failed,
 * 2 usage. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfgtree.h"
#include "common/fileio.h"
#include "dashboard/dash.h"

#ifndef DASH_VENDOR_DIR
#define DASH_VENDOR_DIR "dashboard/node_modules/uplot/dist"
#endif

static void usage(FILE *f)
{
    fputs("usage: tlm-dash [--db results.db] [--listen 127.0.0.1:PORT | HOST:PORT | unix:PATH] [--vendor DIR]\n"
          "                [--max-connections N] [--threads N]\n"
          "\n"
          "Serves a read-only web view of results.db (sweeps, jobs, one job's curves, comparisons, the\n"
          "paper's tables and figures) that follows tlmd as it trains.  Prints the URL to open, with\n"
          "its access token; every request without the token gets 403.\n"
          "\n"
          "  --db PATH            the results database (default " DB_DEFAULT_PATH "; opened read-only,\n"
          "                       it may be missing at start)\n"
          "  --listen ADDR        127.0.0.1:PORT (default 127.0.0.1:0, any free port), [::1]:PORT,\n"
          "                       HOST:PORT (warned about unless loopback), or unix:PATH (a socket, mode 0600)\n"
          "  --vendor DIR         uPlot's dist/ folder (default " DASH_VENDOR_DIR ")\n"
          "  --max-connections N  connections at once (default 64; more wait or are refused)\n"
          "  --threads N          threads answering requests (default 4)\n"
          "  --help               this text\n"
          "\n"
          "docs/dashboard.md describes the pages and the security model.\n",
          f);
}

int main(int argc, char **argv)
{
    enum { O_DB = 256, O_LISTEN, O_VENDOR, O_CONNS, O_THREADS, O_TOKEN, O_HELP };
    static const struct option opts[] = {
        {"db", required_argument, NULL, O_DB},
        {"listen", required_argument, NULL, O_LISTEN},
        {"vendor", required_argument, NULL, O_VENDOR},
        {"max-connections", required_argument, NULL, O_CONNS},
        {"threads", required_argument, NULL, O_THREADS},
        /* for tests that script several servers: not in --help, since a token on a command line is visible in ps */
        {"token", required_argument, NULL, O_TOKEN},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    dash_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = DB_DEFAULT_PATH;
    o.vendor_dir = DASH_VENDOR_DIR;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int64_t v;
        tlm_err e;
        switch (c) {
        case O_DB: o.db_path = optarg; break;
        case O_LISTEN: o.listen = optarg; break;
        case O_VENDOR: o.vendor_dir = optarg; break;
        case O_TOKEN: o.token = optarg; break;
        case O_CONNS:
        case O_THREADS:
            if (tlm_cfg_arg_int(c == O_CONNS ? "--max-connections" : "--threads", optarg, 1, c == O_CONNS ? 10000 : 64,
                            &v, &e)) {
                fprintf(stderr, "tlm-dash: %s\n", e.msg);
                return 2;
            }
            *(c == O_CONNS ? &o.max_conns : &o.threads) = (int)v;
            break;
        case O_HELP: usage(stdout); return 0;
        default:
            fprintf(stderr, "tlm-dash: %s: %s\ntry: tlm-dash --help\n", argv[optind - 1],
                    optopt ? "needs a value" : "unknown option");
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tlm-dash: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    tlm_err e = {0};
    if (tlm_path_check_len("--db", o.db_path, TLM_PATH_CAP - 1 - 16, &e) ||
        tlm_path_not_dir("--db", o.db_path, "an SQLite database file, such as results.db", &e)) {
        fprintf(stderr, "tlm-dash: %s\n", e.msg);
        return 2;
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
    printf("tlm-dash: serving %s at %s\n", o.db_path, url);
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    dash_server_stop(s);
    fprintf(stderr, "tlm-dash: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}
