/*
 * lower_load.c - loads of slices as CUDA C: a slice's access (its first
 * element, the elements left in its range dim, whether its positions are
 * in range), then 16-byte accesses where aligned and in range, a scalar
 * path where not, and whole tiles with every 16-byte load in flight before
 * the first is used; a [BN] load at a dot result's columns; and which
 * registers the row-in-registers branch keeps for a load (lower.c decides
 * what it keeps); a 2-d tile's slot loop and loads (lower_reduce.c
 * computes the values).  The access and the group loop are shared with
 * lower_value.c (streamed loads, stores).  Calls only lower_expr.c.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== loads ===== */

static void dim_text(const kb_tile_param *t, int d, kb_buf *b)
{
	kb_buf_cat(b, t->dims[d]);
}

bool kb_tile__slice_access(kb_tile__lw *L, const kb_tile__expr *s, kb_tile__access *a)
{
	memset(a, 0, sizeof *a);
	a->t = kb_tile__param(L, s->name);
	if (!a->t || !a->t->rank || s->nidx != a->t->rank) {
		kb_tile__fail(L, s->line, s->col, s->len, "this slice");
		return false;
	}
	int range_dim = -1;
	kb_buf off = KB_BUF_INIT;
	kb_buf_cat(&a->ok, "true");
	for (int d = 0; d < s->nidx; d++) {
		const kb_tile__index *x = &s->idx[d];
		if (x->hi) {
			if (range_dim >= 0) {
				kb_tile__fail(L, s->line, s->col, s->len, "a slice with two ranges outside a dot");
				kb_buf_free(&off);
				return false;
			}
			range_dim = d;
			a->extent = x->extent;
			for (int r = d + 1; r < s->nidx; r++) {
				kb_buf_cat(&a->stride, a->stride.len ? " * " : "");
				dim_text(a->t, r, &a->stride);
			}
		}
		kb_buf v = KB_BUF_INIT;
		kb_tile__cexpr(L, x->lo, "0", &v);
		if (off.len)
			kb_buf_cat(&off, " + ");
		kb_buf_catf(&off, "(size_t)(%s)", v.s);
		for (int r = d + 1; r < s->nidx; r++) {
			kb_buf_cat(&off, " * ");
			dim_text(a->t, r, &off);
		}
		if (!x->hi) {
			/* an index read from memory may be negative (an ignored class) */
			if (kb_tile__reads_mem(x->lo))
				kb_buf_catf(&a->ok, " && (%s) >= 0", v.s);
			kb_buf_catf(&a->ok, " && (%s) < ", v.s);
			dim_text(a->t, d, &a->ok);
		} else {
			dim_text(a->t, d, &a->lim);
			kb_buf_catf(&a->lim, " - (%s)", v.s);
		}
		kb_buf_free(&v);
	}
	a->ranges = range_dim >= 0;
	kb_buf_catf(&a->base, "%s + %s", a->t->name, off.s);
	kb_buf_free(&off);
	return true;
}

void kb_tile__access_free(kb_tile__access *a)
{
	kb_buf_free(&a->stride);
	kb_buf_free(&a->base);
	kb_buf_free(&a->lim);
	kb_buf_free(&a->ok);
}

/* One element of the tensor at p[idx] as the compute type. */
static void load_elem(kb_tile_dtype t, const char *p, const char *idx, kb_buf *b)
{
	if (t == KB_TILE_BF16)
		kb_buf_catf(b, "__bfloat162float(%s[%s])", p, idx);
	else if (t == KB_TILE_F16)
		kb_buf_catf(b, "__half2float(%s[%s])", p, idx);
	else
		kb_buf_catf(b, "%s[%s]", p, idx);
}

/* The 16-byte loads of one group of V elements from Pp_ + e_ into dst[at
 * ...], at "k_ * V + " for a whole tile, "" for a streamed group. */
