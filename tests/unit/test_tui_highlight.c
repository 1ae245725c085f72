/*
 * test_tui_highlight.c - src/tui/highlight.c: CUDA spans from the grammars'
 * own highlight queries on kernels/softmax.cu, incremental re-parse after
 * edits (checked against a fresh parse), query errors, the PTX lexer on
 * kernels/saxpy.ptx, the tile lexer on kernels/softmax/softmax.tile and
 * every example .tile file, the language of a path, and the timing of one keystroke in a 5,000-line file
 * (printed; the issue wants it a benchmark, not a timed test).
 */
#include "t.h"

#include <ctype.h>

#include "../../src/tui/tui_int.h"

const TSLanguage *tree_sitter_cuda(void);

/* ===== a tiny line store standing in for the editor ===== */

typedef struct {
	char **row;
	int *len;
	int n, cap;
} doc;

static void doc_free(doc *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->row[i]);
	free(d->row);
	free(d->len);
	memset(d, 0, sizeof(*d));
}

/* Replaces rows [at, at + del) by the rows of s (split on '\n'). */
static void doc_splice(doc *d, int at, int del, const char *s, size_t n)
{
	for (int i = at; i < at + del; i++)
		free(d->row[i]);
	int add = 1;
	for (size_t i = 0; i < n; i++)
		add += s[i] == '\n';
	if (d->n - del + add > d->cap) {
		d->cap = (d->n - del + add) * 2;
		d->row = kb_xrealloc(d->row, (size_t)d->cap * sizeof(*d->row));
		d->len = kb_xrealloc(d->len, (size_t)d->cap * sizeof(*d->len));
	}
	memmove(d->row + at + add, d->row + at + del, (size_t)(d->n - at - del) * sizeof(*d->row));
	memmove(d->len + at + add, d->len + at + del, (size_t)(d->n - at - del) * sizeof(*d->len));
	d->n += add - del;
	for (int k = 0; k < add; k++) {
		const char *nl = memchr(s, '\n', n);
		size_t l = nl ? (size_t)(nl - s) : n;
		d->row[at + k] = kb_xstrndup(s, l);
		d->len[at + k] = (int)l;
		s += l + 1;
		n -= nl ? l + 1 : l;
	}
}

static void doc_load(doc *d, const char *text)
{
	doc_free(d);
	doc_splice(d, 0, 0, text, strlen(text));
}

static uint32_t doc_offset(const doc *d, int row, int col)
{
	uint32_t off = 0;
	for (int i = 0; i < row; i++)
		off += (uint32_t)d->len[i] + 1;
	return off + (uint32_t)col;
}

/* Inserts s at (row, col) and describes the edit as tree-sitter wants it. */
static TSInputEdit doc_insert(doc *d, int row, int col, const char *s)
{
	TSInputEdit e = {0};
	e.start_byte = e.old_end_byte = doc_offset(d, row, col);
	e.new_end_byte = e.start_byte + (uint32_t)strlen(s);
	e.start_point = e.old_end_point = (TSPoint){(uint32_t)row, (uint32_t)col};
	kb_buf b = KB_BUF_INIT;
	kb_buf_catn(&b, d->row[row], (size_t)col);
	kb_buf_cat(&b, s);
	const char *last = strrchr(s, '\n');
	int nl = 0;
	for (const char *p = s; *p; p++)
		nl += *p == '\n';
	e.new_end_point = (TSPoint){(uint32_t)(row + nl),
				    last ? (uint32_t)strlen(last + 1) : (uint32_t)(col + (int)strlen(s))};
	kb_buf_catn(&b, d->row[row] + col, (size_t)(d->len[row] - col));
	doc_splice(d, row, 1, b.s, b.len);
	kb_buf_free(&b);
	return e;
}

/* Deletes [(r1, c1), (r2, c2)). */
static TSInputEdit doc_delete(doc *d, int r1, int c1, int r2, int c2)
{
	TSInputEdit e = {0};
	e.start_byte = e.new_end_byte = doc_offset(d, r1, c1);
	e.old_end_byte = doc_offset(d, r2, c2);
	e.start_point = e.new_end_point = (TSPoint){(uint32_t)r1, (uint32_t)c1};
	e.old_end_point = (TSPoint){(uint32_t)r2, (uint32_t)c2};
	kb_buf b = KB_BUF_INIT;
	kb_buf_catn(&b, d->row[r1], (size_t)c1);
	kb_buf_catn(&b, d->row[r2] + c2, (size_t)(d->len[r2] - c2));
	doc_splice(d, r1, r2 - r1 + 1, b.s, b.len);
	kb_buf_free(&b);
	return e;
}

static char *doc_join(const doc *d, size_t *n)
{
	kb_buf b = KB_BUF_INIT;
	for (int i = 0; i < d->n; i++) {
		if (i)
			kb_buf_catc(&b, '\n');
		kb_buf_catn(&b, d->row[i], (size_t)d->len[i]);
	}
	*n = b.len;
	return kb_buf_detach(&b);
}

