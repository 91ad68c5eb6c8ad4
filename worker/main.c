/* main.c: tlm-worker, one job per process (its contract:
 * docs/protocol.md).  This file parses the command line and dispatches;
 * training lives in worker/run.c and the engine. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cfgtree.h"
#include "engine/config/config.h"
#include "engine/config/suites.h"
#include "common/fileio.h"
#include "engine/cpu/runtime.h"
#include "worker/describe.h"
#include "worker/events.h"
#include "worker/evalrun.h"
#include "worker/run.h"
#include "worker/signals.h"

/* "Exit status: 0 done, 1 internal error, ..." from the failure table,
 * wrapped before 80 columns. */
static void exit_statuses(FILE *f)
{
    char word[160];
    int col = fprintf(f, "Exit status: %d done", TLM_EXIT_OK);
    for (size_t i = 0; tlm_failure_at(i); i++) {
        const tlm_failure *k = tlm_failure_at(i);
        int n = snprintf(word, sizeof word, "%d %s", k->exit, k->brief);
        int last = !tlm_failure_at(i + 1);
        if (col + 2 + n + last > 79) {
            fputs(",\n", f);
            col = 0;
        } else {
            fputs(", ", f);
            col += 2;
        }
        col += fprintf(f, "%s", word);
    }
    fputs(".\n", f);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tlm-worker --config FILE --out DIR [--resume] [--threads N] [--device D]\n"
            "                  [--events-fd N | --events-file PATH] [--job KEY] [--heartbeat S]\n"
            "                  [--die-with-parent]\n"
            "       tlm-worker --eval --checkpoint DIR [--suites LIST] [--config FILE] [--threads N]\n"
            "                  [--events-fd N] [--job KEY] [--heartbeat S]\n"
            "       tlm-worker --describe --config FILE\n"
            "       tlm-worker --config-keys\n"
            "\n"
            "Trains one job and writes its events as JSON lines (docs/protocol.md).\n"
            "\n"
            "  --config FILE      job configuration (YAML or JSON); see docs/config.md\n"
            "  --out DIR          run folder: config.json and ckpt/ (created if missing)\n"
            "  --resume           continue from the newest valid checkpoint in DIR/ckpt\n"
            "                     (none: start fresh)\n"
            "  --threads N        compute threads (default 0: all cores)\n"
            "  --device D         where to train: cpu, or cuda:K in a build with CUDA\n"
            "  --events-fd N      write events to file descriptor N (default 1, stdout)\n"
            "  --events-file PATH append events to PATH, on disk (fsync) at every checkpoint\n"
            "                     and at the end (tlmd's slurm executor reads it)\n"
            "  --job KEY          echo KEY as \"job\" in every event\n"
            "  --heartbeat S      emit a heartbeat after S seconds without events (default 10)\n"
            "  --die-with-parent  stop (checkpoint, exit 75) when the parent process exits\n"
            "  --eval             evaluate a checkpoint instead of training: DIR is a step\n"
            "                     folder, a run folder (its newest valid checkpoint) or a\n"
            "                     Hugging Face GPT-2 folder (then --config is needed)\n"
            "  --suites LIST      with --eval: ");
    for (int i = ENG_SUITE_VAL + 1; i < ENG_SUITE_COUNT; i++) /* val is the trainer's */
        fprintf(f, "%s%s", i > ENG_SUITE_VAL + 1 ? "," : "", eng_suite_names[i]);
    fprintf(f,
            "\n"
            "                     (default: the config's eval.suites)\n"
            "  --describe         print the resolved config, per-layer d_ff, parameter and FLOP\n"
            "                     account as JSON, and exit\n"
            "  --config-keys      list every configuration key with its meaning\n"
            "  -h, --help         this text\n"
            "\n");
    exit_statuses(f);
}

/* An option's value as an integer in [lo, hi]; prints the reason and returns -1 if not. */
static int int_arg(const char *flag, const char *s, long lo, long hi, long *out)
{
    int64_t v;
    tlm_err e;
    if (tlm_cfg_arg_int(flag, s, lo, hi, &v, &e)) {
        fprintf(stderr, "tlm-worker: %s\n", e.msg);
        return -1;
    }
    *out = (long)v;
    return 0;
}

/* Refuses, by name, the options given that the chosen mode does not use. */
static int refuse_unused(const struct option *opts, const unsigned char *given, const int *unused, const char *why)
{
    for (int i = 0; unused[i]; i++)
        for (int k = 0; opts[k].name; k++)
            if (opts[k].val == unused[i] && given[k]) {
                fprintf(stderr, "tlm-worker: --%s does nothing %s; leave it out\n", opts[k].name, why);
                return -1;
            }
    return 0;
}

/* A descriptor open for reading only takes no events: every write would
 * fail, and the daemon would see a worker that says nothing. */
static int events_fd_writable(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY) {
        fprintf(stderr, "tlm-worker: --events-fd %d: read-only, not open for writing (events are written to it)\n", fd);
        return 0;
    }
    return 1;
}

