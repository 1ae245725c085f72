/*
 * ticker.c - progress for long phases.  The runner says which phase it is
 * in whenever one starts; when one lasts longer than a second, the ticker
 * thread sends a progress frame every quarter second with how long it has
 * run and, where the work can tell (kb_progress_*), how far it is.  Such
 * frames carry "tick": true and are not a sign of life to the client's
 * watchdog (a hung kernel still times out).  No tick is ever sent after
 * the phase is cleared, which happens before each reply: ticks and the
 * clearing take the same lock.
 */
#include "runner_int.h"

#include <string.h>
#include <time.h>

#define TICK_AFTER_MS 1000.0
#define TICK_EVERY_MS 250.0

static void *tick_main(void *p)
{
	kb_runner__ticker *t = p;
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		long ns = until.tv_nsec + (long)(TICK_EVERY_MS * 1e6);
		until.tv_sec += ns / 1000000000L;
		until.tv_nsec = ns % 1000000000L;
		pthread_cond_timedwait(&t->cond, &t->lock, &until);
		double ran = kb_now_ms() - t->since;
		if (t->stop || !t->phase[0] || ran < TICK_AFTER_MS)
			continue;
		json_t *m = json_pack("{s:s, s:s, s:b, s:b, s:f}", "type", "progress", "phase", t->phase,
				      "gpu", t->gpu, "tick", 1, "elapsed_s", ran / 1e3);
		double f = kb_progress_fraction();
		if (f >= 0)
			json_object_set_new(m, "pct", json_real(100.0 * f));
		kb_runner__send(t->fd, m);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

void kb_runner__ticker_start(kb_runner__ticker *t, int fd)
{
	memset(t, 0, sizeof *t);
	t->fd = fd;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->running = pthread_create(&t->thread, NULL, tick_main, t) == 0;
}

void kb_runner__ticker_phase(kb_runner__ticker *t, const char *phase, bool gpu)
{
	if (!t || !t->running)
		return;
	pthread_mutex_lock(&t->lock);
	snprintf(t->phase, sizeof t->phase, "%s", phase ? phase : "");
	t->gpu = gpu;
	t->since = kb_now_ms();
	kb_progress_start(0);
	pthread_mutex_unlock(&t->lock);
}

void kb_runner__ticker_stop(kb_runner__ticker *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	t->running = false;
}
