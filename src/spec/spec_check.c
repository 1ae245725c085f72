/*
 * spec_check.c - the checks that need the whole spec, run after every //!
 * line was read: each name used in an expression is an arg (and an arg uses
 * only args above it), ref inputs and outputs name tensors, sweeps and tunes
 * name the right kind of thing (require lines see the names launch sees);
 * then every expression is evaluated once so division by zero or a dim that
 * is not an integer is reported up front.  Arg values are stored here.
 *
 * Invariant: a fault is reported once, where it is: an arg that failed, or
 * that uses a later arg, does not make every use of it an error too.
 */
#include "spec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== checks after all lines: names, then values ===== */

/* Names in e must be args; in an arg's expression (self >= 0), args above it. */
static void check_names(kb_spec__parser *P, const kb_expr *e, int self)
{
	if (!e)
		return;
	check_names(P, e->a, self);
	check_names(P, e->b, self);
	if (e->kind != KB_EX_NAME)
		return;
	const kb_spec *s = P->spec;
	int i = kb_spec__find_arg(s, e->name);
	int line = e->loc.line, col = e->loc.col;
	if (i >= 0 && (self < 0 || i < self))
		return;
	if (i < 0 && self < 0 && (kb_spec__find_tune(s, e->name) >= 0 ||
				  !strcmp(e->name, "sm_count")))
		return; /* launch, bytes, flops may use a tune's value and the GPU's SM count; args may not */
	if (i >= 0 && i == self)
		kb_spec__diag_err(P->diags, P->src, line, col, e->len,
				  "arg '%s' refers to itself", e->name);
	else if (i >= 0)
		kb_spec__diag_err(P->diags, P->src, line, col, e->len,
				  "'%s' is used before its `//! arg` line (line %d); an arg may "
				  "use only args above it", e->name, s->args[i].loc.line);
	else if (kb_spec__find_tensor(s, e->name) >= 0)
		kb_spec__diag_err(P->diags, P->src, line, col, e->len,
				  "'%s' is a tensor; expressions may use only args", e->name);
	else
		kb_spec__diag_err(P->diags, P->src, line, col, e->len, "undefined name '%s'%s",
				  e->name, s->nargs ? "" : " (no `//! arg` defines it)");
}

static void check_ref_names(kb_spec__parser *P)
{
	const kb_spec *s = P->spec;
	const kb_spec_ref *r = &s->ref;
	if (!r->present || r->is_kernel)
		return;
	for (int i = 0; i < r->nargs; i++) {
		const kb_ref_arg *a = &r->args[i];
		if (a->key || !kb_spec__is_ident_start(a->text[0]) || !strcmp(a->text, "true") ||
		    !strcmp(a->text, "false") || kb_spec__find_tensor(s, a->text) >= 0 ||
		    kb_spec__find_arg(s, a->text) >= 0)
			continue;
		kb_spec__diag_err(P->diags, P->src, a->loc.line, a->loc.col, (int)strlen(a->text),
				  "undefined name '%s' in ref (not a tensor or an arg)", a->text);
	}
	for (int i = 0; i < r->nouts; i++) {
		int t = kb_spec__find_tensor(s, r->outs[i]);
		const kb_loc *l = &P->out_locs[i];
		int len = (int)strlen(r->outs[i]);
		if (t < 0)
			kb_spec__diag_err(P->diags, P->src, l->line, l->col, len,
					  "ref output '%s' is not a tensor", r->outs[i]);
		else if (!s->tensors[t].is_out)
			kb_spec__diag_err(P->diags, P->src, l->line, l->col, len,
					  "ref output '%s' is an input; declare it with `//! out`",
					  r->outs[i]);
	}
}

static void check_lists(kb_spec__parser *P)
{
	const kb_spec *s = P->spec;
	for (int i = 0; i < s->nsweeps; i++) {
		const kb_spec_list *l = &s->sweeps[i];
		for (int j = 0; j < l->nvalues; j++)
			check_names(P, l->values[j], -1);
		if (kb_spec__find_arg(s, l->name) < 0)
			kb_spec__diag_err(P->diags, P->src, l->loc.line, l->loc.col,
					  (int)strlen(l->name), "sweep of '%s', which is not an arg "
					  "(sweep changes a `//! arg`; use `//! tune` for compile-time "
					  "macros)", l->name);
	}
	for (int i = 0; i < s->ntunes; i++) {
		const kb_spec_list *l = &s->tunes[i];
		if (kb_spec__find_arg(s, l->name) >= 0 || kb_spec__find_tensor(s, l->name) >= 0)
			kb_spec__diag_err(P->diags, P->src, l->loc.line, l->loc.col,
					  (int)strlen(l->name), "tune of '%s', which is %s; tune sets "
					  "compile-time macros (use `//! sweep` for args)", l->name,
					     kb_spec__find_arg(s, l->name) >= 0 ? "an arg" : "a tensor");
	}
}

