/*
 * spec_lex.c - the tokens of the //! spec: a lexer over one //! line at a
 * time (identifiers, numbers, strings, '->' and single punctuation, each
 * with its column), the parser's small expect/syntax helpers, and what every
 * spec file shares for diagnostics: errors at file:line:col with the token
 * underlined, name lookups (and the duplicate-name check every defining
 * line makes), and "did you mean" by edit distance.
 * It owns no spec data; kb_spec__parser (spec_int.h) is the state.
 *
 * Invariants: a token never reaches past P->end (the line without its
 * trailing comment and blanks); columns are 1-based bytes of the physical
 * line; a line reports at most one syntax error (P->failed).
 */
#include "spec_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ===== diagnostics and small helpers ===== */

void kb_spec__vdiag(kb_diags *d, const kb_source *src, kb_diag_level lv, int line, int col,
		    int len, const char *fmt, va_list ap)
{
	if (!d)
		return;
	char *msg = kb_xvasprintf(fmt, ap);
	kb_diag_add(d, lv, src ? src->path : NULL, src ? src->text : NULL, line, col, len,
		    "%s", msg);
	free(msg);
}

void KB_PRINTF(6, 7) kb_spec__diag_err(kb_diags *d, const kb_source *src, int line, int col,
				       int len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kb_spec__vdiag(d, src, KB_DIAG_ERROR, line, col, len, fmt, ap);
	va_end(ap);
}

int kb_spec__find_arg(const kb_spec *s, const char *name)
{
	for (int i = 0; i < s->nargs; i++)
		if (!strcmp(s->args[i].name, name))
			return i;
	return -1;
}

int kb_spec__find_tune(const kb_spec *s, const char *name)
{
	for (int i = 0; i < s->ntunes; i++)
		if (!strcmp(s->tunes[i].name, name))
			return i;
	return -1;
}

int kb_spec__find_tensor(const kb_spec *s, const char *name)
{
	for (int i = 0; i < s->ntensors; i++)
		if (!strcmp(s->tensors[i].name, name))
			return i;
	return -1;
}

const kb_spec_tmap *kb_compile_spec_tmap(const kb_spec *s, const char *name)
{
	for (int i = 0; i < s->ntmaps; i++)
		if (!strcmp(s->tmaps[i].name, name))
			return &s->tmaps[i];
	return NULL;
}

const kb_spec_tensor *kb_compile_spec_tensor(const kb_spec *s, const char *name)
{
	int i = kb_spec__find_tensor(s, name);
	return i >= 0 ? &s->tensors[i] : NULL;
}

const kb_spec_arg *kb_compile_spec_arg(const kb_spec *s, const char *name)
{
	int i = kb_spec__find_arg(s, name);
	return i >= 0 ? &s->args[i] : NULL;
}

/* Returns whether the name in t is still free; reports a duplicate if not. */
bool kb_spec__define_ok(kb_spec__parser *P, const kb_spec__tok *t)
{
	char *name = kb_xstrndup(t->p, (size_t)t->len);
	int a = kb_spec__find_arg(P->spec, name), x = kb_spec__find_tensor(P->spec, name);
	const kb_spec_tmap *m = kb_compile_spec_tmap(P->spec, name);
	int line = a >= 0 ? P->spec->args[a].loc.line : x >= 0 ? P->spec->tensors[x].loc.line
		 : m ? m->loc.line : 0;
	if (line)
		kb_spec__perr(P, t->col, t->len,
			      "duplicate name '%s' (first defined as %s at line %d)",
			      name, a >= 0 ? "an arg" : x >= 0 ? "a tensor" : "a tensormap", line);
	free(name);
	return line == 0;
}

/* The closest of names[] to word when it is close enough, else NULL. */
const char *kb_spec__closest(const char *word, const char *const *names, int n)
{
	const char *best = NULL;
	int bestd = (int)strlen(word) <= 3 ? 1 : 2;
	for (int i = 0; i < n; i++) {
		size_t lw = strlen(word), ln = strlen(names[i]);
		/* words over 31 characters are never close */
		int dist = lw > 31 || ln > 31 ? 99 : kb_edit_distance(word, lw, names[i], ln);
		if (dist <= bestd && (!best || dist < bestd)) {
			best = names[i];
			bestd = dist;
		}
	}
	return best;
}

