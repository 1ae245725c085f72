/* test_tile_lower.c - the tile compiler's lowering, through kb_tile_compile:
 * the layouts it picks (vector widths, slots, the row kept in registers,
 * the mma warp grid and shared memory of a dot), the names it keeps and
 * renames, consts as constexpr, the #line pinning the compiler sees, and
 * a table of programs the lowering refuses, each at its line and column.
 * The generated CUDA is compiled by tests/cli/tile.sh (NVRTC); no GPU. */
#include "../../src/tilegen/tilegen_int.h"
#include "t.h"

typedef struct {
	kb_tile_out out;
	kb_diags d;
	int rc;
} lowered;

static void lower(lowered *l, const char *text, const char *const *defines, int ndefines)
{
	memset(l, 0, sizeof *l);
	kb_tile_opts o = {.defines = defines, .ndefines = ndefines};
	l->rc = kb_tile_compile("t.tile", text, strlen(text), &o, &l->out, &l->d);
}

static void lowered_free(lowered *l)
{
	kb_tile_out_free(&l->out);
	kb_diags_free(&l->d);
}

static const char *cuda(const lowered *l)
{
	return l->out.cuda.s ? l->out.cuda.s : "";
}

/* How many times needle occurs in [from, to) (0 when either is NULL). */
static int count_between(const char *from, const char *to, const char *needle)
{
	int n = 0;
	for (const char *p = from; p && to && (p = strstr(p, needle)) && p < to; p++)
		n++;
	return n;
}

/* ===== rank-1 tiles ===== */

static const char softmax[] =
	"kernel softmax(x: f32[M, N], y: f32[M, N]) grid(M) threads(THREADS) {\n"
	"    const BLOCK = 4096\n"
	"    const THREADS = 256\n"
	"    row = pid(0)\n"
	"    m = -inf\n"
	"    s = 0.0\n"
	"    for c in range(0, N, BLOCK) {\n"
	"        t = load(x[row, c : c + BLOCK], other = -inf)\n"
	"        m_new = max(m, max(t))\n"
	"        s = s * exp(m - m_new) + sum(exp(t - m_new))\n"
	"        m = m_new\n"
	"    }\n"
	"    for c in range(0, N, BLOCK) {\n"
	"        t = load(x[row, c : c + BLOCK], other = -inf)\n"
	"        store(y[row, c : c + BLOCK], exp(t - m) / s)\n"
	"    }\n"
	"}\n";

static void test_tile_lower__row_layout(void)
{
	lowered l;
	lower(&l, softmax, NULL, 0);
	T_EQ_INT(l.rc, 0);
	/* 4096 f32 over 256 threads: 16 slots, 4 groups of one float4 each */
	T_CONTAINS(cuda(&l), "float t[16];");
	T_CONTAINS(cuda(&l), "for (int k_ = 0; k_ < 4; k_++) {");
	T_CONTAINS(cuda(&l), "const int e_ = (k_ * 256 + (int)threadIdx.x) * 4;");
	T_CONTAINS(cuda(&l), "float4 v_ = *(const float4 *)(p_ + e_ + 0);");
	/* two loops over one range that load one slice: the row-in-registers branch */
	T_CONTAINS(cuda(&l), "if ((0) < (N) && (N) <= (0) + (BLOCK)) { /* one trip: the row stays in registers */");
	T_CONTAINS(cuda(&l), "float kb_row1[16]; /* x, read once */");
	T_CONTAINS(cuda(&l), "/* t: the slice is in kb_row1 already */");
	/* a block reduction, and a const the code names as a constexpr */
	T_CONTAINS(cuda(&l), "kb_block_max_f(acc_, kb_scratch, kb_nred_)");
	T_CONTAINS(cuda(&l), "constexpr int BLOCK = 4096;");
	T_OK(!strstr(cuda(&l), "constexpr int THREADS")); /* folded everywhere: not declared */
	T_EQ_INT(l.out.nkernels, 1);
	T_EQ_INT(l.out.kernels[0].threads, 256);
	T_EQ_STR(l.out.kernels[0].grid[0], "M");
	T_EQ_INT(l.out.kernels[0].nconsts, 2);
	T_EQ_STR(l.out.kernels[0].consts[0], "BLOCK=4096");
	T_EQ_INT(l.out.kernels[0].smem, 0);
	lowered_free(&l);
}

/* A slice the first loop reads inside an expression (`sum(load(...))`)
 * and a later loop loads again: kept too, so the branch reads x once (it
 * was read twice: LayerNorm's first pass, 88-95% of the hand kernel). */
static void test_tile_lower__nested_load_kept(void)
{
	static const char mean_var[] =
		"kernel mv(x: f32[M, N], y: f32[M]) grid(M) threads(256) {\n"
		"    const BLOCK = 4096\n"
		"    row = pid(0)\n"
		"    s = 0.0\n"
		"    for c in range(0, N, BLOCK) {\n"
		"        s = s + sum(load(x[row, c : c + BLOCK]))\n"
		"    }\n"
		"    v = 0.0\n"
		"    for c in range(0, N, BLOCK) {\n"
		"        t = load(x[row, c : c + BLOCK])\n"
		"        v = v + sum((t - s / N) * (t - s / N))\n"
		"    }\n"
		"    store(y[row : row + 1], v)\n"
		"}\n";
	lowered l;
	lower(&l, mean_var, NULL, 0);
	T_EQ_INT(l.rc, 0);
	const char *c = cuda(&l), *fast = strstr(c, "float kb_row1[16]; /* x, read once */");
	T_OK(fast != NULL);
	T_CONTAINS(c, "acc_ += kb_row1[i_];"); /* the first loop's sum reads the registers */
	T_CONTAINS(c, "/* t: the slice is in kb_row1 already */");
	const char *other = fast ? strstr(fast, "} else {") : NULL;
	/* 16-byte loads of x in the branch: one group loop */
	int reads = count_between(fast, other, "__ldcs((const float4 *)");
	T_OK(reads >= 1 && reads <= 2); /* the whole-groups path and the per-group one */
	lowered_free(&l);
}

