/*
 * report.c - a tuning session rendered for code review (architecture §6):
 * GitHub Markdown that reads well in a pull request, or one self-contained
 * HTML page (inline CSS and SVG, no script, no URL).  Both say the same
 * things in the same order: a summary (kernel, GPU, the best variant and
 * its speed-up), the variant table, the winning change (source diff and a
 * SASS excerpt), a chart (roofline, and achieved bandwidth against the
 * ceiling) and the correctness evidence.
 *
 * It owns the sections, their order and what they say, and kb_app_report;
 * the model of the variants is report_model.c's, the markup and the page's
 * head and foot report_page.c's, the chart report_svg.c's (src/report/).  The caller
 * reads the variants and their sources from the store and diffs the SASS.
 * Invariants: the output is a pure function of the arguments (no clock, no
 * files, no GPU); "best" is the fastest variant whose verdict is CORRECT
 * and that was timed, and the speed-up is measured against the first such
 * variant; every variant with a result appears in the chart; numbers a
 * Result lacks print as "n/a", never as 0.
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ====================================================================== */
/* Sections                                                                 */
/* ====================================================================== */

/* "512.4 ± 5.6" with one decimal at or above 100 us, two below. */
static void fmt_time(char *s, size_t n, double us, double sd)
{
	if (sd > 0)
		snprintf(s, n, us >= 100 ? "%.1f ± %.1f" : "%.2f ± %.2f", us, sd);
	else
		snprintf(s, n, us >= 100 ? "%.1f" : "%.2f", us);
}

/* The optional columns: shown when some variant has the figure. */
typedef struct {
	bool tflops, tensor, sass;
} columns;

static double tensor_pipe(const kb_app__row *r)
{
	json_t *c = json_object_get(json_object_get(r->res, "sections"), "compute");
	return kb_app__has(c, "tensor_pipe_pct") ? kb_app__num(c, "tensor_pipe_pct") : -1;
}

static json_t *mix_of(const kb_app__row *r)
{
	json_t *m = json_object_get(r->kernel, "instruction_mix");
	return json_is_object(m) && json_object_size(m) ? m : NULL;
}

static columns columns_of(const kb_app__model *R)
{
	columns c = {false, false, false};
	for (int i = 0; i < R->n; i++) {
		json_t *rf = json_object_get(R->r[i].res, "roofline");
		c.tflops |= R->r[i].has_flops && !strcmp(kb_app__str(rf, "side"), "compute");
		c.tensor |= tensor_pipe(&R->r[i]) > 0.5;
		c.sass |= mix_of(&R->r[i]) != NULL;
	}
	return c;
}

/* Instruction counts of a mix summed by opcode family ("HMMA.16816.F32.BF16"
 * -> "HMMA"), into fam (n entries, at most cap). */
static int families(json_t *mix, char fam[][24], long *count, int cap)
{
	const char *key;
	json_t *v;
	int n = 0;
	json_object_foreach(mix, key, v) {
		char f[24];
		snprintf(f, sizeof f, "%.*s", (int)strcspn(key, "."), key);
		int j = 0;
		while (j < n && strcmp(fam[j], f))
			j++;
		if (j == n && n == cap)
			continue;
		if (j == n)
			snprintf(fam[n], sizeof fam[n], "%s", f), count[n++] = 0;
		count[j] += (long)json_integer_value(v);
	}
	return n;
}

/* "+HGMMA 32, −HMMA 1024, −LDSM 256": the families whose static count
 * changed most from prev to cur: new and vanished ones first, larger
 * changes before smaller. */
