/*
 * emu_source.c - the tile compiler's generated CUDA turned into a host
 * shared object that the emulator runs: the whole text is kept (the
 * prologue's helpers included, so their layouts are what gets tested),
 * and only what g++ cannot take is rewritten: inline PTX statements
 * become calls into cuda_emu.cpp's PTX interpreter, and __shared__
 * declarations become the block's dynamic shared memory or statics.
 *
 * Owns the scanning of that text (comments, literals, preprocessor lines
 * pass through untouched) and the g++ command line.  Every rewrite keeps
 * the line count, so the #line directives still map to the .tile file.
 */
#include "emu.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== scanning ===== */

/* The index after a comment or a string or char literal that starts at
 * s[i]; i when none starts there. */
static size_t skip_lexeme(const char *s, size_t i)
{
	if (s[i] == '/' && s[i + 1] == '*') {
		const char *e = strstr(s + i + 2, "*/");
		return e ? (size_t)(e - s) + 2 : strlen(s);
	}
	if (s[i] == '/' && s[i + 1] == '/') {
		while (s[i] && s[i] != '\n')
			i++;
		return i;
	}
	if (s[i] == '"' || s[i] == '\'') {
		char q = s[i++];
		for (; s[i] && s[i] != q; i++)
			if (s[i] == '\\' && s[i + 1])
				i++;
		return s[i] ? i + 1 : i;
	}
	return i;
}

static size_t skip_space(const char *s, size_t i)
{
	for (;;) {
		while (isspace((unsigned char)s[i]))
			i++;
		if (s[i] != '/' || (s[i + 1] != '*' && s[i + 1] != '/'))
			return i;
		i = skip_lexeme(s, i);
	}
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static size_t ident_end(const char *s, size_t i)
{
	while (ident_char(s[i]))
		i++;
	return i;
}

static bool word_at(const char *s, size_t i, const char *w)
{
	size_t n = strlen(w);
	return !strncmp(s + i, w, n) && !ident_char(s[i + n]);
}

/* The index after the balanced group that opens at s[i]; 0 when it does
 * not close. */
static size_t group_end(const char *s, size_t i)
{
	int depth = 0;
	while (s[i]) {
		size_t j = skip_lexeme(s, i);
		if (j != i) {
			i = j;
			continue;
		}
		depth += s[i] == '(' || s[i] == '[' || s[i] == '{';
		depth -= s[i] == ')' || s[i] == ']' || s[i] == '}';
		i++;
		if (depth == 0)
			return i;
	}
	return 0;
}

static int count_newlines(const char *s, size_t a, size_t b)
{
	int n = 0;
	for (size_t i = a; i < b; i++)
		n += s[i] == '\n';
	return n;
}

/* ===== asm statements ===== */

typedef struct {
	char *con;   /* the constraint as written: "=r", "+f", "n" ... */
	char *expr;
} asm_op;

typedef struct {
	kb_buf text;     /* the string literals, as written */
	asm_op ops[160];     /* (wgmma m64n256k16: 128 accumulators and 7 more) */
	int nout, nops;
} asm_stmt;

/* Parses `"c" (expr), ...` at s[i] into st; returns the index after it. */
static size_t parse_ops(const char *s, size_t i, asm_stmt *st, kb_err *err)
{
	for (i = skip_space(s, i); s[i] == '"'; i = skip_space(s, i + 1)) {
		size_t e = skip_lexeme(s, i), p = skip_space(s, e);
		size_t q = s[p] == '(' ? group_end(s, p) : 0;
		if (!q || st->nops == 160) {
			kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "asm operand at \"%.40s\"", s + i);
			return 0;
		}
		st->ops[st->nops].con = kb_xstrndup(s + i + 1, e - i - 2);
		st->ops[st->nops++].expr = kb_xstrndup(s + p + 1, q - p - 2);
		i = skip_space(s, q);
		if (s[i] != ',')
			return i;
	}
	return i;
}

/* Parses `asm [volatile] ("..." [: outs [: ins [: clobbers]]]);` from s[i]
 * (the word asm); returns the index after the ';', or 0 with err set. */
