/*
 * tui.c - the workbench's loop: one poll() over the keyboard, the worker's
 * wake pipe and the watched file (inotify), a redraw when something
 * changed, never a blocking call on the UI thread (style rule 16).  Owns
 * the screen: the editor on the left, the result panes on the right, the
 * status line; and the two safety nets: autosave to a recovery file, and
 * restoring the terminal on every way out.
 */
#include "tui_int.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#define AUTOSAVE_MS 2000.0

enum { C_NORMAL = 1, C_TITLE, C_STATUS, C_LINENO, C_TAB, C_TAB_ON, C_ERROR, C_SEL, C_MARK,
       C_HL_BASE };

typedef enum { P_NONE, P_FIND, P_REPLACE_FROM, P_REPLACE_TO, P_GOTO, P_QUIT, P_RECOVER } prompt;

typedef struct {
	kb_tui_opts o;
	kb_tui__ed *ed;
	kb_tui__worker w;
	kb_tui__result *res;
	kb_hl *hl;
	unsigned seq;
	int pane, split, top, left, pane_top;
	int variant;           /* the selected variant's number; 0: none */
	kb_buf session_text;   /* the last Variants / Diff / Roofline text ... */
	char session_key[96];  /* ... what it was made for ... */
	double session_at;     /* ... and when (kb_now_ms) */
	json_t *steps;         /* replay: the session's events as steps */
	int step;
	char *replay_file;     /* replay: the file the current step is about */
	char msg[256];
	double msg_until;
	prompt prompt;
	kb_buf input;
	char find[256];
	int inotify;
	long long mtime;
	double last_autosave;
	unsigned long autosaved_changes;
	char *recover_path;
	bool quit, color;
	kb_layout L;
	bool ok_size;
	double key_ms;         /* when the first unanswered key was read */
	FILE *latency_log;     /* $KBENCH_TUI_LATENCY: key-to-screen times */
} tui;

static void set_msg(tui *t, const char *fmt, ...) KB_PRINTF(2, 3);
static bool replay_key(tui *t, wint_t ch);

static void set_msg(tui *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
	t->msg_until = kb_now_ms() + 5000;
}

/* ---- files: load, save, recovery, watching ------------------------------- */

static long long mtime_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : 0;
}

static char *recovery_path(const char *path)
{
	char *abs = realpath(path, NULL);
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, abs ? abs : path);
	char hex[KB_HASH_HEX];
	kb_hash_final(h, hex);
	free(abs);
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	char *dir = xdg && *xdg ? kb_xasprintf("%s/kbench/recover", xdg)
		    : kb_xasprintf("%s/.local/share/kbench/recover", home ? home : "/tmp");
	kb_mkdirs(dir, NULL);
	char *p = kb_xasprintf("%s/%.16s-%s", dir, hex, kb_basename(path));
	free(dir);
	return p;
}

static void submit_job(tui *t, bool profile)
{
	kb_buf text = KB_BUF_INIT;
	kb_tui__ed_text(t->ed, &text);
	kb_tui__worker_submit(&t->w, t->o.path, text.s ? text.s : "", ++t->seq, profile);
	kb_buf_free(&text);
}

static void submit(tui *t)
{
	submit_job(t, false);
}

/* F8: the run plus the quick counters and hot spots (Metrics, SASS). */
static void profile(tui *t)
{
	bool no_gpu = t->res && t->res->run && !strcmp(kb_app_run_verdict(t->res->run), "NO GPU");
	if (!t->w.run || no_gpu) {
		set_msg(t, "profiling needs a GPU (and is off with --no-run or in a replay)");
		return;
	}
	submit_job(t, true);
	set_msg(t, "profiling: the run, quick counters and PC-sampling hot spots");
}

static int save(tui *t)
{
	kb_buf text = KB_BUF_INIT;
	kb_err err = {0};
	kb_tui__ed_save_text(t->ed, &text);
	int rc = kb_file_write(t->o.path, text.s ? text.s : "", text.len, &err);
	kb_buf_free(&text);
	if (rc < 0) {
		set_msg(t, "NOT SAVED: %s", err.msg);
		return rc;
	}
	kb_tui__ed_mark_saved(t->ed);
	t->mtime = mtime_of(t->o.path);
	unlink(t->recover_path);
	set_msg(t, "saved %s", t->o.path);
	submit(t);
	return KB_OK;
}

/* Every 2 s with unsaved edits: the buffer goes to the recovery file. */
static void autosave(tui *t)
{
	if (!t->recover_path)
		return;
	double now = kb_now_ms();
	if (now - t->last_autosave < AUTOSAVE_MS || t->ed->changes == t->autosaved_changes)
		return;
	t->last_autosave = now;
	t->autosaved_changes = t->ed->changes;
	if (!kb_tui__ed_dirty(t->ed))
		return;
	kb_buf text = KB_BUF_INIT;
	kb_tui__ed_save_text(t->ed, &text);
	kb_file_write(t->recover_path, text.s ? text.s : "", text.len, NULL);
	kb_buf_free(&text);
}

/* The file changed on disk (another editor saved it): reload it unless the
 * buffer has unsaved edits, and run the loop as for a save. */
