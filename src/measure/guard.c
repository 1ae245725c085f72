/*
 * guard.c - a timed launch is a checked launch's twin.  Before each timed
 * launch its outputs are poisoned, as before a checked one (outside the
 * timed span: timing.c puts the poison before the flush), so a kernel that
 * returns early where its output already holds the answer does the whole
 * work when timed too.  The timed launches rotate over the input sets of
 * the correctness trials (each kept on the GPU with the output its checked
 * launch wrote, the "golden" one), so a kernel keyed on "the same input as
 * last time" finds a different one.  After each timed launch, outside the
 * span, a small kernel compares its outputs with the golden ones of its set
 * within the run's tolerance (kb_guard_diff: equal values pass at once, so
 * a kernel with atomics that differs in its last bits still passes) and
 * keeps the count and the first bad index of that launch; after the loop
 * the counts are read once.  A timed launch that wrote less, or other
 * values, than its checked twin makes the run INCORRECT, naming the launch.
 *
 * Memory: each kept set costs its inputs, its outputs and a golden copy of
 * its outputs; a set is kept only while that fits in a quarter of the free
 * GPU memory, so a kernel whose buffers fill the GPU is timed on the last
 * trial's inputs alone (the Result says so).
 */
#include "measure.h"

#include <stdlib.h>
#include <string.h>

/* Input sets beyond the run's own: the trials rotate over at most this
 * many in all. */
#define KB_GUARD_MAX_SETS 3

/* ---- buffer sets ------------------------------------------------------------- */

int kb_profile__clone_bound(kb_device *d, const kb_profile__bound *bd, kb_profile__bound *set,
			    kb_err *err)
{
	int rc = KB_OK;
	*set = *bd;
	set->bufs = kb_xcalloc((size_t)bd->nbufs + 1, sizeof *set->bufs);
	set->params = kb_xcalloc((size_t)bd->nparams + 1, sizeof(void *));
	memcpy(set->params, bd->params, (size_t)bd->nparams * sizeof(void *));
	set->tmap_store = NULL; /* the main set's encodings point at its buffers */
	for (int i = 0; i < bd->nbufs; i++) {
		set->bufs[i] = bd->bufs[i];
		memset(&set->bufs[i].host, 0, sizeof set->bufs[i].host);
		set->bufs[i].dev = 0;
		if ((rc = KB_CU(err, cuMemAlloc(&set->bufs[i].dev,
						bd->bufs[i].bytes ? bd->bufs[i].bytes : 1))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuMemcpyDtoDAsync(set->bufs[i].dev, bd->bufs[i].dev, bd->bufs[i].bytes,
						       d->stream))) < 0)
			goto out;
		for (int p = 0; p < bd->nparams; p++)
			if (bd->params[p] == &bd->bufs[i].dev)
				set->params[p] = &set->bufs[i].dev;
	}
	rc = kb_profile__tmaps_encode(set, err);
out:
	return rc;
}

void kb_profile__free_clone(kb_profile__bound *set, const kb_profile__bound *main_bd)
{
	for (int i = 0; set->bufs && i < set->nbufs; i++)
		if (set->bufs[i].dev && set->bufs[i].dev != main_bd->bufs[i].dev)
			kb_cu.cuMemFree(set->bufs[i].dev);
	free(set->bufs);
	free(set->params);
	free(set->tmap_store);
	memset(set, 0, sizeof *set);
}

size_t kb_profile__bound_bytes(const kb_profile__bound *bd, bool outputs_only)
{
	size_t n = 0;
	for (int i = 0; i < bd->nbufs; i++)
		if (!outputs_only || bd->bufs[i].spec->is_out)
			n += bd->bufs[i].bytes;
	return n;
}

/* Whether `bytes` more fit in `share` of the GPU memory free now. */
bool kb_profile__fits(size_t bytes, double share)
{
	size_t free_b = 0, total = 0;
	if (kb_cu.cuMemGetInfo(&free_b, &total) != CUDA_SUCCESS)
		return false;
	return (double)bytes <= share * (double)free_b;
}

/* ---- the guard --------------------------------------------------------------- */

