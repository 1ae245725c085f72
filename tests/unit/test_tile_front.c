/* test_tile_front.c - the front end of the tile DSL compiler: the tokens
 * (tokenize.c), the syntax tree (parse.c, parse_expr.c) and the names,
 * types, shapes and constants the checker gives it (check*.c), on the
 * docs/tile.md example and on softmax-, layernorm-, rmsnorm-, vector_add-
 * and matmul-shaped programs; and a table of bad programs, each with its
 * one message, line and column.  No lowering, no GPU. */
#include "../../src/tilegen/tilegen_int.h"
#include "t.h"

#include "tile_front.h"

/* The softmax example of docs/tile.md (the first ``` block that starts
 * with "# y = softmax"), so the reference and the compiler agree. */
static char *docs_example(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_err err;
	if (kb_file_read("docs/tile.md", &b, &err))
		return NULL;
	char *s = strstr(b.s, "```\n# y = softmax");
	char *e = s ? strstr(s + 4, "```") : NULL;
	char *r = e ? kb_xstrndup(s + 4, (size_t)(e - s - 4)) : NULL;
	kb_buf_free(&b);
	return r;
}

/* ===== tokens ===== */

static void test_tile_front__tokens(void)
{
	const char *text = "x = 0x1F + 1.5 * 1e-5 - .5 # comment\n\n\n; y <= 2 && !z\n"
			   "//! arg N = 4\n  w += 7.\n";
	kb_tile__toks t = {0};
	kb_diags d = {0};
	kb_tile__tokenize("t.tile", text, strlen(text), &t, &d);
	T_EQ_INT(d.n, 0);
	static const char *const want[] = {"x", "=", "0x1F", "+", "1.5", "*", "1e-5", "-", ".5",
					   "\n", "y", "<=", "2", "&&", "!", "z", "\n", "w", "+=",
					   "7.", "\n", ""};
	T_EQ_INT(t.n, (int)KB_ARRAY_LEN(want));
	for (int i = 0; i < t.n && i < (int)KB_ARRAY_LEN(want); i++)
		if (t.v[i].kind != KB_TT_NEWLINE || want[i][0] != '\n')
			T_OK(t.v[i].len == (int)strlen(want[i]) &&
			     !memcmp(t.v[i].p, want[i], strlen(want[i])));
	T_EQ_INT(t.v[2].kind, KB_TT_INT);
	T_EQ_INT(t.v[2].ival, 31);
	T_EQ_INT(t.v[4].kind, KB_TT_FLOAT);
	T_NEAR(t.v[6].fval, 1e-5, 1e-12);
	T_NEAR(t.v[8].fval, 0.5, 0);
	T_EQ_INT(t.v[9].kind, KB_TT_NEWLINE); /* three newlines and ';' fold into one */
	T_EQ_INT(t.v[10].line, 4);             /* y */
	T_EQ_INT(t.v[10].col, 3);
	T_EQ_INT(t.v[17].line, 6);             /* w, after the //! line */
	T_EQ_INT(t.v[17].col, 3);
	T_OK(kb_tile__tok_is(&t.v[11], "<="));
	T_OK(!kb_tile__tok_is(&t.v[11], "<"));
	T_EQ_INT(t.v[t.n - 1].kind, KB_TT_EOF);
	free(t.v);
	kb_diags_free(&d);
}

static void test_tile_front__token_errors(void)
{
	const char *text = "a = 1 @ 2\nb = 12abc $\nc = 0x\n";
	kb_tile__toks t = {0};
	kb_diags d = {0};
	kb_tile__tokenize("t.tile", text, strlen(text), &t, &d);
	T_EQ_INT(d.n, 4);
	T_OK(has_error(&d, 1, 7, "unexpected character '@'"));
	T_OK(has_error(&d, 2, 5, "bad number '12abc'"));
	T_OK(has_error(&d, 2, 11, "unexpected character '$'"));
	T_OK(has_error(&d, 3, 5, "bad number '0x'"));
	T_EQ_INT(d.n ? d.v[0].len : 0, 1);
	T_EQ_INT(d.n > 1 ? d.v[1].len : 0, 5);
	free(t.v);
	kb_diags_free(&d);
}

/* ===== good programs ===== */

static void test_tile_front__docs_softmax(void)
{
	char *text = docs_example();
	T_OK(text != NULL);
	if (!text)
		return;
	front fr;
	T_OK(good(&fr, text, NULL, 0));
	T_EQ_INT(fr.f.nkernels, 1);
	const kb_tile__kernel_ast *ka = &fr.f.kernels[0];
	T_EQ_STR(ka->k.name, "softmax");
	T_EQ_INT(ka->k.line, 10);
	T_EQ_INT(ka->k.col, 8);
	T_EQ_STR(param_list(&fr, 0), "x y:out M:size N:size");
	T_EQ_INT(ka->k.params[0].rank, 2);
	T_EQ_STR(ka->k.params[0].dims[1], "N");
	T_EQ_INT(ka->k.params[2].dtype, KB_TILE_I32);
	T_EQ_INT(ka->k.threads, 256);
	T_EQ_STR(ka->k.grid[0], "M");
	T_OK(ka->k.grid[1] == NULL);
	T_EQ_STR(var_type(&fr, 0, "row"), "i32 scalar");
	T_EQ_STR(var_type(&fr, 0, "m"), "f32 scalar");
	T_EQ_STR(var_type(&fr, 0, "s"), "f32 scalar");
	T_EQ_STR(var_type(&fr, 0, "t"), "f32[8192]");
	T_EQ_STR(var_type(&fr, 0, "m_new"), "f32 scalar");
	kb_tile__stmt *c = find_def(ka->body, ka->nbody, "BLOCK");
	T_OK(c && c->kind == KB_TS_CONST && c->value->is_const && c->value->cval == 8192);
	/* the second loop's store: its slice and value */
	kb_tile__stmt *loop2 = ka->body[5], *st = loop2->body[1];
	T_EQ_INT(st->kind, KB_TS_STORE);
	T_EQ_INT(st->slice->idx[1].extent, 8192);
	T_EQ_STR(kb_tile__type_str(&st->value->type).s, "f32[8192]");
	T_EQ_INT(st->value->line, 23);
	T_EQ_INT(st->value->col, 38);
	front_free(&fr);
	free(text);
}