static void sass_change(json_t *prev, json_t *cur, char *out, size_t n)
{
	enum { CAP = 64 };
	char fa[CAP][24], fb[CAP][24], name[2 * CAP][24];
	long ca[CAP], cb[CAP], d[2 * CAP], was[2 * CAP];
	int na = families(prev, fa, ca, CAP), nb = families(cur, fb, cb, CAP), m = 0;
	for (int i = 0; i < nb; i++) {
		long before = 0;
		for (int j = 0; j < na; j++)
			before = strcmp(fa[j], fb[i]) ? before : ca[j];
		snprintf(name[m], sizeof name[m], "%.23s", fb[i]);
		was[m] = before, d[m++] = cb[i] - before;
	}
	for (int j = 0; j < na; j++) {
		bool kept = false;
		for (int i = 0; i < nb; i++)
			kept |= !strcmp(fa[j], fb[i]);
		if (!kept)
			snprintf(name[m], sizeof name[m], "%.23s", fa[j]), was[m] = ca[j], d[m++] = -ca[j];
	}
	size_t k = 0;
	out[0] = '\0';
	for (int shown = 0; shown < 4; shown++) {
		int best = -1; /* appearing or vanishing families rank above any growth */
		double score = 0;
		for (int i = 0; i < m; i++) {
			double s = d[i] == 0 ? 0 : (was[i] == 0 || was[i] + d[i] == 0 ? 1e12 : 0) + labs(d[i]);
			if (s > score)
				score = s, best = i;
		}
		if (best < 0)
			break;
		k += (size_t)snprintf(out + k, k < n ? n - k : 0, "%s%s%s %ld", k ? ", " : "",
				      d[best] > 0 ? "+" : "−", name[best], labs(d[best]));
		d[best] = 0;
		if (k >= n)
			break;
	}
	if (!out[0])
		snprintf(out, n, "same mix");
}

static void variant_row(const kb_app__model *R, int i, columns c, kb_app__trow *t)
{
	const kb_app__row *r = &R->r[i];
	json_t *res = json_object_get(r->kernel, "resources");
	json_t *occ = json_object_get(r->kernel, "occupancy");
	int k = 0;
	memset(t, 0, sizeof *t);
	snprintf(t->text[k++], sizeof t->text[0], "%s", kb_app__name_of(r));
	snprintf(t->text[k++], sizeof t->text[0], "%s", r->v->label ? r->v->label : "");
	snprintf(t->text[k], sizeof t->text[0], "%s", kb_verdict_name(r->verdict));
	t->cls[k++] = kb_app__badge(r->verdict);
	if (r->timed)
		fmt_time(t->text[k++], sizeof t->text[0], r->median, r->sd);
	else
		snprintf(t->text[k++], sizeof t->text[0], r->res ? "not timed" : "not run");
	snprintf(t->text[k++], sizeof t->text[0], r->gbps >= 0 ? "%.0f" : "n/a", r->gbps);
	if (c.tflops)
		snprintf(t->text[k++], sizeof t->text[0], r->timed && r->has_flops ? "%.1f" : "n/a",
			 r->flops_s / 1e12);
	if (r->pct >= 0)
		snprintf(t->text[k++], sizeof t->text[0], "%.1f%% %s", r->pct, r->basis);
	else
		snprintf(t->text[k++], sizeof t->text[0], "n/a");
	if (c.tensor)
		snprintf(t->text[k++], sizeof t->text[0], tensor_pipe(r) >= 0 ? "%.1f%%" : "n/a",
			 tensor_pipe(r));
	snprintf(t->text[k++], sizeof t->text[0], kb_app__has(res, "registers") ? "%.0f" : "n/a",
		 kb_app__num(res, "registers"));
	double pct = kb_app__num(occ, "occupancy_pct");
	snprintf(t->text[k++], sizeof t->text[0], !kb_app__has(occ, "occupancy_pct") ? "n/a"
		 : pct == floor(pct) ? "%.0f%%" : "%.1f%%", pct);
	if (c.sass) {
		json_t *cur = mix_of(r), *prev = i > 0 ? mix_of(&R->r[i - 1]) : NULL;
		if (cur && prev)
			sass_change(prev, cur, t->text[k], sizeof t->text[0]);
		k++;
	}
	if (i == R->best) {
		snprintf(t->text[k], sizeof t->text[0], "★ best");
		t->cls[k] = "badge b-best";
		t->strong[0] = true;
		t->row_cls = "best";
	} else if (!r->correct && r->res) {
		t->row_cls = "fail";
	}
}

