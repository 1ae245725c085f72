/* test_tui_layout.c - the layout at many terminal sizes (nvtop's
 * CheckManyTermSize): no overlap, everything on screen, usable widths, and
 * a clear refusal below 80x24. */
#include "../../src/tui/tui.h"
#include "t.h"

static bool inside(kb_rect r, int rows, int cols)
{
	return r.y >= 0 && r.x >= 0 && r.h >= 0 && r.w >= 0 && r.y + r.h <= rows && r.x + r.w <= cols;
}

static bool overlap(kb_rect a, kb_rect b)
{
	if (!a.h || !a.w || !b.h || !b.w)
		return false;
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static void test_tui__layout_many_sizes(void)
{
	int bad = 0;
	for (int rows = 24; rows <= 120 && bad < 5; rows += 3)
		for (int cols = 80; cols <= 300 && bad < 5; cols += 7)
			for (int split = 20; split <= 80; split += 15) {
				kb_layout l;
				if (!kb_tui_layout(rows, cols, split, &l)) {
					T_FAIL_AT("%dx%d refused", cols, rows);
					bad++;
					continue;
				}
				kb_rect r[] = {l.title, l.editor, l.tabs, l.pane, l.status};
				for (int i = 0; i < 5; i++) {
					if (!inside(r[i], rows, cols)) {
						T_FAIL_AT("%dx%d split %d: rect %d off screen", cols, rows, split, i);
						bad++;
					}
					for (int j = i + 1; j < 5; j++)
						if (overlap(r[i], r[j])) {
							T_FAIL_AT("%dx%d: rects %d and %d overlap", cols, rows, i, j);
							bad++;
						}
				}
				if (l.editor.w < 40 || l.pane.w < 34 || l.pane.h < 20) {
					T_FAIL_AT("%dx%d: editor %d / pane %dx%d too small", cols, rows,
						  l.editor.w, l.pane.w, l.pane.h);
					bad++;
				}
			}
}

static void test_tui__layout_exact(void)
{
	kb_layout l;
	T_OK(kb_tui_layout(30, 100, 55, &l));
	T_EQ_INT(l.editor.w, 55);
	T_EQ_INT(l.pane.x, 56);
	T_EQ_INT(l.pane.w, 44);
	T_EQ_INT(l.status.y, 29);
	T_EQ_INT(l.editor.h, 28);
	T_OK(kb_tui_layout(60, 200, 55, &l));
	T_EQ_INT(l.editor.w, 110);
}

static void test_tui__layout_too_small(void)
{
	kb_layout l;
	T_OK(!kb_tui_layout(23, 120, 55, &l));
	T_OK(!kb_tui_layout(40, 79, 55, &l));
	T_EQ_INT(l.status.y, 39);
	T_EQ_INT(l.status.w, 79);
}

int main(void)
{
	T_RUN(test_tui__layout_many_sizes);
	T_RUN(test_tui__layout_exact);
	T_RUN(test_tui__layout_too_small);
	return t_report();
}
