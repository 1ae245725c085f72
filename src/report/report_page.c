/*
 * report_page.c - the markup of the report's two pages (architecture §6):
 * GitHub Markdown and one self-contained HTML page (inline CSS, no script,
 * no URL) from the same calls: escaping, diff blocks, tables described once
 * (kb_app__trow) and rendered in either form, headings and paragraphs; and
 * the page around the sections: the HTML head and style sheet, the summary
 * (kernel, file, GPU, session, the best variant and its speed-up, as a list
 * in Markdown and as cards in HTML) and the footer.
 *
 * It owns the form, not the content: report.c decides the sections and
 * what they say, report_model.c reads the variants, report_svg.c draws the
 * chart.  Invariants: HTML escapes every text it is given (kb_app__html);
 * Markdown has no inline HTML outside code blocks: table cells and the
 * summary's values (kb_app__md_cell: one line, no column break, '<' and
 * '>' as entities) and the headings and paragraphs (md_text: '<') cannot
 * start a tag; a code fence is longer than any run of backticks inside it.
 */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ====================================================================== */
/* Markup: escaping, code blocks                                            */
/* ====================================================================== */

static void html_escape(kb_buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': kb_buf_cat(out, "&amp;"); break;
		case '<': kb_buf_cat(out, "&lt;"); break;
		case '>': kb_buf_cat(out, "&gt;"); break;
		case '"': kb_buf_cat(out, "&quot;"); break;
		case '\'': kb_buf_cat(out, "&#39;"); break;
		default: kb_buf_catc(out, s[i]);
		}
	}
}

void kb_app__html(kb_buf *out, const char *s)
{
	html_escape(out, s, strlen(s));
}

/* One character of Markdown text: a '<' as text, so that no tag starts
 * there and a renderer that passes inline HTML through shows a label, a
 * note or a model's words instead of running them. */
static void md_char(kb_buf *out, char c)
{
	if (c == '<')
		kb_buf_cat(out, "&lt;");
	else
		kb_buf_catc(out, c);
}

/* A Markdown table cell: one line, no column break, no inline HTML. */
void kb_app__md_cell(kb_buf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '|': kb_buf_cat(out, "\\|"); break;
		case '>': kb_buf_cat(out, "&gt;"); break;
		case '\n': case '\r': case '\t': kb_buf_catc(out, ' '); break;
		default: md_char(out, *s);
		}
	}
}

/* Markdown prose (a paragraph, a heading): no inline HTML.  (kbench's own
 * code spans there hold no '<'.) */
static void md_text(kb_buf *out, const char *s)
{
	for (; *s; s++)
		md_char(out, *s);
}

/* A code fence longer than any run of backticks inside the text. */
static void md_fence(kb_buf *out, const char *text, const char *lang)
{
	int run = 0, longest = 0;
	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	for (int i = 0; i < (longest >= 3 ? longest + 1 : 3); i++)
		kb_buf_catc(out, '`');
	kb_buf_cat(out, lang);
	kb_buf_catc(out, '\n');
}

static void md_code(kb_buf *out, const char *text, const char *lang)
{
	md_fence(out, text, lang);
	kb_buf_cat(out, text);
	if (text[0] && text[strlen(text) - 1] != '\n')
		kb_buf_catc(out, '\n');
	md_fence(out, text, "");
	kb_buf_catc(out, '\n');
}

/* A diff in <pre>, one block span per line, coloured by its first char. */
static void html_diff(kb_buf *out, const char *text)
{
	kb_buf_cat(out, "<pre class=\"diff\">");
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *cls = !strncmp(p, "+++", 3) || !strncmp(p, "---", 3) ? "m"
				  : *p == '+' ? "a" : *p == '-' ? "d" : *p == '@' ? "h" : "c";
		kb_buf_catf(out, "<span class=\"%s\">", cls);
		html_escape(out, p, n);
		kb_buf_cat(out, n ? "</span>" : " </span>");
		p += n + (e ? 1 : 0);
	}
	kb_buf_cat(out, "</pre>\n");
}

void kb_app__code_block(const kb_app__model *R, kb_buf *o, const char *text)
{
	if (R->o->html)
		html_diff(o, text);
	else
		md_code(o, text, "diff");
}

/* ====================================================================== */
/* Tables: one description, rendered as GitHub Markdown or HTML            */
/* ====================================================================== */

