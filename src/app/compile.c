/*
 * compile.c - what the `compile` verb shows: the compact human summary of a
 * kb_compile_unit (kernel, arch, the user's compiler options, registers,
 * shared and local memory, spills, occupancy and its limiter, instruction
 * mix, compile time and cache) and its JSON.  The pipeline itself is kb_compile_unit_run.
 */
#include "app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fmt_bytes(char *out, size_t n, long long b)
{
	if (b >= 1024 && b % 1024 == 0)
		snprintf(out, n, "%lld KiB", b / 1024);
	else if (b >= 1024)
		snprintf(out, n, "%.1f KiB", (double)b / 1024.0);
	else
		snprintf(out, n, "%lld B", b);
}

/* The compile's time and where it went; ms_tile > 0: a .tile file, the
 * tile compiler's share of the parse. */
static void render_timing(const kb_build *b, double ms_tile, kb_buf *out)
{
	kb_buf_catf(out, "  compile     %.1f ms, cache %s (parse %.1f", b->ms_total,
		    b->cache_hit ? "hit" : b->cache_damaged ? "miss: a damaged entry, compiled again"
							 : "miss", b->ms_parse);
	if (ms_tile > 0)
		kb_buf_catf(out, " of which tile lowering %.2f", ms_tile);
	if (b->ms_nvrtc > 0)
		kb_buf_catf(out, ", nvrtc %.1f", b->ms_nvrtc);
	if (b->ms_nvjitlink > 0)
		kb_buf_catf(out, ", nvjitlink %.1f", b->ms_nvjitlink);
	kb_buf_catf(out, ", sass %.1f ms)\n", b->ms_sass);
}

/* The user's compiler options (`//! options`, then --option), when any. */
static void render_options(const kb_build *b, kb_buf *out)
{
	if (!b->noptions)
		return;
	kb_buf_cat(out, "  options    ");
	for (int i = 0; i < b->noptions; i++)
		kb_buf_catf(out, " %s", b->options[i]);
	kb_buf_catc(out, '\n');
}

static void render_resources(const kb_build_kernel *k, const char *log, kb_buf *out)
{
	char smem[32], local[32];
	fmt_bytes(smem, sizeof smem, k->res.smem_static);
	fmt_bytes(local, sizeof local, k->res.local_bytes);
	kb_buf_catf(out, "  registers   %d/thread   smem %s static", k->res.regs, smem);
	if (k->has_occupancy && k->occ.dyn_smem > 0) {
		char dyn[32];
		fmt_bytes(dyn, sizeof dyn, k->occ.dyn_smem);
		kb_buf_catf(out, " + %s dynamic", dyn);
	}
	kb_buf_catf(out, "   local %s", local);
	if (k->res.spill_stores < 0 || k->res.spill_loads < 0)
		kb_buf_cat(out, " (spills n/a: no ptxas report for this build)\n");
	else if (k->res.spill_stores || k->res.spill_loads)
		kb_buf_catf(out, " (SPILLS: %d B stored, %d B loaded)\n", k->res.spill_stores,
			    k->res.spill_loads);
	else
		kb_buf_cat(out, " (no spills)\n");
	if (k->res.maxnreg_dec || k->res.maxnreg_inc) /* warp specialization */
		kb_buf_catf(out, "  warp roles  setmaxnreg: warps that give registers back keep %d, "
			    "warps that take more get %d (of %d at launch)\n", k->res.maxnreg_dec,
			    k->res.maxnreg_inc, k->res.regs);
	if ((k->res.maxnreg_dec || k->res.maxnreg_inc) && log && strstr(log, "(C7507)")) /* the module's */
		kb_buf_cat(out, "              IGNORED by ptxas (C7507 in the build log): every warp keeps the "
			   "launch's count; the code after a dec must fit in it\n");
}

