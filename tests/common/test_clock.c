/* test_clock.c: common/clock.c: the monotonic clock does not go back, the
 * wall clock is the epoch's, and a deadline lands ns after now with its
 * nanoseconds carried into seconds (pthread_cond_timedwait refuses a
 * tv_nsec of 10^9 or more with EINVAL, which would make a timed wait
 * spin). */
#include <math.h>
#include <time.h>

#include "common/clock.h"
#include "tests/lib/tap.h"

static double ts_seconds(const struct timespec *t) { return (double)t->tv_sec + 1e-9 * (double)t->tv_nsec; }

int main(void)
{
    int back = 0;
    double prev = tlm_clock_mono();
    for (int i = 0; i < 100000; i++) {
        double c = tlm_clock_mono();
        back |= c < prev;
        prev = c;
    }
    TAP_OK(!back, "monotonic readings never decrease");
    double wall = tlm_clock_wall();
    TAP_OK(fabs(wall - (double)time(NULL)) < 2, "wall clock is seconds since the epoch (%.3f)", wall);

    long long steps[] = {0, 1, 999999999, 1000000000, 2500000000LL, 1000001};
    int carried = 1, lands = 1;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct timespec now, d;
        clock_gettime(CLOCK_MONOTONIC, &now);
        tlm_clock_deadline(CLOCK_MONOTONIC, steps[i], &d);
        carried &= d.tv_nsec >= 0 && d.tv_nsec < 1000000000L;
        double gap = ts_seconds(&d) - ts_seconds(&now) - 1e-9 * (double)steps[i];
        lands &= gap >= -1e-6 && gap < 0.5;
    }
    TAP_OK(carried, "deadline nanoseconds stay below 10^9");
    TAP_OK(lands, "each deadline is ns after now");
    struct timespec r, d;
    clock_gettime(CLOCK_REALTIME, &r);
    tlm_clock_deadline(CLOCK_REALTIME, 3000000000LL, &d);
    TAP_OK(d.tv_sec - r.tv_sec >= 2 && d.tv_sec - r.tv_sec <= 3, "on the wall clock too (3 s ahead)");
    return tap_done();
}
