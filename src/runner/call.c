/*
 * call.c - one request to a worker, above client.c's process and pipes and
 * remote.c's request shapes: a worker that is gone is started again (after
 * a fresh start with r->hello, the hello exchange: both sides check the
 * protocol, and a remote is asked for its GPU's arch), a remote's run
 * request carries the file and a cubin compiled here, the request is sent
 * (a worker that died since the last call gets one fresh start and one
 * retry), and its result awaited under client.c's watchdog.
 */
#include "runner_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *handshake(kb_runner *r, double timeout_ms);
static int call(kb_runner *r, json_t *req, double timeout_ms, kb_runner_progress_fn fn, void *ctx,
		json_t **result, kb_err *err);

int kb_runner_call(kb_runner *r, json_t *req, double timeout_ms, kb_runner_progress_fn fn,
		   void *ctx, json_t **result, kb_err *err)
{
	*result = NULL;
	if (timeout_ms <= 0)
		timeout_ms = 10000;
	int rc;
	kb_runner__drain_cancel(r); /* a cancel between calls is for no call */
	if (kb_runner__worker_gone(r)) {
		if ((rc = kb_runner__start(r, err)) < 0)
			return rc;
		if (r->hello && !r->in_handshake && (*result = handshake(r, timeout_ms)))
			return KB_OK;
	}
	json_t *answer = NULL;
	req = r->host && !r->in_handshake ? kb_runner__remote_request(r, req, &answer)
					  : json_incref(req);
	if (!req) {
		*result = answer;
		return KB_OK;
	}
	rc = call(r, req, timeout_ms, fn, ctx, result, err);
	json_decref(req);
	if (rc == 0 && r->host && !r->in_handshake)
		kb_runner__remote_result(r, *result);
	return rc;
}

/* Sends req to the running worker and waits for its result. */
static int call(kb_runner *r, json_t *req, double timeout_ms, kb_runner_progress_fn fn, void *ctx,
		json_t **result, kb_err *err)
{
	int rc;
	char cwd[4096];
	if (r->shared && !json_object_get(req, "cwd") && getcwd(cwd, sizeof cwd)) {
		json_object_set_new(req, "cwd", json_string(cwd)); /* its paths are ours */
		/* and so is where file() may read (spec/spec_tensor.c) */
		const char *dirs = getenv("KBENCH_FILE_DIRS");
		if (dirs)
			json_object_set_new(req, "file_dirs", json_string(dirs));
	}
	if (kb_runner__send_request(r, req, err) < 0) {
		/* The worker died since we last looked: one fresh start, one retry. */
		kb_runner__reap(r, true);
		if ((rc = kb_runner__start(r, err)) < 0)
			return rc;
		if (r->hello && !r->in_handshake && (*result = handshake(r, timeout_ms)))
			return KB_OK;
		if ((rc = kb_runner__send_request(r, req, err)) < 0)
			return rc;
	}
	*result = kb_runner__await_result(r, timeout_ms, fn, ctx);
	return KB_OK;
}

int kb_runner_connect(kb_runner *r, json_t **fail, kb_err *err)
{
	*fail = NULL;
	if (!kb_runner__worker_gone(r))
		return KB_OK;
	int rc = kb_runner__start(r, err);
	if (rc == 0 && r->hello)
		*fail = handshake(r, 0);
	return rc;
}

/* ---- the hello exchange ------------------------------------------------- */

static json_t *failure(const char *status, char *msg)
{
	json_t *j = json_pack("{s:s, s:s, s:s}", "type", "result", "status", status, "message", msg);
	free(msg);
	return j;
}

/* Why the hello exchange failed, as the result to report; NULL if it did not. */
static json_t *check_hello(kb_runner *r, int rc, json_t *res, const kb_err *err)
{
	const char *where = r->host ? r->host : "this machine";
	const char *type = json_string_value(json_object_get(res, "type"));
	const char *status = json_string_value(json_object_get(res, "status"));
	int theirs = (int)json_integer_value(json_object_get(res, "protocol"));
	const char *version = json_string_value(json_object_get(res, "version"));
	if (rc < 0)
		return failure("unreachable", kb_xasprintf("cannot start the runner for %s: %s", where,
							     err->msg));
	if (!type || strcmp(type, "hello"))
		return failure("unreachable",
			       kb_xasprintf("no runner answered on %s (%s); %s", where,
					    json_string_value(json_object_get(res, "message")),
					    r->host ? "ssh's own message, if any, is above; check "
						      "`ssh HOST true` and `kbench remote setup HOST`"
						    : "is this kbench complete?"));
	if (status && !strcmp(status, "refused"))
		return failure("protocol_mismatch",
			       kb_xstrdup(json_string_value(json_object_get(res, "message"))));
	if (theirs != kb_proto_version())
		return failure("protocol_mismatch",
			       kb_xasprintf("protocol mismatch: the runner on %s (kbench %s) speaks "
					    "runner protocol %d, this kbench (%s) speaks %d; install "
					    "the same kbench on both sides (kbench remote setup)",
					    where, version ? version : "?", theirs, KB_VERSION,
					    kb_proto_version()));
	return NULL;
}

/* Asks a remote runner for its GPU: r->arch, or the reason there is none
 * (kept in the peer's "gpu_error"). */
static void ask_arch(kb_runner *r, double timeout_ms)
{
	json_t *q = json_pack("{s:s}", "type", "devices"), *res = NULL;
	kb_err err = {0};
	if (kb_runner_call(r, q, timeout_ms, NULL, NULL, &res, &err) == 0) {
		const char *arch = json_string_value(
			json_object_get(json_object_get(res, "device"), "arch"));
		const char *msg = json_string_value(json_object_get(res, "message"));
		if (arch)
			r->arch = kb_xstrdup(arch);
		else
			json_object_set_new(r->peer, "gpu_error", json_string(msg ? msg : "no GPU"));
	}
	json_decref(res);
	json_decref(q);
}

/* After a fresh start of a worker with r->hello: the hello exchange (both
 * sides check the protocol) and, for a remote one, its GPU's arch.  NULL
 * when the worker may serve; else the result to report (the worker is
 * stopped): unreachable, or a protocol mismatch naming both versions. */
static json_t *handshake(kb_runner *r, double timeout_ms)
{
	r->in_handshake = true;
	json_t *hello = json_pack("{s:s, s:i, s:s}", "type", "hello", "protocol",
				  kb_proto_version(), "version", KB_VERSION);
	json_t *res = NULL;
	kb_err err = {0};
	int rc = kb_runner_call(r, hello, timeout_ms, NULL, NULL, &res, &err);
	json_decref(hello);
	json_t *fail = check_hello(r, rc, res, &err);
	json_decref(r->peer);
	free(r->arch);
	r->peer = NULL;
	r->arch = NULL;
	if (fail) {
		json_decref(res);
		kb_runner__reap(r, true);
		if (r->host)
			json_object_set_new(fail, "remote", json_pack("{s:s}", "host", r->host));
	} else {
		r->peer = res;
		if (r->host)
			ask_arch(r, timeout_ms);
	}
	r->in_handshake = false;
	return fail;
}
