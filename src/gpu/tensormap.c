/*
 * tensormap.c - the kernel parameters that `//! tensormap` lines describe:
 * a TMA descriptor (CUtensorMap, 128 bytes, passed by value as a
 * `const __grid_constant__ CUtensorMap`) of one spec tensor's device buffer,
 * encoded with cuTensorMapEncodeTiled.  The plan (which buffer, the box, the
 * swizzle) is made once at bind; the encoding depends on the buffer's
 * address, so every buffer set the timer rotates through encodes its own.
 *
 * The spec writes dims outermost first, as the tensors are declared; the
 * driver wants them innermost first, so both dims and box are reversed here.
 * Elements outside the tensor read as zero (no OOB NaN fill), which is what
 * a GEMM's ragged edge tile needs.  A line with unaligned=zero whose tensor
 * TMA cannot describe (a stride that is no multiple of 16 bytes, a buffer
 * the driver refuses) passes 128 zero bytes instead of failing the run:
 * its kernel checks for them and copies another way.
 */
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kb_profile__is_tmap_param(const kb_spec *spec, const kb_param *p)
{
	return kb_compile_spec_tmap(spec, p->name) != NULL;
}

static int tmap_dtype(kb_dtype dt, CUtensorMapDataType *out)
{
	switch (dt) {
	case KB_DT_F32: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; return 0;
	case KB_DT_F64: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; return 0;
	case KB_DT_F16: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; return 0;
	case KB_DT_BF16: *out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; return 0;
	case KB_DT_I32: *out = CU_TENSOR_MAP_DATA_TYPE_INT32; return 0;
	case KB_DT_I64: *out = CU_TENSOR_MAP_DATA_TYPE_INT64; return 0;
	case KB_DT_I16: *out = CU_TENSOR_MAP_DATA_TYPE_UINT16; return 0; /* same bits */
	case KB_DT_I8:
	case KB_DT_U8: *out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return 0;
	default: return -1;
	}
}

static CUtensorMapSwizzle tmap_swizzle(int bytes)
{
	return bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
	       : bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE;
}

/* The limits TMA puts on a box, checked here so the message names the spec
 * line rather than CUDA_ERROR_INVALID_VALUE. */
static int check_box(const kb_profile__tmap *m, const kb_profile__buf *b, kb_err *err)
{
	const kb_spec_tmap *s = m->spec;
	size_t esize = (size_t)kb_dtype_size(b->spec->dtype);
	if (m->rank > 5)
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: %s has %d "
				  "dims; TMA takes at most 5", s->loc.line, s->name, b->spec->name,
				  m->rank);
	for (int d = 0; d < s->nbox; d++)
		if (m->box[d] < 1 || m->box[d] > 256)
			return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: box "
					  "extent %u is not in 1..256 (TMA's limit)", s->loc.line,
					  s->name, m->box[d]);
	size_t inner = m->box[0] * esize;
	if (inner % 16)
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: the box's "
				  "innermost extent is %zu bytes; TMA moves multiples of 16 bytes",
				  s->loc.line, s->name, inner);
	if (s->swizzle && inner > (size_t)s->swizzle)
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: the box's "
				  "innermost extent is %zu bytes, more than its %d-byte swizzle span",
				  s->loc.line, s->name, inner, s->swizzle);
	return KB_OK;
}

/* Whether every stride of the tensor is a multiple of 16 bytes, which TMA
 * needs; *bad gets the first that is not. */
static bool strides_ok(const kb_profile__buf *b, size_t *bad)
{
	const int64_t *dims = b->host.dims;
	size_t stride = (size_t)kb_dtype_size(b->spec->dtype);
	for (int d = b->spec->rank - 1; d > 0; d--) {
		stride *= (size_t)dims[d];
		if (stride % 16)
			return *bad = stride, false;
	}
	return true;
}

static int check_strides(kb_profile__tmap *m, const kb_profile__buf *b, kb_err *err)
{
	size_t stride;
	if (strides_ok(b, &stride))
		return KB_OK;
	if (m->spec->zero_unaligned)
		return m->zero = true, KB_OK;
	return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: a row of %s is "
			  "%zu bytes; TMA needs every stride to be a multiple of 16 bytes (pad the "
			  "tensor, use another copy, or say unaligned=zero)", m->spec->loc.line,
			  m->spec->name, b->spec->name, stride);
}

/* What was asked of the driver, innermost first as it takes them. */
static void describe(char *out, size_t n, int rank, const cuuint64_t *gdim,
		     const cuuint64_t *gstride, const cuuint32_t *box, int swizzle)
{
	size_t k = 0;
	for (int d = 0; d < rank && k < n; d++)
		k += (size_t)snprintf(out + k, n - k, "%sdim %d: %llu elements, box %u%s", d ? "; " : "",
				      d, (unsigned long long)gdim[d], box[d], d + 1 < rank ? "," : "");
	for (int d = 0; d + 1 < rank && k < n; d++)
		k += (size_t)snprintf(out + k, n - k, " stride %llu B", (unsigned long long)gstride[d]);
	if (k < n)
		snprintf(out + k, n - k, "; swizzle %d", swizzle);
}

