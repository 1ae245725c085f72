/* test_compile_discover.c - kernel discovery: CUDA through tree-sitter
 * (discover.c) and PTX through the hand parser (ptx.c), on the example
 * kernels and on inline sources with the awkward cases. */
#include "../../src/compile/compile.h"
#include "t.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A source over text we own or borrow (filled by hand: no source.c needed). */
static kb_source mem_src(const char *path, const char *text, kb_src_kind kind)
{
	kb_source s = {(char *)path, (char *)text, strlen(text), kind};
	return s;
}

static int cuda(const char *text, kb_kernels *ks)
{
	kb_source s = mem_src("inline.cu", text, KB_SRC_CUDA);
	kb_err err = {0};
	memset(ks, 0, sizeof *ks);
	int rc = kb_compile_discover_cuda(&s, ks, &err);
	if (rc)
		printf("  discover: %s\n", err.msg);
	return rc;
}

/* Reads path and discovers its kernels; buf keeps the text alive for locs. */
static int from_file(const char *path, kb_src_kind kind, kb_buf *buf, kb_kernels *ks,
		     kb_diags *d)
{
	kb_err err = {0};
	memset(ks, 0, sizeof *ks);
	if (kb_file_read(path, buf, &err) < 0) {
		printf("  read %s: %s\n", path, err.msg);
		return -1;
	}
	kb_source s = {(char *)path, buf->s, buf->len, kind};
	return kind == KB_SRC_PTX ? kb_compile_discover_ptx(&s, ks, d, &err)
				  : kb_compile_discover_cuda(&s, ks, &err);
}

static const kb_kernel *find(const kb_kernels *ks, const char *name)
{
	for (int i = 0; i < ks->n; i++)
		if (!strcmp(ks->v[i].name, name))
			return &ks->v[i];
	return NULL;
}

/* name, type, elem, pointer, const, restrict of one parameter. */
#define T_PARAM(p, nm, ty, el, ptr, cst, rst) do { \
	T_EQ_STR((p)->name, nm); T_EQ_STR((p)->type, ty); T_EQ_STR((p)->elem, el); \
	T_EQ_INT((p)->is_pointer, ptr); T_EQ_INT((p)->is_const, cst); \
	T_EQ_INT((p)->is_restrict, rst); } while (0)

/* ---- the example kernels ------------------------------------------------ */

static void test_compile_discover__softmax(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_kernels ks;
	T_EQ_INT(from_file("kernels/softmax.cu", KB_SRC_CUDA, &b, &ks, NULL), 0);
	T_EQ_INT(ks.n, 2); /* block_reduce_max/sum are __device__ */
	const kb_kernel *k = find(&ks, "softmax_rows");
	T_OK(k != NULL);
	if (k) {
		T_EQ_INT(k->nparams, 4);
		T_EQ_INT(k->line, 50);
		T_OK(!k->extern_c && !k->is_template && !k->template_params);
		T_EQ_INT(k->launch_bounds, 0);
		T_PARAM(&k->params[0], "x", "const float *__restrict__", "float", 1, 1, 1);
		T_PARAM(&k->params[1], "y", "float *__restrict__", "float", 1, 0, 1);
		T_PARAM(&k->params[2], "M", "int", "int", 0, 0, 0);
		T_PARAM(&k->params[3], "N", "int", "int", 0, 0, 0);
		T_EQ_STR(k->params[0].loc.file, "kernels/softmax.cu");
		T_EQ_INT(k->params[0].loc.line, 50);
		T_EQ_INT(k->params[0].loc.col, 56);
		T_EQ_INT(k->params[3].loc.col, 93);
	}
	k = find(&ks, "softmax_naive");
	T_OK(k != NULL);
	if (k) {
		T_EQ_INT(k->nparams, 4);
		T_EQ_INT(k->line, 71);
		T_PARAM(&k->params[0], "x", "const float *", "float", 1, 1, 0);
		T_PARAM(&k->params[1], "y", "float *", "float", 1, 0, 0);
	}
	T_OK(ks.n < 1 || !strcmp(ks.v[0].name, "softmax_rows")); /* file order */
	kb_compile_kernels_free(&ks);
	T_OK(ks.v == NULL && ks.n == 0 && ks.cap == 0);
	kb_buf_free(&b);
}

