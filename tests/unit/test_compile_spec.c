/* test_compile_spec.c - the //! spec parser and evaluator (spec*.c) and the
 * binding of a spec to kernel parameters and reference shapes (bind.c).
 * Kernels are built by hand here, so no tree-sitter or GPU is needed. */
#include "../../src/compile/compile.h"
#include "t.h"
#include <unistd.h>
#include <sys/stat.h>
#include <stdlib.h>

/* ===== helpers ===== */

static kb_source mksrc(const char *path, const char *text, kb_src_kind kind)
{
	kb_source s = {(char *)path, (char *)text, strlen(text), kind};
	return s;
}

/* Parses text as k.cu; diags are left in *d. */
static int parse(const char *text, kb_spec *s, kb_diags *d)
{
	kb_source src = mksrc("k.cu", text, KB_SRC_CUDA);
	return kb_compile_spec_parse(&src, s, d);
}

static char *render(const kb_diags *d)
{
	kb_buf b = KB_BUF_INIT;
	kb_diag_render(d, &b, false);
	return kb_buf_detach(&b);
}

/* Parses text and checks it fails with exactly one error at line:col (len)
 * whose message contains msg; `at` is the caller's line for the report. */
static void one_error(int at, const char *text, int line, int col, int len, const char *msg)
{
	kb_spec s;
	kb_diags d = {0};
	int rc = parse(text, &s, &d);
	const kb_diag *g = d.n == 1 ? &d.v[0] : NULL;
	if (rc != KB_ESPEC || !g || g->level != KB_DIAG_ERROR || g->line != line || g->col != col ||
	    g->len != len || !strstr(g->msg, msg)) {
		char *r = render(&d);
		T_FAIL_AT("(line %d) expected %d:%d (len %d) '%s' for:\n%sgot (rc %d):\n%s", at, line,
			  col, len, msg, text, rc, r);
		free(r);
	}
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

#define T_ONE_ERROR(...) one_error(__LINE__, __VA_ARGS__)

static int64_t eval_text(const char *expr_line, bool *is_float, double *f)
{
	char text[256];
	snprintf(text, sizeof(text), "//! arg A = 7\n//! arg B = -3\n//! arg X = %s\n", expr_line);
	kb_spec s;
	kb_diags d = {0};
	int rc = parse(text, &s, &d);
	if (rc) {
		char *r = render(&d);
		printf("%s", r);
		free(r);
	}
	kb_value v = s.nargs == 3 ? s.args[2].value : (kb_value){0};
	*is_float = v.is_float;
	*f = v.f;
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	return v.i;
}

static int load(const char *path, kb_buf *text, kb_source *src)
{
	kb_err err;
	int rc = kb_file_read(path, text, &err);
	*src = mksrc(path, text->s ? text->s : "", strstr(path, ".ptx") ? KB_SRC_PTX : KB_SRC_CUDA);
	return rc;
}

/* ===== dtypes ===== */

static void test_compile_spec__dtypes(void)
{
	static const char *const names[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8"};
	static const int sizes[] = {8, 4, 2, 2, 8, 4, 2, 1, 1};
	for (int i = 0; i < KB_DT_COUNT; i++) {
		kb_dtype t;
		T_EQ_STR(kb_dtype_name((kb_dtype)i), names[i]);
		T_EQ_INT(kb_dtype_size((kb_dtype)i), sizes[i]);
		T_EQ_INT(kb_dtype_parse(names[i], strlen(names[i]), &t), 0);
		T_EQ_INT(t, i);
	}
	kb_dtype t;
	T_EQ_INT(kb_dtype_parse("f32x", 3, &t), 0); /* length-bounded */
	T_EQ_INT(t, KB_DT_F32);
	T_EQ_INT(kb_dtype_parse("f31", 3, &t), KB_ENOTFOUND);
	T_EQ_INT(kb_dtype_parse("f3", 2, &t), KB_ENOTFOUND);
	T_EQ_STR(kb_dtype_name(KB_DT_COUNT), "?");
}

static void test_compile_spec__ctype_dtype(void)
{
	static const struct { const char *c; kb_dtype t; } cases[] = {
		{"float", KB_DT_F32}, {"const float", KB_DT_F32}, {"float4", KB_DT_F32},
		{"const float *__restrict__", KB_DT_F32}, {"double", KB_DT_F64},
		{"__half", KB_DT_F16}, {"half2", KB_DT_F16}, {"__nv_bfloat16", KB_DT_BF16},
		{"nv_bfloat16", KB_DT_BF16}, {"int", KB_DT_I32}, {"int32_t", KB_DT_I32},
		{"unsigned", KB_DT_I32}, {"unsigned int", KB_DT_I32}, {"uint32_t", KB_DT_I32},
		{"long long", KB_DT_I64}, {"int64_t", KB_DT_I64}, {"std::int64_t", KB_DT_I64},
		{"short", KB_DT_I16}, {"int16_t", KB_DT_I16}, {"char", KB_DT_I8},
		{"signed char", KB_DT_I8}, {"int8_t", KB_DT_I8}, {"unsigned char", KB_DT_U8},
		{"uint8_t", KB_DT_U8}, {"volatile  unsigned   char", KB_DT_U8},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(cases); i++) {
		kb_dtype t = KB_DT_COUNT;
		int rc = kb_compile_ctype_dtype(cases[i].c, &t);
		if (rc || t != cases[i].t)
			T_FAIL_AT("ctype '%s': rc %d, dtype %d, want %d", cases[i].c, rc, t, cases[i].t);
	}
	kb_dtype t;
	T_EQ_INT(kb_compile_ctype_dtype("T", &t), KB_ENOTFOUND);
	T_EQ_INT(kb_compile_ctype_dtype("struct Foo", &t), KB_ENOTFOUND);
	T_EQ_INT(kb_compile_ctype_dtype("", &t), KB_ENOTFOUND);
	T_EQ_INT(kb_compile_ctype_dtype(NULL, &t), KB_ENOTFOUND);
}

/* ===== the example kernels ===== */

static void test_compile_spec__example_softmax(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_source src;
	T_EQ_INT(load("kernels/softmax.cu", &text, &src), 0);
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_INT(s.nlines, 11);
	T_EQ_STR(s.kernel, "softmax_rows");
	T_EQ_INT(s.kernel_loc.line, 6);
	T_EQ_INT(s.kernel_loc.col, 13);
	T_EQ_INT(s.nargs, 2);
	T_EQ_STR(s.args[0].name, "M");
	T_EQ_INT(s.args[0].value.i, 4096);
	T_EQ_INT(s.args[1].value.i, 8192);
	T_EQ_INT(s.ntensors, 2);
	T_EQ_STR(s.tensors[0].name, "x");
	T_OK(!s.tensors[0].is_out);
	T_EQ_INT(s.tensors[0].dtype, KB_DT_F32);
	T_EQ_INT(s.tensors[0].rank, 2);
	T_EQ_INT(s.tensors[0].init.kind, KB_INIT_RANDN);
	T_OK(s.tensors[0].init.has_seed);
	T_EQ_INT(s.tensors[0].init.seed, 1);
	T_OK(s.tensors[1].is_out);
	T_EQ_INT(s.tensors[1].init.kind, KB_INIT_NONE);
	T_OK(s.launch.present);
	T_EQ_INT(s.launch.grid_n, 1);
	T_EQ_INT(s.launch.block_n, 1);
	T_OK(s.ref.present && !s.ref.is_kernel);
	T_EQ_STR(s.ref.fn, "softmax");
	T_EQ_INT(s.ref.nargs, 2);
	T_EQ_STR(s.ref.args[0].text, "x");
	T_OK(s.ref.args[0].key == NULL);
	T_EQ_STR(s.ref.args[1].key, "dim");
	T_EQ_STR(s.ref.args[1].text, "1");
	T_EQ_INT(s.ref.nouts, 1);
	T_EQ_STR(s.ref.outs[0], "y");
	T_OK(s.has_tol);
	T_NEAR(s.rtol, 1e-5, 1e-12);
	T_NEAR(s.atol, 1e-6, 1e-12);
	kb_value v;
	T_EQ_INT(kb_compile_spec_eval(&s, s.bytes, &v, &src, &d), 0);
	T_EQ_INT(v.i, 2LL * 4096 * 8192 * 4);
	T_EQ_INT(kb_compile_spec_eval(&s, s.flops, &v, &src, &d), 0);
	T_EQ_INT(v.i, 5LL * 4096 * 8192);
	T_EQ_INT(s.nsweeps, 1);
	T_EQ_STR(s.sweeps[0].name, "N");
	T_EQ_INT(s.sweeps[0].nvalues, 3);
	T_EQ_INT(s.sweeps[0].values[2]->ival, 32768);
	kb_launch_dims ld;
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), 0);
	T_EQ_INT(ld.grid[0], 4096);
	T_EQ_INT(ld.grid[1], 1);
	T_EQ_INT(ld.block[0], 256);
	T_EQ_INT(ld.smem, 0);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	kb_buf_free(&text);
}

static void test_compile_spec__example_vector_add(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_source src;
	T_EQ_INT(load("kernels/vector_add.cu", &text, &src), 0);
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(d.n, 0);
	T_OK(s.kernel == NULL);
	T_EQ_INT(s.args[0].value.i, 64 * 1024 * 1024);
	T_EQ_INT(s.ntensors, 3);
	T_EQ_INT(s.tensors[1].init.seed, 2);
	T_OK(s.bytes == NULL && s.flops == NULL);
	kb_launch_dims ld;
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), 0);
	T_EQ_INT(ld.grid[0], 64 * 1024 * 1024 / 256);
	T_EQ_STR(s.ref.fn, "add");
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	kb_buf_free(&text);
}

static void test_compile_spec__example_saxpy_ptx(void)
{
	kb_buf text = KB_BUF_INIT;
	kb_source src;
	T_EQ_INT(load("kernels/saxpy.ptx", &text, &src), 0);
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_STR(s.kernel, "saxpy");
	T_OK(s.args[0].value.is_float);
	T_NEAR(s.args[0].value.f, 2.5, 0);
	T_EQ_INT(s.args[1].value.i, 16 * 1024 * 1024);
	T_EQ_STR(s.ref.fn, "axpy");
	T_EQ_INT(s.ref.nargs, 3);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	kb_buf_free(&text);
}

/* ===== good specs ===== */

