/* buildinfo.h: what this binary is and where it runs, for the `start`
 * event: version, the git commit baked in at build time (never read from
 * the working directory at run time), host and OS. */
#ifndef TLM_WORKER_BUILDINFO_H
#define TLM_WORKER_BUILDINFO_H

#include <stddef.h>

const char *wrk_version(void);
/* 40 hex digits, with "-dirty" when the tree had uncommitted changes to
 * tracked files; "unknown" when built without git metadata. */
const char *wrk_git_commit(void);
void wrk_host(char *out, size_t cap);
void wrk_os(char *out, size_t cap); /* "Linux 6.1.0-18-amd64 x86_64" */

#endif
