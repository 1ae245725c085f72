/*
 * parse.c - the syntax tree of a `.tile` file (docs/tile.md) from its
 * tokens: recursive descent in chibicc's style, each rule a function
 * `rule(P, &rest, tok)` that returns what it read and leaves in *rest the
 * token after it (no global cursor, so looking ahead is free).
 * It does not resolve names or types (check.c does) and knows nothing of
 * CUDA (lower.c).
 *
 * Errors never stop the parse: every syntax error is a diagnostic at the
 * offending token (its line, column and length), and parsing resumes at
 * the next statement, so one run reports every error of the file.
 *
 * Invariants: an expression rule returns NULL only after reporting, with
 * *rest at the offending token; a statement whose value, slice, condition
 * or bounds failed stays in the tree with that part NULL (check.c then
 * stays quiet about it); recovery parses any `{ ... }` it skips as a block,
 * so braces keep pairing and a missing `}` is reported once, at its `{`;
 * every node's line/col/len span its source text, cut at the end of its
 * first line; the tree owns all of its strings.
 */
#include "tile_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kb_tile__tok tok_t;

static void block(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__stmt ***body, int *n,
		  const char *what);

/* Whether t can name something (an identifier that is not reserved). */
static bool is_name(const tok_t *t)
{
	return t->kind == KB_TT_IDENT && !kb_tile__is_keyword(t);
}

/* ===== dtypes ===== */

/* ===== freeing ===== */

static void stmts_free(kb_tile__stmt **v, int n);

static void stmt_free(kb_tile__stmt *s)
{
	free(s->name);
	kb_tile__expr_free(s->value);
	kb_tile__expr_free(s->slice);
	kb_tile__expr_free(s->mask);
	kb_tile__expr_free(s->lo);
	kb_tile__expr_free(s->hi);
	kb_tile__expr_free(s->step);
	stmts_free(s->body, s->nbody);
	stmts_free(s->els, s->nels);
	free(s);
}

static void stmts_free(kb_tile__stmt **v, int n)
{
	for (int i = 0; i < n; i++)
		stmt_free(v[i]);
	free(v);
}

static void kernel_free(kb_tile__kernel_ast *ka)
{
	for (int j = 0; j < ka->k.nparams; j++) {
		free(ka->k.params[j].name);
		free(ka->k.params[j].dims[0]);
		free(ka->k.params[j].dims[1]);
	}
	free(ka->k.params);
	free(ka->k.name);
	free(ka->k.spec);
	for (int j = 0; j < 3; j++) {
		free(ka->k.grid[j]);
		kb_tile__expr_free(ka->grid[j]);
	}
	kb_tile__expr_free(ka->threads);
	stmts_free(ka->body, ka->nbody);
}

void kb_tile__file_free(kb_tile__file *f)
{
	for (int i = 0; i < f->nkernels; i++)
		kernel_free(&f->kernels[i]);
	free(f->kernels);
	f->kernels = NULL;
	f->nkernels = 0;
}

/* ===== statements ===== */

static kb_tile__stmt *new_stmt(kb_tile__skind kind, const tok_t *t)
{
	kb_tile__stmt *s = kb_xcalloc(1, sizeof(*s));
	s->kind = kind;
	s->line = t->line;
	s->col = t->col;
	s->len = t->len;
	return s;
}

/* A statement ends at a newline (consumed), a '}' or the end of the file. */
static bool end_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok, const char *after)
{
	*rest = tok;
	if (tok->kind == KB_TT_NEWLINE) {
		*rest = tok + 1;
		return true;
	}
	if (tok->kind == KB_TT_EOF || kb_tile__tok_is(tok, "}") || tok == P->unclosed_at)
		return true;
	kb_tile__perr_got(P, tok, "expected the end of the line after %s", after);
	return false;
}

/* After an error: skips to the statement's end (a newline, consumed; a
 * '}' or the end of the file, not), parsing any block on the way so that
 * its braces pair up and its own errors are reported too. */