static void section_variants(const kb_app__model *R, kb_buf *o)
{
	columns c = columns_of(R);
	const char *heads[KB_APP__MAX_COLS];
	char align[KB_APP__MAX_COLS + 1];
	int n = 0;
#define COL(h, a) (heads[n] = (h), align[n++] = (a))
	COL("Variant", 'l'), COL("Label", 'l'), COL("Verdict", 'l'), COL("Median µs (± σ)", 'r');
	COL("GB/s", 'r');
	if (c.tflops)
		COL("TFLOP/s", 'r');
	COL("% of ceiling", 'r');
	if (c.tensor)
		COL("Tensor pipe", 'r');
	COL("Regs", 'r'), COL("Occupancy", 'r');
	if (c.sass)
		COL("SASS vs previous", 'l');
	COL("", 'l');
#undef COL
	align[n] = '\0';
	kb_app__trow t;
	kb_app__heading(R, o, "Variants");
	kb_app__table_begin(R, o, heads, align, false);
	for (int i = 0; i < R->n; i++) {
		variant_row(R, i, c, &t);
		kb_app__table_row(R, o, &t, align);
	}
	kb_app__table_end(R, o);
	kb_app__para(R, o, true, "± is one standard deviation (CV × median) of the timed launches. "
		     "% of ceiling: of the measured copy bandwidth (kbench calibrate), of the datasheet "
		     "DRAM bandwidth when none was measured, or for compute-bound kernels of the FP32 peak "
		     "(the tensor-core peak for kernels on tensor cores). "
		     "Incorrect kernels are not timed.");
	if (c.tensor || c.sass)
		kb_app__para(R, o, true, "Tensor pipe: the share of cycles the tensor cores were busy "
			     "(sm__pipe_tensor_cycles_active, kbench profile). SASS vs previous: how the "
			     "kernel's instructions changed from the row above, by opcode family, counted "
			     "in the listing (static, not executed) — new and vanished families first, larger changes first.");
}

static void numbers_value(char *s, size_t n, json_t *v)
{
	if (json_is_string(v))
		snprintf(s, n, "%s", json_string_value(v));
	else if (json_is_number(v))
		snprintf(s, n, "%.4g", json_number_value(v));
	else
		snprintf(s, n, "n/a");
}

/* The numbers of kb_diff_numbers: Δ time, bandwidth, registers ... */
static void section_numbers(const kb_app__model *R, kb_buf *o, const kb_app__row *a,
			    const kb_app__row *b)
{
	json_t *d = kb_diff_numbers(a->res, b->res), *rw;
	static const char *heads[5] = {"Metric", NULL, NULL, "Δ", "Δ %"};
	const char *hs[5] = {heads[0], kb_app__name_of(a), kb_app__name_of(b), heads[3], heads[4]};
	size_t i;
	kb_app__trow t;
	if (!d || !json_array_size(json_object_get(d, "rows"))) {
		json_decref(d);
		return;
	}
	kb_app__table_begin(R, o, hs, "lrrrr", true);
	json_array_foreach(json_object_get(d, "rows"), i, rw) {
		memset(&t, 0, sizeof t);
		snprintf(t.text[0], sizeof t.text[0], "%s", kb_app__str(rw, "name"));
		numbers_value(t.text[1], sizeof t.text[1], json_object_get(rw, "a"));
		numbers_value(t.text[2], sizeof t.text[2], json_object_get(rw, "b"));
		numbers_value(t.text[3], sizeof t.text[3], json_object_get(rw, "delta"));
		numbers_value(t.text[4], sizeof t.text[4], json_object_get(rw, "delta_pct"));
		kb_app__table_row(R, o, &t, "lrrrr");
	}
	kb_app__table_end(R, o);
	if (kb_app__str(d, "verdict")[0]) {
		char *s = kb_xasprintf("Verdict: %s%s%s", kb_app__str(d, "verdict"),
				       kb_app__str(d, "why")[0] ? " — " : "", kb_app__str(d, "why"));
		kb_app__para(R, o, true, s);
		free(s);
	}
	json_decref(d);
}


