/*
 * result.c - reading a Result and a variant's note: a member by key or by
 * dotted path, the Result's verdict and its word, a variant's verdict word
 * and median, whether it ran a given kernel, and a check's timed launch
 * that wrote other than its checked twin.
 *
 * A leaf of src/report: the verbs of src/app, the report's model and the
 * run's rendering all read Results through it, and it calls none of them.  Missing members
 * read as "" and 0 (kb_app__str, kb_app__num) or -1 (kb_app__jnum), never
 * as an error: a Result from an older kbench lacks some.
 */
#include "report.h"

#include <stdio.h>
#include <string.h>

/* ---- members ---------------------------------------------------------------- */

const char *kb_app__str(json_t *j, const char *key)
{
	return kb_app__sval(json_object_get(j, key));
}

const char *kb_app__sval(json_t *v)
{
	const char *s = json_string_value(v);
	return s ? s : "";
}

double kb_app__num(json_t *j, const char *key)
{
	return json_number_value(json_object_get(j, key));
}

bool kb_app__has(json_t *j, const char *key)
{
	return json_is_number(json_object_get(j, key));
}

json_t *kb_app__jget(json_t *j, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
		j = json_object_get(j, k);
	return j;
}

double kb_app__jnum(json_t *j, const char *path)
{
	json_t *v = kb_app__jget(j, path);
	return json_is_number(v) ? json_number_value(v) : -1;
}

/* ---- verdicts ---------------------------------------------------------------- */

kb_verdict kb_app_verdict(json_t *r)
{
	return kb_verdict_of(json_string_value(json_object_get(r, "status")),
			     json_string_value(json_object_get(r, "verdict")));
}

const char *kb_app_run_verdict(json_t *r)
{
	return kb_verdict_name(kb_app_verdict(r));
}

/* ---- a variant ----------------------------------------------------------------- */

const char *kb_app__verdict_of(const kb_variant *v)
{
	json_t *r = kb_app__jget(v->note, "result");
	if (v->note_error)
		return kb_verdict_name(KB_VERDICT_BAD_NOTE);
	if (!r)
		return v->note ? "compiled" : "-";
	return kb_app_run_verdict(r);
}

double kb_app__median_of(const kb_variant *v)
{
	return kb_app__jnum(v->note, "result.timing.median_us");
}

bool kb_app__same_kernel(const kb_variant *v, const char *kernel)
{
	return !kernel || !v->kernel || !strcmp(v->kernel, kernel);
}

/* ---- a check's timed launches ------------------------------------------------ */

bool kb_app__timed_bad(json_t *check, char *s, size_t n)
{
	json_t *tl = json_object_get(check, "timed_launches");
	json_t *bad = json_object_get(tl, "bad");
	if (!bad)
		return false;
	snprintf(s, n, "timed launch %lld of %lld wrote %s unlike its checked twin (same inputs, "
		 "outputs poisoned first): %lld of %lld elements differ, first bad %s; a kernel "
		 "must do the same work on every launch",
		 (long long)kb_app__num(bad, "launch"), (long long)kb_app__num(tl, "launches_checked"),
		 kb_app__str(bad, "output"), (long long)kb_app__num(bad, "elements"),
		 (long long)kb_app__num(bad, "of"), kb_app__str(bad, "first_bad"));
	return true;
}