static void test_compile_discover__vector_add_extern_c(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_kernels ks;
	T_EQ_INT(from_file("kernels/vector_add.cu", KB_SRC_CUDA, &b, &ks, NULL), 0);
	T_EQ_INT(ks.n, 1);
	if (ks.n == 1) {
		const kb_kernel *k = &ks.v[0];
		T_EQ_STR(k->name, "vector_add");
		T_OK(k->extern_c);
		T_EQ_INT(k->line, 11);
		T_EQ_INT(k->nparams, 4);
		T_PARAM(&k->params[1], "b", "const float *__restrict__", "float", 1, 1, 1);
		T_PARAM(&k->params[2], "c", "float *__restrict__", "float", 1, 0, 1);
		T_EQ_INT(k->params[2].loc.line, 12); /* the declaration spans two lines */
		T_EQ_INT(k->params[2].loc.col, 31);
	}
	kb_compile_kernels_free(&ks);
	kb_buf_free(&b);
}

static void test_compile_discover__saxpy_ptx(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_kernels ks;
	kb_diags d = {0};
	T_EQ_INT(from_file("kernels/saxpy.ptx", KB_SRC_PTX, &b, &ks, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_INT(ks.n, 1);
	if (ks.n == 1) {
		const kb_kernel *k = &ks.v[0];
		T_EQ_STR(k->name, "saxpy");
		T_OK(k->extern_c && !k->is_template);
		T_EQ_INT(k->line, 20);
		T_EQ_INT(k->nparams, 5);
		T_PARAM(&k->params[0], "a", ".f32", "f32", 0, 0, 0);
		T_PARAM(&k->params[1], "x", ".u64", "u64", 1, 0, 0);
		T_PARAM(&k->params[2], "y", ".u64", "u64", 1, 0, 0);
		T_PARAM(&k->params[3], "out", ".u64", "u64", 1, 0, 0);
		T_PARAM(&k->params[4], "n", ".u32", "u32", 0, 0, 0);
		T_EQ_STR(k->params[0].loc.file, "kernels/saxpy.ptx");
		T_EQ_INT(k->params[0].loc.line, 21);
		T_EQ_INT(k->params[0].loc.col, 14);
	}
	kb_compile_kernels_free(&ks);
	kb_diags_free(&d);
	kb_buf_free(&b);
}

static void test_compile_discover__vec4_template(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_kernels ks;
	T_EQ_INT(from_file("tests/fixtures/cubin/vec4.cu", KB_SRC_CUDA, &b, &ks, NULL), 0);
	/* copy_scalar, copy_vec4, spill; the explicit instantiation is no kernel */
	T_EQ_INT(ks.n, 3);
	const kb_kernel *k = find(&ks, "copy_vec4");
	T_OK(k != NULL);
	if (k) {
		T_OK(k->is_template);
		T_EQ_STR(k->template_params, "typename T, int B");
		T_EQ_INT(k->line, 7);
		T_EQ_INT(k->nparams, 3);
		T_PARAM(&k->params[0], "x", "const float4 *__restrict__", "float4", 1, 1, 1);
		T_PARAM(&k->params[1], "y", "float4 *__restrict__", "float4", 1, 0, 1);
		T_PARAM(&k->params[2], "n", "int", "int", 0, 0, 0);
	}
	T_OK(find(&ks, "copy_scalar") && !find(&ks, "copy_scalar")->is_template);
	T_OK(find(&ks, "spill") != NULL);
	kb_compile_kernels_free(&ks);
	kb_buf_free(&b);
}

/* ---- inline CUDA ------------------------------------------------------- */

static void test_compile_discover__extern_c_block(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("extern \"C\" {\n"
		      "__global__ void a(int n) {}\n"
		      "// a comment between kernels\n"
		      "__global__ void b(float *x) {}\n"
		      "}\n"
		      "extern \"C\" __global__ void c(void) {}\n"
		      "extern \"C++\" { __global__ void d() {} }\n"
		      "__global__ void e() {}\n", &ks), 0);
	T_EQ_INT(ks.n, 5);
	if (ks.n == 5) {
		T_EQ_STR(ks.v[0].name, "a");
		T_OK(ks.v[0].extern_c && ks.v[1].extern_c && ks.v[2].extern_c);
		T_EQ_INT(ks.v[1].line, 4);
		T_EQ_INT(ks.v[2].nparams, 0); /* (void) */
		T_EQ_STR(ks.v[3].name, "d");
		T_OK(!ks.v[3].extern_c && !ks.v[4].extern_c);
		T_EQ_INT(ks.v[4].nparams, 0);
	}
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__templates_launch_bounds(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("#define THREADS 512 // per block\n"
		      "template <typename T, int BLOCK = 128>\n"
		      "__global__ void __launch_bounds__(BLOCK) t1(const T *__restrict x, T *y) {}\n"
		      "__global__ void __launch_bounds__(256, 2) lb2(int n) {}\n"
		      "__launch_bounds__(0x40) __global__ void lb3(int n) {}\n"
		      "__global__ __launch_bounds__(THREADS) void lb4(int n) {}\n"
		      "template <class Op>\n"
		      "extern \"C\" __global__ void weird(Op op) {}\n", &ks), 0);
	const kb_kernel *k = find(&ks, "t1");
	T_OK(k != NULL);
	if (k) {
		T_OK(k->is_template);
		T_EQ_STR(k->template_params, "typename T, int BLOCK = 128");
		T_EQ_INT(k->launch_bounds, 0); /* a template parameter: unknown */
		T_EQ_INT(k->line, 3);
		T_PARAM(&k->params[0], "x", "const T *__restrict", "T", 1, 1, 1);
		T_PARAM(&k->params[1], "y", "T *", "T", 1, 0, 0);
	}
	T_OK(find(&ks, "lb2") && find(&ks, "lb2")->launch_bounds == 256);
	T_OK(find(&ks, "lb3") && find(&ks, "lb3")->launch_bounds == 64);
	T_OK(find(&ks, "lb4") && find(&ks, "lb4")->launch_bounds == 512);
	T_OK(find(&ks, "lb2") && !find(&ks, "lb2")->is_template &&
	     !find(&ks, "lb2")->template_params);
	kb_compile_kernels_free(&ks);
}

/* Hopper attributes the grammar does not know: the kernels are still found,
 * at their lines, with their parameters. */
static void test_compile_discover__cluster_attributes(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("extern \"C\" __global__ void __cluster_dims__(8, 1, 1)\n"
		      "__launch_bounds__(1024, 1) cl(const float *x, float *y, int n) {}\n"
		      "__global__ void __cluster_dims__ (2) __maxnreg__(64) mr(int n) {}\n"
		      "__global__ void gc(const __grid_constant__ int p, float *out) {}\n"
		      "__global__ void plain(int n) { int __cluster_dims__x = 0; }\n", &ks), 0);
	const kb_kernel *k = find(&ks, "cl");
	T_OK(k != NULL);
	if (k) {
		T_EQ_INT(k->line, 1);
		T_EQ_INT(k->launch_bounds, 1024);
		T_EQ_INT(k->nparams, 3);
		if (k->nparams == 3)
			T_PARAM(&k->params[2], "n", "int", "int", 0, 0, 0);
	}
	T_OK(find(&ks, "mr") && find(&ks, "mr")->line == 3 && find(&ks, "mr")->nparams == 1);
	T_OK(find(&ks, "gc") && find(&ks, "gc")->nparams == 2);
	T_OK(find(&ks, "plain") != NULL);
	T_EQ_INT(ks.n, 4);
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__half_types(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
		      "__global__ void h(const __half *__restrict__ a, __nv_bfloat16 *b,\n"
		      "                  __half s, const __nv_bfloat162 *c, half2 *d) {}\n", &ks),
		 0);
	T_EQ_INT(ks.n, 1);
	if (ks.n == 1 && ks.v[0].nparams == 5) {
		const kb_param *p = ks.v[0].params;
		T_PARAM(&p[0], "a", "const __half *__restrict__", "__half", 1, 1, 1);
		T_PARAM(&p[1], "b", "__nv_bfloat16 *", "__nv_bfloat16", 1, 0, 0);
		T_PARAM(&p[2], "s", "__half", "__half", 0, 0, 0);
		T_PARAM(&p[3], "c", "const __nv_bfloat162 *", "__nv_bfloat162", 1, 1, 0);
		T_PARAM(&p[4], "d", "half2 *", "half2", 1, 0, 0);
		T_EQ_INT(p[2].loc.line, 4);
		T_EQ_INT(p[2].loc.col, 26);
	} else {
		T_FAIL_AT("expected one kernel with 5 params");
	}
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__qualifiers(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("__global__ void q(const int *const a, float *__restrict__ const b,\n"
		      "  float const *c, const float2 *const *d, unsigned long long n,\n"
		      "  const int m, volatile float *v, float arr[], double *restrict r) {}\n",
		      &ks), 0);
	T_EQ_INT(ks.n, 1);
	if (ks.n == 1 && ks.v[0].nparams == 9) {
		const kb_param *p = ks.v[0].params;
		T_PARAM(&p[0], "a", "const int *const", "int", 1, 1, 0);
		T_PARAM(&p[1], "b", "float *__restrict__ const", "float", 1, 0, 1);
		T_PARAM(&p[2], "c", "float const *", "float", 1, 1, 0);
		T_PARAM(&p[3], "d", "const float2 *const *", "float2", 1, 1, 0);
		T_PARAM(&p[4], "n", "unsigned long long", "unsigned long long", 0, 0, 0);
		T_PARAM(&p[5], "m", "const int", "int", 0, 1, 0);
		T_PARAM(&p[6], "v", "volatile float *", "float", 1, 0, 0);
		T_PARAM(&p[7], "arr", "float[]", "float", 1, 0, 0);
		T_PARAM(&p[8], "r", "double *restrict", "double", 1, 0, 1);
	} else {
		T_FAIL_AT("expected one kernel with 9 params, got %d", ks.n ? ks.v[0].nparams : -1);
	}
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__unnamed_params(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("__global__ void u(float *, int, const float4 *__restrict__) {}\n", &ks), 0);
	T_EQ_INT(ks.n, 1);
	if (ks.n == 1 && ks.v[0].nparams == 3) {
		const kb_param *p = ks.v[0].params;
		T_PARAM(&p[0], "", "float *", "float", 1, 0, 0);
		T_PARAM(&p[1], "", "int", "int", 0, 0, 0);
		T_PARAM(&p[2], "", "const float4 *__restrict__", "float4", 1, 1, 1);
		T_EQ_INT(p[1].loc.line, 1); /* no name: the parameter's start */
		T_EQ_INT(p[1].loc.col, 28);
	} else {
		T_FAIL_AT("expected one kernel with 3 params");
	}
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__multiline_comments_macros(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("#define RESTRICT __restrict__\n"              /* 1 */
		      "#define KERNEL __global__ void\n"             /* 2 */
		      "/* __global__ void in_comment(int n) {} */\n" /* 3 */
		      "// __global__ void in_line_comment() {}\n"    /* 4 */
		      "__global__\n"                                 /* 5 */
		      "void\n"                                       /* 6 */
		      "multi(   // the output\n"                     /* 7 */
		      "    float * /* out */ y,\n"                   /* 8 */
		      "    const float *\n"                          /* 9 */
		      "        x,\n"                                 /* 10 */
		      "#ifdef WITH_N\n"                              /* 11 */
		      "    int n,\n"                                 /* 12 */
		      "#endif\n"                                     /* 13 */
		      "    float *RESTRICT z)\n"                     /* 14 */
		      "{\n  const char *s = \"__global__ void str() {}\";\n}\n"
		      "KERNEL by_macro(int n) {}\n", &ks), 0);
	/* KERNEL expands to __global__ only in the preprocessor: not seen */
	T_EQ_INT(ks.n, 1);
	const kb_kernel *k = find(&ks, "multi");
	T_OK(k != NULL);
	if (k && k->nparams == 4) {
		T_EQ_INT(k->line, 5);
		T_PARAM(&k->params[0], "y", "float *", "float", 1, 0, 0);
		T_EQ_INT(k->params[0].loc.line, 8);
		T_EQ_INT(k->params[0].loc.col, 23);
		T_PARAM(&k->params[1], "x", "const float *", "float", 1, 1, 0);
		T_EQ_INT(k->params[1].loc.line, 10);
		T_PARAM(&k->params[2], "n", "int", "int", 0, 0, 0); /* both #if branches */
		/* the macro takes the name's place in the tree; its #define says restrict */
		T_PARAM(&k->params[3], "z", "float *RESTRICT", "float", 1, 0, 1);
		T_EQ_INT(k->params[3].loc.line, 14);
		T_EQ_INT(k->params[3].loc.col, 21);
	} else {
		T_FAIL_AT("expected multi with 4 params");
	}
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__not_kernels(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("__device__ float dev(float x) { return x; }\n"
		      "__host__ __device__ inline int both(int a) { return a; }\n"
		      "__global__ void fwd(float *x, int n);\n"
		      "template <typename T> __global__ void tk(T *x);\n"
		      "template __global__ void tk<float>(float *);\n"
		      "struct S { __device__ void m() {} };\n"
		      "void host(float *x) { fwd<<<1, 32>>>(x, 1); }\n"
		      "__global__ void fwd(float *x, int n) { x[0] = dev(n); }\n", &ks), 0);
	T_EQ_INT(ks.n, 1); /* the definition of fwd only */
	if (ks.n == 1) {
		T_EQ_STR(ks.v[0].name, "fwd");
		T_EQ_INT(ks.v[0].line, 8);
		T_EQ_INT(ks.v[0].nparams, 2);
	}
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__namespaces(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("namespace ns {\n"
		      "__global__ void k(float4 *v) {}\n"
		      "namespace inner { template <int B> __global__ void t(int n) {} }\n"
		      "extern \"C\" __global__ void plain(int n) {}\n"
		      "}\n"
		      "namespace a::b { __global__ void nested() {} }\n"
		      "namespace { __global__ void anon() {} }\n", &ks), 0);
	T_EQ_INT(ks.n, 5);
	T_OK(find(&ks, "ns::k") != NULL);
	T_OK(find(&ks, "ns::inner::t") && find(&ks, "ns::inner::t")->is_template);
	T_OK(find(&ks, "plain") && find(&ks, "plain")->extern_c); /* the symbol */
	T_OK(find(&ks, "a::b::nested") != NULL);
	T_OK(find(&ks, "anon") != NULL);
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__syntax_errors(void)
{
	kb_kernels ks;
	/* an error in a body, a missing ')' , a missing '}' at the end */
	T_EQ_INT(cuda("__global__ void first(float *x) { if (x { x[0] = 1; }\n"
		      "__global__ void second(int n) { int a = ; }\n"
		      "__global__ void third(const float *__restrict__ y, int n) {\n"
		      "  if (n) {\n"
		      "    y = 0;\n"
		      "}\n"
		      "extern \"C\" __global__ void fourth(int q) {}\n", &ks), 0);
	T_OK(find(&ks, "first") && find(&ks, "first")->nparams == 1);
	T_OK(find(&ks, "second") != NULL);
	const kb_kernel *k = find(&ks, "third");
	T_OK(k != NULL);
	if (k && k->nparams == 2)
		T_PARAM(&k->params[0], "y", "const float *__restrict__", "float", 1, 1, 1);
	T_OK(find(&ks, "fourth") && find(&ks, "fourth")->extern_c);
	T_OK(find(&ks, "fourth") && find(&ks, "fourth")->line == 7);
	kb_compile_kernels_free(&ks);

	/* a broken struct before a kernel, and garbage at the top */
	T_EQ_INT(cuda("struct S { int a;\n__global__ void k4(float *x) {}\n", &ks), 0);
	T_OK(find(&ks, "k4") != NULL);
	kb_compile_kernels_free(&ks);
	T_EQ_INT(cuda("@@@ ### ;;\n__global__ void k5(int n) {}\n))) {{\n", &ks), 0);
	T_OK(find(&ks, "k5") != NULL);
	kb_compile_kernels_free(&ks);
	T_EQ_INT(cuda("", &ks), 0);
	T_EQ_INT(ks.n, 0);

	/* an unclosed body swallows the rest: the kernels after it come back */
	T_EQ_INT(cuda("__global__ void open(int n) {\n  for (;;) {\n"
		      "__global__ void k6(float *a) { a[0] = 1; }\n"
		      "template <int B> __global__ void k7(int n) {}\n"
		      "__global__ void k8(const float *__restrict__ b) {}\n", &ks), 0);
	T_EQ_INT(ks.n, 4);
	if (ks.n == 4) { /* in file order */
		T_EQ_STR(ks.v[0].name, "open");
		T_EQ_STR(ks.v[1].name, "k6");
		T_EQ_STR(ks.v[3].name, "k8");
		T_EQ_INT(ks.v[3].line, 5);
		T_EQ_INT(ks.v[3].params[0].loc.col, 46);
		T_OK(ks.v[3].params[0].is_restrict);
	}
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__preprocessor_blocks(void)
{
	kb_kernels ks;
	T_EQ_INT(cuda("#if __CUDA_ARCH__ >= 800\n"
		      "__global__ void fast(float *x) {\n"
		      "#ifdef DEBUG\n  x[0] = 0;\n#endif\n}\n"
		      "#elif defined(OLD) && \\\n    defined(OLDER)\n"
		      "__global__ void slow(float *x) {}\n"
		      "#else\n"
		      "__global__ void none() {}\n"
		      "#endif  // arch\n"
		      "#ifndef X\n#define X 1\n#endif\n"
		      "__global__ void __launch_bounds__(X) last(\n"
		      "#if 1\n    int a,\n#else\n    long a,\n#endif\n    int b) {}\n", &ks), 0);
	T_EQ_INT(ks.n, 4); /* every branch: discovery does not preprocess */
	T_OK(find(&ks, "slow") && find(&ks, "slow")->line == 9);
	const kb_kernel *k = find(&ks, "last");
	T_OK(k != NULL);
	if (k) {
		T_EQ_INT(k->launch_bounds, 1);
		T_EQ_INT(k->nparams, 3); /* both spellings of a */
		T_EQ_INT(k->line, 16);
		T_OK(k->nparams == 3 && !strcmp(k->params[1].type, "long") &&
		     k->params[2].loc.line == 22 && k->params[2].loc.col == 9);
	}
	kb_compile_kernels_free(&ks);
	/* a directive on the first line, never closed */
	T_EQ_INT(cuda("#ifdef A\n__global__ void only(int n) {}\n", &ks), 0);
	T_OK(ks.n == 1 && ks.v[0].nparams == 1 && ks.v[0].params[0].loc.line == 2);
	kb_compile_kernels_free(&ks);
}

static void test_compile_discover__append_and_bad_args(void)
{
	kb_kernels ks = {0};
	kb_err err = {0};
	kb_source s = mem_src("a.cu", "__global__ void a() {}\n", KB_SRC_CUDA);
	T_EQ_INT(kb_compile_discover_cuda(&s, &ks, &err), 0);
	T_EQ_INT(kb_compile_discover_cuda(&s, &ks, &err), 0);
	T_EQ_INT(ks.n, 2); /* appends */
	kb_compile_kernels_free(&ks);
	kb_compile_kernels_free(&ks); /* twice is fine */
	T_EQ_INT(kb_compile_discover_cuda(NULL, &ks, &err), KB_EINVAL);
	T_EQ_INT(kb_compile_discover_cuda(&s, NULL, NULL), KB_EINVAL);
	kb_compile_kernels_free(NULL);
}

/* ---- speed and threads ----------------------------------------------------- */

static void test_compile_discover__fast(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_kernels ks;
	T_EQ_INT(from_file("kernels/softmax.cu", KB_SRC_CUDA, &b, &ks, NULL), 0);
	kb_compile_kernels_free(&ks);
	kb_source s = {"kernels/softmax.cu", b.s, b.len, KB_SRC_CUDA};
	double t0 = kb_now_ms();
	for (int i = 0; i < 20; i++) {
		kb_compile_discover_cuda(&s, &ks, NULL);
		kb_compile_kernels_free(&ks);
	}
	double ms = (kb_now_ms() - t0) / 20;
	if (getenv("T_VERBOSE"))
		printf("  softmax.cu discovery: %.3f ms\n", ms);
	T_OK(ms < 10.0); /* measured ~0.5 ms; a cache-hit compile must stay << 30 ms */
	kb_buf_free(&b);
}

static void *discover_thread(void *arg)
{
	const kb_source *s = arg;
	long bad = 0;
	for (int i = 0; i < 25; i++) {
		kb_kernels ks = {0};
		if (kb_compile_discover_cuda(s, &ks, NULL) || ks.n != 2 ||
		    strcmp(ks.v[1].name, "softmax_naive") || ks.v[0].nparams != 4)
			bad++;
		kb_compile_kernels_free(&ks);
	}
	return (void *)bad;
}

static void test_compile_discover__threads(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_kernels ks;
	T_EQ_INT(from_file("kernels/softmax.cu", KB_SRC_CUDA, &b, &ks, NULL), 0);
	kb_compile_kernels_free(&ks);
	kb_source s = {"kernels/softmax.cu", b.s, b.len, KB_SRC_CUDA};
	pthread_t th[4];
	long bad = 0;
	for (int i = 0; i < 4; i++)
		T_EQ_INT(pthread_create(&th[i], NULL, discover_thread, &s), 0);
	for (int i = 0; i < 4; i++) {
		void *r = NULL;
		pthread_join(th[i], &r);
		bad += (long)r;
	}
	T_EQ_INT(bad, 0);
	kb_buf_free(&b);
}

/* ---- inline PTX -------------------------------------------------------------- */

static int ptx(const char *text, kb_kernels *ks, kb_diags *d)
{
	kb_source s = mem_src("inline.ptx", text, KB_SRC_PTX);
	memset(ks, 0, sizeof *ks);
	memset(d, 0, sizeof *d);
	return kb_compile_discover_ptx(&s, ks, d, NULL);
}

static void test_compile_discover__ptx_forms(void)
{
	kb_kernels ks;
	kb_diags d;
	T_EQ_INT(ptx("// .entry commented(\n"
		     "/* .visible .entry in_block( */\n"
		     ".version 8.0\n.target sm_90\n.address_size 64\n"
		     ".func (.param .b32 r) helper(.param .b32 a) { ret; }\n"
		     ".visible .entry k1(\n"
		     "\t.param .align 8 .b8 k1_param_0[16], // a struct by value\n"
		     "\t.param .u64 .ptr.global.align 16 k1_param_1,\n"
		     "\t.param .u64 .ptr.const k1_param_2, .param .b64 /* 8 B */ raw, .param .s32 n\n"
		     ")\n.maxntid 128, 2, 1\n.minnctapersm 2\n"
		     "{\n\t{ .reg .b32 t; }\n\tret;\n}\n"
		     ".entry noparams\n.reqntid 64\n{ ret; }\n"
		     ".weak .entry k3() { ret; }\n", &ks, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_INT(ks.n, 3);
	const kb_kernel *k = find(&ks, "k1");
	T_OK(k != NULL);
	if (k && k->nparams == 5) {
		T_EQ_INT(k->line, 7);
		T_EQ_INT(k->launch_bounds, 256);
		T_OK(k->extern_c);
		T_PARAM(&k->params[0], "k1_param_0", ".align 8 .b8[16]", "b8", 0, 0, 0);
		T_PARAM(&k->params[1], "k1_param_1", ".u64 .ptr.global.align 16", "u64", 1, 0, 0);
		T_PARAM(&k->params[2], "k1_param_2", ".u64 .ptr.const", "u64", 1, 1, 0);
		T_PARAM(&k->params[3], "raw", ".b64", "b64", 1, 0, 0);
		T_PARAM(&k->params[4], "n", ".s32", "s32", 0, 0, 0);
		T_EQ_INT(k->params[4].loc.line, 10);
		T_EQ_INT(k->params[4].loc.col, 76);
	} else {
		T_FAIL_AT("expected k1 with 5 params");
	}
	T_OK(find(&ks, "noparams") && find(&ks, "noparams")->nparams == 0 &&
	     find(&ks, "noparams")->launch_bounds == 64);
	T_OK(find(&ks, "k3") && find(&ks, "k3")->nparams == 0);
	T_OK(!find(&ks, "helper") && !find(&ks, "commented") && !find(&ks, "in_block"));
	kb_compile_kernels_free(&ks);
	kb_diags_free(&d);
}

/* .maxntid products past 2^30 threads are no launch bound, and huge
 * numbers do not overflow (found by tests/fuzz/fuzz_ptx.c). */
static void test_compile_discover__ptx_huge_maxntid(void)
{
	kb_kernels ks;
	kb_diags d;
	T_EQ_INT(ptx(".entry a() .maxntid 8, 9223372036854775807 { ret; }\n"
		     ".entry b() .maxntid 1024, 1048576 { ret; }\n"
		     ".entry c() .maxntid 1024, 1023 { ret; }\n", &ks, &d), 0);
	T_OK(find(&ks, "a") && find(&ks, "a")->launch_bounds == 0);
	T_OK(find(&ks, "b") && find(&ks, "b")->launch_bounds == 0);
	T_OK(find(&ks, "c") && find(&ks, "c")->launch_bounds == 1024 * 1023);
	kb_compile_kernels_free(&ks);
	kb_diags_free(&d);
}

static void test_compile_discover__ptx_errors(void)
{
	kb_kernels ks;
	kb_diags d;
	T_EQ_INT(ptx(".version 8.0\n"
		     ".visible .entry broken(\n"
		     "\t.param .u64 p,\n"
		     "\t.param .u32 n\n"
		     "{\n\tret;\n}\n", &ks, &d), KB_ECOMPILE);
	T_EQ_INT(ks.n, 1); /* what was found stays */
	T_OK(ks.n == 1 && ks.v[0].nparams == 2);
	T_EQ_INT(kb_diag_count(&d, KB_DIAG_ERROR), 1);
	kb_buf out = KB_BUF_INIT;
	kb_diag_render(&d, &out, false);
	T_CONTAINS(out.s, "inline.ptx:2:23: error: unterminated parameter list of entry 'broken'");
	kb_buf_free(&out);
	kb_compile_kernels_free(&ks);
	kb_diags_free(&d);

	T_EQ_INT(ptx(".entry (\n.param .u32 n)\n{ }\n"
		     ".entry ok(.param .u32, .param .f32 x y) { }\n"
		     ".entry after(.param .u32 m) { }\n/* open", &ks, &d), KB_ECOMPILE);
	T_EQ_INT(kb_diag_count(&d, KB_DIAG_ERROR), 4);
	kb_diag_render(&d, &out, false);
	T_CONTAINS(out.s, "inline.ptx:1:8: error: expected a kernel name after .entry");
	T_CONTAINS(out.s, "inline.ptx:4:22: error: expected a parameter name");
	T_CONTAINS(out.s, "inline.ptx:4:38: error: expected ',' or ')'");
	T_CONTAINS(out.s, "inline.ptx:6:1: error: unterminated comment");
	T_OK(find(&ks, "ok") && find(&ks, "ok")->nparams == 2);
	T_OK(find(&ks, "after") && find(&ks, "after")->nparams == 1);
	kb_buf_free(&out);
	kb_compile_kernels_free(&ks);
	kb_diags_free(&d);
}

int main(void)
{
	T_RUN(test_compile_discover__softmax);
	T_RUN(test_compile_discover__vector_add_extern_c);
	T_RUN(test_compile_discover__saxpy_ptx);
	T_RUN(test_compile_discover__vec4_template);
	T_RUN(test_compile_discover__extern_c_block);
	T_RUN(test_compile_discover__templates_launch_bounds);
	T_RUN(test_compile_discover__cluster_attributes);
	T_RUN(test_compile_discover__half_types);
	T_RUN(test_compile_discover__qualifiers);
	T_RUN(test_compile_discover__unnamed_params);
	T_RUN(test_compile_discover__multiline_comments_macros);
	T_RUN(test_compile_discover__not_kernels);
	T_RUN(test_compile_discover__namespaces);
	T_RUN(test_compile_discover__syntax_errors);
	T_RUN(test_compile_discover__preprocessor_blocks);
	T_RUN(test_compile_discover__append_and_bad_args);
	T_RUN(test_compile_discover__fast);
	T_RUN(test_compile_discover__threads);
	T_RUN(test_compile_discover__ptx_forms);
	T_RUN(test_compile_discover__ptx_errors);
	T_RUN(test_compile_discover__ptx_huge_maxntid);
	return t_report();
}
