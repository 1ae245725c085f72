/*
 * kbench_session.c - the session verbs of `kbench`: log, show, diff,
 * checkout, label, note, sessions, session new/export/import, replay,
 * report, and `remote setup`.  Argument parsing and output only; the work
 * is kb_app_* calls.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *pos[32];
	int npos;
	const char *file, *only, *output, *name;
	const char *cols[KB_LOG_COLS]; /* log --counter NAME... */
	int ncols;
	int what;
	bool help, bad;
} sess_args;

/* Positional words and the few flags the session verbs take. */
static sess_args parse_sess(int argc, char **argv)
{
	sess_args a;
	memset(&a, 0, sizeof a);
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i];
		bool more = i + 1 < argc;
		if (!strcmp(w, "-h") || !strcmp(w, "--help"))
			a.help = true;
		else if (!strcmp(w, "--file") && more)
			a.file = argv[++i];
		else if (!strcmp(w, "--only") && more)
			a.only = argv[++i];
		else if (!strcmp(w, "--trust-python")) /* the yes app/pyrefs.c asks for */
			setenv("KBENCH_TRUST_PYTHON", "1", 1);
		else if (!strcmp(w, "--name") && more)
			a.name = argv[++i];
		else if (!strcmp(w, "--counter") && more && a.ncols < KB_LOG_COLS)
			a.cols[a.ncols++] = argv[++i];
		else if ((!strcmp(w, "-o") || !strcmp(w, "--output")) && more)
			a.output = argv[++i];
		else if (!strcmp(w, "--source"))
			a.what |= KB_DIFF_SOURCE;
		else if (!strcmp(w, "--sass"))
			a.what |= KB_DIFF_SASS;
		else if (!strcmp(w, "--numbers"))
			a.what |= KB_DIFF_NUMBERS;
		else if (w[0] == '-' || a.npos == (int)KB_ARRAY_LEN(a.pos))
			a.bad = true;
		else
			a.pos[a.npos++] = w;
	}
	return a;
}

/* Prints out (stdout) or the error; the exit status: 2 when what the
 * user named is not there, not valid or not one thing (a variant, a file,
 * a session, a label), 3 for anything else. */
static int finish_text(int rc, kb_buf *out, const kb_err *err)
{
	if (out->s)
		fputs(out->s, stdout);
	kb_buf_free(out);
	if (rc < 0) {
		fprintf(stderr, "kbench: %s\n", err->msg);
		return rc == KB_EAMBIG || rc == KB_ENOTFOUND || rc == KB_EINVAL ? KB_CLI_EXIT_USAGE
									      : KB_CLI_EXIT_ENV;
	}
	return 0;
}

static int sess_usage(const char *usage, const sess_args *a)
{
	fputs(usage, a->help ? stdout : stderr);
	return a->help ? 0 : KB_CLI_EXIT_USAGE;
}

int kb_cli_log(int argc, char **argv)
{
	static const char u[] =
		"usage: kbench log [FILE|SESSION] [--counter NAME]...\n"
		"  --counter NAME  a column of NAME across the variants: a hardware counter as\n"
		"                  `kbench profile` names it (dram__bytes_read.sum), or a Result\n"
		"                  field (timing.cv, roofline.pct_of_measured_copy); up to 6\n";
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos > 1)
		return sess_usage(u, &a);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	return finish_text(kb_app_log_cols(a.npos ? a.pos[0] : NULL, a.cols, a.ncols, &out, &err),
			   &out, &err);
}

int kb_cli_show(int argc, char **argv)
{
	static const char u[] = "usage: kbench show vN [--file FILE]\n";
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos != 1)
		return sess_usage(u, &a);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	return finish_text(kb_app_show(a.pos[0], a.file, &out, &err), &out, &err);
}