static void vector_load(kb_tile__lw *L, kb_tile_dtype t, const char *dst, const char *at,
			const char *P, bool once)
{
	int per = 16 / kb_tile__elem_size(t); /* elements a 16-byte access holds */
	const char *ld = once ? "__ldcs(" : "*"; /* kb_tile__fill_kept's: read once */
	for (int c = 0; c < L->V / per; c++) {
		kb_tile__ind(L);
		if (t == KB_TILE_F32) {
			kb_buf_catf(L->o, "{ float4 v_ = %s(const float4 *)(%sp_ + e_ + %d)%s; %s[%s%d] = v_.x; "
				    "%s[%s%d] = v_.y; %s[%s%d] = v_.z; %s[%s%d] = v_.w; }\n",
				    ld, P, c * per, *ld == '_' ? ")" : "", dst, at, c * per, dst, at,
				    c * per + 1, dst, at, c * per + 2, dst, at, c * per + 3);
		} else {
			bool h = t == KB_TILE_F16;
			kb_buf_catf(L->o, "{ uint4 v_ = %s(const uint4 *)(%sp_ + e_ + %d)%s; const %s *h_ = "
				    "(const %s *)&v_; for (int j_ = 0; j_ < 4; j_++) { float2 f_ = %s(h_[j_]); "
				    "%s[%s%d + 2 * j_] = f_.x; %s[%s%d + 2 * j_ + 1] = f_.y; } }\n",
				    ld, P, c * per, *ld == '_' ? ")" : "", h ? "__half2" : "__nv_bfloat162", h ? "__half2" : "__nv_bfloat162",
				    h ? "__half22float2" : "__bfloat1622float2", dst, at, c * per, dst,
				    at, c * per);
		}
	}
}

/* " && e_ + j_ < E" when a tile has slots past its elements, else "": `what`
 * is the last element an access touches (e + V - 1 for a vector). */
const char *kb_tile__past_end(const kb_tile__lw *L, int64_t E, const char *what, char *buf,
			      size_t n)
{
	if (kb_tile__full(L, E))
		return "";
	snprintf(buf, n, " && %s < %lld", what, (long long)E);
	return buf;
}

/* A scalar load: dst = the element if its positions are in range, else other. */
static void load_scalar(kb_tile__lw *L, const kb_tile__access *a, const kb_tile__expr *e,
			const char *dst, 			const char *other, bool declare)
{
	kb_buf p = KB_BUF_INIT;
	kb_buf_catf(&p, "(%s)", a->base.s);
	kb_tile__ind(L);
	if (declare)
		kb_buf_catf(L->o, "%s ", kb_tile__ctype(e->type.dtype));
	kb_buf_catf(L->o, "%s = (%s) ? ", dst, a->ok.s);
	load_elem(a->t->dtype, p.s, "0", L->o);
	kb_buf_catf(L->o, " : (%s)(%s);\n", kb_tile__ctype(e->type.dtype), other);
	kb_buf_free(&p);
}

/* An access's names, each prefixed by P ("" or a stream's): Pp_ (its
 * first element), Plim_, Pok_, and Pal_ for vector access. */
void kb_tile__access_heads(kb_tile__lw *L, const kb_tile__access *a, bool is_const, bool vec,
			   const char *P)
{
	kb_tile__ind(L);
	if (a->stride.len) /* p_[i] and p_ + i step by the stride; never a vector kb_tile__access */
		kb_buf_catf(L->o, "const kb_strided<%s%s> %sp_ = {%s, (long long)(%s)};\n",
			    is_const ? "const " : "", kb_tile_ctype(a->t->dtype), P, a->base.s, a->stride.s);
	else
		kb_buf_catf(L->o, "%s%s *%sp_ = %s;\n", is_const ? "const " : "",
			    kb_tile_ctype(a->t->dtype), P, a->base.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const long long %slim_ = %s;\n", P, a->lim.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const bool %sok_ = %s;\n", P, a->ok.s);
	if (vec && a->stride.len) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const bool %sal_ = false; /* strided */\n", P);
	} else if (vec) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const bool %sal_ = ((unsigned long long)%sp_ & 15) == 0;\n", P, P);
	}
}

/* The opening of an access to a slice: p, lim, ok (and al for vector access). */
void kb_tile__group_open(kb_tile__lw *L, const kb_tile__access *a, bool is_const, bool vec)
{
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__access_heads(L, a, is_const, vec, "");
}

/* A group loop: `for (k)` and its element index e. */
void kb_tile__group_for(kb_tile__lw *L, int64_t S)
{
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int k_ = 0; k_ < %lld; k_++) {\n", (long long)(S / L->V));
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const int e_ = (k_ * %d + (int)threadIdx.x) * %d;\n", L->T, L->V);
}

bool kb_tile__vectorizable(kb_tile_dtype t)
{
	return t == KB_TILE_F32 || t == KB_TILE_BF16 || t == KB_TILE_F16;
}