static void file_changed(tui *t)
{
	char ev[4096];
	while (t->inotify >= 0 && read(t->inotify, ev, sizeof ev) > 0)
		;
	long long m = mtime_of(t->o.path);
	if (m == t->mtime)
		return;
	t->mtime = m;
	if (kb_tui__ed_dirty(t->ed)) {
		set_msg(t, "%s changed on disk; your unsaved edits are kept (Ctrl-S overwrites)", t->o.path);
		return;
	}
	kb_buf text = KB_BUF_INIT;
	if (kb_file_read(t->o.path, &text, NULL) == 0) {
		kb_tui__ed_pos keep = t->ed->cur;
		kb_tui__ed_load(t->ed, text.s, text.len);
		kb_tui__ed_set_cursor(t->ed, keep, false);
		set_msg(t, "reloaded %s", t->o.path);
		submit(t);
	}
	kb_buf_free(&text);
}

/* ---- highlighting -------------------------------------------------------- */

static int ed_nrows(void *ctx)
{
	return ((kb_tui__ed *)ctx)->nlines;
}

static const char *ed_row(void *ctx, int r, int *len)
{
	return kb_tui__ed_line(ctx, r, len);
}

/* Hands the editor's edits to the highlighter (incremental re-parse). */
static void sync_highlight(tui *t)
{
	if (!t->hl)
		return;
	int n;
	bool all;
	const kb_tui__ed_edit *e = kb_tui__ed_edits(t->ed, &n, &all);
	if (all) {
		kb_tui__hl_reset(t->hl);
	} else {
		for (int i = 0; i < n; i++) {
			TSInputEdit te = {
				(uint32_t)e[i].start_byte, (uint32_t)e[i].old_end_byte,
				(uint32_t)e[i].new_end_byte,
				{(uint32_t)e[i].start_point.line, (uint32_t)e[i].start_point.col},
				{(uint32_t)e[i].old_end_point.line, (uint32_t)e[i].old_end_point.col},
				{(uint32_t)e[i].new_end_point.line, (uint32_t)e[i].new_end_point.col},
			};
			kb_tui__hl_edit(t->hl, &te);
		}
	}
	kb_tui__ed_edits_clear(t->ed);
}

/* ---- drawing ---------------------------------------------------------------- */

static int hl_pair(kb_hl_class c)
{
	return c == KB_HL_NONE ? C_NORMAL : C_HL_BASE + (int)c;
}

static void init_colors(tui *t)
{
	const char *nc = getenv("NO_COLOR");
	t->color = has_colors() && !(nc && *nc);
	if (!t->color)
		return;
	start_color();
	use_default_colors();
	bool rich = COLORS >= 256;
	init_pair(C_NORMAL, -1, -1);
	init_pair(C_TITLE, COLOR_BLACK, COLOR_CYAN);
	init_pair(C_STATUS, COLOR_BLACK, COLOR_WHITE);
	init_pair(C_LINENO, rich ? 244 : COLOR_BLUE, -1);
	init_pair(C_TAB, -1, -1);
	init_pair(C_TAB_ON, COLOR_BLACK, COLOR_YELLOW);
	init_pair(C_ERROR, COLOR_WHITE, COLOR_RED);
	init_pair(C_SEL, COLOR_BLACK, rich ? 153 : COLOR_CYAN);
	init_pair(C_MARK, COLOR_BLACK, rich ? 229 : COLOR_YELLOW);
	static const short fg[KB_HL__COUNT][2] = { /* 256-colour, 16-colour */
		[KB_HL_KEYWORD] = {127, COLOR_MAGENTA}, [KB_HL_TYPE] = {31, COLOR_CYAN},
		[KB_HL_FUNCTION] = {25, COLOR_BLUE}, [KB_HL_STRING] = {28, COLOR_GREEN},
		[KB_HL_NUMBER] = {130, COLOR_YELLOW}, [KB_HL_COMMENT] = {245, COLOR_BLUE},
		[KB_HL_SPEC] = {166, COLOR_RED}, [KB_HL_PREPROC] = {97, COLOR_MAGENTA},
		[KB_HL_CONSTANT] = {130, COLOR_YELLOW}, [KB_HL_BUILTIN] = {30, COLOR_CYAN},
		[KB_HL_PROPERTY] = {24, COLOR_BLUE}, [KB_HL_OPERATOR] = {-1, -1},
		[KB_HL_LABEL] = {94, COLOR_YELLOW}, [KB_HL_REGISTER] = {31, COLOR_CYAN},
	};
	for (int c = 1; c < KB_HL__COUNT; c++)
		init_pair((short)(C_HL_BASE + c), fg[c][rich ? 0 : 1], -1);
}

/* Lines with an error diagnostic of the last compile. */
static const kb_diag *diag_on(const tui *t, int line)
{
	if (!t->res || !t->res->compiled)
		return NULL;
	for (int i = 0; i < t->res->unit.diags.n; i++)
		if (t->res->unit.diags.v[i].line == line && t->res->unit.diags.v[i].level == KB_DIAG_ERROR)
			return &t->res->unit.diags.v[i];
	return NULL;
}

static bool in_selection(const tui *t, int line, int col)
{
	kb_tui__ed_pos a, b;
	if (!kb_tui__ed_selection(t->ed, &a, &b))
		return false;
	if (line < a.line || line > b.line)
		return false;
	if (line == a.line && col < a.col)
		return false;
	return !(line == b.line && col >= b.col);
}

static int span_class(const kb_hl_spans *sp, int row, int col)
{
	for (int i = 0; i < sp->n; i++)
		if (sp->v[i].row == row && col >= sp->v[i].start && col < sp->v[i].end)
			return hl_pair(sp->v[i].cls);
	return C_NORMAL;
}

