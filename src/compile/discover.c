/*
 * discover.c - finds the __global__ kernels of a CUDA source by walking the
 * syntax tree of the tree-sitter-cuda grammar (node types and field names,
 * never regexes over the text).  It owns the shared parser and
 * kb_compile_kernels_free; it does not preprocess, type-check or report
 * syntax errors (NVRTC does).
 *
 * What counts as a kernel: a *definition* carrying the `__global__` token
 * (function_definition, also inside template_declaration,
 * linkage_specification, namespace_definition and #if blocks).  Forward
 * declarations (`__global__ void k(int);`) and explicit instantiations
 * (`template __global__ void k<float>(...);`) are skipped: the definition
 * has the parameter names the spec binds to, and counting both would list a
 * kernel twice.  Kernels come out in file order; k->line is the first line
 * of the function_definition (the `__global__` line, after any template
 * head).  Overloads and kernels in both branches of an #if are all listed.
 *
 * Names: kernels inside `namespace a { namespace b {` are "a::b::k" (what
 * NVRTC's name expressions need); anonymous namespaces add nothing; extern "C"
 * kernels keep the bare name, which is their symbol.  Kernels made by macros
 * (`#define KERNEL __global__ void`) are not seen: the tree is unpreprocessed.
 * __launch_bounds__'s first value is read when it is an integer literal or an
 * object-like #define of one seen earlier in the file; otherwise 0.
 *
 * Parameters: an unnamed one gets name "" and the loc of its type.  elem is
 * the base type as written, under every pointer level ("const float2 *const
 * *p" -> "float2"); is_const is the const of that base type (pointee for
 * pointers, the value itself for scalars); arrays count as pointers.  A macro
 * in qualifier place (`float *RESTRICT x`) is read from its #define.
 *
 * Preprocessor: conditional directive lines (#if #ifdef #else #endif ...)
 * are left out of the parser's included ranges, so an #ifdef inside a
 * parameter list does not break the tree (both branches are read).
 * Syntax errors: ERROR nodes are scanned for `__global__ ... declarator
 * body`; a `__global__` token that error recovery swallowed (an unclosed
 * brace before it) gets a re-parse from its line (at most MAX_REPARSE).
 *
 * Threads: one parser is created on first use and reused under a mutex; a
 * caller that finds it busy gets a private parser for that call.  The shared
 * parser lives until the process ends (still reachable, not a leak).
 */
#include "compile_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_cuda(void);

/* An object-like #define: its name and value text. */
typedef struct {
	char *name;
	char *value;
} macro;

/* State of one discovery: the source, the output, the #defines seen so far,
 * the `__global__` tokens already made kernels (byte offsets), and the
 * ranges the parser reads (the text minus #if/#else/#endif lines). */
typedef struct {
	const kb_source *src;
	kb_kernels *out;
	macro *macros;
	int nmacros, capmacros;
	uint32_t *seen;
	int nseen, capseen;
	TSRange *incl;
	int nincl, capincl;
} walker;

/* What encloses a node: extern "C", the namespace prefix, a template head. */
typedef struct {
	bool extern_c;
	const char *ns;   /* "a::b::" or "" */
	TSNode tparams;   /* template_parameter_list, or a null node */
} scope;

/* Pieces of one kernel gathered while scanning the children of a node. */
typedef struct {
	bool global;
	uint32_t gbyte;           /* where the `__global__` token starts */
	bool extern_kw, extern_c; /* a loose `extern "C"` (error recovery only) */
	bool block_c;             /* a loose `extern "C" {` seen: kept across resets */
	int line;
	TSNode lb, tparams, fdecl;
} pending;

/* ---- the shared parser ---------------------------------------------- */

static pthread_mutex_t parser_lock = PTHREAD_MUTEX_INITIALIZER;
static TSParser *shared_parser;

static int parser_new(TSParser **out, kb_err *err)
{
	const TSLanguage *lang = tree_sitter_cuda();
	TSParser *p = ts_parser_new();
	if (!ts_parser_set_language(p, lang)) {
		ts_parser_delete(p);
		return KB_ERR(err, KB_EUNSUP, KB_DOM_TREESITTER, 0,
			      "tree-sitter runtime (ABI %u..%u) cannot load the CUDA grammar "
			      "(ABI %u)", TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
			      TREE_SITTER_LANGUAGE_VERSION, ts_language_abi_version(lang));
	}
	*out = p;
	return KB_OK;
}

