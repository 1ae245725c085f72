/*
 * bind.c - matches a parsed spec (spec.c) to the kernels found in the file
 * (discover.c, ptx.c): which kernel runs, that every parameter is bound by
 * name (pointer -> an `in`/`out` tensor, scalar -> an `arg`), that element
 * types agree, and that a built-in reference gets tensors of the shapes it
 * needs (bind_ref.c).  The C-type-to-dtype table is the spec's
 * (kb_compile_ctype_dtype, spec/spec_tensor.c).  It does not parse //!
 * lines, compile or run anything.
 *
 * Decisions:
 *  - Templates and structs are not checked.
 *  - PTX pointers (.u64 params) carry no element type, so only their
 *    binding is checked; PTX scalars are checked for int vs float.
 *  - An unbound parameter is reported at the parameter when discovery gave
 *    its place, else at the kernel's declaration line, column 1.
 *  - Problems the parser already reported (an undefined name in the ref) are
 *    not reported again; bind is meant to run on a spec that parsed.
 */
#include "compile_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== helpers ===== */

static void KB_PRINTF(7, 8) diag(kb_diags *d, const kb_source *src, kb_diag_level lv,
				 int line, int col, int len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = kb_xvasprintf(fmt, ap);
	va_end(ap);
	kb_diag_add(d, lv, src->path, src->text, line, col, len, "%s", msg);
	free(msg);
}

#define ERR(d, src, line, col, len, ...) diag(d, src, KB_DIAG_ERROR, line, col, len, __VA_ARGS__)
#define WARN(d, src, line, col, len, ...) diag(d, src, KB_DIAG_WARNING, line, col, len, __VA_ARGS__)
#define NOTE(d, src, line, col, len, ...) diag(d, src, KB_DIAG_NOTE, line, col, len, __VA_ARGS__)

/* The length of a kernel name without template arguments and blanks. */
static size_t base_len(const char *name)
{
	size_t n = strcspn(name, "<");
	while (n && (name[n - 1] == ' ' || name[n - 1] == '\t'))
		n--;
	return n;
}

/* Kernels whose name is name[0..n); returns how many and the first. */
static int match_kernels(const kb_kernels *ks, const char *name, size_t n, const kb_kernel **first)
{
	int count = 0;
	for (int i = 0; i < ks->n; i++) {
		if (strlen(ks->v[i].name) == n && !memcmp(ks->v[i].name, name, n)) {
			if (!count++)
				*first = &ks->v[i];
		}
	}
	return count;
}

/* "a, b, c" of the kernels' names. */
static char *kernel_list(const kb_kernels *ks)
{
	kb_buf b = KB_BUF_INIT;
	for (int i = 0; i < ks->n; i++)
		kb_buf_catf(&b, "%s%s", i ? ", " : "", ks->v[i].name);
	return kb_buf_detach(&b);
}

/* ===== which kernel ===== */

/* Where name (n bytes) is followed by "(" in the text outside //! lines, as
 * a declaration kbench's parser did not read would be: 1-based line and
 * column, or false. */
static bool find_call_like(const kb_source *src, const char *name, size_t n, int *line, int *col)
{
	int ln = 1;
	for (const char *p = src->text, *bol = p; *p; p++) {
		if (*p == '\n') {
			ln++, bol = p + 1;
			continue;
		}
		if (p == bol && !strncmp(p, "//!", 3)) { /* the spec's own lines */
			const char *e = strchr(p, '\n');
			if (!e)
				break;
			p = e - 1;
			continue;
		}
		if (strncmp(p, name, n) || (p > src->text && (p[-1] == '_' || isalnum((unsigned char)p[-1]))))
			continue;
		const char *q = p + n;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '(') {
			*line = ln, *col = (int)(p - bol) + 1;
			return true;
		}
	}
	return false;
}