/* One editor row: line number, then the text from display column t->left. */
static void draw_line(tui *t, int y, int line, int gutter, const kb_hl_spans *sp)
{
	kb_rect r = t->L.editor;
	int len;
	const char *s = kb_tui__ed_line(t->ed, line, &len);
	const kb_diag *d = diag_on(t, line + 1);
	attron(COLOR_PAIR(d ? C_ERROR : C_LINENO));
	mvprintw(y, r.x, "%*d ", gutter - 1, line + 1);
	attroff(COLOR_PAIR(d ? C_ERROR : C_LINENO));
	int x = 0, width = r.w - gutter;
	for (int col = 0; col < len;) {
		unsigned cp;
		int nb = kb_tui__utf8_decode(s + col, len - col, &cp);
		int w = cp == '\t' ? t->ed->tab_width - x % t->ed->tab_width : kb_tui__cp_width(cp);
		if (x - t->left + w > width)
			break;
		if (x >= t->left) {
			int pair = in_selection(t, line, col) ? C_SEL : span_class(sp, line, col);
			attron(COLOR_PAIR(pair));
			if (cp == '\t' || cp < 32) {
				mvprintw(y, r.x + gutter + x - t->left, "%*s", w, "");
			} else {
				wchar_t wc[2] = {(wchar_t)cp, 0};
				mvaddwstr(y, r.x + gutter + x - t->left, wc);
			}
			attroff(COLOR_PAIR(pair));
		}
		x += w;
		col += nb;
	}
	/* the error itself, after the line's text where it fits */
	int at = (x > t->left ? x - t->left : 0) + 2;
	if (d && at + 4 < width) {
		attron(COLOR_PAIR(C_ERROR));
		mvaddwstr(y, r.x + gutter + at, L"\u25c0 ");
		mvaddnstr(y, r.x + gutter + at + 2, d->msg, width - at - 2);
		attroff(COLOR_PAIR(C_ERROR));
	}
}

static void scroll_to_cursor(tui *t, int gutter)
{
	int h = t->L.editor.h, w = t->L.editor.w - gutter;
	if (t->ed->cur.line < t->top)
		t->top = t->ed->cur.line;
	if (t->ed->cur.line >= t->top + h)
		t->top = t->ed->cur.line - h + 1;
	int x = kb_tui__ed_x_of(t->ed, t->ed->cur.line, t->ed->cur.col);
	if (x < t->left)
		t->left = x;
	if (x >= t->left + w - 1)
		t->left = x - w + 2;
}

static void draw_editor(tui *t)
{
	int gutter = snprintf(NULL, 0, "%d", t->ed->nlines) + 2;
	gutter = gutter < 5 ? 5 : gutter;
	scroll_to_cursor(t, gutter);
	kb_hl_spans sp = {0};
	kb_hl_text text = {t->ed, ed_nrows, ed_row};
	if (t->hl && t->color)
		kb_tui__hl_spans(t->hl, &text, t->top, t->L.editor.h, &sp, NULL);
	for (int i = 0; i < t->L.editor.h && t->top + i < t->ed->nlines; i++)
		draw_line(t, t->L.editor.y + i, t->top + i, gutter, &sp);
	kb_tui__hl_spans_free(&sp);
	/* the separator */
	for (int y = t->L.editor.y; y < t->L.editor.y + t->L.editor.h; y++)
		mvaddwstr(y, t->L.editor.x + t->L.editor.w, L"\u2502");
}

static void draw_tabs(tui *t)
{
	kb_rect r = t->L.tabs;
	int x = r.x;
	for (int i = 0; i < KB_TUI__NPANES && x < r.x + r.w; i++) {
		int pair = i == t->pane ? C_TAB_ON : C_TAB;
		attron(COLOR_PAIR(pair) | (i == t->pane ? A_BOLD : 0));
		mvaddnstr(r.y, x, kb_tui__pane_names[i], r.x + r.w - x);
		attroff(COLOR_PAIR(pair) | A_BOLD);
		x += (int)strlen(kb_tui__pane_names[i]) + 1;
	}
}

/* Bytes of the longest prefix of p[0..n) that fills at most cols columns,
 * never splitting a UTF-8 sequence (pane text is ASCII and one-column
 * symbols such as box drawing). */
static int utf8_prefix(const char *p, int n, int cols)
{
	int i = 0;
	for (int c = 0; i < n && c < cols; c++)
		for (i++; i < n && ((unsigned char)p[i] & 0xC0) == 0x80; i++)
			;
	return i;
}

/* A prefix of p[0..n) for one row of cols columns: the whole text if it
 * fits, else up to the last space in the row's second half (a word is not
 * cut), else the row full. */
static int wrap_prefix(const char *p, int n, int cols)
{
	int fit = utf8_prefix(p, n, cols);
	if (fit >= n)
		return n;
	for (int i = fit; i > fit / 2; i--)
		if (p[i] == ' ')
			return i;
	return fit;
}

/* Where continuation rows of a wrapped pane line start: under the value of
 * a "  label   value" line (a word, then two or more spaces), at the indent
 * of a line indented 4 or more, else two columns in; never more than a
 * third of the width. */
static int hang_indent(const char *p, int n, int cols)
{
	int i = 0;
	while (i < n && p[i] == ' ')
		i++;
	if (i >= 4 && i <= cols / 3) /* itself a continuation: keep its indent */
		return i;
	while (i < n && p[i] != ' ')
		i++;
	int gap = 0;
	while (i + gap < n && p[i + gap] == ' ')
		gap++;
	int col = i + gap;
	return gap >= 2 && col < n && col <= cols / 3 ? col : 2;
}