/* The shared parser when free (*shared = true), else a private one. */
static int parser_take(TSParser **out, bool *shared, kb_err *err)
{
	*shared = false;
	if (pthread_mutex_trylock(&parser_lock) != 0)
		return parser_new(out, err);
	int rc = shared_parser ? KB_OK : parser_new(&shared_parser, err);
	if (rc < 0) {
		pthread_mutex_unlock(&parser_lock);
		return rc;
	}
	*out = shared_parser;
	*shared = true;
	return KB_OK;
}

static void parser_give(TSParser *p, bool shared)
{
	if (shared)
		pthread_mutex_unlock(&parser_lock);
	else
		ts_parser_delete(p);
}

/* ---- text helpers ----------------------------------------------------- */

static bool is_type(TSNode n, const char *type)
{
	return strcmp(ts_node_type(n), type) == 0;
}

static char *node_dup(const walker *w, TSNode n)
{
	uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
	return kb_xstrndup(w->src->text + s, e - s);
}

static bool node_text_is(const walker *w, TSNode n, const char *s)
{
	uint32_t a = ts_node_start_byte(n), e = ts_node_end_byte(n);
	return strlen(s) == e - a && memcmp(w->src->text + a, s, e - a) == 0;
}

/* Appends the tokens under n, skipping `skip` and comments; any gap in the
 * source (spaces, newlines, a comment) becomes one space. */
static void join_leaves(const walker *w, TSNode n, TSNode skip, kb_buf *b, uint32_t *last)
{
	if (!ts_node_is_null(skip) && ts_node_eq(n, skip)) {
		*last = ts_node_end_byte(n); /* "float x[]" reads "float[]" */
		return;
	}
	if (is_type(n, "comment"))
		return;
	uint32_t cnt = ts_node_child_count(n);
	if (cnt == 0) {
		uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
		if (s == e)
			return; /* a MISSING token of error recovery */
		if (b->len && s > *last)
			kb_buf_catc(b, ' ');
		kb_buf_catn(b, w->src->text + s, e - s);
		*last = e;
		return;
	}
	for (uint32_t i = 0; i < cnt; i++)
		join_leaves(w, ts_node_child(n, i), skip, b, last);
}

/* The tokens of n, whitespace collapsed and comments dropped; a new string. */
static char *node_norm(const walker *w, TSNode n)
{
	kb_buf b = KB_BUF_INIT;
	uint32_t last = 0;
	TSNode none = {0};
	join_leaves(w, n, none, &b, &last);
	return kb_buf_detach(&b);
}

/* Parses an integer literal (256, 0x100, 256u); false when it is not one. */
static bool parse_int(const char *s, size_t n, long *out)
{
	char tmp[64];
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (n == 0 || n >= sizeof tmp || s[0] < '0' || s[0] > '9')
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	char *end;
	long v = strtol(tmp, &end, 0);
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (*end && strncmp(end, "//", 2) && strncmp(end, "/*", 2))
		return false; /* a trailing comment of a #define is fine */
	*out = v;
	return true;
}

/* ---- #defines and __launch_bounds__ --------------------------------- */

static void record_define(walker *w, TSNode def)
{
	TSNode name = ts_node_child_by_field_name(def, "name", 4);
	TSNode val = ts_node_child_by_field_name(def, "value", 5);
	if (ts_node_is_null(name) || ts_node_is_null(val))
		return;
	macro *m = KB_PUSH(w->macros, w->nmacros, w->capmacros);
	m->name = node_dup(w, name);
	m->value = node_dup(w, val);
}

/* The value of the latest #define of the identifier n seen so far, or NULL. */
static const char *macro_value(const walker *w, TSNode n)
{
	for (int m = w->nmacros - 1; m >= 0; m--)
		if (node_text_is(w, n, w->macros[m].name))
			return w->macros[m].value;
	return NULL;
}

/* The first argument of a launch_bounds node as an integer, else 0. */
static int launch_bounds_value(const walker *w, TSNode lb)
{
	for (uint32_t i = 0; i < ts_node_named_child_count(lb); i++) {
		TSNode a = ts_node_named_child(lb, i);
		if (is_type(a, "comment"))
			continue;
		uint32_t s = ts_node_start_byte(a), e = ts_node_end_byte(a);
		const char *mv = is_type(a, "identifier") ? macro_value(w, a) : NULL;
		long v = 0;
		bool ok = is_type(a, "number_literal") ? parse_int(w->src->text + s, e - s, &v) :
			  mv ? parse_int(mv, strlen(mv), &v) : false;
		return ok && v > 0 && v < (1L << 30) ? (int)v : 0;
	}
	return 0;
}

