/*
 * export.c - a session as a self-contained plain-text folder, what
 * sessions/ of a repository holds and a pull request carries, and back.
 *
 * The folder (format "kbench-session/1"):
 *   manifest.json   the id, when and on which GPUs it was recorded, every
 *                   file (the path it is shown by, kb_session_files_shown:
 *                   its stored path when imported; the spellings the journal
 *                   uses for it) with its variants (name, source, Result,
 *                   time, message, label, kernel, verdict, median), and
 *                   "order": every variant in the order it was recorded
 *   README.md       the same as tables, for a person reading the PR
 *   journal.jsonl   the journal, byte for byte
 *   <path>/vN<ext>  each variant's source;  <path>/vN.json  its note (the
 *                   Result), indented, keys sorted
 * No git refs, no absolute paths, no export date: the same session gives
 * the same bytes, and importing a folder and exporting it again gives the
 * folder back byte for byte (the import keeps ids, messages, times, notes
 * and the journal; the commits it makes are new, so no commit id is written).
 *
 * An imported session is *detached*: its files are names (meta.json's
 * "paths" maps each spelling to its stored path) and all its variants live
 * in its private repository, wherever the files are here.  A folder opened
 * directly (replay, report, kbench-tui --replay) is imported once into a
 * cache directory named by its content.  Does not own how variants are
 * stored (store.c) or which files a journal names (journal.c).
 */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE */
#include "session_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FORMAT "kbench-session/1"

/* ===== small helpers ===== */

/* Writes text to dir/rel, making the folders on the way. */
static int write_file(const char *dir, const char *rel, const char *text, size_t len, kb_err *err)
{
	char *path = kb_xasprintf("%s/%s", dir, rel);
	char *parent = kb_xstrndup(path, (size_t)(strrchr(path, '/') - path));
	int rc = kb_mkdirs(parent, err);
	if (rc == 0)
		rc = kb_file_write(path, text, len, err);
	free(parent);
	free(path);
	return rc;
}

/* j as indented JSON with sorted keys and a final newline (a new string). */
static char *json_text(json_t *j)
{
	char *t = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) |
				    JSON_ENCODE_ANY);
	char *out = kb_xasprintf("%s\n", t ? t : "null");
	free(t);
	return out;
}

static int write_json(const char *dir, const char *rel, json_t *j, kb_err *err)
{
	char *t = json_text(j);
	int rc = write_file(dir, rel, t, strlen(t), err);
	free(t);
	return rc;
}