/* The panes read from the session (libgit2: ~10 ms for 60 variants) are
 * made again only when what they show can have changed: a new result, a
 * selection, the pane or its size, a replay step; or after 2 s, for
 * variants another kbench process recorded.  Not on every keystroke. */
static const kb_buf *session_pane(tui *t, const kb_tui__view *v)
{
	char key[sizeof t->session_key];
	snprintf(key, sizeof key, "%d %d %dx%d %u.%u %d", v->pane, v->variant, v->width, v->height,
		 t->res ? t->res->seq : 0, t->res ? t->res->gen : 0, t->step);
	double now = kb_now_ms();
	if (strcmp(key, t->session_key) || now - t->session_at > 2000) {
		kb_buf_free(&t->session_text);
		kb_tui__pane_text(v, &t->session_text);
		snprintf(t->session_key, sizeof t->session_key, "%s", key);
		t->session_at = now;
	}
	return &t->session_text;
}

static void draw_pane(tui *t)
{
	kb_rect r = t->L.pane;
	kb_buf text = KB_BUF_INIT;
	const char *replay = t->steps ? json_string_value(json_object_get(
						json_array_get(t->steps, (size_t)t->step), "summary"))
				      : NULL;
	kb_tui__view view = {t->pane, t->res, t->o.path, t->ed->cur.line + 1, r.w, r.h, t->variant,
			     replay};
	const kb_buf *shown = &text;
	if (t->pane == KB_TUI__PANE_VARIANTS || t->pane == KB_TUI__PANE_DIFF ||
	    t->pane == KB_TUI__PANE_ROOFLINE)
		shown = session_pane(t, &view);
	else
		kb_tui__pane_text(&view, &text);
	const char *p = shown->s ? shown->s : "";
	int row = 0;
	for (int skip = t->pane_top; skip > 0 && *p; skip--) {
		const char *e = strchr(p, '\n');
		p = e ? e + 1 : p + strlen(p);
	}
	for (; *p && row < r.h; row++) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);
		bool mark = (t->pane == KB_TUI__PANE_SASS || t->pane == KB_TUI__PANE_VARIANTS) && *p == '>';
		if (mark)
			attron(COLOR_PAIR(C_MARK));
		/* long lines wrap at a space where one is near, continued under
		 * the value column ("  label     value") */
		int hang = hang_indent(p, n, r.w);
		int off = wrap_prefix(p, n, r.w);
		mvaddnstr(r.y + row, r.x, p, off);
		while (off < n && row + 1 < r.h) {
			while (off < n && p[off] == ' ')
				off++;
			int part = wrap_prefix(p + off, n - off, r.w - hang);
			mvaddnstr(r.y + ++row, r.x + hang, p + off, part);
			off += part;
		}
		if (mark)
			attroff(COLOR_PAIR(C_MARK));
		p = e ? e + 1 : p + n;
	}
	kb_buf_free(&text);
}

static void draw_title(tui *t)
{
	attron(COLOR_PAIR(C_TITLE));
	mvhline(0, 0, ' ', COLS);
	char state[128] = "idle";
	pthread_mutex_lock(&t->w.lock);
	if (t->w.busy || t->w.has_next)
		snprintf(state, sizeof state, "%s...", t->w.phase[0] ? t->w.phase : "queued");
	pthread_mutex_unlock(&t->w.lock);
	const char *verdict = t->res && t->res->run ? kb_app_run_verdict(t->res->run)
			      : t->res && t->res->compiled ? (t->res->unit.status == 0 ? "compiled" : "errors")
			      : "";
	if (t->steps)
		mvprintw(0, 0, " kbench-tui  replay %s  step %d/%d  %s  %s", t->o.replay, t->step + 1,
			 (int)json_array_size(t->steps), t->o.path, state);
	else
		mvprintw(0, 0, " kbench-tui  %s%s  [%s]  %s", t->o.path, kb_tui__ed_dirty(t->ed) ? " *" : "",
			 verdict, state);
	attroff(COLOR_PAIR(C_TITLE));
}

static void draw_status(tui *t)
{
	attron(COLOR_PAIR(C_STATUS));
	mvhline(LINES - 1, 0, ' ', COLS);
	static const char *const asks[] = {"", "find: ", "replace: ", "with: ", "go to line: ",
					  "unsaved edits: quit anyway? (y/n) ",
					  "a recovered buffer is newer than the file: use it? (y/n) "};
	const kb_diag *d = diag_on(t, t->ed->cur.line + 1);
	char keys[160];
	snprintf(keys, sizeof keys, "%d:%d  %s", t->ed->cur.line + 1, t->ed->cur.col + 1,
		 t->steps ? "replay: n/p step  < > first/last  F2/F3 panes  ^F find  F1 help  ^Q quit"
			  : "^S save+run  F5 run  F8 profile  F2/F3 panes  ^Z undo  ^F find  F1 help  ^Q quit");
	char said[512] = "";
	if (t->prompt != P_NONE)
		snprintf(said, sizeof said, "%s%s", asks[t->prompt], t->input.s ? t->input.s : "");
	else if (kb_now_ms() < t->msg_until)
		snprintf(said, sizeof said, "%s", t->msg);
	else if (d)
		snprintf(said, sizeof said, "%d:%d: %s", d->line, d->col, d->msg);
	if (!said[0])
		mvprintw(LINES - 1, 0, " %s", keys);
	else if (t->prompt == P_NONE && (int)(strlen(said) + strlen(keys)) + 6 <= COLS)
		mvprintw(LINES - 1, 0, " %s  |  %s", said, keys); /* a message, and the keys still */
	else
		mvprintw(LINES - 1, 0, " %s", said);
	attroff(COLOR_PAIR(C_STATUS));
}

