/*
 * optimize.c - `kbench optimize FILE --rounds N`: the loop that turns a
 * model's suggestions into variants and trusts none of them until kbench
 * has compiled, checked and timed it (issue 16).  Each round asks (the
 * optimize template first, then the feedback template in the same
 * conversation), takes the answer's candidate (reply.c), compiles it, runs
 * it through the runner like `kbench run`, and feeds back what happened.
 *
 * Invariants: "best" is only ever a CORRECT, timed variant (the original
 * counts when it is one); the next question is about the best so far, so a
 * broken proposal never becomes the base of the next; every step is a
 * journal event (llm_ask, llm_reply, llm_error, llm_round) and every
 * candidate that compiled a variant, so log, replay and report show the
 * path.  Without a GPU a compiled candidate cannot be checked: the loop
 * stops there and says so (KB_ENODEV) rather than guessing.
 */
#include "app_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	const kb_app_optimize_opts *o;
	kb_runner *r;
	json_t *messages;
	kb_buf history;          /* one line per round, for the prompts */
	char *orig;              /* the file as it was */
	char *base;              /* what the next question is about */
	char base_name[16];
	json_t *base_result;     /* its Result (a reference) or NULL */
	kb_compile_unit base_unit;
	char *best;              /* the best CORRECT text, or NULL */
	char best_name[16];
	double best_us, orig_us; /* medians; 0: none */
	long tokens;
	double t0;
	int answered;            /* rounds that got an answer */
	kb_llm_answer ans;       /* this round's */
} opt;

static void say(opt *S, const char *fmt, ...) KB_PRINTF(2, 3);
static void say(opt *S, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = kb_xvasprintf(fmt, ap);
	va_end(ap);
	if (S->o->on_line)
		S->o->on_line(S->o->ctx, line);
	free(line);
}

static double median_of(json_t *res)
{
	double us = kb_app__jnum(res, "timing.median_us");
	return us > 0 && kb_app_verdict(res) == KB_VERDICT_CORRECT ? us : 0;
}

/* Compiles text as the file's (with SASS for the prompt) and records it;
 * name gets the variant (may stay "").  Returns the unit's status. */
static int compile_text(opt *S, const char *text, kb_compile_unit *u, char name[16])
{
	const kb_app_run_opts *ro = &S->o->run;
	kb_compile_unit_opts co = {.arch = ro->arch, .defines = ro->defines,
				   .ndefines = ro->ndefines, .options = ro->options,
				   .noptions = ro->noptions, .want_sass = true};
	kb_err err = {0};
	int rc = kb_compile_unit_run(S->o->path, text, &co, u, &err);
	if (rc < 0 && rc != KB_ESPEC && rc != KB_ECOMPILE)
		kb_diag_add(&u->diags, KB_DIAG_ERROR, S->o->path, NULL, 0, 0, 0, "%s", err.msg);
	kb_variant v;
	memset(&v, 0, sizeof v);
	if (!S->o->dry_run && kb_app_recording() && u->src.path &&
	    kb_app_record_compile(u, &v, &err) == 0)
		snprintf(name, 16, "%s", v.name);
	kb_session_variant_free(&v);
	return rc;
}

/* Runs text (compiled) and records it; *res gets the Result.  deltas: how
 * it compares.  Returns 0 or the runner's KB_E*. */
static int run_text(opt *S, const char *text, json_t **res, char name[16], kb_buf *deltas,
		    kb_err *err)
{
	kb_app_run_opts ro = S->o->run;
	ro.path = S->o->path;
	ro.text = text;
	int rc = kb_app_run(S->r, &ro, NULL, NULL, res, err);
	if (rc < 0)
		return rc;
	kb_variant v;
	memset(&v, 0, sizeof v);
	kb_err e2 = {0};
	if (kb_app_recording() &&
	    kb_app_record_run_text(S->o->path, text, strlen(text), *res, &v, deltas, &e2) == 0 &&
	    v.name[0])
		snprintf(name, 16, "%s", v.name);
	kb_session_variant_free(&v);
	return 0;
}

static bool no_gpu(json_t *res)
{
	return kb_app_verdict(res) == KB_VERDICT_NO_GPU;
}

/* What the session held of the file before the loop (`kbench log`'s
 * table, failures included), the start of the prompts' history. */
static void history_before(opt *S)
{
	kb_buf log = KB_BUF_INIT;
	kb_err err = {0};
	if (kb_app_recording() && kb_app_log(S->o->path, &log, &err) == 0 && log.len)
		kb_buf_catf(&S->history, "Variants of this file in the session so far:\n%s\n", log.s);
	kb_buf_free(&log);
}

