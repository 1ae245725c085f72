/*
 * tui_int.h - declarations shared inside src/tui/ (style rule 1); other
 * folders include src/tui/tui.h only.
 *
 * editor.c and editor_*.c are the text model of the editor pane: lines,
 * cursor, selection, clipboard, undo/redo, auto-indent, search/replace and
 * the edit events the highlighter re-parses from.  They have no ncurses in
 * them, so they are unit-tested on their own (tests/unit/test_tui_editor.c);
 * tui_draw.c draws it.
 */
#ifndef KB_TUI_INT_H
#define KB_TUI_INT_H

#include "../core/kb.h"
#include "../app/app.h"
#include "../tilegen/tilegen.h"
#include "tui.h"

#include <pthread.h>

/* ===== editor.c, editor_*.c ===== */

/* A place in the buffer: 0-based line, 0-based byte column in that line. */
typedef struct {
	int line;
	int col;
} kb_tui__ed_pos;

/* One edit, in the terms of tree-sitter's TSInputEdit: byte offsets into
 * the LF text (kb_tui__ed_text) and points (row, byte column). */
typedef struct {
	size_t start_byte, old_end_byte, new_end_byte;
	kb_tui__ed_pos start_point, old_end_point, new_end_point;
} kb_tui__ed_edit;

/* One line: bytes without the '\n'; NUL-terminated when s is non-NULL. */
typedef struct {
	char *s;
	int len, cap;
	size_t off; /* byte offset of the line in the text; valid below off_valid */
} kb_tui__ed_row;

/* One undo record: `text` was inserted at `at` (ins) or deleted from `at`. */
typedef struct {
	unsigned gid;            /* records of one undo step share a gid */
	bool ins;
	kb_tui__ed_pos at, end;  /* end: where the text ends when present */
	char *text;
	size_t n;
	kb_tui__ed_pos before, after; /* cursor before / after the step */
} kb_tui__ed_rec;

typedef enum {
	KB_TUI__ED_LEFT,       /* one code point (and its combining marks) */
	KB_TUI__ED_RIGHT,
	KB_TUI__ED_UP,         /* n lines (n < 1 counts as 1), keeps pref_x */
	KB_TUI__ED_DOWN,
	KB_TUI__ED_WORD_LEFT,  /* ctrl-left / ctrl-right */
	KB_TUI__ED_WORD_RIGHT,
	KB_TUI__ED_HOME,       /* first non-blank, then column 0 */
	KB_TUI__ED_END,
	KB_TUI__ED_PAGE_UP,    /* n = page height */
	KB_TUI__ED_PAGE_DOWN,
	KB_TUI__ED_BUF_START,
	KB_TUI__ED_BUF_END,
} kb_tui__ed_motion;

/* Search flags. */
#define KB_TUI__ED_BACKWARD 1
#define KB_TUI__ED_NOCASE 2 /* ASCII letters only */

/* Typing groups: same-kind edits at the cursor within this many ms merge. */
#define KB_TUI__ED_GROUP_MS 1000.0
/* Pending edit events kept before the queue gives up (reparse_all). */
#define KB_TUI__ED_MAX_EDITS 4096

typedef struct {
	kb_tui__ed_row *lines; /* always at least one line */
	int nlines, cap;
	int off_valid;          /* lines[0 .. off_valid-1].off are correct */

	kb_tui__ed_pos cur, anchor;
	bool sel;               /* selection = [anchor, cur] when set */
	int pref_x;             /* display column kept by vertical moves; -1 none */

	int tab_width;          /* tab stops (default 8) */
	bool indent_tabs;       /* indent unit: a tab, or indent_width spaces */
	int indent_width;
	bool crlf;              /* the file had CRLF endings; written back so */

	unsigned long changes;  /* +1 per primitive edit (undo/redo included) */
	kb_buf clip;            /* the editor's clipboard */

	kb_tui__ed_rec *undo, *redo;
	int nundo, undo_cap, nredo, redo_cap;
	unsigned next_gid, cur_gid, saved_gid; /* cur_gid: the step being built */
	int open_kind;          /* the typing group still open (0 = none) */
	kb_tui__ed_pos open_pos;
	double open_ms;

	kb_tui__ed_edit *edits; /* the queue the highlighter drains */
	int nedits, edits_cap;
	bool reparse_all;       /* edits were lost (load, overflow): parse all */
} kb_tui__ed;

/* A new editor holding one empty line; never NULL. */
kb_tui__ed *kb_tui__ed_new(void);
void kb_tui__ed_free(kb_tui__ed *ed);
/* Replaces the text (any bytes; "\r\n" becomes "\n", crlf remembered when
 * the first line ending is CRLF) and resets cursor, undo and dirty state. */
