/*
 * options.c - the compiler options a user adds (`//! options`, --option):
 * what kbench knows of NVRTC's and nvJitLink's options, the check every
 * option gets before a compile, and the mapping of the compilers' own
 * complaints about options back to the word that caused them.
 *
 * Who decides what.  The compiler is the judge of what it accepts: a word
 * the tables below do not know is passed on, and NVRTC's "unrecognized
 * option" or nvJitLink's "unrecognized option:" comes back as an error at
 * that word, with the closest spelling the tables know.  The tables decide
 * three things the compilers cannot: what kbench refuses (it sets the
 * option itself, or the option would break its pipeline or its cache),
 * which spellings a "did you mean" offers, and the shape of known options'
 * values (nvJitLink takes -ftz=maybe without a word).  The check is a table
 * walk, so it costs nothing on a compile-cache hit; a set of options the
 * compiler rejects never reaches the cache (only successful compiles are
 * stored), so every rejection is seen by a real compiler run.
 *
 * Every spelling marked allowed here was accepted by NVRTC 13.0 or
 * nvJitLink 13.0 (test_compile_build checks them all against the real
 * libraries); nvJitLink takes single-dash options only.
 */
#include "spec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the tables ===== */

typedef enum {
	OPT_FLAG,   /* no value: -use_fast_math */
	OPT_BOOL,   /* =true or =false: -ftz=true */
	OPT_INT,    /* =N, decimal: -maxrregcount=64 */
	OPT_TEXT,   /* =anything non-empty: -std=c++20, -Xptxas=-O1 */
	OPT_GLUED,  /* the value follows the name directly: -DNAME=1, -O3 */
} opt_kind;

typedef struct {
	const char *names[3]; /* the spellings the compiler takes, without the value */
	opt_kind kind;
	const char *example;  /* a whole valid option, or NULL for a refused one */
	const char *refused;  /* why kbench refuses it, or NULL */
} opt_def;

#define ARCH_WHY "it sets the target itself (use --arch sm_XX)"
#define LINEINFO_WHY "it always compiles with it (SASS lines map to source lines)"
#define RDC_WHY "it loads one whole-program cubin, and relocatable code needs a device " \
	"link step it does not run"
#define INCLUDE_WHY "headers found through it would not be part of the compile cache's " \
	"key; put the header beside the kernel file (kbench passes that directory)"