/* dst[i] = other wherever mask(i) is false, for every slot. */
static void mask_slots(kb_tile__lw *L, const kb_tile__expr *mask, const char *dst, const char *ct,
		       const char *other, int64_t S)
{
	kb_buf m = KB_BUF_INIT;
	kb_tile__cexpr(L, mask, "i_", &m);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)S);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\tif (!(%s))\n", m.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t\t%s[i_] = (%s)(%s);\n", dst, ct, other);
	kb_buf_free(&m);
}

/* A load's other (its keyword, else 0) as C, and its mask or NULL. */
const kb_tile__expr *kb_tile__load_kws(kb_tile__lw *L, const kb_tile__expr *e, kb_buf *other)
{
	const kb_tile__expr *mask = NULL;
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "other"))
			kb_tile__cexpr(L, e->kwv[k], "0", other);
		else if (!strcmp(e->kw[k], "mask"))
			mask = e->kwv[k];
	if (!other->len)
		kb_buf_cat(other, "0");
	return mask;
}

/* The load-side test of a mask= that reads no memory: " && m(slot)" for
 * slot k_ * V + j_ (one), or " && (m(k_ * V) || ... )" (any slot of group
 * k_, which decides its 16-byte load), else "".  So a masked-out group is
 * never read: a causal row's columns past the diagonal cost no bytes. */
static void mask_test(kb_tile__lw *L, const kb_tile__expr *mask, bool any, kb_buf *b)
{
	if (!mask || kb_tile__reads_mem(mask))
		return;
	char i[48];
	kb_buf_cat(b, any ? " && (" : " && ");
	for (int j = 0; j < (any ? L->V : 1); j++) {
		if (any)
			snprintf(i, sizeof i, "k_ * %d + %d", L->V, j);
		else
			snprintf(i, sizeof i, "k_ * %d + j_", L->V);
		kb_buf_cat(b, j ? " || (" : "(");
		kb_tile__cexpr(L, mask, i, b);
		kb_buf_cat(b, ")");
	}
	if (any)
		kb_buf_cat(b, ")");
}

/* One group of a load, in a group loop (e_ set): dst[at j] for j < V from
 * the access named by P, 16 bytes at a time where aligned and in range,
 * else element by element (other out of range); with a mask (or NULL),
 * what it leaves out is not read. */
void kb_tile__load_group(kb_tile__lw *L, kb_tile_dtype t, const char *ct, int64_t E, const char *dst,
		       const char *at, const char *P, const char *other, bool once,
		       const kb_tile__expr *mask)
{
	bool vec = kb_tile__vectorizable(t);
	char b1[96], b2[32], p[48];
	kb_buf any = KB_BUF_INIT, one = KB_BUF_INIT;
	mask_test(L, mask, true, &any);
	mask_test(L, mask, false, &one);
	if (vec) {
		kb_tile__ind(L);
		snprintf(b2, sizeof b2, "e_ + %d", L->V - 1);
		kb_buf_catf(L->o, "if (%sok_ && %sal_ && e_ + %d <= %slim_%s%s) {\n", P, P, L->V, P,
			    kb_tile__past_end(L, E, b2, b1, sizeof b1), any.len ? any.s : "");
		L->depth++;
		vector_load(L, t, dst, at, P, once);
		L->depth--;
		kb_tile__ind(L);
		kb_buf_cat(L->o, "} else {\n");
		L->depth++;
	}
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int j_ = 0; j_ < %d; j_++)\n", L->V);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s[%sj_] = %sok_ && e_ + j_ < %slim_%s%s ? ", dst, at, P, P,
		    kb_tile__past_end(L, E, "e_ + j_", b1, sizeof b1), one.len ? one.s : "");
	snprintf(p, sizeof p, "%sp_", P);
	load_elem(t, p, "e_ + j_", L->o);
	kb_buf_catf(L->o, " : (%s)(%s);\n", ct, other);
	if (vec)
		kb_tile__block_close(L, 1);
	kb_buf_free(&any);
	kb_buf_free(&one);
}

/* The condition under which every group of a tile of E elements that the
 * access Pp_ reads is whole in range or wholly past it: the access aligned,
 * and min(Plim_, E) a multiple of V (a row of N % V == 0, or one that
 * covers the tile). */
