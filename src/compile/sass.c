/*
 * sass.c - SASS of a cubin: running the disassembler, parsing its listing
 * into per-function instruction records, and the instruction mix.
 *
 * Owns: kb_compile_sass (nvdisasm -c -gi on a private temp file, or
 * cuobjdump -sass when only that exists, or "unavailable" with a plain
 * reason), kb_compile_sass_parse and kb_compile_sass_mix.  It does not own
 * the cubin (build.c), PC sampling or the rendering of the listing.
 *
 * The disassembler is $KBENCH_NVDISASM when set; else nvdisasm, else
 * cuobjdump, each looked for in the toolkit kbench compiles with (the bin/
 * beside NVRTC's library folder, $CUDA_HOME/bin, the built-against
 * toolkit's bin/: toolkit.c, without loading NVRTC) and then on PATH, which
 * on clusters often lacks the CUDA bin folder.  Without one, the reason
 * names every folder looked in.
 *
 * Parsing (gpu-apis.md §8).  One line at a time; anything not recognised is
 * skipped, so junk never fails.
 *  - Functions: nvdisasm `//---- .text.NAME ----` starts NAME; any other
 *    `//----` header (SYMBOLS) ends it.  cuobjdump `Function : NAME` starts
 *    one, a line of dots ends it.  Instructions outside a function are
 *    dropped (e.g. a listing cut in the middle).  Subroutines that nvdisasm
 *    prints inside a kernel's section ($__internal_*_slowpath) stay in that
 *    kernel's function: addresses are section-relative, as CUPTI's pcOffset.
 *  - Instructions: `/ *ADDR* /  [@PRED] OPCODE[.MOD...] OPERANDS ;` with an
 *    optional trailing encoding comment; cuobjdump's second line holds only
 *    an encoding comment and is skipped.
 *  - Lines: `//## File "F", line N [inlined at "G", line M]` lines before an
 *    instruction hold for it and the ones after, until the next such lines.
 *    nvdisasm -g prints one line: the innermost frame.  -gi prints a block
 *    of consecutive lines, innermost first, each "frame inlined at its call
 *    site", the last one the kernel's own line, e.g.
 *      File "sm_30_intrinsics.hpp", line 449 inlined at "k.cu", line 23
 *      File "k.cu", line 23 inlined at "k.cu", line 59
 *      File "k.cu", line 59
 *    file/line = the first frame of the block (the source that produced
 *    the instruction, the same as -g gives), and, when the block names more
 *    than one frame, call_file/call_line = its last frame (the outermost
 *    call site, in the kernel body); else NULL/0.
 *  - Branch targets: nvdisasm prints a backquote, '(', LABEL, ')'.  A local
 *    `.L*` label of the same function becomes its address as cuobjdump
 *    prints it ("0x1e0"), so both tools give the same operands and the UI
 *    needs no label table; any other target (a function or subroutine
 *    name) is kept as the bare name.
 *
 * Mix key rule (kb_compile_sass_mix): the base opcode, plus only the
 * modifiers that change cost or meaning for a kernel engineer:
 *  - memory (LDG STG LDS STS LDL STL LD ST LDGSTS ATOM ATOMG ATOMS RED REDG):
 *    keep .E, the access width (.U8 .S8 .U16 .S16 .64 .128 ...) and, for
 *    atomics, the operation and type (.ADD .F32 ...); drop cache and
 *    ordering hints (.CONSTANT, .EF, .STRONG.GPU, .BYPASS ...).  So
 *    LDG.E.128.CONSTANT -> LDG.E.128 and LDG.E.CONSTANT -> LDG.E: the mix
 *    counts traffic by width; the read-only path stays visible in the
 *    listing.  LDL/STL are local memory, i.e. spills.
 *  - the function of MUFU (.EX2 .RCP), the kind of SHFL (.BFLY .IDX) and of
 *    BAR (.SYNC .ARV), VOTE, REDUX, MATCH, TMA (UTMALDG.2D) and SYNCS: the
 *    first modifier only.
 *  - tensor-core and matrix-load ops (HMMA IMMA DMMA *GMMA UTC*MMA LDSM STSM)
 *    and MEMBAR: every modifier (shape, types, scope).
 *  - everything else: the base only (ISETP.GE.AND -> ISETP, IMAD.WIDE ->
 *    IMAD, FFMA.SAT -> FFMA, LDC.64 -> LDC): rounding, comparison kind and
 *    integer variants are noise at this level.
 * The end padding, a final unpredicated BRA to itself and the NOPs after
 * it, is left out of the mix (never executed).
 */
