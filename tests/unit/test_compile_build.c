/* test_compile_build.c - the compile pipeline with the real NVRTC and
 * nvJitLink: cubins, lowered names, resources, occupancy, diagnostics at the
 * user's lines, the compile cache (a hit never calls NVRTC), and the user's
 * compiler options (their effect, the key, the compilers' complaints placed
 * at the option's word). */
#include "../../src/compile/compile_int.h"
#include "../../src/spec/spec_int.h"
#include "t.h"

#include <stdlib.h>
#include <unistd.h>

static char cache_dir[] = "/tmp/kbench-build-test-XXXXXX";

typedef struct {
	kb_source src;
	kb_spec spec;
	kb_kernels ks;
	kb_build b;
	kb_diags d;
	int rc;
} fixture;

static int compile_opts(fixture *f, const char *path, const char *text, kb_src_kind kind,
			const kb_build_opts *o)
{
	memset(f, 0, sizeof *f);
	kb_compile_source_init(&f->src, path, text, kind);
	kb_compile_spec_parse(&f->src, &f->spec, &f->d);
	kb_err err = {0};
	if (kind == KB_SRC_CUDA)
		kb_compile_discover_cuda(&f->src, &f->ks, &err);
	else
		kb_compile_discover_ptx(&f->src, &f->ks, &f->d, &err);
	f->rc = kb_compile_build(&f->src, &f->spec, &f->ks, o, &f->b, &err);
	if (f->rc < 0 && f->rc != KB_ECOMPILE)
		printf("  build error: %s\n", err.msg);
	return f->rc;
}

static int compile_text(fixture *f, const char *path, const char *text, kb_src_kind kind,
			const char *arch, char **defines, int ndefines)
{
	kb_build_opts o = {.arch = (char *)arch, .defines = defines, .ndefines = ndefines};
	return compile_opts(f, path, text, kind, &o);
}

/* text compiled for sm_90 with --option words (n of them). */
static int compile_cli(fixture *f, const char *path, const char *text, kb_src_kind kind,
		       const char **options, int n)
{
	kb_build_opts o = {.arch = "sm_90", .options = options, .noptions = n};
	return compile_opts(f, path, text, kind, &o);
}

static char *render(const kb_diags *d)
{
	kb_buf b = KB_BUF_INIT;
	kb_diag_render(d, &b, false);
	return kb_buf_detach(&b);
}

static int compile_file(fixture *f, const char *path, const char *arch)
{
	kb_buf text = KB_BUF_INIT;
	kb_file_read(path, &text, NULL);
	int rc = compile_text(f, path, text.s ? text.s : "",
			      !strcmp(kb_extension(path), "ptx") ? KB_SRC_PTX : KB_SRC_CUDA, arch,
			      NULL, 0);
	kb_buf_free(&text);
	return rc;
}

static void fixture_free(fixture *f)
{
	kb_compile_build_free(&f->b);
	kb_compile_kernels_free(&f->ks);
	kb_compile_spec_free(&f->spec);
	kb_compile_source_free(&f->src);
	kb_diags_free(&f->d);
}

static const kb_build_kernel *find_kernel(const kb_build *b, const char *name)
{
	for (int i = 0; i < b->nkernels; i++)
		if (!strcmp(b->kernels[i].name, name))
			return &b->kernels[i];
	return NULL;
}