void kb_profile__guard_init(kb_profile__guard *g, const kb_profile__bound *bd, const bool *checked,
			    double rtol, double atol)
{
	memset(g, 0, sizeof *g);
	g->shape = bd;
	g->rtol = rtol, g->atol = atol;
	g->out_buf = kb_xcalloc((size_t)bd->nbufs + 1, sizeof *g->out_buf);
	for (int i = 0; i < bd->nbufs; i++)
		if (bd->bufs[i].spec->is_out && checked[i])
			g->out_buf[g->nchecked++] = i;
	g->sets = kb_xcalloc(KB_GUARD_MAX_SETS, sizeof *g->sets);
}

/* Copies of bd's checked outputs as they are now (the checked launch's). */
static int keep_golden(kb_profile__guard *g, kb_device *d, const kb_profile__bound *bd,
		       kb_profile__tset *set, kb_err *err)
{
	int rc = KB_OK;
	set->golden = kb_xcalloc((size_t)bd->nbufs + 1, sizeof *set->golden);
	for (int k = 0; k < g->nchecked; k++) {
		const kb_profile__buf *b = &bd->bufs[g->out_buf[k]];
		if ((rc = KB_CU(err, cuMemAlloc(&set->golden[g->out_buf[k]],
						b->bytes ? b->bytes : 1))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuMemcpyDtoDAsync(set->golden[g->out_buf[k]], b->dev, b->bytes,
						       d->stream))) < 0)
			goto out;
	}
out:
	return rc;
}

/* Whether some input differs from trial to trial (one drawn from a seed). */
static bool seeded_inputs(const kb_spec *spec)
{
	for (int i = 0; i < spec->ntensors; i++) {
		const kb_spec_tensor *t = &spec->tensors[i];
		if (!t->is_out && (t->init.kind == KB_INIT_RANDN || t->init.kind == KB_INIT_RAND))
			return true;
	}
	return false;
}

bool kb_profile__guard_wants(kb_profile__guard *g, const kb_spec *spec, const kb_profile__bound *bd)
{
	if (g->nsets + 1 >= KB_GUARD_MAX_SETS)
		return false;
	if (!seeded_inputs(spec)) {
		g->why_one_set = "no input is drawn from a seed, so every trial's are the same";
		return false;
	}
	if (!kb_profile__fits(kb_profile__bound_bytes(bd, false) + kb_profile__bound_bytes(bd, true),
			      0.25)) {
		g->why_one_set = "another trial's buffers do not fit in a quarter of the free GPU memory";
		return false;
	}
	return true;
}

int kb_profile__guard_keep(kb_profile__guard *g, kb_device *d, kb_profile__bound *bd,
			   uint64_t seed, bool is_run_bound, kb_err *err)
{
	kb_profile__tset *set = &g->sets[g->nsets];
	memset(set, 0, sizeof *set);
	set->seed = seed;
	int rc = KB_OK;
	if (is_run_bound)
		set->bd = *bd;
	else if ((rc = kb_profile__clone_bound(d, bd, &set->bd, err)) == 0)
		set->clone = true;
	if (rc == 0)
		rc = keep_golden(g, d, bd, set, err);
	g->nsets++; /* freed whole by guard_free, even half made */
	return rc;
}

int kb_profile__guard_slots(kb_profile__guard *g, kb_device *d, int64_t launches, kb_err *err)
{
	int rc = KB_OK;
	size_t n = (size_t)(launches > 0 ? launches : 1) * (size_t)(g->nchecked ? g->nchecked : 1);
	if (g->counts)
		kb_cu.cuMemFree(g->counts);
	if (g->firsts)
		kb_cu.cuMemFree(g->firsts);
	g->counts = g->firsts = 0;
	g->capacity = g->launches = 0;
	if ((rc = KB_CU(err, cuMemAlloc(&g->counts, n * 8))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemAlloc(&g->firsts, n * 8))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8Async(g->counts, 0, n * 8, d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8Async(g->firsts, 0xFF, n * 8, d->stream))) < 0)
		goto out;
	g->capacity = launches;
out:
	return rc;
}

