/*
 * report.h - what a Result and a file's variants look like on a page or a
 * screen: reading a Result (result.c), the variants as a report or plot
 * sees them (report_model.c), the report's markup and page (report_page.c),
 * its SVG chart (report_svg.c), the roofline in a terminal
 * (roofline_text.c) and the rounds of `kbench optimize` as text
 * (report_llm.c).  The verbs of src/app build on it (report.c assembles a
 * session's report from these pieces); it knows nothing of them, only of
 * core and a session's variants.  The kb_app__ names are for src/app; the
 * front ends reach the rest through app.h, which includes this header.
 */
#ifndef KB_REPORT_H
#define KB_REPORT_H

#include "../core/kb.h"
#include "../session/session.h"

/* ===== result.c: reading a Result and a variant's note (a leaf: it calls
 * no other file) ===== */

/* The verdict of a result (NULL: KB_VERDICT_ERROR): CORRECT, INCORRECT,
 * IMPOSSIBLE, FAULT, TIMEOUT, CRASH, SPEC ERROR, COMPILE ERROR, UNSUPPORTED
 * (a `//! require` line rules the values out: not run), NO GPU, ERROR ... */
kb_verdict kb_app_verdict(json_t *result);
/* Its word, to print: kb_verdict_name(kb_app_verdict(result)). */
const char *kb_app_run_verdict(json_t *result);

/* Member key of JSON object j: a string ("" when it is none), a number (0
 * when it is none), whether it is a number. */
const char *kb_app__str(json_t *j, const char *key);
/* The string v holds, or "" when it is no string (a Result from elsewhere). */
const char *kb_app__sval(json_t *v);
double kb_app__num(json_t *j, const char *key);
bool kb_app__has(json_t *j, const char *key);
/* The value at a dotted path ("result.timing.median_us") of j, or NULL. */
json_t *kb_app__jget(json_t *j, const char *path);
/* The number at a dotted path of j, or -1 when there is none. */
double kb_app__jnum(json_t *j, const char *path);
/* A variant's verdict word ("compiled" when it was never run, "-" without a note). */
const char *kb_app__verdict_of(const kb_variant *v);
/* A variant's median in us, or -1. */
double kb_app__median_of(const kb_variant *v);
/* Whether v ran `kernel` (true when either is unknown): the variants of a
 * file that solve the same problem, which the Δ lines and "best" compare. */
bool kb_app__same_kernel(const kb_variant *v, const char *kernel);
/* When a timed launch of check wrote other than its checked twin: true and
 * a sentence saying which launch, output and element. */
bool kb_app__timed_bad(json_t *check, char *s, size_t n);

/* ===== the report: report_model.c reads the variants into a model that
 * app/report.c and report_page.c (pages), report_svg.c (the SVG chart) and
 * roofline_text.c (the terminal plot) render ===== */

/* What a report says beside the variants; every field may be NULL. */
typedef struct {
	const char *title;       /* the page's title; NULL: "kbench report: <kernel>" */
	const char *session_id;  /* shown in the header */
	const char *file;        /* the kernel file; NULL: the variants' path */
	const char *sass_diff;   /* SASS diff first correct -> best (kb_diff_sass), an excerpt */
	const char *svg_name;    /* Markdown: the chart's file name beside the .md */
	const char *footer;      /* one more line at the bottom ("sample data", a date) */
	json_t *rounds;          /* `kbench optimize` rounds of the file (kb_app__llm_rounds),
				  * borrowed; NULL or empty: no such section */
	bool html;               /* one self-contained HTML page; else GitHub Markdown */
	/* A page of several files' reports: the first part opens the page, the
	 * last closes it (both false, the default: a page of its own) */
	bool not_first, not_last;
} kb_app_report_opts;

/* One variant as the report sees it, read from its note. */
typedef struct {
	const kb_variant *v;
	json_t *res;           /* note.result, or NULL */
	json_t *kernel;        /* {name, resources, occupancy}, or NULL */
	kb_verdict verdict;    /* CORRECT, INCORRECT, COMPILED, ... */
	bool correct, timed, impossible;
	double median, sd, min, max;
	double gbps, pct;      /* pct < 0: no ceiling known */
	const char *basis;     /* what pct is a share of */
	bool has_flops;
	double ai, flops_s;
} kb_app__row;

/* The variants of one report or plot, and what they have in common. */
typedef struct {
	const kb_app_report_opts *o;
	kb_app__row *r;
	int n, first, best;
	const char *kernel, *file, *gpu; /* kernel: the best variant's (else the first's) */
	bool mixed_gpu;
	bool other_kernels; /* correct timed variants of other kernels came before first */
	double copy_GBps, dram_GBps, peak_TFLOPs; /* chart ceilings, 0: unknown */
	const char *peak_name;                    /* "FP32 peak" or "tensor-core peak" */
	int nrun, nflops;      /* variants with a result; of those, timed with FLOPs */
} kb_app__model;