#include "compile_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ===================================================================== */
/* Parsing                                                               */
/* ===================================================================== */

typedef struct {
	char *name;
	uint32_t addr;
	bool placed;      /* an instruction followed it */
} label;

typedef struct {
	kb_sass *sass;
	kb_sass_func *cur;   /* NULL outside a function */
	char *file;          /* current line info (owned) */
	int line;
	char *call_file;
	int call_line;
	int block_frames;    /* frames in the current //## block; 0 = none */
	label *labels;       /* of the current function */
	int nlabels, caplabels;
	int capfuncs;
} parser;

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static void trim(const char **b, const char **e)
{
	while (*b < *e && is_ws(**b))
		(*b)++;
	while (*e > *b && is_ws((*e)[-1]))
		(*e)--;
}

static bool starts(const char *b, const char *e, const char *prefix)
{
	size_t n = strlen(prefix);
	return (size_t)(e - b) >= n && memcmp(b, prefix, n) == 0;
}

static void line_info_clear(parser *ps)
{
	free(ps->file);
	free(ps->call_file);
	ps->file = ps->call_file = NULL;
	ps->line = ps->call_line = ps->block_frames = 0;
}

static void labels_clear(parser *ps)
{
	for (int i = 0; i < ps->nlabels; i++)
		free(ps->labels[i].name);
	ps->nlabels = 0;
}

static const label *label_find(const parser *ps, const char *name, size_t n)
{
	for (int i = 0; i < ps->nlabels; i++)
		if (ps->labels[i].placed && strlen(ps->labels[i].name) == n &&
		    memcmp(ps->labels[i].name, name, n) == 0)
			return &ps->labels[i];
	return NULL;
}

/* Rewrites each backquote-(TARGET) of an operand string (see the header). */
static char *resolve_targets(const parser *ps, const char *ops)
{
	kb_buf b = KB_BUF_INIT;
	const char *p = ops;
	while (*p) {
		const char *q = strstr(p, "`(");
		const char *close = q ? strchr(q + 2, ')') : NULL;
		if (!close) {
			kb_buf_cat(&b, p);
			break;
		}
		kb_buf_catn(&b, p, (size_t)(q - p));
		const char *name = q + 2;
		size_t n = (size_t)(close - name);
		const label *l = n >= 2 && name[0] == '.' && name[1] == 'L' ?
			label_find(ps, name, n) : NULL;
		if (l)
			kb_buf_catf(&b, "0x%x", (unsigned)l->addr);
		else
			kb_buf_catn(&b, name, n);
		p = close + 1;
	}
	return kb_buf_detach(&b);
}

static void finish_func(parser *ps)
{
	kb_sass_func *f = ps->cur;
	for (int i = 0; f && i < f->n; i++) {
		if (!f->v[i].operands || !strstr(f->v[i].operands, "`("))
			continue;
		char *r = resolve_targets(ps, f->v[i].operands);
		free(f->v[i].operands);
		f->v[i].operands = r;
	}
	labels_clear(ps);
	line_info_clear(ps);
	ps->cur = NULL;
}

static void begin_func(parser *ps, const char *name, size_t n)
{
	finish_func(ps);
	kb_sass_func *f = KB_PUSH(ps->sass->funcs, ps->sass->nfuncs, ps->capfuncs);
	memset(f, 0, sizeof *f);
	f->name = kb_xstrndup(name, n);
	ps->cur = f;
}

/* `//--------------------- .text.NAME ----`: begins NAME; other headers end. */
static void parse_header(parser *ps, const char *b, const char *e)
{
	while (b < e && *b == '/')
		b++;
	while (b < e && (*b == '-' || is_ws(*b)))
		b++;
	const char *t = b;
	while (t < e && !is_ws(*t))
		t++;
	if (starts(b, t, ".text.") && t - b > 6)
		begin_func(ps, b + 6, (size_t)(t - b - 6));
	else
		finish_func(ps);
}