static void sync(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	while (tok->kind != KB_TT_EOF && !kb_tile__tok_is(tok, "}")) {
		if (tok->kind == KB_TT_NEWLINE) {
			tok++;
			break;
		}
		if (kb_tile__tok_is(tok, "{")) {
			kb_tile__stmt **body = NULL;
			int n = 0;
			block(P, &tok, tok, &body, &n, "this block");
			stmts_free(body, n);
			continue;
		}
		tok++;
	}
	*rest = tok;
}

/* Ends a statement: its end, or after an error (ok false) the rest of it
 * skipped. */
static void finish(kb_tile__parser *P, tok_t **rest, tok_t *tok, bool ok, const char *after)
{
	if (!ok || !end_stmt(P, &tok, tok, after))
		sync(P, &tok, tok);
	*rest = tok;
}

/* Skips a header that failed to the '{' of its body (or a newline, '}'). */
static tok_t *skip_to_brace(tok_t *tok)
{
	while (tok->kind != KB_TT_EOF && tok->kind != KB_TT_NEWLINE && !kb_tile__tok_is(tok, "{") &&
	       !kb_tile__tok_is(tok, "}"))
		tok++;
	return tok;
}

static const struct {
	const char *s;
	int op;
} assign_ops[] = {
	{"=", 0}, {"+=", KB_TOP_ADD}, {"-=", KB_TOP_SUB}, {"*=", KB_TOP_MUL}, {"/=", KB_TOP_DIV},
};

static int assign_op(const tok_t *t)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(assign_ops); i++)
		if (kb_tile__tok_is(t, assign_ops[i].s))
			return (int)i;
	return -1;
}

/* NAME ('=' | '+=' | '-=' | '*=' | '/=') EXPR */
static kb_tile__stmt *assign_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	kb_tile__stmt *s = new_stmt(KB_TS_ASSIGN, tok);
	s->name = kb_tile__tok_str(tok);
	s->op = assign_ops[assign_op(tok + 1)].op;
	s->value = kb_tile__parse_expr(P, &tok, tok + 2);
	s->len = kb_tile__span(start, tok - 1);
	finish(P, rest, tok, s->value != NULL, "the assignment");
	return s;
}

/* 'const' NAME '=' EXPR */
static kb_tile__stmt *const_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	if (!is_name(tok + 1)) {
		kb_tile__perr_got(P, tok + 1, "expected a name after 'const'");
		sync(P, rest, tok + 1);
		return NULL;
	}
	kb_tile__stmt *s = new_stmt(KB_TS_CONST, tok);
	s->name = kb_tile__tok_str(tok + 1);
	tok += 2;
	if (kb_tile__tok_is(tok, "="))
		s->value = kb_tile__parse_expr(P, &tok, tok + 1);
	else
		kb_tile__perr_got(P, tok, "expected '=' after 'const %s'", s->name);
	s->len = kb_tile__span(start, tok - 1);
	finish(P, rest, tok, s->value != NULL, "the const");
	return s;
}

/* NAME 'in' 'range' '(' lo ',' hi [',' step] ')' after 'for'. */
static bool for_header(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__stmt *s)
{
	*rest = tok;
	if (!is_name(tok)) {
		kb_tile__perr_got(P, tok, "expected the loop variable after 'for'");
		return false;
	}
	s->name = kb_tile__tok_str(tok);
	*rest = ++tok;
	if (!kb_tile__tok_is(tok, "in")) {
		kb_tile__perr_got(P, tok, "expected 'in' after 'for %s'", s->name);
		return false;
	}
	*rest = ++tok;
	if (!kb_tile__tok_is(tok, "range") || !kb_tile__tok_is(tok + 1, "(")) {
		kb_tile__perr_got(P, tok, "expected 'range(lo, hi[, step])' after 'in'");
		return false;
	}
	kb_tile__expr *r = kb_tile__parse_call(P, rest, tok);
	if (!r)
		return false;
	if (r->nargs < 2 || r->nargs > 3 || r->nkw) {
		kb_tile__perr_at(P, r, "range takes (lo, hi[, step]), got %d argument%s%s", r->nargs,
				 r->nargs == 1 ? "" : "s", r->nkw ? " and keywords" : "");
		kb_tile__expr_free(r);
		return false;
	}
	s->lo = r->args[0];
	s->hi = r->args[1];
	s->step = r->nargs > 2 ? r->args[2] : NULL;
	r->nargs = 0;
	kb_tile__expr_free(r);
	return true;
}

