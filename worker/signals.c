/* signals.c: stop requests by signal and parent death (signals.h). */
#include "worker/signals.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
    if (!stop_sig)
        stop_sig = sig;
}

void wrk_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    /* a rank under srun is stopped with SIGUSR2: srun forwards it to the
     * tasks as it is, where its own SIGTERM kills them (slurm_job.c) */
    sigaction(SIGUSR2, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int wrk_stop_signal(void) { return (int)stop_sig; }

const char *wrk_signal_name(int sig)
{
    static char buf[16];
    if (sig == SIGTERM)
        return "SIGTERM";
    if (sig == SIGINT)
        return "SIGINT";
    if (sig == SIGUSR2)
        return "SIGUSR2";
    snprintf(buf, sizeof buf, "SIG%d", sig);
    return buf;
}

int wrk_die_with_parent(int ppid0)
{
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
        return -1;
    /* the parent may have exited before the call: then we were adopted */
    if (ppid0 != 1 && getppid() != ppid0)
        return 1;
    return 0;
#else
    (void)ppid0;
    return -1;
#endif
}
