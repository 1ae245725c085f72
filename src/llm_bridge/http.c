/*
 * http.c - the OpenAI-compatible chat-completions provider (OpenAI, vLLM,
 * llama.cpp's server, Ollama, LM Studio, OpenRouter all serve it): one POST
 * to <base_url>/chat/completions, the answer read as server-sent events
 * ("data: {...}" lines, "data: [DONE]") when streaming, else as one JSON
 * body.  429 and 5xx are retried with exponential backoff, or after the
 * server's Retry-After; 401/403, 404 and a refused connection end at once
 * with a message that says what to check.  A stall (no byte for
 * stall_timeout seconds) is a timeout, and the hooks' cancel flag, polled by
 * libcurl's progress callback, stops a request within about a second.
 *
 * The key exists in three places only: the caller's stack buffer, the
 * header line built from it (wiped after the request) and libcurl's copy
 * of the header list (freed after it).  Messages that quote the server are
 * passed through kb_llm_redact, as some servers echo part of a bad key.
 */
#include "llm_bridge_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>

#define MAX_BODY (4u << 20)

typedef struct {
	const kb_llm_hooks *h;
	const kb_llm__curl *L;
	CURL *curl;
	bool sse;              /* the answer is text/event-stream (whatever was asked) */
	kb_buf body;           /* a non-streamed body, or an error's */
	kb_llm__sse dec;       /* the SSE decoder (sse.c) */
	kb_buf text;           /* the answer so far */
	double retry_after;    /* seconds, < 0: none given */
	int ptoks, ctoks;
	bool usage;
} xfer;

static long status_of(xfer *x)
{
	long code = 0;
	x->L->easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

/* Usage numbers, when the chunk or body has them. */
static void read_usage(xfer *x, json_t *j)
{
	json_t *u = json_object_get(j, "usage");
	if (!json_is_object(u))
		return;
	x->ptoks = (int)json_integer_value(json_object_get(u, "prompt_tokens"));
	x->ctoks = (int)json_integer_value(json_object_get(u, "completion_tokens"));
	x->usage = true;
}

static void add_text(xfer *x, const char *s)
{
	if (!s || !*s)
		return;
	kb_buf_cat(&x->text, s);
	if (x->h && x->h->on_text)
		x->h->on_text(x->h->ctx, s, strlen(s));
}

/* One `data:` chunk of the stream (sse.c). */
static void on_chunk(void *ctx, json_t *j)
{
	xfer *x = ctx;
	json_t *choice = json_array_get(json_object_get(j, "choices"), 0);
	json_t *delta = json_object_get(choice, "delta");
	add_text(x, json_string_value(json_object_get(delta, "content")));
	read_usage(x, j);
}

static size_t on_write(char *p, size_t size, size_t n, void *ctx)
{
	xfer *x = ctx;
	size_t len = size * n;
	if (!(x->sse && status_of(x) == 200)) {
		if (x->body.len + len > MAX_BODY)
			return 0;
		kb_buf_catn(&x->body, p, len);
		return len;
	}
	kb_llm__sse_feed(&x->dec, p, len);
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	xfer *x = ctx;
	size_t len = size * n;
	if (len > 12 && !strncasecmp(p, "Retry-After:", 12))
		x->retry_after = strtod(p + 12, NULL);
	/* a server that ignores "stream" answers with one JSON body */
	if (len > 13 && !strncasecmp(p, "Content-Type:", 13)) {
		char h[256];
		snprintf(h, sizeof h, "%.*s", (int)(len < 255 ? len : 255), p);
		x->sse = strstr(h, "event-stream") != NULL;
	}
	return len;
}

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	xfer *x = ctx;
	return kb_llm__cancelled(x->h) ? 1 : 0;
}

