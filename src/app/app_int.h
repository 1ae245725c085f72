/*
 * app_int.h - declarations shared between the files of src/app only
 * (style rule 1); other folders use app.h.
 */
#ifndef KB_APP_INT_H
#define KB_APP_INT_H

#include "app.h"
#include "../tilegen/tilegen.h"

/* ===== variants.c: what the session verbs share ===== */

/* The fastest CORRECT timed variant of vs that ran `kernel` (NULL: any), or -1. */
int kb_app__best_of(const kb_variant *vs, int n, const char *kernel);
/* What variant i of vs is the fastest of: KB_APP__BEST of all CORRECT
 * timed variants, KB_APP__KERNEL_BEST (not that) of its kernel's, where a
 * file ran several kernels (speed-ups compare a kernel with itself), or
 * KB_APP__NOT_BEST. */
typedef enum { KB_APP__NOT_BEST, KB_APP__BEST, KB_APP__KERNEL_BEST } kb_app__best_rank;
kb_app__best_rank kb_app__best_rank_of(const kb_variant *vs, int n, int i);
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

/* ===== llm.c: the rounds of `kbench optimize` (as text: report_llm.c) ===== */

/* The rounds recorded for `file` (the session's name for it) in session s,
 * oldest first: [{"round", "model", "verdict", "variant"?, "parent",
 * "reason", "delta_pct"?, "best"}], an llm_error as a round whose verdict is
 * its kind.  A new array (empty when none). */
json_t *kb_app__llm_rounds(const kb_session *s, const char *file);
/* An LLM event (llm_ask, llm_reply, llm_error, llm_round, llm_retry,
 * optimize) as text for a replay step; false for any other event. */
bool kb_app__llm_step_text(json_t *ev, kb_buf *out);

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
