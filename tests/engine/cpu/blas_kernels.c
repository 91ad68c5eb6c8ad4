/* blas_kernels.c: prints the OpenBLAS kernels this CPU can execute that TLM
 * chooses between (OPENBLAS_CORETYPE spellings), one per line, best first;
 * nothing with another BLAS.  A helper of `make check-kernels` and
 * tests/engine/cpu/test_kernels.sh, not a test itself. */
#include <stdio.h>

#include "engine/cpu/runtime.h"

int main(void)
{
    const char *k[16];
    int n = eng_runtime_kernels(k);
    for (int i = 0; i < n; i++)
        printf("%s\n", k[i]);
    return 0;
}