static void whole_cond(const kb_tile__lw *L, int64_t E, const char *P, kb_buf *b)
{
	if (E % L->V == 0)
		kb_buf_catf(b, "%sok_ && %sal_ && (%slim_ >= %lld || %slim_ %% %d == 0)", P, P, P,
			    (long long)E, P, L->V);
	else
		kb_buf_catf(b, "%sok_ && %sal_ && %slim_ <= %lld && %slim_ %% %d == 0", P, P, P,
			    (long long)E, P, L->V);
}

/* Under whole_cond, whether group e_ is in range. */
static void group_in(const kb_tile__lw *L, int64_t E, const char *P, kb_buf *b)
{
	char b1[96];
	kb_buf_catf(b, "e_ < %slim_%s", P, kb_tile__past_end(L, E, "e_", b1, sizeof b1));
}

/* The raw 16-byte type of a vectorizable dtype, and its zero. */
static const char *raw_type(kb_tile_dtype t)
{
	return t == KB_TILE_F32 ? "float4" : "uint4";
}

/* raw_'s index of chunk c of group k_ (C chunks a group). */
static const char *raw_at(int C, int c, char *buf, size_t n)
{
	if (C == 1)
		snprintf(buf, n, "k_");
	else
		snprintf(buf, n, "k_ * %d + %d", C, c);
	return buf;
}

/* Group k_'s 16-byte chunks from raw_ into dst, or other when in_ is false. */
static void unpack_group(kb_tile__lw *L, kb_tile_dtype t, const char *dst, const char *other, int C)
{
	int per = 16 / kb_tile__elem_size(t);
	char at[32];
	for (int c = 0; c < C; c++) {
		kb_tile__ind(L);
		if (t == KB_TILE_F32) {
			kb_buf_catf(L->o, "{ const float4 v_ = raw_[%s];", raw_at(C, c, at, sizeof at));
			for (int j = 0; j < 4; j++)
				kb_buf_catf(L->o, " %s[k_ * %d + %d] = in_ ? v_.%c : (float)(%s);", dst, L->V,
					    c * per + j, "xyzw"[j], other);
			kb_buf_cat(L->o, " }\n");
			continue;
		}
		bool h = t == KB_TILE_F16;
		kb_buf_catf(L->o, "{ const %s *h_ = (const %s *)&raw_[%s]; for (int j_ = 0; j_ < 4; j_++) "
			    "{ float2 f_ = %s(h_[j_]); %s[k_ * %d + %d + 2 * j_] = in_ ? f_.x : (float)(%s); "
			    "%s[k_ * %d + %d + 2 * j_ + 1] = in_ ? f_.y : (float)(%s); } }\n",
			    h ? "__half2" : "__nv_bfloat162", h ? "__half2" : "__nv_bfloat162",
			    raw_at(C, c, at, sizeof at), h ? "__half22float2" : "__bfloat1622float2", dst, L->V, c * per, other, dst, L->V,
			    c * per, other);
	}
}

/* The all-vector path of a whole-tile load: when every group is whole in
 * range or wholly past it, each group's 16-byte loads go out before any is
 * used (a predicated load per group, no element path between them), so a
 * thread has all its loads in flight at once, as the hand kernels' do;
 * then the groups are unpacked.  The element path (load_group) stays for
 * the rest, in the else branch this opens. */
static void whole_groups(kb_tile__lw *L, kb_tile_dtype t, int64_t E, int64_t S, const char *dst,
			 const char *other, bool once, const kb_tile__expr *mask)
{
	kb_buf c = KB_BUF_INIT, in = KB_BUF_INIT, any = KB_BUF_INIT;
	int C = L->V / (16 / kb_tile__elem_size(t)), per = 16 / kb_tile__elem_size(t);
	const char *rt = raw_type(t);
	bool cs = once; /* read once: streaming loads, as in vector_load */
	whole_cond(L, E, "", &c);
	group_in(L, E, "", &in);
	mask_test(L, mask, true, &any);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (%s) { /* whole groups: every load in flight before the first is used */\n", c.s);
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s raw_[%lld];\n", rt, (long long)(S / L->V * C));
	kb_tile__group_for(L, S);
	char at[32];
	for (int k = 0; k < C; k++) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "raw_[%s] = %s%s ? %s(const %s *)(p_ + e_ + %d)%s : make_%s(0, 0, 0, 0);\n",
			    raw_at(C, k, at, sizeof at), in.s, any.len ? any.s : "", cs ? "__ldcs(" : "*",
			    rt, k * per, cs ? ")" : "", rt);
	}
	kb_tile__block_close(L, 1);
	kb_tile__group_for(L, S);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const bool in_ = %s;\n", in.s);
	unpack_group(L, t, dst, other, C);
	kb_tile__block_close(L, 1);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "} else {\n");
	L->depth++;
	kb_buf_free(&c);
	kb_buf_free(&in);
	kb_buf_free(&any);
}