/* A load under a cast (`t = f32(load(...))`) is kept like a bare one: the
 * branch fills kb_row1 once and both loops read it (it used to stream the
 * group instead, reading x twice and leaving kb_row1 unused, which NVRTC
 * reported as #177-D at a line of the user's). */
static void test_tile_lower__cast_load_kept(void)
{
	static const char cast[] =
		"kernel sm(x: bf16[M, N], y: bf16[M, N]) grid(M) threads(256) {\n"
		"    const BLOCK = 4096\n"
		"    row = pid(0)\n"
		"    m = -inf\n"
		"    for c in range(0, N, BLOCK) {\n"
		"        t = f32(load(x[row, c : c + BLOCK], other = -inf))\n"
		"        m = max(m, max(t))\n"
		"    }\n"
		"    for c in range(0, N, BLOCK) {\n"
		"        t = f32(load(x[row, c : c + BLOCK], other = -inf))\n"
		"        store(y[row, c : c + BLOCK], t - m)\n"
		"    }\n"
		"}\n";
	lowered l;
	lower(&l, cast, NULL, 0);
	T_EQ_INT(l.rc, 0);
	const char *c = cuda(&l), *fast = strstr(c, "float kb_row1[16]; /* x, read once */");
	const char *other = fast ? strstr(fast, "\n\t} else {") : NULL; /* the branch's end */
	T_OK(fast && other);
	T_EQ_INT(count_between(fast, other, "t[i_] = (float)(kb_row1[i_]);"), 2); /* both loops */
	T_EQ_INT(count_between(fast, other, "kb_s1["), 0); /* and neither reads x again */
	lowered_free(&l);
}

/* atomic_add of a tile: each slot's element once, by the thread that
 * holds it, never as a vector store; of a scalar: by thread 0 alone.  A
 * gather's index, read from memory, is checked against 0 as well. */
static void test_tile_lower__atomics_and_gather(void)
{
	static const char text[] =
		"kernel a(x: f32[M, N], t: i32[M], y: f32[N], m: f32[1], g: f32[M]) grid(M) threads(128) {\n"
		"    r = pid(0)\n"
		"    v = load(x[r, 0 : 512])\n"
		"    atomic_add(y[0 : 512], v)\n"
		"    atomic_max(m[0], max(v))\n"
		"    store(g[r], load(x[r, load(t[r])]))\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	const char *c = cuda(&l);
	T_CONTAINS(c, "atomicAdd(p_ + e_ + j_, (float)(v[k_ * V_ + j_]));");
	T_OK(!strstr(c, "__stcs((float4 *)")); /* no vector store into y */
	T_CONTAINS(c, "&& threadIdx.x == 0) { const float v_ = (float)(_t");
	T_CONTAINS(c, "atomicMax((int *)(m + (size_t)(0)), __float_as_int(v_)); else "
		      "atomicMin((unsigned int *)(m + (size_t)(0)), __float_as_uint(v_));");
	T_CONTAINS(c, "(_t2) >= 0 && (_t2) < N)"); /* the gathered column: 0 <= t[r] < N */
	lowered_free(&l);
}

/* A range in the first dim of a 2-d tensor (a column) is a strided slice:
 * read and written through kb_strided, never as a vector; the helper is
 * in the prologue only of a file that has one. */
static void test_tile_lower__strided_column(void)
{
	static const char text[] =
		"kernel t(x: f32[M, N], y: f32[N, M]) grid(cdiv(M, 1024), N) threads(256) {\n"
		"    r0 = pid(0) * 1024\n"
		"    c = pid(1)\n"
		"    store(y[c, r0 : r0 + 1024], load(x[r0 : r0 + 1024, c]))\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	const char *c = cuda(&l);
	T_CONTAINS(c, "template <class T> struct kb_strided {");
	T_CONTAINS(c, "const kb_strided<const float> p_ = {x + (size_t)(r0) * N + (size_t)(c), (long long)(N)};");
	T_CONTAINS(c, "const bool al_ = false; /* strided */");
	T_CONTAINS(c, "const long long lim_ = M - (r0);");
	T_CONTAINS(c, "__stcs((float4 *)(p_ + e_ + 0)"); /* y's row: vectors */
	lowered_free(&l);
	lower(&l, softmax, NULL, 0);
	T_OK(!strstr(cuda(&l), "kb_strided"));
	lowered_free(&l);
}