void kb_tui__ed_load(kb_tui__ed *ed, const char *text, size_t n);
/* Appends the LF text (lines joined by '\n') to out. */
void kb_tui__ed_text(const kb_tui__ed *ed, kb_buf *out);
/* Appends the file form (CRLF restored when the file had it) to out. */
void kb_tui__ed_save_text(const kb_tui__ed *ed, kb_buf *out);
/* Records that the current text is what is on disk. */
void kb_tui__ed_mark_saved(kb_tui__ed *ed);
/* True when the text differs from the last load/mark_saved (undo-aware). */
bool kb_tui__ed_dirty(const kb_tui__ed *ed);
/* Line i (clamped) and its length in bytes; never NULL. */
const char *kb_tui__ed_line(const kb_tui__ed *ed, int i, int *len);
/* Byte offset of pos in the LF text (amortised O(1) near the last edit). */
size_t kb_tui__ed_offset(kb_tui__ed *ed, kb_tui__ed_pos pos);
void kb_tui__ed_set_tab_width(kb_tui__ed *ed, int width);

/* Decodes one UTF-8 code point from s[0..n-1] (n >= 1) into *cp; returns
 * the bytes used (1 for an invalid byte, *cp = 0xFFFD). */
int kb_tui__utf8_decode(const char *s, int n, unsigned *cp);
/* Terminal columns of a code point: wcwidth, or a built-in table when the
 * locale does not know it; controls count 2 (drawn as ^X). */
int kb_tui__cp_width(unsigned cp);
/* Display column of byte col in line (tabs expand to tab stops). */
int kb_tui__ed_x_of(const kb_tui__ed *ed, int line, int col);
/* The byte column whose display column is the largest <= x. */
int kb_tui__ed_col_at_x(const kb_tui__ed *ed, int line, int x);

/* Edits.  Each is one undo step unless said otherwise; now_ms is the time
 * of the key (kb_now_ms() in the loop, a fake clock in tests). */
/* Inserts text (may hold '\n') at pos; the cursor ends after it. */
void kb_tui__ed_insert(kb_tui__ed *ed, kb_tui__ed_pos pos, const char *s, size_t n);
/* Deletes [a, b) (either order); the cursor ends at the start. */
void kb_tui__ed_delete_range(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b);
/* Types text at the cursor, replacing the selection; consecutive typing
 * merges into one step (new step after a move, another kind of edit, or
 * KB_TUI__ED_GROUP_MS idle).  "}" on a blank line removes one indent unit. */
void kb_tui__ed_type(kb_tui__ed *ed, const char *s, size_t n, double now_ms);
/* Enter with auto-indent: copies the line's leading blanks, one more unit
 * after '{', and splits "{|}" onto three lines. */
void kb_tui__ed_newline(kb_tui__ed *ed, double now_ms);
/* Backspace / Delete: the selection, else one code point (a line join at
 * the edges).  Consecutive ones merge like typing. */
void kb_tui__ed_backspace(kb_tui__ed *ed, double now_ms);
void kb_tui__ed_delete_char(kb_tui__ed *ed, double now_ms);
/* Undo / redo one step.  Return 0, or KB_ENOTFOUND when there is none. */
int kb_tui__ed_undo(kb_tui__ed *ed);
int kb_tui__ed_redo(kb_tui__ed *ed);

/* Cursor and selection. */
/* Moves the cursor; select extends the selection (shift), else clears it. */
void kb_tui__ed_move(kb_tui__ed *ed, kb_tui__ed_motion m, int n, bool select);
/* Puts the cursor at pos (clamped onto a code point); select as above. */
void kb_tui__ed_set_cursor(kb_tui__ed *ed, kb_tui__ed_pos pos, bool select);
/* Cursor to 1-based line and byte column (col < 1: column 0), clamped. */
void kb_tui__ed_goto(kb_tui__ed *ed, int line, int col);
void kb_tui__ed_select_all(kb_tui__ed *ed);
/* True when a non-empty selection exists; fills its ordered ends. */
bool kb_tui__ed_selection(const kb_tui__ed *ed, kb_tui__ed_pos *a, kb_tui__ed_pos *b);
/* The selected text as a new string ("" when none); *n gets its length. */
char *kb_tui__ed_selected_text(const kb_tui__ed *ed, size_t *n);
/* Deletes the selection as one step; returns false when there was none. */
bool kb_tui__ed_delete_selection(kb_tui__ed *ed);
/* Clipboard: copy/cut the selection into ed->clip (no selection: no-op),
 * paste ed->clip (or external text, CR/CRLF -> LF) replacing the selection. */
void kb_tui__ed_copy(kb_tui__ed *ed);
void kb_tui__ed_cut(kb_tui__ed *ed);
void kb_tui__ed_paste(kb_tui__ed *ed);
void kb_tui__ed_paste_text(kb_tui__ed *ed, const char *s, size_t n);

/* Search (within lines: a pattern with '\n' is KB_EINVAL).  Selects the
 * next match from the cursor (from the selection's end or start when the
 * selection is the match), wrapping around; *wrapped (may be NULL) tells
 * whether it did.  Returns 0 or KB_ENOTFOUND / KB_EINVAL. */
