/*
 * run.c - one run of a built kernel, per its spec: bind, then for each
 * trial fill the inputs with fresh seeds, poison the outputs, launch, read
 * back and compare with the reference (built-in CPU reference in double, or
 * a reference kernel of the same file); time only a correct kernel; then
 * re-check after the timed loop, poisoning before each launch, so a kernel
 * that writes only on some calls is caught.  Produces the "launch", "check"
 * and "timing" parts of a Result as JSON.
 */
#include "profile_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

/* Enough consecutive launches that a kernel skipping its work on every
 * k-th call, for any k up to this, is caught after the timed loop. */
#define POST_TIMING_CHECKS 8

typedef struct {
	kb_device *d;
	const kb_source *src;
	const kb_spec *spec;
	const kb_kernel *k;
	const kb_build *b;
	const kb_run_opts *o;
	struct kb_cupti *cupti;    /* o->cupti, or what o->open_cupti gave */
	kb_profile__bound bd;      /* the kernel under test */
	kb_profile__bound ref_bd;  /* a reference kernel, when `ref kernel` */
	kb_profile__buf *ref_bufs; /* its own outputs (inputs shared) */
	kb_ref_out *ref_outs;      /* built-in reference results, per output (borrowed
				      from the reference cache) */
	int nref_outs;
	char ref_key[KB_HASH_HEX]; /* what the current trial's reference depends on */
	int ref_cached;            /* trials whose reference came from the cache */
	double rtol, atol;
	bool *sticky;
	/* Where the checking time goes, summed over trials (ms). */
	double ms_gpu, ms_readback, ms_reference, ms_compare;
} run_ctx;

static void progress(run_ctx *c, const kb_profile__bound *bd, const char *phase)
{
	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, phase, bd->name, bd->dims.grid, bd->dims.block);
}

/* Records a GPU failure: sticky errors poison the context for good. */
static int gpu_fail(run_ctx *c, int rc, kb_err *err)
{
	if (err && err->domain == KB_DOM_CUDA && kb_profile__cu_sticky(err->code))
		*c->sticky = true;
	return rc;
}

static uint64_t mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* ---- inputs and outputs ------------------------------------------------------ */

/* The part of the reference key that does not change between trials: the
 * ref line, every arg's value and every tensor's dtype and shape. */
static void hash_spec(kb_hasher *h, const run_ctx *c)
{
	const kb_spec_ref *r = &c->spec->ref;
	kb_hash_str(h, r->fn);
	for (int i = 0; i < r->nargs; i++) {
		kb_hash_str(h, r->args[i].key ? r->args[i].key : "");
		kb_hash_str(h, r->args[i].text);
	}
	for (int i = 0; i < r->nouts; i++)
		kb_hash_str(h, r->outs[i]);
	for (int i = 0; i < c->spec->nargs; i++) {
		kb_hash_str(h, c->spec->args[i].name);
		kb_hash_update(h, &c->spec->args[i].value, sizeof c->spec->args[i].value);
	}
	for (int i = 0; i < c->bd.nbufs; i++) {
		const kb_tensor *t = &c->bd.bufs[i].host;
		kb_hash_str(h, t->name);
		kb_hash_update(h, &t->dtype, sizeof t->dtype);
		kb_hash_update(h, t->dims, sizeof(int64_t) * (size_t)t->rank);
	}
}

/* An input's init, seed and (for files) the file's identity. */
static void hash_input(kb_hasher *h, const kb_profile__buf *b, uint64_t seed)
{
	const kb_init *in = &b->spec->init;
	kb_hash_update(h, &in->kind, sizeof in->kind);
	kb_hash_update(h, &in->lo, sizeof in->lo);
	kb_hash_update(h, &in->hi, sizeof in->hi);
	kb_hash_update(h, &seed, sizeof seed);
	if (in->kind == KB_INIT_FILE) {
		struct stat st;
		kb_hash_str(h, in->path);
		if (stat(in->path, &st) == 0) {
			kb_hash_update(h, &st.st_size, sizeof st.st_size);
			kb_hash_update(h, &st.st_mtim, sizeof st.st_mtim);
		}
	}
}

