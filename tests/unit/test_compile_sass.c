/* test_compile_sass.c - SASS listing parser (nvdisasm -c -g/-gi, cuobjdump
 * -sass) on listings captured on an H200 (tests/fixtures/sass), the
 * instruction mix, and kb_compile_sass's spawn path with fake tools on PATH
 * and in fake CUDA toolkits (the real disassemblers are exercised on the GPU
 * machine).  Every case that spawns points CUDA_HOME and the built-against
 * toolkit at folders of its own, so a real toolkit never answers. */
#include "../../src/compile/compile_int.h"
#include "t.h"

#include <dlfcn.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX "tests/fixtures/sass/"

/* ---- helpers ------------------------------------------------------------ */

static char *slurp(const char *path)
{
	kb_buf b = KB_BUF_INIT;
	kb_err err = {0};
	if (kb_file_read(path, &b, &err) != 0) {
		printf("  cannot read %s: %s\n", path, err.msg);
		kb_buf_free(&b);
		return NULL;
	}
	return kb_buf_detach(&b);
}

/* Parses a fixture into s; false when it cannot be read. */
static bool parse_fixture(const char *path, kb_sass *s)
{
	char *text = slurp(path);
	memset(s, 0, sizeof *s);
	if (!text)
		return false;
	int rc = kb_compile_sass_parse(text, s);
	free(text);
	return rc == 0;
}

static const kb_sass_func *func(const kb_sass *s, const char *name)
{
	for (int i = 0; i < s->nfuncs; i++)
		if (strcmp(s->funcs[i].name, name) == 0)
			return &s->funcs[i];
	return NULL;
}

static const kb_sass_insn *at(const kb_sass_func *f, uint32_t addr)
{
	for (int i = 0; f && i < f->n; i++)
		if (f->v[i].addr == addr)
			return &f->v[i];
	return NULL;
}

static int count_op(const kb_sass_func *f, const char *opcode)
{
	int n = 0;
	for (int i = 0; f && i < f->n; i++)
		n += strcmp(f->v[i].opcode, opcode) == 0;
	return n;
}

/* "KEY:N KEY:N ..." of a function's mix (a new string). */
static char *mix_str(const kb_sass_func *f)
{
	kb_mix *m = NULL;
	int n = kb_compile_sass_mix(f, &m);
	kb_buf b = KB_BUF_INIT;
	kb_buf_cat(&b, "");
	for (int i = 0; i < n; i++)
		kb_buf_catf(&b, "%s%s:%d", i ? " " : "", m[i].key, m[i].count);
	kb_compile_sass_mix_free(m, n);
	return kb_buf_detach(&b);
}

/* The mix count of key, or 0. */
static int mix_count(const kb_sass_func *f, const char *key)
{
	kb_mix *m = NULL;
	int n = kb_compile_sass_mix(f, &m), c = 0;
	for (int i = 0; i < n; i++)
		if (strcmp(m[i].key, key) == 0)
			c = m[i].count;
	kb_compile_sass_mix_free(m, n);
	return c;
}

#define T_INSN(f, addr, op, ops, ln) do { const kb_sass_insn *t_i_ = at((f), (addr)); \
	T_OK(t_i_ != NULL); \
	if (t_i_) { T_EQ_STR(t_i_->opcode, op); T_EQ_STR(t_i_->operands, ops); \
		T_EQ_INT(t_i_->line, ln); } } while (0)

/* ---- parsing the fixtures ------------------------------------------------ */

static void test_compile_sass__vector_add(void)
{
	kb_sass s;
	T_OK(parse_fixture(FIX "vector_add.nvdisasm.txt", &s));
	T_OK(s.available);
	T_EQ_INT(s.nfuncs, 1);
	const kb_sass_func *f = func(&s, "vector_add");
	T_OK(f != NULL);
	if (!f)
		goto out;
	T_EQ_INT(f->n, 32); /* 0x0000 .. 0x01f0 */
	T_EQ_INT(f->v[0].addr, 0);
	T_EQ_INT(f->v[31].addr, 0x1f0);
	T_EQ_STR(f->v[0].file, "/tmp/k/vector_add.cu");
	T_EQ_INT(f->v[0].line, 11);
	T_INSN(f, 0x00d0, "LDG.E.CONSTANT", "R3, desc[UR4][R2.64]", 16);
	T_INSN(f, 0x00f0, "LDG.E.CONSTANT", "R4, desc[UR4][R4.64]", 16);
	T_INSN(f, 0x0110, "FADD", "R9, R4, R3", 16);
	T_INSN(f, 0x0120, "STG.E", "desc[UR4][R6.64], R9", 16);
	T_INSN(f, 0x0130, "EXIT", "", 17);
	T_INSN(f, 0x0060, "ISETP.GE.AND", "P0, PT, R9, UR4, PT", 15);
	T_INSN(f, 0x0140, "BRA", "0x140", 17); /* the self-branch, label resolved */
	T_INSN(f, 0x01f0, "NOP", "", 17);
	const kb_sass_insn *ex = at(f, 0x70);
	T_OK(ex && ex->pred && strcmp(ex->pred, "@P0") == 0 && strcmp(ex->opcode, "EXIT") == 0);
	T_OK(at(f, 0x60) && at(f, 0x60)->pred == NULL);
	T_OK(at(f, 0xd0) && at(f, 0xd0)->call_file == NULL && at(f, 0xd0)->call_line == 0);
	T_EQ_INT(count_op(f, "NOP"), 11);
	T_OK(s.text && strstr(s.text, ".text.vector_add") != NULL);
	char *m = mix_str(f);
	T_EQ_STR(m, "LDC:5 IMAD:4 EXIT:2 LDG.E:2 ULDC:2 FADD:1 ISETP:1 S2R:1 S2UR:1 STG.E:1");
	free(m);
out:
	kb_compile_sass_free(&s);
}