static void test_compile_spec__every_directive(void)
{
	const char *text =
		"// a comment line, and code below\n"
		"  //! kernel softmax<float, 256>\n"
		"//!\n"
		"//! arg B = 2            // trailing comment\n"
		"//! arg H = 0x10\n"
		"//! arg S = B * H + 1\n"
		"//! arg scale = 1e-3\n"
		"//! in a : f16[B, H, S] = randn()\n"
		"//! in b : bf16[S] = randn(0.5, 2, seed=3)\n"
		"//! in c : f64[S] = rand(-1, 1)\n"
		"//! in d : i64[S] = rand(lo=0, hi=1, seed=2)\n"
		"//! in e : i32[S] = arange()\n"
		"//! in f : i16[S] = ones()\n"
		"//! in g : i8[S] = zeros\n"
		"//! in h : u8[S] = file(\"data/h.npy\")\n"
		"//! in i : f32[S] = file( data/i.bin )\n"
		"//! in j : f32[]\n"
		"//! in k : f32[1,2,3,4,5,6,7,8]\n"
		"//! out o : f32[B, H, S]\n"
		"//! out o2 : f32[B, H, S] = zeros\n"
		"//! launch block=(32, 4, 2) grid=cdiv(S, 32) smem=48*1024\n"
		"//! ref layernorm(a, b, c, eps=-1e-5) -> o, o2\n"
		"//! tol atol=0.5\n"
		"//! bytes (B + 1) * 4\n"
		"//! flops 2.5 * S\n"
		"//! sweep S = 16, 2 * B\n"
		"//! sweep B = 1\n"
		"//! tune TILE = 64, min(1,2), (3, 4)\n"
		"//! tune VEC = float4\n";
	kb_spec s;
	kb_diags d = {0};
	int rc = parse(text, &s, &d);
	char *r = render(&d);
	T_EQ_STR(r, "");
	free(r);
	T_EQ_INT(rc, 0);
	T_EQ_INT(s.nlines, 28);
	T_EQ_STR(s.kernel, "softmax<float, 256>");
	T_EQ_INT(s.kernel_loc.line, 2);
	T_EQ_INT(s.kernel_loc.col, 14);
	T_EQ_INT(s.args[1].value.i, 16);
	T_EQ_INT(s.args[2].value.i, 33);
	T_OK(s.args[3].value.is_float);
	T_NEAR(s.args[3].value.f, 1e-3, 1e-15);
	T_EQ_INT(s.ntensors, 13);
	const kb_spec_tensor *t = s.tensors;
	T_EQ_INT(t[0].dtype, KB_DT_F16);
	T_EQ_INT(t[0].rank, 3);
	T_EQ_INT(t[0].init.kind, KB_INIT_RANDN);
	T_OK(!t[0].init.has_seed);
	T_OK(t[0].init.seed != 0);
	T_NEAR(t[0].init.lo, 0, 0);
	T_NEAR(t[0].init.hi, 1, 0);
	T_EQ_INT(t[1].dtype, KB_DT_BF16);
	T_NEAR(t[1].init.lo, 0.5, 0);
	T_NEAR(t[1].init.hi, 2, 0);
	T_OK(t[1].init.has_seed);
	T_EQ_INT(t[1].init.seed, 3);
	T_EQ_INT(t[2].init.kind, KB_INIT_RAND);
	T_NEAR(t[2].init.lo, -1, 0);
	T_NEAR(t[2].init.hi, 1, 0);
	T_OK(t[2].init.seed != t[0].init.seed); /* derived per position */
	T_EQ_INT(t[3].init.seed, 2);
	T_EQ_INT(t[4].init.kind, KB_INIT_ARANGE);
	T_EQ_INT(t[5].init.kind, KB_INIT_ONES);
	T_EQ_INT(t[6].init.kind, KB_INIT_ZEROS);
	T_EQ_INT(t[7].init.kind, KB_INIT_FILE);
	T_EQ_STR(t[7].init.path, "data/h.npy");
	T_EQ_STR(t[8].init.path, "data/i.bin");
	T_EQ_INT(t[9].rank, 0);
	T_EQ_INT(t[9].init.kind, KB_INIT_RANDN);
	T_EQ_INT(t[10].rank, KB_MAX_RANK);
	T_OK(t[11].is_out);
	T_EQ_INT(t[11].init.kind, KB_INIT_NONE);
	T_EQ_INT(t[12].init.kind, KB_INIT_ZEROS); /* an accumulator, zeroed before each run */
	T_EQ_INT(s.launch.grid_n, 1);
	T_EQ_INT(s.launch.block_n, 3);
	kb_source src = mksrc("k.cu", text, KB_SRC_CUDA);
	kb_launch_dims ld;
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), 0);
	T_EQ_INT(ld.grid[0], 2);
	T_EQ_INT(ld.block[0], 32);
	T_EQ_INT(ld.block[1], 4);
	T_EQ_INT(ld.block[2], 2);
	T_EQ_INT(ld.smem, 48 * 1024);
	T_EQ_STR(s.ref.fn, "layernorm");
	T_EQ_INT(s.ref.nargs, 4);
	T_EQ_STR(s.ref.args[3].key, "eps");
	T_EQ_STR(s.ref.args[3].text, "-1e-5");
	T_EQ_INT(s.ref.args[3].loc.col, 32); /* the value */
	T_EQ_INT(s.ref.nouts, 2);
	T_EQ_STR(s.ref.outs[1], "o2");
	T_OK(s.has_tol);
	T_NEAR(s.rtol, 0, 0);
	T_NEAR(s.atol, 0.5, 0);
	T_EQ_INT(s.nsweeps, 2);
	T_EQ_INT(s.sweeps[0].nvalues, 2);
	T_EQ_INT(s.ntunes, 2);
	T_EQ_INT(s.tunes[0].nvalues, 3);
	T_EQ_STR(s.tunes[0].texts[0], "64");
	T_EQ_STR(s.tunes[0].texts[1], "min(1,2)");
	T_EQ_STR(s.tunes[0].texts[2], "(3, 4)");
	T_EQ_STR(s.tunes[1].texts[0], "float4");
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

static void test_compile_spec__ref_kernel(void)
{
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(parse("//! ref kernel naive<float>\n", &s, &d), 0);
	T_OK(s.ref.present && s.ref.is_kernel);
	T_EQ_STR(s.ref.fn, "naive<float>");
	T_EQ_INT(s.ref.loc.col, 16);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	/* No spec at all is not an error. */
	T_EQ_INT(parse("__global__ void k() {}\n", &s, &d), 0);
	T_EQ_INT(s.nlines, 0);
	T_OK(!s.launch.present && !s.ref.present);
	kb_compile_spec_free(&s);
	/* An empty file. */
	T_EQ_INT(parse("", &s, &d), 0);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* ===== expressions ===== */

static void test_compile_spec__expressions(void)
{
	bool fl;
	double f;
	T_EQ_INT(eval_text("1 + 2 * 3", &fl, &f), 7);
	T_EQ_INT(eval_text("(1 + 2) * 3", &fl, &f), 9);
	T_EQ_INT(eval_text("10 - 4 - 3", &fl, &f), 3);   /* left associative */
	T_EQ_INT(eval_text("A / 2", &fl, &f), 3);        /* integer division */
	T_OK(!fl);
	T_EQ_INT(eval_text("A % 4", &fl, &f), 3);
	T_EQ_INT(eval_text("-A / 2", &fl, &f), -3);      /* truncates like C */
	T_EQ_INT(eval_text("B * -2", &fl, &f), 6);
	T_EQ_INT(eval_text("--A", &fl, &f), 7);
	T_EQ_INT(eval_text("cdiv(A, 2)", &fl, &f), 4);
	T_EQ_INT(eval_text("cdiv(8, 2)", &fl, &f), 4);
	T_EQ_INT(eval_text("cdiv(B, 2)", &fl, &f), -1);  /* rounds up: -1.5 -> -1 */
	T_EQ_INT(eval_text("cdiv(-7, -2)", &fl, &f), 4);
	T_EQ_INT(eval_text("min(A, B)", &fl, &f), -3);
	T_EQ_INT(eval_text("max(A, B) * 2", &fl, &f), 14);
	T_EQ_INT(eval_text("0x100 + 0", &fl, &f), 256);
	eval_text("A / 2.0", &fl, &f);
	T_OK(fl);
	T_NEAR(f, 3.5, 0);
	eval_text("2.5e1 % 7", &fl, &f);
	T_NEAR(f, 4, 1e-12);
	eval_text("cdiv(7.0, 2)", &fl, &f);
	T_NEAR(f, 4, 0);
	eval_text("min(1, 0.5)", &fl, &f);
	T_OK(fl);
	T_NEAR(f, 0.5, 0);
	eval_text(".5 + 1E+1", &fl, &f);
	T_NEAR(f, 10.5, 0);
}

static void test_compile_spec__eval_errors(void)
{
	T_ONE_ERROR("//! arg N = 4\n//! arg Z = N / (N - 4)\n", 2, 17, 7, "division by zero");
	T_ONE_ERROR("//! arg Z = 3 % 0\n", 1, 17, 1, "division by zero");
	T_ONE_ERROR("//! arg Z = 1.0 / 0\n", 1, 19, 1, "division by zero");
	T_ONE_ERROR("//! arg Z = cdiv(5, 0)\n", 1, 21, 1, "division by zero");
	T_ONE_ERROR("//! arg Z = 4611686018427387904 * 2\n", 1, 13, 23, "integer overflow");
	T_ONE_ERROR("//! arg Z = 99999999999999999999\n", 1, 13, 20, "out of range");
	/* An arg that fails is reported once, not again where it is used. */
	T_ONE_ERROR("//! arg Z = 1 / 0\n//! arg Y = Z + 1\n//! in x : f32[Z]\n", 1, 17, 1,
		    "division by zero");

	/* The public evaluator reports undefined names itself. */
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(parse("//! arg N = 3\n", &s, &d), 0);
	kb_expr name = {.kind = KB_EX_NAME, .loc = {"k.cu", 1, 5}, .len = 3, .name = "arg"};
	kb_value v;
	kb_source src = mksrc("k.cu", "//! arg N = 3\n", KB_SRC_CUDA);
	T_EQ_INT(kb_compile_spec_eval(&s, &name, &v, &src, &d), KB_ESPEC);
	T_EQ_INT(d.n, 1);
	T_EQ_STR(d.v[0].msg, "undefined name 'arg'");
	T_EQ_INT(kb_compile_spec_eval(&s, &name, &v, &src, NULL), KB_ESPEC); /* silent */
	T_EQ_INT(d.n, 1);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

static void test_compile_spec__set_arg(void)
{
	const char *text = "//! arg N = 1024\n//! arg M = N * 2\n//! in x : f32[M]\n"
			   "//! launch grid=(cdiv(M, 256)) block=(256)\n";
	kb_source src = mksrc("k.cu", text, KB_SRC_CUDA);
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(s.args[1].value.i, 2048);
	T_EQ_INT(kb_compile_spec_set_arg(&s, "N", (kb_value){false, 4096, 0}), 0);
	T_EQ_INT(s.args[0].value.i, 4096);
	T_EQ_INT(s.args[1].value.i, 8192); /* dependents follow */
	kb_value v;
	T_EQ_INT(kb_compile_spec_eval(&s, s.tensors[0].dims[0], &v, &src, &d), 0);
	T_EQ_INT(v.i, 8192);
	kb_launch_dims ld;
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), 0);
	T_EQ_INT(ld.grid[0], 32);
	T_EQ_INT(kb_compile_spec_set_arg(&s, "Q", (kb_value){false, 1, 0}), KB_ENOTFOUND);
	/* A float value makes a dim fail to be an integer when evaluated. */
	T_EQ_INT(kb_compile_spec_set_arg(&s, "N", (kb_value){true, 0, 0.5}), 0);
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), KB_ESPEC);
	T_EQ_INT(d.n, 1);
	T_CONTAINS(d.v[0].msg, "grid.x must be an integer expression");
	T_EQ_INT(d.v[0].line, 4);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* A tuned name in launch and bytes: the first value listed, then the -D
 * value in effect; a value that is not a number cannot be used; an arg
 * still may not use a tune. */
static void test_compile_spec__tune_in_expressions(void)
{
	const char *text = "//! arg M = 4096\n//! launch grid=(M * CLUSTER) block=(BLOCK)\n"
			   "//! bytes M * CLUSTER\n//! tune CLUSTER = 8, 2, 4\n//! tune BLOCK = 256, 512\n"
			   "//! tune OP = add, mul\n";
	kb_source src = mksrc("k.cu", text, KB_SRC_CUDA);
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	kb_launch_dims ld;
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), 0);
	T_EQ_INT(ld.grid[0], 4096 * 8);
	T_EQ_INT(ld.block[0], 256);
	T_EQ_INT(kb_compile_spec_set_tune(&s, "CLUSTER", "2"), 0);
	T_EQ_INT(kb_compile_spec_set_tune(&s, "BLOCK", "0x200"), 0);
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), 0);
	T_EQ_INT(ld.grid[0], 8192);
	T_EQ_INT(ld.block[0], 512);
	kb_value v;
	T_EQ_INT(kb_compile_spec_eval(&s, s.bytes, &v, &src, &d), 0);
	T_EQ_INT(v.i, 8192);
	T_EQ_INT(kb_compile_spec_set_tune(&s, "NOPE", "1"), KB_ENOTFOUND);
	T_EQ_INT(kb_compile_spec_set_tune(&s, "BLOCK", "wide"), 0);
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), KB_ESPEC);
	T_OK(d.n == 1 && strstr(d.v[0].msg, "tune 'BLOCK' is 'wide' here, not a number"));
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	T_ONE_ERROR("//! tune B = 4\n//! arg N = B * 2\n", 2, 13, 1, "undefined name 'B'");
}

