/*
 * test_tui_editor.c - the editor pane's text model (src/tui/editor.c):
 * load/save with CRLF, UTF-8 movement and display width, word and vertical
 * moves, selection and clipboard, undo groups, auto-indent, search and
 * replace, edit events, a random-edit consistency check, and the timing of
 * typing into a 10k-line buffer (printed, bound loosely).  No terminal.
 */
#include "t.h"

#include "../../src/tui/tui_int.h"

#include <locale.h>

#define P(l, c) ((kb_tui__ed_pos){(l), (c)})
#define T_CUR(ed, l, c) do { T_EQ_INT((ed)->cur.line, (l)); T_EQ_INT((ed)->cur.col, (c)); } while (0)

/* ---- helpers ------------------------------------------------------------ */

static kb_tui__ed *mk(const char *s)
{
	kb_tui__ed *ed = kb_tui__ed_new();
	kb_tui__ed_load(ed, s, strlen(s));
	return ed;
}

/* The LF text (static buffer, valid until the next call). */
static const char *txt(const kb_tui__ed *ed)
{
	static char *last;
	free(last);
	kb_buf b = KB_BUF_INIT;
	kb_tui__ed_text(ed, &b);
	last = kb_buf_detach(&b);
	return last;
}

static const char *saved(const kb_tui__ed *ed)
{
	static char *last;
	free(last);
	kb_buf b = KB_BUF_INIT;
	kb_tui__ed_save_text(ed, &b);
	last = kb_buf_detach(&b);
	return last;
}

static void mv(kb_tui__ed *ed, kb_tui__ed_motion m)
{
	kb_tui__ed_move(ed, m, 1, false);
}

static void type_str(kb_tui__ed *ed, const char *s, double t)
{
	kb_tui__ed_type(ed, s, strlen(s), t);
}

/* ---- load / save -------------------------------------------------------- */

static void test_tui_editor__load_save_lf(void)
{
	kb_tui__ed *ed = mk("a\nb\n");
	T_EQ_INT(ed->nlines, 3);
	T_EQ_STR(txt(ed), "a\nb\n");
	T_EQ_STR(saved(ed), "a\nb\n");
	T_OK(!ed->crlf);
	kb_tui__ed_load(ed, "no newline", 10);
	T_EQ_INT(ed->nlines, 1);
	T_EQ_STR(saved(ed), "no newline");
	kb_tui__ed_load(ed, "", 0);
	T_EQ_INT(ed->nlines, 1);
	T_EQ_STR(txt(ed), "");
	int len;
	T_EQ_STR(kb_tui__ed_line(ed, 0, &len), "");
	T_EQ_INT(len, 0);
	kb_tui__ed_free(ed);
}

static void test_tui_editor__crlf_round_trip(void)
{
	kb_tui__ed *ed = mk("int a;\r\nint b;\r\n");
	T_OK(ed->crlf);
	T_EQ_INT(ed->nlines, 3);
	T_EQ_STR(txt(ed), "int a;\nint b;\n");
	T_EQ_STR(saved(ed), "int a;\r\nint b;\r\n");
	/* an edit with a newline is written back as CRLF too */
	kb_tui__ed_insert(ed, P(1, 0), "x\n", 2);
	T_EQ_STR(saved(ed), "int a;\r\nx\r\nint b;\r\n");
	/* LF first: a stray \r is kept byte-exact */
	kb_tui__ed_load(ed, "a\nb\r\nc", 6);
	T_OK(!ed->crlf);
	T_EQ_STR(saved(ed), "a\nb\r\nc");
	/* CRLF first, mixed: made uniform */
	kb_tui__ed_load(ed, "a\r\nb\nc\r\n", 8);
	T_OK(ed->crlf);
	T_EQ_STR(saved(ed), "a\r\nb\r\nc\r\n");
	/* a lone \r inside a CRLF file stays a byte */
	kb_tui__ed_load(ed, "a\rb\r\n", 5);
	T_EQ_STR(txt(ed), "a\rb\n");
	T_EQ_STR(saved(ed), "a\rb\r\n");
	kb_tui__ed_free(ed);
}

/* ---- UTF-8 -------------------------------------------------------------- */

static void test_tui_editor__utf8_decode(void)
{
	unsigned cp;
	T_EQ_INT(kb_tui__utf8_decode("\xc3\xa9", 2, &cp), 2);
	T_EQ_INT(cp, 0xE9);
	T_EQ_INT(kb_tui__utf8_decode("\xe4\xb8\xad", 3, &cp), 3);
	T_EQ_INT(cp, 0x4E2D);
	T_EQ_INT(kb_tui__utf8_decode("\xf0\x9f\x99\x82", 4, &cp), 4);
	T_EQ_INT(cp, 0x1F642);
	T_EQ_INT(kb_tui__utf8_decode("\xff", 1, &cp), 1);
	T_EQ_INT(cp, 0xFFFD);
	T_EQ_INT(kb_tui__utf8_decode("\xe4\xb8", 2, &cp), 1); /* truncated */
	T_EQ_INT(kb_tui__utf8_decode("\xc0\x80", 2, &cp), 1); /* overlong */
	T_EQ_INT(kb_tui__utf8_decode("\xed\xa0\x80", 3, &cp), 1); /* surrogate */
	T_EQ_INT(kb_tui__cp_width('a'), 1);
	T_EQ_INT(kb_tui__cp_width(0x4E2D), 2);
	T_EQ_INT(kb_tui__cp_width(0x1F642), 2);
	T_EQ_INT(kb_tui__cp_width(0x301), 0);
	T_EQ_INT(kb_tui__cp_width(0x01), 2);
}

