/*
 * highlight_query.c - the CUDA highlighter's query: the tree-sitter parser
 * set to the CUDA grammar, the highlight query built and compiled, and the
 * tables read from it (the class of each capture id, the text predicates
 * of each pattern).  Does not run the query (highlight_capture.c).
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
 */
#include "tui_int.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

const TSLanguage *tree_sitter_cuda(void);

/* kbench's own patterns, appended last so that they win (rule 1 at the top of
 * highlight_capture.c). */
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
