/*
 * numbers.c - two Results side by side: what changed in time, bandwidth,
 * FLOP rate, registers, memory and occupancy, and whether the change in time
 * is real.
 *
 * Owns: the rows, the verdict and its sentence, and their text rendering.
 * Reads the Result as the runner assembles it (runner/run.c):
 *   verdict                      "CORRECT" / "INCORRECT" / "IMPOSSIBLE"
 *   timing.{median_us, cv, p10_us, p90_us}
 *   roofline.{GBps, TFLOPs}
 *   compile.kernel.resources.{registers, shared_static_bytes, local_bytes,
 *                             spill_store_bytes, spill_load_bytes}
 *   compile.kernel.occupancy.{occupancy_pct, blocks_per_sm}
 *   sass_metrics.bank_conflicts  (kbench profile --hot / --sass-metrics, per launch)
 *   env.device.name
 *   compile.options              the user's compiler options (absent = none)
 *   counters.*                   (any numeric field; rows only when both have it)
 * A field that is absent, not a number, or a negative resource count (the
 * compile layer's "unknown") is null in the row and "n/a" in the table,
 * never 0.  A row appears when at least one side has its value.
 *
 * Noise rule.  Each run's spread is the larger of 2*cv*median (two standard
 * deviations) and half its p10..p90 range; the band is the larger of the two
 * runs' spreads:
 *     noise = max(2*cv_a*med_a, 2*cv_b*med_b, (p90_a-p10_a)/2, (p90_b-p10_b)/2)
 * (missing terms count 0).  "faster" / "slower" only when
 * |med_b - med_a| > noise, else "same within noise".  The comparison is
 * "not comparable: <why>" when either result is not CORRECT, has no median,
 * the GPUs (env.device.name) differ or are unknown, or both record the
 * args they ran with ("args") and those differ (another problem size).
 * When the two were compiled with different options, "options" says so
 * ({a: [...], b: [...]}) and the table gets a line under it: the numbers
 * then compare builds, not only sources.
 * Delta is b - a; delta_pct is 100*(b-a)/a (0 when both are 0, null when
 * a is 0 and b is not, or either is missing).  Rows also carry "digits",
 * the decimals the table shows (-1: by magnitude).
 */
#include "diff.h"

#include <math.h>
#include <string.h>

typedef struct {
	const char *name;
	const char *path; /* dotted, from the Result's root */
	int digits;       /* decimals shown for reals; -1: by magnitude */
	bool resource;    /* negative means unknown */
} row_spec;

static const row_spec rows[] = {
	{"time (us)", "timing.median_us", -1, false},
	{"bandwidth (GB/s)", "roofline.GBps", 1, false},
	{"TFLOP/s", "roofline.TFLOPs", 2, false},
	{"registers", "compile.kernel.resources.registers", 0, true},
	{"static smem (B)", "compile.kernel.resources.shared_static_bytes", 0, true},
	{"local (B)", "compile.kernel.resources.local_bytes", 0, true},
	{"spill stores (B)", "compile.kernel.resources.spill_store_bytes", 0, true},
	{"spill loads (B)", "compile.kernel.resources.spill_load_bytes", 0, true},
	{"occupancy (%)", "compile.kernel.occupancy.occupancy_pct", 1, false},
	{"blocks/SM", "compile.kernel.occupancy.blocks_per_sm", 0, true},
	{"smem bank conflicts", "sass_metrics.bank_conflicts", 0, true},
};

/* json at a dotted path, or NULL. */
static json_t *at(json_t *j, const char *path)
{
	char key[64];
	while (j && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		j = json_is_object(j) ? json_object_get(j, key) : NULL;
		path += n + (path[n] == '.');
	}
	return j;
}

/* A number worth showing, or NULL. */
static json_t *num(json_t *v, bool resource)
{
	if (!json_is_number(v) || (resource && json_number_value(v) < 0))
		return NULL;
	return v;
}