/* 'for' NAME 'in' 'range' '(' ... ')' BLOCK */
static kb_tile__stmt *for_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	kb_tile__stmt *s = new_stmt(KB_TS_FOR, tok);
	bool ok = for_header(P, &tok, tok + 1, s);
	if (!ok)
		tok = skip_to_brace(tok);
	s->len = kb_tile__span(start, tok - 1);
	if (kb_tile__tok_is(tok, "{")) {
		block(P, &tok, tok, &s->body, &s->nbody, "the for loop");
	} else if (ok) {
		kb_tile__perr_got(P, tok, "expected '{' after range(...)");
		ok = false;
	}
	finish(P, rest, tok, ok, "'}'");
	return s;
}

static kb_tile__stmt *if_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok);

/* What follows an if's body: nothing, 'else' BLOCK or 'else' IF.
 * Returns -1 after an error, 1 when a nested if ended the statement. */
static int else_part(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__stmt *s)
{
	tok_t *t = kb_tile__skip_nl(tok);
	*rest = tok;
	if (!kb_tile__tok_is(t, "else"))
		return 0;
	tok = t + 1;
	int cap = 0;
	if (kb_tile__tok_is(tok, "if")) {
		*KB_PUSH(s->els, s->nels, cap) = if_stmt(P, rest, tok);
		return 1;
	}
	if (kb_tile__tok_is(tok, "{")) {
		block(P, rest, tok, &s->els, &s->nels, "the else");
		return 0;
	}
	kb_tile__perr_got(P, tok, "expected '{' or 'if' after 'else'");
	*rest = tok;
	return -1;
}

/* 'if' EXPR BLOCK ['else' (BLOCK | IF)] */
static kb_tile__stmt *if_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	kb_tile__stmt *s = new_stmt(KB_TS_IF, tok);
	s->value = kb_tile__parse_expr(P, &tok, tok + 1);
	bool ok = s->value != NULL;
	if (!ok)
		tok = skip_to_brace(tok);
	s->len = kb_tile__span(start, tok - 1);
	if (!kb_tile__tok_is(tok, "{")) {
		if (ok)
			kb_tile__perr_got(P, tok, "expected '{' after the condition of if");
		finish(P, rest, tok, false, "'}'");
		return s;
	}
	block(P, &tok, tok, &s->body, &s->nbody, "the if");
	int r = else_part(P, &tok, tok, s);
	if (r == 1)
		*rest = tok;
	else
		finish(P, rest, tok, ok && r == 0, "'}'");
	return s;
}

/* Moves store(...)'s arguments into s; false (reported) if they do not fit. */
static bool store_args(kb_tile__parser *P, kb_tile__expr *c, kb_tile__stmt *s)
{
	if (c->nargs != 2) {
		kb_tile__perr_at(P, c, "%s takes a slice and a value, like %s(y[i, c : c + B], v), "
				 "got %d argument%s", c->name, c->name, c->nargs, c->nargs == 1 ? "" : "s");
		return false;
	}
	for (int i = 0; i < c->nkw; i++)
		if (strcmp(c->kw[i], "mask")) {
			kb_tile__perr_at(P, c->kwv[i], "%s has no argument %s= (it takes mask = M)", c->name,
					 c->kw[i]);
			return false;
		}
	s->slice = c->args[0];
	s->value = c->args[1];
	c->nargs = 0;
	if (c->nkw) {
		s->mask = c->kwv[0];
		c->kwv[0] = NULL;
	}
	return true;
}