static void test_tui_editor__utf8_movement(void)
{
	/* a é 中 🙂 b: byte starts 0 1 3 6 10, end 11 */
	kb_tui__ed *ed = mk("a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x99\x82" "b\nx");
	int stops[] = {0, 1, 3, 6, 10, 11};
	for (int i = 1; i < 6; i++) {
		mv(ed, KB_TUI__ED_RIGHT);
		T_CUR(ed, 0, stops[i]);
	}
	mv(ed, KB_TUI__ED_RIGHT); /* past the end: next line */
	T_CUR(ed, 1, 0);
	mv(ed, KB_TUI__ED_LEFT);
	T_CUR(ed, 0, 11);
	for (int i = 4; i >= 0; i--) {
		mv(ed, KB_TUI__ED_LEFT);
		T_CUR(ed, 0, stops[i]);
	}
	mv(ed, KB_TUI__ED_LEFT); /* at the buffer start: stays */
	T_CUR(ed, 0, 0);
	/* display columns: 1 + 1 + 2 + 2 + 1 */
	T_EQ_INT(kb_tui__ed_x_of(ed, 0, 3), 2);
	T_EQ_INT(kb_tui__ed_x_of(ed, 0, 6), 4);
	T_EQ_INT(kb_tui__ed_x_of(ed, 0, 10), 6);
	T_EQ_INT(kb_tui__ed_x_of(ed, 0, 11), 7);
	T_EQ_INT(kb_tui__ed_col_at_x(ed, 0, 3), 3); /* inside 中: before it */
	T_EQ_INT(kb_tui__ed_col_at_x(ed, 0, 4), 6);
	T_EQ_INT(kb_tui__ed_col_at_x(ed, 0, 99), 11);
	/* set_cursor snaps off continuation bytes */
	kb_tui__ed_set_cursor(ed, P(0, 8), false);
	T_CUR(ed, 0, 6);
	kb_tui__ed_free(ed);
}

static void test_tui_editor__grapheme_units(void)
{
	/* e + combining acute, then x: one unit of 3 bytes, width 1 */
	kb_tui__ed *ed = mk("e\xcc\x81x");
	mv(ed, KB_TUI__ED_RIGHT);
	T_CUR(ed, 0, 3);
	T_EQ_INT(kb_tui__ed_x_of(ed, 0, 3), 1);
	mv(ed, KB_TUI__ED_RIGHT);
	mv(ed, KB_TUI__ED_LEFT);
	mv(ed, KB_TUI__ED_LEFT);
	T_CUR(ed, 0, 0);
	/* man ZWJ woman, then x: one unit */
	kb_tui__ed_load(ed, "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9x", 12);
	mv(ed, KB_TUI__ED_RIGHT);
	T_CUR(ed, 0, 11);
	mv(ed, KB_TUI__ED_LEFT);
	T_CUR(ed, 0, 0);
	/* invalid bytes are single units */
	kb_tui__ed_load(ed, "\xff\xfe" "a", 3);
	mv(ed, KB_TUI__ED_RIGHT);
	T_CUR(ed, 0, 1);
	mv(ed, KB_TUI__ED_RIGHT);
	T_CUR(ed, 0, 2);
	mv(ed, KB_TUI__ED_LEFT);
	T_CUR(ed, 0, 1);
	kb_tui__ed_free(ed);
}

static void test_tui_editor__tabs(void)
{
	kb_tui__ed *ed = mk("\tx\nab\tc");
	T_EQ_INT(kb_tui__ed_x_of(ed, 0, 1), 8);
	T_EQ_INT(kb_tui__ed_x_of(ed, 1, 3), 8);
	T_EQ_INT(kb_tui__ed_col_at_x(ed, 1, 5), 2);
	T_EQ_INT(kb_tui__ed_col_at_x(ed, 1, 8), 3);
	kb_tui__ed_set_tab_width(ed, 4);
	T_EQ_INT(kb_tui__ed_x_of(ed, 0, 1), 4);
	T_EQ_INT(kb_tui__ed_x_of(ed, 1, 3), 4);
	/* vertical move keeps the display column across tabs */
	kb_tui__ed_set_cursor(ed, P(1, 4), false); /* after c: x = 5 */
	mv(ed, KB_TUI__ED_UP);
	T_CUR(ed, 0, 2); /* "\tx": x = 5 is the end */
	kb_tui__ed_free(ed);
}

/* ---- moves -------------------------------------------------------------- */

static void test_tui_editor__word_moves(void)
{
	kb_tui__ed *ed = mk("foo_bar, baz(qux)\n  h\xc3\xa9llo w\xc3\xb6rld");
	int right[] = {7, 8, 12, 13, 16, 17};
	for (size_t i = 0; i < KB_ARRAY_LEN(right); i++) {
		kb_tui__ed_move(ed, KB_TUI__ED_WORD_RIGHT, 1, false);
		T_CUR(ed, 0, right[i]);
	}
	kb_tui__ed_move(ed, KB_TUI__ED_WORD_RIGHT, 1, false);
	T_CUR(ed, 1, 0);
	kb_tui__ed_move(ed, KB_TUI__ED_WORD_RIGHT, 1, false);
	T_CUR(ed, 1, 8); /* "héllo" is 6 bytes after 2 blanks */
	kb_tui__ed_move(ed, KB_TUI__ED_WORD_RIGHT, 1, false);
	T_CUR(ed, 1, 15);
	kb_tui__ed_move(ed, KB_TUI__ED_WORD_LEFT, 1, false);
	T_CUR(ed, 1, 9);
	kb_tui__ed_move(ed, KB_TUI__ED_WORD_LEFT, 1, false);
	T_CUR(ed, 1, 2);
	kb_tui__ed_move(ed, KB_TUI__ED_WORD_LEFT, 1, false);
	T_CUR(ed, 1, 0);
	kb_tui__ed_move(ed, KB_TUI__ED_WORD_LEFT, 1, false);
	T_CUR(ed, 0, 17);
	int left[] = {16, 13, 12, 9, 7, 0};
	for (size_t i = 0; i < KB_ARRAY_LEN(left); i++) {
		kb_tui__ed_move(ed, KB_TUI__ED_WORD_LEFT, 1, false);
		T_CUR(ed, 0, left[i]);
	}
	kb_tui__ed_free(ed);
}