static void test_compile_sass__saxpy_without_line_info(void)
{
	kb_sass s;
	T_OK(parse_fixture(FIX "saxpy.nvdisasm.txt", &s));
	const kb_sass_func *f = func(&s, "saxpy");
	T_OK(f != NULL);
	if (f) {
		T_EQ_INT(f->n, 32);
		T_INSN(f, 0x0120, "FFMA", "R9, R2, UR6, R5", 0);
		T_OK(at(f, 0x120) && at(f, 0x120)->file == NULL);
		T_EQ_INT(mix_count(f, "FFMA"), 1);
		T_EQ_INT(mix_count(f, "LDG.E"), 2);
		T_EQ_INT(mix_count(f, "NOP"), 0);
		T_EQ_INT(mix_count(f, "BRA"), 0);
	}
	kb_compile_sass_free(&s);
}

static void test_compile_sass__softmax(void)
{
	kb_sass s;
	T_OK(parse_fixture(FIX "softmax.nvdisasm.txt", &s));
	T_EQ_INT(s.nfuncs, 2);
	const kb_sass_func *naive = func(&s, "_Z13softmax_naivePKfPfii");
	const kb_sass_func *rows = func(&s, "_Z12softmax_rowsPKfPfii");
	T_OK(naive && rows);
	if (!naive || !rows)
		goto out;
	T_EQ_STR(s.funcs[0].name, "_Z13softmax_naivePKfPfii"); /* listing order */
	T_EQ_INT(naive->n, 544); /* with the div slow path, up to 0x21f0 */
	T_EQ_INT(naive->v[naive->n - 1].addr, 0x21f0);
	T_EQ_INT(rows->n, 216);
	/* a predicated forward branch to .L_x_0 (at 0x890) */
	const kb_sass_insn *br = at(naive, 0xd0);
	T_OK(br && br->pred && strcmp(br->pred, "@!P1") == 0);
	T_INSN(naive, 0x00d0, "BRA", "0x890", 77);
	T_INSN(naive, 0x0890, "HFMA2.MMA", "R3, -RZ, RZ, 0, 0", 79);
	/* calls and returns keep the symbol name, without backquote or parens */
	T_INSN(naive, 0x11a0, "CALL.REL.NOINC",
	       "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath", 82);
	T_INSN(naive, 0x2110, "RET.REL.NODEC", "R14 _Z13softmax_naivePKfPfii", 83);
	T_INSN(naive, 0x00b0, "ISETP.GE.AND", "P1, PT, R7.reuse, 0x1, PT", 77);
	/* warp shuffles come from the intrinsics header (innermost frame) */
	const kb_sass_insn *sh = at(rows, 0x1b0);
	T_OK(sh && strcmp(sh->opcode, "SHFL.BFLY") == 0);
	T_OK(sh && sh->file && strstr(sh->file, "sm_30_intrinsics.hpp") && sh->line == 449);
	T_EQ_STR(sh ? sh->operands : NULL, "PT, R5, R0, 0x10, 0x1f");
	T_EQ_INT(count_op(rows, "SHFL.BFLY"), 20);
	T_EQ_INT(count_op(naive, "SHFL.BFLY"), 0);
	T_EQ_INT(count_op(rows, "BAR.SYNC.DEFER_BLOCKING"), 4);
	T_EQ_INT(mix_count(rows, "SHFL.BFLY"), 20);
	T_EQ_INT(mix_count(rows, "BAR.SYNC"), 4);
	T_EQ_INT(mix_count(rows, "MUFU.EX2"), 2);
	T_EQ_INT(mix_count(rows, "MUFU.RCP"), 5);
	T_EQ_INT(mix_count(naive, "MUFU.EX2"), 10);
	T_EQ_INT(mix_count(naive, "MUFU.RSQ"), 1);
	T_EQ_INT(mix_count(naive, "LDG.E"), 39);
	T_EQ_INT(mix_count(naive, "FFMA"), 82); /* FFMA, .RM, .SAT, .RP, .RZ */
	T_EQ_INT(mix_count(naive, "BRA"), 39);  /* 40 BRA less the self-branch */
	T_EQ_INT(mix_count(naive, "ISETP"), 30);
	T_EQ_INT(mix_count(naive, "NOP"), 0);
	char *m = mix_str(rows);
	T_OK(strncmp(m, "SHFL.BFLY:20 IMAD:19 FADD:16 ", 29) == 0);
	T_OK(strstr(m, "ISETP.") == NULL && strstr(m, "IMAD.") == NULL);
	free(m);
out:
	kb_compile_sass_free(&s);
}

