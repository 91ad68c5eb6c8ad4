/* test_runtime.c: eng_runtime's BLAS set-up.  The program runs itself
 * as a child in several environments and reads back what the child's
 * runtime chose: the kernel, how many times main() started (each re-exec
 * starts it again) and TLM_BLAS_PROBE.
 *   - as is: no re-exec when the loaded kernel is already the best;
 *   - a weak kernel (Prescott) standing in for a misdetection: the runtime
 *     moves to a stronger, verified kernel with a bounded number of execs;
 *   - the same, but the weak kernel claims to be unbeatable: every candidate
 *     is tried and refused, the original is restored, and it stops;
 *   - a user's own OPENBLAS_CORETYPE: left alone, no re-exec;
 *   - a user's kernel this CPU cannot execute (SIGILL at the first product):
 *     replaced by the best one it can, and said;
 *   - a user's kernel slower than one this CPU runs: kept, and said with
 *     both measured rates;
 *   - OMP_WAIT_POLICY: set to passive with one re-exec, a user's kept.
 * Also checks eng_runtime_blas/kernel are filled in, and the CPU backend's
 * thread count (all cores by default, settable, one per backend).  The
 * OpenBLAS-specific cases skip with another BLAS. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cpu/backend.h"
#include "engine/cpu/runtime.h"
#include "tests/lib/tap.h"

/* child mode: print "starts kernel probe" and exit */
static int child(int argc, char **argv)
{
    const char *s = getenv("TLM_TEST_STARTS");
    char buf[16];
    snprintf(buf, sizeof buf, "%d", (s ? atoi(s) : 0) + 1);
    setenv("TLM_TEST_STARTS", buf, 1);
    eng_runtime_init(argc, argv);
    const char *probe = getenv("TLM_BLAS_PROBE"), *wait = getenv("OMP_WAIT_POLICY");
    printf("%s %s %s %s\n", getenv("TLM_TEST_STARTS"), eng_runtime_kernel(), probe ? probe : "-", wait ? wait : "-");
    const char *advice = eng_runtime_kernel_advice();
    printf("%s\n", advice ? advice : "-");
    return 0;
}

