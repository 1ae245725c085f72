/*
 * sass.c - diffs of SASS that show what a source change did to the code,
 * not what the register allocator and the layout did to the numbers.
 *
 * Owns: the normal form of one instruction and the diff of two functions.
 * An instruction becomes "[@PRED ]OPCODE[ OPERANDS]" with:
 *  - the opcode and all its modifiers as printed (LDG.E.128.CONSTANT,
 *    ISETP.GE.AND, IMAD.WIDE.U32): they are the instruction's meaning;
 *  - registers abstracted by file: R0..R255 -> R, UR0..UR63 -> UR,
 *    P0..P6 -> P, UP0..UP6 -> UP, convergence barriers B0..B15 -> B; the
 *    fixed ones stay (RZ, URZ, PT, UPT, SR_*), as do register modifiers
 *    (R2.64, R3.H1, -R3, |R4|, !P0 -> !P) except ".reuse", an operand-cache
 *    hint that scheduling decides;
 *  - branch targets -> L: a backquoted label `(.L_x_3), a bare .L_x_N, and
 *    any hex address operand of a control-flow opcode (BRA BRX JMP JMX CALL
 *    RET BSSY SSY PBK PCNT PRET and their uniform/variant spellings), which
 *    is what kb_compile_sass_parse leaves after resolving a label
 *    ("BRA 0x890") and what cuobjdump prints;
 *  - callee names kept, except the numbering of NVCC's helpers
 *    ($__internal_3_$__cuda_sm20_rcp... -> $__internal_$__cuda_sm20_rcp...);
 *  - the predicate guard normalised the same way (@P0 -> @P, @!P1 -> @!P,
 *    @!UP2 -> @!UP, @PT kept);
 *  - everything else verbatim: immediates (0x4, 1.5, -QNAN), constant bank
 *    references (c[0x0][0x210] is a kernel parameter), special registers,
 *    memory descriptors with their offsets (desc[UR][R.64+0x10]).
 * No address and no encoding takes part (the parser drops both).
 * A function's end padding (the final unpredicated self-branch and the NOPs
 * after it) is left out before diffing.
 * Does not own: parsing listings (compile/sass.c), the diff (text.c).
 */
#include "diff.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_' || c == '$';
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* The abstract name of a numbered register word (R12 -> "R"), or NULL when
 * the word is not one (RZ, PT, SR_TID, names). */
static const char *reg_class(const char *w, size_t n)
{
	static const char *const classes[] = {"UR", "UP", "R", "P", "B"};
	for (size_t i = 0; i < KB_ARRAY_LEN(classes); i++) {
		size_t k = strlen(classes[i]);
		if (n > k && strncmp(w, classes[i], k) == 0 && all_digits(w + k, n - k))
			return classes[i];
	}
	return NULL;
}

static bool is_branch_opcode(const char *opcode)
{
	static const char *const ops[] = {"BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "CALL",
					  "RET", "BSSY", "SSY", "PBK", "PCNT", "PRET", "CAL",
					  "JCAL"};
	size_t n = strcspn(opcode, ".");
	for (size_t i = 0; i < KB_ARRAY_LEN(ops); i++)
		if (strlen(ops[i]) == n && strncmp(opcode, ops[i], n) == 0)
			return true;
	return false;
}

/* "$__internal_12_$__cuda..." -> "$__internal_$__cuda..."; other words as is. */
static void put_name(kb_buf *out, const char *w, size_t n)
{
	static const char helper[] = "$__internal_";
	size_t h = sizeof helper - 1;
	if (n > h && strncmp(w, helper, h) == 0) {
		size_t d = h;
		while (d < n && isdigit((unsigned char)w[d]))
			d++;
		if (d > h && d < n && w[d] == '_') {
			kb_buf_catn(out, w, h);
			w += d + 1;
			n -= d + 1;
		}
	}
	kb_buf_catn(out, w, n);
}

/* Copies operand (or predicate) text s to out, abstracting as the header says. */
static void put_operands(const char *s, bool branch, kb_buf *out)
{
	const char *p = s;
	while (*p) {
		bool after_dot = p > s && p[-1] == '.';
		if (*p == '`' && p[1] == '(' && strchr(p + 2, ')')) {
			const char *close = strchr(p + 2, ')');
			if (p[2] == '.')
				kb_buf_catc(out, 'L'); /* `(.L_x_3) */
			else
				put_name(out, p + 2, (size_t)(close - p - 2)); /* `($callee) */
			p = close + 1;
		} else if (*p == '.' && p[1] == 'L' && p[2] == '_' && !after_dot &&
			   (p == s || !ident_char(p[-1]))) {
			const char *q = p + 1;
			while (ident_char(*q))
				q++;
			kb_buf_catc(out, 'L'); /* a bare .L_x_3 */
			p = q;
		} else if (ident_start(*p)) {
			const char *q = p;
			while (ident_char(*q))
				q++;
			size_t n = (size_t)(q - p);
			const char *cls = after_dot ? NULL : reg_class(p, n);
			if (after_dot && n == 5 && strncmp(p, "reuse", 5) == 0)
				out->s[--out->len] = '\0'; /* drop ".reuse": the '.' is out */
			else if (cls)
				kb_buf_cat(out, cls);
			else
				put_name(out, p, n);
			p = q;
		} else if (isdigit((unsigned char)*p)) {
			const char *q = p;
			while (ident_char(*q))
				q++;
			bool addr = branch && !after_dot && q - p > 2 && p[0] == '0' &&
				    (p[1] == 'x' || p[1] == 'X') && (p == s || p[-1] != '-');
			if (addr)
				kb_buf_catc(out, 'L');
			else
				kb_buf_catn(out, p, (size_t)(q - p));
			p = q;
		} else {
			kb_buf_catc(out, *p++);
		}
	}
}

void kb_diff_sass_normalize(const kb_sass_insn *in, kb_buf *out)
{
	if (!in || !out)
		return;
	const char *opcode = in->opcode ? in->opcode : "";
	if (in->pred && *in->pred) {
		put_operands(in->pred, false, out);
		kb_buf_catc(out, ' ');
	}
	kb_buf_cat(out, opcode);
	if (in->operands && *in->operands) {
		kb_buf_catc(out, ' ');
		put_operands(in->operands, is_branch_opcode(opcode), out);
	}
}

/* ===================================================================== */
/* Functions                                                             */
/* ===================================================================== */


static void func_text(const kb_sass_func *f, kb_buf *out)
{
	int n = f ? kb_compile_sass_body_len(f) : 0;
	for (int i = 0; i < n; i++) {
		kb_diff_sass_normalize(&f->v[i], out);
		kb_buf_catc(out, '\n');
	}
}

int kb_diff_sass(const kb_sass_func *a, const kb_sass_func *b, const char *label_a,
		 const char *label_b, kb_buf *out, kb_err *err)
{
	if (!out)
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "kb_diff_sass: no output buffer");
	kb_buf ta = KB_BUF_INIT, tb = KB_BUF_INIT;
	func_text(a, &ta);
	func_text(b, &tb);
	int rc = kb_diff_text(ta.s, ta.len, tb.s, tb.len, label_a ? label_a : a ? a->name : "a",
			      label_b ? label_b : b ? b->name : "b", 2, out, err);
	kb_buf_free(&tb);
	kb_buf_free(&ta);
	return rc;
}