static void test_tile_lower__define_changes_layout(void)
{
	static const char *const defs[] = {"BLOCK=1000", "THREADS=128"};
	lowered l;
	lower(&l, softmax, defs, 2);
	T_EQ_INT(l.rc, 0);
	/* 1000 over 128 threads x 4: 2 groups, the slots past 1000 masked */
	T_CONTAINS(cuda(&l), "float t[8];");
	T_CONTAINS(cuda(&l), "e_ + 3 < 1000");
	T_CONTAINS(cuda(&l), "__launch_bounds__(128)");
	T_CONTAINS(cuda(&l), "constexpr int BLOCK = 1000;");
	T_EQ_STR(l.out.kernels[0].consts[1], "THREADS=128");
	lowered_free(&l);
	/* 32 slots a thread: 64 registers at most (8 blocks of 128 an SM), as
	 * the hand kernels' __launch_bounds__(1024) */
	static const char *const wide[] = {"BLOCK=4096", "THREADS=128"};
	lower(&l, softmax, wide, 2);
	T_CONTAINS(cuda(&l), "float t[32];");
	T_CONTAINS(cuda(&l), "__launch_bounds__(128, 8)");
	lowered_free(&l);
}

static void test_tile_lower__bf16_vectors(void)
{
	const char *text =
		"kernel scale(x: bf16[N], y: bf16[N], a: f32) grid(cdiv(N, 2048)) threads(256) {\n"
		"    i = pid(0) * 2048\n"
		"    store(y[i : i + 2048], load(x[i : i + 2048]) * a)\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	/* 8 bf16 a 16-byte access, computed as float; the load nested in the
	 * store is read a group at a time (streamed), never held whole */
	T_CONTAINS(cuda(&l), "uint4 v_ = *(const uint4 *)(kb_s1p_ + e_ + 0);");
	T_CONTAINS(cuda(&l), "__bfloat1622float2(h_[j_])");
	T_CONTAINS(cuda(&l), "__floats2bfloat162_rn(vals_[0 + 2 * j_], vals_[0 + 2 * j_ + 1])");
	T_CONTAINS(cuda(&l), "float kb_s1[8];");
	T_OK(!strstr(cuda(&l), "float _t1[8];"));
	lowered_free(&l);
}

/* A load or reduction in place (a loop bound, a condition) is
 * materialized before its statement like one assigned; one in a store's
 * value is streamed, a group at a time. */
static void test_tile_lower__loads_in_place(void)
{
	const char *text =
		"kernel k(x: f32[N], y: f32[N], n: i32[1]) grid(1) threads(32) {\n"
		"    for c in range(0, load(n[0]), 128) {\n"
		"        if max(load(x[c : c + 128])) > 0.0 {\n"
		"            store(y[c : c + 128], load(x[c : c + 128]))\n"
		"        }\n"
		"    }\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	T_CONTAINS(cuda(&l), "int _t1 = (true && (0) < 1) ? (n + (size_t)(0))[0] : (int)(0);");
	T_CONTAINS(cuda(&l), "for (int c = 0; c < _t1; c += 128) {");
	T_CONTAINS(cuda(&l), "if ((_t3 > 0.0f)) {");
	T_CONTAINS(cuda(&l), "float kb_s1[4];");
	lowered_free(&l);
}

/* mask= on a load: the elements it leaves out read as other; arange's
 * element index is one parenthesized term (`arange(N) % 2`).  t, used
 * twice, is held whole; u, used once, is streamed with the same mask. */
static void test_tile_lower__load_mask(void)
{
	const char *text =
		"kernel k(x: f32[N], y: f32[N]) grid(1) threads(32) {\n"
		"    t = load(x[0 : 128], mask = arange(128) % 2 == 0, other = -1.0)\n"
		"    store(y[0 : 128], t)\n"
		"    store(y[0 : 128], t * 2.0)\n"
		"    u = load(x[0 : 128], mask = arange(128) % 2 == 0, other = -1.0)\n"
		"    store(y[0 : 128], u)\n"
		"    s = load(x[5], mask = N > 5)\n"
		"    store(y[0], s)\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	T_CONTAINS(cuda(&l), "\tif (!(((((((i_) / 4) * 32 + (int)threadIdx.x) * 4 + (i_) % 4) % 2) == 0)))\n");
	T_CONTAINS(cuda(&l), "\t\tt[i_] = (float)(-(1.0f));\n");
	T_CONTAINS(cuda(&l), "\tif (!(((((((k_ * 4 + j_) / 4) * 32 + (int)threadIdx.x) * 4 + (k_ * 4 + j_) % 4) % 2) == 0)))\n");
	T_CONTAINS(cuda(&l), "\t\tkb_s1[j_] = (float)(-(1.0f));\n");
	T_CONTAINS(cuda(&l), "float s = (true && (5) < N && (N > 5)) ? (x + (size_t)(5))[0] : (float)(0);");
	lowered_free(&l);
}

/* ===== names ===== */

static void test_tile_lower__names(void)
{
	/* a local that is a C++ word is renamed; parameters named like the
	 * generated code's own variables keep their names (those end in '_') */
	const char *text =
		"kernel k(p: f32[N], e: f32[N]) grid(1) threads(32) {\n"
		"    float = load(p[0 : 128])\n"
		"    for i in range(0, 1, 1) {\n"
		"        const CHUNK = 128\n"
		"        store(e[0 : CHUNK], float * 2.0)\n"
		"    }\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	T_CONTAINS(cuda(&l), "k(const float *__restrict__ p, float *__restrict__ e, int N)");
	T_CONTAINS(cuda(&l), "float float_[4];");
	T_CONTAINS(cuda(&l), "const float *p_ = p + (size_t)(0);");
	/* a const inside a block is declared where it is, under its #line */
	T_CONTAINS(cuda(&l), "#line 4 \"t.tile\"\n\t\tconstexpr int CHUNK = 128;\n");
	lowered_free(&l);
}