static int doc_nrows(void *ctx)
{
	return ((doc *)ctx)->n;
}

static const char *doc_row(void *ctx, int r, int *len)
{
	doc *d = ctx;
	*len = d->len[r];
	return d->row[r];
}

static kb_hl_text doc_text(doc *d)
{
	return (kb_hl_text){d, doc_nrows, doc_row};
}

/* Finds the row holding `needle` (from row `from`), or -1. */
static int doc_find(const doc *d, int from, const char *needle)
{
	for (int i = from; i < d->n; i++)
		if (strstr(d->row[i], needle))
			return i;
	return -1;
}

static char *read_file(const char *path)
{
	kb_buf b = KB_BUF_INIT;
	kb_err err = {0};
	if (kb_file_read(path, &b, &err)) {
		printf("  cannot read %s: %s\n", path, err.msg);
		kb_buf_free(&b);
		return NULL;
	}
	return kb_buf_detach(&b);
}

/* Loads PATH into D and opens a highlighter for LANG on it; 0, or -1 with
 * the failure counted and nothing left to free. */
static int open_fixture(const char *path, kb_hl_lang lang, doc *d, kb_hl **hl)
{
	char *src = read_file(path);
	T_OK(src);
	if (!src)
		return -1;
	doc_load(d, src);
	free(src);
	kb_err err = {0};
	int rc = kb_tui__hl_new(hl, lang, NULL, &err);
	T_EQ_INT(rc, 0);
	if (rc) {
		printf("  %s\n", err.msg);
		doc_free(d);
		return -1;
	}
	return 0;
}

/* ===== span helpers ===== */

/* The class at (row, col), or NONE. */
static kb_hl_class cls_at(const kb_hl_spans *s, int row, int col)
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i].row == row && s->v[i].start <= col && col < s->v[i].end)
			return s->v[i].cls;
	return KB_HL_NONE;
}

/* The class of the `nth` occurrence of word in row (every byte must agree;
 * "mixed" otherwise). */
static const char *word_cls(const doc *d, const kb_hl_spans *s, int row, const char *word, int nth)
{
	if (row < 0)
		return "(no row)";
	const char *p = d->row[row];
	for (;;) {
		p = strstr(p, word);
		if (!p)
			return "(not found)";
		if (!nth--)
			break;
		p++;
	}
	int col = (int)(p - d->row[row]);
	kb_hl_class c = cls_at(s, row, col);
	for (size_t i = 1; i < strlen(word); i++)
		if (cls_at(s, row, col + (int)i) != c)
			return "mixed";
	return kb_tui__hl_class_name(c);
}

/* Spans are ordered, inside their rows and never overlap. */
static bool spans_sane(const doc *d, const kb_hl_spans *s)
{
	for (int i = 0; i < s->n; i++) {
		const kb_hl_span *p = &s->v[i];
		if (p->start >= p->end || p->end > d->len[p->row] || p->cls == KB_HL_NONE)
			return false;
		if (i && (p->row < p[-1].row || (p->row == p[-1].row && p->start < p[-1].end)))
			return false;
	}
	return true;
}

/* The spans of rows [r, r + n) alone are those of the whole file, all. */
static void window_agrees(kb_hl *hl, const kb_hl_text *t, const kb_hl_spans *all, int r, int n)
{
	kb_hl_spans w = {0};
	kb_err err = {0};
	T_EQ_INT(kb_tui__hl_spans(hl, t, r, n, &w, &err), 0);
	T_OK(w.n > 0);
	for (int i = 0; i < w.n; i++) {
		T_OK(w.v[i].row >= r && w.v[i].row < r + n);
		T_EQ_INT(cls_at(all, w.v[i].row, w.v[i].start), w.v[i].cls);
	}
	kb_tui__hl_spans_free(&w);
}

/* True when hl's (incrementally updated) tree equals a fresh parse of d. */
static bool same_as_fresh(kb_hl *hl, doc *d)
{
	kb_hl *fresh;
	kb_err err = {0};
	if (kb_tui__hl_new(&fresh, KB_HL_LANG_CUDA, NULL, &err))
		return false;
	kb_hl_text t = doc_text(d);
	bool ok = !kb_tui__hl_parse(hl, &t, &err) && !kb_tui__hl_parse(fresh, &t, &err);
	if (ok) {
		char *a = ts_node_string(ts_tree_root_node(kb_tui__hl_tree(hl)));
		char *b = ts_node_string(ts_tree_root_node(kb_tui__hl_tree(fresh)));
		ok = !strcmp(a, b);
		free(a);
		free(b);
	}
	kb_tui__hl_free(fresh);
	return ok;
}

/* ===== CUDA ===== */

