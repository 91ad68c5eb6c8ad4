/* shim.h: how a worker is started so that it dies with the daemon.  tlmd
 * spawns itself (/proc/self/exe) with ORC_SHIM_ARG; in that child, before
 * anything else, orc_shim_main sets PR_SET_PDEATHSIG to SIGKILL, checks
 * that the daemon is still its parent (it may have died during the fork),
 * and execs the worker, which keeps the death signal (it survives execve
 * of a binary without set-uid or capabilities).  Libuv has no hook to run
 * code between fork and exec; this is that hook, in the same binary.
 * Must not: allocate, print on success, or do anything after the exec. */
#ifndef TLM_ORC_SHIM_H
#define TLM_ORC_SHIM_H

#define ORC_SHIM_ARG "--exec-worker-shim"
/* The shim's exit status when the worker could not be started (the
 * shell's for a command it cannot run); tlmd classifies it (classify.c). */
#define ORC_EXIT_NOT_STARTED 127

/* argv: tlmd ORC_SHIM_ARG <daemon pid> <worker path> <worker argv...>.
 * Returns only on failure (exit status for main: ORC_EXIT_NOT_STARTED). */
int orc_shim_main(int argc, char **argv);

#endif
