/*
 * check.c - the correctness half of a run: for each trial fill the inputs
 * with fresh seeds, poison the outputs, launch, and compare with the
 * reference (a built-in CPU reference in double precision, or a reference
 * kernel of the same file); after the timed loop, re-check several times,
 * poisoning before each launch, so a kernel that writes only on some calls
 * is caught.  Produces the "check" part of a Result.
 *
 * Where outputs are compared: on the GPU by default (devcheck.c), against
 * the reference kernel's outputs or an upload of the CPU reference kept
 * per reference key, so a check reads back a summary instead of the
 * output; on the host (compare.c, the outputs read back) with
 * $KBENCH_COMPARE=cpu, for a trial whose CPU reference is still being
 * computed (the last one, beside the timing), and when the reference does
 * not fit on the GPU.  Both apply the same rules and give the same verdicts
 * and figures (test_profile_devcheck.c); each trial and re-check says
 * where it was compared ("compared_on").
 */
#include "measure.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Enough consecutive launches that a kernel skipping its work on every
 * k-th call, for any k up to this, is caught after the timed loop. */
#define POST_TIMING_CHECKS 8

static uint64_t mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* ---- inputs and outputs ------------------------------------------------------ */

/* A Python reference: its form as written and its file's content, so an
 * edit of ref.py computes it again and an unchanged one is reused. */
static void hash_python(kb_hasher *h, const kb_source *src, const kb_spec_pyref *py)
{
	if (py->lang == KB_PYREF_NONE)
		return;
	kb_hash_update(h, &py->lang, sizeof py->lang);
	kb_hash_update(h, &py->cuda, sizeof py->cuda);
	kb_hash_str(h, py->text);
	if (!py->file)
		return;
	char *path = kb_profile__pyref_file(src, py->file);
	kb_buf b = KB_BUF_INIT;
	if (kb_file_read(path, &b, NULL) == 0)
		kb_hash_update(h, b.s, b.len);
	kb_buf_free(&b);
	free(path);
}

/* The part of the reference key that does not change between trials: the
 * ref line, every arg's value and every tensor's dtype and shape. */
