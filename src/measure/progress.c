/*
 * progress.c - what every step of a run (run.c, check.c) tells: the phase
 * it is in, through the caller's progress callback (a GPU phase names its
 * launch, so the runner's watchdog knows what ran too long; a host phase
 * does not), and a GPU failure, which leaves the run's context unusable
 * when the error is sticky.  Owns nothing; holds no state of its own.
 */
#include "measure.h"

void kb_profile__progress(kb_profile__run *c, const kb_profile__bound *bd, const char *phase)
{
	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, phase, bd->name, bd->dims.grid, bd->dims.block);
}

void kb_profile__host_progress(kb_profile__run *c, const char *phase)
{
	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, phase, NULL, NULL, NULL);
}

int kb_profile__gpu_fail(kb_profile__run *c, int rc, kb_err *err)
{
	if (err && err->domain == KB_DOM_CUDA && kb_profile__cu_sticky(err->code))
		*c->sticky = true;
	return rc;
}
