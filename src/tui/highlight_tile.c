/*
 * highlight_tile.c - the tile DSL's highlighter (docs/tile.md): a
 * hand-written lexer, one row at a time.  Owns only how a row splits into
 * spans: what a word is (keyword, dtype, built-in, literal) and where a
 * number ends are src/tile's answers (kb_tile_word_kind,
 * kb_tile_number_end), so the editor colours what the compiler reads.
 *
 * The language has no block comments and no strings, so no state crosses
 * rows.  `//!` at a row's first non-blank is a spec line (as in .cu and
 * .ptx files); `#`, or a `//!` later in a row, starts a comment to the
 * row's end (the tokenizer skips both).  A built-in is a function only
 * where it is called (`sum(`; a variable may be named sum), a dtype
 * followed by `(` is a cast, and the word after `kernel` is the kernel's
 * name.
 */
#include "tui_int.h"

#include <string.h>

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
