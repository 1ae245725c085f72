/*
 * kbench_target.c - where `kbench`'s verbs run: the --remote / --gpus /
 * --hosts / --launcher flags main takes out of argv, and the runner or the
 * workers they mean.  A leaf of src/cli: kbench.c (main and the verbs that
 * run kernels) and kbench_session.c (replay, remote) both ask it, and it
 * asks neither.  The flags are parsed once, before the verb, and only read
 * after.
 */
#include "cli.h"

/* --remote / --gpus / --hosts / --launcher, taken out of argv by main. */
static kb_app_target target;

int kb_cli_target_parse(int *argc, char **argv, kb_err *err)
{
	return kb_app_target_parse(argc, argv, &target, err);
}

const char *kb_cli_remote_host(void)
{
	return target.remote;
}

kb_runner *kb_cli_runner(bool share)
{
	if (target.remote)
		return kb_app_target_runner(&target, false);
	kb_runner *r = kb_runner_new(NULL);
	if (share)
		kb_runner_share(r);
	return r;
}

kb_pool *kb_cli_pool(void)
{
	return kb_app_target_pool(&target);
}