static void test_tile_front__define_overrides_const(void)
{
	char *text = docs_example();
	if (!text) {
		T_FAIL_AT("no example in docs/tile.md");
		return;
	}
	static const char *const defs[] = {"OTHER=3", "BLOCK=4096"};
	front fr;
	T_OK(good(&fr, text, defs, 2));
	T_EQ_STR(var_type(&fr, 0, "t"), "f32[4096]");
	kb_tile__stmt *c = find_def(fr.f.kernels[0].body, fr.f.kernels[0].nbody, "BLOCK");
	T_OK(c && c->value->cval == 4096);
	front_free(&fr);
	/* a define that is not an integer is an error at the const */
	static const char *const bad[] = {"BLOCK=big"};
	run_front(&fr, text, bad, 1);
	T_EQ_INT(fr.nerr, 1);
	T_OK(has_error(&fr.d, 11, 5, "the define BLOCK=big does not give const BLOCK an integer"));
	front_free(&fr);
	free(text);
}

static const char layernorm[] =
	"# y = (x - mean) / sqrt(var + eps) * w + b over rows\n"
	"kernel layernorm(x: f32[M, N], w: f32[N], b: f32[N], y: f32[M, N], eps: f32)\n"
	"        grid(M) threads(256) {\n"
	"    const BLOCK = 1024\n"
	"    row = pid(0)\n"
	"    s = 0.0\n"
	"    for c in range(0, N, BLOCK) {\n"
	"        s += sum(load(x[row, c : c + BLOCK]))\n"
	"    }\n"
	"    mean = s / N\n"
	"    v = 0.0\n"
	"    for c in range(0, N, BLOCK) {\n"
	"        inside = c + arange(BLOCK) < N\n"
	"        d = where(inside, load(x[row, c : c + BLOCK]) - mean, 0.0)\n"
	"        v += sum(d * d)\n"
	"    }\n"
	"    rstd = rsqrt(v / N + eps)\n"
	"    for c in range(0, N, BLOCK) {\n"
	"        t = load(x[row, c : c + BLOCK])\n"
	"        wb = load(w[c : c + BLOCK]); bb = load(b[c : c + BLOCK])\n"
	"        store(y[row, c : c + BLOCK], (t - mean) * rstd * wb + bb)\n"
	"    }\n"
	"}\n";

static void test_tile_front__layernorm(void)
{
	front fr;
	T_OK(good(&fr, layernorm, NULL, 0));
	T_EQ_STR(param_list(&fr, 0), "x w b y:out eps M:size N:size");
	T_EQ_INT(fr.f.kernels[0].k.params[4].rank, 0);
	T_EQ_INT(fr.f.kernels[0].k.params[4].dtype, KB_TILE_F32);
	T_EQ_STR(var_type(&fr, 0, "mean"), "f32 scalar");
	T_EQ_STR(var_type(&fr, 0, "inside"), "bool[1024]");
	T_EQ_STR(var_type(&fr, 0, "d"), "f32[1024]");
	T_EQ_STR(var_type(&fr, 0, "rstd"), "f32 scalar");
	T_EQ_STR(var_type(&fr, 0, "bb"), "f32[1024]");
	front_free(&fr);
}

static const char rmsnorm[] =
	"kernel rmsnorm(x: bf16[M, N], g: bf16[N], y: bf16[M, N]) grid(M) threads(128) {\n"
	"    const BLOCK = 4096\n"
	"    row = pid(0)\n"
	"    ss = 0.0\n"
	"    for c in range(0, N, BLOCK) {\n"
	"        t = load(x[row, c : c + BLOCK])\n"
	"        ss += sum(t * t)\n"
	"    }\n"
	"    r = rsqrt(ss / N + 1e-6)\n"
	"    for c in range(0, N, BLOCK) {\n"
	"        t = f32(load(x[row, c : c + BLOCK])) * r\n"
	"        store(y[row, c : c + BLOCK], bf16(t * load(g[c : c + BLOCK])))\n"
	"    }\n"
	"}\n";

static void test_tile_front__rmsnorm_bf16(void)
{
	front fr;
	T_OK(good(&fr, rmsnorm, NULL, 0));
	T_EQ_STR(param_list(&fr, 0), "x g y:out M:size N:size");
	T_EQ_INT(fr.f.kernels[0].k.threads, 128);
	kb_tile__stmt *loop = fr.f.kernels[0].body[3];
	T_EQ_STR(kb_tile__type_str(&loop->body[0]->type).s, "bf16[4096]"); /* load keeps bf16 */
	T_EQ_STR(kb_tile__type_str(&loop->body[1]->value->type).s, "f32 scalar");
	kb_tile__stmt *st = fr.f.kernels[0].body[5]->body[1];
	T_EQ_STR(kb_tile__type_str(&st->value->type).s, "bf16[4096]");
	T_EQ_STR(kb_tile__type_str(&st->value->args[0]->type).s, "f32[4096]"); /* bf16 computes as f32 */
	front_free(&fr);
}