/* dst = load(slice, other = ..., mask = ...): a scalar, or dst[S] by a group loop,
 * 16-byte loads where the slice is aligned and in range (streaming ones
 * when the load is read once). */
static void load_into(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare, bool once)
{
	kb_tile__access a;
	if (!kb_tile__slice_access(L, e->args[0], &a))
		return;
	kb_buf other = KB_BUF_INIT, at = KB_BUF_INIT;
	const kb_tile__expr *mask = kb_tile__load_kws(L, e, &other);
	const char *ct = kb_tile__ctype(e->type.dtype);
	if (!a.ranges) {
		if (mask) {
			kb_buf_cat(&a.ok, " && ");
			kb_tile__cexpr(L, mask, "0", &a.ok);
		}
		load_scalar(L, &a, e, dst, other.s, declare);
		goto out;
	}
	int64_t E = a.extent, S = kb_tile__slots(L, E);
	bool vec = kb_tile__vectorizable(a.t->dtype);
	if (declare) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s %s[%lld];\n", ct, dst, (long long)S);
	}
	kb_tile__group_open(L, &a, true, vec);
	if (vec)
		whole_groups(L, a.t->dtype, E, S, dst, other.s, once, mask);
	kb_tile__group_for(L, S);
	kb_buf_catf(&at, "k_ * %d + ", L->V);
	kb_tile__load_group(L, a.t->dtype, ct, E, dst, at.s, "", other.s, once, mask);
	kb_tile__block_close(L, vec ? 3 : 2);
	if (mask) /* the elements the mask leaves out read as other (loaded or not) */
		mask_slots(L, mask, dst, ct, other.s, S);
out:
	kb_buf_free(&other);
	kb_buf_free(&at);
	kb_tile__access_free(&a);
}

void kb_tile__lower_load(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare)
{
	load_into(L, e, dst, declare, false);
}

void kb_tile__fill_kept(kb_tile__lw *L, const kb_tile__expr *e, kb_tile__kept *k)
{
	load_into(L, e, k->c, false, true);
	k->filled = true;
}

static kb_tile__walkret memory_read(const kb_tile__expr *e, void *ctx)
{
	(void)ctx;
	return kb_tile__is_load(e) || kb_tile__is_reduction(e) ? KB_TWALK_STOP : KB_TWALK_ON;
}

bool kb_tile__reads_mem(const kb_tile__expr *e)
{
	return kb_tile__walk_expr(e, memory_read, NULL);
}

/* A [BN] row at a wgmma result's columns: a warp holds all BN of them, 2 BN
 * / 8 a thread (64 registers at BN = 256, which beside 128 accumulators
 * made ptxas spill), so each is read where the epilogue uses it, dst[j]
 * through an operator[] (L1 serves the repeats). */
static void cols_at_use(kb_tile__lw *L, const kb_tile__access *a, const char *ct, const char *other,
			const char *dst)
{
	kb_tile__ind(L);
	kb_buf_catf(L->o, "struct { /* at this thread's columns of the dot's result, read where used */\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\tconst %s *p_;\n", kb_tile_ctype(a->t->dtype));
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\tlong long lim_;\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\tbool ok_;\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s other_;\n", ct);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t__device__ __forceinline__ %s operator[](int j_) const\n", ct);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\t{\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\t\tconst int c_ = j_ / 2 * 8 + (int)threadIdx.x % 4 * 2 + j_ % 2;\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\t\treturn ok_ && c_ < lim_ ? ");
	load_elem(a->t->dtype, "p_", "c_", L->o);
	kb_buf_cat(L->o, " : other_;\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\t}\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "} %s;\n", dst);
	kb_tile__group_open(L, a, true, false);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s.p_ = p_ + wn0_;\n", dst);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s.lim_ = lim_ - wn0_;\n", dst);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s.ok_ = ok_;\n", dst);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s.other_ = (%s)(%s);\n", dst, ct, other);
	kb_tile__block_close(L, 1);
}

