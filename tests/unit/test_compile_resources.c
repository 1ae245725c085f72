/* test_compile_resources.c - ptxas -v report parsing (NVRTC, nvcc, nvJitLink
 * logs in tests/fixtures/ptxas/) and cubin ELF parsing (tests/fixtures/cubin/
 * and the cubins built next to those logs), including truncated and corrupted
 * cubins, which must give KB_EINVAL and never crash.
 *
 * The fixtures under tests/fixtures/ptxas/ were made with CUDA 13.0 from
 * k2.cu there and from tests/fixtures/cubin/vec4.cu:
 *   nvcc -arch=sm_XX -cubin -Xptxas -v [-maxrregcount=32]  (nvcc_*.log, *.cubin)
 *   NVRTC -arch=sm_90 -Xptxas -v -maxrregcount=32           (nvrtc_*.log)
 *   NVRTC PTX -> nvJitLink -arch=sm_XX -verbose              (nvjitlink_*)
 */
#include "../../src/compile/compile.h"
#include "t.h"

#define FX "tests/fixtures/ptxas/"

static const kb_resources *by_name(const kb_resources *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].kernel, name))
			return &v[i];
	return NULL;
}

/* Loads a fixture and parses it as a log; returns the count (or -1). */
static int parse_file(const char *path, kb_resources **out)
{
	kb_buf b = KB_BUF_INIT;
	kb_err err;
	*out = NULL;
	if (kb_file_read(path, &b, &err)) {
		printf("  cannot read %s: %s\n", path, err.msg);
		return -1;
	}
	int n = kb_compile_parse_ptxas_log(b.s, out);
	kb_buf_free(&b);
	return n;
}

#define CHECK_RES(r, REGS, SMEM, LOCAL, ST, LD, BAR, CMEM) do { \
	T_OK((r) != NULL); \
	if (r) { \
		T_EQ_INT((r)->regs, REGS); T_EQ_INT((r)->smem_static, SMEM); \
		T_EQ_INT((r)->local_bytes, LOCAL); T_EQ_INT((r)->spill_stores, ST); \
		T_EQ_INT((r)->spill_loads, LD); T_EQ_INT((r)->barriers, BAR); \
		T_EQ_INT((r)->cmem0, CMEM); \
	} } while (0)

/* ===== Logs ===== */

static void test_compile_resources__nvrtc_doc_example(void)
{
	/* gpu-apis.md §5, verbatim. */
	const char *log =
		"ptxas info    : Compiling entry function 'big' for 'sm_90'\n"
		"ptxas info    : Function properties for big\n"
		"ptxas         .     544 bytes stack frame, 284 bytes spill stores, 360 bytes spill loads\n"
		"ptxas info    : Used 24 registers, used 1 barriers, 544 bytes cumulative stack size, "
		"4096 bytes smem\n";
	kb_resources *v;
	T_EQ_INT(kb_compile_parse_ptxas_log(log, &v), 1);
	CHECK_RES(&v[0], 24, 4096, 544, 284, 360, 1, -1);
	T_EQ_STR(v[0].kernel, "big");
	T_EQ_INT(v[0].max_threads, 1024);
	kb_compile_resources_free(v, 1);
}

static void test_compile_resources__nvcc_sm90(void)
{
	kb_resources *v;
	int n = parse_file(FX "nvcc_sm90_vec4.log", &v);
	T_EQ_INT(n, 3);
	/* _Z5spillPfii: a local array, 256 bytes of frame but no spills. */
	CHECK_RES(by_name(v, n, "_Z5spillPfii"), 80, 0, 256, 0, 0, 0, -1);
	CHECK_RES(by_name(v, n, "_Z9copy_vec4IfLi256EEvPK6float4PS0_i"), 14, 1024, 0, 0, 0, 1, -1);
	CHECK_RES(by_name(v, n, "_Z11copy_scalarPKfPfi"), 10, 0, 0, 0, 0, 0, -1);
	T_EQ_STR(v[0].kernel, "_Z5spillPfii"); /* order of appearance */
	kb_compile_resources_free(v, n);
}