/* Runs this program as a child with extra environment "K=V" pairs. */
static char wait_policy[64], advice[1024];
static int run(const char *self, const char *const *env, int *starts, char *kernel, char *probe)
{
    int fd[2];
    if (pipe(fd))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        unsetenv("OPENBLAS_CORETYPE");
        unsetenv("TLM_BLAS_PROBE");
        unsetenv("TLM_TEST_STARTS");
        unsetenv("OMP_WAIT_POLICY");
        unsetenv("GOMP_SPINCOUNT");
        unsetenv("TLM_RUNTIME_ENV");
        for (int i = 0; env[i]; i++) {
            char kv[128];
            snprintf(kv, sizeof kv, "%s", env[i]);
            char *eq = strchr(kv, '=');
            *eq = 0;
            setenv(kv, eq + 1, 1);
        }
        execl(self, self, "--child", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char out[2048] = "";
    size_t n = 0;
    ssize_t r;
    while (n < sizeof out - 1 && (r = read(fd[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (n == 0 || !WIFEXITED(st) || WEXITSTATUS(st))
        return -1;
    out[n] = 0;
    char *nl = strchr(out, '\n');
    snprintf(advice, sizeof advice, "%s", nl ? nl + 1 : "");
    advice[strcspn(advice, "\n")] = 0;
    return sscanf(out, "%d %63s %127s %63s", starts, kernel, probe, wait_policy) == 4 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--child"))
        return child(argc, argv);
    eng_runtime_init(argc, argv);
    TAP_OK(eng_runtime_blas()[0] && strcmp(eng_runtime_blas(), "unknown"), "blas: %s", eng_runtime_blas());
    TAP_OK(eng_runtime_kernel()[0], "kernel: %s", eng_runtime_kernel());
    eng_backend *b1 = NULL, *b2 = NULL;
    tlm_err e = {0};
    int rc = eng_backend_cpu_create(&b1, 0, &e);
    TAP_OK(rc == 0 && eng_backend_cpu_threads(b1) >= 1, "threads: %d", rc ? -1 : eng_backend_cpu_threads(b1));
    TAP_OK(rc == 0 && eng_backend_cpu_set_threads(b1, 1) == 1 && eng_backend_cpu_threads(b1) == 1, "set_threads(1)");
    rc = rc || eng_backend_cpu_create(&b2, 3, &e);
    TAP_OK(rc == 0 && eng_backend_cpu_threads(b2) == 3 && eng_backend_cpu_threads(b1) == 1,
           "each backend keeps its own thread count (3 and 1)");
    eng_backend_free(b1);
    eng_backend_free(b2);
    TAP_OK(eng_runtime_compiler()[0], "compiler: %s", eng_runtime_compiler());
    if (strncmp(eng_runtime_blas(), "OpenBLAS", 8)) {
        TAP_DIAG("SKIP kernel selection: not OpenBLAS");
        return tap_done();
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = 0;
    int starts;
    char kernel[64], probe[128];

    /* the BLAS cases run with the wait policy already settled */
    const char *plain[] = {"TLM_RUNTIME_ENV=1", NULL};
    rc = run(self, plain, &starts, kernel, probe);
    TAP_OK(rc == 0, "child as is: kernel %s, %d start(s), probe %s", rc ? "?" : kernel, rc ? 0 : starts,
           rc ? "?" : probe);
    char best[64];
    snprintf(best, sizeof best, "%s", kernel);

    const char *weak[] = {"TLM_RUNTIME_ENV=1", "OPENBLAS_CORETYPE=Prescott", "TLM_BLAS_PRETEND_DETECTED=1", NULL};
    rc = run(self, weak, &starts, kernel, probe);
    TAP_OK(rc == 0 && strcasecmp(kernel, "Prescott") && !strcmp(probe, "done") && starts >= 2 && starts <= 6,
           "misdetected Prescott: moved to %s after %d starts (probe %s)", rc ? "?" : kernel, rc ? 0 : starts,
           rc ? "?" : probe);

    const char *unbeatable[] = {"TLM_RUNTIME_ENV=1", "OPENBLAS_CORETYPE=Prescott", "TLM_BLAS_PRETEND_DETECTED=fast", NULL};
    rc = run(self, unbeatable, &starts, kernel, probe);
    TAP_OK(rc == 0 && !strcasecmp(kernel, "Prescott") && !strcmp(probe, "done") && starts <= 6,
           "no faster candidate: back on %s after %d starts, no loop", rc ? "?" : kernel, rc ? 0 : starts);

    (void)best;
    /* the kernels this CPU runs, best first */
    const char *mine[16], *known[] = {"Cooperlake", "SkylakeX", "Haswell", "Sandybridge"};
    int nk = eng_runtime_kernels(mine);
    TAP_OK(nk >= 1, "%d kernel(s) this CPU runs, best %s", nk, nk ? mine[0] : "none");
    for (int i = 0; i < nk; i += nk - 1 > 0 ? nk - 1 : 1) { /* the best and the last */
        char kv[96];
        snprintf(kv, sizeof kv, "OPENBLAS_CORETYPE=%s", mine[i]);
        const char *user[] = {"TLM_RUNTIME_ENV=1", kv, NULL};
        rc = run(self, user, &starts, kernel, probe);
        TAP_OK(rc == 0 && !strcasecmp(kernel, mine[i]) && starts == 1, "user's OPENBLAS_CORETYPE=%s kept (%s, %d start)",
               mine[i], rc ? "?" : kernel, rc ? 0 : starts);
        if (i == 0)
            TAP_OK(rc == 0 && !strcmp(advice, "-"), "no advice for %s, as good as any this CPU runs: %s", mine[0],
                   advice);
    }

    /* a user's kernel this CPU cannot execute is replaced */
    const char *cannot = NULL;
    for (int i = 0; i < 4 && !cannot; i++) {
        int found = 0;
        for (int j = 0; j < nk; j++)
            found |= !strcasecmp(mine[j], known[i]);
        if (!found)
            cannot = known[i];
    }
    if (cannot && nk) {
        char kv[96];
        snprintf(kv, sizeof kv, "OPENBLAS_CORETYPE=%s", cannot);
        const char *bad[] = {"TLM_RUNTIME_ENV=1", kv, NULL};
        rc = run(self, bad, &starts, kernel, probe);
        TAP_OK(rc == 0 && !strcasecmp(kernel, mine[0]) && starts == 2 && strstr(advice, cannot) &&
                   strstr(advice, "SIGILL") && strstr(advice, mine[0]),
               "a user's %s, which this CPU cannot execute: replaced by %s, one re-exec, said: %s", cannot,
               rc ? "?" : kernel, rc ? "?" : advice);
    } else
        TAP_DIAG("not checked: this CPU runs every kernel TLM knows");

    /* a user's kernel below one this CPU runs: kept, and said with rates */
    if (nk && strcasecmp(mine[0], "Sandybridge")) {
        const char *slow[] = {"TLM_RUNTIME_ENV=1", "OPENBLAS_CORETYPE=Prescott", NULL};
        rc = run(self, slow, &starts, kernel, probe);
        TAP_OK(rc == 0 && !strcasecmp(kernel, "Prescott") && starts == 1 && strstr(advice, "GFLOP/s") &&
                   strstr(advice, "unset OPENBLAS_CORETYPE"),
               "a user's slow Prescott: kept, one start, said: %s", rc ? "?" : advice);
    }

    const char *fresh[] = {NULL};
    rc = run(self, fresh, &starts, kernel, probe);
    TAP_OK(rc == 0 && !strcmp(wait_policy, "passive") && starts == 2,
           "OpenMP wait policy: set to %s with one re-exec (%d starts)", rc ? "?" : wait_policy, rc ? 0 : starts);
    const char *own[] = {"OMP_WAIT_POLICY=active", NULL};
    rc = run(self, own, &starts, kernel, probe);
    TAP_OK(rc == 0 && !strcmp(wait_policy, "active") && starts == 1, "user's OMP_WAIT_POLICY=active kept (%d start)",
           rc ? 0 : starts);
    return tap_done();
}
