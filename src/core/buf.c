/*
 * buf.c - kb_buf, the growable string used for sources, logs and frames.
 * Invariant: when s is non-NULL it is NUL-terminated at s[len].
 */
#include "kb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reserve(kb_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	b->s = kb_xrealloc(b->s, cap);
	b->cap = cap;
}

void kb_buf_catn(kb_buf *b, const void *p, size_t n)
{
	reserve(b, n);
	if (n)
		memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void kb_buf_cat(kb_buf *b, const char *s)
{
	kb_buf_catn(b, s, strlen(s));
}

void kb_buf_catc(kb_buf *b, char c)
{
	kb_buf_catn(b, &c, 1);
}

void kb_buf_catf(kb_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void kb_buf_reset(kb_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void kb_buf_free(kb_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

char *kb_buf_detach(kb_buf *b)
{
	char *s = b->s ? b->s : kb_xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}
