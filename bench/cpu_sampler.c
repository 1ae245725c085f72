/*
 * cpu_sampler.c - where a process spends its CPU, for machines without perf
 * (the GPU machines have no perf, strace or gdb).  Preloaded:
 *
 *   KB_SAMPLER_OUT=/tmp/s LD_PRELOAD=build/cpu_sampler.so build/kbench ...
 *
 * Every millisecond of the process's CPU time (ITIMER_PROF, user and
 * kernel) the thread that is running takes SIGPROF and records its stack;
 * at exit each process (children included: the variable is inherited)
 * writes /tmp/s.PID, one sample per line:
 *
 *   MONOTONIC_MS TID lib!symbol+0xoff<lib!symbol+0xoff<...   (innermost first)
 *
 * The times are CLOCK_MONOTONIC like $KBENCH_LOG's, so a window of the log
 * (say, CUPTI's first Start) selects its samples: bench/cpu_samples.py.
 * Symbols are the nearest exported ones (dladdr), so inside a stripped
 * library the name is only a landmark; the library is exact.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 20000
#define MAX_FRAMES 48

typedef struct {
	double ms;
	int tid;
	int nframes;
	void *frames[MAX_FRAMES];
} sample;

static sample *samples;
static atomic_int nsamples;
static char out_path[4096];

static void on_prof(int sig)
{
	(void)sig;
	int i = atomic_fetch_add(&nsamples, 1);
	if (i >= MAX_SAMPLES)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	samples[i].ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	samples[i].tid = (int)syscall(SYS_gettid);
	samples[i].nframes = backtrace(samples[i].frames, MAX_FRAMES);
}

static void write_frame(FILE *f, void *pc)
{
	Dl_info info;
	if (!dladdr(pc, &info) || !info.dli_fname) {
		fprintf(f, "?!%p", pc);
		return;
	}
	const char *lib = strrchr(info.dli_fname, '/');
	lib = lib ? lib + 1 : info.dli_fname;
	if (info.dli_sname)
		fprintf(f, "%s!%s+0x%lx", lib, info.dli_sname,
			(unsigned long)((char *)pc - (char *)info.dli_saddr));
	else
		fprintf(f, "%s!+0x%lx", lib, (unsigned long)((char *)pc - (char *)info.dli_fbase));
}

static void dump(void)
{
	struct itimerval off = {0};
	setitimer(ITIMER_PROF, &off, NULL);
	FILE *f = fopen(out_path, "w");
	if (!f)
		return;
	int n = atomic_load(&nsamples);
	n = n > MAX_SAMPLES ? MAX_SAMPLES : n;
	for (int i = 0; i < n; i++) {
		fprintf(f, "%.3f %d ", samples[i].ms, samples[i].tid);
		/* frame 0 is the handler, frame 1 the signal trampoline */
		for (int k = 2; k < samples[i].nframes; k++) {
			if (k > 2)
				fputc('<', f);
			write_frame(f, samples[i].frames[k]);
		}
		fputc('\n', f);
	}
	fclose(f);
}

__attribute__((constructor)) static void start(void)
{
	const char *base = getenv("KB_SAMPLER_OUT");
	if (!base)
		return;
	snprintf(out_path, sizeof out_path, "%s.%d", base, (int)getpid());
	samples = calloc(MAX_SAMPLES, sizeof *samples);
	if (!samples)
		return;
	void *warm[2];
	backtrace(warm, 2); /* loads the unwinder now, not inside the handler */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval every = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_PROF, &every, NULL);
	atexit(dump);
}