/* The options of one attempt. */
static void setup(xfer *x, const kb_llm_config *c, const char *url, const char *body,
		  struct curl_slist *hdrs)
{
	const kb_llm__curl *L = x->L;
	CURL *h = x->curl;
	L->easy_setopt(h, CURLOPT_URL, url);
	L->easy_setopt(h, CURLOPT_POSTFIELDS, body);
	L->easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	L->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	L->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
	L->easy_setopt(h, CURLOPT_WRITEDATA, x);
	L->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	L->easy_setopt(h, CURLOPT_HEADERDATA, x);
	L->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	L->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	L->easy_setopt(h, CURLOPT_XFERINFODATA, x);
	L->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_s * 1000));
	if (c->timeout_s > 0)
		L->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->timeout_s * 1000));
	if (c->stall_s > 0) { /* under 1 byte/s for stall_s: a stalled answer */
		L->easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		L->easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)ceil(c->stall_s));
	}
}

/* The server's own words about an error, redacted, into msg. */
static void server_says(xfer *x, const char *key, char *msg, size_t n)
{
	json_t *j = json_loadb(x->body.s ? x->body.s : "", x->body.len, 0, NULL);
	json_t *e = json_object_get(j, "error");
	const char *m = json_is_string(e) ? json_string_value(e)
			: json_string_value(json_object_get(e, "message"));
	kb_buf r = KB_BUF_INIT;
	if (m)
		kb_llm_redact(m, key, &r);
	snprintf(msg, n, "%s%.300s", r.len ? ": " : "", r.len ? r.s : "");
	kb_buf_free(&r);
	json_decref(j);
}

/* What a finished transfer means: 0 (the answer), 1 (try again), or a KB_E*. */
static int judge(xfer *x, const kb_llm_config *c, const char *url, CURLcode cc, const char *key,
		 kb_err *err)
{
	long st = status_of(x);
	char said[400];
	if (cc == CURLE_ABORTED_BY_CALLBACK)
		return kb_err_set(err, KB_ECANCELED, KB_DOM_HTTP, cc,
				  "cancelled after %zu chars of the answer", x->text.len);
	if (cc == CURLE_OPERATION_TIMEDOUT && x->text.len)
		return kb_err_set(err, KB_ETIMEOUT, KB_DOM_HTTP, cc,
				  "the answer stalled after %zu chars: no data for %g s "
				  "(stall_timeout), or past the %g s timeout", x->text.len, c->stall_s,
				  c->timeout_s);
	if (cc == CURLE_OPERATION_TIMEDOUT)
		return kb_err_set(err, KB_ETIMEOUT, KB_DOM_HTTP, cc,
				  "no answer from %s within the time limits (stall_timeout %g s, "
				  "timeout %g s)", url, c->stall_s, c->timeout_s);
	if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST)
		return kb_err_set(err, KB_EIO, KB_DOM_HTTP, cc,
				  "cannot connect to %s (%s): is the server running, and is "
				  "base_url right? (settings from %s)", url, x->L->easy_strerror(cc),
				  c->source);
	if (cc != CURLE_OK)
		return kb_err_set(err, KB_EIO, KB_DOM_HTTP, cc, "%s: %s", url, x->L->easy_strerror(cc));
	server_says(x, key, said, sizeof said);
	if (st == 401 || st == 403)
		return kb_err_set(err, KB_EPERM, KB_DOM_HTTP, (int)st,
				  "the server refused the key (HTTP %ld%s): check $%s%s", st, said,
				  c->key_env ? c->key_env : "(key_env is unset)",
				  key && *key ? "" : ", which is not set");
	if (st == 404)
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_HTTP, 404,
				  "HTTP 404 from %s%s: base_url should be the API root that "
				  "/chat/completions is added to (e.g. .../v1), and model '%s' must exist",
				  url, said, c->model ? c->model : "");
	if (st == 429 || st >= 500)
		return 1;
	if (st != 200)
		return kb_err_set(err, KB_EIO, KB_DOM_HTTP, (int)st, "HTTP %ld from %s%s", st, url,
				  said);
	return 0;
}

/* The answer of a non-streamed body (or a server that ignored "stream"). */
static int read_body(xfer *x, kb_err *err)
{
	if (x->text.len || !x->body.len)
		return 0;
	json_t *j = json_loadb(x->body.s, x->body.len, 0, NULL);
	json_t *msg = json_object_get(json_array_get(json_object_get(j, "choices"), 0), "message");
	const char *s = json_string_value(json_object_get(msg, "content"));
	int rc = 0;
	if (!j)
		rc = kb_err_set(err, KB_EIO, KB_DOM_HTTP, 0, "the answer is not JSON (%zu bytes)",
				x->body.len);
	add_text(x, s);
	read_usage(x, j);
	json_decref(j);
	return rc;
}