static void test_compile_build__softmax(void)
{
	fixture f;
	T_EQ_INT(compile_file(&f, "kernels/softmax.cu", "sm_90"), 0);
	T_OK(f.b.ok);
	T_OK(f.b.cubin_len > 1000);
	T_CONTAINS(f.b.ptx, ".entry _Z12softmax_rowsPKfPfii");
	T_EQ_INT(kb_compile_cubin_arch(f.b.cubin, f.b.cubin_len), 90);
	const kb_build_kernel *k = find_kernel(&f.b, "softmax_rows");
	T_OK(k != NULL);
	if (k) {
		T_EQ_STR(k->lowered, "_Z12softmax_rowsPKfPfii");
		T_OK(k->res.regs > 8 && k->res.regs < 64);
		T_EQ_INT(k->res.smem_static, 128); /* float scratch[32] */
		T_EQ_INT(k->res.spill_stores, 0);
		T_OK(k->has_occupancy);
		T_EQ_INT(k->occ.block_threads, 256);
		T_OK(k->occ.blocks_per_sm >= 1 && k->occ.occupancy > 0);
	}
	const kb_build_kernel *naive = find_kernel(&f.b, "softmax_naive");
	T_OK(naive && !naive->has_occupancy); /* the launch line belongs to softmax_rows */
	T_OK(f.b.ms_nvrtc > 0);
	fixture_free(&f);
}

static void test_compile_build__cache_hit_skips_nvrtc(void)
{
	fixture f, g;
	compile_file(&f, "kernels/vector_add.cu", "sm_89");
	int calls = kb_compile_nvrtc_invocations();
	T_EQ_INT(compile_file(&g, "kernels/vector_add.cu", "sm_89"), 0);
	T_OK(g.b.cache_hit);
	T_EQ_INT(kb_compile_nvrtc_invocations(), calls);
	T_EQ_INT(g.b.cubin_len, f.b.cubin_len);
	T_OK(!memcmp(g.b.cubin, f.b.cubin, f.b.cubin_len));
	T_EQ_STR(g.b.key, f.b.key);
	T_EQ_INT(g.b.kernels[0].res.regs, f.b.kernels[0].res.regs);
	fixture_free(&g);
	/* Another arch is another key. */
	T_EQ_INT(compile_file(&g, "kernels/vector_add.cu", "sm_90"), 0);
	T_OK(!g.b.cache_hit);
	T_OK(strcmp(g.b.key, f.b.key) != 0);
	fixture_free(&g);
	fixture_free(&f);
}

/* The file `name` of key's cache entry (a new string). */
static char *entry_file(const char *key, const char *name)
{
	return kb_xasprintf("%s/kbench/compile/%.2s/%s/%s", cache_dir, key, key + 2, name);
}

/* A damaged entry (a truncated cubin, a changed byte) is no hit: compiled
 * again, to the same bytes, and replaced; an entry written before the sums
 * is a plain miss; damaged SASS is disassembled again. */
static void test_compile_build__damaged_cache_recompiled(void)
{
	fixture f, g;
	T_EQ_INT(compile_file(&f, "kernels/vector_add.cu", "sm_86"), 0);
	char *cubin = entry_file(f.b.key, "out.cubin"), *ok = entry_file(f.b.key, "ok");
	T_EQ_INT(truncate(cubin, 100), 0);
	int calls = kb_compile_nvrtc_invocations();
	T_EQ_INT(compile_file(&g, "kernels/vector_add.cu", "sm_86"), 0);
	T_OK(!g.b.cache_hit && g.b.cache_damaged);
	T_EQ_INT(kb_compile_nvrtc_invocations(), calls + 1);
	T_OK(g.b.cubin_len == f.b.cubin_len && !memcmp(g.b.cubin, f.b.cubin, f.b.cubin_len));
	fixture_free(&g);
	T_EQ_INT(compile_file(&g, "kernels/vector_add.cu", "sm_86"), 0);
	T_OK(g.b.cache_hit && !g.b.cache_damaged); /* replaced whole */
	fixture_free(&g);
	T_EQ_INT(kb_file_write(ok, "", 0, NULL), 0); /* as kbench wrote it before the sums */
	T_EQ_INT(compile_file(&g, "kernels/vector_add.cu", "sm_86"), 0);
	T_OK(!g.b.cache_hit && !g.b.cache_damaged);
	fixture_free(&g);
	kb_compile__cache_store_sass(f.b.key, "nvdisasm", "SASS text\n");
	kb_compile__out out = {0};
	T_EQ_INT(kb_compile__cache_load_sass(f.b.key, &out), 0);
	T_EQ_STR(out.sass_text, "SASS text\n");
	kb_compile__out_free(&out);
	char *sass = entry_file(f.b.key, "sass.txt");
	T_EQ_INT(kb_file_write(sass, "SASS texT\n", 10, NULL), 0);
	T_EQ_INT(kb_compile__cache_load_sass(f.b.key, &out), KB_ENOTFOUND);
	kb_compile__out_free(&out);
	free(sass); free(ok); free(cubin);
	fixture_free(&f);
}