static const opt_def nvrtc_opts[] = {
	{{"-use_fast_math", "--use_fast_math"}, OPT_FLAG, "-use_fast_math", NULL},
	{{"-maxrregcount", "--maxrregcount"}, OPT_INT, "-maxrregcount=64", NULL},
	{{"-ftz", "--ftz"}, OPT_BOOL, "-ftz=true", NULL},
	{{"-prec-div", "--prec-div"}, OPT_BOOL, "-prec-div=false", NULL},
	{{"-prec-sqrt", "--prec-sqrt"}, OPT_BOOL, "-prec-sqrt=false", NULL},
	{{"-fmad", "--fmad"}, OPT_BOOL, "-fmad=false", NULL},
	{{"-extra-device-vectorization", "--extra-device-vectorization"}, OPT_FLAG,
	 "-extra-device-vectorization", NULL},
	{{"-Xptxas", "--ptxas-options"}, OPT_TEXT, "-Xptxas=-O1", NULL},
	{{"-std", "--std"}, OPT_TEXT, "-std=c++20", NULL},
	{{"-D"}, OPT_GLUED, "-DUSE_FAST=1", NULL},
	{{"--define-macro"}, OPT_TEXT, "--define-macro=USE_FAST=1", NULL},
	{{"-U"}, OPT_GLUED, "-UNDEBUG", NULL},
	{{"--undefine-macro"}, OPT_TEXT, "--undefine-macro=NDEBUG", NULL},
	{{"-default-device", "--device-as-default-execution-space"}, OPT_FLAG, "-default-device", NULL},
	{{"-restrict", "--restrict"}, OPT_FLAG, "-restrict", NULL},
	{{"-w", "--disable-warnings"}, OPT_FLAG, "-w", NULL},
	{{"-diag-suppress", "--diag-suppress"}, OPT_TEXT, "--diag-suppress=177", NULL},
	{{"-diag-error", "--diag-error"}, OPT_TEXT, "--diag-error=177", NULL},
	{{"-diag-warn", "--diag-warn"}, OPT_TEXT, "--diag-warn=177", NULL},
	{{"-dopt", "--dopt"}, OPT_TEXT, "-dopt=on", NULL},
	{{"-Ofc", "--Ofast-compile"}, OPT_TEXT, "--Ofast-compile=mid", NULL},
	{{"-split-compile", "--split-compile"}, OPT_INT, "--split-compile=0", NULL},
	{{"-device-stack-protector", "--device-stack-protector"}, OPT_BOOL,
	 "--device-stack-protector=true", NULL},
	{{"-err-no", "--display-error-number"}, OPT_FLAG, "--display-error-number", NULL},
	{{"--no-display-error-number"}, OPT_FLAG, "--no-display-error-number", NULL},
	{{"-arch", "--gpu-architecture"}, OPT_TEXT, NULL, ARCH_WHY},
	{{"-lineinfo", "--generate-line-info"}, OPT_FLAG, NULL, LINEINFO_WHY},
	{{"-G", "--device-debug"}, OPT_FLAG, NULL,
	 "it turns device optimisation off, and kbench measures the code you would ship"},
	{{"-dlto", "--dlink-time-opt"}, OPT_FLAG, NULL,
	 "it makes LTO-IR for a later link, and kbench needs a cubin"},
	{{"-rdc", "--relocatable-device-code"}, OPT_BOOL, NULL, RDC_WHY},
	{{"-ewp", "--extensible-whole-program"}, OPT_FLAG, NULL, RDC_WHY},
	{{"-fdevice-syntax-only", "--fdevice-syntax-only"}, OPT_FLAG, NULL,
	 "it makes no code to measure"},
	{{"-optix-ir", "--optix-ir"}, OPT_FLAG, NULL, "it makes OptiX IR, and kbench needs a cubin"},
	{{"-I", "--include-path"}, OPT_GLUED, NULL, INCLUDE_WHY},
	{{"-include", "--pre-include"}, OPT_TEXT, NULL, INCLUDE_WHY},
};

static const opt_def nvjitlink_opts[] = {
	{{"-maxrregcount"}, OPT_INT, "-maxrregcount=64", NULL},
	{{"-ftz"}, OPT_BOOL, "-ftz=true", NULL},
	{{"-prec-div"}, OPT_BOOL, "-prec-div=false", NULL},
	{{"-prec-sqrt"}, OPT_BOOL, "-prec-sqrt=false", NULL},
	{{"-fma"}, OPT_BOOL, "-fma=false", NULL},
	{{"-Xptxas"}, OPT_TEXT, "-Xptxas=-O1", NULL},
	{{"-O"}, OPT_GLUED, "-O3", NULL},
	{{"-split-compile"}, OPT_INT, "-split-compile=0", NULL},
	{{"-kernels-used"}, OPT_TEXT, "-kernels-used=saxpy", NULL},
	{{"-variables-used"}, OPT_TEXT, "-variables-used=table", NULL},
	{{"-no-cache"}, OPT_FLAG, "-no-cache", NULL},
	{{"-arch"}, OPT_TEXT, NULL, ARCH_WHY},
	{{"-lineinfo"}, OPT_FLAG, NULL, LINEINFO_WHY},
	{{"-verbose"}, OPT_FLAG, NULL, "it always passes it (it reads the resource report)"},
	{{"-g"}, OPT_FLAG, NULL,
	 "it turns optimisation off, and kbench measures the code you would ship"},
	{{"-lto", "-ptx"}, OPT_FLAG, NULL,
	 "kbench gives nvJitLink PTX and needs a cubin back"},
};

static const opt_def *table(kb_src_kind kind, int *n)
{
	if (kind == KB_SRC_PTX) {
		*n = (int)KB_ARRAY_LEN(nvjitlink_opts);
		return nvjitlink_opts;
	}
	*n = (int)KB_ARRAY_LEN(nvrtc_opts);
	return nvrtc_opts;
}