/* "a, b, c" */
char *kb_spec__join_names(const char *const *names, int n)
{
	kb_buf b = KB_BUF_INIT;
	for (int i = 0; i < n; i++)
		kb_buf_catf(&b, "%s%s", i ? ", " : "", names[i]);
	return kb_buf_detach(&b);
}

/* ===== the lexer (one //! line at a time) ===== */

bool kb_spec__is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static const char *lex_number(const char *p, const char *end)
{
	bool hex = end - p > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	while (p < end) {
		if (!hex && (*p == 'e' || *p == 'E') && p + 1 < end && (p[1] == '+' || p[1] == '-'))
			p += 2;
		else if (is_ident_char(*p) || *p == '.')
			p++;
		else
			break;
	}
	return p;
}

void kb_spec__lex(kb_spec__parser *P)
{
	const char *p = P->pos, *e = P->end;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	kb_spec__tok *t = &P->tok;
	t->p = p;
	t->col = (int)(p - P->line) + 1;
	t->len = 1;
	if (p >= e) {
		t->kind = KB_TK_EOF;
	} else if (kb_spec__is_ident_start(*p)) {
		t->kind = KB_TK_IDENT;
		while (p + t->len < e && is_ident_char(p[t->len]))
			t->len++;
	} else if (isdigit((unsigned char)*p) ||
		   (*p == '.' && p + 1 < e && isdigit((unsigned char)p[1]))) {
		t->kind = KB_TK_NUM;
		t->len = (int)(lex_number(p, e) - p);
	} else if (*p == '"') {
		const char *q = p + 1;
		while (q < e && *q != '"')
			q += (*q == '\\' && q + 1 < e) ? 2 : 1;
		t->kind = q < e ? KB_TK_STR : KB_TK_BAD;
		t->len = (int)((q < e ? q + 1 : e) - p);
	} else if (*p == '-' && p + 1 < e && p[1] == '>') {
		t->kind = KB_TK_ARROW;
		t->len = 2;
	} else {
		t->kind = KB_TK_PUNCT;
	}
	P->pos = p + t->len;
}

/* Whether the next non-blank character after the current token is c. */
bool kb_spec__peek_char(const kb_spec__parser *P, char c)
{
	const char *p = P->pos;
	while (p < P->end && (*p == ' ' || *p == '\t'))
		p++;
	return p < P->end && *p == c;
}

bool kb_spec__is_punct(const kb_spec__parser *P, char c)
{
	return P->tok.kind == KB_TK_PUNCT && P->tok.p[0] == c;
}

bool kb_spec__tok_is(const kb_spec__tok *t, const char *word)
{
	return t->kind == KB_TK_IDENT && (int)strlen(word) == t->len &&
	       !memcmp(t->p, word, (size_t)t->len);
}

kb_loc kb_spec__loc_at(const kb_spec__parser *P, int col)
{
	return (kb_loc){P->src->path, P->lineno, col};
}

void KB_PRINTF(4, 5) kb_spec__perr(kb_spec__parser *P, int col, int len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kb_spec__vdiag(P->diags, P->src, KB_DIAG_ERROR, P->lineno, col, len, fmt, ap);
	va_end(ap);
}

/* Reports "expected WHAT" at the current token (once per line); returns -1. */
int kb_spec__syntax(kb_spec__parser *P, const char *what)
{
	const kb_spec__tok *t = &P->tok;
	if (!P->failed) {
		if (t->kind == KB_TK_EOF)
			kb_spec__perr(P, t->col, 1, "expected %s at end of line", what);
		else if (t->kind == KB_TK_BAD)
			kb_spec__perr(P, t->col, t->len, "unterminated string");
		else
			kb_spec__perr(P, t->col, t->len, "expected %s, found '%.*s'", what,
				      t->len, t->p);
	}
	P->failed = true;
	return -1;
}

int kb_spec__expect(kb_spec__parser *P, char c, const char *what)
{
	if (!kb_spec__is_punct(P, c))
		return kb_spec__syntax(P, what);
	kb_spec__lex(P);
	return 0;
}

int kb_spec__expect_ident(kb_spec__parser *P, const char *what, kb_spec__tok *out)
{
	*out = P->tok;
	if (P->tok.kind != KB_TK_IDENT)
		return kb_spec__syntax(P, what);
	kb_spec__lex(P);
	return 0;
}

int kb_spec__expect_eol(kb_spec__parser *P)
{
	return P->tok.kind == KB_TK_EOF ? 0 : kb_spec__syntax(P, "end of line");
}
