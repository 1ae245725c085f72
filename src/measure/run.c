/*
 * run.c - one run of a built kernel, per its spec: bind, check (check.c:
 * the trials against the reference), time only a correct kernel, collect
 * counters and hot spots when asked, re-check after the timed loop, and
 * produce the "launch", "check", "timing", "counters" and "hot" parts of a
 * Result as JSON, with where the time went ("phases_ms").
 */
#include "measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- counters and hot spots ------------------------------------------------------ */

static int launch_once(void *ctx, kb_err *err)
{
	kb_profile__run *c = ctx;
	return kb_profile__launch(c->d, &c->bd, err);
}

/* Where a collection's time went (cupti.c's step timings), for
 * bench/profile_breakdown.sh. */
static json_t *steps_json(const kb_cupti *cupti)
{
	const kb_profile__cupti_stats *st = kb_profile__cupti_last(cupti);
	const kb_profile__cupti_open_stats *op = kb_profile__cupti_opened(cupti);
	json_t *j = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:f}",
			      "config_image", st->ms_check, "enable", st->ms_enable, "set_config",
			      st->ms_config, "passes", st->ms_run, "evaluate", st->ms_eval,
			      "disable", st->ms_disable, "replays", st->replays, "open_load",
			      op->ms_load, "open_init", op->ms_init, "open_availability",
			      op->ms_avail, "open_host", op->ms_host);
	/* a config image from disk is built again beside the passes */
	json_object_update_new(j, json_pack("{s:b, s:b, s:f, s:f}", "config_from_disk",
					    st->config_from_disk, "config_stale", st->config_stale,
					    "config_rebuild", st->ms_config_build,
					    "config_rebuild_wait", st->ms_config_wait));
	return j;
}

/* Counters for one launch (cupti.c flushes the L2 before each pass, as for
 * the timed launches, or before the first only with --cache-control none).
 * Not permitted / no CUPTI is part of the result, not a failed run. */
static void collect_counters(kb_profile__run *c, json_t *result)
{
	double *vals = kb_xcalloc((size_t)c->o->nmetrics + 1, sizeof *vals);
	kb_err err = {0};
	double t0 = kb_now_ms();
	kb_profile__cupti_flush_every_pass(c->cupti, !c->o->passes_keep_l2);
	int rc = kb_profile_cupti_collect(c->cupti, c->o->metrics, c->o->nmetrics, launch_once, c,
					  vals, &err);
	json_t *ctr = json_object();
	if (rc == 0) {
		for (int i = 0; i < c->o->nmetrics; i++)
			json_object_set_new(ctr, c->o->metrics[i],
					    isfinite(vals[i]) ? json_real(vals[i]) : json_null());
		json_object_set_new(result, "counters", ctr);
		json_object_set_new(result, "counters_ms", json_real(kb_now_ms() - t0));
		json_object_set_new(result, "counters_steps_ms", steps_json(c->cupti));
		json_object_set_new(result, "cache_control",
				    json_string(c->o->passes_keep_l2 ? "none" : "all"));
	} else {
		json_decref(ctr);
		json_object_set_new(result, "counters_error",
				    json_pack("{s:s, s:b}", "message", err.msg, "permission", rc == KB_EPERM));
		kb_profile__gpu_fail(c, rc, &err);
	}
	free(vals);
}

/* PC sampling needs a module first launched after sampling was enabled,
 * so the hot-spot launches load their own instance of the cubin. */
typedef struct {
	kb_profile__run *c;
	CUmodule mod;
	kb_profile__bound bd;
} fresh_ctx;

static int launch_fresh(void *ctx, kb_err *err)
{
	fresh_ctx *f = ctx;
	int rc = KB_OK;
	if (!f->mod) {
		f->bd = f->c->bd;
		if ((rc = KB_CU(err, cuModuleLoadData(&f->mod, f->c->b->cubin))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuModuleGetFunction(&f->bd.fn, f->mod, f->c->bd.symbol))) < 0 ||
		    (rc = kb_profile__fn_attrs(f->bd.fn, &f->bd.dims, err)) < 0)
			goto out;
	}
	rc = kb_profile__launch(f->c->d, &f->bd, err);
out:
	return rc;
}

static json_t *pc_json(const kb_pc_record *r, uint64_t total)
{
	json_t *st = json_array();
	for (int k = 0; k < r->nstalls; k++)
		json_array_append_new(st, json_pack("{s:s, s:I}", "reason", r->stalls[k].name, "samples",
						    (json_int_t)r->stalls[k].samples));
	return json_pack("{s:s, s:I, s:I, s:f, s:o}", "function", r->function, "pc",
			 (json_int_t)r->pc_offset, "samples", (json_int_t)r->samples, "share_pct",
			 total ? 100.0 * (double)r->samples / (double)total : 0.0, "stalls", st);
}