static void test_tui_highlight__capture_names(void)
{
	T_EQ_INT(kb_tui__hl_capture_class("keyword"), KB_HL_KEYWORD);
	T_EQ_INT(kb_tui__hl_capture_class("keyword.modifier"), KB_HL_KEYWORD);
	T_EQ_INT(kb_tui__hl_capture_class("type"), KB_HL_TYPE);
	T_EQ_INT(kb_tui__hl_capture_class("function.special"), KB_HL_PREPROC);
	T_EQ_INT(kb_tui__hl_capture_class("function.method.call"), KB_HL_FUNCTION);
	T_EQ_INT(kb_tui__hl_capture_class("variable.builtin"), KB_HL_BUILTIN);
	T_EQ_INT(kb_tui__hl_capture_class("variable"), KB_HL_NONE);
	T_EQ_INT(kb_tui__hl_capture_class("punctuation.bracket"), KB_HL_NONE);
	T_EQ_INT(kb_tui__hl_capture_class("no.such.name"), KB_HL_NONE);
	T_EQ_STR(kb_tui__hl_class_name(KB_HL_SPEC), "spec");
}

static void test_tui_highlight__softmax(void)
{
	doc d = {0};
	kb_hl *hl;
	if (open_fixture("kernels/softmax.cu", KB_HL_LANG_CUDA, &d, &hl))
		return;
	kb_err err = {0};
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, d.n, &s, &err), 0);
	T_OK(spans_sane(&d, &s));

	int r = doc_find(&d, 0, "// Row softmax");
	T_EQ_STR(word_cls(&d, &s, r, "// Row softmax", 0), "comment");
	r = doc_find(&d, 0, "//! kernel");
	T_EQ_STR(word_cls(&d, &s, r, "//! kernel  softmax_rows", 0), "spec");
	T_EQ_INT(cls_at(&s, r, d.len[r] - 1), KB_HL_SPEC);
	r = doc_find(&d, 0, "//! tol");
	T_EQ_STR(word_cls(&d, &s, r, "rtol=1e-5", 0), "spec");
	r = doc_find(&d, 0, "#include");
	T_EQ_STR(word_cls(&d, &s, r, "#include", 0), "preproc");
	T_EQ_STR(word_cls(&d, &s, r, "<math_constants.h>", 0), "string");
	T_EQ_STR(word_cls(&d, &s, r, "/* CUDART_INF_F", 0), "comment");

	r = doc_find(&d, 0, "__device__ float block_reduce_max");
	T_EQ_STR(word_cls(&d, &s, r, "__device__", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "float", 0), "type");
	T_EQ_STR(word_cls(&d, &s, r, "block_reduce_max", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "v", 1), "none"); /* 0 is in __device__ */
	r = doc_find(&d, r, "for (int o = 16");
	T_EQ_STR(word_cls(&d, &s, r, "for", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "int", 0), "type");
	T_EQ_STR(word_cls(&d, &s, r, "16", 0), "number");
	r = doc_find(&d, r, "__shfl_xor_sync(0xffffffff");
	T_EQ_STR(word_cls(&d, &s, r, "fmaxf", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "0xffffffff", 0), "number");
	T_EQ_STR(word_cls(&d, &s, r, "=", 0), "operator");
	r = doc_find(&d, r, "int warp = threadIdx.x");
	T_EQ_STR(word_cls(&d, &s, r, "threadIdx", 0), "builtin");
	T_EQ_STR(word_cls(&d, &s, r, "x", 1), "property");
	r = doc_find(&d, r, "-CUDART_INF_F");
	T_EQ_STR(word_cls(&d, &s, r, "CUDART_INF_F", 0), "constant");
	T_EQ_STR(word_cls(&d, &s, r, "blockDim", 0), "builtin");
	r = doc_find(&d, r, "return v;");
	T_EQ_STR(word_cls(&d, &s, r, "return", 0), "keyword");

	r = doc_find(&d, 0, "__global__ void softmax_rows");
	T_EQ_STR(word_cls(&d, &s, r, "__global__", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "void", 0), "type");
	T_EQ_STR(word_cls(&d, &s, r, "softmax_rows", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "const", 0), "keyword");
	r = doc_find(&d, r, "(size_t)blockIdx.x");
	T_EQ_STR(word_cls(&d, &s, r, "size_t", 0), "type");
	r = doc_find(&d, r, "float s = 0.0f;");
	T_EQ_STR(word_cls(&d, &s, r, "0.0f", 0), "number");

	/* A window in the middle agrees with the whole-file spans. */
	window_agrees(hl, &t, &s, doc_find(&d, 0, "__global__ void softmax_rows"), 5);
	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
}

/* `//!` only at a row's first non-blank is a spec line; a block comment
 * spanning rows is a comment on each. */
static void test_tui_highlight__spec_rule(void)
{
	doc d = {0};
	doc_load(&d, "  //! arg N = 4\nint x; //! not spec\n/* a\n  b */ int y;\n");
	kb_hl *hl;
	kb_err err = {0};
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_CUDA, NULL, &err), 0);
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, 100, &s, &err), 0);
	T_OK(spans_sane(&d, &s));
	T_EQ_STR(word_cls(&d, &s, 0, "//! arg N = 4", 0), "spec");
	T_EQ_STR(word_cls(&d, &s, 0, "  ", 0), "none");
	T_EQ_STR(word_cls(&d, &s, 1, "//! not spec", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 2, "/* a", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 3, "  b */", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 3, "int", 0), "type");
	/* Only row 3 asked: the comment that started on row 2 still counts. */
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 3, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, 3, "  b */", 0), "comment");
	T_EQ_INT(s.v[0].row, 3);
	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
}

