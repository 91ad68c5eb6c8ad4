/* shim.c: the exec shim between tlmd and a worker (see shim.h). */
#include "orchestrator/shim.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int orc_shim_main(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[1], ORC_SHIM_ARG) != 0) {
        fprintf(stderr, "tlmd: the exec shim takes: %s PID WORKER ARGV...\n", ORC_SHIM_ARG);
        return ORC_EXIT_NOT_STARTED;
    }
    pid_t daemon = (pid_t)strtol(argv[2], NULL, 10);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        perror("tlmd: prctl(PR_SET_PDEATHSIG)");
        return ORC_EXIT_NOT_STARTED;
    }
    /* the daemon may have died before prctl: then nobody would kill us */
    if (getppid() != daemon)
        return ORC_EXIT_NOT_STARTED;
    execv(argv[3], argv + 4);
    fprintf(stderr, "tlmd: cannot run the worker %s: ", argv[3]);
    perror(NULL);
    return ORC_EXIT_NOT_STARTED;
}