static void collect_hot(kb_profile__run *c, double median_us, json_t *result)
{
	fresh_ctx f = {.c = c};
	kb_pc_record *recs = NULL;
	int n = 0;
	uint64_t total = 0;
	kb_err err = {0};
	/* About 50 ms of kernel time, so even a short kernel gets samples. */
	int repeats = median_us > 0 ? (int)(50e3 / median_us) : 20;
	repeats = repeats < 5 ? 5 : repeats > 2000 ? 2000 : repeats;
	kb_profile__progress(c, &c->bd, "hot spots (PC sampling)");
	int rc = kb_profile_pcsample(c->d, launch_fresh, &f, repeats, &recs, &n, &total, &err);
	if (f.mod)
		kb_cu.cuModuleUnload(f.mod);
	if (rc < 0) {
		json_object_set_new(result, "hot_error", json_pack("{s:s, s:b}", "message", err.msg,
								   "permission", rc == KB_EPERM));
		kb_profile__gpu_fail(c, rc, &err);
		return;
	}
	json_t *hot = json_array();
	for (int i = 0; i < n && i < 64; i++)
		json_array_append_new(hot, pc_json(&recs[i], total));
	json_object_set_new(result, "hot", hot);
	json_object_set_new(result, "hot_samples", json_integer((json_int_t)total));
	json_object_set_new(result, "hot_launches", json_integer(repeats));
	kb_profile_pc_records_free(recs, n);
}

/* Per-instruction counts (SASS metrics) of one instrumented launch through
 * a fresh module, as for PC sampling; the hot spots already in result get
 * each PC's counts.  Refused or unsupported: "sass_metrics_error", the rest
 * of the profile stands. */
static void collect_sassm(kb_profile__run *c, json_t *result)
{
	fresh_ctx f = {.c = c};
	kb_sassm s;
	kb_err err = {0};
	kb_profile__progress(c, &c->bd, "SASS metrics (one instrumented launch)");
	int rc = kb_profile_sassm_collect(c->d, launch_fresh, &f, &s, &err);
	if (f.mod)
		kb_cu.cuModuleUnload(f.mod);
	if (rc < 0) {
		json_object_set_new(result, "sass_metrics_error",
				    json_pack("{s:s, s:b}", "message", err.msg, "permission",
					      rc == KB_EPERM));
		kb_profile__gpu_fail(c, rc, &err);
		return;
	}
	json_object_set_new(result, "sass_metrics", kb_profile_sassm_json(&s, 256));
	kb_profile_sassm_annotate(&s, json_object_get(result, "hot"));
	kb_profile_sassm_free(&s);
}

static json_t *launch_json(const kb_profile__bound *bd)
{
	json_t *j = json_object();
	json_object_set_new(j, "kernel", json_string(bd->name));
	json_object_set_new(j, "symbol", json_string(bd->symbol ? bd->symbol : ""));
	json_object_set_new(j, "grid", json_pack("[III]", (json_int_t)bd->dims.grid[0],
						 (json_int_t)bd->dims.grid[1], (json_int_t)bd->dims.grid[2]));
	json_object_set_new(j, "block", json_pack("[III]", (json_int_t)bd->dims.block[0],
						  (json_int_t)bd->dims.block[1], (json_int_t)bd->dims.block[2]));
	json_object_set_new(j, "dynamic_shared_bytes", json_integer(bd->dims.smem));
	return j;
}

/* How many of a cluster kernel's clusters run at once, beside how many the
 * SMs alone would hold (blocks_per_sm a GPU, in whole clusters).  A cluster
 * stays inside one GPC, and the GPCs of one model differ from chip to
 * chip: one H200 ran 15 clusters of 8 (one block an SM) at once where its
 * SMs would hold 16, and the same LayerNorm ring read 86.5% of copy on two
 * H200s and 76.0% on a third (bench/clusters_h200.txt, 2026-11-29). */