int kb_tui__ed_search(kb_tui__ed *ed, const char *pat, int flags, bool *wrapped);
/* Replaces the selection when it is a match of pat, then selects the next
 * match.  Returns 0 when it replaced, KB_ENOTFOUND when it only searched. */
int kb_tui__ed_replace(kb_tui__ed *ed, const char *pat, const char *rep, int flags);
/* Replaces every match as one undo step; returns the count (>= 0) or
 * KB_EINVAL. */
int kb_tui__ed_replace_all(kb_tui__ed *ed, const char *pat, const char *rep, int flags);

/* Edit events since the last clear (see kb_tui__ed_edit).  When *reparse_all
 * is set the queue is incomplete and the caller must parse the whole text. */
const kb_tui__ed_edit *kb_tui__ed_edits(const kb_tui__ed *ed, int *n, bool *reparse_all);
void kb_tui__ed_edits_clear(kb_tui__ed *ed);

/* ----- editor internals: shared by editor.c, editor_cursor.c and
 * editor_edit.c only (each calls only those before it) ----- */

/* The kind of an undo step's typing group (kb_tui__ed.open_kind). */
enum { KB_TUI__ED_GRP_NONE, KB_TUI__ED_GRP_TYPE, KB_TUI__ED_GRP_BS, KB_TUI__ED_GRP_DEL };

/* editor.c: the buffer */
/* True when a and b are the same place. */
bool kb_tui__ed_pos_eq(kb_tui__ed_pos a, kb_tui__ed_pos b);
/* True when a comes before b. */
bool kb_tui__ed_pos_lt(kb_tui__ed_pos a, kb_tui__ed_pos b);
/* The bytes of l from col on; never NULL (an empty line may hold none). */
const char *kb_tui__ed_row_at(const kb_tui__ed_row *l, int col);
/* Appends the text of [a, b) to out. */
void kb_tui__ed_range_text(const kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b, kb_buf *out);
/* Inserts s[0..n) (n > 0) at `at` with an edit event, unrecorded; returns
 * where the text ends. */
kb_tui__ed_pos kb_tui__ed_edit_insert(kb_tui__ed *ed, kb_tui__ed_pos at, const char *s, size_t n);
/* Deletes [a, b) with an edit event, unrecorded; the text goes to saved
 * when non-NULL. */
void kb_tui__ed_edit_delete(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b, kb_buf *saved);
/* Frees the texts of records v[0..*n) and sets *n to 0. */
void kb_tui__ed_recs_free(kb_tui__ed_rec *v, int *n);
/* The gid of the newest undo record, 0 when there is none. */
unsigned kb_tui__ed_top_gid(const kb_tui__ed *ed);

/* editor_cursor.c: UTF-8 units, positions and motions */
/* True for a UTF-8 continuation byte. */
bool kb_tui__ed_is_cont(char c);
/* The start of the code point that ends at col (> 0) of s. */
int kb_tui__ed_cp_before(const char *s, int col);
/* The end of the unit (code point plus extenders) that starts at col. */
int kb_tui__ed_next_unit(const char *s, int len, int col);
/* The start of the unit that ends at col (> 0). */
int kb_tui__ed_prev_unit(const char *s, int len, int col);
/* pos clamped into the buffer and onto a code point start. */
kb_tui__ed_pos kb_tui__ed_clamp_pos(const kb_tui__ed *ed, kb_tui__ed_pos p);
/* The number of blanks (spaces, tabs) that s[0..len) starts with. */
int kb_tui__ed_blanks(const char *s, int len);
/* The column of l's first non-blank (its length when all blank). */
int kb_tui__ed_first_nonblank(const kb_tui__ed_row *l);
/* The place one unit after p (the next line's start at a line's end). */
kb_tui__ed_pos kb_tui__ed_step_right(const kb_tui__ed *ed, kb_tui__ed_pos p);

/* editor_edit.c: undo steps, and the selection as an edit */
/* Starts (or continues, for typing of one kind KB_TUI__ED_GRP_* at the same
 * place within KB_TUI__ED_GROUP_MS and with no selection) an undo step. */
void kb_tui__ed_begin(kb_tui__ed *ed, int kind, double now);
/* Ends the step begun by kb_tui__ed_begin: the cursor after it, the typing
 * group's place and time. */
void kb_tui__ed_finish(kb_tui__ed *ed, double now);
/* A recorded insert (n == 0: nothing); returns the end of the text. */
kb_tui__ed_pos kb_tui__ed_do_insert(kb_tui__ed *ed, kb_tui__ed_pos at, const char *s, size_t n);
/* A recorded delete of [a, b), a before b (else nothing). */
void kb_tui__ed_do_delete(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b);
/* Deletes the selection inside the current step; false when none. */
bool kb_tui__ed_del_sel(kb_tui__ed *ed);
/* Replaces the selection (if any) by s[0..n) as one step. */
void kb_tui__ed_replace_sel(kb_tui__ed *ed, const char *s, size_t n);

