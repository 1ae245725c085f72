/*
 * tensor.c - host tensors (kb_tensor) and the 16-bit float formats.  Owns
 * allocation, element access converted to and from double, coordinates of a
 * flat index for messages, and the f16/bf16 codecs.  It knows nothing of
 * specs, references or the GPU.
 *
 * Invariants:
 *  - Decoding f16/bf16 is exact (every such value is a float).
 *  - Encoding rounds to nearest, ties to even, straight from the source
 *    precision (a double is never rounded to float first, which would round
 *    twice), including subnormals, overflow to infinity and signed zeros.
 *    NaN keeps its sign and the top bits of its payload; a payload that would
 *    become zero becomes the quiet bit, so NaN stays NaN.  Every 16-bit
 *    pattern survives decode -> encode bit for bit (NaN payloads included).
 *  - Integer stores round to nearest even and saturate; NaN stores 0.
 */
#include "tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== 16-bit float codecs ===== */

typedef struct {
	int ebits, mbits;  /* exponent and fraction widths */
} fmt16;

static const fmt16 F16 = {5, 10}, BF16 = {8, 7};

/* Decodes a 16-bit pattern of format f exactly; NaN payloads move to the top
 * of the float's fraction (built bitwise, so nothing quiets a signalling NaN). */
static float decode16(uint16_t h, fmt16 f)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31;
	int bias = (1 << (f.ebits - 1)) - 1;
	uint32_t emask = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
	uint32_t e = (h >> f.mbits) & emask, m = h & mmask;
	float v;
	if (e == emask) {
		uint32_t bits = sign | 0x7f800000u | (m << (23 - f.mbits));
		memcpy(&v, &bits, sizeof(v));
		return v;
	}
	if (e == 0)
		v = ldexpf((float)m, 1 - bias - f.mbits);
	else
		v = ldexpf((float)(m | (1u << f.mbits)), (int)e - bias - f.mbits);
	return sign ? -v : v;
}

/* Rounds a non-NaN double to format f (RNE, subnormals, overflow to inf). */
static uint16_t encode16(double v, fmt16 f)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	uint16_t sign = (uint16_t)((bits >> 63) << 15);
	int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias;
	uint64_t inf = (uint64_t)((1u << f.ebits) - 1) << f.mbits;
	int E = (int)((bits >> 52) & 0x7ff);
	if (E == 0x7ff)
		return (uint16_t)(sign | inf);
	if (E == 0)                 /* a double subnormal or zero: far below 2^-133 */
		return sign;
	int e = E - 1023;
	uint64_t sig = (bits & ((1ull << 52) - 1)) | (1ull << 52);
	int shift = 52 - f.mbits + (e < emin ? emin - e : 0);
	if (shift > 60)             /* below a quarter of the smallest subnormal */
		return sign;
	uint64_t q = sig >> shift, rem = sig & ((1ull << shift) - 1), half = 1ull << (shift - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	/* q carries the implicit bit at position mbits for normals, so adding
	 * it to the biased exponent minus one gives the pattern, and a rounding
	 * carry moves into the exponent by itself.  Subnormals are q alone. */
	uint64_t r = e < emin ? q : ((uint64_t)(e + bias - 1) << f.mbits) + q;
	if (r >= inf)
		r = inf;
	return (uint16_t)(sign | r);
}

/* The NaN of format f with the sign and top payload bits of a wider NaN
 * whose fraction (fbits wide) is frac. */
static uint16_t nan16(int negative, uint64_t frac, int fbits, fmt16 f)
{
	uint64_t m = frac >> (fbits - f.mbits);
	if (m == 0)
		m = 1ull << (f.mbits - 1);
	uint64_t inf = (uint64_t)((1u << f.ebits) - 1) << f.mbits;
	return (uint16_t)((negative ? 0x8000u : 0) | inf | m);
}

static uint16_t float_to16(float x, fmt16 f)
{
	uint32_t bits;
	memcpy(&bits, &x, sizeof(bits));
	if ((bits & 0x7fffffffu) > 0x7f800000u)
		return nan16((int)(bits >> 31), bits & 0x7fffffu, 23, f);
	return encode16((double)x, f);
}

static uint16_t double_to16(double x, fmt16 f)
{
	uint64_t bits;
	memcpy(&bits, &x, sizeof(bits));
	if (isnan(x))
		return nan16((int)(bits >> 63), bits & ((1ull << 52) - 1), 52, f);
	return encode16(x, f);
}

/* An IEEE binary16 pattern as a float (exact). */
float kb_half_to_float(uint16_t h)
{
	return decode16(h, F16);
}

/* A float rounded to binary16 (round to nearest even). */
uint16_t kb_float_to_half(float f)
{
	return float_to16(f, F16);
}