static void test_compile_sass__softmax_inlined(void)
{
	kb_sass g, gi;
	T_OK(parse_fixture(FIX "softmax.nvdisasm.txt", &g));
	T_OK(parse_fixture(FIX "softmax.nvdisasm_gi.txt", &gi));
	T_EQ_INT(g.nfuncs, gi.nfuncs);
	int diff = 0, inlined = 0;
	for (int i = 0; i < g.nfuncs && i < gi.nfuncs; i++) {
		const kb_sass_func *a = &g.funcs[i], *b = &gi.funcs[i];
		T_EQ_STR(a->name, b->name);
		T_EQ_INT(a->n, b->n);
		for (int j = 0; j < a->n && j < b->n; j++) {
			const kb_sass_insn *x = &a->v[j], *y = &b->v[j];
			diff += x->addr != y->addr || strcmp(x->opcode, y->opcode) ||
				x->line != y->line || !x->file != !y->file ||
				(x->file && strcmp(x->file, y->file));
			T_OK(x->call_file == NULL); /* -g has no call sites */
			inlined += y->call_file != NULL;
		}
	}
	T_EQ_INT(diff, 0); /* -gi's innermost frame is what -g prints */
	T_OK(inlined > 0);
	const kb_sass_func *rows = func(&gi, "_Z12softmax_rowsPKfPfii");
	/* SHFL: intrinsics:449 inlined at 23, 23 inlined at 59, 59 */
	const kb_sass_insn *sh = at(rows, 0x1b0);
	T_OK(sh && sh->line == 449 && sh->call_line == 59);
	T_EQ_STR(sh ? sh->call_file : NULL, "/tmp/k/softmax.cu");
	const kb_sass_insn *s2 = at(rows, 0x1c0); /* 41 inlined at 64, then 64 */
	T_OK(s2 && s2->line == 41 && s2->call_line == 64);
	const kb_sass_insn *l0 = at(rows, 0x0); /* not inlined */
	T_OK(l0 && l0->line == 50 && l0->call_file == NULL && l0->call_line == 0);
	/* the line of softmax.cu each belongs to: the header's code at its
	 * call in the kernel; a line of the file itself as it is */
	if (sh && s2 && l0) {
		T_EQ_INT(kb_compile_sass_src_line(sh, "kernels/softmax.cu"), 59);
		T_EQ_INT(kb_compile_sass_src_line(s2, "softmax.cu"), 41);
		T_EQ_INT(kb_compile_sass_src_line(l0, "softmax.cu"), 50);
		T_EQ_INT(kb_compile_sass_src_line(sh, "other.cu"), 0);
	}
	kb_compile_sass_free(&g);
	kb_compile_sass_free(&gi);
}

static void test_compile_sass__vec4(void)
{
	kb_sass s;
	T_OK(parse_fixture(FIX "vec4.nvdisasm.txt", &s));
	T_EQ_INT(s.nfuncs, 3);
	const kb_sass_func *sp = func(&s, "_Z5spillPfii");
	const kb_sass_func *v4 = func(&s, "_Z9copy_vec4IfLi256EEvPK6float4PS0_i");
	const kb_sass_func *sc = func(&s, "_Z11copy_scalarPKfPfi");
	T_OK(sp && v4 && sc);
	if (!sp || !v4 || !sc)
		goto out;
	T_EQ_INT(v4->n, 40);
	T_EQ_INT(sc->n, 32);
	T_INSN(v4, 0x0150, "LDG.E.128.CONSTANT", "R4, desc[UR6][R6.64]", 13);
	T_INSN(v4, 0x01c0, "STG.E.128", "desc[UR6][R2.64], R4", 13);
	T_INSN(v4, 0x0100, "BAR.SYNC.DEFER_BLOCKING", "0x0", 12);
	T_INSN(v4, 0x00f0, "STS", "[R3], R0", 11);
	/* the spill kernel: local memory traffic is what the mix must show */
	T_EQ_INT(mix_count(sp, "LDL"), 64);
	T_EQ_INT(mix_count(sp, "STL.128"), 16);
	T_EQ_INT(mix_count(sp, "MUFU.EX2"), 64);
	T_EQ_INT(mix_count(sp, "LDG.E"), 64);
	char *m = mix_str(v4);
	T_EQ_STR(m, "LDC:4 IMAD:3 EXIT:2 LEA:2 S2UR:2 ULDC:2 ULEA:2 USHF:2 BAR.SYNC:1 FADD:1 "
		    "I2FP:1 ISETP:1 LDG.E.128:1 LDS:1 LOP3:1 S2R:1 STG.E.128:1 STS:1 UMOV:1");
	free(m);
out:
	kb_compile_sass_free(&s);
}