static void test_compile_resources__nvcc_spills_and_bounds(void)
{
	kb_resources *v;
	/* -maxrregcount=32: heavy spills; bounded has __launch_bounds__(128, 4),
	 * which overrides the global limit; helper is a __noinline__ device
	 * function (properties, no "Used" line: not reported). */
	int n = parse_file(FX "nvcc_sm90_k2_maxrreg32.log", &v);
	T_EQ_INT(n, 3);
	CHECK_RES(by_name(v, n, "_Z5heavyPKfPfi"), 32, 0, 736, 736, 1320, 0, -1);
	CHECK_RES(by_name(v, n, "_Z7boundedPfi"), 40, 0, 64, 0, 0, 0, -1);
	CHECK_RES(by_name(v, n, "_Z9named_barPf"), 12, 16384, 0, 0, 0, 3, -1);
	T_OK(by_name(v, n, "_Z6helperPfi") == NULL);
	kb_compile_resources_free(v, n);

	n = parse_file(FX "nvrtc_sm90_k2_maxrreg32.log", &v); /* "ptxas   ." prefix */
	T_EQ_INT(n, 3);
	CHECK_RES(by_name(v, n, "_Z5heavyPKfPfi"), 32, 0, 736, 736, 1320, 0, -1);
	CHECK_RES(by_name(v, n, "_Z9named_barPf"), 12, 16384, 0, 0, 0, 3, -1);
	kb_compile_resources_free(v, n);
}

static void test_compile_resources__cmem_older_format(void)
{
	kb_resources *v;
	int n = parse_file(FX "nvcc_sm80_k2.log", &v);
	T_EQ_INT(n, 3);
	CHECK_RES(by_name(v, n, "_Z9named_barPf"), 10, 16384, 0, 0, 0, 3, 360);
	CHECK_RES(by_name(v, n, "_Z5heavyPKfPfi"), 56, 0, 0, 0, 0, 0, 372);
	CHECK_RES(by_name(v, n, "_Z7boundedPfi"), 40, 0, 64, 0, 0, 0, 364);
	kb_compile_resources_free(v, n);
	n = parse_file(FX "nvcc_sm75_vec4.log", &v);
	T_EQ_INT(n, 3);
	CHECK_RES(by_name(v, n, "_Z5spillPfii"), 72, 0, 256, 0, 0, 0, 368);
	kb_compile_resources_free(v, n);
}

static void test_compile_resources__nvjitlink(void)
{
	kb_resources *v;
	/* sm_90: the summary says 17408 bytes smem (16384 + the reservation) and,
	 * after linking helper in, 94 registers and 72 stack for bounded (the
	 * ptxas line before the link said 24 and 0). */
	int n = parse_file(FX "nvjitlink_sm90_k2.log", &v);
	T_EQ_INT(n, 3);
	CHECK_RES(by_name(v, n, "_Z9named_barPf"), 12, 16384, 0, 0, 0, 3, 536);
	CHECK_RES(by_name(v, n, "_Z7boundedPfi"), 94, 0, 72, 0, 0, 0, 540);
	CHECK_RES(by_name(v, n, "_Z5heavyPKfPfi"), 56, 0, 0, 0, 0, 0, 548);
	kb_compile_resources_free(v, n);
	/* sm_100: no reservation in the summary, no cmem[0]. */
	n = parse_file(FX "nvjitlink_sm100_k2.log", &v);
	T_EQ_INT(n, 3);
	CHECK_RES(by_name(v, n, "_Z9named_barPf"), 12, 16384, 0, 0, 0, 3, -1);
	CHECK_RES(by_name(v, n, "_Z7boundedPfi"), 100, 0, 72, 0, 0, 0, -1);
	kb_compile_resources_free(v, n);
}

static void test_compile_resources__summary_only(void)
{
	/* gpu-apis.md §6's summary, with and without the ptxas part. */
	const char *both =
		"ptxas info    : Compiling entry function 'big' for 'sm_90'\n"
		"ptxas info    : Function properties for big\n"
		"ptxas         .     544 bytes stack frame, 284 bytes spill stores, 360 bytes spill loads\n"
		"ptxas info    : Used 24 registers, used 1 barriers, 544 bytes cumulative stack size, "
		"4096 bytes smem\n"
		"info    : 0 bytes gmem\n"
		"info    : Function properties for 'big':\n"
		"info    : used 24 registers, used 1 barriers, 528 stack, 5120 bytes smem, "
		"544 bytes cmem[0], 0 bytes lmem\n";
	kb_resources *v;
	T_EQ_INT(kb_compile_parse_ptxas_log(both, &v), 1);
	CHECK_RES(&v[0], 24, 4096, 544, 284, 360, 1, 544);
	kb_compile_resources_free(v, 1);
	/* Summary only, arch named elsewhere in the log: subtract 1 KiB on sm_90. */
	const char *only =
		"ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
		"info    : Function properties for 'big':\n"
		"info    : used 24 registers, used 1 barriers, 528 stack, 5120 bytes smem, "
		"544 bytes cmem[0], 0 bytes lmem\n";
	int n = kb_compile_parse_ptxas_log(only, &v);
	T_EQ_INT(n, 1); /* 'other' has no statistics: not reported */
	CHECK_RES(by_name(v, n, "big"), 24, 4096, 528, -1, -1, 1, 544);
	kb_compile_resources_free(v, n);
	/* ... but not when the log names no arch, nor on sm_100. */
	T_EQ_INT(kb_compile_parse_ptxas_log(only + strlen(
		"ptxas info    : Compiling entry function 'other' for 'sm_90'\n"), &v), 1);
	T_EQ_INT(v[0].smem_static, 5120);
	kb_compile_resources_free(v, 1);
}

