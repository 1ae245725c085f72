/*
 * clock.c - the monotonic clock used for compile and run timings, and the
 * calling thread's CPU time (user and kernel) beside it.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "kb.h"

#include <sys/resource.h>
#include <time.h>

double kb_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void kb_thread_cpu_ms(double *user_ms, double *sys_ms)
{
	struct rusage ru;
	*user_ms = *sys_ms = 0;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return;
	*user_ms = (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3;
	*sys_ms = (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
}