void kb_tile__lower_load_cols(kb_tile__lw *L, const kb_tile__expr *e, const char *dst)
{
	kb_tile__access a;
	if (!kb_tile__slice_access(L, e->args[0], &a))
		return;
	kb_buf other = KB_BUF_INIT;
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "other"))
			kb_tile__cexpr(L, e->kwv[k], "0", &other);
	const char *ct = kb_tile__ctype(e->type.dtype);
	int n = L->mma.NT * 2;
	if (L->mma.wg && !L->f->wg_cols) {
		cols_at_use(L, &a, ct, other.len ? other.s : "0", dst);
		kb_buf_free(&other);
		kb_tile__access_free(&a);
		return;
	}
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s %s[%d]; /* at this thread's columns of the dot's result */\n", ct, dst, n);
	kb_tile__group_open(L, &a, true, false);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "const int lane_ = (int)threadIdx.x % 32;\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int j_ = 0; j_ < %d; j_++) {\n", n);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\tconst int c_ = wn0_ + j_ / 2 * 8 + lane_ % 4 * 2 + j_ % 2;\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s[j_] = ok_ && c_ < lim_ ? ", dst);
	load_elem(a.t->dtype, "p_", "c_", L->o);
	kb_buf_catf(L->o, " : (%s)(%s);\n", ct, other.len ? other.s : "0");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	kb_tile__block_close(L, 1);
	kb_buf_free(&other);
	kb_tile__access_free(&a);
}

/* ===== the registers the row-in-registers branch keeps ===== */

static bool ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The slice's source text with the loop variable written as `@`. */
static char *slice_key(const kb_tile__lw *L, const kb_tile__expr *s, const char *var)
{
	kb_buf b = KB_BUF_INIT;
	const char *t = L->f->text;
	int line = 1, col = 1;
	size_t at = 0;
	for (; t[at] && (line < s->line || col < s->col); at++) {
		if (t[at] == '\n')
			line++, col = 1;
		else
			col++;
	}
	size_t vl = strlen(var);
	for (size_t k = 0; k < (size_t)s->len && t[at + k]; k++) {
		bool word = !strncmp(t + at + k, var, vl) && (k == 0 || !ident_char(t[at + k - 1])) &&
			    !ident_char(t[at + k + vl]);
		if (word) {
			kb_buf_catc(&b, '@');
			k += vl - 1;
		} else if (t[at + k] != ' ') {
			kb_buf_catc(&b, t[at + k]);
		}
	}
	return kb_buf_detach(&b);
}

/* A load's key: its slice and its keywords (other=, mask=), as text with
 * the loop variable abstracted: two loads of one slice whose other= or
 * mask= differ hold different values past the row's end (or where masked),
 * so one's registers do not serve for the other. */
char *kb_tile__load_key(const kb_tile__lw *L, const kb_tile__expr *load, const char *var)
{
	kb_buf b = KB_BUF_INIT;
	char *s = slice_key(L, load->args[0], var);
	kb_buf_cat(&b, s);
	free(s);
	for (int k = 0; k < load->nkw; k++) {
		s = slice_key(L, load->kwv[k], var);
		kb_buf_catf(&b, " | %s=%s", load->kw[k], s);
		free(s);
	}
	return kb_buf_detach(&b);
}

kb_tile__kept *kb_tile__kept_of(kb_tile__lw *L, const kb_tile__expr *load)
{
	char *key = kb_tile__load_key(L, load, L->loopvar);
	kb_tile__kept *k = NULL;
	for (int i = 0; i < L->nkept && !k; i++)
		if (!strcmp(L->kept[i].key, key))
			k = &L->kept[i];
	free(key);
	return k;
}

/* ===== 2-d tiles in a kernel without dot: the slot loop, loads (lower_reduce.c's) ===== */

/* The extents an operand of type t has as a 2-d value: [n] is [1, n]. */
void kb_tile__shape2(const kb_tile__type *t, int64_t *r, int64_t *c)
{
	*r = t->rank == 2 ? t->ext[0] : 1;
	*c = t->rank == 2 ? t->ext[1] : t->ext[0];
}

/* Emits a loop head over S slots i_: the line `at` that defines its r_
 * and c_, then `unused` (they may be). */
void kb_tile__slot_head(kb_tile__lw *L, int64_t S, const char *at, const char *unused)
{
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_++) {\n", (long long)S);
	L->depth++;
	kb_tile__ind(L);
	kb_buf_cat(L->o, at);
	kb_tile__ind(L);
	kb_buf_cat(L->o, unused);
}