/* ---- declarators and parameters ------------------------------------- */

/* The function_declarator under a declarator, or a null node. */
static TSNode find_fdecl(TSNode n)
{
	while (!ts_node_is_null(n) && !is_type(n, "function_declarator")) {
		TSNode d = ts_node_child_by_field_name(n, "declarator", 10);
		n = ts_node_is_null(d) && ts_node_named_child_count(n) ?
			ts_node_named_child(n, 0) : d;
		if (!ts_node_is_null(n) && (is_type(n, "identifier") || is_type(n, "ERROR")))
			return (TSNode){0};
	}
	return n;
}

static bool is_restrict_word(const walker *w, TSNode q)
{
	return node_text_is(w, q, "__restrict__") || node_text_is(w, q, "__restrict") ||
	       node_text_is(w, q, "restrict");
}

/* Walks a parameter's declarator chain: pointer levels, restrict, the name. */
static TSNode scan_declarator(const walker *w, TSNode d, kb_param *p)
{
	while (!ts_node_is_null(d)) {
		const char *t = ts_node_type(d);
		if (!strcmp(t, "identifier") || !strcmp(t, "field_identifier"))
			return d;
		if (strstr(t, "pointer_declarator") || strstr(t, "array_declarator"))
			p->is_pointer = true;
		for (uint32_t i = 0; i < ts_node_named_child_count(d); i++) {
			TSNode c = ts_node_named_child(d, i);
			if (is_type(c, "type_qualifier") && is_restrict_word(w, c))
				p->is_restrict = true; /* __restrict__, restrict */
			else if (is_type(c, "ms_pointer_modifier") &&
				 is_type(ts_node_named_child(c, 0), "ms_restrict_modifier"))
				p->is_restrict = true; /* __restrict */
		}
		TSNode next = ts_node_child_by_field_name(d, "declarator", 10);
		if (ts_node_is_null(next) && !strstr(t, "pointer_declarator") &&
		    !strstr(t, "array_declarator") && ts_node_named_child_count(d))
			next = ts_node_named_child(d, 0);
		d = next;
	}
	return d;
}

/* The type as written: the parameter's tokens without its name and default. */
static char *param_type_text(const walker *w, TSNode pd, TSNode name)
{
	kb_buf b = KB_BUF_INIT;
	uint32_t last = 0;
	for (uint32_t i = 0; i < ts_node_child_count(pd); i++) {
		TSNode c = ts_node_child(pd, i);
		if (!ts_node_is_named(c) && node_text_is(w, c, "="))
			break;
		join_leaves(w, c, name, &b, &last);
	}
	return kb_buf_detach(&b);
}

/* A macro in qualifier position (`float *RESTRICT x`) parses as the name,
 * with the real name left in an ERROR node after it: returns that name. */
static TSNode stray_name(TSNode plist, uint32_t i)
{
	if (i + 1 >= ts_node_named_child_count(plist))
		return (TSNode){0};
	TSNode e = ts_node_named_child(plist, i + 1);
	if (!is_type(e, "ERROR") || ts_node_named_child_count(e) != 1 ||
	    !is_type(ts_node_named_child(e, 0), "identifier"))
		return (TSNode){0};
	return ts_node_named_child(e, 0);
}

/* Fills p from a parameter_declaration; stray is the real name when a macro
 * took the name's place (its #define then tells const/restrict). */
static void param_from(const walker *w, TSNode pd, TSNode stray, kb_param *p)
{
	TSNode type = ts_node_child_by_field_name(pd, "type", 4);
	TSNode name = scan_declarator(w, ts_node_child_by_field_name(pd, "declarator", 10), p);
	if (!ts_node_is_null(stray) && !ts_node_is_null(name)) {
		const char *mv = macro_value(w, name);
		p->is_restrict |= mv && (strstr(mv, "__restrict") || strstr(mv, "restrict"));
		name = stray;
	}
	for (uint32_t i = 0; i < ts_node_named_child_count(pd); i++) {
		TSNode c = ts_node_named_child(pd, i);
		if (is_type(c, "type_qualifier") && node_text_is(w, c, "const"))
			p->is_const = true;
	}
	p->name = ts_node_is_null(name) ? kb_xstrdup("") : node_dup(w, name);
	p->type = param_type_text(w, pd, name);
	p->elem = ts_node_is_null(type) ? kb_xstrdup(p->type) : node_norm(w, type);
	TSPoint at = ts_node_start_point(ts_node_is_null(name) ? pd : name);
	p->loc = (kb_loc){w->src->path, (int)at.row + 1, (int)at.column + 1};
}

