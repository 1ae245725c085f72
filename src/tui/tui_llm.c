/*
 * tui_llm.c - the LLM pane: ask a model about the file in the editor (its
 * last compile and Result, the same facts `kbench optimize` sends), watch
 * the answer stream, and apply or reject its proposal.  The request runs
 * on a thread of its own (kb_llm_ask blocks); it appends text under the
 * pane's lock and wakes the loop through a pipe, so typing never waits on
 * the network.  Applying is one edit of the editor (Ctrl-Z undoes it) and a
 * save, which compiles, checks and times the proposal like any other save:
 * the TUI trusts no proposal more than the CLI does.  Every exchange is in
 * the session's journal (llm_ask, llm_reply, llm_error, llm_round).
 */
#include "tui_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kb_tui__llm_init(kb_tui__ui *t)
{
	kb_tui__llm *L = &t->llm;
	pthread_mutex_init(&L->lock, NULL);
	L->wake[0] = L->wake[1] = -1;
	if (pipe(L->wake) == 0) {
		fcntl(L->wake[0], F_SETFL, O_NONBLOCK);
		fcntl(L->wake[1], F_SETFL, O_NONBLOCK);
	}
}

static void wake(kb_tui__llm *L)
{
	if (L->wake[1] >= 0 && write(L->wake[1], "x", 1) < 0) {
		/* a full pipe already wakes the loop */
	}
}

static void on_text(void *ctx, const char *s, size_t n)
{
	kb_tui__llm *L = ctx;
	pthread_mutex_lock(&L->lock);
	kb_buf_catn(&L->answer, s, n);
	pthread_mutex_unlock(&L->lock);
	wake(L);
}

static void *ask_thread(void *arg)
{
	kb_tui__llm *L = arg;
	kb_llm_hooks h = {.on_text = on_text, .ctx = L, .cancel = &L->cancel, .round = L->round};
	kb_err err = {0};
	kb_llm_answer a;
	int rc = kb_llm_ask(&L->cfg, L->messages, &h, &a, &err);
	pthread_mutex_lock(&L->lock);
	L->rc = rc;
	L->err = err;
	L->ans = a;
	L->finished = true;
	pthread_mutex_unlock(&L->lock);
	wake(L);
	return NULL;
}

void kb_tui__llm_prompt(kb_tui__ui *t)
{
	if (t->llm.busy) {
		kb_tui__set_msg(t, "a question is on its way (Esc cancels it)");
		return;
	}
	if (t->steps) {
		kb_tui__set_msg(t, "no questions in a replay");
		return;
	}
	kb_tui__prompt_start(t, KB_TUI__P_ASK);
}

/* The messages of a question about the last compile and Result. */
static json_t *messages(kb_tui__ui *t, const char *question)
{
	kb_buf log = KB_BUF_INIT;
	kb_err err = {0};
	if (t->w.record)
		kb_app_log(t->o.path, &log, &err); /* the variants so far, failures included */
	json_t *vars = kb_app_llm_vars(&t->res->unit, t->res->run, log.s, question);
	kb_buf_free(&log);
	char *sys = kb_app_llm_prompt("system", vars), *ask = kb_app_llm_prompt("ask", vars);
	json_t *m = json_pack("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content", sys, "role",
			      "user", "content", ask);
	free(sys), free(ask);
	json_decref(vars);
	return m;
}

/* The finished exchange goes on top of the shown history. */
static void keep_exchange(kb_tui__llm *L)
{
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "── question %d: %s\n%s\n── %s\n\n%s", L->round, L->question,
		    L->answer.s ? L->answer.s : "", L->status, L->shown.s ? L->shown.s : "");
	kb_buf_free(&L->shown);
	L->shown = b;
}