static void test_compile_resources__junk(void)
{
	kb_resources *v = (kb_resources *)1;
	T_EQ_INT(kb_compile_parse_ptxas_log(NULL, &v), 0);
	T_OK(v == NULL);
	T_EQ_INT(kb_compile_parse_ptxas_log("", &v), 0);
	T_EQ_INT(kb_compile_parse_ptxas_log("error: x\nUsed 5 registers\n", &v), 0);
	T_EQ_INT(kb_compile_parse_ptxas_log(
		"ptxas info : Compiling entry function '\n"
		"ptxas info : Function properties for \n"
		"ptxas info : Used registers, , used , 99999999999999999999 bytes smem\n"
		"ptxas info : Compiling entry function 'k' for 'sm_\n"
		"ptxas info : Used 7 registers, used 2 barriers, 12 bytes smem", &v), 1);
	T_EQ_STR(v[0].kernel, "k");
	T_EQ_INT(v[0].regs, 7);
	T_EQ_INT(v[0].barriers, 2);
	T_EQ_INT(v[0].smem_static, 12);
	kb_compile_resources_free(v, 1);
	/* Every prefix of a real log parses without reading past its end. */
	kb_buf b = KB_BUF_INIT;
	kb_err err;
	T_EQ_INT(kb_file_read(FX "nvjitlink_sm90_k2.log", &b, &err), 0);
	for (size_t cut = 0; cut < b.len; cut++) {
		char *s = kb_xstrndup(b.s, cut);
		int n = kb_compile_parse_ptxas_log(s, &v);
		T_OK(n >= 0 && n <= 3);
		kb_compile_resources_free(v, n);
		free(s);
	}
	kb_buf_free(&b);
	kb_compile_resources_free(NULL, 0);
}

/* ===== Cubins ===== */

static int cubin_file(const char *path, kb_buf *b)
{
	kb_err err;
	int rc = kb_file_read(path, b, &err);
	if (rc)
		printf("  cannot read %s: %s\n", path, err.msg);
	return rc;
}

static void test_compile_resources__cubin_vec4_sm90(void)
{
	/* Expected values: tests/fixtures/sass/vec4.resusage.txt (cuobjdump
	 * -res-usage): spill REG:80 STACK:256 CONSTANT[0]:544; copy_vec4 REG:14
	 * SHARED:2048 (= 1024 + the reservation) CONSTANT[0]:548; copy_scalar REG:10. */
	kb_buf b = KB_BUF_INIT;
	kb_resources *v;
	kb_err err;
	if (cubin_file("tests/fixtures/cubin/vec4.cubin", &b))
		T_SKIP("no fixture");
	T_EQ_INT(kb_compile_cubin_arch(b.s, b.len), 90);
	int n = kb_compile_cubin_resources(b.s, b.len, &v, &err);
	T_EQ_INT(n, 3);
	CHECK_RES(by_name(v, n, "_Z5spillPfii"), 80, 0, 256, -1, -1, 0, 544);
	CHECK_RES(by_name(v, n, "_Z9copy_vec4IfLi256EEvPK6float4PS0_i"), 14, 1024, 0, -1, -1, 1,
		  548);
	CHECK_RES(by_name(v, n, "_Z11copy_scalarPKfPfi"), 10, 0, 0, -1, -1, 0, 548);
	T_EQ_INT(v[0].max_threads, 1024);
	kb_compile_resources_free(v, n);
	kb_buf_free(&b);
}