/* True for `(void)`: one unnamed parameter of type void. */
static bool is_void_param(const walker *w, TSNode pd)
{
	TSNode type = ts_node_child_by_field_name(pd, "type", 4);
	return ts_node_is_null(ts_node_child_by_field_name(pd, "declarator", 10)) &&
	       !ts_node_is_null(type) && node_text_is(w, type, "void");
}

static void params_from(const walker *w, TSNode plist, kb_kernel *k)
{
	int cap = 0;
	uint32_t n = ts_node_named_child_count(plist);
	for (uint32_t i = 0; i < n; i++) {
		TSNode pd = ts_node_named_child(plist, i);
		if (!is_type(pd, "parameter_declaration") &&
		    !is_type(pd, "optional_parameter_declaration"))
			continue; /* comments, ERROR, `...` */
		if (is_void_param(w, pd))
			continue;
		kb_param *p = KB_PUSH(k->params, k->nparams, cap);
		memset(p, 0, sizeof *p);
		param_from(w, pd, stray_name(plist, i), p);
	}
}

/* ---- kernels --------------------------------------------------------- */

static char *kernel_name(const walker *w, const scope *sc, bool extern_c, TSNode fdecl)
{
	TSNode d = ts_node_child_by_field_name(fdecl, "declarator", 10);
	if (ts_node_is_null(d))
		return kb_xstrdup("");
	if (is_type(d, "template_function")) {
		TSNode nm = ts_node_child_by_field_name(d, "name", 4);
		d = ts_node_is_null(nm) ? d : nm;
	}
	char *bare = node_norm(w, d);
	if (extern_c || !sc->ns[0])
		return bare;
	char *q = kb_xasprintf("%s%s", sc->ns, bare);
	free(bare);
	return q;
}

/* Strips the `<` `>` of a template_parameter_list: "typename T, int B". */
static char *template_text(const walker *w, TSNode tp)
{
	char *s = node_norm(w, tp);
	size_t n = strlen(s);
	size_t a = (n && s[0] == '<') ? 1 : 0;
	if (n > a && s[n - 1] == '>')
		n--;
	while (a < n && s[a] == ' ')
		a++;
	while (n > a && s[n - 1] == ' ')
		n--;
	char *r = kb_xstrndup(s + a, n - a);
	free(s);
	return r;
}

static bool seen_global(const walker *w, uint32_t byte)
{
	for (int i = 0; i < w->nseen; i++)
		if (w->seen[i] == byte)
			return true;
	return false;
}

static void emit_kernel(walker *w, const scope *sc, const pending *p)
{
	if (seen_global(w, p->gbyte))
		return; /* found again by a recovery re-parse */
	*KB_PUSH(w->seen, w->nseen, w->capseen) = p->gbyte;
	TSNode plist = ts_node_child_by_field_name(p->fdecl, "parameters", 10);
	kb_kernel *k = KB_PUSH(w->out->v, w->out->n, w->out->cap);
	memset(k, 0, sizeof *k);
	k->extern_c = sc->extern_c || p->extern_c;
	k->name = kernel_name(w, sc, k->extern_c, p->fdecl);
	if (!ts_node_is_null(p->tparams)) {
		k->is_template = true;
		k->template_params = template_text(w, p->tparams);
	}
	if (!ts_node_is_null(plist))
		params_from(w, plist, k);
	k->line = p->line;
	k->launch_bounds = ts_node_is_null(p->lb) ? 0 : launch_bounds_value(w, p->lb);
}

/* ---- the walk ---------------------------------------------------------- */

static void walk(walker *w, TSNode n, const scope *sc);

static bool is_container(TSNode n)
{
	static const char *const types[] = {
		"function_definition", "declaration", "linkage_specification",
		"namespace_definition", "template_declaration", "declaration_list",
		"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
		"preproc_elifdef", "preproc_def", "ERROR",
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(types); i++)
		if (is_type(n, types[i]))
			return true;
	return false;
}