/* The statement a call at tok starts: 0 store, KB_TATOM_* an atomic, -1 none. */
static int store_kind(const tok_t *tok)
{
	if (!kb_tile__tok_is(tok + 1, "("))
		return -1;
	return kb_tile__tok_is(tok, "store") ? 0 : kb_tile__tok_is(tok, "atomic_add") ? KB_TATOM_ADD :
	       kb_tile__tok_is(tok, "atomic_max") ? KB_TATOM_MAX : -1;
}

/* ('store' | 'atomic_add' | 'atomic_max') '(' SLICE ',' VALUE [',' 'mask' '=' M] ')' */
static kb_tile__stmt *store_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	kb_tile__stmt *s = new_stmt(KB_TS_STORE, tok);
	s->op = store_kind(tok);
	kb_tile__expr *c = kb_tile__parse_call(P, &tok, tok);
	bool ok = c && store_args(P, c, s);
	kb_tile__expr_free(c);
	s->len = kb_tile__span(start, tok - 1);
	finish(P, rest, tok, ok, "store(...)");
	return s;
}

/* What does not start a statement: says what was expected, skips it. */
static void bad_stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *t = tok;
	if (kb_tile__tok_is(tok, "else")) {
		kb_tile__perr(P, tok, "'else' without an 'if' before it");
	} else if (kb_tile__is_keyword(tok)) {
		kb_tile__perr(P, tok, "expected a statement, got %s (a keyword)",
			      kb_tile__tok_desc(tok).s);
	} else if (tok->kind == KB_TT_IDENT && !kb_tile__tok_is(tok + 1, "(") &&
		   !kb_tile__tok_is(tok + 1, "[")) {
		t = tok + 1;
		kb_tile__perr_got(P, t, "expected '=' (or += -= *= /=) after '%.*s'", tok->len, tok->p);
	} else if (tok->kind == KB_TT_IDENT || tok->kind == KB_TT_INT || tok->kind == KB_TT_FLOAT ||
		   kb_tile__tok_is(tok, "(") || kb_tile__tok_is(tok, "-") || kb_tile__tok_is(tok, "!")) {
		kb_tile__expr *e = kb_tile__parse_expr(P, &t, tok);
		if (e && assign_op(t) >= 0)
			kb_tile__perr_at(P, e, "only a name can be assigned (a slice is written with "
					 "store(SLICE, VALUE))");
		else if (e)
			kb_tile__perr_at(P, e, "this value is unused: assign it (NAME = ...) or store it");
		kb_tile__expr_free(e);
	} else {
		kb_tile__perr_got(P, tok, "expected a statement");
	}
	sync(P, rest, t);
}

static kb_tile__stmt *stmt(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	if (kb_tile__tok_is(tok, "const"))
		return const_stmt(P, rest, tok);
	if (kb_tile__tok_is(tok, "for"))
		return for_stmt(P, rest, tok);
	if (kb_tile__tok_is(tok, "if"))
		return if_stmt(P, rest, tok);
	if (store_kind(tok) >= 0)
		return store_stmt(P, rest, tok);
	if (tok->kind == KB_TT_IDENT && !kb_tile__is_keyword(tok) && assign_op(tok + 1) >= 0)
		return assign_stmt(P, rest, tok);
	bad_stmt(P, rest, tok);
	return NULL;
}

/* The column of the first non-blank character of t's line. */
static int indent_of(const kb_tile__parser *P, const tok_t *t)
{
	const char *bol = t->p;
	while (bol > P->text && bol[-1] != '\n')
		bol--;
	const char *p = bol;
	while (*p == ' ' || *p == '\t')
		p++;
	return (int)(p - bol) + 1;
}

/* Remembers the first block of a kernel whose '}' (on a later line) is not
 * indented like the line of its '{': when the kernel turns out to lack a
 * '}', that block is the likely culprit. */