static void test_tui_highlight__incremental(void)
{
	doc d = {0};
	kb_hl *hl;
	if (open_fixture("kernels/softmax.cu", KB_HL_LANG_CUDA, &d, &hl))
		return;
	kb_err err = {0};
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	int r = doc_find(&d, 0, "\tif (lane == 0)");
	T_EQ_INT(kb_tui__hl_spans(hl, &t, r, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, r, "if", 0), "keyword");
	const TSTree *before = kb_tui__hl_tree(hl);

	/* `if` -> `iff`: a keyword becomes a called identifier. */
	TSInputEdit e = doc_insert(&d, r, 3, "f");
	kb_tui__hl_edit(hl, &e);
	T_EQ_INT(kb_tui__hl_spans(hl, &t, r, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, r, "iff", 0), "function");
	T_OK(cls_at(&s, r, 1) != KB_HL_KEYWORD);
	T_OK(kb_tui__hl_tree(hl) != before);
	T_OK(same_as_fresh(hl, &d));

	/* And back. */
	e = doc_delete(&d, r, 3, r, 4);
	kb_tui__hl_edit(hl, &e);
	T_EQ_INT(kb_tui__hl_spans(hl, &t, r, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, r, "if", 0), "keyword");
	T_OK(same_as_fresh(hl, &d));

	/* Several edits between two parses, some across rows: a block comment
	 * around the head of softmax_rows, and a #define on a new first row. */
	int g = doc_find(&d, 0, "__global__ void softmax_rows");
	int m = doc_find(&d, g, "float m = -CUDART_INF_F");
	e = doc_insert(&d, m, 1, "*/ ");
	kb_tui__hl_edit(hl, &e);
	e = doc_insert(&d, g, 0, "/* x\ny ");
	kb_tui__hl_edit(hl, &e);
	e = doc_insert(&d, 0, 0, "#define W 32\n");
	kb_tui__hl_edit(hl, &e);
	g += 2, m += 2;
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, d.n, &s, &err), 0);
	T_OK(spans_sane(&d, &s));
	T_EQ_STR(word_cls(&d, &s, 0, "#define", 0), "preproc");
	T_EQ_STR(word_cls(&d, &s, 0, "W", 0), "constant");
	T_EQ_STR(word_cls(&d, &s, g - 1, "/* x", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, g, "y __global__ void", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, g + 2, "__shared__", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, m, "*/", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, m, "float", 0), "type");
	T_OK(same_as_fresh(hl, &d));

	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
}

static void test_tui_highlight__query_errors(void)
{
	kb_hl *hl = (kb_hl *)1;
	kb_err err = {0};
	const char *const syntax[] = {"a.scm", "(comment) @comment\n", "b.scm",
				      "(identifier) @variable\n  (call_expression @x\n", NULL};
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_CUDA, syntax, &err), KB_ERROR);
	T_OK(hl == NULL);
	T_CONTAINS(err.msg, "b.scm:2:");
	T_CONTAINS(err.msg, "syntax error");
	const char *const node[] = {"c.scm", "; inherits: cpp\n\n(no_such_node) @x\n", NULL};
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_CUDA, node, &err), KB_ERROR);
	T_CONTAINS(err.msg, "c.scm:3:2: unknown node type at \"no_such_node) @x\"");
	const char *const pred_[] = {"d.scm", "((identifier) @x (#frob? @x \"a\"))\n", NULL};
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_CUDA, pred_, &err), KB_EUNSUP);
	T_CONTAINS(err.msg, "unsupported predicate #frob?");
	/* The "; inherits:" line is blanked and predicates work. */
	const char *const ok[] = {"e.scm", "; inherits: cpp\n((identifier) @constant\n"
				  " (#match? @constant \"^[A-Z][A-Z\\\\d_]*$\"))\n"
				  "((identifier) @function (#not-eq? @function \"x\"))\n", NULL};
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_CUDA, ok, &err), 0);
	doc d = {0};
	doc_load(&d, "int N_2 = x + y;");
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, 0, "N_2", 0), "function"); /* later pattern wins */
	T_EQ_STR(word_cls(&d, &s, 0, "x", 0), "none");
	T_EQ_STR(word_cls(&d, &s, 0, "y", 0), "function");
	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
}

/* ===== PTX ===== */

