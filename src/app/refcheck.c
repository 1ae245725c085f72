/*
 * refcheck.c - `kbench ref FILE [--arg N=V]... [--json]`: the spec's CPU
 * reference (a built-in or a Python one) computed here, without a GPU,
 * from inputs drawn as the spec says - with this machine's generator, so
 * the values are not the ones a GPU run draws - to see that a reference
 * runs at these sizes, how long it takes and what it gives, before any GPU
 * time.  A Python reference here obeys the same yes as in a run
 * (kb_app__python_refusal).  It compares nothing and times no kernel.
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double u01(uint64_t *s)
{
	return ((double)(splitmix(s) >> 11) + 0.5) * 0x1p-53;
}

/* An input as its init says (file(path) read as a run reads it). */
static int fill(kb_tensor *t, const kb_init *in, uint64_t seed, kb_err *err)
{
	if (in->kind == KB_INIT_FILE)
		return kb_profile_load_file(in->path, t, err);
	uint64_t s = in->has_seed ? in->seed : seed;
	bool integer = t->dtype != KB_DT_F64 && t->dtype != KB_DT_F32 && t->dtype != KB_DT_F16 &&
		       t->dtype != KB_DT_BF16;
	for (int64_t i = 0; i < t->n; i++) {
		double v = 0;
		switch (in->kind) {
		case KB_INIT_RAND: v = in->lo + (in->hi - in->lo) * u01(&s); break;
		case KB_INIT_ARANGE: v = (double)i; break;
		case KB_INIT_ONES: v = 1; break;
		case KB_INIT_ZEROS: case KB_INIT_NONE: v = 0; break;
		case KB_INIT_RANDN:
			v = in->lo + in->hi * sqrt(-2 * log(u01(&s))) * cos(2 * M_PI * u01(&s));
			break;
		case KB_INIT_FILE: break;
		}
		/* integers truncated as the GPU's fill does: rand(0, C) is 0 .. C-1 */
		kb_tensor_set(t, i, integer ? floor(v) : v);
	}
	return KB_OK;
}

/* The shape of spec tensor t; 0 or KB_ESPEC. */
static int shape(const kb_spec *sp, const kb_source *src, const kb_spec_tensor *t, int64_t *dims,
		 int64_t *n)
{
	*n = 1;
	for (int d = 0; d < t->rank; d++) {
		kb_value v;
		if (kb_compile_spec_eval(sp, t->dims[d], &v, src, NULL))
			return KB_ESPEC;
		*n *= dims[d] = v.is_float ? (int64_t)v.f : v.i;
	}
	return KB_OK;
}

/* Bytes this check holds at once: inputs in their dtype and as the f64
 * copy a Python reference maps, outputs three times in f64. */
static double bytes_needed(const kb_spec *sp, const kb_source *src)
{
	double b = 0;
	for (int i = 0; i < sp->ntensors; i++) {
		int64_t dims[KB_MAX_RANK], n;
		if (shape(sp, src, &sp->tensors[i], dims, &n) == 0)
			b += (double)n * (sp->tensors[i].is_out ? 24.0
					   : kb_dtype_size(sp->tensors[i].dtype) + 8.0);
	}
	return b;
}

static double mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	double kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

static json_t *out_json(const kb_ref_out *o)
{
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	int64_t nan = 0;
	for (int64_t i = 0; i < o->n; i++) {
		double v = o->v[i];
		if (isnan(v)) {
			nan++;
			continue;
		}
		lo = fmin(lo, v), hi = fmax(hi, v), sum += v;
	}
	json_t *dims = json_array();
	for (int d = 0; d < o->rank; d++)
		json_array_append_new(dims, json_integer((json_int_t)o->dims[d]));
	return json_pack("{s:s, s:o, s:f, s:f, s:f, s:I}", "name", o->name, "shape", dims, "min",
			 o->n > nan ? lo : 0.0, "max", o->n > nan ? hi : 0.0, "mean",
			 o->n > nan ? sum / (double)(o->n - nan) : 0.0, "nan", (json_int_t)nan);
}

/* Draws the inputs, computes the reference, fills r.  0 or a KB_E*. */
static int compute(const kb_spec *sp, const kb_source *src, json_t *r, kb_err *err)
{
	kb_tensor *ins = kb_xcalloc((size_t)sp->ntensors + 1, sizeof *ins);
	kb_ref_out *outs = kb_xcalloc((size_t)sp->ref.nouts + 1, sizeof *outs);
	int nins = 0, rc = KB_OK;
	double t0 = kb_now_ms();
	for (int i = 0; i < sp->ntensors && rc == 0; i++) {
		const kb_spec_tensor *t = &sp->tensors[i];
		int64_t dims[KB_MAX_RANK], n;
		if (t->is_out)
			continue;
		if ((rc = shape(sp, src, t, dims, &n)) < 0) {
			kb_err_set(err, rc, KB_DOM_SPEC, 0, "the shape of %s does not evaluate", t->name);
			break;
		}
		kb_tensor_init(&ins[nins], t->name, t->dtype, t->rank, dims);
		rc = fill(&ins[nins++], &t->init, (uint64_t)i + 1, err);
	}
	double t1 = kb_now_ms();
	if (rc == 0)
		rc = kb_profile_reference(sp, src, ins, nins, outs, 0, err);
	double t2 = kb_now_ms();
	json_object_set_new(r, "inputs_ms", json_real(t1 - t0));
	json_object_set_new(r, "reference_ms", json_real(t2 - t1));
	if (rc == 0) {
		json_t *o = json_array();
		for (int i = 0; i < sp->ref.nouts; i++)
			json_array_append_new(o, out_json(&outs[i]));
		json_object_set_new(r, "outputs", o);
		json_object_set_new(r, "ran", json_string(outs[0].ran ? outs[0].ran : sp->ref.fn));
		for (int i = 0; i < sp->ref.nouts; i++)
			kb_ref_out_free(&outs[i]);
	}
	for (int i = 0; i < nins; i++)
		kb_tensor_free(&ins[i]);
	free(ins);
	free(outs);
	return rc;
}