static void test_tui_editor__vertical_pref_col(void)
{
	kb_tui__ed *ed = mk("abcdefgh\nab\nabcdefgh\n\xe4\xb8\xad\xe4\xb8\xad\nabcdef");
	kb_tui__ed_set_cursor(ed, P(0, 6), false);
	mv(ed, KB_TUI__ED_DOWN);
	T_CUR(ed, 1, 2);
	mv(ed, KB_TUI__ED_DOWN);
	T_CUR(ed, 2, 6);
	/* x = 3 falls inside the second 中: stop before it, keep x = 3 */
	kb_tui__ed_set_cursor(ed, P(2, 3), false);
	mv(ed, KB_TUI__ED_DOWN);
	T_CUR(ed, 3, 3);
	mv(ed, KB_TUI__ED_DOWN);
	T_CUR(ed, 4, 3);
	/* after 2 中 (x = 4) to an ASCII line: col 4 */
	kb_tui__ed_set_cursor(ed, P(3, 6), false);
	mv(ed, KB_TUI__ED_UP);
	T_CUR(ed, 2, 4);
	/* a horizontal move resets the preferred column */
	kb_tui__ed_set_cursor(ed, P(0, 8), false);
	mv(ed, KB_TUI__ED_DOWN);
	T_CUR(ed, 1, 2);
	mv(ed, KB_TUI__ED_LEFT);
	mv(ed, KB_TUI__ED_DOWN);
	T_CUR(ed, 2, 1);
	/* past the edges */
	kb_tui__ed_set_cursor(ed, P(0, 3), false);
	mv(ed, KB_TUI__ED_UP);
	T_CUR(ed, 0, 0);
	kb_tui__ed_set_cursor(ed, P(4, 2), false);
	mv(ed, KB_TUI__ED_DOWN);
	T_CUR(ed, 4, 6);
	kb_tui__ed_free(ed);
}

static void test_tui_editor__home_end_page(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_buf_cat(&b, "    int x;\n");
	for (int i = 1; i < 100; i++)
		kb_buf_catf(&b, "line %d\n", i);
	kb_tui__ed *ed = mk(b.s);
	kb_buf_free(&b);
	kb_tui__ed_set_cursor(ed, P(0, 7), false);
	mv(ed, KB_TUI__ED_HOME);
	T_CUR(ed, 0, 4);
	mv(ed, KB_TUI__ED_HOME);
	T_CUR(ed, 0, 0);
	mv(ed, KB_TUI__ED_HOME);
	T_CUR(ed, 0, 4);
	mv(ed, KB_TUI__ED_END);
	T_CUR(ed, 0, 10);
	kb_tui__ed_move(ed, KB_TUI__ED_PAGE_DOWN, 20, false);
	T_CUR(ed, 20, 7); /* "line 20" is 7 long: clamped */
	kb_tui__ed_move(ed, KB_TUI__ED_PAGE_DOWN, 20, false);
	T_CUR(ed, 40, 7);
	kb_tui__ed_move(ed, KB_TUI__ED_PAGE_UP, 30, false);
	T_CUR(ed, 10, 7);
	kb_tui__ed_move(ed, KB_TUI__ED_PAGE_UP, 30, false);
	T_CUR(ed, 0, 0);
	mv(ed, KB_TUI__ED_BUF_END);
	T_CUR(ed, 100, 0);
	mv(ed, KB_TUI__ED_BUF_START);
	T_CUR(ed, 0, 0);
	kb_tui__ed_goto(ed, 3, 2);
	T_CUR(ed, 2, 1);
	kb_tui__ed_goto(ed, 1000, 1);
	T_CUR(ed, 100, 0);
	kb_tui__ed_goto(ed, 0, 0);
	T_CUR(ed, 0, 0);
	kb_tui__ed_goto(ed, 1, 99);
	T_CUR(ed, 0, 10);
	kb_tui__ed_free(ed);
}

/* ---- selection and clipboard -------------------------------------------- */