/* align: one 'l', 'r' or 'w' (left, wrapped: prose) per column; narrow: HTML
 * sizes it to its content. */
void kb_app__table_begin(const kb_app__model *R, kb_buf *o, const char *const *heads,
			 const char *align, bool narrow)
{
	int n = (int)strlen(align);
	if (R->o->html) {
		kb_buf_catf(o, "<div class=\"scroll%s\"><table>\n<thead><tr>", narrow ? " narrow" : "");
		for (int i = 0; i < n; i++) {
			kb_buf_cat(o, align[i] == 'r' ? "<th class=\"num\">" : "<th>");
			kb_app__html(o, heads[i]);
			kb_buf_cat(o, "</th>");
		}
		kb_buf_cat(o, "</tr></thead>\n<tbody>\n");
		return;
	}
	for (int i = 0; i < n; i++) {
		kb_buf_cat(o, "| ");
		kb_app__md_cell(o, heads[i]);
		kb_buf_catc(o, ' ');
	}
	kb_buf_cat(o, "|\n");
	for (int i = 0; i < n; i++)
		kb_buf_cat(o, align[i] == 'r' ? "|---:" : "|---");
	kb_buf_cat(o, "|\n");
}

void kb_app__table_row(const kb_app__model *R, kb_buf *o, const kb_app__trow *t, const char *align)
{
	int n = (int)strlen(align);
	if (!R->o->html) {
		for (int i = 0; i < n; i++) {
			kb_buf_cat(o, t->strong[i] && t->text[i][0] ? "| **" : "| ");
			kb_app__md_cell(o, t->text[i]);
			kb_buf_cat(o, t->strong[i] && t->text[i][0] ? "** " : " ");
		}
		kb_buf_cat(o, "|\n");
		return;
	}
	kb_buf_cat(o, "<tr");
	if (t->row_cls)
		kb_buf_catf(o, " class=\"%s\"", t->row_cls);
	kb_buf_cat(o, ">");
	for (int i = 0; i < n; i++) {
		kb_buf_cat(o, align[i] == 'r' ? "<td class=\"num\">"
			      : align[i] == 'w' ? "<td class=\"wrap\">" : "<td>");
		if (t->cls[i])
			kb_buf_catf(o, "<span class=\"%s\">", t->cls[i]);
		kb_buf_cat(o, t->strong[i] ? "<strong>" : "");
		kb_app__html(o, t->text[i]);
		kb_buf_cat(o, t->strong[i] ? "</strong>" : "");
		kb_buf_cat(o, t->cls[i] ? "</span>" : "");
		kb_buf_cat(o, "</td>");
	}
	kb_buf_cat(o, "</tr>\n");
}

void kb_app__table_end(const kb_app__model *R, kb_buf *o)
{
	kb_buf_cat(o, R->o->html ? "</tbody>\n</table></div>\n" : "\n");
}

void kb_app__heading(const kb_app__model *R, kb_buf *o, const char *text)
{
	if (R->o->html) {
		kb_buf_cat(o, "<h2>");
		kb_app__html(o, text);
		kb_buf_cat(o, "</h2>\n");
	} else {
		kb_buf_cat(o, "## ");
		md_text(o, text);
		kb_buf_cat(o, "\n\n");
	}
}

void kb_app__subheading(const kb_app__model *R, kb_buf *o, const char *text)
{
	if (R->o->html) {
		kb_buf_cat(o, "<h3>");
		kb_app__html(o, text);
		kb_buf_cat(o, "</h3>\n");
	} else {
		kb_buf_cat(o, "### ");
		md_text(o, text);
		kb_buf_cat(o, "\n\n");
	}
}

/* A paragraph of plain text (escaped), muted in HTML when note is set. */
void kb_app__para(const kb_app__model *R, kb_buf *o, bool note, const char *text)
{
	if (R->o->html) {
		kb_buf_cat(o, note ? "<p class=\"note\">" : "<p>");
		kb_app__html(o, text);
		kb_buf_cat(o, "</p>\n");
	} else {
		kb_buf_cat(o, note ? "_" : "");
		md_text(o, text);
		kb_buf_cat(o, note ? "_\n\n" : "\n\n");
	}
}

const char *kb_app__badge(kb_verdict verdict)
{
	return verdict == KB_VERDICT_CORRECT ? "badge b-ok"
	       : verdict == KB_VERDICT_COMPILED || verdict == KB_VERDICT_NO_RESULT ||
		 verdict == KB_VERDICT_UNSUPPORTED ? "badge b-muted"
	       : "badge b-bad";
}