/* ===== panes.c ===== */

/* The panes in tab-bar order.  CUDA (the generated CUDA of a .tile file)
 * is in the tab bar of .tile files only: for .cu and .ptx it would only say
 * that there is none, and the bar is already full on an 80-column screen. */
enum {
	KB_TUI__PANE_SUMMARY, KB_TUI__PANE_CUDA, KB_TUI__PANE_SASS, KB_TUI__PANE_PTX,
	KB_TUI__PANE_OCCUPANCY, KB_TUI__PANE_METRICS, KB_TUI__PANE_ROOFLINE, KB_TUI__PANE_VARIANTS,
	KB_TUI__PANE_DIFF, KB_TUI__PANE_LLM, KB_TUI__PANE_HELP,
	KB_TUI__NPANES
};
extern const char *const kb_tui__pane_names[KB_TUI__NPANES];
/* Whether the file at path has the pane (in its tab bar, F2/F3, Alt-N). */
bool kb_tui__pane_shown(int pane, const char *path);
/* The pane the file has step (+1 or -1) tabs from pane, wrapping around. */
int kb_tui__pane_step(int pane, int step, const char *path);
/* The file's n-th pane (0-based, as its tab bar shows them), or -1. */
int kb_tui__pane_nth(int n, const char *path);
struct kb_tui__result;
/* What a pane shows. */
typedef struct {
	int pane;
	const struct kb_tui__result *r; /* the last result; NULL before the first */
	const char *path;      /* the kernel file */
	int cursor_line;       /* 1-based: that line's SASS and generated CUDA are marked */
	int width, height;     /* the pane's size (the Roofline plot fits it) */
	int variant;           /* the selected variant's number; 0: none */
	const char *replay;    /* replay: what the current step recorded; else NULL */
	const kb_app_headline *head; /* the run's headline (live or the step's), or NULL */
	json_t *steps;         /* replay: the steps (tui_replay.c), else NULL */
	int step;
	bool details;          /* Summary: every section whole (F4), else one row each */
} kb_tui__view;
/* Appends the pane's text; lines to highlight start with '>'; a line
 * holding SGR escapes is drawn in its colours and never wrapped. */
void kb_tui__pane_text(const kb_tui__view *v, kb_buf *out);

/* ===== pane_session.c: the panes that read the session ===== */

/* Variants: the table of the file's variants fitted to the pane's width
 * (columns left out or shortened, never wrapped), a sparkline of their
 * times, then the selected one (the replay step's by default). */
void kb_tui__variants_text(const kb_tui__view *v, kb_buf *out);
/* Diff: the selected variant against the newest (live), or the replay
 * step's variant against the one before it (of its file, else the
 * session's previous variant, which may be of another file; the
 * session's very first against its file's newest). */
void kb_tui__diff_text(const kb_tui__view *v, kb_buf *out);
/* The replay step's variant number (0: not a replay, or the step names
 * none). */
int kb_tui__step_variant(const kb_tui__view *v);

/* ===== worker.c: compile and run off the UI thread ===== */

/* A save stops a run that has been going longer than this (ms). */
#define KB_TUI__CANCEL_AFTER_MS 1000.0

/* What one save produced: the compile first, then the run and the SASS as
 * they arrive (kb_tui__worker_merge). */
typedef struct kb_tui__result {
	unsigned seq;          /* which submission it answers */
	unsigned gen;          /* bumped by every merged piece (views cache by it) */
	bool compiled;
	kb_compile_unit unit;  /* the compile (always attempted) */
	json_t *run;           /* the runner's Result, or NULL (no GPU / not run) */
	char *deltas;          /* vs the previous and best variants, or NULL */
	kb_app_headline head;  /* the run's headline (has_head) */
	bool has_head;
	bool running;          /* the run is on its way */
	bool sass_pending;     /* the SASS is on its way */
	char error[1100];      /* the file or a library could not be used */
	char note[1100];       /* e.g. a session recording problem */
} kb_tui__result;

/* What the worker hands the loop, in order: a new result (the compile),
 * then that result's run, and its SASS from the disassembler's thread. */
typedef enum { KB_TUI__PIECE_COMPILE, KB_TUI__PIECE_RUN, KB_TUI__PIECE_SASS } kb_tui__piece_kind;

typedef struct kb_tui__piece {
	kb_tui__piece_kind kind;
	unsigned seq;
	kb_tui__result *result;  /* COMPILE */
	json_t *run;             /* RUN: the Result, deltas, problems */
	char *deltas;
	kb_app_headline head;    /* RUN: the headline (has_head) */
	bool has_head;
	char error[1100], note[1100];
	kb_sass sass;            /* SASS, and what the disassembly took */
	double ms;
	struct kb_tui__piece *next;
} kb_tui__piece;

