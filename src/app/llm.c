/*
 * llm.c - what a model is told about a variant: the values of the prompt
 * templates' {{keys}} (llm_bridge/prompt.c) made from a compile unit and a
 * Result, rendered with the same text the CLI prints, so a model reads what
 * a person reads.  Also the journal events every front end writes for an
 * LLM exchange, with every text passed through kb_llm_redact first.
 */
#include "app_int.h"

#include <stdlib.h>
#include <string.h>

/* The spec lines of a text, as they are. */
static void spec_of(const char *text, kb_buf *out)
{
	for (const char *s = text; s && *s;) {
		size_t n = strcspn(s, "\n");
		const char *t = s;
		while (*t == ' ' || *t == '\t')
			t++;
		if (!strncmp(t, "//!", 3))
			kb_buf_catf(out, "%.*s\n", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

/* "14 registers, 128 B shared, 0 B local, no spills; occupancy 100%
 * (limited by warps): why". */
static void resources_of(json_t *compile, kb_buf *out)
{
	json_t *k = json_object_get(compile, "kernel");
	json_t *res = json_object_get(k, "resources"), *occ = json_object_get(k, "occupancy");
	if (!res)
		return;
	kb_buf_catf(out, "%.0f registers/thread, %.0f B static shared, %.0f B local, spills "
		    "%.0f B stored / %.0f B loaded\n",
		    kb_app__jnum(res, "registers"), kb_app__jnum(res, "shared_static_bytes"),
		    kb_app__jnum(res, "local_bytes"), kb_app__jnum(res, "spill_store_bytes"),
		    kb_app__jnum(res, "spill_load_bytes"));
	if (occ)
		kb_buf_catf(out, "occupancy %.0f%% (%.0f blocks/SM of %.0f threads), limited by %s: %s\n",
			    kb_app__jnum(occ, "occupancy_pct"), kb_app__jnum(occ, "blocks_per_sm"),
			    kb_app__jnum(occ, "block_threads"), kb_app__str(occ, "limiter"),
			    kb_app__str(occ, "why"));
}

/* Up to 60 instructions of the chosen kernel with their source lines (the
 * profile's hot lines carry their own SASS when there is one). */
static void sass_of(const kb_compile_unit *u, kb_buf *out)
{
	const kb_sass *s = &u->build.sass;
	const char *kname = u->chosen ? u->chosen->name : NULL;
	for (int f = 0; s->available && f < s->nfuncs; f++) {
		const kb_sass_func *fn = &s->funcs[f];
		if (kname && !strstr(fn->name, kname))
			continue;
		int n = kb_compile_sass_body_len(fn);
		for (int i = 0; i < n && i < 60; i++)
			kb_buf_catf(out, "/*%04x*/ %s%s%s %s ;%s%.0d\n", fn->v[i].addr,
				    fn->v[i].pred ? fn->v[i].pred : "", fn->v[i].pred ? " " : "",
				    fn->v[i].opcode, fn->v[i].operands ? fn->v[i].operands : "",
				    fn->v[i].line ? "  // line " : "", fn->v[i].line);
		if (n > 60)
			kb_buf_catf(out, "... (%d more instructions)\n", n - 60);
		break;
	}
}

static void set(json_t *vars, const char *key, kb_buf *b)
{
	json_object_set_new(vars, key, json_string(b->s ? b->s : ""));
	kb_buf_reset(b);
}

/* What a Result says beyond the compile, into vars. */
static void result_vars(json_t *vars, json_t *result, kb_buf *b)
{
	if (!result) {
		json_object_set_new(vars, "result", json_string("not run yet"));
		return;
	}
	kb_app_run_render(result, b);
	set(vars, "result", b);
	kb_app_profile_render(result, b);
	set(vars, "profile", b);
	if (json_object_get(result, "hot_lines"))
		json_object_set_new(vars, "hot", json_string("in the Profile section above"));
}

json_t *kb_app_llm_vars(const kb_compile_unit *u, json_t *result, const char *history,
			const char *question)
{
	json_t *vars = json_object();
	kb_buf b = KB_BUF_INIT;
	json_t *compile = kb_compile_unit_summary_json(u);
	json_object_set_new(vars, "file", json_string(u->src.path ? u->src.path : "?"));
	json_object_set_new(vars, "kernel", json_string(u->chosen ? u->chosen->name : "?"));
	json_object_set_new(vars, "arch", json_string(u->build.arch ? u->build.arch : "?"));
	json_object_set_new(vars, "lang", json_string(u->src.kind == KB_SRC_PTX ? "ptx" : "cuda"));
	json_object_set_new(vars, "source", json_string(u->src.text ? u->src.text : ""));
	spec_of(u->src.text, &b);
	set(vars, "spec", &b);
	kb_diag_render(&u->diags, &b, false);
	if (u->build.log && *u->build.log)
		kb_buf_cat(&b, u->build.log);
	set(vars, "compile_log", &b);
	resources_of(compile, &b);
	set(vars, "resources", &b);
	sass_of(u, &b);
	set(vars, "sass", &b);
	result_vars(vars, result, &b);
	json_object_set_new(vars, "history", json_string(history ? history : ""));
	json_object_set_new(vars, "question",
			    json_string(question && *question ? question : "How can this be faster?"));
	json_decref(compile);
	kb_buf_free(&b);
	return vars;
}

char *kb_app_llm_prompt(const char *template_name, json_t *vars)
{
	char *t = kb_llm_template(template_name, NULL);
	kb_buf out = KB_BUF_INIT;
	kb_llm_prompt_fill(t ? t : "{{question}}", vars, &out);
	free(t);
	return kb_buf_detach(&out);
}

int kb_app_llm_event(const char *event, json_t *fields, kb_err *err)
{
	if (!kb_app_recording()) {
		json_decref(fields);
		return 0;
	}
	/* every string member is redacted: answers, prompts and messages alike */
	const char *k;
	json_t *v;
	json_object_foreach(fields, k, v) {
		if (!json_is_string(v))
			continue;
		kb_buf r = KB_BUF_INIT;
		kb_llm_redact(json_string_value(v), NULL, &r);
		json_string_set(v, r.s);
		kb_buf_free(&r);
	}
	kb_session s;
	int rc = kb_session_current(&s, err);
	if (rc < 0) {
		json_decref(fields);
		return rc;
	}
	const char *file = json_string_value(json_object_get(fields, "file"));
	if (file) { /* the name the session's other events use for it */
		char *name = kb_session_file_name(&s, file);
		json_object_set_new(fields, "file", json_string(name));
		free(name);
	}
	rc = kb_session_journal_append(&s, event, fields, err);
	kb_session_free(&s);
	return rc;
}

/* ---- the rounds, read back for log and report ---- */

/* The round an llm_round or llm_error event stands for, or NULL. */
static json_t *round_of(json_t *ev, const char *model)
{
	const char *type = kb_app__str(ev, "event");
	json_t *r = NULL;
	if (!strcmp(type, "llm_round")) {
		r = json_deep_copy(ev);
		json_object_del(r, "event");
		json_object_del(r, "t");
	} else if (!strcmp(type, "llm_error")) {
		r = json_pack("{s:O?, s:s, s:s, s:b}", "round", json_object_get(ev, "round"),
			      "verdict", kb_app__str(ev, "kind"), "reason", kb_app__str(ev, "message"),
			      "best", 0);
	}
	if (r)
		json_object_set_new(r, "model", json_string(model));
	return r;
}

json_t *kb_app__llm_rounds(const kb_session *s, const char *file)
{
	json_t *out = json_array(), *events = NULL, *same = json_object();
	char *id = kb_session_file_id(s, file);
	const char *model = "?";
	long truncated;
	if (kb_session_journal_read(s, &events, &truncated, NULL) == 0) {
		size_t i;
		json_t *ev;
		json_array_foreach(events, i, ev) {
			/* the same file, whichever name the event gives it */
			const char *f = kb_app__str(ev, "file");
			if (!json_object_get(same, f)) {
				char *fid = kb_session_file_id(s, f);
				json_object_set_new(same, f, json_boolean(!strcmp(fid, id)));
				free(fid);
			}
			if (!json_is_true(json_object_get(same, f)))
				continue;
			if (!strcmp(kb_app__str(ev, "event"), "optimize"))
				model = kb_app__str(ev, "model");
			json_t *r = round_of(ev, model);
			if (r)
				json_array_append_new(out, r);
		}
	}
	json_decref(events);
	json_decref(same);
	free(id);
	return out;
}

bool kb_app__llm_step_text(json_t *ev, kb_buf *out)
{
	const char *what = kb_app__str(ev, "event");
	if (!strcmp(what, "optimize")) {
		kb_buf_catf(out, "kbench optimize: %.0f rounds, %s (%s)\n", kb_app__num(ev, "rounds"),
			    kb_app__str(ev, "model"), kb_app__str(ev, "provider"));
	} else if (!strcmp(what, "llm_ask")) {
		kb_buf_catf(out, "question %.0f to %s, about %s:\n\n%s\n", kb_app__num(ev, "round"),
			    kb_app__str(ev, "model"), kb_app__str(ev, "parent"), kb_app__str(ev, "prompt"));
	} else if (!strcmp(what, "llm_reply")) {
		kb_buf_catf(out, "answer %.0f (%.0f + %.0f tokens, %.0f attempt(s)):\n\n%s\n",
			    kb_app__num(ev, "round"), kb_app__num(ev, "prompt_tokens"),
			    kb_app__num(ev, "completion_tokens"), kb_app__num(ev, "attempts"),
			    kb_app__str(ev, "answer"));
	} else if (!strcmp(what, "llm_error")) {
		kb_buf_catf(out, "question %.0f failed (%s): %s\n%s%s\n", kb_app__num(ev, "round"),
			    kb_app__str(ev, "kind"), kb_app__str(ev, "message"),
			    *kb_app__str(ev, "partial") ? "\nwhat came before:\n" : "",
			    kb_app__str(ev, "partial"));
	} else if (!strcmp(what, "llm_retry")) {
		kb_buf_catf(out, "%s: retry %.0f after %.1f s\n", kb_app__str(ev, "why"),
			    kb_app__num(ev, "attempt"), kb_app__num(ev, "wait_s"));
	} else if (!strcmp(what, "llm_round")) {
		const char *v = kb_app__str(ev, "variant"), *parent = kb_app__str(ev, "parent");
		kb_buf_catf(out, "round %.0f: %s%s%s", kb_app__num(ev, "round"), v, *v ? " " : "",
			    kb_app__str(ev, "verdict"));
		if (*parent)
			kb_buf_catf(out, " (based on %s)", parent);
		kb_buf_catf(out, "%s%s\n", *kb_app__str(ev, "reason") ? ": " : "",
			    kb_app__str(ev, "reason"));
	} else {
		return false;
	}
	return true;
}
