/* rope.c: rotary position embedding, rotate-half convention (the one of
 * Hugging Face Llama): for i < hd/2, the pair (x_i, x_{i+hd/2}) at
 * position p turns by the angle p * theta^(-2i/hd):
 *   y_i = x_i cos - x_{i+h} sin,   y_{i+h} = x_{i+h} cos + x_i sin.
 * The backward is the transposed rotation (the angle negated). */
#include "engine/cpu/internal.h"

static void rope_rotate(void *ctx, float *x, int ld, int N, int T, int H, int hd, const float *cs, float sign)
{
    const int h2 = hd / 2;
#pragma omp parallel for num_threads(eng__cpu_nt(ctx)) schedule(static) if ((long)N * H * hd >= ENG_PAR_MIN)
    for (int n = 0; n < N; n++) {
        const float *cosv = cs + (size_t)(n % T) * hd, *sinv = cosv + h2;
        float *row = x + (size_t)n * ld;
        for (int h = 0; h < H; h++) {
            float *a = row + (size_t)h * hd, *b = a + h2;
#pragma omp simd
            for (int i = 0; i < h2; i++) {
                float c = cosv[i], s = sign * sinv[i];
                float x1 = a[i], x2 = b[i];
                a[i] = x1 * c - x2 * s;
                b[i] = x2 * c + x1 * s;
            }
        }
    }
}

void eng__cpu_rope_fwd(void *ctx, eng_act *x_a /* (N, ld): H heads of hd */, int ld, int N, int T, int H, int hd,
                       const float *cs /* (T, 2, hd/2) */)
{
    float *x = (float *)x_a;
    rope_rotate(ctx, x, ld, N, T, H, hd, cs, 1.0f);
}

void eng__cpu_rope_bwd(void *ctx, eng_act *dx_a /* (N, ld) */, int ld, int N, int T, int H, int hd,
                       const float *cs /* (T, 2, hd/2) */)
{
    float *dx = (float *)dx_a;
    rope_rotate(ctx, dx, ld, N, T, H, hd, cs, -1.0f);
}
