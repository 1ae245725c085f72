/*
 * devcheck.c - checking outputs on the GPU: the comparison of compare.c
 * (the same rules, in the same double arithmetic) done by kbench's
 * kb_check kernel where the output already is, so a check reads back a
 * summary of a few kilobytes instead of the whole output; and the device
 * copies of CPU references it compares against, kept per reference key
 * (the inputs' seeds and the spec) for the life of the device, so a warm
 * runner uploads each reference once.
 *
 * The CPU reference in double precision stays the source of truth: a
 * device reference is an upload of it, never computed on the GPU.  What a
 * check reads back: one partial result per block (summed on the host in
 * block order, so the figures do not depend on timing), then, only when
 * something is wrong, the first bad element and its neighbourhood.
 *
 * Device references are evicted least recently used beyond a budget of a
 * quarter of the GPU's memory; one that does not fit is refused
 * (KB_ENOMEM) and the caller compares on the CPU instead.
 */
#include "gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_BLOCK 256
#define CHECK_MAX_BLOCKS 1024

/* What kb_check writes per block (util_kernels.c's kb_check_part). */
typedef struct {
	double max_abs, max_rel, sum_d2, sum_r2;
	uint64_t unwritten, nan, inf, mismatches, compared, first_bad;
} check_part;

/* ===== device references ===== */

struct kb_profile__devref {
	char key[KB_HASH_HEX];
	int n;
	char **names;
	CUdeviceptr *bufs;
	int64_t *lens;
	size_t bytes;
	uint64_t used;
};

static void devref_drop(kb_device *d, kb_profile__devref *e)
{
	for (int i = 0; i < e->n; i++) {
		if (e->bufs[i])
			kb_cu.cuMemFree(e->bufs[i]);
		free(e->names[i]);
	}
	free(e->names);
	free(e->bufs);
	free(e->lens);
	d->devref_bytes -= e->bytes;
	memset(e, 0, sizeof *e);
}

void kb_profile__devcheck_close(kb_device *d)
{
	for (int i = 0; d->devrefs && i < KB_DEVREF_SLOTS; i++)
		if (d->devrefs[i].n)
			devref_drop(d, &d->devrefs[i]);
	free(d->devrefs);
	d->devrefs = NULL;
	if (d->check_parts)
		kb_cu.cuMemFree(d->check_parts);
	d->check_parts = 0;
}

const kb_profile__devref *kb_profile__devref_get(kb_device *d, const char *key)
{
	for (int i = 0; d->devrefs && i < KB_DEVREF_SLOTS; i++)
		if (d->devrefs[i].n && !strcmp(d->devrefs[i].key, key)) {
			d->devrefs[i].used = ++d->devref_tick;
			return &d->devrefs[i];
		}
	return NULL;
}

CUdeviceptr kb_profile__devref_buf(const kb_profile__devref *r, const char *name, int64_t *n)
{
	for (int i = 0; r && i < r->n; i++)
		if (!strcmp(r->names[i], name)) {
			*n = r->lens[i];
			return r->bufs[i];
		}
	return 0;
}

/* The least recently used entry holding a reference, or NULL. */
static kb_profile__devref *devref_oldest(kb_device *d)
{
	kb_profile__devref *v = NULL;
	for (int i = 0; i < KB_DEVREF_SLOTS; i++)
		if (d->devrefs[i].n && (!v || d->devrefs[i].used < v->used))
			v = &d->devrefs[i];
	return v;
}

/* A free slot, else the least recently used entry. */
static kb_profile__devref *devref_victim(kb_device *d)
{
	for (int i = 0; i < KB_DEVREF_SLOTS; i++)
		if (!d->devrefs[i].n)
			return &d->devrefs[i];
	return devref_oldest(d);
}

/* Makes room for `bytes` more within the budget, evicting the least
 * recently used (free slots or not: until 2026-11-29 a free slot stopped
 * the eviction, and a reference that needed room was refused while older
 * ones stayed); false when it cannot be. */