/* The original: compiled, run where a GPU is, the first base. */
static int baseline(opt *S, kb_err *err)
{
	kb_buf text = KB_BUF_INIT;
	int rc = kb_file_read(S->o->path, &text, err);
	if (rc < 0)
		return rc;
	S->orig = kb_buf_detach(&text);
	S->base = kb_xstrdup(S->orig);
	rc = compile_text(S, S->orig, &S->base_unit, S->base_name);
	if (rc != 0 || S->o->dry_run)
		return 0; /* the model may be asked to fix it */
	char name[16] = "";
	rc = run_text(S, S->orig, &S->base_result, name, NULL, err);
	if (rc < 0)
		return rc;
	if (name[0])
		snprintf(S->base_name, sizeof S->base_name, "%s", name);
	if ((S->orig_us = S->best_us = median_of(S->base_result)) > 0) {
		S->best = kb_xstrdup(S->orig);
		snprintf(S->best_name, sizeof S->best_name, "%s", S->base_name);
	}
	const char *name0 = S->base_name[0] ? S->base_name : S->o->path;
	if (kb_app_verdict(S->base_result) == KB_VERDICT_UNSUPPORTED) /* so is every variant */
		return kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "%s is UNSUPPORTED at these values (%s), "
				  "and a variant may not change the spec: give --arg/--define values "
				  "it supports", name0, kb_app__str(S->base_result, "message"));
	if (no_gpu(S->base_result))
		say(S, "baseline %s: compiled; no GPU here, so it is not checked or timed", name0);
	else
		say(S, "baseline %s: %s%s", name0, kb_app_run_verdict(S->base_result),
		    S->orig_us > 0 ? "" : " (no time to compare against)");
	return 0;
}

static void push_message(opt *S, const char *role, const char *content)
{
	json_array_append_new(S->messages, json_pack("{s:s, s:s}", "role", role, "content", content));
}

/* The question of round k: the optimize template until an answer came
 * (a round that timed out asks it again), then feedback. */
static void question(opt *S, int k, const char *verdict, const char *feedback)
{
	json_t *vars = kb_app_llm_vars(&S->base_unit, S->base_result, S->history.s, S->o->question);
	char *t;
	if (!json_array_size(S->messages)) {
		char *sys = kb_app_llm_prompt("system", vars);
		push_message(S, "system", sys);
		free(sys);
	}
	if (!S->answered) {
		t = kb_app_llm_prompt("optimize", vars);
	} else {
		char best[96];
		if (S->best)
			snprintf(best, sizeof best, "%s, %.2f us", S->best_name, S->best_us);
		else
			snprintf(best, sizeof best, "none yet");
		char rn[16];
		snprintf(rn, sizeof rn, "%d", k - 1);
		json_object_set_new(vars, "round", json_string(rn));
		json_object_set_new(vars, "verdict", json_string(verdict));
		json_object_set_new(vars, "feedback", json_string(feedback));
		json_object_set_new(vars, "best", json_string(best));
		t = kb_app_llm_prompt("feedback", vars);
	}
	push_message(S, "user", t);
	free(t);
	json_decref(vars);
}

static const char *error_kind(int rc)
{
	switch (rc) {
	case KB_ETIMEOUT: return "timeout";
	case KB_ECANCELED: return "cancelled";
	case KB_EPERM: return "auth";
	case KB_ENOTFOUND: return "not_found";
	case KB_EUNSUP: return "unsupported";
	default: return "error";
	}
}

static void on_retry(void *ctx, int attempt, double wait_s, const char *why)
{
	opt *S = ctx;
	say(S, "  %s: retry %d in %.1f s", why, attempt, wait_s);
	kb_app_llm_event("llm_retry", json_pack("{s:s, s:i, s:s, s:f}", "file", S->o->path,
						"attempt", attempt, "why", why, "wait_s", wait_s), NULL);
}

static void on_text(void *ctx, const char *s, size_t n)
{
	opt *S = ctx;
	if (S->o->on_text)
		S->o->on_text(S->o->ctx, s, n);
}