static const char vector_add[] =
	"kernel vector_add(a: f32[N], b: f32[N], c: f32[N]) grid(cdiv(N, BLOCK)) threads(128) {\n"
	"    const BLOCK = 1024\n"
	"    i = pid(0) * BLOCK\n"
	"    in = i + arange(BLOCK) < N\n"
	"    store(c[i : i + BLOCK], load(a[i : i + BLOCK], mask = in) + load(b[i : i + BLOCK]),\n"
	"          mask = in)\n"
	"}\n";

static void test_tile_front__vector_add(void)
{
	/* `in` is a keyword: the statement fails, and so does every use of it,
	 * with one message each */
	front fr;
	run_front(&fr, vector_add, NULL, 0);
	T_OK(fr.nerr >= 1);
	T_OK(has_error(&fr.d, 4, 5, "expected a statement, got 'in'"));
	front_free(&fr);

	char *text = kb_xstrdup(vector_add);
	for (char *p = text; (p = strstr(p, " in")); p += 3)
		if (p[3] == ' ' || p[3] == ')')
			memcpy(p, " ok", 3);
	T_OK(good(&fr, text, NULL, 0));
	T_EQ_STR(param_list(&fr, 0), "a b c:out N:size");
	T_EQ_STR(fr.f.kernels[0].k.grid[0], "cdiv(N, BLOCK)");
	T_EQ_STR(var_type(&fr, 0, "i"), "i32 scalar");
	T_EQ_STR(var_type(&fr, 0, "ok"), "bool[1024]");
	front_free(&fr);
	free(text);
}

static const char matmul[] =
	"kernel matmul(a: bf16[M, K], b: bf16[K, N], c: f32[M, N])\n"
	"    grid(cdiv(M, BM), cdiv(N, BN)) threads(128) {\n"
	"    const BM = 64; const BN = 128\n"
	"    const BK = 32\n"
	"    m0 = pid(0) * BM\n"
	"    n0 = pid(1) * BN\n"
	"    acc = zeros(BM, BN)\n"
	"    for k in range(0, K, BK) {\n"
	"        x = load(a[m0 : m0 + BM, k : k + BK])\n"
	"        w = load(b[k : k + BK, n0 : n0 + BN])\n"
	"        acc += dot(x, w)\n"
	"    }\n"
	"    store(c[m0 : m0 + BM, n0 : n0 + BN], acc)\n"
	"    rows = sum(acc, 1)\n"
	"    cols = max(acc, axis = 0)\n"
	"    big = max(acc, 0.0)\n"
	"}\n";

static void test_tile_front__matmul_dot(void)
{
	front fr;
	T_OK(good(&fr, matmul, NULL, 0));
	T_EQ_STR(param_list(&fr, 0), "a b c:out M:size K:size N:size");
	T_EQ_STR(fr.f.kernels[0].k.grid[1], "cdiv(N, BN)");
	T_EQ_STR(var_type(&fr, 0, "x"), "bf16[64, 32]");
	T_EQ_STR(var_type(&fr, 0, "w"), "bf16[32, 128]");
	T_EQ_STR(var_type(&fr, 0, "acc"), "f32[64, 128]");
	T_EQ_STR(var_type(&fr, 0, "rows"), "f32[64]");
	T_EQ_STR(var_type(&fr, 0, "cols"), "f32[128]");
	T_EQ_STR(var_type(&fr, 0, "big"), "f32[64, 128]");
	kb_tile__stmt *upd = fr.f.kernels[0].body[6]->body[2];
	T_EQ_INT(upd->op, KB_TOP_ADD);
	T_OK(!upd->defines);
	T_EQ_STR(kb_tile__type_str(&upd->type).s, "f32[64, 128]");
	front_free(&fr);
}

/* ===== expressions ===== */

static void test_tile_front__expression_types(void)
{
	const char *text =
		"kernel f(x: f32[N], h: f16[N], q: i64[N], n: i32, z: f32) grid(N) threads(64) {\n"
		"    a = 1 + 2 * 3\n"
		"    b = n / 2 + 1.5\n"
		"    c = load(h[0 : 8])\n"
		"    d = c * 2\n"
		"    e = load(q[0 : 8]) + n\n"
		"    f = arange(8) < 4 || !(arange(8) == 2)\n"
		"    g = exp(arange(8))\n"
		"    p = abs(arange(8) - 4)\n"
		"    i = load(x[0 : 8]) + load(x[3 : 4])\n"
		"    j = load(x[n])\n"
		"    k = where(f, c, 0)\n"
		"    l = -h16()\n"
		"}\n";
	/* h16 is unknown: one error, and l stays quiet afterwards */
	front fr;
	run_front(&fr, text, NULL, 0);
	T_EQ_INT(fr.nerr, 1);
	T_OK(has_error(&fr.d, 13, 10, "unknown function 'h16'"));
	T_EQ_STR(var_type(&fr, 0, "a"), "i32 scalar");
	T_EQ_STR(var_type(&fr, 0, "b"), "f32 scalar");
	T_EQ_STR(var_type(&fr, 0, "c"), "f16[8]");
	T_EQ_STR(var_type(&fr, 0, "d"), "f32[8]");
	T_EQ_STR(var_type(&fr, 0, "e"), "i64[8]");
	T_EQ_STR(var_type(&fr, 0, "f"), "bool[8]");
	T_EQ_STR(var_type(&fr, 0, "g"), "f32[8]");
	T_EQ_STR(var_type(&fr, 0, "p"), "i32[8]");
	T_EQ_STR(var_type(&fr, 0, "i"), "f32[8]");
	T_EQ_STR(var_type(&fr, 0, "j"), "f32 scalar");
	T_EQ_STR(var_type(&fr, 0, "k"), "f32[8]");
	kb_tile__stmt *a = fr.f.kernels[0].body[0];
	T_OK(a->value->is_const && a->value->cval == 7);
	T_EQ_INT(a->value->op, KB_TOP_ADD); /* * binds tighter */
	front_free(&fr);
}