static void test_tui_editor__select_cut_paste(void)
{
	const char *orig = "hello world\nsecond line\n";
	kb_tui__ed *ed = mk(orig);
	size_t n;
	kb_tui__ed_set_cursor(ed, P(0, 6), false);
	kb_tui__ed_set_cursor(ed, P(1, 6), true);
	char *sel = kb_tui__ed_selected_text(ed, &n);
	T_EQ_STR(sel, "world\nsecond");
	T_EQ_INT(n, 12);
	free(sel);
	kb_tui__ed_cut(ed);
	T_EQ_STR(txt(ed), "hello  line\n");
	T_CUR(ed, 0, 6);
	T_OK(!kb_tui__ed_selection(ed, NULL, NULL));
	kb_tui__ed_paste(ed);
	T_EQ_STR(txt(ed), orig);
	T_CUR(ed, 1, 6);
	kb_tui__ed_paste(ed); /* the clipboard stays */
	T_EQ_STR(txt(ed), "hello world\nsecondworld\nsecond line\n");
	T_EQ_INT(kb_tui__ed_undo(ed), 0);
	T_EQ_INT(kb_tui__ed_undo(ed), 0);
	T_EQ_STR(txt(ed), "hello  line\n");
	T_EQ_INT(kb_tui__ed_undo(ed), 0);
	T_EQ_STR(txt(ed), orig);
	T_CUR(ed, 1, 6); /* where the cursor was before the cut */
	T_EQ_INT(kb_tui__ed_undo(ed), KB_ENOTFOUND);
	/* select all, copy */
	kb_tui__ed_select_all(ed);
	kb_tui__ed_copy(ed);
	T_EQ_STR(ed->clip.s, orig);
	/* shift-left builds a selection; a plain left collapses to its start */
	kb_tui__ed_set_cursor(ed, P(0, 5), false);
	kb_tui__ed_move(ed, KB_TUI__ED_LEFT, 1, true);
	kb_tui__ed_move(ed, KB_TUI__ED_LEFT, 1, true);
	sel = kb_tui__ed_selected_text(ed, NULL);
	T_EQ_STR(sel, "lo");
	free(sel);
	mv(ed, KB_TUI__ED_RIGHT);
	T_CUR(ed, 0, 5);
	T_OK(!kb_tui__ed_selection(ed, NULL, NULL));
	sel = kb_tui__ed_selected_text(ed, &n);
	T_EQ_STR(sel, "");
	T_EQ_INT(n, 0);
	free(sel);
	/* delete_selection, and with none */
	kb_tui__ed_set_cursor(ed, P(0, 0), false);
	kb_tui__ed_set_cursor(ed, P(0, 6), true);
	T_OK(kb_tui__ed_delete_selection(ed));
	T_EQ_STR(txt(ed), "world\nsecond line\n");
	T_OK(!kb_tui__ed_delete_selection(ed));
	kb_tui__ed_free(ed);
}

static void test_tui_editor__paste_is_one_step(void)
{
	kb_tui__ed *ed = mk("abc XYZ def");
	kb_tui__ed_set_cursor(ed, P(0, 4), false);
	kb_tui__ed_set_cursor(ed, P(0, 7), true);
	kb_tui__ed_paste_text(ed, "one\r\ntwo\rthree", 14);
	T_EQ_STR(txt(ed), "abc one\ntwo\nthree def");
	T_CUR(ed, 2, 5);
	T_EQ_INT(kb_tui__ed_undo(ed), 0);
	T_EQ_STR(txt(ed), "abc XYZ def");
	T_EQ_INT(kb_tui__ed_redo(ed), 0);
	T_EQ_STR(txt(ed), "abc one\ntwo\nthree def");
	T_CUR(ed, 2, 5);
	/* typing over a selection: one step */
	kb_tui__ed_set_cursor(ed, P(0, 0), false);
	kb_tui__ed_set_cursor(ed, P(1, 3), true);
	type_str(ed, "Z", 0);
	T_EQ_STR(txt(ed), "Z\nthree def");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abc one\ntwo\nthree def");
	kb_tui__ed_free(ed);
}

/* ---- undo --------------------------------------------------------------- */

static void test_tui_editor__undo_typing_groups(void)
{
	kb_tui__ed *ed = mk("");
	type_str(ed, "a", 0);
	type_str(ed, "b", 100);
	type_str(ed, "c", 900);
	type_str(ed, "d", 2000); /* idle > 1 s: new step */
	type_str(ed, "e", 2100);
	T_EQ_STR(txt(ed), "abcde");
	T_EQ_INT(ed->nundo, 2); /* typed runs merge into one record each */
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abc");
	T_CUR(ed, 0, 3);
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "");
	T_CUR(ed, 0, 0);
	T_EQ_INT(kb_tui__ed_redo(ed), 0);
	T_EQ_STR(txt(ed), "abc");
	T_CUR(ed, 0, 3);
	T_EQ_INT(kb_tui__ed_redo(ed), 0);
	T_EQ_STR(txt(ed), "abcde");
	T_EQ_INT(kb_tui__ed_redo(ed), KB_ENOTFOUND);
	/* an edit that changes nothing keeps redo */
	kb_tui__ed_undo(ed);
	mv(ed, KB_TUI__ED_BUF_END);
	kb_tui__ed_delete_char(ed, 0);
	T_EQ_INT(kb_tui__ed_redo(ed), 0);
	T_EQ_STR(txt(ed), "abcde");
	/* a cursor jump starts a new step */
	mv(ed, KB_TUI__ED_LEFT);
	mv(ed, KB_TUI__ED_RIGHT);
	type_str(ed, "f", 2200);
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abcde");
	/* a new edit clears redo */
	type_str(ed, "g", 2300);
	T_EQ_INT(kb_tui__ed_redo(ed), KB_ENOTFOUND);
	/* a non-char edit (Enter) is its own step, and so is typing after it */
	type_str(ed, "h", 2400);
	kb_tui__ed_newline(ed, 2500);
	type_str(ed, "i", 2600);
	T_EQ_STR(txt(ed), "abcdegh\ni");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abcdegh\n");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abcdegh");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abcde");
	/* backspaces merge; a clock going backwards starts a new step */
	kb_tui__ed_backspace(ed, 3000);
	kb_tui__ed_backspace(ed, 3100);
	kb_tui__ed_backspace(ed, 50);
	T_EQ_STR(txt(ed), "ab");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abc");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "abcde");
	T_CUR(ed, 0, 5);
	kb_tui__ed_free(ed);
}