static void iso_time(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *jpath(json_t *j, const char *a, const char *b, const char *c)
{
	j = json_object_get(j, a);
	if (b)
		j = json_object_get(j, b);
	if (c)
		j = json_object_get(j, c);
	return j;
}

/* The verdict word of a note: the Result's verdict, its status in capitals,
 * or "compiled" when it holds a compile only. */
static char *verdict_of(json_t *note)
{
	json_t *res = json_object_get(note, "result");
	const char *status = json_string_value(json_object_get(res, "status"));
	const char *verdict = json_string_value(json_object_get(res, "verdict"));
	if (!res)
		return kb_xstrdup("compiled");
	if (status && !strcmp(status, "ok") && verdict)
		return kb_xstrdup(verdict);
	char *w = kb_xstrdup(status ? status : "error");
	for (char *p = w; *p; p++)
		*p = *p == '_' ? ' ' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
	return w;
}

/* ===== export ===== */

/* One variant in the order the session recorded them. */
typedef struct {
	int64_t time;
	int seq, file;
	char name[16];
} recorded;

static int by_time(const void *a, const void *b)
{
	const recorded *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->file - y->file;
}

/* The manifest entry of variant v of a file exported as `path`, after
 * writing its source and note into the folder. */
static int export_variant(kb_store *st, const kb_variant *v, const char *path, const char *dir,
			  json_t **entry, kb_err *err)
{
	const char *ext = kb_extension(path);
	char *text = NULL, *src = kb_xasprintf("%s/%s%s%s", path, v->name, *ext ? "." : "", ext);
	char *res = kb_xasprintf("%s/%s.json", path, v->name), *verdict = verdict_of(v->note);
	size_t len = 0;
	int rc = kb_session_store_text(st, v, &text, &len, err);
	if (rc == 0)
		rc = write_file(dir, src, text, len, err);
	if (rc == 0 && v->note)
		rc = write_json(dir, res, v->note, err);
	*entry = json_pack("{s:s, s:s, s:I, s:s, s:s}", "name", v->name, "source", src, "time",
			   (json_int_t)v->time, "message", v->message ? v->message : "", "verdict",
			   verdict);
	if (v->note)
		json_object_set_new(*entry, "result", json_string(res));
	if (v->label)
		json_object_set_new(*entry, "label", json_string(v->label));
	if (v->kernel)
		json_object_set_new(*entry, "kernel", json_string(v->kernel));
	json_t *med = jpath(v->note, "result", "timing", "median_us");
	if (json_is_number(med))
		json_object_set(*entry, "median_us", med);
	free(verdict);
	free(res);
	free(src);
	free(text);
	return rc;
}

/* The journal's spellings of each of the n files (files[i] first). */
static json_t *spellings(const kb_session *s, char **files, int n)
{
	json_t *out = json_array(), *evs = NULL, *map = kb_session__names(s);
	char **ids = kb_xcalloc((size_t)n + 1, sizeof *ids);
	long trunc;
	for (int i = 0; i < n; i++) {
		ids[i] = kb_session__file_identity(s, map, files[i]);
		json_array_append_new(out, json_pack("[s]", files[i]));
	}
	if (kb_session_journal_read(s, &evs, &trunc, NULL) == 0) {
		for (size_t e = 0; e < json_array_size(evs); e++) {
			const char *f = json_string_value(json_object_get(json_array_get(evs, e), "file"));
			char *id = f ? kb_session__file_identity(s, map, f) : NULL;
			for (int i = 0; f && i < n; i++) {
				json_t *names = json_array_get(out, (size_t)i);
				bool have = false;
				for (size_t k = 0; k < json_array_size(names); k++)
					have |= !strcmp(json_string_value(json_array_get(names, k)), f);
				if (!have && !strcmp(ids[i], id))
					json_array_append_new(names, json_string(f));
			}
			free(id);
		}
	}
	for (int i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	json_decref(map);
	json_decref(evs);
	return out;
}

/* README.md: what the folder is, and each file's variants as a table. */
static char *readme(json_t *m)
{
	kb_buf b = KB_BUF_INIT;
	json_t *gpus = json_object_get(m, "gpus"), *files = json_object_get(m, "files");
	kb_buf_catf(&b, "# kbench session %s\n\nRecorded %s to %s", json_string_value(json_object_get(m, "id")),
		    json_string_value(jpath(m, "recorded", "first", NULL)),
		    json_string_value(jpath(m, "recorded", "last", NULL)));
	for (size_t i = 0; i < json_array_size(gpus); i++)
		kb_buf_catf(&b, "%s%s", i ? ", " : " on ", json_string_value(json_array_get(gpus, i)));
	kb_buf_cat(&b, ". Replay it with `kbench replay <this folder>`, render it with `kbench report "
		       "<this folder> -o report.html`, step through it with `kbench-tui --replay <this "
		       "folder>`.\n");
	for (size_t f = 0; f < json_array_size(files); f++) {
		json_t *file = json_array_get(files, f), *vs = json_object_get(file, "variants");
		kb_buf_catf(&b, "\n## %s\n\n| variant | kernel | verdict | median us | what it is |\n"
				"|---|---|---|---:|---|\n", json_string_value(json_object_get(file, "path")));
		for (size_t i = 0; i < json_array_size(vs); i++) {
			json_t *v = json_array_get(vs, i);
			const char *msg = json_string_value(json_object_get(v, "message"));
			const char *label = json_string_value(json_object_get(v, "label"));
			const char *kernel = json_string_value(json_object_get(v, "kernel"));
			json_t *med = json_object_get(v, "median_us");
			const char *colon = msg ? strstr(msg, ": ") : NULL;
			const char *what = colon ? colon + 2 : msg ? msg : "";
			kb_buf_catf(&b, "| [%s](%s)%s%s | %s | %s | ",
				    json_string_value(json_object_get(v, "name")),
				    json_string_value(json_object_get(v, "source")), label ? " " : "",
				    label ? label : "", kernel ? kernel : "", json_string_value(json_object_get(v, "verdict")));
			if (json_is_number(med))
				kb_buf_catf(&b, "%.2f", json_number_value(med));
			kb_buf_catf(&b, " | %.*s |\n", (int)strcspn(what, "\n|"), what);
		}
	}
	return kb_buf_detach(&b);
}

/* Files and manifest entries of every file of s; the order and the GPUs. */
static int export_files(const kb_session *s, const char *dir, json_t *m, kb_err *err)
{
	char **files = NULL;
	recorded *order = NULL;
	int nf = kb_session_files(s, &files, err), no = 0, ocap = 0, rc = nf < 0 ? nf : KB_OK;
	json_t *names = nf > 0 ? spellings(s, files, nf) : json_array(), *arr = json_array();
	/* a file is exported under the path it is shown by (never this machine's
	 * folders; two files of one name apart); an imported one as it was */
	char **shown = nf > 0 && !s->detached ? kb_session_files_shown(s, files, nf) : NULL;
	json_t *gpus = json_array();
	int64_t first = 0, last = 0;
	for (int f = 0; f < nf && rc == 0; f++) {
		kb_store *st = NULL;
		kb_variant *vs = NULL;
		int n = 0;
		if ((rc = kb_session_store_open(s, files[f], &st, err)) == 0 &&
		    (rc = kb_session_store_list(st, &vs, &n, err)) == 0) {
			json_t *fv = json_array();
			const char *path = shown ? shown[f] + (shown[f][0] == '/') : kb_session_store_path(st);
			for (int i = 0; i < n && rc == 0; i++) {
				json_t *e = NULL;
				rc = export_variant(st, &vs[i], path, dir, &e, err);
				json_array_append_new(fv, e);
				recorded *r = KB_PUSH(order, no, ocap);
				*r = (recorded){.time = vs[i].time, .seq = vs[i].seq, .file = f};
				snprintf(r->name, sizeof r->name, "%s", vs[i].name);
				first = !first || vs[i].time < first ? vs[i].time : first;
				last = vs[i].time > last ? vs[i].time : last;
				json_t *g = jpath(vs[i].note, "result", "env", "device");
				const char *gn = json_string_value(json_object_get(g, "name"));
				bool have = !gn;
				for (size_t k = 0; !have && k < json_array_size(gpus); k++)
					have = !strcmp(json_string_value(json_array_get(gpus, k)), gn);
				if (!have)
					json_array_append_new(gpus, json_string(gn));
			}
			json_array_append_new(arr, json_pack("{s:s, s:O, s:o}", "path", path, "names",
							     json_array_get(names, (size_t)f), "variants", fv));
		}
		kb_session_variants_free(vs, n);
		kb_session_store_close(st);
	}
	if (no > 0) /* a session with nothing recorded yet has no order to sort */
		qsort(order, (size_t)no, sizeof *order, by_time);
	json_t *ord = json_array();
	for (int i = 0; i < no; i++)
		json_array_append_new(ord, json_pack("[s, s]", json_string_value(json_object_get(
					 json_array_get(arr, (size_t)order[i].file), "path")), order[i].name));
	char a[32], b[32];
	iso_time(first, a);
	iso_time(last, b);
	json_object_set_new(m, "recorded", json_pack("{s:s, s:s}", "first", a, "last", b));
	json_object_set_new(m, "gpus", gpus);
	json_object_set_new(m, "files", arr);
	json_object_set_new(m, "order", ord);
	json_decref(names);
	free(order);
	for (int f = 0; f < nf; f++) {
		free(files[f]);
		if (shown)
			free(shown[f]);
	}
	free(shown);
	free(files);
	return rc;
}

static bool is_empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	bool empty = d != NULL;
	for (struct dirent *de; d && empty && (de = readdir(d));)
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return empty;
}

/* Whether dir may receive an export: absent, empty, or an earlier export
 * (never anything else of the user's). */
static int check_target(const char *dir, kb_err *err)
{
	struct stat sb;
	if (stat(dir, &sb) < 0 || (S_ISDIR(sb.st_mode) && is_empty_dir(dir)))
		return KB_OK;
	if (!S_ISDIR(sb.st_mode) || !kb_session__is_export(dir))
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0,
			      "%s is not empty and holds no kbench export: choose another folder", dir);
	return KB_OK;
}