static const char *compiler(kb_src_kind kind)
{
	return kind == KB_SRC_PTX ? "nvJitLink" : "NVRTC";
}

/* The entry word is an instance of, and where its value starts (NULL: no
 * value; after a '=', or right after the name for OPT_GLUED). */
static const opt_def *lookup(kb_src_kind kind, const char *word, const char **value)
{
	int n;
	const opt_def *t = table(kind, &n);
	const opt_def *best = NULL;
	size_t best_len = 0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < 3 && t[i].names[j]; j++) {
			const char *s = t[i].names[j];
			size_t len = strlen(s);
			if (strncmp(word, s, len) || len <= best_len)
				continue;
			char next = word[len];
			if (t[i].kind == OPT_GLUED || next == '\0' || next == '=') {
				best = &t[i];
				best_len = len;
				*value = t[i].kind == OPT_GLUED ? (next ? word + len : NULL)
					 : next == '=' ? word + len + 1 : NULL;
			}
		}
	}
	return best;
}

/* ===== the check before a compile ===== */

static bool is_uint(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* What is wrong with a known option's value, or NULL. */
static char *value_problem(const opt_def *d, const char *word, const char *name_end,
			   const char *value)
{
	int nlen = (int)(name_end - word);
	switch (d->kind) {
	case OPT_FLAG:
		if (value)
			return kb_xasprintf("%.*s takes no value", nlen, word);
		return NULL;
	case OPT_BOOL:
		if (!value || (strcmp(value, "true") && strcmp(value, "false")))
			return kb_xasprintf("%.*s takes true or false (e.g. %s)", nlen, word, d->example);
		return NULL;
	case OPT_INT:
		if (!value || !is_uint(value))
			return kb_xasprintf("%.*s takes a whole number (e.g. %s)", nlen, word, d->example);
		return NULL;
	case OPT_TEXT:
	case OPT_GLUED:
		if (!value || !*value)
			return kb_xasprintf("%.*s needs a value, in the same word (e.g. %s)", nlen, word,
					    d->example);
		return NULL;
	}
	KB_UNREACHABLE();
}

/* Checks one option word for a .cu (NVRTC) or .ptx (nvJitLink) file.
 * Returns 0, or -1 with *why (a new string) when kbench refuses the option
 * or a known option's value has the wrong shape.  A word the tables do not
 * know passes: the compiler judges it. */
int kb_compile_option_check(kb_src_kind kind, const char *word, char **why)
{
	*why = NULL;
	if (word[0] != '-') {
		*why = kb_xasprintf("'%s' is not an option (options start with '-'; one option "
				    "per word, values after '=')", word);
		return -1;
	}
	const char *value = NULL;
	const opt_def *d = lookup(kind, word, &value);
	if (!d)
		return 0;
	const char *name_end = value ? value - (d->kind != OPT_GLUED) : word + strlen(word);
	if (d->refused) {
		*why = kb_xasprintf("kbench does not take %.*s: %s", (int)(name_end - word), word,
				    d->refused);
		return -1;
	}
	*why = value_problem(d, word, name_end, value);
	return *why ? -1 : 0;
}

/* Whether word is a known option that needs a value and has none
 * ("-Xptxas" alone), so that the next word was probably meant as it. */
bool kb_spec__option_wants_value(kb_src_kind kind, const char *word)
{
	const char *value = NULL;
	const opt_def *d = lookup(kind, word, &value);
	return d && !d->refused && d->kind != OPT_FLAG && !value;
}

/* Whether word is an instance of option `name` (any spelling of the entry
 * whose first spelling is name), e.g. "--std=c++20" of "-std". */
bool kb_compile_option_is(kb_src_kind kind, const char *word, const char *name)
{
	const char *value;
	const opt_def *d = lookup(kind, word, &value);
	return d && !strcmp(d->names[0], name);
}

/* The example of the i-th allowed option of a table (tests), or NULL past
 * the end. */
const char *kb_spec__option_example(kb_src_kind kind, int i)
{
	int n;
	const opt_def *t = table(kind, &n);
	for (int k = 0; k < n; k++)
		if (t[k].example && i-- == 0)
			return t[k].example;
	return NULL;
}

/* ===== the compilers' complaints, placed ===== */

/* A "did you mean" for a word the compiler did not recognise: the closest
 * allowed spelling of its table, with the word's value; or where the word
 * belongs instead.  A new string ("" when there is nothing to say). */
static char *suggest(kb_src_kind kind, const char *word)
{
	int n;
	const opt_def *t = table(kind, &n);
	const char *names[3 * 64];
	int nn = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < 3 && t[i].names[j] && !t[i].refused; j++)
			if (nn < (int)KB_ARRAY_LEN(names))
				names[nn++] = t[i].names[j];
	const char *eq = strchr(word, '=');
	char *name = kb_xstrndup(word, eq ? (size_t)(eq - word) : strlen(word));
	const char *near = kb_spec__closest(name, names, nn);
	free(name);
	if (near)
		return kb_xasprintf("; did you mean '%s%s'?", near, eq ? eq : "");
	kb_src_kind other = kind == KB_SRC_PTX ? KB_SRC_CUDA : KB_SRC_PTX;
	char *why = NULL;
	const char *value;
	if (!lookup(other, word, &value) || kb_compile_option_check(other, word, &why) < 0) {
		free(why);
		return kb_xstrdup("");
	}
	if (kind == KB_SRC_CUDA && kb_compile_option_is(KB_SRC_PTX, word, "-O"))
		return kb_xasprintf("; ptxas takes it through NVRTC as -Xptxas=%s", word);
	if (kind == KB_SRC_PTX && kb_compile_option_is(KB_SRC_CUDA, word, "-use_fast_math"))
		return kb_xstrdup("; it is NVRTC's (for .cu files): for PTX, -ftz=true "
				  "-prec-div=false -prec-sqrt=false ask ptxas for what it changes there");
	return kb_xasprintf("; it is %s's (for %s files)", compiler(other),
			    other == KB_SRC_PTX ? ".ptx" : ".cu");
}