static int fill_inputs(run_ctx *c, uint64_t trial_seed, json_t *seeds, kb_err *err)
{
	int rc = KB_OK;
	kb_hasher *h = kb_hash_new();
	hash_spec(h, c);
	for (int i = 0; i < c->bd.nbufs; i++) {
		kb_profile__buf *b = &c->bd.bufs[i];
		if (b->spec->is_out)
			continue;
		uint64_t base = b->spec->init.has_seed ? b->spec->init.seed : (uint64_t)i + 1;
		uint64_t seed = mix64(base ^ mix64(trial_seed));
		hash_input(h, b, seed);
		if (b->spec->init.kind == KB_INIT_FILE) {
			if ((rc = kb_profile_load_file(b->spec->init.path, &b->host, err)) < 0)
				goto out;
			KB_CU_CALL(err, cuMemcpyHtoD(b->dev, b->host.data, b->bytes));
			continue;
		}
		json_object_set_new(seeds, b->spec->name, json_integer((json_int_t)(seed >> 1)));
		if ((rc = kb_profile__fill(c->d, b->dev, b->spec->dtype, b->host.n, &b->spec->init,
					   seed, err)) < 0)
			goto out;
	}
out:
	kb_hash_final(h, c->ref_key);
	return rc;
}

static int poison(run_ctx *c, kb_profile__buf *bufs, int n, kb_err *err)
{
	int rc = KB_OK;
	for (int i = 0; i < n; i++)
		if (bufs[i].spec->is_out)
			KB_CU_CALL(err, cuMemsetD8Async(bufs[i].dev, KB_POISON_BYTE, bufs[i].bytes,
							c->d->stream));
out:
	return rc;
}

static int read_back(kb_profile__buf *bufs, int n, bool outputs, kb_err *err)
{
	int rc = KB_OK;
	for (int i = 0; i < n; i++)
		if (bufs[i].spec->is_out == outputs)
			KB_CU_CALL(err, cuMemcpyDtoH(bufs[i].host.data, bufs[i].dev, bufs[i].bytes));
out:
	return rc;
}

/* Launches bd after poisoning its outputs and waits; reads outputs back. */
static int launch_checked(run_ctx *c, kb_profile__bound *bd, const char *phase, kb_err *err)
{
	int rc;
	double t0 = kb_now_ms();
	if ((rc = poison(c, bd->bufs, bd->nbufs, err)) < 0 || (rc = kb_profile__launch(c->d, bd, err)) < 0)
		return gpu_fail(c, rc, err);
	progress(c, bd, phase);
	if ((rc = kb_profile__sync(c->d, err)) < 0)
		return gpu_fail(c, rc, err);
	double t1 = kb_now_ms();
	if ((rc = read_back(bd->bufs, bd->nbufs, true, err)) < 0)
		return gpu_fail(c, rc, err);
	c->ms_gpu += t1 - t0;
	c->ms_readback += kb_now_ms() - t1;
	return KB_OK;
}

/* ---- references ------------------------------------------------------------- */

/* The reference kernel gets its own output buffers; inputs are shared. */
static int setup_ref_kernel(run_ctx *c, const kb_kernel *rk, kb_err *err)
{
	int rc = KB_OK;
	c->ref_bufs = kb_xcalloc((size_t)c->bd.nbufs + 1, sizeof *c->ref_bufs);
	for (int i = 0; i < c->bd.nbufs; i++) {
		kb_profile__buf *src = &c->bd.bufs[i], *dst = &c->ref_bufs[i];
		*dst = *src;
		if (!src->spec->is_out)
			continue;
		kb_tensor_init(&dst->host, src->host.name, src->host.dtype, src->host.rank,
			       src->host.dims);
		dst->dev = 0;
		KB_CU_CALL(err, cuMemAlloc(&dst->dev, src->bytes ? src->bytes : 1));
	}
	rc = kb_profile__bind_other(c->d, c->spec, rk, c->b, c->ref_bufs, c->bd.nbufs,
				    &c->bd.dims, &c->ref_bd, err);
out:
	return rc;
}

static void free_ref_kernel(run_ctx *c)
{
	for (int i = 0; c->ref_bufs && i < c->bd.nbufs; i++)
		if (c->ref_bufs[i].spec->is_out) {
			if (c->ref_bufs[i].dev)
				kb_cu.cuMemFree(c->ref_bufs[i].dev);
			kb_tensor_free(&c->ref_bufs[i].host);
		}
	free(c->ref_bufs);
	c->ref_bufs = NULL;
	kb_profile__unbind(&c->ref_bd, false);
}

/* The cache owns reference results; a run only borrows them. */
static void free_ref_outs(run_ctx *c)
{
	c->ref_outs = NULL;
	c->nref_outs = 0;
}