static void draw(tui *t)
{
	erase();
	t->ok_size = kb_tui_layout(LINES, COLS, t->split, &t->L);
	if (!t->ok_size) {
		mvprintw(LINES / 2, 0, "kbench-tui needs at least 80x24 (now %dx%d)", COLS, LINES);
		refresh();
		return;
	}
	sync_highlight(t);
	draw_title(t);
	draw_editor(t);
	draw_tabs(t);
	draw_pane(t);
	draw_status(t);
	int gutter = snprintf(NULL, 0, "%d", t->ed->nlines) + 2;
	gutter = gutter < 5 ? 5 : gutter;
	if (t->prompt != P_NONE)
		curs_set(1);
	else
		move(t->L.editor.y + t->ed->cur.line - t->top,
		     t->L.editor.x + gutter + kb_tui__ed_x_of(t->ed, t->ed->cur.line, t->ed->cur.col) - t->left);
	refresh();
}

/* ---- keys ----------------------------------------------------------------------- */

#define CTRL(c) ((c) & 0x1f)

static void prompt_start(tui *t, prompt p)
{
	t->prompt = p;
	kb_buf_reset(&t->input);
	kb_buf_catn(&t->input, "", 0);
}

static void prompt_done(tui *t)
{
	const char *in = t->input.s ? t->input.s : "";
	prompt p = t->prompt;
	t->prompt = P_NONE;
	bool wrapped = false;
	switch (p) {
	case P_FIND:
		if (*in)
			snprintf(t->find, sizeof t->find, "%s", in);
		if (kb_tui__ed_search(t->ed, t->find, 0, &wrapped) < 0)
			set_msg(t, "not found: %s", t->find);
		else if (wrapped)
			set_msg(t, "search wrapped");
		break;
	case P_REPLACE_FROM:
		snprintf(t->find, sizeof t->find, "%s", in);
		prompt_start(t, P_REPLACE_TO);
		break;
	case P_REPLACE_TO: {
		int n = kb_tui__ed_replace_all(t->ed, t->find, in, 0);
		set_msg(t, "%d replaced", n < 0 ? 0 : n);
		break;
	}
	case P_GOTO:
		kb_tui__ed_goto(t->ed, atoi(in), 1);
		break;
	default:
		break;
	}
}

static void prompt_key(tui *t, int code, wint_t ch)
{
	if (!code && (ch == 27 || ch == CTRL('c'))) {
		t->prompt = P_NONE;
	} else if (t->prompt == P_QUIT || t->prompt == P_RECOVER) {
		bool yes = !code && (ch == 'y' || ch == 'Y');
		if (t->prompt == P_QUIT && yes)
			t->quit = true;
		if (t->prompt == P_RECOVER && yes) {
			kb_buf b = KB_BUF_INIT;
			if (kb_file_read(t->recover_path, &b, NULL) == 0)
				kb_tui__ed_select_all(t->ed), kb_tui__ed_paste_text(t->ed, b.s, b.len);
			kb_buf_free(&b);
			set_msg(t, "recovered the unsaved buffer (Ctrl-S writes it to %s)", t->o.path);
			submit(t);
		}
		t->prompt = P_NONE;
	} else if (!code && (ch == '\n' || ch == '\r')) {
		prompt_done(t);
	} else if ((code && ch == KEY_BACKSPACE) || (!code && (ch == 127 || ch == 8))) {
		if (t->input.len)
			t->input.s[--t->input.len] = '\0';
	} else if (!code && ch >= 32) {
		char mb[8];
		int n = wctomb(mb, (wchar_t)ch);
		if (n > 0)
			kb_buf_catn(&t->input, mb, (size_t)n);
	}
}