static void test_compile_build__defines_change_key(void)
{
	const char *text = "#ifndef V\n#define V 1\n#endif\n"
			   "extern \"C\" __global__ void k(int *y) { y[threadIdx.x] = V; }\n";
	char *d1[] = {"V=2"}, *d2[] = {"V=3"};
	fixture a, b;
	compile_text(&a, "k.cu", text, KB_SRC_CUDA, "sm_90", d1, 1);
	compile_text(&b, "k.cu", text, KB_SRC_CUDA, "sm_90", d2, 1);
	T_OK(a.b.ok && b.b.ok);
	T_OK(strcmp(a.b.key, b.b.key) != 0);
	T_OK(!b.b.cache_hit);
	T_OK(strstr(a.b.ptx, "2;") != NULL);
	fixture_free(&a);
	fixture_free(&b);
}

static void test_compile_build__local_header_in_key(void)
{
	char dir[] = "/tmp/kbench-inc-XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	char *hdr = kb_xasprintf("%s/val.cuh", dir), *cu = kb_xasprintf("%s/k.cu", dir);
	const char *text = "#include \"val.cuh\"\n"
			   "extern \"C\" __global__ void k(int *y) { y[threadIdx.x] = VAL; }\n";
	kb_file_write(hdr, "#define VAL 11\n", 15, NULL);
	fixture a, b;
	compile_text(&a, cu, text, KB_SRC_CUDA, "sm_90", NULL, 0);
	kb_file_write(hdr, "#define VAL 12\n", 15, NULL);
	compile_text(&b, cu, text, KB_SRC_CUDA, "sm_90", NULL, 0);
	T_OK(a.b.ok && b.b.ok);
	T_OK(!b.b.cache_hit); /* the header changed, so the variant did */
	T_OK(strstr(b.b.ptx, "12;") != NULL);
	fixture_free(&a);
	fixture_free(&b);
	char *rm = kb_xasprintf("rm -rf %s", dir);
	T_EQ_INT(system(rm), 0);
	free(rm); free(hdr); free(cu);
}

static void test_compile_build__syntax_error_at_user_line(void)
{
	fixture f;
	T_EQ_INT(compile_file(&f, "tests/fixtures/kernels/syntax_error.cu", "sm_90"), KB_ECOMPILE);
	T_OK(!f.b.ok);
	T_EQ_INT(kb_diag_count(&f.b.diags, KB_DIAG_ERROR), 1);
	if (f.b.diags.n) {
		T_EQ_STR(f.b.diags.v[0].file, "tests/fixtures/kernels/syntax_error.cu");
		T_EQ_INT(f.b.diags.v[0].line, 13);
		T_EQ_INT(f.b.diags.v[0].col, 1);
		T_CONTAINS(f.b.diags.v[0].msg, "expected a \";\"");
	}
	fixture_free(&f);
}

static void test_compile_build__nvrtc_columns(void)
{
	fixture f;
	const char *text = "__global__ void k(float *y)\n{\n\ty[0] = undefined_thing;\n}\n";
	T_EQ_INT(compile_text(&f, "col.cu", text, KB_SRC_CUDA, "sm_90", NULL, 0), KB_ECOMPILE);
	T_OK(f.b.diags.n >= 1);
	if (f.b.diags.n) {
		T_EQ_INT(f.b.diags.v[0].line, 3);
		T_EQ_INT(f.b.diags.v[0].col, 9); /* the tab counts as one column */
		T_CONTAINS(f.b.diags.v[0].msg, "undefined_thing");
	}
	fixture_free(&f);
}