/* Asks round k's question.  0 with S->ans, or the provider's KB_E*. */
static int ask(opt *S, int k, kb_err *err)
{
	json_t *last = json_array_get(S->messages, json_array_size(S->messages) - 1);
	const char *prompt = json_string_value(json_object_get(last, "content"));
	const kb_llm_provider *p = kb_llm_provider_for(S->o->llm);
	kb_app_llm_event("llm_ask", json_pack("{s:s, s:i, s:s, s:s?, s:s, s:s, s:i}", "file",
					      S->o->path, "round", k, "provider", p->name, "model",
					      S->o->llm->command ? NULL : S->o->llm->model, "parent",
					      S->base_name, "prompt", prompt, "chars",
					      (int)strlen(prompt)), NULL);
	say(S, "round %d: asking %s about %s ...", k,
	    S->o->llm->command ? S->o->llm->command : S->o->llm->model, S->base_name);
	kb_llm_hooks h = {.on_text = on_text, .on_retry = on_retry, .ctx = S,
			  .cancel = S->o->cancel, .round = k};
	kb_llm_answer_free(&S->ans);
	int rc = kb_llm_ask(S->o->llm, S->messages, &h, &S->ans, err);
	S->tokens += S->ans.prompt_tokens + S->ans.completion_tokens;
	if (rc < 0) {
		kb_app_llm_event("llm_error", json_pack("{s:s, s:i, s:s, s:s, s:s}", "file", S->o->path,
							"round", k, "kind", error_kind(rc),
							"message", err->msg, "partial", S->ans.text ? S->ans.text : ""),
				 NULL);
		return rc;
	}
	kb_app_llm_event("llm_reply", json_pack("{s:s, s:i, s:s, s:i, s:i, s:b, s:i, s:i, s:f}",
						"file", S->o->path, "round", k, "answer", S->ans.text,
						"prompt_tokens", S->ans.prompt_tokens, "completion_tokens",
						S->ans.completion_tokens, "estimated", S->ans.estimated,
						"attempts", S->ans.attempts, "http_status",
						S->ans.http_status, "ms", S->ans.ms), NULL);
	push_message(S, "assistant", S->ans.text);
	S->answered++;
	return 0;
}

/* What one round came to, recorded and kept for the prompts. */
typedef struct {
	char verdict[24];      /* no code, COMPILE ERROR, CORRECT, ... (a copy: the
				* run's Result it came from is freed before it is told) */
	char variant[16];
	char parent[16];       /* what it was based on (the best when asked: a new best
				* replaces S->base_name before the round is recorded) */
	kb_buf reason;         /* one line: why */
	kb_buf feedback;       /* what the model is told */
	double us, delta_pct;  /* the median and its change vs the parent (CORRECT only) */
	bool best;
} round_out;

static void record_round(opt *S, int k, round_out *ro)
{
	json_t *ev = json_pack("{s:s, s:i, s:s, s:s, s:s}", "file", S->o->path, "round", k,
			       "verdict", ro->verdict, "parent", ro->parent, "reason",
			       ro->reason.s ? ro->reason.s : "");
	if (ro->variant[0])
		json_object_set_new(ev, "variant", json_string(ro->variant));
	if (ro->us > 0) {
		json_object_set_new(ev, "median_us", json_real(ro->us));
		json_object_set_new(ev, "delta_pct", json_real(ro->delta_pct));
	}
	json_object_set_new(ev, "best", json_boolean(ro->best));
	char gist[160];
	kb_llm_gist(S->ans.text, gist, sizeof gist);
	json_object_set_new(ev, "proposal", json_string(gist));
	kb_app_llm_event("llm_round", ev, NULL);
	kb_buf_catf(&S->history, "round %d: %s%s%s: %s\n", k, ro->variant[0] ? ro->variant : "",
		    ro->variant[0] ? " " : "", ro->verdict, ro->reason.s ? ro->reason.s : "");
	say(S, "round %d: %s%s%s%s%s", k, ro->variant[0] ? ro->variant : "",
	    ro->variant[0] ? " " : "", ro->verdict, ro->reason.len ? ": " : "",
	    ro->reason.len ? ro->reason.s : "");
}

/* The first line of a run's rendering that says why it is not CORRECT. */
static void why_not(json_t *res, kb_buf *out)
{
	const char *msg = kb_app__str(res, "message");
	if (*msg) {
		kb_buf_catf(out, "%.*s", (int)strcspn(msg, "\n"), msg);
		return;
	}
	kb_buf r = KB_BUF_INIT;
	kb_app_run_render(res, &r);
	const char *v = kb_app_run_verdict(res);
	const char *line = r.s ? strstr(r.s, v) : NULL;
	if (line)
		kb_buf_catf(out, "%.*s", (int)strcspn(line, "\n"), line);
	kb_buf_free(&r);
}