int kb_cli_diff(int argc, char **argv)
{
	static const char u[] = "usage: kbench diff vA vB [--source] [--sass] [--numbers] [--file FILE]\n"
				"  (all three when none is named; SASS needs nvdisasm)\n";
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos != 2)
		return sess_usage(u, &a);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	int what = a.what ? a.what : KB_DIFF_SOURCE | KB_DIFF_SASS | KB_DIFF_NUMBERS;
	return finish_text(kb_app_diff(a.pos[0], a.pos[1], a.file, what, &out, &err), &out, &err);
}

int kb_cli_checkout(int argc, char **argv)
{
	static const char u[] = "usage: kbench checkout vN [--file FILE]\n";
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos != 1)
		return sess_usage(u, &a);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	return finish_text(kb_app_checkout(a.pos[0], a.file, &out, &err), &out, &err);
}

/* label vN LABEL / note vN TEXT... */
static int annotate(const char *key, const char *usage, int argc, char **argv)
{
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos < 2)
		return sess_usage(usage, &a);
	kb_buf text = KB_BUF_INIT, out = KB_BUF_INIT;
	for (int i = 1; i < a.npos; i++)
		kb_buf_catf(&text, "%s%s", i > 1 ? " " : "", a.pos[i]);
	kb_err err = {0};
	int rc = kb_app_annotate(a.pos[0], key, text.s ? text.s : "", a.file, &out, &err);
	kb_buf_free(&text);
	return finish_text(rc, &out, &err);
}

int kb_cli_label(int argc, char **argv)
{
	return annotate("label", "usage: kbench label vN LABEL [--file FILE]\n", argc, argv);
}

int kb_cli_note(int argc, char **argv)
{
	return annotate("note", "usage: kbench note vN TEXT... [--file FILE]\n", argc, argv);
}

int kb_cli_sessions(int argc, char **argv)
{
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos)
		return sess_usage("usage: kbench sessions\n", &a);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	return finish_text(kb_app_sessions(&out, &err), &out, &err);
}

/* `session export NAME -o DIR` / `session import DIR [--name NAME]`. */
static int session_copy(const sess_args *a)
{
	kb_session s;
	kb_err err = {0};
	kb_buf out = KB_BUF_INIT;
	int rc;
	if (!strcmp(a->pos[0], "export")) {
		char id[96];
		const char *name = a->pos[1];
		if (!strcmp(name, "current") && kb_session_current_id(id) == 0)
			name = id;
		if ((rc = kb_session_open(name, &s, &err)) == 0) {
			if ((rc = kb_session_export(&s, a->output, &err)) == 0)
				kb_buf_catf(&out, "session %s written to %s\n", s.id, a->output);
			kb_session_free(&s);
		}
	} else if ((rc = kb_session_import(a->pos[1], a->name, &s, &err)) == 0) {
		kb_buf_catf(&out, "session %s (%s), from %s\n"
			    "not made current: `export KBENCH_SESSION=%s` makes it the current session of "
			    "this shell (log, show, diff read it); `kbench replay %s` and `kbench report %s "
			    "-o r.html` take it by name\n", s.id, s.dir, a->pos[1], s.id, s.id, s.id);
		kb_session_free(&s);
	} else if (err.domain == KB_DOM_OS && err.code == EEXIST && !a->name) {
		size_t n = strlen(err.msg);
		snprintf(err.msg + n, sizeof err.msg - n, " (bring it in beside that one with "
			 "`kbench session import %s --name NEW`)", a->pos[1]);
	}
	return finish_text(rc, &out, &err);
}

