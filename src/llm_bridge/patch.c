/*
 * patch.c - applies a model's unified diff to a buffer.  libgit2 (which
 * diff/ uses to *make* diffs) applies patches only to a repository's index
 * or tree and insists on exact line numbers, while models get the numbers
 * of a hunk wrong more often than its lines.  So a hunk is placed by its
 * context and removed lines: at the line its header says, else the first
 * place after the previous hunk where they match (exactly, then ignoring
 * trailing blanks).  A hunk that matches nowhere fails the whole patch,
 * naming the hunk and its first line that is not in the file; no partial
 * patch is ever returned.
 */
#include "llm_bridge_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char **v;
	int n, cap;
} lines;

static void push(lines *l, const char *s, size_t n)
{
	*KB_PUSH(l->v, l->n, l->cap) = kb_xstrndup(s, n);
}

static void split(const char *s, lines *l)
{
	while (*s) {
		size_t n = strcspn(s, "\n");
		push(l, s, n);
		s += n + (s[n] == '\n');
	}
}

static void lines_free(lines *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* One hunk: its header's old start, the old side and the new side. */
typedef struct {
	int old_start;
	lines old, new;
	char header[96];
} hunk;

/* Equal, or (loose) equal but for trailing blanks. */
static bool same(const char *a, const char *b, bool loose)
{
	if (!loose)
		return !strcmp(a, b);
	size_t na = strlen(a), nb = strlen(b);
	while (na && isspace((unsigned char)a[na - 1]))
		na--;
	while (nb && isspace((unsigned char)b[nb - 1]))
		nb--;
	return na == nb && !memcmp(a, b, na);
}

static bool matches_at(const lines *f, const lines *old, int at, bool loose)
{
	if (at < 0 || at + old->n > f->n)
		return false;
	for (int i = 0; i < old->n; i++)
		if (!same(f->v[at + i], old->v[i], loose))
			return false;
	return true;
}

/* Where the hunk goes (>= from), or -1. */
static int place(const lines *f, const hunk *h, int from)
{
	for (int loose = 0; loose < 2; loose++) {
		if (h->old_start - 1 >= from && matches_at(f, &h->old, h->old_start - 1, loose))
			return h->old_start - 1;
		for (int at = from; at + h->old.n <= f->n; at++)
			if (matches_at(f, &h->old, at, loose))
				return at;
	}
	return -1;
}

/* Reads the hunks of diff; returns their count. */
static int parse(const char *diff, hunk **out)
{
	lines d = {0};
	split(diff, &d);
	hunk *hs = NULL;
	int n = 0, cap = 0;
	for (int i = 0; i < d.n; i++) {
		const char *s = d.v[i];
		int a = 0;
		if (!strncmp(s, "@@", 2)) {
			hunk *h = KB_PUSH(hs, n, cap);
			memset(h, 0, sizeof *h);
			if (sscanf(s, "@@ -%d", &a) == 1)
				h->old_start = a;
			snprintf(h->header, sizeof h->header, "%.80s", s);
			continue;
		}
		if (!n || !strncmp(s, "--- ", 4) || !strncmp(s, "+++ ", 4) || s[0] == '\\' ||
		    !strncmp(s, "diff ", 5) || !strncmp(s, "index ", 6))
			continue;
		hunk *h = &hs[n - 1];
		if (s[0] == '+')
			push(&h->new, s + 1, strlen(s + 1));
		else if (s[0] == '-')
			push(&h->old, s + 1, strlen(s + 1));
		else { /* context; a bare empty line is one whose space was lost */
			const char *t = s[0] == ' ' ? s + 1 : s;
			push(&h->old, t, strlen(t));
			push(&h->new, t, strlen(t));
		}
	}
	lines_free(&d);
	*out = hs;
	return n;
}

/* The first line of h's old side that is nowhere in the file. */
static const char *missing_line(const lines *f, const hunk *h)
{
	for (int i = 0; i < h->old.n; i++) {
		bool found = false;
		for (int j = 0; j < f->n && !found; j++)
			found = same(f->v[j], h->old.v[i], true);
		if (!found)
			return h->old.v[i];
	}
	return NULL;
}

static int apply(lines *f, hunk *hs, int n, kb_err *err)
{
	int from = 0;
	for (int k = 0; k < n; k++) {
		hunk *h = &hs[k];
		int at = place(f, h, from);
		if (at < 0) {
			const char *m = missing_line(f, h);
			return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
					  "hunk %d of %d (%s) does not apply: %s%.120s%s", k + 1, n,
					  h->header, m ? "the file has no line '" : "its lines are not in this "
					  "order after the previous hunk", m ? m : "", m ? "'" : "");
		}
		lines nf = {0};
		for (int i = 0; i < at; i++)
			push(&nf, f->v[i], strlen(f->v[i]));
		for (int i = 0; i < h->new.n; i++)
			push(&nf, h->new.v[i], strlen(h->new.v[i]));
		for (int i = at + h->old.n; i < f->n; i++)
			push(&nf, f->v[i], strlen(f->v[i]));
		lines_free(f);
		*f = nf;
		from = at + h->new.n;
	}
	return 0;
}

int kb_llm_patch(const char *base, const char *diff, kb_buf *out, kb_err *err)
{
	hunk *hs = NULL;
	int n = parse(diff, &hs);
	lines f = {0};
	split(base, &f);
	int rc = n ? apply(&f, hs, n, err)
		   : kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "the diff has no hunks (@@ lines)");
	for (int i = 0; rc == 0 && i < f.n; i++)
		kb_buf_catf(out, "%s\n", f.v[i]);
	if (rc == 0 && !out->s)
		kb_buf_cat(out, "");
	for (int k = 0; k < n; k++)
		lines_free(&hs[k].old), lines_free(&hs[k].new);
	free(hs);
	lines_free(&f);
	return rc;
}
