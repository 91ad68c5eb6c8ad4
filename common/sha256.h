/* sha256.h: SHA-256 (FIPS 180-4), used for job identities and file checksums. */
#ifndef TLM_COMMON_SHA256_H
#define TLM_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct tlm_sha256 {
    uint32_t h[8];
    uint64_t nbytes;
    uint8_t buf[64];
    size_t nbuf;
} tlm_sha256;

void tlm_sha256_init(tlm_sha256 *s);
void tlm_sha256_update(tlm_sha256 *s, const void *data, size_t n);
void tlm_sha256_final(tlm_sha256 *s, uint8_t out[32]);
/* One-shot digest as 64 lowercase hex characters plus NUL. */
void tlm_sha256_hex(const void *data, size_t n, char out[65]);
void tlm_hex(const uint8_t *bytes, size_t n, char *out /* 2n+1 */);

/* Tests and benchmarks only: use (1) the CPU's SHA extensions when it has
 * them, the default, or (0) the plain C block function; returns 1 when the
 * extensions are now in use. */
int tlm__sha256_accelerated(int use);

#endif