/* A candidate that compiled, run and recorded: its variant, its verdict
 * and what the model is told (the run's rendering and its deltas).  *res
 * gets the Result.  Returns 0 or the runner's KB_E*. */
static int run_candidate(opt *S, const char *cand, round_out *ro, json_t **res, kb_err *err)
{
	kb_buf deltas = KB_BUF_INIT;
	char name[16] = "";
	int rc = run_text(S, cand, res, name, &deltas, err);
	if (rc == 0) {
		if (name[0])
			snprintf(ro->variant, sizeof ro->variant, "%s", name);
		snprintf(ro->verdict, sizeof ro->verdict, "%s", kb_app_run_verdict(*res));
		kb_app_run_render(*res, &ro->feedback);
		kb_buf_cat(&ro->feedback, deltas.s ? deltas.s : "");
	}
	kb_buf_free(&deltas);
	return rc;
}

/* The score of a run against the best so far: its median (0 unless
 * CORRECT and timed), its change, and whether it is the new best. */
static void score(const opt *S, json_t *res, round_out *ro)
{
	if ((ro->us = median_of(res)) <= 0)
		return;
	ro->delta_pct = S->best_us > 0 ? 100.0 * (ro->us - S->best_us) / S->best_us : 0;
	ro->best = !S->best || ro->us < S->best_us;
}

/* The round's reason in one line, from its score (before a new best
 * replaces the one it is compared with). */
static void word(const opt *S, json_t *res, round_out *ro)
{
	if (ro->us <= 0) {
		why_not(res, &ro->reason);
		kb_buf_cat(&ro->reason, "; rejected");
		return;
	}
	/* a variant has no name where nothing is recorded (KBENCH_NO_SESSION) */
	const char *best = S->best_name[0] ? S->best_name : "the best so far";
	kb_buf_catf(&ro->reason, "%.2f us", ro->us);
	if (S->best_us > 0)
		kb_buf_catf(&ro->reason, " (%+.1f%% vs %s)", ro->delta_pct, best);
	if (!ro->best)
		kb_buf_catf(&ro->reason, "; not faster than %s: not kept as the best", best);
}

/* cand (compiled in u, which it takes; its Result res) becomes the best,
 * and the base of the next question. */
static void promote(opt *S, const char *cand, const round_out *ro, kb_compile_unit *u, json_t *res)
{
	free(S->best);
	S->best = kb_xstrdup(cand);
	S->best_us = ro->us;
	snprintf(S->best_name, sizeof S->best_name, "%s", ro->variant);
	free(S->base);
	S->base = kb_xstrdup(cand);
	snprintf(S->base_name, sizeof S->base_name, "%s", ro->variant);
	kb_compile_unit_free(&S->base_unit);
	S->base_unit = *u;
	memset(u, 0, sizeof *u);
	json_decref(S->base_result);
	S->base_result = json_incref(res);
}

/* A candidate that compiled where no GPU can check it: the loop stops
 * (KB_ENODEV with err), saying so. */
static int stop_no_gpu(json_t *res, round_out *ro, kb_err *err)
{
	kb_buf_catf(&ro->reason, "compiled; checking and timing it needs a GPU, and none can "
		    "be used here: stopped after the compile");
	return kb_err_set(err, KB_ENODEV, KB_DOM_CUDA, 0, "%s compiled; checking and timing it "
			  "needs a GPU (%s): stopped after the compile",
			  ro->variant[0] ? ro->variant : "the candidate", kb_app__str(res, "message"));
}

/* A candidate that compiled: run, scored, worded, and promoted when it is
 * the new best.  Returns 0, KB_ENODEV or the runner's KB_E*. */
static int judge_run(opt *S, const char *cand, kb_compile_unit *u, round_out *ro, kb_err *err)
{
	json_t *res = NULL;
	int rc = run_candidate(S, cand, ro, &res, err);
	if (rc < 0)
		return rc;
	if (no_gpu(res)) {
		rc = stop_no_gpu(res, ro, err);
	} else {
		score(S, res, ro);
		word(S, res, ro);
		if (ro->best)
			promote(S, cand, ro, u, res);
	}
	json_decref(res);
	return rc;
}

/* Round k after the answer: candidate, compile, run.  0, or KB_ENODEV /
 * the runner's error (the loop stops). */