/* A bfloat16 pattern as a float (exact): the top half of a float's bits,
 * decode16's answer in a shift (the CPU references convert billions). */
float kb_bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float v;
	memcpy(&v, &bits, sizeof v);
	return v;
}

/* A float rounded to bfloat16 (round to nearest even). */
uint16_t kb_float_to_bf16(float f)
{
	return float_to16(f, BF16);
}

/* ===== tensors ===== */

/* Allocates a zeroed tensor of the given shape (dims may be NULL for rank 0). */
void kb_tensor_init(kb_tensor *t, const char *name, kb_dtype dtype, int rank,
		    const int64_t *dims)
{
	memset(t, 0, sizeof(*t));
	t->name = name ? kb_xstrdup(name) : NULL;
	t->dtype = dtype;
	t->rank = rank < 0 ? 0 : rank > KB_MAX_RANK ? KB_MAX_RANK : rank;
	t->n = 1;
	for (int d = 0; d < t->rank; d++) {
		t->dims[d] = dims[d] < 0 ? 0 : dims[d];
		t->n *= t->dims[d];
	}
	size_t n = t->n > 0 ? (size_t)t->n : 1;
	t->data = kb_big_calloc(n * (size_t)kb_dtype_size(dtype));
}

/* Releases the name and data; t may be reused with kb_tensor_init. */
void kb_tensor_free(kb_tensor *t)
{
	free(t->name);
	kb_big_free(t->data);
	memset(t, 0, sizeof(*t));
}

/* Element i as a double (f16/bf16 decoded exactly). */
double kb_tensor_get(const kb_tensor *t, int64_t i)
{
	const void *p = t->data;
	switch (t->dtype) {
	case KB_DT_F64: return ((const double *)p)[i];
	case KB_DT_F32: return ((const float *)p)[i];
	case KB_DT_F16: return kb_half_to_float(((const uint16_t *)p)[i]);
	case KB_DT_BF16: return kb_bf16_to_float(((const uint16_t *)p)[i]);
	case KB_DT_I64: return (double)((const int64_t *)p)[i];
	case KB_DT_I32: return ((const int32_t *)p)[i];
	case KB_DT_I16: return ((const int16_t *)p)[i];
	case KB_DT_I8: return ((const int8_t *)p)[i];
	case KB_DT_U8: return ((const uint8_t *)p)[i];
	case KB_DT_COUNT: break;
	}
	KB_UNREACHABLE();
}

/* v rounded to nearest even and clamped to [lo, hi]; NaN gives 0. */
static double to_int(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	v = nearbyint(v);
	return v < lo ? lo : v > hi ? hi : v;
}

/* Stores v into element i, rounded to the dtype (nearest even; integers
 * saturate). */
void kb_tensor_set(kb_tensor *t, int64_t i, double v)
{
	void *p = t->data;
	switch (t->dtype) {
	case KB_DT_F64: ((double *)p)[i] = v; return;
	case KB_DT_F32: ((float *)p)[i] = (float)v; return;
	case KB_DT_F16: ((uint16_t *)p)[i] = double_to16(v, F16); return;
	case KB_DT_BF16: ((uint16_t *)p)[i] = double_to16(v, BF16); return;
	case KB_DT_I64:
		/* 2^63 is not an int64; the largest double below it is. */
		((int64_t *)p)[i] = (int64_t)to_int(v, -9223372036854775808.0,
						    9223372036854774784.0);
		return;
	case KB_DT_I32: ((int32_t *)p)[i] = (int32_t)to_int(v, INT32_MIN, INT32_MAX); return;
	case KB_DT_I16: ((int16_t *)p)[i] = (int16_t)to_int(v, INT16_MIN, INT16_MAX); return;
	case KB_DT_I8: ((int8_t *)p)[i] = (int8_t)to_int(v, INT8_MIN, INT8_MAX); return;
	case KB_DT_U8: ((uint8_t *)p)[i] = (uint8_t)to_int(v, 0, UINT8_MAX); return;
	case KB_DT_COUNT: break;
	}
	KB_UNREACHABLE();
}

/* Writes "name[i0, i1, ...]" for flat index i into out (truncated to n). */
void kb_tensor_coord(const kb_tensor *t, int64_t i, char *out, size_t n)
{
	int64_t idx[KB_MAX_RANK];
	for (int d = t->rank - 1; d >= 0; d--) {
		int64_t dim = t->dims[d] > 0 ? t->dims[d] : 1;
		idx[d] = i % dim;
		i /= dim;
	}
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "%s[", t->name ? t->name : "?");
	for (int d = 0; d < t->rank; d++)
		kb_buf_catf(&b, "%s%lld", d ? ", " : "", (long long)idx[d]);
	kb_buf_cat(&b, "]");
	if (n > 0)
		snprintf(out, n, "%s", b.s);
	kb_buf_free(&b);
}