/* Puts the finished folder tmp at dir: one atomic exchange with an earlier
 * export (then removed), or a rename.  Readers of dir (git, a replay) see
 * the old export or the new one, never a mix; a kill leaves at most tmp. */
static int put_in_place(const char *tmp, const char *dir, kb_err *err)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0)
		return kb_session__remove_tree(tmp, true) < 0 ? kb_err_errno(err, "cannot remove", tmp)
							       : KB_OK;
	if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
		return kb_err_errno(err, "cannot put the export at", dir);
	/* no dir yet, or a file system without the exchange: replace it */
	if (errno != ENOENT && kb_session__remove_tree(dir, true) < 0)
		return kb_err_errno(err, "cannot replace", dir);
	if (rename(tmp, dir) < 0)
		return kb_err_errno(err, "cannot put the export at", dir);
	return KB_OK;
}

/* Writes the export into the empty folder dir. */
static int write_export(const kb_session *s, const char *dir, kb_err *err)
{
	json_t *meta = NULL, *m = NULL;
	kb_buf journal = KB_BUF_INIT;
	char *path = kb_xasprintf("%s/meta.json", s->dir), *journal_path = kb_xasprintf("%s/journal.jsonl", s->dir);
	meta = json_load_file(path, 0, NULL);
	m = json_pack("{s:s, s:s, s:O?, s:s}", "format", FORMAT, "id", s->id, "created",
		      json_object_get(meta, "created"), "kbench", KB_VERSION);
	int rc = export_files(s, dir, m, err);
	if (rc < 0)
		goto out;
	if (kb_file_read(journal_path, &journal, NULL) == 0 &&
	    (rc = write_file(dir, "journal.jsonl", journal.s ? journal.s : "", journal.len, err)) < 0)
		goto out;
	char *r = readme(m);
	rc = write_file(dir, "README.md", r, strlen(r), err);
	free(r);
	if (rc == 0)
		rc = write_json(dir, "manifest.json", m, err);
out:
	kb_buf_free(&journal);
	json_decref(m);
	json_decref(meta);
	free(journal_path);
	free(path);
	return rc;
}

