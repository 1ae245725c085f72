/*
 * highlight_span.c - what every highlighter of highlight*.c shares, and
 * calls nothing above it: the span list (appending with adjacent equal
 * classes merged, freeing), a row read through kb_hl_text's callbacks, and
 * the spec line (`//!` at a row's first non-blank, the rule of
 * kb_compile_spec_parse), which is KB_HL_SPEC in CUDA, PTX and tile alike.
 */
#include "tui_int.h"

#include <stdlib.h>
#include <string.h>

void kb_tui__hl_spans_free(kb_hl_spans *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Appends a span, merging with the previous one when they touch. */
void kb_tui__hl_add_span(kb_hl_spans *out, int row, int start, int end, kb_hl_class cls)
{
	if (start >= end || cls == KB_HL_NONE)
		return;
	if (out->n) {
		kb_hl_span *p = &out->v[out->n - 1];
		if (p->row == row && p->end == start && p->cls == cls) {
			p->end = end;
			return;
		}
	}
	*KB_PUSH(out->v, out->n, out->cap) = (kb_hl_span){row, start, end, cls};
}

/* True when s[0..len) has "//!" at its first non-blank: a spec line. */
bool kb_tui__hl_spec_row(const char *s, int len, int col)
{
	int i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i == col && len - i >= 3 && !memcmp(s + i, "//!", 3);
}

bool kb_tui__hl_spec_span(const char *s, int len, int row, kb_hl_spans *out)
{
	int i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (!kb_tui__hl_spec_row(s, len, i))
		return false;
	if (out)
		kb_tui__hl_add_span(out, row, i, len, KB_HL_SPEC);
	return true;
}

/* Reads row r through the callbacks; rows past the end are empty. */
const char *kb_tui__hl_get_row(const kb_hl_text *t, int r, int *len)
{
	if (r < 0 || r >= t->nrows(t->ctx)) {
		*len = 0;
		return "";
	}
	const char *s = t->row(t->ctx, r, len);
	if (!s || *len < 0) {
		*len = 0;
		return "";
	}
	return s;
}
