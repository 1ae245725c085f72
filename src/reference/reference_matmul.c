/*
 * reference_matmul.c - the matmul built-in reference: a[M, K] x b[K, N] in
 * double, either operand transposed or batched (a 2-D operand is shared by
 * every batch), both packed to doubles first, then blocked over k and n
 * with 4x4 register tiles of two-double GNU vectors, row blocks spread
 * over threads.
 *
 * Invariants: each output element is summed in k order within a k block,
 * block after block, by one thread, so the result does not depend on the
 * number of threads.
 */
#include "reference.h"

#include <string.h>

/* ===== matmul ===== */

#define MM_ROWS 32
#define MM_KB 128
#define MM_NB 64

typedef struct {
	int64_t batch, m, k, n;
	bool a_batched, b_batched;
	const double *a, *b;    /* packed [B][M][K] and [B][K][N] */
	double *c;              /* [B][M][N], zeroed */
} mmjob;

/* Two doubles (a GNU vector, SSE2 on x86-64); unaligned loads via memcpy. */
typedef double v2d __attribute__((vector_size(16)));

static inline v2d ld2(const double *p)
{
	v2d v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void st2(double *p, v2d v)
{
	memcpy(p, &v, sizeof(v));
}

/* c[4][4] += a[4 rows, kn] * b[kn, 4 cols], the 16 sums kept in registers. */
static void mm_micro(const double *a, int64_t lda, const double *b, int64_t ldb, double *c,
		     int64_t ldc, int64_t kn)
{
	v2d c0l = ld2(c), c0h = ld2(c + 2), c1l = ld2(c + ldc), c1h = ld2(c + ldc + 2);
	v2d c2l = ld2(c + 2 * ldc), c2h = ld2(c + 2 * ldc + 2);
	v2d c3l = ld2(c + 3 * ldc), c3h = ld2(c + 3 * ldc + 2);
	const double *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
	for (int64_t k = 0; k < kn; k++) {
		v2d bl = ld2(b + k * ldb), bh = ld2(b + k * ldb + 2), x;
		x = (v2d){a[k], a[k]};
		c0l += x * bl;
		c0h += x * bh;
		x = (v2d){a1[k], a1[k]};
		c1l += x * bl;
		c1h += x * bh;
		x = (v2d){a2[k], a2[k]};
		c2l += x * bl;
		c2h += x * bh;
		x = (v2d){a3[k], a3[k]};
		c3l += x * bl;
		c3h += x * bh;
	}
	st2(c, c0l), st2(c + 2, c0h), st2(c + ldc, c1l), st2(c + ldc + 2, c1h);
	st2(c + 2 * ldc, c2l), st2(c + 2 * ldc + 2, c2h);
	st2(c + 3 * ldc, c3l), st2(c + 3 * ldc + 2, c3h);
}

/* One element of c, the plain way (block edges). */
static void mm_edge(const double *a, const double *b, int64_t ldb, double *c, int64_t kn)
{
	double s = *c;
	for (int64_t k = 0; k < kn; k++)
		s += a[k] * b[k * ldb];
	*c = s;
}

/* Rows [i0, i1) of c += a * b, blocked over k and n, 4x4 register tiles. */
static void mm_block(const mmjob *j, const double *a, const double *b, double *c,
		     int64_t i0, int64_t i1)
{
	int64_t K = j->k, N = j->n;
	for (int64_t k0 = 0; k0 < K; k0 += MM_KB) {
		int64_t kn = K - k0 < MM_KB ? K - k0 : MM_KB;
		for (int64_t n0 = 0; n0 < N; n0 += MM_NB) {
			int64_t n1 = N - n0 < MM_NB ? N : n0 + MM_NB;
			for (int64_t i = i0; i < i1; i += 4) {
				bool full = i + 4 <= i1;
				for (int64_t x = n0; x < n1; x += 4) {
					const double *ak = a + i * K + k0, *bk = b + k0 * N + x;
					if (full && x + 4 <= n1) {
						mm_micro(ak, K, bk, N, c + i * N + x, N, kn);
						continue;
					}
					for (int64_t r = i; r < i1 && r < i + 4; r++)
						for (int64_t y = x; y < n1 && y < x + 4; y++)
							mm_edge(a + r * K + k0, b + k0 * N + y, N,
								c + r * N + y, kn);
				}
			}
		}
	}
}

static void mm_range(void *p, int64_t lo, int64_t hi, double *s)
{
	const mmjob *j = p;
	int64_t blocks = (j->m + MM_ROWS - 1) / MM_ROWS;
	for (int64_t it = lo; it < hi; it++) {
		int64_t bi = it / blocks, i0 = (it % blocks) * MM_ROWS;
		int64_t i1 = i0 + MM_ROWS < j->m ? i0 + MM_ROWS : j->m;
		const double *a = j->a + (j->a_batched ? bi * j->m * j->k : 0);
		const double *b = j->b + (j->b_batched ? bi * j->k * j->n : 0);
		mm_block(j, a, b, j->c + bi * j->m * j->n, i0, i1);
	}
}

/* Packs t (its last two dims [r, c], maybe transposed) as [B][rows][cols]. */
static double *mm_pack(const kb_tensor *t, bool trans, int nthreads)
{
	double *v = kb_profile__ref_to_doubles(t, nthreads);
	if (!trans)
		return v;
	int64_t r = t->dims[t->rank - 2], cl = t->dims[t->rank - 1], nb = t->n / (r * cl);
	double *p = kb_big_alloc((size_t)t->n * sizeof(double));
	for (int64_t b = 0; b < nb; b++)
		for (int64_t i = 0; i < r; i++)
			for (int64_t k = 0; k < cl; k++)
				p[b * r * cl + k * r + i] = v[b * r * cl + i * cl + k];
	kb_big_free(v);
	return p;
}

/* Fills j's sizes from a and b; returns 0 or KB_EINVAL. */
static int mm_shapes(kb_profile__refcall *c, const kb_tensor *a, const kb_tensor *b, bool ta,
		     bool tb, mmjob *j)
{
	char sa[160], sb[160];
	kb_profile__ref_shape_str(a->rank, a->dims, sa, sizeof(sa));
	kb_profile__ref_shape_str(b->rank, b->dims, sb, sizeof(sb));
	if (a->rank < 2 || a->rank > 3 || b->rank < 2 || b->rank > 3)
		return kb_profile__ref_fail(c, "'%s' %s and '%s' %s: matmul takes 2-D or batched 3-D tensors",
					    a->name, sa, b->name, sb);
	const int64_t *ad = a->dims + a->rank - 2, *bd = b->dims + b->rank - 2;
	j->m = ta ? ad[1] : ad[0];
	j->k = ta ? ad[0] : ad[1];
	int64_t kb = tb ? bd[1] : bd[0];
	j->n = tb ? bd[0] : bd[1];
	j->a_batched = a->rank == 3;
	j->b_batched = b->rank == 3;
	j->batch = j->a_batched ? a->dims[0] : j->b_batched ? b->dims[0] : 1;
	if (j->k != kb)
		return kb_profile__ref_fail(c, "'%s' %s%s and '%s' %s%s: inner dims %lld and %lld differ",
					    a->name, sa, ta ? " (transposed)" : "", b->name, sb,
					    tb ? " (transposed)" : "", (long long)j->k,
					    (long long)kb);
	if (j->a_batched && j->b_batched && a->dims[0] != b->dims[0])
		return kb_profile__ref_fail(c, "'%s' %s and '%s' %s: batch sizes differ", a->name,
					    sa, b->name, sb);
	return 0;
}

int kb_profile__ref_matmul(kb_profile__refcall *c)
{
	const kb_tensor *a, *b;
	double ta, tb;
	mmjob j = {0};
	int rc;
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &a)) ||
	    (rc = kb_profile__ref_tensor_arg(c, 1, NULL, true, &b)) ||
	    (rc = kb_profile__ref_param(c, -1, "transpose_a", 0, &ta)) ||
	    (rc = kb_profile__ref_param(c, -1, "transpose_b", 0, &tb)) ||
	    (rc = mm_shapes(c, a, b, ta != 0, tb != 0, &j)))
		return rc;
	int64_t dims[3] = {j.batch, j.m, j.n};
	bool batched = j.a_batched || j.b_batched;
	if ((rc = kb_profile__ref_alloc_out(c, batched ? 3 : 2, batched ? dims : dims + 1)))
		return rc;
	double *pa = mm_pack(a, ta != 0, c->nthreads), *pb = mm_pack(b, tb != 0, c->nthreads);
	j.a = pa;
	j.b = pb;
	j.c = c->out->v;
	int64_t blocks = (j.m + MM_ROWS - 1) / MM_ROWS;
	if (j.m && j.n && j.k)
		kb_profile__ref_parallel_for(j.batch * blocks, 2.0 * MM_ROWS * (double)(j.k * j.n),
					     c->nthreads, 0, mm_range, &j);
	kb_big_free(pb);
	kb_big_free(pa);
	return 0;
}