static void source_diff(const kb_app__model *R, kb_buf *o, int a, int b, char *const *src,
			const size_t *lens)
{
	const char *sa = src ? src[a] : NULL, *sb = src ? src[b] : NULL;
	if (!sa || !sb) {
		kb_app__para(R, o, true, "The sources of these variants were not available.");
		return;
	}
	const char *base = R->file ? kb_basename(R->file) : "kernel";
	char *la = kb_xasprintf("%s/%s", kb_app__name_of(&R->r[a]), base);
	char *lb = kb_xasprintf("%s/%s", kb_app__name_of(&R->r[b]), base);
	kb_buf d = KB_BUF_INIT;
	kb_err err = {0};
	int rc = kb_diff_text(sa, lens ? lens[a] : strlen(sa), sb, lens ? lens[b] : strlen(sb), la, lb,
			      3, &d, &err);
	if (rc < 0) {
		char *s = kb_xasprintf("No source diff: %s", err.msg);
		kb_app__para(R, o, true, s);
		free(s);
	} else if (rc == 0 || !d.len) {
		kb_app__para(R, o, true, "The sources are identical: the change is in the build (defines, "
			     "architecture) or in the inputs.");
	} else {
		kb_app__code_block(R, o, d.s);
	}
	kb_buf_reset(&d);
	rc = R->file ? kb_app__generated_diff(R->file, sa, lens ? lens[a] : strlen(sa), sb,
					      lens ? lens[b] : strlen(sb), la, lb, &d, NULL) : KB_EINVAL;
	if (rc > 0) {
		kb_app__para(R, o, false, "The CUDA the tile compiler made of each (#line directives left out):");
		kb_app__code_block(R, o, d.s);
	} else if (rc == 0) {
		kb_app__para(R, o, false, "The tile compiler made the same CUDA of both.");
	}
	kb_buf_free(&d);
	free(lb);
	free(la);
}

/* What the user said of a variant: its `kbench note` remarks, else its
 * commit message's first line unless kbench wrote it ("kbench run" of an
 * older session, "<path> vN: ..." now), or NULL.  A new string. */
static char *remark_of(const kb_variant *v)
{
	json_t *notes = json_object_get(v->note, "notes");
	if (json_array_size(notes)) {
		kb_buf b = KB_BUF_INIT;
		for (size_t i = 0; i < json_array_size(notes); i++)
			kb_buf_catf(&b, "%s%s", i ? "; " : "", kb_app__sval(json_array_get(notes, i)));
		return kb_buf_detach(&b);
	}
	if (!v->message || !v->message[0] || !strncmp(v->message, "kbench ", 7))
		return NULL;
	/* "<path> vN", or "<name> vN" in the private repository (store.c) */
	char *own = kb_xasprintf("%s %s", v->path ? v->path : "", v->name);
	char *short_own = kb_xasprintf("%s %s", v->path ? kb_basename(v->path) : "", v->name);
	bool ours = !strncmp(v->message, own, strlen(own)) ||
		    !strncmp(v->message, short_own, strlen(short_own));
	free(short_own);
	free(own);
	return ours ? NULL : kb_xstrndup(v->message, strcspn(v->message, "\n"));
}