static void test_tui_highlight__ptx(void)
{
	doc d = {0};
	kb_hl *hl;
	if (open_fixture("kernels/saxpy.ptx", KB_HL_LANG_PTX, &d, &hl))
		return;
	kb_err err = {0};
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, d.n, &s, &err), 0);
	T_OK(spans_sane(&d, &s));
	int r = doc_find(&d, 0, "// out = a * x");
	T_EQ_STR(word_cls(&d, &s, r, "// out = a * x + y", 0), "comment");
	r = doc_find(&d, 0, "//! kernel");
	T_EQ_STR(word_cls(&d, &s, r, "//! kernel  saxpy", 0), "spec");
	r = doc_find(&d, 0, ".version");
	T_EQ_STR(word_cls(&d, &s, r, ".version", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "9.0", 0), "number");
	r = doc_find(&d, 0, ".visible .entry saxpy(");
	T_EQ_STR(word_cls(&d, &s, r, ".visible", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, ".entry", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "saxpy", 0), "function");
	r = doc_find(&d, r, ".param .f32 a,");
	T_EQ_STR(word_cls(&d, &s, r, ".param", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, ".f32", 0), "type");
	T_EQ_STR(word_cls(&d, &s, r, "a,", 0), "none");
	r = doc_find(&d, r, ".reg .pred");
	T_EQ_STR(word_cls(&d, &s, r, ".reg", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, ".pred", 0), "type");
	T_EQ_STR(word_cls(&d, &s, r, "%p", 0), "register");
	T_EQ_STR(word_cls(&d, &s, r, "2", 0), "number");
	r = doc_find(&d, r, "ld.param.f32");
	T_EQ_STR(word_cls(&d, &s, r, "ld", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, ".param", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, ".f32", 0), "type");
	T_EQ_STR(word_cls(&d, &s, r, "%f1", 0), "register");
	r = doc_find(&d, r, "%rd3, [out]");
	T_EQ_STR(word_cls(&d, &s, r, "%rd3", 0), "register");
	r = doc_find(&d, r, "%ctaid.x");
	T_EQ_STR(word_cls(&d, &s, r, "%ctaid.x", 0), "builtin");
	T_EQ_STR(word_cls(&d, &s, r, "%r3", 0), "register");
	r = doc_find(&d, r, "@%p1 bra");
	T_EQ_STR(word_cls(&d, &s, r, "@", 0), "operator");
	T_EQ_STR(word_cls(&d, &s, r, "%p1", 0), "register");
	T_EQ_STR(word_cls(&d, &s, r, "bra", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "$L__done", 0), "label");
	r = doc_find(&d, r, "ld.global.nc.f32");
	T_EQ_STR(word_cls(&d, &s, r, ".global.nc", 0), "function");
	r = doc_find(&d, r, "$L__done:");
	T_EQ_STR(word_cls(&d, &s, r, "$L__done:", 0), "label");
	T_EQ_STR(word_cls(&d, &s, r + 1, "ret", 0), "function");

	/* Rows the file lacks: numbers, strings, block comments, bare labels. */
	const char *rows[] = {
		"\tmov.f32 %f5, 0f3F800000; // 1.0",
		"BB0_2: add.s64 %rd1, %rd1, -8; .pragma \"nounroll\";",
		"\tbra.uni BB0_2; /* a",
		"  b */ ret;",
	};
	int st = 0;
	s.n = 0;
	for (int i = 0; i < 4; i++)
		kb_tui__hl_ptx_row(rows[i], (int)strlen(rows[i]), i, &st, &s);
	T_EQ_INT(st, 0);
	doc_free(&d);
	doc_load(&d, "\tmov.f32 %f5, 0f3F800000; // 1.0\n"
		     "BB0_2: add.s64 %rd1, %rd1, -8; .pragma \"nounroll\";\n"
		     "\tbra.uni BB0_2; /* a\n  b */ ret;");
	T_EQ_STR(word_cls(&d, &s, 0, "0f3F800000", 0), "number");
	T_EQ_STR(word_cls(&d, &s, 0, "// 1.0", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 1, "BB0_2:", 0), "label");
	T_EQ_STR(word_cls(&d, &s, 1, "add", 0), "function");
	T_EQ_STR(word_cls(&d, &s, 1, "-", 0), "operator");
	T_EQ_STR(word_cls(&d, &s, 1, "8", 0), "number");
	T_EQ_STR(word_cls(&d, &s, 1, ".pragma", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, 1, "\"nounroll\"", 0), "string");
	T_EQ_STR(word_cls(&d, &s, 2, "BB0_2", 0), "label");
	T_EQ_STR(word_cls(&d, &s, 2, "/* a", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 3, "  b */", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 3, "ret", 0), "function");

	/* Through the highlighter: an edit opening a comment at the top changes
	 * rows further down (the cached row states are invalidated). */
	kb_tui__hl_free(hl);
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_PTX, NULL, &err), 0);
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 1, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, 1, "add", 0), "function");
	TSInputEdit e = doc_insert(&d, 0, 0, "/*");
	kb_tui__hl_edit(hl, &e);
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 1, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, 1, "BB0_2: add.s64 %rd1", 0), "comment");
	T_EQ_INT(s.n, 1);
	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
}