static void test_compile_sass__cuobjdump_matches_nvdisasm(void)
{
	kb_sass c, n;
	T_OK(parse_fixture(FIX "vec4_part.cuobjdump.txt", &c));
	T_OK(parse_fixture(FIX "vec4.nvdisasm.txt", &n));
	/* the capture starts inside _Z5spillPfii: those lines have no function */
	T_EQ_INT(c.nfuncs, 2);
	for (int i = 0; i < c.nfuncs; i++) {
		const kb_sass_func *a = &c.funcs[i], *b = func(&n, a->name);
		T_OK(b != NULL);
		if (!b)
			continue;
		T_EQ_INT(a->n, b->n);
		int diff = 0, lines = 0;
		for (int j = 0; j < a->n && j < b->n; j++) {
			const kb_sass_insn *x = &a->v[j], *y = &b->v[j];
			diff += x->addr != y->addr || strcmp(x->opcode, y->opcode) ||
				strcmp(x->operands, y->operands) || !x->pred != !y->pred ||
				(x->pred && strcmp(x->pred, y->pred));
			lines += x->line != 0 || x->file != NULL;
		}
		T_EQ_INT(diff, 0);
		T_EQ_INT(lines, 0); /* cuobjdump has no line info */
		char *ma = mix_str(a), *mb = mix_str(b);
		T_EQ_STR(ma, mb);
		free(ma);
		free(mb);
	}
	const kb_sass_func *v4 = func(&c, "_Z9copy_vec4IfLi256EEvPK6float4PS0_i");
	T_INSN(v4, 0x01e0, "BRA", "0x1e0", 0);
	T_INSN(v4, 0x0150, "LDG.E.128.CONSTANT", "R4, desc[UR6][R6.64]", 0);
	const kb_sass_insn *ex = at(v4, 0x110);
	T_OK(ex && ex->pred && strcmp(ex->pred, "@P0") == 0);
	kb_compile_sass_free(&c);
	kb_compile_sass_free(&n);
}

/* ---- the mix key rule ------------------------------------------------------ */

static void test_compile_sass__mix_keys(void)
{
	const char *text =
		"//--------------------- .text.k ---------\n"
		"        /*0000*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;\n"
		"        /*0010*/                   LDG.E.64 R4, desc[UR4][R2.64] ;\n"
		"        /*0020*/                   LDG.E.EF.U16 R4, desc[UR4][R2.64] ;\n"
		"        /*0030*/                   STG.E.64.STRONG.GPU desc[UR4][R2.64], R4 ;\n"
		"        /*0040*/                   STS.128 [R3], R4 ;\n"
		"        /*0050*/                   LDS.64 R4, [R3] ;\n"
		"        /*0060*/                   HMMA.16816.F32.BF16 R8, R4, R12, R8 ;\n"
		"        /*0070*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24 ;\n"
		"        /*0080*/                   LDSM.16.M88.4 R4, [R3] ;\n"
		"        /*0090*/                   MUFU.RCP R0, R1 ;\n"
		"        /*00a0*/                   SHFL.IDX PT, R5, R0, RZ, 0x1f ;\n"
		"        /*00b0*/                   ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R2, [R4], R6 ;\n"
		"        /*00c0*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;\n"
		"        /*00d0*/                   FFMA.SAT R0, R1, R2, R3 ;\n"
		"        /*00e0*/                   IMAD.WIDE.U32 R2, R3, 0x4, R4 ;\n"
		"        /*00f0*/                   ISETP.NE.U32.AND P0, PT, R9, RZ, PT ;\n"
		"        /*0100*/                   BAR.ARV 0x1, 0x40 ;\n"
		"        /*0110*/                   UTMALDG.2D [UR8], [UR4] ;\n"
		"        /*0120*/                   NOP ;\n"
		"        /*0130*/                   BRA 0x130 ;\n"
		"        /*0140*/                   NOP ;\n";
	kb_sass s;
	T_EQ_INT(kb_compile_sass_parse(text, &s), 0);
	T_EQ_INT(s.nfuncs, 1);
	if (s.nfuncs == 1) {
		T_EQ_INT(s.funcs[0].n, 21);
		char *m = mix_str(&s.funcs[0]);
		T_EQ_STR(m, "ATOMG.E.ADD.F32:1 BAR.ARV:1 FFMA:1 HGMMA.64x128x16.F32.BF16:1 "
			    "HMMA.16816.F32.BF16:1 IMAD:1 ISETP:1 LDG.E.128:1 LDG.E.64:1 "
			    "LDG.E.U16:1 LDS.64:1 LDSM.16.M88.4:1 MUFU.RCP:1 NOP:1 REDG.E.ADD:1 "
			    "SHFL.IDX:1 STG.E.64:1 STS.128:1 UTMALDG.2D:1");
		free(m);
	}
	kb_compile_sass_free(&s);
}

static void test_compile_sass__mix_padding(void)
{
	/* no self-branch: trailing NOPs count; a predicated last BRA is code */
	const char *text =
		"\t\tFunction : f\n"
		"        /*0000*/                   FADD R0, R1, R2 ;\n"
		"        /*0010*/               @P0 BRA 0x10 ;\n"
		"        /*0020*/                   NOP ;\n";
	kb_sass s;
	T_EQ_INT(kb_compile_sass_parse(text, &s), 0);
	T_EQ_INT(s.nfuncs, 1);
	if (s.nfuncs == 1) {
		char *m = mix_str(&s.funcs[0]);
		T_EQ_STR(m, "BRA:1 FADD:1 NOP:1");
		free(m);
	}
	kb_compile_sass_free(&s);
	kb_sass_func empty = {0};
	kb_mix *mix = (kb_mix *)&empty;
	T_EQ_INT(kb_compile_sass_mix(&empty, &mix), 0);
	T_OK(mix == NULL);
	T_EQ_INT(kb_compile_sass_mix(NULL, &mix), KB_EINVAL);
}