/* Emits the slot loop head: f_, r_, c_ of slot i_ for an [R, C] layout. */
void kb_tile__slot_loop(kb_tile__lw *L, int64_t S, int64_t C)
{
	kb_buf el = KB_BUF_INIT, at = KB_BUF_INIT;
	kb_tile__cat_el(L, &el, "i_");
	if (L->rows)
		kb_tile__rows_at(L, C, &at);
	else
		kb_buf_catf(&at, "const int f_ = %s, r_ = f_ / %lld, c_ = f_ %% %lld;\n", el.s, (long long)C,
			    (long long)C);
	kb_tile__slot_head(L, S, at.s, L->rows ? "(void)r_, (void)c_, (void)f_; /* a broadcast row or column "
			   "reads one of them */\n" : "(void)r_, (void)c_; /* a broadcast row or column reads one of them */\n");
	kb_buf_free(&el);
	kb_buf_free(&at);
}

/* The start of slice s's first element, and the rows and columns left
 * from it (*rows "1" for a slice of rank 1 of a row), into b, rows, cols. */
bool kb_tile__slice2(kb_tile__lw *L, const kb_tile__expr *s, kb_buf *base, kb_buf *rows, kb_buf *cols,
		   kb_buf *ld)
{
	const kb_tile_param *t = kb_tile__param(L, s->name);
	if (!t || s->nidx != t->rank || (t->rank == 2 && s->idx[0].hi && !s->idx[1].hi)) {
		kb_tile__fail(L, s->line, s->col, s->len, "this slice beside a 2-d tile");
		return false;
	}
	kb_buf lo[2] = {KB_BUF_INIT, KB_BUF_INIT};
	for (int d = 0; d < s->nidx; d++)
		kb_tile__cexpr(L, s->idx[d].lo, "0", &lo[d]);
	if (t->rank == 1) {
		kb_buf_catf(base, "%s + (size_t)(%s)", t->name, lo[0].s);
		kb_buf_cat(rows, "1");
		kb_buf_catf(cols, "%s - (%s)", t->dims[0], lo[0].s);
		kb_buf_cat(ld, "0");
	} else {
		kb_buf_catf(base, "%s + (size_t)(%s) * %s + (size_t)(%s)", t->name, lo[0].s, t->dims[1],
			    lo[1].s);
		kb_buf_catf(rows, s->idx[0].hi ? "%s - (%s)" : "(%s) < %s ? 1 : 0", s->idx[0].hi ?
			    t->dims[0] : lo[0].s, s->idx[0].hi ? lo[0].s : t->dims[0]);
		kb_buf_catf(cols, "%s - (%s)", t->dims[1], lo[1].s);
		kb_buf_cat(ld, t->dims[1]);
	}
	kb_buf_free(&lo[0]);
	kb_buf_free(&lo[1]);
	return true;
}

/* Opens the block of an access to a slice: p_ (its first element), rows_
 * and cols_ (left from there). */
void kb_tile__access2_open(kb_tile__lw *L, const kb_tile_param *t, bool is_const, const kb_buf *base,
			const kb_buf *rows, const kb_buf *cols)
{
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s%s *p_ = %s;\n", is_const ? "const " : "", kb_tile_ctype(t->dtype), base->s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const long long rows_ = %s, cols_ = %s;\n", rows->s, cols->s);
}

/* Whether an access of tensor t to a whole [R, C] tile (full: not a
 * broadcast, no mask) can go 16 bytes at a time: f32, 4 slots a group,
 * and rows of a multiple of 4 (a group never crosses a row); the run-time
 * test (al_: the start and the row length) is then declared. */
bool kb_tile__vec4(kb_tile__lw *L, const kb_tile_param *t, bool full, int64_t C)
{
	if (!full || t->dtype != KB_TILE_F32 || L->V != 4 || C % 4 || L->rows)
		return false;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const bool al_ = ((unsigned long long)p_ & 15) == 0 && %s %% 4 == 0;\n",
		    t->dims[1]);
	return true;
}

/* The loop over a thread's groups of 4 slots: f_ (the first's element),
 * r_, c_ (its row and column; the group is in that row). */