/* The same kernels as the logs above say, arch by arch. */
static void test_compile_resources__cubin_matches_logs(void)
{
	static const struct { const char *path; int sm; } files[] = {
		{FX "k2_sm80.cubin", 80}, {FX "k2_sm90_maxrreg32.cubin", 90},
		{FX "nvjitlink_sm90_k2.cubin", 90}, {FX "nvjitlink_sm100_k2.cubin", 100},
	};
	static const char *logs[] = {
		FX "nvcc_sm80_k2.log", FX "nvcc_sm90_k2_maxrreg32.log",
		FX "nvjitlink_sm90_k2.log", FX "nvjitlink_sm100_k2.log",
	};
	for (size_t f = 0; f < KB_ARRAY_LEN(files); f++) {
		kb_buf b = KB_BUF_INIT;
		kb_resources *c, *l;
		kb_err err;
		if (cubin_file(files[f].path, &b))
			T_SKIP("no fixture");
		T_EQ_INT(kb_compile_cubin_arch(b.s, b.len), files[f].sm);
		int nc = kb_compile_cubin_resources(b.s, b.len, &c, &err);
		int nl = parse_file(logs[f], &l);
		T_EQ_INT(nc, 3);
		T_EQ_INT(nl, 3);
		for (int i = 0; i < nl && nc == 3; i++) {
			const kb_resources *x = by_name(c, nc, l[i].kernel);
			T_OK(x != NULL);
			if (!x)
				continue;
			T_EQ_INT(x->regs, l[i].regs);
			T_EQ_INT(x->smem_static, l[i].smem_static);
			T_EQ_INT(x->barriers, l[i].barriers);
			if (l[i].cmem0 >= 0)
				T_EQ_INT(x->cmem0, l[i].cmem0);
		}
		/* __launch_bounds__(128, 4) -> EIATTR_MAX_THREADS 128 x 1 x 1. */
		const kb_resources *bd = by_name(c, nc, "_Z7boundedPfi");
		T_OK(bd && bd->max_threads == 128);
		T_OK(by_name(c, nc, "_Z6helperPfi") == NULL); /* not an entry */
		kb_compile_resources_free(c, nc);
		kb_compile_resources_free(l, nl);
		kb_buf_free(&b);
	}
}

static void test_compile_resources__cubin_arches(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_resources *v;
	kb_err err;
	if (cubin_file(FX "vec4_sm120.cubin", &b))
		T_SKIP("no fixture");
	T_EQ_INT(kb_compile_cubin_arch(b.s, b.len), 120);
	int n = kb_compile_cubin_resources(b.s, b.len, &v, &err);
	T_EQ_INT(n, 3);
	/* .nv.shared is 0x800 on sm_120 too; ptxas said 1024. */
	CHECK_RES(by_name(v, n, "_Z9copy_vec4IfLi256EEvPK6float4PS0_i"), 14, 1024, 0, -1, -1, 1,
		  0x394); /* params at c[0x0][0x380] on sm_100+: 0x380 + 20 */
	kb_compile_resources_free(v, n);
	/* e_flags layouts: ABI 8 keeps the SM in bits 8-15, ABI 7 in bits 0-7. */
	uint8_t h[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 8};
	h[18] = 190;
	h[48] = 0x04; h[49] = 0x64; h[50] = 0x00; h[51] = 0x06; /* 0x06006404 */
	T_EQ_INT(kb_compile_cubin_arch(h, sizeof(h)), 100);
	h[8] = 7;
	h[48] = 0x50; h[49] = 0x05; h[50] = 0x50; h[51] = 0x00; /* 0x00500550: sm_80 */
	T_EQ_INT(kb_compile_cubin_arch(h, sizeof(h)), 80);
	h[18] = 62; /* x86-64 */
	T_EQ_INT(kb_compile_cubin_arch(h, sizeof(h)), KB_EINVAL);
	T_EQ_INT(kb_compile_cubin_arch(h, 10), KB_EINVAL);
	T_EQ_INT(kb_compile_cubin_arch(NULL, 64), KB_EINVAL);
	kb_buf_free(&b);
}

