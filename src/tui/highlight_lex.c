/*
 * highlight_lex.c - the two languages highlighted by a hand-written lexer,
 * one row at a time, with no tree-sitter: PTX and the tile DSL.
 *
 * PTX: one bit of state between rows (inside a block comment), and the
 * cache of that state at each row's start, invalidated from the first
 * edited row (kb_tui__hl_edit).  Owns PTX's token rules (directives,
 * types, opcodes and their modifiers, registers and special registers,
 * numbers, labels, comments, strings).  Per row, a statement's first word
 * is its opcode, so an instruction continued on a second row loses its
 * opcode colour there (rare in PTX; .loc lines have no ';', so state
 * across rows would be worse).
 *
 * Tile (docs/tile.md): owns only how a row splits into spans: what a word
 * is (keyword, dtype, built-in, literal) and where a number ends are
 * src/tile's answers (kb_tile_word_kind, kb_tile_number_end), so the
 * editor colours what the compiler reads.  The language has no block
 * comments and no strings, so no state crosses rows.  `//!` at a row's
 * first non-blank is a spec line (as in .cu and .ptx files); `#`, or a
 * `//!` later in a row, starts a comment to the row's end (the tokenizer
 * skips both).  A built-in is a function only where it is called (`sum(`;
 * a variable may be named sum), a dtype followed by `(` is a cast, and the
 * word after `kernel` is the kernel's name.
 */
#include "tui_int.h"

#include <string.h>

/* ===== PTX ===== */

#define PTX_IN_COMMENT 1

static bool ptx_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Is s[0..n) one of the space-separated words of list? */
static bool in_list(const char *list, const char *s, int n)
{
	for (const char *p = list; *p;) {
		int l = (int)strcspn(p, " ");
		if (l == n && !memcmp(p, s, (size_t)n))
			return true;
		p += l;
		while (*p == ' ')
			p++;
	}
	return false;
}

/* ".f32", ".pred", ".v4" ...: the data types of PTX. */
static bool ptx_type(const char *s, int n)
{
	return in_list(".pred .b8 .b16 .b32 .b64 .b128 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 "
		       ".f16 .f16x2 .f32 .f64 .bf16 .bf16x2 .tf32 .e4m3 .e5m2 .e4m3x2 .e5m2x2 "
		       ".e2m1x2 .e3m2x2 .e2m3x2 .ue8m0x2 .v2 .v4 .v8", s, n);
}

/* "%tid", "%ctaid" ...: special registers (without their .x suffix). */
static bool ptx_special_reg(const char *s, int n)
{
	if (in_list("%tid %ntid %ctaid %nctaid %laneid %warpid %nwarpid %smid %nsmid %gridid "
		    "%clock %clock64 %lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge "
		    "%lanemask_gt %globaltimer %globaltimer_lo %globaltimer_hi "
		    "%dynamic_smem_size %total_smem_size %aggr_smem_size %clusterid "
		    "%nclusterid %cluster_ctaid %cluster_nctaid %cluster_ctarank "
		    "%cluster_nctarank %is_explicit_cluster %current_graph_exec", s, n))
		return true;
	/* %envreg0..31, %pm0..7 */
	int p = n > 7 && !memcmp(s, "%envreg", 7) ? 7 : n > 3 && !memcmp(s, "%pm", 3) ? 3 : 0;
	if (!p)
		return false;
	while (p < n && is_digit(s[p]))
		p++;
	return p == n;
}

/* The end of a PTX number starting at s[i]: 0x1F, 0f3F800000, 0d..., 12,
 * 1.5e-3, with an optional U suffix. */
static int ptx_number(const char *s, int len, int i)
{
	if (s[i] == '0' && i + 1 < len && strchr("xXfFdD", s[i + 1])) {
		i += 2;
		while (i < len && strchr("0123456789abcdefABCDEF", s[i]))
			i++;
	} else {
		while (i < len && (is_digit(s[i]) || s[i] == '.'))
			i++;
		if (i < len && (s[i] == 'e' || s[i] == 'E')) {
			int j = i + 1;
			if (j < len && (s[j] == '+' || s[j] == '-'))
				j++;
			if (j < len && is_digit(s[j])) {
				i = j;
				while (i < len && is_digit(s[i]))
					i++;
			}
		}
	}
	if (i < len && s[i] == 'U')
		i++;
	return i;
}