static void test_compile_spec__launch_dims_errors(void)
{
	kb_spec s;
	kb_diags d = {0};
	kb_launch_dims ld;
	kb_source src = mksrc("k.cu", "//! arg N = 3\n", KB_SRC_CUDA);
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(kb_compile_spec_launch_dims(&s, &src, &ld, &d), KB_ESPEC);
	char *r = render(&d);
	T_EQ_STR(r, "k.cu: error: the spec has no launch line; add "
		    "`//! launch grid=(...) block=(...)`\n");
	free(r);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	T_ONE_ERROR("//! arg N = 0\n//! launch grid=(N) block=(256)\n", 2, 18, 1,
		    "grid.x must be positive (it is 0)");
	T_ONE_ERROR("//! launch grid=(1, 2.5) block=(256)\n", 1, 21, 3,
		    "grid.y must be an integer expression (it is 2.5)");
	T_ONE_ERROR("//! launch grid=1 block=(32) smem=-1\n", 1, 35, 2, "smem must be >= 0 (it is -1)");
}

/* ===== errors, one kind at a time ===== */

static void test_compile_spec__unknown_directive(void)
{
	T_ONE_ERROR("//! lauch grid=(1) block=(1)\n", 1, 5, 5,
		    "unknown directive 'lauch'; did you mean 'launch'?");
	T_ONE_ERROR("//!   kernal k\n", 1, 7, 6, "did you mean 'kernel'?");
	T_ONE_ERROR("//! frobnicate\n", 1, 5, 10, "unknown directive 'frobnicate' (known: kernel, "
		    "arg, in, out, launch, ref, tol, bytes, flops, sweep, tune, options, tensormap, arch, "
		    "require)");
	T_ONE_ERROR("//! = 3\n", 1, 5, 1, "expected a directive");
}

static void test_compile_spec__syntax_errors(void)
{
	T_ONE_ERROR("//! arg N 5\n", 1, 11, 1, "expected '=' and a value, found '5'");
	T_ONE_ERROR("//! arg N =\n", 1, 12, 1, "expected an expression at end of line");
	T_ONE_ERROR("//! arg N = 3 4\n", 1, 15, 1, "expected end of line, found '4'");
	T_ONE_ERROR("//! arg N = (3 + 4\n", 1, 19, 1, "expected ')' at end of line");
	T_ONE_ERROR("//! arg 3 = 4\n", 1, 9, 1, "expected an arg name, found '3'");
	T_ONE_ERROR("//! arg N = 12ab\n", 1, 13, 4, "invalid number '12ab'");
	T_ONE_ERROR("//! in x f32[4]\n", 1, 10, 3, "expected ':' and a type");
	T_ONE_ERROR("//! in x : f32[4\n", 1, 17, 1, "expected ',' or ']' at end of line");
	T_ONE_ERROR("//! in x : f32\n", 1, 15, 1, "expected '[' and the shape");
	T_ONE_ERROR("//! in x : f32[1,2,3,4,5,6,7,8,9]\n", 1, 32, 1, "too many dimensions (at most 8)");
	T_ONE_ERROR("//! launch grid=(1 block=(1)\n", 1, 20, 5, "expected ',' or ')', found 'block'");
	T_ONE_ERROR("//! launch grid=(1,2,3,4) block=1\n", 1, 24, 1, "at most 3 dimensions");
	T_ONE_ERROR("//! launch grid=(1) threads=(1)\n", 1, 21, 7, "unknown launch key 'threads'");
	T_ONE_ERROR("//! launch grid=(1) grid=(1) block=1\n", 1, 21, 4, "'grid' is given twice");
	T_ONE_ERROR("//! launch grid=(1)\n", 1, 5, 6, "launch needs block=(...)");
	T_ONE_ERROR("//! launch grid=()\n", 1, 18, 1, "expected an expression, found ')'");
	T_ONE_ERROR("//! kernel\n", 1, 11, 1, "expected a kernel name at end of line");
	T_ONE_ERROR("//! kernel k<int\n", 1, 13, 1, "unclosed '<'");
	T_ONE_ERROR("//! kernel k extra\n", 1, 14, 5, "expected end of line, found 'extra'");
	T_ONE_ERROR("//! tol rtol=1e-5 btol=3\n", 1, 19, 4, "unknown tolerance 'btol' (known: rtol, atol)");
	T_ONE_ERROR("//! tol\n", 1, 5, 3, "tol needs rtol= and/or atol=");
	T_ONE_ERROR("//! tol rtol=-1\n", 1, 14, 1, "rtol must be >= 0");
	T_ONE_ERROR("//! arg N = 2\n//! tol rtol=N\n", 2, 14, 1, "expected a number, not 'N'");
	T_ONE_ERROR("//! bytes\n", 1, 10, 1, "expected an expression");
	T_ONE_ERROR("//! flops \"abc\n", 1, 11, 4, "unterminated string");
	T_ONE_ERROR("//! sweep N\n", 1, 12, 1, "expected '=' and a list of values");
	T_ONE_ERROR("//! arg N = 1\n//! sweep N = 1,\n", 2, 17, 1, "expected an expression");
	T_ONE_ERROR("//! tune T = 1,,2\n", 1, 16, 1, "expected a value for T");
	T_ONE_ERROR("//! arg N = foo(1, 2)\n", 1, 13, 3, "unknown function 'foo' (known: cdiv, min, max)");
	T_ONE_ERROR("//! arg N = cdiv(1)\n", 1, 13, 7, "cdiv() takes 2 arguments, not 1");
	T_ONE_ERROR("//! arg N = max(1, 2, 3)\n", 1, 13, 12, "max() takes 2 arguments, not 3");
}

static void test_compile_spec__dtype_and_init_errors(void)
{
	T_ONE_ERROR("//! in x : f31[4]\n", 1, 12, 3, "unknown dtype 'f31'; did you mean 'f32'? "
		    "(known: f64, f32, f16, bf16, i64, i32, i16, i8, u8)");
	T_ONE_ERROR("//! in x : half[4]\n", 1, 12, 4, "did you mean 'f16'?");
	T_ONE_ERROR("//! in x : quux[4]\n", 1, 12, 4, "unknown dtype 'quux' (known:");
	T_ONE_ERROR("//! in x : f32[4] = randm(seed=1)\n", 1, 21, 5,
		    "unknown initializer 'randm'; did you mean 'randn'? (known: randn, rand, "
		    "arange, ones, zeros, file)");
	T_ONE_ERROR("//! in x : f32[4] = randn(sed=1)\n", 1, 27, 3,
		    "randn() has no argument 'sed' (known: mean, std, seed)");
	T_ONE_ERROR("//! in x : f32[4] = rand(0, 1, 2, 3)\n", 1, 35, 1, "rand() takes at most 3 arguments");
	T_ONE_ERROR("//! in x : f32[4] = ones(1)\n", 1, 26, 1, "ones() takes no arguments");
	T_ONE_ERROR("//! in x : f32[4] = rand(0, lo=1)\n", 1, 29, 1, "argument 'lo' of rand() is given twice");
	T_ONE_ERROR("//! in x : f32[4] = randn(seed=1.5)\n", 1, 32, 3, "seed must be a non-negative integer");
	T_ONE_ERROR("//! in x : f32[4] = rand(1, 0)\n", 1, 21, 4, "rand() needs lo < hi (got 1 and 0)");
	T_ONE_ERROR("//! in x : f32[4] = randn(0, -1)\n", 1, 21, 5, "randn() needs std >= 0");
	T_ONE_ERROR("//! arg N = 1\n//! in x : f32[4] = rand(N, 2)\n", 2, 26, 1,
		    "expected a number, not 'N' (this value cannot use args)");
	T_ONE_ERROR("//! in x : f32[4] = file()\n", 1, 26, 1, "file() needs a path");
	T_ONE_ERROR("//! in x : f32[4] = file(\"a\"\n", 1, 29, 1, "expected ')' at end of line");
	T_ONE_ERROR("//! out y : f32[4] = ones()\n", 1, 20, 1, "an output takes no initializer but zeros");
	T_ONE_ERROR("//! in x : f32[4] = randn() 7\n", 1, 29, 1, "expected end of line, found '7'");
}

static void test_compile_spec__name_errors(void)
{
	T_ONE_ERROR("//! in x : f32[M, N]\n//! arg N = 1\n", 1, 16, 1, "undefined name 'M'");
	T_ONE_ERROR("//! in x : f32[4]\n//! arg N = x\n", 2, 13, 1, "'x' is a tensor; expressions may use only args");
	T_ONE_ERROR("//! arg N = M\n//! arg M = 4\n", 1, 13, 1,
		    "'M' is used before its `//! arg` line (line 2); an arg may use only args above it");
	T_ONE_ERROR("//! arg N = N + 1\n", 1, 13, 1, "arg 'N' refers to itself");
	/* Other lines may use args defined anywhere. */
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(parse("//! in x : f32[N]\n//! launch grid=(N) block=(1)\n//! bytes N\n"
		       "//! arg N = 8\n", &s, &d), 0);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	T_ONE_ERROR("//! launch grid=(cdiv(Q, 2)) block=(1)\n", 1, 23, 1, "undefined name 'Q'");
	T_ONE_ERROR("//! flops 2 * F\n", 1, 15, 1, "undefined name 'F'");
	T_ONE_ERROR("//! in x : f32[4]\n//! sweep x = 1, 2\n", 2, 11, 1,
		    "sweep of 'x', which is not an arg");
	T_ONE_ERROR("//! arg N = 4\n//! sweep N = 1, K\n", 2, 18, 1, "undefined name 'K'");
	T_ONE_ERROR("//! arg N = 4\n//! sweep N = 1\n//! sweep N = 2\n", 3, 11, 1,
		    "duplicate sweep of 'N' (the first is at line 2)");
	T_ONE_ERROR("//! arg N = 4\n//! tune N = 1, 2\n", 2, 10, 1, "tune of 'N', which is an arg");
	T_ONE_ERROR("//! tune T = 1\n//! tune T = 2\n", 2, 10, 1, "duplicate tune of 'T'");
}

static void test_compile_spec__dims_errors(void)
{
	T_ONE_ERROR("//! arg N = 4\n//! in x : f32[N / 2.0]\n", 2, 16, 7,
		    "dimension 0 of 'x' must be an integer expression (it is 2)");
	T_ONE_ERROR("//! arg S = 0.5\n//! out y : f32[4, S]\n", 2, 20, 1,
		    "dimension 1 of 'y' must be an integer expression (it is 0.5)");
	T_ONE_ERROR("//! in x : f32[2 - 3]\n", 1, 16, 5, "dimension 0 of 'x' must be >= 0 (it is -1)");
}

