/*
 * tokenize.c - the tokens of a `.tile` file (docs/tile.md): names and
 * keywords, integers (decimal, 0x hex), floats (1.5, 1e-5, .5, 5.),
 * punctuation with the two-character operators, and statement ends.
 * It owns no tree: parse.c reads the list; a token points into the text.
 * The small token helpers the parser shares (kb_tile__tok_desc, ...) are
 * here too, and what a word or a number is for highlighters
 * (kb_tile_word_kind, kb_tile_number_end: the editor's lexer asks these
 * rather than keeping its own copy of the language's words).
 *
 * Invariants: `//!` spec lines and `#` comments never become tokens; a run
 * of newlines and `;` becomes one KB_TT_NEWLINE (none at the start); line
 * and col are 1-based, col counting bytes (a tab is one column, as the
 * diagnostic renderer draws it); a character that is not of the language
 * is an error in diags and is skipped, a bad number an error that stays a
 * number token (of value 1, so the parse goes on); the list always ends with
 * exactly one KB_TT_EOF, so a parser can look one token ahead anywhere.
 */
#include "tile_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *path, *text, *p, *end;
	const char *bol;   /* the start of the current line */
	int line;
	kb_tile__toks *out;
	kb_diags *diags;
} lexer;

bool kb_tile__tok_is(const kb_tile__tok *t, const char *s)
{
	if (t->kind != KB_TT_PUNCT && t->kind != KB_TT_IDENT)
		return false;
	size_t n = strlen(s);
	return (size_t)t->len == n && !memcmp(t->p, s, n);
}

static kb_tile__tok *push(lexer *L, kb_tile__tt kind, const char *p, int len)
{
	kb_tile__tok *t = KB_PUSH(L->out->v, L->out->n, L->out->cap);
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->p = p;
	t->len = len;
	t->line = L->line;
	t->col = (int)(p - L->bol) + 1;
	return t;
}

/* A statement end, unless the list is empty or already ends with one. */
static void push_newline(lexer *L, const char *p)
{
	if (L->out->n && L->out->v[L->out->n - 1].kind != KB_TT_NEWLINE)
		push(L, KB_TT_NEWLINE, p, 1);
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The byte length of the (UTF-8) character at p, at least 1. */
static int char_len(const lexer *L, const char *p)
{
	unsigned char c = (unsigned char)*p;
	int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	if (p + n > L->end)
		n = (int)(L->end - p);
	return n;
}

/* An error "what 'text'" about the n bytes at p, underlining ulen columns. */
static void error_at(lexer *L, const char *p, int n, int ulen, const char *what)
{
	kb_diag_add(L->diags, KB_DIAG_ERROR, L->path, L->text, L->line, (int)(p - L->bol) + 1,
		    ulen, "%s '%.*s'", what, n, p);
}

/* ===== numbers ===== */

/* Whether a number starts at p: a digit, or '.' and a digit. */
static bool starts_number(const char *p, const char *end)
{
	return p < end && (isdigit((unsigned char)*p) ||
			   (*p == '.' && p + 1 < end && isdigit((unsigned char)p[1])));
}

/* The end of the number starting at p (digits, one '.', an exponent, or
 * 0x and hex digits), then any name characters glued to it. */
static const char *number_end(const char *p, const char *end, bool *is_float)
{
	const char *q = p;
	*is_float = false;
	if (q + 1 < end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
		q += 2;
		while (q < end && isxdigit((unsigned char)*q))
			q++;
	} else {
		while (q < end && isdigit((unsigned char)*q))
			q++;
		if (q < end && *q == '.') {
			*is_float = true;
			for (q++; q < end && isdigit((unsigned char)*q);)
				q++;
		}
		if (q < end && (*q == 'e' || *q == 'E')) {
			const char *e = q + 1;
			if (e < end && (*e == '+' || *e == '-'))
				e++;
			if (e < end && isdigit((unsigned char)*e)) {
				*is_float = true;
				for (q = e; q < end && isdigit((unsigned char)*q);)
					q++;
			}
		}
	}
	while (q < end && is_ident_char(*q))
		q++; /* glued letters make the whole word a bad number */
	return q;
}

const char *kb_tile_number_end(const char *p, const char *end)
{
	bool is_float;
	return starts_number(p, end) ? number_end(p, end, &is_float) : p;
}

static const char *lex_number(lexer *L, const char *p)
{
	bool is_float;
	const char *q = number_end(p, L->end, &is_float);
	int len = (int)(q - p);
	char buf[128];
	if (len >= (int)sizeof(buf)) {
		error_at(L, p, len, len, "number too long:");
		push(L, KB_TT_INT, p, len)->ival = 1;
		return q;
	}
	memcpy(buf, p, (size_t)len);
	buf[len] = 0;
	char *e;
	errno = 0;
	int64_t i = 0;
	double f;
	if (is_float)
		f = strtod(buf, &e);
	else
		f = (double)(i = strtoll(buf, &e, buf[1] == 'x' || buf[1] == 'X' ? 16 : 10));
	bool bad = *e || e == buf || errno == ERANGE;
	if (*e || e == buf)
		error_at(L, p, len, len, "bad number");
	else if (errno == ERANGE)
		error_at(L, p, len, len, is_float ? "float out of range:" : "integer too large:");
	/* a bad number still stands where it is, as 1, so the parse goes on */
	kb_tile__tok *tok = push(L, is_float ? KB_TT_FLOAT : KB_TT_INT, p, len);
	tok->ival = bad ? 1 : i;
	tok->fval = bad ? 1 : f;
	return q;
}

/* ===== punctuation ===== */

static int punct_len(const char *p, const char *end)
{
	static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||", "+=", "-=", "*=", "/=",
					  "**", "<<", ">>"};
	if (p + 1 < end)
		for (size_t i = 0; i < KB_ARRAY_LEN(two); i++)
			if (p[0] == two[i][0] && p[1] == two[i][1])
				return 2;
	return *p && strchr("()[]{},:=+-*/%<>!&|", *p) ? 1 : 0;
}

