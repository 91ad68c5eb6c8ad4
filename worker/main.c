/* main.c: tlm-worker, one job per process (design.md "Contract: tlm-worker").
 * This file parses the command line and maps failures to exit statuses;
 * the work lives in the engine and in the worker's other files. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "worker/describe.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tlm-worker --config FILE --out DIR [--resume] [--threads N] [--device cpu]\n"
            "       tlm-worker --describe --config FILE\n"
            "       tlm-worker --config-keys\n"
            "\n"
            "  --config FILE   job configuration (YAML or JSON); see docs/config.md\n"
            "  --describe      print the resolved config, per-layer d_ff, parameter and FLOP\n"
            "                  account as JSON, and exit\n"
            "  --config-keys   list every configuration key with its meaning\n"
            "  -h, --help      this text\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'}, {"describe", no_argument, 0, 'd'},
        {"config-keys", no_argument, 0, 'k'},  {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *config = NULL;
    int describe = 0;
    for (int ch; (ch = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (ch) {
        case 'c': config = optarg; break;
        case 'd': describe = 1; break;
        case 'k': eng_config_print_keys(stdout); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tlm-worker: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!config) {
        fprintf(stderr, "tlm-worker: --config FILE is required\n");
        usage(stderr);
        return 2;
    }
    eng_config cfg;
    eng_err err = {0};
    if (eng_config_load(config, &cfg, &err)) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return 2;
    }
    if (describe) {
        if (wrk_describe(&cfg, stdout, &err)) {
            fprintf(stderr, "tlm-worker: %s\n", err.msg);
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "tlm-worker: training is not available in this build yet; use --describe\n");
    return 2;
}