/* Whether tok stands in msg as a whole word (between blanks, quotes,
 * parentheses, commas or colons). */
static bool has_word(const char *msg, const char *tok, size_t len)
{
	static const char edge[] = " \t'\"(),:";
	if (!len)
		return false;
	for (const char *p = msg; (p = strstr(p, tok)); p++) {
		bool start = p == msg || strchr(edge, p[-1]);
		bool end = p[len] == '\0' || strchr(edge, p[len]) || p[len] == '=';
		if (start && end && !strncmp(p, tok, len))
			return true;
	}
	return false;
}

static const char *undash(const char *s)
{
	while (*s == '-')
		s++;
	return s;
}

/* Whether msg is about option o: its whole text, its name ("--ftz" in
 * "--ftz (-ftz) expects ..."), or a quoted name or value without dashes
 * ("Unknown option 'bogus'" for -Xptxas=-bogus). */
static bool about(const char *msg, const char *o)
{
	const char *eq = strchr(o, '=');
	char *name = kb_xstrndup(o, eq ? (size_t)(eq - o) : strlen(o));
	bool hit = has_word(msg, o, strlen(o)) || has_word(msg, name, strlen(name));
	for (const char *q = strchr(msg, '\''); !hit && q; q = strchr(q + 1, '\'')) {
		const char *e = strchr(q + 1, '\'');
		if (!e)
			break;
		char *word = kb_xstrndup(undash(q + 1), (size_t)(e - undash(q + 1)));
		hit = *word && (!strcmp(undash(name), word) || (eq && !strcmp(undash(eq + 1), word)));
		free(word);
		q = e;
	}
	free(name);
	return hit;
}

/* The message of one log line about options, its level, whether it says
 * the option was not recognised, and who says it ("ptxas", or *who left as
 * it is); NULL when the line is not about options. */
