/*
 * ptx.c - finds the kernels of a PTX source: every `.entry NAME (...)` at
 * brace depth 0 (with or without .visible/.weak), its `.param` list and its
 * `.maxntid`.  A small hand lexer (// and block comments, strings,
 * directives, words, numbers, punctuation) tracks line and column, so that
 * problems go to diags as file:line:col.  It owns nothing else: PTX
 * semantics, .func bodies and instruction syntax are ptxas's to check.
 *
 * Parameters: elem is the PTX type without its dot ("u64", "f32", "b8");
 * type is the declaration as written after `.param` (".align 8 .b8[16]");
 * .u64/.b64 scalars and `.ptr` parameters are pointers; `.ptr.const` means
 * a const pointee.  Entries are extern "C" by nature (the name is the
 * symbol).  launch_bounds is the product of .maxntid's dimensions (the
 * most threads per block), else of .reqntid's, else 0.
 */
#include "compile.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef enum { TK_EOF, TK_WORD, TK_DIR, TK_NUM, TK_STR, TK_PUNCT } tkind;

typedef struct {
	tkind kind;
	const char *s;
	int len;
	int line, col;
} token;

typedef struct {
	const kb_source *src;
	const char *p, *end;
	int line, col;
	kb_diags *diags;
	int nerr;
} lexer;

/* ---- lexer -------------------------------------------------------------- */

static void advance(lexer *lx)
{
	if (*lx->p == '\n')
		lx->line++, lx->col = 1;
	else
		lx->col++;
	lx->p++;
}

static void lex_error(lexer *lx, int line, int col, int len, const char *msg)
{
	kb_diag_add(lx->diags, KB_DIAG_ERROR, lx->src->path, lx->src->text, line, col,
		    len > 0 ? len : 1, "%s", msg);
	lx->nerr++;
}

static void tok_error(lexer *lx, const token *t, const char *msg)
{
	lex_error(lx, t->line, t->col, t->len, msg);
}

/* Skips spaces and comments; an unterminated block comment is an error. */
static void skip_blank(lexer *lx)
{
	while (lx->p < lx->end) {
		if (isspace((unsigned char)*lx->p)) {
			advance(lx);
		} else if (lx->p[0] == '/' && lx->p + 1 < lx->end && lx->p[1] == '/') {
			while (lx->p < lx->end && *lx->p != '\n')
				advance(lx);
		} else if (lx->p[0] == '/' && lx->p + 1 < lx->end && lx->p[1] == '*') {
			int line = lx->line, col = lx->col;
			advance(lx), advance(lx);
			while (lx->p < lx->end && !(lx->p[0] == '*' && lx->p + 1 < lx->end &&
						    lx->p[1] == '/'))
				advance(lx);
			if (lx->p >= lx->end) {
				lex_error(lx, line, col, 2, "unterminated comment");
				return;
			}
			advance(lx), advance(lx);
		} else {
			return;
		}
	}
}

static bool is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static void next_token(lexer *lx, token *t)
{
	skip_blank(lx);
	*t = (token){TK_EOF, lx->p, 0, lx->line, lx->col};
	if (lx->p >= lx->end)
		return;
	char c = *lx->p;
	if (c == '.' && lx->p + 1 < lx->end && (isalpha((unsigned char)lx->p[1]) || lx->p[1] == '_')) {
		t->kind = TK_DIR;
		advance(lx);
		while (lx->p < lx->end && is_word_char(*lx->p))
			advance(lx);
	} else if (isalpha((unsigned char)c) || c == '_' || c == '$' || c == '%') {
		t->kind = TK_WORD;
		advance(lx);
		while (lx->p < lx->end && is_word_char(*lx->p))
			advance(lx);
	} else if (isdigit((unsigned char)c)) {
		t->kind = TK_NUM;
		while (lx->p < lx->end && (is_word_char(*lx->p) || *lx->p == '.'))
			advance(lx);
	} else if (c == '"') {
		t->kind = TK_STR;
		advance(lx);
		while (lx->p < lx->end && *lx->p != '"' && *lx->p != '\n')
			advance(lx);
		if (lx->p < lx->end && *lx->p == '"')
			advance(lx);
	} else {
		t->kind = TK_PUNCT;
		advance(lx);
	}
	t->len = (int)(lx->p - t->s);
}

