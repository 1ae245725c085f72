/*
 * app.h - the one layer that wires the others together (architecture §1):
 * each verb a front end offers (CLI, later the TUI and replay) is a
 * function here, and its human rendering lives here too, so every front
 * end shows the same text.
 */
#ifndef KB_APP_H
#define KB_APP_H

#include "../core/kb.h"
#include "../compile/compile.h"
#include "../runner/runner.h"
#include "../session/session.h"
#include "../diff/diff.h"
#include "../llm_bridge/llm_bridge.h"
#include "../report/report.h"

/* ===== compile.c ===== */

/* The compile verb is kb_compile_unit_run (compile.h); here is its output. */

/* The compact human summary (diagnostics are rendered separately). */
void kb_app_compile_render(const kb_compile_unit *r, kb_buf *out);
/* The full structured result. A new reference. */
json_t *kb_app_compile_json(const kb_compile_unit *r);

/* ===== run.c ===== */

typedef struct {
	const char *path;
	const char *text;         /* run this text as if it were path's (replay); NULL: the file */
	const char *arch;         /* NULL: the GPU's own */
	const char **defines;
	int ndefines;
	const char **options;     /* --option: compiler options after the spec's */
	int noptions;
	int trials;               /* 0: the runner's default (3) */
	bool has_seed;
	uint64_t seed;
	double timeout_ms;        /* per GPU phase; 0: 10 s */
	bool no_time;
	const char *timing;       /* "events", "graph" or NULL (auto) */
	const char **metrics;     /* hardware counters by name (kbench profile) */
	int nmetrics;
	const char **sections;    /* profile sections by name ("sol", "memory", "quick" ...) */
	int nsections;
	bool hot;                 /* PC-sampling hot spots */
	bool sass_metrics;        /* per-instruction counts: executions, shared
				   * wavefronts, bank conflicts (CUPTI SASS metrics) */
	const char *cache_control; /* counter passes: "all" (NULL) or "none", as ncu's flag */
	json_t *args;             /* arg overrides {"N": 1024}, borrowed, may be NULL */
	const char *python_from;  /* not the user's own text: where it came from ("a recorded
				   * session (kbench replay)"); a Python reference in it runs
				   * only with KBENCH_TRUST_PYTHON=1 (--trust-python) */
} kb_app_run_opts;

/* kernelbench.c: `kbench new --from-kernelbench PROBLEM.py [-o FILE.cu]`
 * writes FILE.cu and FILE.ref.py (docs/python-refs.md); msg says what and
 * what next.  Returns 0, KB_EINVAL (a file exists, or the problem does not
 * open: err has its traceback), KB_ENOTFOUND, or KB_EUNSUP (no Python or
 * torch). */
int kb_app_new_kernelbench(const char *problem, const char *out, kb_buf *msg, kb_err *err);
/* refcheck.c: `kbench ref FILE`: the spec's CPU reference computed here
 * with args overridden ({"N": 1024}); *result says what ran, how long it
 * took and the outputs' ranges (always set once the file is read).
 * Returns 0, or KB_ESPEC/KB_EINVAL (the spec), KB_EPERM (a Python
 * reference not the user's), KB_ENOMEM (too big for this machine), or a
 * Python reference's error (KB_DOM_PYTHON). */
int kb_app_ref_check(const char *path, json_t *args, json_t **result, kb_err *err);
void kb_app_ref_render(json_t *r, kb_buf *out);

/* The runner request of a run (a new reference). */
json_t *kb_app_run_request(const kb_app_run_opts *o);
/* One run through the runner (started if needed). Returns 0 with *result
 * (always a result: ok, spec_error, fault, timeout ...), or KB_EIO when no
 * runner could be started. */
int kb_app_run(kb_runner *r, const kb_app_run_opts *o, kb_runner_progress_fn fn, void *ctx,
	       json_t **result, kb_err *err);
/* The file's spec checked here, before any runner or GPU (a spec error is
 * the kernel's, on any machine).  Returns 0 with *result a result of status
 * spec_error, or NULL when the spec is sound; or the KB_E* of a file that
 * cannot be taken (KB_EINVAL: not UTF-8, not a kernel file), err filled. */
int kb_app_run_check(const kb_app_run_opts *o, json_t **result, kb_err *err);
/* The compact summary of a result: correctness first, then time,
 * bandwidth, ceilings, resources, the GPU's state. */
void kb_app_run_render(json_t *result, kb_buf *out);
/* How far a long phase is, from a progress frame's ticks: " 42% (2.3 s)",
 * " (2.3 s)" without a fraction, "" for a phase under a second. */
void kb_app_progress_text(json_t *progress, char *out, size_t n);
/* A Result's verdict (kb_app_verdict, kb_app_run_verdict) is report.h's. */

/* ===== record.c ===== */