static void driver_clusters(kb_profile__run *c, json_t *launch, int blocks_per_sm)
{
	int size = kb_profile__cluster_blocks(c->bd.fn), at_once = 0;
	const kb_launch_dims *g = &c->bd.dims;
	if (size <= 1)
		return;
	CUlaunchConfig cfg = {
		.gridDimX = (unsigned)g->grid[0], .gridDimY = (unsigned)g->grid[1],
		.gridDimZ = (unsigned)g->grid[2], .blockDimX = (unsigned)g->block[0],
		.blockDimY = (unsigned)g->block[1], .blockDimZ = (unsigned)g->block[2],
		.sharedMemBytes = (unsigned)g->smem, .hStream = c->d->stream,
	};
	if (kb_cu.cuOccupancyMaxActiveClusters(&at_once, c->bd.fn, &cfg) != CUDA_SUCCESS)
		return;
	long long grid = (long long)g->grid[0] * g->grid[1] * g->grid[2];
	json_object_set_new(launch, "cluster_blocks", json_integer(size));
	json_object_set_new(launch, "clusters_launched", json_integer(grid / size));
	json_object_set_new(launch, "driver_clusters_at_once", json_integer(at_once));
	json_object_set_new(launch, "clusters_sms_hold",
			    json_integer((long long)blocks_per_sm * c->d->info.sm_count / size));
}

/* The driver's own occupancy for this launch: the cross-check of the
 * offline calculator. */
static void driver_occupancy(kb_profile__run *c, json_t *launch)
{
	int blocks = 0;
	int threads = (int)(c->bd.dims.block[0] * c->bd.dims.block[1] * c->bd.dims.block[2]);
	if (kb_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, c->bd.fn, threads,
							     (size_t)c->bd.dims.smem) != CUDA_SUCCESS)
		return;
	json_object_set_new(launch, "driver_blocks_per_sm", json_integer(blocks));
	driver_clusters(c, launch, blocks);
}

/* The timed loop over the trials' sets (the last trial's is the run's own
 * buffers, its outputs as the checked launch left them), then the verdict
 * on every timed launch's output: *correct false when one wrote other than
 * its checked twin. */
static int timed(kb_profile__run *c, json_t *result, json_t *check, bool *correct, kb_err *err)
{
	json_t *timing = NULL;
	int rc = kb_profile__guard_keep(&c->guard, c->d, &c->bd, c->o->seed + (uint64_t)(c->o->trials - 1),
					true, err);
	if (c->guard.nsets == 1 && !c->guard.why_one_set)
		c->guard.why_one_set = "one trial, so one input set";
	kb_profile__progress(c, &c->bd, "timing");
	if (rc == 0)
		rc = kb_profile__time(c->d, &c->guard, c->o, &timing, err);
	bool ok = true;
	if (rc == 0)
		rc = kb_profile__guard_finish(&c->guard, c->d, check, &ok, err);
	if (rc < 0) {
		json_decref(timing);
		return kb_profile__gpu_fail(c, rc, err);
	}
	json_object_set_new(result, "timing", timing);
	*correct = *correct && ok;
	return KB_OK;
}

static int setup(kb_profile__run *c, const kb_kernels *all, kb_err *err)
{
	int rc = kb_profile__bind(c->d, c->src, c->spec, c->k, c->b, &c->bd, err);
	if (rc < 0)
		return kb_profile__gpu_fail(c, rc, err);
	const kb_spec_ref *ref = &c->spec->ref;
	if (!ref->present)
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0,
				  "the spec has no `//! ref` line, so correctness cannot be checked");
	if (ref->is_kernel) {
		for (int i = 0; all && i < all->n; i++)
			if (!strcmp(all->v[i].name, ref->fn))
				return kb_profile__setup_ref_kernel(c, &all->v[i], err);
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "no reference kernel %s", ref->fn);
	}
	return KB_OK;
}

/* Adds the wall ms since *t to phases under name; *t becomes now. */
static void phase_done(json_t *phases, const char *name, double *t)
{
	double now = kb_now_ms();
	json_object_set_new(phases, name, json_real(now - *t));
	*t = now;
}

/* Where the checking time went, and where outputs were compared. */
static void check_ms(const kb_profile__run *c, json_t *check, double t_check)
{
	json_object_set_new(check, "ms", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "total",
						   kb_now_ms() - t_check, "gpu", c->ms_gpu,
						   "readback", c->ms_readback, "reference",
						   c->ref.ms_reference, "compare", c->ref.ms_compare,
						   "compare_gpu", c->ref.ms_devcheck, "upload",
						   c->ms_upload));
	json_object_set_new(check, "compare", json_string(!c->gpu_compare ? "cpu ($KBENCH_COMPARE=cpu)"
							  : c->ref_too_big ? "cpu (the reference does "
									     "not fit on the GPU)"
							  : "gpu"));
}

