/*
 * verdict.c - the verdicts of a run and their words: the one table that
 * ties each kb_verdict to the text kbench prints, the text a Result's
 * "verdict" member carries ("CORRECT", "INCORRECT", "IMPOSSIBLE") and the
 * Result "status" that stands for the others ("fault" -> FAULT).
 *
 * Code decides on the enum; the words are read and written only here, so
 * journals and notes keep their text (old sessions read as they did) while
 * no comparison depends on a spelling.  A word this table does not know
 * reads as KB_VERDICT_NONE.
 */
#include "kb.h"

#include <string.h>

static const struct {
	kb_verdict v;
	const char *word;   /* printed, and a Result's "verdict" member */
	const char *status; /* the Result status that means it, or NULL */
} table[] = {
	{KB_VERDICT_NONE, "", NULL},
	{KB_VERDICT_CORRECT, "CORRECT", NULL},
	{KB_VERDICT_INCORRECT, "INCORRECT", NULL},
	{KB_VERDICT_IMPOSSIBLE, "IMPOSSIBLE", NULL},
	{KB_VERDICT_FAULT, "FAULT", "fault"},
	{KB_VERDICT_TIMEOUT, "TIMEOUT", "timeout"},
	{KB_VERDICT_CRASH, "CRASH", "crash"},
	{KB_VERDICT_SPEC_ERROR, "SPEC ERROR", "spec_error"},
	{KB_VERDICT_COMPILE_ERROR, "COMPILE ERROR", "compile_error"},
	{KB_VERDICT_REFERENCE_ERROR, "REFERENCE ERROR", "reference_error"},
	{KB_VERDICT_NO_REFERENCE, "NO REFERENCE", "no_reference"},
	{KB_VERDICT_REFUSED, "REFUSED", "python_refused"},
	{KB_VERDICT_UNSUPPORTED, "UNSUPPORTED", "unsupported"},
	{KB_VERDICT_NO_GPU, "NO GPU", "no_gpu"},
	{KB_VERDICT_LAUNCH_ERROR, "LAUNCH ERROR", "launch_error"},
	{KB_VERDICT_RUNNER_ERROR, "RUNNER ERROR", "protocol_error"},
	{KB_VERDICT_METRIC_ERROR, "METRIC ERROR", "metric_error"},
	{KB_VERDICT_CANCELLED, "CANCELLED", "cancelled"},
	{KB_VERDICT_DISCONNECTED, "DISCONNECTED", "disconnected"},
	{KB_VERDICT_UNREACHABLE, "UNREACHABLE", "unreachable"},
	{KB_VERDICT_PROTOCOL_MISMATCH, "PROTOCOL MISMATCH", "protocol_mismatch"},
	{KB_VERDICT_ERROR, "ERROR", NULL},
	{KB_VERDICT_COMPILED, "COMPILED", NULL},
	{KB_VERDICT_NO_RESULT, "NO RESULT", NULL},
	{KB_VERDICT_BAD_NOTE, "BAD NOTE", NULL},
};

const char *kb_verdict_name(kb_verdict v)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(table); i++)
		if (table[i].v == v)
			return table[i].word;
	return "";
}

kb_verdict kb_verdict_parse(const char *word)
{
	for (size_t i = 1; word && i < KB_ARRAY_LEN(table); i++)
		if (!strcmp(word, table[i].word))
			return table[i].v;
	return KB_VERDICT_NONE;
}

kb_verdict kb_verdict_of(const char *status, const char *verdict)
{
	status = status ? status : "";
	if (!strcmp(status, "ok")) {
		kb_verdict v = kb_verdict_parse(verdict);
		return v == KB_VERDICT_CORRECT || v == KB_VERDICT_INCORRECT ||
		       v == KB_VERDICT_IMPOSSIBLE ? v : KB_VERDICT_ERROR;
	}
	for (size_t i = 0; i < KB_ARRAY_LEN(table); i++)
		if (table[i].status && !strcmp(status, table[i].status))
			return table[i].v;
	return KB_VERDICT_ERROR;
}