static void test_tile_front__constant_folding(void)
{
	const char *text =
		"kernel f(x: f32[N]) grid(cdiv(N, B)) threads(T * 2) {\n"
		"    const B = cdiv(1000, 32) * 2 + max(3, 7) % 4 - min(-2, 5)\n"
		"    const T = i32(B / 2) * 0 + 64\n"
		"    const C = (B - 1) * -2\n"
		"    for i in range(0, N, B) {\n"
		"        t = load(x[(i + 1) * B - B : i * B + B + i - i])\n"
		"        u = load(x[2 * i + 4 : 4 + i + i + 16])\n"
		"    }\n"
		"}\n";
	front fr;
	T_OK(good(&fr, text, NULL, 0));
	kb_tile__stmt **b = fr.f.kernels[0].body;
	T_EQ_INT(b[0]->value->cval, 32 * 2 + 3 + 2);
	T_EQ_INT(b[1]->value->cval, 64);
	T_EQ_INT(b[2]->value->cval, -(69 - 1) * 2);
	T_EQ_INT(fr.f.kernels[0].k.threads, 128);
	T_EQ_STR(var_type(&fr, 0, "t"), "f32[69]");
	T_EQ_STR(var_type(&fr, 0, "u"), "f32[16]");
	front_free(&fr);
}

/* ** binds tighter than a unary minus on its left and runs right to left;
 * << >> & | fold as C's; 2 ** -1 is a float, not a folded integer. */
static void test_tile_front__power_and_bits(void)
{
	const char *text =
		"kernel f(x: f32[N]) grid(1) threads(32) {\n"
		"    const A = -2 ** 2\n"
		"    const B = 2 ** 3 ** 2\n"
		"    const C = 1 << 4 | 3 & 6 >> 1\n"
		"    r = 2 ** -1\n"
		"    s = load(x[0 : 32]) ** 2\n"
		"    u = arange(32) >> 1\n"
		"    d = f64(load(x[0 : 32])) * -0.1\n"
		"}\n";
	front fr;
	T_OK(good(&fr, text, NULL, 0));
	kb_tile__stmt **b = fr.f.kernels[0].body;
	T_EQ_INT(b[0]->value->cval, -4);
	T_EQ_INT(b[1]->value->cval, 512);
	T_EQ_INT(b[2]->value->cval, 16 | (3 & 3));
	T_EQ_STR(var_type(&fr, 0, "r"), "f32 scalar");
	T_OK(!b[3]->value->is_const);
	T_EQ_STR(var_type(&fr, 0, "s"), "f32[32]");
	T_EQ_STR(var_type(&fr, 0, "u"), "i32[32]");
	/* a float literal beside an f64 value is f64 (its digits kept) */
	T_EQ_STR(var_type(&fr, 0, "d"), "f64[32]");
	T_EQ_INT(b[6]->value->args[1]->type.dtype, KB_TILE_F64);
	T_EQ_INT(b[6]->value->args[1]->args[0]->type.dtype, KB_TILE_F64);
	front_free(&fr);
}

static void test_tile_front__scopes(void)
{
	const char *text =
		"kernel f(x: f32[N], y: f32[N]) grid(N) threads(32) {\n"
		"    acc = 0.0\n"
		"    for c in range(0, N, 4) {\n"
		"        t = load(x[c : c + 4])\n"
		"        acc += sum(t)\n"
		"        if acc > 1.0 {\n"
		"            acc = acc / 2.0\n"
		"            v = 1\n"
		"        } else if acc < 0.0 {\n"
		"            v = 2.0\n"
		"        } else {\n"
		"            v = true\n"
		"        }\n"
		"    }\n"
		"    for c in range(0, N, 4) {\n"
		"        t = load(x[c : c + 4]) * acc\n"
		"        store(y[c : c + 4], t)\n"
		"    }\n"
		"}\n";
	/* the same names in sibling blocks are new names each time */
	front fr;
	T_OK(good(&fr, text, NULL, 0));
	kb_tile__stmt *if_ = fr.f.kernels[0].body[1]->body[2];
	T_EQ_INT(if_->kind, KB_TS_IF);
	T_EQ_INT(if_->nels, 1);
	T_EQ_INT(if_->els[0]->kind, KB_TS_IF);
	T_EQ_INT(if_->els[0]->nels, 1);
	T_OK(!if_->body[0]->defines); /* acc = acc / 2.0 assigns the outer acc */
	T_OK(if_->body[1]->defines);
	front_free(&fr);
}

