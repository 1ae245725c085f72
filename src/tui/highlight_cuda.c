/*
 * highlight_cuda.c - the CUDA highlighter, on tree-sitter: the parser set
 * to the CUDA grammar, the highlight query built and compiled, the tables
 * read from it (the class of each capture id, the text predicates of each
 * pattern), and the query run over a range of rows, its text predicates
 * checked and its captures painted into spans.  Owns the mapping of
 * capture names to kb_hl_class; does not keep the tree up to date
 * (highlight.c parses).
 *
 * The query is the grammar packages' own queries/highlights.scm,
 * concatenated C (tree-sitter-c 0.24.1), then C++ (tree-sitter-cpp
 * 0.23.4), then CUDA (tree-sitter-cuda 0.21.1, whose "; inherits: cpp" line
 * is blanked: the concatenation is the inheritance), then a few lines of
 * kbench's own (CUDA's built-in variables).  The text is embedded in the
 * binary by a generated file (build/ts/hl_queries.c, made by the Makefile
 * from the fetched packages), so the TUI finds it from build/, an installed
 * prefix or a relocated bundle alike.  Text predicates are evaluated by
 * kbench, since the tree-sitter C library leaves them to the caller:
 * #match? #not-match? (POSIX extended regex, with \d \w \s translated),
 * #eq? #not-eq? #any-of? #not-any-of?; "!" directives (#set! ...) are
 * ignored; any other "?" predicate fails kb_tui__hl_new, as does a query
 * that does not compile (err names the part, line and column).
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

const TSLanguage *tree_sitter_cuda(void);

/* kbench's own patterns, appended last so that they win (rule 1 at the top). */
static const char KBENCH_QUERY[] =
	"; kbench: CUDA's built-in variables\n"
	"((identifier) @variable.builtin\n"
	" (#any-of? @variable.builtin \"threadIdx\" \"blockIdx\" \"blockDim\" \"gridDim\"\n"
	"  \"warpSize\"))\n";

/* ===== CUDA: the query ===== */

/* Appends one query part with "; inherits:" lines blanked (newline kept,
 * so error line numbers still match the file). */
static void cat_query_part(kb_buf *q, const char *text)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *s = p;
		while (s < p + n && (*s == ' ' || *s == '\t'))
			s++;
		bool inherits = false;
		if (*s == ';') {
			s++;
			while (s < p + n && (*s == ' ' || *s == '\t'))
				s++;
			inherits = (size_t)(p + n - s) >= 9 && !strncmp(s, "inherits:", 9);
		}
		if (!inherits)
			kb_buf_catn(q, p, n);
		kb_buf_catc(q, '\n');
		p += n + (nl != NULL);
	}
}

static const char *query_error_name(TSQueryError e)
{
	switch (e) {
	case TSQueryErrorSyntax: return "syntax error";
	case TSQueryErrorNodeType: return "unknown node type";
	case TSQueryErrorField: return "unknown field";
	case TSQueryErrorCapture: return "unknown capture";
	case TSQueryErrorStructure: return "impossible pattern";
	case TSQueryErrorLanguage: return "grammar ABI not supported";
	default: return "error";
	}
}

/* Fills err for a query that did not compile: which part, line, column,
 * and the text there. */
static int query_error(kb_err *err, const char *q, const char *const *names,
		       const size_t *starts, int nparts, uint32_t off, TSQueryError type)
{
	int part = 0;
	while (part + 1 < nparts && starts[part + 1] <= off)
		part++;
	int line = 1, col = 1;
	for (size_t i = starts[part]; i < off && q[i]; i++) {
		if (q[i] == '\n')
			line++, col = 1;
		else
			col++;
	}
	const char *at = q + off;
	int n = (int)strcspn(at, "\n");
	return KB_ERR(err, KB_ERROR, KB_DOM_TREESITTER, (int)type,
		      "highlight query %s:%d:%d: %s at \"%.*s\"", names[part], line, col,
		      query_error_name(type), n > 40 ? 40 : n, at);
}

/* POSIX ERE from a tree-sitter (Rust regex) pattern: \d \w \s become classes. */
static char *posix_regex(const char *re)
{
	kb_buf b = KB_BUF_INIT;
	int depth = 0; /* inside [...] */
	for (const char *p = re; *p; p++) {
		if (*p == '\\' && p[1] && strchr("dws", p[1])) {
			const char *cls = p[1] == 'd' ? "0-9" : p[1] == 'w' ? "A-Za-z0-9_" : "[:space:]";
			kb_buf_catf(&b, depth ? "%s" : "[%s]", cls);
			p++;
			continue;
		}
		if (*p == '\\' && p[1]) {
			kb_buf_catn(&b, p, 2);
			p++;
			continue;
		}
		if (*p == '[' && !depth)
			depth = 1;
		else if (*p == ']' && depth)
			depth = 0;
		kb_buf_catc(&b, *p);
	}
	return kb_buf_detach(&b);
}