static bool tok_is(const token *t, const char *s)
{
	return (int)strlen(s) == t->len && memcmp(t->s, s, (size_t)t->len) == 0;
}

/* ---- parameters ----------------------------------------------------------- */

static bool is_attr(const token *t)
{
	static const char *const attrs[] = {
		".align", ".ptr", ".global", ".shared", ".const", ".local", ".param",
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(attrs); i++)
		if (tok_is(t, attrs[i]))
			return true;
	return false;
}

/* Reads the attributes of one `.param` up to its name (in *t on return).
 * Returns false (with a diag) when no name follows. */
static bool param_attrs(lexer *lx, token *t, kb_param *p)
{
	bool ptr = false;
	kb_buf type = KB_BUF_INIT;
	const char *prev_end = t->s;
	while (t->kind == TK_DIR || t->kind == TK_NUM) {
		if (type.len && t->s > prev_end)
			kb_buf_catc(&type, ' '); /* blanks or a comment between */
		kb_buf_catn(&type, t->s, (size_t)t->len);
		prev_end = t->s + t->len;
		if (tok_is(t, ".ptr"))
			ptr = true;
		else if (ptr && tok_is(t, ".const"))
			p->is_const = true;
		else if (t->kind == TK_DIR && !is_attr(t))
			free(p->elem), p->elem = kb_xstrndup(t->s + 1, (size_t)t->len - 1);
		next_token(lx, t);
	}
	p->type = kb_buf_detach(&type);
	if (!p->elem)
		p->elem = kb_xstrdup("");
	p->is_pointer = ptr || !strcmp(p->elem, "u64") || !strcmp(p->elem, "b64");
	if (t->kind != TK_WORD) {
		tok_error(lx, t, "expected a parameter name");
		return false;
	}
	return true;
}

/* Parses `.param ... NAME[N]` with *t at `.param`; leaves *t after it. */
static void parse_param(lexer *lx, token *t, kb_kernel *k, int *cap)
{
	kb_param *p = KB_PUSH(k->params, k->nparams, *cap);
	memset(p, 0, sizeof *p);
	next_token(lx, t);
	bool named = param_attrs(lx, t, p);
	p->loc = (kb_loc){lx->src->path, t->line, t->col};
	if (!named) {
		p->name = kb_xstrdup("");
		return;
	}
	p->name = kb_xstrndup(t->s, (size_t)t->len);
	next_token(lx, t);
	if (tok_is(t, "[")) { /* a by-value array: .b8 name[16] */
		const char *a = t->s;
		while (t->kind != TK_EOF && !tok_is(t, "]") && !tok_is(t, ")"))
			next_token(lx, t);
		if (tok_is(t, "]")) {
			char *ty = kb_xasprintf("%s%.*s", p->type, (int)(t->s + 1 - a), a);
			free(p->type);
			p->type = ty;
			next_token(lx, t);
		}
		p->is_pointer = false;
	}
}

/* After a parameter: skips to the next `,` `)` `{` or `.param`, with one
 * diag when report is set and something else is in the way. */
static void param_end(lexer *lx, token *t, bool report)
{
	if (t->kind == TK_EOF || tok_is(t, ",") || tok_is(t, ")") || tok_is(t, "{"))
		return;
	if (report)
		tok_error(lx, t, tok_is(t, ".param") ? "expected ',' before '.param'" :
						       "expected ',' or ')'");
	while (t->kind != TK_EOF && !tok_is(t, ",") && !tok_is(t, ")") && !tok_is(t, "{") &&
	       !tok_is(t, ".param"))
		next_token(lx, t);
}

