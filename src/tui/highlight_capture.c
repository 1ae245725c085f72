/*
 * highlight_capture.c - from tree-sitter captures to spans (CUDA): the
 * class of a capture name, the query run over a range of rows with its
 * text predicates checked, and the captures painted into spans.  Owns the
 * mapping of capture names to kb_hl_class; does not build the query
 * (highlight_query.c) or parse (highlight.c).
 *
 * Which capture wins (tree-sitter-highlight's rule, 0.21 and later):
 *   1. one node captured by several patterns: the LAST pattern in the
 *      query wins (so C's leading `(identifier) @variable` loses to the
 *      later `function:` patterns, and CUDA's file overrides C++ and C);
 *   2. nested nodes: the innermost wins (a node starting later, or at the
 *      same byte but ending earlier, is painted over its parent).
 * Both follow from painting the captures sorted by (start byte ascending,
 * end byte descending, pattern index ascending), later paint on top.
 *
 * Special cases on top of the capture names (see capture_table):
 *   - a @keyword capture on a preprocessor token ("#include", "#define",
 *     preproc_directive ...) is KB_HL_PREPROC;
 *   - a comment that starts a row's first non-blank with "//!" is a spec
 *     line, KB_HL_SPEC (the rule of kb_compile_spec_parse).
 */
#include "tui_int.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* ===== capture names ===== */

/* Capture name -> class.  A name not listed is looked up again without its
 * last ".part" ("keyword.modifier" -> "keyword"); unknown names are NONE. */
static const struct {
	const char *name;
	kb_hl_class cls;
} capture_table[] = {
	{"keyword", KB_HL_KEYWORD},
	{"keyword.directive", KB_HL_PREPROC},
	{"preproc", KB_HL_PREPROC},
	{"function.macro", KB_HL_PREPROC},
	{"function.special", KB_HL_PREPROC},
	{"type", KB_HL_TYPE},
	{"module", KB_HL_TYPE},
	{"namespace", KB_HL_TYPE},
	{"function", KB_HL_FUNCTION},
	{"function.builtin", KB_HL_BUILTIN},
	{"method", KB_HL_FUNCTION},
	{"constructor", KB_HL_FUNCTION},
	{"string", KB_HL_STRING},
	{"escape", KB_HL_STRING},
	{"character", KB_HL_STRING},
	{"number", KB_HL_NUMBER},
	{"float", KB_HL_NUMBER},
	{"comment", KB_HL_COMMENT},
	{"operator", KB_HL_OPERATOR},
	{"constant", KB_HL_CONSTANT},
	{"boolean", KB_HL_CONSTANT},
	{"variable.builtin", KB_HL_BUILTIN},
	{"property", KB_HL_PROPERTY},
	{"field", KB_HL_PROPERTY},
	{"label", KB_HL_LABEL},
	{"variable", KB_HL_NONE},
	{"delimiter", KB_HL_NONE},
	{"punctuation", KB_HL_NONE},
};

kb_hl_class kb_tui__hl_capture_class(const char *name)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s", name);
	for (;;) {
		for (size_t i = 0; i < KB_ARRAY_LEN(capture_table); i++)
			if (!strcmp(capture_table[i].name, tmp))
				return capture_table[i].cls;
		char *dot = strrchr(tmp, '.');
		if (!dot)
			return KB_HL_NONE;
		*dot = '\0';
	}
}

const char *kb_tui__hl_class_name(kb_hl_class c)
{
	static const char *const names[KB_HL__COUNT] = {
		"none", "keyword", "type", "function", "string", "number", "comment",
		"spec", "preproc", "constant", "builtin", "property", "operator",
		"label", "register",
	};
	return c >= 0 && c < KB_HL__COUNT ? names[c] : "?";
}

/* ===== CUDA: captures to spans ===== */

/* The text of a node into hl->tmp (NUL-terminated). */
static const char *node_text(kb_hl *hl, const kb_hl_text *t, TSNode node)
{
	TSPoint a = ts_node_start_point(node), b = ts_node_end_point(node);
	kb_buf_reset(&hl->tmp);
	kb_buf_catn(&hl->tmp, "", 0);
	for (uint32_t r = a.row; r <= b.row; r++) {
		int len;
		const char *s = kb_tui__hl_get_row(t, (int)r, &len);
		uint32_t c0 = r == a.row ? a.column : 0, c1 = r == b.row ? b.column : (uint32_t)len;
		if (c1 > (uint32_t)len)
			c1 = (uint32_t)len;
		if (c0 < c1)
			kb_buf_catn(&hl->tmp, s + c0, c1 - c0);
		if (r != b.row)
			kb_buf_catc(&hl->tmp, '\n');
	}
	return hl->tmp.s;
}

/* The first node of capture id cap in a match, or a null node. */
static TSNode match_node(const TSQueryMatch *m, uint32_t cap)
{
	for (uint16_t i = 0; i < m->capture_count; i++)
		if (m->captures[i].index == cap)
			return m->captures[i].node;
	return (TSNode){0};
}

