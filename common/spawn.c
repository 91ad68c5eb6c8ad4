/* spawn.c: start a helper program (see spawn.h). */
#include "common/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

extern char **environ;

int tlm_spawn(pid_t *pid, const char *prog, int search, char *const argv[], int out_fd, int err_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    /* the caller's handlers (tlmd's event loop) must not reach the child */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = search ? posix_spawnp(pid, prog, &fa, &at, argv, environ) : posix_spawn(pid, prog, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc;
}