/* Parses `( .param ..., ... )` with *t at `(`; leaves *t after `)`. */
static void parse_params(lexer *lx, token *t, kb_kernel *k)
{
	token open = *t;
	int cap = 0;
	next_token(lx, t);
	while (!tok_is(t, ")")) {
		if (t->kind == TK_EOF || tok_is(t, "{")) {
			char *msg = kb_xasprintf("unterminated parameter list of entry '%s'",
						 k->name);
			lex_error(lx, open.line, open.col, 1, msg);
			free(msg);
			return;
		}
		if (tok_is(t, ".param")) {
			parse_param(lx, t, k, &cap);
			param_end(lx, t, true);
		} else {
			tok_error(lx, t, "expected '.param' or ')'");
			next_token(lx, t);
			param_end(lx, t, false);
		}
		if (tok_is(t, ","))
			next_token(lx, t);
	}
	next_token(lx, t);
}

/* ---- entries -------------------------------------------------------------- */

/* The product of the numbers after .maxntid/.reqntid; *t ends after them. */
static int thread_count(lexer *lx, token *t)
{
	long prod = 1;
	int n = 0;
	next_token(lx, t);
	while (t->kind == TK_NUM) {
		long v = strtol(t->s, NULL, 0);
		/* prod * v < 2^30, without overflowing on absurd numbers */
		prod = v > 0 && prod <= ((1L << 30) - 1) / v ? prod * v : 0;
		n++;
		next_token(lx, t);
		if (!tok_is(t, ","))
			break;
		next_token(lx, t);
	}
	return n ? (int)prod : 0;
}

/* Skips a body with *t at `{`, nested braces included. */
static void skip_body(lexer *lx, token *t)
{
	int depth = 0;
	do {
		if (tok_is(t, "{"))
			depth++;
		else if (tok_is(t, "}"))
			depth--;
		next_token(lx, t);
	} while (depth > 0 && t->kind != TK_EOF);
}

/* Parses one entry with *t at `.entry`; leaves *t after its body or `;`. */
static void parse_entry(lexer *lx, token *t, kb_kernels *out)
{
	int line = t->line, reqntid = 0;
	next_token(lx, t);
	if (t->kind != TK_WORD) {
		tok_error(lx, t, "expected a kernel name after .entry");
		return;
	}
	kb_kernel *k = KB_PUSH(out->v, out->n, out->cap);
	memset(k, 0, sizeof *k);
	k->name = kb_xstrndup(t->s, (size_t)t->len);
	k->extern_c = true;
	k->line = line;
	next_token(lx, t);
	if (tok_is(t, "("))
		parse_params(lx, t, k);
	while (t->kind != TK_EOF && !tok_is(t, "{") && !tok_is(t, ";")) {
		if (tok_is(t, ".maxntid"))
			k->launch_bounds = thread_count(lx, t);
		else if (tok_is(t, ".reqntid"))
			reqntid = thread_count(lx, t);
		else
			next_token(lx, t);
	}
	if (!k->launch_bounds)
		k->launch_bounds = reqntid;
	if (tok_is(t, "{"))
		skip_body(lx, t);
}

/* Appends every .entry of src to out (zero it first).  Problems go to diags
 * as file:line:col; returns 0, KB_ECOMPILE when it added errors (out keeps
 * what was found), or KB_EINVAL. */
int kb_compile_discover_ptx(const kb_source *src, kb_kernels *out, kb_diags *diags,
			    kb_err *err)
{
	if (!src || !src->text || !out || !diags)
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "discover: bad source");
	lexer lx = {src, src->text, src->text + src->len, 1, 1, diags, 0};
	token t;
	int depth = 0;
	next_token(&lx, &t);
	while (t.kind != TK_EOF) {
		if (depth == 0 && tok_is(&t, ".entry")) {
			parse_entry(&lx, &t, out);
			continue;
		}
		depth += tok_is(&t, "{") ? 1 : tok_is(&t, "}") && depth > 0 ? -1 : 0;
		next_token(&lx, &t);
	}
	return lx.nerr ? KB_ECOMPILE : KB_OK;
}
