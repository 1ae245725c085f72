/*
 * spec_tensor.c - the dtype table, the C types each dtype is, and the
 * `//! in` / `//! out` lines:
 * NAME : DTYPE[dims] [= initializer], with the initializers randn, rand,
 * arange, ones, zeros and file(path).
 * It owns kb_spec_tensor's contents; dims are expressions checked later
 * (spec_check.c), initializer values are constants checked here.
 *
 * Invariant: a random init without an explicit seed gets a seed derived
 * from the tensor's position (init.has_seed tells whether the user wrote
 * one), so two runs of a file see the same inputs.
 *
 * Decision: unsigned C types map to the signed dtype of their width
 * (unsigned and uint32_t -> i32, uint64_t/size_t -> i64, uint16_t -> i16),
 * since the dtypes have no u32/u64/u16; the bits are the same.  unsigned
 * char and uint8_t are u8.  Vector types map to their element (float4 ->
 * f32, half2 -> f16, int4 -> i32).
 */
#include "spec_int.h"

#include <stdlib.h>
#include <string.h>

/* ===== dtypes ===== */

static const struct {
	const char *name;
	int size;
} dtypes[KB_DT_COUNT] = {
	[KB_DT_F64] = {"f64", 8}, [KB_DT_F32] = {"f32", 4}, [KB_DT_F16] = {"f16", 2},
	[KB_DT_BF16] = {"bf16", 2}, [KB_DT_I64] = {"i64", 8}, [KB_DT_I32] = {"i32", 4},
	[KB_DT_I16] = {"i16", 2}, [KB_DT_I8] = {"i8", 1}, [KB_DT_U8] = {"u8", 1},
};

/* The short name of a dtype ("f32"), or "?" for an invalid value. */
const char *kb_dtype_name(kb_dtype t)
{
	return (unsigned)t < KB_DT_COUNT ? dtypes[t].name : "?";
}

/* Bytes per element, or 0 for an invalid value. */
int kb_dtype_size(kb_dtype t)
{
	return (unsigned)t < KB_DT_COUNT ? dtypes[t].size : 0;
}

/* Returns 0 and sets *out when name[0..len) is a dtype, else KB_ENOTFOUND. */
int kb_dtype_parse(const char *name, size_t len, kb_dtype *out)
{
	for (int i = 0; i < KB_DT_COUNT; i++) {
		if (strlen(dtypes[i].name) == len && !memcmp(dtypes[i].name, name, len)) {
			*out = (kb_dtype)i;
			return 0;
		}
	}
	return KB_ENOTFOUND;
}

/* ===== C types ===== */

