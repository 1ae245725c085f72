/*
 * progress.c - how far the long step in progress is.  Code that can tell
 * (a CPU reference over its rows, an upload in pieces, counter passes,
 * calibration) announces a total and adds what it has done; whoever shows
 * progress (the runner's ticker) reads the fraction from another thread.
 * One meter per process: there is one long step at a time in a runner.
 */
#include "kb.h"

#include <stdatomic.h>

static _Atomic int64_t total, done;

void kb_progress_start(int64_t n)
{
	atomic_store(&done, 0);
	atomic_store(&total, n);
}

void kb_progress_add(int64_t n)
{
	atomic_fetch_add(&done, n);
}

double kb_progress_fraction(void)
{
	int64_t t = atomic_load(&total), d = atomic_load(&done);
	if (t <= 0)
		return -1;
	return d >= t ? 1.0 : (double)d / (double)t;
}