/* ===== tile ===== */

static void test_tui_highlight__lang_of(void)
{
	T_EQ_INT(kb_tui__hl_lang_of("kernels/softmax.cu"), KB_HL_LANG_CUDA);
	T_EQ_INT(kb_tui__hl_lang_of("a/b.cuh"), KB_HL_LANG_CUDA);
	T_EQ_INT(kb_tui__hl_lang_of("kernels/saxpy.ptx"), KB_HL_LANG_PTX);
	T_EQ_INT(kb_tui__hl_lang_of("kernels/softmax/softmax.tile"), KB_HL_LANG_TILE);
	T_EQ_INT(kb_tui__hl_lang_of("notes.txt"), KB_HL_LANG_CUDA); /* what it compiles as */
	T_EQ_INT(kb_tui__hl_lang_of("tile"), KB_HL_LANG_CUDA);
}

static void test_tui_highlight__tile_softmax(void)
{
	doc d = {0};
	kb_hl *hl;
	if (open_fixture("kernels/softmax/softmax.tile", KB_HL_LANG_TILE, &d, &hl))
		return;
	kb_err err = {0};
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, d.n, &s, &err), 0);
	T_OK(spans_sane(&d, &s));
	T_OK(kb_tui__hl_tree(hl) == NULL); /* lexed: no tree-sitter */

	int r = doc_find(&d, 0, "# Softmax over rows");
	T_EQ_STR(word_cls(&d, &s, r, d.row[r], 0), "comment");
	r = doc_find(&d, 0, "//! kernel");
	T_EQ_STR(word_cls(&d, &s, r, "//! kernel  softmax", 0), "spec");
	r = doc_find(&d, 0, "//! in ");
	T_EQ_STR(word_cls(&d, &s, r, d.row[r], 0), "spec"); /* f32, randn: not lexed */
	r = doc_find(&d, 0, "kernel softmax(");
	T_EQ_STR(word_cls(&d, &s, r, "kernel", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "softmax", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "x:", 0), "none");
	T_EQ_STR(word_cls(&d, &s, r, "f32", 0), "type");
	T_EQ_STR(word_cls(&d, &s, r, "f32", 1), "type");
	T_EQ_STR(word_cls(&d, &s, r, "grid", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "threads", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "THREADS", 0), "none");
	r = doc_find(&d, r, "const BLOCK = 16384");
	T_EQ_STR(word_cls(&d, &s, r, "const", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "BLOCK", 0), "none");
	T_EQ_STR(word_cls(&d, &s, r, "=", 0), "operator");
	T_EQ_STR(word_cls(&d, &s, r, "16384", 0), "number");
	r = doc_find(&d, r, "row = pid(0)");
	T_EQ_STR(word_cls(&d, &s, r, "pid", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "0", 0), "number");
	r = doc_find(&d, r, "m = -inf");
	T_EQ_STR(word_cls(&d, &s, r, "-", 0), "operator");
	T_EQ_STR(word_cls(&d, &s, r, "inf", 0), "constant");
	r = doc_find(&d, r, "s = 0.0");
	T_EQ_STR(word_cls(&d, &s, r, "0.0", 0), "number");
	r = doc_find(&d, r, "for c in range(");
	T_EQ_STR(word_cls(&d, &s, r, "for", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "in", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, r, "range", 0), "keyword");
	r = doc_find(&d, r, "t = load(");
	T_EQ_STR(word_cls(&d, &s, r, "load", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "other", 0), "none");
	r = doc_find(&d, r, "m_new = max(m, max(t))");
	T_EQ_STR(word_cls(&d, &s, r, "m_new", 0), "none");
	T_EQ_STR(word_cls(&d, &s, r, "max", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "max", 1), "function");
	r = doc_find(&d, r, "sum(exp(");
	T_EQ_STR(word_cls(&d, &s, r, "exp", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "sum", 0), "function");
	r = doc_find(&d, r, "store(");
	T_EQ_STR(word_cls(&d, &s, r, "store", 0), "function");
	T_EQ_STR(word_cls(&d, &s, r, "/", 0), "operator");

	/* A window agrees with the whole-file spans. */
	window_agrees(hl, &t, &s, doc_find(&d, 0, "kernel softmax("), 4);
	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
}

/* Every example .tile file: spans sane, and every call (a name and '(')
 * outside comments and spec lines is a function or a keyword (grid,
 * threads, range): no built-in the examples use is missing. */