static const struct {
	const char *name;
	kb_dtype dtype;
} ctypes[] = {
	{"float", KB_DT_F32}, {"float1", KB_DT_F32}, {"float2", KB_DT_F32},
	{"float3", KB_DT_F32}, {"float4", KB_DT_F32},
	{"double", KB_DT_F64}, {"double1", KB_DT_F64}, {"double2", KB_DT_F64},
	{"double3", KB_DT_F64}, {"double4", KB_DT_F64},
	{"__half", KB_DT_F16}, {"half", KB_DT_F16}, {"__half2", KB_DT_F16}, {"half2", KB_DT_F16},
	{"__nv_bfloat16", KB_DT_BF16}, {"nv_bfloat16", KB_DT_BF16}, {"__nv_bfloat162", KB_DT_BF16},
	{"nv_bfloat162", KB_DT_BF16}, {"__bf16", KB_DT_BF16},
	{"int", KB_DT_I32}, {"signed", KB_DT_I32}, {"signed int", KB_DT_I32},
	{"int32_t", KB_DT_I32}, {"int1", KB_DT_I32}, {"int2", KB_DT_I32}, {"int3", KB_DT_I32},
	{"int4", KB_DT_I32}, {"unsigned", KB_DT_I32}, {"unsigned int", KB_DT_I32},
	{"uint32_t", KB_DT_I32}, {"uint", KB_DT_I32}, {"uint2", KB_DT_I32}, {"uint4", KB_DT_I32},
	{"long long", KB_DT_I64}, {"long long int", KB_DT_I64}, {"signed long long", KB_DT_I64},
	{"long", KB_DT_I64}, {"long int", KB_DT_I64}, {"int64_t", KB_DT_I64},
	{"unsigned long long", KB_DT_I64}, {"unsigned long", KB_DT_I64}, {"uint64_t", KB_DT_I64},
	{"size_t", KB_DT_I64}, {"ptrdiff_t", KB_DT_I64}, {"longlong2", KB_DT_I64},
	{"short", KB_DT_I16}, {"short int", KB_DT_I16}, {"signed short", KB_DT_I16},
	{"int16_t", KB_DT_I16}, {"unsigned short", KB_DT_I16}, {"uint16_t", KB_DT_I16},
	{"short2", KB_DT_I16},
	{"char", KB_DT_I8}, {"signed char", KB_DT_I8}, {"int8_t", KB_DT_I8}, {"char2", KB_DT_I8},
	{"char4", KB_DT_I8},
	{"unsigned char", KB_DT_U8}, {"uint8_t", KB_DT_U8}, {"uchar2", KB_DT_U8},
	{"uchar4", KB_DT_U8}, {"bool", KB_DT_U8},
};

static bool is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_qualifier(const char *w, size_t n)
{
	static const char *const q[] = {"const", "volatile", "__restrict__", "__restrict",
					"restrict", "struct", "std"};
	for (size_t i = 0; i < KB_ARRAY_LEN(q); i++)
		if (strlen(q[i]) == n && !memcmp(q[i], w, n))
			return true;
	return false;
}

/* Maps a C type name to a dtype, ignoring qualifiers, '*' and "std::"
 * (float->f32, __half->f16, __nv_bfloat16->bf16, int->i32 ...; see the
 * header comment for unsigned and vector types).  Returns 0 or KB_ENOTFOUND. */
int kb_compile_ctype_dtype(const char *ctype, kb_dtype *out)
{
	kb_buf b = KB_BUF_INIT;
	for (const char *p = ctype ? ctype : ""; *p;) {
		if (!is_word_char(*p)) {
			p++;
			continue;
		}
		const char *w = p;
		while (is_word_char(*p))
			p++;
		if (is_qualifier(w, (size_t)(p - w)))
			continue;
		if (b.len)
			kb_buf_catc(&b, ' ');
		kb_buf_catn(&b, w, (size_t)(p - w));
	}
	int rc = KB_ENOTFOUND;
	for (size_t i = 0; b.s && i < KB_ARRAY_LEN(ctypes); i++) {
		if (!strcmp(ctypes[i].name, b.s)) {
			*out = ctypes[i].dtype;
			rc = 0;
			break;
		}
	}
	kb_buf_free(&b);
	return rc;
}

/* ===== in, out ===== */

static const struct init_fn {
	const char *name;
	kb_init_kind kind;
	int nparams;
	const char *params[3];
} init_fns[] = {
	{"randn", KB_INIT_RANDN, 3, {"mean", "std", "seed"}},
	{"rand", KB_INIT_RAND, 3, {"lo", "hi", "seed"}},
	{"arange", KB_INIT_ARANGE, 0, {NULL}},
	{"ones", KB_INIT_ONES, 0, {NULL}},
	{"zeros", KB_INIT_ZEROS, 0, {NULL}},
	{"file", KB_INIT_FILE, 0, {NULL}},
};

static const char *const init_names[] = {"randn", "rand", "arange", "ones", "zeros", "file"};