typedef struct {
	pthread_t thread, sass_thread;
	pthread_mutex_t lock;
	pthread_cond_t cond, sass_cond;
	int wake[2];           /* the worker writes a byte; the loop polls [0] */
	char *arch;
	const char **options;  /* --option words (borrowed from kb_tui_opts) */
	int noptions;
	double timeout_ms;
	bool run, record, started, stop, busy, has_next;
	double run_since;      /* when the run in the runner began (0: none; under lock) */
	kb_runner *runner;
	char *next_text, *next_path;
	unsigned next_seq;
	bool next_profile;
	kb_tui__piece *done, *done_tail; /* finished pieces, oldest first */
	/* the disassembler's job: the newest compile's key and cubin */
	bool has_sass_job, sass_busy;
	unsigned sass_seq;
	char *sass_key;
	void *sass_cubin;
	size_t sass_len;
	char phase[96];        /* what the worker does now (under lock) */
} kb_tui__worker;

/* What the worker does with each save, fixed before its threads start. */
typedef struct {
	const char *arch;      /* NULL: the GPU's, else sm_90 */
	const char **options;  /* --option words (borrowed: they outlive the worker) */
	int noptions;
	double timeout_ms;     /* a GPU phase longer than this is a hang (0: 10 s) */
	bool run;              /* run what compiles in the runner (else compile only) */
	bool record;           /* record compiles and runs in the session */
} kb_tui__worker_opts;

/* Starts the compile and disassembler threads with options o (copied).
 * Returns KB_OK, or a KB_E* with err and nothing left open. */
int kb_tui__worker_start(kb_tui__worker *w, const kb_tui__worker_opts *o, kb_err *err);
/* Queues a compile (and run) of text; replaces a queued one.  profile adds
 * the quick counters and PC-sampling hot spots to the run. */
void kb_tui__worker_submit(kb_tui__worker *w, const char *path, const char *text, unsigned seq,
			   bool profile);
/* The oldest finished piece, or NULL; drains the wake pipe. */
kb_tui__piece *kb_tui__worker_take(kb_tui__worker *w);
/* Applies piece p to *res (a COMPILE piece newer than *res replaces it;
 * a RUN or SASS piece of *res fills it in; a stale one is dropped) and
 * frees p.  Returns true when *res changed. */
bool kb_tui__worker_merge(kb_tui__result **res, kb_tui__piece *p);
void kb_tui__worker_stop(kb_tui__worker *w);
void kb_tui__result_free(kb_tui__result *r);

/* ===== highlight.c, highlight_*.c ===== */

#include <tree_sitter/api.h>

/* What a span of text is; tui_draw.c picks the colour. */
typedef enum {
	KB_HL_NONE,
	KB_HL_KEYWORD,
	KB_HL_TYPE,
	KB_HL_FUNCTION,
	KB_HL_STRING,
	KB_HL_NUMBER,
	KB_HL_COMMENT,
	KB_HL_SPEC,      /* a `//!` spec line */
	KB_HL_PREPROC,   /* #include, #define ...; PTX has none */
	KB_HL_CONSTANT,
	KB_HL_BUILTIN,   /* threadIdx, this; PTX %tid.x */
	KB_HL_PROPERTY,  /* struct fields */
	KB_HL_OPERATOR,
	KB_HL_LABEL,     /* PTX $L__BB0_2:, C goto labels */
	KB_HL_REGISTER,  /* PTX %r12 */
	KB_HL__COUNT
} kb_hl_class;

/* Bytes [start, end) of row `row` (all 0-based) are of class cls. */
typedef struct {
	int row, start, end;
	kb_hl_class cls;
} kb_hl_span;

typedef struct {
	kb_hl_span *v;
	int n, cap;
} kb_hl_spans;

/* The text, read through callbacks: row r (0 <= r < nrows) is its bytes
 * without '\n' (len >= 0); the text is the rows joined by '\n', which is
 * what TSInputEdit byte offsets count (kb_tui__ed_text's LF text). */
typedef struct {
	void *ctx;
	int (*nrows)(void *ctx);
	const char *(*row)(void *ctx, int r, int *len);
} kb_hl_text;

typedef enum { KB_HL_LANG_CUDA, KB_HL_LANG_PTX, KB_HL_LANG_TILE } kb_hl_lang;

/* The language of a kernel file, from its extension as the compile layer
 * reads it (kb_compile_source_kind): .ptx, .tile, else CUDA. */
kb_hl_lang kb_tui__hl_lang_of(const char *path);

typedef struct kb_hl kb_hl;

/* A highlighter for one buffer.  queries: NULL for the grammars' own
 * (embedded), or {name, text, name, text, ..., NULL}.  Returns 0, or
 * KB_ERROR (the query does not compile: err names the file, line, column
 * and tree-sitter's error kind) or KB_EUNSUP (grammar ABI, a predicate). */