static void test_compile_build__ptx(void)
{
	fixture f;
	T_EQ_INT(compile_file(&f, "kernels/saxpy.ptx", "sm_90"), 0);
	T_OK(f.b.ok && f.b.cubin_len > 0);
	T_OK(f.b.ms_nvjitlink > 0 && f.b.ms_nvrtc == 0);
	T_CONTAINS(f.b.compiler, "nvjitlink");
	const kb_build_kernel *k = find_kernel(&f.b, "saxpy");
	T_OK(k && k->res.regs > 0 && k->has_occupancy);
	fixture_free(&f);
}

static void test_compile_build__ptx_error_line(void)
{
	fixture f;
	T_EQ_INT(compile_file(&f, "tests/fixtures/kernels/bad.ptx", "sm_90"), KB_ECOMPILE);
	T_OK(f.b.diags.n >= 1);
	if (f.b.diags.n) {
		T_EQ_INT(f.b.diags.v[0].line, 12);
		T_EQ_STR(f.b.diags.v[0].file, "tests/fixtures/kernels/bad.ptx");
		T_CONTAINS(f.b.diags.v[0].src_line, "frobnicate");
	}
	fixture_free(&f);
}

/* ptxas rejects an inline asm statement of a .cu file (an eviction hint
 * sm_90 takes only on wider loads): its error is placed at the statement,
 * once though the loop around it is unrolled, without ptxas's "fatal:
 * aborted" line. */
static void test_compile_build__ptxas_error_in_cuda(void)
{
	static const char text[] =
		"__device__ uint4 ld(const uint4 *p)\n"
		"{\n"
		"\tuint4 v;\n"
		"\tasm(\"ld.global.L2::evict_first.v4.u32 {%0, %1, %2, %3}, [%4];\"\n"
		"\t    : \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"l\"(p));\n"
		"\treturn v;\n"
		"}\n"
		"extern \"C\" __global__ void k(const uint4 *p, uint4 *o)\n"
		"{\n"
		"#pragma unroll\n"
		"\tfor (int i = 0; i < 4; i++)\n"
		"\t\to[i] = ld(p + i);\n"
		"}\n";
	fixture f;
	T_EQ_INT(compile_cli(&f, "hint.cu", text, KB_SRC_CUDA, NULL, 0), KB_ECOMPILE);
	T_EQ_INT(kb_diag_count(&f.b.diags, KB_DIAG_ERROR), 1);
	const kb_diag *g = f.b.diags.n ? &f.b.diags.v[0] : NULL;
	T_OK(g && (g->line == 4 || g->line == 5));
	T_CONTAINS(g ? g->msg : NULL, "ptxas: Instruction 'ld' requires");
	T_CONTAINS(g ? g->src_line : NULL, "=r");
	fixture_free(&f);
}

static void test_compile_build__template_name_expression(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_file_read("tests/fixtures/cubin/vec4.cu", &text, NULL);
	kb_buf_cat(&text, "\n//! kernel copy_vec4<float, 256>\n");
	fixture f;
	T_EQ_INT(compile_text(&f, "vec4.cu", text.s, KB_SRC_CUDA, "sm_90", NULL, 0) == KB_ECOMPILE, 0);
	const kb_build_kernel *k = find_kernel(&f.b, "copy_vec4");
	T_OK(k != NULL);
	if (k)
		T_EQ_STR(k->lowered, "_Z9copy_vec4IfLi256EEvPK6float4PS0_i");
	kb_buf_free(&text);
	fixture_free(&f);
}

/* ===== compiler options ===== */

static const char fast_text[] =
	"extern \"C\" __global__ void k(const float *x, float *y)\n"
	"{\n"
	"\ty[threadIdx.x] = expf(x[threadIdx.x]) / x[threadIdx.x + 1];\n"
	"}\n";

/* -use_fast_math changes the code (approximate, flush-to-zero division),
 * and two compiles that differ only in it never share a cache entry. */
