/*
 * pipeline.c - the tile compiler's pipeline: tokens, tree, checks (src/tile), CUDA C.
 * Owns no state between calls.
 */
#include "tilegen_int.h"

#include <stdlib.h>
#include <string.h>

/* A grid expression as spec text: consts as their values (with -D
 * applied), sizes and scalar parameters by name. */
static void spec_text(const kb_tile__expr *e, kb_buf *b)
{
	if (e->is_const) {
		kb_buf_catf(b, "%lld", (long long)e->cval);
		return;
	}
	switch (e->kind) {
	case KB_TE_NAME: kb_buf_cat(b, e->name); break;
	case KB_TE_INT: kb_buf_catf(b, "%lld", (long long)e->ival); break;
	case KB_TE_BINARY:
		kb_buf_cat(b, "(");
		spec_text(e->args[0], b);
		kb_buf_catf(b, " %c ", e->op);
		spec_text(e->args[1], b);
		kb_buf_cat(b, ")");
		break;
	case KB_TE_CALL:
		kb_buf_catf(b, "%s(", e->name);
		for (int i = 0; i < e->nargs; i++) {
			kb_buf_cat(b, i ? ", " : "");
			spec_text(e->args[i], b);
		}
		kb_buf_cat(b, ")");
		break;
	default: kb_buf_cat(b, "?"); break;
	}
}

/* A deep copy of the kernels' public part, for the caller to keep. */
static void copy_kernels(const kb_tile__file *f, bool checked, kb_tile_out *out)
{
	out->kernels = kb_xcalloc((size_t)f->nkernels + 1, sizeof *out->kernels);
	out->nkernels = f->nkernels;
	for (int i = 0; i < f->nkernels; i++) {
		const kb_tile_kernel *a = &f->kernels[i].k;
		kb_tile_kernel *b = &out->kernels[i];
		*b = *a;
		b->name = kb_xstrdup(a->name ? a->name : "");
		b->spec = a->spec && checked ? kb_xstrdup(a->spec) : NULL;
		b->params = kb_xcalloc((size_t)a->nparams + 1, sizeof *b->params);
		for (int j = 0; j < a->nparams; j++) {
			b->params[j] = a->params[j];
			b->params[j].name = kb_xstrdup(a->params[j].name);
			for (int d = 0; d < 2; d++)
				b->params[j].dims[d] = a->params[j].dims[d] ? kb_xstrdup(a->params[j].dims[d]) : NULL;
		}
		b->consts = kb_xcalloc((size_t)f->kernels[i].nbody + 1, sizeof *b->consts);
		b->nconsts = 0;
		for (int j = 0; checked && j < f->kernels[i].nbody; j++) {
			const kb_tile__stmt *st = f->kernels[i].body[j];
			if (st->kind == KB_TS_CONST)
				b->consts[b->nconsts++] = kb_xasprintf("%s=%lld", st->name,
								       (long long)st->value->cval);
		}
		for (int g = 0; g < 3; g++) {
			const kb_tile__expr *ge = f->kernels[i].grid[g];
			kb_buf t = KB_BUF_INIT;
			if (ge && checked && g == 0 && a->persistent)
				kb_buf_cat(&t, "min(sm_count, "); /* a block an SM, each looping over programs */
			if (ge && checked)
				spec_text(ge, &t);
			if (ge && checked && g == 0 && a->persistent)
				kb_buf_cat(&t, ")");
			b->grid[g] = t.len ? kb_buf_detach(&t) : a->grid[g] ? kb_xstrdup(a->grid[g]) : NULL;
			kb_buf_free(&t);
		}
	}
}