/* What the lowering decides it records as it goes, never by searching its
 * own output: a top-level const is declared when the code writes its name
 * (`z` here is folded everywhere; the vector loads' v_.z is no use of it),
 * and only the registers the row-in-registers branch keeps are read with
 * streaming loads (a local named like them, kb_rowx, reads as any other). */
static void test_tile_lower__decided_on_tree(void)
{
	static const char text[] =
		"kernel k(x: f32[M, N], w: f32[N], y: f32[M, N]) grid(M) threads(256) {\n"
		"    const z = 1024\n"
		"    row = pid(0)\n"
		"    s = 0.0\n"
		"    for c in range(0, N, 1024) {\n"
		"        kb_rowx = load(w[c : c + z])\n"
		"        s = s + sum(load(x[row, c : c + 1024]) * kb_rowx) + sum(kb_rowx)\n"
		"    }\n"
		"    for c in range(0, N, 1024) {\n"
		"        t = load(x[row, c : c + 1024])\n"
		"        store(y[row, c : c + 1024], t * s)\n"
		"    }\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	const char *c = cuda(&l);
	T_CONTAINS(c, "v_.z");
	T_OK(!strstr(c, "constexpr int z"));
	T_CONTAINS(c, "float kb_row1[4]; /* x, read once */");
	T_CONTAINS(c, "{ float4 v_ = __ldcs((const float4 *)(p_ + e_ + 0)); kb_row1[");
	T_CONTAINS(c, "{ float4 v_ = *(const float4 *)(p_ + e_ + 0); kb_rowx_[");
	T_OK(!strstr(c, "{ float4 v_ = __ldcs((const float4 *)(p_ + e_ + 0)); kb_rowx_["));
	lowered_free(&l);
}

/* ===== #line pinning ===== */

static void test_tile_lower__pin_lines(void)
{
	const char *gen =
		"#line 3 \"<prologue>\"\n"
		"#define M(a) \\\n"
		"\t(a)\n"
		"#line 7 \"t.tile\"\n"
		"int x = 1;\n"
		"{\n"
		"\tx++;\n"
		"#line 9 \"t.tile\"\n"
		"\tx--;\n"
		"#line 1 \"other.tile\"\n"
		"int y;\n";
	kb_buf b = KB_BUF_INIT;
	kb_tile_pin_lines(gen, "t.tile", &b);
	T_EQ_STR(b.s,
		 "#line 3 \"<prologue>\"\n"
		 "#define M(a) \\\n"
		 "\t(a)\n"
		 "#line 7 \"t.tile\"\n"
		 "#line 7 \"t.tile\"\nint x = 1;\n"
		 "#line 7 \"t.tile\"\n{\n"
		 "#line 7 \"t.tile\"\n\tx++;\n"
		 "#line 9 \"t.tile\"\n"
		 "#line 9 \"t.tile\"\n\tx--;\n"
		 "#line 1 \"other.tile\"\n"
		 "int y;\n");
	kb_buf_free(&b);
}

/* ===== dot ===== */

static const char matmul[] =
	"kernel mm(a: bf16[M, K], b: bf16[K, N], c: f32[M, N], alpha: f32)\n"
	"        grid(cdiv(M, BM), cdiv(N, BN)) threads(128) {\n"
	"    const BM = 64\n"
	"    const BN = 128\n"
	"    const BK = 32\n"
	"    m0 = pid(0) * BM\n"
	"    n0 = pid(1) * BN\n"
	"    acc = zeros(BM, BN)\n"
	"    for k in range(0, K, BK) {\n"
	"        x = load(a[m0 : m0 + BM, k : k + BK])\n"
	"        w = load(b[k : k + BK, n0 : n0 + BN])\n"
	"        acc += dot(x, w)\n"
	"    }\n"
	"    out = max(acc * alpha, 0.0)\n"
	"    store(c[m0 : m0 + BM, n0 : n0 + BN], out)\n"
	"}\n";