/* Whether $KBENCH_FILE_DIRS (directories, ':' between) holds path. */
static bool in_allowed_dirs(const char *path)
{
	const char *dirs = getenv("KBENCH_FILE_DIRS");
	bool in = false;
	for (const char *p = dirs; p && *p && !in; p += strcspn(p, ":"), p += *p == ':') {
		char *d = kb_xstrndup(p, strcspn(p, ":"));
		in = *d && kb_path_within(path, d);
		free(d);
	}
	return in;
}

/* file() reads below the kernel's directory only (symbolic links resolved),
 * or below a directory of $KBENCH_FILE_DIRS: a kernel from elsewhere (a
 * model's answer, a shared session) cannot read the user's other files
 * into a tensor whose values then show in results.  An error at the path
 * otherwise. */
static void check_file_path(kb_spec__parser *P, const char *path, int col, int len)
{
	const char *src = P->src->path, *slash = src ? strrchr(src, '/') : NULL;
	char *dir = slash ? kb_xstrndup(src, slash == src ? 1 : (size_t)(slash - src)) : kb_xstrdup(".");
	if (!kb_path_within(path, dir) && !in_allowed_dirs(path)) {
		char *where = kb_path_resolve(path), *kdir = kb_path_resolve(dir);
		kb_spec__perr(P, col, len, "file() reads only below the kernel's directory %s, and %s "
			      "is not (KBENCH_FILE_DIRS=DIR[:DIR...] allows more directories)", kdir,
			      where);
		free(kdir), free(where);
	}
	free(dir);
}

/* file("path") or file(path): the path as written, quotes removed, and
 * where file() may read (check_file_path). */
static void parse_init_file(kb_spec__parser *P, kb_init *init)
{
	if (kb_spec__expect(P, '(', "'(' and a path"))
		return;
	kb_buf b = KB_BUF_INIT;
	int col = P->tok.col, len = P->tok.len;
	if (P->tok.kind == KB_TK_STR) {
		for (int i = 1; i < P->tok.len - 1; i++) {
			if (P->tok.p[i] == '\\' && i + 1 < P->tok.len - 1)
				i++;
			kb_buf_catc(&b, P->tok.p[i]);
		}
		kb_spec__lex(P);
	} else {
		const char *start = P->tok.p, *p = start;
		while (p < P->end && *p != ')')
			p++;
		while (p > start && (p[-1] == ' ' || p[-1] == '\t'))
			p--;
		kb_buf_catn(&b, start, (size_t)(p - start));
		len = (int)(p - start);
		P->pos = p;
		kb_spec__lex(P);
	}
	if (!b.len) {
		kb_spec__perr(P, P->tok.col, 1, "file() needs a path, e.g. file(\"x.npy\")");
		P->failed = true;
	} else if (!kb_spec__expect(P, ')', "')'")) {
		check_file_path(P, b.s, col, len);
		init->path = kb_buf_detach(&b);
	}
	kb_buf_free(&b);
}

/* One init argument, key=value or positional, into vals/given. */
static int parse_init_arg(kb_spec__parser *P, const struct init_fn *fn, int *npos, double *vals,
			  bool *given)
{
	int slot = -1, col = P->tok.col;
	if (P->tok.kind == KB_TK_IDENT && kb_spec__peek_char(P, '=')) {
		kb_spec__tok key = P->tok;
		for (int i = 0; i < fn->nparams; i++)
			if (kb_spec__tok_is(&key, fn->params[i]))
				slot = i;
		if (slot < 0) {
			char *known = kb_spec__join_names(fn->params, fn->nparams);
			kb_spec__perr(P, key.col, key.len, "%s() has no argument '%.*s'%s%s%s",
				      fn->name, key.len, key.p, fn->nparams ? " (known: " : "", known,
				      fn->nparams ? ")" : "");
			free(known);
			return P->failed = true, -1;
		}
		kb_spec__lex(P);
		kb_spec__lex(P);
	} else if ((slot = (*npos)++) >= fn->nparams) {
		if (fn->nparams)
			kb_spec__perr(P, col, 1, "%s() takes at most %d arguments", fn->name,
				      fn->nparams);
		else
			kb_spec__perr(P, col, 1, "%s() takes no arguments", fn->name);
		return P->failed = true, -1;
	}
	if (given[slot]) {
		kb_spec__perr(P, col, 1, "argument '%s' of %s() is given twice",
			      fn->params[slot], fn->name);
		return P->failed = true, -1;
	}
	kb_value v;
	col = P->tok.col;
	if (kb_spec__parse_const(P, &v, NULL))
		return -1;
	if (!strcmp(fn->params[slot], "seed") && (v.is_float || v.i < 0)) {
		kb_spec__perr(P, col, (int)(P->tok.p - P->line) + 1 - col,
			      "seed must be a non-negative integer");
		return P->failed = true, -1;
	}
	given[slot] = true;
	vals[slot] = kb_spec__as_double(v);
	return 0;
}

