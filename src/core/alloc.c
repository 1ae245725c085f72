/*
 * alloc.c - allocation that aborts on out-of-memory (tmux xmalloc), and
 * the one place that turns an impossible state into a loud abort.
 */
#include "kb.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void oom(size_t n)
{
	fprintf(stderr, "kbench: out of memory (%zu bytes)\n", n);
	abort();
}

void *kb_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *kb_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *kb_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *kb_xstrdup(const char *s)
{
	return kb_xstrndup(s, strlen(s));
}

char *kb_xstrndup(const char *s, size_t n)
{
	char *p = kb_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *kb_xvasprintf(const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	char *p = kb_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *kb_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = kb_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void kb_xgrow(void **v, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return;
	int ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	*v = kb_xrealloc(*v, (size_t)ncap * elem);
	memset((char *)*v + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	*cap = ncap;
}

void kb_unreachable_at(const char *file, int line)
{
	fprintf(stderr, "kbench: internal error at %s:%d\n", file, line);
	abort();
}

/* ---- recycled large blocks ---------------------------------------------- */

#define BIG_SLOTS 64   /* live big blocks tracked (their sizes) */
#define BIG_KEEP 6     /* freed big blocks kept for reuse */
/* and at most this many bytes of them (or an eighth of memory, where
 * less): a long-lived runner whose sizes keep changing (the gallery's 4-8
 * GB tensors) would otherwise hold 6 such blocks, unused, for good */
#define BIG_KEEP_BYTES ((size_t)8 << 30)

typedef struct {
	void *p;
	size_t n;
} big_block;

static big_block big_live[BIG_SLOTS], big_kept[BIG_KEEP];
static size_t big_kept_bytes, big_keep_budget; /* the budget: 0 until first asked */
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;

size_t kb_mem_budget(size_t cap)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	size_t eighth = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 8 : cap;
	return eighth < cap ? eighth : cap;
}

static size_t keep_budget(void)
{
	if (!big_keep_budget)
		big_keep_budget = kb_mem_budget(BIG_KEEP_BYTES);
	return big_keep_budget;
}

size_t kb_big_kept(size_t *budget)
{
	pthread_mutex_lock(&big_lock);
	size_t n = big_kept_bytes, was = keep_budget();
	if (budget) {
		big_keep_budget = *budget;
		*budget = was;
	}
	pthread_mutex_unlock(&big_lock);
	return n;
}

static void *take_kept(size_t n)
{
	for (int i = 0; i < BIG_KEEP; i++)
		if (big_kept[i].p && big_kept[i].n == n) {
			void *p = big_kept[i].p;
			big_kept[i].p = NULL;
			big_kept_bytes -= n;
			return p;
		}
	return NULL;
}

static void track(void *p, size_t n)
{
	for (int i = 0; i < BIG_SLOTS; i++)
		if (!big_live[i].p) {
			big_live[i] = (big_block){p, n};
			return;
		}
}

void *kb_big_alloc(size_t n)
{
	if (n < KB_BIG_MIN)
		return kb_xmalloc(n);
	pthread_mutex_lock(&big_lock);
	void *p = take_kept(n);
	pthread_mutex_unlock(&big_lock);
	if (!p)
		p = kb_xmalloc(n);
	pthread_mutex_lock(&big_lock);
	track(p, n);
	pthread_mutex_unlock(&big_lock);
	return p;
}

/* ---- threads ------------------------------------------------------------- */

typedef struct {
	void (*fn)(void *ctx, int t, int n);
	void *ctx;
	int t, n;
} share;

static void *share_main(void *arg)
{
	share *s = arg;
	s->fn(s->ctx, s->t, s->n);
	return NULL;
}

void kb_parallel(int n, void (*fn)(void *ctx, int t, int n), void *ctx)
{
	n = n < 1 ? 1 : n;
	share *s = kb_xcalloc((size_t)n, sizeof *s);
	pthread_t *tid = kb_xcalloc((size_t)n, sizeof *tid);
	bool *started = kb_xcalloc((size_t)n, sizeof *started);
	for (int t = 0; t < n; t++) {
		s[t] = (share){fn, ctx, t, n};
		if (t > 0)
			started[t] = pthread_create(&tid[t], NULL, share_main, &s[t]) == 0;
	}
	share_main(&s[0]);
	for (int t = 1; t < n; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			share_main(&s[t]);
	}
	free(started);
	free(tid);
	free(s);
}

int kb_parallel_width(int64_t units, int max)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t n = units < max ? units : max;
	if (cpus > 0 && n > cpus)
		n = cpus;
	return n < 1 ? 1 : (int)n;
}

typedef struct {
	char *p;
	size_t n;
} zero_job;

static void zero_share(void *ctx, int t, int n)
{
	zero_job *z = ctx;
	size_t lo = z->n * (size_t)t / (size_t)n, hi = z->n * (size_t)(t + 1) / (size_t)n;
	memset(z->p + lo, 0, hi - lo);
}

/* memset(p, 0, n) on up to 16 threads, one per 16 MiB.  On fresh memory the
 * cost is the first touch of each page (a fault), not the stores: ~140 ms
 * for 268 MB on one thread on the H200 machine, and faults on different
 * pages proceed in parallel. */
static void zero_parallel(void *p, size_t n)
{
	zero_job z = {p, n};
	kb_parallel(kb_parallel_width((int64_t)(n / (16u << 20)), 16), zero_share, &z);
}

void *kb_big_calloc(size_t n)
{
	if (n < KB_BIG_MIN)
		return kb_xcalloc(1, n);
	void *p = kb_big_alloc(n);
	zero_parallel(p, n);
	return p;
}

void kb_big_free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&big_lock);
	size_t n = 0;
	for (int i = 0; i < BIG_SLOTS; i++)
		if (big_live[i].p == p) {
			n = big_live[i].n;
			big_live[i].p = NULL;
		}
	/* Keep it for reuse (where it fits the budget), evicting the oldest
	 * kept blocks: the last slot's, and more while over the budget. */
	void *evict[BIG_KEEP + 1] = {p};
	int nevict = 1;
	if (n && n <= keep_budget()) {
		nevict = 0;
		if (big_kept[BIG_KEEP - 1].p) {
			evict[nevict++] = big_kept[BIG_KEEP - 1].p;
			big_kept_bytes -= big_kept[BIG_KEEP - 1].n;
		}
		memmove(&big_kept[1], &big_kept[0], sizeof(big_block) * (BIG_KEEP - 1));
		big_kept[0] = (big_block){p, n};
		big_kept_bytes += n;
		for (int i = BIG_KEEP - 1; i > 0 && big_kept_bytes > keep_budget(); i--)
			if (big_kept[i].p) {
				evict[nevict++] = big_kept[i].p;
				big_kept_bytes -= big_kept[i].n;
				big_kept[i].p = NULL;
			}
	}
	pthread_mutex_unlock(&big_lock);
	for (int i = 0; i < nevict; i++)
		free(evict[i]);
}
