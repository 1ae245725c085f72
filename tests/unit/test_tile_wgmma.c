/* test_tile_wgmma.c - a dot on sm_90a (src/tilegen/lower_wgmma.c): the
 * canonical loop lowers to a producer warpgroup's copies and consumer
 * warpgroups' wgmma, its launch grows by the producer, its epilogue keeps
 * the mma layout with m pieces 64 rows apart; its operands come by TMA
 * (tensormaps the spec gets from the lowering) with cp.async where the
 * runner passes zeros, or always with KB_TMA=0; every other target, and each
 * shape or program the wgmma path does not take, keeps mma.sync.  NVRTC
 * compiles the sm_90a CUDA in tests/cli/tile.sh; no GPU here runs it. */
#include "../../src/tilegen/tilegen_int.h"
#include "t.h"

typedef struct {
	kb_tile_out out;
	kb_diags d;
	int rc;
} lowered;

static void lower(lowered *l, const char *text, const char *arch, const char *define)
{
	memset(l, 0, sizeof *l);
	const char *defs[1] = {define};
	kb_tile_opts o = {.defines = defs, .ndefines = define ? 1 : 0, .arch = arch};
	l->rc = kb_tile_compile("t.tile", text, strlen(text), &o, &l->out, &l->d);
}

static const char *cuda(const lowered *l)
{
	return l->out.cuda.s ? l->out.cuda.s : "";
}

static bool wgmma(const lowered *l)
{
	return strstr(cuda(l), "kb_wg_consume<") != NULL;
}

static void lowered_free(lowered *l)
{
	kb_tile_out_free(&l->out);
	kb_diags_free(&l->d);
}

/* text (the case `what`) lowered for sm_90a with define: no error, wgmma. */
static void lower_wgmma(lowered *l, const char *what, const char *text, const char *define)
{
	lower(l, text, "sm_90a", define);
	if (l->rc)
		printf("  %s: %s\n", what, l->d.n ? l->d.v[0].msg : "?");
	T_EQ_INT(l->rc, 0);
	T_OK(wgmma(l));
}

/* matmul.tile's kernel, with room for a statement before the loop (PRE)
 * and the epilogue (POST). */
#define MATMUL(THREADS, PRE, POST)                                                        \
	"kernel mm(a: bf16[M, K], b: bf16[K, N], bias: f32[N], c: bf16[M, N])\n"           \
	"        grid(cdiv(M, BM) * cdiv(N, BN)) threads(" THREADS ") {\n"                 \
	"    const BM = 256\n"                                                              \
	"    const BN = 32768 / BM\n"                                                       \
	"    const BK = 64\n"                                                               \
	"    const STAGES = 4\n"                                                            \
	"    tiles_n = cdiv(N, BN)\n"                                                       \
	"    m0 = pid(0) / tiles_n * BM\n"                                                  \
	"    n0 = pid(0) % tiles_n * BN\n"                                                  \
	PRE                                                                                 \
	"    acc = zeros(BM, BN)\n"                                                         \
	"    for k in range(0, K, BK) {\n"                                                  \
	"        x = load(a[m0 : m0 + BM, k : k + BK])\n"                                   \
	"        w = load(b[k : k + BK, n0 : n0 + BN])\n"                                   \
	"        acc += dot(x, w)\n"                                                        \
	"    }\n"                                                                           \
	POST                                                                                \
	"}\n"

static const char matmul[] = MATMUL("256", "",
	"    bb = load(bias[n0 : n0 + BN])\n"
	"    store(c[m0 : m0 + BM, n0 : n0 + BN], max(acc + bb, 0.0))\n");