void kb_tile__group4_loop(kb_tile__lw *L, int64_t S, int64_t C)
{
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int k_ = 0; k_ < %lld; k_++) {\n", (long long)(S / 4));
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const int f_ = (k_ * %d + (int)threadIdx.x) * 4, r_ = f_ / %lld, c_ = f_ %% %lld;\n",
		    L->T, (long long)C, (long long)C);
}

/* dst[S] = load e read in the layout of an [R, C] value: its element at
 * the slot's row and column (row 0 of a [1, C] or [C] load, column 0 of an
 * [R, 1] one), other past the tensor's edges, where mask= is false, and in
 * the slots past R * C. */
void kb_tile__load2(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, int64_t R, int64_t C)
{
	const kb_tile__expr *s = e->args[0], *mask = NULL, *other = NULL;
	kb_buf base = KB_BUF_INIT, rows = KB_BUF_INIT, cols = KB_BUF_INIT, ld = KB_BUF_INIT;
	kb_buf o = KB_BUF_INIT, m = KB_BUF_INIT, el = KB_BUF_INIT;
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "mask"))
			mask = e->kwv[k];
		else
			other = e->kwv[k];
	if (!kb_tile__slice2(L, s, &base, &rows, &cols, &ld))
		goto out;
	int64_t r1, c1;
	kb_tile__shape2(&e->type, &r1, &c1);
	const kb_tile_param *t = kb_tile__param(L, s->name);
	const char *ct = kb_tile__ctype(e->type.dtype);
	int64_t S = kb_tile__slots_rc(L, R, C);
	if (other)
		kb_tile__cexpr(L, other, "0", &o);
	if (mask)
		kb_tile__cexpr(L, mask, "i_", &m);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s %s[%lld];\n", ct, dst, (long long)S);
	kb_tile__access2_open(L, t, true, &base, &rows, &cols);
	if (kb_tile__vec4(L, t, r1 == R && c1 == C && !mask, C)) {
		kb_tile__group4_loop(L, S, C);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "if (al_ && f_ < %lld && r_ < rows_ && c_ + 4 <= cols_) {\n", (long long)(R * C));
		kb_tile__ind(L);
		kb_buf_cat(L->o, "\tconst float4 v_ = *(const float4 *)(p_ + (size_t)r_ * ");
		kb_buf_catf(L->o, "%s + c_);\n", ld.s);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\t%s[k_ * 4] = v_.x, %s[k_ * 4 + 1] = v_.y, %s[k_ * 4 + 2] = v_.z, "
			    "%s[k_ * 4 + 3] = v_.w;\n", dst, dst, dst, dst);
		kb_tile__ind(L);
		kb_buf_cat(L->o, "} else {\n");
		kb_tile__ind(L);
		kb_buf_cat(L->o, "\tfor (int j_ = 0; j_ < 4; j_++)\n");
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\t\t%s[k_ * 4 + j_] = f_ + j_ < %lld && r_ < rows_ && c_ + j_ < cols_ ? "
			    "p_[(size_t)r_ * %s + c_ + j_] : (float)(%s);\n", dst, (long long)(R * C), ld.s,
			    o.len ? o.s : "0");
		kb_tile__ind(L);
		kb_buf_cat(L->o, "}\n");
		kb_tile__block_close(L, 2);
		goto out;
	}
	kb_tile__slot_loop(L, S, C);
	const char *rr = r1 == 1 ? "0" : "r_", *cc = c1 == 1 ? "0" : "c_";
	char idx[160];
	snprintf(idx, sizeof idx, "(size_t)%s * %s + %s", rr, ld.s, cc);
	if (t->dtype == KB_TILE_BF16)
		kb_buf_catf(&el, "__bfloat162float(p_[%s])", idx);
	else if (t->dtype == KB_TILE_F16)
		kb_buf_catf(&el, "__half2float(p_[%s])", idx);
	else
		kb_buf_catf(&el, "p_[%s]", idx);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s[i_] = f_ < %lld && %s < rows_ && %s < cols_%s%s%s ? (%s)%s : (%s)(%s);\n", dst,
		    (long long)(R * C), rr, cc, m.len ? " && (" : "", m.len ? m.s : "", m.len ? ")" : "",
		    ct, el.s, ct, o.len ? o.s : "0");
	kb_tile__block_close(L, 2);
out:
	kb_buf_free(&base);
	kb_buf_free(&rows);
	kb_buf_free(&cols);
	kb_buf_free(&ld);
	kb_buf_free(&o);
	kb_buf_free(&m);
	kb_buf_free(&el);
}