/* True when all text predicates of the match hold. */
static bool match_ok(kb_hl *hl, const kb_hl_text *t, const TSQueryMatch *m)
{
	for (int k = 0; k < hl->npreds[m->pattern_index]; k++) {
		const kb_tui__hl_pred *p = &hl->preds[m->pattern_index][k];
		TSNode node = match_node(m, p->cap);
		if (ts_node_is_null(node))
			continue;
		const char *s = node_text(hl, t, node);
		bool ok = false;
		if (p->op == KB_TUI__HL_PRED_MATCH) {
			ok = regexec(&p->re, s, 0, NULL, 0) == 0;
		} else if (p->op == KB_TUI__HL_PRED_EQ_CAP) {
			char *a = kb_xstrdup(s);
			TSNode other = match_node(m, p->cap2);
			ok = !ts_node_is_null(other) && !strcmp(a, node_text(hl, t, other));
			free(a);
		} else {
			for (int i = 0; i < p->nstrs && !ok; i++)
				ok = !strcmp(s, p->strs[i]);
		}
		if (ok == p->negate)
			return false;
	}
	return true;
}

/* The class of one capture, with the PREPROC and SPEC special cases. */
static kb_hl_class capture_class(kb_hl *hl, const kb_hl_text *t, TSNode node, uint32_t cap)
{
	kb_hl_class c = hl->cap_cls[cap];
	if (c == KB_HL_KEYWORD) {
		const char *type = ts_node_type(node);
		if (type[0] == '#' || !strcmp(type, "preproc_directive"))
			return KB_HL_PREPROC;
	} else if (c == KB_HL_COMMENT) {
		TSPoint p = ts_node_start_point(node);
		int len;
		const char *s = kb_tui__hl_get_row(t, (int)p.row, &len);
		if (kb_tui__hl_spec_row(s, len, (int)p.column))
			return KB_HL_SPEC;
	}
	return c;
}

static int cmp_items(const void *a, const void *b)
{
	const kb_tui__hl_cap_item *x = a, *y = b;
	if (x->sbyte != y->sbyte)
		return x->sbyte < y->sbyte ? -1 : 1;
	if (x->ebyte != y->ebyte)
		return x->ebyte > y->ebyte ? -1 : 1;
	return x->pattern < y->pattern ? -1 : x->pattern > y->pattern;
}

/* Collects the captures of rows [first, last) into hl->items, sorted. */
void kb_tui__hl_collect_captures(kb_hl *hl, const kb_hl_text *t, int first, int last)
{
	hl->nitems = 0;
	ts_query_cursor_set_point_range(hl->cursor, (TSPoint){(uint32_t)first, 0},
					(TSPoint){(uint32_t)last, 0});
	ts_query_cursor_exec(hl->cursor, hl->query, ts_tree_root_node(hl->tree));
	TSQueryMatch m;
	uint32_t ci;
	while (ts_query_cursor_next_capture(hl->cursor, &m, &ci)) {
		if (hl->npreds[m.pattern_index] && !match_ok(hl, t, &m))
			continue;
		TSNode node = m.captures[ci].node;
		kb_tui__hl_cap_item *it = KB_PUSH(hl->items, hl->nitems, hl->capitems);
		*it = (kb_tui__hl_cap_item){ts_node_start_byte(node), ts_node_end_byte(node),
					    m.pattern_index, ts_node_start_point(node),
					    ts_node_end_point(node),
					    (uint8_t)capture_class(hl, t, node, m.captures[ci].index)};
	}
	qsort(hl->items, (size_t)hl->nitems, sizeof(*hl->items), cmp_items);
}

/* Paints the sorted captures over rows [first, last) and emits the spans. */
void kb_tui__hl_paint_rows(kb_hl *hl, const kb_hl_text *t, int first, int last, kb_hl_spans *out)
{
	int nrows = last - first;
	size_t total = 0;
	int *off = kb_xmalloc((size_t)(nrows + 1) * sizeof(*off));
	for (int r = 0; r < nrows; r++) {
		int len;
		kb_tui__hl_get_row(t, first + r, &len);
		off[r] = (int)total;
		total += (size_t)len;
	}
	off[nrows] = (int)total;
	if (total > hl->paint_cap) {
		hl->paint = kb_xrealloc(hl->paint, total);
		hl->paint_cap = total;
	}
	memset(hl->paint, KB_HL_NONE, total);
	for (int i = 0; i < hl->nitems; i++) {
		const kb_tui__hl_cap_item *it = &hl->items[i];
		int r0 = (int)it->sp.row > first ? (int)it->sp.row : first;
		int r1 = (int)it->ep.row < last - 1 ? (int)it->ep.row : last - 1;
		for (int r = r0; r <= r1; r++) {
			int len = off[r - first + 1] - off[r - first];
			int c0 = r == (int)it->sp.row ? (int)it->sp.column : 0;
			int c1 = r == (int)it->ep.row ? (int)it->ep.column : len;
			if (c1 > len)
				c1 = len;
			if (c0 < c1)
				memset(hl->paint + off[r - first] + c0, it->cls, (size_t)(c1 - c0));
		}
	}
	for (int r = 0; r < nrows; r++) {
		const uint8_t *p = hl->paint + off[r];
		int len = off[r + 1] - off[r];
		for (int c = 0; c < len;) {
			int e = c + 1;
			while (e < len && p[e] == p[c])
				e++;
			kb_tui__hl_add_span(out, first + r, c, e, (kb_hl_class)p[c]);
			c = e;
		}
	}
	free(off);
}