static void test_tui_editor__dirty_and_changes(void)
{
	kb_tui__ed *ed = mk("x");
	unsigned long c0 = ed->changes;
	T_OK(!kb_tui__ed_dirty(ed));
	type_str(ed, "a", 0);
	T_OK(kb_tui__ed_dirty(ed));
	T_EQ_INT(ed->changes, c0 + 1);
	kb_tui__ed_undo(ed);
	T_OK(!kb_tui__ed_dirty(ed));
	T_EQ_INT(ed->changes, c0 + 2);
	kb_tui__ed_redo(ed);
	T_OK(kb_tui__ed_dirty(ed));
	kb_tui__ed_mark_saved(ed);
	T_OK(!kb_tui__ed_dirty(ed));
	type_str(ed, "b", 10); /* would merge, but saving closed the step */
	T_OK(kb_tui__ed_dirty(ed));
	kb_tui__ed_undo(ed);
	T_OK(!kb_tui__ed_dirty(ed));
	T_EQ_STR(txt(ed), "ax");
	kb_tui__ed_undo(ed);
	T_OK(kb_tui__ed_dirty(ed));
	type_str(ed, "c", 20); /* the saved state is now unreachable */
	T_OK(kb_tui__ed_dirty(ed));
	kb_tui__ed_undo(ed);
	T_OK(kb_tui__ed_dirty(ed));
	kb_tui__ed_free(ed);
}

static void test_tui_editor__backspace_delete(void)
{
	kb_tui__ed *ed = mk("ab\n\xf0\x9f\x99\x82" "e\xcc\x81z");
	kb_tui__ed_set_cursor(ed, P(1, 0), false);
	kb_tui__ed_backspace(ed, 0); /* joins the lines */
	T_EQ_STR(txt(ed), "ab\xf0\x9f\x99\x82" "e\xcc\x81z");
	T_CUR(ed, 0, 2);
	kb_tui__ed_delete_char(ed, 0); /* the emoji: 4 bytes */
	T_EQ_STR(txt(ed), "abe\xcc\x81z");
	kb_tui__ed_delete_char(ed, 10); /* e + combining: one unit */
	T_EQ_STR(txt(ed), "abz");
	kb_tui__ed_load(ed, "e\xcc\x81", 3);
	mv(ed, KB_TUI__ED_END);
	kb_tui__ed_backspace(ed, 0); /* backspace takes one code point */
	T_EQ_STR(txt(ed), "e");
	kb_tui__ed_load(ed, "a\nb", 3);
	mv(ed, KB_TUI__ED_END);
	kb_tui__ed_delete_char(ed, 0);
	T_EQ_STR(txt(ed), "ab");
	mv(ed, KB_TUI__ED_BUF_END);
	kb_tui__ed_delete_char(ed, 0); /* at the end: nothing */
	mv(ed, KB_TUI__ED_BUF_START);
	kb_tui__ed_backspace(ed, 0);   /* at the start: nothing */
	T_EQ_STR(txt(ed), "ab");
	kb_tui__ed_delete_range(ed, P(0, 2), P(0, 1)); /* either order */
	T_EQ_STR(txt(ed), "a");
	kb_tui__ed_insert(ed, P(5, 5), "\nz\n", 3); /* clamped to the end */
	T_EQ_STR(txt(ed), "a\nz\n");
	T_CUR(ed, 2, 0);
	kb_tui__ed_free(ed);
}

/* ---- auto-indent -------------------------------------------------------- */

static void test_tui_editor__auto_indent(void)
{
	kb_tui__ed *ed = mk("int f(void) {\n\tx = 1;\n\tif (a) {\n}\n");
	T_OK(ed->indent_tabs);
	kb_tui__ed_goto(ed, 2, 99);
	kb_tui__ed_newline(ed, 0);
	T_CUR(ed, 2, 1);
	T_EQ_STR(kb_tui__ed_line(ed, 2, NULL), "\t");
	kb_tui__ed_goto(ed, 4, 99); /* "\tif (a) {" */
	kb_tui__ed_newline(ed, 0);
	T_EQ_STR(kb_tui__ed_line(ed, 4, NULL), "\t\t");
	T_CUR(ed, 4, 2);
	type_str(ed, "}", 0); /* electric brace */
	T_EQ_STR(kb_tui__ed_line(ed, 4, NULL), "\t}");
	kb_tui__ed_undo(ed);
	kb_tui__ed_undo(ed);
	T_EQ_STR(kb_tui__ed_line(ed, 3, NULL), "\tif (a) {");
	T_EQ_INT(ed->nlines, 6);
	/* {|} splits onto three lines */
	kb_tui__ed_load(ed, "\tg() {}", 7);
	kb_tui__ed_set_cursor(ed, P(0, 6), false);
	kb_tui__ed_newline(ed, 0);
	T_EQ_STR(txt(ed), "\tg() {\n\t\t\n\t}");
	T_CUR(ed, 1, 2);
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "\tg() {}");
	/* trailing blanks after '{' still count; the cursor inside the
	 * leading blanks copies only what is before it */
	kb_tui__ed_load(ed, "{  \n    x", 9);
	kb_tui__ed_set_cursor(ed, P(0, 3), false);
	kb_tui__ed_newline(ed, 0);
	T_CUR(ed, 1, 4); /* spaces file: unit of 4 */
	kb_tui__ed_set_cursor(ed, P(2, 2), false);
	kb_tui__ed_newline(ed, 0);
	T_EQ_STR(kb_tui__ed_line(ed, 2, NULL), "  ");
	T_EQ_STR(kb_tui__ed_line(ed, 3, NULL), "    x");
	/* Enter replaces a selection */
	kb_tui__ed_load(ed, "abcd", 4);
	kb_tui__ed_set_cursor(ed, P(0, 1), false);
	kb_tui__ed_set_cursor(ed, P(0, 3), true);
	kb_tui__ed_newline(ed, 0);
	T_EQ_STR(txt(ed), "a\nd");
	kb_tui__ed_free(ed);
}