/* Computes the expected outputs for the inputs now on the GPU. */
/* The CPU half of a built-in reference: the inputs are already on the
 * host. Runs on its own thread for the last trial (see check_trials). */
static int cpu_reference(run_ctx *c, kb_err *err)
{
	double t0 = kb_now_ms();
	kb_tensor *ins = kb_xcalloc((size_t)c->bd.nbufs + 1, sizeof *ins);
	int nins = 0;
	for (int i = 0; i < c->bd.nbufs; i++)
		if (!c->bd.bufs[i].spec->is_out)
			ins[nins++] = c->bd.bufs[i].host;
	int nouts = c->spec->ref.nouts;
	kb_ref_out *outs = kb_xcalloc((size_t)nouts + 1, sizeof *outs);
	int rc = kb_profile_reference(c->spec, c->src, ins, nins, outs, 0, err);
	free(ins);
	if (rc < 0) {
		free(outs);
		return rc;
	}
	c->ref_outs = kb_profile__refcache_put(c->ref_key, outs, nouts);
	c->nref_outs = nouts;
	c->ms_reference += kb_now_ms() - t0;
	return KB_OK;
}

/* The GPU half: a reference kernel's launch, or the reference cache, or
 * reading the inputs back. *need_cpu says whether cpu_reference must follow. */
static int gpu_reference(run_ctx *c, bool *need_cpu, kb_err *err)
{
	*need_cpu = false;
	if (c->ref_bufs) /* a reference kernel, on the GPU */
		return launch_checked(c, &c->ref_bd, "reference kernel", err);
	free_ref_outs(c);
	c->ref_outs = kb_profile__refcache_get(c->ref_key, &c->nref_outs);
	if (c->ref_outs) {
		c->ref_cached++;
		return KB_OK;
	}
	double t0 = kb_now_ms();
	int rc = read_back(c->bd.bufs, c->bd.nbufs, false, err);
	if (rc < 0)
		return gpu_fail(c, rc, err);
	c->ms_readback += kb_now_ms() - t0;
	*need_cpu = true;
	return KB_OK;
}

/* A number for JSON, which has no NaN or Inf: those become strings. */
static json_t *num_json(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	return json_real(v);
}

static json_t *stats_json(const char *name, const kb_check_stats *s)
{
	json_t *j = json_object();
	json_object_set_new(j, "output", json_string(name));
	json_object_set_new(j, "ok", json_boolean(s->ok));
	json_object_set_new(j, "elements", json_integer(s->n));
	json_object_set_new(j, "max_abs_err", num_json(s->max_abs));
	json_object_set_new(j, "max_rel_err", num_json(s->max_rel));
	json_object_set_new(j, "rel_l2_err", num_json(s->rel_l2));
	json_object_set_new(j, "mismatches", json_integer(s->mismatches));
	json_object_set_new(j, "nan", json_integer(s->nan_count));
	json_object_set_new(j, "inf", json_integer(s->inf_count));
	json_object_set_new(j, "unwritten", json_integer(s->unwritten));
	if (s->first_bad >= 0) {
		json_t *fb = json_object();
		json_object_set_new(fb, "index", json_integer(s->first_bad));
		json_object_set_new(fb, "at", json_string(s->first_bad_coord));
		json_object_set_new(fb, "got", num_json(s->first_bad_got));
		json_object_set_new(fb, "want", num_json(s->first_bad_want));
		json_object_set_new(j, "first_bad", fb);
	}
	return j;
}

/* Compares every output with the reference; appends per-output JSON. */
static bool compare_outputs(run_ctx *c, json_t *outs)
{
	bool ok = true;
	for (int i = 0; i < c->bd.nbufs; i++) {
		const kb_profile__buf *b = &c->bd.bufs[i];
		if (!b->spec->is_out)
			continue;
		kb_check_stats st;
		memset(&st, 0, sizeof st);
		st.first_bad = -1;
		if (c->ref_bufs) {
			kb_profile_compare_tensors(&b->host, &c->ref_bufs[i].host, c->rtol, c->atol, &st);
		} else {
			const kb_ref_out *r = NULL;
			for (int o = 0; o < c->nref_outs; o++)
				if (c->ref_outs[o].name && !strcmp(c->ref_outs[o].name, b->spec->name))
					r = &c->ref_outs[o];
			if (!r)
				continue; /* an output no reference produces: not checked */
			kb_profile_compare(&b->host, r, c->rtol, c->atol, &st);
		}
		ok = ok && st.ok;
		json_array_append_new(outs, stats_json(b->spec->name, &st));
	}
	return ok;
}

