/* bench_tlmd_flood.c: a stand-in worker for bench/bench_tlmd.sh that only
 * talks: it accepts tlm-worker's command line, writes a start event, then
 * as many step events as the config's train.tokens / train.batch_tokens
 * asks for, as fast as the pipe takes them, and a done event.  It measures
 * how many events per second tlmd ingests through a real pipe; it is not
 * a worker and trains nothing.  It reads no config beyond two numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* crude but enough: the number after "key": in the JSON config */
static long number_after(const char *json, const char *key)
{
    const char *p = strstr(json, key);
    return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *job = "";
    int fd = 1;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--config"))
            config = argv[++i];
        else if (!strcmp(argv[i], "--events-fd"))
            fd = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--job"))
            job = argv[++i];
    }
    static char json[1 << 16];
    FILE *c = config ? fopen(config, "r") : NULL;
    size_t n = c ? fread(json, 1, sizeof json - 1, c) : 0;
    if (c)
        fclose(c);
    json[n] = '\0';
    long batch = number_after(json, "\"batch_tokens\":");
    long steps = batch > 0 ? number_after(json, "\"tokens\":") / batch : 0;
    FILE *ev = fdopen(fd, "w");
    if (!ev || steps <= 0)
        return 2;
    setvbuf(ev, NULL, _IOFBF, 1 << 16);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double t = ts.tv_sec + ts.tv_nsec * 1e-9;
    fprintf(ev, "{\"ev\":\"start\",\"v\":1,\"t\":%.3f,\"job\":\"%s\",\"pid\":%d,\"config_id\":\"%s\",\"step\":0,"
                "\"tokens\":0,\"resumed_from_step\":null,\"total_steps\":%ld,\"total_tokens\":%ld}\n",
            t, job, (int)getpid(), job, steps, steps * batch);
    for (long s = 1; s <= steps; s++)
        fprintf(ev, "{\"ev\":\"step\",\"v\":1,\"t\":%.3f,\"job\":\"%s\",\"step\":%ld,\"tokens\":%ld,\"loss\":%.16g,"
                    "\"lr\":0.0004,\"grad_norm\":0.3,\"tokens_per_s\":19701.95,\"step_ms\":51.97}\n",
                t, job, s, s * batch, 5.0 / (1 + s * 1e-3));
    fprintf(ev, "{\"ev\":\"done\",\"v\":1,\"t\":%.3f,\"job\":\"%s\",\"step\":%ld,\"tokens\":%ld,\"loss\":1.5,"
                "\"val_loss\":null,\"elapsed_s\":1}\n",
            t, job, steps, steps * batch);
    return fclose(ev) == 0 ? 0 : 1;
}