static void test_tui_editor__indent_detection(void)
{
	kb_tui__ed *ed = mk("int f() {\n    a;\n    if (b) {\n        c;\n    }\n}\n");
	T_OK(!ed->indent_tabs);
	T_EQ_INT(ed->indent_width, 4);
	kb_tui__ed_goto(ed, 3, 99);
	kb_tui__ed_newline(ed, 0);
	T_EQ_STR(kb_tui__ed_line(ed, 3, NULL), "        ");
	type_str(ed, "}", 0);
	T_EQ_STR(kb_tui__ed_line(ed, 3, NULL), "    }");
	kb_tui__ed_load(ed, "a {\n  b {\n    c;\n  }\n  /*\n   * x\n   */\n}\n", 40);
	T_OK(!ed->indent_tabs);
	T_EQ_INT(ed->indent_width, 2);
	kb_tui__ed_load(ed, "plain\ntext\n", 11);
	T_OK(ed->indent_tabs); /* default */
	kb_tui__ed_free(ed);
}

/* ---- search and replace ------------------------------------------------- */

static void test_tui_editor__search(void)
{
	kb_tui__ed *ed = mk("abc\nxabc\nab ABC");
	bool wrapped = true;
	T_EQ_INT(kb_tui__ed_search(ed, "abc", 0, &wrapped), 0);
	T_OK(!wrapped);
	T_EQ_INT(ed->anchor.col, 0);
	T_CUR(ed, 0, 3);
	T_EQ_INT(kb_tui__ed_search(ed, "abc", 0, &wrapped), 0);
	T_CUR(ed, 1, 4);
	T_EQ_INT(kb_tui__ed_search(ed, "abc", 0, &wrapped), 0);
	T_CUR(ed, 0, 3);
	T_OK(wrapped);
	T_EQ_INT(kb_tui__ed_search(ed, "abc", KB_TUI__ED_NOCASE, &wrapped), 0);
	T_CUR(ed, 1, 4);
	T_EQ_INT(kb_tui__ed_search(ed, "abc", KB_TUI__ED_NOCASE, &wrapped), 0);
	T_CUR(ed, 2, 6);
	T_OK(!wrapped);
	/* backward: from the selection's start */
	T_EQ_INT(kb_tui__ed_search(ed, "abc", KB_TUI__ED_BACKWARD, &wrapped), 0);
	T_CUR(ed, 1, 4);
	T_EQ_INT(ed->anchor.col, 1);
	T_EQ_INT(kb_tui__ed_search(ed, "abc", KB_TUI__ED_BACKWARD, &wrapped), 0);
	T_CUR(ed, 0, 3);
	T_OK(!wrapped);
	T_EQ_INT(kb_tui__ed_search(ed, "abc", KB_TUI__ED_BACKWARD, &wrapped), 0);
	T_CUR(ed, 1, 4); /* wrapped past the start, skipping "ABC" */
	T_OK(wrapped);
	/* a single match is found again from itself after wrapping */
	kb_tui__ed_goto(ed, 1, 1);
	T_EQ_INT(kb_tui__ed_search(ed, "xab", 0, &wrapped), 0);
	T_EQ_INT(kb_tui__ed_search(ed, "xab", 0, &wrapped), 0);
	T_CUR(ed, 1, 3);
	T_OK(wrapped);
	T_EQ_INT(kb_tui__ed_search(ed, "nope", 0, &wrapped), KB_ENOTFOUND);
	T_EQ_INT(kb_tui__ed_search(ed, "a\nb", 0, NULL), KB_EINVAL);
	T_EQ_INT(kb_tui__ed_search(ed, "", 0, NULL), KB_EINVAL);
	kb_tui__ed_free(ed);
}

static void test_tui_editor__replace(void)
{
	kb_tui__ed *ed = mk("foo bar foo\nfoofoo");
	T_EQ_INT(kb_tui__ed_replace(ed, "foo", "X", 0), KB_ENOTFOUND); /* selects */
	T_EQ_INT(ed->anchor.col, 0);
	T_EQ_INT(kb_tui__ed_replace(ed, "foo", "X", 0), 0);
	T_EQ_STR(txt(ed), "X bar foo\nfoofoo");
	T_CUR(ed, 0, 9); /* the next match is selected */
	T_EQ_INT(kb_tui__ed_replace_all(ed, "foo", "x", 0), 3);
	T_EQ_STR(txt(ed), "X bar x\nxx");
	kb_tui__ed_undo(ed); /* one step */
	T_EQ_STR(txt(ed), "X bar foo\nfoofoo");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "foo bar foo\nfoofoo");
	/* replacement holding the pattern; newlines; no case */
	kb_tui__ed_load(ed, "aXa", 3);
	T_EQ_INT(kb_tui__ed_replace_all(ed, "a", "aa", 0), 2);
	T_EQ_STR(txt(ed), "aaXaa");
	kb_tui__ed_load(ed, "a,b,c", 5);
	T_EQ_INT(kb_tui__ed_replace_all(ed, ",", ",\n", 0), 2);
	T_EQ_STR(txt(ed), "a,\nb,\nc");
	kb_tui__ed_undo(ed);
	T_EQ_STR(txt(ed), "a,b,c");
	kb_tui__ed_load(ed, "Foo fOO foo", 11);
	T_EQ_INT(kb_tui__ed_replace_all(ed, "foo", "", KB_TUI__ED_NOCASE), 3);
	T_EQ_STR(txt(ed), "  ");
	T_EQ_INT(kb_tui__ed_replace_all(ed, "zz", "y", 0), 0);
	T_EQ_INT(kb_tui__ed_replace_all(ed, "", "y", 0), KB_EINVAL);
	kb_tui__ed_free(ed);
}

