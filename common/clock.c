/* clock.c: clock readings (clock.h).  Must not: sleep, or fail (a clock
 * that cannot be read is a broken system: clock_gettime on these two
 * clocks does not fail on Linux). */
#include "common/clock.h"

static double seconds(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double tlm_clock_mono(void) { return seconds(CLOCK_MONOTONIC); }

double tlm_clock_wall(void) { return seconds(CLOCK_REALTIME); }

void tlm_clock_deadline(clockid_t clk, long long ns, struct timespec *out)
{
    clock_gettime(clk, out);
    long long total = (long long)out->tv_nsec + ns;
    out->tv_sec += (time_t)(total / 1000000000LL);
    out->tv_nsec = (long)(total % 1000000000LL);
}