static void test_tui_highlight__tile_examples(void)
{
	static const char *const files[] = {
		"kernels/vector_add.tile", "kernels/softmax/softmax.tile",
		"kernels/softmax/softmax_bf16.tile", "kernels/matmul/matmul.tile",
		"kernels/layernorm/layernorm.tile", "kernels/layernorm/layernorm_bf16.tile",
		"kernels/rmsnorm/rmsnorm.tile", "kernels/rmsnorm/rmsnorm_bf16.tile",
	};
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		doc d = {0};
		kb_hl *hl;
		if (open_fixture(files[f], KB_HL_LANG_TILE, &d, &hl))
			continue;
		kb_err err = {0};
		kb_hl_text t = doc_text(&d);
		kb_hl_spans s = {0};
		T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, d.n, &s, &err), 0);
		T_OK(spans_sane(&d, &s));
		int calls = 0;
		for (int r = 0; r < d.n; r++) {
			const char *row = d.row[r];
			for (int c = 1; c < d.len[r]; c++) {
				kb_hl_class at = cls_at(&s, r, c - 1);
				if (row[c] != '(' || at == KB_HL_COMMENT || at == KB_HL_SPEC ||
				    !(isalnum((unsigned char)row[c - 1]) || row[c - 1] == '_'))
					continue;
				calls++;
				if (at != KB_HL_FUNCTION && at != KB_HL_KEYWORD)
					printf("  %s:%d:%d: a call is %s\n", files[f], r + 1, c,
					       kb_tui__hl_class_name(at));
				T_OK(at == KB_HL_FUNCTION || at == KB_HL_KEYWORD);
			}
		}
		T_OK(calls > 3);
		kb_tui__hl_spans_free(&s);
		kb_tui__hl_free(hl);
		doc_free(&d);
	}
}

/* Rows the examples lack: casts, a built-in's name as a variable, hex and
 * exponent numbers, a number with letters glued on (one bad token, as the
 * tokenizer reads it), true/false, `//!` after code, an edit. */
static void test_tui_highlight__tile_rows(void)
{
	doc d = {0};
	doc_load(&d, "    acc = f32(dot(a, b)) + bf16(x) * 1e-5  # cast\n"
		     "    sum = 0x1F + .5 + 3abc\n"
		     "    if ok && !false || true { y = where(c, i32(a), 2) } else { }\n"
		     "    z = 1 //! not a spec line here\n"
		     "  //! arg N = 4\n"
		     "kernel\n"
		     "kernel k(a: bf16[N], b: u8[N], c: i64[N], e: f64[N], f: f16[N])");
	kb_hl *hl;
	kb_err err = {0};
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_TILE, NULL, &err), 0);
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 0, 100, &s, &err), 0);
	T_OK(spans_sane(&d, &s));
	T_EQ_STR(word_cls(&d, &s, 0, "f32", 0), "function"); /* casts */
	T_EQ_STR(word_cls(&d, &s, 0, "bf16", 0), "function");
	T_EQ_STR(word_cls(&d, &s, 0, "dot", 0), "function");
	T_EQ_STR(word_cls(&d, &s, 0, "1e-5", 0), "number");
	T_EQ_STR(word_cls(&d, &s, 0, "# cast", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 1, "sum", 0), "none"); /* a variable */
	T_EQ_STR(word_cls(&d, &s, 1, "0x1F", 0), "number");
	T_EQ_STR(word_cls(&d, &s, 1, ".5", 0), "number");
	T_EQ_STR(word_cls(&d, &s, 1, "3abc", 0), "number");
	T_EQ_STR(word_cls(&d, &s, 2, "if", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, 2, "&&", 0), "operator");
	T_EQ_STR(word_cls(&d, &s, 2, "false", 0), "constant");
	T_EQ_STR(word_cls(&d, &s, 2, "true", 0), "constant");
	T_EQ_STR(word_cls(&d, &s, 2, "where", 0), "function");
	T_EQ_STR(word_cls(&d, &s, 2, "i32", 0), "function");
	T_EQ_STR(word_cls(&d, &s, 2, "else", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, 3, "//! not a spec line here", 0), "comment");
	T_EQ_STR(word_cls(&d, &s, 4, "//! arg N = 4", 0), "spec");
	T_EQ_STR(word_cls(&d, &s, 4, "  ", 0), "none");
	T_EQ_STR(word_cls(&d, &s, 5, "kernel", 0), "keyword");
	T_EQ_STR(word_cls(&d, &s, 6, "k", 1), "function"); /* 0: in kernel */
	T_EQ_STR(word_cls(&d, &s, 6, "bf16", 0), "type");
	T_EQ_STR(word_cls(&d, &s, 6, "u8", 0), "type");
	T_EQ_STR(word_cls(&d, &s, 6, "i64", 0), "type");
	T_EQ_STR(word_cls(&d, &s, 6, "f64", 0), "type");
	T_EQ_STR(word_cls(&d, &s, 6, "f16", 0), "type");
	T_EQ_STR(word_cls(&d, &s, 6, "a", 0), "none");

	/* An edit: `z` becomes `exp(z)`, and the row lexes again. */
	TSInputEdit e = doc_insert(&d, 3, 8, "exp(z) + ");
	kb_tui__hl_edit(hl, &e);
	T_EQ_INT(kb_tui__hl_spans(hl, &t, 3, 1, &s, &err), 0);
	T_EQ_STR(word_cls(&d, &s, 3, "exp", 0), "function");
	T_EQ_INT(s.v[0].row, 3);
	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
}

