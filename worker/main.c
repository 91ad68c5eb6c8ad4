/* main.c: tlm-worker, one job per process (its contract:
 * docs/protocol.md).  This file parses the command line and dispatches;
 * training lives in worker/run.c and the engine. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "engine/config/config.h"
#include "engine/config/suites.h"
#include "common/fileio.h"
#include "engine/cpu/runtime.h"
#include "worker/describe.h"
#include "worker/events.h"
#include "worker/evalrun.h"
#include "worker/run.h"
#include "worker/signals.h"
#include "engine/cuda/backend.h"
#include "config.h"

/* The command line: the training options (wrk_opts) and the mode. */
typedef struct cmdline {
    wrk_opts o;
    int describe, die_with_parent, eval, keys;
    double gpu_memory; /* --describe --gpu-memory GIB (0: not given) */
    const char *checkpoint, *suites, *events_file;
} cmdline;

/* The modes an option goes with: given in another, it is refused by name. */
#define TRAIN TLM_OPT_MARK(0)
#define EVAL TLM_OPT_MARK(1)
#define DESCRIBE TLM_OPT_MARK(2)
#define KEYS TLM_OPT_MARK(3)

#define O(m) offsetof(cmdline, m)
static const tlm_opt OPTS[] = {
    {"config", "FILE", TLM_OPT_STR, O(o.config), .flags = TRAIN | EVAL | DESCRIBE,
     .help = "job configuration (YAML or JSON); see docs/config.md"},
    {"out", "DIR", TLM_OPT_STR, O(o.out), .flags = TRAIN,
     .help = "run folder: config.json and ckpt/ (created if missing)"},
    {"resume", NULL, TLM_OPT_FLAG, O(o.resume), .flags = TRAIN,
     .help = "continue from the newest valid checkpoint in DIR/ckpt (none: start fresh)"},
    {"threads", "N", TLM_OPT_INT, O(o.threads), .lo = 0, .hi = 4096, .def = "0", .flags = TRAIN | EVAL,
     .help = "compute threads (0: all cores)"},
    {"device", "D", TLM_OPT_STR, O(o.device), .def = "cpu", .flags = TRAIN | DESCRIBE,
     .help = "where to train: cpu, or cuda:K in a build with CUDA (with --describe: fit the micro-batch to "
             "GPU K's memory)"},
    {"events-fd", "N", TLM_OPT_INT, O(o.events_fd), .lo = 0, .hi = INT_MAX, .def = "1", .flags = TRAIN | EVAL,
     .help = "write events to file descriptor N (1: stdout)"},
    {"events-file", "PATH", TLM_OPT_STR, O(events_file), .flags = TRAIN | EVAL,
     .help = "append events to PATH, on disk (fsync) at every checkpoint and at the end (tlmd's slurm executor "
             "reads it)"},
    {"job", "KEY", TLM_OPT_STR, O(o.job), .flags = TRAIN | EVAL, .help = "echo KEY as \"job\" in every event"},
    {"heartbeat", "S", TLM_OPT_NUM, O(o.heartbeat), .lo = 0.05, .hi = 86400, .def = "10", .flags = TRAIN | EVAL,
     .help = "emit a heartbeat after S seconds without events"},
    {"die-with-parent", NULL, TLM_OPT_FLAG, O(die_with_parent), .flags = TRAIN,
     .help = "stop (checkpoint, exit 75) when the parent process exits"},
    {"eval", NULL, TLM_OPT_FLAG, O(eval), .flags = EVAL,
     .help = "evaluate a checkpoint instead of training: DIR is a step folder, a run folder (its newest valid "
             "checkpoint) or a Hugging Face GPT-2 folder (then --config is needed)"},
    {"checkpoint", "DIR", TLM_OPT_STR, O(checkpoint), .flags = EVAL, .help = "with --eval: the checkpoint"},
    {"suites", "LIST", TLM_OPT_STR, O(suites), .flags = EVAL,
     .help = "with --eval: the suites to run, separated by commas (listed below; default: the config's "
             "eval.suites)"},
    {"describe", NULL, TLM_OPT_FLAG, O(describe), .flags = DESCRIBE,
     .help = "print the resolved config, per-layer d_ff, parameter and FLOP account as JSON, and exit"},
    {"gpu-memory", "GIB", TLM_OPT_NUM, O(gpu_memory), .lo = 0.001, .hi = 1e6, .flags = DESCRIBE,
     .help = "with --describe: fit the micro-batch to a GPU of this many GiB (an H200's 141 GB are 131.3), "
             "without one at hand"},
    {"config-keys", NULL, TLM_OPT_FLAG, O(keys), .flags = KEYS, .help = "list every configuration key with its meaning"},
    {"help", NULL, TLM_OPT_HELP, .letter = 'h', .help = "this text"},
    {0},
};
#undef O

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
    /* the modes, by hand: which options go with which is the point here */
    fputs("usage: tlm-worker --config FILE --out DIR [--resume] [--threads N] [--device D]\n"
          "                  [--events-fd N | --events-file PATH] [--job KEY]\n"
          "                  [--heartbeat S] [--die-with-parent]\n"
          "       tlm-worker --eval --checkpoint DIR [--suites LIST] [--config FILE]\n"
          "                  [--threads N] [--events-fd N] [--job KEY] [--heartbeat S]\n"
          "       tlm-worker --describe --config FILE [--device cuda:K | --gpu-memory GIB]\n"
          "       tlm-worker --config-keys\n"
          "\n"
          "Trains one job and writes its events as JSON lines (docs/protocol.md).\n"
          "\n",
          f);
    tlm_cli cli = {.cmd = "tlm-worker", .opts = OPTS, .col = 21};
    tlm_cli_options(f, &cli);
    fputs("\nSuites of --eval --suites:", f);
    for (int i = ENG_SUITE_VAL + 1; i < ENG_SUITE_COUNT; i++) /* val is the trainer's */
        fprintf(f, "%s%s", i > ENG_SUITE_VAL + 1 ? ", " : " ", eng_suite_names[i]);
    fputs(".\n", f);
    exit_statuses(f);
}