static void test_compile_spec__duplicates(void)
{
	T_ONE_ERROR("//! arg N = 1\n//! arg N = 2\n", 2, 9, 1,
		    "duplicate name 'N' (first defined as an arg at line 1)");
	T_ONE_ERROR("//! in x : f32[1]\n//! out x : f32[1]\n", 2, 9, 1,
		    "duplicate name 'x' (first defined as a tensor at line 1)");
	T_ONE_ERROR("//! arg x = 1\n//! in x : f32[1]\n", 2, 8, 1, "first defined as an arg");
	T_ONE_ERROR("//! kernel a\n//! kernel b\n", 2, 5, 6, "duplicate `kernel` line (the first is at line 1)");
	T_ONE_ERROR("//! launch grid=1 block=1\n//! launch grid=2 block=1\n", 2, 5, 6,
		    "duplicate `launch` line");
	T_ONE_ERROR("//! ref kernel a\n//! ref kernel b\n", 2, 5, 3, "duplicate `ref` line");
	T_ONE_ERROR("//! tol rtol=1\n//! tol atol=1\n", 2, 5, 3, "duplicate `tol` line");
	T_ONE_ERROR("//! bytes 1\n//! bytes 2\n", 2, 5, 5, "duplicate `bytes` line");
	T_ONE_ERROR("//! flops 1\n//! flops 2\n", 2, 5, 5, "duplicate `flops` line");
}

static void test_compile_spec__ref_errors(void)
{
	T_ONE_ERROR("//! in x : f32[4]\n//! out y : f32[4]\n//! ref relu(x) y\n", 3, 17, 1,
		    "expected '->' and the output tensor(s), found 'y'");
	T_ONE_ERROR("//! ref\n", 1, 8, 1, "expected a reference");
	T_ONE_ERROR("//! out y : f32[4]\n//! ref relu(z) -> y\n", 2, 14, 1,
		    "undefined name 'z' in ref (not a tensor or an arg)");
	T_ONE_ERROR("//! in x : f32[4]\n//! ref relu(x) -> x\n", 2, 20, 1,
		    "ref output 'x' is an input; declare it with `//! out`");
	T_ONE_ERROR("//! in x : f32[4]\n//! ref relu(x) -> q\n", 2, 20, 1, "ref output 'q' is not a tensor");
	T_ONE_ERROR("//! in x : f32[4]\n//! out y : f32[4]\n//! ref relu(x y) -> y\n", 3, 16, 1,
		    "expected ',' or ')', found 'y'");
	T_ONE_ERROR("//! in x : f32[4]\n//! out y : f32[4]\n//! ref relu(=) -> y\n", 3, 14, 1,
		    "expected a tensor name, number or true/false, found '='");
	T_ONE_ERROR("//! in x : f32[4]\n//! out y : f32[4]\n//! ref relu(x) ->\n", 3, 19, 1,
		    "expected an output tensor at end of line");
	T_ONE_ERROR("//! in x : f32[4]\n//! out y : f32[4]\n//! ref softmax(x, dim=-a) -> y\n", 3, 25, 1,
		    "expected a number, found 'a'");
}

/* A syntax error does not make its name undefined for later lines. */
static void test_compile_spec__no_cascades(void)
{
	T_ONE_ERROR("//! arg N = 3 +\n//! in x : f32[N]\n//! launch grid=(N) block=(1)\n", 1, 16, 1,
		    "expected an expression at end of line");
	T_ONE_ERROR("//! in x : f32[4 = ones()\n//! out y : f32[4]\n//! ref relu(x) -> y\n", 1, 18, 1,
		    "expected ',' or ']'");
}

/* The example of the brief: three mistakes, three errors, in line order. */
static void test_compile_spec__three_mistakes(void)
{
	const char *text =
		"//! kernel  softmax_rows\n"
		"//! arg     M = 4096\n"
		"//! in      x : f31[M, N] = randn(seed=1)\n"
		"//! out     y : f32[M, N]\n"
		"//! lauch   grid=(M) block=(256)\n"
		"//! arg     N = 8192\n"
		"//! flops   5*M*K\n";
	kb_spec s;
	kb_diags d = {0};
	kb_source src = mksrc("softmax.cu", text, KB_SRC_CUDA);
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), KB_ESPEC);
	T_EQ_INT(kb_diag_count(&d, KB_DIAG_ERROR), 3);
	char *r = render(&d);
	T_EQ_STR(r,
		 "softmax.cu:3:17: error: unknown dtype 'f31'; did you mean 'f32'? (known: f64, f32, "
		 "f16, bf16, i64, i32, i16, i8, u8)\n"
		 " 3 | //! in      x : f31[M, N] = randn(seed=1)\n"
		 "   |                 ^~~\n"
		 "softmax.cu:5:5: error: unknown directive 'lauch'; did you mean 'launch'?\n"
		 " 5 | //! lauch   grid=(M) block=(256)\n"
		 "   |     ^~~~~\n"
		 "softmax.cu:7:17: error: undefined name 'K'\n"
		 " 7 | //! flops   5*M*K\n"
		 "   |                 ^\n");
	free(r);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

static void test_compile_spec__render_exact(void)
{
	const char *text = "//! arg N = 8\n//! in x : f32[N / 3.0, N]\n//! sweep  Q = 1, 2\n";
	kb_spec s;
	kb_diags d = {0};
	kb_source src = mksrc("dir/k.cu", text, KB_SRC_CUDA);
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), KB_ESPEC);
	char *r = render(&d);
	T_EQ_STR(r,
		 "dir/k.cu:2:16: error: dimension 0 of 'x' must be an integer expression (it is 2.66667)\n"
		 " 2 | //! in x : f32[N / 3.0, N]\n"
		 "   |                ^~~~~~~\n"
		 "dir/k.cu:3:12: error: sweep of 'Q', which is not an arg (sweep changes a `//! arg`; "
		 "use `//! tune` for compile-time macros)\n"
		 " 3 | //! sweep  Q = 1, 2\n"
		 "   |            ^\n");
	free(r);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* ===== require lines ===== */

/* Each comparison, integers and floats; the first false line is named with
 * its values, and args and tune values change what holds. */
static void test_compile_spec__require(void)
{
	const char *text = "//! arg N = 131072\n//! tune CLUSTER = 4, 8\n//! tune THREADS = 512\n"
			   "//! require N <= CLUSTER * THREADS * 8 * 4   // registers\n"
			   "//! require N % 8 == 0\n";
	kb_source src = mksrc("k.cu", text, KB_SRC_CUDA);
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_INT(s.nrequires, 2);
	T_EQ_INT(s.requires[0].cmp, KB_CMP_LE);
	T_EQ_STR(s.requires[0].lhs_text, "N");
	T_EQ_STR(s.requires[0].rhs_text, "CLUSTER * THREADS * 8 * 4");
	T_EQ_INT(s.requires[0].loc.line, 4);
	T_EQ_INT(s.requires[0].loc.col, 13);
	T_EQ_INT(s.requires[0].len, 30);
	T_EQ_INT(s.requires[1].cmp, KB_CMP_EQ);
	char *why = NULL;
	int which = -1;
	T_EQ_INT(kb_compile_spec_requires(&s, &src, &why, &which, &d), KB_EUNSUP);
	T_EQ_INT(which, 0);
	T_EQ_STR(why, "requires N <= CLUSTER * THREADS * 8 * 4: N = 131072, "
		 "CLUSTER * THREADS * 8 * 4 = 65536 (CLUSTER = 4, THREADS = 512)");
	free(why);
	T_EQ_INT(kb_compile_spec_set_tune(&s, "CLUSTER", "8"), 0);
	T_EQ_INT(kb_compile_spec_requires(&s, &src, &why, &which, &d), 0);
	T_OK(why == NULL);
	T_EQ_INT(kb_compile_spec_set_arg(&s, "N", (kb_value){.i = 100003}), 0);
	T_EQ_INT(kb_compile_spec_requires(&s, &src, &why, NULL, &d), KB_EUNSUP);
	T_EQ_STR(why, "requires N % 8 == 0: N % 8 = 3 (N = 100003)");
	free(why);
	T_EQ_INT(d.n, 0);
	kb_compile_spec_free(&s);
	static const struct { const char *cond; bool holds; } cases[] = {
		{"A <= 7", true}, {"A <= 6", false}, {"A < 7", false}, {"A < 8", true},
		{"A >= 7", true}, {"A >= 8", false}, {"A > 6", true}, {"A > 7", false},
		{"A == 7", true}, {"A == 7.5", false}, {"A != 7", false}, {"A != B", true},
		{"A / 2.0 == 3.5", true}, {"B < 0", true}, {"-A < B", true}, {"min(A, B) >= -3", true},
		{"A==7", true}, {"A!=7", false}, {"A<=B", false}, {"A>=B", true},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(cases); i++) {
		char t[128];
		snprintf(t, sizeof t, "//! arg A = 7\n//! arg B = -3\n//! require %s\n", cases[i].cond);
		kb_source c = mksrc("k.cu", t, KB_SRC_CUDA);
		int prc = kb_compile_spec_parse(&c, &s, &d);
		int rc = kb_compile_spec_requires(&s, &c, &why, NULL, &d);
		if (prc || d.n || rc != (cases[i].holds ? 0 : KB_EUNSUP))
			T_FAIL_AT("require %s: parse %d, %d diags, rc %d", cases[i].cond, prc, d.n, rc);
		free(why);
		kb_compile_spec_free(&s);
		kb_diags_free(&d);
	}
	/* a value that cannot be evaluated with these args is a spec error */
	src = mksrc("k.cu", "//! arg B = 4\n//! require 8 % B == 0\n", KB_SRC_CUDA);
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(kb_compile_spec_set_arg(&s, "B", (kb_value){.i = 0}), 0);
	T_EQ_INT(kb_compile_spec_requires(&s, &src, &why, NULL, &d), KB_ESPEC);
	T_OK(why == NULL);
	T_OK(d.n == 1 && strstr(d.v[0].msg, "division by zero") && d.v[0].col == 17);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

static void test_compile_spec__require_errors(void)
{
	T_ONE_ERROR("//! require\n", 1, 5, 7, "require needs a condition, e.g. `//! require N % 8 == 0`");
	T_ONE_ERROR("//! arg N = 1\n//! require N\n", 2, 14, 1,
		    "expected a comparison (<=, <, >=, >, == or !=) at end of line");
	T_ONE_ERROR("//! arg N = 1\n//! require N 2\n", 2, 15, 1,
		    "expected a comparison (<=, <, >=, >, == or !=), found '2'");
	T_ONE_ERROR("//! arg N = 1\n//! require N = 1\n", 2, 15, 1,
		    "'=' is not a comparison; did you mean '=='?");
	T_ONE_ERROR("//! arg N = 1\n//! require N => 1\n", 2, 15, 2,
		    "'=>' is not a comparison; did you mean '>='?");
	T_ONE_ERROR("//! arg N = 1\n//! require N =< 1\n", 2, 15, 2,
		    "'=<' is not a comparison; did you mean '<='?");
	T_ONE_ERROR("//! arg N = 1\n//! require N ! 1\n", 2, 15, 1,
		    "'!' is not a comparison; did you mean '!='?");
	T_ONE_ERROR("//! arg N = 1\n//! require N <=\n", 2, 17, 1, "expected an expression at end of line");
	T_ONE_ERROR("//! arg N = 1\n//! require N < = 1\n", 2, 17, 1, "expected an expression, found '='");
	T_ONE_ERROR("//! arg N = 1\n//! require <= N\n", 2, 13, 1, "expected an expression, found '<'");
	T_ONE_ERROR("//! arg N = 1\n//! require 0 < N < 4\n", 2, 19, 1,
		    "one comparison per require line, found '<' after it");
	T_ONE_ERROR("//! require Q <= 4\n", 1, 13, 1, "undefined name 'Q'");
	T_ONE_ERROR("//! in x : f32[4]\n//! require 4 <= x\n", 2, 18, 1,
		    "'x' is a tensor; expressions may use only args");
	T_ONE_ERROR("//! arg N = 0\n//! require 8 % N == 0\n", 2, 17, 1, "division by zero");
	T_ONE_ERROR("//! tune OP = add\n//! require OP == 1\n", 2, 13, 2,
		    "tune 'OP' is 'add' here, not a number");
	/* the caret under the comparison, as every spec error */
	kb_spec s;
	kb_diags d = {0};
	kb_source src = mksrc("dir/k.cu", "//! arg N = 8\n//! require N = 8\n", KB_SRC_CUDA);
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), KB_ESPEC);
	char *r = render(&d);
	T_EQ_STR(r, "dir/k.cu:2:15: error: '=' is not a comparison; did you mean '=='?\n"
		    " 2 | //! require N = 8\n"
		    "   |               ^\n");
	free(r);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* ===== compiler options ===== */

