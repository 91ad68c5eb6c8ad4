/* slurm_job.c: the slurm executor's batch job on the node (see slurm_job.h). */
#include "orchestrator/slurm_job.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fileio.h"

extern char **environ;

static volatile sig_atomic_t child_pid = 0, got_signal = 0;
/* what the child is stopped with: SIGTERM for the worker itself; SIGUSR2
 * for srun, the ranks of a job of several (exec_slurm.c), since srun
 * answers SIGTERM by killing its tasks ("forcing job termination") but
 * forwards SIGUSR2 to them, which tlm-worker takes as a stop */
static int child_stop = SIGTERM;

static void on_stop(int sig)
{
    if (!got_signal)
        got_signal = sig;
    if (child_pid > 0)
        kill((pid_t)child_pid, child_stop);
}

int orc_slurm_file(char *out, size_t cap, const char *run_dir, const char *token, int64_t restart,
                   const char *ext, tlm_err *e)
{
    if ((size_t)snprintf(out, cap, "%s/slurm/%s.%lld%s", run_dir, token, (long long)restart, ext) >= cap)
        return tlm_errf(e, TLM_ECONFIG, "%s/slurm/%s: path too long", run_dir, token);
    return 0;
}

/* an environment value fit for one line of the end file */
static void env_word(const char *name, char *out, size_t cap)
{
    const char *v = getenv(name);
    size_t k = 0;
    for (; v && *v && k + 1 < cap; v++)
        out[k++] = ((unsigned char)*v > 0x20 && (unsigned char)*v < 0x7f) ? *v : '?';
    out[k] = '\0';
}

static const char *sig_word(int sig)
{
    return sig == SIGUSR1 ? "USR1" : sig == SIGTERM ? "TERM" : sig == SIGINT ? "INT" : "";
}

/* SLURM_RESTART_COUNT (0 when unset) and a token of hex digits: 0, else
 * -1 (said on stderr). */
static int check_args(const char *token, int64_t *restart)
{
    *restart = 0;
    const char *rc_env = getenv("SLURM_RESTART_COUNT");
    if (rc_env && *rc_env) {
        char *end;
        long long v = strtoll(rc_env, &end, 10);
        if (*end || v < 0 || v > 1000000) {
            fprintf(stderr, "tlmd --slurm-job: SLURM_RESTART_COUNT '%.40s': expected a count\n", rc_env);
            return -1;
        }
        *restart = v;
    }
    for (const char *p = token; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) {
            fprintf(stderr, "tlmd --slurm-job: token '%.40s': expected hex digits\n", token);
            return -1;
        }
    return 0;
}

/* WORKER ARGS... --events-file EVENTS, its stop signals passed on as
 * SIGTERM; how it ended goes into *end.  -1 out of memory (said). */
static int run_worker(char **worker, int n, const char *events, orc_slurm_end *end)
{
    char **wargv = calloc((size_t)n + 3, sizeof *wargv);
    if (!wargv) {
        fprintf(stderr, "tlmd --slurm-job: out of memory\n");
        return -1;
    }
    for (int i = 0; i < n; i++)
        wargv[i] = worker[i];
    wargv[n] = "--events-file";
    wargv[n + 1] = (char *)events;
    wargv[n + 2] = NULL;
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, def;
    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGUSR1);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    const char *base = strrchr(wargv[0], '/');
    if (!strcmp(base ? base + 1 : wargv[0], "srun"))
        child_stop = SIGUSR2;
    pid_t pid;
    int src = posix_spawn(&pid, wargv[0], NULL, &at, wargv, environ);
    posix_spawnattr_destroy(&at);
    if (src) {
        fprintf(stderr, "tlmd --slurm-job: cannot run the worker %s: %s\n", wargv[0], strerror(src));
        end->exited = 1;
        end->status = 127;
    } else {
        child_pid = pid;
        if (got_signal) /* it came before the worker existed */
            kill(pid, child_stop);
        int ws;
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
        }
        end->exited = WIFEXITED(ws);
        end->status = end->exited ? WEXITSTATUS(ws) : -1;
        end->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
        /* srun says a rank killed by signal n as its own exit status
         * 128 + n (as mpirun does locally: exec_local.c): a crash by that
         * signal, not an unexpected status */
        if (child_stop == SIGUSR2 && end->exited && end->status > 128 && end->status < 128 + 65) {
            end->exited = 0;
            end->signal = end->status - 128;
            end->status = -1;
        }
    }
    free(wargv);
    return 0;
}

