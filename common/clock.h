/* clock.h: the two clocks TLM reads, in seconds as a double, and the
 * deadline a timed wait needs.
 *
 * Monotonic time measures (step times, rates, ETAs, heartbeats, retry
 * delays): it never jumps when the wall clock is set.  Wall time is what
 * is recorded (started_at and ended_at in results.db): seconds since the
 * epoch, comparable across processes and machines. */
#ifndef TLM_COMMON_CLOCK_H
#define TLM_COMMON_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC, in seconds. */
double tlm_clock_mono(void);

/* CLOCK_REALTIME: seconds since the epoch. */
double tlm_clock_wall(void);

/* The time ns nanoseconds from now on clock clk (CLOCK_REALTIME, or the
 * clock a condition variable was set to): the absolute deadline
 * pthread_cond_timedwait takes. */
void tlm_clock_deadline(clockid_t clk, long long ns, struct timespec *out);

#endif
