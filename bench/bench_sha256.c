/* bench_sha256.c: SHA-256 speed, the path every job start pays (tlm-worker
 * hashes each shard whole): common/sha256.c's SHA-extension path and its
 * plain C path on one core, beside coreutils' sha256sum on the same bytes
 * (a file in $TMPDIR, read from the page cache).  Best of --repeat runs.
 *
 *   bench/bench_sha256 [--mib N] [--repeat R]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/sha256.h"

extern char **environ;

static double hash_rate(int accel, const uint8_t *p, size_t n, char hex[65])
{
    tlm__sha256_accelerated(accel);
    double t0 = tlm_clock_mono();
    tlm_sha256_hex(p, n, hex);
    return (double)n / (tlm_clock_mono() - t0) / 1e6;
}

/* sha256sum FILE with its output on /dev/null: MB/s, or -1 if it did not run */
static double coreutils_rate(const char *path, size_t n)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    char *argv[] = {"sha256sum", (char *)path, NULL};
    pid_t pid;
    double t0 = tlm_clock_mono();
    int rc = posix_spawnp(&pid, "sha256sum", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
        return -1;
    return (double)n / (tlm_clock_mono() - t0) / 1e6;
}

int main(int argc, char **argv)
{
    long mib = 256, repeat = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_sha256 [--mib N (1-4096)] [--repeat R (1-100)]\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (mib < 1 || mib > 4096 || repeat < 1 || repeat > 100) {
        fprintf(stderr, "bench_sha256: --mib 1-4096, --repeat 1-100\n");
        return 2;
    }
    size_t n = (size_t)mib << 20;
    uint8_t *buf = malloc(n);
    if (!buf) {
        fprintf(stderr, "bench_sha256: out of memory for %ld MiB\n", mib);
        return 1;
    }
    uint64_t r = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        buf[i] = (uint8_t)r;
    }
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/tlm-bench-sha256-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n) {
        fprintf(stderr, "bench_sha256: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    close(fd);
    const int have_ext = tlm__sha256_accelerated(1);
    double ext = 0, plain = 0, cu = -1;
    char h1[65] = "", h2[65];
    for (long k = 0; k < repeat; k++) {
        double a = have_ext ? hash_rate(1, buf, n, h1) : 0, b = hash_rate(0, buf, n, h2), c = coreutils_rate(path, n);
        ext = a > ext ? a : ext;
        plain = b > plain ? b : plain;
        cu = c > cu ? c : cu;
    }
    unlink(path);
    if (have_ext && strcmp(h1, h2)) {
        fprintf(stderr, "bench_sha256: the two paths disagree (%s vs %s)\n", h1, h2);
        return 1;
    }
    printf("SHA-256 of %ld MiB, one core, best of %ld:\n", mib, repeat);
    if (have_ext)
        printf("  TLM, SHA extensions   %7.0f MB/s\n", ext);
    else
        printf("  TLM, SHA extensions   (this CPU has none)\n");
    printf("  TLM, plain C          %7.0f MB/s\n", plain);
    if (cu > 0)
        printf("  coreutils sha256sum   %7.0f MB/s (from the page cache, process start included)\n", cu);
    else
        printf("  coreutils sha256sum   (did not run)\n");
    if (have_ext && cu > 0)
        printf("  TLM / sha256sum       %7.2fx\n", ext / cu);
    tlm__sha256_accelerated(1);
    free(buf);
    return 0;
}
