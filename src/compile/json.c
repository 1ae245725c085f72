/*
 * json.c - kb_build as JSON (jansson).  Field names are the stable wire and
 * journal format: add fields freely, never rename or reuse one.
 */
#include "compile.h"

static json_t *diag_json(const kb_diag *g)
{
	static const char *levels[] = {"error", "warning", "note"};
	json_t *j = json_object();
	json_object_set_new(j, "level", json_string(levels[g->level]));
	json_object_set_new(j, "file", json_string(g->file));
	json_object_set_new(j, "line", json_integer(g->line));
	json_object_set_new(j, "col", json_integer(g->col));
	json_object_set_new(j, "message", json_string(g->msg));
	return j;
}

json_t *kb_compile_diags_json(const kb_diags *d)
{
	json_t *a = json_array();
	for (int i = 0; i < d->n; i++)
		json_array_append_new(a, diag_json(&d->v[i]));
	return a;
}

static json_t *resources_json(const kb_resources *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "registers", json_integer(r->regs));
	json_object_set_new(j, "shared_static_bytes", json_integer(r->smem_static));
	json_object_set_new(j, "local_bytes", json_integer(r->local_bytes));
	json_object_set_new(j, "spill_store_bytes", json_integer(r->spill_stores));
	json_object_set_new(j, "spill_load_bytes", json_integer(r->spill_loads));
	json_object_set_new(j, "barriers", json_integer(r->barriers));
	json_object_set_new(j, "max_threads_per_block", json_integer(r->max_threads));
	if (r->cmem0 >= 0)
		json_object_set_new(j, "cmem0_bytes", json_integer(r->cmem0));
	if (r->maxnreg_dec || r->maxnreg_inc)
		json_object_set_new(j, "setmaxnreg", json_pack("{s:i, s:i}", "dec", r->maxnreg_dec, "inc",
								r->maxnreg_inc));
	return j;
}

json_t *kb_compile_occupancy_json(const kb_occupancy *o)
{
	json_t *j = json_object();
	json_object_set_new(j, "block_threads", json_integer(o->block_threads));
	json_object_set_new(j, "dynamic_shared_bytes", json_integer(o->dyn_smem));
	json_object_set_new(j, "blocks_per_sm", json_integer(o->blocks_per_sm));
	json_object_set_new(j, "warps_per_sm", json_integer(o->warps_per_sm));
	json_object_set_new(j, "max_warps_per_sm", json_integer(o->max_warps_per_sm));
	json_object_set_new(j, "occupancy_pct", json_real(100.0 * o->occupancy));
	json_object_set_new(j, "limiter", json_string(kb_limit_name(o->limiter)));
	json_t *lim = json_object();
	for (int l = KB_LIMIT_WARPS; l <= KB_LIMIT_BARRIERS; l++)
		if (o->limit_blocks[l] >= 0)
			json_object_set_new(lim, kb_limit_name((kb_limit)l),
					    json_integer(o->limit_blocks[l]));
	json_object_set_new(j, "blocks_allowed_by", lim);
	json_object_set_new(j, "registers_per_block", json_integer(o->regs_per_block));
	json_object_set_new(j, "shared_per_block_bytes", json_integer(o->smem_per_block));
	json_object_set_new(j, "why", json_string(o->why));
	return j;
}

static json_t *mix_json(const kb_mix *m, int n)
{
	json_t *j = json_object();
	for (int i = 0; i < n; i++)
		json_object_set_new(j, m[i].key, json_integer(m[i].count));
	return j;
}

static json_t *kernel_json(const kb_build_kernel *k)
{
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(k->name));
	json_object_set_new(j, "symbol", json_string(k->lowered));
	json_object_set_new(j, "resources", resources_json(&k->res));
	json_object_set_new(j, "occupancy",
			    k->has_occupancy ? kb_compile_occupancy_json(&k->occ) : json_null());
	json_object_set_new(j, "instruction_mix", k->nmix ? mix_json(k->mix, k->nmix) : json_null());
	return j;
}

static json_t *insn_json(const kb_sass_insn *in)
{
	json_t *j = json_object();
	json_object_set_new(j, "addr", json_integer(in->addr));
	if (in->pred)
		json_object_set_new(j, "pred", json_string(in->pred));
	json_object_set_new(j, "opcode", json_string(in->opcode));
	json_object_set_new(j, "operands", json_string(in->operands ? in->operands : ""));
	if (in->file)
		json_object_set_new(j, "file", json_string(in->file));
	if (in->line)
		json_object_set_new(j, "line", json_integer(in->line));
	return j;
}

static json_t *sass_json(const kb_sass *s)
{
	json_t *j = json_object();
	json_object_set_new(j, "available", json_boolean(s->available));
	if (!s->available) {
		json_object_set_new(j, "why", json_string(s->unavailable_why ? s->unavailable_why : ""));
		return j;
	}
	json_object_set_new(j, "tool", json_string(s->tool ? s->tool : ""));
	json_t *fs = json_array();
	for (int f = 0; f < s->nfuncs; f++) {
		json_t *fj = json_object(), *ins = json_array();
		json_object_set_new(fj, "name", json_string(s->funcs[f].name));
		for (int i = 0; i < s->funcs[f].n; i++)
			json_array_append_new(ins, insn_json(&s->funcs[f].v[i]));
		json_object_set_new(fj, "instructions", ins);
		json_array_append_new(fs, fj);
	}
	json_object_set_new(j, "functions", fs);
	return j;
}

static json_t *timing_json(const kb_build *b)
{
	json_t *j = json_object();
	json_object_set_new(j, "parse", json_real(b->ms_parse));
	json_object_set_new(j, "nvrtc", json_real(b->ms_nvrtc));
	json_object_set_new(j, "nvjitlink", json_real(b->ms_nvjitlink));
	json_object_set_new(j, "sass", json_real(b->ms_sass));
	json_object_set_new(j, "total", json_real(b->ms_total));
	return j;
}

json_t *kb_compile_build_json(const kb_build *b, bool with_sass, bool with_ptx)
{
	json_t *j = json_object();
	json_object_set_new(j, "ok", json_boolean(b->ok));
	json_object_set_new(j, "arch", b->arch ? json_string(b->arch) : json_null());
	json_object_set_new(j, "compiler", b->compiler ? json_string(b->compiler) : json_null());
	json_object_set_new(j, "cache_key", b->key ? json_string(b->key) : json_null());
	json_object_set_new(j, "cache_hit", json_boolean(b->cache_hit));
	if (b->cache_damaged)
		json_object_set_new(j, "cache_damaged", json_true());
	if (b->prebuilt)
		json_object_set_new(j, "prebuilt", json_true()); /* compiled by the client */
	json_t *opts = json_array();
	for (int i = 0; i < b->noptions; i++)
		json_array_append_new(opts, json_string(b->options[i]));
	json_object_set_new(j, "options", opts);
	json_object_set_new(j, "ms", timing_json(b));
	json_object_set_new(j, "diagnostics", kb_compile_diags_json(&b->diags));
	json_t *ks = json_array();
	for (int i = 0; i < b->nkernels; i++)
		json_array_append_new(ks, kernel_json(&b->kernels[i]));
	json_object_set_new(j, "kernels", ks);
	json_object_set_new(j, "cubin_bytes", json_integer((json_int_t)b->cubin_len));
	if (with_ptx && b->ptx)
		json_object_set_new(j, "ptx", json_string(b->ptx));
	if (b->log)
		json_object_set_new(j, "log", json_string(b->log));
	if (with_sass && b->ok)
		json_object_set_new(j, "sass", sass_json(&b->sass));
	return j;
}