static void pending_reset(pending *p, const scope *sc)
{
	bool block_c = p->block_c;
	memset(p, 0, sizeof *p);
	p->tparams = sc->tparams;
	p->block_c = p->extern_c = block_c;
}

static void pending_flush(walker *w, const scope *sc, pending *p)
{
	if (p->global && !ts_node_is_null(p->fdecl))
		emit_kernel(w, sc, p);
	pending_reset(p, sc);
}

/* Notes a token that may start a kernel's declaration (its line). */
static void note_start(pending *p, TSNode c)
{
	if (!p->line)
		p->line = (int)ts_node_start_point(c).row + 1;
}

/* One child of a node being scanned for `__global__ ... declarator body`. */
static void scan_child(walker *w, const scope *sc, pending *p, TSNode c)
{
	const char *t = ts_node_type(c);
	if (!ts_node_is_null(p->fdecl)) { /* a body follows, unless it is `;` */
		if (!strcmp(t, ";"))
			pending_reset(p, sc);
		else
			pending_flush(w, sc, p);
	}
	if (!strcmp(t, "__global__") || !strcmp(t, "extern") || !strcmp(t, "template")) {
		note_start(p, c);
		if (t[0] == '_')
			p->global = true, p->gbyte = ts_node_start_byte(c);
		p->extern_kw |= t[0] == 'e';
	} else if (!strcmp(t, "string_literal") && p->extern_kw) {
		p->extern_c = ts_node_named_child_count(c) &&
			      node_text_is(w, ts_node_named_child(c, 0), "C");
	} else if (!strcmp(t, "{") && p->extern_c) {
		p->block_c = true;
	} else if (!strcmp(t, "launch_bounds")) {
		note_start(p, c);
		p->lb = c;
	} else if (!strcmp(t, "template_parameter_list")) {
		p->tparams = c;
	} else if (!strcmp(t, "function_declarator") || !strcmp(t, "init_declarator") ||
		   !strcmp(t, "pointer_declarator")) {
		p->fdecl = p->global ? find_fdecl(c) : (TSNode){0};
		if (ts_node_is_null(p->fdecl))
			pending_reset(p, sc);
	} else if (!strcmp(t, ";") || !strcmp(t, "}") || !strcmp(t, "compound_statement")) {
		pending_reset(p, sc);
	} else if (is_container(c)) {
		scope inner = *sc;
		inner.extern_c |= p->block_c;
		walk(w, c, &inner);
		pending_reset(p, sc);
	}
}

/* Scans the children of a function_definition (or of an ERROR node, or of
 * a declaration that error recovery gave a `{...}` value) for kernels. */
static void scan_children(walker *w, TSNode n, const scope *sc)
{
	pending p = {0};
	pending_reset(&p, sc);
	if (is_type(n, "function_definition"))
		p.line = (int)ts_node_start_point(n).row + 1;
	TSTreeCursor cur = ts_tree_cursor_new(n);
	if (ts_tree_cursor_goto_first_child(&cur)) {
		do {
			TSNode c = ts_tree_cursor_current_node(&cur);
			if (!is_type(c, "comment"))
				scan_child(w, sc, &p, c);
		} while (ts_tree_cursor_goto_next_sibling(&cur));
	}
	ts_tree_cursor_delete(&cur);
	pending_flush(w, sc, &p);
}

static void walk_children(walker *w, TSNode n, const scope *sc)
{
	TSTreeCursor cur = ts_tree_cursor_new(n);
	if (ts_tree_cursor_goto_first_child(&cur)) {
		do
			walk(w, ts_tree_cursor_current_node(&cur), sc);
		while (ts_tree_cursor_goto_next_sibling(&cur));
	}
	ts_tree_cursor_delete(&cur);
}

static void walk_namespace(walker *w, TSNode n, const scope *sc)
{
	TSNode name = ts_node_child_by_field_name(n, "name", 4);
	scope inner = *sc;
	char *prefix = NULL;
	if (!ts_node_is_null(name)) {
		char *nm = node_norm(w, name);
		prefix = kb_xasprintf("%s%s::", sc->ns, nm);
		free(nm);
		inner.ns = prefix;
	}
	inner.tparams = (TSNode){0};
	walk_children(w, n, &inner);
	free(prefix);
}