/* Every word of every `//! options` line, in order, with its column. */
static void test_compile_spec__options_words(void)
{
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(parse("//! options -use_fast_math\t --maxrregcount=64   // why\n"
		       "//! arg N = 4\n"
		       "//!   options -Xptxas=-O1 -DBLOCK=128\n", &s, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_INT(s.noptions, 4);
	if (s.noptions == 4) {
		T_EQ_STR(s.options[0].text, "-use_fast_math");
		T_EQ_INT(s.options[0].loc.line, 1);
		T_EQ_INT(s.options[0].loc.col, 13);
		T_EQ_INT(s.options[0].len, 14);
		T_EQ_STR(s.options[1].text, "--maxrregcount=64");
		T_EQ_INT(s.options[1].loc.col, 29);
		T_EQ_INT(s.options[1].len, 17);
		T_EQ_STR(s.options[2].text, "-Xptxas=-O1");
		T_EQ_INT(s.options[2].loc.line, 3);
		T_EQ_INT(s.options[2].loc.col, 15);
		T_EQ_STR(s.options[3].text, "-DBLOCK=128");
		T_EQ_INT(s.options[3].loc.col, 27);
	}
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* What kbench refuses, and values of the wrong shape: an error at the word,
 * the word left out.  Words the table does not know are the compiler's to
 * judge (test_compile_build), not the parser's. */
static void test_compile_spec__options_refused(void)
{
	T_ONE_ERROR("//! options -G\n", 1, 13, 2, "kbench does not take -G: it turns device "
		    "optimisation off");
	T_ONE_ERROR("//! options -use_fast_math --gpu-architecture=sm_80\n", 1, 28, 24,
		    "kbench does not take --gpu-architecture: it sets the target itself (use "
		    "--arch sm_XX)");
	T_ONE_ERROR("//! options -lineinfo\n", 1, 13, 9, "it always compiles with it");
	T_ONE_ERROR("//! options -rdc=true\n", 1, 13, 9, "relocatable code needs a device link");
	T_ONE_ERROR("//! options -dlto\n", 1, 13, 5, "kbench needs a cubin");
	T_ONE_ERROR("//! options -I/opt/include\n", 1, 13, 14, "not be part of the compile cache's key");
	T_ONE_ERROR("//! options -ftz=maybe\n", 1, 13, 10, "-ftz takes true or false (e.g. -ftz=true)");
	T_ONE_ERROR("//! options -maxrregcount=lots\n", 1, 13, 18,
		    "-maxrregcount takes a whole number (e.g. -maxrregcount=64)");
	T_ONE_ERROR("//! options -maxrregcount\n", 1, 13, 13, "takes a whole number");
	T_ONE_ERROR("//! options --use_fast_math=1\n", 1, 13, 17, "--use_fast_math takes no value");
	T_ONE_ERROR("//! options -Xptxas\n", 1, 13, 7, "-Xptxas needs a value, in the same word "
		    "(e.g. -Xptxas=-O1)");
	T_ONE_ERROR("//! options -Xptxas -O1\n", 1, 13, 11, "one option per word: write -Xptxas=-O1");
	T_ONE_ERROR("//! options use_fast_math\n", 1, 13, 13, "'use_fast_math' is not an option");
	T_ONE_ERROR("//! options\n", 1, 5, 7, "options needs at least one compiler option");
	kb_spec s;
	kb_diags d = {0};
	parse("//! options -use_fast_math -G -ftz=true\n", &s, &d);
	T_EQ_INT(d.n, 1);
	T_EQ_INT(s.noptions, 2); /* -G never reaches the compiler */
	if (s.noptions == 2)
		T_EQ_STR(s.options[1].text, "-ftz=true");
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* A .ptx file's options go to nvJitLink: its table, its refusals. */
static void test_compile_spec__options_ptx(void)
{
	kb_source src = mksrc("k.ptx", "//! options -maxrregcount=32 -fma=false -O3 -g -ftz=yes\n",
			      KB_SRC_PTX);
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), KB_ESPEC);
	T_EQ_INT(d.n, 2);
	if (d.n == 2) {
		T_EQ_INT(d.v[0].col, 45);
		T_CONTAINS(d.v[0].msg, "kbench does not take -g");
		T_EQ_INT(d.v[1].col, 48);
		T_CONTAINS(d.v[1].msg, "-ftz takes true or false");
	}
	T_EQ_INT(s.noptions, 3);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
	/* NVRTC's -fmad is not nvJitLink's: the compiler says so (build test). */
	src = mksrc("k.ptx", "//! options -fmad=false\n", KB_SRC_PTX);
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* Existing diagnostics in the list are kept and not counted. */
static void test_compile_spec__appends_to_diags(void)
{
	kb_spec s;
	kb_diags d = {0};
	kb_diag_add(&d, KB_DIAG_ERROR, "z.cu", NULL, 9, 1, 1, "earlier");
	T_EQ_INT(parse("//! arg N = 1\n", &s, &d), 0);
	T_EQ_INT(d.n, 1);
	kb_compile_spec_free(&s);
	T_EQ_INT(parse("//! arg N = \n", &s, &d), KB_ESPEC);
	T_EQ_INT(d.n, 2);
	T_EQ_STR(d.v[0].msg, "earlier");
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* ===== binding ===== */

#define P_PTR(n, t, e, c, line, col) {(char *)(n), (char *)(t), (char *)(e), true, (c), false, {"k.cu", (line), (col)}}
#define P_VAL(n, t, line, col) {(char *)(n), (char *)(t), (char *)(t), false, false, false, {"k.cu", (line), (col)}}

static kb_kernel mkkernel(const char *name, kb_param *params, int n, int line)
{
	kb_kernel k = {0};
	k.name = (char *)name;
	k.params = params;
	k.nparams = n;
	k.line = line;
	return k;
}

/* Parses text, binds it to ks; returns bind's rc (parse must succeed). */
static int bind_text(const char *text, kb_kernels *ks, kb_src_kind kind, kb_diags *d,
		     const kb_kernel **chosen)
{
	kb_spec s;
	kb_source src = mksrc("k.cu", text, kind);
	int rc = kb_compile_spec_parse(&src, &s, d);
	if (rc) {
		char *r = render(d);
		printf("  parse failed:\n%s", r);
		free(r);
	} else {
		rc = kb_compile_bind(&s, ks, &src, chosen, d);
	}
	kb_compile_spec_free(&s);
	return rc;
}

/* Binds text to one kernel k(const float *x, float *y, int n) at line 20,
 * and checks for exactly one diagnostic of level lv with msg at line:col. */
static void bind_one(int at, const char *text, kb_diag_level lv, int line, int col, const char *msg)
{
	kb_param p[] = {P_PTR("x", "const float *", "float", true, 20, 20),
			P_PTR("y", "float *", "float", false, 20, 30), P_VAL("n", "int", 20, 37)};
	kb_kernel k = mkkernel("k", p, 3, 20);
	kb_kernels ks = {&k, 1, 1};
	kb_diags d = {0};
	int rc = bind_text(text, &ks, KB_SRC_CUDA, &d, NULL);
	const kb_diag *g = d.n == 1 ? &d.v[0] : NULL;
	if (rc != (lv == KB_DIAG_ERROR ? KB_ESPEC : 0) || !g || g->level != lv || g->line != line ||
	    g->col != col || !strstr(g->msg, msg)) {
		char *r = render(&d);
		T_FAIL_AT("(line %d) expected %d:%d '%s' for:\n%sgot (rc %d):\n%s", at, line, col,
			  msg, text, rc, r);
		free(r);
	}
	kb_diags_free(&d);
}

#define T_BIND_ONE(...) bind_one(__LINE__, __VA_ARGS__)

#define XY_N "//! arg n = 16\n//! in x : f32[n]\n//! out y : f32[n]\n"

static void test_compile_spec__bind_examples(void)
{
	/* softmax.cu: two kernels, the spec names one, the ref is built-in. */
	kb_buf text = KB_BUF_INIT;
	kb_source src;
	T_EQ_INT(load("kernels/softmax.cu", &text, &src), 0);
	kb_param rows[] = {P_PTR("x", "const float *__restrict__", "float", true, 50, 26),
			   P_PTR("y", "float *__restrict__", "float", false, 50, 59),
			   P_VAL("M", "int", 50, 81), P_VAL("N", "int", 50, 88)};
	kb_param naive[] = {P_PTR("x", "const float *", "float", true, 70, 40),
			    P_PTR("y", "float *", "float", false, 70, 50),
			    P_VAL("M", "int", 70, 57), P_VAL("N", "int", 70, 64)};
	kb_kernel kv[] = {mkkernel("softmax_rows", rows, 4, 50), mkkernel("softmax_naive", naive, 4, 70)};
	kb_kernels ks = {kv, 2, 2};
	kb_spec s;
	kb_diags d = {0};
	const kb_kernel *chosen = NULL;
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(kb_compile_bind(&s, &ks, &src, &chosen, &d), 0);
	T_OK(chosen == &kv[0]);
	T_EQ_INT(d.n, 0);
	kb_compile_spec_free(&s);
	kb_buf_free(&text);

	/* vector_add.cu: the only kernel, chosen by default. */
	T_EQ_INT(load("kernels/vector_add.cu", &text, &src), 0);
	kb_param va[] = {P_PTR("a", "const float *__restrict__", "float", true, 11, 40),
			 P_PTR("b", "const float *__restrict__", "float", true, 11, 70),
			 P_PTR("c", "float *__restrict__", "float", false, 12, 27),
			 P_VAL("n", "int", 12, 34)};
	kb_kernel vk = mkkernel("vector_add", va, 4, 11);
	kb_kernels vks = {&vk, 1, 1};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(kb_compile_bind(&s, &vks, &src, &chosen, &d), 0);
	T_OK(chosen == &vk);
	T_EQ_INT(d.n, 0);
	kb_compile_spec_free(&s);
	kb_buf_free(&text);

	/* saxpy.ptx: .u64 params are pointers, f32/u32 scalars. */
	T_EQ_INT(load("kernels/saxpy.ptx", &text, &src), 0);
	kb_param sp[] = {P_VAL("a", "f32", 22, 14), P_PTR("x", "u64", "u64", false, 23, 14),
			 P_PTR("y", "u64", "u64", false, 24, 14), P_PTR("out", "u64", "u64", false, 25, 14),
			 P_VAL("n", "u32", 26, 14)};
	kb_kernel sk = mkkernel("saxpy", sp, 5, 21);
	kb_kernels sks = {&sk, 1, 1};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(kb_compile_bind(&s, &sks, &src, &chosen, &d), 0);
	T_OK(chosen == &sk);
	T_EQ_INT(d.n, 0);
	kb_compile_spec_free(&s);
	kb_buf_free(&text);
	kb_diags_free(&d);
}

static void test_compile_spec__bind_choose_kernel(void)
{
	kb_param p[] = {P_VAL("n", "int", 0, 0)};
	kb_kernel kv[] = {mkkernel("a", p, 1, 3), mkkernel("softmax", p, 1, 5)};
	kb_kernels ks = {kv, 2, 2};
	kb_diags d = {0};
	const kb_kernel *chosen = NULL;
	T_EQ_INT(bind_text("//! arg n = 1\n", &ks, KB_SRC_CUDA, &d, &chosen), KB_ESPEC);
	T_OK(chosen == NULL);
	T_EQ_INT(d.n, 1);
	T_EQ_INT(d.v[0].line, 1);
	T_EQ_INT(d.v[0].col, 1);
	T_EQ_STR(d.v[0].msg, "this file has 2 kernels (a, softmax); add `//! kernel NAME` to choose one");
	kb_diags_free(&d);

	T_EQ_INT(bind_text("//! arg n = 1\n//! kernel softmax<float, 256>\n", &ks, KB_SRC_CUDA, &d,
			   &chosen), 0);
	T_OK(chosen == &kv[1]);
	T_EQ_INT(d.n, 0);

	T_EQ_INT(bind_text("//! arg n = 1\n//! kernel  sofmax\n", &ks, KB_SRC_CUDA, &d, &chosen),
		 KB_ESPEC);
	char *r = render(&d);
	T_EQ_STR(r, "k.cu:2:13: error: no kernel named 'sofmax' in this file (kernels: a, softmax)\n"
		    " 2 | //! kernel  sofmax\n"
		    "   |             ^~~~~~\n");
	free(r);
	kb_diags_free(&d);

	kb_kernels none = {NULL, 0, 0};
	T_EQ_INT(bind_text("//! arg n = 1\n", &none, KB_SRC_CUDA, &d, &chosen), KB_ESPEC);
	T_EQ_STR(d.v[0].msg, "no kernel in this file (no __global__ function)");
	kb_diags_free(&d);
	T_EQ_INT(bind_text("//! arg n = 1\n", &none, KB_SRC_PTX, &d, &chosen), KB_ESPEC);
	T_EQ_STR(d.v[0].msg, "no kernel in this file (no .entry)");
	kb_diags_free(&d);

	kb_kernel twins[] = {mkkernel("f", p, 1, 3), mkkernel("f", p, 1, 5)};
	kb_kernels tw = {twins, 2, 2};
	T_EQ_INT(bind_text("//! kernel f\n//! arg n = 1\n", &tw, KB_SRC_CUDA, &d, &chosen), KB_ESPEC);
	T_CONTAINS(d.v[0].msg, "'f' names 2 kernels (overloads)");
	kb_diags_free(&d);
}

static void test_compile_spec__bind_params(void)
{
	/* All bound: no diagnostics. */
	T_BIND_ONE(XY_N "//! in z : f32[n]\n", KB_DIAG_WARNING, 4, 8,
		   "tensor 'z' is not a parameter of k(); it is allocated but never passed");
	T_BIND_ONE("//! in x : f32[4]\n//! out y : f32[4]\n", KB_DIAG_ERROR, 20, 37,
		   "parameter 'n' (int) of k() is not bound; add `//! arg n = ...`");
	T_BIND_ONE("//! arg n = 4\n//! out y : f32[4]\n", KB_DIAG_ERROR, 20, 20,
		   "parameter 'x' (const float *) of k() is not bound; add `//! in x : f32[...]`");
	T_BIND_ONE("//! arg n = 4\n//! in x : f32[4]\n", KB_DIAG_ERROR, 20, 30,
		   "add `//! in y : f32[...]` or `//! out y : f32[...]`");
	T_BIND_ONE("//! arg n = 4\n//! arg x = 1\n//! out y : f32[4]\n", KB_DIAG_ERROR, 20, 20,
		   "parameter 'x' of k() is a pointer (const float *), but 'x' is an arg");
	T_BIND_ONE("//! in n : i32[1]\n//! in x : f32[4]\n//! out y : f32[4]\n", KB_DIAG_ERROR, 20, 37,
		   "parameter 'n' of k() is a scalar (int), but 'n' is a tensor");
	T_BIND_ONE("//! arg n = 16\n//! in x : f16[n]\n//! out y : f32[n]\n", KB_DIAG_ERROR, 2, 8,
		   "tensor 'x' is f16, but parameter 'x' of k() is 'const float *' (f32)");
	T_BIND_ONE("//! arg n = 16\n//! out x : f32[n]\n//! out y : f32[n]\n", KB_DIAG_ERROR, 2, 9,
		   "'x' is an output, but parameter 'x' of k() is 'const float *', a pointer to const: "
		   "the kernel cannot write its output");
	T_BIND_ONE("//! arg n = 2.5\n//! in x : f32[4]\n//! out y : f32[4]\n", KB_DIAG_ERROR, 1, 9,
		   "arg 'n' is 2.5, but parameter 'n' of k() is 'int', an integer");
	/* An input may be written by a non-const pointer. */
	T_BIND_ONE(XY_N "//! in w : f32[1]\n", KB_DIAG_WARNING, 4, 8, "tensor 'w'");

	/* Without a place for the parameter: the declaration line, column 1. */
	kb_param p[] = {P_VAL("count", "unsigned int", 0, 0), P_PTR("buf", "T *", "T", false, 0, 0)};
	kb_kernel k = mkkernel("tk", p, 2, 7);
	kb_kernels ks = {&k, 1, 1};
	kb_diags d = {0};
	const char *text = "//! out buf : bf16[4]\n\n\n\n\n\n"
			   "template <typename T> __global__ void tk(unsigned int count, T *buf)\n";
	T_EQ_INT(bind_text(text, &ks, KB_SRC_CUDA, &d, NULL), KB_ESPEC);
	char *r = render(&d);
	T_EQ_STR(r, "k.cu:7:1: error: parameter 'count' (unsigned int) of tk() is not bound; "
		    "add `//! arg count = ...`\n"
		    " 7 | template <typename T> __global__ void tk(unsigned int count, T *buf)\n"
		    "   | ^\n");
	free(r);
	kb_diags_free(&d);
	/* Template element types are not checked; unsigned is i32-compatible. */
	kb_param q[] = {P_PTR("buf", "T *", "T", false, 0, 0), P_PTR("u", "unsigned *", "unsigned", false, 0, 0)};
	kb_kernel k2 = mkkernel("tk", q, 2, 1);
	kb_kernels ks2 = {&k2, 1, 1};
	T_EQ_INT(bind_text("//! out buf : bf16[4]\n//! in u : i32[4]\n", &ks2, KB_SRC_CUDA, &d, NULL), 0);
	T_EQ_INT(d.n, 0);
	/* PTX: pointers carry no dtype; an integer scalar rejects a float arg. */
	kb_param pp[] = {P_PTR("x", "u64", "u64", false, 2, 3), P_VAL("n", "u32", 3, 3)};
	kb_kernel pk = mkkernel("e", pp, 2, 1);
	kb_kernels pks = {&pk, 1, 1};
	T_EQ_INT(bind_text("//! in x : f16[4]\n//! arg n = 4\n", &pks, KB_SRC_PTX, &d, NULL), 0);
	T_EQ_INT(bind_text("//! in x : f16[4]\n//! arg n = 0.5\n", &pks, KB_SRC_PTX, &d, NULL), KB_ESPEC);
	T_EQ_INT(d.n, 1);
	T_CONTAINS(d.v[0].msg, "arg 'n' is 0.5, but parameter 'n' of e() is 'u32', an integer");
	kb_diags_free(&d);
}

/* A tensormap line cut short before its tensor is an error, not a crash
 * (found by tests/fuzz/fuzz_spec.c). */
static void test_compile_spec__tensormap_no_tensor(void)
{
	const char *texts[] = {"//! tensormap tx\n", "//! tensormap tx :\n", "//! tensormap tx : 5\n"};
	for (size_t i = 0; i < KB_ARRAY_LEN(texts); i++) {
		kb_spec s;
		kb_diags d = {0};
		T_EQ_INT(parse(texts[i], &s, &d), KB_ESPEC);
		T_OK(kb_diag_count(&d, KB_DIAG_ERROR) >= 1);
		kb_compile_spec_free(&s);
		kb_diags_free(&d);
	}
}

/* `//! tensormap`: parsed, checked against its tensor, bound to a
 * CUtensorMap parameter and only to one. */
static void test_compile_spec__tensormap(void)
{
	const char *base = "//! arg M = 256\n//! in a : bf16[M, 64]\n";
	char text[512];
	kb_spec s;
	kb_diags d = {0};
	snprintf(text, sizeof text, "%s//! tensormap ta : a box=(M / 2, 64) swizzle=128\n", base);
	T_EQ_INT(parse(text, &s, &d), 0);
	T_EQ_INT(s.ntmaps, 1);
	T_EQ_STR(s.tmaps[0].name, "ta");
	T_EQ_STR(s.tmaps[0].tensor, "a");
	T_EQ_INT(s.tmaps[0].nbox, 2);
	T_EQ_INT(s.tmaps[0].swizzle, 128);
	kb_value v;
	T_EQ_INT(kb_compile_spec_eval(&s, s.tmaps[0].box[0], &v, NULL, NULL), 0);
	T_EQ_INT(v.i, 128);
	kb_compile_spec_free(&s);
	snprintf(text, sizeof text, "%s//! tensormap ta : a box=(8, 8)\n", base);
	T_EQ_INT(parse(text, &s, &d), 0);
	T_EQ_INT(s.tmaps[0].swizzle, 0);
	T_OK(!s.tmaps[0].zero_unaligned); /* a tensor TMA cannot describe fails the run */
	kb_compile_spec_free(&s);
	/* unaligned=zero: such a tensor's map is passed as zeros (the tile DSL's wgmma) */
	snprintf(text, sizeof text, "%s//! tensormap ta : a box=(8, 8) swizzle=128 unaligned=zero\n", base);
	T_EQ_INT(parse(text, &s, &d), 0);
	T_OK(s.tmaps[0].zero_unaligned);
	T_EQ_INT(s.tmaps[0].swizzle, 128);
	kb_compile_spec_free(&s);
	/* fewer box dims than the tensor's: its leading dims read as one (src/gpu/tensormap.c) */
	snprintf(text, sizeof text, "%s//! tensormap ta : a box=(8)\n", base);
	T_EQ_INT(parse(text, &s, &d), 0);
	T_EQ_INT(s.tmaps[0].nbox, 1);
	kb_compile_spec_free(&s);
	snprintf(text, sizeof text, "%s//! tensormap ta : a unaligned=error, box=(8, 8)\n", base);
	T_EQ_INT(parse(text, &s, &d), 0);
	T_OK(!s.tmaps[0].zero_unaligned);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);

	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : b box=(4, 4)\n", 2, 20, 1,
		    "tensormap 'ta' describes 'b', which is not a tensor of this spec");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : a box=(4, 4, 4)\n", 2, 20, 1,
		    "'a' has 2 dims but the box has 3");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : a box=(4, 4) swizzle=16\n", 2, 41, 2,
		    "swizzle is none, 32, 64 or 128 (bytes), got '16'");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : a\n", 2, 5, 9,
		    "tensormap needs box=(...)");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap a : a box=(4, 4)\n", 2, 15, 1,
		    "duplicate name 'a' (first defined as a tensor at line 1)");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : a box=(4, 0)\n", 2, 30, 1,
		    "box extent 1 of tensormap 'ta' must be positive");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : a box=(4, 4) tile=3\n", 2, 33, 4,
		    "unknown tensormap key 'tile'");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : a box=(4, 4) unaligned=pad\n", 2, 43, 3,
		    "unaligned is zero or error, got 'pad'");
	T_ONE_ERROR("//! in a : f32[4, 4]\n//! tensormap ta : a box=(4, 4) unaligned=zero unaligned=zero\n",
		    2, 48, 9, "'unaligned' is given twice");

	/* `//! arch`: one target, checked; given once. */
	T_EQ_INT(parse("//! arch sm_90a\n", &s, &d), 0);
	T_EQ_STR(s.arch, "sm_90a");
	kb_compile_spec_free(&s);
	T_ONE_ERROR("//! arch sm_9x\n", 1, 10, 5, "'sm_9x' is not an architecture");
	T_ONE_ERROR("//! arch sm_90a sm_80\n", 1, 17, 1, "arch takes one target");
	T_ONE_ERROR("//! arch\n", 1, 5, 4, "arch needs a target");

	/* `sm_count`: the GPU's SMs in a launch line (132 until the runner sets it). */
	T_EQ_INT(parse("//! arg n = 1000\n//! launch grid=(min(sm_count, n)) block=(384)\n", &s, &d), 0);
	kb_launch_dims ld;
	T_EQ_INT(kb_compile_spec_launch_dims(&s, NULL, &ld, NULL), 0);
	T_EQ_INT((int)ld.grid[0], 132);
	s.sm_count = 114;
	T_EQ_INT(kb_compile_spec_launch_dims(&s, NULL, &ld, NULL), 0);
	T_EQ_INT((int)ld.grid[0], 114);
	kb_compile_spec_free(&s);
	T_ONE_ERROR("//! arg n = sm_count\n", 1, 13, 8, "undefined name 'sm_count'");

	/* Binding: a CUtensorMap parameter needs the line; the line needs it. */
	kb_param p[] = {P_VAL("ta", "const CUtensorMap", 5, 40), P_PTR("c", "float *", "float", false, 5, 60)};
	kb_kernel k = mkkernel("g", p, 2, 5);
	kb_kernels ks = {&k, 1, 1};
	const char *outs = "//! in a : bf16[128, 64]\n//! out c : f32[4]\n";
	snprintf(text, sizeof text, "%s//! tensormap ta : a box=(64, 64)\n", outs);
	T_EQ_INT(bind_text(text, &ks, KB_SRC_CUDA, &d, NULL), 0);
	T_EQ_INT(d.n, 0); /* a reaches the kernel through ta: no "never passed" warning */
	kb_diags_free(&d);
	T_EQ_INT(bind_text(outs, &ks, KB_SRC_CUDA, &d, NULL), KB_ESPEC);
	T_EQ_INT(d.n >= 1, 1);
	T_CONTAINS(d.v[d.n - 1].msg, "parameter 'ta' (const CUtensorMap) of g() is not bound; add "
		   "`//! tensormap ta : TENSOR box=(...)`");
	kb_diags_free(&d);
	kb_param q[] = {P_PTR("ta", "const float *", "float", true, 5, 40), P_PTR("c", "float *", "float", false, 5, 60)};
	kb_kernel k2 = mkkernel("g", q, 2, 5);
	kb_kernels ks2 = {&k2, 1, 1};
	T_EQ_INT(bind_text(text, &ks2, KB_SRC_CUDA, &d, NULL), KB_ESPEC);
	T_CONTAINS(d.v[0].msg, "'ta' is a tensormap, but parameter 'ta' of g() is 'const float *'");
	kb_diags_free(&d);
	snprintf(text, sizeof text, "%s//! tensormap ta : a box=(64, 64)\n//! tensormap tb : a box=(8, 8)\n", outs);
	T_EQ_INT(bind_text(text, &ks, KB_SRC_CUDA, &d, NULL), KB_ESPEC);
	T_CONTAINS(d.v[0].msg, "tensormap 'tb' is not a parameter of g()");
	kb_diags_free(&d);
}