static void test_tile_wgmma__matmul(void)
{
	lowered l;
	lower(&l, matmul, "sm_90a", NULL);
	T_EQ_INT(l.rc, 0);
	T_OK(wgmma(&l));
	/* two consumer warpgroups of 128 rows (two m64 pieces each) and the producer */
	T_EQ_INT(l.out.kernels[0].threads, 384);
	T_CONTAINS(cuda(&l), "__launch_bounds__(384, 1)");
	/* persistent: a block an SM, each looping over the programs; the ring,
	 * its mbarriers and the warp roles made once before the loop */
	T_OK(l.out.kernels[0].persistent);
	T_EQ_STR(l.out.kernels[0].grid[0], "min(sm_count, (cdiv(M, 256) * cdiv(N, 128)))");
	T_CONTAINS(cuda(&l), "\tfor (int kb_pid_ = (int)blockIdx.x; kb_pid_ < ((((M) + (BM) - 1) / (BM)) * "
		   "(((N) + (BN) - 1) / (BN))); kb_pid_ += (int)gridDim.x) {");
	T_CONTAINS(cuda(&l), "int m0 = ((kb_pid_ / tiles_n) * BM);");
	T_OK(!strstr(cuda(&l), "((int)blockIdx.x")); /* pid(0) is the loop's program */
	/* each role its own loop over the programs (lower_wgepi.c), so that
	 * ptxas keeps setmaxnreg: the producer's first (its registers given
	 * back, the TMA thread alone going on), the scalars and the copies */
	T_CONTAINS(cuda(&l), "\tconst bool producer_ = threadIdx.x >= 256; /* the warpgroup after the consumers */\n"
		   "\tif (producer_) { /* the producer warpgroup, its own loop over the programs (so that ptxas "
		   "keeps setmaxnreg) */\n\t\tasm volatile(\"setmaxnreg.dec.sync.aligned.u32 48;\");\n"
		   "\t\tif (tma_ && threadIdx.x != 256)\n\t\t\treturn; /* one thread copies by TMA */\n"
		   "\t\tint it_ = 0;");
	T_OK(strstr(cuda(&l), "kb_wg_bars_init<") < strstr(cuda(&l), "for (int kb_pid_"));
	/* ... then the consumers' (their registers taken): the accumulator,
	 * the wgmma and the epilogue are theirs alone */
	const char *cons = strstr(cuda(&l), "\t\treturn;\n\t}\n\tasm volatile(\"setmaxnreg.inc.sync.aligned.u32 224;\");");
	T_OK(cons && strstr(cons, "\tint it_ = 0;") && strstr(cons, "for (int kb_pid_"));
	T_OK(cons && strstr(cuda(&l), "kb_wg_produce_tma<256, 128, 4>(") < cons && !strstr(cons, "kb_wg_produce"));
	T_OK(cons && strstr(cuda(&l), "float acc[") > cons && strstr(cuda(&l), "kb_wg_consume<") > cons);
	T_OK(cons && strstr(cons, "int m0 = ((kb_pid_ / tiles_n) * BM);"));
	/* --define KB_WG_ROLES=0: both in one loop, the lowering before (ptxas
	 * then drops setmaxnreg: C7507) */
	lowered o;
	lower(&o, matmul, "sm_90a", KB_TILE_NO_WG_ROLES);
	T_EQ_INT(o.rc, 0);
	T_CONTAINS(cuda(&o), "\tconst bool producer_ = threadIdx.x >= 256; /* the warpgroup after the consumers */\n"
		   "\tif (producer_)\n\t\tasm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\");\n\telse\n"
		   "\t\tasm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\");\n"
		   "\tif (producer_ && tma_ && threadIdx.x != 256)\n\t\treturn; /* one thread copies by TMA */\n"
		   "\tint it_ = 0;");
	T_OK(strstr(cuda(&o), "for (int kb_pid_") && !strstr(strstr(cuda(&o), "for (int kb_pid_") + 1, "for (int kb_pid_"));
	lowered_free(&o);
	/* the producer goes on to the next tile's copies: the ring's trip count
	 * carries the stages and mbarrier phases across tiles */
	T_CONTAINS(cuda(&l), "\t\t\t\tit_ += trips_;\n\t\t\t\tcontinue;");
	T_CONTAINS(cuda(&l), "kb_wg_consume<256, 128, 4, 2, false>(acc, ring_, full_, empty_, trips_, it_, !tma_);\n"
		   "\t\t\tit_ += trips_;\n");
	/* the last stage goes back too (the producer refills it for the next tile) */
	T_CONTAINS(cuda(&l), "	if (trips > 0 && lane0)\n		kb_bar_arrive(empty + 8 * ((it0 + trips - 1) % STAGES));\n");
	T_CONTAINS(cuda(&l), "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
	/* TMA: two tensormaps the kernel takes after its own parameters, the
	 * spec's lines for them (a's [BM][64] box, b's [64][64]), zeros where a
	 * row is no 16-byte multiple; one producer thread copies, one arrival a
	 * stage, and the consumers need no proxy fence */
	T_CONTAINS(cuda(&l), "int M, int K, int N, const __grid_constant__ CUtensorMap kb_tma_a, "
		   "const __grid_constant__ CUtensorMap kb_tma_b, ");
	T_CONTAINS(cuda(&l), "#include <cuda.h>");
	T_EQ_STR(l.out.kernels[0].spec, "//! tensormap kb_tma_a : a box=(256, 64) swizzle=128 unaligned=zero\n"
		 "//! tensormap kb_tma_b : b box=(64, 64) swizzle=128 unaligned=zero\n"
		 "//! tensormap kb_tma_out : c box=(64, 64) swizzle=128 unaligned=zero\n");
	T_CONTAINS(cuda(&l), "const bool tma_ = kb_wg_tma_ok(&kb_tma_a) && kb_wg_tma_ok(&kb_tma_b);");
	T_CONTAINS(cuda(&l), "kb_wg_bars_init<4, 8>(full_, empty_, tma_ ? 1 : 128);");
	T_CONTAINS(cuda(&l), "\t\t\t\tif (tma_) { /* one thread's TMA copies */\n"
		   "\t\t\t\t\tkb_wg_produce_tma<256, 128, 4>(&kb_tma_a, &kb_tma_b, m0, n0, lo_, step_, trips_, "
		   "it_, ring_, full_, empty_);\n\t\t\t\t} else {\n");
	T_CONTAINS(cuda(&l), "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
	T_CONTAINS(cuda(&l), "kb_wg_tma(sa + BM * 128 + j * 8192, tb, bar, n0 + 64 * j, k);");
	/* else 16-byte copies where the rows allow, element by element elsewhere (S = 1001) */
	T_CONTAINS(cuda(&l), "kb_wg_produce<256, 128, 4, true>(a, b, m0, n0, lo_, step_, trips_, M, K, K, N, it_, ");
	T_CONTAINS(cuda(&l), "kb_wg_produce<256, 128, 4, false>(a, b, m0, n0, ");
	T_CONTAINS(cuda(&l), "const bool vec_ = K % 8 == 0 && N % 8 == 0 &&");
	/* 4 stages of a [256][64] and a [64][128] bf16 tile, 1 KiB to align the
	 * ring, and each consumer warpgroup's two [64][64] bf16 store buffers */
	T_EQ_INT(l.out.kernels[0].smem, 4 * (256 + 128) * 64 * 2 + 1024 + 2 * 2 * 64 * 64 * 2);
	/* the epilogue: the mma layout, m pieces 64 rows apart, a warp's 16 rows */
	T_CONTAINS(cuda(&l), "const int wm0_ = (int)threadIdx.x / 128 * 128 + (int)threadIdx.x / 32 % 4 * 16, wn0_ = 0;");
	T_CONTAINS(cuda(&l), "const int r_ = wm0_ + i_ / 64 * 64 + lane_ / 4 + i_ % 4 / 2 * 8;");
	T_CONTAINS(cuda(&l), "struct { /* at this thread's columns of the dot's result, read where used */");
	T_OK(!strstr(cuda(&l), "kb_mma_warp<"));
	lowered_free(&l);
}

/* The epilogue's store on the TMA path: each consumer warpgroup writes its
 * [128, 128] part (two m pieces, two 64-column blocks) as four [64][64]
 * blocks into two swizzled shared buffers, each sent by its first thread's
 * TMA store at the block's place (m0 + 128 w + 64 mt, n0 + 64 cb), the
 * buffer reused once its last store has read it; where the runner passed
 * zeros (rows no 16-byte multiple) the store from registers runs, and the
 * block's last stores are waited for after its loop.  None with
 * --define KB_WG_STORE=0, a masked store, an f32 result, or a block a tile
 * (-D KB_TMA=0). */
#define GELU_MM                                                                           \
	MATMUL("256", "", "    bb = load(bias[n0 : n0 + BN])\n    u = acc + bb\n"                \
	       "    store(c[m0 : m0 + BM, n0 : n0 + BN], 0.5 * u * (1.0 + tanh(0.79788456 * u)))\n")

static void test_tile_wgmma__tma_store(void)
{
	lowered l;
	/* ... which --define KB_WG_STORE=1 takes anyway */
	lower_wgmma(&l, "KB_WG_STORE=1", GELU_MM, KB_TILE_WG_STORE);
	T_CONTAINS(cuda(&l), "\t\t\tkb_st_[i_] = ((0.5f * u[i_]) * (1.0f + tanhf((0.79788456f * u[i_]))));\n");
	T_CONTAINS(cuda(&l), "kb_wg_st_tma(&kb_tma_out, buf_, ");
	T_EQ_INT(l.out.kernels[0].smem, 4 * (256 + 128) * 64 * 2 + 1024 + 2 * 2 * 64 * 64 * 2);
	lowered_free(&l);
	/* ... and =2 with each pair's value worked out where it is written */
	lower_wgmma(&l, "KB_WG_STORE=2", GELU_MM, KB_TILE_WG_STORE_INLINE);
	T_OK(!strstr(cuda(&l), "kb_st_"));
	T_CONTAINS(cuda(&l), "lane_ % 4 * 4, __floats2bfloat162_rn(((0.5f * u[i_]) * (1.0f + tanhf((0.79788456f * u[i_])))), "
		   "((0.5f * u[i_ + 1]) * (1.0f + tanhf((0.79788456f * u[i_ + 1]))))));\n");
	T_CONTAINS(cuda(&l), "const float v_[2] = {((0.5f * u[i_]) * (1.0f + tanhf(");
	lowered_free(&l);
	/* ... and =3 a block at a time: its 16 pairs worked out before the
	 * wait for its buffer, then written; the store from registers each
	 * value where it is written */
	lower_wgmma(&l, "KB_WG_STORE=3", GELU_MM, KB_TILE_WG_STORE_CHUNK);
	T_OK(!strstr(cuda(&l), "kb_st_"));
	T_CONTAINS(cuda(&l), "\t\t\t\t__nv_bfloat162 pk_[16]; /* the block's pairs: n piece j_ / 2, rows + 8 (j_ % 2) */\n"
		   "\t\t\t\t#pragma unroll\n\t\t\t\tfor (int j_ = 0; j_ < 16; j_++) {\n"
		   "\t\t\t\t\tconst int i_ = (b_ / 2 * 16 + b_ % 2 * 8 + j_ / 2) * 4 + j_ % 2 * 2;\n"
		   "\t\t\t\t\tpk_[j_] = __floats2bfloat162_rn(((0.5f * u[i_]) * (1.0f + tanhf((0.79788456f * u[i_])))), "
		   "((0.5f * u[i_ + 1]) * (1.0f + tanhf((0.79788456f * u[i_ + 1])))));\n\t\t\t\t}\n"
		   "\t\t\t\tconst unsigned buf_ = sb_ + b_ % 2 * 8192;\n");
	T_CONTAINS(cuda(&l), "const int r_ = rr_ + j_ % 2 * 8;\n"
		   "\t\t\t\t\tkb_wg_st_pair(buf_ + r_ * 128 + ((j_ / 2 ^ r_ % 8) << 4) + lane_ % 4 * 4, pk_[j_]);\n");
	T_CONTAINS(cuda(&l), "const float v_[2] = {((0.5f * u[i_]) * (1.0f + tanhf(");
	lowered_free(&l);
	/* ... which a value that calls a transcendental takes by default */
	lower_wgmma(&l, "a GELU, no define", GELU_MM, NULL);
	T_OK(!strstr(cuda(&l), "kb_st_") && !strstr(cuda(&l), "pk_"));
	T_CONTAINS(cuda(&l), "lane_ % 4 * 4, __floats2bfloat162_rn(((0.5f * u[i_]) * (1.0f + tanhf((0.79788456f * u[i_])))), ");
	lowered_free(&l);
	lower(&l, matmul, "sm_90a", NULL);
	T_EQ_INT(l.rc, 0);
	T_CONTAINS(cuda(&l), "const __grid_constant__ CUtensorMap kb_tma_b, const __grid_constant__ CUtensorMap kb_tma_out)\n{");
	T_CONTAINS(cuda(&l), "const bool tma_st_ = kb_wg_tma_ok(&kb_tma_out);");
	T_CONTAINS(cuda(&l), "const unsigned sb_ = ring_ + 196608 + w_ * 16384;");
	T_CONTAINS(cuda(&l), "for (int b_ = 0; b_ < 4; b_++) { /* m piece b_ / 2, columns 64 (b_ % 2) */");
	T_CONTAINS(cuda(&l), "const unsigned buf_ = sb_ + b_ % 2 * 8192;\n");
	T_CONTAINS(cuda(&l), "b_ == 0 ? kb_wg_st_wait<0>() : kb_wg_st_wait<1>();\n");
	T_CONTAINS(cuda(&l), "const int i_ = (b_ / 2 * 16 + b_ % 2 * 8 + j_ / 2) * 4 + j_ % 2 * 2, r_ = rr_ + j_ % 2 * 8;\n");
	/* the value worked out once, before either store */
	T_CONTAINS(cuda(&l), "\t\tfloat kb_st_[128];");
	T_CONTAINS(cuda(&l), "\t\t\tkb_st_[i_] = fmaxf((acc[i_] + _t1[(i_) / 4 % 16 * 2 + (i_) % 2]), 0.0f);\n"
		   "\t\tif (tma_st_) {");
	T_CONTAINS(cuda(&l), "kb_wg_st_pair(buf_ + r_ * 128 + ((j_ / 2 ^ r_ % 8) << 4) + lane_ % 4 * 4, "
		   "__floats2bfloat162_rn(kb_st_[i_], kb_st_[i_ + 1]));\n");
	T_CONTAINS(cuda(&l), "const float v_[2] = {kb_st_[i_], kb_st_[i_ + 1]};\n");
	T_OK(!strstr(cuda(&l), "fmaxf((acc[i_ + 1]"));
	T_CONTAINS(cuda(&l), "kb_wg_st_tma(&kb_tma_out, buf_, (n0) + b_ % 2 * 64, (m0) + w_ * 128 + b_ / 2 * 64);\n");
	T_CONTAINS(cuda(&l), "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group");
	/* fenced for the copy engine, then the warpgroup's barrier, before the store */
	const char *f = strstr(cuda(&l), "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); /* for the copy engine */");
	const char *t = strstr(cuda(&l), "kb_wg_st_tma(&kb_tma_out");
	T_OK(f && t && f < t && strstr(f, "kb_wg_st_bar(w_);") < t);
	/* the store from registers stays, for zero tensormaps */
	T_CONTAINS(cuda(&l), "\t\t} else\n\t\t{\n\t\t\t__nv_bfloat16 *p_ = c + (size_t)(m0) * N + (size_t)(n0);");
	T_CONTAINS(cuda(&l), "\t}\n\tif (tma_st_ && !producer_ && threadIdx.x % 128 == 0)\n\t\tkb_wg_st_wait<0>();");
	lowered_free(&l);
	static const struct {
		const char *what, *text, *define;
		int stages; /* the ring's, alone in shared memory */
	} none[] = {
		{"KB_WG_STORE=0", matmul, KB_TILE_NO_WG_STORE, 4},
		{"KB_TMA=0", matmul, KB_TILE_NO_TMA, 4},
		{"a masked store", MATMUL("256", "", "    store(c[m0 : m0 + BM, n0 : n0 + BN], acc, mask = acc > 0.0)\n"), NULL, 4},
		{"an f32 result", "kernel f(a: bf16[M, K], b: bf16[K, N], c: f32[M, N]) grid(cdiv(M, 128) * cdiv(N, 256)) "
		 "threads(256) {\n    m0 = pid(0) / cdiv(N, 256) * 128\n    n0 = pid(0) % cdiv(N, 256) * 256\n"
		 "    acc = zeros(128, 256)\n    for k in range(0, K, 64) {\n"
		 "        acc += dot(load(a[m0 : m0 + 128, k : k + 64]), load(b[k : k + 64, n0 : n0 + 256]))\n    }\n"
		 "    store(c[m0 : m0 + 128, n0 : n0 + 256], acc)\n}\n", NULL, 3},
	};
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
		lower_wgmma(&l, none[i].what, none[i].text, none[i].define);
		T_OK(!strstr(cuda(&l), "kb_tma_out") && !strstr(cuda(&l), "tma_st_") && !strstr(cuda(&l), "kb_wg_st_pair(buf_"));
		T_OK(!l.out.kernels[0].spec || !strstr(l.out.kernels[0].spec, "kb_tma_out"));
		T_EQ_INT(l.out.kernels[0].smem, none[i].stages * 384 * 64 * 2 + 1024);
		lowered_free(&l);
	}
}

/* --define KB_WG_PINGPONG=1 at threads(128) (a [128, 128] tile, two m64
 * pieces): two consumer warpgroups, each its own programs (every other one
 * of the block's) and its own store buffers and rows, the producer
 * warpgroup after them filling the ring for both in order; each counts the
 * other's trips too.  Not where the loop's trips depend on the program, nor
 * at threads(256), nor without the define. */
static void test_tile_wgmma__pingpong(void)
{
#define PP(HI)                                                                                    \
	"kernel p(a: bf16[M, K], b: bf16[K, N], c: bf16[M, N]) grid(cdiv(M, 128) * cdiv(N, 128)) " \
	"threads(128) {\n"                                                                           \
	"    const STAGES = 4\n"                                                                     \
	"    m0 = pid(0) / cdiv(N, 128) * 128\n"                                                     \
	"    n0 = pid(0) % cdiv(N, 128) * 128\n"                                                     \
	"    acc = zeros(128, 128)\n"                                                                \
	"    for k in range(0, " HI ", 64) {\n"                                                      \
	"        acc += dot(load(a[m0 : m0 + 128, k : k + 64]), load(b[k : k + 64, n0 : n0 + 128]))\n" \
	"    }\n"                                                                                    \
	"    store(c[m0 : m0 + 128, n0 : n0 + 128], acc)\n"                                          \
	"}\n"
	lowered l;
	lower(&l, PP("K"), "sm_90a", KB_TILE_WG_PINGPONG);
	T_EQ_INT(l.rc, 0);
	T_EQ_INT(l.out.kernels[0].threads, 384);
	T_CONTAINS(cuda(&l), "__launch_bounds__(384, 1)");
	T_CONTAINS(cuda(&l), "const int wm0_ = (int)threadIdx.x / 32 % 4 * 16, wn0_ = 0;");
	T_CONTAINS(cuda(&l), "\tconst bool producer_ = threadIdx.x >= 256;");
	T_CONTAINS(cuda(&l), "setmaxnreg.inc.sync.aligned.u32 224;");
	T_CONTAINS(cuda(&l), "if (tma_ && threadIdx.x != 256)");
	/* each role its loop: the producer every program of the block's, a
	 * consumer warpgroup every other */
	T_CONTAINS(cuda(&l), "\t\tconst int pp_first_ = 0, pp_step_ = (int)gridDim.x;");
	T_CONTAINS(cuda(&l), "\tconst int pp_first_ = (int)threadIdx.x / 128 * (int)gridDim.x, pp_step_ = 2 * "
		   "(int)gridDim.x;");
	T_CONTAINS(cuda(&l), "\tconst int kb_programs_ = ((((M) + (128) - 1) / (128)) * (((N) + (128) - 1) / (128)));\n"
		   "\tfor (int kb_pid_ = (int)blockIdx.x + pp_first_; kb_pid_ < kb_programs_; kb_pid_ += pp_step_) {");
	/* the producer counts every tile's trips, a consumer its own and the other's */
	T_CONTAINS(cuda(&l), "\t\t\t\tit_ += trips_;\n\t\t\t\tcontinue;");
	/* ... in turns: a warpgroup's wgmma once the other's are done (but for
	 * the block's first tile), the other's turn after if it has a tile */
	T_CONTAINS(cuda(&l), "\t\t\tif (kb_pid_ != (int)blockIdx.x)\n\t\t\t\tkb_wg_turn_wait((int)threadIdx.x / 128);\n"
		   "\t\t\tkb_wg_consume<128, 128, 4, 1, false>(acc, ring_, full_, empty_, trips_, "
		   "it_ + (int)threadIdx.x / 128 * trips_, !tma_);\n"
		   "\t\t\tif (kb_pid_ + (int)gridDim.x < kb_programs_)\n\t\t\t\tkb_wg_turn_give((int)threadIdx.x / 128);\n"
		   "\t\t\tit_ += 2 * trips_;\n");
	T_CONTAINS(cuda(&l), "asm volatile(\"bar.sync %0, 256;\" ::\"r\"(3 + w) : \"memory\");");
	T_CONTAINS(cuda(&l), "asm volatile(\"bar.arrive %0, 256;\" ::\"r\"(4 - w) : \"memory\");");
	T_CONTAINS(cuda(&l), "const int w = threadIdx.x / 128 % CONS;");
	/* a stage goes back once one warpgroup's 4 warps are done with it */
	T_CONTAINS(cuda(&l), "kb_wg_bars_init<4, 4>(full_, empty_, tma_ ? 1 : 128);");
	T_CONTAINS(cuda(&l), "const unsigned sb_ = ring_ + 131072 + w_ * 16384;");
	T_CONTAINS(cuda(&l), "kb_wg_st_tma(&kb_tma_out, buf_, (n0) + b_ % 2 * 64, (m0) + b_ / 2 * 64);");
	T_EQ_INT(l.out.kernels[0].smem, 4 * (128 + 128) * 64 * 2 + 1024 + 2 * 2 * 64 * 64 * 2);
	T_OK(l.out.kernels[0].persistent);
	lowered_free(&l);
	static const struct {
		const char *what, *text, *define;
	} none[] = {
		{"trips that depend on the program", PP("n0 + 64"), KB_TILE_WG_PINGPONG},
		{"threads(256)", matmul, KB_TILE_WG_PINGPONG},
		{"no define", PP("K"), NULL},
	};
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
		lower_wgmma(&l, none[i].what, none[i].text, none[i].define);
		T_OK(!strstr(cuda(&l), "pp_first_") && !strstr(cuda(&l), "it_ += 2 * trips_"));
		T_EQ_INT(l.out.kernels[0].threads, i == 1 ? 384 : 256);
		lowered_free(&l);
	}
#undef PP
}