static void test_tile_lower__dot_layout(void)
{
	lowered l;
	lower(&l, matmul, NULL, 0);
	T_EQ_INT(l.rc, 0);
	/* 4 warps on [64, 128]: 1 x 4 and 2 x 2 are as square; the first, each
	 * warp [64, 32] = 4 x 4 m16n8 pieces */
	T_CONTAINS(cuda(&l), "wm0_ = (int)threadIdx.x / 32 / 4 * 64, wn0_ = (int)threadIdx.x / 32 % 4 * 32;");
	T_CONTAINS(cuda(&l), "float acc[64];");
	T_CONTAINS(cuda(&l), "kb_mma_warp<32, 128, 4, 4> f_(wm0_, wn0_);");
	/* fragments double-buffered: step kk + 1 loads before step kk multiplies */
	T_CONTAINS(cuda(&l), "f_.load((kk_ + 1) % 2, x_sa_ + rd_ * 4096, w_sa_ + rd_ * 8192, (kk_ + 1) % 2);");
	T_CONTAINS(cuda(&l), "f_.mma(acc, kk_ % 2, (const __nv_bfloat16 *)0);");
	/* 3 stages (no const STAGES) of 64x32 and 32x128 bf16 */
	T_EQ_INT(l.out.kernels[0].smem, 3 * (64 * 32 + 32 * 128) * 2);
	/* each thread's copy plan, made once: x's rows fixed (m0), w's columns (n0) */
	T_CONTAINS(cuda(&l), "const kb_copy_plan<64, 32, 128, true, false> x_p_(m0, 0, M, K);");
	T_CONTAINS(cuda(&l), "const kb_copy_plan<32, 128, 128, false, true> w_p_(0, n0, K, N);");
	T_CONTAINS(cuda(&l), "if (x_vec_ && w_vec_ && (n0) % 8 == 0 && lo_ % 8 == 0 && step_ % 8 == 0) {");
	T_CONTAINS(cuda(&l), "x_p_.copy(x_sa_ + wr_ * 4096, a, m0, k, M, K);");
	/* and the loop's other copy, element by element */
	T_CONTAINS(cuda(&l), "kb_tile_to_smem<64, 32, 128>(x_s_ + s_ * 4096, a, m0, k, M, K);");
	T_CONTAINS(cuda(&l), "kb_tile_to_smem<64, 32, 128>(x_s_ + wr_ * 4096, a, m0, k, M, K);");
	T_CONTAINS(cuda(&l), "kb_cp_async_wait<1>();");
	/* the epilogue: element-wise in the mma layout, then pairs of f32 */
	T_CONTAINS(cuda(&l), "out[i_] = fmaxf((acc[i_] * alpha), 0.0f);");
	T_CONTAINS(cuda(&l), "const int r_ = wm0_ + i_ / 16 * 16 + lane_ / 4 + i_ % 4 / 2 * 8;");
	T_CONTAINS(cuda(&l), "*(float2 *)(p_ + (size_t)r_ * N + c_) = make_float2(v_[0], v_[1]);");
	T_CONTAINS(cuda(&l), "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
	lowered_free(&l);
}

/* A bias row in the epilogue: a [BN] load, in place or by a variable used
 * only there, read at the thread's columns of the mma layout. */
static void test_tile_lower__dot_bias(void)
{
	const char *text =
		"kernel lin(a: bf16[M, K], b: bf16[K, N], bias: f32[N], c: bf16[M, N])\n"
		"        grid(cdiv(M, 64), cdiv(N, 64)) threads(128) {\n"
		"    m0 = pid(0) * 64\n"
		"    n0 = pid(1) * 64\n"
		"    bb = load(bias[n0 : n0 + 64])\n"
		"    acc = zeros(64, 64)\n"
		"    for k in range(0, K, 32) {\n"
		"        acc += dot(load(a[m0 : m0 + 64, k : k + 32]), load(b[k : k + 32, n0 : n0 + 64]))\n"
		"    }\n"
		"    store(c[m0 : m0 + 64, n0 : n0 + 64], max(acc + bb, 0.0) + load(bias[n0 : n0 + 64]))\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	/* 4 warps on [64, 64]: 2 x 2 of [32, 32], NT = 4: 8 columns a thread */
	T_CONTAINS(cuda(&l), "/* bb: read where the dot's result uses it, at its columns */");
	T_CONTAINS(cuda(&l), "float _t1[8]; /* at this thread's columns of the dot's result */");
	T_CONTAINS(cuda(&l), "const int c_ = wn0_ + j_ / 2 * 8 + lane_ % 4 * 2 + j_ % 2;");
	T_CONTAINS(cuda(&l), "_t1[j_] = ok_ && c_ < lim_ ? p_[c_] : (float)(0);");
	T_CONTAINS(cuda(&l), "fmaxf((acc[i_] + _t1[(i_) / 4 % 4 * 2 + (i_) % 2]), 0.0f) + _t2[(i_) / 4 % 4 * 2 + (i_) % 2]");
	lowered_free(&l);
}

static void test_tile_lower__dot_stages_and_warps(void)
{
	static const char *const defs[] = {"BM=128", "BN=64"};
	const char *at = strstr(matmul, "    const BM");
	char *text = kb_xasprintf("%.*s    const STAGES = 5\n%s", (int)(at - matmul), matmul, at);
	lowered l;
	lower(&l, text, defs, 2);
	T_EQ_INT(l.rc, 0);
	/* [128, 64] on 4 warps: 2 x 2 blocks of [64, 32] */
	T_CONTAINS(cuda(&l), "wm0_ = (int)threadIdx.x / 32 / 2 * 64, wn0_ = (int)threadIdx.x / 32 % 2 * 32;");
	T_CONTAINS(cuda(&l), "kb_mma_warp<32, 64, 4, 4>");
	T_CONTAINS(cuda(&l), "kb_cp_async_wait<3>();");
	T_EQ_INT(l.out.kernels[0].smem, 5 * (128 * 32 + 32 * 64) * 2);
	lowered_free(&l);
	free(text);
}

/* Two dots in one loop: each its own fragments, both multiplied every step. */
static void test_tile_lower__two_dots_one_loop(void)
{
	const char *text =
		"kernel two(a: bf16[M, K], b: bf16[K, N], d: bf16[K, N], c: f32[M, N]) grid(1) threads(128) {\n"
		"    acc = zeros(64, 64)\n"
		"    for k in range(0, K, 32) {\n"
		"        x = load(a[0 : 64, k : k + 32])\n"
		"        acc += dot(x, load(b[k : k + 32, 0 : 64]))\n"
		"        acc += dot(x, load(d[k : k + 32, 0 : 64]))\n"
		"    }\n"
		"    store(c[0 : 64, 0 : 64], acc)\n"
		"}\n";
	lowered l;
	lower(&l, text, NULL, 0);
	T_EQ_INT(l.rc, 0);
	T_CONTAINS(cuda(&l), "kb_mma_warp<32, 64, 2, 4> f2_(wm0_, wn0_);");
	T_CONTAINS(cuda(&l), "f1_.mma(acc, kk_ % 2, (const __nv_bfloat16 *)0);");
	T_CONTAINS(cuda(&l), "f2_.mma(acc, kk_ % 2, (const __nv_bfloat16 *)0);");
	lowered_free(&l);
}

/* ===== what the lowering refuses ===== */

#define MM_HEAD \
	"kernel mm(a: bf16[M, K], b: bf16[K, N], c: f32[M, N], v: f32[N]) grid(M) threads(128) {\n" \
	"    acc = zeros(64, 128)\n"
#define MM_LOOP(body) \
	"    for k in range(0, K, 32) {\n" \
	"        x = load(a[0 : 64, k : k + 32])\n" \
	"        w = load(b[k : k + 32, 0 : 128])\n" \
	body \
	"    }\n"

static const struct {
	int src_line;
	const char *text;
	int line, col;
	const char *msg;
} refused[] = {
	{__LINE__, MM_HEAD "    x = load(a[0 : 64, 0 : 32])\n    w = load(b[0 : 32, 0 : 128])\n"
		   "    acc += dot(x, w)\n}\n", 5, 12,
	 "dot outside a loop over the inner dim (write it as `acc += dot(x, w)` in a for loop that "
	 "loads x and w) is not supported yet"},
	{__LINE__, MM_HEAD "    for k in range(0, K, 32) {\n        x = load(a[0 : 64, k : k + 32], mask = k < 0)\n"
		   "        w = load(b[k : k + 32, 0 : 128])\n        acc += dot(x, w)\n    }\n}\n", 4, 9,
	 "in a loop with dot, a statement other than a load of a dot operand or `acc += dot(x, w)`"},
	{__LINE__, "kernel t(a: bf16[M, K], c: f32[M, N]) grid(1) threads(128) {\n    acc = zeros(8, 16)\n"
		   "    for k in range(0, K, 16) {\n        x = load(a[0 : 8, k : k + 16])\n"
		   "        w = load(a[0 : 16, k : k + 16])\n        acc = acc * 0.5 + dot(x, trans(w))\n    }\n"
		   "    store(c[0 : 8, 0 : 16], acc)\n}\n", 6, 27,
	 "a dot among other statements whose [m, n] result and inner dim k are not multiples of 16, 8 "
	 "and 16 (mma's m16n8k16) is not supported yet"},
	/* the row broadcast: [R] beside [R, C] would mean a column's */
	{__LINE__, "kernel t(x: f32[M, N], y: f32[M, N]) grid(1) threads(32) {\n"
		   "    t = load(x[0 : 32, 0 : 32])\n    store(y[0 : 32, 0 : 32], t - max(t, axis = 1))\n}\n", 3, 34,
	 "a reduction along axis 1 is one value a row; beside a 2-d tile a [n] tile broadcasts along "
	 "the columns, so this would not mean a row's value: write keep = true (an [R, 1] tile) for a "
	 "row's is not supported yet"},
	{__LINE__, MM_HEAD "    for k in range(0, K, 32) {\n        x = load(a[0 : 64, k : k + 32], other = 1.0)\n"
		   "        w = load(b[k : k + 32, 0 : 128])\n        acc += dot(x, w)\n    }\n}\n", 4, 49,
	 "a dot operand's load with mask= or a nonzero other= is not supported yet"},
	{__LINE__, MM_HEAD "    x = load(a[0 : 64, 0 : 32])\n    for k in range(0, K, 32) {\n"
		   "        w = load(b[k : k + 32, 0 : 128])\n        acc += dot(x, w)\n    }\n}\n", 6, 20,
	 "a dot operand that is not loaded in the dot's loop (load it there)"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(trans(trans(x)), w)\n") "}\n", 6, 20,
	 "trans() of a dot's first operand, or of a transposed one (load it as [m, k]) is not supported yet"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n        acc += dot(load(a[0 : 64, k : k + 16]), "
		   "load(b[k : k + 16, 0 : 128]))\n") "}\n", 7, 16,
	 "dots of different inner extents in one loop"},
	{__LINE__, MM_HEAD "    const STAGES = 1\n" MM_LOOP("        acc += dot(x, w)\n") "}\n", 3, 5,
	 "STAGES outside 2 to 8"},
	{__LINE__, "kernel mm(a: bf16[M, K], b: bf16[K, N]) grid(M) threads(256) {\n"
		   "    acc = zeros(16, 16)\n" MM_LOOP("        acc += dot(load(a[0 : 16, k : k + 32]), "
		   "load(b[k : k + 32, 0 : 16]))\n") "}\n", 6, 16,
	 "a dot result of [16, 16] with 8 warps (no grid of warps splits it into 16 x 16 pieces)"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n") "    y = acc + arange(1)\n}\n", 8, 15,
	 "arange of another extent than BN (or BM along axis 0) next to a dot's [BM, BN] result"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n") "    y = acc + load(c[0 : 64, 0 : 1])\n}\n",
		   8, 15, "a 2-d tile of another shape than the dot's is not supported yet"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n") "    y = acc - max(acc, axis = 0)\n}\n", 8, 15,
	 "a reduction of a dot's result without keep = true is not supported yet"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n") "    r = load(v[0 : 128]) * 2.0\n"
		   "    y = acc + r\n}\n", 9, 15,
	 "a rank-1 tile next to a dot's [BM, BN] result other than a load (or a variable a load "
	 "defines, never assigned again)"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n")
		   "    store(c[0 : 32, 0 : 128], load(c[0 : 32, 0 : 128]))\n}\n", 8, 5,
	 "a 2-d store other than of a dot's [BM, BN] result is not supported yet"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n") "    r = sum(acc, 1)\n}\n", 8, 9,
	 "a reduction of a tile of rank 2 is not supported yet"},
	/* 2-d tiles without dot: what stays refused */
	{__LINE__, "kernel t(x: f32[M, N], y: f32[N]) grid(1) threads(32) {\n"
		   "    r = load(y[0 : 32]) * 2.0\n"
		   "    store(x[0 : 8, 0 : 32], load(x[0 : 8, 0 : 32]) + r)\n}\n", 3, 54,
	 "a tile of another shape beside a 2-d tile, other than a load (or a variable only a load "
	 "defines) or arange, is not supported yet"},
	{__LINE__, "kernel t(x: f64[M, N], y: f64[N]) grid(1) threads(32) {\n"
		   "    store(y[0 : 32], sum(load(x[0 : 8, 0 : 32]), axis = 0))\n}\n", 2, 22,
	 "a reduction along an axis of a tile of other than f32, f16, bf16 or i32 is not supported yet"},
	{__LINE__, "kernel t(x: f32[M, N], y: f32[M, N]) grid(1) threads(32) {\n"
		   "    t = load(x[0 : 8, 0 : 32])\n    store(y[0 : 8, 0 : 32], t + sum(t))\n}\n", 3, 33,
	 "sum of a 2-d tile needs an axis"},
	{__LINE__, "kernel t(x: f32[M, N], y: f32[M, N]) grid(1) threads(32) {\n"
		   "    atomic_add(y[0 : 32, 0 : 32], 1.0)\n}\n", 2, 5,
	 "an atomic into a 2-d slice is not supported yet"},
	{__LINE__, MM_HEAD MM_LOOP("        acc += dot(x, w)\n")
		   "    store(c[0 : 64, 0 : 128], acc + load(c[0 : 64, 0 : 128], mask = acc > 0.0))\n}\n", 8, 37,
	 "mask= on a [BM, BN] load beside a dot's result is not supported yet"},
	{__LINE__, "kernel mm(a: bf16[M, K], b: bf16[K, N], c: f32[M, N], r: i32[M, N]) grid(M) threads(128) {\n"
		   "    acc = zeros(64, 128)\n" MM_LOOP("        acc += dot(x, w)\n")
		   "    store(c[0 : 64, 0 : 128], acc + f32(load(r[0 : 64, 0 : 128])))\n}\n", 8, 41,
	 "a [BM, BN] load beside a dot's result other than of a 2-d f32, f16 or bf16 tensor"},
};