static void test_compile_spec__bind_ref_kernel(void)
{
	kb_param p[] = {P_VAL("n", "int", 0, 0)};
	kb_kernel kv[] = {mkkernel("fast", p, 1, 3), mkkernel("naive", p, 1, 5)};
	kb_kernels ks = {kv, 2, 2};
	kb_diags d = {0};
	T_EQ_INT(bind_text("//! kernel fast\n//! arg n = 1\n//! ref kernel naive\n", &ks, KB_SRC_CUDA,
			   &d, NULL), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_INT(bind_text("//! kernel fast\n//! arg n = 1\n//! ref kernel slow<int>\n", &ks,
			   KB_SRC_CUDA, &d, NULL), KB_ESPEC);
	char *r = render(&d);
	T_EQ_STR(r, "k.cu:3:16: error: reference kernel 'slow' is not in this file (kernels: fast, naive)\n"
		    " 3 | //! ref kernel slow<int>\n"
		    "   |                ^~~~\n");
	free(r);
	kb_diags_free(&d);
	T_EQ_INT(bind_text("//! kernel fast\n//! arg n = 1\n//! ref kernel fast\n", &ks, KB_SRC_CUDA,
			   &d, NULL), 0);
	T_EQ_INT(kb_diag_count(&d, KB_DIAG_WARNING), 1);
	T_CONTAINS(d.v[0].msg, "compares it with itself");
	kb_diags_free(&d);
}

/* Binds a spec whose params are all the tensors and args by name to a
 * kernel with no parameters (so only the ref is checked); one error expected. */
static void ref_case(const char *text, int line, int col, int len, const char *msg)
{
	kb_kernel k = mkkernel("k", NULL, 0, 1);
	kb_kernels ks = {&k, 1, 1};
	kb_diags d = {0};
	int rc = bind_text(text, &ks, KB_SRC_CUDA, &d, NULL);
	int errors = kb_diag_count(&d, KB_DIAG_ERROR);
	if (!msg) {
		if (rc != 0 || errors) {
			char *r = render(&d);
			T_FAIL_AT("expected no errors for:\n%s\ngot:\n%s", text, r);
			free(r);
		}
	} else {
		const kb_diag *g = NULL;
		for (int i = 0; i < d.n; i++)
			if (d.v[i].level == KB_DIAG_ERROR)
				g = &d.v[i];
		if (rc != KB_ESPEC || errors != 1 || !g || g->line != line || g->col != col ||
		    g->len != len || !strstr(g->msg, msg)) {
			char *r = render(&d);
			T_FAIL_AT("expected %d:%d (len %d) '%s' for:\n%s\ngot:\n%s", line, col, len, msg,
				  text, r);
			free(r);
		}
	}
	kb_diags_free(&d);
}

#define MN "//! arg M = 4\n//! arg N = 8\n"

static void test_compile_spec__bind_ref_shapes(void)
{
	/* softmax / log_softmax */
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref softmax(x, dim=1) -> y\n",
		 0, 0, 0, NULL);
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref log_softmax(x, dim=-2) -> y\n",
		 0, 0, 0, NULL);
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref softmax(x, dim=2) -> y\n",
		 5, 24, 1, "dim=2 is out of range for 'x' of rank 2");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[N, M]\n//! ref softmax(x) -> y\n",
		 5, 23, 1, "output 'y' has shape [8, 4], but softmax() gives [4, 8]");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref softmax(x, axis=1) -> y\n",
		 5, 25, 1, "softmax() has no argument 'axis' (known: dim=)");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref softmax(x, x) -> y\n",
		 5, 20, 1, "softmax() takes at most 1 argument");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref softmax() -> y\n",
		 5, 9, 7, "softmax() takes 1 argument, got 0");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref softmax(M) -> y\n",
		 5, 17, 1, "softmax() needs a tensor here; 'M' is not one");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref softmax(x, dim=z) -> y\n",
		 5, 24, 1, "dim= must be an integer");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! out z : f32[M, N]\n"
		 "//! ref softmax(x) -> y, z\n", 6, 9, 7, "softmax() writes one output, not 2");
	/* unknown */
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref sofmax(x) -> y\n",
		 5, 9, 6, "unknown reference 'sofmax' (built-ins: softmax, log_softmax, layernorm, "
		 "rmsnorm, matmul, add, mul, relu, gelu, silu, copy, sum, max, transpose, axpy, attention, "
		 "cross_entropy; or "
		 "`ref kernel NAME`)");
	/* attention */
	ref_case(MN "//! arg C = 1\n//! in q : bf16[2, M, N]\n//! in k : bf16[2, 6, N]\n"
		 "//! in v : bf16[2, 6, 3]\n//! out o : bf16[2, M, 3]\n"
		 "//! ref attention(q, k, v, causal=C, scale=0.5) -> o\n", 0, 0, 0, NULL);
	ref_case(MN "//! in q : bf16[2, M, N]\n//! in k : bf16[2, 6, M]\n"
		 "//! in v : bf16[2, 6, 3]\n//! out o : bf16[2, M, 3]\n"
		 "//! ref attention(q, k, v) -> o\n", 7, 22, 1,
		 "attention() needs k [..., Nk, D] and v [..., Nk, Dv] for q [2, 4, 8]; k is [2, 6, 4]");
	ref_case(MN "//! in q : bf16[2, M, N]\n//! in k : bf16[2, 6, N]\n"
		 "//! in v : bf16[2, 6, 3]\n//! out o : bf16[2, M, N]\n"
		 "//! ref attention(q, k, v, causal=maybe) -> o\n", 7, 35, 5,
		 "causal= must be a number, true/false or an arg");
	ref_case(MN "//! in q : bf16[2, M, N]\n//! in k : bf16[2, 6, N]\n"
		 "//! in v : bf16[2, 6, 3]\n//! out o : bf16[2, M, N]\n"
		 "//! ref attention(q, k, v) -> o\n", 7, 31, 1,
		 "output 'o' has shape [2, 4, 8], but attention() gives [2, 4, 3]");
	/* layernorm / rmsnorm */
	ref_case(MN "//! in x : f32[M, N]\n//! in w : f32[N]\n//! in b : f32[N]\n//! out y : f32[M, N]\n"
		 "//! ref layernorm(x, w, b, eps=1e-5) -> y\n", 0, 0, 0, NULL);
	ref_case(MN "//! in x : f32[M, N]\n//! in w : f32[M]\n//! out y : f32[M, N]\n"
		 "//! ref rmsnorm(x, w) -> y\n", 6, 20, 1,
		 "'w' has shape [4], but rmsnorm() needs [8] (the last dim of 'x')");
	ref_case(MN "//! in x : f32[M, N]\n//! in w : f32[N]\n//! in b : f32[N]\n//! out y : f32[M, N]\n"
		 "//! ref rmsnorm(x, w, b) -> y\n", 7, 23, 1, "rmsnorm() takes at most 2 arguments");
	ref_case(MN "//! in x : f32[M, N]\n//! out y : f32[M, N]\n//! ref layernorm(x, eps=tiny) -> y\n",
		 5, 26, 4, "eps= must be a number");
	/* matmul */
	ref_case(MN "//! arg K = 16\n//! in a : f32[M, K]\n//! in b : f32[K, N]\n//! out c : f32[M, N]\n"
		 "//! ref matmul(a, b) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! arg K = 16\n//! in a : f32[K, M]\n//! in b : f32[N, K]\n//! out c : f32[M, N]\n"
		 "//! ref matmul(a, b, transpose_a=true, transpose_b=1) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! arg K = 16\n//! in a : f32[M, K]\n//! in b : f32[N, K]\n//! out c : f32[M, N]\n"
		 "//! ref matmul(a, b) -> c\n", 7, 19, 1,
		 "matmul() inner dimensions differ: 'a' gives K=16, 'b' gives K=8");
	ref_case(MN "//! arg K = 16\n//! in a : f32[M, K]\n//! in b : f32[K, N]\n//! out c : f32[N, M]\n"
		 "//! ref matmul(a, b) -> c\n", 7, 25, 1, "output 'c' has shape [8, 4], but matmul() gives [4, 8]");
	ref_case(MN "//! in a : f32[M]\n//! in b : f32[M, N]\n//! out c : f32[M, N]\n"
		 "//! ref matmul(a, b) -> c\n", 6, 16, 1, "matmul() needs 2-D tensors; 'a' has rank 1");
	ref_case(MN "//! in a : f32[M, M]\n//! in b : f32[M, M]\n//! out c : f32[M, M]\n"
		 "//! ref matmul(a, b, transpose_a=maybe) -> c\n", 6, 34, 5,
		 "transpose_a= must be true or false");
	/* add / mul / relu ... */
	ref_case(MN "//! in a : f32[M, N]\n//! in b : f32[M, N]\n//! out c : f32[M, N]\n"
		 "//! ref mul(a, b) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! in b : f32[N, M]\n//! out c : f32[M, N]\n"
		 "//! ref add(a, b) -> c\n", 6, 16, 1,
		 "'b' has shape [8, 4], but 'a' has [4, 8]; add() needs the same shape, or one that "
		 "is the other's last dims (a bias [N] over [M, N])");
	/* a bias [N] over [M, N], either side; the output is the larger shape */
	ref_case(MN "//! in a : f32[M, N]\n//! in b : f32[N]\n//! out c : f32[M, N]\n"
		 "//! ref add(a, b) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! in b : f32[1, N]\n//! out c : f32[M, N]\n"
		 "//! ref mul(b, a) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! in b : f32[M]\n//! out c : f32[M, N]\n"
		 "//! ref add(a, b) -> c\n", 6, 16, 1, "'b' has shape [4], but 'a' has [4, 8]");
	ref_case(MN "//! in a : f32[M, N]\n//! in b : f32[N]\n//! out c : f32[N]\n"
		 "//! ref add(a, b) -> c\n", 6, 22, 1, "output 'c' has shape [8], but add() gives [4, 8]");
	/* gelu's tanh form; cross_entropy */
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M, N]\n//! ref gelu(a, approximate=tanh) -> c\n",
		 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M, N]\n//! ref gelu(a, approximate=fast) -> c\n",
		 5, 29, 4, "approximate=fast: gelu() takes approximate=none or tanh");
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M, N]\n//! ref silu(a, approximate=tanh) -> c\n",
		 5, 29, 4, "silu() has no argument 'approximate'");
	ref_case(MN "//! in a : f32[M, N]\n//! in t : i32[M]\n//! out c : f32[M]\n"
		 "//! ref cross_entropy(a, t) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! in t : i32[N]\n//! out c : f32[M]\n"
		 "//! ref cross_entropy(a, t) -> c\n", 6, 26, 1,
		 "'t' has shape [8], but cross_entropy() needs the targets [4]");
	ref_case(MN "//! in a : f32[M, N]\n//! in t : i32[M]\n//! out c : f32[N]\n"
		 "//! ref cross_entropy(a, t) -> c\n", 6, 32, 1,
		 "output 'c' has shape [8], but cross_entropy() gives [4]");
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M]\n//! ref gelu(a) -> c\n", 5, 20, 1,
		 "output 'c' has shape [4], but gelu() gives [4, 8]");
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M, N]\n//! ref silu(a) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M, N]\n//! ref copy(a) -> c\n", 0, 0, 0, NULL);
	/* sum / max */
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M]\n//! ref sum(a, dim=1) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M, 1]\n//! ref max(a, dim=-1) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[1]\n//! ref sum(a) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M]\n//! ref sum(a, dim=0) -> c\n", 5, 26, 1,
		 "output 'c' has shape [4], but sum(dim=0) gives [8]");
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M]\n//! ref sum(a, dim=1, keepdim=true) -> c\n",
		 5, 40, 1, "output 'c' has shape [4], but sum(dim=1) gives [4, 1]");
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M]\n//! ref max(a) -> c\n", 5, 19, 1,
		 "output 'c' has shape [4], but max() without dim= gives one value");
	/* transpose */
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[N, M]\n//! ref transpose(a) -> c\n", 0, 0, 0, NULL);
	ref_case(MN "//! in a : f32[M, N]\n//! out c : f32[M, N]\n//! ref transpose(a) -> c\n", 5, 25, 1,
		 "output 'c' has shape [4, 8], but transpose() gives [8, 4]");
	ref_case(MN "//! in a : f32[M]\n//! out c : f32[M]\n//! ref transpose(a) -> c\n", 5, 19, 1,
		 "transpose() needs a 2-D tensor; 'a' has rank 1");
	/* axpy */
	ref_case(MN "//! arg s = 2.5\n//! in x : f32[N]\n//! in y : f32[N]\n//! out o : f32[N]\n"
		 "//! ref axpy(s, x, y) -> o\n", 0, 0, 0, NULL);
	ref_case(MN "//! in x : f32[N]\n//! in y : f32[N]\n//! out o : f32[N]\n"
		 "//! ref axpy(-2.5, x, y) -> o\n", 0, 0, 0, NULL);
	ref_case(MN "//! in x : f32[N]\n//! in y : f32[N]\n//! out o : f32[N]\n"
		 "//! ref axpy(x, x, y) -> o\n", 6, 14, 1,
		 "axpy()'s first argument is a scalar (an arg or a number), but 'x' is a tensor");
	ref_case(MN "//! in x : f32[N]\n//! in y : f32[M]\n//! out o : f32[N]\n"
		 "//! ref axpy(2, x, y) -> o\n", 6, 20, 1, "'y' has shape [4], but 'x' has [8]");
	ref_case(MN "//! in x : f32[N]\n//! in y : f32[N]\n//! out o : f32[M]\n"
		 "//! ref axpy(2, x, y) -> o\n", 6, 26, 1, "output 'o' has shape [4], but axpy() gives [8]");
}