static const char *option_message(const char *l, kb_diag_level *lvl, bool *unknown,
				  const char **who)
{
	static const struct { const char *head; kb_diag_level lvl; } heads[] = {
		{"nvrtc: error: ", KB_DIAG_ERROR}, {"nvrtc: warning: ", KB_DIAG_WARNING},
		{"unrecognized option: ", KB_DIAG_ERROR}, {"ptxas fatal", KB_DIAG_ERROR},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(heads); i++) {
		size_t n = strlen(heads[i].head);
		if (strncmp(l, heads[i].head, n))
			continue;
		*lvl = heads[i].lvl;
		*unknown = strstr(l, "nrecognized option") != NULL;
		if (i == 3) { /* "ptxas fatal   : msg", as ptxas_log_diags words it */
			const char *c = strchr(l, ':');
			*who = "ptxas";
			return c && c[1] ? c + 2 : l;
		}
		return i == 2 ? l : l + n;
	}
	return NULL;
}

/* Moves a placeless diag with this message to o's place, or adds one. */
static void place(kb_diags *d, kb_diag_level lvl, const kb_source *src, const kb_spec_option *o,
		  const char *raw, const char *msg)
{
	for (int k = 0; k < d->n; k++) {
		kb_diag *g = &d->v[k];
		if (g->line == 0 && !strcmp(g->msg, raw)) {
			free(g->msg);
			free(g->src_line);
			g->line = o->loc.line;
			g->col = o->loc.col;
			g->len = o->len > 0 ? o->len : 1;
			g->src_line = o->loc.line ? kb_src_line(src->text, o->loc.line) : NULL;
			g->msg = kb_xstrdup(msg);
			return;
		}
	}
	kb_diag_add(d, lvl, src->path, o->loc.line ? src->text : NULL, o->loc.line, o->loc.col,
		    o->len, "%s", msg);
}

static void place_line(kb_src_kind kind, const char *l, const kb_spec_option *opts, int n,
		       const kb_source *src, kb_diags *diags)
{
	kb_diag_level lvl;
	bool unknown;
	const char *who = compiler(kind);
	const char *msg = option_message(l, &lvl, &unknown, &who);
	if (!msg)
		return;
	int at = -1;
	for (int i = 0; i < n && at < 0; i++)
		if (about(msg, opts[i].text))
			at = i;
	if (at < 0) { /* about kbench's own options, or unplaceable: say it anyway */
		bool known = false;
		for (int k = 0; k < diags->n; k++)
			known = known || !strcmp(diags->v[k].msg, msg);
		/* ptxas's "fatal: Ptx assembly aborted" adds nothing to its errors */
		bool said = !strcmp(who, "ptxas") && kb_diag_count(diags, KB_DIAG_ERROR) > 0;
		if (lvl == KB_DIAG_ERROR && !known && !said)
			kb_diag_add(diags, lvl, src->path, NULL, 0, 0, 1, "%s: %s", who, msg);
		return;
	}
	const kb_spec_option *o = &opts[at];
	char *hint = unknown ? suggest(kind, o->text) : kb_xstrdup("");
	char *text = o->loc.line ? kb_xasprintf("%s: %s%s", who, msg, hint)
		     : kb_xasprintf("--option %s (command line): %s: %s%s", o->text, who, msg, hint);
	place(diags, lvl, src, o, msg, text);
	free(text);
	free(hint);
}

/* Places the compiler's complaints about options found in log (NVRTC's
 * "nvrtc: error:/warning:" lines, nvJitLink's "unrecognized option:", ptxas'
 * "fatal" lines) at the user option each is about: a //! options word
 * (line:col, caret) or an --option (no place, named).  A placeless diag an
 * earlier parser made of the same line is moved, not repeated; complaints
 * about no user option stay placeless.  Cheap: no compiler is called. */
void kb_compile_options_log_diags(kb_src_kind kind, const char *log, const kb_spec_option *opts,
				  int n, const kb_source *src, kb_diags *diags)
{
	const char *p = log;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		char *l = kb_xstrndup(p, eol ? (size_t)(eol - p) : strlen(p));
		place_line(kind, l, opts, n, src, diags);
		free(l);
		p = eol ? eol + 1 : NULL;
	}
}
