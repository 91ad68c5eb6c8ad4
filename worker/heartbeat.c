/* heartbeat.c: the heartbeat thread (heartbeat.h). */
#include "worker/heartbeat.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

static void *loop(void *arg)
{
    wrk_heartbeat *hb = arg;
    pthread_mutex_lock(&hb->mu);
    while (!hb->stop) {
        double wait = hb->period - wrk_events_silence(hb->events);
        if (wait <= 0) {
            wrk_ev ev;
            wrk_ev_begin(&ev, hb->events, TLM_EV_HEARTBEAT);
            wrk_ev_int(&ev, "step", hb->step);
            wrk_ev_int(&ev, "tokens", hb->tokens);
            wrk_ev_str(&ev, "phase", hb->phase);
            wrk_ev_int(&ev, "progress", hb->progress);
            pthread_mutex_unlock(&hb->mu);
            wrk_events_emit(hb->events, &ev);
            pthread_mutex_lock(&hb->mu);
            continue;
        }
        struct timespec until;
        tlm_clock_deadline(CLOCK_MONOTONIC, (long long)(wait * 1e9) + 1000000, &until);
        int rc;
        do
            rc = pthread_cond_timedwait(&hb->cv, &hb->mu, &until);
        while (rc == EINTR);
    }
    pthread_mutex_unlock(&hb->mu);
    return NULL;
}

int wrk_heartbeat_start(wrk_heartbeat *hb, wrk_events *events, double period)
{
    memset(hb, 0, sizeof *hb);
    hb->events = events;
    hb->period = period;
    hb->phase = tlm_phase_name(TLM_PHASE_SETUP);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&hb->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&hb->mu, NULL);
    /* signals (SIGTERM, SIGINT) are for the main thread's handler */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&hb->thread, NULL, loop, hb);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        pthread_cond_destroy(&hb->cv);
        pthread_mutex_destroy(&hb->mu);
        return -1;
    }
    hb->running = 1;
    return 0;
}

void wrk_heartbeat_set(wrk_heartbeat *hb, const char *phase, int64_t step, int64_t tokens)
{
    if (!hb->running)
        return;
    pthread_mutex_lock(&hb->mu);
    hb->phase = phase;
    hb->step = step;
    hb->tokens = tokens;
    hb->progress++;
    pthread_mutex_unlock(&hb->mu);
}

void wrk_heartbeat_progress(wrk_heartbeat *hb)
{
    if (!hb->running)
        return;
    pthread_mutex_lock(&hb->mu);
    hb->progress++;
    pthread_mutex_unlock(&hb->mu);
}

void wrk_heartbeat_stop(wrk_heartbeat *hb)
{
    if (!hb->running)
        return;
    pthread_mutex_lock(&hb->mu);
    hb->stop = 1;
    pthread_cond_signal(&hb->cv);
    pthread_mutex_unlock(&hb->mu);
    pthread_join(hb->thread, NULL);
    pthread_cond_destroy(&hb->cv);
    pthread_mutex_destroy(&hb->mu);
    hb->running = 0;
}