/* A check's evidence: its trials and the worst of their errors. */
typedef struct {
	int trials, passed;
	char seeds[160];
	double abs, rel, l2;   /* worst over trials and outputs; NAN when one was */
	double rtol, atol;
	double rows, rows_checked; /* a sampled reference's rows (the fewest checked
				      of a trial); 0 when every value was compared */
	char bad[512];         /* where it first went wrong, or "" */
} kb_app__evidence;

/* report_model.c */

/* The variants a report compares: *first the first CORRECT timed variant
 * of the kernel best ran, *best the fastest CORRECT timed one (indices
 * into vs, -1 when none), so the caller can diff their SASS before calling
 * kb_app_report. */
void kb_app_report_pick(const kb_variant *vs, int n, int *first, int *best);
/* The roofline of variants vs as text for a terminal: a log-log plot
 * `width` columns by `height` rows (plus axes) with the ceilings of the
 * best variant's GPU and one numbered point per timed variant with a FLOP
 * count, then a legend.  Returns 0, or 1 after a line saying why there is
 * nothing to plot. */
int kb_app_roofline_text(const kb_variant *vs, int n, int width, int height, kb_buf *out);
/* Reads the n variants vs (borrowed: they outlive R) into R: one row each,
 * first and best, kernel, file, GPU and ceilings.  o is kept in R->o. */
void kb_app__model_read(kb_app__model *R, const kb_app_report_opts *o, const kb_variant *vs, int n);
/* Frees what kb_app__model_read allocated. */
void kb_app__model_free(kb_app__model *R);
/* kb_app_roofline_text with variant `current` (NULL: none) marked. */
int kb_app__roofline_text(const kb_variant *vs, int n, const char *current, int width, int height,
			  kb_buf *out);
/* The variant's name, "?" when it has none. */
const char *kb_app__name_of(const kb_app__row *r);
/* The decades (log10) a roofline of R spans, for the SVG and the terminal
 * plot alike. */
void kb_app__roof_range(const kb_app__model *R, double *lx0, double *lx1, double *ly0, double *ly1);
/* "10T" for axis ticks. */
void kb_app__fmt_si(char *s, size_t n, double v);
/* "%.3g", or "nan", "inf", "-inf". */
void kb_app__fmt_num(char *s, size_t n, double v);
/* The evidence of a Result's "check" (NULL: none, zero trials). */
void kb_app__read_evidence(json_t *check, kb_app__evidence *e);

/* report_page.c: the markup both pages share, and the page's head and foot */

#define KB_APP__MAX_COLS 14

/* One table row: its cells' text, and how each is shown. */
typedef struct {
	char text[KB_APP__MAX_COLS][160];
	const char *cls[KB_APP__MAX_COLS]; /* HTML: a span class (a badge), or NULL */
	bool strong[KB_APP__MAX_COLS];
	const char *row_cls;       /* HTML: the <tr> class, or NULL */
} kb_app__trow;

/* s escaped for HTML text and attributes. */
void kb_app__html(kb_buf *out, const char *s);
/* A Markdown table cell: one line, no column break, no inline HTML. */
void kb_app__md_cell(kb_buf *out, const char *s);
/* A table in R's format: align has one 'l' or 'r' per column; narrow: HTML
 * sizes it to its content. */
void kb_app__table_begin(const kb_app__model *R, kb_buf *o, const char *const *heads,
			 const char *align, bool narrow);
void kb_app__table_row(const kb_app__model *R, kb_buf *o, const kb_app__trow *t, const char *align);
void kb_app__table_end(const kb_app__model *R, kb_buf *o);
/* A section's heading (h2, "##") and a subsection's (h3, "###"). */
void kb_app__heading(const kb_app__model *R, kb_buf *o, const char *text);
void kb_app__subheading(const kb_app__model *R, kb_buf *o, const char *text);
/* A paragraph of plain text (escaped), muted in HTML when note is set. */
void kb_app__para(const kb_app__model *R, kb_buf *o, bool note, const char *text);
/* A diff as a coloured <pre> or a fenced ```diff block. */
void kb_app__code_block(const kb_app__model *R, kb_buf *o, const char *text);
/* The HTML badge class of a verdict. */
const char *kb_app__badge(kb_verdict verdict);
/* The page up to the first section (HTML head and style, title, summary);
 * its end (footer). */
void kb_app__page_begin(const kb_app__model *R, kb_buf *o, const char *title);
void kb_app__page_end(const kb_app__model *R, kb_buf *o);

/* report_svg.c */

/* The chart: the roofline when a timed variant has a FLOP count, and the
 * bandwidth bars; standalone adds the XML namespace a file needs. */
void kb_app__svg_render(const kb_app__model *R, kb_buf *o, bool standalone);

/* report_llm.c: the rounds of `kbench optimize` (kb_app__llm_rounds, in
 * src/app) as text */

/* The rounds as lines for `kbench log` ("  round 1 (model): v2 CORRECT ..."). */
void kb_app__rounds_text(json_t *rounds, kb_buf *out);
/* The report's "LLM rounds" section: what each round proposed, its verdict
 * and its delta (nothing when R->o->rounds is empty). */
void kb_app__section_rounds(const kb_app__model *R, kb_buf *o);

#endif