static double backoff_ms(xfer *x, int attempt)
{
	if (x->retry_after >= 0)
		return fmin(x->retry_after, 120) * 1000;
	return fmin(1000.0 * (1 << attempt), 30000);
}

/* Attempts until an answer, an error, or the retries are spent. */
static int attempts(xfer *x, const kb_llm_config *c, const char *url, const char *body,
		    struct curl_slist *hdrs, const char *key, kb_llm_answer *a, kb_err *err)
{
	for (int attempt = 0;; attempt++) {
		kb_buf_reset(&x->body), kb_buf_reset(&x->dec.line), kb_buf_reset(&x->text);
		x->retry_after = -1;
		x->sse = false;
		setup(x, c, url, body, hdrs);
		CURLcode cc = x->L->easy_perform(x->curl);
		a->attempts = attempt + 1;
		a->http_status = (int)status_of(x);
		int rc = judge(x, c, url, cc, key, err);
		if (rc <= 0)
			return rc < 0 ? rc : read_body(x, err);
		if (attempt >= c->retries)
			return kb_err_set(err, KB_EIO, KB_DOM_HTTP, a->http_status,
					  "HTTP %d from %s, %d attempts: giving up", a->http_status, url,
					  attempt + 1);
		double ms = backoff_ms(x, attempt);
		char why[64];
		snprintf(why, sizeof why, "HTTP %d", a->http_status);
		if (x->h && x->h->on_retry)
			x->h->on_retry(x->h->ctx, attempt + 1, ms / 1000, why);
		if (!kb_llm__sleep(x->h, ms))
			return kb_err_set(err, KB_ECANCELED, KB_DOM_HTTP, 0,
					  "cancelled while waiting to retry");
	}
}

/* The header list; the key's line is wiped by the caller. */
static struct curl_slist *headers(const kb_llm__curl *L, bool stream, char *auth)
{
	struct curl_slist *hd = L->slist_append(NULL, "Content-Type: application/json");
	hd = L->slist_append(hd, stream ? "Accept: text/event-stream" : "Accept: application/json");
	if (auth[0])
		hd = L->slist_append(hd, auth);
	return hd;
}

int kb_llm__http_ask(const kb_llm_config *c, json_t *messages, const kb_llm_hooks *h,
		     kb_llm_answer *a, kb_err *err)
{
	const kb_llm__curl *L;
	int rc = kb_llm__curl_load(&L, err);
	if (rc < 0)
		return rc;
	char key[4096], auth[4200] = "";
	if ((rc = kb_llm_key(c, key, sizeof key, err)) < 0)
		return rc;
	if (key[0]) {
		/* no core dump of ours may hold the key (style: hygiene) */
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
	}
	json_t *req = kb_llm_request_body(c, messages);
	char *body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	size_t ulen = strlen(c->base_url);
	while (ulen && c->base_url[ulen - 1] == '/')
		ulen--;
	char *url = kb_xasprintf("%.*s/chat/completions", (int)ulen, c->base_url);
	xfer x = {.h = h, .L = L, .curl = L->easy_init()};
	x.dec.on_chunk = on_chunk;
	x.dec.ctx = &x;
	struct curl_slist *hd = headers(L, c->stream, auth);
	double t0 = kb_now_ms();
	rc = attempts(&x, c, url, body, hd, key, a, err);
	a->ms = kb_now_ms() - t0;
	L->slist_free_all(hd);
	L->easy_cleanup(x.curl);
	explicit_bzero(auth, sizeof auth);
	explicit_bzero(key, sizeof key);
	a->text = kb_buf_detach(&x.text);
	if (!a->text)
		a->text = kb_xstrdup("");
	a->prompt_tokens = x.ptoks, a->completion_tokens = x.ctoks;
	if (!x.usage)
		kb_llm__estimate(messages, a);
	kb_buf_free(&x.body);
	kb_buf_free(&x.dec.line);
	free(url);
	free(body);
	return rc;
}
