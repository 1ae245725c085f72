/*
 * alloc.c - allocation that aborts on out-of-memory (tmux xmalloc), and
 * the one place that turns an impossible state into a loud abort.
 */
#include "kb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

char *kb_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = kb_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
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