/* cuobjdump: `Function : NAME`. */
static void parse_cuobjdump_func(parser *ps, const char *b, const char *e)
{
	b += strlen("Function");
	while (b < e && (is_ws(*b) || *b == ':'))
		b++;
	const char *t = b;
	while (t < e && !is_ws(*t))
		t++;
	if (t > b)
		begin_func(ps, b, (size_t)(t - b));
	else
		finish_func(ps);
}

/* A decimal number at *p (capped, never overflows); false when none. */
static bool parse_uint(const char **p, const char *e, int *out)
{
	const char *s = *p;
	long v = 0;
	while (s < e && isdigit((unsigned char)*s)) {
		if (v < 100000000)
			v = v * 10 + (*s - '0');
		s++;
	}
	if (s == *p)
		return false;
	*out = (int)v;
	*p = s;
	return true;
}

/* One frame `"FILE", line N` at *p. */
static bool parse_frame(const char **p, const char *e, const char **f, size_t *fn, int *line)
{
	const char *s = *p;
	if (s >= e || *s != '"')
		return false;
	const char *q = memchr(s + 1, '"', (size_t)(e - s - 1));
	if (!q || !starts(q + 1, e, ", line "))
		return false;
	const char *n = q + 1 + strlen(", line ");
	if (!parse_uint(&n, e, line))
		return false;
	*f = s + 1;
	*fn = (size_t)(q - s - 1);
	*p = n;
	return true;
}

/* `//## File "F", line N [inlined at "G", line M]...` (see the header). */
static void parse_line_info(parser *ps, const char *b, const char *e)
{
	const char *p = b + strlen("//##");
	while (p < e && is_ws(*p))
		p++;
	if (!starts(p, e, "File "))
		return;
	p += strlen("File ");
	const char *f, *lf;
	size_t fn, lfn;
	int line, lline, nframes = 1;
	if (!parse_frame(&p, e, &f, &fn, &line))
		return;
	lf = f, lfn = fn, lline = line;
	while (starts(p, e, " inlined at ")) {
		p += strlen(" inlined at ");
		if (!parse_frame(&p, e, &lf, &lfn, &lline))
			break;
		nframes++;
	}
	if (ps->block_frames == 0) {
		line_info_clear(ps);
		ps->file = kb_xstrndup(f, fn);
		ps->line = line;
	}
	ps->block_frames += nframes;
	if (ps->block_frames > 1) {
		free(ps->call_file);
		ps->call_file = kb_xstrndup(lf, lfn);
		ps->call_line = lline;
	}
}

/* `NAME:` on a line of its own. */
static void parse_label(parser *ps, const char *b, const char *e)
{
	for (const char *p = b; p < e - 1; p++)
		if (is_ws(*p) || *p == ':')
			return;
	label *l = KB_PUSH(ps->labels, ps->nlabels, ps->caplabels);
	l->name = kb_xstrndup(b, (size_t)(e - b - 1));
	l->addr = 0;
	l->placed = false;
}