int kb_profile_run(kb_device *d, const kb_source *src, const kb_spec *spec,
		   const kb_kernels *all, const kb_kernel *k, const kb_build *b,
		   const kb_run_opts *o, json_t **result, bool *sticky, kb_err *err)
{
	const char *where = getenv("KBENCH_COMPARE");
	kb_profile__run c = {.d = d, .src = src, .spec = spec, .k = k, .b = b, .o = o, .sticky = sticky,
			     .ref = {.claim = -1},
			     .gpu_compare = !(where && !strcmp(where, "cpu"))};
	*sticky = false;
	*result = json_object();
	json_t *phases = json_object(); /* wall ms per step, for the breakdown bench */
	double t_phase = kb_now_ms();
	kb_cu.cuCtxResetPersistingL2Cache(); /* no access-policy window survives a run */
	int rc = setup(&c, all, err);
	phase_done(phases, "setup", &t_phase);
	if (rc < 0)
		goto out;
	json_t *launch = launch_json(&c.bd), *check = json_object();
	driver_occupancy(&c, launch);
	json_object_set_new(*result, "launch", launch);
	json_object_set_new(*result, "check", check);
	if (o->sass_metrics_only) {
		if ((rc = kb_profile__fill_inputs(&c, err)) < 0)
			goto out;
		if (o->sass_hot)
			json_object_set(*result, "hot", o->sass_hot);
		collect_sassm(&c, *result);
		goto out;
	}
	kb_dtype first_out = KB_DT_F32;
	for (int i = 0; i < c.bd.nbufs; i++)
		if (c.bd.bufs[i].spec->is_out)
			first_out = c.bd.bufs[i].spec->dtype;
	kb_profile_default_tol(first_out, &c.rtol, &c.atol);
	if (spec->has_tol)
		c.rtol = spec->rtol, c.atol = spec->atol;
	json_object_set_new(check, "rtol", json_real(c.rtol));
	json_object_set_new(check, "atol", json_real(c.atol));
	kb_profile__check_guard_init(&c);
	bool correct;
	double t_check = kb_now_ms();
	if ((rc = kb_profile__check_trials(&c, check, &correct, err)) < 0)
		goto out;
	phase_done(phases, "trials", &t_phase);
	/* GPU work overlaps the last trial's CPU reference (c.pending). */
	if (correct && o->time_it) {
		if ((rc = timed(&c, *result, check, &correct, err)) < 0)
			goto out;
		phase_done(phases, "timing", &t_phase);
	}
	/* Counters and hot spots describe the kernel as it is, right or wrong. */
	c.cupti = o->cupti;
	if (!c.cupti && o->open_cupti && (o->nmetrics > 0 || o->hot) && !*sticky) {
		c.cupti = o->open_cupti(o->open_cupti_ctx);
		phase_done(phases, "cupti_wait", &t_phase);
	}
	if (c.cupti && o->nmetrics > 0 && !*sticky) {
		collect_counters(&c, *result);
		phase_done(phases, "counters", &t_phase);
	}
	if (c.cupti && o->hot && !*sticky) {
		kb_profile_cupti_release(c.cupti); /* PC sampling: not beside the range profiler */
		collect_hot(&c, json_number_value(json_object_get(json_object_get(*result, "timing"),
								  "median_us")), *result);
		phase_done(phases, "hot", &t_phase);
	}
	if (o->sass_metrics && !*sticky) {
		if (c.cupti) /* one CUPTI profiling mode at a time */
			kb_profile_cupti_release(c.cupti);
		collect_sassm(&c, *result);
		phase_done(phases, "sass_metrics", &t_phase);
	}
	if ((rc = kb_profile__check_join(&c, &correct, err)) < 0)
		goto out;
	phase_done(phases, "reference_wait", &t_phase);
	json_object_set_new(check, "reference_cached_trials", json_integer(c.ref_cached));
	if (!correct) /* an incorrect kernel is never reported with a time */
		json_object_del(*result, "timing");
	else if (json_object_get(*result, "timing") &&
		 (rc = kb_profile__recheck(&c, check, &correct, err)) < 0)
		goto out;
	check_ms(&c, check, t_check);
	phase_done(phases, "recheck", &t_phase);
	json_object_set(*result, "phases_ms", phases);
	json_object_set_new(check, "correct", json_boolean(correct));
	json_object_set_new(*result, "verdict",
			    json_string(kb_verdict_name(correct ? KB_VERDICT_CORRECT : KB_VERDICT_INCORRECT)));
out:
	json_decref(phases);
	kb_profile__check_free(&c);
	if (!*sticky)
		kb_profile__unbind(&c.bd, true);
	return rc;
}