static int try_answer(opt *S, round_out *ro, kb_err *err)
{
	char *cand = NULL;
	kb_llm_verdict v = kb_llm_candidate(S->base, S->ans.text, &cand, &ro->reason);
	if (v != KB_LLM_OK) {
		snprintf(ro->verdict, sizeof ro->verdict, "%s", kb_llm_verdict_name(v));
		kb_buf_cat(&ro->feedback, ro->reason.s);
		return 0;
	}
	kb_compile_unit u;
	memset(&u, 0, sizeof u);
	int rc = compile_text(S, cand, &u, ro->variant);
	if (rc != 0) {
		snprintf(ro->verdict, sizeof ro->verdict, "%s",
			 kb_verdict_name(rc == KB_ESPEC ? KB_VERDICT_SPEC_ERROR : KB_VERDICT_COMPILE_ERROR));
		int nerr = kb_diag_count(&u.diags, KB_DIAG_ERROR);
		kb_buf_catf(&ro->reason, "%d error%s", nerr, nerr == 1 ? "" : "s");
		kb_diag_render(&u.diags, &ro->feedback, false);
		if (ro->feedback.len > 4000)
			ro->feedback.s[4000] = 0, ro->feedback.len = 4000;
		rc = 0;
	} else {
		rc = judge_run(S, cand, &u, ro, err);
	}
	kb_compile_unit_free(&u);
	free(cand);
	return rc;
}

/* Whether a budget is spent (said once, with which). */
static bool budget_spent(opt *S)
{
	if (S->o->max_tokens > 0 && S->tokens >= S->o->max_tokens) {
		say(S, "token budget spent (%ld of %ld): stopping", S->tokens, S->o->max_tokens);
		return true;
	}
	double s = (kb_now_ms() - S->t0) / 1000;
	if (S->o->max_seconds > 0 && s >= S->o->max_seconds) {
		say(S, "time budget spent (%.0f of %.0f s): stopping", s, S->o->max_seconds);
		return true;
	}
	return false;
}

static void round_free(round_out *ro)
{
	kb_buf_free(&ro->reason);
	kb_buf_free(&ro->feedback);
}

/* The rounds; 0 when they ran out, else why the loop stopped. */
static int rounds(opt *S, kb_err *err)
{
	char verdict[24] = ""; /* the last round's, for the next question */
	kb_buf feedback = KB_BUF_INIT;
	int rc = 0;
	for (int k = 1; k <= S->o->rounds && rc == 0 && !budget_spent(S); k++) {
		question(S, k, verdict, feedback.s ? feedback.s : "");
		rc = ask(S, k, err);
		if (rc == KB_ETIMEOUT) { /* this round is lost; the next asks again */
			say(S, "round %d: %s", k, err->msg);
			kb_buf_catf(&S->history, "round %d: no answer (%s)\n", k, err->msg);
			json_array_remove(S->messages, json_array_size(S->messages) - 1);
			rc = 0;
			continue;
		}
		if (rc < 0)
			break;
		round_out ro = {.verdict = "?"};
		snprintf(ro.parent, sizeof ro.parent, "%s", S->base_name);
		rc = try_answer(S, &ro, err);
		record_round(S, k, &ro);
		kb_buf_reset(&feedback);
		kb_buf_cat(&feedback, ro.feedback.s ? ro.feedback.s : "");
		snprintf(verdict, sizeof verdict, "%s", ro.verdict);
		round_free(&ro);
	}
	kb_buf_free(&feedback);
	if (rc == 0 && !S->answered && S->o->rounds > 0 && err->msg[0])
		rc = KB_ETIMEOUT; /* not one answer came: say so in the exit status */
	return rc;
}

/* Where nothing is recorded (KBENCH_NO_SESSION), a copy of the best text
 * in a new file of the temporary folder, named like the file so that its
 * kind (.cu, .tile, .ptx) stays.  Returns the copy's path (a new string),
 * or NULL with why. */
static char *keep_copy(const char *path, const char *text, char *why, size_t n)
{
	const char *dir = getenv("TMPDIR");
	char *tpl = kb_xasprintf("%s/kbench-best-XXXXXX-%s", dir && *dir ? dir : "/tmp",
				 kb_basename(path));
	int fd = mkstemps(tpl, (int)strlen(kb_basename(path)) + 1);
	kb_err e = {0};
	if (fd < 0 || close(fd) < 0 || kb_file_write(tpl, text, strlen(text), &e) < 0) {
		snprintf(why, n, "%s", e.msg[0] ? e.msg : strerror(errno));
		if (fd >= 0)
			unlink(tpl);
		free(tpl);
		return NULL;
	}
	return tpl;
}