/* --define KB_TMA=0 keeps the lowering before TMA: every producer thread
 * copies with cp.async (or element by element), the consumers fence the
 * proxies each trip, the kernel takes no tensormap and is a block a tile. */
static void test_tile_wgmma__no_tma(void)
{
	lowered l;
	lower(&l, matmul, "sm_90a", KB_TILE_NO_TMA);
	T_EQ_INT(l.rc, 0);
	T_OK(wgmma(&l));
	T_EQ_INT(l.out.kernels[0].threads, 384);
	T_OK(l.out.kernels[0].spec == NULL);
	T_OK(!strstr(cuda(&l), "CUtensorMap"));
	T_OK(!strstr(cuda(&l), "#include <cuda.h>"));
	T_OK(!strstr(cuda(&l), "tma_"));
	T_CONTAINS(cuda(&l), "kb_wg_bars_init<4, 8>(full_, empty_, 128);");
	T_CONTAINS(cuda(&l), "kb_wg_produce<256, 128, 4, true>(a, b, m0, n0, lo_, step_, trips_, M, K, K, N, 0, ");
	T_CONTAINS(cuda(&l), "kb_wg_consume<256, 128, 4, 2, false>(acc, ring_, full_, empty_, trips_, 0, true);");
	/* a block a tile, its grid as written, the roles split at the loop */
	T_OK(!l.out.kernels[0].persistent);
	T_EQ_STR(l.out.kernels[0].grid[0], "(cdiv(M, 256) * cdiv(N, 128))");
	T_OK(!strstr(cuda(&l), "kb_pid_"));
	T_CONTAINS(cuda(&l), "int m0 = (((int)blockIdx.x / tiles_n) * BM);");
	T_CONTAINS(cuda(&l), "if (threadIdx.x >= 256) { /* the producer warpgroup */\n"
		   "\t\t\tasm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\");");
	T_CONTAINS(cuda(&l), "return; /* the consumers alone run what follows */");
	T_CONTAINS(cuda(&l), "fence.proxy.async.shared::cta;");
	lowered_free(&l);
}

