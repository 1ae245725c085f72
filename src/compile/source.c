/*
 * source.c - kb_source: a kernel file's path, text and kind.  The kind comes
 * from the extension: .cu/.cuh, .ptx, or .tile (the tile DSL).  The text is
 * UTF-8: a UTF-8 byte order mark (what some editors put first) is dropped,
 * as compilers drop it, so that line 1 compiles and its columns are the
 * ones the editor shows; a file with a NUL byte (UTF-16, or not text) is
 * refused, saying where, instead of compiling whatever came before it.
 */
#include "compile.h"

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

/* An error when text (len bytes) holds a NUL byte: where, and what the
 * file likely is. */
static int check_text(const char *path, const char *text, size_t len, kb_err *err)
{
	const char *nul = memchr(text, '\0', len);
	if (!nul)
		return KB_OK;
	if (len >= 2 && ((unsigned char)text[0] == 0xff || (unsigned char)text[0] == 0xfe) &&
	    ((unsigned char)text[1] == 0xfe || (unsigned char)text[1] == 0xff))
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "%s: the file is UTF-16 (it starts with a byte order mark %02X %02X); "
				  "save it as UTF-8", path, (unsigned char)text[0], (unsigned char)text[1]);
	int line = 1, col = 1;
	for (const char *p = text; p < nul; p++)
		*p == '\n' ? (line++, col = 1) : col++;
	return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
			  "%s:%d:%d: a NUL byte: kernel files are UTF-8 text (is this one UTF-16, "
			  "or not text?)", path, line, col);
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