static bool devref_room(kb_device *d, size_t bytes)
{
	size_t budget = d->devref_budget ? d->devref_budget : d->info.total_mem / 4;
	if (bytes > budget)
		return false;
	for (kb_profile__devref *v; d->devref_bytes + bytes > budget && (v = devref_oldest(d));)
		devref_drop(d, v);
	return d->devref_bytes + bytes <= budget;
}

int kb_profile__devref_put(kb_device *d, const char *key, const kb_ref_out *outs, int n,
			   kb_err *err)
{
	size_t bytes = 0;
	for (int i = 0; i < n; i++)
		bytes += (size_t)outs[i].n * sizeof(double);
	if (kb_profile__devref_get(d, key))
		return KB_OK;
	if (!d->devrefs)
		d->devrefs = kb_xcalloc(KB_DEVREF_SLOTS, sizeof *d->devrefs);
	if (!devref_room(d, bytes))
		return kb_err_set(err, KB_ENOMEM, KB_DOM_CUDA, 0,
				  "the reference (%.2f GB) does not fit in a quarter of the GPU's memory",
				  (double)bytes / 1e9);
	kb_profile__devref *e = devref_victim(d);
	if (e->n)
		devref_drop(d, e);
	e->names = kb_xcalloc((size_t)n + 1, sizeof *e->names);
	e->bufs = kb_xcalloc((size_t)n + 1, sizeof *e->bufs);
	e->lens = kb_xcalloc((size_t)n + 1, sizeof *e->lens);
	e->n = n;
	int rc = KB_OK;
	for (int i = 0; i < n; i++) {
		size_t b = (size_t)outs[i].n * sizeof(double);
		e->names[i] = kb_xstrdup(outs[i].name ? outs[i].name : "");
		e->lens[i] = outs[i].n;
		if ((rc = KB_CU(err, cuMemAlloc(&e->bufs[i], b ? b : 8))) < 0)
			goto out;
		/* on the run stream, as the check that reads it: from pageable
		 * memory a legacy-stream cuMemcpyHtoD returns once the bytes are
		 * staged, and the non-blocking run stream does not wait for its
		 * DMA (a check then read a half-uploaded reference) */
		if ((rc = KB_CU(err, cuMemcpyHtoDAsync(e->bufs[i], outs[i].v, b, d->stream))) < 0)
			goto out;
	}
	memcpy(e->key, key, KB_HASH_HEX);
	e->bytes = bytes;
	e->used = ++d->devref_tick;
	d->devref_bytes += bytes;
	return KB_OK;
out:
	d->devref_bytes += bytes; /* devref_drop takes it off again */
	e->bytes = bytes;
	devref_drop(d, e);
	return rc == KB_ERROR && kb_profile__cu_sticky(err->code) ? rc : KB_ENOMEM;
}

/* ===== the comparison ===== */

/* Element i of a device buffer of dtype t, as a double; *poison says
 * whether its bytes are all poison. */
static int read_elem(CUdeviceptr p, kb_dtype t, int64_t i, double *v, bool *poison, kb_err *err)
{
	int rc = KB_OK;
	unsigned char bytes[8];
	int size = kb_dtype_size(t);
	if ((rc = KB_CU(err, cuMemcpyDtoH(bytes, p + (CUdeviceptr)i * (CUdeviceptr)size,
					  (size_t)size))) < 0)
		goto out;
	kb_tensor one = {.dtype = t, .rank = 1, .dims = {1}, .n = 1, .data = bytes};
	*v = kb_tensor_get(&one, 0);
	*poison = true;
	for (int k = 0; k < size; k++)
		*poison = *poison && bytes[k] == KB_POISON_BYTE;
out:
	return rc;
}