/* randn(...), rand(...), arange(), ones(), zeros(), file(path) into init. */
static void parse_init(kb_spec__parser *P, kb_init *init)
{
	kb_spec__tok name;
	if (kb_spec__expect_ident(P, "an initializer (randn, rand, arange, ones, zeros, file)",
				  &name))
		return;
	const struct init_fn *fn = NULL;
	for (size_t i = 0; i < KB_ARRAY_LEN(init_fns); i++)
		if (kb_spec__tok_is(&name, init_fns[i].name))
			fn = &init_fns[i];
	if (!fn) {
		char *word = kb_xstrndup(name.p, (size_t)name.len);
		const char *near = kb_spec__closest(word, init_names, (int)KB_ARRAY_LEN(init_names));
		kb_spec__perr(P, name.col, name.len,
			      "unknown initializer '%s'%s%s%s (known: randn, rand, "
			      "arange, ones, zeros, file)", word, near ? "; did you mean '" : "",
			      near ? near : "", near ? "'?" : "");
		free(word);
		P->failed = true;
		return;
	}
	init->kind = fn->kind;
	if (fn->kind == KB_INIT_FILE)
		return parse_init_file(P, init);
	double vals[3] = {0, 1, 0};
	bool given[3] = {false, false, false};
	int npos = 0;
	if (!kb_spec__is_punct(P, '('))
		return;
	kb_spec__lex(P);
	while (!kb_spec__is_punct(P, ')')) {
		if (parse_init_arg(P, fn, &npos, vals, given))
			return;
		if (!kb_spec__is_punct(P, ')') && kb_spec__expect(P, ',', "',' or ')'"))
			return;
	}
	kb_spec__lex(P);
	init->lo = vals[0];
	init->hi = vals[1];
	if (given[2]) {
		init->has_seed = true;
		init->seed = (uint64_t)vals[2];
	}
	if (fn->kind == KB_INIT_RAND && !(init->lo < init->hi))
		kb_spec__perr(P, name.col, name.len, "rand() needs lo < hi (got %g and %g)",
			      init->lo, init->hi);
	if (fn->kind == KB_INIT_RANDN && init->hi < 0)
		kb_spec__perr(P, name.col, name.len, "randn() needs std >= 0 (got %g)", init->hi);
}

