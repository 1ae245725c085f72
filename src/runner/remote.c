/*
 * remote.c - a runner on another machine: `ssh HOST <kbench> serve`, the
 * same framed protocol over ssh's pipes (docs/remote.md).  This file owns
 * what is different about such a worker: the ssh command line (the user's
 * ssh, config, keys, agent and jump hosts; nothing of ours asks for a
 * password) and the shape of run requests: the file's text travels, and
 * the cubin is compiled here for the remote's arch, so the remote needs no
 * shared filesystem and no compiler.  The hello exchange in which both
 * sides check the protocol number, and asking the remote for its GPU's
 * arch, are call.c's, which calls this file for each request.
 * A lost connection comes back from client.c as a lost worker; here it is
 * named as such ("disconnected", the host), and the next call reconnects.
 * Variants live on this side (the session store), so nothing is lost.
 */
#include "runner_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The remote command when $KBENCH_REMOTE_CMD is unset: the bundle that
 * `kbench remote setup` unpacked, else kbench on the remote's PATH. */
#define REMOTE_CMD "k=$HOME/.kbench/current/build/kbench; [ -x \"$k\" ] || k=kbench; exec \"$k\" serve"

static void push(char ***v, int *n, int *cap, char *s)
{
	*KB_PUSH(*v, *n, *cap) = s;
}

/* Splits s at blanks (no quoting: docs/remote.md) onto v. */
static void push_words(char ***v, int *n, int *cap, const char *s)
{
	while (*s) {
		size_t skip = strspn(s, " \t"), len = strcspn(s + skip, " \t");
		if (len)
			push(v, n, cap, kb_xstrndup(s + skip, len));
		s += skip + len;
	}
}

char **kb_runner_ssh_argv(const char *host, const char *env, bool batch)
{
	char **v = NULL;
	int n = 0, cap = 0;
	const char *ssh = getenv("KBENCH_SSH");
	push_words(&v, &n, &cap, ssh && *ssh ? ssh : "ssh");
	/* a dead network becomes a lost connection within ~15 s, not a hang */
	push_words(&v, &n, &cap, "-T -o ServerAliveInterval=5 -o ServerAliveCountMax=3");
	if (batch)
		push_words(&v, &n, &cap, "-o BatchMode=yes");
	push(&v, &n, &cap, kb_xstrdup(host));
	const char *cmd = getenv("KBENCH_REMOTE_CMD");
	push(&v, &n, &cap, kb_xasprintf("%s%s", env ? env : "", cmd && *cmd ? cmd : REMOTE_CMD));
	push(&v, &n, &cap, NULL);
	return v;
}

static void free_argv(char **v)
{
	for (int i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

kb_runner *kb_runner_new_remote(const char *host, int gpu, bool batch)
{
	char *env = gpu >= 0 ? kb_xasprintf("export CUDA_VISIBLE_DEVICES=%d; ", gpu) : NULL;
	char **argv = kb_runner_ssh_argv(host, env, batch);
	kb_runner *r = kb_runner_new(argv);
	free_argv(argv);
	free(env);
	r->host = kb_xstrdup(host);
	r->hello = true;
	return r;
}

const char *kb_runner_host(const kb_runner *r)
{
	return r->host;
}

const char *kb_runner_arch(const kb_runner *r)
{
	return r->arch;
}

json_t *kb_runner_peer(const kb_runner *r)
{
	return r->peer;
}

/* ---- run requests ---------------------------------------------------------- */

/* Compiles q's file here for the remote GPU and puts the cubin in q; a
 * spec or compile error, or a file that cannot be used, is the answer. */
static json_t *compile_here(kb_runner *r, json_t *q)
{
	const char *path = json_string_value(json_object_get(q, "path"));
	int ndef, nopt, nargs;
	const char **defs = kb_runner__strings(json_object_get(q, "defines"), &ndef);
	const char **opts = kb_runner__strings(json_object_get(q, "options"), &nopt);
	kb_arg_override *args = kb_runner_arg_overrides(json_object_get(q, "args"), &nargs);
	kb_compile_unit_opts uo = {.arch = json_string_value(json_object_get(q, "arch")),
				   .default_arch = r->arch, .defines = defs, .ndefines = ndef,
				   .options = opts, .noptions = nopt, .args = args, .nargs = nargs,
				   .skip_unsupported = true}; /* the remote runner says UNSUPPORTED */
	kb_compile_unit u;
	kb_err err = {0};
	json_t *answer = NULL;
	int rc = kb_compile_unit_run(path, json_string_value(json_object_get(q, "text")), &uo, &u,
				     &err);
	if (rc == KB_ESPEC || rc == KB_ECOMPILE) {
		answer = kb_runner_diag_result(rc == KB_ESPEC ? "spec_error" : "compile_error", &u);
		json_object_set_new(answer, "file", json_string(path));
		json_object_set_new(answer, "compile", kb_compile_unit_summary_json(&u));
	} else if (rc < 0) {
		answer = kb_runner__error_result("error", &err);
	} else if (u.has_spec) {
		json_t *pb = kb_compile_build_export(&u.build);
		if (pb) {
			json_object_set_new(q, "prebuilt", pb);
			json_object_set_new(q, "arch", json_string(u.build.arch));
		}
	}
	kb_compile_unit_free(&u);
	free(args);
	free(defs);
	free(opts);
	return answer;
}

json_t *kb_runner__remote_request(kb_runner *r, json_t *req, json_t **answer)
{
	*answer = NULL;
	const char *type = json_string_value(json_object_get(req, "type"));
	const char *path = json_string_value(json_object_get(req, "path"));
	if (!type || strcmp(type, "run") || !path)
		return json_incref(req);
	json_t *q = json_deep_copy(req);
	if (!json_object_get(q, "text")) {
		kb_buf b = KB_BUF_INIT;
		kb_err err = {0};
		if (kb_file_read(path, &b, &err) < 0)
			*answer = kb_runner__error_result("error", &err);
		else
			json_object_set_new(q, "text", json_stringn(b.s ? b.s : "", b.len));
		kb_buf_free(&b);
	}
	if (!*answer && r->arch)
		*answer = compile_here(r, q);
	if (*answer) {
		json_object_set_new(*answer, "remote", json_pack("{s:s, s:b}", "host", r->host,
								 "answered_here", 1));
		json_decref(q);
		return NULL;
	}
	return q;
}

void kb_runner__remote_result(kb_runner *r, json_t *res)
{
	json_t *where = json_pack("{s:s}", "host", r->host);
	if (r->peer)
		json_object_set(where, "runner", r->peer);
	json_object_set_new(res, "remote", where);
	const char *status = json_string_value(json_object_get(res, "status"));
	if (!status || strcmp(status, "crash"))
		return;
	const char *msg = json_string_value(json_object_get(res, "message"));
	const char *phase = json_string_value(json_object_get(json_object_get(res, "during"), "phase"));
	char *text = kb_xasprintf("the connection to %s was lost%s%s (%s); the variant is kept here, "
				  "and the next request reconnects", r->host, phase ? " during " : "",
				  phase ? phase : "", msg ? msg : "?");
	json_object_set_new(res, "status", json_string("disconnected"));
	json_object_set_new(res, "message", json_string(text));
	free(text);
}