/* Whether compiles and runs are recorded in the current session (off when
 * $KBENCH_NO_SESSION is set, e.g. in tests that are not about sessions). */
bool kb_app_recording(void);
/* Records a compile of u's file in the current session: a journal "edit"
 * event with the diff from the previous variant when the text changed, a
 * variant (git commit + note) when it compiled, and a "compile" event
 * either way.  v (may be NULL) gets the variant.  Returns 0, or a KB_E*
 * with err: the caller warns; a compile never fails for its recording. */
int kb_app_record_compile(const kb_compile_unit *u, kb_variant *v, kb_err *err);
/* Records a run: the file's text as a variant with the Result as its note
 * ({"compile":..., "result":...}), and "run" and "result" events.  deltas
 * (may be NULL) gets how the run compares with the previous and the best
 * variants (kb_app_deltas_text). */
int kb_app_record_run(const char *path, json_t *result, kb_variant *v, kb_buf *deltas,
		      kb_err *err);
/* The same for a run of `text` as path's text (the TUI: the file on disk
 * may already hold a newer save than the one that ran). */
int kb_app_record_run_text(const char *path, const char *text, size_t len, json_t *result,
			   kb_variant *v, kb_buf *deltas, kb_err *err);

/* ===== sessions.c: the session verbs ===== */

enum { KB_DIFF_SOURCE = 1, KB_DIFF_SASS = 2, KB_DIFF_NUMBERS = 4 };

/* `kbench log [FILE|SESSION]`: the variants with their key numbers, best
 * marked. NULL: the current session. Appends text to out. */
int kb_app_log(const char *file_or_session, kb_buf *out, kb_err *err);
/* `kbench log` as the command prints it: a column per name of cols (at most
 * KB_LOG_COLS; a hardware counter as `kbench profile` names it, the
 * Result's "counters", else a Result field by dotted path, "timing.cv";
 * "-" where a variant has none), and the journal's damaged lines named. */
enum { KB_LOG_COLS = 6 };
int kb_app_log_cols(const char *file_or_session, const char *const *cols, int ncols, kb_buf *out,
		    kb_err *err);
/* `kbench show vN [--file F]`: the variant's source and its Result summary. */
int kb_app_show(const char *name, const char *file, kb_buf *out, kb_err *err);
/* `kbench diff vA vB`: what (KB_DIFF_* bits) of two variants of a file. */
int kb_app_diff(const char *a, const char *b, const char *file, int what, kb_buf *out, kb_err *err);
/* `kbench checkout vN`: saves the file as a variant, then writes vN to it. */
int kb_app_checkout(const char *name, const char *file, kb_buf *out, kb_err *err);
/* `kbench label vN LABEL` / `kbench note vN TEXT`: a name for a variant
 * (then usable wherever vN is), or a remark kept in its note; both are
 * journal events too. key is "label" or "note". */
int kb_app_annotate(const char *name, const char *key, const char *text, const char *file,
		    kb_buf *out, kb_err *err);
/* `kbench sessions`: every session with its files and variant counts. */
int kb_app_sessions(kb_buf *out, kb_err *err);
/* `kbench replay SESSION [--file F] [--only vA,vB]`: re-runs the variants
 * of every file of the session (or of F), recorded vs now; --only names
 * variants of one file, so with several files it needs F (KB_EAMBIG).
 * With a pool (--gpus, --hosts, --launcher) a file's variants run at once
 * on its workers, each row saying which ran it; else one by one on r. */
int kb_app_replay(kb_runner *r, kb_pool *pool, const char *session, const char *file,
		  const char *only, kb_buf *out, kb_err *err);
/* `kbench report SESSION -o FILE.md|FILE.html [--file F]`: writes the
 * report of the variants of F, or of every file of the session one after
 * another on one page, and, for Markdown, each part's chart beside it
 * (FILE.roofline.svg; FILE.N.roofline.svg for part N of several); a line
 * saying what was written goes to out. */
int kb_app_report_session(const char *session, const char *file, const char *output,
			  kb_buf *out, kb_err *err);

/* ===== llm.c: what a model is told, and the journal of it ===== */

/* The prompt templates' values for variant u (compiled, with want_sass for
 * a SASS excerpt) and its Result (may be NULL: not run): file, kernel,
 * arch, lang, source, spec, compile_log, resources, result, profile, hot,
 * sass; history and question as given (NULL: none, and "How can this be
 * faster?").  A new object. */
json_t *kb_app_llm_vars(const kb_compile_unit *u, json_t *result, const char *history,
			const char *question);
/* Template `name` (the user's file, else the built-in) filled with vars; a
 * new string. */
char *kb_app_llm_prompt(const char *name, json_t *vars);
/* Appends an LLM event (llm_ask, llm_reply, llm_error, llm_round) to the
 * current session's journal when recording, each string member passed
 * through kb_llm_redact first.  fields is consumed. */