/* The first bad element and its neighbourhood, read from the device. */
static int read_bad(const kb_profile__devside *o, const kb_profile__devside *r, int64_t n,
		    bool ints, double pval, kb_check_stats *st, kb_err *err)
{
	int rc = KB_OK;
	int64_t from = st->first_bad - KB_CHECK_NEAR / 2;
	from = from < 0 ? 0 : from;
	st->near_first = from;
	st->near_n = 0;
	for (int64_t i = from; i < n && st->near_n < KB_CHECK_NEAR; i++) {
		double got, want;
		bool pz, rz;
		if ((rc = read_elem(o->ptr, o->dtype, i, &got, &pz, err)) < 0 ||
		    (rc = read_elem(r->ptr, r->dtype, i, &want, &rz, err)) < 0)
			return rc;
		bool unwritten = pz && !(ints && want == pval);
		st->near_got[st->near_n] = unwritten ? NAN : got;
		st->near_want[st->near_n] = want;
		st->near_unwritten[st->near_n++] = unwritten;
		if (i == st->first_bad) {
			st->first_bad_got = unwritten ? NAN : got;
			st->first_bad_want = want;
		}
	}
	return rc;
}

/* Sums the blocks' partial results in block order into st. */
static void add_parts(const check_part *p, int nb, kb_check_stats *st, double *d2, double *r2)
{
	uint64_t first = UINT64_MAX;
	for (int b = 0; b < nb; b++) {
		st->max_abs = p[b].max_abs > st->max_abs ? p[b].max_abs : st->max_abs;
		st->max_rel = p[b].max_rel > st->max_rel ? p[b].max_rel : st->max_rel;
		*d2 += p[b].sum_d2;
		*r2 += p[b].sum_r2;
		st->unwritten += (int64_t)p[b].unwritten;
		st->nan_count += (int64_t)p[b].nan;
		st->inf_count += (int64_t)p[b].inf;
		st->mismatches += (int64_t)p[b].mismatches;
		st->compared += (int64_t)p[b].compared;
		first = p[b].first_bad < first ? p[b].first_bad : first;
	}
	if (first != UINT64_MAX)
		st->first_bad = (int64_t)first;
}

int kb_profile__devcheck(kb_device *d, const kb_tensor *shape, const kb_profile__devside *out,
			 const kb_profile__devside *ref, int64_t ref_n, double rtol, double atol,
			 kb_check_stats *st, kb_err *err)
{
	int rc = KB_OK;
	check_part parts[CHECK_MAX_BLOCKS];
	kb_profile__check_begin(shape, st);
	if (!d->check_parts && (rc = KB_CU(err, cuMemAlloc(&d->check_parts, sizeof parts))) < 0)
		goto out;
	unsigned long long n = (unsigned long long)(shape->n < ref_n ? shape->n : ref_n);
	int odt = (int)out->dtype, rdt = (int)ref->dtype;
	int ints = kb_profile__check_ints(shape->dtype);
	double pval = ints ? kb_profile__check_poison_value(shape->dtype) : 0;
	unsigned nb = (unsigned)d->info.sm_count * 4;
	nb = nb < 1 ? 1 : nb > CHECK_MAX_BLOCKS ? CHECK_MAX_BLOCKS : nb;
	void *args[] = {(void *)&out->ptr, &odt, (void *)&ref->ptr, &rdt, &n, &rtol, &atol,
			&ints, &pval, &d->check_parts};
	if ((rc = KB_CU(err, cuLaunchKernel(d->check, nb, 1, 1, CHECK_BLOCK, 1, 1, 0, d->stream, args,
				            NULL))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemcpyDtoHAsync(parts, d->check_parts, nb * sizeof *parts,
					       d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
	double d2 = 0, r2 = 0;
	add_parts(parts, (int)nb, st, &d2, &r2);
	if (st->first_bad >= 0 && (rc = read_bad(out, ref, (int64_t)n, ints, pval, st, err)) < 0)
		return rc;
	kb_profile__check_end(shape, st, ref_n, d2, r2);
out:
	return rc;
}