/* One consumer warpgroup (threads(128)): no register hand-over, f16. */
static void test_tile_wgmma__one_consumer(void)
{
	static const char mm[] =
		"kernel h(a: f16[M, K], b: f16[K, N], c: f16[M, N]) grid(cdiv(M, 64), cdiv(N, 64)) threads(128) {\n"
		"    m0 = pid(0) * 64\n"
		"    n0 = pid(1) * 64\n"
		"    acc = zeros(64, 64)\n"
		"    for k in range(0, K, 64) {\n"
		"        acc += dot(load(a[m0 : m0 + 64, k : k + 64]), load(b[k : k + 64, n0 : n0 + 64]))\n"
		"    }\n"
		"    store(c[m0 : m0 + 64, n0 : n0 + 64], acc * 0.5)\n"
		"}\n";
	lowered l;
	lower(&l, mm, "sm_90a", NULL);
	T_EQ_INT(l.rc, 0);
	T_CONTAINS(cuda(&l), "kb_wg_consume<64, 64, 3, 1, true>(acc, ");
	/* a 2-d grid: TMA, but a block a tile (one thread of the producer copies) */
	T_CONTAINS(cuda(&l), "\t\t\tif (tma_) { /* one thread's TMA copies */\n\t\t\t\tif (threadIdx.x == 128)\n"
		   "\t\t\t\t\tkb_wg_produce_tma<64, 64, 3>(&kb_tma_a, &kb_tma_b, m0, n0, lo_, step_, trips_, 0, "
		   "ring_, full_, empty_);\n\t\t\t\treturn;\n\t\t\t}\n");
	T_OK(!l.out.kernels[0].persistent && !strstr(cuda(&l), "kb_pid_"));
	T_EQ_STR(l.out.kernels[0].grid[0], "cdiv(M, 64)");
	T_EQ_STR(l.out.kernels[0].spec, "//! tensormap kb_tma_a : a box=(64, 64) swizzle=128 unaligned=zero\n"
		 "//! tensormap kb_tma_b : b box=(64, 64) swizzle=128 unaligned=zero\n");
	T_EQ_INT(l.out.kernels[0].threads, 256);
	T_OK(!strstr(cuda(&l), "setmaxnreg"));
	lowered_free(&l);
}