/* `/ *ADDR* /` at *p: 1 to 8 hex digits. */
static bool parse_addr(const char **p, const char *e, uint32_t *addr)
{
	const char *s = *p + 2;
	uint32_t v = 0;
	int n = 0;
	while (s < e && isxdigit((unsigned char)*s) && n < 9) {
		int c = (unsigned char)*s;
		v = v * 16 + (uint32_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
		s++, n++;
	}
	if (n < 1 || n > 8 || !starts(s, e, "*/"))
		return false;
	*addr = v;
	*p = s + 2;
	return true;
}

static void add_insn(parser *ps, uint32_t addr, const char *pred, size_t pn,
		     const char *op, size_t on, const char *ops, size_t opn)
{
	kb_sass_func *f = ps->cur;
	kb_sass_insn *in = KB_PUSH(f->v, f->n, f->cap);
	memset(in, 0, sizeof *in);
	in->addr = addr;
	in->pred = pn ? kb_xstrndup(pred, pn) : NULL;
	in->opcode = kb_xstrndup(op, on);
	in->operands = kb_xstrndup(ops, opn);
	in->file = ps->file ? kb_xstrdup(ps->file) : NULL;
	in->line = ps->line;
	in->call_file = ps->call_file ? kb_xstrdup(ps->call_file) : NULL;
	in->call_line = ps->call_line;
	ps->block_frames = 0;
	for (int i = ps->nlabels - 1; i >= 0 && !ps->labels[i].placed; i--) {
		ps->labels[i].addr = addr;
		ps->labels[i].placed = true;
	}
}

/* `/ *0040* /   @P0 OPCODE.MOD operands ;  [/ * 0x... * /]` */
static void parse_insn(parser *ps, const char *b, const char *e)
{
	uint32_t addr;
	if (!parse_addr(&b, e, &addr))
		return;
	const char *semi = memchr(b, ';', (size_t)(e - b));
	if (!semi)
		return;
	const char *end = semi;
	trim(&b, &end);
	const char *pred = b, *pe = b;
	if (b < end && *b == '@') {
		while (pe < end && !is_ws(*pe))
			pe++;
		for (b = pe; b < end && is_ws(*b); b++)
			;
	}
	const char *op = b;
	while (b < end && !is_ws(*b))
		b++;
	if (op == b || !isalpha((unsigned char)*op))
		return;
	const char *ops = b;
	trim(&ops, &end);
	add_insn(ps, addr, pred, (size_t)(pe - pred), op, (size_t)(b - op), ops,
		 (size_t)(end - ops));
}

static bool all_dots(const char *b, const char *e)
{
	if (e - b < 3)
		return false;
	for (; b < e; b++)
		if (*b != '.')
			return false;
	return true;
}

static void parse_line(parser *ps, const char *b, const char *e)
{
	trim(&b, &e);
	if (b == e)
		return;
	if (starts(b, e, "/*")) {
		if (ps->cur)
			parse_insn(ps, b, e);
	} else if (starts(b, e, "//##")) {
		if (ps->cur)
			parse_line_info(ps, b, e);
	} else if (starts(b, e, "//-")) {
		parse_header(ps, b, e);
	} else if (starts(b, e, "Function :") || starts(b, e, "Function:")) {
		parse_cuobjdump_func(ps, b, e);
	} else if (all_dots(b, e)) {
		finish_func(ps);
	} else if (e[-1] == ':' && ps->cur) {
		parse_label(ps, b, e);
	}
}

/* Overwrites sass with the functions of a listing. Returns 0 or KB_EINVAL. */
int kb_compile_sass_parse(const char *text, kb_sass *sass)
{
	if (!text || !sass)
		return KB_EINVAL;
	memset(sass, 0, sizeof *sass);
	sass->available = true;
	sass->text = kb_xstrdup(text);
	parser ps = {.sass = sass};
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		const char *e = nl ? nl : p + strlen(p);
		parse_line(&ps, p, e);
		p = nl ? nl + 1 : e;
	}
	finish_func(&ps);
	free(ps.labels);
	return 0;
}

/* ===================================================================== */
/* Instruction mix                                                       */
/* ===================================================================== */

typedef enum { MOD_BASE, MOD_FIRST, MOD_ALL, MOD_MEM } mod_rule;

