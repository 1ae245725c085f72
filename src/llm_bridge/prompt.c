/*
 * prompt.c - prompt templates: plain-text files with {{key}} slots that the
 * caller fills from a variant's facts (app/llm.c says which keys there are).
 * The built-in ones are compiled in, so kbench needs no data files; a file
 * of the same name under $XDG_CONFIG_HOME/kbench/templates/ replaces one
 * (`kbench llm templates --init` writes the built-ins there to edit).
 */
#include "llm_bridge_int.h"

#include <stdlib.h>
#include <string.h>

const char *const kb_llm_template_names[] = {"system", "optimize", "feedback", "ask", NULL};

static const char t_system[] =
	"You are an expert GPU kernel engineer. You improve one CUDA kernel file at a time.\n"
	"The file carries its own harness in `//!` lines (shapes, inputs, reference, tolerance,\n"
	"launch). kbench compiles every proposal, checks it against the reference with fresh\n"
	"random inputs on every trial and poisoned outputs before every launch, re-checks it\n"
	"after timing, and times it with the L2 flushed. A kernel that skips work, writes only\n"
	"some launches, or reuses an earlier launch's output is caught and rejected.\n"
	"\n"
	"Answer with a short explanation, then exactly ONE code block: either the whole new\n"
	"file in a ```cuda block, or a unified diff against the current file in a ```diff\n"
	"block. Keep every `//!` line unchanged, except `//! launch`, which may change.\n";

static const char t_optimize[] =
	"Make this kernel faster without changing what it computes.\n"
	"\n"
	"File: {{file}} (kernel {{kernel}}, {{arch}})\n"
	"\n"
	"## Source\n```{{lang}}\n{{source}}```\n"
	"\n## The spec (keep it)\n{{spec}}\n"
	"\n## Compile log\n{{compile_log}}\n"
	"\n## Resources and occupancy\n{{resources}}\n"
	"\n## Measured\n{{result}}\n"
	"\n## Profile\n{{profile}}\n"
	"\n## Hot lines and their stall reasons\n{{hot}}\n"
	"\n## SASS of the hot region\n{{sass}}\n"
	"\n## What this session tried\n{{history}}\n"
	"\n{{question}}\n";

static const char t_feedback[] =
	"Round {{round}}: {{verdict}}.\n"
	"{{feedback}}\n"
	"\nBest correct so far: {{best}}\n"
	"\n## What this session tried\n{{history}}\n"
	"\nPropose the next change to the best version, as one code block (whole file or diff\n"
	"against the file below).\n"
	"\n```{{lang}}\n{{source}}```\n";

static const char t_ask[] =
	"File: {{file}} (kernel {{kernel}}, {{arch}})\n"
	"\n## Source\n```{{lang}}\n{{source}}```\n"
	"\n## Compile log\n{{compile_log}}\n"
	"\n## Resources and occupancy\n{{resources}}\n"
	"\n## Measured\n{{result}}\n"
	"\n## Hot lines and their stall reasons\n{{hot}}\n"
	"\n## What this session tried\n{{history}}\n"
	"\n{{question}}\n";

const char *kb_llm_template_builtin(const char *name)
{
	static const struct { const char *name, *text; } t[] = {
		{"system", t_system}, {"optimize", t_optimize}, {"feedback", t_feedback},
		{"ask", t_ask},
	};
	for (size_t i = 0; name && i < KB_ARRAY_LEN(t); i++)
		if (!strcmp(name, t[i].name))
			return t[i].text;
	return NULL;
}

char *kb_llm_templates_dir(void)
{
	return kb_llm__config_dir("templates");
}

char *kb_llm_template(const char *name, char **from)
{
	const char *builtin = kb_llm_template_builtin(name);
	if (from)
		*from = NULL;
	if (!builtin)
		return NULL;
	char *dir = kb_llm_templates_dir();
	char *path = kb_xasprintf("%s/%s.md", dir, name);
	free(dir);
	kb_buf b = KB_BUF_INIT;
	if (kb_file_read(path, &b, NULL) == 0) {
		if (from)
			*from = path, path = NULL;
		free(path);
		return kb_buf_detach(&b);
	}
	free(path);
	kb_buf_free(&b);
	return kb_xstrdup(builtin);
}

/* The keys templates may use (docs/llm.md lists what each holds). */
static bool known_key(const char *k)
{
	static const char *const keys[] = {
		"file", "kernel", "arch", "lang", "source", "spec", "compile_log", "resources",
		"result", "profile", "hot", "sass", "history", "question", "round", "verdict",
		"feedback", "best",
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(keys); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

void kb_llm_prompt_fill(const char *tmpl, json_t *vars, kb_buf *out)
{
	const char *s = tmpl;
	while (*s) {
		const char *open = strstr(s, "{{");
		const char *close = open ? strstr(open + 2, "}}") : NULL;
		if (!close) {
			kb_buf_cat(out, s);
			break;
		}
		kb_buf_catn(out, s, (size_t)(open - s));
		char key[64];
		size_t kn = (size_t)(close - open - 2);
		if (kn >= sizeof key || !kn) {
			kb_buf_catn(out, open, (size_t)(close + 2 - open));
			s = close + 2;
			continue;
		}
		memcpy(key, open + 2, kn);
		key[kn] = 0;
		json_t *v = json_object_get(vars, key);
		const char *val = json_string_value(v);
		if (!v && !known_key(key))
			kb_buf_catn(out, open, (size_t)(close + 2 - open));
		else
			kb_buf_cat(out, val && *val ? val : "(none)");
		s = close + 2;
	}
	if (!out->s)
		kb_buf_cat(out, "");
}