/* ---- trials, timing, re-checks ------------------------------------------------ */

/* The last trial's CPU reference and comparison, on a thread of their own
 * while the GPU is timed and profiled: nothing on the GPU touches the host
 * copies it reads, and nothing is reported until it is joined. */
typedef struct {
	run_ctx *c;
	json_t *trial, *outs;
	bool ok;
	int rc;
	kb_err err;
	pthread_t thread;
	bool running;
} pending_check;

static void *finish_check(void *p)
{
	pending_check *pc = p;
	pc->rc = cpu_reference(pc->c, &pc->err);
	if (pc->rc == 0) {
		double t0 = kb_now_ms();
		pc->ok = compare_outputs(pc->c, pc->outs);
		pc->c->ms_compare += kb_now_ms() - t0;
	}
	return NULL;
}

/* Waits for a pending check; folds its verdict into *correct. */
static int join_check(pending_check *pc, bool *correct, kb_err *err)
{
	if (!pc->running)
		return KB_OK;
	pthread_join(pc->thread, NULL);
	pc->running = false;
	if (pc->rc < 0) {
		*err = pc->err;
		return pc->rc;
	}
	json_object_set_new(pc->trial, "ok", json_boolean(pc->ok));
	*correct = *correct && pc->ok;
	return KB_OK;
}

/* Runs the correctness trials; *correct says whether all passed so far.
 * The last trial's CPU work may be left pending (pc->running). */
static int check_trials(run_ctx *c, json_t *check, bool *correct, pending_check *pc, kb_err *err)
{
	json_t *trials = json_array();
	json_object_set_new(check, "trials", trials);
	*correct = true;
	for (int t = 0; t < c->o->trials; t++) {
		uint64_t seed = c->o->seed + (uint64_t)t;
		json_t *tj = json_object(), *seeds = json_object(), *outs = json_array();
		json_array_append_new(trials, tj);
		json_object_set_new(tj, "seed", json_integer((json_int_t)seed));
		json_object_set_new(tj, "input_seeds", seeds);
		json_object_set_new(tj, "outputs", outs);
		char phase[64];
		snprintf(phase, sizeof phase, "check trial %d/%d", t + 1, c->o->trials);
		bool need_cpu;
		int rc = fill_inputs(c, seed, seeds, err);
		if (rc < 0 || (rc = launch_checked(c, &c->bd, phase, err)) < 0 ||
		    (rc = gpu_reference(c, &need_cpu, err)) < 0)
			return gpu_fail(c, rc, err);
		*pc = (pending_check){.c = c, .trial = tj, .outs = outs};
		if (need_cpu && t == c->o->trials - 1 &&
		    pthread_create(&pc->thread, NULL, finish_check, pc) == 0) {
			pc->running = true;
			return KB_OK;
		}
		if (need_cpu) {
			finish_check(pc);
		} else {
			double t0 = kb_now_ms();
			pc->ok = compare_outputs(c, outs);
			c->ms_compare += kb_now_ms() - t0;
		}
		if (pc->rc < 0) {
			*err = pc->err;
			return pc->rc;
		}
		json_object_set_new(tj, "ok", json_boolean(pc->ok));
		*correct = *correct && pc->ok;
	}
	return KB_OK;
}

/* Device copies of the verified outputs of the last trial, ordered on the
 * run stream: a cuMemcpyDtoD goes on the legacy stream, which the
 * non-blocking run stream does not wait for, so the next re-check's poison
 * raced the copy and every re-check of a 1.6 GB output "differed" (read
 * back and compared on the CPU: 3.3 s of 5.1, bench/big_softmax.txt). */
static int save_golden(run_ctx *c, CUdeviceptr *golden, kb_err *err)
{
	int rc = KB_OK;
	for (int i = 0; i < c->bd.nbufs; i++) {
		const kb_profile__buf *b = &c->bd.bufs[i];
		if (!b->spec->is_out)
			continue;
		KB_CU_CALL(err, cuMemAlloc(&golden[i], b->bytes ? b->bytes : 1));
		KB_CU_CALL(err, cuMemcpyDtoDAsync(golden[i], b->dev, b->bytes, c->d->stream));
	}
out:
	return rc;
}