int kb_app_llm_event(const char *event, json_t *fields, kb_err *err);

/* ===== optimize.c: `kbench optimize` ===== */

typedef struct {
	const char *path;
	int rounds;               /* at most this many questions (default 3) */
	long max_tokens;          /* stop once the answers and prompts used this many; 0: no limit */
	double max_seconds;       /* stop starting rounds after this long; 0: no limit */
	const kb_llm_config *llm;
	const char *question;     /* NULL: "How can this be faster?" */
	bool dry_run;             /* print the first request (no key, nothing sent) and stop */
	bool no_write;            /* keep the file as it is (the best is in the session anyway) */
	kb_app_run_opts run;      /* how candidates run (path and text are set per round) */
	atomic_int *cancel;       /* set (Ctrl-C) to stop the request in flight */
	void (*on_text)(void *ctx, const char *s, size_t n);  /* answers as they stream */
	void (*on_line)(void *ctx, const char *line);         /* one line per step */
	void *ctx;
} kb_app_optimize_opts;

/* ask -> apply -> compile -> check -> time -> feed back, for o->rounds
 * rounds or until a budget is spent; every step recorded in the session
 * (llm_* events, the candidates as variants); the best CORRECT variant
 * written to the file at the end (unless no_write).  A summary goes to out.
 * Returns 0; KB_ENODEV when a candidate compiled but no GPU can check it
 * (stopped after that compile); KB_ECANCELED; or the provider's error for
 * a request that cannot succeed by asking again (401, 404, no server). */
int kb_app_optimize(kb_runner *r, const kb_app_optimize_opts *o, kb_buf *out, kb_err *err);

/* ===== device.c ===== */

/* The answer of a "devices" or "calibrate" request as text: the GPU, its
 * state, and its measured ceilings beside the datasheet. */
void kb_app_device_render(json_t *result, kb_buf *out);

/* ===== profile.c ===== */

/* The `profile` verb's tables: each section with its numbers (n/a where a
 * counter is missing or refused, with why), then the hot source lines and
 * their SASS. */
void kb_app_profile_render(json_t *result, kb_buf *out);
/* "  exec N  smem wavefronts N  bank conflicts N (W-way)" for an
 * instruction carrying SASS metric counts (executions, shared_wavefronts,
 * bank_conflicts); the shared-memory part only where it touched shared
 * memory; nothing without counts. */
void kb_app_sassm_counts(json_t *insn, kb_buf *out);
/* The instruction at (function, pc) of a result's "sass_metrics"."shared"
 * or, failing that, its "hot" PCs, or NULL. Borrowed. */
json_t *kb_app_sassm_insn(json_t *result, const char *function, uint64_t pc);

/* ===== sweep.c ===== */

/* Runs the spec's sweep lines (every combination of their values) and tune
 * lines (every combination of -D values), each through kb_app_run: one
 * after another on r, or all in one queue on the pool's workers (fn then
 * hears "N of M done" as jobs finish).  With a pool and base non-NULL, the
 * base run o itself is the queue's first job and *base its result (the
 * caller decides whether the sweep counts when it is not CORRECT).  *out is
 * {"sweep":[{"args":{..},"result":{..}}..], "tune":[{"defines":[..],"result":
 * {..}}..], "best_tune": index or null}.  Returns 0, or a KB_E*. */
int kb_app_sweep_and_tune(kb_runner *r, kb_pool *pool, const kb_app_run_opts *o,
			  const kb_spec *spec, kb_runner_progress_fn fn, void *ctx, json_t **base,
			  json_t **out, kb_err *err);
/* Tables of the sweep and of the tune variants, best marked. */
void kb_app_sweep_render(json_t *sweeps, kb_buf *out);

/* ===== report.c (the pages, from src/report/: report_model.c reads the
 * variants, report_page.c and report_svg.c render them, roofline_text.c
 * draws the terminal plot) ===== */

/* How variant `name` of vs compares with the previous CORRECT timed variant
 * and with the best other one (kb_diff_numbers: faster / slower only
 * beyond noise); nothing when `name` is not CORRECT and timed or is the
 * first such variant. */
void kb_app_deltas_text(const kb_variant *vs, int n, const char *name, kb_buf *out);
/* How many variants `file` (NULL: the session's last file) has in the
 * current session, or a KB_E* with err. */
int kb_app_variant_count(const char *file, kb_err *err);
/* Variant `name`'s text (*text is the caller's to free). */
int kb_app_variant_text(const char *name, const char *file, char **text, size_t *len, kb_err *err);
/* The events of a session (id or directory) as steps for `kbench-tui
 * --replay`: a JSON array of {"file", "summary": what happened, as text,
 * "text" and "variant": the variant's text and name when the event names one}. */