/* ====================================================================== */
/* Summary                                                                  */
/* ====================================================================== */

static void fmt_us(char *s, size_t n, double us)
{
	snprintf(s, n, us >= 100 ? "%.1f µs" : "%.2f µs", us);
}

/* "4: 2 correct, 1 incorrect, 1 compiled only". */
static char *variant_counts(const kb_app__model *R)
{
	int ok = 0, bad = 0, failed = 0, compiled = 0, unsupported = 0;
	for (int i = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
		if (r->correct)
			ok++;
		else if (!r->res)
			compiled++;
		else if (r->verdict == KB_VERDICT_INCORRECT || r->verdict == KB_VERDICT_IMPOSSIBLE)
			bad++;
		else if (r->verdict == KB_VERDICT_UNSUPPORTED) /* not run: not a failure */
			unsupported++;
		else
			failed++;
	}
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "%d correct", ok);
	if (bad)
		kb_buf_catf(&b, ", %d incorrect", bad);
	if (failed)
		kb_buf_catf(&b, ", %d failed", failed);
	if (compiled)
		kb_buf_catf(&b, ", %d compiled only", compiled);
	if (unsupported)
		kb_buf_catf(&b, ", %d unsupported (a `//! require` line ruled the run out)", unsupported);
	return kb_buf_detach(&b);
}

/* What the speed-up is over: "the first correct variant", or where
 * variants of other kernels came first (a file whose `//! kernel` line
 * moved on: 01_naive, 02_fa2, 03_fa3), the first correct one of the best's
 * kernel, which is what it is compared with. */
static char *first_words(const kb_app__model *R)
{
	if (!R->other_kernels)
		return kb_xstrdup("the first correct variant");
	return kb_xasprintf("the first correct variant of kernel %s "
			    "(the variants before it ran other kernels)", R->kernel ? R->kernel : "?");
}

/* One sentence on the best variant, or why there is none. */
static char *best_sentence(const kb_app__model *R)
{
	if (R->best < 0)
		return kb_xstrdup("No variant is correct and timed yet: there is no best variant.");
	const kb_app__row *b = &R->r[R->best], *f = &R->r[R->first];
	char tb[32], tf[32];
	fmt_us(tb, sizeof tb, b->median);
	fmt_us(tf, sizeof tf, f->median);
	char *first = first_words(R);
	char *s = R->best == R->first
			  ? kb_xasprintf("%s (%s) is %s and the fastest.", kb_app__name_of(b), tb, first)
			  : kb_xasprintf("%s%s%s%s: %s vs %s for %s, %s: %.2f× faster.", kb_app__name_of(b),
					 b->v->label ? " “" : "", b->v->label ? b->v->label : "",
					 b->v->label ? "”" : "", tb, tf, kb_app__name_of(f), first,
					 f->median / b->median);
	free(first);
	return s;
}

static void md_summary(const kb_app__model *R, kb_buf *o, const char *title)
{
	char *counts = variant_counts(R), *best = best_sentence(R);
	kb_buf_cat(o, "# ");
	kb_app__md_cell(o, title);
	kb_buf_cat(o, "\n\n- **Kernel** `");
	kb_app__md_cell(o, R->kernel ? R->kernel : "?");
	kb_buf_cat(o, "`");
	if (R->file) {
		kb_buf_cat(o, " in `");
		kb_app__md_cell(o, R->file);
		kb_buf_cat(o, "`");
	}
	kb_buf_cat(o, "\n- **GPU** ");
	kb_app__md_cell(o, R->gpu && R->gpu[0] ? R->gpu : "n/a (no variant was run)");
	if (R->mixed_gpu)
		kb_buf_cat(o, " (variants ran on different GPUs: compare with care)");
	if (R->o->session_id) {
		kb_buf_cat(o, "\n- **Session** `");
		kb_app__md_cell(o, R->o->session_id);
		kb_buf_cat(o, "`");
	}
	kb_buf_catf(o, "\n- **Variants** %d: %s\n- **Best** ", R->n, counts);
	kb_app__md_cell(o, best);
	kb_buf_cat(o, "\n\n");
	free(best);
	free(counts);
}

