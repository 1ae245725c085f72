/*
 * tensor.h - host tensors and how an output compares with its reference:
 * a tensor in host memory, in its own dtype (tensor.c); the comparison of
 * an output read back from the GPU with reference values (compare.c; the
 * same on the GPU is src/gpu/devcheck.c); an input loaded from a .npy or
 * raw file (npy.c).  Host memory only: no GPU, no references; the
 * references (src/reference/) and the GPU layer (src/gpu/) both build on it.
 */
#ifndef KB_TENSOR_H
#define KB_TENSOR_H

#include "../core/kb.h"
#include "../compile/compile.h"

/* ===== tensor.c ===== */

/* A dense row-major tensor in host memory, in its own dtype. */
typedef struct {
	char *name;
	kb_dtype dtype;
	int rank;
	int64_t dims[KB_MAX_RANK];
	int64_t n;          /* elements (1 for rank 0) */
	void *data;         /* n * kb_dtype_size(dtype) bytes, owned */
} kb_tensor;

/* Allocates (zeroed) a tensor of the given shape. */
void kb_tensor_init(kb_tensor *t, const char *name, kb_dtype dtype, int rank,
		    const int64_t *dims);
void kb_tensor_free(kb_tensor *t);
/* Element i converted to double (f16/bf16 decoded exactly). */
double kb_tensor_get(const kb_tensor *t, int64_t i);
/* Stores v into element i, rounded to the dtype (round-to-nearest-even). */
void kb_tensor_set(kb_tensor *t, int64_t i, double v);
/* "y[17, 4095]" for flat index i. */
void kb_tensor_coord(const kb_tensor *t, int64_t i, char *out, size_t n);
/* f16 / bf16 <-> float conversions (exact decode, RNE encode). */
float kb_half_to_float(uint16_t h);
uint16_t kb_float_to_half(float f);
float kb_bf16_to_float(uint16_t h);
uint16_t kb_float_to_bf16(float f);

/* ===== compare.c ===== */

/* A reference result: one double array per output, shaped like the output
 * (made by src/reference/, read by the comparisons). */
typedef struct {
	char *name;
	int rank;
	int64_t dims[KB_MAX_RANK];
	int64_t n;
	double *v;
	char *ran;          /* outs[0] of a Python reference: which ran and how long it
			     * took ("python torch ref.py:fn, 812.0 ms (server started;
			     * imported torch, ref.py)"); NULL for a built-in */
	double ms;          /* with ran: the reference call's own time */
} kb_ref_out;

/* A reference element left uncomputed (the rows a sampled reference did not
 * draw, reference_attention.c): a NaN of its own bits.  Such an element is
 * checked only for being written and finite, and is not counted in
 * kb_check_stats.compared. */
#define KB_REF_UNCHECKED_BITS 0x7FF8A77E0000C0DEull
double kb_ref_unchecked(void);
bool kb_ref_is_unchecked(double r);

/* Bit pattern the runner writes over outputs before every launch (0xFF
 * bytes: NaN for floats, -1 / 255 for integers). */
#define KB_POISON_BYTE 0xFF
/* How many elements around the first bad one a check reports. */
#define KB_CHECK_NEAR 9

typedef struct {
	int64_t n;
	int64_t compared;               /* elements with a reference value (n unless
					   the reference sampled rows) */
	int64_t rows, rows_compared;    /* rows (the last dim is a row) in all, and
					   those with a reference value */
	int64_t nan_count, inf_count;   /* NaN/Inf where the reference is finite */
	int64_t unwritten;              /* still bit-equal to the poison */
	int64_t mismatches;             /* |out-ref| > atol + rtol*|ref| */
	double max_abs, max_rel;        /* over finite, written elements */
	double rel_l2;                  /* ||out-ref|| / ||ref|| */
	int64_t first_bad;              /* flat index of the first bad element, -1 */
	char first_bad_coord[96];       /* "y[17, 4095]" */
	double first_bad_got, first_bad_want;
	/* The first bad element's neighbourhood: elements near_first ...
	 * (NaN got where unwritten). */
	int64_t near_first;
	int near_n;
	double near_got[KB_CHECK_NEAR], near_want[KB_CHECK_NEAR];
	bool near_unwritten[KB_CHECK_NEAR];
	bool ok;
} kb_check_stats;

/* Compares an output (as read back from the GPU) with its reference.
 * Unwritten elements, NaN/Inf and tolerance failures all make ok false. */
void kb_profile_compare(const kb_tensor *out, const kb_ref_out *ref, double rtol,
			double atol, kb_check_stats *st);
/* Same, against another tensor (a reference kernel's output). */
void kb_profile_compare_tensors(const kb_tensor *out, const kb_tensor *ref, double rtol,
				double atol, kb_check_stats *st);
/* The default (rtol, atol) of a dtype: f64 1e-7/1e-7, f32 1e-5/1e-6,
 * f16 1e-3/1e-5, bf16 1.6e-2/1e-5, integers 0/0 (exact); see compare.c. */
void kb_profile_default_tol(kb_dtype t, double *rtol, double *atol);

/* The steps both comparisons share (this one and src/gpu/devcheck.c). */
bool kb_profile__check_ints(kb_dtype t);
/* The value an all-poison element of integer dtype t reads as. */
double kb_profile__check_poison_value(kb_dtype t);
void kb_profile__check_begin(const kb_tensor *out, kb_check_stats *st);
/* Size mismatch, coordinate, rel L2 and the verdict. */
void kb_profile__check_end(const kb_tensor *out, kb_check_stats *st, int64_t ref_n, double sum_d2,
			   double sum_r2);

/* ===== npy.c ===== */

/* Loads a .npy file (v1/v2/v3 headers, little-endian, C order; dtypes <f8 <f4
 * <f2 <i8 <i4 <i2 |i1 |u1, and bf16 as raw) or, for other extensions, raw
 * binary of the expected size, into t (whose dtype and shape the spec set).
 * Checks that dtype and shape agree. Returns 0, or KB_EINVAL/KB_EIO/KB_ENOTFOUND
 * with err naming the file ("x.npy: shape (4, 5) but the spec says f32[4, 6]"). */
int kb_profile_load_file(const char *path, kb_tensor *t, kb_err *err);

#endif
