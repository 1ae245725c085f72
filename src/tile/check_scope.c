/*
 * check_scope.c - what the checker's files share, below all three (check.c
 * the statements, check_expr.c the expressions, check_call.c the built-in
 * functions): an error at a place of the file, the names in scope (the
 * innermost visible one; an unknown name's message, saying where a name
 * went out of scope or the closest visible one; the closest of any list of
 * words), and the type of a binary operator with its message.
 *
 * Calls only tree.c: the checker's files call down into it, never the
 * other way.
 */
#include "tile_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ERR_AT(C, e, ...) kb_tile__cerr((C), (e)->line, (e)->col, (e)->len, __VA_ARGS__)

/* ===== errors ===== */

void kb_tile__cerr(kb_tile__checker *C, int line, int col, int len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = kb_xvasprintf(fmt, ap);
	va_end(ap);
	kb_diag_add(C->diags, KB_DIAG_ERROR, C->f->path, C->f->text, line, col, len, "%s", msg);
	free(msg);
	C->nerr++;
}

/* ===== names in scope ===== */

kb_tile__sym *kb_tile__lookup(kb_tile__checker *C, const char *name)
{
	for (int i = C->nsyms - 1; i >= 0; i--)
		if (!strcmp(C->syms[i].name, name))
			return &C->syms[i];
	return NULL;
}

/* Edit distance of short words (longer than 32 characters: never close). */
static int distance(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	return na > 32 || nb > 32 ? 99 : kb_edit_distance(a, na, b, nb);
}

int kb_tile__close_words(const char *word, const char *const *words, int n, const char **out,
			 int max)
{
	int limit = strlen(word) < 4 ? 2 : 3, k = 0; /* closer than limit */
	for (int d = 0; d < limit && k < max; d++)
		for (int i = 0; i < n && k < max; i++)
			if (distance(word, words[i]) == d)
				out[k++] = words[i];
	return k;
}

const char *kb_tile__closest(const char *word, const char *const *words, int n)
{
	const char *best = NULL;
	return kb_tile__close_words(word, words, n, &best, 1) ? best : NULL;
}

void kb_tile__unknown(kb_tile__checker *C, const kb_tile__expr *e)
{
	int len = (int)strlen(e->name);
	if (C->ka->bad_header)
		return; /* a parameter may have failed to parse */
	for (int i = C->ngone - 1; i >= 0; i--) {
		const kb_tile__sym *g = &C->gone[i];
		if (strcmp(g->name, e->name))
			continue;
		if (g->kind == KB_TSYM_LOOP)
			kb_tile__cerr(C, e->line, e->col, len, "'%s' is the loop variable of the for loop "
				      "at %d:%d, only visible inside it", e->name, g->bline, g->bcol);
		else
			kb_tile__cerr(C, e->line, e->col, len, "'%s' is not defined here: it was defined at "
				      "%d:%d inside the %s at %d:%d, and a name first defined in a block "
				      "is only visible in it", e->name, g->line, g->col, g->block,
				      g->bline, g->bcol);
		return;
	}
	const char **names = kb_xcalloc((size_t)C->nsyms + 1, sizeof(*names));
	for (int i = 0; i < C->nsyms; i++)
		names[i] = C->syms[i].name;
	const char *near = kb_tile__closest(e->name, names, C->nsyms);
	kb_tile__cerr(C, e->line, e->col, len, "unknown name '%s'%s%s%s", e->name,
		      near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	free(names);
}

/* ===== operators ===== */

static bool is_int(kb_tile_dtype d)
{
	return d == KB_TILE_I32 || d == KB_TILE_I64 || d == KB_TILE_U8;
}

/* The dtype of `a op b` from the operands' dtypes; NULL, or what is wrong. */
static const char *op_dtype(int op, kb_tile_dtype a, kb_tile_dtype b, kb_tile_dtype *out)
{
	bool ab = a == KB_TILE_BOOL, bb = b == KB_TILE_BOOL;
	*out = KB_TILE_BOOL;
	switch (op) {
	case KB_TOP_AND:
	case KB_TOP_OR:
		return ab && bb ? NULL : "bool operands (compare numbers first, as in x != 0)";
	case KB_TOP_EQ:
	case KB_TOP_NE:
		return ab == bb ? NULL : "two numbers or two bools";
	case KB_TOP_LT:
	case KB_TOP_GT:
	case KB_TOP_LE:
	case KB_TOP_GE:
		return !ab && !bb ? NULL : "numbers";
	case KB_TOP_MOD:
	case KB_TOP_SHL:
	case KB_TOP_SHR:
	case KB_TOP_BAND:
	case KB_TOP_BOR:
		if (!is_int(a) || !is_int(b))
			return "integers";
		break;
	case KB_TOP_POW: /* a float unless both are integers (check_binary: b a constant >= 0) */
		if (ab || bb)
			return "numbers";
		*out = kb_tile__promote(a, b);
		return NULL;
	default:
		if (ab || bb)
			return "numbers";
	}
	*out = kb_tile__promote(a, b);
	return NULL;
}

bool kb_tile__binary_type(kb_tile__checker *C, int op, const kb_tile__type *a,
			  const kb_tile__type *b, kb_tile__type *out, const kb_tile__expr *at)
{
	kb_tile__typestr as = kb_tile__type_str(a), bs = kb_tile__type_str(b);
	const char *need = op_dtype(op, a->dtype, b->dtype, &out->dtype);
	if (need) {
		ERR_AT(C, at, "'%s' needs %s, got %s and %s", kb_tile__op_str(op), need, as.s, bs.s);
		return false;
	}
	if (!kb_tile__broadcast(a, b, out)) {
		ERR_AT(C, at, "shape mismatch in '%s': %s and %s (tiles combine where their extents "
		       "are equal or 1)", kb_tile__op_str(op), as.s, bs.s);
		return false;
	}
	return true;
}