int kb_tile_compile(const char *path, const char *text, size_t len, const kb_tile_opts *o,
		    kb_tile_out *out, kb_diags *diags)
{
	double t0 = kb_now_ms();
	kb_tile_opts none = {0};
	kb_tile__toks toks = {0};
	kb_tile__file f = {.path = path, .text = text, .arch = o ? o->arch : NULL, .wg_store = -1};
	memset(out, 0, sizeof *out);
	for (int i = 0; o && i < o->ndefines; i++) {
		f.no_tma = f.no_tma || (o->defines[i] && !strcmp(o->defines[i], KB_TILE_NO_TMA));
		f.no_wgmma = f.no_wgmma || (o->defines[i] && !strcmp(o->defines[i], KB_TILE_NO_WGMMA));
		f.no_wg_overlap = f.no_wg_overlap || (o->defines[i] && !strcmp(o->defines[i], KB_TILE_NO_WG_OVERLAP));
		f.no_wg_ws = f.no_wg_ws || (o->defines[i] && !strcmp(o->defines[i], KB_TILE_NO_WG_WS));
		if (o->defines[i] && !strcmp(o->defines[i], KB_TILE_NO_WG_STORE))
			f.wg_store = 0;
		else if (o->defines[i] && !strcmp(o->defines[i], KB_TILE_WG_STORE))
			f.wg_store = 1;
		else if (o->defines[i] && !strcmp(o->defines[i], KB_TILE_WG_STORE_INLINE))
			f.wg_store = 2;
		else if (o->defines[i] && !strcmp(o->defines[i], KB_TILE_WG_STORE_CHUNK))
			f.wg_store = 3;
		f.no_wg_roles = f.no_wg_roles || (o->defines[i] && !strcmp(o->defines[i], KB_TILE_NO_WG_ROLES));
		f.wg_cols = f.wg_cols || (o->defines[i] && !strcmp(o->defines[i], KB_TILE_WG_COLS));
		f.wg_pingpong = f.wg_pingpong || (o->defines[i] && !strcmp(o->defines[i], KB_TILE_WG_PINGPONG));
	}
	int before = kb_diag_count(diags, KB_DIAG_ERROR);
	kb_tile__tokenize(path, text, len, &toks, diags);
	kb_tile__parse(&toks, &f, diags);
	/* checked even after syntax errors (the parts that failed are NULL in
	 * the tree and checked quietly), so a file reports all of its errors */
	kb_tile__check(&f, o ? o : &none, diags);
	if (kb_diag_count(diags, KB_DIAG_ERROR) == before)
		kb_tile__lower(&f, &out->cuda, diags);
	copy_kernels(&f, kb_diag_count(diags, KB_DIAG_ERROR) == before, out);
	kb_tile__file_free(&f);
	free(toks.v);
	out->ms = kb_now_ms() - t0;
	if (kb_diag_count(diags, KB_DIAG_ERROR) > before) {
		kb_buf_free(&out->cuda);
		return KB_ESPEC;
	}
	return KB_OK;
}

void kb_tile_out_free(kb_tile_out *o)
{
	if (!o)
		return;
	kb_buf_free(&o->cuda);
	for (int i = 0; i < o->nkernels; i++) {
		kb_tile_kernel *k = &o->kernels[i];
		for (int j = 0; j < k->nparams; j++) {
			free(k->params[j].name);
			free(k->params[j].dims[0]);
			free(k->params[j].dims[1]);
		}
		free(k->params);
		free(k->name);
		free(k->spec);
		for (int j = 0; j < k->nconsts; j++)
			free(k->consts[j]);
		free(k->consts);
		for (int g = 0; g < 3; g++)
			free(k->grid[g]);
	}
	free(o->kernels);
	memset(o, 0, sizeof *o);
}

bool kb_tile_line_directive(const char *s, const char *path, long *n)
{
	if (strncmp(s, "#line ", 6))
		return false;
	char *end;
	*n = strtol(s + 6, &end, 10);
	size_t pl = strlen(path);
	return end[0] == ' ' && end[1] == '"' && !strncmp(end + 2, path, pl) && end[2 + pl] == '"';
}

void kb_tile_pin_lines(const char *cuda, const char *path, kb_buf *out)
{
	long cur = 0;       /* the .tile line of what follows; 0: not in the .tile file */
	bool cont = false;  /* the previous line ended in a backslash */
	for (const char *s = cuda; *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		long n;
		if (s[0] == '#' && !cont && !strncmp(s, "#line ", 6))
			cur = kb_tile_line_directive(s, path, &n) ? n : 0;
		else if (cur && !cont)
			kb_buf_catf(out, "#line %ld \"%s\"\n", cur, path);
		kb_buf_catn(out, s, len);
		kb_buf_catc(out, '\n');
		cont = len && s[len - 1] == '\\';
		s += len + (nl ? 1 : 0);
	}
}