/* The dtype token; an unknown one is reported but parsing goes on (f32). */
static int parse_dtype(kb_spec__parser *P, kb_dtype *out)
{
	kb_spec__tok t;
	if (kb_spec__expect_ident(P, "a dtype (f32, f16, bf16, ...)", &t))
		return -1;
	if (!kb_dtype_parse(t.p, (size_t)t.len, out))
		return 0;
	*out = KB_DT_F32;
	char *word = kb_xstrndup(t.p, (size_t)t.len);
	const char *names[KB_DT_COUNT];
	for (int i = 0; i < KB_DT_COUNT; i++)
		names[i] = dtypes[i].name;
	kb_dtype alias;
	const char *near = !kb_compile_ctype_dtype(word, &alias) ? dtypes[alias].name
			   : kb_spec__closest(word, names, KB_DT_COUNT);
	char *known = kb_spec__join_names(names, KB_DT_COUNT);
	kb_spec__perr(P, t.col, t.len, "unknown dtype '%s'%s%s%s (known: %s)", word,
		      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", known);
	free(known);
	free(word);
	return 0;
}

/* '[' [expr (',' expr)*] ']' into the tensor's dims. */
static int parse_dims(kb_spec__parser *P, kb_spec_tensor *t)
{
	if (kb_spec__expect(P, '[', "'[' and the shape (e.g. f32[M, N]; f32[] for a scalar)"))
		return -1;
	if (kb_spec__is_punct(P, ']')) {
		kb_spec__lex(P);
		return 0;
	}
	for (;;) {
		if (t->rank == KB_MAX_RANK) {
			kb_spec__perr(P, P->tok.col, P->tok.len,
				      "too many dimensions (at most %d)", KB_MAX_RANK);
			return P->failed = true, -1;
		}
		kb_expr *e = kb_spec__parse_expr(P);
		if (!e)
			return -1;
		t->dims[t->rank++] = e;
		if (!kb_spec__is_punct(P, ','))
			return kb_spec__expect(P, ']', "',' or ']'");
		kb_spec__lex(P);
	}
}

/* A random init's seed when none is written: distinct per tensor position,
 * and far from the small seeds people write by hand. */
static uint64_t derived_seed(int position)
{
	return (uint64_t)(position + 1) * 0x9E3779B97F4A7C15ull;
}

void kb_spec__dir_tensor(kb_spec__parser *P, const kb_spec__tok *dir, bool is_out)
{
	kb_spec__tok name;
	if (kb_spec__expect_ident(P, "a tensor name", &name) || !kb_spec__define_ok(P, &name))
		return;
	kb_spec *s = P->spec;
	int pos = s->ntensors;
	kb_spec_tensor *t = KB_SPEC_PUSH1(s->tensors, s->ntensors);
	t->name = kb_xstrndup(name.p, (size_t)name.len);
	t->is_out = is_out;
	t->loc = kb_spec__loc_at(P, name.col);
	t->init = (kb_init){is_out ? KB_INIT_NONE : KB_INIT_RANDN, 0, 1, false, 0, NULL};
	if (kb_spec__expect(P, ':',
			    "':' and a type (e.g. x : f32[N])") || parse_dtype(P, &t->dtype) ||
	    parse_dims(P, t))
		return;
	if (kb_spec__is_punct(P, '=')) {
		int col = P->tok.col;
		kb_spec__lex(P);
		parse_init(P, &t->init);
		if (P->failed)
			return;
		if (is_out && t->init.kind != KB_INIT_ZEROS) {
			/* zeros: an accumulator that atomics add into, zeroed before each run */
			kb_spec__perr(P, col, 1, "an output takes no initializer but zeros (outputs "
				      "are poisoned before each run, an accumulator zeroed); use "
				      "`//! in` for an input");
			P->failed = true;
			return;
		}
	}
	if ((t->init.kind == KB_INIT_RANDN || t->init.kind == KB_INIT_RAND) && !t->init.has_seed)
		t->init.seed = derived_seed(pos);
	kb_spec__expect_eol(P);
}

/* ===== tensormap ===== */

/* (E, E, ...) into m->box: at most KB_MAX_RANK entries. */
static int parse_box(kb_spec__parser *P, kb_spec_tmap *m)
{
	if (kb_spec__expect(P, '(', "'(' and the box's extents, e.g. box=(BM, BK)"))
		return -1;
	for (m->nbox = 0;;) {
		if (m->nbox == KB_MAX_RANK) {
			kb_spec__perr(P, P->tok.col, P->tok.len, "a box has at most %d dims", KB_MAX_RANK);
			return P->failed = true, -1;
		}
		if (!(m->box[m->nbox] = kb_spec__parse_expr(P)))
			return -1;
		m->nbox++;
		if (!kb_spec__is_punct(P, ','))
			return kb_spec__expect(P, ')', "',' or ')'");
		kb_spec__lex(P);
	}
}

/* swizzle=none, 32, 64 or 128 (bytes). */
static int parse_swizzle(kb_spec__parser *P, kb_spec_tmap *m)
{
	kb_spec__tok t = P->tok;
	if (t.kind == KB_TK_IDENT && kb_spec__tok_is(&t, "none")) {
		m->swizzle = 0;
		kb_spec__lex(P);
		return 0;
	}
	long v = t.kind == KB_TK_NUM ? strtol(t.p, NULL, 10) : -1;
	if (v != 32 && v != 64 && v != 128) {
		kb_spec__perr(P, t.col, t.len, "swizzle is none, 32, 64 or 128 (bytes), got '%.*s'",
			      t.len, t.p);
		return P->failed = true, -1;
	}
	m->swizzle = (int)v;
	kb_spec__lex(P);
	return 0;
}

/* unaligned=zero (or error, the default): what a tensor TMA cannot
 * describe is passed as, 128 zero bytes or a refusal. */
static int parse_unaligned(kb_spec__parser *P, kb_spec_tmap *m)
{
	kb_spec__tok t = P->tok;
	bool zero = t.kind == KB_TK_IDENT && kb_spec__tok_is(&t, "zero");
	if (!zero && !(t.kind == KB_TK_IDENT && kb_spec__tok_is(&t, "error"))) {
		kb_spec__perr(P, t.col, t.len, "unaligned is zero or error, got '%.*s'", t.len, t.p);
		return P->failed = true, -1;
	}
	m->zero_unaligned = zero;
	kb_spec__lex(P);
	return 0;
}

void kb_spec__dir_tensormap(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec__tok name, tensor;
	if (kb_spec__expect_ident(P, "the kernel parameter's name", &name) ||
	    !kb_spec__define_ok(P, &name))
		return;
	kb_spec *s = P->spec;
	kb_spec_tmap *m = KB_SPEC_PUSH1(s->tmaps, s->ntmaps);
	m->name = kb_xstrndup(name.p, (size_t)name.len);
	m->loc = kb_spec__loc_at(P, name.col);
	if (kb_spec__expect(P, ':', "':' and the tensor it describes (ta : a box=(64, 64))") ||
	    kb_spec__expect_ident(P, "a tensor name", &tensor))
		return;
	m->tensor = kb_xstrndup(tensor.p, (size_t)tensor.len);
	m->tensor_loc = kb_spec__loc_at(P, tensor.col);
	bool seen[3] = {false, false, false}; /* box, swizzle, unaligned */
	while (P->tok.kind != KB_TK_EOF) {
		kb_spec__tok key;
		if (kb_spec__expect_ident(P, "box=, swizzle= or unaligned=", &key))
			return;
		int k = kb_spec__tok_is(&key, "box") ? 0 : kb_spec__tok_is(&key, "swizzle") ? 1
			: kb_spec__tok_is(&key, "unaligned") ? 2 : -1;
		if (k < 0 || seen[k]) {
			kb_spec__perr(P, key.col, key.len, k < 0 ? "unknown tensormap key '%.*s' (known: box, "
				      "swizzle, unaligned)" : "'%.*s' is given twice", key.len, key.p);
			P->failed = true;
			return;
		}
		if (kb_spec__expect(P, '=', "'='") ||
		    (k == 0 ? parse_box(P, m) : k == 1 ? parse_swizzle(P, m) : parse_unaligned(P, m)))
			return;
		seen[k] = true;
		if (kb_spec__is_punct(P, ','))
			kb_spec__lex(P);
	}
	if (!seen[0])
		kb_spec__perr(P, dir->col, dir->len, "tensormap needs box=(...): the tile one copy moves");
}