static void test_tile_front__several_kernels(void)
{
	const char *text =
		"kernel a(x: f32[N]) grid(N) threads(32) {\n"
		"    v = load(x[0])\n"
		"}\n"
		"\n"
		"kernel b(x: f32[L, 16], s: i32) grid(L, 2) threads(1024) {\n"
		"    v = load(x[pid(1), 0 : 16]) * s\n"
		"}\n";
	front fr;
	T_OK(good(&fr, text, NULL, 0));
	T_EQ_INT(fr.f.nkernels, 2);
	T_EQ_STR(param_list(&fr, 0), "x N:size");
	T_EQ_STR(param_list(&fr, 1), "x s L:size"); /* an integer dim is no size */
	T_EQ_STR(var_type(&fr, 0, "v"), "f32 scalar");
	T_EQ_STR(var_type(&fr, 1, "v"), "f32[16]");
	T_EQ_STR(fr.f.kernels[1].k.grid[1], "2");
	T_EQ_INT(fr.f.kernels[1].k.threads, 1024);
	front_free(&fr);
}

/* ===== bad programs ===== */

#define H "kernel f(x: f32[M, N], y: f32[M, N], a: f32) grid(M) threads(256) {\n"

static const struct {
	int src_line;
	const char *text;
	int line, col;
	const char *msg;
} bad[] = {
	/* syntax */
	{__LINE__, H "    r = 1 @\n}\n", 2, 11, "unexpected character '@'"},
	{__LINE__, H "    r = 12abc\n}\n", 2, 9, "bad number '12abc'"},
	{__LINE__, "kernel f(x: f32[N]) threads(32) {\n}\n", 1, 21,
	 "expected 'grid(...)' after the parameters of kernel f, got 'threads'"},
	{__LINE__, "kernel f(x: f32[N]) grid(N) {\n}\n", 1, 29,
	 "expected 'threads(...)' after grid(...) of kernel f, got '{'"},
	{__LINE__, H "    for c in range(0, N) {\n        r = c\n}\n", 2, 26,
	 "unterminated block: this '{' of the for loop has no '}' (the '}' at 4:1 lines up"},
	{__LINE__, H "    for c in range(0, N) {\n        r = c\n    }\n", 1, 67,
	 "unterminated block: this '{' of the body of kernel f has no '}'"},
	{__LINE__, H "    if N > 1 {\n        for c in range(0, N) {\n        r = c\n    }\n}\n", 3, 30,
	 "unterminated block: this '{' of the for loop has no '}' (the '}' at 5:5 lines up with an "
	 "outer block)"},
	{__LINE__, H "    t = load(x[0, 0 : 4] {\n    }\n}\n", 2, 26,
	 "expected ')' after the arguments of load, got '{'"},
	{__LINE__, H "    for c range(0, N) {\n    }\n}\n", 2, 11, "expected 'in' after 'for c', got 'range'"},
	{__LINE__, "kernel f(x: f8[N]) grid(N) threads(32) {\n}\n", 1, 13,
	 "expected a dtype (f32 f16 bf16 f64 i32 i64 u8), got 'f8'"},
	{__LINE__, "kernel f(x: f32[N, N, N]) grid(N) threads(32) {\n}\n", 1, 23,
	 "a tensor has rank 1 or 2; x has a third dim"},
	{__LINE__, "kernel f(s: f16) grid(1) threads(32) {\n}\n", 1, 13,
	 "a scalar parameter is i32, i64 or f32, not 'f16'"},
	{__LINE__, H "    r = 3 +\n}\n", 2, 12, "expected an expression, got end of line"},
	{__LINE__, H "    t = load(x[0 : 8, 0 : 8])\n    r = t - y[:, None]\n}\n", 3, 15,
	 "a range needs its start; for a row broadcast (m[:, None]) reduce with keep = true: an [R, 1] "
	 "tile broadcasts along the rows"},
	{__LINE__, H "    r = arange(8, axis = 2)\n}\n", 2, 26, "the axis of arange must be from 0 to 1, got 2"},
	{__LINE__, H "    r = (1 + 2\n}\n", 2, 15, "expected ')' to close the '(' at 2:9, got end of line"},
	{__LINE__, H "    r = 1 2\n}\n", 2, 11, "expected the end of the line after the assignment, got '2'"},
	{__LINE__, H "    y[0, 0] = 1.0\n}\n", 2, 5, "only a name can be assigned"},
	{__LINE__, H "    exp(1.0)\n}\n", 2, 5, "this value is unused"},
	{__LINE__, H "    else {\n    }\n}\n", 2, 5, "'else' without an 'if' before it"},
	{__LINE__, "x = 1\n", 1, 1, "expected 'kernel', got 'x'"},
	{__LINE__, H "    store(y[0, 0 : 4])\n}\n", 2, 5, "store takes a slice and a value"},
	{__LINE__, H "    t = load(x[0, 0 : 4], other = 0.0, 1)\n}\n", 2, 40,
	 "a positional argument of load after its keyword arguments"},
	{__LINE__, H "    const B 4\n}\n", 2, 13, "expected '=' after 'const B', got '4'"},
	{__LINE__, H "    r = load(x[0, 0 : 4)\n}\n", 2, 24, "expected ']' after the indices of x, got ')'"},
	/* names */
	{__LINE__, H "    r = q + 1\n}\n", 2, 9, "unknown name 'q'"},
	{__LINE__, H "    rows = 1\n    r = row + 1\n}\n", 3, 9, "unknown name 'row' (did you mean 'rows'?)"},
	{__LINE__, H "    for c in range(0, N) {\n    }\n    r = c\n}\n", 4, 9,
	 "'c' is the loop variable of the for loop at 2:5, only visible inside it"},
	{__LINE__, H "    if true {\n        v = 1\n    }\n    r = v\n}\n", 5, 9,
	 "'v' is not defined here: it was defined at 3:9 inside the if at 2:5"},
	{__LINE__, H "    a = 1.0\n}\n", 2, 5, "cannot assign to 'a': it is a scalar parameter (defined at 1:38)"},
	{__LINE__, H "    r = x + 1\n}\n", 2, 9, "'x' is a tensor: read it with load(x[...])"},
	{__LINE__, H "    s += 1.0\n}\n", 2, 5, "unknown variable 's': '+=' needs a variable defined before"},
	{__LINE__, H "    r = 1\n    for r in range(0, 4) {\n    }\n}\n", 3, 5,
	 "the loop variable 'r' would hide a variable defined at 2:5"},
	{__LINE__, "kernel f(x: f32[N], x: f32[N]) grid(N) threads(32) {\n}\n", 1, 21,
	 "parameter 'x' is defined twice (first at 1:10)"},
	{__LINE__, "kernel f(x: f32[N]) grid(N) threads(32) {\n}\nkernel f(x: f32[N]) grid(N) threads(32) {\n}\n",
	 3, 8, "kernel 'f' is defined twice (first at 1:8)"},
	{__LINE__, "kernel f(x: f32[N]) grid(r) threads(32) {\n    r = 1\n}\n", 1, 26,
	 "grid(...) and threads(...) can use sizes, consts and scalar parameters, not the variable 'r'"},
	{__LINE__, H "    const M = 4\n}\n", 2, 5, "'M' is already a size (defined at 1:10)"},
	/* functions */
	{__LINE__, H "    r = expp(1.0)\n}\n", 2, 9,
	 "unknown function 'expp' (did you mean 'exp', 'exp2' or 'expm1'?); the functions are load "
	 "arange zeros pid sum max min exp exp2 log sqrt rsqrt abs tanh erf sigmoid sin cos log1p "
	 "expm1 floor ceil pow where f32 f16 bf16 i32 f64 trans dot cdiv, and the statements store "
	 "atomic_add atomic_max"},
	{__LINE__, H "    r = gelu(1.0)\n}\n", 2, 9, "unknown function 'gelu'; the functions are load "},
	{__LINE__, H "    r = exp(1.0, 2.0)\n}\n", 2, 9,
	 "exp takes 1 argument, got 2 (exp(x) or exp(x, exact = true))"},
	{__LINE__, H "    r = load(x[0, 0 : 4], others = 0.0)\n}\n", 2, 36, "load has no argument others="},
	{__LINE__, H "    r = pid(1)\n}\n", 2, 13, "pid(1): grid(...) of kernel f has 1 axis"},
	{__LINE__, H "    r = arange(N)\n}\n", 2, 16,
	 "the length of arange must be a compile-time integer, got i32 scalar known only at run time"},
	{__LINE__, H "    p = load(x[0 : 4, 0 : 4])\n    r = sum(p)\n}\n", 3, 9,
	 "sum of a 2-d tile needs an axis: sum(t, axis = 0) or sum(t, axis = 1)"},
	{__LINE__, H "    r = max(load(x[0, 0 : 4]), 1.0, axis = 0)\n}\n", 2, 44,
	 "max(a, b) is element-wise and takes no axis"},
	{__LINE__, H "    r = where(1, 2.0, 3.0)\n}\n", 2, 15, "the condition of where must be bool, got i32 scalar"},
	{__LINE__, "kernel f(x: f32[N, N], h: bf16[N, N]) grid(N) threads(32) {\n"
		   "    p = load(x[0 : 16, 0 : 16])\n    q = load(h[0 : 16, 0 : 16])\n    r = dot(p, q)\n}\n",
	 4, 13, "dot takes f16 or bf16 tiles, got f32[16, 16] (cast it: bf16(...))"},
	{__LINE__, "kernel f(h: bf16[N, N]) grid(N) threads(32) {\n"
		   "    p = load(h[0 : 16, 0 : 32])\n    r = dot(p, p)\n}\n",
	 3, 9, "dot of bf16[16, 32] and bf16[16, 32]: the inner extents differ (32 and 16)"},
	{__LINE__, H "    r = store(y[0, 0], 1.0)\n}\n", 2, 9, "store(...) is not a value: it is only a statement"},
	/* types and shapes */
	{__LINE__, H "    p = load(x[0, 0 : 4096])\n    q = load(x[0, 0 : 1024])\n    r = p + q\n}\n", 4, 9,
	 "shape mismatch in '+': f32[4096] and f32[1024]"},
	{__LINE__, H "    r = true + 1\n}\n", 2, 9, "'+' needs numbers, got bool scalar and i32 scalar"},
	{__LINE__, H "    r = 1.5 % 2\n}\n", 2, 9, "'%' needs integers, got f32 scalar and i32 scalar"},
	{__LINE__, H "    r = 1 < 2 && 3\n}\n", 2, 9, "'&&' needs bool operands"},
	{__LINE__, H "    m = 0.0\n    m = load(x[0, 0 : 4096])\n}\n", 3, 9,
	 "m is f32[4096] here but was f32 scalar at 2:5"},
	{__LINE__, H "    s = 0\n    s += 1.5\n}\n", 3, 10,
	 "s += ... gives f32 scalar, but s is i32 scalar (defined at 2:5)"},
	{__LINE__, H "    if 1 {\n    }\n}\n", 2, 8,
	 "the condition of if must be a bool scalar, got i32 scalar (compare it, as in x != 0)"},
	{__LINE__, H "    for c in range(0, N, 0) {\n    }\n}\n", 2, 26, "the step of range must be positive, got 0"},
	{__LINE__, H "    for c in range(0.5, N) {\n    }\n}\n", 2, 20,
	 "the start of range must be an integer scalar, got f32 scalar"},
	/* constants */
	{__LINE__, H "    r = pid(0)\n    const B = r * 2\n}\n", 3, 15,
	 "const B needs a compile-time integer (literals, consts, + - * / %, cdiv, min, max), got i32 scalar known only at run time"},
	{__LINE__, H "    const B = 4 / 0\n}\n", 2, 15, "division by zero in a constant"},
	{__LINE__, H "    const B = 4611686018427387904 * 4\n}\n", 2, 15, "integer overflow in a constant"},
	{__LINE__, "kernel f(x: f32[N]) grid(N) threads(100) {\n}\n", 1, 37,
	 "threads(100): the threads of a program are a multiple of 32 from 32 to 1024"},
	{__LINE__, "kernel f(x: f32[N]) grid(N) threads(2048) {\n}\n", 1, 37, "threads(2048)"},
	{__LINE__, "kernel f(x: f32[N]) grid(N) threads(N) {\n}\n", 1, 37,
	 "threads(...) must be a compile-time integer, got i32 scalar"},
	/* slices, load and store */
	{__LINE__, H "    for c in range(0, N, 128) {\n        t = load(x[0, c : N])\n    }\n}\n", 3, 23,
	 "the extent of a range, hi - lo, must be a compile-time constant (write lo : lo + CONST)"},
	{__LINE__, H "    r = load(x[0, 4 : 4])\n}\n", 2, 19, "the range has extent 0 (it must be positive)"},
	{__LINE__, H "    r = load(x[0, 1, 2])\n}\n", 2, 22, "too many indices: x has 2 dims, got 3"},
	{__LINE__, H "    r = load(x[0])\n}\n", 2, 14, "x has 2 dims: give an index or a range for each, got 1"},
	{__LINE__, H "    r = load(a[0])\n}\n", 2, 14,
	 "'a' is a scalar parameter, not a tensor parameter: only tensors can be sliced"},
	{__LINE__, H "    r = load(x[0.5, 1])\n}\n", 2, 16, "an index is an integer scalar, got f32 scalar"},
	{__LINE__, H "    r = x[0, 0] + 1.0\n}\n", 2, 9, "a slice is read with load(x[...]) and written with store(x[...], v)"},
	{__LINE__, H "    r = load(x)\n}\n", 2, 14, "load(x) needs indices: load(x[i, c : c + B])"},
	{__LINE__, H "    p = load(x[0, 0 : 4])\n    q = load(x[0, 0 : 4], other = p)\n}\n", 3, 35,
	 "other= is the number that elements outside the tensor read as: a scalar, got f32[4]"},
	{__LINE__, H "    r = load(x[0, 0 : 4], mask = 1)\n}\n", 2, 34,
	 "mask= must be bool of the slice's shape (f32[4]), got i32 scalar"},
	{__LINE__, H "    t = load(x[0, 0 : 1024])\n    store(y[0, 0 : 4096], t)\n}\n", 3, 27,
	 "the value is f32[1024] but the slice of y is f32[4096]: a store's value must have its slice's shape"},
	{__LINE__, H "    t = 1.0\n    store(t, 2.0)\n}\n", 3, 11,
	 "store writes to a slice of a tensor parameter; 't' is a variable"},
	{__LINE__, H "    store(a[0], 2.0)\n}\n", 2, 11, "'a' is a scalar parameter, not a tensor parameter"},
	{__LINE__, "kernel f(y: i32[N]) grid(N) threads(32) {\n    store(y[0], 1.5)\n}\n", 2, 17,
	 "storing f32 scalar into y, a i32 tensor, needs a cast: i32(...)"},
	/* names the generated CUDA keeps */
	{__LINE__, H "    v_ = 1.0\n}\n", 2, 5,
	 "'v_' ends in '_': such names are kept for the generated CUDA's own variables"},
	{__LINE__, "kernel f(float: f32[N]) grid(N) threads(32) {\n}\n", 1, 10,
	 "'float' cannot name a parameter: the generated CUDA keeps parameter names, and 'float' is a "
	 "C++ or CUDA name there"},
	{__LINE__, "kernel f(x: f32[int]) grid(1) threads(32) {\n}\n", 1, 10,
	 "'int' cannot name a size: the generated CUDA keeps size names"},
	{__LINE__, "kernel half(x: f32[N]) grid(1) threads(32) {\n}\n", 1, 8,
	 "'half' cannot name a kernel: it is a C++ or CUDA name"},
	{__LINE__, H "    const float = 4\n}\n", 2, 5,
	 "'float' cannot name a const: the generated CUDA keeps const names"},
};