enum {
    O_CONFIG = 256, O_DESCRIBE, O_KEYS, O_OUT, O_RESUME, O_THREADS, O_DEVICE, O_FD, O_JOB, O_HB, O_DWP,
    O_EVAL, O_CKPT, O_SUITES, O_EFILE
};
static const struct option OPTS[] = {
    {"config", required_argument, 0, O_CONFIG},   {"describe", no_argument, 0, O_DESCRIBE},
    {"config-keys", no_argument, 0, O_KEYS},      {"out", required_argument, 0, O_OUT},
    {"resume", no_argument, 0, O_RESUME},         {"threads", required_argument, 0, O_THREADS},
    {"device", required_argument, 0, O_DEVICE},   {"events-fd", required_argument, 0, O_FD},
    {"job", required_argument, 0, O_JOB},         {"heartbeat", required_argument, 0, O_HB},
    {"die-with-parent", no_argument, 0, O_DWP},   {"help", no_argument, 0, 'h'},
    {"eval", no_argument, 0, O_EVAL},             {"checkpoint", required_argument, 0, O_CKPT},
    {"suites", required_argument, 0, O_SUITES},   {"events-file", required_argument, 0, O_EFILE},
    {0, 0, 0, 0},
};
#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

/* The command line: the training options (wrk_opts) and the mode. */
typedef struct {
    wrk_opts o;
    int describe, die_with_parent, eval, keys;
    const char *checkpoint, *suites, *events_file;
    unsigned char given[N_OPTS]; /* per option: how often it was given */
} cli;

/* The options into c: -1 to go on, else the exit status (--help: 0). */
static int parse_args(int argc, char **argv, cli *c)
{
    wrk_opts *o = &c->o;
    long v;
    tlm_err err = {0};
    for (int ch, li = -1; (ch = getopt_long(argc, argv, "h", OPTS, &li)) != -1; li = -1) {
        /* a second value would silently replace the first */
        if (li >= 0 && c->given[li]++ && OPTS[li].has_arg) {
            fprintf(stderr, "tlm-worker: --%s is given twice; give it once\n", OPTS[li].name);
            return TLM_EXIT_CONFIG;
        }
        switch (ch) {
        case O_CONFIG: o->config = optarg; break;
        case O_DESCRIBE: c->describe = 1; break;
        case O_KEYS: c->keys = 1; break;
        case O_OUT: o->out = optarg; break;
        case O_RESUME: o->resume = 1; break;
        case O_THREADS:
            if (int_arg("--threads", optarg, 0, 4096, &v))
                return TLM_EXIT_CONFIG;
            o->threads = (int)v;
            break;
        case O_DEVICE: o->device = optarg; break;
        case O_FD:
            if (int_arg("--events-fd", optarg, 0, INT_MAX, &v))
                return TLM_EXIT_CONFIG;
            o->events_fd = (int)v;
            break;
        case O_JOB: o->job = optarg; break;
        case O_HB:
            if (tlm_cfg_arg_number("--heartbeat", optarg, 0.05, 86400, &o->heartbeat, &err)) {
                fprintf(stderr, "tlm-worker: %s\n", err.msg);
                return TLM_EXIT_CONFIG;
            }
            break;
        case O_DWP: c->die_with_parent = 1; break;
        case O_EVAL: c->eval = 1; break;
        case O_CKPT: c->checkpoint = optarg; break;
        case O_SUITES: c->suites = optarg; break;
        case O_EFILE: c->events_file = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return TLM_EXIT_CONFIG;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tlm-worker: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return TLM_EXIT_CONFIG;
    }
    return -1;
}

/* Paths are measured here, never cut later; a run folder leaves room for
 * what is written under it.  -1 to go on, else the exit status. */
static int check_lengths(const cli *c)
{
    tlm_err err = {0};
    const wrk_opts *o = &c->o;
    if ((o->config && tlm_path_check_len("--config", o->config, TLM_PATH_CAP - 1, &err)) ||
        (o->out && tlm_path_check_len("--out", o->out, TLM_RUN_DIR_MAX, &err)) ||
        (c->checkpoint && tlm_path_check_len("--checkpoint", c->checkpoint, TLM_PATH_CAP - 1, &err)) ||
        (o->config && tlm_path_not_dir("--config", o->config, "a job config file, YAML or JSON", &err))) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return TLM_EXIT_CONFIG;
    }
    if (o->job && strlen(o->job) >= sizeof ((wrk_events *)0)->job) {
        fprintf(stderr, "tlm-worker: --job: %zu bytes, longer than the %zu an event can carry\n", strlen(o->job),
                sizeof ((wrk_events *)0)->job - 1);
        return TLM_EXIT_CONFIG;
    }
    return -1;
}

/* --events-file: opened for appending in place of --events-fd (not for
 * --describe, which writes no events).  -1 to go on, else the exit status. */