static json_t *make_row(const char *name, json_t *va, json_t *vb, int digits)
{
	json_t *r = json_pack("{s:s, s:O?, s:O?}", "name", name, "a", va, "b", vb);
	if (va && vb) {
		double a = json_number_value(va), b = json_number_value(vb);
		if (json_is_integer(va) && json_is_integer(vb))
			json_object_set_new(r, "delta", json_integer(json_integer_value(vb) -
								       json_integer_value(va)));
		else
			json_object_set_new(r, "delta", json_real(b - a));
		json_object_set_new(r, "delta_pct", a != 0 ? json_real(100.0 * (b - a) / a)
						    : b == 0 ? json_real(0.0) : json_null());
	} else {
		json_object_set_new(r, "delta", json_null());
		json_object_set_new(r, "delta_pct", json_null());
	}
	json_object_set_new(r, "digits", json_integer(digits));
	return r;
}

static void add_counters(json_t *out, json_t *a, json_t *b)
{
	json_t *ca = json_object_get(a, "counters"), *cb = json_object_get(b, "counters");
	if (!json_is_object(ca) || !json_is_object(cb))
		return;
	const char *key;
	json_t *v;
	json_object_foreach(ca, key, v) {
		json_t *va = num(v, false), *vb = num(json_object_get(cb, key), false);
		if (va || vb)
			json_array_append_new(out, make_row(key, va, vb, -1));
	}
	json_object_foreach(cb, key, v) {
		if (!json_object_get(ca, key) && num(v, false))
			json_array_append_new(out, make_row(key, NULL, v, -1));
	}
}

/* ===================================================================== */
/* Verdict                                                               */
/* ===================================================================== */

/* Decimals for a value of this magnitude: 412.0, 31.25 -> 31.25, 0.812. */
static int auto_digits(double v)
{
	v = fabs(v);
	return v >= 100 ? 1 : v >= 1 ? 2 : 3;
}

/* One run's spread (see the header). */
static double spread(json_t *timing)
{
	double med = json_number_value(json_object_get(timing, "median_us"));
	double cv = json_number_value(json_object_get(timing, "cv"));
	json_t *p10 = json_object_get(timing, "p10_us"), *p90 = json_object_get(timing, "p90_us");
	double s = 2 * cv * med;
	if (json_is_number(p10) && json_is_number(p90)) {
		double half = (json_number_value(p90) - json_number_value(p10)) / 2;
		if (half > s)
			s = half;
	}
	return s > 0 ? s : 0;
}

/* "M=4096 N=131072" of a Result's args, into s. */
static void args_text(json_t *args, char *s, size_t n)
{
	const char *k;
	json_t *v;
	size_t used = 0;
	s[0] = '\0';
	json_object_foreach(args, k, v) {
		int w = json_is_integer(v) ? snprintf(s + used, n - used, "%s%s=%lld", used ? " " : "", k,
						      (long long)json_integer_value(v))
					   : snprintf(s + used, n - used, "%s%s=%g", used ? " " : "", k,
						      json_number_value(v));
		if (w < 0 || (size_t)w >= n - used)
			break;
		used += (size_t)w;
	}
}

/* Why a and b cannot be compared, into why (empty when they can). */
static void incomparable(json_t *a, json_t *b, char *why, size_t n)
{
	json_t *r[2] = {a, b};
	const char *side[2] = {"a", "b"};
	why[0] = '\0';
	for (int i = 0; i < 2; i++) {
		const char *v = json_string_value(json_object_get(r[i], "verdict"));
		const char *st = json_string_value(json_object_get(r[i], "status"));
		if (!r[i])
			snprintf(why, n, "%s is missing", side[i]);
		else if (!v)
			snprintf(why, n, "%s has no verdict (status %s)", side[i], st ? st : "unknown");
		else if (kb_verdict_parse(v) != KB_VERDICT_CORRECT)
			snprintf(why, n, "%s is %s", side[i], v);
		else if (!json_is_number(at(r[i], "timing.median_us")))
			snprintf(why, n, "%s has no timing", side[i]);
		if (why[0])
			return;
	}
	const char *ga = json_string_value(at(a, "env.device.name"));
	const char *gb = json_string_value(at(b, "env.device.name"));
	if (!ga || !gb)
		snprintf(why, n, "%s does not record its GPU", !ga ? "a" : "b");
	else if (strcmp(ga, gb) != 0)
		snprintf(why, n, "different GPUs (a: %s, b: %s)", ga, gb);
	json_t *xa = json_object_get(a, "args"), *xb = json_object_get(b, "args");
	if (!why[0] && xa && xb && !json_equal(xa, xb)) {
		char ta[200], tb[200];
		args_text(xa, ta, sizeof ta);
		args_text(xb, tb, sizeof tb);
		snprintf(why, n, "different problems (a: %s, b: %s)", ta, tb);
	}
}