/* ---- kb_compile_sass with fake tools -------------------------------------- */

typedef struct {
	char dir[64];
	char *old_path, *old_env, *old_cuda;
	char *cat, *cmp;     /* found before PATH is narrowed to dir */
} fake_env;

/* PATH is dir alone; CUDA_HOME is dir/cuda and the built-against toolkit
 * dir/builtin, neither made yet. */
static void fake_begin(fake_env *fe)
{
	strcpy(fe->dir, "/tmp/kb-sass-test-XXXXXX");
	if (!mkdtemp(fe->dir))
		fe->dir[0] = 0;
	const char *p = getenv("PATH"), *e = getenv("KBENCH_NVDISASM"), *c = getenv("CUDA_HOME");
	fe->old_path = p ? kb_xstrdup(p) : NULL;
	fe->old_env = e ? kb_xstrdup(e) : NULL;
	fe->old_cuda = c ? kb_xstrdup(c) : NULL;
	fe->cat = kb_which("cat");
	fe->cmp = kb_which("cmp");
	setenv("PATH", fe->dir, 1);
	unsetenv("KBENCH_NVDISASM");
	char *cuda = kb_xasprintf("%s/cuda", fe->dir);
	setenv("CUDA_HOME", cuda, 1);
	free(cuda);
	static char builtin[96];
	snprintf(builtin, sizeof builtin, "%s/builtin", fe->dir);
	kb_compile__toolkit_set_builtin(builtin);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void restore(const char *name, const char *old)
{
	if (old)
		setenv(name, old, 1);
	else
		unsetenv(name);
}

static void fake_end(fake_env *fe)
{
	if (fe->dir[0])
		nftw(fe->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	restore("PATH", fe->old_path);
	restore("KBENCH_NVDISASM", fe->old_env);
	restore("CUDA_HOME", fe->old_cuda);
	kb_compile__toolkit_set_builtin(NULL);
	free(fe->old_path);
	free(fe->old_env);
	free(fe->old_cuda);
	free(fe->cat);
	free(fe->cmp);
}

/* Writes an executable sh script dir/name (name may hold folders, made here). */
static void fake_tool(const fake_env *fe, const char *name, const char *body)
{
	char *p = kb_xasprintf("%s/%s", fe->dir, name);
	char *s = kb_xasprintf("#!/bin/sh\n%s\n", body);
	kb_err err = {0};
	char *slash = strrchr(p, '/');
	*slash = '\0';
	T_EQ_INT(kb_mkdirs(p, &err), 0);
	*slash = '/';
	T_EQ_INT(kb_file_write(p, s, strlen(s), &err), 0);
	T_EQ_INT(chmod(p, 0755), 0);
	free(p);
	free(s);
}

/* A script that checks its arguments (args, then the temp file as argument
 * argn) and the cubin it was given, records the temp file's name in dir/arg,
 * and prints the listing. */
static char *script_body(const fake_env *fe, const char *args, int argn, const char *cubin,
			 const char *listing)
{
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		cwd[0] = 0;
	return kb_xasprintf(
		"f=\"$%d\"\n"
		"[ \"$*\" = \"%s $f\" ] || { echo \"bad args: $*\" >&2; exit 2; }\n"
		"%s -s \"$f\" %s/%s || { echo 'cubin differs' >&2; exit 3; }\n"
		"echo \"$f\" > %s/arg\n"
		"exec %s %s/%s",
		argn, args, fe->cmp ? fe->cmp : "/usr/bin/cmp", cwd, cubin, fe->dir,
		fe->cat ? fe->cat : "/bin/cat", cwd, listing);
}

/* An nvdisasm -c -gi that checks it is given vector_add.cubin and prints its listing. */
static char *vector_add_nvdisasm(const fake_env *fe)
{
	return script_body(fe, "-c -gi", 3, "tests/fixtures/cubin/vector_add.cubin",
			   FIX "vector_add.nvdisasm.txt");
}

static char *read_cubin(const char *path, size_t *n)
{
	kb_buf b = KB_BUF_INIT;
	kb_err err = {0};
	kb_file_read(path, &b, &err);
	*n = b.len;
	return kb_buf_detach(&b);
}

/* kb_compile_sass on a fixture cubin.  With tool, checks that it worked
 * and that tool made the listing. */
static int run_sass(const char *cubin_path, const char *tool, kb_sass *s, kb_err *err)
{
	size_t n;
	char *cubin = read_cubin(cubin_path, &n);
	T_OK(n > 0);
	int rc = kb_compile_sass(cubin, n, s, err);
	free(cubin);
	if (!tool)
		return rc;
	T_EQ_INT(rc, 0);
	if (rc)
		printf("  err: %s\n", err->msg);
	T_OK(s->available);
	T_EQ_STR(s->tool, tool);
	T_OK(s->unavailable_why == NULL);
	if (s->unavailable_why)
		printf("  why: %s\n", s->unavailable_why);
	return rc;
}

/* The temp file the fake tool saw no longer exists. */
static void check_temp_removed(const fake_env *fe)
{
	char *argf = kb_xasprintf("%s/arg", fe->dir);
	char *seen = slurp(argf);
	T_OK(seen != NULL && strstr(seen, "kbench-sass-") != NULL);
	if (seen) {
		seen[strcspn(seen, "\n")] = 0;
		T_OK(!kb_file_exists(seen));
	}
	free(seen);
	free(argf);
}

static void test_compile_sass__no_tool(void)
{
	fake_env fe;
	fake_begin(&fe);
	size_t n;
	char *cubin = read_cubin("tests/fixtures/cubin/vector_add.cubin", &n);
	kb_sass s;
	kb_err err = {0};
	T_EQ_INT(kb_compile_sass(cubin, n, &s, &err), 0);
	T_OK(!s.available);
	T_EQ_INT(s.nfuncs, 0);
	T_OK(s.tool == NULL && s.text == NULL);
	/* One line where the SASS would be, naming where the rest is (issue 25:
	 * six lines in every compile, diff and pane) */
	T_EQ_STR(s.unavailable_why, "no nvdisasm (nor cuobjdump) here; `kbench devices` says "
		 "where kbench looked and how to point it at one");
	kb_compile_sass_free(&s);
	/* The whole advice: every folder looked in, the toolkit's first, then PATH's. */
	char *text = NULL;
	T_EQ_INT(kb_compile_sass_tool(&text), KB_ENOTFOUND);
	char *want = kb_xasprintf(
		"nvdisasm not found (nor cuobjdump): looked in %s/cuda/bin, %s/builtin/bin (the "
		"CUDA toolkit) and %s (PATH). It ships with the CUDA toolkit on GPU machines: "
		"set CUDA_HOME to the toolkit, or KBENCH_NVDISASM to the program.", fe.dir, fe.dir,
		fe.dir);
	T_EQ_STR(text, want);
	free(want);
	free(text);
	/* Without CUDA_HOME, and with two PATH folders. */
	unsetenv("CUDA_HOME");
	char *path = kb_xasprintf("%s:/nonexistent/kb-bin", fe.dir);
	setenv("PATH", path, 1);
	T_EQ_INT(kb_compile_sass_tool(&text), KB_ENOTFOUND);
	want = kb_xasprintf("nvdisasm not found (nor cuobjdump): looked in %s/builtin/bin (the "
			    "CUDA toolkit) and %s, /nonexistent/kb-bin (PATH). ", fe.dir, fe.dir);
	T_OK(text && !strncmp(text, want, strlen(want)));
	if (text && strncmp(text, want, strlen(want)))
		printf("  got: %s\n", text);
	free(want);
	free(path);
	free(text);
	free(cubin);
	fake_end(&fe);
}

/* An ordinary user's PATH lacks the CUDA bin folder: nvdisasm is found in
 * $CUDA_HOME/bin all the same, ahead of one on PATH. */
static void test_compile_sass__cuda_home_bin(void)
{
	fake_env fe;
	fake_begin(&fe);
	char *body = vector_add_nvdisasm(&fe);
	fake_tool(&fe, "cuda/bin/nvdisasm", body);
	fake_tool(&fe, "nvdisasm", "echo 'the one on PATH ran' >&2; exit 9");
	fake_tool(&fe, "builtin/bin/nvdisasm", "echo 'the built-against one ran' >&2; exit 9");
	kb_sass s;
	kb_err err = {0};
	run_sass("tests/fixtures/cubin/vector_add.cubin", "nvdisasm", &s, &err);
	T_EQ_INT(s.nfuncs, 1);
	check_temp_removed(&fe);
	kb_compile_sass_free(&s);
	/* Without CUDA_HOME: the built-against toolkit's, still ahead of PATH. */
	unsetenv("CUDA_HOME");
	T_OK(run_sass("tests/fixtures/cubin/vector_add.cubin", NULL, &s, &err) < 0);
	T_CONTAINS(err.msg, "the built-against one ran");
	kb_compile_sass_free(&s);
	free(body);
	fake_end(&fe);
}

/* The toolkit is the one whose library folder holds NVRTC, by its real
 * path: CUDA_HOME is a folder of links (as /usr/local/cuda is) with no
 * bin/, and NVRTC's real folder has bin/ beside it.  NVRTC is not loaded
 * to find it. */
static void test_compile_sass__nvrtc_toolkit(void)
{
	fake_env fe;
	fake_begin(&fe);
	char *body = vector_add_nvdisasm(&fe);
	fake_tool(&fe, "real/bin/nvdisasm", body);
	fake_tool(&fe, "real/lib/libnvrtc.so.13", "not a library");
	char *lib = kb_xasprintf("%s/real/lib", fe.dir), *link = kb_xasprintf("%s/cuda", fe.dir);
	char *link64 = kb_xasprintf("%s/cuda/lib64", fe.dir);
	T_EQ_INT(mkdir(link, 0700), 0);
	T_EQ_INT(symlink(lib, link64), 0);
	kb_sass s;
	kb_err err = {0};
	run_sass("tests/fixtures/cubin/vector_add.cubin", "nvdisasm", &s, &err);
	T_OK(dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_NOLOAD) == NULL);
	kb_compile_sass_free(&s);
	free(lib);
	free(link);
	free(link64);
	free(body);
	fake_end(&fe);
}

static void test_compile_sass__fake_nvdisasm(void)
{
	fake_env fe;
	fake_begin(&fe);
	char *body = vector_add_nvdisasm(&fe);
	fake_tool(&fe, "nvdisasm", body);
	fake_tool(&fe, "cuobjdump", "exit 9"); /* nvdisasm wins */
	kb_sass s, ref;
	kb_err err = {0};
	run_sass("tests/fixtures/cubin/vector_add.cubin", "nvdisasm", &s, &err);
	T_OK(parse_fixture(FIX "vector_add.nvdisasm.txt", &ref));
	T_EQ_STR(s.text, ref.text);
	T_EQ_INT(s.nfuncs, 1);
	if (s.nfuncs == 1 && ref.nfuncs == 1) {
		T_EQ_STR(s.funcs[0].name, "vector_add");
		T_EQ_INT(s.funcs[0].n, ref.funcs[0].n);
		T_INSN(&s.funcs[0], 0x00d0, "LDG.E.CONSTANT", "R3, desc[UR4][R2.64]", 16);
		char *a = mix_str(&s.funcs[0]), *b = mix_str(&ref.funcs[0]);
		T_EQ_STR(a, b);
		free(a);
		free(b);
	}
	check_temp_removed(&fe);
	kb_compile_sass_free(&ref);
	kb_compile_sass_free(&s);
	free(body);
	fake_end(&fe);
}

static void test_compile_sass__fake_cuobjdump(void)
{
	fake_env fe;
	fake_begin(&fe);
	char *body = script_body(&fe, "-sass", 2, "tests/fixtures/cubin/vec4.cubin",
				 FIX "vec4_part.cuobjdump.txt");
	fake_tool(&fe, "cuobjdump", body);
	kb_sass s;
	kb_err err = {0};
	run_sass("tests/fixtures/cubin/vec4.cubin", "cuobjdump", &s, &err);
	T_EQ_INT(s.nfuncs, 2);
	T_OK(func(&s, "_Z11copy_scalarPKfPfi") != NULL);
	check_temp_removed(&fe);
	kb_compile_sass_free(&s);
	free(body);
	fake_end(&fe);
}

static void test_compile_sass__env_nvdisasm(void)
{
	fake_env fe;
	fake_begin(&fe);
	char *body = script_body(&fe, "-c -gi", 3, "tests/fixtures/cubin/saxpy.cubin",
				 FIX "saxpy.nvdisasm.txt");
	fake_tool(&fe, "other", body); /* not named nvdisasm; found only via the env */
	char *tool = kb_xasprintf("%s/other", fe.dir);
	setenv("KBENCH_NVDISASM", tool, 1);
	kb_sass s;
	kb_err err = {0};
	run_sass("tests/fixtures/cubin/saxpy.cubin", "nvdisasm", &s, &err);
	T_OK(func(&s, "saxpy") != NULL);
	kb_compile_sass_free(&s);
	/* pointing at nothing says so instead of falling back silently, even
	 * with an nvdisasm in the toolkit */
	fake_tool(&fe, "cuda/bin/nvdisasm", body);
	setenv("KBENCH_NVDISASM", "/nonexistent/nvdisasm", 1);
	T_EQ_INT(run_sass("tests/fixtures/cubin/saxpy.cubin", NULL, &s, &err), 0);
	T_OK(!s.available);
	T_CONTAINS(s.unavailable_why, "KBENCH_NVDISASM=/nonexistent/nvdisasm");
	kb_compile_sass_free(&s);
	free(tool);
	free(body);
	fake_end(&fe);
}

static void test_compile_sass__tool_fails(void)
{
	fake_env fe;
	fake_begin(&fe);
	char *body = kb_xasprintf(
		"echo \"$3\" > %s/arg\n"
		"echo 'nvdisasm fatal   : Input file is not a valid cubin' >&2\nexit 1", fe.dir);
	fake_tool(&fe, "nvdisasm", body);
	free(body);
	kb_sass s;
	kb_err err = {0};
	int rc = kb_compile_sass("\x7f" "ELFjunk", 8, &s, &err);
	T_OK(rc < 0);
	T_CONTAINS(err.msg, "nvdisasm failed (exit status 1)");
	T_CONTAINS(err.msg, "Input file is not a valid cubin");
	T_EQ_INT(err.code, 1);
	T_OK(!s.available && s.nfuncs == 0);
	check_temp_removed(&fe);
	kb_compile_sass_free(&s);
	/* bad arguments */
	T_EQ_INT(kb_compile_sass(NULL, 0, &s, &err), KB_EINVAL);
	T_EQ_INT(kb_compile_sass_parse(NULL, &s), KB_EINVAL);
	T_EQ_INT(kb_compile_sass_parse("", NULL), KB_EINVAL);
	fake_end(&fe);
}

/* ---- junk ------------------------------------------------------------------- */

#ifndef SASS_FUZZ_ITERS
#define SASS_FUZZ_ITERS 60 /* mutations per fixture; -D more for a long run */
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* Parses text, runs the mix on every function, checks the invariants. */
static int parse_junk(const char *text)
{
	kb_sass s;
	int bad = kb_compile_sass_parse(text, &s) != 0;
	for (int i = 0; i < s.nfuncs; i++) {
		const kb_sass_func *f = &s.funcs[i];
		bad += !f->name || !f->name[0];
		for (int j = 0; j < f->n; j++)
			bad += !f->v[j].opcode || !f->v[j].opcode[0] || !f->v[j].operands;
		kb_mix *m = NULL;
		int n = kb_compile_sass_mix(f, &m), sum = 0;
		for (int j = 0; j < n; j++)
			sum += m[j].count;
		bad += n < 0 || sum > f->n;
		kb_compile_sass_mix_free(m, n);
	}
	kb_compile_sass_free(&s);
	return bad;
}

static void test_compile_sass__junk(void)
{
	static const char *edge[] = {
		"", "\n\n", "/*", "/*0010*/", "/*0010*/ ;", "/*0010*/ @P0 ;", "/*zz*/ NOP ;",
		"/*123456789*/ NOP ;", "/*0010*/ 123 ;", "Function :", "Function : f\n/*0*/ X;",
		"//--------------------- .text.", "//--------------------- .text.k\n//## File \"",
		("//--------------------- .text.k\n//## File \"a\", line 99999999999999999999\n"
		 "/*0000*/ BRA `(.L_x_0 ;\n.L_x_0:\n/*0010*/ BRA `(.L_x_0) `(;\n:\n"),
		"//--------------------- .text.k\n//## File \"a\", line 1 inlined at \"b\n/*0*/ A;",
		"//--------------------- .text.k\n/*0000*/ .... ;\n/*0000*/ @ ;\n/*0*/ \t;\n",
		"..........\n...\n.\n", "\t\tFunction : x y z\n/*0000*/ MUFU..EX2. R0 ;",
	};
	int bad = 0;
	for (size_t i = 0; i < KB_ARRAY_LEN(edge); i++)
		bad += parse_junk(edge[i]);
	const char *fixtures[] = {
		FIX "vector_add.nvdisasm.txt", FIX "softmax.nvdisasm_gi.txt",
		FIX "vec4_part.cuobjdump.txt", FIX "saxpy.nvdisasm.txt",
	};
	const char alphabet[] = "/*`();:@.\n\" 0aZ#-\t!x";
	for (size_t k = 0; k < KB_ARRAY_LEN(fixtures); k++) {
		char *text = slurp(fixtures[k]);
		T_OK(text != NULL);
		if (!text)
			continue;
		size_t len = strlen(text);
		char *copy = kb_xmalloc(len + 1);
		for (size_t cut = 0; cut < len; cut += 1 + len / 97) { /* truncations */
			memcpy(copy, text, cut);
			copy[cut] = 0;
			bad += parse_junk(copy);
		}
		for (int it = 0; it < SASS_FUZZ_ITERS; it++) { /* mutations */
			memcpy(copy, text, len + 1);
			for (int m = 0; m < 40; m++) {
				uint32_t r = rnd();
				copy[r % len] = (r & 0x100000) ? (char)(1 + rnd() % 255) :
					alphabet[rnd() % (sizeof alphabet - 1)];
			}
			bad += parse_junk(copy);
		}
		free(copy);
		free(text);
	}
	char buf[4097];
	for (int it = 0; it < 4 * SASS_FUZZ_ITERS; it++) { /* noise */
		size_t n = rnd() % (sizeof buf - 1);
		for (size_t i = 0; i < n; i++)
			buf[i] = (it & 1) ? (char)(1 + rnd() % 255) :
				alphabet[rnd() % (sizeof alphabet - 1)];
		buf[n] = 0;
		bad += parse_junk(buf);
	}
	T_EQ_INT(bad, 0);
}

int main(void)
{
	T_RUN(test_compile_sass__vector_add);
	T_RUN(test_compile_sass__saxpy_without_line_info);
	T_RUN(test_compile_sass__softmax);
	T_RUN(test_compile_sass__softmax_inlined);
	T_RUN(test_compile_sass__vec4);
	T_RUN(test_compile_sass__cuobjdump_matches_nvdisasm);
	T_RUN(test_compile_sass__mix_keys);
	T_RUN(test_compile_sass__mix_padding);
	T_RUN(test_compile_sass__no_tool);
	T_RUN(test_compile_sass__cuda_home_bin);
	T_RUN(test_compile_sass__nvrtc_toolkit);
	T_RUN(test_compile_sass__fake_nvdisasm);
	T_RUN(test_compile_sass__fake_cuobjdump);
	T_RUN(test_compile_sass__env_nvdisasm);
	T_RUN(test_compile_sass__tool_fails);
	T_RUN(test_compile_sass__junk);
	return t_report();
}