/* ===== timing: one keystroke in a 5,000-line file ===== */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define NKEYS 101

static void test_tui_highlight__timing(void)
{
	char *src = read_file("kernels/softmax.cu");
	T_OK(src);
	if (!src)
		return;
	kb_buf big = KB_BUF_INIT;
	int lines = 0;
	while (lines < 5000) {
		for (const char *p = src; *p && lines < 5000; p++) {
			kb_buf_catc(&big, *p);
			lines += *p == '\n';
		}
	}
	big.s[--big.len] = '\0'; /* 5,000 rows joined by '\n' */
	doc d = {0};
	doc_load(&d, big.s);
	kb_buf_free(&big);
	T_EQ_INT(d.n, 5000);
	kb_hl *hl;
	kb_err err = {0};
	T_EQ_INT(kb_tui__hl_new(&hl, KB_HL_LANG_CUDA, NULL, &err), 0);
	kb_hl_text t = doc_text(&d);
	kb_hl_spans s = {0};
	double t0 = kb_now_ms();
	T_EQ_INT(kb_tui__hl_parse(hl, &t, &err), 0);
	double full = kb_now_ms() - t0;

	/* The same edits through a second tree parsed from the joined text
	 * (ts_parser_parse_string), to compare the two ways of reading. */
	TSParser *p2 = ts_parser_new();
	ts_parser_set_language(p2, tree_sitter_cuda());
	size_t n;
	char *joined = doc_join(&d, &n);
	TSTree *tree2 = ts_parser_parse_string(p2, NULL, joined, (uint32_t)n);
	free(joined);

	double key[NKEYS], parse_cb[NKEYS], parse_str[NKEYS];
	int top = 2500;
	int r = doc_find(&d, top, "\tif (lane == 0)");
	for (int k = 0; k < NKEYS; k++) {
		/* type 'f' after "if", then delete it: a keyword flips each time */
		TSInputEdit e = k % 2 ? doc_delete(&d, r, 3, r, 4) : doc_insert(&d, r, 3, "f");
		t0 = kb_now_ms();
		kb_tui__hl_edit(hl, &e);
		T_EQ_INT(kb_tui__hl_parse(hl, &t, &err), 0);
		double t1 = kb_now_ms();
		T_EQ_INT(kb_tui__hl_spans(hl, &t, top, 50, &s, &err), 0);
		key[k] = kb_now_ms() - t0;
		parse_cb[k] = t1 - t0;

		t0 = kb_now_ms();
		ts_tree_edit(tree2, &e);
		joined = doc_join(&d, &n);
		TSTree *nt = ts_parser_parse_string(p2, tree2, joined, (uint32_t)n);
		parse_str[k] = kb_now_ms() - t0;
		free(joined);
		ts_tree_delete(tree2);
		tree2 = nt;
	}
	T_EQ_STR(word_cls(&d, &s, r, "iff", 0), "function"); /* NKEYS is odd */
	T_OK(same_as_fresh(hl, &d));
	char *a = ts_node_string(ts_tree_root_node(kb_tui__hl_tree(hl)));
	char *b = ts_node_string(ts_tree_root_node(tree2));
	T_OK(!strcmp(a, b));
	free(a);
	free(b);
	qsort(key, NKEYS, sizeof(double), cmp_double);
	qsort(parse_cb, NKEYS, sizeof(double), cmp_double);
	qsort(parse_str, NKEYS, sizeof(double), cmp_double);
	printf("  timing (5,000 rows, %d keystrokes): full parse %.2f ms; re-parse median "
	       "%.3f ms (TSInput rows) vs %.3f ms (join + parse_string); keystroke "
	       "(edit + re-parse + 50-row spans) median %.3f ms, max %.3f ms\n",
	       NKEYS, full, parse_cb[NKEYS / 2], parse_str[NKEYS / 2], key[NKEYS / 2],
	       key[NKEYS - 1]);
	/* A bound far above the measured value, so that only a lost incremental
	 * re-parse (a full parse per key) trips it, even under ASan. */
	T_OK(key[NKEYS / 2] < 16.0);
	ts_tree_delete(tree2);
	ts_parser_delete(p2);
	kb_tui__hl_spans_free(&s);
	kb_tui__hl_free(hl);
	doc_free(&d);
	free(src);
}

int main(void)
{
	T_RUN(test_tui_highlight__capture_names);
	T_RUN(test_tui_highlight__softmax);
	T_RUN(test_tui_highlight__spec_rule);
	T_RUN(test_tui_highlight__incremental);
	T_RUN(test_tui_highlight__query_errors);
	T_RUN(test_tui_highlight__ptx);
	T_RUN(test_tui_highlight__lang_of);
	T_RUN(test_tui_highlight__tile_softmax);
	T_RUN(test_tui_highlight__tile_rows);
	T_RUN(test_tui_highlight__tile_examples);
	T_RUN(test_tui_highlight__timing);
	return t_report();
}
