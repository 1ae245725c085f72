/*
 * test_diff.c - the diff layer: unified diffs of buffers (libgit2), SASS
 * normalisation and diffs on the real nvdisasm fixtures (and synthetic
 * variants of them: renumbered registers, shifted addresses, one widened
 * load), and the numbers comparison with its noise rule.  No GPU needed.
 */
#include "t.h"

#include "../../src/diff/diff.h"

#include <ctype.h>
#include <git2.h>

#define FIX "tests/fixtures/sass/"

/* ---- helpers ------------------------------------------------------------ */

/* The diff of two C strings with context ctx; *out is a new string. */
static int diff_str(const char *a, const char *b, int ctx, char **out)
{
	kb_buf o = KB_BUF_INIT;
	kb_err err = {0};
	int rc = kb_diff_text(a, strlen(a), b, strlen(b), "a", "b", ctx, &o, &err);
	if (rc < 0)
		printf("  kb_diff_text: %s\n", err.msg);
	*out = kb_buf_detach(&o);
	return rc;
}

static char *norm(const char *pred, const char *opcode, const char *operands)
{
	kb_sass_insn in = {0};
	in.pred = (char *)pred;
	in.opcode = (char *)opcode;
	in.operands = (char *)operands;
	kb_buf o = KB_BUF_INIT;
	kb_diff_sass_normalize(&in, &o);
	return kb_buf_detach(&o);
}

#define T_NORM(pred, opcode, operands, want) do { char *t_s_ = norm(pred, opcode, operands); \
	T_EQ_STR(t_s_, want); free(t_s_); } while (0)

static char *read_fixture(const char *name)
{
	kb_buf b = KB_BUF_INIT;
	kb_err err = {0};
	char path[256];
	snprintf(path, sizeof path, FIX "%s", name);
	if (kb_file_read(path, &b, &err) < 0) {
		printf("  cannot read %s: %s\n", path, err.msg);
		kb_buf_free(&b);
		return NULL;
	}
	return kb_buf_detach(&b);
}

static const kb_sass_func *find_func(const kb_sass *s, const char *name)
{
	for (int i = 0; i < s->nfuncs; i++)
		if (strcmp(s->funcs[i].name, name) == 0)
			return &s->funcs[i];
	return NULL;
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A listing as another compile might print it: every address shifted by
 * 0x100 and every R/UR/P register renumbered (R n -> n+20, UR n -> n+4,
 * P n -> n+1), labels and everything else untouched. */
static char *renumber(const char *text)
{
	kb_buf o = KB_BUF_INIT;
	const char *p = text;
	while (*p) {
		unsigned addr;
		int used = 0;
		if (p[0] == '/' && p[1] == '*' && sscanf(p, "/*%4x*/%n", &addr, &used) == 1 &&
		    used == 8) {
			kb_buf_catf(&o, "/*%04x*/", addr + 0x100);
			p += used;
			continue;
		}
		if (isalpha((unsigned char)*p) && (p == text || (!is_ident(p[-1]) && p[-1] != '.'))) {
			const char *q = p;
			while (is_ident(*q))
				q++;
			size_t n = (size_t)(q - p), k = 0;
			int add = 0;
			if (n > 2 && !strncmp(p, "UR", 2))
				k = 2, add = 4;
			else if (n > 1 && (*p == 'R' || *p == 'P'))
				k = 1, add = *p == 'R' ? 20 : 1;
			bool digits = k > 0;
			for (size_t i = k; digits && i < n; i++)
				digits = isdigit((unsigned char)p[i]);
			if (digits)
				kb_buf_catf(&o, "%.*s%d", (int)k, p, atoi(p + k) + add);
			else
				kb_buf_catn(&o, p, n);
			p = q;
			continue;
		}
		kb_buf_catc(&o, *p++);
	}
	return kb_buf_detach(&o);
}

/* s with the first `from` replaced by `to` (a new string). */
static char *replace_first(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	if (!at)
		return kb_xstrdup(s);
	return kb_xasprintf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
}

/* s without its first n lines that contain `what` (a new string). */
static char *drop_lines(const char *s, const char *what, int n)
{
	kb_buf o = KB_BUF_INIT;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s + 1) : strlen(s);
		char *line = kb_xstrndup(s, len);
		if (n > 0 && strstr(line, what))
			n--;
		else
			kb_buf_cat(&o, line);
		free(line);
		s += len;
	}
	return kb_buf_detach(&o);
}