static void render_occupancy(const kb_compile_unit *r, const kb_build_kernel *k, kb_buf *out)
{
	if (!k->has_occupancy) {
		kb_buf_cat(out, !r->spec.launch.present
			   ? "  occupancy   n/a (no //! launch line gives the block size)\n"
			   : "  occupancy   n/a (the //! launch line could not be evaluated: the error "
			     "above says why)\n");
		return;
	}
	const kb_occupancy *o = &k->occ;
	if (o->limiter == KB_LIMIT_INVALID) {
		kb_buf_catf(out, "  occupancy   CANNOT LAUNCH: %s\n", o->why);
		return;
	}
	kb_buf_catf(out, "  occupancy   %.0f%% (%d blocks x %d threads = %d/%d warps per SM), "
		    "limited by %s\n", 100.0 * o->occupancy, o->blocks_per_sm, o->block_threads,
		    o->warps_per_sm, o->max_warps_per_sm, kb_limit_name(o->limiter));
	kb_buf_catf(out, "              %s\n", o->why);
}

static void render_mix(const kb_compile_unit *r, const kb_build_kernel *k, kb_buf *out)
{
	const kb_sass *s = &r->build.sass;
	if (!s->available) {
		kb_buf_catf(out, "  SASS        not shown: %s\n",
			    s->unavailable_why ? s->unavailable_why : "no disassembler");
		return;
	}
	int total = 0;
	for (int i = 0; i < k->nmix; i++)
		total += k->mix[i].count;
	kb_buf_catf(out, "  SASS        %d instructions:", total);
	for (int i = 0; i < k->nmix && i < 12; i++)
		kb_buf_catf(out, "%s %s %d", i ? "," : "", k->mix[i].key, k->mix[i].count);
	kb_buf_cat(out, k->nmix > 12 ? ", ...\n" : "\n");
}

static void render_kernel(const kb_compile_unit *r, const kb_build_kernel *k, kb_buf *out)
{
	kb_buf_catf(out, "%s  %s  %s  %s\n", r->src.path, k->name, r->build.arch,
		    r->build.compiler);
	render_options(&r->build, out);
	render_resources(k, r->build.log, out);
	render_occupancy(r, k, out);
	render_mix(r, k, out);
}

void kb_app_compile_render(const kb_compile_unit *r, kb_buf *out)
{
	const kb_build *b = &r->build;
	if (!b->ok) {
		kb_buf_catf(out, "%s: compile failed (%d error%s)\n", r->src.path,
			    kb_diag_count(&r->diags, KB_DIAG_ERROR),
			    kb_diag_count(&r->diags, KB_DIAG_ERROR) == 1 ? "" : "s");
		return;
	}
	const kb_build_kernel *main_k = NULL;
	for (int i = 0; i < b->nkernels; i++)
		if (b->kernels[i].has_occupancy || (r->chosen && !strcmp(b->kernels[i].name, r->chosen->name)))
			main_k = &b->kernels[i];
	if (!main_k && b->nkernels)
		main_k = &b->kernels[0];
	if (main_k)
		render_kernel(r, main_k, out);
	else
		kb_buf_catf(out, "%s  no kernels  %s  %s\n", r->src.path, b->arch, b->compiler);
	for (int i = 0; i < b->nkernels; i++) {
		const kb_build_kernel *k = &b->kernels[i];
		if (k != main_k)
			kb_buf_catf(out, "  also        %s: %d regs, %d B smem, %d B local\n", k->name,
				    k->res.regs, k->res.smem_static, k->res.local_bytes);
	}
	render_timing(b, r->gen.text ? r->ms_tile : 0, out);
}

json_t *kb_app_compile_json(const kb_compile_unit *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "file", json_string(r->src.path ? r->src.path : ""));
	json_object_set_new(j, "status", json_string(r->status == KB_OK ? "ok"
						      : r->status == KB_ESPEC ? "spec_error"
						      : "compile_error"));
	json_object_set_new(j, "kernel", r->chosen ? json_string(r->chosen->name) : json_null());
	json_object_set_new(j, "diagnostics", kb_compile_diags_json(&r->diags));
	if (r->unsupported) /* a require line rules these values out: a warning, not a failure */
		json_object_set_new(j, "unsupported", json_string(r->unsupported));
	if (r->src.kind == KB_SRC_TILE) { /* the CUDA C the .tile file lowers to, and how long */
		json_object_set_new(j, "tile_ms", json_real(r->ms_tile));
		json_object_set_new(j, "generated_cuda", r->gen.text ? json_string(r->gen.text) : json_null());
	}
	json_t *b = kb_compile_build_json(&r->build, true, true);
	json_object_del(b, "diagnostics"); /* the merged list above has them */
	json_object_set_new(j, "build", b);
	return j;
}