/* dot(x, trans(w)) with w loaded [BN, BK]: w's stage is [BN][BK], its
 * fragments by kb_mma_warp_nt (in the prologue only where a dot uses it). */
static void test_tile_lower__dot_trans(void)
{
	lowered l;
	lower(&l, "kernel mm(a: bf16[M, K], b: bf16[N, K], c: f32[M, N]) grid(M) threads(128) {\n"
	      "    acc = zeros(64, 128)\n    for k in range(0, K, 32) {\n"
	      "        x = load(a[0 : 64, k : k + 32])\n        w = load(b[0 : 128, k : k + 32])\n"
	      "        acc += dot(x, trans(w))\n    }\n    store(c[0 : 64, 0 : 128], acc)\n}\n", NULL, 0);
	T_EQ_INT(l.rc, 0);
	T_CONTAINS(cuda(&l), "struct kb_mma_warp_nt");
	T_CONTAINS(cuda(&l), "kb_mma_warp_nt<32, 4, 4> f_(wm0_, wn0_);");
	T_CONTAINS(cuda(&l), "const kb_copy_plan<128, 32, 128, true, false> w_p_");
	lowered_free(&l);
	lower(&l, MM_HEAD MM_LOOP("        acc += dot(x, w)\n") "}\n", NULL, 0);
	T_EQ_INT(l.rc, 0);
	T_OK(!strstr(cuda(&l), "kb_mma_warp_nt"));
	lowered_free(&l);
}