/* Lexer state within one row. */
typedef struct {
	const char *s;
	int len, row;
	bool stmt_start;  /* the next word is an opcode or a label */
	bool want_label;  /* operands of bra are labels */
	bool want_name;   /* after .entry / .func: the next word names a function */
	int parens;
	kb_hl_spans *out;
} ptx_lex;

static void ptx_emit(ptx_lex *L, int a, int b, kb_hl_class c)
{
	if (L->out)
		kb_tui__hl_add_span(L->out, L->row, a, b, c);
}

/* A word at i: a label definition, an opcode with its .modifiers, or an
 * operand.  Returns the end. */
static int ptx_word(ptx_lex *L, int i)
{
	const char *s = L->s;
	int e = i;
	while (e < L->len && ptx_word_char(s[e]))
		e++;
	int j = e;
	while (j < L->len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	if (L->stmt_start && j < L->len && s[j] == ':') {
		ptx_emit(L, i, j + 1, KB_HL_LABEL);
		return j + 1;
	}
	if (L->stmt_start) {
		ptx_emit(L, i, e, KB_HL_FUNCTION);
		L->want_label = in_list("bra brx", s + i, e - i);
		while (e < L->len && s[e] == '.') { /* ld.global.nc.f32 */
			int m = e + 1;
			while (m < L->len && ptx_word_char(s[m]))
				m++;
			ptx_emit(L, e, m, ptx_type(s + e, m - e) ? KB_HL_TYPE : KB_HL_FUNCTION);
			e = m;
		}
		L->stmt_start = false;
		return e;
	}
	if (s[i] == '$' || L->want_label)
		ptx_emit(L, i, e, KB_HL_LABEL);
	else if (L->want_name && !L->parens)
		ptx_emit(L, i, e, KB_HL_FUNCTION), L->want_name = false;
	return e;
}

/* One token at i outside comments and strings; returns its end. */
static int ptx_token(ptx_lex *L, int i)
{
	const char *s = L->s;
	char c = s[i];
	int e = i + 1;
	if (c == '.' && e < L->len && ptx_word_char(s[e])) { /* directive or type */
		while (e < L->len && ptx_word_char(s[e]))
			e++;
		bool type = ptx_type(s + i, e - i);
		ptx_emit(L, i, e, type ? KB_HL_TYPE : KB_HL_KEYWORD);
		if (in_list(".entry .func", s + i, e - i))
			L->want_name = true;
		L->stmt_start = false;
	} else if (c == '%' && e < L->len && ptx_word_char(s[e])) { /* register */
		while (e < L->len && ptx_word_char(s[e]))
			e++;
		bool special = ptx_special_reg(s + i, e - i);
		if (special && e + 1 < L->len && s[e] == '.' && strchr("xyzw", s[e + 1]) &&
		    (e + 2 >= L->len || !ptx_word_char(s[e + 2])))
			e += 2;
		ptx_emit(L, i, e, special ? KB_HL_BUILTIN : KB_HL_REGISTER);
	} else if (is_digit(c)) {
		e = ptx_number(s, L->len, i);
		ptx_emit(L, i, e, KB_HL_NUMBER);
	} else if (ptx_word_char(c)) {
		e = ptx_word(L, i);
	} else if (c == '@' || c == '!' || c == '+' || c == '-' || c == '*' || c == '|' ||
		   c == '&' || c == '^' || c == '~' || c == '=') {
		ptx_emit(L, i, e, KB_HL_OPERATOR); /* "@%p1 bra": a guard keeps stmt_start */
	} else if (c == ';' || c == '{' || c == '}') {
		L->stmt_start = true;
		L->want_label = L->want_name = false;
	} else if (c == '(') {
		L->parens++;
	} else if (c == ')' && L->parens) {
		L->parens--;
	}
	return e;
}

void kb_tui__hl_ptx_row(const char *s, int len, int row, int *state, kb_hl_spans *out)
{
	ptx_lex L = {.s = s, .len = len, .row = row, .stmt_start = true, .out = out};
	int i = 0;
	if (!(*state & PTX_IN_COMMENT) && kb_tui__hl_spec_span(s, len, row, out))
		return;
	while (i < len) {
		char c = s[i];
		if (*state & PTX_IN_COMMENT) {
			int e = i;
			while (e + 1 < len && !(s[e] == '*' && s[e + 1] == '/'))
				e++;
			if (e + 1 < len) {
				e += 2;
				*state &= ~PTX_IN_COMMENT;
			} else {
				e = len;
			}
			ptx_emit(&L, i, e, KB_HL_COMMENT);
			i = e;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			i++;
		} else if (c == '/' && i + 1 < len && s[i + 1] == '/') {
			ptx_emit(&L, i, len, KB_HL_COMMENT);
			i = len;
		} else if (c == '/' && i + 1 < len && s[i + 1] == '*') {
			*state |= PTX_IN_COMMENT;
			ptx_emit(&L, i, i + 2, KB_HL_COMMENT);
			i += 2;
		} else if (c == '"') {
			int e = i + 1;
			while (e < len && s[e] != '"')
				e += s[e] == '\\' && e + 1 < len ? 2 : 1;
			e = e < len ? e + 1 : len;
			ptx_emit(&L, i, e, KB_HL_STRING);
			i = e;
		} else {
			i = ptx_token(&L, i);
		}
	}
}

/* Makes hl->ptx_state valid for rows [0, upto]. */
void kb_tui__hl_ptx_states(kb_hl *hl, const kb_hl_text *t, int upto)
{
	if (upto + 1 > hl->ptx_cap) {
		int cap = hl->ptx_cap;
		kb_xgrow((void **)&hl->ptx_state, &cap, upto + 1, 1);
		hl->ptx_cap = cap;
	}
	if (hl->ptx_valid == 0) {
		hl->ptx_state[0] = 0;
		hl->ptx_valid = 1;
	}
	for (int r = hl->ptx_valid - 1; r < upto; r++) {
		int len, st = hl->ptx_state[r];
		const char *s = kb_tui__hl_get_row(t, r, &len);
		kb_tui__hl_ptx_row(s, len, r, &st, NULL);
		hl->ptx_state[r + 1] = (uint8_t)st;
	}
	if (upto + 1 > hl->ptx_valid)
		hl->ptx_valid = upto + 1;
}

/* ===== tile ===== */

static bool word_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool word_char(char c)
{
	return word_start(c) || (c >= '0' && c <= '9');
}

/* Whether the next non-blank after s[e] is '(': a call. */
static bool called(const char *s, int len, int e)
{
	while (e < len && (s[e] == ' ' || s[e] == '\t'))
		e++;
	return e < len && s[e] == '(';
}

/* The class of the word s[i..e); *kernel_name says the next name is the
 * kernel's (after `kernel`), and is cleared once used. */
static kb_hl_class word_class(const char *s, int len, int i, int e, bool *kernel_name)
{
	bool call = called(s, len, e);
	switch (kb_tile_word_kind(s + i, (size_t)(e - i))) {
	case KB_TILE_WORD_KEYWORD:
		*kernel_name = e - i == 6 && !memcmp(s + i, "kernel", 6);
		return KB_HL_KEYWORD;
	case KB_TILE_WORD_DTYPE: return call ? KB_HL_FUNCTION : KB_HL_TYPE;
	case KB_TILE_WORD_BUILTIN: return call ? KB_HL_FUNCTION : KB_HL_NONE;
	case KB_TILE_WORD_LITERAL: return KB_HL_CONSTANT;
	case KB_TILE_WORD_NAME: break;
	}
	if (!*kernel_name)
		return KB_HL_NONE;
	*kernel_name = false;
	return KB_HL_FUNCTION;
}

void kb_tui__hl_tile_row(const char *s, int len, int row, int *state, kb_hl_spans *out)
{
	*state = 0;
	if (kb_tui__hl_spec_span(s, len, row, out) || !out)
		return;
	bool kernel_name = false;
	for (int i = 0; i < len;) {
		char c = s[i];
		int e = (int)(kb_tile_number_end(s + i, s + len) - s);
		if (c == '#' || (c == '/' && len - i >= 3 && !memcmp(s + i, "//!", 3))) {
			kb_tui__hl_add_span(out, row, i, len, KB_HL_COMMENT);
			return;
		} else if (e > i) {
			kb_tui__hl_add_span(out, row, i, e, KB_HL_NUMBER);
		} else if (word_start(c)) {
			for (e = i + 1; e < len && word_char(s[e]);)
				e++;
			kb_tui__hl_add_span(out, row, i, e, word_class(s, len, i, e, &kernel_name));
		} else {
			e = i + 1;
			if (c && strchr("+-*/%<>=!&|", c))
				kb_tui__hl_add_span(out, row, i, e, KB_HL_OPERATOR);
		}
		i = e;
	}
}