static const struct {
	const char *op;
	mod_rule rule;
} mix_rules[] = {
	{"LDG", MOD_MEM}, {"STG", MOD_MEM}, {"LDS", MOD_MEM}, {"STS", MOD_MEM},
	{"LDL", MOD_MEM}, {"STL", MOD_MEM}, {"LD", MOD_MEM}, {"ST", MOD_MEM},
	{"LDGSTS", MOD_MEM}, {"ATOM", MOD_MEM}, {"ATOMG", MOD_MEM},
	{"ATOMS", MOD_MEM}, {"RED", MOD_MEM}, {"REDG", MOD_MEM},
	{"MUFU", MOD_FIRST}, {"SHFL", MOD_FIRST}, {"BAR", MOD_FIRST},
	{"VOTE", MOD_FIRST}, {"VOTEU", MOD_FIRST}, {"REDUX", MOD_FIRST},
	{"MATCH", MOD_FIRST}, {"UTMALDG", MOD_FIRST}, {"UTMASTG", MOD_FIRST},
	{"UTMAPF", MOD_FIRST}, {"UBLKCP", MOD_FIRST}, {"SYNCS", MOD_FIRST},
	{"HMMA", MOD_ALL}, {"IMMA", MOD_ALL}, {"DMMA", MOD_ALL}, {"BMMA", MOD_ALL},
	{"QMMA", MOD_ALL}, {"OMMA", MOD_ALL}, {"HGMMA", MOD_ALL}, {"IGMMA", MOD_ALL},
	{"QGMMA", MOD_ALL}, {"BGMMA", MOD_ALL}, {"UTCHMMA", MOD_ALL},
	{"UTCIMMA", MOD_ALL}, {"UTCQMMA", MOD_ALL}, {"UTCOMMA", MOD_ALL},
	{"LDSM", MOD_ALL}, {"STSM", MOD_ALL}, {"MEMBAR", MOD_ALL},
};

/* Memory modifiers that stay in the key: address form, width, atomic op and type. */
static const char *const mem_keep[] = {
	"E", "U8", "S8", "U16", "S16", "8", "16", "32", "64", "128",
	"ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS", "CAST",
	"F32", "F64", "F16x2", "BF16x2", "S32", "U32", "S64", "U64",
};

static mod_rule rule_of(const char *base, size_t n)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(mix_rules); i++)
		if (strlen(mix_rules[i].op) == n && memcmp(mix_rules[i].op, base, n) == 0)
			return mix_rules[i].rule;
	return MOD_BASE;
}

static bool mem_mod_kept(const char *m, size_t n)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(mem_keep); i++)
		if (strlen(mem_keep[i]) == n && strncasecmp(mem_keep[i], m, n) == 0)
			return true;
	return false;
}

/* The mix key of an opcode (a new string); see the header comment. */
static char *mix_key(const char *opcode)
{
	const char *dot = strchr(opcode, '.');
	size_t bn = dot ? (size_t)(dot - opcode) : strlen(opcode);
	mod_rule rule = rule_of(opcode, bn);
	kb_buf b = KB_BUF_INIT;
	kb_buf_catn(&b, opcode, bn);
	for (int i = 0; dot && rule != MOD_BASE; i++) {
		const char *m = dot + 1;
		dot = strchr(m, '.');
		size_t mn = dot ? (size_t)(dot - m) : strlen(m);
		bool keep = rule == MOD_ALL || (rule == MOD_FIRST && i == 0) ||
			    (rule == MOD_MEM && mem_mod_kept(m, mn));
		if (keep && mn) {
			kb_buf_catc(&b, '.');
			kb_buf_catn(&b, m, mn);
		}
	}
	return kb_buf_detach(&b);
}

static bool is_self_branch(const kb_sass_insn *in)
{
	char self[16];
	snprintf(self, sizeof self, "0x%x", (unsigned)in->addr);
	return !in->pred && in->opcode && strcmp(in->opcode, "BRA") == 0 &&
	       in->operands && strcmp(in->operands, self) == 0;
}

/* The index where the end padding (self-BRA, then NOPs) starts, else f->n:
 * the instructions before it are the ones that run. */
int kb_compile_sass_body_len(const kb_sass_func *f)
{
	int i = f->n;
	while (i > 0 && f->v[i - 1].opcode && strcmp(f->v[i - 1].opcode, "NOP") == 0 &&
	       !f->v[i - 1].pred)
		i--;
	if (i > 0 && is_self_branch(&f->v[i - 1]))
		return i - 1;
	return f->n;
}