int kb_tui__hl_new(kb_hl **out, kb_hl_lang lang, const char *const *queries, kb_err *err);
void kb_tui__hl_free(kb_hl *hl);
/* Records one edit of the text (ts_tree_edit; cheap, call once per edit in
 * order); the next parse/spans re-parses incrementally. */
void kb_tui__hl_edit(kb_hl *hl, const TSInputEdit *edit);
/* Forgets the tree: the next parse is a full one (new file, lost edits). */
void kb_tui__hl_reset(kb_hl *hl);
/* Brings the tree up to date with text (no-op when clean, and for the
 * lexed languages, PTX and tile).
 * Returns 0 or KB_ERROR. */
int kb_tui__hl_parse(kb_hl *hl, const kb_hl_text *text, kb_err *err);
/* Spans of rows [first, first + n) into out (reset first), parsing first
 * when needed.  Returns 0 or KB_ERROR. */
int kb_tui__hl_spans(kb_hl *hl, const kb_hl_text *text, int first, int n, kb_hl_spans *out,
		     kb_err *err);
/* The current tree (CUDA; NULL before the first parse); borrowed. */
const TSTree *kb_tui__hl_tree(const kb_hl *hl);
void kb_tui__hl_spans_free(kb_hl_spans *s);
/* The class of a highlight capture name ("keyword.modifier" -> KEYWORD). */
kb_hl_class kb_tui__hl_capture_class(const char *name);
/* "keyword", "spec" ... */
const char *kb_tui__hl_class_name(kb_hl_class c);
/* Lexes one PTX row (appending spans to out when non-NULL); *state carries
 * an open block comment from row to row (0 at the top of the file). */
void kb_tui__hl_ptx_row(const char *s, int len, int row, int *state, kb_hl_spans *out);
/* Lexes one row of a .tile file, as kb_tui__hl_ptx_row (the language has
 * nothing that spans rows: *state stays 0). */
void kb_tui__hl_tile_row(const char *s, int len, int row, int *state, kb_hl_spans *out);

/* ----- highlighter internals: shared by highlight.c, highlight_span.c,
 * highlight_cuda.c and highlight_lex.c only ----- */

#include <regex.h>

/* One text predicate of a pattern. */
typedef enum {
	KB_TUI__HL_PRED_MATCH, KB_TUI__HL_PRED_EQ_STR, KB_TUI__HL_PRED_EQ_CAP,
	KB_TUI__HL_PRED_ANY_OF
} kb_tui__hl_pred_op;

typedef struct {
	kb_tui__hl_pred_op op;
	bool negate;
	uint32_t cap;       /* the capture tested */
	uint32_t cap2;      /* KB_TUI__HL_PRED_EQ_CAP: the other capture */
	regex_t re;         /* KB_TUI__HL_PRED_MATCH */
	const char **strs;  /* KB_TUI__HL_PRED_EQ_STR (1), KB_TUI__HL_PRED_ANY_OF (n); borrowed
			     * from the query */
	int nstrs;
} kb_tui__hl_pred;

/* One painted capture (CUDA). */
typedef struct {
	uint32_t sbyte, ebyte, pattern;
	TSPoint sp, ep;
	uint8_t cls;
} kb_tui__hl_cap_item;

struct kb_hl {
	kb_hl_lang lang;
	/* CUDA */
	TSParser *parser;
	TSTree *tree;
	TSQuery *query;
	TSQueryCursor *cursor;
	uint8_t *cap_cls;     /* per capture id */
	kb_tui__hl_pred **preds; /* per pattern: its predicates */
	int *npreds, *predcap;
	uint32_t npatterns;
	bool dirty;           /* edited since the last parse */
	kb_tui__hl_cap_item *items;
	int nitems, capitems;
	uint8_t *paint;
	size_t paint_cap;
	kb_buf tmp;
	/* PTX (tile needs no state) */
	uint8_t *ptx_state;   /* state at the start of each row */
	int ptx_valid, ptx_cap;
};

/* highlight_span.c: what the highlighters share (calls none of them) */
/* Appends a span, merging with the previous one when they touch; empty
 * spans and KB_HL_NONE are left out. */
void kb_tui__hl_add_span(kb_hl_spans *out, int row, int start, int end, kb_hl_class cls);
/* True when s[0..len) has "//!" at its first non-blank, which is col: a
 * spec line. */
bool kb_tui__hl_spec_row(const char *s, int len, int col);
/* For the lexers: when row s[0..len) is a spec line, its span (from the
 * "//!" to the end) goes to out (when non-NULL) and the result is true. */
bool kb_tui__hl_spec_span(const char *s, int len, int row, kb_hl_spans *out);
/* Reads row r through the callbacks; rows past the end are empty. */
const char *kb_tui__hl_get_row(const kb_hl_text *t, int r, int *len);