static void test_tile_front__bad_programs(void)
{
	T_OK(KB_ARRAY_LEN(bad) >= 30);
	for (size_t i = 0; i < KB_ARRAY_LEN(bad); i++)
		one_error(bad[i].src_line, bad[i].text, bad[i].line, bad[i].col, bad[i].msg);
}

static void test_tile_front__three_errors(void)
{
	const char *text = H
		"    r = q + 1\n"
		"    s = (1 + 2\n"
		"    t = load(x[0, 1, 2])\n"
		"    u = s + r + t\n"
		"}\n";
	static const want_err w[] = {
		{2, 9, "unknown name 'q'"},
		{3, 15, "expected ')' to close the '('"},
		{4, 22, "too many indices"},
	};
	front fr;
	errors_are(__LINE__, &fr, text, w, 3);
	front_free(&fr);
}

static void test_tile_front__every_error_of_a_file(void)
{
	/* syntax errors in two kernels and type errors around them: each is
	 * reported once, the statements after each still checked */
	const char *text =
		"kernel f(x: f32[N]) grid(N) threads(48) {\n"  /* 1: threads */
		"    t = load(x[0 : 4]) +\n"                    /* 2: syntax */
		"    u = t * 2\n"                               /* quiet: t failed */
		"    for c in range(0, N) {\n"
		"        v = load(x[c : N])\n"                  /* 5: extent */
		"        w = exp(1.0, 2.0)\n"                   /* 6: arity */
		"    }\n"
		"    store(x[0 : 8], load(x[0 : 4]))\n"         /* 8: store shape */
		"}\n"
		"kernel g(y: f32[N]) grid(N) threads(32) {\n"
		"    if true {\n"
		"        z = 1 @ 2\n"                           /* 12: bad char, then syntax */
		"    }\n"
		"    q = undefined\n"                           /* 14: unknown */
		"}\n";
	static const want_err w[] = {
		{1, 37, "threads(48)"},
		{2, 25, "expected an expression, got end of line"},
		{5, 20, "the extent of a range"},
		{6, 13, "exp takes 1 argument"},
		{8, 21, "the value is f32[4] but the slice of x is f32[8]"},
		{12, 15, "unexpected character '@'"},
		{12, 17, "expected the end of the line after the assignment, got '2'"},
		{14, 9, "unknown name 'undefined'"},
	};
	front fr;
	errors_are(__LINE__, &fr, text, w, (int)KB_ARRAY_LEN(w));
	T_EQ_INT(fr.f.nkernels, 2);
	front_free(&fr);
}