/* Refuses, by name, the first option given that the mode (its mark) does
 * not use. */
static int refuse_unused(const tlm_cli *cli, unsigned mode, const char *why)
{
    for (size_t k = 0; OPTS[k].name; k++)
        if (cli->given[k] && !(OPTS[k].flags & mode) && OPTS[k].type != TLM_OPT_HELP) {
            fprintf(stderr, "tlm-worker: --%s does nothing %s; leave it out\n", OPTS[k].name, why);
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

/* The options into c: -1 to go on, else the exit status (--help: 0). */
static const tlm_cli_usage USAGE = {usage};

static int parse_args(int argc, char **argv, tlm_cli *cli, cmdline *c)
{
    return tlm_cli_main(cli, "tlm-worker", argc, argv, c, tlm_cli_help_usage, &USAGE, TLM_EXIT_CONFIG, TLM_EXIT_INTERNAL);
}

/* Paths are measured here, never cut later; a run folder leaves room for
 * what is written under it.  -1 to go on, else the exit status. */
static int check_lengths(const cmdline *c)
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
static int open_events_file(cmdline *c)
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

static int run_eval(const tlm_cli *cli, cmdline *c)
{
    wrk_opts *o = &c->o;
    if (!c->checkpoint || c->describe || o->out || o->resume) {
        fprintf(stderr, "tlm-worker: --eval needs --checkpoint DIR (and takes no --out, --resume, --describe)\n");
        return TLM_EXIT_CONFIG;
    }
    if (refuse_unused(cli, EVAL, "with --eval"))
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

/* The GPU memory --describe fits the micro-batch to: --gpu-memory, or
 * what GPU K of --device cuda:K has; 0 when neither is given. */
static int describe_budget(const cmdline *c, size_t *budget, tlm_err *e)
{
    int k;
    *budget = 0;
    if (c->gpu_memory > 0 && strcmp(c->o.device, "cpu")) /* in any build, before --device is read */
        return tlm_errf(e, TLM_ECONFIG, "--gpu-memory and --device %s both say which GPU to fit; give one",
                        c->o.device);
    if (wrk_device_index(c->o.device, &k, e))
        return e->code;
    if (c->gpu_memory > 0) {
        *budget = (size_t)(c->gpu_memory * 1073741824.0);
        return 0;
    }
#ifdef TLM_HAVE_CUDA
    if (k >= 0) {
        eng_cuda_device_info info;
        if (eng_cuda_device_info_get(k, &info, e))
            return tlm_err_prefix(e, "--device %s (or give --gpu-memory GIB)", c->o.device);
        *budget = info.total_bytes;
    }
#endif
    return 0;
}

static int run_describe(const tlm_cli *cli, const cmdline *c)
{
    if (refuse_unused(cli, DESCRIBE, "with --describe (it prints the resolved config and exits)"))
        return TLM_EXIT_CONFIG;
    eng_config cfg;
    tlm_err err = {0};
    if (eng_config_load(c->o.config, &cfg, &err)) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return TLM_EXIT_CONFIG;
    }
    size_t budget = 0;
    if (describe_budget(c, &budget, &err)) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return TLM_EXIT_CONFIG;
    }
    if (wrk_describe(&cfg, budget, stdout, &err)) {
        fprintf(stderr, "tlm-worker: %s\n", err.msg);
        return TLM_EXIT_INTERNAL;
    }
    return 0;
}

static int run_train(cmdline *c, int ppid0)
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
    static cmdline c; /* static: zeroed */
    c.o.argc = argc;
    c.o.argv = argv;
    tlm_cli cli = {.cmd = "tlm-worker", .opts = OPTS};
    int rc = parse_args(argc, argv, &cli, &c);
    if (rc < 0)
        rc = check_lengths(&c);
    if (rc >= 0)
        return rc;
    if (c.keys) {
        if (refuse_unused(&cli, KEYS, "with --config-keys (it lists the keys and exits)"))
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
        return run_eval(&cli, &c);
    if (!c.o.config) {
        fprintf(stderr, "tlm-worker: --config FILE is required\n");
        usage(stderr);
        return TLM_EXIT_CONFIG;
    }
    return c.describe ? run_describe(&cli, &c) : run_train(&c, ppid0);
}