static void walk(walker *w, TSNode n, const scope *sc)
{
	scope inner = *sc;
	if (is_type(n, "function_definition") || is_type(n, "ERROR")) {
		scan_children(w, n, sc);
	} else if (is_type(n, "declaration")) {
		TSNode v = ts_node_child_by_field_name(n, "value", 5);
		if (!ts_node_is_null(v) && is_type(v, "initializer_list"))
			scan_children(w, n, sc); /* a definition error recovery misread */
	} else if (is_type(n, "template_declaration")) {
		inner.tparams = ts_node_child_by_field_name(n, "parameters", 10);
		walk_children(w, n, &inner);
	} else if (is_type(n, "linkage_specification")) {
		TSNode v = ts_node_child_by_field_name(n, "value", 5);
		inner.extern_c = !ts_node_is_null(v) && ts_node_named_child_count(v) &&
				 node_text_is(w, ts_node_named_child(v, 0), "C");
		walk_children(w, n, &inner);
	} else if (is_type(n, "namespace_definition")) {
		walk_namespace(w, n, sc);
	} else if (is_type(n, "preproc_def")) {
		record_define(w, n);
	} else if (is_type(n, "translation_unit") || is_container(n)) {
		walk_children(w, n, sc);
	}
}

/* ---- parsing: directive lines and error recovery -------------------- */

static void add_range(walker *w, uint32_t from, uint32_t from_row, uint32_t to,
		      uint32_t to_row)
{
	if (to <= from)
		return; /* two directive lines in a row */
	TSRange *r = KB_PUSH(w->incl, w->nincl, w->capincl);
	r->start_byte = from, r->start_point = (TSPoint){from_row, 0};
	r->end_byte = to, r->end_point = (TSPoint){to_row, 0};
}

/* The parser reads around conditional directive lines, so that `#ifdef`
 * inside a parameter list does not break it (both branches are seen).
 * Leaves w->incl empty when the text has none. */
static void directive_ranges(walker *w)
{
	const char *text = w->src->text, *end = text + w->src->len;
	uint32_t from = 0, from_row = 0, row = 0;
	bool any = false;
	for (const char *p = text; p < end; row++) {
		size_t n = kb_compile__directive_len(p, end);
		if (n) {
			any = true;
			add_range(w, from, from_row, (uint32_t)(p - text), row);
			for (size_t i = 0; i + 1 < n; i++)
				row += p[i] == '\n';
			from = (uint32_t)(p - text + n), from_row = row + 1;
		}
		const char *nl = memchr(p + n, '\n', (size_t)(end - p - n));
		if (n && p[n - 1] == '\n')
			nl = p + n - 1;
		p = nl ? nl + 1 : end;
	}
	if (any) {
		add_range(w, from, from_row, UINT32_MAX, UINT32_MAX);
		w->incl[w->nincl - 1].end_point = (TSPoint){UINT32_MAX, UINT32_MAX};
	}
}

/* Parses the text from byte `from` (a line start on row `row`) to the end. */
static TSTree *parse_from(walker *w, TSParser *parser, uint32_t from, uint32_t row)
{
	TSRange all = {{0, 0}, {UINT32_MAX, UINT32_MAX}, 0, UINT32_MAX};
	TSRange *r = w->nincl ? w->incl : &all;
	int n = w->nincl ? w->nincl : 1;
	while (n > 1 && r->end_byte <= from)
		r++, n--;
	TSRange first = *r;
	if (first.start_byte < from)
		first.start_byte = from, first.start_point = (TSPoint){row, 0};
	TSRange *v = kb_xmalloc((size_t)n * sizeof *v);
	v[0] = first;
	memcpy(v + 1, r + 1, (size_t)(n - 1) * sizeof *v);
	TSTree *tree = NULL;
	if (ts_parser_set_included_ranges(parser, v, (uint32_t)n))
		tree = ts_parser_parse_string(parser, NULL, w->src->text, (uint32_t)w->src->len);
	ts_parser_set_included_ranges(parser, NULL, 0);
	free(v);
	return tree;
}

/* A growable list of byte offsets. */
typedef struct {
	uint32_t *v;
	int n, cap;
} offsets;

/* Collects the `__global__` tokens in or under ERROR nodes that no kernel
 * came from (error recovery sometimes reads them as identifiers).  Only
 * subtrees that hold an error are entered. */