/* The same spec after a sweep changes an arg: shapes are compared with the
 * current values. */
static void test_compile_spec__bind_after_set_arg(void)
{
	const char *text = MN "//! arg L = M\n//! in x : f32[L, N]\n//! out y : f32[M, N]\n"
			   "//! ref relu(x) -> y\n";
	kb_source src = mksrc("k.cu", text, KB_SRC_CUDA);
	kb_kernel k = mkkernel("k", NULL, 0, 1);
	kb_kernels ks = {&k, 1, 1};
	kb_spec s;
	kb_diags d = {0};
	T_EQ_INT(kb_compile_spec_parse(&src, &s, &d), 0);
	T_EQ_INT(kb_compile_bind(&s, &ks, &src, NULL, &d), 0);
	T_EQ_INT(kb_compile_spec_set_arg(&s, "L", (kb_value){false, 5, 0}), 0);
	kb_diags_free(&d);
	T_EQ_INT(kb_compile_bind(&s, &ks, &src, NULL, &d), KB_ESPEC);
	T_EQ_INT(kb_diag_count(&d, KB_DIAG_ERROR), 1);
	char *r = render(&d);
	T_CONTAINS(r, "k.cu:6:20: error: output 'y' has shape [4, 8], but relu() gives [5, 8]");
	free(r);
	kb_compile_spec_free(&s);
	kb_diags_free(&d);
}

