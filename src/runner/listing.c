/*
 * listing.c - where a sampled or measured instruction lands in the build:
 * its SASS text and its source line (code inlined from another file counted
 * at the kernel's line that called it), from the unit's nvdisasm listing.
 * run.c's hot spots and sassm.c's SASS metrics both place their entries
 * here; it knows neither.
 */
#include "runner_int.h"

#include <stdlib.h>
#include <string.h>

/* Whether line info's file is the unit's source file. */
static bool own_file(const kb_compile_unit *u, const char *file)
{
	return file && !strcmp(kb_basename(file), kb_basename(u->src.path));
}

/* See runner_int.h. */
char *kb_runner__source_line(const kb_compile_unit *u, const char *file, int line)
{
	if (!own_file(u, file))
		return kb_xstrdup("");
	char *l = kb_src_line(u->src.text, line);
	if (!l)
		return kb_xstrdup("");
	char *p = l;
	while (*p == ' ' || *p == '\t')
		p++;
	char *t = kb_xstrdup(p);
	free(l);
	return t;
}

/* See runner_int.h. */
const kb_sass_insn *kb_runner__insn_at(const kb_compile_unit *u, const char *fn, uint64_t pc)
{
	for (int f = 0; f < u->build.sass.nfuncs; f++) {
		const kb_sass_func *sf = &u->build.sass.funcs[f];
		if (strcmp(sf->name, fn))
			continue;
		for (int i = 0; i < sf->n; i++)
			if (sf->v[i].addr == pc)
				return &sf->v[i];
	}
	return NULL;
}

/* See runner_int.h. */
bool kb_runner__place(const kb_compile_unit *u, json_t *e, kb_runner__where *w)
{
	const kb_sass_insn *in = kb_runner__insn_at(u, json_string_value(json_object_get(e, "function")),
						    (uint64_t)json_integer_value(json_object_get(e, "pc")));
	if (!in)
		return false;
	json_object_set_new(e, "sass", json_sprintf("%s%s%s %s", in->pred ? in->pred : "",
						    in->pred ? " " : "", in->opcode,
						    in->operands ? in->operands : ""));
	if (!in->line)
		return false;
	/* Code inlined from another file (a header, the tile prologue's
	 * helpers) counts for the kernel's line that called it when the line
	 * info says (nvdisasm -gi); else it is an entry of its own, named by
	 * its file. */
	int own_line = kb_compile_sass_src_line(in, u->src.path);
	w->own = own_line > 0;
	w->file = w->own ? u->src.path : in->file;
	w->line = w->own ? own_line : in->line;
	json_object_set_new(e, "line", json_integer(w->line));
	return true;
}