int kb_app_replay_steps(const char *session, json_t **steps, kb_err *err);
/* The roofline of the session's variants of `file` (NULL: the session's
 * last file), as kb_app_roofline_text draws it, variant `current` (NULL:
 * the newest) marked and its distance to the roof said. */
int kb_app_roofline(const char *file, const char *current, int width, int height, kb_buf *out,
		    kb_err *err);
/* Renders a session for code review: summary, variant table, the winning
 * diff (sources[i]/lens[i] are variant i's file, either may be NULL),
 * roofline and bandwidth chart, correctness evidence.  A pure function of
 * its arguments (no clock, no files).  Markdown links the chart, which is
 * appended to svg_out (may be NULL) as a standalone SVG file; HTML inlines
 * it.  Returns 0, or KB_EINVAL with err. */
int kb_app_report(const kb_app_report_opts *o, const kb_variant *vs, int n, char *const *sources,
		  const size_t *lens, kb_buf *out, kb_buf *svg_out, kb_err *err);

/* ===== headline.c: the one line `kbench run` and kbench-tui open with ===== */

/* One variant of a file as numbers (-1: unknown), for tables that pick
 * their own columns. */
typedef struct {
	char name[16], label[32], verdict[24], kernel[64];
	double median_us, gbps, regs, occ_pct;
	bool best;                /* the fastest CORRECT variant of all */
	bool kernel_best;         /* not that, but the fastest of its kernel (a file that ran several) */
} kb_app_variant_row;

/* The variants of `file` (NULL: the session's one file) in the current
 * session, oldest first (*rows is the caller's to free).  Returns 0 or a
 * KB_E* with err. */
int kb_app_variant_rows(const char *file, kb_app_variant_row **rows, int *n, kb_err *err);

typedef enum { KB_APP_TREND_NONE, KB_APP_TREND_FASTER, KB_APP_TREND_SLOWER, KB_APP_TREND_SAME }
	kb_app_trend;

typedef struct {
	char name[16];            /* the variant compared with; "" none */
	kb_app_trend trend;       /* faster / slower only beyond the noise */
	double pct;               /* the change of the median, in % */
} kb_app_headline_delta;

typedef struct {
	char verdict[32];
	double median_us, spread_pct; /* -1: not timed; spread: the CV in % */
	double roof_pct;          /* share of the binding ceiling, -1 none */
	char roof[24];            /* its name: "copy", "FP32 peak" ... */
	kb_app_headline_delta prev, best;
	bool best_is_prev, new_best;
	double *times;            /* every variant's median (<= 0: none), oldest first */
	int ntimes, current;      /* current: this one's index in times, -1 none */
} kb_app_headline;

/* The headline of a run: `result` (NULL: variant `name`'s recorded one)
 * against the variants of `file` in the current session (file NULL: no
 * comparison); `name` is its own variant there (NULL: not recorded).
 * Returns 0, or a KB_E* with err (h still holds what was known). */
int kb_app_headline_of(const char *file, const char *name, json_t *result, kb_app_headline *h,
		       kb_err *err);
void kb_app_headline_free(kb_app_headline *h);
/* The headline on one line of at most width columns (the least important
 * parts left out), with SGR colours when ansi; no newline. */
void kb_app_headline_text(const kb_app_headline *h, int width, bool ansi, kb_buf *out);
/* A sparkline of v[0..n) (the newest `width` values; <= 0: a gap). */
void kb_app_sparkline(const double *v, int n, int width, kb_buf *out);

/* ===== remote.c: where runs go (docs/remote.md) ===== */

typedef struct {
	const char *remote;   /* --remote HOST, else $KBENCH_REMOTE */
	const char *gpus;     /* --gpus all|0,1,.. */
	const char *hosts;    /* --hosts h1,h2 */
	const char *launcher; /* --launcher CMD (one worker per slot) */
	int workers;          /* --workers N: the launcher's slots */
} kb_app_target;

/* Takes the target flags out of argv (anywhere after the verb).  Returns 0,
 * or KB_EINVAL with err (a flag without its value). */
int kb_app_target_parse(int *argc, char **argv, kb_app_target *t, kb_err *err);
/* The runner of one-at-a-time verbs: ssh to t->remote, else local (shared
 * when it may be); batch: no ssh prompts (a front end owning the tty). */
kb_runner *kb_app_target_runner(const kb_app_target *t, bool batch);
/* The pool for --gpus/--hosts/--launcher, NULL when none was asked for. */
kb_pool *kb_app_target_pool(const kb_app_target *t);
/* `kbench remote setup HOST`: the bundle copied and unpacked under
 * ~/.kbench, and what the remote's runner answers (version, GPU). */
int kb_app_remote_setup(const char *host, const char *bundle, kb_buf *out, kb_err *err);

#endif