/* file() reads below the kernel's directory only: ".." and absolute paths
 * out of it and a symbolic link that leads out are errors at the path,
 * unless $KBENCH_FILE_DIRS names where they lead. */
static void test_compile_spec__file_confined(void)
{
	T_ONE_ERROR("//! in x : f32[4] = file(\"../x.npy\")\n", 1, 26, 10,
		    "file() reads only below the kernel's directory");
	T_ONE_ERROR("//! in x : f32[4] = file(/etc/passwd)\n", 1, 26, 11,
		    "and /etc/passwd is not (KBENCH_FILE_DIRS=DIR[:DIR...] allows more");
	char dir[] = "/tmp/kbench-spec-XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	char *k = kb_xasprintf("%s/k", dir), *out = kb_xasprintf("%s/out", dir);
	char *link = kb_xasprintf("%s/k/link", dir), *path = kb_xasprintf("%s/k/k.cu", dir);
	T_OK(mkdir(k, 0700) == 0 && mkdir(out, 0700) == 0 && symlink("../out", link) == 0);
	char *text[3] = {
		kb_xasprintf("//! in x : f32[4] = file(%s/k/data/x.npy)\n", dir),
		kb_xasprintf("//! in x : f32[4] = file(%s/k/link/x.npy)\n", dir),
		kb_xasprintf("//! in x : f32[4] = file(%s/k/../out/x.npy)\n", dir),
	};
	for (int i = 0; i < 3; i++) {
		for (int allow = 0; allow < 2; allow++) {
			if (allow)
				setenv("KBENCH_FILE_DIRS", out, 1);
			kb_source src = mksrc(path, text[i], KB_SRC_CUDA);
			kb_spec s;
			kb_diags d = {0};
			int rc = kb_compile_spec_parse(&src, &s, &d);
			/* the kernel's own folder always; the others once allowed */
			T_EQ_INT(rc, i == 0 || allow ? 0 : KB_ESPEC);
			if (rc)
				T_CONTAINS(d.n ? d.v[0].msg : "", "/out/x.npy is not");
			kb_compile_spec_free(&s);
			kb_diags_free(&d);
			unsetenv("KBENCH_FILE_DIRS");
		}
		free(text[i]);
	}
	char *rm = kb_xasprintf("rm -rf %s", dir);
	T_EQ_INT(system(rm), 0);
	free(rm), free(path), free(link), free(out), free(k);
}

int main(void)
{
	T_RUN(test_compile_spec__dtypes);
	T_RUN(test_compile_spec__ctype_dtype);
	T_RUN(test_compile_spec__example_softmax);
	T_RUN(test_compile_spec__example_vector_add);
	T_RUN(test_compile_spec__example_saxpy_ptx);
	T_RUN(test_compile_spec__every_directive);
	T_RUN(test_compile_spec__ref_kernel);
	T_RUN(test_compile_spec__expressions);
	T_RUN(test_compile_spec__eval_errors);
	T_RUN(test_compile_spec__set_arg);
	T_RUN(test_compile_spec__tune_in_expressions);
	T_RUN(test_compile_spec__launch_dims_errors);
	T_RUN(test_compile_spec__unknown_directive);
	T_RUN(test_compile_spec__syntax_errors);
	T_RUN(test_compile_spec__dtype_and_init_errors);
	T_RUN(test_compile_spec__file_confined);
	T_RUN(test_compile_spec__name_errors);
	T_RUN(test_compile_spec__dims_errors);
	T_RUN(test_compile_spec__duplicates);
	T_RUN(test_compile_spec__ref_errors);
	T_RUN(test_compile_spec__no_cascades);
	T_RUN(test_compile_spec__three_mistakes);
	T_RUN(test_compile_spec__render_exact);
	T_RUN(test_compile_spec__require);
	T_RUN(test_compile_spec__require_errors);
	T_RUN(test_compile_spec__appends_to_diags);
	T_RUN(test_compile_spec__options_words);
	T_RUN(test_compile_spec__options_refused);
	T_RUN(test_compile_spec__options_ptx);
	T_RUN(test_compile_spec__bind_examples);
	T_RUN(test_compile_spec__bind_choose_kernel);
	T_RUN(test_compile_spec__bind_params);
	T_RUN(test_compile_spec__tensormap);
	T_RUN(test_compile_spec__tensormap_no_tensor);
	T_RUN(test_compile_spec__bind_ref_kernel);
	T_RUN(test_compile_spec__bind_ref_shapes);
	T_RUN(test_compile_spec__bind_after_set_arg);
	return t_report();
}