int kb_session_export(const kb_session *s, const char *dir_in, kb_err *err)
{
	/* a link is followed: the export goes where it points, the link stays */
	char *dir = realpath(dir_in, NULL);
	if (!dir)
		dir = kb_xstrdup(dir_in);
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = '\0';
	const char *slash = strrchr(dir, '/');
	char *parent = slash ? kb_xstrndup(dir, slash == dir ? 1 : (size_t)(slash - dir)) : kb_xstrdup(".");
	char *tmp = kb_xasprintf("%s/.new.%s.%ld", parent, slash ? slash + 1 : dir, (long)getpid());
	int rc = check_target(dir, err);
	if (rc == 0 && (rc = kb_mkdirs(parent, err)) == 0) {
		kb_session__sweep_unfinished(parent); /* what a killed export left */
		kb_session__remove_tree(tmp, true);
		if ((rc = kb_mkdirs(tmp, err)) == 0 && (rc = write_export(s, tmp, err)) == 0)
			rc = put_in_place(tmp, dir, err);
		if (rc < 0)
			kb_session__remove_tree(tmp, true);
	}
	free(tmp);
	free(parent);
	free(dir);
	return rc;
}

/* ===== import ===== */

bool kb_session__is_export(const char *path)
{
	char *man = kb_xasprintf("%s/manifest.json", path);
	json_t *j = json_load_file(man, 0, NULL);
	const char *f = json_string_value(json_object_get(j, "format"));
	bool ok = f && !strcmp(f, FORMAT);
	json_decref(j);
	free(man);
	return ok;
}

/* The file at rel inside folder, or NULL when rel leads out of it (an
 * absolute path, "..", or a link to elsewhere): a folder from a pull
 * request must not make kbench read, and a report show, the reader's own
 * files (../../.ssh/id_rsa as a variant's "source"). */
static char *inside(const char *folder, const char *rel)
{
	if (!rel || !*rel || rel[0] == '/')
		return NULL;
	char *p = kb_xasprintf("%s/%s", folder, rel);
	if (!kb_path_within(p, folder)) {
		free(p);
		return NULL;
	}
	return p;
}

static json_t *load_manifest(const char *folder, kb_err *err)
{
	char *man = inside(folder, "manifest.json");
	if (!man) {
		KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0,
		       "%s/manifest.json is a link out of the folder: not a kbench session export",
		       folder);
		return NULL;
	}
	json_error_t je;
	json_t *m = json_load_file(man, 0, &je);
	const char *f = json_string_value(json_object_get(m, "format"));
	if (!m || !f || strcmp(f, FORMAT)) {
		KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "%s: not a kbench session export (%s)", man,
		       m ? "format is not " FORMAT : je.text);
		json_decref(m);
		m = NULL;
	}
	free(man);
	return m;
}