static int encode(kb_profile__bound *bd, int j, kb_err *err)
{
	const kb_profile__tmap *m = &bd->tmaps[j];
	const kb_profile__buf *b = &bd->bufs[m->buf];
	int rank = m->rank;
	const cuuint64_t *gdim = m->dims, *gstride = m->strides;
	CUtensorMapDataType dt;
	if (m->zero) {
		memset(&bd->tmap_store[j], 0, sizeof bd->tmap_store[j]);
		return KB_OK;
	}
	if (tmap_dtype(b->spec->dtype, &dt))
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: TMA has no "
				  "%s element type", m->spec->loc.line, m->spec->name,
				  kb_dtype_name(b->spec->dtype));
	cuuint32_t estride[KB_MAX_RANK] = {1, 1, 1, 1, 1};
	CUresult r = kb_cu.cuTensorMapEncodeTiled(&bd->tmap_store[j], dt, (cuuint32_t)rank,
						   (void *)(uintptr_t)b->dev, gdim, gstride,
						   m->box, estride, CU_TENSOR_MAP_INTERLEAVE_NONE,
						   tmap_swizzle(m->spec->swizzle),
						   CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
						   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS && m->spec->zero_unaligned) {
		memset(&bd->tmap_store[j], 0, sizeof bd->tmap_store[j]);
		return KB_OK;
	}
	if (r != CUDA_SUCCESS) {
		const char *name = NULL;
		kb_cu.cuGetErrorName(r, &name);
		char what[256];
		describe(what, sizeof what, rank, gdim, gstride, m->box, m->spec->swizzle);
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: "
				  "cuTensorMapEncodeTiled refused it (%s) for %s's buffer: %s",
				  m->spec->loc.line, m->spec->name, name ? name : "?", b->spec->name,
				  what);
	}
	return KB_OK;
}

int kb_profile__tmaps_encode(kb_profile__bound *bd, kb_err *err)
{
	free(bd->tmap_store);
	bd->tmap_store = NULL;
	if (!bd->ntmaps)
		return KB_OK;
	bd->tmap_store = aligned_alloc(64, (size_t)bd->ntmaps * sizeof(CUtensorMap));
	if (!bd->tmap_store) {
		fputs("kbench: out of memory\n", stderr);
		abort();
	}
	for (int j = 0; j < bd->ntmaps; j++) {
		int rc = encode(bd, j, err);
		if (rc < 0)
			return rc;
		bd->params[bd->tmaps[j].param] = &bd->tmap_store[j];
	}
	return KB_OK;
}

/* The tensor's dims and strides, innermost first: taken once, from the
 * buffer bind made (the timer's copies of it keep no host shape).  A box of
 * fewer dims than the tensor reads its leading dims as one: [B, H, N, D]
 * with box=(BN, 64) as [B H N, D] rows (a tile kernel's [R, D] parameter). */
static void plan_dims(kb_profile__tmap *m, const kb_profile__buf *b)
{
	size_t stride = (size_t)kb_dtype_size(b->spec->dtype);
	int rank = b->spec->rank;
	m->rank = m->spec->nbox && m->spec->nbox < rank ? m->spec->nbox : rank;
	for (int d = 0; d < m->rank; d++) {
		int64_t n = b->host.dims[rank - 1 - d];
		for (int o = rank - 1 - d - 1; d + 1 == m->rank && o >= 0; o--) /* the leading dims, merged */
			n *= b->host.dims[o];
		m->dims[d] = (cuuint64_t)(n ? n : 1);
		stride *= (size_t)m->dims[d];
		if (d + 1 < m->rank)
			m->strides[d] = stride;
	}
}

/* The box's extents, innermost first. */
static int eval_box(const kb_source *src, const kb_spec *spec, kb_profile__tmap *m, kb_err *err)
{
	const kb_spec_tmap *s = m->spec;
	for (int d = 0; d < s->nbox; d++) {
		kb_value v;
		int erc = kb_compile_spec_eval(spec, s->box[d], &v, src, NULL);
		if (erc < 0 || v.is_float || v.i < 1 || v.i > 256)
			return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s: box "
					  "extent %d is not an integer in 1..256", s->loc.line, s->name,
					  d);
		m->box[s->nbox - 1 - d] = (cuuint32_t)v.i;
	}
	return KB_OK;
}

int kb_profile__tmaps_bind(const kb_source *src, const kb_spec *spec, const kb_kernel *k,
			   kb_profile__bound *bd, kb_err *err)
{
	for (int p = 0; p < k->nparams; p++) {
		const kb_spec_tmap *s = kb_compile_spec_tmap(spec, k->params[p].name);
		if (!s)
			continue;
		int buf = -1;
		for (int i = 0; i < bd->nbufs; i++)
			if (!strcmp(bd->bufs[i].spec->name, s->tensor))
				buf = i;
		if (buf < 0)
			return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "line %d: tensormap %s "
					  "describes %s, which is not a tensor of the spec",
					  s->loc.line, s->name, s->tensor);
		bd->tmaps = kb_xrealloc(bd->tmaps, ((size_t)bd->ntmaps + 1) * sizeof *bd->tmaps);
		kb_profile__tmap *m = &bd->tmaps[bd->ntmaps++];
		*m = (kb_profile__tmap){.param = p, .buf = buf, .spec = s};
		plan_dims(m, &bd->bufs[buf]);
		int rc = eval_box(src, spec, m, err);
		if (rc < 0 || (rc = check_box(m, &bd->bufs[buf], err)) < 0 ||
		    (rc = check_strides(m, &bd->bufs[buf], err)) < 0)
			return rc;
	}
	return kb_profile__tmaps_encode(bd, err);
}