int orc_slurm_job_main(int argc, char **argv)
{
    if (argc < 6 || strcmp(argv[1], ORC_SLURM_JOB_ARG) != 0) {
        fprintf(stderr, "tlmd: %s is the batch script interpreter of the slurm executor: %s SCRIPT RUN_DIR TOKEN "
                        "WORKER [ARGS...]\n",
                ORC_SLURM_JOB_ARG, ORC_SLURM_JOB_ARG);
        return 127;
    }
    const char *run_dir = argv[3], *token = argv[4];
    tlm_err e;
    int64_t restart;
    if (check_args(token, &restart))
        return 127;
    char dir[4200], events[4200], endp[4200];
    snprintf(dir, sizeof dir, "%s/slurm", run_dir);
    if (tlm_mkdir_p(dir, &e) || orc_slurm_file(events, sizeof events, run_dir, token, restart, ".events", &e) ||
        orc_slurm_file(endp, sizeof endp, run_dir, token, restart, ".end", &e)) {
        fprintf(stderr, "tlmd --slurm-job: %s\n", e.msg);
        return 127;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);

    orc_slurm_end end = {.restart = restart};
    if (run_worker(argv + 5, argc - 5, events, &end))
        return 127;
    snprintf(end.slurm_signal, sizeof end.slurm_signal, "%s", sig_word(got_signal));
    env_word("SLURMD_NODENAME", end.node, sizeof end.node);
    env_word("SLURM_JOB_ID", end.job, sizeof end.job);
    char text[512];
    int len = snprintf(text, sizeof text,
                       ORC_SLURM_END_MAGIC "\nrestart %lld\nexited %d\nstatus %d\nsignal %d\nslurm_signal %s\n"
                                           "node %s\njob %s\n",
                       (long long)end.restart, end.exited, end.status, end.signal,
                       end.slurm_signal[0] ? end.slurm_signal : "-", end.node[0] ? end.node : "-",
                       end.job[0] ? end.job : "-");
    if (tlm_write_file_atomic(endp, text, (size_t)len, &e)) {
        fprintf(stderr, "tlmd --slurm-job: %s\n", e.msg);
        return 127;
    }
    /* nothing on stderr: its last line is the worker's, for tlmd's message */
    return end.exited ? end.status : 128 + end.signal;
}

int orc_slurm_end_read(const char *path, orc_slurm_end *end, tlm_err *e)
{
    memset(end, 0, sizeof *end);
    if (access(path, F_OK) != 0)
        return errno == ENOENT ? 0 : tlm_errf(e, TLM_EIO, "%s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0;
    if (tlm_read_file(path, 4096, &text, &len, e))
        return TLM_EIO;
    long long restart = -1;
    int exited = -1, status = 0, sig = 0;
    char ss[16] = "", node[64] = "", job[32] = "";
    int ok = !strncmp(text, ORC_SLURM_END_MAGIC "\n", sizeof ORC_SLURM_END_MAGIC) &&
             sscanf(text + sizeof ORC_SLURM_END_MAGIC,
                    "restart %lld exited %d status %d signal %d slurm_signal %7s node %63s job %31s", &restart,
                    &exited, &status, &sig, ss, node, job) == 7 &&
             restart >= 0 && (exited == 0 || exited == 1) && sig >= 0 && sig < 128 && status >= -1 && status < 256;
    free(text);
    if (!ok)
        return tlm_errf(e, TLM_EIO, "%s: not an end file of tlmd --slurm-job", path);
    end->restart = restart;
    end->exited = exited;
    end->status = status;
    end->signal = sig;
    snprintf(end->slurm_signal, sizeof end->slurm_signal, "%s", strcmp(ss, "-") ? ss : "");
    snprintf(end->node, sizeof end->node, "%s", strcmp(node, "-") ? node : "");
    snprintf(end->job, sizeof end->job, "%s", strcmp(job, "-") ? job : "");
    return 1;
}