/* Parses listing text and diffs function fname of both. */
static int sass_diff(const char *ta, const char *tb, const char *fname, char **out)
{
	kb_sass sa = {0}, sb = {0};
	kb_buf o = KB_BUF_INIT;
	kb_err err = {0};
	int rc = KB_ENOTFOUND;
	kb_compile_sass_parse(ta, &sa);
	kb_compile_sass_parse(tb, &sb);
	const kb_sass_func *fa = find_func(&sa, fname), *fb = find_func(&sb, fname);
	if (fa && fb)
		rc = kb_diff_sass(fa, fb, "a", "b", &o, &err);
	*out = kb_buf_detach(&o);
	kb_compile_sass_free(&sb);
	kb_compile_sass_free(&sa);
	return rc;
}

/* ---- text ------------------------------------------------------------- */

static void test_diff__text_one_change(void)
{
	char *d;
	int n = diff_str("one\ntwo\nthree\nfour\nfive\n", "one\ntwo\nTHREE\nfour\nfive\n", 1, &d);
	T_EQ_INT(n, 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n");
	free(d);
	n = diff_str("one\ntwo\nthree\nfour\nfive\n", "one\ntwo\nTHREE\nfour\nfive\n", 0, &d);
	T_EQ_INT(n, 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -3 +3 @@\n-three\n+THREE\n");
	free(d);
}

static void test_diff__text_identical_is_empty(void)
{
	char *d;
	T_EQ_INT(diff_str("same\ntext\n", "same\ntext\n", 3, &d), 0);
	T_EQ_STR(d, "");
	free(d);
	T_EQ_INT(diff_str("", "", 3, &d), 0);
	T_EQ_STR(d, "");
	free(d);
}

static void test_diff__text_two_hunks(void)
{
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
	const char *b = "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n";
	char *d;
	T_EQ_INT(diff_str(a, b, 1, &d), 3);
	T_EQ_STR(d, "--- a\n+++ b\n"
		    "@@ -1,3 +1,3 @@\n 1\n-2\n+TWO\n 3\n"
		    "@@ -10 +10,2 @@\n 10\n+11\n");
	free(d);
	/* Context wide enough to join them: one hunk. */
	T_EQ_INT(diff_str(a, b, 4, &d), 3);
	T_CONTAINS(d, "@@ -1,10 +1,11 @@\n");
	T_OK(strstr(d, "@@ -") == strstr(d, "@@ -1,10 +1,11 @@") && !strstr(strstr(d, "@@ -") + 1, "@@ -"));
	free(d);
}

static void test_diff__text_insert_into_empty(void)
{
	char *d;
	T_EQ_INT(diff_str("", "a\nb\n", 3, &d), 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n");
	free(d);
	T_EQ_INT(diff_str("a\nb\n", "", 3, &d), 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-a\n-b\n");
	free(d);
}

static void test_diff__text_no_newline_at_end(void)
{
	char *d;
	T_EQ_INT(diff_str("x\ny", "x\nz", 3, &d), 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n"
		    "+z\n\\ No newline at end of file\n");
	free(d);
	/* Only the final newline differs. */
	T_EQ_INT(diff_str("x\n", "x", 3, &d), 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+x\n\\ No newline at end of file\n");
	free(d);
	T_EQ_INT(diff_str("x", "x\n", 3, &d), 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n");
	free(d);
}

static void test_diff__text_labels_and_nul(void)
{
	kb_buf o = KB_BUF_INIT;
	kb_err err = {0};
	/* A NUL byte does not turn the diff into "Binary files differ". */
	const char a[] = "k\0x\nend\n", b[] = "k\0y\nend\n";
	int n = kb_diff_text(a, sizeof a - 1, b, sizeof b - 1, "v1/kernel.cu", "v2/kernel.cu", 3,
			     &o, &err);
	T_EQ_INT(n, 2);
	T_OK(o.s && !strncmp(o.s, "--- v1/kernel.cu\n+++ v2/kernel.cu\n@@ -1,2 +1,2 @@\n-k", 50));
	T_OK(o.s && memchr(o.s, 'y', o.len));
	kb_buf_free(&o);
	T_EQ_INT(kb_diff_text("a", 1, "b", 1, "a", "b", -1, &o, &err), KB_EINVAL);
	T_EQ_INT(kb_diff_text(NULL, 3, "b", 1, "a", "b", 3, &o, &err), KB_EINVAL);
	T_EQ_INT(kb_diff_text(NULL, 0, "b\n", 2, "a", "b", 3, &o, &err), 1);
	T_EQ_STR(o.s, "--- a\n+++ b\n@@ -0,0 +1 @@\n+b\n");
	kb_buf_free(&o);
}

/* ---- SASS normalisation ---------------------------------------------- */

static void test_diff__sass_normalize_lines(void)
{
	T_NORM(NULL, "LDG.E.128.CONSTANT", "R4, desc[UR4][R2.64]",
	       "LDG.E.128.CONSTANT R, desc[UR][R.64]");
	T_NORM(NULL, "LDG.E", "R10, desc[UR6][R4.64+-0x4]", "LDG.E R, desc[UR][R.64+-0x4]");
	T_NORM(NULL, "STG.E.128", "desc[UR6][R2.64], R4", "STG.E.128 desc[UR][R.64], R");
	T_NORM(NULL, "LDC", "R1, c[0x0][0x28]", "LDC R, c[0x0][0x28]");
	T_NORM(NULL, "LDC.64", "R70, c[0x0][0x218]", "LDC.64 R, c[0x0][0x218]");
	T_NORM(NULL, "LDC", "R9, c[0x0][RZ]", "LDC R, c[0x0][RZ]");
	T_NORM(NULL, "ISETP.GE.AND", "P0, PT, R9, UR4, PT", "ISETP.GE.AND P, PT, R, UR, PT");
	T_NORM("@!P0", "IMAD.IADD", "R59, R59, 0x1, -R3.reuse", "@!P IMAD.IADD R, R, 0x1, -R");
	T_NORM(NULL, "IMAD", "R6, R71.reuse, 0x3, RZ", "IMAD R, R, 0x3, RZ");
	T_NORM("@P0", "EXIT", "", "@P EXIT");
	T_NORM("@!PT", "LDS", "RZ, [RZ]", "@!PT LDS RZ, [RZ]");
	T_NORM("@!UP1", "UIADD3", "UR4, UR4, 0x1, URZ", "@!UP UIADD3 UR, UR, 0x1, URZ");
	T_NORM(NULL, "USHF.R.S32.HI", "UR4, URZ, 0x1f, UR5", "USHF.R.S32.HI UR, URZ, 0x1f, UR");
	T_NORM(NULL, "PLOP3.LUT", "P0, PT, UP0, PT, PT, 0x80, 0x8", "PLOP3.LUT P, PT, UP, PT, PT, 0x80, 0x8");
	T_NORM(NULL, "S2R", "R0, SR_TID.X", "S2R R, SR_TID.X");
	T_NORM(NULL, "S2UR", "UR6, SR_CgaCtaId", "S2UR UR, SR_CgaCtaId");
	T_NORM(NULL, "FFMA", "R3, R2, 1.5, -R4", "FFMA R, R, 1.5, -R");
	T_NORM(NULL, "HADD2.F32", "R5, -RZ, R4.H1_H1", "HADD2.F32 R, -RZ, R.H1_H1");
	T_NORM(NULL, "FADD", "R4, |R4|, -QNAN", "FADD R, |R|, -QNAN");
	T_NORM(NULL, "LOP3.LUT", "R0, R0, 0x3fc, RZ, 0xc0, !PT", "LOP3.LUT R, R, 0x3fc, RZ, 0xc0, !PT");
	T_NORM(NULL, "SEL", "R3, R3, R5, !P1", "SEL R, R, R, !P");
	T_NORM(NULL, "MOV", "R2, 0x890", "MOV R, 0x890"); /* an immediate, not a target */
	T_NORM(NULL, "HMMA.16816.F32.BF16", "R4, R8, R12, R4", "HMMA.16816.F32.BF16 R, R, R, R");
	T_NORM(NULL, "NOP", NULL, "NOP");
	T_NORM(NULL, "BAR.SYNC.DEFER_BLOCKING", "0x0", "BAR.SYNC.DEFER_BLOCKING 0x0");
}

static void test_diff__sass_normalize_branches(void)
{
	T_NORM(NULL, "BRA", "0x890", "BRA L");            /* a label the parser resolved */
	T_NORM(NULL, "BRA", "`(.L_x_3)", "BRA L");        /* raw nvdisasm */
	T_NORM(NULL, "BRA", ".L_x_33", "BRA L");          /* a label nobody placed */
	T_NORM("@!P0", "BRA", "0x1a0", "@!P BRA L");
	T_NORM(NULL, "BRA.U", "!UP0, 0x2c0", "BRA.U !UP, L");
	T_NORM(NULL, "BRA.DIV", "UR4, 0x400", "BRA.DIV UR, L");
	T_NORM(NULL, "BSSY", "B0, 0x1230", "BSSY B, L");
	T_NORM(NULL, "BSSY", "B2, `(.L_x_30)", "BSSY B, L");
	T_NORM(NULL, "BSYNC", "B1", "BSYNC B");
	T_NORM(NULL, "WARPSYNC", "0xffffffff", "WARPSYNC 0xffffffff");
	T_NORM(NULL, "RET.REL.NODEC", "R20 0x0", "RET.REL.NODEC R L");
	T_NORM(NULL, "CALL.REL.NOINC", "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath",
	       "CALL.REL.NOINC $__internal_$__cuda_sm3x_div_rn_noftz_f32_slowpath");
	T_NORM(NULL, "CALL.REL.NOINC", "`($__internal_12_$__cuda_sm20_rcp_rn_f32_slowpath)",
	       "CALL.REL.NOINC $__internal_$__cuda_sm20_rcp_rn_f32_slowpath");
	T_NORM(NULL, "CALL.ABS.NOINC", "`(vprintf)", "CALL.ABS.NOINC vprintf");
}

/* The whole of vector_add, parsed from the fixture and normalised. */
static void test_diff__sass_vector_add_listing(void)
{
	char *text = read_fixture("vector_add.nvdisasm.txt");
	T_OK(text);
	if (!text)
		return;
	kb_sass s = {0};
	kb_compile_sass_parse(text, &s);
	const kb_sass_func *f = find_func(&s, "vector_add");
	T_OK(f);
	char *d = NULL;
	kb_buf o = KB_BUF_INIT;
	kb_err err = {0};
	if (f) {
		/* Against an empty function: every line is an addition. */
		kb_sass_func none = {0};
		T_EQ_INT(kb_diff_sass(&none, f, "none", "vector_add", &o, &err), 20);
		d = kb_buf_detach(&o);
		T_EQ_STR(d, "--- none\n+++ vector_add\n@@ -0,0 +1,20 @@\n"
			    "+LDC R, c[0x0][0x28]\n"
			    "+S2R R, SR_TID.X\n"
			    "+S2UR UR, SR_CTAID.X\n"
			    "+LDC R, c[0x0][RZ]\n"
			    "+IMAD R, R, UR, R\n"
			    "+ULDC UR, c[0x0][0x228]\n"
			    "+ISETP.GE.AND P, PT, R, UR, PT\n"
			    "+@P EXIT\n"
			    "+LDC.64 R, c[0x0][0x210]\n"
			    "+ULDC.64 UR, c[0x0][0x208]\n"
			    "+LDC.64 R, c[0x0][0x218]\n"
			    "+LDC.64 R, c[0x0][0x220]\n"
			    "+IMAD.WIDE R, R, 0x4, R\n"
			    "+LDG.E.CONSTANT R, desc[UR][R.64]\n"
			    "+IMAD.WIDE R, R, 0x4, R\n"
			    "+LDG.E.CONSTANT R, desc[UR][R.64]\n"
			    "+IMAD.WIDE R, R, 0x4, R\n"
			    "+FADD R, R, R\n"
			    "+STG.E desc[UR][R.64], R\n"
			    "+EXIT\n");
		free(d);
		/* A function against itself: nothing. */
		T_EQ_INT(kb_diff_sass(f, f, "a", "b", &o, &err), 0);
		T_EQ_INT((int)o.len, 0);
		kb_buf_free(&o);
	}
	kb_compile_sass_free(&s);
	free(text);
}

/* Renumbered registers, shifted addresses, a shorter NOP tail: no diff. */
static void test_diff__sass_renumbered_is_empty(void)
{
	char *text = read_fixture("vector_add.nvdisasm.txt");
	T_OK(text);
	if (!text)
		return;
	char *moved = renumber(text);
	char *shorter = drop_lines(moved, "NOP;", 4);
	T_CONTAINS(moved, "/*0240*/                   BRA `(.L_x_0);");
	T_CONTAINS(moved, "IMAD R29, R29, UR8, R20 ;");
	T_CONTAINS(moved, "ISETP.GE.AND P1, PT, R29, UR8, PT ;");
	T_CONTAINS(moved, "@P1 EXIT ;");
	char *d;
	/* The raw texts do differ almost everywhere ... */
	T_OK(diff_str(text, shorter, 2, &d) > 30);
	free(d);
	/* ... their normal forms do not. */
	T_EQ_INT(sass_diff(text, shorter, "vector_add", &d), 0);
	T_EQ_STR(d, "");
	free(d);
	free(shorter);
	free(moved);
	free(text);
}

/* One scalar load widened to 128 bits: exactly that pair, with context 2. */
static void test_diff__sass_one_widened_load(void)
{
	char *text = read_fixture("vector_add.nvdisasm.txt");
	T_OK(text);
	if (!text)
		return;
	char *moved = renumber(text);
	char *wide = replace_first(moved, "LDG.E.CONSTANT", "LDG.E.128.CONSTANT");
	char *d;
	T_EQ_INT(sass_diff(text, wide, "vector_add", &d), 2);
	T_EQ_STR(d, "--- a\n+++ b\n@@ -12,5 +12,5 @@\n"
		    " LDC.64 R, c[0x0][0x220]\n"
		    " IMAD.WIDE R, R, 0x4, R\n"
		    "-LDG.E.CONSTANT R, desc[UR][R.64]\n"
		    "+LDG.E.128.CONSTANT R, desc[UR][R.64]\n"
		    " IMAD.WIDE R, R, 0x4, R\n"
		    " LDG.E.CONSTANT R, desc[UR][R.64]\n");
	free(d);
	free(wide);
	free(moved);
	free(text);
}

/* copy_scalar vs copy_vec4 (real compiles, one file): the loads and stores
 * and the address arithmetic show; the common prologue does not. */
static void test_diff__sass_scalar_vs_vec4(void)
{
	char *text = read_fixture("vec4.nvdisasm.txt");
	T_OK(text);
	if (!text)
		return;
	kb_sass s = {0};
	kb_compile_sass_parse(text, &s);
	const kb_sass_func *a = find_func(&s, "_Z11copy_scalarPKfPfi");
	const kb_sass_func *b = find_func(&s, "_Z9copy_vec4IfLi256EEvPK6float4PS0_i");
	T_OK(a && b);
	if (a && b) {
		kb_buf o = KB_BUF_INIT;
		kb_err err = {0};
		int n = kb_diff_sass(a, b, "copy_scalar", "copy_vec4", &o, &err);
		if (getenv("T_VERBOSE"))
			printf("%s", o.s ? o.s : "");
		T_OK(n > 0 && n < a->n + b->n);
		T_CONTAINS(o.s, "--- copy_scalar\n+++ copy_vec4\n");
		T_CONTAINS(o.s, "\n-LDG.E.CONSTANT R, desc[UR][R.64]\n");
		T_CONTAINS(o.s, "\n+LDG.E.128.CONSTANT R, desc[UR][R.64]\n");
		T_CONTAINS(o.s, "\n-STG.E desc[UR][R.64], R\n");
		T_CONTAINS(o.s, "\n+STG.E.128 desc[UR][R.64], R\n");
		T_CONTAINS(o.s, "\n-IMAD.WIDE R, R, 0x4, R\n");
		T_CONTAINS(o.s, "\n+IMAD.WIDE R, R, 0x10, R\n");
		/* The common first instruction and the final EXIT are not changes. */
		T_OK(!strstr(o.s, "\n-LDC R, c[0x0][0x28]\n"));
		T_OK(!strstr(o.s, "EXIT\n-") && !strstr(o.s, "\n+EXIT\n") && !strstr(o.s, "\n-EXIT\n"));
		T_OK(!strstr(o.s, "NOP") && !strstr(o.s, "BRA"));
		kb_buf_free(&o);
	}
	kb_compile_sass_free(&s);
	free(text);
}

/* ---- numbers ----------------------------------------------------------- */

/* A Result as the runner writes it, reduced to what the diff reads. */
static json_t *result(const char *verdict, const char *gpu, double med, double cv, double p10,
		      double p90, int regs, double occ)
{
	return json_pack("{s:s, s:s, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:i},"
			 " s:{s:f, s:b},"
			 " s:{s:{s:{s:i, s:i, s:i, s:i, s:i}, s:{s:f, s:i, s:s}}},"
			 " s:{s:{s:s, s:s}}}",
			 "status", "ok", "verdict", verdict,
			 "timing", "median_us", med, "cv", cv, "p10_us", p10, "p90_us", p90,
			 "min_us", p10 - 1, "max_us", p90 + 1, "reps", 100,
			 "roofline", "GBps", 1000.0 * 400.0 / med, "impossible", 0,
			 "compile", "kernel", "resources", "registers", regs, "shared_static_bytes", 0,
			 "local_bytes", 0, "spill_store_bytes", -1, "spill_load_bytes", -1,
			 "occupancy", "occupancy_pct", occ, "blocks_per_sm", (int)(occ / 12.5),
			 "limiter", "warps",
			 "env", "device", "name", gpu, "uuid", "GPU-1234");
}

#define H100 "NVIDIA H100 80GB HBM3"

static const char *verdict_of(json_t *d)
{
	return json_string_value(json_object_get(d, "verdict"));
}

static const char *why_of(json_t *d)
{
	return json_string_value(json_object_get(d, "why"));
}

static json_t *row_named(json_t *d, const char *name)
{
	json_t *rs = json_object_get(d, "rows");
	for (size_t i = 0; i < json_array_size(rs); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(rs, i), "name")), name))
			return json_array_get(rs, i);
	return NULL;
}

static void test_diff__numbers_faster_and_slower(void)
{
	/* a's spread: max(2*0.001*412, (413.4-411)/2) = 1.2; b's: 0.8. */
	json_t *a = result("CORRECT", H100, 412.0, 0.001, 411.0, 413.4, 32, 100.0);
	json_t *b = result("CORRECT", H100, 316.8, 0.001, 316.4, 318.0, 40, 75.0);
	json_t *d = kb_diff_numbers(a, b);
	T_EQ_STR(verdict_of(d), "faster");
	T_EQ_STR(why_of(d), "-23.1% time (412.0 -> 316.8 us), beyond the noise of \xc2\xb1" "1.2 us");
	T_NEAR(json_number_value(json_object_get(d, "noise_us")), 1.2, 1e-9);
	json_t *t = row_named(d, "time (us)");
	T_OK(t);
	T_NEAR(json_number_value(json_object_get(t, "a")), 412.0, 1e-9);
	T_NEAR(json_number_value(json_object_get(t, "delta")), -95.2, 1e-9);
	T_NEAR(json_number_value(json_object_get(t, "delta_pct")), -23.1068, 1e-3);
	json_t *r = row_named(d, "registers");
	T_OK(r && json_integer_value(json_object_get(r, "delta")) == 8);
	T_NEAR(json_number_value(json_object_get(r, "delta_pct")), 25.0, 1e-9);
	T_OK(row_named(d, "bandwidth (GB/s)"));
	T_OK(row_named(d, "occupancy (%)") && row_named(d, "blocks/SM"));
	T_OK(!row_named(d, "TFLOP/s"));           /* neither has FLOPs */
	T_OK(!row_named(d, "spill stores (B)"));  /* -1: unknown on both sides */
	T_OK(!row_named(d, "smem bank conflicts")); /* no SASS metrics on either */
	json_decref(d);
	/* padding the tile: the SASS metrics' conflicts per launch */
	json_object_set_new(a, "sass_metrics", json_pack("{s:I}", "bank_conflicts", (json_int_t)31744));
	json_object_set_new(b, "sass_metrics", json_pack("{s:I}", "bank_conflicts", (json_int_t)0));
	d = kb_diff_numbers(a, b);
	r = row_named(d, "smem bank conflicts");
	T_OK(r && json_integer_value(json_object_get(r, "delta")) == -31744);
	json_decref(d);

	d = kb_diff_numbers(b, a);
	T_EQ_STR(verdict_of(d), "slower");
	T_EQ_STR(why_of(d), "+30.1% time (316.8 -> 412.0 us), beyond the noise of \xc2\xb1" "1.2 us");
	json_decref(d);
	json_decref(a);
	json_decref(b);
}

static void test_diff__numbers_same_within_noise(void)
{
	json_t *a = result("CORRECT", H100, 412.0, 0.001, 411.0, 413.4, 32, 100.0);
	json_t *b = result("CORRECT", H100, 413.1, 0.001, 412.5, 413.5, 32, 100.0);
	json_t *d = kb_diff_numbers(a, b);
	T_EQ_STR(verdict_of(d), "same within noise");
	T_EQ_STR(why_of(d), "+0.3% time (412.0 -> 413.1 us), within the noise of \xc2\xb1" "1.2 us");
	json_decref(d);
	json_decref(b);
	/* The cv term: 2 * 0.05 * 10 = 1.0 us of noise for a tight p10..p90. */
	json_decref(a);
	a = result("CORRECT", H100, 10.0, 0.05, 9.9, 10.1, 16, 50.0);
	b = result("CORRECT", H100, 10.9, 0.0, 10.85, 10.95, 16, 50.0);
	d = kb_diff_numbers(a, b);
	T_EQ_STR(verdict_of(d), "same within noise");
	T_EQ_STR(why_of(d), "+9.0% time (10.00 -> 10.90 us), within the noise of \xc2\xb1" "1.00 us");
	json_decref(d);
	json_decref(b);
	b = result("CORRECT", H100, 11.2, 0.0, 11.15, 11.25, 16, 50.0);
	d = kb_diff_numbers(a, b);
	T_EQ_STR(verdict_of(d), "slower");
	json_decref(d);
	json_decref(b);
	json_decref(a);
}

static void test_diff__numbers_not_comparable(void)
{
	json_t *a = result("CORRECT", H100, 412.0, 0.001, 411.0, 413.4, 32, 100.0);
	json_t *bad = result("INCORRECT", H100, 100.0, 0.001, 99.0, 101.0, 32, 100.0);
	json_t *h200 = result("CORRECT", "NVIDIA H200", 300.0, 0.001, 299.0, 301.0, 32, 100.0);
	json_t *d = kb_diff_numbers(a, bad);
	T_EQ_STR(verdict_of(d), "not comparable: b is INCORRECT");
	T_OK(row_named(d, "time (us)")); /* the rows are still there */
	json_decref(d);
	d = kb_diff_numbers(bad, a);
	T_EQ_STR(verdict_of(d), "not comparable: a is INCORRECT");
	json_decref(d);
	d = kb_diff_numbers(a, h200);
	T_EQ_STR(verdict_of(d),
		 "not comparable: different GPUs (a: NVIDIA H100 80GB HBM3, b: NVIDIA H200)");
	T_EQ_STR(why_of(d), "different GPUs (a: NVIDIA H100 80GB HBM3, b: NVIDIA H200)");
	json_decref(d);
	json_t *err = json_pack("{s:s, s:s}", "type", "result", "status", "compile_error");
	d = kb_diff_numbers(a, err);
	T_EQ_STR(verdict_of(d), "not comparable: b has no verdict (status compile_error)");
	json_t *r = row_named(d, "registers");
	T_OK(r && json_is_null(json_object_get(r, "b")) && json_is_null(json_object_get(r, "delta")));
	json_decref(d);
	d = kb_diff_numbers(NULL, a);
	T_EQ_STR(verdict_of(d), "not comparable: a is missing");
	json_decref(d);
	json_t *nogpu = json_deep_copy(a);
	json_object_del(nogpu, "env");
	d = kb_diff_numbers(a, nogpu);
	T_EQ_STR(verdict_of(d), "not comparable: b does not record its GPU");
	json_decref(d);
	json_decref(nogpu);
	/* another problem size: not comparable; the same args, or one side
	 * without them (older Results), compare as before */
	json_t *big = json_deep_copy(a), *small = json_deep_copy(a);
	json_object_set_new(big, "args", json_pack("{s:i, s:i}", "M", 4096, "N", 131072));
	json_object_set_new(small, "args", json_pack("{s:i, s:i}", "M", 32768, "N", 8192));
	d = kb_diff_numbers(big, small);
	T_EQ_STR(verdict_of(d), "not comparable: different problems (a: M=4096 N=131072, b: M=32768 N=8192)");
	json_decref(d);
	json_t *same = json_deep_copy(small);
	d = kb_diff_numbers(small, same);
	T_OK(strncmp(verdict_of(d), "not comparable", 14) != 0);
	json_decref(d);
	json_decref(same);
	d = kb_diff_numbers(a, small);
	T_OK(strncmp(verdict_of(d), "not comparable", 14) != 0);
	json_decref(d);
	json_decref(big);
	json_decref(small);
	json_decref(err);
	json_decref(h200);
	json_decref(bad);
	json_decref(a);
}

static void test_diff__numbers_counters_and_flops(void)
{
	json_t *a = result("CORRECT", H100, 200.0, 0.001, 199.8, 200.2, 32, 100.0);
	json_t *b = result("CORRECT", H100, 100.0, 0.001, 99.9, 100.1, 32, 100.0);
	json_object_set_new(json_object_get(b, "roofline"), "TFLOPs", json_real(12.5));
	json_object_set_new(a, "counters", json_pack("{s:I, s:f, s:s}", "dram_bytes",
						      (json_int_t)4000000, "l2_hit_pct", 50.0,
						      "note", "text is skipped"));
	json_object_set_new(b, "counters", json_pack("{s:I, s:f, s:i}", "dram_bytes",
						      (json_int_t)2000000, "l2_hit_pct", 75.0,
						      "smsp_inst", 7));
	json_t *d = kb_diff_numbers(a, b);
	json_t *f = row_named(d, "TFLOP/s");
	T_OK(f && json_is_null(json_object_get(f, "a")));
	T_NEAR(json_number_value(json_object_get(f, "b")), 12.5, 1e-12);
	json_t *c = row_named(d, "dram_bytes");
	T_OK(c && json_integer_value(json_object_get(c, "delta")) == -2000000);
	T_NEAR(json_number_value(json_object_get(c, "delta_pct")), -50.0, 1e-9);
	T_OK(row_named(d, "l2_hit_pct"));
	T_OK(!row_named(d, "note"));
	c = row_named(d, "smsp_inst");
	T_OK(c && json_is_null(json_object_get(c, "a")) &&
	     json_integer_value(json_object_get(c, "b")) == 7);
	json_decref(d);
	/* Counters on one side only: no counter rows. */
	json_object_del(b, "counters");
	d = kb_diff_numbers(a, b);
	T_OK(!row_named(d, "dram_bytes"));
	json_decref(d);
	json_decref(b);
	json_decref(a);
}

static void test_diff__numbers_render(void)
{
	json_t *a = result("CORRECT", H100, 412.0, 0.001, 411.0, 413.4, 32, 100.0);
	json_t *b = result("CORRECT", H100, 316.8, 0.001, 316.4, 318.0, 40, 75.0);
	json_t *d = kb_diff_numbers(a, b);
	kb_buf o = KB_BUF_INIT;
	kb_diff_numbers_render(d, "v1", "v2", &o);
	T_EQ_STR(o.s,
		 "                     v1      v2   delta  delta %\n"
		 "time (us)         412.0   316.8   -95.2   -23.1%\n"
		 "bandwidth (GB/s)  970.9  1262.6  +291.8   +30.1%\n"
		 "registers            32      40      +8   +25.0%\n"
		 "static smem (B)       0       0       0     0.0%\n"
		 "local (B)             0       0       0     0.0%\n"
		 "occupancy (%)     100.0    75.0   -25.0   -25.0%\n"
		 "blocks/SM             8       6      -2   -25.0%\n"
		 "verdict: faster: -23.1% time (412.0 -> 316.8 us), beyond the noise of \xc2\xb1"
		 "1.2 us\n");
	kb_buf_free(&o);
	json_decref(d);
	json_t *bad = json_pack("{s:s, s:s}", "status", "ok", "verdict", "IMPOSSIBLE");
	d = kb_diff_numbers(a, bad);
	kb_diff_numbers_render(d, NULL, NULL, &o);
	T_CONTAINS(o.s, "                      a    b  delta  delta %\n"
			"time (us)         412.0  n/a    n/a      n/a\n");
	T_CONTAINS(o.s, "\nregisters            32  n/a    n/a      n/a\n");
	T_CONTAINS(o.s, "verdict: not comparable: b is IMPOSSIBLE\n");
	kb_buf_free(&o);
	json_decref(d);
	json_decref(bad);
	json_decref(b);
	json_decref(a);
}

/* Builds that differ in their compiler options say so under the table;
 * the same options (or none on both sides) say nothing. */
static void test_diff__numbers_options(void)
{
	json_t *a = result("CORRECT", H100, 412.0, 0.001, 411.0, 413.4, 32, 100.0);
	json_t *b = result("CORRECT", H100, 316.8, 0.001, 316.4, 318.0, 32, 100.0);
	json_t *d = kb_diff_numbers(a, b);
	T_OK(!json_object_get(d, "options"));
	json_decref(d);
	json_object_set_new(json_object_get(b, "compile"), "options",
			    json_pack("[s, s]", "-use_fast_math", "-maxrregcount=64"));
	d = kb_diff_numbers(a, b);
	json_t *o = json_object_get(d, "options");
	T_EQ_INT(json_array_size(json_object_get(o, "a")), 0);
	T_EQ_INT(json_array_size(json_object_get(o, "b")), 2);
	kb_buf r = KB_BUF_INIT;
	kb_diff_numbers_render(d, "v1", "v2", &r);
	T_CONTAINS(r.s, "blocks/SM             8       8       0     0.0%\n"
			"options differ: v1 (none); v2 -use_fast_math -maxrregcount=64\n"
			"verdict: faster");
	kb_buf_free(&r);
	json_decref(d);
	json_object_set_new(json_object_get(a, "compile"), "options",
			    json_pack("[s, s]", "-use_fast_math", "-maxrregcount=64"));
	d = kb_diff_numbers(a, b);
	T_OK(!json_object_get(d, "options"));
	json_decref(d);
	json_decref(b);
	json_decref(a);
}

int main(void)
{
	git_libgit2_init(); /* held for the run: each diff's init is then a refcount */
	T_RUN(test_diff__text_one_change);
	T_RUN(test_diff__text_identical_is_empty);
	T_RUN(test_diff__text_two_hunks);
	T_RUN(test_diff__text_insert_into_empty);
	T_RUN(test_diff__text_no_newline_at_end);
	T_RUN(test_diff__text_labels_and_nul);
	T_RUN(test_diff__sass_normalize_lines);
	T_RUN(test_diff__sass_normalize_branches);
	T_RUN(test_diff__sass_vector_add_listing);
	T_RUN(test_diff__sass_renumbered_is_empty);
	T_RUN(test_diff__sass_one_widened_load);
	T_RUN(test_diff__sass_scalar_vs_vec4);
	T_RUN(test_diff__numbers_faster_and_slower);
	T_RUN(test_diff__numbers_same_within_noise);
	T_RUN(test_diff__numbers_not_comparable);
	T_RUN(test_diff__numbers_counters_and_flops);
	T_RUN(test_diff__numbers_render);
	T_RUN(test_diff__numbers_options);
	git_libgit2_shutdown();
	return t_report();
}
