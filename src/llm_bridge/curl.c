/*
 * curl.c - libcurl through dlopen (deps.md): the bridge is optional, and
 * the CUDA base images of GPU machines often lack libcurl, so kbench must
 * start, compile and run kernels without it; only a request to an HTTP
 * model needs it, and says so plainly when it is missing.
 */
#include "llm_bridge_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static kb_llm__curl lib;
static int loaded; /* 0 not tried, 1 ok, -1 failed */
static char why[512];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Resolves every symbol; false (why filled) when one is missing. */
static bool resolve(void *h)
{
	struct { void **slot; const char *name; } syms[] = {
		{(void **)&lib.global_init, "curl_global_init"},
		{(void **)&lib.easy_init, "curl_easy_init"},
		{(void **)&lib.easy_setopt, "curl_easy_setopt"},
		{(void **)&lib.easy_perform, "curl_easy_perform"},
		{(void **)&lib.easy_getinfo, "curl_easy_getinfo"},
		{(void **)&lib.easy_cleanup, "curl_easy_cleanup"},
		{(void **)&lib.easy_strerror, "curl_easy_strerror"},
		{(void **)&lib.slist_append, "curl_slist_append"},
		{(void **)&lib.slist_free_all, "curl_slist_free_all"},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(syms); i++)
		if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
			snprintf(why, sizeof why, "libcurl lacks %s", syms[i].name);
			return false;
		}
	return true;
}

static void load(void)
{
	static const char *const names[] = {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"};
	void *h = NULL;
	for (size_t i = 0; !h && i < KB_ARRAY_LEN(names); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, sizeof why, "libcurl is needed for an HTTP model and cannot be "
			 "loaded (%s): install libcurl4 or use --llm-cmd", dlerror());
		loaded = -1;
		return;
	}
	loaded = resolve(h) && lib.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 1 : -1;
}

int kb_llm__curl_load(const kb_llm__curl **out, kb_err *err)
{
	pthread_mutex_lock(&lock);
	if (!loaded)
		load();
	pthread_mutex_unlock(&lock);
	if (loaded < 0)
		return kb_err_set(err, KB_EUNSUP, KB_DOM_HTTP, 0, "%s", why[0] ? why : "libcurl failed");
	*out = &lib;
	return 0;
}