static const kb_kernel *choose_named(const kb_spec *spec, const kb_kernels *ks,
				     const kb_source *src, kb_diags *d)
{
	const kb_kernel *k = NULL;
	size_t n = base_len(spec->kernel);
	int count = match_kernels(ks, spec->kernel, n, &k);
	const kb_loc *l = &spec->kernel_loc;
	if (count == 1)
		return k;
	char *list = kernel_list(ks);
	if (count > 1)
		ERR(d, src, l->line, l->col, (int)n, "'%.*s' names %d kernels (overloads); kbench "
		    "cannot tell them apart", (int)n, spec->kernel, count);
	else if (ks->n)
		ERR(d, src, l->line, l->col, (int)n, "no kernel named '%.*s' in this file (kernels: %s)",
		    (int)n, spec->kernel, list);
	else
		ERR(d, src, l->line, l->col, (int)n, "no kernel named '%.*s': this file has no kernels",
		    (int)n, spec->kernel);
	int dl, dc;
	if (count == 0 && src->kind != KB_SRC_PTX && find_call_like(src, spec->kernel, n, &dl, &dc))
		NOTE(d, src, dl, dc, (int)n, "'%.*s' looks declared here, but kbench could not read it as a "
		     "__global__ function: a macro between its return type and its name hides it (write the "
		     "qualifiers out, under #if where they vary)", (int)n, spec->kernel);
	free(list);
	return NULL;
}

static const kb_kernel *choose_kernel(const kb_spec *spec, const kb_kernels *ks,
				      const kb_source *src, kb_diags *d)
{
	if (spec->kernel)
		return choose_named(spec, ks, src, d);
	if (ks->n == 1)
		return &ks->v[0];
	if (ks->n == 0) {
		ERR(d, src, 1, 1, 1, "no kernel in this file (%s)",
		    src->kind == KB_SRC_PTX ? "no .entry" : "no __global__ function");
		return NULL;
	}
	char *list = kernel_list(ks);
	ERR(d, src, 1, 1, 1, "this file has %d kernels (%s); add `//! kernel NAME` to choose one",
	    ks->n, list);
	free(list);
	return NULL;
}

/* ===== parameters ===== */

typedef struct {
	const kb_spec *spec;
	const kb_kernel *k;
	const kb_source *src;
	kb_diags *d;
	bool ptx;
} bindctx;

/* Where to report about parameter p: its own place, else the declaration. */
static void param_place(const bindctx *c, const kb_param *p, int *line, int *col, int *len)
{
	bool known = p->loc.line > 0 && p->loc.col > 0;
	*line = known ? p->loc.line : c->k->line;
	*col = known ? p->loc.col : 1;
	*len = known ? (int)strlen(p->name) : 1;
}

static const char *param_type(const kb_param *p)
{
	return p->type ? p->type : p->elem ? p->elem : "?";
}

static void unbound_pointer(const bindctx *c, const kb_param *p)
{
	int line, col, len;
	kb_dtype dt;
	param_place(c, p, &line, &col, &len);
	const char *dname = !c->ptx && !kb_compile_ctype_dtype(p->elem, &dt) ? kb_dtype_name(dt)
			    : "DTYPE";
	if (kb_compile_spec_arg(c->spec, p->name))
		ERR(c->d, c->src, line, col, len, "parameter '%s' of %s() is a pointer (%s), but "
		    "'%s' is an arg; declare a tensor: `//! %s %s : %s[...]`", p->name, c->k->name,
		    param_type(p), p->name, p->is_const ? "in" : "in/out", p->name, dname);
	else if (p->is_const)
		ERR(c->d, c->src, line, col, len, "parameter '%s' (%s) of %s() is not bound; add "
		    "`//! in %s : %s[...]`", p->name, param_type(p), c->k->name, p->name, dname);
	else
		ERR(c->d, c->src, line, col, len, "parameter '%s' (%s) of %s() is not bound; add "
		    "`//! in %s : %s[...]` or `//! out %s : %s[...]`", p->name, param_type(p),
		    c->k->name, p->name, dname, p->name, dname);
}

static void bind_pointer(const bindctx *c, const kb_param *p)
{
	const kb_spec_tensor *t = kb_compile_spec_tensor(c->spec, p->name);
	if (!t)
		return unbound_pointer(c, p);
	int len = (int)strlen(t->name);
	kb_dtype dt;
	if (t->is_out && p->is_const)
		ERR(c->d, c->src, t->loc.line, t->loc.col, len, "'%s' is an output, but parameter "
		    "'%s' of %s() is '%s', a pointer to const: the kernel cannot write its output",
		    t->name, p->name, c->k->name, param_type(p));
	if (!c->ptx && !kb_compile_ctype_dtype(p->elem, &dt) && dt != t->dtype)
		ERR(c->d, c->src, t->loc.line, t->loc.col, len, "tensor '%s' is %s, but parameter "
		    "'%s' of %s() is '%s' (%s)", t->name, kb_dtype_name(t->dtype), p->name,
		    c->k->name, param_type(p), kb_dtype_name(dt));
}