static size_t parse_asm(const char *s, size_t i, asm_stmt *st, kb_err *err)
{
	i = skip_space(s, ident_end(s, i));
	if (word_at(s, i, "volatile") || word_at(s, i, "__volatile__"))
		i = skip_space(s, ident_end(s, i));
	if (s[i] != '(')
		goto bad;
	for (i = skip_space(s, i + 1); s[i] == '"'; i = skip_space(s, i)) {
		size_t e = skip_lexeme(s, i);
		kb_buf_catn(&st->text, s + i, e - i);
		kb_buf_cat(&st->text, " ");
		i = e;
	}
	for (int section = 0; s[i] == ':' && section < 3; section++) {
		if (section < 2 && !(i = parse_ops(s, i + 1, st, err)))
			return 0;
		if (section == 2) /* clobbers: strings only */
			for (i = skip_space(s, i + 1); s[i] == '"' || s[i] == ',';)
				i = skip_space(s, s[i] == ',' ? i + 1 : skip_lexeme(s, i));
		if (section == 0)
			st->nout = st->nops;
	}
	if (!st->text.len || s[i] != ')' || s[skip_space(s, i + 1)] != ';')
		goto bad;
	return skip_space(s, i + 1) + 1;
bad:
	kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "cannot read the asm statement at \"%.60s\"", s + i);
	return 0;
}

/* One operand as an emu::Operand maker: in_r((unsigned)(x)), out_f(d[0]) ... */
static int emit_op(kb_buf *o, const asm_op *op, bool out, kb_err *err)
{
	static const struct { char letter; const char *cast; } kinds[] = {
		{'r', "unsigned"}, {'l', "unsigned long long"}, {'f', "float"},
		{'d', "double"}, {'h', "unsigned short"}, {'n', "long long"},
	};
	const char *c = op->con;
	bool inout = false;
	for (; *c == '=' || *c == '+' || *c == '&'; c++)
		inout = inout || *c == '+';
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		if (c[0] != kinds[k].letter || c[1])
			continue;
		if (out)
			kb_buf_catf(o, "emu::%s_%c(%s)", inout ? "inout" : "out", c[0], op->expr);
		else
			kb_buf_catf(o, "emu::in_%c((%s)(%s))", c[0], kinds[k].cast, op->expr);
		return 0;
	}
	return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "asm constraint \"%s\" is not emulated",
			  op->con);
}

/* Rewrites the asm statement at s[*i]; *i moves past it. */
static int rewrite_asm(const char *s, size_t *i, kb_buf *o, kb_err *err)
{
	asm_stmt st = {.text = KB_BUF_INIT};
	int rc = KB_OK;
	size_t end = parse_asm(s, *i, &st, err);
	if (!end) {
		rc = KB_EINVAL;
		goto out;
	}
	kb_buf_catf(o, "{ static emu::Ptx emu_ptx_(%s); emu_ptx_.run({", st.text.s);
	for (int k = 0; k < st.nops && rc == KB_OK; k++) {
		kb_buf_cat(o, k ? ", " : "");
		rc = emit_op(o, &st.ops[k], k < st.nout, err);
	}
	kb_buf_cat(o, "}, __FILE__, __LINE__); }");
	for (int n = count_newlines(s, *i, end); n > 0; n--)
		kb_buf_catc(o, '\n');
	*i = end;
out:
	for (int k = 0; k < st.nops; k++) {
		free(st.ops[k].con);
		free(st.ops[k].expr);
	}
	kb_buf_free(&st.text);
	return rc;
}

/* ===== __shared__ ===== */

/* `extern __shared__ [__align__(N)] T name[];` at s[*i] (the word extern)
 * becomes `T *const name = (T *)emu::dyn_smem();`. */
