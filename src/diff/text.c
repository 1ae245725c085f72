/*
 * text.c - unified diffs of two buffers, by libgit2's own diff
 * (git_diff_buffers, i.e. git's xdiff): no home-made diff algorithm.
 *
 * Owns: turning libgit2's file/hunk/line callbacks into the classic text
 * "--- a", "+++ b", "@@ -a,b +c,d @@" and ' '/'+'/'-' lines, with git's
 * conventions (a count of 1 is left out: "@@ -3 +3 @@"; a side with no lines
 * gives the line before it: "@@ -0,0 +1,2 @@"), and "\ No newline at end of
 * file" after a last line that has none.  The hunk header carries no
 * "function context" text, so the output does not depend on git's funcname
 * heuristics.  Buffers are always diffed as text (GIT_DIFF_FORCE_TEXT),
 * even when they hold a NUL.
 * Does not own: what the buffers are (sources, normalised SASS: sass.c).
 * Invariants: identical buffers append nothing and return 0; the return
 * value is the number of '+' and '-' lines written.  libgit2 is initialised
 * and shut down around each call (refcounted: a process that holds its own
 * git_libgit2_init, as the app should, pays a counter bump; a cold init costs
 * about 4 ms); its error codes never leave this file.
 */
#include "diff.h"

#include <git2.h>
#include <string.h>

typedef struct {
	kb_buf *out;
	const char *label_a, *label_b;
	bool header;        /* "--- / +++" written */
	int changed;
} text_ctx;

/* Fills err from libgit2's last error; returns KB_ERROR. */
static int git_fail(kb_err *err, const char *file, int line, int code, const char *what)
{
	const git_error *e = git_error_last();
	return kb_err_set_at(err, file, line, KB_ERROR, KB_DOM_GIT, code, "%s: %s", what,
			     e && e->message ? e->message : "unknown libgit2 error");
}
#define KB_GIT_FAIL(err, code, what) git_fail((err), __FILE__, __LINE__, (code), (what))

static void put_header(text_ctx *c)
{
	if (c->header)
		return;
	kb_buf_catf(c->out, "--- %s\n+++ %s\n", c->label_a, c->label_b);
	c->header = true;
}

static int on_file(const git_diff_delta *delta, float progress, void *payload)
{
	text_ctx *c = payload;
	if (delta->status != GIT_DELTA_UNMODIFIED)
		put_header(c);
	return 0;
}

/* git's range: "start" alone for one line, "start,count" otherwise. */
static void put_range(kb_buf *out, char sign, int start, int count)
{
	if (count == 1)
		kb_buf_catf(out, "%c%d", sign, start);
	else
		kb_buf_catf(out, "%c%d,%d", sign, start, count);
}

static int on_hunk(const git_diff_delta *delta, const git_diff_hunk *h, void *payload)
{
	text_ctx *c = payload;
	put_header(c);
	kb_buf_cat(c->out, "@@ ");
	put_range(c->out, '-', h->old_start, h->old_lines);
	kb_buf_catc(c->out, ' ');
	put_range(c->out, '+', h->new_start, h->new_lines);
	kb_buf_cat(c->out, " @@\n");
	return 0;
}

static int on_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
		   const git_diff_line *l, void *payload)
{
	text_ctx *c = payload;
	switch (l->origin) {
	case GIT_DIFF_LINE_ADDITION:
	case GIT_DIFF_LINE_DELETION:
		c->changed++;
		/* fall through */
	case GIT_DIFF_LINE_CONTEXT:
		kb_buf_catc(c->out, l->origin);
		kb_buf_catn(c->out, l->content, l->content_len);
		if (l->content_len == 0 || l->content[l->content_len - 1] != '\n')
			kb_buf_catc(c->out, '\n');
		break;
	case GIT_DIFF_LINE_CONTEXT_EOFNL:
	case GIT_DIFF_LINE_ADD_EOFNL:
	case GIT_DIFF_LINE_DEL_EOFNL:
		kb_buf_cat(c->out, "\\ No newline at end of file\n");
		break;
	default:
		break;
	}
	return 0;
}

int kb_diff_text(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
		 const char *label_b, int context, kb_buf *out, kb_err *err)
{
	if ((!a && alen) || (!b && blen) || !out || context < 0)
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "kb_diff_text: bad arguments");
	text_ctx c = {out, label_a ? label_a : "a", label_b ? label_b : "b", false, 0};
	int rc = git_libgit2_init();
	if (rc < 0)
		return KB_GIT_FAIL(err, rc, "git_libgit2_init");
	git_diff_options opts;
	rc = git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (rc < 0) {
		rc = KB_GIT_FAIL(err, rc, "git_diff_options_init");
		goto out;
	}
	opts.context_lines = (uint32_t)context;
	opts.interhunk_lines = 0;
	opts.flags |= GIT_DIFF_FORCE_TEXT;
	rc = git_diff_buffers(a ? a : "", alen, c.label_a, b ? b : "", blen, c.label_b, &opts,
			      on_file, NULL, on_hunk, on_line, &c);
	if (rc < 0) {
		rc = KB_GIT_FAIL(err, rc, "git_diff_buffers");
		goto out;
	}
	rc = c.changed;
out:
	git_libgit2_shutdown();
	return rc;
}