static void collect_lost(const walker *w, TSNode n, bool in_error, offsets *lost)
{
	if (ts_node_child_count(n) == 0) {
		uint32_t b = ts_node_start_byte(n);
		if (in_error && node_text_is(w, n, "__global__") && !seen_global(w, b))
			*KB_PUSH(lost->v, lost->n, lost->cap) = b;
		return;
	}
	if (!in_error && !ts_node_has_error(n))
		return;
	in_error |= ts_node_is_error(n);
	TSTreeCursor c = ts_tree_cursor_new(n);
	if (ts_tree_cursor_goto_first_child(&c)) {
		do
			collect_lost(w, ts_tree_cursor_current_node(&c), in_error, lost);
		while (ts_tree_cursor_goto_next_sibling(&c));
	}
	ts_tree_cursor_delete(&c);
}

#define MAX_REPARSE 8

/* Stable sort by line of out->v[from..], after recovery appended late finds. */
static void sort_by_line(kb_kernels *out, int from)
{
	for (int i = from + 1; i < out->n; i++) {
		kb_kernel k = out->v[i];
		int j = i;
		for (; j > from && out->v[j - 1].line > k.line; j--)
			out->v[j] = out->v[j - 1];
		out->v[j] = k;
	}
}

/* Re-parses from the line of each lost `__global__` (a syntax error before
 * it swallowed it), so that kernels after an error are still found. */
static void recover_lost(walker *w, TSParser *parser, TSNode root)
{
	offsets lost = {0};
	int tries = 0;
	collect_lost(w, root, false, &lost);
	scope top = {.extern_c = false, .ns = ""};
	for (int i = 0; i < lost.n && tries < MAX_REPARSE; i++) {
		if (seen_global(w, lost.v[i]))
			continue;
		uint32_t from = lost.v[i], row = 0;
		while (from > 0 && w->src->text[from - 1] != '\n')
			from--;
		for (uint32_t j = 0; j < from; j++)
			row += w->src->text[j] == '\n';
		TSTree *t = parse_from(w, parser, from, row);
		tries++;
		if (t) {
			walk(w, ts_tree_root_node(t), &top);
			ts_tree_delete(t);
		}
	}
	free(lost.v);
}

/* ---- public ---------------------------------------------------------- */

/* Appends every __global__ definition of src to out (zero it first).
 * Returns 0, KB_EINVAL, or KB_EUNSUP when the grammar cannot be loaded. */
int kb_compile_discover_cuda(const kb_source *src_in, kb_kernels *out, kb_err *err)
{
	TSParser *parser = NULL;
	TSTree *tree = NULL;
	bool shared = false;
	int rc, first = out ? out->n : 0;

	if (!src_in || !src_in->text || !out || src_in->len > UINT32_MAX)
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "discover: bad source");
	kb_source masked = *src_in;
	char *mtext = kb_compile__mask_unknown_attrs(src_in->text, src_in->len);
	if (mtext)
		masked.text = mtext;
	const kb_source *src = &masked;
	walker w = {.src = src, .out = out};
	rc = parser_take(&parser, &shared, err);
	if (rc < 0)
		goto out;
	directive_ranges(&w);
	tree = parse_from(&w, parser, 0, 0);
	if (!tree) {
		ts_parser_reset(parser);
		rc = KB_ERR(err, KB_ERROR, KB_DOM_TREESITTER, 0, "%s: tree-sitter parse failed",
			    src->path ? src->path : "(source)");
		goto out;
	}
	scope top = {.extern_c = false, .ns = ""};
	walk(&w, ts_tree_root_node(tree), &top);
	if (ts_node_has_error(ts_tree_root_node(tree))) {
		recover_lost(&w, parser, ts_tree_root_node(tree));
		sort_by_line(out, first);
	}
out:
	if (tree)
		ts_tree_delete(tree);
	if (parser)
		parser_give(parser, shared);
	for (int i = 0; i < w.nmacros; i++)
		free(w.macros[i].name), free(w.macros[i].value);
	free(w.macros);
	free(w.seen);
	free(w.incl);
	free(mtext);
	return rc;
}

/* Frees every kernel and leaves k empty ({0}). */
void kb_compile_kernels_free(kb_kernels *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->n; i++) {
		kb_kernel *kn = &k->v[i];
		for (int j = 0; j < kn->nparams; j++) {
			free(kn->params[j].name);
			free(kn->params[j].type);
			free(kn->params[j].elem);
		}
		free(kn->params);
		free(kn->name);
		free(kn->template_params);
	}
	free(k->v);
	memset(k, 0, sizeof *k);
}
