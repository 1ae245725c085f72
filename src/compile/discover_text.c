/*
 * discover_text.c - the source text as discover.c hands it to tree-sitter:
 * where the conditional directive lines are (the parser reads around them)
 * and the attributes the CUDA grammar does not know, blanked (every byte
 * and line keeps its place, so kernel lines and parameter locations stay
 * true).
 */
#include "compile_int.h"

#include <stdlib.h>
#include <string.h>

/* Length of a conditional directive line (#if #ifdef #ifndef #elif #else
 * #endif ...) starting at p, continuation lines included; 0 for other lines. */
size_t kb_compile__directive_len(const char *p, const char *end)
{
	const char *q = p;
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q >= end || *q++ != '#')
		return 0;
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (end - q < 2 || !(!strncmp(q, "if", 2) || !strncmp(q, "el", 2) ||
			     (end - q >= 5 && !strncmp(q, "endif", 5))))
		return 0;
	while (q < end && *q != '\n')
		q += (*q == '\\' && q + 1 < end && q[1] == '\n') ? 2 : 1;
	return (size_t)(q - p) + (q < end);
}

/* Attributes the CUDA grammar does not know, and whether each takes an
 * argument list: `__global__ void __cluster_dims__(2, 1, 1) k(...)` would
 * otherwise read as a call, and the kernel would be lost. */
static const struct {
	const char *name;
	bool args;
} unknown_attrs[] = {
	{"__cluster_dims__", true}, {"__maxnreg__", true}, {"__block_size__", true},
	{"__grid_constant__", false},
};

static bool ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Blanks text[at..] from an attribute's name through its argument list
 * (newlines kept, so every byte and line keeps its place). */
static void blank_attr(char *text, size_t len, size_t at, size_t name_len, bool args)
{
	size_t e = at + name_len;
	if (args) {
		size_t p = e;
		while (p < len && (text[p] == ' ' || text[p] == '\t' || text[p] == '\n'))
			p++;
		if (p < len && text[p] == '(') {
			int depth = 0;
			for (e = p; e < len; e++) {
				depth += text[e] == '(' ? 1 : text[e] == ')' ? -1 : 0;
				if (depth == 0) {
					e++;
					break;
				}
			}
		}
	}
	for (size_t i = at; i < e && i < len; i++)
		if (text[i] != '\n')
			text[i] = ' ';
}

/* A copy of text with unknown_attrs blanked, or NULL when it has none. */
char *kb_compile__mask_unknown_attrs(const char *text, size_t len)
{
	char *out = NULL;
	for (size_t i = 0; i < KB_ARRAY_LEN(unknown_attrs); i++) {
		size_t n = strlen(unknown_attrs[i].name);
		for (const char *p = text; (p = strstr(p, unknown_attrs[i].name)); p += n) {
			size_t at = (size_t)(p - text);
			if ((at > 0 && ident_char(text[at - 1])) || (at + n < len && ident_char(text[at + n])))
				continue;
			if (!out) {
				out = kb_xmalloc(len + 1);
				memcpy(out, text, len + 1);
			}
			blank_attr(out, len, at, n, unknown_attrs[i].args);
		}
	}
	return out;
}