static void note_indent(kb_tile__parser *P, const tok_t *open, const tok_t *close,
			const char *what)
{
	if (P->misopen || close->line == open->line || close->col == indent_of(P, open))
		return;
	P->misopen = open;
	P->misclose = close;
	snprintf(P->miswhat, sizeof(P->miswhat), "%s", what);
}

/* Reports a block still open at tok (the end of the file or the next
 * kernel) once: at a '{' whose '}' was indented as if for an outer block,
 * if there was one, else at this block's '{'. */
static void unclosed(kb_tile__parser *P, const tok_t *open, const tok_t *tok, const char *what)
{
	if (P->unclosed_at == tok)
		return;
	P->unclosed_at = tok;
	if (P->misopen)
		kb_tile__perr(P, P->misopen, "unterminated block: this '{' of %s has no '}' (the '}' at "
			      "%d:%d lines up with an outer block)", P->miswhat, P->misclose->line,
			      P->misclose->col);
	else
		kb_tile__perr(P, open, "unterminated block: this '{' of %s has no '}'", what);
}

/* '{' STATEMENTS '}' into *body; `what` names the block in messages.  A
 * block still open at the end of the file (or at the next 'kernel') is
 * reported once, at its '{'. */
static void block(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__stmt ***body, int *n,
		  const char *what)
{
	tok_t *open = tok;
	int cap = 0; /* *body starts empty */
	tok++;
	for (;;) {
		tok = kb_tile__skip_nl(tok);
		if (kb_tile__tok_is(tok, "}")) {
			note_indent(P, open, tok, what);
			tok++;
			break;
		}
		if (tok->kind == KB_TT_EOF || kb_tile__tok_is(tok, "kernel")) {
			unclosed(P, open, tok, what);
			break;
		}
		kb_tile__stmt *s = stmt(P, &tok, tok);
		if (s)
			*KB_PUSH(*body, *n, cap) = s;
	}
	*rest = tok;
}

/* ===== kernels ===== */

/* The source text of e as written (its first line). */
static char *expr_text(const kb_tile__parser *P, const kb_tile__expr *e)
{
	const char *p = P->text;
	for (int l = 1; l < e->line && p; l++) {
		p = memchr(p, '\n', (size_t)(P->end - p));
		p = p ? p + 1 : NULL;
	}
	if (!p || p + e->col - 1 + e->len > P->end)
		return kb_xstrdup("");
	return kb_xstrndup(p + e->col - 1, (size_t)e->len);
}

/* DIM (',' DIM)* ']' after a tensor parameter's '['. */
static bool dims(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile_param *p)
{
	for (;;) {
		*rest = tok;
		if (!is_name(tok) &&
		    !(tok->kind == KB_TT_INT && tok->ival > 0)) {
			kb_tile__perr_got(P, tok, "expected a dim (a size name or a positive integer)");
			return false;
		}
		if (p->rank == 2) {
			kb_tile__perr(P, tok, "a tensor has rank 1 or 2; %s has a third dim", p->name);
			return false;
		}
		p->dims[p->rank++] = kb_tile__tok_str(tok);
		if (!kb_tile__tok_is(++tok, ","))
			break;
		tok++;
	}
	*rest = tok;
	if (!kb_tile__tok_is(tok, "]")) {
		kb_tile__perr_got(P, tok, "expected ']' after the dims of %s", p->name);
		return false;
	}
	*rest = tok + 1;
	return true;
}