/* Function and editing keys; true when handled. */
static bool special_key(tui *t, int k)
{
	const char *name = keyname(k);
	kb_tui__ed *ed = t->ed;
	int page = t->L.editor.h > 1 ? t->L.editor.h - 1 : 1;
	switch (k) {
	case KEY_LEFT: kb_tui__ed_move(ed, KB_TUI__ED_LEFT, 1, false); return true;
	case KEY_RIGHT: kb_tui__ed_move(ed, KB_TUI__ED_RIGHT, 1, false); return true;
	case KEY_UP: kb_tui__ed_move(ed, KB_TUI__ED_UP, 1, false); return true;
	case KEY_DOWN: kb_tui__ed_move(ed, KB_TUI__ED_DOWN, 1, false); return true;
	case KEY_SLEFT: kb_tui__ed_move(ed, KB_TUI__ED_LEFT, 1, true); return true;
	case KEY_SRIGHT: kb_tui__ed_move(ed, KB_TUI__ED_RIGHT, 1, true); return true;
	case KEY_SR: kb_tui__ed_move(ed, KB_TUI__ED_UP, 1, true); return true;
	case KEY_SF: kb_tui__ed_move(ed, KB_TUI__ED_DOWN, 1, true); return true;
	case KEY_HOME: kb_tui__ed_move(ed, KB_TUI__ED_HOME, 1, false); return true;
	case KEY_END: kb_tui__ed_move(ed, KB_TUI__ED_END, 1, false); return true;
	case KEY_PPAGE: kb_tui__ed_move(ed, KB_TUI__ED_PAGE_UP, page, false); return true;
	case KEY_NPAGE: kb_tui__ed_move(ed, KB_TUI__ED_PAGE_DOWN, page, false); return true;
	case KEY_BACKSPACE: kb_tui__ed_backspace(ed, kb_now_ms()); return true;
	case KEY_DC: kb_tui__ed_delete_char(ed, kb_now_ms()); return true;
	case KEY_F(1): t->pane = KB_TUI__PANE_HELP, t->pane_top = 0; return true;
	case KEY_F(2): t->pane = (t->pane + KB_TUI__NPANES - 1) % KB_TUI__NPANES, t->pane_top = 0; return true;
	case KEY_F(3): t->pane = (t->pane + 1) % KB_TUI__NPANES, t->pane_top = 0; return true;
	case KEY_F(5): submit(t), set_msg(t, "compiling and running the buffer"); return true;
	case KEY_F(8): profile(t); return true;
	case KEY_F(6): t->split -= 5; return true;
	case KEY_F(7): t->split += 5; return true;
	case KEY_F(9): t->pane_top = t->pane_top > 10 ? t->pane_top - 10 : 0; return true;
	case KEY_F(10): t->pane_top += 10; return true;
	case KEY_RESIZE: return true;
	}
	if (!name)
		return false;
	static const struct { const char *name; kb_tui__ed_motion m; bool sel; } ext[] = {
		{"kLFT5", KB_TUI__ED_WORD_LEFT, false}, {"kRIT5", KB_TUI__ED_WORD_RIGHT, false},
		{"kLFT6", KB_TUI__ED_WORD_LEFT, true}, {"kRIT6", KB_TUI__ED_WORD_RIGHT, true},
		{"kHOM5", KB_TUI__ED_BUF_START, false}, {"kEND5", KB_TUI__ED_BUF_END, false},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(ext); i++)
		if (!strcmp(name, ext[i].name)) {
			kb_tui__ed_move(ed, ext[i].m, 1, ext[i].sel);
			return true;
		}
	return false;
}

static void mouse(tui *t)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & (BUTTON4_PRESSED)) {
		t->pane_top = t->pane_top > 3 ? t->pane_top - 3 : 0;
		return;
	}
	if (ev.bstate & (BUTTON5_PRESSED)) {
		t->pane_top += 3;
		return;
	}
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
		return;
	if (ev.y == t->L.tabs.y && ev.x >= t->L.tabs.x) {
		int x = t->L.tabs.x;
		for (int i = 0; i < KB_TUI__NPANES; i++) {
			int w = (int)strlen(kb_tui__pane_names[i]);
			if (ev.x >= x && ev.x < x + w)
				t->pane = i, t->pane_top = 0;
			x += w + 1;
		}
	} else if (ev.x < t->L.editor.x + t->L.editor.w && ev.y >= t->L.editor.y &&
		   ev.y < t->L.editor.y + t->L.editor.h) {
		int gutter = snprintf(NULL, 0, "%d", t->ed->nlines) + 2;
		gutter = gutter < 5 ? 5 : gutter;
		int line = t->top + ev.y - t->L.editor.y;
		kb_tui__ed_pos p = {line, kb_tui__ed_col_at_x(t->ed, line, ev.x - gutter + t->left)};
		kb_tui__ed_set_cursor(t->ed, p, false);
	}
}

/* ---- variants: select, diff, load ---------------------------------------- */

/* Ctrl-N / Ctrl-P: the first press selects the newest. */
static void select_variant(tui *t, int step)
{
	kb_err err = {0};
	int n = kb_app_variant_count(t->o.path, &err);
	if (n <= 0) {
		set_msg(t, "%s", n < 0 ? err.msg : "no variants yet: save a version that compiles");
		return;
	}
	int v = t->variant ? t->variant + step : n;
	t->variant = v < 1 ? 1 : v > n ? n : v;
	t->pane = KB_TUI__PANE_VARIANTS, t->pane_top = 0;
}

/* Ctrl-O: the selected variant's text replaces the buffer as one edit, so
 * Ctrl-Z brings back what was there; the file changes only on save. */
static void load_variant(tui *t)
{
	if (!t->variant) {
		set_msg(t, "select a variant first (Ctrl-N / Ctrl-P)");
		return;
	}
	char name[16], *text = NULL;
	size_t len = 0;
	kb_err err = {0};
	snprintf(name, sizeof name, "v%d", t->variant);
	if (kb_app_variant_text(name, t->o.path, &text, &len, &err) < 0) {
		set_msg(t, "%s", err.msg);
		return;
	}
	kb_tui__ed_select_all(t->ed);
	if (len)
		kb_tui__ed_paste_text(t->ed, text, len);
	else
		kb_tui__ed_delete_selection(t->ed);
	kb_tui__ed_goto(t->ed, 1, 0);
	free(text);
	set_msg(t, "%s is in the editor (Ctrl-Z undoes; Ctrl-S saves and runs it)", name);
}