static void test_compile_build__option_fast_math(void)
{
	const char *fast[] = {"-use_fast_math"};
	fixture a, b, a2, b2;
	T_EQ_INT(compile_cli(&a, "fast.cu", fast_text, KB_SRC_CUDA, NULL, 0), 0);
	T_EQ_INT(compile_cli(&b, "fast.cu", fast_text, KB_SRC_CUDA, fast, 1), 0);
	T_OK(!a.b.cache_hit && !b.b.cache_hit);
	T_OK(strcmp(a.b.key, b.b.key) != 0);
	T_CONTAINS(a.b.ptx, "div.rn.f32");
	T_CONTAINS(b.b.ptx, "div.approx.ftz.f32");
	T_OK(!strstr(b.b.ptx, "div.rn.f32"));
	T_EQ_INT(a.b.noptions, 0);
	T_EQ_INT(b.b.noptions, 1);
	if (b.b.noptions == 1)
		T_EQ_STR(b.b.options[0], "-use_fast_math");
	/* Each is its own entry: hits give back each one's own code. */
	T_EQ_INT(compile_cli(&a2, "fast.cu", fast_text, KB_SRC_CUDA, NULL, 0), 0);
	T_EQ_INT(compile_cli(&b2, "fast.cu", fast_text, KB_SRC_CUDA, fast, 1), 0);
	T_OK(a2.b.cache_hit && b2.b.cache_hit);
	T_EQ_STR(a2.b.key, a.b.key);
	T_EQ_STR(b2.b.key, b.b.key);
	T_CONTAINS(a2.b.ptx, "div.rn.f32");
	T_CONTAINS(b2.b.ptx, "div.approx.ftz.f32");
	json_t *j = kb_compile_build_json(&b2.b, false, false);
	char *text = json_dumps(json_object_get(j, "options"), 0);
	T_EQ_STR(text, "[\"-use_fast_math\"]");
	free(text);
	json_decref(j);
	fixture_free(&a);
	fixture_free(&b);
	fixture_free(&a2);
	fixture_free(&b2);
}

/* `//! options` words come first, --option after them, in the order given. */
static void test_compile_build__option_spec_then_cli(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_buf_catf(&text, "//! options -use_fast_math -ftz=true\n%s", fast_text);
	const char *cli[] = {"-maxrregcount=40"};
	fixture f;
	T_EQ_INT(compile_cli(&f, "fast.cu", text.s, KB_SRC_CUDA, cli, 1), 0);
	T_EQ_INT(f.b.noptions, 3);
	if (f.b.noptions == 3) {
		T_EQ_STR(f.b.options[0], "-use_fast_math");
		T_EQ_STR(f.b.options[1], "-ftz=true");
		T_EQ_STR(f.b.options[2], "-maxrregcount=40");
	}
	T_CONTAINS(f.b.ptx, "div.approx.ftz.f32");
	fixture_free(&f);
	kb_buf_free(&text);
}

static const char heavy_text[] =
	"// 64 values live at once: many registers unless capped.\n"
	"extern \"C\" __global__ void heavy(const float *x, float *y, int n)\n"
	"{\n"
	"\tfloat a[64];\n"
	"#pragma unroll\n"
	"\tfor (int i = 0; i < 64; i++)\n"
	"\t\ta[i] = x[threadIdx.x + i * n];\n"
	"\tfloat s = 0.0f;\n"
	"#pragma unroll\n"
	"\tfor (int k = 1; k < 8; k++)\n"
	"#pragma unroll\n"
	"\t\tfor (int i = 0; i < 64; i++)\n"
	"\t\t\ta[i] = fmaf(a[i], a[(i + k) & 63], s);\n"
	"#pragma unroll\n"
	"\tfor (int i = 0; i < 64; i++)\n"
	"\t\ts += a[i];\n"
	"\ty[threadIdx.x] = s;\n"
	"}\n";