static int rewrite_extern_shared(const char *s, size_t *i, kb_buf *o, kb_err *err)
{
	size_t a = skip_space(s, ident_end(s, skip_space(s, ident_end(s, *i))));
	const char *semi = strchr(s + a, ';'), *br = strchr(s + a, '[');
	if (!semi || !br || br > semi)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "cannot read \"%.60s\"", s + *i);
	kb_buf type = KB_BUF_INIT;
	for (size_t j = a; s + j < br;) {
		if (word_at(s, j, "__align__") || word_at(s, j, "alignas")) {
			size_t g = group_end(s, skip_space(s, ident_end(s, j)));
			j = g ? g : (size_t)(br - s);
			continue;
		}
		kb_buf_catc(&type, s[j++]);
	}
	size_t n = type.len;
	while (n && isspace((unsigned char)type.s[n - 1]))
		n--;
	size_t name = n;
	while (name && ident_char(type.s[name - 1]))
		name--;
	int rc = KB_OK;
	if (name == n || name == 0)
		rc = kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "cannot read \"%.60s\"", s + *i);
	else
		kb_buf_catf(o, "%.*s *const %.*s = (%.*s *)emu::dyn_smem();", (int)name, type.s,
			    (int)(n - name), type.s + name, (int)name, type.s);
	kb_buf_free(&type);
	*i = (size_t)(semi - s) + 1;
	return rc;
}

/* ===== the translation unit ===== */

int emu_source_rewrite(const char *s, kb_buf *o, kb_err *err)
{
	size_t i = 0;
	bool line_start = true;
	while (s[i]) {
		size_t j = skip_lexeme(s, i);
		if (j != i || (line_start && s[i] == '#')) {
			if (j == i) /* a preprocessor line, continuations included */
				for (; s[j] && (s[j] != '\n' || s[j - 1] == '\\'); j++)
					;
			kb_buf_catn(o, s + i, j - i);
			i = j;
			line_start = false;
			continue;
		}
		if (!ident_char(s[i]) || (i && ident_char(s[i - 1]))) {
			line_start = s[i] == '\n' || (line_start && isspace((unsigned char)s[i]));
			kb_buf_catc(o, s[i++]);
			continue;
		}
		line_start = false;
		int rc = KB_OK;
		size_t e = ident_end(s, i);
		if (word_at(s, i, "asm") || word_at(s, i, "__asm__"))
			rc = rewrite_asm(s, &i, o, err);
		else if (word_at(s, i, "extern") && word_at(s, skip_space(s, e), "__shared__"))
			rc = rewrite_extern_shared(s, &i, o, err);
		else {
			kb_buf_catn(o, word_at(s, i, "__shared__") ? "static" : s + i,
				    word_at(s, i, "__shared__") ? 6 : e - i);
			i = e;
		}
		if (rc < 0)
			return rc;
	}
	return KB_OK;
}

int emu_source_unit(const char *cuda, const kb_kernel *k, kb_buf *out, kb_err *err)
{
	kb_buf_cat(out, "#include \"cuda_emu.h\"\n");
	int rc = emu_source_rewrite(cuda, out, err);
	if (rc < 0)
		return rc;
	kb_buf_catf(out, "\n#line 1 \"<emu entry>\"\nextern \"C\" void emu_kernel_entry(void **a_)\n{\n"
		    "\t%s(", k->name);
	for (int i = 0; i < k->nparams; i++) {
		const kb_param *p = &k->params[i];
		if (p->is_pointer)
			kb_buf_catf(out, "%s(%s)a_[%d]", i ? ", " : "", p->type, i);
		else
			kb_buf_catf(out, "%s*(%s *)a_[%d]", i ? ", " : "", p->type, i);
	}
	kb_buf_cat(out, ");\n}\n");
	return KB_OK;
}

int emu_source_build(const char *cpp, const char *so, const char *emu_dir, const char *runtime,
		     kb_err *err)
{
	const char *cxx = getenv("CXX") && *getenv("CXX") ? getenv("CXX") : "g++";
	char *inc = kb_xasprintf("-I%s", emu_dir), *shim = kb_xasprintf("-I%s/include", emu_dir);
	char *argv[] = {(char *)cxx, "-std=c++17", "-O1", "-fPIC", "-shared", "-fno-strict-aliasing",
			"-fsanitize=alignment,bounds", "-fno-sanitize-recover=all",
			inc, shim, "-o", (char *)so, (char *)cpp, (char *)runtime, NULL};
	kb_buf log = KB_BUF_INIT;
	int rc = kb_spawn_capture(argv, NULL, &log, err);
	if (rc > 0)
		rc = kb_err_set(err, KB_ECOMPILE, KB_DOM_OS, rc, "%s %s failed:\n%.4000s", cxx, cpp,
				log.s ? log.s : "");
	kb_buf_free(&log);
	free(inc);
	free(shim);
	return rc < 0 ? rc : KB_OK;
}