/* NAME ':' DTYPE ['[' DIMS ']'] into p (its strings freed on failure). */
static bool param(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile_param *p)
{
	*rest = tok;
	if (!is_name(tok)) {
		kb_tile__perr_got(P, tok, "expected a parameter name");
		return false;
	}
	p->name = kb_tile__tok_str(tok);
	p->line = tok->line;
	p->col = tok->col;
	bool ok = false;
	if (!kb_tile__tok_is(++tok, ":")) {
		kb_tile__perr_got(P, tok, "expected ':' and a dtype after parameter %s (like "
				  "x: f32[M, N])", p->name);
	} else if ((++tok)->kind != KB_TT_IDENT || !kb_tile__dtype_from(tok->p, tok->len, &p->dtype)) {
		kb_tile__perr_got(P, tok, "expected a dtype (f32 f16 bf16 f64 i32 i64 u8)");
	} else if (kb_tile__tok_is(tok + 1, "[")) {
		ok = dims(P, &tok, tok + 2, p);
	} else if (p->dtype != KB_TILE_I32 && p->dtype != KB_TILE_I64 && p->dtype != KB_TILE_F32) {
		kb_tile__perr(P, tok, "a scalar parameter is i32, i64 or f32, not %s",
			      kb_tile__tok_desc(tok).s);
	} else {
		ok = true;
		tok++;
	}
	*rest = tok;
	if (!ok) {
		free(p->name);
		free(p->dims[0]);
		free(p->dims[1]);
		memset(p, 0, sizeof(*p));
	}
	return ok;
}

/* Skips a parameter that failed, to the ',' or ')' that ends it. */
static tok_t *skip_param(tok_t *tok)
{
	for (int depth = 0;; tok++) {
		if (tok->kind == KB_TT_EOF || kb_tile__tok_is(tok, "{") || kb_tile__tok_is(tok, "kernel"))
			return tok;
		if (kb_tile__tok_is(tok, "[") || kb_tile__tok_is(tok, "("))
			depth++;
		else if (kb_tile__tok_is(tok, "]") && depth)
			depth--;
		else if (kb_tile__tok_is(tok, ")") && depth-- == 0)
			return tok;
		else if (kb_tile__tok_is(tok, ",") && !depth)
			return tok;
	}
}

/* PARAM (',' PARAM)* ')' after the '(' (newlines allowed between them);
 * a parameter that fails is skipped, so the others still count.  Returns
 * 1, 0 when a parameter failed, -1 when the list has no ')'. */
static int params(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__kernel_ast *ka)
{
	int ok = 1;
	int cap = 0;
	for (tok = kb_tile__skip_nl(tok); !kb_tile__tok_is(tok, ")");) {
		kb_tile_param p = {0};
		if (param(P, &tok, tok, &p)) {
			*KB_PUSH(ka->k.params, ka->k.nparams, cap) = p;
		} else {
			ok = 0;
			tok = skip_param(tok);
		}
		tok = kb_tile__skip_nl(tok);
		if (kb_tile__tok_is(tok, ",")) {
			tok = kb_tile__skip_nl(tok + 1);
		} else if (!kb_tile__tok_is(tok, ")")) {
			if (ok)
				kb_tile__perr_got(P, tok, "expected ',' or ')' after the parameters of "
						  "kernel %s", ka->k.name);
			*rest = tok;
			return -1;
		}
	}
	*rest = tok + 1;
	return ok;
}

/* 'grid' '(' E [, E [, E]] ')' or 'threads' '(' E ')' into ka. */
static bool launch(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__kernel_ast *ka,
		   bool is_grid)
{
	const char *what = is_grid ? "grid" : "threads";
	*rest = tok;
	if (!kb_tile__tok_is(tok, what) || !kb_tile__tok_is(tok + 1, "(")) {
		kb_tile__perr_got(P, tok, "expected '%s(...)' after %s of kernel %s", what,
				  is_grid ? "the parameters" : "grid(...)", ka->k.name);
		return false;
	}
	kb_tile__expr *c = kb_tile__parse_call(P, rest, tok);
	if (!c)
		return false;
	if (c->nargs < 1 || c->nargs > (is_grid ? 3 : 1) || c->nkw) {
		kb_tile__perr_at(P, c, is_grid ? "grid takes 1 to 3 expressions (programs per axis), got %d"
				 : "threads takes one expression (threads per program), got %d", c->nargs);
		kb_tile__expr_free(c);
		return false;
	}
	for (int i = 0; i < c->nargs; i++) {
		if (!is_grid) {
			ka->threads = c->args[0];
			break;
		}
		ka->grid[i] = c->args[i];
		ka->k.grid[i] = expr_text(P, c->args[i]);
	}
	c->nargs = 0;
	kb_tile__expr_free(c);
	return true;
}