/* Whether member key of object o is the string s (a manifest is untrusted:
 * any member may be missing or of another type). */
static bool member_is(json_t *o, const char *key, const char *s)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v && !strcmp(v, s);
}

/* The manifest's entry of file `path` and of its variant `name`. */
static json_t *find_variant(json_t *m, const char *path, const char *name, json_t **file)
{
	json_t *files = json_object_get(m, "files");
	for (size_t f = 0; f < json_array_size(files); f++) {
		*file = json_array_get(files, f);
		if (!member_is(*file, "path", path))
			continue;
		json_t *vs = json_object_get(*file, "variants");
		for (size_t i = 0; i < json_array_size(vs); i++)
			if (member_is(json_array_get(vs, i), "name", name))
				return json_array_get(vs, i);
	}
	return NULL;
}

/* Commits one variant of the manifest (in the order recorded) into s. */
static int import_variant(const kb_session *s, const char *folder, json_t *m, json_t *item,
			  kb_err *err)
{
	const char *path = json_string_value(json_array_get(item, 0));
	const char *name = json_string_value(json_array_get(item, 1));
	json_t *file = NULL, *v = path && name ? find_variant(m, path, name, &file) : NULL;
	if (!v)
		return KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "manifest: no variant %s of %s",
			      name ? name : "?", path ? path : "?");
	const char *source = json_string_value(json_object_get(v, "source"));
	if (!source)
		return KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "manifest: variant %s of %s has no source",
			      name, path);
	const char *spelling = json_string_value(json_array_get(json_object_get(file, "names"), 0));
	const char *res = json_string_value(json_object_get(v, "result"));
	char *src = inside(folder, source), *resp = res ? inside(folder, res) : NULL;
	if (!src || (res && !resp)) {
		free(src);
		free(resp);
		return KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0,
			      "manifest: %s of %s names '%s', which is not inside %s", name, path,
			      src ? res : source, folder);
	}
	kb_buf text = KB_BUF_INIT;
	kb_store *st = NULL;
	kb_variant out;
	memset(&out, 0, sizeof out);
	json_error_t je;
	json_t *note = NULL;
	int rc = kb_file_read(src, &text, err);
	if (rc == 0 && resp && !(note = json_load_file(resp, JSON_DECODE_ANY, &je)))
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "%s: %s", resp, je.text);
	if (rc == 0 && (rc = kb_session_store_open(s, spelling ? spelling : path, &st, err)) == 0)
		rc = kb_session_store_commit_at(st, text.s ? text.s : "", text.len,
						json_string_value(json_object_get(v, "message")),
						json_integer_value(json_object_get(v, "time")), note, &out,
						err);
	else
		json_decref(note);
	if (rc == 0 && strcmp(out.name, name))
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "manifest: %s of %s came back as %s",
			    name, path, out.name);
	kb_session_variant_free(&out);
	kb_session_store_close(st);
	kb_buf_free(&text);
	free(resp);
	free(src);
	return rc;
}

/* Imports folder into the (existing, empty) session directory dir as id. */
static int import_into(const char *folder, const char *dir, const char *id, kb_err *err)
{
	json_t *m = load_manifest(folder, err), *paths = json_object();
	if (!m)
		return KB_EINVAL;
	json_t *files = json_object_get(m, "files");
	for (size_t f = 0; f < json_array_size(files); f++) {
		json_t *file = json_array_get(files, f), *names = json_object_get(file, "names");
		for (size_t k = 0; k < json_array_size(names); k++)
			json_object_set(paths, json_string_value(json_array_get(names, k)),
					json_object_get(file, "path"));
	}
	json_t *meta = json_pack("{s:s, s:O?, s:b, s:o}", "id", id, "created",
				 json_object_get(m, "created"), "detached", 1, "paths", paths);
	char *jsrc = inside(folder, "journal.jsonl");
	kb_buf journal = KB_BUF_INIT;
	int rc = jsrc ? kb_session__write_meta(dir, meta, err)
		      : KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0,
			       "%s/journal.jsonl is a link out of the folder", folder);
	if (rc == 0 && kb_file_read(jsrc, &journal, NULL) == 0)
		rc = write_file(dir, "journal.jsonl", journal.s ? journal.s : "", journal.len, err);
	kb_session s;
	memset(&s, 0, sizeof s);
	snprintf(s.id, sizeof s.id, "%s", id);
	s.dir = (char *)dir;
	s.detached = true;
	json_t *order = json_object_get(m, "order");
	for (size_t i = 0; rc == 0 && i < json_array_size(order); i++)
		rc = import_variant(&s, folder, m, json_array_get(order, i), err);
	kb_buf_free(&journal);
	free(jsrc);
	json_decref(meta);
	json_decref(m);
	return rc;
}