static void section_change(const kb_app__model *R, kb_buf *o, char *const *src,
			   const size_t *lens)
{
	if (R->best < 0 || R->first < 0 || R->best == R->first)
		return;
	const kb_app__row *a = &R->r[R->first], *b = &R->r[R->best];
	char *h = kb_xasprintf("Winning change: %s → %s", kb_app__name_of(a), kb_app__name_of(b));
	kb_app__heading(R, o, h);
	free(h);
	char *m = remark_of(b->v);
	if (m) {
		char *s = kb_xasprintf("%s: “%s”", kb_app__name_of(b), m);
		kb_app__para(R, o, false, s);
		free(s);
		free(m);
	}
	section_numbers(R, o, a, b);
	kb_app__subheading(R, o, "Source");
	source_diff(R, o, R->first, R->best, src, lens);
	if (R->o->sass_diff && R->o->sass_diff[0]) {
		kb_app__subheading(R, o, "SASS (normalised, excerpt)");
		kb_app__code_block(R, o, R->o->sass_diff);
	}
}

/* Variants with a result that the chart shows as text only. */
static void chart_notes(const kb_app__model *R, kb_buf *o)
{
	kb_buf s = KB_BUF_INIT;
	for (int i = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
		if (r->res && !r->timed)
			kb_buf_catf(&s, "%s%s (%s, not timed)", s.len ? "; " : "", kb_app__name_of(r),
				    kb_verdict_name(r->verdict));
		else if (r->timed && !r->has_flops && R->nflops)
			kb_buf_catf(&s, "%s%s (no FLOP count: bandwidth only)", s.len ? "; " : "",
				    kb_app__name_of(r));
	}
	if (s.len) {
		char *t = kb_xasprintf("Not on the roofline: %s.", s.s);
		kb_app__para(R, o, true, t);
		free(t);
	}
	kb_buf_free(&s);
}

static void section_chart(const kb_app__model *R, kb_buf *o, kb_buf *svg)
{
	kb_app__heading(R, o, R->nflops ? "Roofline and bandwidth" : "Bandwidth");
	if (!R->nrun) {
		kb_app__para(R, o, true, "No variant has been run yet.");
		return;
	}
	if (R->o->html) {
		kb_buf_cat(o, "<figure class=\"chart\">\n");
		kb_app__svg_render(R, o, false);
		kb_buf_cat(o, "</figure>\n");
	} else {
		const char *name = R->o->svg_name ? R->o->svg_name : "roofline.svg";
		kb_buf_cat(o, "![Roofline and achieved bandwidth per variant](");
		kb_app__md_cell(o, name);
		kb_buf_cat(o, ")\n\n");
	}
	if (svg)
		kb_app__svg_render(R, svg, true);
	chart_notes(R, o);
}

static void evidence_row(const kb_app__model *R, const kb_app__row *r, const kb_app__evidence *e,
			 kb_app__trow *t)
{
	memset(t, 0, sizeof *t);
	snprintf(t->text[0], sizeof t->text[0], "%s", kb_app__name_of(r));
	snprintf(t->text[1], sizeof t->text[1], "%s", kb_verdict_name(r->verdict));
	t->cls[1] = kb_app__badge(r->verdict);
	t->strong[0] = r == &R->r[R->best >= 0 ? R->best : 0] && R->best >= 0;
	if (!e->trials) {
		snprintf(t->text[2], sizeof t->text[2], r->res ? "no check" : "not run");
		return;
	}
	if (e->rows) /* a sampled reference: say how much of it was compared */
		snprintf(t->text[2], sizeof t->text[2], "%d/%d (values of %.0f of %.0f rows)",
			 e->passed, e->trials, e->rows_checked, e->rows);
	else
		snprintf(t->text[2], sizeof t->text[2], "%d/%d", e->passed, e->trials);
	snprintf(t->text[3], sizeof t->text[3], "%s", e->seeds);
	kb_app__fmt_num(t->text[4], sizeof t->text[4], e->abs);
	kb_app__fmt_num(t->text[5], sizeof t->text[5], e->rel);
	kb_app__fmt_num(t->text[6], sizeof t->text[6], e->l2);
	snprintf(t->text[7], sizeof t->text[7], "rtol %g, atol %g", e->rtol, e->atol);
	if (!r->correct && !e->bad[0])
		t->row_cls = "fail";
}