/* One re-check: poison, launch, and compare bit for bit with the verified
 * output on the GPU; only a difference costs a read-back and a full
 * comparison with the reference (a kernel with atomics may differ in its
 * last bits and still be right). */
static int recheck_once(run_ctx *c, CUdeviceptr *golden, json_t *outs, bool *ok, kb_err *err)
{
	int rc;
	if ((rc = poison(c, c->bd.bufs, c->bd.nbufs, err)) < 0 ||
	    (rc = kb_profile__launch(c->d, &c->bd, err)) < 0)
		return gpu_fail(c, rc, err);
	progress(c, &c->bd, "re-check after timing");
	uint64_t differ = 0;
	for (int i = 0; i < c->bd.nbufs && rc == 0; i++) {
		uint64_t n = 0;
		if (c->bd.bufs[i].spec->is_out)
			rc = kb_profile__count_diff(c->d, c->bd.bufs[i].dev, golden[i], c->bd.bufs[i].bytes,
						    &n, err);
		differ += n;
	}
	if (rc < 0)
		return gpu_fail(c, rc, err);
	*ok = true;
	if (differ == 0)
		return KB_OK;
	if ((rc = read_back(c->bd.bufs, c->bd.nbufs, true, err)) < 0)
		return gpu_fail(c, rc, err);
	*ok = compare_outputs(c, outs);
	return KB_OK;
}

/* After the timed loop: poison, launch, compare, several times over, so an
 * output written only on the first call, or skipped on some calls, shows. */
static int recheck(run_ctx *c, json_t *check, bool *correct, kb_err *err)
{
	json_t *post = json_array();
	json_object_set_new(check, "after_timing", post);
	CUdeviceptr *golden = kb_xcalloc((size_t)c->bd.nbufs + 1, sizeof *golden);
	int rc = save_golden(c, golden, err);
	for (int i = 0; rc == 0 && i < POST_TIMING_CHECKS; i++) {
		json_t *outs = json_array();
		bool ok = false;
		rc = recheck_once(c, golden, outs, &ok, err);
		json_t *pj = json_pack("{s:b, s:o}", "ok", ok, "outputs", outs);
		json_array_append_new(post, pj);
		*correct = *correct && ok;
	}
	for (int i = 0; i < c->bd.nbufs; i++)
		if (golden[i] && !*c->sticky)
			kb_cu.cuMemFree(golden[i]);
	free(golden);
	return rc;
}

/* ---- counters and hot spots ------------------------------------------------------ */

static int launch_once(void *ctx, kb_err *err)
{
	run_ctx *c = ctx;
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
static void collect_counters(run_ctx *c, json_t *result)
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
		gpu_fail(c, rc, &err);
	}
	free(vals);
}

/* PC sampling needs a module first launched after sampling was enabled,
 * so the hot-spot launches load their own instance of the cubin. */
typedef struct {
	run_ctx *c;
	CUmodule mod;
	kb_profile__bound bd;
} fresh_ctx;

