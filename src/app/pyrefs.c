/*
 * pyrefs.c - whether a Python reference may run: it executes code on this
 * machine, so kbench runs it unasked only from the user's own file.  Text
 * from elsewhere - a session folder someone exported (sessions/ of a pull
 * request), a recorded variant that `kbench replay` runs, or text whose
 * `ref` line is not the file's own (a model's answer; `kbench optimize`
 * refuses a changed ref line before this) - runs its Python only after an
 * explicit yes: --trust-python on the command line, or KBENCH_TRUST_PYTHON=1.
 * The runner refuses a Python reference the request does not allow, with
 * the reason given here (runner/run.c).  It decides; it runs nothing.
 */
#include "app_int.h"

#include <stdlib.h>
#include <string.h>

/* The first `//! ref` line of text, blanks trimmed, or "" (a new string);
 * *lineno its number when given. */
static char *ref_line(const char *text, int *lineno)
{
	int no = 0;
	for (const char *s = text; s && *s;) {
		no++;
		const char *e = strchr(s, '\n'), *t = s;
		size_t n = e ? (size_t)(e - s) : strlen(s);
		while (*t == ' ' || *t == '\t')
			t++;
		if (!strncmp(t, "//!", 3)) {
			const char *w = t + 3;
			while (*w == ' ' || *w == '\t')
				w++;
			if (!strncmp(w, "ref", 3) && (w[3] == ' ' || w[3] == '\t')) {
				const char *end = s + n;
				while (end > w && (end[-1] == ' ' || end[-1] == '\r' || end[-1] == '\t'))
					end--;
				if (lineno)
					*lineno = no;
				return kb_xstrndup(w, (size_t)(end - w));
			}
		}
		s = e ? e + 1 : NULL;
	}
	return kb_xstrdup("");
}

static bool is_python_ref(const char *line)
{
	const char *w = line + 3;
	while (*w == ' ' || *w == '\t')
		w++;
	return line[0] && (!strncmp(w, "numpy", 5) || !strncmp(w, "torch", 5)) &&
	       (w[5] == ' ' || w[5] == '\t');
}

/* The session folder (a manifest.json beside a journal.jsonl) path lies
 * in, or NULL; a new string. */
static char *session_folder(const char *path)
{
	char *dir = kb_path_resolve(path);
	for (char *slash; (slash = strrchr(dir, '/')) && slash != dir;) {
		*slash = 0;
		char *m = kb_xasprintf("%s/manifest.json", dir), *j = kb_xasprintf("%s/journal.jsonl", dir);
		bool found = kb_file_exists(m) && kb_file_exists(j);
		free(m);
		free(j);
		if (found)
			return dir;
	}
	free(dir);
	return NULL;
}

/* The result of a request whose Python reference is refused, as the
 * runner would give it, or NULL when the request may go (a new reference). */
json_t *kb_app__python_refused(json_t *req)
{
	if (!json_is_false(json_object_get(req, "python")))
		return NULL;
	return json_pack("{s:s, s:s, s:s}", "type", "result", "status", "python_refused", "message",
			 json_string_value(json_object_get(req, "python_why")));
}

char *kb_app__python_refusal(const kb_app_run_opts *o)
{
	const char *trust = getenv("KBENCH_TRUST_PYTHON");
	kb_buf text = KB_BUF_INIT;
	char *why = NULL, *folder = NULL, *mine = NULL;
	if (trust && !strcmp(trust, "1"))
		return NULL;
	if (o->text)
		kb_buf_cat(&text, o->text);
	else if (!o->path || kb_file_read(o->path, &text, NULL) < 0)
		goto out;
	int lineno = 0;
	char *line = ref_line(text.s, &lineno);
	if (!is_python_ref(line))
		goto done;
	if (o->python_from) {
		why = kb_xasprintf("%s", o->python_from);
	} else if (o->path && (folder = session_folder(o->path))) {
		why = kb_xasprintf("%s lies in a session folder (%s), someone else's work", o->path,
				   folder);
	} else if (o->text) {
		kb_buf disk = KB_BUF_INIT;
		if (o->path && kb_file_read(o->path, &disk, NULL) == 0)
			mine = ref_line(disk.s, NULL);
		kb_buf_free(&disk);
		if (!mine || strcmp(mine, line))
			why = kb_xasprintf("the text run is not %s as saved: its ref line is not the "
					   "file's own (a model's answer?)", o->path ? o->path : "the file");
	}
	if (why) {
		char *msg = kb_xasprintf("%s:%d: not run: `%s` is a Python reference, which would run "
					 "on this machine, and %s. Read it, then say yes with "
					 "--trust-python (or KBENCH_TRUST_PYTHON=1)",
					 o->path ? o->path : "?", lineno, line + 3 + strspn(line + 3, " \t"), why);
		free(why);
		why = msg;
	}
done:
	free(line);
out:
	free(folder);
	free(mine);
	kb_buf_free(&text);
	return why;
}