/* A residual [BM, BN] load beside a dot's result: its pointer and bounds
 * before the store, each element read in the store's loop at the row and
 * column of the slot (the layout of the accumulator's fragments). */
static void test_tile_lower__dot_residual(void)
{
	lowered l;
	lower(&l, MM_HEAD MM_LOOP("        acc += dot(x, w)\n")
	      "    store(c[0 : 64, 0 : 128], acc + load(c[0 : 64, 0 : 128], other = 1.0))\n}\n", NULL, 0);
	T_EQ_INT(l.rc, 0);
	const char *c = cuda(&l);
	T_CONTAINS(c, "const float *kb_res");
	T_CONTAINS(c, "p_ = c + (size_t)(0) * N + (size_t)(0); /* c, read where used */");
	T_CONTAINS(c, "r_ = M - (0), kb_res");
	T_CONTAINS(c, "(float)(kb_res"); /* read where used ... */
	T_CONTAINS(c, ") : (float)(1.0f)"); /* ... other= past the edges */
	lowered_free(&l);
}

/* 2-d tiles in a kernel without dot: a [R, C] tile is R * C elements in
 * row order over the threads, each slot at row f_ / C, column f_ % C; a
 * [C] load beside it is read at the slot's column; a reduction along an
 * axis goes through shared-memory atomics, kept ([R, 1]) it is read at
 * the slot's row. */
