/* cuda_frag.cu: the tensor-core fragment test of engine/cuda/mma.h, built
 * twice: by clang++ for the emulator (tlm_test_frag_emu) and, in a CUDA
 * build, by nvcc (tlm_test_frag_gpu, which a GPU runs when one is lent).
 * One warp multiplies known matrices, D = A B + C with A 16x16 and B 16x8
 * bf16, C and D fp32, twice:
 *   - A through ldmatrix .x4 and B through ldmatrix .x2 .trans from shared
 *     memory (the way a flash-attention kernel loads its tiles);
 *   - A and B fragments filled by hand from the PTX ISA's layout tables.
 * C is read and D written through the documented accumulator layout.
 * test_cuda_emu compares both with a product computed on the host, so a
 * wrong lane-to-element mapping in the emulator, in mma.h or in the
 * tables shows as a wrong element.
 *
 * Must not: be linked into the engine (test only). */
#include <stdio.h>
#include <string.h>

#include "engine/cuda/internal.h"

ENG__CU_BEGIN

__global__ static void k_frag(float *d_ld, float *d_direct, const uint16_t *A, const uint16_t *B, const float *C)
{
    __shared__ __align__(16) uint16_t As[16][16];
    __shared__ __align__(16) uint16_t Bs[16][8]; /* k-major: Bs[k][n] */
    const int l = threadIdx.x, g = l >> 2, q = l & 3;
    for (int i = l; i < 256; i += 32)
        As[i / 16][i % 16] = A[i];
    for (int i = l; i < 128; i += 32)
        Bs[i / 8][i % 8] = B[i];
    __syncwarp();
    uint32_t a[4], b[2];
    eng_cu_ldmatrix_x4(a, &As[l % 16][(l / 16) * 8]);
    eng_cu_ldmatrix_x2_trans(b, &Bs[l % 16][0]);
    float c[4], d[4];
    for (int i = 0; i < 4; i++)
        c[i] = C[(g + (i >= 2 ? 8 : 0)) * 8 + q * 2 + (i & 1)];
    eng_cu_mma_16816_bf16(d, a, b, c);
    for (int i = 0; i < 4; i++)
        d_ld[(g + (i >= 2 ? 8 : 0)) * 8 + q * 2 + (i & 1)] = d[i];
    /* by hand: a[r] holds row g (+8 for odd r), columns q*2, +1 (+8 for
     * r >= 2); b[r] holds rows q*2, +1 (+8 for r = 1) of column g */
    uint32_t ad[4], bd[2];
    for (int r = 0; r < 4; r++) {
        const int row = g + (r & 1) * 8, col = q * 2 + (r >> 1) * 8;
        ad[r] = (uint32_t)A[row * 16 + col] | (uint32_t)A[row * 16 + col + 1] << 16;
    }
    for (int r = 0; r < 2; r++) {
        const int k = q * 2 + r * 8;
        bd[r] = (uint32_t)B[k * 8 + g] | (uint32_t)B[(k + 1) * 8 + g] << 16;
    }
    const float zero[4] = {0, 0, 0, 0};
    eng_cu_mma_16816_bf16(d, ad, bd, zero);
    for (int i = 0; i < 4; i++)
        d_direct[(g + (i >= 2 ? 8 : 0)) * 8 + q * 2 + (i & 1)] = d[i];
}

ENG__CU_END

#ifdef ENG_CUDA_EMU
#define TLM_TEST_FRAG tlm_test_frag_emu
using namespace eng_cu_emu;
#else
#define TLM_TEST_FRAG tlm_test_frag_gpu
#endif

/* d_ld, d_direct: 16x8 results; A 16x16 and B 16x8 (k-major) bf16 bits, C
 * 16x8.  0, 77 when there is no device, else 1 with msg. */
extern "C" int TLM_TEST_FRAG(float *d_ld, float *d_direct, const uint16_t *A, const uint16_t *B, const float *C,
                             char *msg, size_t cap)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        snprintf(msg, cap, "no GPU");
        (void)cudaGetLastError();
        return 77;
    }
    void *dev = NULL;
    const size_t bytes = 2 * 128 * sizeof(float) + 256 * 2 + 128 * 2 + 128 * sizeof(float);
    cudaError_t rc = cudaMalloc(&dev, bytes);
    float *dl = (float *)dev, *dd = dl + 128, *dc = dd + 128;
    uint16_t *da = (uint16_t *)(dc + 128), *db = da + 256;
    if (rc == cudaSuccess)
        rc = cudaMemcpy(da, A, 256 * 2, cudaMemcpyHostToDevice);
    if (rc == cudaSuccess)
        rc = cudaMemcpy(db, B, 128 * 2, cudaMemcpyHostToDevice);
    if (rc == cudaSuccess)
        rc = cudaMemcpy(dc, C, 128 * sizeof(float), cudaMemcpyHostToDevice);
    if (rc == cudaSuccess) {
        ENG__CU_LAUNCH(k_frag, 1, 32, 0, (cudaStream_t)0, dl, dd, da, db, dc);
        rc = cudaGetLastError();
    }
    if (rc == cudaSuccess)
        rc = cudaDeviceSynchronize();
    if (rc == cudaSuccess)
        rc = cudaMemcpy(d_ld, dl, 128 * sizeof(float), cudaMemcpyDeviceToHost);
    if (rc == cudaSuccess)
        rc = cudaMemcpy(d_direct, dd, 128 * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dev);
    if (rc != cudaSuccess) {
        snprintf(msg, cap, "%s", cudaGetErrorString(rc));
        return 1;
    }
    return 0;
}
