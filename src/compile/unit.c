/*
 * unit.c - one kernel file taken through the whole compile layer: source,
 * spec, --option words, kernel discovery, binding, build.  It owns the order of the steps
 * and which problems are errors (a file without //! lines compiles but is
 * not bound; one with a spec must bind).  The CLI and the runner both call
 * it, so `kbench compile` and `kbench run` judge a file the same way.
 */
#include "compile_int.h"

#include <stdlib.h>
#include <string.h>

static void copy_diags(kb_diags *dst, const kb_diags *src)
{
	for (int i = 0; i < src->n; i++) {
		const kb_diag *g = &src->v[i];
		kb_diag *c = KB_PUSH(dst->v, dst->n, dst->cap);
		*c = *g;
		c->file = kb_xstrdup(g->file);
		c->msg = kb_xstrdup(g->msg);
		c->src_line = g->src_line ? kb_xstrdup(g->src_line) : NULL;
	}
}

/* Sets each override; an unknown name is an error at no place in the file. */
static int apply_overrides(kb_compile_unit *r, const kb_compile_unit_opts *o)
{
	int rc = KB_OK;
	/* -D NAME=V of a tuned NAME: launch and bytes see the value compiled in */
	for (int i = 0; i < o->ndefines; i++) {
		const char *eq = strchr(o->defines[i], '=');
		char *name = kb_xstrndup(o->defines[i], eq ? (size_t)(eq - o->defines[i]) : strlen(o->defines[i]));
		kb_compile_spec_set_tune(&r->spec, name, eq ? eq + 1 : "1");
		free(name);
	}
	for (int i = 0; i < o->nargs; i++)
		if (kb_compile_spec_set_arg(&r->spec, o->args[i].name, o->args[i].value) < 0) {
			kb_diag_add(&r->diags, KB_DIAG_ERROR, r->src.path, NULL, 0, 0, 1,
				    "--arg %s: the spec has no `//! arg %s`", o->args[i].name,
				    o->args[i].name);
			rc = KB_ESPEC;
		}
	return rc;
}

/* The --option words kbench takes (options.c), in *ok; each refused one is
 * an error naming it (it has no place in the file) and is left out. */
static int check_cli_options(kb_compile_unit *r, const kb_compile_unit_opts *o, const char **ok,
			     int *nok)
{
	int rc = KB_OK;
	*nok = 0;
	for (int i = 0; i < o->noptions; i++) {
		char *why;
		if (!o->options[i])
			continue;
		if (kb_compile__option_check(r->src.kind, o->options[i], &why) == 0) {
			ok[(*nok)++] = o->options[i];
			continue;
		}
		kb_diag_add(&r->diags, KB_DIAG_ERROR, r->src.path, NULL, 0, 0, 1,
			    "--option %s (command line): %s", o->options[i], why);
		free(why);
		rc = KB_ESPEC;
	}
	return rc;
}

/* Spec, --option and kernel discovery; returns the time it took in ms. */
static double parse_file(kb_compile_unit *r, const kb_compile_unit_opts *o, const char **ok,
			 int *nok, kb_err *err, int *rc)
{
	double t0 = kb_now_ms();
	int src = kb_compile_spec_parse(&r->src, &r->spec, &r->diags);
	if (src == 0)
		src = apply_overrides(r, o);
	if (check_cli_options(r, o, ok, nok) < 0)
		src = KB_ESPEC;
	r->has_spec = r->spec.nlines > 0;
	int disc = r->src.kind == KB_SRC_PTX
		   ? kb_compile_discover_ptx(&r->src, &r->kernels, &r->diags, err)
		   : kb_compile_discover_cuda(&r->src, &r->kernels, err);
	/* KB_ECOMPILE from PTX discovery: its diags say what is wrong. */
	if (disc < 0 && disc != KB_ESPEC && disc != KB_ECOMPILE)
		*rc = disc;
	else if (src < 0 || disc < 0)
		*rc = KB_ESPEC;
	/* Binding checks a spec against the kernels; a file without any //!
	 * lines is compiled as is (it can be compiled, not run). */
	if (*rc == KB_OK && r->has_spec &&
	    kb_compile_bind(&r->spec, &r->kernels, &r->src, &r->chosen, &r->diags) < 0)
		*rc = KB_ESPEC;
	return kb_now_ms() - t0;
}

int kb_compile_unit_run(const char *path, const char *text, const kb_compile_unit_opts *opts,
			kb_compile_unit *r, kb_err *err)
{
	memset(r, 0, sizeof *r);
	int rc = KB_OK;
	if ((rc = kb_compile_source_open(&r->src, path, text, err)) < 0)
		return rc;
	const char **ok = kb_xcalloc((size_t)opts->noptions + 1, sizeof *ok);
	int nok = 0;
	double ms_parse = parse_file(r, opts, ok, &nok, err, &rc);
	if (rc < 0 && rc != KB_ESPEC) {
		free(ok);
		return rc;
	}
	char *arch = opts->arch ? kb_xstrdup(opts->arch) : kb_compile_default_arch();
	kb_build_opts bo = {
		.arch = arch, .defines = (char **)opts->defines, .ndefines = opts->ndefines,
		.options = ok, .noptions = nok, .no_cache = opts->no_cache,
		.want_sass = opts->want_sass,
	};
	int brc = kb_compile_build(&r->src, &r->spec, &r->kernels, &bo, &r->build, err);
	free(arch);
	free(ok);
	r->build.ms_parse = ms_parse;
	r->build.ms_total += ms_parse;
	copy_diags(&r->diags, &r->build.diags);
	kb_diag_sort(&r->diags);
	if (brc < 0 && brc != KB_ECOMPILE)
		return brc;
	r->status = brc == KB_ECOMPILE ? KB_ECOMPILE : rc;
	return r->status;
}

void kb_compile_unit_free(kb_compile_unit *r)
{
	kb_compile_build_free(&r->build);
	kb_compile_kernels_free(&r->kernels);
	kb_compile_spec_free(&r->spec);
	kb_compile_source_free(&r->src);
	kb_diags_free(&r->diags);
	memset(r, 0, sizeof *r);
}


/* The compile facts of the unit's kernel, small enough to travel with every
 * Result and to sit in a variant's note: no SASS, PTX or log; the chosen
 * kernel's resources and occupancy under "kernel". A new reference. */
json_t *kb_compile_unit_summary_json(const kb_compile_unit *u)
{
	json_t *b = kb_compile_build_json(&u->build, false, false);
	json_object_del(b, "log");
	json_t *ks = json_object_get(b, "kernels");
	for (size_t i = 0; i < json_array_size(ks); i++) {
		json_t *k = json_array_get(ks, i);
		if (u->chosen && !strcmp(json_string_value(json_object_get(k, "name")), u->chosen->name))
			json_object_set(b, "kernel", k);
	}
	json_object_del(b, "kernels");
	return b;
}