/* Every target but sm_90a, and every program the wgmma path does not
 * take, lowers as it did: mma.sync, threads() as written, no wgmma helpers. */
static void test_tile_wgmma__fallbacks(void)
{
	static const struct {
		const char *what, *text, *arch, *define;
	} cases[] = {
		{"no arch", matmul, NULL, NULL},
		{"sm_90", matmul, "sm_90", NULL},
		{"sm_100a", matmul, "sm_100a", NULL},
		{"BK = 32: rows of 64 bytes, not the 128-byte swizzle's", matmul, "sm_90a", "BK=32"},
		{"STAGES = 8: more shared memory than an SM has", matmul, "sm_90a", "STAGES=8"},
		{"threads(512)", MATMUL("512", "", "    store(c[m0 : m0 + BM, n0 : n0 + BN], acc)\n"), "sm_90a", NULL},
		{"a rank-1 tile before the loop (the producer would run it)",
		 MATMUL("256", "    t = load(bias[n0 : n0 + BN])\n", "    store(c[m0 : m0 + BM, n0 : n0 + BN], acc)\n"),
		 "sm_90a", NULL},
		{"a reduction after the loop (a barrier of every thread)",
		 MATMUL("256", "", "    s = sum(load(bias[n0 : n0 + BN]))\n    store(c[m0 : m0 + BM, n0 : n0 + BN], acc * s)\n"),
		 "sm_90a", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		lowered l;
		lower(&l, cases[i].text, cases[i].arch, cases[i].define);
		if (l.rc)
			printf("  %s: %s\n", cases[i].what, l.d.n ? l.d.v[0].msg : "?");
		T_EQ_INT(l.rc, 0);
		T_OK(!wgmma(&l));
		T_OK(!strstr(cuda(&l), "wgmma"));
		T_CONTAINS(cuda(&l), "kb_mma_warp<");
		T_OK(l.out.nkernels && l.out.kernels[0].threads != 384);
		T_OK(!strstr(cuda(&l), "CUtensorMap"));
		T_OK(l.out.kernels[0].spec == NULL);
		T_OK(!l.out.kernels[0].persistent && !strstr(cuda(&l), "kb_pid_"));
		lowered_free(&l);
	}
}

/* A `//! ref kernel` beside the dot runs with its launch: the reference,
 * written first here and without a dot, takes threads() + 128 with its
 * extra warpgroup returning at once; the dot keeps wgmma and its epilogue
 * (a [BN] bias row, tanh, the cast to bf16) the mma layout's, the bias read
 * where it is used.  One with a block reduction keeps its threads() (the
 * spec's check of the reference's launch then says so); one of other
 * threads() too. */
static void test_tile_wgmma__ref_kernel(void)
{
#define REF(THREADS, BODY)                                                                \
	"kernel ref(a: bf16[M, K], b: bf16[K, N], bias: f32[N], c: bf16[M, N])\n"         \
	"        grid(cdiv(M, 256) * cdiv(N, 128)) threads(" THREADS ") {\n"              \
	BODY                                                                              \
	"}\n"
	static const char plain[] = REF("256", "    i = pid(0)\n"
		"    store(c[i, 0 : 128], f32(load(a[i, 0 : 128])) + load(bias[0 : 128]))\n")
		MATMUL("256", "", "    bb = load(bias[n0 : n0 + BN])\n"
		"    u = acc + bb\n"
		"    store(c[m0 : m0 + BM, n0 : n0 + BN], 0.5 * u * (1.0 + tanh(0.79788456 * (u + 0.044715 * u * u * u))))\n");
	static const char reduce[] = REF("256", "    i = pid(0)\n"
		"    store(c[i, 0 : 128], load(bias[0 : 128]) * sum(load(bias[0 : 256])))\n")
		MATMUL("256", "", "    store(c[m0 : m0 + BM, n0 : n0 + BN], acc)\n");
	static const char other[] = REF("128", "    i = pid(0)\n"
		"    store(c[i, 0 : 128], load(bias[0 : 128]))\n")
		MATMUL("256", "", "    store(c[m0 : m0 + BM, n0 : n0 + BN], acc)\n");
	lowered l;
	lower(&l, plain, "sm_90a", NULL);
	T_EQ_INT(l.rc, 0);
	T_OK(wgmma(&l));
	T_EQ_INT(l.out.nkernels, 2);
	T_EQ_INT(l.out.kernels[0].threads, 384);
	T_EQ_INT(l.out.kernels[1].threads, 384);
	/* the file's order: the reference first, its launch widened */
	const char *r = strstr(cuda(&l), "__launch_bounds__(384)\nref(");
	const char *mm = strstr(cuda(&l), "__launch_bounds__(384, 1)\nmm(");
	T_OK(r && mm && r < mm);
	T_CONTAINS(cuda(&l), "\tif (threadIdx.x >= 256) /* launched as the wgmma kernel beside it: threads() + 128 */\n\t\treturn;\n");
	/* ... and loops over its own grid(), as the persistent dot kernel's blocks do */
	T_OK(l.out.kernels[0].persistent && l.out.kernels[1].persistent);
	T_EQ_STR(l.out.kernels[0].grid[0], "min(sm_count, (cdiv(M, 256) * cdiv(N, 128)))");
	T_CONTAINS(cuda(&l), "\t\treturn;\n#line 1 \"t.tile\"\n\tfor (int kb_pid_ = (int)blockIdx.x; kb_pid_ < "
		   "((((M) + (256) - 1) / (256)) * (((N) + (128) - 1) / (128))); kb_pid_ += (int)gridDim.x) {");
	T_CONTAINS(cuda(&l), "int i = kb_pid_;");
	/* the tensormaps are the dot kernel's alone: the reference takes its own parameters */
	T_CONTAINS(cuda(&l), "ref(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b, "
		   "const float *__restrict__ bias, __nv_bfloat16 *__restrict__ c, int M, int K, int N)\n{");
	T_OK(l.out.kernels[0].spec == NULL && l.out.kernels[1].spec != NULL);
	/* the epilogue on the wgmma result: the bias at its columns, read where used */
	T_CONTAINS(cuda(&l), "kb_wg_consume<256, 128, 4, 2, false>(acc, ");
	T_CONTAINS(cuda(&l), "} _t1;\n");
	T_CONTAINS(cuda(&l), "\t\treturn ok_ && c_ < lim_ ? p_[c_] : other_;\n");
	T_CONTAINS(cuda(&l), "u[i_] = (acc[i_] + _t1[(i_) / 4 % 16 * 2 + (i_) % 2]);");
	T_CONTAINS(cuda(&l), "tanhf(");
	T_CONTAINS(cuda(&l), "__floats2bfloat162_rn(v_[0], v_[1])");
	lowered_free(&l);
	/* sm_90: mma.sync, each kernel its own threads() */
	lower(&l, plain, "sm_90", NULL);
	T_EQ_INT(l.rc, 0);
	T_OK(!wgmma(&l));
	T_EQ_INT(l.out.kernels[0].threads, 256);
	T_EQ_INT(l.out.kernels[1].threads, 256);
	T_OK(!strstr(cuda(&l), "launched as the wgmma kernel"));
	T_OK(!l.out.kernels[0].persistent && !l.out.kernels[1].persistent && !strstr(cuda(&l), "kb_pid_"));
	lowered_free(&l);
	static const char *const keep[] = {reduce, other};
	for (int i = 0; i < 2; i++) {
		lower(&l, keep[i], "sm_90a", NULL);
		T_EQ_INT(l.rc, 0);
		T_OK(wgmma(&l));
		T_EQ_INT(l.out.kernels[1].threads, 384);
		T_EQ_INT(l.out.kernels[0].threads, i ? 128 : 256);
		T_OK(!strstr(cuda(&l), "launched as the wgmma kernel"));
		lowered_free(&l);
	}
#undef REF
}

int main(void)
{
	T_RUN(test_tile_wgmma__matmul);
	T_RUN(test_tile_wgmma__tma_store);
	T_RUN(test_tile_wgmma__pingpong);
	T_RUN(test_tile_wgmma__no_tma);
	T_RUN(test_tile_wgmma__one_consumer);
	T_RUN(test_tile_wgmma__fallbacks);
	T_RUN(test_tile_wgmma__ref_kernel);
	return t_report();
}
