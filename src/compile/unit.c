/*
 * unit.c - one kernel file taken through the whole compile layer: source,
 * spec, --option words, kernel discovery, binding, build.  It owns the order of the steps
 * and which problems are errors (a file without //! lines compiles but is
 * not bound; one with a spec must bind; a `//! require` line that is false
 * at the values given is a warning, and the runner's reason not to compile
 * or run).  The CLI and the runner both call it, so `kbench compile` and
 * `kbench run` judge a file the same way.
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

/* A .tile file's compiler messages show its own lines: NVRTC saw the
 * generated CUDA, whose #line directives name the .tile file. */
static void retext_diags(kb_diags *d, const kb_source *tile)
{
	for (int i = 0; i < d->n; i++) {
		kb_diag *g = &d->v[i];
		if (!g->file || strcmp(g->file, tile->path) || g->line <= 0)
			continue;
		free(g->src_line);
		g->src_line = kb_src_line(tile->text, g->line);
		g->col = 0; /* NVRTC's column is in the generated line, not this one */
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
		if (kb_compile_option_check(r->src.kind, o->options[i], &why) == 0) {
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

/* Whether the file has a `//! launch` line (want "launch"), or any `//!`
 * line (want NULL). */
static bool has_spec_line(const char *text, const char *want)
{
	for (const char *p = text; (p = strstr(p, "//!")); p += 3) {
		const char *q = p + 3;
		while (*q == ' ' || *q == '\t')
			q++;
		size_t n = want ? strlen(want) : 0;
		if (!want || (!strncmp(q, want, n) && (q[n] == ' ' || q[n] == '\t')))
			return true;
	}
	return false;
}

/* The value of a `//! arch X` line of text, or NULL. */
static char *spec_arch(const char *text)
{
	for (const char *p = text; (p = strstr(p, "//!")); p += 3) {
		const char *q = p + 3 + strspn(p + 3, " \t");
		if (strncmp(q, "arch", 4) || (q[4] != ' ' && q[4] != '\t'))
			continue;
		q += 4 + strspn(q + 4, " \t");
		size_t n = strcspn(q, " \t\r\n");
		return n ? kb_xasprintf("%.*s", (int)n, q) : NULL;
	}
	return NULL;
}

/* The kernel a .tile file's spec runs: its only one, or the one its
 * `//! kernel NAME` line names; NULL when that is not known. */
static const kb_tile_kernel *launched_kernel(const char *text, const kb_tile_out *out)
{
	if (out->nkernels == 1)
		return &out->kernels[0];
	for (const char *p = text; (p = strstr(p, "//!")); p += 3) {
		const char *q = p + 3;
		q += strspn(q, " \t");
		if (strncmp(q, "kernel", 6) || (q[6] != ' ' && q[6] != '\t'))
			continue;
		q += 6;
		q += strspn(q, " \t");
		size_t n = strcspn(q, " \t\r\n");
		for (int i = 0; i < out->nkernels; i++)
			if (strlen(out->kernels[i].name) == n && !strncmp(out->kernels[i].name, q, n))
				return &out->kernels[i];
		return NULL;
	}
	return NULL;
}

/* A .tile file: lowered to CUDA C (r->gen, what discovery, binding and the
 * compiler see); *spec_src gets the text the spec is read from: the file,
 * with a `//! launch` line from the kernel's grid() and threads() when it
 * has a spec but no launch line, and the `//! tensormap` lines the lowering
 * asks for (a wgmma dot's TMA copies); *out keeps the kernels as the .tile file
 * declares them.  Returns 0 or KB_ESPEC (errors in r->diags at the .tile
 * lines). */
static int lower_tile(kb_compile_unit *r, const kb_compile_unit_opts *o, kb_source *spec_src,
		      kb_tile_out *out)
{
	/* the target as kb_compile_unit_run picks it (a dot lowers to wgmma on sm_90a) */
	char *arch = o->arch ? kb_xstrdup(o->arch) : spec_arch(r->src.text);
	if (!arch)
		arch = o->default_arch ? kb_xstrdup(o->default_arch) : kb_compile_default_arch();
	kb_tile_opts to = {.defines = o->defines, .ndefines = o->ndefines, .arch = arch};
	int rc = kb_tile_compile(r->src.path, r->src.text, r->src.len, &to, out, &r->diags);
	free(arch);
	r->ms_tile = out->ms;
	kb_buf text = KB_BUF_INIT;
	kb_buf_catn(&text, r->src.text, r->src.len);
	const kb_tile_kernel *k = launched_kernel(r->src.text, out);
	if (rc == KB_OK && k && k->grid[0] && k->threads && has_spec_line(r->src.text, NULL) &&
	    !has_spec_line(r->src.text, "launch")) {
		kb_buf_catf(&text, "\n//! launch grid=(%s%s%s%s%s) block=(%d)", k->grid[0],
			    k->grid[1] ? ", " : "", k->grid[1] ? k->grid[1] : "", k->grid[2] ? ", " : "",
			    k->grid[2] ? k->grid[2] : "", k->threads);
		if (k->smem)
			kb_buf_catf(&text, " smem=%lld", (long long)k->smem);
		kb_buf_cat(&text, "\n");
	}
	if (rc == KB_OK && k && k->spec && has_spec_line(r->src.text, NULL))
		kb_buf_catf(&text, "\n%s", k->spec); /* the TMA tensormaps of a wgmma dot */
	kb_compile_source_init(spec_src, r->src.path, text.s ? text.s : "", KB_SRC_TILE);
	kb_buf_free(&text);
	if (rc == KB_OK)
		kb_compile_source_init(&r->gen, r->src.path, out->cuda.s ? out->cuda.s : "", KB_SRC_CUDA);
	return rc;
}

/* A .tile file's tuned consts default to their values in the file (a .cu
 * file's to the tune line's first value, a -D the source lacks); and a
 * launch line of the user's must give a dot kernel its shared memory. */
static int tune_defaults(kb_compile_unit *r, const kb_tile_out *t)
{
	int rc = KB_OK;
	for (int i = 0; i < t->nkernels; i++) {
		const kb_tile_kernel *k = &t->kernels[i];
		for (int j = 0; j < k->nconsts; j++) {
			char *name = kb_xstrdup(k->consts[j]);
			char *eq = strchr(name, '=');
			*eq = '\0';
			kb_compile_spec_set_tune(&r->spec, name, eq + 1);
			free(name);
		}
		if (k->smem && r->spec.launch.present && !r->spec.launch.smem) {
			rc = KB_ESPEC;
			kb_diag_add(&r->diags, KB_DIAG_ERROR, r->src.path, r->src.text, r->spec.launch.loc.line,
				    1, 9, "%s needs %lld bytes of dynamic shared memory (its dot operands): add "
				    "smem=%lld to the launch line, or drop the line (kbench writes it from "
				    "grid() and threads())", k->name, (long long)k->smem, (long long)k->smem);
		}
	}
	return rc;
}

/* A `//! ref kernel` runs with the tested kernel's launch, so a .tile
 * reference's threads(N), its __launch_bounds__(N), must be that block:
 * a threads(128) reference launched with 512 threads fails to launch. */
static int check_ref_threads(kb_compile_unit *r, const kb_tile_out *t, const kb_source *spec_src)
{
	const kb_spec_ref *ref = &r->spec.ref;
	const kb_spec_launch *l = &r->spec.launch;
	long long block = 1;
	if (!ref->present || !ref->is_kernel || !ref->fn || !l->present)
		return KB_OK;
	for (int i = 0; i < l->block_n; i++) {
		kb_value v;
		if (kb_compile_spec_eval(&r->spec, l->block[i], &v, spec_src, NULL) < 0)
			return KB_OK; /* bind reports it */
		block *= v.is_float ? (long long)v.f : (long long)v.i;
	}
	for (int i = 0; i < t->nkernels; i++) {
		const kb_tile_kernel *k = &t->kernels[i];
		if (strcmp(k->name, ref->fn) || !k->threads || k->threads == block)
			continue;
		kb_diag_add(&r->diags, KB_DIAG_ERROR, r->src.path, r->src.text, ref->loc.line,
			    ref->loc.col, (int)strlen(ref->fn), "reference kernel %s is compiled for "
			    "threads(%d) (its __launch_bounds__), but a reference kernel runs with the "
			    "launch of the kernel under test, %lld threads a block: give it threads(%lld)",
			    k->name, k->threads, block, block);
		return KB_ESPEC;
	}
	return KB_OK;
}

/* Discovery read the generated CUDA; binding messages should point at the
 * kernel and its parameters where the .tile file declares them. */
static void place_tile_kernels(kb_kernels *ks, const kb_tile_out *t)
{
	for (int i = 0; i < ks->n; i++)
		for (int j = 0; j < t->nkernels; j++) {
			const kb_tile_kernel *tk = &t->kernels[j];
			if (strcmp(ks->v[i].name, tk->name))
				continue;
			ks->v[i].line = tk->line;
			for (int a = 0; a < ks->v[i].nparams && a < tk->nparams; a++) {
				ks->v[i].params[a].loc.line = tk->params[a].line;
				ks->v[i].params[a].loc.col = tk->params[a].col;
			}
		}
}

/* The require lines at these args and tune values: a false one is a warning
 * at its line and r->unsupported (a run of them answers UNSUPPORTED); one
 * that cannot be evaluated here (a --arg of 0 divides by zero) is an error. */
static int check_requires(kb_compile_unit *r, const kb_compile_unit_opts *o)
{
	int which = -1;
	if (o->sm_count > 0)
		r->spec.sm_count = o->sm_count;
	int rc = kb_compile_spec_requires(&r->spec, &r->src, &r->unsupported, &which, &r->diags);
	if (rc != KB_EUNSUP)
		return rc;
	const kb_spec_require *q = &r->spec.requires[which];
	r->unsupported_loc = q->loc;
	kb_diag_add(&r->diags, KB_DIAG_WARNING, r->src.path, r->src.text, q->loc.line, q->loc.col,
		    q->len, "%s: a run at these values is UNSUPPORTED (not launched)", r->unsupported);
	return KB_OK;
}

/* A launch the spec gives that cannot happen on the target (a block over
 * its limit, more shared memory than it has) or a launch line that cannot
 * be evaluated at these values is an error at the line: a compile that
 * can never run is not a success.  Without a build (check_only) the block
 * alone is judged, at arch's limits.  Returns 0 or KB_ESPEC. */
static int check_launch(kb_compile_unit *r, const char *arch)
{
	const kb_spec_launch *l = &r->spec.launch;
	const kb_build_kernel *bk = NULL;
	for (int i = 0; r->chosen && i < r->build.nkernels; i++)
		if (!strcmp(r->build.kernels[i].name, r->chosen->name))
			bk = &r->build.kernels[i];
	if (!r->has_spec || !l->present || (bk && !r->build.ok))
		return KB_OK;
	kb_launch_dims d;
	if (kb_compile_spec_launch_dims(&r->spec, &r->src, &d, &r->diags) < 0)
		return KB_ESPEC;
	kb_occupancy own;
	const kb_occupancy *occ = bk && bk->has_occupancy ? &bk->occ : NULL;
	int sm;
	kb_resources none = {0};
	if (!bk && kb_compile_arch_parse(arch, &sm) == 0 && kb_compile_arch_limits(sm)) {
		kb_compile_occupancy(kb_compile_arch_limits(sm), &none,
				     (int)(d.block[0] * d.block[1] * d.block[2]), (int)d.smem, &own);
		occ = &own;
	}
	if (!occ || occ->limiter != KB_LIMIT_INVALID)
		return KB_OK;
	kb_diag_add(&r->diags, KB_DIAG_ERROR, r->src.path, r->src.text, l->loc.line, l->loc.col, 6,
		    "CANNOT LAUNCH on %s: %s", arch, occ->why);
	return KB_ESPEC;
}

/* Spec, --option and kernel discovery; returns the time it took in ms. */
static double parse_file(kb_compile_unit *r, const kb_compile_unit_opts *o, const char **ok,
			 int *nok, kb_err *err, int *rc)
{
	double t0 = kb_now_ms();
	kb_source tile_spec = {0};
	kb_tile_out tile = {0};
	int lowered = r->src.kind == KB_SRC_TILE ? lower_tile(r, o, &tile_spec, &tile) : KB_OK;
	const kb_source *spec_src = r->src.kind == KB_SRC_TILE ? &tile_spec : &r->src;
	int src = kb_compile_spec_parse(spec_src, &r->spec, &r->diags);
	if (src == 0 && r->src.kind == KB_SRC_TILE)
		src = tune_defaults(r, &tile);
	if (src == 0)
		src = apply_overrides(r, o);
	if (check_cli_options(r, o, ok, nok) < 0)
		src = KB_ESPEC;
	r->has_spec = r->spec.nlines > 0;
	int disc = r->src.kind == KB_SRC_TILE
		   ? (lowered < 0 ? KB_ESPEC : kb_compile_discover_cuda(&r->gen, &r->kernels, err))
		   : r->src.kind == KB_SRC_PTX
		   ? kb_compile_discover_ptx(&r->src, &r->kernels, &r->diags, err)
		   : kb_compile_discover_cuda(&r->src, &r->kernels, err);
	if (r->src.kind == KB_SRC_TILE && disc >= 0)
		place_tile_kernels(&r->kernels, &tile);
	/* KB_ECOMPILE from PTX discovery: its diags say what is wrong. */
	if (disc < 0 && disc != KB_ESPEC && disc != KB_ECOMPILE)
		*rc = disc;
	else if (src < 0 || disc < 0)
		*rc = KB_ESPEC;
	/* Binding checks a spec against the kernels; a file without any //!
	 * lines is compiled as is (it can be compiled, not run). */
	if (*rc == KB_OK && r->has_spec &&
	    kb_compile_bind(&r->spec, &r->kernels, spec_src, &r->chosen, &r->diags) < 0)
		*rc = KB_ESPEC;
	if (*rc == KB_OK && r->has_spec && check_requires(r, o) < 0)
		*rc = KB_ESPEC;
	if (*rc == KB_OK && r->src.kind == KB_SRC_TILE && check_ref_threads(r, &tile, spec_src) < 0)
		*rc = KB_ESPEC;
	kb_compile_source_free(&tile_spec);
	kb_tile_out_free(&tile);
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
	char *arch = opts->arch ? kb_xstrdup(opts->arch) : r->spec.arch ? kb_xstrdup(r->spec.arch)
		     : opts->default_arch ? kb_xstrdup(opts->default_arch) : kb_compile_default_arch();
	kb_build_opts bo = {
		.arch = arch, .defines = (char **)opts->defines, .ndefines = opts->ndefines,
		.options = ok, .noptions = nok, .no_cache = opts->no_cache,
		.want_sass = opts->want_sass, .prebuilt = opts->prebuilt, .lowered = r->gen.text != NULL,
	};
	if (r->src.kind == KB_SRC_TILE && !r->gen.text) { /* did not lower: errors said why */
		free(arch);
		free(ok);
		kb_diag_sort(&r->diags);
		return r->status = KB_ESPEC;
	}
	int given = 0;
	for (int i = 0; i < opts->noptions; i++)
		given += opts->options[i] != NULL;
	/* a refused --option is refused before anything compiles */
	if (rc == KB_OK && opts->check_only && !r->unsupported && check_launch(r, arch) < 0)
		rc = KB_ESPEC;
	if ((rc == KB_OK && r->unsupported && opts->skip_unsupported) || opts->check_only ||
	    nok < given) { /* it will not run */
		r->build.arch = arch;
		r->build.ms_parse = r->build.ms_total = ms_parse;
		free(ok);
		kb_diag_sort(&r->diags);
		return r->status = nok < given ? KB_ESPEC : rc;
	}
	kb_source pinned = {0};
	if (r->gen.text) {
		kb_buf pin = KB_BUF_INIT;
		kb_tile_pin_lines(r->gen.text, r->src.path, &pin);
		kb_compile_source_init(&pinned, r->src.path, pin.s ? pin.s : "", KB_SRC_CUDA);
		kb_buf_free(&pin);
	}
	int brc = kb_compile_build(r->gen.text ? &pinned : &r->src, &r->spec, &r->kernels, &bo,
				   &r->build, err);
	kb_compile_source_free(&pinned);
	free(arch);
	free(ok);
	r->build.ms_parse = ms_parse;
	r->build.ms_total += ms_parse;
	if (r->gen.text)
		retext_diags(&r->build.diags, &r->src);
	copy_diags(&r->diags, &r->build.diags);
	kb_diag_sort(&r->diags);
	if (brc < 0 && brc != KB_ECOMPILE)
		return brc;
	if (rc == KB_OK && brc == KB_OK && check_launch(r, r->build.arch) < 0)
		rc = KB_ESPEC;
	kb_diag_sort(&r->diags);
	r->status = brc == KB_ECOMPILE ? KB_ECOMPILE : rc;
	return r->status;
}

void kb_compile_unit_free(kb_compile_unit *r)
{
	kb_compile_build_free(&r->build);
	kb_compile_kernels_free(&r->kernels);
	kb_compile_spec_free(&r->spec);
	kb_compile_source_free(&r->src);
	kb_compile_source_free(&r->gen);
	kb_diags_free(&r->diags);
	free(r->unsupported);
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
