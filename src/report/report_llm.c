/*
 * report_llm.c - the rounds of `kbench optimize` in `kbench log` and in the
 * report: what each round proposed (the variant it became, if any), the
 * verdict kbench found, and how it compares with what it was based on.  The
 * rounds come from the journal (kb_app__llm_rounds); the verdicts are
 * kbench's, never the model's.
 */
#include "report.h"

#include <stdio.h>
#include <string.h>

void kb_app__rounds_text(json_t *rounds, kb_buf *out)
{
	size_t i;
	json_t *r;
	if (!json_array_size(rounds))
		return;
	kb_buf_cat(out, "  LLM rounds (kbench optimize):\n");
	json_array_foreach(rounds, i, r) {
		const char *v = kb_app__str(r, "variant");
		kb_buf_catf(out, "    round %.0f (%s): %s%s%s", kb_app__num(r, "round"),
			    kb_app__str(r, "model"), v, *v ? " " : "", kb_app__str(r, "verdict"));
		if (*kb_app__str(r, "reason"))
			kb_buf_catf(out, ": %s", kb_app__str(r, "reason"));
		kb_buf_cat(out, json_is_true(json_object_get(r, "best")) ? "  <- new best\n" : "\n");
	}
}

/* One round as a table row. */
static void round_row(json_t *r, kb_app__trow *t)
{
	memset(t, 0, sizeof *t);
	const char *v = kb_app__str(r, "variant");
	const char *verdict = kb_app__str(r, "verdict");
	snprintf(t->text[0], sizeof t->text[0], "%.0f", kb_app__num(r, "round"));
	snprintf(t->text[1], sizeof t->text[1], "%s", kb_app__str(r, "model"));
	snprintf(t->text[2], sizeof t->text[2], "%.150s", kb_app__str(r, "proposal"));
	snprintf(t->text[3], sizeof t->text[3], "%s", *v ? v : "-");
	snprintf(t->text[4], sizeof t->text[4], "%s", kb_app__str(r, "parent"));
	snprintf(t->text[5], sizeof t->text[5], "%s", verdict);
	t->cls[5] = kb_app__badge(kb_verdict_parse(verdict));
	if (kb_app__has(r, "delta_pct"))
		snprintf(t->text[6], sizeof t->text[6], "%+.1f%%", kb_app__num(r, "delta_pct"));
	else
		snprintf(t->text[6], sizeof t->text[6], "-");
	bool best = json_is_true(json_object_get(r, "best"));
	const char *why = kb_app__str(r, "reason");
	int room = (int)sizeof t->text[7] - 1 - (best ? 11 : 0);
	snprintf(t->text[7], sizeof t->text[7], "%.*s%s", room, why, best ? " (new best)" : "");
	t->strong[3] = best;
}

void kb_app__section_rounds(const kb_app__model *R, kb_buf *o)
{
	static const char *heads[] = {"Round", "Model", "Proposal", "Variant", "Based on", "Verdict",
				      "Δ", "What kbench found"};
	const char *align = "rlwlllrw"; /* w: prose, wrapped (the proposal, the finding) */
	json_t *rounds = R->o->rounds;
	if (!json_array_size(rounds))
		return;
	kb_app__heading(R, o, "LLM rounds");
	kb_app__para(R, o, true, "Each round of `kbench optimize`: the variant the model's answer "
		     "became, the verdict kbench found by compiling, checking and timing it, and "
		     "its change against the variant it was based on. Only a CORRECT timed "
		     "variant can be the best.");
	kb_app__table_begin(R, o, heads, align, false);
	size_t i;
	json_t *r;
	kb_app__trow t;
	json_array_foreach(rounds, i, r) {
		round_row(r, &t);
		kb_app__table_row(R, o, &t, align);
	}
	kb_app__table_end(R, o);
}
