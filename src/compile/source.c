/*
 * source.c - kb_source: a kernel file's path, text and kind.  The kind comes
 * from the extension: .cu/.cuh, .ptx, or .tile (the tile DSL).
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

int kb_compile_source_load(kb_source *src, const char *path, kb_err *err)
{
	memset(src, 0, sizeof *src);
	kb_src_kind kind;
	if (kind_of(path, &kind) < 0)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "%s: unknown kind of kernel file (expected .cu, .ptx or .tile)", path);
	kb_buf text = KB_BUF_INIT;
	int rc = kb_file_read(path, &text, err);
	if (rc < 0) {
		kb_buf_free(&text);
		return rc;
	}
	src->path = kb_xstrdup(path);
	src->len = text.len;
	src->text = kb_buf_detach(&text);
	src->kind = kind;
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
}

void kb_compile_source_free(kb_source *src)
{
	free(src->path);
	free(src->text);
	memset(src, 0, sizeof *src);
}