/* A plain key: control keys are commands, the rest is typed. */
static void char_key(tui *t, wint_t ch)
{
	kb_tui__ed *ed = t->ed;
	double now = kb_now_ms();
	switch (ch) {
	case CTRL('s'): save(t); return;
	case CTRL('q'):
		if (kb_tui__ed_dirty(ed))
			prompt_start(t, P_QUIT);
		else
			t->quit = true;
		return;
	case CTRL('z'): if (kb_tui__ed_undo(ed) < 0) set_msg(t, "nothing to undo"); return;
	case CTRL('y'): if (kb_tui__ed_redo(ed) < 0) set_msg(t, "nothing to redo"); return;
	case CTRL('a'): kb_tui__ed_select_all(ed); return;
	case CTRL('c'): kb_tui__ed_copy(ed); return;
	case CTRL('x'): kb_tui__ed_cut(ed); return;
	case CTRL('v'): kb_tui__ed_paste(ed); return;
	case CTRL('f'): prompt_start(t, P_FIND); return;
	case CTRL('r'): prompt_start(t, P_REPLACE_FROM); return;
	case CTRL('g'): prompt_start(t, P_GOTO); return;
	case CTRL('n'): select_variant(t, +1); return;
	case CTRL('p'): select_variant(t, -1); return;
	case CTRL('d'): t->pane = KB_TUI__PANE_DIFF, t->pane_top = 0; return;
	case CTRL('o'): load_variant(t); return;
	case '\r':
	case '\n': kb_tui__ed_newline(ed, now); return;
	case 127:
	case 8: kb_tui__ed_backspace(ed, now); return;
	}
	if (ch < 32 && ch != '\t')
		return;
	char mb[8];
	int n = wctomb(mb, (wchar_t)ch);
	if (n > 0)
		kb_tui__ed_type(ed, mb, (size_t)n, now);
}

/* ESC: Alt-digit picks a pane; a lone ESC clears the selection. */
static void escape_key(tui *t)
{
	wint_t next;
	timeout(30);
	int rc = get_wch(&next);
	nodelay(stdscr, TRUE);
	if (rc == OK && next >= '1' && next <= '0' + KB_TUI__NPANES) {
		t->pane = (int)(next - '1');
		t->pane_top = 0;
	} else if (rc == ERR) {
		kb_tui__ed_set_cursor(t->ed, t->ed->cur, false);
	}
}

static void keys(tui *t)
{
	wint_t ch;
	int rc;
	while ((rc = get_wch(&ch)) != ERR) {
		if (!t->key_ms)
			t->key_ms = kb_now_ms();
		bool code = rc == KEY_CODE_YES;
		if (t->prompt != P_NONE)
			prompt_key(t, code, ch);
		else if (code && ch == KEY_MOUSE)
			mouse(t);
		else if (t->steps && !code && ch != 27 && replay_key(t, ch))
			;
		else if (t->steps && code && (ch == KEY_BACKSPACE || ch == KEY_DC))
			replay_key(t, 0);
		else if (code)
			special_key(t, (int)ch);
		else if (ch == 27)
			escape_key(t);
		else
			char_key(t, ch);
	}
}

/* ---- the loop ------------------------------------------------------------------- */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void take_result(tui *t)
{
	for (kb_tui__piece *p; (p = kb_tui__worker_take(&t->w));) {
		bool run = p->kind == KB_TUI__PIECE_RUN;
		char note[sizeof p->note];
		snprintf(note, sizeof note, "%s", run ? p->note : "");
		if (kb_tui__worker_merge(&t->res, p) && run && t->res->run)
			set_msg(t, "%s", kb_app_run_verdict(t->res->run));
		/* e.g. a run stopped by a newer save (whose compile may be shown
		 * already): the status bar says so either way */
		if (note[0])
			set_msg(t, "%s", note);
	}
}

static void loop(tui *t)
{
	struct pollfd pf[3] = {{0, POLLIN, 0}, {t->w.wake[0], POLLIN, 0}, {t->inotify, POLLIN, 0}};
	while (!t->quit && !got_signal) {
		draw(t);
		if (t->key_ms && t->latency_log)
			fprintf(t->latency_log, "%.3f\n", kb_now_ms() - t->key_ms);
		t->key_ms = 0;
		int n = poll(pf, t->inotify >= 0 ? 3 : 2, 250);
		if (n < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			keys(t);
		if (pf[1].revents)
			take_result(t);
		if (t->inotify >= 0 && pf[2].revents)
			file_changed(t);
		autosave(t);
	}
}

/* ---- replay: stepping through a recorded session -------------------------- */

/* Step i: the editor holds the newest text recorded at or before it (an
 * edit event has none of its own), compiled afresh for SASS/PTX/occupancy. */
static void go_step(tui *t, int i)
{
	int n = (int)json_array_size(t->steps);
	t->step = i < 0 ? 0 : i >= n ? n - 1 : i;
	json_t *with_text = NULL;
	for (int k = t->step; k >= 0 && !with_text; k--)
		if (json_object_get(json_array_get(t->steps, (size_t)k), "text"))
			with_text = json_array_get(t->steps, (size_t)k);
	if (!with_text)
		return;
	const char *text = json_string_value(json_object_get(with_text, "text"));
	const char *file = json_string_value(json_object_get(with_text, "file"));
	size_t len = json_string_length(json_object_get(with_text, "text"));
	kb_buf now = KB_BUF_INIT;
	kb_tui__ed_save_text(t->ed, &now);
	bool same = now.len == len && (!len || !memcmp(now.s, text, len)) && t->replay_file &&
		    !strcmp(t->replay_file, file);
	kb_buf_free(&now);
	if (same)
		return;
	free(t->replay_file);
	t->replay_file = kb_xstrdup(file);
	t->o.path = t->replay_file;
	kb_tui__ed_load(t->ed, text, len);
	t->top = t->left = 0;
	submit(t);
}

/* The session's steps; the editor starts at the first that has a text. */
static int start_replay(tui *t, kb_err *err)
{
	int rc = kb_app_replay_steps(t->o.replay, &t->steps, err);
	if (rc < 0)
		return rc;
	/* Variants, Diff and Roofline then show the replayed session. */
	setenv("KBENCH_SESSION", t->o.replay, 1);
	size_t first = 0;
	while (first < json_array_size(t->steps) &&
	       !json_object_get(json_array_get(t->steps, first), "text"))
		first++;
	if (first == json_array_size(t->steps))
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
				  "session %s has no recorded variant to replay", t->o.replay);
	json_t *s = json_array_get(t->steps, first);
	t->replay_file = kb_xstrdup(json_string_value(json_object_get(s, "file")));
	t->o.path = t->replay_file;
	t->step = (int)first;
	t->ed = kb_tui__ed_new();
	kb_tui__ed_load(t->ed, json_string_value(json_object_get(s, "text")),
			json_string_length(json_object_get(s, "text")));
	return 0;
}