/* A tensormap describes a tensor of the spec, with one box extent per dim,
 * or fewer: the tensor's leading dims read as one (tensormap.c). */
static void check_tmaps(kb_spec__parser *P)
{
	const kb_spec *s = P->spec;
	for (int i = 0; i < s->ntmaps; i++) {
		const kb_spec_tmap *m = &s->tmaps[i];
		for (int d = 0; d < m->nbox; d++)
			check_names(P, m->box[d], -1);
		if (!m->tensor)
			continue; /* `tensormap NAME` without `: TENSOR`, already reported */
		int t = kb_spec__find_tensor(s, m->tensor);
		int len = (int)strlen(m->tensor);
		if (t < 0)
			kb_spec__diag_err(P->diags, P->src, m->tensor_loc.line, m->tensor_loc.col, len,
					  "tensormap '%s' describes '%s', which is not a tensor of "
					  "this spec", m->name, m->tensor);
		else if (m->nbox > s->tensors[t].rank)
			kb_spec__diag_err(P->diags, P->src, m->tensor_loc.line, m->tensor_loc.col, len,
					  "'%s' has %d dims but the box has %d (one extent per dim, "
					  "outermost first, or fewer: the leading dims as one)", m->tensor,
					  s->tensors[t].rank, m->nbox);
	}
}

static void check_all_names(kb_spec__parser *P)
{
	const kb_spec *s = P->spec;
	for (int i = 0; i < s->nargs; i++)
		check_names(P, s->args[i].expr, i);
	for (int i = 0; i < s->ntensors; i++)
		for (int d = 0; d < s->tensors[i].rank; d++)
			check_names(P, s->tensors[i].dims[d], -1);
	for (int i = 0; i < 3; i++) {
		check_names(P, s->launch.grid[i], -1);
		check_names(P, s->launch.block[i], -1);
	}
	check_names(P, s->launch.smem, -1);
	check_names(P, s->bytes, -1);
	check_names(P, s->flops, -1);
	for (int i = 0; i < s->nrequires; i++) {
		check_names(P, s->requires[i].lhs, -1);
		check_names(P, s->requires[i].rhs, -1);
	}
	check_lists(P);
	check_ref_names(P);
	check_tmaps(P);
}

static void check_values(kb_spec__parser *P)
{
	kb_spec *s = P->spec;
	/* bad[i]: arg i is not (yet) evaluated; an arg that uses a later arg was
	 * reported by check_names and must not report that arg's faults too. */
	bool *bad = kb_xmalloc(((size_t)s->nargs + 1) * sizeof(bool));
	memset(bad, 1, ((size_t)s->nargs + 1) * sizeof(bool));
	kb_spec__evalctx c = {s, P->src, P->diags, bad, true, 0};
	kb_value v;
	for (int i = 0; i < s->nargs; i++) {
		bad[i] = !s->args[i].expr || kb_spec__eval(&c, s->args[i].expr, &v) != 0;
		if (!bad[i])
			s->args[i].value = v;
	}
	for (int i = 0; i < s->ntensors; i++) {
		const kb_spec_tensor *t = &s->tensors[i];
		char what[96];
		int64_t dim;
		for (int d = 0; d < t->rank; d++) {
			snprintf(what, sizeof(what), "dimension %d of '%s'", d, t->name);
			kb_spec__eval_int(&c, t->dims[d], what, 0, &dim);
		}
	}
	for (int i = 0; i < s->ntmaps; i++) {
		char what[96];
		int64_t extent;
		for (int d = 0; d < s->tmaps[i].nbox; d++) {
			snprintf(what, sizeof(what), "box extent %d of tensormap '%s'", d, s->tmaps[i].name);
			kb_spec__eval_int(&c, s->tmaps[i].box[d], what, 1, &extent);
		}
	}
	kb_launch_dims ld;
	int rc = 0;
	if (s->launch.present)
		kb_spec__eval_launch(&c, &s->launch, &ld, &rc);
	if (s->bytes)
		kb_spec__eval(&c, s->bytes, &v);
	if (s->flops)
		kb_spec__eval(&c, s->flops, &v);
	for (int i = 0; i < s->nsweeps; i++)
		for (int j = 0; j < s->sweeps[i].nvalues; j++)
			kb_spec__eval(&c, s->sweeps[i].values[j], &v);
	/* a require line's sides must evaluate; whether it holds for the
	 * defaults is the unit's warning, not a spec error */
	for (int i = 0; i < s->nrequires; i++) {
		kb_spec__eval(&c, s->requires[i].lhs, &v);
		kb_spec__eval(&c, s->requires[i].rhs, &v);
	}
	free(bad);
}


/* Every name where it may be used, then every value. */
void kb_spec__check(kb_spec__parser *P)
{
	check_all_names(P);
	check_values(P);
}