int kb_session_import(const char *folder, const char *name, kb_session *s, kb_err *err)
{
	memset(s, 0, sizeof *s);
	json_t *m = load_manifest(folder, err);
	if (!m)
		return KB_EINVAL;
	char id[96];
	const char *mid = json_string_value(json_object_get(m, "id"));
	snprintf(id, sizeof id, "%s", name ? name : mid ? mid : "");
	json_decref(m);
	if (!kb_session__valid_id(id))
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "bad session name '%s'", id);
	char *tmp = NULL, *dir = NULL;
	int rc = kb_session__make_dir(id, &tmp, err);
	if (rc < 0)
		return rc;
	/* built under its building name: a kill leaves no half session */
	if ((rc = import_into(folder, tmp, id, err)) < 0) {
		kb_session__remove_tree(tmp, true);
		free(tmp);
		return rc;
	}
	if ((rc = kb_session__publish_dir(tmp, id, &dir, err)) < 0)
		return rc;
	return kb_session__open_dir(dir, s);
}

/* A hash of everything the manifest names, the manifest and the journal. */
static void folder_hash(const char *folder, json_t *m, char hex[KB_HASH_HEX])
{
	kb_hasher *h = kb_hash_new();
	const char *top[] = {"manifest.json", "journal.jsonl"};
	kb_buf b = KB_BUF_INIT;
	for (size_t i = 0; i < KB_ARRAY_LEN(top); i++) {
		char *p = inside(folder, top[i]);
		kb_buf_reset(&b);
		if (p && kb_file_read(p, &b, NULL) == 0)
			kb_hash_update(h, b.s ? b.s : "", b.len);
		kb_hash_str(h, "\n--\n");
		free(p);
	}
	json_t *files = json_object_get(m, "files");
	for (size_t f = 0; f < json_array_size(files); f++) {
		json_t *vs = json_object_get(json_array_get(files, f), "variants");
		for (size_t i = 0; i < json_array_size(vs); i++) {
			const char *keys[] = {"source", "result"};
			for (size_t k = 0; k < KB_ARRAY_LEN(keys); k++) {
				const char *rel = json_string_value(json_object_get(json_array_get(vs, i), keys[k]));
				char *p = inside(folder, rel); /* elsewhere: refused by the import */
				kb_buf_reset(&b);
				if (p && kb_file_read(p, &b, NULL) == 0)
					kb_hash_update(h, b.s ? b.s : "", b.len);
				kb_hash_str(h, "\n--\n");
				free(p);
			}
		}
	}
	kb_buf_free(&b);
	kb_hash_final(h, hex);
}

int kb_session__open_export(const char *folder, kb_session *s, kb_err *err)
{
	json_t *m = load_manifest(folder, err);
	if (!m)
		return KB_EINVAL;
	char hex[KB_HASH_HEX], id[96];
	folder_hash(folder, m, hex);
	snprintf(id, sizeof id, "%s", json_string_value(json_object_get(m, "id")));
	json_decref(m);
	char *cache = kb_cache_dir("exported");
	char *dir = kb_xasprintf("%s/%s-%.16s", cache, id, hex);
	char *tmp = kb_xasprintf("%s.tmp.%ld", dir, (long)getpid());
	int rc = KB_OK;
	if (!kb_session__has_meta(dir)) {
		if ((rc = kb_mkdirs(tmp, err)) == 0 && (rc = import_into(folder, tmp, id, err)) == 0 &&
		    rename(tmp, dir) < 0 && !kb_session__has_meta(dir))
			rc = kb_err_errno(err, "cannot keep the imported session in", dir);
		kb_session__remove_tree(tmp, true); /* a loser's or a failed copy */
	}
	free(tmp);
	free(cache);
	if (rc < 0) {
		free(dir);
		return rc;
	}
	return kb_session__open_dir(dir, s);
}