/* Replay is read-only: n/p/</> step, moving and finding work, edits do not. */
static bool replay_key(tui *t, wint_t ch)
{
	switch (ch) {
	case 'n': case ' ': go_step(t, t->step + 1); return true;
	case 'p': go_step(t, t->step - 1); return true;
	case '<': go_step(t, 0); return true;
	case '>': go_step(t, (int)json_array_size(t->steps) - 1); return true;
	case CTRL('q'): case CTRL('f'): case CTRL('g'): case CTRL('c'): case CTRL('a'): case CTRL('d'):
	case CTRL('n'): case CTRL('p'):
		return false;
	}
	set_msg(t, "replay is read-only: n / p next / previous step, < > first / last, ^Q quits");
	return true;
}

static int start(tui *t, kb_err *err)
{
	kb_buf text = KB_BUF_INIT;
	int rc = t->o.replay ? start_replay(t, err) : kb_file_read(t->o.path, &text, err);
	if (rc < 0) {
		kb_buf_free(&text);
		return rc;
	}
	if (!t->o.replay) {
		t->ed = kb_tui__ed_new();
		kb_tui__ed_load(t->ed, text.s, text.len);
	}
	kb_buf_free(&text);
	const char *ext = kb_extension(t->o.path);
	kb_hl_lang lang = !strcmp(ext, "ptx") ? KB_HL_LANG_PTX : KB_HL_LANG_CUDA;
	if (kb_tui__hl_new(&t->hl, lang, NULL, NULL) < 0)
		t->hl = NULL; /* plain text, still editable */
	t->split = 55;
	t->inotify = -1;
	t->mtime = mtime_of(t->o.path);
	t->recover_path = t->o.replay ? NULL : recovery_path(t->o.path);
	if (t->o.watch && !t->o.replay) {
		t->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		char *dir = kb_xstrdup(t->o.path), *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		if (t->inotify >= 0)
			inotify_add_watch(t->inotify, slash ? dir : ".", IN_CLOSE_WRITE | IN_MOVED_TO);
		free(dir);
	}
	rc = kb_tui__worker_start(&t->w, t->o.arch, !t->o.no_run && !t->o.replay, err);
	t->w.timeout_ms = t->o.timeout_ms;
	t->w.options = t->o.options;
	t->w.noptions = t->o.noptions;
	if (t->o.replay)
		t->w.record = false; /* the replayed texts are already in their session */
	return rc;
}

/* A recovery file that differs from the file: offer it. */
static void offer_recovery(tui *t)
{
	kb_buf rec = KB_BUF_INIT, now = KB_BUF_INIT;
	if (kb_file_read(t->recover_path, &rec, NULL) == 0) {
		kb_tui__ed_save_text(t->ed, &now);
		if (rec.len != now.len || memcmp(rec.s, now.s, rec.len))
			prompt_start(t, P_RECOVER);
	}
	kb_buf_free(&rec);
	kb_buf_free(&now);
}

static void screen_on(tui *t)
{
	if (!getenv("ESCDELAY"))
		setenv("ESCDELAY", "25", 1);
	initscr();
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	init_colors(t);
}

int kb_tui_run(const kb_tui_opts *o)
{
	tui t;
	memset(&t, 0, sizeof t);
	t.o = *o;
	setlocale(LC_ALL, "");
	kb_err err = {0};
	if (start(&t, &err) < 0) {
		fprintf(stderr, "kbench-tui: %s\n", err.msg);
		return 3;
	}
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	const char *lat = getenv("KBENCH_TUI_LATENCY");
	t.latency_log = lat && *lat ? fopen(lat, "w") : NULL;
	screen_on(&t);
	if (!t.o.replay)
		offer_recovery(&t);
	submit(&t);
	loop(&t);
	endwin();
	kb_tui__worker_stop(&t.w);
	if (t.recover_path && !kb_tui__ed_dirty(t.ed))
		unlink(t.recover_path);
	json_decref(t.steps);
	free(t.replay_file);
	kb_buf_free(&t.session_text);
	kb_tui__result_free(t.res);
	kb_tui__hl_free(t.hl);
	kb_tui__ed_free(t.ed);
	kb_buf_free(&t.input);
	free(t.recover_path);
	if (t.latency_log)
		fclose(t.latency_log);
	if (t.inotify >= 0)
		close(t.inotify);
	return got_signal ? 128 + got_signal : 0;
}