/* ---- edit events -------------------------------------------------------- */

#define T_EDIT(e, s, oe, ne, sl, sc, ol, oc, nl, nc) do { \
	T_EQ_INT((e).start_byte, s); T_EQ_INT((e).old_end_byte, oe); \
	T_EQ_INT((e).new_end_byte, ne); \
	T_EQ_INT((e).start_point.line, sl); T_EQ_INT((e).start_point.col, sc); \
	T_EQ_INT((e).old_end_point.line, ol); T_EQ_INT((e).old_end_point.col, oc); \
	T_EQ_INT((e).new_end_point.line, nl); T_EQ_INT((e).new_end_point.col, nc); } while (0)

static void test_tui_editor__edit_events(void)
{
	kb_tui__ed *ed = mk("ab\ncd\nef");
	int n;
	bool all;
	kb_tui__ed_edits(ed, &n, &all);
	T_OK(all); /* after a load: parse everything */
	kb_tui__ed_edits_clear(ed);
	kb_tui__ed_insert(ed, P(1, 1), "X\nY", 3);
	const kb_tui__ed_edit *e = kb_tui__ed_edits(ed, &n, &all);
	T_EQ_INT(n, 1);
	T_OK(!all);
	T_EDIT(e[0], 4, 4, 7, 1, 1, 1, 1, 2, 1);
	kb_tui__ed_edits_clear(ed);
	/* "ab\ncX\nYd\nef": delete (0,1)..(2,1) */
	kb_tui__ed_delete_range(ed, P(0, 1), P(2, 1));
	e = kb_tui__ed_edits(ed, &n, &all);
	T_EQ_INT(n, 1);
	T_EDIT(e[0], 1, 7, 1, 0, 1, 2, 1, 0, 1);
	T_EQ_STR(txt(ed), "ad\nef");
	kb_tui__ed_edits_clear(ed);
	kb_tui__ed_undo(ed); /* undo is reported as the inverse insert */
	e = kb_tui__ed_edits(ed, &n, &all);
	T_EQ_INT(n, 1);
	T_EDIT(e[0], 1, 1, 7, 0, 1, 0, 1, 2, 1);
	kb_tui__ed_edits_clear(ed);
	/* typing on a later line: offsets follow */
	kb_tui__ed_set_cursor(ed, P(3, 1), false);
	type_str(ed, "\xc3\xa9", 0);
	e = kb_tui__ed_edits(ed, &n, &all);
	T_EQ_INT(n, 1);
	T_EDIT(e[0], 10, 10, 12, 3, 1, 3, 1, 3, 3);
	T_EQ_INT(kb_tui__ed_offset(ed, ed->cur), 12);
	kb_tui__ed_edits_clear(ed);
	/* a queue nobody drains gives up and asks for a full parse */
	for (int i = 0; i < KB_TUI__ED_MAX_EDITS + 10; i++)
		type_str(ed, "z", 0);
	e = kb_tui__ed_edits(ed, &n, &all);
	T_OK(all);
	T_EQ_INT(n, 0);
	kb_tui__ed_edits_clear(ed);
	type_str(ed, "z", 0);
	kb_tui__ed_edits(ed, &n, &all);
	T_EQ_INT(n, 1);
	T_OK(!all);
	kb_tui__ed_free(ed);
}

/* ---- random edits: events rebuild the text, undo/redo round trip -------- */

static unsigned rnd_state = 12345;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 16) % n;
}

/* The byte offset of a point in s, or -1. */
static long point_off(const char *s, kb_tui__ed_pos p)
{
	long off = 0;
	for (int l = 0; l < p.line; l++) {
		const char *nl = strchr(s + off, '\n');
		if (!nl)
			return -1;
		off = nl - s + 1;
	}
	return off + p.col;
}

static void random_op(kb_tui__ed *ed, double *now)
{
	static const char *typed[] = {"a", "b", " ", "\xc3\xa9", "\xe4\xb8\xad", "\t", "}", "{"};
	*now += rnd(1500);
	switch (rnd(12)) {
	case 0: case 1: case 2: type_str(ed, typed[rnd(8)], *now); break;
	case 3: kb_tui__ed_newline(ed, *now); break;
	case 4: kb_tui__ed_backspace(ed, *now); break;
	case 5: kb_tui__ed_delete_char(ed, *now); break;
	case 6: kb_tui__ed_move(ed, (kb_tui__ed_motion)rnd(12), 1 + (int)rnd(3), rnd(2)); break;
	case 7: kb_tui__ed_undo(ed); break;
	case 8: kb_tui__ed_redo(ed); break;
	case 9: rnd(2) ? kb_tui__ed_cut(ed) : kb_tui__ed_copy(ed); break;
	case 10: kb_tui__ed_paste(ed); break;
	default: kb_tui__ed_replace_all(ed, "ab", "b\na", 0); break;
	}
}

/* Checks one op's events against the text before (shadow) and after. */
static void check_events(kb_tui__ed *ed, char **shadow, const char *now_text)
{
	int n;
	bool all;
	const kb_tui__ed_edit *e = kb_tui__ed_edits(ed, &n, &all);
	long len = (long)strlen(*shadow);
	for (int i = 0; i < n; i++)
		len += (long)e[i].new_end_byte - (long)e[i].old_end_byte;
	T_EQ_INT(len, (long)strlen(now_text));
	if (n == 1) {
		T_EQ_INT(point_off(*shadow, e[0].start_point), (long)e[0].start_byte);
		T_EQ_INT(point_off(*shadow, e[0].old_end_point), (long)e[0].old_end_byte);
		T_EQ_INT(point_off(now_text, e[0].new_end_point), (long)e[0].new_end_byte);
		T_OK(!strncmp(*shadow, now_text, e[0].start_byte));
		T_EQ_STR(*shadow + e[0].old_end_byte, now_text + e[0].new_end_byte);
	}
	free(*shadow);
	*shadow = kb_xstrdup(now_text);
	kb_tui__ed_edits_clear(ed);
}