/* Skips to the end of the line (the newline itself stays). */
static const char *skip_line(const lexer *L, const char *p)
{
	while (p < L->end && *p != '\n')
		p++;
	return p;
}

/* Lexes one token (or comment, or blank) at p; returns where the next starts. */
static const char *lex_one(lexer *L, const char *p)
{
	char c = *p;
	if (c == '\n') {
		push_newline(L, p);
		L->line++;
		L->bol = p + 1;
		return p + 1;
	}
	if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
		return p + 1;
	if (c == '#' || (p + 2 < L->end && !memcmp(p, "//!", 3)))
		return skip_line(L, p);
	if (c == ';') {
		push_newline(L, p);
		return p + 1;
	}
	if (starts_number(p, L->end))
		return lex_number(L, p);
	if (isalpha((unsigned char)c) || c == '_') {
		const char *q = p;
		while (q < L->end && is_ident_char(*q))
			q++;
		push(L, KB_TT_IDENT, p, (int)(q - p));
		return q;
	}
	int n = punct_len(p, L->end);
	if (n) {
		push(L, KB_TT_PUNCT, p, n);
		return p + n;
	}
	n = char_len(L, p);
	error_at(L, p, n, 1, "unexpected character");
	return p + n;
}

void kb_tile__tokenize(const char *path, const char *text, size_t len, kb_tile__toks *out,
		       kb_diags *diags)
{
	lexer L = {path, text, text, text + len, text, 1, out, diags};
	out->n = 0;
	const char *p = text;
	while (p < L.end)
		p = lex_one(&L, p);
	push(&L, KB_TT_EOF, p, 0);
}

/* ===== helpers for the parser ===== */

kb_tile__tokname kb_tile__tok_desc(const kb_tile__tok *t)
{
	kb_tile__tokname n;
	if (t->kind == KB_TT_EOF)
		snprintf(n.s, sizeof(n.s), "end of file");
	else if (t->kind == KB_TT_NEWLINE && *t->p == '\n')
		snprintf(n.s, sizeof(n.s), "end of line");
	else
		snprintf(n.s, sizeof(n.s), "'%.*s'", t->len > 40 ? 40 : t->len, t->p);
	return n;
}

char *kb_tile__tok_str(const kb_tile__tok *t)
{
	return kb_xstrndup(t->p, (size_t)t->len);
}

kb_tile__tok *kb_tile__skip_nl(kb_tile__tok *tok)
{
	while (tok->kind == KB_TT_NEWLINE)
		tok++;
	return tok;
}

int kb_tile__span(const kb_tile__tok *first, const kb_tile__tok *last)
{
	const char *end = last->p + last->len;
	if (end <= first->p)
		return first->len > 0 ? first->len : 1;
	const char *nl = memchr(first->p, '\n', (size_t)(end - first->p));
	return (int)((nl ? nl : end) - first->p);
}

/* Whether the n bytes at s are one of words. */
static bool word_in(const char *const *words, size_t nwords, const char *s, size_t n)
{
	for (size_t i = 0; i < nwords; i++)
		if (strlen(words[i]) == n && !memcmp(words[i], s, n))
			return true;
	return false;
}

static const char *const reserved[] = {"kernel", "const", "for", "in", "if", "else"};

bool kb_tile__is_keyword(const kb_tile__tok *t)
{
	return t->kind == KB_TT_IDENT && word_in(reserved, KB_ARRAY_LEN(reserved), t->p, (size_t)t->len);
}

kb_tile_word kb_tile_word_kind(const char *s, size_t n)
{
	/* range, grid and threads are not reserved (the parser reads them where
	 * a loop or a kernel header has them) but read as keywords */
	static const char *const headers[] = {"range", "grid", "threads"};
	static const char *const literals[] = {"true", "false", "inf"};
	kb_tile_dtype d;
	if (word_in(reserved, KB_ARRAY_LEN(reserved), s, n) ||
	    word_in(headers, KB_ARRAY_LEN(headers), s, n))
		return KB_TILE_WORD_KEYWORD;
	if (kb_tile__dtype_from(s, (int)n, &d))
		return KB_TILE_WORD_DTYPE;
	if (word_in(literals, KB_ARRAY_LEN(literals), s, n))
		return KB_TILE_WORD_LITERAL;
	if (kb_tile__is_builtin(s, n) || (n == 5 && !memcmp(s, "store", 5)) ||
	    (n == 10 && (!memcmp(s, "atomic_add", 10) || !memcmp(s, "atomic_max", 10))))
		return KB_TILE_WORD_BUILTIN;
	return KB_TILE_WORD_NAME;
}