/* Whether a scalar parameter holds an integer (C or PTX type); false when unknown. */
static bool integer_param(const bindctx *c, const kb_param *p)
{
	const char *e = p->elem ? p->elem : "";
	kb_dtype dt;
	if (c->ptx) {
		e += *e == '.';
		return e[0] == 'u' || e[0] == 's' || e[0] == 'b';
	}
	return !kb_compile_ctype_dtype(e, &dt) && dt >= KB_DT_I64;
}

/* The values an integer parameter of under 64 bits holds, in *lo..*hi;
 * false for other parameters. */
static bool int_range(const bindctx *c, const kb_param *p, int64_t *lo, int64_t *hi)
{
	const char *e = p->elem ? p->elem : "";
	kb_dtype dt = KB_DT_F32;
	e += c->ptx && *e == '.';
	int bits = c->ptx ? (e[0] && strchr("usb", e[0]) ? atoi(e + 1) : 0)
		   : kb_compile_ctype_dtype(e, &dt) < 0 ? 0 : dt == KB_DT_I32 ? 32
		   : dt == KB_DT_I16 ? 16 : dt == KB_DT_I8 || dt == KB_DT_U8 ? 8 : 0;
	bool uns = c->ptx ? e[0] == 'u'
			  : dt == KB_DT_U8 || strstr(e, "unsigned") || !strncmp(e, "uint", 4);
	if (bits <= 0 || bits >= 64)
		return false;
	*lo = uns ? 0 : -((int64_t)1 << (bits - 1));
	*hi = uns || (c->ptx && e[0] == 'b') ? ((int64_t)1 << bits) - 1 : -*lo - 1;
	return true;
}

static void bind_scalar(const bindctx *c, const kb_param *p)
{
	const kb_spec_arg *a = kb_compile_spec_arg(c->spec, p->name);
	int line, col, len;
	param_place(c, p, &line, &col, &len);
	if (!a && kb_compile_spec_tensor(c->spec, p->name)) {
		ERR(c->d, c->src, line, col, len, "parameter '%s' of %s() is a scalar (%s), but '%s' "
		    "is a tensor; bind it with `//! arg %s = ...`", p->name, c->k->name,
		    param_type(p), p->name, p->name);
		return;
	}
	if (!a) {
		ERR(c->d, c->src, line, col, len, "parameter '%s' (%s) of %s() is not bound; add "
		    "`//! arg %s = ...`", p->name, param_type(p), c->k->name, p->name);
		return;
	}
	kb_value v;
	int64_t lo, hi;
	if (!a->expr || kb_compile_spec_eval(c->spec, a->expr, &v, c->src, NULL))
		return;
	if (v.is_float && integer_param(c, p))
		ERR(c->d, c->src, a->loc.line, a->loc.col, (int)strlen(a->name), "arg '%s' is %g, "
		    "but parameter '%s' of %s() is '%s', an integer", a->name, v.f, p->name,
		    c->k->name, param_type(p));
	else if (!v.is_float && int_range(c, p, &lo, &hi) && (v.i < lo || v.i > hi))
		ERR(c->d, c->src, a->loc.line, a->loc.col, (int)strlen(a->name), "arg '%s' is %lld, "
		    "which overflows parameter '%s' of %s(): '%s' holds %lld..%lld", a->name,
		    (long long)v.i, p->name, c->k->name, param_type(p), (long long)lo, (long long)hi);
}

/* A CUtensorMap parameter takes a `//! tensormap` line, and only it does. */
static bool bind_tmap(const bindctx *c, const kb_param *p)
{
	const kb_spec_tmap *m = kb_compile_spec_tmap(c->spec, p->name);
	bool typed = p->type && strstr(p->type, "CUtensorMap");
	int line, col, len;
	param_place(c, p, &line, &col, &len);
	if (!m && typed && !p->is_pointer)
		ERR(c->d, c->src, line, col, len, "parameter '%s' (%s) of %s() is not bound; add "
		    "`//! tensormap %s : TENSOR box=(...)`", p->name, param_type(p), c->k->name,
		    p->name);
	else if (m && (p->is_pointer || (!c->ptx && !typed)))
		ERR(c->d, c->src, m->loc.line, m->loc.col, (int)strlen(m->name), "'%s' is a "
		    "tensormap, but parameter '%s' of %s() is '%s'; declare it `const "
		    "__grid_constant__ CUtensorMap %s`", m->name, p->name, c->k->name,
		    param_type(p), p->name);
	return m || (typed && !p->is_pointer);
}

