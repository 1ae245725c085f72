/*
 * spec_pyref.c - the Python form of the `ref` line:
 *
 *   //! ref numpy ref.py:softmax_ref -> y           FN called with the inputs by name
 *   //! ref torch F.conv2d(x, w, stride=2) -> y       an expression
 *   //! ref torch device=cuda timeout=600 ref.py:model_ref -> y
 *
 * It owns kb_spec_pyref: the language, the options (device=, timeout=) and
 * CALL as written, split into FILE.py and FN or an expression.  CALL is
 * Python, so it is not tokenised: it is the text up to the line's last
 * `->` (a `//` still ends the spec line, as on every line: use a file for
 * floor division).  Names in CALL are checked when it runs (profile/pyref.c),
 * which is where Python says what it does not know.
 */
#include "spec_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* device=cpu|cuda or timeout=S; 0, or -1 after an error. */
static int parse_option(kb_spec__parser *P, kb_spec_pyref *py)
{
	kb_spec__tok key = P->tok;
	kb_spec__lex(P);
	kb_spec__lex(P); /* the '=' */
	kb_spec__tok v = P->tok;
	if (kb_spec__tok_is(&key, "device")) {
		if (!kb_spec__tok_is(&v, "cpu") && !kb_spec__tok_is(&v, "cuda"))
			return kb_spec__syntax(P, "cpu or cuda");
		py->cuda = kb_spec__tok_is(&v, "cuda");
	} else if (kb_spec__tok_is(&key, "timeout")) {
		double s = v.kind == KB_TK_NUM ? strtod(v.p, NULL) : 0;
		if (v.kind != KB_TK_NUM || !(s > 0))
			return kb_spec__syntax(P, "a time in seconds (timeout=600)");
		py->timeout_s = s;
	} else {
		kb_spec__perr(P, key.col, key.len, "unknown option '%.*s' of a Python reference "
			      "(known: device=cpu|cuda, timeout=SECONDS)", key.len, key.p);
		return P->failed = true, -1;
	}
	kb_spec__lex(P);
	return 0;
}

/* Whether the current token starts `key=value` (an expression cannot
 * start with an assignment, so such a word is an option, known or not). */
static bool is_option(const kb_spec__parser *P)
{
	const char *p = P->pos;
	while (p < P->end && (*p == ' ' || *p == '\t'))
		p++;
	return P->tok.kind == KB_TK_IDENT && p + 1 < P->end && p[0] == '=' && p[1] != '=';
}

/* FILE.py:REST splits into file and fn (REST a name) or expr. */
static void split_call(kb_spec_pyref *py, const char *text)
{
	const char *colon = strstr(text, ".py:");
	const char *p = text;
	while (p < colon && !isspace((unsigned char)*p) && !strchr("()[],=", *p))
		p++;
	if (!colon || p != colon || colon == text) {
		py->expr = kb_xstrdup(text);
		return;
	}
	py->file = kb_xstrndup(text, (size_t)(colon + 3 - text));
	const char *rest = colon + 4;
	bool name = kb_spec__is_ident_start(*rest);
	for (const char *q = rest; *q && name; q++)
		name = isalnum((unsigned char)*q) || *q == '_';
	if (name)
		py->fn = kb_xstrdup(rest);
	else
		py->expr = kb_xstrdup(rest);
}

int kb_spec__dir_ref_python(kb_spec__parser *P, const kb_spec__tok *lang)
{
	kb_spec_pyref *py = &P->spec->ref.py;
	py->lang = kb_spec__tok_is(lang, "torch") ? KB_PYREF_TORCH : KB_PYREF_NUMPY;
	while (is_option(P))
		if (parse_option(P, py))
			return -1;
	const char *start = P->tok.p, *arrow = NULL;
	for (const char *q = start; q + 1 < P->end; q++)
		if (q[0] == '-' && q[1] == '>')
			arrow = q;
	if (P->tok.kind == KB_TK_EOF || arrow == start)
		return kb_spec__syntax(P, "a Python call: FILE.py:FUNCTION or an expression "
				       "(e.g. torch.softmax(x, dim=1))");
	if (!arrow)
		return kb_spec__perr(P, P->tok.col, (int)(P->end - start), "expected '->' and the "
				     "output tensor(s) after the Python call"), P->failed = true, -1;
	const char *e = arrow;
	while (e > start && isspace((unsigned char)e[-1]))
		e--;
	py->text = kb_xstrndup(start, (size_t)(e - start));
	py->call_loc = kb_spec__loc_at(P, P->tok.col);
	split_call(py, py->text);
	P->pos = arrow;
	kb_spec__lex(P);
	return 0;
}

void kb_spec__pyref_free(kb_spec_pyref *py)
{
	free(py->file);
	free(py->fn);
	free(py->expr);
	free(py->text);
	memset(py, 0, sizeof *py);
}