void kb_tui__llm_ask(kb_tui__ui *t, const char *question)
{
	kb_tui__llm *L = &t->llm;
	if (!t->res || !t->res->compiled || !t->res->unit.src.text) {
		kb_tui__set_msg(t, "wait for the first compile, then ask");
		return;
	}
	kb_llm_config_free(&L->cfg);
	kb_err err = {0};
	if (kb_llm_config_load(&L->cfg, &err) < 0) {
		snprintf(L->status, sizeof L->status, "settings: %s", err.msg);
		t->pane = KB_TUI__PANE_LLM, t->pane_top = 0;
		return;
	}
	if (L->round > 0)
		keep_exchange(L);
	snprintf(L->question, sizeof L->question, "%s", *question ? question : "How can this be faster?");
	json_decref(L->messages);
	L->messages = messages(t, L->question);
	free(L->base), free(L->cand);
	L->base = kb_xstrdup(t->res->unit.src.text), L->cand = NULL;
	L->round++;
	const char *prompt = json_string_value(json_object_get(json_array_get(L->messages, 1), "content"));
	const kb_llm_provider *p = kb_llm_provider_for(&L->cfg);
	if (t->w.record)
		kb_app_llm_event("llm_ask", json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "file", t->o.path,
						      "round", L->round, "from", "tui", "provider", p->name,
						      "model", L->cfg.command ? L->cfg.command : L->cfg.model,
						      "prompt", prompt), NULL);
	kb_llm_answer_free(&L->ans);
	kb_buf_reset(&L->answer);
	L->rc = 0;
	L->finished = false;
	atomic_store(&L->cancel, 0);
	snprintf(L->status, sizeof L->status, "asking %s ... (Esc cancels)",
		 L->cfg.command ? L->cfg.command : L->cfg.model);
	if (pthread_create(&L->thread, NULL, ask_thread, L) != 0) {
		snprintf(L->status, sizeof L->status, "cannot start the request's thread");
		return;
	}
	L->busy = true;
	t->pane = KB_TUI__PANE_LLM, t->pane_top = 0;
}

/* The answer is complete: journal it, judge its proposal. */
static void finished(kb_tui__ui *t)
{
	kb_tui__llm *L = &t->llm;
	const char *kinds[] = {"timeout", "cancelled", "auth", "not_found"};
	int codes[] = {KB_ETIMEOUT, KB_ECANCELED, KB_EPERM, KB_ENOTFOUND};
	if (L->rc < 0) {
		const char *kind = "error";
		for (size_t i = 0; i < KB_ARRAY_LEN(codes); i++)
			if (L->rc == codes[i])
				kind = kinds[i];
		snprintf(L->status, sizeof L->status, "%s: %s", kind, L->err.msg);
		if (t->w.record)
			kb_app_llm_event("llm_error", json_pack("{s:s, s:i, s:s, s:s, s:s}", "file",
								t->o.path, "round", L->round, "kind", kind,
								"message", L->err.msg, "partial",
								L->answer.s ? L->answer.s : ""), NULL);
		kb_tui__set_msg(t, "%s", L->status);
		return;
	}
	if (t->w.record)
		kb_app_llm_event("llm_reply", json_pack("{s:s, s:i, s:s, s:i, s:i, s:i}", "file", t->o.path,
							"round", L->round, "answer", L->ans.text,
							"prompt_tokens", L->ans.prompt_tokens,
							"completion_tokens", L->ans.completion_tokens,
							"attempts", L->ans.attempts), NULL);
	kb_buf why = KB_BUF_INIT;
	kb_llm_verdict v = kb_llm_candidate(L->base, L->ans.text, &L->cand, &why);
	if (v == KB_LLM_OK)
		snprintf(L->status, sizeof L->status, "a proposal: Ctrl-T applies it (one edit, then "
			 "saved, compiled and run; Ctrl-Z undoes), Ctrl-W rejects it");
	else
		snprintf(L->status, sizeof L->status, "%s: %s", kb_llm_verdict_name(v), why.s);
	if (v != KB_LLM_OK && t->w.record)
		kb_app_llm_event("llm_round", json_pack("{s:s, s:i, s:s, s:s, s:s}", "file", t->o.path,
							"round", L->round, "verdict", kb_llm_verdict_name(v),
							"reason", why.s, "from", "tui"), NULL);
	kb_tui__set_msg(t, "%s", v == KB_LLM_OK ? "the answer has a proposal (Ctrl-T applies it)"
						: L->status);
	kb_buf_free(&why);
}