static void evidence_detail(const kb_app__model *R, kb_buf *o, const kb_app__row *r,
			    const char *what)
{
	if (R->o->html) {
		kb_buf_cat(o, "<div class=\"failnote\"><strong>");
		kb_app__html(o, kb_app__name_of(r));
		kb_buf_cat(o, " · ");
		kb_app__html(o, kb_verdict_name(r->verdict));
		kb_buf_cat(o, "</strong> <span>");
		kb_app__html(o, what);
		kb_buf_cat(o, "</span></div>\n");
	} else {
		kb_buf_catf(o, "- **%s** ", kb_app__name_of(r));
		kb_app__md_cell(o, kb_verdict_name(r->verdict));
		kb_buf_cat(o, ": ");
		kb_app__md_cell(o, what);
		kb_buf_catc(o, '\n');
	}
}

static void section_correctness(const kb_app__model *R, kb_buf *o)
{
	static const char *heads[] = {"Variant", "Verdict", "Trials passed", "Seeds", "Max abs err",
				      "Max rel err", "Rel L2", "Tolerance"};
	const char *align = "llrlrrrl";
	kb_app__evidence *e = kb_xcalloc((size_t)R->n + 1, sizeof *e);
	kb_app__trow t;
	bool details = false;
	kb_app__heading(R, o, "Correctness");
	kb_app__table_begin(R, o, heads, align, false);
	for (int i = 0; i < R->n; i++) {
		kb_app__read_evidence(json_object_get(R->r[i].res, "check"), &e[i]);
		evidence_row(R, &R->r[i], &e[i], &t);
		kb_app__table_row(R, o, &t, align);
	}
	kb_app__table_end(R, o);
	for (int i = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
		const char *why = e[i].bad[0] ? e[i].bad : kb_app__str(r->res, "message")[0]
				  ? kb_app__str(r->res, "message")
				  : kb_app__str(json_object_get(r->res, "roofline"), "impossible_why");
		if (!r->res || r->correct || !why[0])
			continue;
		if (!details && !R->o->html)
			kb_buf_cat(o, "Where the incorrect variants first went wrong:\n\n");
		details = true;
		evidence_detail(R, o, r, why);
	}
	if (details && !R->o->html)
		kb_buf_catc(o, '\n');
	free(e);
}


int kb_app_report(const kb_app_report_opts *o, const kb_variant *vs, int n, char *const *sources,
		  const size_t *lens, kb_buf *out, kb_buf *svg_out, kb_err *err)
{
	if (!o || !out || n < 0 || (n > 0 && !vs))
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "report: no options, output or variants");
	kb_app__model R;
	kb_app__model_read(&R, o, vs, n);
	char *title = o->title ? kb_xstrdup(o->title)
			       : kb_xasprintf("kbench report: %s", R.kernel ? R.kernel : "kernel");
	kb_app__page_begin(&R, out, title);
	section_variants(&R, out);
	section_change(&R, out, sources, lens);
	section_chart(&R, out, svg_out);
	section_correctness(&R, out);
	kb_app__section_rounds(&R, out);
	kb_app__page_end(&R, out);
	free(title);
	kb_app__model_free(&R);
	return 0;
}
/* ---- report ------------------------------------------------------------------------ */

/* Every variant's text (NULL where unreadable), for the report's diff. */
static void read_sources(kb_store *st, const kb_variant *vs, int n, char **src, size_t *lens)
{
	for (int i = 0; i < n; i++) {
		kb_variant v;
		memset(&v, 0, sizeof v);
		if (kb_session_store_read(st, vs[i].name, &v, &src[i], &lens[i], NULL) < 0)
			src[i] = NULL, lens[i] = 0;
		kb_session_variant_free(&v);
	}
}