static void test_compile_resources__cubin_truncated_and_garbage(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_resources *v;
	kb_err err;
	if (cubin_file("tests/fixtures/cubin/vec4.cubin", &b))
		T_SKIP("no fixture");
	/* Every truncation (each byte up to 4 KiB, then every 61st) into an exact-size
	 * heap copy, so ASan sees any read past the end. */
	int bad = 0;
	for (size_t cut = 0; cut < b.len; cut += cut < 4096 ? 1 : 61) {
		uint8_t *p = kb_xmalloc(cut ? cut : 1);
		memcpy(p, b.s, cut);
		int n = kb_compile_cubin_resources(p, cut, &v, &err);
		if (n != KB_EINVAL)
			bad++;
		kb_compile_resources_free(v, n > 0 ? n : 0);
		(void)kb_compile_cubin_arch(p, cut);
		free(p);
	}
	T_EQ_INT(bad, 0);
	/* Random corruption: any answer but a crash; the original still parses. */
	unsigned st = 7;
	int ok = 0, einval = 0;
	for (int iter = 0; iter < 3000; iter++) {
		uint8_t *p = kb_xmalloc(b.len);
		memcpy(p, b.s, b.len);
		for (int k = 0; k < 1 + iter % 8; k++) {
			st = st * 1103515245u + 12345u;
			size_t at = (st >> 4) % b.len;
			if (iter % 3 == 0)  /* aim at the ELF and section headers */
				at = iter % 2 ? (st >> 4) % 64 :
					b.len - 1 - (st >> 4) % (64 * 30);
			p[at] = (uint8_t)(st >> 20);
		}
		int n = kb_compile_cubin_resources(p, b.len, &v, &err);
		if (n >= 0)
			ok++;
		else
			einval += n == KB_EINVAL;
		kb_compile_resources_free(v, n > 0 ? n : 0);
		free(p);
	}
	T_EQ_INT(ok + einval, 3000);
	T_OK(einval > 0);
	T_EQ_INT(kb_compile_cubin_resources(b.s, b.len, &v, &err), 3);
	kb_compile_resources_free(v, 3);
	T_EQ_INT(kb_compile_cubin_resources("not an elf", 10, &v, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "not a valid cubin");
	T_OK(v == NULL);
	kb_buf_free(&b);
}

/* setmaxnreg of a warp-specialized kernel, per kernel of a PTX module:
 * the lowest .dec and the highest .inc of its own body only. */
static void test_compile_resources__setmaxnreg(void)
{
	static const char ptx[] =
		".version 8.8\n.target sm_90a\n"
		".visible .entry gemm(\n\t.param .u64 gemm_param_0\n)\n{\n"
		"\tsetmaxnreg.dec.sync.aligned.u32 40;\n"
		"\tsetmaxnreg.inc.sync.aligned.u32 232;\n"
		"\tsetmaxnreg.dec.sync.aligned.u32 24;\n"
		"\tret;\n}\n"
		".visible .entry gemm_tail(\n\t.param .u64 p\n)\n{\n"
		"\tsetmaxnreg.inc.sync.aligned.u32 240;\n\tret;\n}\n"
		".visible .entry plain()\n{\n\tret;\n}\n";
	kb_resources r = {0};
	kb_compile_ptx_setmaxnreg(ptx, "gemm", &r);
	T_EQ_INT(r.maxnreg_dec, 24);
	T_EQ_INT(r.maxnreg_inc, 232); /* not gemm_tail's 240 */
	kb_compile_ptx_setmaxnreg(ptx, "gemm_tail", &r);
	T_EQ_INT(r.maxnreg_dec, 0);
	T_EQ_INT(r.maxnreg_inc, 240);
	kb_compile_ptx_setmaxnreg(ptx, "plain", &r);
	T_EQ_INT(r.maxnreg_dec + r.maxnreg_inc, 0);
	kb_compile_ptx_setmaxnreg(ptx, "absent", &r);
	T_EQ_INT(r.maxnreg_dec + r.maxnreg_inc, 0);
	kb_compile_ptx_setmaxnreg(NULL, "gemm", &r);
	T_EQ_INT(r.maxnreg_dec + r.maxnreg_inc, 0);
}

int main(void)
{
	T_RUN(test_compile_resources__nvrtc_doc_example);
	T_RUN(test_compile_resources__nvcc_sm90);
	T_RUN(test_compile_resources__nvcc_spills_and_bounds);
	T_RUN(test_compile_resources__cmem_older_format);
	T_RUN(test_compile_resources__nvjitlink);
	T_RUN(test_compile_resources__summary_only);
	T_RUN(test_compile_resources__junk);
	T_RUN(test_compile_resources__cubin_vec4_sm90);
	T_RUN(test_compile_resources__cubin_matches_logs);
	T_RUN(test_compile_resources__cubin_arches);
	T_RUN(test_compile_resources__cubin_truncated_and_garbage);
	T_RUN(test_compile_resources__setmaxnreg);
	return t_report();
}
