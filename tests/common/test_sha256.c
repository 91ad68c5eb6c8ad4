/* test_sha256.c: SHA-256 against the FIPS 180-4 / NIST test vectors, and
 * the CPU's SHA-extension path against the plain one on random inputs fed
 * in random pieces (every padding case: lengths 0..300 and large buffers).
 * Prints both paths' speed as a diagnostic (docs/data.md quotes it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sha256.h"
#include "tests/lib/tap.h"

static void digest(const uint8_t *p, size_t n, size_t piece_seed, char hex[65])
{
    tlm_sha256 s;
    uint8_t d[32];
    tlm_sha256_init(&s);
    uint64_t r = piece_seed * 0x9e3779b97f4a7c15ull + 7;
    while (n) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t k = piece_seed ? 1 + (size_t)(r % 150) : n;
        if (k > n)
            k = n;
        tlm_sha256_update(&s, p, k);
        p += k;
        n -= k;
    }
    tlm_sha256_final(&s, d);
    tlm_hex(d, 32, hex);
}

static double rate(int accel, const uint8_t *p, size_t n)
{
    tlm__sha256_accelerated(accel);
    char hex[65];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    digest(p, n, 0, hex);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)n / ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / 1e6;
}

int main(void)
{
    static const struct {
        const char *msg;
        const char *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
         "nopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    int accel = tlm__sha256_accelerated(1);
    TAP_DIAG("SHA extensions %s", accel ? "present: both paths are checked" : "absent: the plain path only");
    for (int a = accel; a >= 0; a--) {
        tlm__sha256_accelerated(a);
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            char hex[65];
            tlm_sha256_hex(v[i].msg, strlen(v[i].msg), hex);
            TAP_OK(!strcmp(hex, v[i].hex), "%s: the %zu-byte NIST vector", a ? "extensions" : "plain", strlen(v[i].msg));
        }
        size_t n = 1000000;
        uint8_t *m = malloc(n);
        memset(m, 'a', n);
        char hex[65];
        digest(m, n, 3, hex);
        TAP_OK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
               "%s: a million 'a' in random pieces", a ? "extensions" : "plain");
        free(m);
    }
    if (accel) {
        size_t n = 1 << 22;
        uint8_t *buf = malloc(n);
        uint64_t r = 12345;
        for (size_t i = 0; i < n; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            buf[i] = (uint8_t)r;
        }
        int same = 1, cases = 0;
        for (size_t len = 0; len <= 300; len++)
            for (size_t off = 0; off < 3; off++, cases++) {
                char h1[65], h2[65];
                tlm__sha256_accelerated(1);
                digest(buf + off, len, len + off, h1);
                tlm__sha256_accelerated(0);
                digest(buf + off, len, 0, h2);
                same &= !strcmp(h1, h2);
            }
        char h1[65], h2[65];
        tlm__sha256_accelerated(1);
        digest(buf, n, 0, h1);
        tlm__sha256_accelerated(0);
        digest(buf, n, 5, h2);
        same &= !strcmp(h1, h2);
        TAP_OK(same, "extensions = plain on %d random inputs of 0..300 bytes (unaligned, in pieces) and 4 MiB", cases + 1);
        double fast = rate(1, buf, n), plain = rate(0, buf, n);
        TAP_DIAG("speed on one core: extensions %.0f MB/s, plain %.0f MB/s (%.1fx)", fast, plain, fast / plain);
        free(buf);
    }
    tlm__sha256_accelerated(1);
    return tap_done();
}