static void html_card(kb_buf *o, const char *label, const char *big, const char *small, bool accent)
{
	kb_buf_catf(o, "<div class=\"card%s\"><div class=\"k\">", accent ? " accent" : "");
	kb_app__html(o, label);
	kb_buf_cat(o, "</div><div class=\"v\">");
	kb_app__html(o, big);
	kb_buf_cat(o, "</div><div class=\"s\">");
	kb_app__html(o, small);
	kb_buf_cat(o, "</div></div>\n");
}

static void html_cards(const kb_app__model *R, kb_buf *o)
{
	char big[64], small[160];
	char *counts = variant_counts(R);
	kb_buf_cat(o, "<section class=\"cards\">\n");
	if (R->best >= 0) {
		const kb_app__row *b = &R->r[R->best], *f = &R->r[R->first];
		html_card(o, "Best variant", kb_app__name_of(b), b->v->label ? b->v->label : "", true);
		snprintf(big, sizeof big, "%.2f×", f->median / b->median);
		if (R->other_kernels)
			snprintf(small, sizeof small, "over %s, the first correct variant of kernel %s",
				 kb_app__name_of(f), R->kernel ? R->kernel : "?");
		else
			snprintf(small, sizeof small, "over %s, the first correct variant", kb_app__name_of(f));
		html_card(o, "Speed-up", big, small, true);
		fmt_us(big, sizeof big, b->median);
		fmt_us(small, sizeof small, f->median);
		char *s = kb_xasprintf("median; %s: %s", kb_app__name_of(f), small);
		html_card(o, "Time", big, s, false);
		free(s);
		snprintf(big, sizeof big, b->gbps >= 0 ? "%.0f GB/s" : "n/a", b->gbps);
		if (b->pct >= 0)
			snprintf(small, sizeof small, "%.1f%% of %s", b->pct, b->basis);
		else
			snprintf(small, sizeof small, "no ceiling known");
		html_card(o, "Bandwidth", big, small, false);
	} else {
		html_card(o, "Best variant", "none", "no variant is correct and timed yet", false);
	}
	snprintf(big, sizeof big, "%d", R->n);
	html_card(o, "Variants", big, counts, false);
	kb_buf_cat(o, "</section>\n");
	free(counts);
}

static void html_summary(const kb_app__model *R, kb_buf *o, const char *title)
{
	char *best = best_sentence(R);
	kb_buf_cat(o, "<header>\n<div class=\"eyebrow\">kbench report</div>\n<h1>");
	kb_app__html(o, title);
	kb_buf_cat(o, "</h1>\n<p class=\"meta\"><span><b>Kernel</b> <code>");
	kb_app__html(o, R->kernel ? R->kernel : "?");
	kb_buf_cat(o, "</code></span>");
	if (R->file) {
		kb_buf_cat(o, "<span><b>File</b> <code>");
		kb_app__html(o, R->file);
		kb_buf_cat(o, "</code></span>");
	}
	kb_buf_cat(o, "<span><b>GPU</b> ");
	kb_app__html(o, R->gpu && R->gpu[0] ? R->gpu : "n/a");
	kb_buf_cat(o, R->mixed_gpu ? " (mixed: compare with care)</span>" : "</span>");
	if (R->o->session_id) {
		kb_buf_cat(o, "<span><b>Session</b> <code>");
		kb_app__html(o, R->o->session_id);
		kb_buf_cat(o, "</code></span>");
	}
	kb_buf_cat(o, "</p>\n</header>\n");
	html_cards(R, o);
	kb_buf_cat(o, "<p class=\"lead\">");
	kb_app__html(o, best);
	kb_buf_cat(o, "</p>\n");
	free(best);
}

/* ====================================================================== */
/* The page                                                                 */
/* ====================================================================== */

