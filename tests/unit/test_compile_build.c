/* test_compile_build.c - the compile pipeline with the real NVRTC and
 * nvJitLink: cubins, lowered names, resources, occupancy, diagnostics at the
 * user's lines, and the compile cache (a hit never calls NVRTC). */
#include "../../src/compile/compile.h"
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

static int compile_text(fixture *f, const char *path, const char *text, kb_src_kind kind,
			const char *arch, char **defines, int ndefines)
{
	memset(f, 0, sizeof *f);
	kb_compile_source_init(&f->src, path, text, kind);
	kb_compile_spec_parse(&f->src, &f->spec, &f->d);
	kb_err err = {0};
	if (kind == KB_SRC_CUDA)
		kb_compile_discover_cuda(&f->src, &f->ks, &err);
	else
		kb_compile_discover_ptx(&f->src, &f->ks, &f->d, &err);
	kb_build_opts o = {.arch = (char *)arch, .defines = defines, .ndefines = ndefines};
	f->rc = kb_compile_build(&f->src, &f->spec, &f->ks, &o, &f->b, &err);
	if (f->rc < 0 && f->rc != KB_ECOMPILE)
		printf("  build error: %s\n", err.msg);
	return f->rc;
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
	T_RUN(test_compile_build__defines_change_key);
	T_RUN(test_compile_build__local_header_in_key);
	T_RUN(test_compile_build__syntax_error_at_user_line);
	T_RUN(test_compile_build__nvrtc_columns);
	T_RUN(test_compile_build__ptx);
	T_RUN(test_compile_build__ptx_error_line);
	T_RUN(test_compile_build__template_name_expression);
	T_RUN(test_compile_build__bad_arch);
	char *rm = kb_xasprintf("rm -rf %s", cache_dir);
	if (system(rm) != 0)
		printf("  (could not remove %s)\n", cache_dir);
	free(rm);
	return t_report();
}