static void test_tui_editor__random_consistency(void)
{
	const char *orig = "int f() {\n\tab;\n}\n\xe4\xb8\xad ab\n";
	kb_tui__ed *ed = mk(orig);
	kb_tui__ed_edits_clear(ed);
	char *shadow = kb_xstrdup(orig), *final;
	double now = 0;
	int bad_cursor = 0;
	for (int i = 0; i < 3000 && !t_case_failed; i++) {
		random_op(ed, &now);
		check_events(ed, &shadow, txt(ed));
		kb_tui__ed_pos c = ed->cur;
		int len;
		const char *s = kb_tui__ed_line(ed, c.line, &len);
		if (c.line >= ed->nlines || c.col > len || (c.col < len && (s[c.col] & 0xC0) == 0x80))
			bad_cursor++;
		T_EQ_INT(kb_tui__ed_offset(ed, c), point_off(shadow, c));
	}
	T_EQ_INT(bad_cursor, 0);
	final = kb_xstrdup(txt(ed));
	while (kb_tui__ed_undo(ed) == 0)
		;
	T_EQ_STR(txt(ed), orig);
	T_OK(!kb_tui__ed_dirty(ed));
	while (kb_tui__ed_redo(ed) == 0)
		;
	T_EQ_STR(txt(ed), final);
	free(final);
	free(shadow);
	kb_tui__ed_free(ed);
}

/* ---- performance -------------------------------------------------------- */

static void test_tui_editor__perf_10k(void)
{
	kb_buf b = KB_BUF_INIT;
	for (int i = 0; i < 10000; i++)
		kb_buf_catf(&b, "\tfloat v%05d = a[i + %d] * b[i];  // line\n", i, i);
	double t0 = kb_now_ms();
	kb_tui__ed *ed = mk(b.s);
	double t_load = kb_now_ms() - t0;
	kb_tui__ed_goto(ed, 5000, 20);
	kb_tui__ed_edits_clear(ed);
	double now = 0;
	t0 = kb_now_ms();
	for (int i = 0; i < 10000; i++) {
		char c = (char)('a' + i % 26);
		kb_tui__ed_type(ed, &c, 1, now += 50);
		if (i % 16 == 15) /* a highlighter drains once per frame */
			kb_tui__ed_edits_clear(ed);
	}
	double t_type = kb_now_ms() - t0;
	int len;
	kb_tui__ed_line(ed, 4999, &len);
	T_EQ_INT(len, (int)strlen("\tfloat v04999 = a[i + 4999] * b[i];  // line") + 10000);
	T_EQ_INT(ed->nlines, 10001);
	T_EQ_INT(kb_tui__ed_offset(ed, ed->cur), point_off(b.s, P(4999, 19)) + 10000);
	t0 = kb_now_ms();
	kb_tui__ed_undo(ed);
	double t_undo = kb_now_ms() - t0;
	T_EQ_INT(ed->lines[4999].len, 44);
	/* 100k lines */
	for (int i = 10000; i < 100000; i++)
		kb_buf_catf(&b, "\tfloat v%05d = a[i] * b[i];\n", i);
	t0 = kb_now_ms();
	kb_tui__ed_load(ed, b.s, b.len);
	double t_load100k = kb_now_ms() - t0;
	T_EQ_INT(ed->nlines, 100001);
	kb_tui__ed_goto(ed, 90000, 1);
	t0 = kb_now_ms();
	for (int i = 0; i < 1000; i++)
		type_str(ed, "x", (double)i);
	double t_type100k = kb_now_ms() - t0;
	printf("  perf: load 10k lines %.2f ms; 10,000 chars typed at line 5000 %.2f ms "
	       "(%.2f us/char); undo %.2f ms; load 100k lines %.2f ms; 1,000 chars at "
	       "line 90000 of 100k %.2f ms\n",
	       t_load, t_type, t_type * 1000.0 / 10000, t_undo, t_load100k, t_type100k);
	T_OK(t_type < 5000); /* loose: sanitizers and slow CI */
	kb_buf_free(&b);
	kb_tui__ed_free(ed);
}

int main(void)
{
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "en_US.UTF-8"); /* else the built-in widths */
	T_RUN(test_tui_editor__load_save_lf);
	T_RUN(test_tui_editor__crlf_round_trip);
	T_RUN(test_tui_editor__utf8_decode);
	T_RUN(test_tui_editor__utf8_movement);
	T_RUN(test_tui_editor__grapheme_units);
	T_RUN(test_tui_editor__tabs);
	T_RUN(test_tui_editor__word_moves);
	T_RUN(test_tui_editor__vertical_pref_col);
	T_RUN(test_tui_editor__home_end_page);
	T_RUN(test_tui_editor__select_cut_paste);
	T_RUN(test_tui_editor__paste_is_one_step);
	T_RUN(test_tui_editor__undo_typing_groups);
	T_RUN(test_tui_editor__dirty_and_changes);
	T_RUN(test_tui_editor__backspace_delete);
	T_RUN(test_tui_editor__auto_indent);
	T_RUN(test_tui_editor__indent_detection);
	T_RUN(test_tui_editor__search);
	T_RUN(test_tui_editor__replace);
	T_RUN(test_tui_editor__edit_events);
	T_RUN(test_tui_editor__random_consistency);
	T_RUN(test_tui_editor__perf_10k);
	return t_report();
}