int kb_profile__guard_check(kb_profile__guard *g, kb_device *d, const kb_profile__bound *bd,
			    const kb_profile__tset *set, kb_err *err)
{
	if (g->launches >= g->capacity) {
		g->unchecked++;
		return KB_OK;
	}
	int rc = KB_OK;
	for (int k = 0; k < g->nchecked && rc == 0; k++) {
		int i = g->out_buf[k];
		CUdeviceptr slot = (CUdeviceptr)((size_t)(g->launches * g->nchecked + k) * 8);
		rc = kb_profile__guard_diff(d, bd->bufs[i].dev, set->golden[i], bd->bufs[i].spec->dtype,
					    g->shape->bufs[i].host.n, g->rtol, g->atol,
					    g->counts + slot, g->firsts + slot, err);
	}
	g->launches++;
	return rc;
}

/* What the first bad timed launch wrote: which launch (1-based, in the
 * order they ran), which output, how many elements, the first one. */
static json_t *bad_json(const kb_profile__guard *g, int64_t launch, int k, uint64_t count,
			uint64_t first)
{
	const kb_profile__buf *b = &g->shape->bufs[g->out_buf[k]];
	char at[96];
	kb_tensor_coord(&b->host, (int64_t)first < b->host.n ? (int64_t)first : b->host.n - 1, at,
			sizeof at);
	return json_pack("{s:I, s:s, s:I, s:I, s:s}", "launch", (json_int_t)(launch + 1), "output",
			 b->spec->name, "elements", (json_int_t)count, "of", (json_int_t)b->host.n,
			 "first_bad", at);
}

int kb_profile__guard_finish(kb_profile__guard *g, kb_device *d, json_t *check, bool *ok,
			     kb_err *err)
{
	int rc = KB_OK;
	size_t n = (size_t)g->launches * (size_t)g->nchecked;
	uint64_t *counts = kb_xcalloc(n + 1, 8), *firsts = kb_xcalloc(n + 1, 8);
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
	if (n) {
		if ((rc = KB_CU(err, cuMemcpyDtoH(counts, g->counts, n * 8))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuMemcpyDtoH(firsts, g->firsts, n * 8))) < 0)
			goto out;
	}
	json_t *j = json_pack("{s:I, s:I, s:i}", "launches_checked", (json_int_t)g->launches,
			      "launches_unchecked", (json_int_t)g->unchecked, "input_sets", g->nsets);
	json_t *seeds = json_array();
	for (int s = 0; s < g->nsets; s++)
		json_array_append_new(seeds, json_integer((json_int_t)g->sets[s].seed));
	json_object_set_new(j, "input_set_trials", seeds);
	if (g->why_one_set)
		json_object_set_new(j, "one_input_set", json_string(g->why_one_set));
	*ok = true;
	for (size_t s = 0; s < n && *ok; s++)
		if (counts[s]) {
			*ok = false;
			json_object_set_new(j, "bad", bad_json(g, (int64_t)(s / (size_t)g->nchecked),
							       (int)(s % (size_t)g->nchecked), counts[s],
							       firsts[s]));
		}
	json_object_set_new(j, "ok", json_boolean(*ok));
	json_object_set_new(check, "timed_launches", j);
out:
	free(counts);
	free(firsts);
	return rc;
}

const kb_profile__tset *kb_profile__guard_set(const kb_profile__guard *g, int64_t launch)
{
	return &g->sets[launch % g->nsets];
}

void kb_profile__guard_free(kb_profile__guard *g, bool sticky)
{
	for (int s = 0; s < g->nsets; s++) {
		kb_profile__tset *set = &g->sets[s];
		for (int i = 0; !sticky && set->golden && i < g->shape->nbufs; i++)
			if (set->golden[i])
				kb_cu.cuMemFree(set->golden[i]);
		free(set->golden);
		if (set->clone) {
			if (sticky) { /* the context is gone: only the host side */
				free(set->bd.bufs);
				free(set->bd.params);
				free(set->bd.tmap_store);
			} else {
				kb_profile__free_clone(&set->bd, g->shape);
			}
		}
	}
	if (!sticky && g->counts)
		kb_cu.cuMemFree(g->counts);
	if (!sticky && g->firsts)
		kb_cu.cuMemFree(g->firsts);
	free(g->sets);
	free(g->out_buf);
	memset(g, 0, sizeof *g);
}