/* -maxrregcount=32 caps a register-heavy kernel, which then spills. */
static void test_compile_build__option_maxrregcount(void)
{
	const char *cap[] = {"-maxrregcount=32"};
	fixture a, b;
	T_EQ_INT(compile_cli(&a, "heavy.cu", heavy_text, KB_SRC_CUDA, NULL, 0), 0);
	T_EQ_INT(compile_cli(&b, "heavy.cu", heavy_text, KB_SRC_CUDA, cap, 1), 0);
	const kb_build_kernel *ka = find_kernel(&a.b, "heavy"), *kb = find_kernel(&b.b, "heavy");
	T_OK(ka && kb);
	if (ka && kb) {
		T_OK(ka->res.regs > 48);
		T_OK(kb->res.regs <= 32);
		T_OK(kb->res.spill_stores > 0);
		T_EQ_INT(ka->res.spill_stores, 0);
	}
	fixture_free(&a);
	fixture_free(&b);
}

/* A word NVRTC does not recognise: the error at the word, with a caret and
 * the closest spelling; never the raw log without a place. */
static void test_compile_build__option_misspelt_in_spec(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_buf_catf(&text, "//! options -ftz=true  -use_fast_mth\n%s", fast_text);
	fixture f;
	T_EQ_INT(compile_cli(&f, "typo.cu", text.s, KB_SRC_CUDA, NULL, 0), KB_ECOMPILE);
	T_EQ_INT(kb_diag_count(&f.b.diags, KB_DIAG_ERROR), 1);
	char *r = render(&f.b.diags);
	T_CONTAINS(r, "typo.cu:1:24: error: NVRTC: unrecognized option -use_fast_mth found; "
		   "did you mean '-use_fast_math'?\n"
		   " 1 | //! options -ftz=true  -use_fast_mth\n"
		   "   |                        ^~~~~~~~~~~~~\n");
	T_OK(!f.b.ok && !f.b.cubin);
	free(r);
	fixture_free(&f);
	kb_buf_free(&text);
	/* The same word from the command line: named, since it has no place. */
	const char *cli[] = {"--use_fast_mth"};
	T_EQ_INT(compile_cli(&f, "typo.cu", fast_text, KB_SRC_CUDA, cli, 1), KB_ECOMPILE);
	r = render(&f.b.diags);
	T_CONTAINS(r, "typo.cu: error: --option --use_fast_mth (command line): NVRTC: "
		   "unrecognized option --use_fast_mth found; did you mean '--use_fast_math'?\n");
	free(r);
	fixture_free(&f);
}

/* NVRTC hands -Xptxas values to ptxas, whose complaint is placed too. */
static void test_compile_build__option_ptxas_complaint(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_buf_catf(&text, "//! options -Xptxas=-O1 -Xptxas=-v,-O2\n%s", fast_text);
	fixture f;
	T_EQ_INT(compile_cli(&f, "px.cu", text.s, KB_SRC_CUDA, NULL, 0), KB_ECOMPILE);
	T_EQ_INT(f.b.diags.n, 1);
	if (f.b.diags.n == 1) {
		T_EQ_INT(f.b.diags.v[0].line, 1);
		T_EQ_INT(f.b.diags.v[0].col, 25);
		T_EQ_STR(f.b.diags.v[0].msg, "ptxas: Unknown option 'v,-O2'");
	}
	fixture_free(&f);
	kb_buf_free(&text);
}

/* Two values of one option: NVRTC's warning lands on the first. */
static void test_compile_build__option_warning_placed(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_buf_catf(&text, "//! options -maxrregcount=64\n%s", fast_text);
	const char *cli[] = {"-maxrregcount=48"};
	fixture f;
	T_EQ_INT(compile_cli(&f, "warn.cu", text.s, KB_SRC_CUDA, cli, 1), 0);
	T_EQ_INT(f.b.diags.n, 1);
	if (f.b.diags.n == 1) {
		T_EQ_INT(f.b.diags.v[0].level, KB_DIAG_WARNING);
		T_EQ_INT(f.b.diags.v[0].line, 1);
		T_EQ_INT(f.b.diags.v[0].col, 13);
		T_CONTAINS(f.b.diags.v[0].msg, "incompatible redefinition for option '--maxrregcount'");
	}
	fixture_free(&f);
	kb_buf_free(&text);
}