static void hash_spec(kb_hasher *h, const kb_profile__run *c)
{
	const kb_spec_ref *r = &c->spec->ref;
	kb_hash_str(h, r->fn);
	hash_python(h, c->src, &r->py);
	for (int i = 0; i < r->nargs; i++) {
		kb_hash_str(h, r->args[i].key ? r->args[i].key : "");
		kb_hash_str(h, r->args[i].text);
	}
	for (int i = 0; i < r->nouts; i++)
		kb_hash_str(h, r->outs[i]);
	const char *budget = getenv(KB_REF_BUDGET_ENV); /* the rows a sampled one computes */
	kb_hash_str(h, budget ? budget : "");
	for (int i = 0; i < c->spec->nargs; i++) {
		kb_hash_str(h, c->spec->args[i].name);
		const kb_value *v = &c->spec->args[i].value; /* field by field: no padding */
		kb_hash_update(h, &v->is_float, sizeof v->is_float);
		kb_hash_update(h, &v->i, sizeof v->i);
		kb_hash_update(h, &v->f, sizeof v->f);
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

static int fill_inputs(kb_profile__run *c, uint64_t trial_seed, json_t *seeds, kb_err *err)
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
			/* the run stream's order (devcheck.c says why not cuMemcpyHtoD) */
			if ((rc = KB_CU(err, cuMemcpyHtoDAsync(b->dev, b->host.data, b->bytes,
							       c->d->stream))) < 0)
				goto out;
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

int kb_profile__fill_inputs(kb_profile__run *c, kb_err *err)
{
	json_t *seeds = json_object();
	int rc = fill_inputs(c, c->o->seed, seeds, err);
	json_decref(seeds);
	return rc;
}

static int read_back(kb_profile__buf *bufs, int n, bool outputs, kb_err *err)
{
	int rc = KB_OK;
	for (int i = 0; i < n; i++)
		if (bufs[i].spec->is_out == outputs &&
		    (rc = KB_CU(err, cuMemcpyDtoH(bufs[i].host.data, bufs[i].dev, bufs[i].bytes))) < 0)
			goto out;
out:
	return rc;
}

/* Launches bd after poisoning its outputs and waits; reads the outputs
 * back when they are to be compared on the host. */
static int launch_checked(kb_profile__run *c, kb_profile__bound *bd, const char *phase,
			  bool read_outputs, kb_err *err)
{
	int rc;
	double t0 = kb_now_ms();
	if ((rc = kb_profile__reset_outputs(c->d, bd, err)) < 0 ||
	    (rc = kb_profile__launch(c->d, bd, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	kb_profile__progress(c, bd, phase);
	if ((rc = kb_profile__sync(c->d, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	double t1 = kb_now_ms();
	c->ms_gpu += t1 - t0;
	if (!read_outputs)
		return KB_OK;
	if ((rc = read_back(bd->bufs, bd->nbufs, true, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	c->ms_readback += kb_now_ms() - t1;
	return KB_OK;
}

/* ---- references ------------------------------------------------------------- */

/* The reference kernel gets its own output buffers; inputs are shared. */
int kb_profile__setup_ref_kernel(kb_profile__run *c, const kb_kernel *rk, kb_err *err)
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
		if ((rc = KB_CU(err, cuMemAlloc(&dst->dev, src->bytes ? src->bytes : 1))) < 0)
			goto out;
	}
	rc = kb_profile__bind_other(c->d, c->spec, rk, c->b, c->ref_bufs, c->bd.nbufs,
				    &c->bd.dims, &c->ref_bd, err);
out:
	return rc;
}

static void free_ref_kernel(kb_profile__run *c)
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
static void free_ref_outs(kb_profile__refwork *w)
{
	w->outs = NULL;
	w->nouts = 0;
}

/* Gives back the claim on the current reference (refstore.c), if held. */
static void release_claim(kb_profile__refwork *w)
{
	kb_profile__refstore_release(&w->claim);
}

/* The bytes of the reference's results (doubles, one per output element). */
static size_t reference_bytes(const kb_profile__run *c)
{
	size_t bytes = 0;
	for (int i = 0; i < c->bd.nbufs; i++)
		if (c->bd.bufs[i].spec->is_out)
			bytes += (size_t)c->bd.bufs[i].host.n * sizeof(double);
	return bytes;
}

/* The current reference when another runner of this machine has just
 * computed it (waiting for it if it is at it), else NULL with the claim to
 * compute it held (one that will not be kept in the files is not claimed:
 * nobody could wait for it). */
static kb_ref_out *claim_or_share(const kb_profile__run *c, kb_profile__refwork *w)
{
	w->claim_tried = true;
	if (!kb_profile__refstore_keeps(reference_bytes(c)))
		return NULL;
	bool waited;
	w->claim = kb_profile__refstore_claim(c->ref_key, &waited);
	/* either way it may be in the files now: computed while we looked */
	kb_ref_out *outs = kb_profile__refcache_get(c->ref_key, &w->nouts);
	if (waited)
		kb_log("check: waited for another runner's reference: %s", outs ? "shared" : "not kept");
	if (outs)
		release_claim(w);
	return outs;
}

/* The CPU half of a built-in reference into w: the inputs are already on
 * the host.  Runs on its own thread for the last trial (see
 * start_reference_thread), reading c and writing only w. */
static int cpu_reference(const kb_profile__run *c, kb_profile__refwork *w, kb_err *err)
{
	double t0 = kb_now_ms();
	/* the last trial's, on its thread: the wait overlaps the timing */
	if (!w->claim_tried && (w->outs = claim_or_share(c, w))) {
		w->ms_reference += kb_now_ms() - t0;
		return KB_OK;
	}
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
	w->outs = kb_profile__refcache_put(c->ref_key, outs, nouts);
	w->nouts = nouts;
	release_claim(w); /* in the files now: a runner waiting for it reads it */
	w->ms_reference += kb_now_ms() - t0;
	return KB_OK;
}

/* The device copy of the current trial's CPU reference, uploaded now if
 * the host has it; NULL when there is none (KB_ENOMEM: it does not fit). */
static const kb_profile__devref *device_reference(kb_profile__run *c, int *rc, kb_err *err)
{
	*rc = KB_OK;
	const kb_profile__devref *r = kb_profile__devref_get(c->d, c->ref_key);
	if (r || !c->ref.outs)
		return r;
	double t0 = kb_now_ms();
	kb_profile__host_progress(c, "reference to the GPU");
	*rc = kb_profile__devref_put(c->d, c->ref_key, c->ref.outs, c->ref.nouts, err);
	c->ms_upload += kb_now_ms() - t0;
	if (*rc == KB_ENOMEM) {
		kb_log("check: %s; comparing on the host", err->msg);
		c->ref_too_big = true;
		kb_err_clear(err);
	}
	return *rc == 0 ? kb_profile__devref_get(c->d, c->ref_key) : NULL;
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
	if (s->compared < s->n) /* a sampled reference: say how much was checked */
		json_object_set_new(j, "sampled", json_pack("{s:I, s:I, s:I}", "compared",
			(json_int_t)s->compared, "rows", (json_int_t)s->rows, "rows_checked",
			(json_int_t)s->rows_compared));
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


/* The neighbourhood of the first bad element, for a failed check. */
static void near_json(json_t *j, const kb_check_stats *s)
{
	json_t *got = json_array(), *want = json_array();
	for (int k = 0; k < s->near_n; k++) {
		json_array_append_new(got, s->near_unwritten[k] ? json_string("unwritten")
								: num_json(s->near_got[k]));
		json_array_append_new(want, num_json(s->near_want[k]));
	}
	json_object_set_new(j, "near", json_pack("{s:I, s:o, s:o}", "from",
						 (json_int_t)s->near_first, "got", got, "want", want));
}

/* Output i against its reference: on the GPU (against the reference
 * kernel's output, or dref) or on the host (read-back copies, against the
 * reference kernel's or w's).  Returns 0, 1 when this output has no
 * reference (not checked), or a KB_E* (CUDA). */
static int compare_one(const kb_profile__run *c, const kb_profile__refwork *w, int i, bool gpu,
		       const kb_profile__devref *dref, kb_check_stats *st, kb_err *err)
{
	const kb_profile__buf *b = &c->bd.bufs[i];
	if (c->ref_bufs) {
		const kb_profile__buf *r = &c->ref_bufs[i];
		if (!gpu) {
			kb_profile_compare_tensors(&b->host, &r->host, c->rtol, c->atol, st);
			return KB_OK;
		}
		kb_profile__devside o = {b->dev, b->host.dtype}, rs = {r->dev, r->host.dtype};
		return kb_profile__devcheck(c->d, &b->host, &o, &rs, r->host.n, c->rtol, c->atol, st,
					    err);
	}
	if (gpu) {
		int64_t n = 0;
		CUdeviceptr p = kb_profile__devref_buf(dref, b->spec->name, &n);
		if (!p)
			return 1; /* an output no reference produces: not checked */
		kb_profile__devside o = {b->dev, b->host.dtype}, rs = {p, KB_DT_F64};
		return kb_profile__devcheck(c->d, &b->host, &o, &rs, n, c->rtol, c->atol, st, err);
	}
	for (int o = 0; o < w->nouts; o++)
		if (w->outs[o].name && !strcmp(w->outs[o].name, b->spec->name)) {
			kb_profile_compare(&b->host, &w->outs[o], c->rtol, c->atol, st);
			return KB_OK;
		}
	return 1;
}

/* Compares every output with the reference (w's when on the host), on the
 * GPU or the host; appends per-output JSON, sets *ok and adds the time to
 * w.  Reads c, writes w.  Returns 0 or a KB_E* (CUDA). */
static int compare_into(const kb_profile__run *c, kb_profile__refwork *w, bool gpu,
			const kb_profile__devref *dref, json_t *outs, bool *ok, kb_err *err)
{
	*ok = true;
	double t0 = kb_now_ms();
	for (int i = 0; i < c->bd.nbufs; i++) {
		if (!c->bd.bufs[i].spec->is_out)
			continue;
		kb_check_stats st;
		int rc = compare_one(c, w, i, gpu, dref, &st, err);
		if (rc < 0)
			return rc;
		if (rc == 1)
			continue;
		*ok = *ok && st.ok;
		json_t *j = stats_json(c->bd.bufs[i].spec->name, &st);
		if (st.first_bad >= 0)
			near_json(j, &st);
		json_array_append_new(outs, j);
	}
	*(gpu ? &w->ms_devcheck : &w->ms_compare) += kb_now_ms() - t0;
	return KB_OK;
}

/* compare_into on the main thread, against the run's own reference. */
static int compare_outputs(kb_profile__run *c, bool gpu, const kb_profile__devref *dref,
			   json_t *outs, bool *ok, kb_err *err)
{
	int rc = compare_into(c, &c->ref, gpu, dref, outs, ok, err);
	return rc < 0 ? kb_profile__gpu_fail(c, rc, err) : rc;
}

/* ---- trials ------------------------------------------------------------------ */

/* The trial's "reference": which one ran (a Python one says how, and how
 * long it took: w's) and whether this trial reused a kept result. */
static void note_reference(const kb_profile__run *c, const kb_profile__refwork *w, json_t *tj,
			   bool cached)
{
	const kb_spec_ref *r = &c->spec->ref;
	const kb_ref_out *o = !cached && w->nouts > 0 ? &w->outs[0] : NULL;
	json_t *j = json_object();
	json_object_set_new(j, "kind", json_string(r->py.lang == KB_PYREF_NONE ? "builtin"
						   : "python"));
	json_object_set_new(j, "ran", json_string(o && o->ran ? o->ran : r->fn ? r->fn
						  : r->py.text ? r->py.text : "?"));
	if (o && o->ran)
		json_object_set_new(j, "ms", json_real(o->ms));
	json_object_set_new(j, "cached", json_boolean(cached));
	json_object_set_new(tj, "reference", j);
}

/* The last trial's CPU reference and host comparison, on a thread of their
 * own while the GPU is timed and profiled: nothing on the GPU touches the
 * host copies it reads, and nothing is reported until it is joined.  It
 * reads the run and writes only its own kb_profile__pending. */
static void *finish_check(void *p)
{
	kb_profile__pending *pc = p;
	const kb_profile__run *c = pc->run;
	pc->rc = cpu_reference(c, &pc->ref, &pc->err);
	if (pc->rc == 0)
		note_reference(c, &pc->ref, pc->trial, false);
	if (pc->rc == 0)
		pc->rc = compare_into(c, &pc->ref, false, NULL, pc->outs, &pc->ok, &pc->err);
	return NULL;
}

/* Starts finish_check on the last trial's read-back host copies, handing
 * it the run's reference state.  Returns false when no thread started (the
 * run's state is as it was). */
static bool start_reference_thread(kb_profile__run *c, json_t *tj, json_t *outs)
{
	kb_profile__pending *pc = &c->pending;
	*pc = (kb_profile__pending){.run = c, .trial = tj, .outs = outs,
				    .ref = {.outs = c->ref.outs, .nouts = c->ref.nouts,
					    .claim = c->ref.claim,
					    .claim_tried = c->ref.claim_tried}};
	json_object_set_new(tj, "compared_on", json_string("cpu"));
	if (pthread_create(&pc->thread, NULL, finish_check, pc) != 0)
		return false;
	pc->running = true;
	c->ref.claim = -1; /* the thread's until the join */
	return true;
}

/* Waits for the reference thread and takes over what it obtained: the
 * reference, its claim, and the time it spent. */
static void join_reference_thread(kb_profile__run *c)
{
	kb_profile__pending *pc = &c->pending;
	pthread_join(pc->thread, NULL);
	pc->running = false;
	c->ref.outs = pc->ref.outs;
	c->ref.nouts = pc->ref.nouts;
	c->ref.claim = pc->ref.claim;
	c->ref.claim_tried = pc->ref.claim_tried;
	c->ref.ms_reference += pc->ref.ms_reference;
	c->ref.ms_compare += pc->ref.ms_compare;
	c->ref.ms_devcheck += pc->ref.ms_devcheck;
}

int kb_profile__check_join(kb_profile__run *c, bool *correct, kb_err *err)
{
	kb_profile__pending *pc = &c->pending;
	if (!pc->running)
		return KB_OK;
	/* The GPU is idle while the CPU reference finishes (8192^3 matmul:
	 * seconds): a host phase, so the kernel timeout does not apply. */
	kb_profile__host_progress(c, "reference on the CPU");
	join_reference_thread(c);
	if (pc->rc < 0) {
		*err = pc->err;
		return pc->rc;
	}
	json_object_set_new(pc->trial, "ok", json_boolean(pc->ok));
	*correct = *correct && pc->ok;
	/* The re-checks (and the next run with these seeds) compare on the GPU. */
	int rc = KB_OK;
	if (c->gpu_compare && !*c->sticky)
		device_reference(c, &rc, err);
	return rc < 0 && rc != KB_ENOMEM ? kb_profile__gpu_fail(c, rc, err) : KB_OK;
}

/* Compares the trial's outputs and records where and with what outcome. */
static int judge(kb_profile__run *c, json_t *tj, json_t *outs, bool gpu,
		 const kb_profile__devref *dref, bool *ok, kb_err *err)
{
	int rc = compare_outputs(c, gpu, dref, outs, ok, err);
	if (rc < 0)
		return rc;
	json_object_set_new(tj, "compared_on", json_string(gpu ? "gpu" : "cpu"));
	json_object_set_new(tj, "ok", json_boolean(*ok));
	return KB_OK;
}

/* The host's copy of the trial's built-in reference, when one is kept: by
 * this process, or by another runner of this machine (waited for if it is
 * computing it; not for the last trial, which waits on its reference
 * thread).  Sets c->ref; false when the reference is still to compute. */
static bool host_reference(kb_profile__run *c, bool last)
{
	free_ref_outs(&c->ref);
	c->ref.claim_tried = false;
	c->ref.outs = kb_profile__refcache_get(c->ref_key, &c->ref.nouts);
	/* another runner may be computing it: wait for it, before reading the
	 * inputs back */
	if (!c->ref.outs && !last && kb_profile__refstore_keeps(reference_bytes(c))) {
		kb_profile__host_progress(c, "reference on the CPU");
		c->ref.outs = claim_or_share(c, &c->ref);
	}
	return c->ref.outs != NULL;
}

/* Obtains the trial's built-in reference on the host: kept, or computed
 * from the inputs read back; the last trial's on a thread beside the
 * timing, which also compares (*pending: nothing left to do here). */
static int obtain_reference(kb_profile__run *c, json_t *tj, json_t *outs, bool last,
			    bool *pending, kb_err *err)
{
	if (host_reference(c, last)) {
		c->ref_cached++;
		note_reference(c, &c->ref, tj, true);
		return KB_OK;
	}
	int rc;
	double t0 = kb_now_ms(); /* after any wait: that was not reading back */
	if ((rc = read_back(c->bd.bufs, c->bd.nbufs, false, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	c->ms_readback += kb_now_ms() - t0;
	/* the thread compares on the host: the outputs too, unless they are there */
	if (last && c->gpu_compare && (rc = read_back(c->bd.bufs, c->bd.nbufs, true, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	if (last && start_reference_thread(c, tj, outs)) {
		*pending = true;
		return KB_OK;
	}
	kb_profile__host_progress(c, "reference on the CPU");
	if ((rc = cpu_reference(c, &c->ref, err)) < 0)
		return rc;
	note_reference(c, &c->ref, tj, false);
	return KB_OK;
}

/* Compares the trial's outputs with the reference the host has: on the GPU
 * against its upload, else (it does not fit, or $KBENCH_COMPARE=cpu) on the
 * host. */
static int compare_reference(kb_profile__run *c, json_t *tj, json_t *outs, bool *ok, kb_err *err)
{
	int rc = KB_OK;
	const kb_profile__devref *dref;
	if (c->gpu_compare && (dref = device_reference(c, &rc, err)))
		return judge(c, tj, outs, true, dref, ok, err);
	if (rc < 0 && rc != KB_ENOMEM)
		return kb_profile__gpu_fail(c, rc, err);
	double t0 = kb_now_ms();
	if (c->gpu_compare && (rc = read_back(c->bd.bufs, c->bd.nbufs, true, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	c->ms_readback += kb_now_ms() - t0;
	return judge(c, tj, outs, false, NULL, ok, err);
}

/* The built-in reference's half of a trial, once the kernel ran: against
 * the device copy when there is one, else obtain the reference, then
 * compare (the last trial's both on a thread: *pending). */
static int builtin_trial(kb_profile__run *c, json_t *tj, json_t *outs, bool last, bool *ok,
			 bool *pending, kb_err *err)
{
	const kb_profile__devref *dref = c->gpu_compare ? kb_profile__devref_get(c->d, c->ref_key)
							 : NULL;
	if (dref) {
		c->ref_cached++;
		note_reference(c, &c->ref, tj, true);
		return judge(c, tj, outs, true, dref, ok, err);
	}
	int rc = obtain_reference(c, tj, outs, last, pending, err);
	if (rc < 0 || *pending)
		return rc;
	return compare_reference(c, tj, outs, ok, err);
}

/* One trial: fresh inputs, the kernel, the reference, the comparison. */
static int trial(kb_profile__run *c, int t, json_t *tj, json_t *outs, bool *ok, bool *pending,
		 kb_err *err)
{
	char phase[64];
	snprintf(phase, sizeof phase, "check trial %d/%d", t + 1, c->o->trials);
	json_t *seeds = json_object();
	json_object_set_new(tj, "input_seeds", seeds);
	bool host = !c->gpu_compare;
	int rc = fill_inputs(c, c->o->seed + (uint64_t)t, seeds, err);
	if (rc < 0 || (rc = launch_checked(c, &c->bd, phase, host, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	if (!c->ref_bufs)
		return builtin_trial(c, tj, outs, t == c->o->trials - 1, ok, pending, err);
	if ((rc = launch_checked(c, &c->ref_bd, "reference kernel", host, err)) < 0)
		return rc;
	return judge(c, tj, outs, c->gpu_compare, NULL, ok, err);
}

int kb_profile__check_trials(kb_profile__run *c, json_t *check, bool *correct, kb_err *err)
{
	json_t *trials = json_array();
	json_object_set_new(check, "trials", trials);
	*correct = true;
	for (int t = 0; t < c->o->trials; t++) {
		json_t *tj = json_object(), *outs = json_array();
		json_array_append_new(trials, tj);
		json_object_set_new(tj, "seed", json_integer((json_int_t)(c->o->seed + (uint64_t)t)));
		json_object_set_new(tj, "outputs", outs);
		bool ok = false, pending = false;
		int rc = trial(c, t, tj, outs, &ok, &pending, err);
		if (rc < 0)
			return rc;
		*correct = *correct && (pending || ok);
		/* the timed launches rotate over the trials' inputs (guard.c) */
		if (*correct && c->o->time_it && t < c->o->trials - 1 &&
		    kb_profile__guard_wants(&c->guard, c->spec, &c->bd) &&
		    (rc = kb_profile__guard_keep(&c->guard, c->d, &c->bd, c->o->seed + (uint64_t)t,
						 false, err)) < 0)
			return kb_profile__gpu_fail(c, rc, err);
	}
	return KB_OK;
}

void kb_profile__check_guard_init(kb_profile__run *c)
{
	bool *checked = kb_xcalloc((size_t)c->bd.nbufs + 1, sizeof *checked);
	const kb_spec_ref *r = &c->spec->ref;
	for (int i = 0; i < c->bd.nbufs; i++) {
		const kb_spec_tensor *t = c->bd.bufs[i].spec;
		/* every output against a reference kernel; those a built-in names */
		checked[i] = t->is_out && (c->ref_bufs != NULL);
		for (int o = 0; t->is_out && !c->ref_bufs && o < r->nouts; o++)
			checked[i] = checked[i] || !strcmp(r->outs[o], t->name);
	}
	kb_profile__guard_init(&c->guard, &c->bd, checked, c->rtol, c->atol);
	free(checked);
}

/* ---- re-checks after timing ----------------------------------------------------- */

/* One re-check without a reference on the GPU: poison, launch, and compare
 * bit for bit with the verified output on the GPU; only a difference costs
 * a read-back and a full comparison on the host (a kernel with atomics may
 * differ in its last bits and still be right). */
static int recheck_golden(kb_profile__run *c, const CUdeviceptr *golden, json_t *outs, bool *ok,
			  kb_err *err)
{
	int rc;
	if ((rc = launch_checked(c, &c->bd, "re-check after timing", false, err)) < 0)
		return rc;
	uint64_t differ = 0;
	for (int i = 0; i < c->bd.nbufs && rc == 0; i++) {
		uint64_t n = 0;
		if (golden[i])
			rc = kb_profile__count_diff(c->d, c->bd.bufs[i].dev, golden[i], c->bd.bufs[i].bytes,
						    &n, err);
		differ += n;
	}
	if (rc < 0)
		return kb_profile__gpu_fail(c, rc, err);
	*ok = true;
	if (differ == 0)
		return KB_OK;
	if ((rc = read_back(c->bd.bufs, c->bd.nbufs, true, err)) < 0)
		return kb_profile__gpu_fail(c, rc, err);
	return compare_outputs(c, false, NULL, outs, ok, err);
}

/* One re-check on the GPU: the whole comparison with the reference. */
static int recheck_gpu(kb_profile__run *c, const kb_profile__devref *dref, json_t *outs, bool *ok,
		       kb_err *err)
{
	int rc = launch_checked(c, &c->bd, "re-check after timing", false, err);
	return rc < 0 ? rc : compare_outputs(c, true, dref, outs, ok, err);
}

int kb_profile__recheck(kb_profile__run *c, json_t *check, bool *correct, kb_err *err)
{
	json_t *post = json_array();
	json_object_set_new(check, "after_timing", post);
	const kb_profile__devref *dref = NULL;
	bool gpu = c->gpu_compare &&
		   (c->ref_bufs || (dref = kb_profile__devref_get(c->d, c->ref_key)));
	/* the last trial's checked outputs, kept for the timed launches */
	const CUdeviceptr *golden = c->guard.sets[c->guard.nsets - 1].golden;
	int rc = KB_OK;
	for (int i = 0; rc == 0 && i < POST_TIMING_CHECKS; i++) {
		json_t *outs = json_array();
		bool ok = false;
		rc = gpu ? recheck_gpu(c, dref, outs, &ok, err) : recheck_golden(c, golden, outs, &ok, err);
		json_t *pj = json_pack("{s:b, s:s, s:o}", "ok", ok, "compared_on", gpu ? "gpu" : "cpu",
				       "outputs", outs);
		json_array_append_new(post, pj);
		*correct = *correct && ok;
	}
	return rc;
}

void kb_profile__check_free(kb_profile__run *c)
{
	if (c->pending.running) /* a GPU failure while the reference ran: wait for it */
		join_reference_thread(c);
	release_claim(&c->ref); /* a failed reference: the next runner computes it */
	kb_profile__guard_free(&c->guard, *c->sticky);
	free_ref_outs(&c->ref);
	free_ref_kernel(c);
}
