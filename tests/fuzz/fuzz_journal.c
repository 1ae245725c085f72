/* fuzz_journal.c - the session journal reader (session/journal.c): the
 * input is written as a session's journal.jsonl (a private folder of this
 * process) and read back as `kbench log` and replay read it, torn last
 * line and all. */
#include "../../src/session/session.h"
#include "fuzz.h"

#include <stdio.h>

static kb_session sess;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sess.dir) {
		sess.dir = kb_xstrdup(fuzz_tmpdir("journal"));
		snprintf(sess.id, sizeof sess.id, "fuzz");
	}
	char *path = kb_xasprintf("%s/journal.jsonl", sess.dir);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	free(path);
	json_t *events = NULL;
	long truncated;
	kb_err err = {0};
	if (kb_session_journal_read(&sess, &events, &truncated, &err) == 0)
		for (size_t i = 0; i < json_array_size(events); i++)
			(void)json_string_value(json_object_get(json_array_get(events, i), "event"));
	json_decref(events);
	return 0;
}