/* highlight_cuda.c */
/* Builds the parser, the concatenated query of parts ({name, text, ...,
 * NULL}, then kbench's own) and its tables.  Returns 0, or KB_ERROR (the
 * query does not compile) or KB_EUNSUP (grammar ABI, a predicate). */
int kb_tui__hl_cuda_init(kb_hl *hl, const char *const *parts, kb_err *err);

/* Collects the captures of rows [first, last) into hl->items, sorted. */
void kb_tui__hl_collect_captures(kb_hl *hl, const kb_hl_text *t, int first, int last);
/* Paints the sorted captures over rows [first, last) and emits the spans. */
void kb_tui__hl_paint_rows(kb_hl *hl, const kb_hl_text *t, int first, int last,
			   kb_hl_spans *out);

/* highlight_lex.c */
/* Makes hl->ptx_state valid for rows [0, upto]. */
void kb_tui__hl_ptx_states(kb_hl *hl, const kb_hl_text *t, int upto);

/* ===== tui.c, tui_actions.c, tui_draw.c, tui_pane.c, tui_keys.c,
 * tui_llm.c, tui_replay.c: the workbench (how they fit is at the top of
 * tui.c) ===== */

#include <stdio.h>
#include <wchar.h>

/* Colour pairs: the screen's, then one per highlight class from
 * KB_TUI__C_HL_BASE + 1 (tui_draw.c sets them up). */
enum { KB_TUI__C_NORMAL = 1, KB_TUI__C_TITLE, KB_TUI__C_STATUS, KB_TUI__C_LINENO, KB_TUI__C_TAB,
       KB_TUI__C_TAB_ON, KB_TUI__C_ERROR, KB_TUI__C_SEL, KB_TUI__C_MARK, KB_TUI__C_GOOD,
       KB_TUI__C_BAD, KB_TUI__C_HL_BASE };

/* The question the status line is asking, if any. */
typedef enum {
	KB_TUI__P_NONE, KB_TUI__P_FIND, KB_TUI__P_REPLACE_FROM, KB_TUI__P_REPLACE_TO, KB_TUI__P_GOTO,
	KB_TUI__P_QUIT, KB_TUI__P_RECOVER, KB_TUI__P_ASK
} kb_tui__prompt;

/* The LLM pane's conversation (tui_llm.c).  A question runs on a thread of
 * its own that appends the streamed answer under lock and writes a byte to
 * wake[1]; the loop polls wake[0], so nothing waits on the network. */
typedef struct {
	pthread_t thread;
	pthread_mutex_t lock;
	int wake[2];
	bool busy;             /* a question is on its way (the UI thread's flag) */
	atomic_int cancel;     /* Esc: stop it */
	/* under lock while busy */
	bool finished;
	kb_buf answer;
	int rc;
	kb_err err;
	kb_llm_answer ans;
	/* the UI thread's */
	kb_llm_config cfg;
	json_t *messages;
	kb_buf shown;          /* finished exchanges, newest first */
	char *base;            /* the text the question was about */
	char *cand;            /* the proposal ready to apply, or NULL */
	char status[1200];
	int round;
	char question[256];
} kb_tui__llm;

/* The key of Ctrl + c. */
#define KB_TUI__CTRL(c) ((c) & 0x1f)

/* The workbench's state, one per kb_tui_run. */
typedef struct {
	kb_tui_opts o;
	kb_tui__ed *ed;
	kb_tui__worker w;
	kb_tui__result *res;
	kb_hl *hl;
	unsigned seq;
	int pane, split, top, left, pane_top;
	int followed_line;     /* the CUDA pane scrolled to this line's code (0: not yet) ... */
	unsigned followed_seq; /* ... of this result */
	int variant;           /* the selected variant's number; 0: none */
	kb_buf session_text;   /* the last Variants / Diff / Roofline text ... */
	char session_key[96];  /* ... what it was made for ... */
	double session_at;     /* ... and when (kb_now_ms) */
	json_t *steps;         /* replay: the session's events as steps */
	int step;
	char *replay_file;     /* replay: the file the current step is about */
	kb_app_headline replay_head; /* replay: the step's variant's headline */
	bool details;          /* F4: the Summary's sections whole */
	char msg[256];
	double msg_until;
	kb_tui__prompt prompt;
	kb_buf input;
	char find[256];
	int inotify;
	long long mtime;
	double last_autosave;
	unsigned long autosaved_changes;
	char *recover_path;
	bool final_newline;    /* the file ends with a line ending: so do its saves */
	bool quit, color;
	kb_layout L;
	bool ok_size;
	kb_tui__llm llm;       /* the LLM pane */
	double key_ms;         /* when the first unanswered key was read */
	FILE *latency_log;     /* $KBENCH_TUI_LATENCY: key-to-screen times */
} kb_tui__ui;

/* tui_actions.c: what keys, the loop, the LLM pane and the replay ask
 * for; calls no other tui*.c file */