void kb_tui__llm_take(kb_tui__ui *t)
{
	kb_tui__llm *L = &t->llm;
	char junk[256];
	while (read(L->wake[0], junk, sizeof junk) > 0)
		;
	pthread_mutex_lock(&L->lock);
	bool done = L->busy && L->finished;
	pthread_mutex_unlock(&L->lock);
	if (!done)
		return;
	pthread_join(L->thread, NULL);
	L->busy = false;
	finished(t);
}

void kb_tui__llm_apply(kb_tui__ui *t)
{
	kb_tui__llm *L = &t->llm;
	if (!L->cand) {
		kb_tui__set_msg(t, "no proposal to apply (Ctrl-L asks)");
		return;
	}
	kb_tui__ed_select_all(t->ed);
	kb_tui__ed_paste_text(t->ed, L->cand, strlen(L->cand));
	kb_tui__ed_goto(t->ed, 1, 0);
	if (t->w.record)
		kb_app_llm_event("llm_round", json_pack("{s:s, s:i, s:s, s:s, s:s}", "file", t->o.path,
							"round", L->round, "verdict", "applied", "reason",
							"applied in the editor and saved", "from", "tui"),
				 NULL);
	free(L->cand);
	L->cand = NULL;
	snprintf(L->status, sizeof L->status, "applied and saved: compiling and running it "
		 "(Summary); Ctrl-Z undoes the edit");
	kb_tui__save(t);
	kb_tui__set_msg(t, "%s", L->status);
}

void kb_tui__llm_reject(kb_tui__ui *t)
{
	kb_tui__llm *L = &t->llm;
	if (!L->cand) {
		kb_tui__set_msg(t, "no proposal to reject");
		return;
	}
	if (t->w.record)
		kb_app_llm_event("llm_round", json_pack("{s:s, s:i, s:s, s:s, s:s}", "file", t->o.path,
							"round", L->round, "verdict", "rejected", "reason",
							"rejected in the editor", "from", "tui"), NULL);
	free(L->cand);
	L->cand = NULL;
	snprintf(L->status, sizeof L->status, "rejected");
	kb_tui__set_msg(t, "rejected the proposal");
}

bool kb_tui__llm_cancel(kb_tui__ui *t)
{
	if (!t->llm.busy)
		return false;
	atomic_store(&t->llm.cancel, 1);
	kb_tui__set_msg(t, "cancelling the question");
	return true;
}

void kb_tui__llm_text(kb_tui__ui *t, kb_buf *out)
{
	kb_tui__llm *L = &t->llm;
	if (!L->round && !L->status[0]) {
		kb_buf_cat(out, "Ask a model about this kernel: Ctrl-L, then a question (Enter alone:\n"
			   "\"How can this be faster?\").  It gets the source, the compile, resources,\n"
			   "occupancy and the last run (docs/llm.md); the answer streams here.\n"
			   "A proposal (a whole file or a diff) is checked against the spec; Ctrl-T\n"
			   "applies it as one edit and saves it, so it is compiled, checked and timed\n"
			   "like any save (Ctrl-Z undoes); Ctrl-W rejects it.  Esc cancels a question.\n");
		return;
	}
	if (L->round > 0) {
		pthread_mutex_lock(&L->lock);
		kb_buf_catf(out, "── question %d: %s\n%s\n── %s\n\n", L->round, L->question,
			    L->answer.s ? L->answer.s : "", L->status);
		pthread_mutex_unlock(&L->lock);
	}
	kb_buf_cat(out, L->shown.s ? L->shown.s : "");
}

void kb_tui__llm_stop(kb_tui__ui *t)
{
	kb_tui__llm *L = &t->llm;
	if (L->busy) { /* quitting: the question stops, and is journalled as such */
		atomic_store(&L->cancel, 1);
		pthread_join(L->thread, NULL);
		L->busy = false;
		finished(t);
	}
	kb_llm_answer_free(&L->ans);
	kb_llm_config_free(&L->cfg);
	json_decref(L->messages);
	kb_buf_free(&L->answer);
	kb_buf_free(&L->shown);
	free(L->base), free(L->cand);
	for (int i = 0; i < 2; i++)
		if (L->wake[i] >= 0)
			close(L->wake[i]);
	pthread_mutex_destroy(&L->lock);
}
