/*
 * kbench_out.c - what every verb of `kbench` prints and parses alike: a
 * usage error, a Result as JSON, the progress line on a terminal's stderr,
 * an --arg NAME=VALUE.  A leaf of src/cli: the verbs' files call it, it
 * calls none of them.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kb_cli_usage(const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "kbench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	return KB_CLI_EXIT_USAGE;
}

int kb_cli_print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!s)
		return -1;
	puts(s);
	free(s);
	return 0;
}

int kb_cli_parse_arg(json_t *args, const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq || eq == kv)
		return -1;
	char *end;
	char *name = kb_xstrndup(kv, (size_t)(eq - kv));
	long long i = strtoll(eq + 1, &end, 0);
	if (*end == '\0')
		json_object_set_new(args, name, json_integer(i));
	else
		json_object_set_new(args, name, json_real(strtod(eq + 1, NULL)));
	free(name);
	return 0;
}

void kb_cli_show_progress(void *ctx, json_t *p)
{
	if (!isatty(2))
		return;
	char how[64];
	kb_app_progress_text(p, how, sizeof how);
	fprintf(stderr, "\r\033[K%s ...%s", json_string_value(json_object_get(p, "phase")), how);
	fflush(stderr);
}

void kb_cli_clear_progress(void)
{
	if (isatty(2))
		fputs("\r\033[K", stderr);
}
