/*
 * err.c - kb_err: the caller-owned record of why a call failed.
 * Owns formatting of error records; it never prints anything itself.
 */
#include "kb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void fill(kb_err *err, int code, kb_domain domain, const char *fmt, va_list ap)
{
	err->domain = domain;
	err->code = code;
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

int kb_err_set(kb_err *err, int rc, kb_domain domain, int code, const char *fmt, ...)
{
	if (!err)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	fill(err, code, domain, fmt, ap);
	va_end(ap);
	err->where[0] = '\0';
	return rc;
}

int kb_err_set_at(kb_err *err, const char *file, int line, int rc, kb_domain domain,
		  int code, const char *fmt, ...)
{
	if (!err)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	fill(err, code, domain, fmt, ap);
	va_end(ap);
	snprintf(err->where, sizeof err->where, "%s:%d", kb_basename(file), line);
	return rc;
}

int kb_err_errno(kb_err *err, const char *what, const char *path)
{
	int e = errno;
	int rc = (e == ENOENT) ? KB_ENOTFOUND : KB_EIO;
	return kb_err_set(err, rc, KB_DOM_OS, e, "%s %s: %s", what, path ? path : "",
			  strerror(e));
}

void kb_err_clear(kb_err *err)
{
	if (err)
		memset(err, 0, sizeof *err);
}

const char *kb_domain_name(kb_domain domain)
{
	static const char *names[] = {"", "os", "cuda", "nvrtc", "nvjitlink", "cupti",
				      "git", "http", "dsl", "spec", "json", "tree-sitter",
				      "python"};
	if ((unsigned)domain < KB_ARRAY_LEN(names))
		return names[domain];
	return "?";
}

const char *kb_rc_name(int rc)
{
	switch (rc) {
	case KB_OK: return "OK";
	case KB_ERROR: return "ERROR";
	case KB_ENOTFOUND: return "ENOTFOUND";
	case KB_ENODEV: return "ENODEV";
	case KB_EPERM: return "EPERM";
	case KB_EINVAL: return "EINVAL";
	case KB_ESPEC: return "ESPEC";
	case KB_ECOMPILE: return "ECOMPILE";
	case KB_EIO: return "EIO";
	case KB_ETIMEOUT: return "ETIMEOUT";
	case KB_EUNSUP: return "EUNSUP";
	case KB_ENOMEM: return "ENOMEM";
	}
	return "E?";
}
