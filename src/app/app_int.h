/*
 * app_int.h - declarations shared between the files of src/app only
 * (style rule 1); other folders use app.h.
 */
#ifndef KB_APP_INT_H
#define KB_APP_INT_H

#include "app.h"
#include "../tile/tile.h"

/* ===== result.c: reading a Result and a variant's note (a leaf: it calls
 * no other file of src/app) ===== */

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
 * report.c and report_page.c (pages), report_svg.c (the SVG chart) and
 * roofline_text.c (the terminal plot) render ===== */

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
	const char *kernel, *file, *gpu;
	bool mixed_gpu;
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

/* ===== variants.c: what the session verbs share ===== */

/* The fastest CORRECT timed variant of vs that ran `kernel` (NULL: any), or -1. */
int kb_app__best_of(const kb_variant *vs, int n, const char *kernel);
/* A number right-aligned in width columns, or "-" when v < 0 (unknown). */
void kb_app__cat_num(kb_buf *out, int width, int prec, double v);
/* "  [gpu 1]", or "  [gpu 1, re-queued once: lost on gpu 0, crash: ...]":
 * the pool worker that ran Result res, when one did. */
void kb_app__cat_worker(kb_buf *out, json_t *res);
/* Frees n strings and their array (kb_session_files' answer). */
void kb_app__free_strs(char **v, int n);
/* The file a verb of session s works on: `file` when named, else the
 * session's one file.  *path gets a new string; KB_ENOTFOUND when the
 * session has none, KB_EAMBIG naming the candidates when it has several
 * (never a guess). */
int kb_app__session_file(const kb_session *s, const char *file, char **path, kb_err *err);
/* The current session for a verb that only reads or annotates: never one
 * started for it (a fresh data directory stays empty). 0, or KB_ENOTFOUND
 * saying how one starts. */
int kb_app__session_now(kb_session *s, kb_err *err);

/* The current session, a file of it and that file's variant store. */
typedef struct {
	kb_session s;
	char *path;
	kb_store *st;
} kb_app__fstore;

/* Opens the current session and the store of `file` (NULL: as
 * kb_app__session_file). Returns 0 (release with kb_app__fstore_close), or
 * a KB_E* with err. */
int kb_app__fstore_open(const char *file, kb_app__fstore *f, kb_err *err);
void kb_app__fstore_close(kb_app__fstore *f);

/* A variant with its text. */
typedef struct {
	kb_variant v;
	char *text;
	size_t len;
} kb_app__loaded;

/* Variant `name` of the store's file with its text. Returns 0 or a KB_E*. */
int kb_app__load_variant(kb_store *st, const char *name, kb_app__loaded *l, kb_err *err);
void kb_app__unload(kb_app__loaded *l);
/* Variant `name` of `file` (as kb_app__open_file_store) with its text;
 * *path (may be NULL) gets the file's path.  The caller frees v, *text and
 * *path. */
int kb_app__read_variant(const char *name, const char *file, kb_variant *v, char **text,
			 size_t *len, char **path, kb_err *err);

/* ===== sessions.c ===== */

/* For a .tile file (path), the diff of the CUDA the two texts lower to,
 * `#line` directives left out (they move with every line added above):
 * as kb_diff_text (1 different, 0 the same), or KB_EINVAL when path is no
 * .tile file or a text does not lower. */
int kb_app__generated_diff(const char *path, const char *a, size_t alen, const char *b, size_t blen,
			   const char *label_a, const char *label_b, kb_buf *out, kb_err *err);
/* The normalised SASS diff of the spec's kernel between variants a and b
 * of the file at path (fresh, cached compiles), or why there is none. */
void kb_app__diff_sass(const char *path, const kb_app__loaded *a, const kb_app__loaded *b,
		       kb_buf *out, kb_err *err);

/* ===== llm.c, report_llm.c: the rounds of `kbench optimize` ===== */

/* The rounds recorded for `file` (the session's name for it) in session s,
 * oldest first: [{"round", "model", "verdict", "variant"?, "parent",
 * "reason", "delta_pct"?, "best"}], an llm_error as a round whose verdict is
 * its kind.  A new array (empty when none). */
json_t *kb_app__llm_rounds(const kb_session *s, const char *file);
/* An LLM event (llm_ask, llm_reply, llm_error, llm_round, llm_retry,
 * optimize) as text for a replay step; false for any other event. */
bool kb_app__llm_step_text(json_t *ev, kb_buf *out);
/* The rounds as lines for `kbench log` ("  round 1 (model): v2 CORRECT ..."). */
void kb_app__rounds_text(json_t *rounds, kb_buf *out);
/* The report's "LLM rounds" section: what each round proposed, its verdict
 * and its delta (nothing when R->o->rounds is empty). */
void kb_app__section_rounds(const kb_app__model *R, kb_buf *o);

/* optimize.c: the end of `kbench optimize` */

/* What the rounds found: the file's text before them and the best. */
typedef struct {
	const char *path;        /* the file */
	const char *orig;        /* its text before the rounds */
	const char *best;        /* the best CORRECT timed text, or NULL */
	const char *best_name;   /* its variant; "" when nothing is recorded */
	double orig_us, best_us; /* their medians; orig_us 0: the original was not timed */
	bool no_write;           /* --no-write: the file stays as it was */
} kb_app__best;

/* The summary ("best: ..."), and a best other than the original written
 * back to b->path.  Returns 0, or the write's KB_E* with err saying where
 * the best variant is: the session's variant to check out, or (nothing
 * recorded) a copy in the temporary folder. */
int kb_app__optimize_finish(const kb_app__best *b, kb_buf *out, kb_err *err);

/* ===== gpus.c: the local GPUs --gpus names ===== */

/* The entries of this process's CUDA_VISIBLE_DEVICES ("2, 3" -> "2", "3"),
 * -1 when it is unset (free with kb_app__free_entries). */
int kb_app__visible_entries(char ***entries);
void kb_app__free_entries(char **entries, int n);
/* How many GPUs `--gpus all` means here: CUDA_VISIBLE_DEVICES's entries
 * when set, else the driver's count (cached per driver and GPUs). */
int kb_app__gpu_count(void);
/* What CUDA_VISIBLE_DEVICES the worker of GPU number index gets (its entry
 * in the user's list, or "index"); NULL when the list has no such entry. */
char *kb_app__gpu_visible(int index);
/* The GPU numbers of "0,1,3" (at most max); "all": every GPU of this
 * machine when local and a driver answers, else [-1] (one worker, whatever
 * it sees). */
int kb_app__gpu_list(const char *gpus, bool local, int *v, int max);
/* Whether --gpus VALUE is "all" or GPU numbers; local: numbers this
 * machine's CUDA_VISIBLE_DEVICES has (an error saying so otherwise). */
int kb_app__check_gpus(const char *gpus, bool local, kb_err *err);

/* pyrefs.c: why o's Python reference (`//! ref numpy|torch`) must not run
 * unasked - a new string - or NULL when it may: the user's own file, or
 * --trust-python / KBENCH_TRUST_PYTHON=1. */
char *kb_app__python_refusal(const kb_app_run_opts *o);
/* The "python_refused" result of a request that carries such a refusal,
 * answered without a runner; NULL when the request may go. */
json_t *kb_app__python_refused(json_t *req);

#endif
