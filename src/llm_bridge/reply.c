/*
 * reply.c - what an answer proposes: its fenced code blocks (``` lines),
 * each a whole file or a unified diff, and the one candidate text made of
 * them.  Nothing here applies anything to a file or trusts a block: the
 * candidate is a string the caller compiles, checks and times like any
 * other variant.  The spec check is here because a model that edits the
 * `//!` lines can make a kernel "pass" by changing what it is checked
 * against (a looser tol, a smaller shape, another reference); only the
 * launch line may change, since a new block size legitimately does.
 */
#include "llm_bridge_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kb_llm_verdict_name(kb_llm_verdict v)
{
	static const char *const names[] = {"ok", "no code", "diff does not apply", "spec changed"};
	return names[v];
}

/* The line at s (up to '\n' or NUL): its length. */
static size_t line_len(const char *s)
{
	return strcspn(s, "\n");
}

/* A fence line: optional blanks, then ```; *lang gets what follows. */
static bool fence(const char *s, size_t n, char *lang, size_t lang_n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (n - i < 3 || strncmp(s + i, "```", 3))
		return false;
	i += 3;
	size_t j = 0;
	while (i < n && !isspace((unsigned char)s[i]) && j + 1 < lang_n)
		lang[j++] = (char)tolower((unsigned char)s[i++]);
	lang[j] = 0;
	return true;
}

static bool is_diff(const char *lang, const char *text)
{
	return !strcmp(lang, "diff") || !strcmp(lang, "patch") || !strncmp(text, "--- ", 4) ||
	       !strncmp(text, "@@ ", 3) || !strncmp(text, "diff --git", 10);
}

int kb_llm_blocks(const char *answer, kb_llm_block **blocks)
{
	kb_llm_block *v = NULL;
	int n = 0, cap = 0;
	const char *s = answer ? answer : "";
	while (*s) {
		size_t len = line_len(s);
		char lang[24];
		if (!fence(s, len, lang, sizeof lang)) {
			s += len + (s[len] == '\n');
			continue;
		}
		const char *body = s + len + (s[len] == '\n'), *e = body;
		char dummy[24];
		while (*e && !fence(e, line_len(e), dummy, sizeof dummy))
			e += line_len(e) + (e[line_len(e)] == '\n');
		if (!*e)
			break; /* an unclosed block (a cut-off answer) proposes nothing */
		kb_llm_block *b = KB_PUSH(v, n, cap);
		snprintf(b->lang, sizeof b->lang, "%s", lang);
		b->text = kb_xstrndup(body, (size_t)(e - body));
		b->len = (size_t)(e - body);
		b->kind = is_diff(lang, b->text) ? KB_LLM_BLOCK_DIFF : KB_LLM_BLOCK_FILE;
		s = e + line_len(e) + (e[line_len(e)] == '\n');
	}
	*blocks = v;
	return n;
}

void kb_llm_blocks_free(kb_llm_block *blocks, int n)
{
	for (int i = 0; i < n; i++)
		free(blocks[i].text);
	free(blocks);
}

/* The spec lines of text but `launch` lines, one per line, into out. */
static void spec_lines(const char *text, kb_buf *out)
{
	for (const char *s = text; *s;) {
		size_t n = line_len(s);
		const char *t = s;
		while (*t == ' ' || *t == '\t')
			t++;
		if (!strncmp(t, "//!", 3)) {
			const char *w = t + 3;
			while (*w == ' ' || *w == '\t')
				w++;
			if (strncmp(w, "launch", 6))
				kb_buf_catf(out, "%.*s\n", (int)(n - (size_t)(t - s)), t);
		}
		s += n + (s[n] == '\n');
	}
	if (!out->s)
		kb_buf_cat(out, "");
}

/* Whether cand keeps base's spec; why gets the first difference. */
static bool keeps_spec(const char *base, const char *cand, kb_buf *why)
{
	kb_buf a = KB_BUF_INIT, b = KB_BUF_INIT;
	spec_lines(base, &a);
	spec_lines(cand, &b);
	bool ok = !strcmp(a.s, b.s);
	if (!ok && why) {
		const char *p = a.s, *q = b.s;
		while (*p && *p == *q)
			p++, q++;
		while (p > a.s && p[-1] != '\n')
			p--;
		kb_buf_catf(why, "the proposal changes the spec (//! lines other than launch); "
			    "first difference at: %.*s", (int)line_len(*p ? p : b.s), *p ? p : b.s);
	}
	kb_buf_free(&a);
	kb_buf_free(&b);
	return ok;
}

static bool holds_kernel(const kb_llm_block *b)
{
	return strstr(b->text, "__global__") || strstr(b->text, ".entry") ||
	       strstr(b->text, "kernel ");
}

kb_llm_verdict kb_llm_candidate(const char *base, const char *answer, char **text, kb_buf *why)
{
	kb_llm_block *bs = NULL;
	int n = kb_llm_blocks(answer, &bs);
	kb_llm_verdict v = KB_LLM_NO_CODE;
	*text = NULL;
	for (int i = n - 1; i >= 0 && v == KB_LLM_NO_CODE; i--) {
		if (bs[i].kind == KB_LLM_BLOCK_FILE && !holds_kernel(&bs[i]))
			continue;
		kb_buf t = KB_BUF_INIT;
		kb_err err = {0};
		if (bs[i].kind == KB_LLM_BLOCK_DIFF && kb_llm_patch(base, bs[i].text, &t, &err) < 0) {
			v = KB_LLM_NOT_APPLYING;
			if (why)
				kb_buf_catf(why, "the diff does not apply: %s", err.msg);
		} else if (bs[i].kind == KB_LLM_BLOCK_FILE) {
			kb_buf_catn(&t, bs[i].text, bs[i].len);
		}
		if (t.s)
			v = keeps_spec(base, t.s, why) ? KB_LLM_OK : KB_LLM_SPEC_CHANGED;
		if (v == KB_LLM_OK)
			*text = kb_buf_detach(&t);
		kb_buf_free(&t);
	}
	if (v == KB_LLM_NO_CODE && why)
		kb_buf_catf(why, "the answer has no code block with a kernel (%d block%s)", n,
			    n == 1 ? "" : "s");
	kb_llm_blocks_free(bs, n);
	return v;
}

void kb_llm_gist(const char *answer, char *out, size_t n)
{
	bool in_code = false;
	out[0] = 0;
	for (const char *s = answer ? answer : ""; *s;) {
		size_t len = line_len(s);
		char lang[24];
		if (fence(s, len, lang, sizeof lang)) {
			in_code = !in_code;
		} else if (!in_code) {
			const char *t = s, *e = s + len;
			while (t < e && (isspace((unsigned char)*t) || *t == '#' || *t == '*' || *t == '-' ||
					 *t == '>'))
				t++;
			if (t < e) {
				snprintf(out, n, "%.*s", (int)(e - t), t);
				return;
			}
		}
		s += len + (s[len] == '\n');
	}
}