static const char CSS[] =
	":root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--ok:#1a7f37;"
	"--okbg:#dafbe1;--bad:#cf222e;--badbg:#ffebe9;--blue:#0969da}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:#fff;color:var(--fg);font:14px/1.55 system-ui,-apple-system,"
	"'Segoe UI',Roboto,Helvetica,Arial,sans-serif}\n"
	"main{max-width:1180px;margin:0 auto;padding:32px 32px 48px}\n"
	"code,pre,td.num{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',"
	"'Liberation Mono',monospace}\n"
	"code{font-size:12.5px;background:var(--soft);padding:1px 5px;border-radius:4px}\n"
	"header{border-bottom:1px solid var(--line);padding-bottom:14px;margin-bottom:20px}\n"
	".eyebrow{color:var(--muted);font-size:12px;letter-spacing:.08em;text-transform:uppercase}\n"
	"h1{font-size:26px;margin:4px 0 8px;font-weight:650}\n"
	"h2{font-size:18px;margin:34px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}\n"
	"h3{font-size:14px;margin:20px 0 8px;color:var(--muted);text-transform:uppercase;"
	"letter-spacing:.05em}\n"
	".meta{margin:0;color:var(--muted);display:flex;flex-wrap:wrap;gap:6px 22px}\n"
	".meta b{color:var(--fg);font-weight:600;margin-right:4px}\n"
	".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px}\n"
	".card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;background:#fff}\n"
	".card.accent{border-color:#4ac26b;background:#f3fcf5}\n"
	".card .k{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em}\n"
	".card .v{font-size:24px;font-weight:650;margin:2px 0;font-variant-numeric:tabular-nums}\n"
	".card.accent .v{color:var(--ok)}\n"
	".card .s{font-size:12.5px;color:var(--muted)}\n"
	".lead{font-size:15px;margin:16px 0 0}\n"
	".note{color:var(--muted);font-size:12.5px;margin:8px 0}\n"
	".scroll{overflow-x:auto}\n"
	".narrow table{width:auto;min-width:560px}\n"
	"table{border-collapse:collapse;width:100%;font-size:13px}\n"
	"th,td{padding:7px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}\n"
	"th{background:var(--soft);font-weight:600;color:var(--muted);font-size:12px}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	"td.num{font-size:12.5px}\n"
	"td.wrap{white-space:normal;min-width:16em;max-width:34em}\n"
	"tr.best td{background:#f3fcf5}\n"
	"tr.fail td{background:#fff8f7}\n"
	".badge{display:inline-block;font-size:11px;font-weight:600;padding:1px 8px;border-radius:10px;"
	"letter-spacing:.03em}\n"
	".b-ok{color:var(--ok);background:var(--okbg)}\n"
	".b-bad{color:var(--bad);background:var(--badbg)}\n"
	".b-muted{color:var(--muted);background:var(--soft);border:1px solid var(--line)}\n"
	".b-best{color:#fff;background:var(--ok)}\n"
	"pre.diff{background:var(--soft);border:1px solid var(--line);border-radius:8px;padding:8px 0;"
	"font-size:12.5px;line-height:1.5;overflow-x:auto;margin:8px 0}\n"
	"pre.diff span{display:block;padding:0 14px;white-space:pre;tab-size:4}\n"
	"pre.diff .a{background:var(--okbg)}\n"
	"pre.diff .d{background:var(--badbg)}\n"
	"pre.diff .h{color:#0550ae;background:#ddf4ff}\n"
	"pre.diff .m{color:var(--muted);font-weight:600}\n"
	"figure.chart{margin:8px 0;border:1px solid var(--line);border-radius:8px;padding:8px;"
	"overflow-x:auto}\n"
	"figure.chart svg{display:block;max-width:100%;height:auto}\n"
	".failnote{border-left:3px solid var(--bad);background:var(--badbg);padding:8px 12px;margin:10px 0;"
	"border-radius:0 6px 6px 0;font-size:13px}\n"
	".failnote span{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}\n"
	"footer{margin-top:40px;padding-top:12px;border-top:1px solid var(--line);color:var(--muted);"
	"font-size:12px}\n";

void kb_app__page_begin(const kb_app__model *R, kb_buf *o, const char *title)
{
	if (!R->o->html) {
		if (R->o->not_first)
			kb_buf_cat(o, "\n");
		md_summary(R, o, title);
		return;
	}
	if (!R->o->not_first) {
		kb_buf_cat(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
		kb_app__html(o, title);
		kb_buf_catf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", CSS);
	}
	html_summary(R, o, title);
}

void kb_app__page_end(const kb_app__model *R, kb_buf *o)
{
	const char *f = R->o->footer;
	if (R->o->not_last)
		return;
	if (!R->o->html) {
		kb_buf_cat(o, "---\n\n_Generated by kbench");
		if (f) {
			kb_buf_cat(o, " · ");
			kb_app__md_cell(o, f);
		}
		kb_buf_cat(o, "_\n");
		return;
	}
	kb_buf_cat(o, "<footer>Generated by kbench");
	if (f) {
		kb_buf_cat(o, " · ");
		kb_app__html(o, f);
	}
	kb_buf_cat(o, "</footer>\n</main>\n</body>\n</html>\n");
}