static int launch_fresh(void *ctx, kb_err *err)
{
	fresh_ctx *f = ctx;
	int rc = KB_OK;
	if (!f->mod) {
		f->bd = f->c->bd;
		KB_CU_CALL(err, cuModuleLoadData(&f->mod, f->c->b->cubin));
		KB_CU_CALL(err, cuModuleGetFunction(&f->bd.fn, f->mod, f->c->bd.symbol));
		if (f->bd.dims.smem > 48 * 1024)
			KB_CU_CALL(err, cuFuncSetAttribute(f->bd.fn,
							   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
							   (int)f->bd.dims.smem));
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

static void collect_hot(run_ctx *c, double median_us, json_t *result)
{
	fresh_ctx f = {.c = c};
	kb_pc_record *recs = NULL;
	int n = 0;
	uint64_t total = 0;
	kb_err err = {0};
	/* About 50 ms of kernel time, so even a short kernel gets samples. */
	int repeats = median_us > 0 ? (int)(50e3 / median_us) : 20;
	repeats = repeats < 5 ? 5 : repeats > 2000 ? 2000 : repeats;
	progress(c, &c->bd, "hot spots (PC sampling)");
	int rc = kb_profile_pcsample(c->d, launch_fresh, &f, repeats, &recs, &n, &total, &err);
	if (f.mod)
		kb_cu.cuModuleUnload(f.mod);
	if (rc < 0) {
		json_object_set_new(result, "hot_error", json_pack("{s:s, s:b}", "message", err.msg,
								   "permission", rc == KB_EPERM));
		gpu_fail(c, rc, &err);
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

/* The driver's own occupancy for this launch: the cross-check of the
 * offline calculator. */
static void driver_occupancy(run_ctx *c, json_t *launch)
{
	int blocks = 0;
	int threads = (int)(c->bd.dims.block[0] * c->bd.dims.block[1] * c->bd.dims.block[2]);
	if (kb_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, c->bd.fn, threads,
							     (size_t)c->bd.dims.smem) == CUDA_SUCCESS)
		json_object_set_new(launch, "driver_blocks_per_sm", json_integer(blocks));
}

static size_t all_bytes(const kb_profile__bound *bd)
{
	size_t n = 0;
	for (int i = 0; i < bd->nbufs; i++)
		n += bd->bufs[i].bytes;
	return n;
}

static int setup(run_ctx *c, const kb_kernels *all, kb_err *err)
{
	int rc = kb_profile__bind(c->d, c->src, c->spec, c->k, c->b, &c->bd, err);
	if (rc < 0)
		return gpu_fail(c, rc, err);
	const kb_spec_ref *ref = &c->spec->ref;
	if (!ref->present)
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0,
				  "the spec has no `//! ref` line, so correctness cannot be checked");
	if (ref->is_kernel) {
		for (int i = 0; all && i < all->n; i++)
			if (!strcmp(all->v[i].name, ref->fn))
				return setup_ref_kernel(c, &all->v[i], err);
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

int kb_profile_run(kb_device *d, const kb_source *src, const kb_spec *spec,
		   const kb_kernels *all, const kb_kernel *k, const kb_build *b,
		   const kb_run_opts *o, json_t **result, bool *sticky, kb_err *err)
{
	run_ctx c = {.d = d, .src = src, .spec = spec, .k = k, .b = b, .o = o, .sticky = sticky};
	pending_check pc = {0};
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
	kb_dtype first_out = KB_DT_F32;
	for (int i = 0; i < c.bd.nbufs; i++)
		if (c.bd.bufs[i].spec->is_out)
			first_out = c.bd.bufs[i].spec->dtype;
	kb_profile_default_tol(first_out, &c.rtol, &c.atol);
	if (spec->has_tol)
		c.rtol = spec->rtol, c.atol = spec->atol;
	json_object_set_new(check, "rtol", json_real(c.rtol));
	json_object_set_new(check, "atol", json_real(c.atol));
	bool correct;
	double t_check = kb_now_ms();
	if ((rc = check_trials(&c, check, &correct, &pc, err)) < 0)
		goto out;
	phase_done(phases, "trials", &t_phase);
	/* GPU work overlaps the last trial's CPU reference (pending_check). */
	if (correct && o->time_it) {
		json_t *timing = NULL;
		progress(&c, &c.bd, "timing");
		if ((rc = kb_profile__time(d, &c.bd, o, all_bytes(&c.bd), &timing, err)) < 0) {
			gpu_fail(&c, rc, err);
			goto out;
		}
		json_object_set_new(*result, "timing", timing);
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
	if ((rc = join_check(&pc, &correct, err)) < 0)
		goto out;
	phase_done(phases, "reference_wait", &t_phase);
	json_object_set_new(check, "ms", json_pack("{s:f, s:f, s:f, s:f, s:f}", "total",
						   kb_now_ms() - t_check, "gpu", c.ms_gpu,
						   "readback", c.ms_readback, "reference",
						   c.ms_reference, "compare", c.ms_compare));
	json_object_set_new(check, "reference_cached_trials", json_integer(c.ref_cached));
	if (!correct) /* an incorrect kernel is never reported with a time */
		json_object_del(*result, "timing");
	else if (json_object_get(*result, "timing") && (rc = recheck(&c, check, &correct, err)) < 0)
		goto out;
	phase_done(phases, "recheck", &t_phase);
	json_object_set(*result, "phases_ms", phases);
	json_object_set_new(check, "correct", json_boolean(correct));
	json_object_set_new(*result, "verdict", json_string(correct ? "CORRECT" : "INCORRECT"));
out:
	if (pc.running) { /* a GPU failure while the reference ran: wait for it */
		kb_err ignored;
		join_check(&pc, &correct, &ignored);
	}
	json_decref(phases);
	free_ref_outs(&c);
	free_ref_kernel(&c);
	if (!*sticky)
		kb_profile__unbind(&c.bd, true);
	return rc;
}