/* The best written back to b->path.  Returns 0, or the write's KB_E* with
 * err saying where the best variant is: the session's variant, else a
 * copy (keep_copy). */
static int write_best(const kb_app__best *b, kb_buf *out, kb_err *err)
{
	int rc = kb_file_write(b->path, b->best, strlen(b->best), err);
	if (rc == 0) {
		kb_buf_catf(out, "written to %s (the original is in the session)\n", b->path);
		return KB_OK;
	}
	char why[sizeof err->msg], why2[sizeof err->msg];
	snprintf(why, sizeof why, "%s", err->msg);
	if (b->best_name[0])
		return kb_err_set(err, rc, KB_DOM_NONE, 0, "the best variant could not be written to "
				  "%s (%s); it is kept in the session: `kbench checkout %s` writes it",
				  b->path, why, b->best_name);
	char *copy = keep_copy(b->path, b->best, why2, sizeof why2);
	if (copy)
		kb_err_set(err, rc, KB_DOM_NONE, 0, "the best variant could not be written to %s (%s); "
			   "nothing is recorded, so it is kept in %s", b->path, why, copy);
	else
		kb_err_set(err, rc, KB_DOM_NONE, 0, "the best variant could not be written to %s (%s), "
			   "nor kept in the temporary folder (%s): it is lost", b->path, why, why2);
	free(copy);
	return rc;
}

int kb_app__optimize_finish(const kb_app__best *b, kb_buf *out, kb_err *err)
{
	if (!b->best || b->orig_us <= 0 || !strcmp(b->best, b->orig)) {
		kb_buf_catf(out, "best: %s\n", b->best ? "the original (no proposal was faster "
			    "and correct)" : "none (no CORRECT timed variant)");
		return KB_OK;
	}
	kb_buf_catf(out, "best: %s CORRECT %.2f us (%+.1f%% vs the original %.2f us)\n",
		    b->best_name, b->best_us, 100.0 * (b->best_us - b->orig_us) / b->orig_us,
		    b->orig_us);
	if (!b->no_write)
		return write_best(b, out, err);
	kb_buf_catf(out, "the file is unchanged (--no-write): `kbench checkout %s` writes it\n",
		    b->best_name);
	return KB_OK;
}

/* The summary, and the best written to the file (kb_app__optimize_finish). */
static int finish(opt *S, kb_buf *out, kb_err *err)
{
	kb_app__best b = {.path = S->o->path, .orig = S->orig, .best = S->best,
			  .best_name = S->best_name, .orig_us = S->orig_us, .best_us = S->best_us,
			  .no_write = S->o->no_write};
	return kb_app__optimize_finish(&b, out, err);
}

static void dry_run(opt *S, kb_buf *out)
{
	question(S, 1, "", "");
	json_t *body = kb_llm_request_body(S->o->llm, S->messages);
	char *s = json_dumps(body, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	kb_buf_catf(out, "%s\n", s);
	free(s);
	json_decref(body);
}

int kb_app_optimize(kb_runner *r, const kb_app_optimize_opts *o, kb_buf *out, kb_err *err)
{
	opt S = {.o = o, .r = r, .messages = json_array(), .t0 = kb_now_ms()};
	const kb_llm_provider *p = kb_llm_provider_for(o->llm);
	if (!o->dry_run)
		kb_app_llm_event("optimize", json_pack("{s:s, s:i, s:s, s:s}", "file", o->path,
						       "rounds", o->rounds, "provider", p->name,
						       "model", o->llm->command ? o->llm->command
									       : o->llm->model), NULL);
	int rc = baseline(&S, err);
	if (rc == 0)
		history_before(&S);
	if (rc == 0 && o->dry_run)
		dry_run(&S, out);
	else if (rc == 0)
		rc = rounds(&S, err);
	if ((rc == 0 || rc == KB_ENODEV || rc == KB_ECANCELED || rc == KB_ETIMEOUT) && !o->dry_run) {
		kb_err e2 = {0};
		int wrc = finish(&S, out, &e2);
		if (wrc < 0 && rc == 0) { /* an earlier failure says more; this one is in out */
			*err = e2;
			rc = wrc;
		} else if (wrc < 0) {
			kb_buf_catf(out, "%s\n", e2.msg);
		}
	}
	kb_llm_answer_free(&S.ans);
	kb_compile_unit_free(&S.base_unit);
	json_decref(S.base_result);
	json_decref(S.messages);
	kb_buf_free(&S.history);
	free(S.orig), free(S.base), free(S.best);
	return rc;
}
