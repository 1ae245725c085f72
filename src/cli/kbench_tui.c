/*
 * kbench_tui.c - the `kbench-tui` entry point.  Until the interactive
 * workbench lands (editor, result panes, live loop: its own issue), this is
 * a read-only view: it compiles FILE, shows the same summary and
 * diagnostics as `kbench compile` in a curses screen, recompiles on `r`
 * and when the file changes on disk, and quits on `q`.
 */
#include "../app/app.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void compile_into(const char *path, const char *arch, kb_buf *text)
{
	kb_compile_unit_opts opts = {.arch = arch, .want_sass = true};
	kb_compile_unit r;
	kb_err err = {0};
	kb_buf_reset(text);
	int rc = kb_compile_unit_run(path, NULL, &opts, &r, &err);
	if (rc < 0 && rc != KB_ESPEC && rc != KB_ECOMPILE)
		kb_buf_catf(text, "kbench: %s\n", err.msg);
	kb_diag_render(&r.diags, text, false);
	kb_app_compile_render(&r, text);
	/* The TUI records into the session like the CLI does. */
	if (kb_app_recording() && r.src.path && kb_app_record_compile(&r, NULL, &err) < 0)
		kb_buf_catf(text, "(not recorded in the session: %s)\n", err.msg);
	kb_compile_unit_free(&r);
}

static void draw(const char *path, const kb_buf *text)
{
	erase();
	attron(A_REVERSE);
	mvprintw(0, 0, " kbench-tui %s  %-*s", KB_VERSION, COLS > 30 ? COLS - 20 : 10, path);
	attroff(A_REVERSE);
	int row = 2;
	for (const char *p = text->s; p && *p && row < LINES - 1; row++) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);
		mvaddnstr(row, 1, p, n < COLS - 2 ? n : COLS - 2);
		p = e ? e + 1 : p + n;
	}
	attron(A_REVERSE);
	mvprintw(LINES - 1, 0, " r recompile   q quit   (the file is watched; editing arrives with the workbench)");
	attroff(A_REVERSE);
	refresh();
}

static long long mtime_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs("usage: kbench-tui FILE [--arch sm_XX]\n", argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *path = argv[1];
	const char *arch = argc >= 4 && !strcmp(argv[2], "--arch") ? argv[3] : NULL;
	setlocale(LC_ALL, "");
	kb_buf text = KB_BUF_INIT;
	compile_into(path, arch, &text);
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	timeout(250);
	long long seen = mtime_of(path);
	draw(path, &text);
	for (int ch; (ch = getch()) != 'q';) {
		long long now = mtime_of(path);
		bool changed = ch == 'r' || now != seen;
		if (changed) {
			seen = now;
			compile_into(path, arch, &text);
		}
		if (changed || ch == KEY_RESIZE)
			draw(path, &text);
	}
	endwin();
	kb_buf_free(&text);
	return 0;
}