/* See app.h. */
int kb_app_ref_check(const char *path, json_t *args, json_t **result, kb_err *err)
{
	kb_source src;
	kb_spec sp;
	kb_diags d = {0};
	int rc = kb_compile_source_load(&src, path, err);
	if (rc < 0)
		return rc;
	json_t *r = *result = json_pack("{s:s}", "path", path);
	memset(&sp, 0, sizeof sp);
	if ((rc = kb_compile_spec_parse(&src, &sp, &d)) < 0) {
		kb_buf b = KB_BUF_INIT;
		kb_diag_render(&d, &b, false);
		kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "%s", b.s ? b.s : "spec errors");
		kb_buf_free(&b);
		goto out;
	}
	const char *k;
	json_t *v;
	json_object_foreach(args, k, v) {
		kb_value val = {.is_float = json_is_real(v), .i = json_integer_value(v),
				.f = json_number_value(v)};
		if (kb_compile_spec_set_arg(&sp, k, val) < 0) {
			rc = kb_err_set(err, KB_EINVAL, KB_DOM_SPEC, 0, "--arg %s: the spec has no such arg", k);
			goto out;
		}
	}
	if (!sp.ref.present || sp.ref.is_kernel) {
		rc = kb_err_set(err, KB_EUNSUP, KB_DOM_SPEC, 0, "%s has %s: nothing to compute on the CPU",
				path, sp.ref.is_kernel ? "a reference kernel (it runs on the GPU)"
				: "no ref line");
		goto out;
	}
	kb_app_run_opts o = {.path = path};
	char *why = kb_app__python_refusal(&o);
	if (why) {
		json_object_set_new(r, "status", json_string("python_refused"));
		rc = kb_err_set(err, KB_EPERM, KB_DOM_PYTHON, 0, "%s", why);
		free(why);
		goto out;
	}
	double need = bytes_needed(&sp, &src), have = mem_available();
	json_object_set_new(r, "bytes_needed", json_real(need));
	if (have > 0 && need > 0.5 * have) { /* half: a machine shared with others */
		rc = kb_err_set(err, KB_ENOMEM, KB_DOM_NONE, 0, "the reference at these sizes needs about "
				"%.1f GB here (inputs, their float64 copies and the outputs), and %.1f GB "
				"are available: try smaller sizes (--arg) or a machine with more memory",
				need / 1e9, have / 1e9);
		goto out;
	}
	rc = compute(&sp, &src, r, err);
	kb_profile_pyref_stop(); /* this process computes nothing more */
out:
	if (rc < 0 && !json_object_get(r, "status"))
		json_object_set_new(r, "status", json_string(err->domain == KB_DOM_PYTHON &&
							     rc != KB_EUNSUP ? "reference_error"
							     : "error"));
	else if (rc == 0)
		json_object_set_new(r, "status", json_string("ok"));
	if (rc < 0)
		json_object_set_new(r, "message", json_string(err->msg));
	kb_diags_free(&d);
	kb_compile_spec_free(&sp);
	kb_compile_source_free(&src);
	return rc;
}

/* See app.h. */
void kb_app_ref_render(json_t *r, kb_buf *out)
{
	kb_buf_catf(out, "%s\n", kb_app__str(r, "path"));
	if (strcmp(kb_app__str(r, "status"), "ok")) {
		kb_buf_catf(out, "  %s\n", kb_app__str(r, "message"));
		return;
	}
	kb_buf_catf(out, "  inputs      drawn here in %.0f ms (this machine's generator, not a GPU "
		    "run's values)\n", json_number_value(json_object_get(r, "inputs_ms")));
	kb_buf_catf(out, "  reference   %s; %.0f ms in all\n", kb_app__str(r, "ran"),
		    json_number_value(json_object_get(r, "reference_ms")));
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(r, "outputs"), i, o) {
		kb_buf_catf(out, "  %-11s [", kb_app__str(o, "name"));
		size_t d;
		json_t *x;
		json_array_foreach(json_object_get(o, "shape"), d, x)
			kb_buf_catf(out, "%s%lld", d ? ", " : "", (long long)json_integer_value(x));
		kb_buf_catf(out, "]: min %.4g, max %.4g, mean %.4g, %lld NaN\n",
			    json_number_value(json_object_get(o, "min")),
			    json_number_value(json_object_get(o, "max")),
			    json_number_value(json_object_get(o, "mean")),
			    (long long)json_integer_value(json_object_get(o, "nan")));
	}
}