/* '(' PARAMS ')' GRID THREADS after the kernel's name; a missing grid or
 * threads is reported and parsing goes on with what follows.  A parameter
 * that failed marks ka->bad_header; false when the header is too broken
 * to go on (the caller then looks for the body's '{'). */
static bool header(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__kernel_ast *ka)
{
	*rest = tok;
	ka->bad_header = true;
	if (!kb_tile__tok_is(tok, "(")) {
		kb_tile__perr_got(P, tok, "expected '(' and the parameters after 'kernel %s'", ka->k.name);
		return false;
	}
	int pr = params(P, &tok, tok + 1, ka);
	if (pr < 0)
		return *rest = tok, false;
	ka->bad_header = pr == 0;
	bool ok = true;
	tok = kb_tile__skip_nl(tok);
	if (!launch(P, &tok, tok, ka, true)) {
		ok = false;
		if (!kb_tile__tok_is(tok, "threads") && !kb_tile__tok_is(tok, "{"))
			return *rest = tok, false;
	}
	tok = kb_tile__skip_nl(tok);
	if (!launch(P, &tok, tok, ka, false))
		ok = false;
	*rest = kb_tile__skip_nl(tok);
	return ok;
}

/* 'kernel' NAME HEADER BLOCK into f; a kernel with no name is dropped
 * (its body still parsed, for its errors). */
static void kernel(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__file *f)
{
	kb_tile__kernel_ast ka = {0};
	bool ok = false;
	tok++;
	if (!is_name(tok)) {
		kb_tile__perr_got(P, tok, "expected the kernel's name after 'kernel'");
	} else {
		ka.k.name = kb_tile__tok_str(tok);
		ka.k.line = tok->line;
		ka.k.col = tok->col;
		ok = header(P, &tok, tok + 1, &ka);
	}
	if (ok && !kb_tile__tok_is(tok, "{"))
		kb_tile__perr_got(P, tok, "expected '{' after threads(...)");
	while (tok->kind != KB_TT_EOF && !kb_tile__tok_is(tok, "{") && !kb_tile__tok_is(tok, "kernel"))
		tok++;
	P->misopen = NULL;
	if (kb_tile__tok_is(tok, "{")) {
		char what[160];
		snprintf(what, sizeof(what), "the body of kernel %s", ka.k.name ? ka.k.name : "?");
		block(P, &tok, tok, &ka.body, &ka.nbody, what);
	}
	*rest = tok;
	if (!ka.k.name)
		return kernel_free(&ka);
	f->kernels = kb_xrealloc(f->kernels, (size_t)(f->nkernels + 1) * sizeof(*f->kernels));
	f->kernels[f->nkernels++] = ka;
}

void kb_tile__parse(const kb_tile__toks *toks, kb_tile__file *f, kb_diags *diags)
{
	f->kernels = NULL;
	f->nkernels = 0;
	if (!toks->n)
		return;
	kb_tile__parser P = {.path = f->path, .text = f->text, .end = toks->v[toks->n - 1].p,
			     .diags = diags};
	tok_t *tok = toks->v;
	for (;;) {
		tok = kb_tile__skip_nl(tok);
		if (tok->kind == KB_TT_EOF)
			break;
		if (kb_tile__tok_is(tok, "kernel")) {
			kernel(&P, &tok, tok, f);
			continue;
		}
		kb_tile__perr_got(&P, tok, "expected 'kernel'");
		do
			tok++;
		while (tok->kind != KB_TT_EOF && !kb_tile__tok_is(tok, "kernel"));
	}
}