static void set_verdict(json_t *d, json_t *a, json_t *b)
{
	char why[512], verdict[600];
	incomparable(a, b, why, sizeof why);
	if (why[0]) {
		snprintf(verdict, sizeof verdict, "not comparable: %s", why);
		json_object_set_new(d, "verdict", json_string(verdict));
		json_object_set_new(d, "why", json_string(why));
		return;
	}
	json_t *ta = json_object_get(a, "timing"), *tb = json_object_get(b, "timing");
	double ma = json_number_value(json_object_get(ta, "median_us"));
	double mb = json_number_value(json_object_get(tb, "median_us"));
	double sa = spread(ta), sb = spread(tb);
	double noise = sa > sb ? sa : sb, delta = mb - ma;
	bool beyond = fabs(delta) > noise;
	const char *v = !beyond ? "same within noise" : delta < 0 ? "faster" : "slower";
	int dg = auto_digits(ma > mb ? ma : mb);
	if (ma != 0)
		snprintf(why, sizeof why, "%+.1f%% time (%.*f -> %.*f us), %s the noise of \xc2\xb1%.*f us",
			 100.0 * delta / ma, dg, ma, dg, mb, beyond ? "beyond" : "within", dg, noise);
	else
		snprintf(why, sizeof why, "time %.*f -> %.*f us, %s the noise of \xc2\xb1%.*f us", dg,
			 ma, dg, mb, beyond ? "beyond" : "within", dg, noise);
	json_object_set_new(d, "verdict", json_string(v));
	json_object_set_new(d, "why", json_string(why));
	json_object_set_new(d, "noise_us", json_real(noise));
}

/* {a, b} of the two compiles' option lists when they differ, else NULL. */
static json_t *options_diff(json_t *a, json_t *b)
{
	json_t *oa = at(a, "compile.options"), *ob = at(b, "compile.options");
	json_t *va = json_is_array(oa) ? json_incref(oa) : json_array();
	json_t *vb = json_is_array(ob) ? json_incref(ob) : json_array();
	if (json_equal(va, vb)) {
		json_decref(va);
		json_decref(vb);
		return NULL;
	}
	return json_pack("{s:o, s:o}", "a", va, "b", vb);
}

json_t *kb_diff_numbers(json_t *a, json_t *b)
{
	json_t *d = json_object(), *out = json_array();
	for (size_t i = 0; i < KB_ARRAY_LEN(rows); i++) {
		json_t *va = num(at(a, rows[i].path), rows[i].resource);
		json_t *vb = num(at(b, rows[i].path), rows[i].resource);
		if (va || vb)
			json_array_append_new(out, make_row(rows[i].name, va, vb, rows[i].digits));
	}
	add_counters(out, a, b);
	json_object_set_new(d, "rows", out);
	json_t *opts = options_diff(a, b);
	if (opts)
		json_object_set_new(d, "options", opts);
	set_verdict(d, a, b);
	return d;
}

/* ===================================================================== */
/* Rendering                                                             */
/* ===================================================================== */

#define NCOL 5

/* A cell: "n/a" for null, deltas signed except 0. */
static char *fmt_value(json_t *v, int digits, bool sign)
{
	if (!json_is_number(v))
		return kb_xstrdup("n/a");
	double x = json_number_value(v);
	sign = sign && x != 0;
	if (json_is_integer(v))
		return kb_xasprintf(sign ? "%+lld" : "%lld", (long long)json_integer_value(v));
	return kb_xasprintf(sign ? "%+.*f" : "%.*f", digits, x);
}

