/* replay.c: runs a fuzz target over its corpus (tests/fuzz/corpus/NAME/)
 * without libFuzzer, so that `make check` (and `make check-sanitizers`,
 * under ASan and UBSan) keeps every saved input passing.  NAME is compiled
 * in (-DCORPUS="event").  A crash fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(void)
{
    const char *src = getenv("TLM_SRCDIR") ? getenv("TLM_SRCDIR") : "..";
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src, CORPUS);
    DIR *d = opendir(dir);
    if (!d) {
        printf("not ok 1 - corpus %s\n", dir);
        return 1;
    }
    int n = 0;
    struct dirent *de;
    static uint8_t buf[1 << 20];
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
        printf("ok %d - %s\n", ++n, de->d_name);
    }
    closedir(d);
    printf("1..%d\n", n);
    return n ? 0 : 1;
}
