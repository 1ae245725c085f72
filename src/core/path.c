/*
 * path.c - paths as names: the last component and the extension, a path
 * resolved (symbolic links, "." and "..") and whether one lies in a
 * directory, and this program's own file and folder.  Nothing here fails
 * with a kb_err, so err.c can use it (a caller's file:line) and file.c can
 * sit above both.
 */
#include "kb.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *kb_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* "." and ".." and empty components of an absolute path folded away. */
static char *fold(const char *abs)
{
	kb_buf b = KB_BUF_INIT;
	for (const char *p = abs; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 2 && !strncmp(p, "..", 2)) { /* drop the last component */
			while (b.len > 0 && b.s[b.len - 1] != '/')
				b.len--;
			if (b.len > 0)
				b.s[--b.len] = '\0';
		} else if (n && !(n == 1 && *p == '.')) {
			kb_buf_catc(&b, '/');
			kb_buf_catn(&b, p, n);
		}
		p += n;
	}
	if (!b.len) {
		kb_buf_free(&b);
		return kb_xstrdup("/");
	}
	return kb_buf_detach(&b);
}

char *kb_path_resolve(const char *path)
{
	char *r = realpath(path, NULL);
	if (r)
		return r;
	/* not there (yet): its folder resolved if that exists, else as written */
	const char *slash = strrchr(path, '/');
	char *dir = slash ? kb_xstrndup(path, slash == path ? 1 : (size_t)(slash - path))
			  : kb_xstrdup(".");
	char *rdir = realpath(dir, NULL), *cwd = NULL, *abs;
	if (rdir)
		abs = kb_xasprintf("%s/%s", rdir, slash ? slash + 1 : path);
	else if (path[0] == '/')
		abs = kb_xstrdup(path);
	else
		abs = kb_xasprintf("%s/%s", (cwd = getcwd(NULL, 0)) ? cwd : "", path);
	r = fold(abs);
	free(abs), free(cwd), free(rdir), free(dir);
	return r;
}

bool kb_path_within(const char *path, const char *dir)
{
	char *p = kb_path_resolve(path), *d = kb_path_resolve(dir);
	size_t n = strlen(d);
	bool in = !strncmp(p, d, n) && (p[n] == '/' || p[n] == '\0' || (n == 1 && d[0] == '/'));
	free(p), free(d);
	return in;
}

const char *kb_extension(const char *path)
{
	const char *base = kb_basename(path);
	const char *dot = strrchr(base, '.');
	return dot ? dot + 1 : "";
}

char *kb_self_exe(void)
{
	return realpath(KB_SELF_EXE, NULL);
}

char *kb_self_dir(void)
{
	char *self = kb_self_exe();
	char *slash = self ? strrchr(self, '/') : NULL;
	if (slash)
		*slash = '\0';
	return self;
}