/* Shows a message in the status line for 5 s. */
void kb_tui__set_msg(kb_tui__ui *t, const char *fmt, ...) KB_PRINTF(2, 3);
/* Asks p in the status line, with empty input. */
void kb_tui__prompt_start(kb_tui__ui *t, kb_tui__prompt p);
/* Queues a compile and run of the buffer as the next submission. */
void kb_tui__submit(kb_tui__ui *t);
/* F8: the run plus the quick counters and hot spots (Metrics, SASS); says
 * so, or why not (no GPU, --no-run, a replay). */
void kb_tui__profile(kb_tui__ui *t);
/* The editor holds a file of t->o.path's kind (at the start, or a replay
 * step into another file): its highlighter, and a pane it has (the CUDA
 * pane is for .tile files only). */
void kb_tui__file_kind(kb_tui__ui *t);
/* The file's modification time in ns, 0 when it cannot be read. */
long long kb_tui__mtime_of(const char *path);
/* The recovery file of path (its directory made), a new string. */
char *kb_tui__recovery_path(const char *path);
/* Writes the buffer to the file, then submits it.  Returns KB_OK, or the
 * kb_file_write error (said in the status line). */
int kb_tui__save(kb_tui__ui *t);
/* Every 2 s with unsaved edits: the buffer goes to the recovery file. */
void kb_tui__autosave(kb_tui__ui *t);
/* The file changed on disk (another editor saved it): reload it unless the
 * buffer has unsaved edits, and run the loop as for a save. */
void kb_tui__file_changed(kb_tui__ui *t);
/* A recovery file that differs from the file: offer it. */
void kb_tui__offer_recovery(kb_tui__ui *t);

/* tui_draw.c */
/* Decides on colour (not with $NO_COLOR) and sets up the pairs. */
void kb_tui__init_colors(kb_tui__ui *t);
/* Draws the whole screen and places the cursor. */
void kb_tui__draw(kb_tui__ui *t);

/* tui_pane.c */
/* Where each tab is (x[i] < 0: not in the bar) and its name: whole names
 * when they all fit, else short ones, from a first tab that keeps the
 * current one in view (a "<" then marks those left out). */
void kb_tui__tabs(const kb_tui__ui *t, int x[KB_TUI__NPANES], const char *name[KB_TUI__NPANES]);
/* The tab bar, the current pane's highlighted. */
void kb_tui__draw_tabs(kb_tui__ui *t);
/* The current pane's text from line pane_top, wrapped to the pane. */
void kb_tui__draw_pane(kb_tui__ui *t);
/* Draws s[0..n) at (y, x) in at most width columns, its SGR escapes
 * (bold, red, green, reset) as colours; returns the columns drawn. */
int kb_tui__draw_sgr(int y, int x, const char *s, int n, int width);
/* The headline shown now (the run's, or the replay step's), or NULL. */
const kb_app_headline *kb_tui__headline(const kb_tui__ui *t);

/* tui_keys.c */
/* Handles every key waiting on stdin. */
void kb_tui__keys(kb_tui__ui *t);

/* tui_llm.c: the LLM pane */
/* Sets up the pane's pipe and lock (start of the workbench). */
void kb_tui__llm_init(kb_tui__ui *t);
/* Ctrl-L: asks for a question in the status line (Enter alone: "How can
 * this be faster?"). */
void kb_tui__llm_prompt(kb_tui__ui *t);
/* Sends the question about the last compile's file and Result. */
void kb_tui__llm_ask(kb_tui__ui *t, const char *question);
/* The wake pipe is readable: streamed text, or the answer complete (its
 * proposal checked: no code, not applying, spec changed, or ready). */
void kb_tui__llm_take(kb_tui__ui *t);
/* Ctrl-T: the proposal replaces the buffer as one edit, then is saved (so
 * compiled and run); Ctrl-W: it is dropped.  Both are journal events. */
void kb_tui__llm_apply(kb_tui__ui *t);
void kb_tui__llm_reject(kb_tui__ui *t);
/* Esc: stops a question on its way; false when there is none. */
bool kb_tui__llm_cancel(kb_tui__ui *t);
/* The pane's text: the exchange in progress, then the earlier ones. */
void kb_tui__llm_text(kb_tui__ui *t, kb_buf *out);
/* Cancels and joins a question on its way; frees the pane's state. */
void kb_tui__llm_stop(kb_tui__ui *t);

/* tui_replay.c */
/* The session's steps; the editor starts at the first that has a text.
 * Returns 0, or a KB_E* with err (KB_ENOTFOUND: nothing to replay). */
int kb_tui__start_replay(kb_tui__ui *t, kb_err *err);
/* A key in a replay: n/p/</> step, moving and finding work (false: handle
 * it as usual), edits do not (refused with a message; true). */
bool kb_tui__replay_key(kb_tui__ui *t, wint_t ch);

#endif