/* Whether t reaches the kernel: as a parameter, or through a tensormap that is one. */
static bool tensor_passed(const bindctx *c, const kb_spec_tensor *t)
{
	for (int j = 0; j < c->k->nparams; j++) {
		const kb_spec_tmap *m = kb_compile_spec_tmap(c->spec, c->k->params[j].name);
		if (!strcmp(c->k->params[j].name, t->name) || (m && !strcmp(m->tensor, t->name)))
			return true;
	}
	return false;
}

static void bind_params(const bindctx *c)
{
	for (int i = 0; i < c->k->nparams; i++) {
		const kb_param *p = &c->k->params[i];
		if (bind_tmap(c, p))
			continue;
		if (p->is_pointer)
			bind_pointer(c, p);
		else
			bind_scalar(c, p);
	}
	for (int i = 0; i < c->spec->ntmaps; i++) {
		const kb_spec_tmap *m = &c->spec->tmaps[i];
		bool used = false;
		for (int j = 0; j < c->k->nparams && !used; j++)
			used = !strcmp(c->k->params[j].name, m->name);
		if (!used)
			ERR(c->d, c->src, m->loc.line, m->loc.col, (int)strlen(m->name), "tensormap "
			    "'%s' is not a parameter of %s()", m->name, c->k->name);
	}
	for (int i = 0; i < c->spec->ntensors; i++) {
		const kb_spec_tensor *t = &c->spec->tensors[i];
		bool used = tensor_passed(c, t);
		if (!used)
			WARN(c->d, c->src, t->loc.line, t->loc.col, (int)strlen(t->name), "tensor '%s' "
			     "is not a parameter of %s(); it is allocated but never passed", t->name,
			     c->k->name);
	}
}

static void check_ref(const kb_spec *spec, const kb_kernels *ks, const kb_kernel *chosen,
		      const kb_source *src, kb_diags *d)
{
	const kb_spec_ref *r = &spec->ref;
	if (!r->present || !r->fn)
		return;
	if (!r->is_kernel)
		return kb_compile__bind_builtin(spec, src, d);
	const kb_kernel *k = NULL;
	size_t n = base_len(r->fn);
	if (!match_kernels(ks, r->fn, n, &k)) {
		char *list = kernel_list(ks);
		ERR(d, src, r->loc.line, r->loc.col, (int)n, "reference kernel '%.*s' is not in this "
		    "file (kernels: %s)", (int)n, r->fn, ks->n ? list : "none");
		free(list);
	} else if (k == chosen) {
		WARN(d, src, r->loc.line, r->loc.col, (int)n, "the reference kernel is the kernel "
		     "under test; the check compares it with itself");
	}
}

/* ===== public ===== */

/* Checks the spec against the kernels (see compile.h).  Adds diags; returns 0
 * and sets *chosen (when non-NULL) to the kernel the spec runs, or KB_ESPEC. */
int kb_compile_bind(const kb_spec *spec, const kb_kernels *kernels, const kb_source *src,
		    const kb_kernel **chosen, kb_diags *diags)
{
	int errors = kb_diag_count(diags, KB_DIAG_ERROR), first = diags->n;
	if (chosen)
		*chosen = NULL;
	const kb_kernel *k = choose_kernel(spec, kernels, src, diags);
	if (k) {
		bindctx c = {spec, k, src, diags, src->kind == KB_SRC_PTX};
		bind_params(&c);
	}
	check_ref(spec, kernels, k, src, diags);
	if (diags->n > first) {
		kb_diags mine = {diags->v + first, diags->n - first, diags->n - first};
		kb_diag_sort(&mine);
	}
	if (kb_diag_count(diags, KB_DIAG_ERROR) > errors)
		return KB_ESPEC;
	if (chosen)
		*chosen = k;
	return 0;
}