/* -std replaces kbench's --std=c++17 instead of following it. */
static void test_compile_build__option_std_replaces_default(void)
{
	static const char cxx20[] =
		"template <typename T> requires (sizeof(T) == 4)\n"
		"__device__ T twice(T v) { return v + v; }\n"
		"extern \"C\" __global__ void k(float *y) { y[threadIdx.x] = twice(y[0]); }\n";
	fixture f;
	T_EQ_INT(compile_cli(&f, "c20.cu", cxx20, KB_SRC_CUDA, NULL, 0), KB_ECOMPILE);
	fixture_free(&f);
	const char *std[] = {"-std=c++20"};
	T_EQ_INT(compile_cli(&f, "c20.cu", cxx20, KB_SRC_CUDA, std, 1), 0);
	T_EQ_INT(f.b.diags.n, 0);
	T_OK(f.b.log && !strstr(f.b.log, "followed by"));
	fixture_free(&f);
}

/* A .ptx file's options are nvJitLink's: its complaints, placed, with what
 * it takes instead. */
static void test_compile_build__option_ptx(void)
{
	kb_buf ptx = KB_BUF_INIT;
	kb_file_read("kernels/saxpy.ptx", &ptx, NULL);
	static const struct { const char *line, *want; int col; } cases[] = {
		{"//! options -use_fast_math\n", "nvJitLink: unrecognized option: -use_fast_math; "
		 "it is NVRTC's (for .cu files): for PTX, -ftz=true -prec-div=false", 13},
		{"//! options -ftz=true --maxrregcount=32\n", "nvJitLink: unrecognized option: "
		 "--maxrregcount=32; did you mean '-maxrregcount=32'?", 23},
		{"//! options -Xptxas=-bogus\n", "ptxas: Unknown option 'bogus'", 13},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(cases); i++) {
		kb_buf text = KB_BUF_INIT;
		kb_buf_catf(&text, "%s%s", cases[i].line, ptx.s);
		fixture f;
		T_EQ_INT(compile_cli(&f, "k.ptx", text.s, KB_SRC_PTX, NULL, 0), KB_ECOMPILE);
		T_EQ_INT(kb_diag_count(&f.b.diags, KB_DIAG_ERROR), 1);
		const kb_diag *g = f.b.diags.n ? &f.b.diags.v[0] : NULL;
		T_OK(g && g->line == 1 && g->col == cases[i].col);
		T_CONTAINS(g ? g->msg : NULL, cases[i].want);
		fixture_free(&f);
		kb_buf_free(&text);
	}
	const char *cap[] = {"-maxrregcount=32", "-ftz=true"};
	fixture f;
	T_EQ_INT(compile_cli(&f, "k.ptx", ptx.s, KB_SRC_PTX, cap, 2), 0);
	T_EQ_INT(f.b.noptions, 2);
	fixture_free(&f);
	kb_buf_free(&ptx);
}

/* Every option the tables allow is one the real compiler takes, spelt as
 * the table spells it. */
static void test_compile_build__option_table_accepted(void)
{
	kb_buf ptx = KB_BUF_INIT;
	kb_file_read("kernels/saxpy.ptx", &ptx, NULL);
	static const kb_src_kind kinds[] = {KB_SRC_CUDA, KB_SRC_PTX};
	int n = 0;
	for (int k = 0; k < 2; k++) {
		const char *ex;
		for (int i = 0; (ex = kb_spec__option_example(kinds[k], i)); i++, n++) {
			char *why = NULL;
			T_EQ_INT(kb_compile_option_check(kinds[k], ex, &why), 0);
			free(why);
			fixture f;
			kb_build_opts o = {.arch = "sm_90", .options = &ex, .noptions = 1,
					   .no_cache = true};
			int rc = compile_opts(&f, kinds[k] ? "k.ptx" : "k.cu",
					      kinds[k] ? ptx.s : fast_text, kinds[k], &o);
			if (rc != 0 || kb_diag_count(&f.b.diags, KB_DIAG_ERROR)) {
				char *r = render(&f.b.diags);
				T_FAIL_AT("%s: rc %d\n%s", ex, rc, r);
				free(r);
			}
			fixture_free(&f);
		}
	}
	T_OK(n > 30);
	kb_buf_free(&ptx);
}