int kb_cli_session(int argc, char **argv)
{
	static const char u[] = "usage: kbench session new [NAME]\n"
				"       kbench session export SESSION -o DIR   (SESSION: an id or `current`)\n"
				"       kbench session import DIR [--name NAME]\n"
				"An export is a plain-text folder (manifest, README, journal, each variant's\n"
				"source and Result) that replay, report and kbench-tui --replay read as is.\n";
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos < 1)
		return sess_usage(u, &a);
	if (!strcmp(a.pos[0], "export") || !strcmp(a.pos[0], "import")) {
		bool ok = a.npos == 2 && (!strcmp(a.pos[0], "import") || a.output) &&
			  (!strcmp(a.pos[0], "export") || !a.output);
		return ok ? session_copy(&a) : sess_usage(u, &a);
	}
	if (a.npos > 2 || strcmp(a.pos[0], "new") || a.name)
		return sess_usage(u, &a);
	kb_session s;
	kb_err err = {0};
	int rc = kb_session_new(a.npos == 2 ? a.pos[1] : NULL, &s, &err);
	kb_buf out = KB_BUF_INIT;
	if (rc == 0) {
		kb_buf_catf(&out, "session %s (%s)\n", s.id, s.dir);
		kb_session_free(&s);
	}
	return finish_text(rc, &out, &err);
}

int kb_cli_replay(int argc, char **argv)
{
	static const char u[] = "usage: kbench replay SESSION [--file FILE] [--only vA,vB]\n"
				"                     [--gpus all|0,1,...] [--hosts h1,h2] [--remote HOST]\n"
				"                     [--trust-python]\n"
				"  --gpus/--hosts run the variants at once, one warm worker per GPU\n"
				"  --trust-python runs the variants' Python references (`ref numpy|torch`)\n";
	sess_args a = parse_sess(argc, argv);
	if (a.help) /* and every flag main takes for it */
		return fputs(u, stdout), fputs("\n" KB_CLI_TARGET_USAGE, stdout), 0;
	if (a.bad || a.npos != 1)
		return sess_usage(u, &a);
	kb_runner *r = kb_cli_runner(false);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	kb_pool *pool = kb_cli_pool();
	if (pool)
		kb_pool_warm(pool, 0); /* GPUs opened while the variants are read */
	int rc = kb_app_replay(r, pool, a.pos[0], a.file, a.only, &out, &err);
	kb_pool_free(pool);
	kb_runner_free(r);
	return finish_text(rc, &out, &err);
}

int kb_cli_report(int argc, char **argv)
{
	static const char u[] = "usage: kbench report SESSION -o FILE.md|FILE.html [--file FILE]\n"
				"  (SESSION: an id, sessions/<id>, or `current`)\n";
	sess_args a = parse_sess(argc, argv);
	if (a.help || a.bad || a.npos != 1 || !a.output)
		return sess_usage(u, &a);
	const char *ext = kb_extension(a.output);
	if (strcmp(ext, "md") && strcmp(ext, "html")) {
		fprintf(stderr, "kbench: report -o %s: a report is Markdown (FILE.md) or HTML (FILE.html)\n",
			a.output);
		return KB_CLI_EXIT_USAGE;
	}
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	char id[96];
	const char *session = a.pos[0];
	if (!strcmp(session, "current") && kb_session_current_id(id) == 0)
		session = id;
	return finish_text(kb_app_report_session(session, a.file, a.output, &out, &err), &out, &err);
}

int kb_cli_remote(int argc, char **argv)
{
	static const char u[] = "usage: kbench remote setup HOST [--bundle FILE.tar.gz]\n"
				"  copies the `make dist` bundle to HOST over ssh, unpacks it under\n"
				"  ~/.kbench, and checks what its runner sees (see docs/remote.md)\n";
	if (argc < 3 || strcmp(argv[1], "setup") || (argc != 3 && argc != 5) ||
	    (argc == 5 && strcmp(argv[3], "--bundle")))
		return sess_usage(u, &(sess_args){.help = argc > 1 && !strcmp(argv[1], "--help")});
	char *dir = kb_self_dir();
	char *bundle = argc == 5 ? kb_xstrdup(argv[4])
			: kb_xasprintf("%s/../dist/kbench-%s.tar.gz", dir ? dir : ".", KB_VERSION);
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	int rc = kb_app_remote_setup(argv[2], bundle, &out, &err);
	free(bundle);
	free(dir);
	return finish_text(rc, &out, &err);
}

