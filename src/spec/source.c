/*
 * source.c - kb_source: a kernel file's path, text and kind.  The kind comes
 * from the extension: .cu/.cuh, .ptx, or .tile (the tile DSL).  The text is
 * UTF-8: a UTF-8 byte order mark (what some editors put first) is dropped,
 * as compilers drop it, so that line 1 compiles and its columns are the
 * ones the editor shows; a file with a NUL byte (UTF-16, or not text) or a
 * byte sequence that is not UTF-8 (NVRTC stops reading at one, and would
 * compile whatever came before it) is refused at its line and column.
 */
#include "spec.h"

#include <stdlib.h>
#include <string.h>

static int kind_of(const char *path, kb_src_kind *kind)
{
	const char *ext = kb_extension(path);
	if (!strcmp(ext, "cu") || !strcmp(ext, "cuh"))
		*kind = KB_SRC_CUDA;
	else if (!strcmp(ext, "ptx"))
		*kind = KB_SRC_PTX;
	else if (!strcmp(ext, "tile"))
		*kind = KB_SRC_TILE;
	else
		return KB_EINVAL;
	return KB_OK;
}

/* Drops a UTF-8 byte order mark at the start of src's text. */
static void drop_bom(kb_source *src)
{
	if (src->len >= 3 && !memcmp(src->text, "\xef\xbb\xbf", 3)) {
		memmove(src->text, src->text + 3, src->len - 3 + 1);
		src->len -= 3;
	}
}

/* The length of the UTF-8 sequence at p (at most n bytes), or 0 when it is
 * not one: a stray continuation byte, a truncated or overlong sequence, a
 * surrogate, a code point past U+10FFFF, or 0xC0, 0xC1, 0xF5-0xFF. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return 1;
	size_t len = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
		     : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
		return 0;
	return len;
}

/* "path:line:col: error: what", the line (bytes that are not UTF-8 shown
 * as '?') and a caret under the column of text's byte at bad, in err. */
static int refuse_at(const char *path, const char *text, size_t len, const char *bad,
		     const char *what, kb_err *err)
{
	int line = 1, col = 1;
	const char *start = text;
	for (const char *p = text; p < bad; p++)
		if (*p == '\n')
			line++, col = 1, start = p + 1;
		else if (((unsigned char)*p & 0xc0) != 0x80) /* a column per character */
			col++;
	kb_buf shown = KB_BUF_INIT;
	for (const char *p = start; p < text + len && *p && *p != '\n'; p++) {
		size_t n = utf8_len((const unsigned char *)p, (size_t)(text + len - p));
		kb_buf_catn(&shown, n ? p : "?", n ? n : 1);
		p += n ? n - 1 : 0;
	}
	kb_diags d = {0};
	kb_diag_add(&d, KB_DIAG_ERROR, path, shown.s ? shown.s : "", 1, col, 1, "%s", what);
	d.v[0].line = line;
	kb_buf out = KB_BUF_INIT;
	kb_diag_render(&d, &out, false);
	out.s[--out.len] = '\0'; /* the caller ends the line */
	int rc = kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "%s", out.s);
	kb_buf_free(&out);
	kb_diags_free(&d);
	kb_buf_free(&shown);
	return rc;
}

/* An error when text (len bytes) is not UTF-8 text: a NUL byte (and what
 * the file likely is) or the first byte sequence that is not UTF-8. */
static int check_text(const char *path, const char *text, size_t len, kb_err *err)
{
	const char *nul = memchr(text, '\0', len);
	if (nul && len >= 2 && ((unsigned char)text[0] == 0xff || (unsigned char)text[0] == 0xfe) &&
	    ((unsigned char)text[1] == 0xfe || (unsigned char)text[1] == 0xff))
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "%s: the file is UTF-16 (it starts with a byte order mark %02X %02X); "
				  "save it as UTF-8", path, (unsigned char)text[0], (unsigned char)text[1]);
	for (size_t i = 0; i < len;) {
		size_t n = text[i] ? utf8_len((const unsigned char *)text + i, len - i) : 0;
		if (text[i] == '\0')
			return refuse_at(path, text, len, text + i, "a NUL byte: kernel files are UTF-8 text "
					 "(is this one UTF-16, or not text?)", err);
		if (!n) {
			char *what = kb_xasprintf("byte 0x%02X is not UTF-8: kernel files are UTF-8 text "
						  "(NVRTC stops reading at such a byte); save it as UTF-8",
						  (unsigned char)text[i]);
			int rc = refuse_at(path, text, len, text + i, what, err);
			free(what);
			return rc;
		}
		i += n;
	}
	return KB_OK;
}

int kb_compile_source_load(kb_source *src, const char *path, kb_err *err)
{
	memset(src, 0, sizeof *src);
	kb_src_kind kind;
	if (kind_of(path, &kind) < 0)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "%s: unknown kind of kernel file (expected .cu, .ptx or .tile)", path);
	kb_buf text = KB_BUF_INIT;
	int rc = kb_file_read(path, &text, err);
	if (rc == 0)
		rc = check_text(path, text.s, text.len, err);
	if (rc < 0) {
		kb_buf_free(&text);
		return rc;
	}
	src->path = kb_xstrdup(path);
	src->len = text.len;
	src->text = kb_buf_detach(&text);
	src->kind = kind;
	drop_bom(src);
	return KB_OK;
}

int kb_compile_source_open(kb_source *src, const char *path, const char *text, kb_err *err)
{
	if (!text)
		return kb_compile_source_load(src, path, err);
	kb_compile_source_init(src, path, text, kb_compile_source_kind(path));
	return KB_OK;
}

kb_src_kind kb_compile_source_kind(const char *path)
{
	kb_src_kind kind = KB_SRC_CUDA;
	kind_of(path, &kind);
	return kind;
}

void kb_compile_source_init(kb_source *src, const char *path, const char *text,
			    kb_src_kind kind)
{
	src->path = kb_xstrdup(path);
	src->text = kb_xstrdup(text);
	src->len = strlen(text);
	src->kind = kind;
	drop_bom(src);
}

void kb_compile_source_free(kb_source *src)
{
	free(src->path);
	free(src->text);
	memset(src, 0, sizeof *src);
}