static void test_tile_front__render(void)
{
	front fr;
	run_front(&fr, H "    r = 1 + load(x[0, 0 : 4])  # a comment\n    r2 = r * 2\n}\n", NULL, 0);
	T_EQ_INT(fr.nerr, 0);
	front_free(&fr);
	run_front(&fr, H "    t = load(x[0, 0 : 8]) - load(x[0, 0 : 4])\n}\n", NULL, 0);
	char *r = render(&fr.d);
	T_EQ_STR(r, "t.tile:2:9: error: shape mismatch in '-': f32[8] and f32[4] (tiles combine where "
		 "their extents are equal or 1)\n"
		 " 2 |     t = load(x[0, 0 : 8]) - load(x[0, 0 : 4])\n"
		 "   |         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
	free(r);
	front_free(&fr);
}

static void test_tile_front__recovery_keeps_braces(void)
{
	/* a broken header still has its body parsed; a missing '}' is one
	 * error at its '{', and the next kernel parses normally */
	const char *text =
		"kernel f(x: f32[N] grid(N) threads(32) {\n"
		"    r = 1 +\n"
		"}\n"
		"kernel g(x: f32[N]) grid(N) threads(32) {\n"
		"    for c in range(0, N) {\n"
		"        r = c\n"
		"kernel h(x: f32[N]) grid(N) threads(32) {\n"
		"    r = load(x[0]) + k\n"
		"}\n";
	static const want_err w[] = {
		{1, 20, "expected ',' or ')' after the parameters of kernel f, got 'grid'"},
		{2, 12, "expected an expression"},
		{5, 26, "unterminated block: this '{' of the for loop has no '}'"},
		{8, 22, "unknown name 'k'"},
	};
	front fr;
	errors_are(__LINE__, &fr, text, w, (int)KB_ARRAY_LEN(w));
	T_EQ_INT(fr.f.nkernels, 3);
	T_OK(fr.f.nkernels == 3 && fr.f.kernels[0].bad_header && !fr.f.kernels[2].bad_header);
	front_free(&fr);
}

static void test_tile_front__dtype_names(void)
{
	kb_tile_dtype d;
	T_OK(kb_tile__dtype_from("bf16", 4, &d) && d == KB_TILE_BF16);
	T_OK(kb_tile__dtype_from("u8x", 2, &d) && d == KB_TILE_U8);
	T_OK(!kb_tile__dtype_from("bool", 4, &d)); /* not a tensor dtype */
	T_OK(!kb_tile__dtype_from("f8", 2, &d));
	T_EQ_STR(kb_tile_dtype_name(KB_TILE_BOOL), "bool");
	T_EQ_STR(kb_tile_dtype_name(KB_TILE_I64), "i64");
}

int main(void)
{
	T_RUN(test_tile_front__tokens);
	T_RUN(test_tile_front__token_errors);
	T_RUN(test_tile_front__docs_softmax);
	T_RUN(test_tile_front__define_overrides_const);
	T_RUN(test_tile_front__layernorm);
	T_RUN(test_tile_front__rmsnorm_bf16);
	T_RUN(test_tile_front__vector_add);
	T_RUN(test_tile_front__matmul_dot);
	T_RUN(test_tile_front__expression_types);
	T_RUN(test_tile_front__constant_folding);
	T_RUN(test_tile_front__power_and_bits);
	T_RUN(test_tile_front__scopes);
	T_RUN(test_tile_front__several_kernels);
	T_RUN(test_tile_front__bad_programs);
	T_RUN(test_tile_front__three_errors);
	T_RUN(test_tile_front__every_error_of_a_file);
	T_RUN(test_tile_front__render);
	T_RUN(test_tile_front__recovery_keeps_braces);
	T_RUN(test_tile_front__dtype_names);
	return t_report();
}