/* Reads the text predicates of pattern i.  Returns 0, or KB_EUNSUP. */
static int load_predicates(kb_hl *hl, uint32_t i, kb_err *err)
{
	uint32_t nsteps;
	const TSQueryPredicateStep *st = ts_query_predicates_for_pattern(hl->query, i, &nsteps);
	uint32_t len;
	for (uint32_t k = 0; k < nsteps;) {
		uint32_t e = k; /* one predicate: st[k..e) then a Done step */
		while (e < nsteps && st[e].type != TSQueryPredicateStepTypeDone)
			e++;
		const char *fn = ts_query_string_value_for_id(hl->query, st[k].value_id, &len);
		size_t fl = strlen(fn);
		if (fl && fn[fl - 1] == '!') { /* a directive (#set! ...): no filter */
			k = e + 1;
			continue;
		}
		bool neg = !strncmp(fn, "not-", 4);
		const char *base = neg ? fn + 4 : fn;
		kb_tui__hl_pred pr = {.negate = neg};
		int scap = 0;
		bool ok = e - k >= 3 && st[k + 1].type == TSQueryPredicateStepTypeCapture;
		if (ok) {
			pr.cap = st[k + 1].value_id;
			if (!strcmp(base, "match?") && e - k == 3 &&
			    st[k + 2].type == TSQueryPredicateStepTypeString) {
				char *re = posix_regex(ts_query_string_value_for_id(
					hl->query, st[k + 2].value_id, &len));
				int rc = regcomp(&pr.re, re, REG_EXTENDED | REG_NOSUB);
				free(re);
				if (rc)
					return KB_ERR(err, KB_EUNSUP, KB_DOM_TREESITTER, rc,
						      "highlight query: pattern %u: bad regex", i);
				pr.op = KB_TUI__HL_PRED_MATCH;
			} else if (!strcmp(base, "eq?") && e - k == 3 &&
				   st[k + 2].type == TSQueryPredicateStepTypeCapture) {
				pr.op = KB_TUI__HL_PRED_EQ_CAP;
				pr.cap2 = st[k + 2].value_id;
			} else if (!strcmp(base, "eq?") || !strcmp(base, "any-of?")) {
				pr.op = !strcmp(base, "eq?") ? KB_TUI__HL_PRED_EQ_STR
							     : KB_TUI__HL_PRED_ANY_OF;
				ok = pr.op == KB_TUI__HL_PRED_ANY_OF || e - k == 3;
				for (uint32_t j = k + 2; ok && j < e; j++) {
					ok = st[j].type == TSQueryPredicateStepTypeString;
					if (ok)
						*KB_PUSH(pr.strs, pr.nstrs, scap) =
							ts_query_string_value_for_id(hl->query,
										     st[j].value_id, &len);
				}
			} else {
				ok = false;
			}
		}
		if (!ok) {
			free(pr.strs);
			return KB_ERR(err, KB_EUNSUP, KB_DOM_TREESITTER, 0,
				      "highlight query: pattern %u: unsupported predicate #%s", i, fn);
		}
		*KB_PUSH(hl->preds[i], hl->npreds[i], hl->predcap[i]) = pr;
		k = e + 1;
	}
	return 0;
}

/* Classes of the capture ids and predicates of the patterns. */
static int load_query_tables(kb_hl *hl, kb_err *err)
{
	uint32_t ncap = ts_query_capture_count(hl->query);
	hl->cap_cls = kb_xcalloc(ncap ? ncap : 1, 1);
	for (uint32_t i = 0; i < ncap; i++) {
		uint32_t len;
		const char *name = ts_query_capture_name_for_id(hl->query, i, &len);
		hl->cap_cls[i] = (uint8_t)kb_tui__hl_capture_class(name);
	}
	hl->npatterns = ts_query_pattern_count(hl->query);
	hl->preds = kb_xcalloc(hl->npatterns ? hl->npatterns : 1, sizeof(*hl->preds));
	hl->npreds = kb_xcalloc(hl->npatterns ? hl->npatterns : 1, sizeof(*hl->npreds));
	hl->predcap = kb_xcalloc(hl->npatterns ? hl->npatterns : 1, sizeof(*hl->predcap));
	for (uint32_t i = 0; i < hl->npatterns; i++) {
		int rc = load_predicates(hl, i, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Builds the parser, the concatenated query and its tables. */
int kb_tui__hl_cuda_init(kb_hl *hl, const char *const *parts, kb_err *err)
{
	hl->parser = ts_parser_new();
	const TSLanguage *lang = tree_sitter_cuda();
	if (!ts_parser_set_language(hl->parser, lang))
		return KB_ERR(err, KB_EUNSUP, KB_DOM_TREESITTER, 0,
			      "tree-sitter runtime (ABI %d..%d) cannot load the CUDA grammar (ABI %u)",
			      TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION, TREE_SITTER_LANGUAGE_VERSION,
			      ts_language_abi_version(lang));
	kb_buf q = KB_BUF_INIT;
	const char *names[16];
	size_t starts[16];
	int n = 0;
	for (; parts[2 * n] && n < 15; n++) {
		names[n] = parts[2 * n];
		starts[n] = q.len;
		cat_query_part(&q, parts[2 * n + 1]);
	}
	names[n] = "kbench (highlight.c)";
	starts[n++] = q.len;
	kb_buf_cat(&q, KBENCH_QUERY);
	uint32_t off = 0;
	TSQueryError type = TSQueryErrorNone;
	hl->query = ts_query_new(lang, q.s, (uint32_t)q.len, &off, &type);
	int rc = 0;
	if (!hl->query)
		rc = query_error(err, q.s, names, starts, n, off, type);
	kb_buf_free(&q);
	if (rc)
		return rc;
	hl->cursor = ts_query_cursor_new();
	return load_query_tables(hl, err);
}

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