/* --option words go through the table in the unit, like spec words. */
static void test_compile_build__option_unit_cli(void)
{
	const char *opts[] = {"-use_fast_math", "-G"};
	kb_compile_unit_opts uo = {.arch = "sm_90", .options = opts, .noptions = 2};
	kb_compile_unit u;
	kb_err err = {0};
	T_EQ_INT(kb_compile_unit_run("kernels/vector_add.cu", NULL, &uo, &u, &err), KB_ESPEC);
	T_EQ_INT(kb_diag_count(&u.diags, KB_DIAG_ERROR), 1);
	if (u.diags.n > 0) {
		T_EQ_INT(u.diags.v[0].line, 0);
		T_CONTAINS(u.diags.v[0].msg, "--option -G (command line): kbench does not take -G");
	}
	/* refused before anything compiled (issue 25): no build, no result */
	T_OK(!u.build.ok && !u.build.compiler && u.build.nkernels == 0);
	kb_compile_unit_free(&u);
	/* What a variant's note and a run's Result carry. */
	uo.noptions = 1;
	T_EQ_INT(kb_compile_unit_run("kernels/vector_add.cu", NULL, &uo, &u, &err), 0);
	json_t *j = kb_compile_unit_summary_json(&u);
	char *text = json_dumps(json_object_get(j, "options"), 0);
	T_EQ_STR(text, "[\"-use_fast_math\"]");
	free(text);
	json_decref(j);
	kb_compile_unit_free(&u);
}

static void test_compile_build__bad_arch(void)
{
	fixture f;
	T_EQ_INT(compile_file(&f, "kernels/vector_add.cu", "sm_9x"), KB_EINVAL);
	fixture_free(&f);
}

int main(void)
{
	T_OK(mkdtemp(cache_dir) != NULL);
	setenv("XDG_CACHE_HOME", cache_dir, 1);
	setenv("PATH", "/usr/bin:/bin", 1); /* SASS is tested in test_compile_sass */
	T_RUN(test_compile_build__softmax);
	T_RUN(test_compile_build__cache_hit_skips_nvrtc);
	T_RUN(test_compile_build__damaged_cache_recompiled);
	T_RUN(test_compile_build__defines_change_key);
	T_RUN(test_compile_build__local_header_in_key);
	T_RUN(test_compile_build__syntax_error_at_user_line);
	T_RUN(test_compile_build__nvrtc_columns);
	T_RUN(test_compile_build__ptx);
	T_RUN(test_compile_build__ptx_error_line);
	T_RUN(test_compile_build__ptxas_error_in_cuda);
	T_RUN(test_compile_build__template_name_expression);
	T_RUN(test_compile_build__bad_arch);
	T_RUN(test_compile_build__option_fast_math);
	T_RUN(test_compile_build__option_spec_then_cli);
	T_RUN(test_compile_build__option_maxrregcount);
	T_RUN(test_compile_build__option_misspelt_in_spec);
	T_RUN(test_compile_build__option_ptxas_complaint);
	T_RUN(test_compile_build__option_warning_placed);
	T_RUN(test_compile_build__option_std_replaces_default);
	T_RUN(test_compile_build__option_ptx);
	T_RUN(test_compile_build__option_table_accepted);
	T_RUN(test_compile_build__option_unit_cli);
	char *rm = kb_xasprintf("rm -rf %s", cache_dir);
	if (system(rm) != 0)
		printf("  (could not remove %s)\n", cache_dir);
	free(rm);
	return t_report();
}