static void row_cells(json_t *r, char *cell[NCOL])
{
	json_t *dj = json_object_get(r, "digits");
	int digits = json_is_integer(dj) ? (int)json_integer_value(dj) : -1;
	json_t *pct = json_object_get(r, "delta_pct");
	if (digits < 0) { /* by the larger value, so a and b and delta agree */
		double a = fabs(json_number_value(json_object_get(r, "a")));
		double b = fabs(json_number_value(json_object_get(r, "b")));
		digits = auto_digits(a > b ? a : b);
	}
	cell[0] = kb_xstrdup(json_string_value(json_object_get(r, "name")));
	cell[1] = fmt_value(json_object_get(r, "a"), digits, false);
	cell[2] = fmt_value(json_object_get(r, "b"), digits, false);
	cell[3] = fmt_value(json_object_get(r, "delta"), digits, true);
	double p = json_number_value(pct);
	cell[4] = !json_is_number(pct) ? kb_xstrdup("n/a")
		  : p == 0 ? kb_xstrdup("0.0%") : kb_xasprintf("%+.1f%%", p);
}

static void put_line(kb_buf *out, char *const cell[NCOL], const int w[NCOL])
{
	kb_buf_catf(out, "%-*s", w[0], cell[0]);
	for (int c = 1; c < NCOL; c++)
		kb_buf_catf(out, "  %*s", w[c], cell[c]);
	kb_buf_catc(out, '\n');
}

/* "options: vA -use_fast_math; vB (none)" when the builds differ in them. */
static void render_options(json_t *opts, const char *label_a, const char *label_b, kb_buf *out)
{
	if (!opts)
		return;
	const char *side[2] = {"a", "b"}, *label[2] = {label_a, label_b};
	kb_buf_cat(out, "options differ:");
	for (int s = 0; s < 2; s++) {
		json_t *v = json_object_get(opts, side[s]);
		kb_buf_catf(out, "%s %s", s ? ";" : "", label[s]);
		for (size_t i = 0; i < json_array_size(v); i++)
			kb_buf_catf(out, " %s", json_string_value(json_array_get(v, i)));
		if (!json_array_size(v))
			kb_buf_cat(out, " (none)");
	}
	kb_buf_catc(out, '\n');
}

void kb_diff_numbers_render(json_t *d, const char *label_a, const char *label_b, kb_buf *out)
{
	json_t *rs = json_object_get(d, "rows");
	size_t n = json_array_size(rs);
	char **cells = kb_xcalloc((n + 1) * NCOL, sizeof *cells);
	cells[0] = kb_xstrdup("");
	cells[1] = kb_xstrdup(label_a ? label_a : "a");
	cells[2] = kb_xstrdup(label_b ? label_b : "b");
	cells[3] = kb_xstrdup("delta");
	cells[4] = kb_xstrdup("delta %");
	for (size_t i = 0; i < n; i++)
		row_cells(json_array_get(rs, i), &cells[(i + 1) * NCOL]);
	int w[NCOL] = {0};
	for (size_t i = 0; i < (n + 1) * NCOL; i++) {
		int len = (int)strlen(cells[i]);
		if (len > w[i % NCOL])
			w[i % NCOL] = len;
	}
	for (size_t i = 0; i <= n; i++)
		put_line(out, &cells[i * NCOL], w);
	render_options(json_object_get(d, "options"), cells[1], cells[2], out);
	const char *v = json_string_value(json_object_get(d, "verdict"));
	const char *why = json_string_value(json_object_get(d, "why"));
	if (v && why && strncmp(v, "not comparable", 14) != 0)
		kb_buf_catf(out, "verdict: %s: %s\n", v, why);
	else
		kb_buf_catf(out, "verdict: %s\n", v ? v : "unknown");
	for (size_t i = 0; i < (n + 1) * NCOL; i++)
		free(cells[i]);
	free(cells);
}