/* The SASS diff first correct -> best, when a disassembler exists. */
static char *report_sass(kb_store *st, const char *path, const kb_variant *vs, int first, int best)
{
	if (first < 0 || best < 0 || first == best)
		return NULL;
	kb_app__loaded a, b;
	kb_buf d = KB_BUF_INIT;
	if (kb_app__load_variant(st, vs[first].name, &a, NULL) == 0) {
		if (kb_app__load_variant(st, vs[best].name, &b, NULL) == 0) {
			kb_app__diff_sass(path, &a, &b, &d, NULL);
			kb_app__unload(&b);
		}
		kb_app__unload(&a);
	}
	return d.s ? kb_buf_detach(&d) : NULL;
}

/* One file's part of the report: its variants, their sources, the SASS
 * diff of its first and best; into page, its chart into *svg. */
static int report_part(const kb_session *s, const char *path, kb_app_report_opts *o, kb_buf *page,
		       kb_buf *svg, kb_err *err)
{
	kb_store *st = NULL;
	kb_variant *vs = NULL;
	int n = 0, first, best;
	int rc = kb_session_store_open(s, path, &st, err);
	if (rc == 0)
		rc = kb_session_store_list(st, &vs, &n, err);
	if (rc < 0)
		goto out;
	char **src = kb_xcalloc((size_t)n + 1, sizeof *src);
	size_t *lens = kb_xcalloc((size_t)n + 1, sizeof *lens);
	read_sources(st, vs, n, src, lens);
	kb_app_report_pick(vs, n, &first, &best);
	char *sass = report_sass(st, path, vs, first, best);
	char *shown = kb_session_file_shown(s, path); /* "b/k.cu" beside an "a/k.cu" */
	o->file = shown;
	o->sass_diff = sass;
	o->rounds = kb_app__llm_rounds(s, path);
	rc = kb_app_report(o, vs, n, src, lens, page, svg, err);
	o->file = NULL;
	json_decref(o->rounds);
	free(shown);
	free(sass);
	for (int i = 0; i < n; i++)
		free(src[i]);
	free(src);
	free(lens);
out:
	kb_session_variants_free(vs, n);
	kb_session_store_close(st);
	return rc;
}

int kb_app_report_session(const char *session, const char *file, const char *output,
			  kb_buf *out, kb_err *err)
{
	kb_session s;
	int rc = kb_session_open(session, &s, err), n = 0;
	if (rc < 0)
		return rc;
	char **files = NULL;
	if (file) {
		files = kb_xcalloc(2, sizeof *files);
		if ((rc = kb_app__session_file(&s, file, &files[0], err)) < 0)
			goto out;
		n = 1;
	} else if ((n = kb_session_files(&s, &files, err)) <= 0) {
		rc = n < 0 ? n : kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
					    "session %s has no kernel file yet", s.id);
		goto out;
	}
	bool html = !strcmp(kb_extension(output), "html");
	kb_buf page = KB_BUF_INIT;
	for (int i = 0; i < n && rc == 0; i++) {
		char *svg_path = html ? NULL : n == 1 ? kb_xasprintf("%s.roofline.svg", output)
						     : kb_xasprintf("%s.%d.roofline.svg", output, i + 1);
		kb_app_report_opts o = {.session_id = s.id, .html = html, .not_first = i > 0,
					.not_last = i < n - 1,
					.svg_name = svg_path ? kb_basename(svg_path) : NULL};
		kb_buf svg = KB_BUF_INIT;
		rc = report_part(&s, files[i], &o, &page, &svg, err);
		if (rc == 0 && svg_path && svg.len && (rc = kb_file_write(svg_path, svg.s, svg.len, err)) == 0)
			kb_buf_catf(out, "wrote %s\n", svg_path);
		kb_buf_free(&svg);
		free(svg_path);
	}
	if (rc == 0 && (rc = kb_file_write(output, page.s, page.len, err)) == 0)
		kb_buf_catf(out, "wrote %s (%d file%s)\n", output, n, n == 1 ? "" : "s");
	kb_buf_free(&page);
out:
	kb_app__free_strs(files, n > 0 ? n : 0);
	kb_session_free(&s);
	return rc;
}