static void test_tile_lower__tiles_2d(void)
{
	lowered l;
	lower(&l, "kernel s(x: f32[M, N], b: f32[N], y: f32[M, N]) grid(cdiv(M, 8)) threads(128) {\n"
	      "    r0 = pid(0) * 8\n"
	      "    t = load(x[r0 : r0 + 8, 0 : 64], other = -inf) + load(b[0 : 64])\n"
	      "    e = exp(t - max(t, axis = 1, keep = true))\n"
	      "    store(y[r0 : r0 + 8, 0 : 64], e / sum(e, axis = 1, keep = true), mask = t > 0.0)\n"
	      "}\n", NULL, 0);
	T_EQ_INT(l.rc, 0);
	const char *c = cuda(&l);
	/* 512 elements over 128 threads: 4 slots, row f_ / 64, column f_ % 64 */
	T_CONTAINS(c, "const int f_ = ((((i_) / 4) * 128 + (int)threadIdx.x) * 4 + (i_) % 4), r_ = f_ / 64, c_ = f_ % 64;");
	/* t: whole [8, 64] f32 rows, 16 bytes a group where aligned, else elements */
	T_CONTAINS(c, "const bool al_ = ((unsigned long long)p_ & 15) == 0 && N % 4 == 0;");
	T_CONTAINS(c, "if (al_ && f_ < 512 && r_ < rows_ && c_ + 4 <= cols_) {");
	T_CONTAINS(c, "const float4 v_ = *(const float4 *)(p_ + (size_t)r_ * N + c_);");
	T_CONTAINS(c, "? p_[(size_t)r_ * N + c_ + j_] : (float)(-(CUDART_INF_F));");
	T_CONTAINS(c, "? (float)p_[(size_t)0 * 0 + c_] : (float)(0);"); /* b at the column */
	T_CONTAINS(c, "__shared__ float kb_ax");
	T_CONTAINS(c, "atomicMax((int *)&kb_ax");
	T_CONTAINS(c, "if (f_ < 512) atomicAdd(&kb_ax");
	T_CONTAINS(c, "[r_];"); /* a kept [8, 1] read at the slot's row */
	T_CONTAINS(c, "if (f_ < 512 && r_ < rows_ && c_ < cols_ && ((");
	lowered_free(&l);
}

static void test_tile_lower__refused(void)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(refused); i++) {
		lowered l;
		lower(&l, refused[i].text, NULL, 0);
		bool found = false;
		for (int k = 0; k < l.d.n && !found; k++) {
			const kb_diag *g = &l.d.v[k];
			found = g->line == refused[i].line && g->col == refused[i].col &&
				strstr(g->msg, refused[i].msg);
		}
		if (l.rc != KB_ESPEC || !found) {
			T_FAIL_AT("table line %d: wanted %d:%d \"%s\", got rc %d and %d messages, first %d:%d %s",
				  refused[i].src_line, refused[i].line, refused[i].col, refused[i].msg, l.rc, l.d.n,
				  l.d.n ? l.d.v[0].line : 0, l.d.n ? l.d.v[0].col : 0, l.d.n ? l.d.v[0].msg : "");
		}
		T_OK(!l.out.cuda.len); /* never a partial kernel */
		lowered_free(&l);
	}
}

int main(void)
{
	T_RUN(test_tile_lower__row_layout);
	T_RUN(test_tile_lower__nested_load_kept);
	T_RUN(test_tile_lower__cast_load_kept);
	T_RUN(test_tile_lower__atomics_and_gather);
	T_RUN(test_tile_lower__strided_column);
	T_RUN(test_tile_lower__define_changes_layout);
	T_RUN(test_tile_lower__bf16_vectors);
	T_RUN(test_tile_lower__loads_in_place);
	T_RUN(test_tile_lower__load_mask);
	T_RUN(test_tile_lower__names);
	T_RUN(test_tile_lower__decided_on_tree);
	T_RUN(test_tile_lower__pin_lines);
	T_RUN(test_tile_lower__dot_layout);
	T_RUN(test_tile_lower__dot_bias);
	T_RUN(test_tile_lower__dot_stages_and_warps);
	T_RUN(test_tile_lower__two_dots_one_loop);
	T_RUN(test_tile_lower__dot_residual);
	T_RUN(test_tile_lower__dot_trans);
	T_RUN(test_tile_lower__tiles_2d);
	T_RUN(test_tile_lower__refused);
	return t_report();
}