static int open_events_file(cli *c)
{
    tlm_err err = {0};
    if (c->o.events_fd != 1) {
        fprintf(stderr, "tlm-worker: --events-file and --events-fd both say where events go; give one\n");
        return TLM_EXIT_CONFIG;
    }
    if (tlm_path_check_len("--events-file", c->events_file, TLM_PATH_CAP - 1, &err)) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return TLM_EXIT_CONFIG;
    }
    if (!c->describe) {
        int fd = open(c->events_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            fprintf(stderr, "tlm-worker: --events-file %s: cannot open for appending: %s\n", c->events_file,
                    strerror(errno));
            return TLM_EXIT_IO;
        }
        c->o.events_fd = fd;
        c->o.events_sync = 1;
    }
    return -1;
}

static int run_eval(cli *c)
{
    wrk_opts *o = &c->o;
    if (!c->checkpoint || c->describe || o->out || o->resume) {
        fprintf(stderr, "tlm-worker: --eval needs --checkpoint DIR (and takes no --out, --resume, --describe)\n");
        return TLM_EXIT_CONFIG;
    }
    static const int unused[] = {O_DWP, O_DEVICE, 0};
    if (refuse_unused(OPTS, c->given, unused, "with --eval"))
        return TLM_EXIT_CONFIG;
    if (fcntl(o->events_fd, F_GETFD) < 0 || o->events_fd == 2) {
        fprintf(stderr, "tlm-worker: --events-fd %d: not an open descriptor other than 2\n", o->events_fd);
        return TLM_EXIT_CONFIG;
    }
    if (!events_fd_writable(o->events_fd))
        return TLM_EXIT_CONFIG;
    wrk_eval_opts eo = {c->checkpoint, o->config, c->suites, o->job, o->threads, o->events_fd, o->heartbeat};
    return wrk_eval_run(&eo);
}

static int run_describe(const cli *c)
{
    static const int unused[] = {O_OUT, O_RESUME, O_THREADS, O_DEVICE, O_FD, O_JOB, O_HB, O_DWP, O_EFILE, 0};
    if (refuse_unused(OPTS, c->given, unused, "with --describe (it prints the resolved config and exits)"))
        return TLM_EXIT_CONFIG;
    eng_config cfg;
    tlm_err err = {0};
    if (eng_config_load(c->o.config, &cfg, &err)) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return TLM_EXIT_CONFIG;
    }
    if (wrk_describe(&cfg, stdout, &err)) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return TLM_EXIT_INTERNAL;
    }
    return 0;
}

static int run_train(cli *c, int ppid0)
{
    wrk_opts *o = &c->o;
    if (!o->out) {
        fprintf(stderr, "tlm-worker: --out DIR is required to train (or use --describe)\n");
        usage(stderr);
        return TLM_EXIT_CONFIG;
    }
    if (fcntl(o->events_fd, F_GETFD) < 0) {
        fprintf(stderr, "tlm-worker: --events-fd %d: not an open file descriptor\n", o->events_fd);
        return TLM_EXIT_CONFIG;
    }
    if (o->events_fd == 2) {
        fprintf(stderr, "tlm-worker: --events-fd 2 would mix events with the human log on stderr\n");
        return TLM_EXIT_CONFIG;
    }
    if (!events_fd_writable(o->events_fd))
        return TLM_EXIT_CONFIG;
    if (c->die_with_parent) {
        int r = wrk_die_with_parent(ppid0);
        if (r < 0)
            fprintf(stderr, "tlm-worker: --die-with-parent is not supported on this system; ignored\n");
        else if (r > 0) {
            /* the parent is already gone: stop before training (exit 75) */
            wrk_signals_install();
            raise(SIGTERM);
        }
    }
    return wrk_run(o);
}

int main(int argc, char **argv)
{
    const int ppid0 = (int)getppid();
    eng_runtime_init(argc, argv);
    static cli c; /* static: zeroed */
    c.o.device = "cpu";
    c.o.events_fd = 1;
    c.o.heartbeat = 10;
    c.o.argc = argc;
    c.o.argv = argv;
    int rc = parse_args(argc, argv, &c);
    if (rc < 0)
        rc = check_lengths(&c);
    if (rc >= 0)
        return rc;
    if (c.keys) {
        static const int all[] = {O_CONFIG, O_DESCRIBE, O_OUT, O_RESUME, O_THREADS, O_DEVICE, O_FD, O_JOB, O_HB,
                                  O_DWP, O_EVAL, O_CKPT, O_SUITES, O_EFILE, 0};
        if (refuse_unused(OPTS, c.given, all, "with --config-keys (it lists the keys and exits)"))
            return TLM_EXIT_CONFIG;
        eng_config_print_keys(stdout);
        return 0;
    }
    if (c.events_file && (rc = open_events_file(&c)) >= 0)
        return rc;
    if (!c.eval && (c.checkpoint || c.suites)) {
        fprintf(stderr, "tlm-worker: --checkpoint and --suites go with --eval\n");
        return TLM_EXIT_CONFIG;
    }
    if (c.eval)
        return run_eval(&c);
    if (!c.o.config) {
        fprintf(stderr, "tlm-worker: --config FILE is required\n");
        usage(stderr);
        return TLM_EXIT_CONFIG;
    }
    return c.describe ? run_describe(&c) : run_train(&c, ppid0);
}