static int mix_cmp(const void *a, const void *b)
{
	const kb_mix *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Returns the number of mix entries put in *out, or KB_EINVAL. */
int kb_compile_sass_mix(const kb_sass_func *f, kb_mix **out)
{
	if (!f || !out)
		return KB_EINVAL;
	kb_mix *mix = NULL;
	int n = 0, cap = 0, end = kb_compile_sass_body_len(f);
	for (int i = 0; i < end; i++) {
		if (!f->v[i].opcode)
			continue;
		char *key = mix_key(f->v[i].opcode);
		int j = 0;
		while (j < n && strcmp(mix[j].key, key) != 0)
			j++;
		if (j < n) {
			mix[j].count++;
			free(key);
			continue;
		}
		kb_mix *m = KB_PUSH(mix, n, cap);
		m->key = key;
		m->count = 1;
	}
	if (n > 1)
		qsort(mix, (size_t)n, sizeof *mix, mix_cmp);
	*out = mix;
	return n;
}

/* Frees n entries and the array; NULL is fine. */
void kb_compile_sass_mix_free(kb_mix *mix, int n)
{
	for (int i = 0; mix && i < n; i++)
		free(mix[i].key);
	free(mix);
}

/* ===================================================================== */
/* Running the disassembler                                              */
/* ===================================================================== */

#define NO_TOOL_TAIL "It ships with the CUDA toolkit on GPU machines: set CUDA_HOME to the " \
	"toolkit, or KBENCH_NVDISASM to the program."

#define NO_TOOL_NOTE "no nvdisasm (nor cuobjdump) here; `kbench devices` says where kbench " \
	"looked and how to point it at one"

static bool is_program(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* "nvdisasm not found (nor cuobjdump): looked in A, B (the CUDA toolkit)
 * and C, D (PATH). It ships ..." */
static char *not_found_why(char **dirs, int n, int ntoolkit)
{
	kb_buf b = KB_BUF_INIT;
	kb_buf_cat(&b, "nvdisasm not found (nor cuobjdump): looked in ");
	for (int i = 0; i < n; i++) {
		kb_buf_catf(&b, "%s%s", i == 0 || i == ntoolkit ? "" : ", ", dirs[i]);
		if (i == ntoolkit - 1)
			kb_buf_cat(&b, " (the CUDA toolkit)");
		if (i == ntoolkit - 1 && n > ntoolkit)
			kb_buf_cat(&b, " and ");
	}
	kb_buf_catf(&b, "%s. " NO_TOOL_TAIL, n > ntoolkit ? " (PATH)" : " (PATH is empty)");
	return kb_buf_detach(&b);
}

/* Picks $KBENCH_NVDISASM, nvdisasm or cuobjdump.  Sets *path and *name, or
 * leaves *path NULL and sets *why. */
static void find_tool(char **path, const char **name, char **why)
{
	const char *env = getenv("KBENCH_NVDISASM");
	*name = "nvdisasm";
	*path = NULL;
	if (env && *env) {
		*path = kb_which(env);
		if (!*path)
			*why = kb_xasprintf("KBENCH_NVDISASM=%s is not an executable program.", env);
		return;
	}
	static const char *const tools[] = {"nvdisasm", "cuobjdump"};
	char **dirs, *nvrtc = kb_compile__nvrtc_file();
	int ntoolkit, n = kb_compile__toolkit_bin_dirs(nvrtc, &dirs, &ntoolkit);
	free(nvrtc);
	for (size_t t = 0; t < KB_ARRAY_LEN(tools) && !*path; t++)
		for (int i = 0; i < n && !*path; i++) {
			char *cand = kb_xasprintf("%s/%s", dirs[i], tools[t]);
			if (is_program(cand)) {
				*path = cand;
				*name = tools[t];
			} else {
				free(cand);
			}
		}
	if (!*path)
		*why = not_found_why(dirs, n, ntoolkit);
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

/* Writes the cubin to a new private file (mode 0600). Returns 0 or KB_EIO. */
static int write_temp(const void *p, size_t n, char **path, kb_err *err)
{
	const char *dir = getenv("TMPDIR");
	char *tpl = kb_xasprintf("%s/kbench-sass-XXXXXX.cubin", dir && *dir ? dir : "/tmp");
	int rc = 0, fd = mkstemps(tpl, 6);
	if (fd < 0) {
		rc = kb_err_errno(err, "cannot create a temp file", tpl);
		free(tpl);
		return rc;
	}
	const char *s = p;
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = kb_err_errno(err, "cannot write", tpl);
			break;
		}
		s += w;
		n -= (size_t)w;
	}
	if (close(fd) < 0 && rc == 0)
		rc = kb_err_errno(err, "cannot write", tpl);
	if (rc < 0) {
		unlink(tpl);
		free(tpl);
		return rc;
	}
	*path = tpl;
	return 0;
}

/* A disassembler that exited non-zero: its stderr becomes the message. */
static int tool_failed(const char *name, int status, kb_buf *errout, kb_err *err)
{
	const char *b = errout->s ? errout->s : "", *e = b + errout->len;
	trim(&b, &e);
	return KB_ERR(err, KB_ERROR, KB_DOM_OS, status, "%s failed (exit status %d)%s%.*s",
		      name, status, e > b ? ": " : "", (int)(e - b), b);
}

/* See compile.h. */
int kb_compile_sass_tool(char **text)
{
	char *tool = NULL, *why = NULL;
	const char *name;
	find_tool(&tool, &name, &why);
	if (!tool) {
		*text = why;
		return KB_ENOTFOUND;
	}
	*text = kb_xasprintf("%s (%s)", tool, name);
	free(tool);
	return KB_OK;
}

/* Returns 0 (available or not, see sass), or a KB_E* with err filled when
 * the temp file or the disassembler failed; sass is then empty. */
int kb_compile_sass(const void *cubin, size_t size, kb_sass *sass, kb_err *err)
{
	if (!sass)
		return KB_EINVAL;
	memset(sass, 0, sizeof *sass);
	if (!cubin || size == 0)
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "no cubin to disassemble");
	char *tool = NULL, *why = NULL, *tmp = NULL;
	const char *name;
	kb_buf out = KB_BUF_INIT, errout = KB_BUF_INIT;
	int rc = 0;
	find_tool(&tool, &name, &why);
	if (!tool) { /* one line where SASS would be; the whole advice in `kbench devices` */
		const char *env = getenv("KBENCH_NVDISASM");
		sass->unavailable_why = env && *env ? why : kb_xstrdup(NO_TOOL_NOTE);
		if (sass->unavailable_why != why)
			free(why);
		goto out;
	}
	rc = write_temp(cubin, size, &tmp, err);
	if (rc < 0)
		goto out;
	/* -gi: each instruction's line and, for inlined code, the kernel's
	 * line that called it (hot spots in a .tile kernel's helpers) */
	char *nv_argv[] = {tool, "-c", "-gi", tmp, NULL};
	char *cu_argv[] = {tool, "-sass", tmp, NULL};
	rc = kb_spawn_capture(strcmp(name, "nvdisasm") == 0 ? nv_argv : cu_argv, &out,
			      &errout, err);
	if (rc > 0)
		rc = tool_failed(name, rc, &errout, err);
	if (rc < 0)
		goto out;
	kb_compile_sass_parse(out.s ? out.s : "", sass);
	sass->tool = kb_xstrdup(name);
out:
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(tool);
	kb_buf_free(&out);
	kb_buf_free(&errout);
	return rc;
}

/* Frees everything sass owns and zeroes it; NULL is fine. */
void kb_compile_sass_free(kb_sass *sass)
{
	if (!sass)
		return;
	for (int i = 0; i < sass->nfuncs; i++) {
		kb_sass_func *f = &sass->funcs[i];
		for (int j = 0; j < f->n; j++) {
			kb_sass_insn *in = &f->v[j];
			free(in->pred);
			free(in->opcode);
			free(in->operands);
			free(in->file);
			free(in->call_file);
		}
		free(f->v);
		free(f->name);
	}
	free(sass->funcs);
	free(sass->tool);
	free(sass->unavailable_why);
	free(sass->text);
	memset(sass, 0, sizeof *sass);
}

static bool same_file(const char *a, const char *b)
{
	return a && b && !strcmp(kb_basename(a), kb_basename(b));
}

int kb_compile_sass_src_line(const kb_sass_insn *in, const char *src_path)
{
	if (in->line && same_file(in->file, src_path))
		return in->line;
	if (in->call_line && same_file(in->call_file, src_path))
		return in->call_line;
	return 0;
}
