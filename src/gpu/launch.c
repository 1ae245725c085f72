/*
 * launch.c - one kernel of a built file bound to device buffers: module
 * load (kept per build key for the runner's lifetime, so a re-run of an
 * unchanged variant loads nothing), buffers per the spec's tensors,
 * parameters bound by name and converted to each parameter's C or PTX
 * type, and the launch itself.
 */
#include "gpu.h"

#include <stdlib.h>
#include <string.h>

/* ---- module cache --------------------------------------------------- */

typedef struct {
	char *key;
	CUmodule mod;
} module_entry;

static module_entry *modules;
static int nmodules, modules_cap;

static int load_module(const kb_build *b, CUmodule *mod, kb_err *err)
{
	for (int i = 0; i < nmodules; i++)
		if (!strcmp(modules[i].key, b->key)) {
			*mod = modules[i].mod;
			return KB_OK;
		}
	int rc = KB_OK;
	if ((rc = KB_CU(err, cuModuleLoadData(mod, b->cubin))) < 0)
		goto out;
	module_entry *e = KB_PUSH(modules, nmodules, modules_cap);
	e->key = kb_xstrdup(b->key);
	e->mod = *mod;
out:
	return rc;
}

/* ---- parameters ------------------------------------------------------- */

typedef enum { P_I32, P_U32, P_I64, P_F32, P_F64, P_UNKNOWN } ptype;

static ptype scalar_type(const kb_param *p)
{
	static const struct { const char *name; ptype t; } map[] = {
		{"int", P_I32}, {"int32_t", P_I32}, {"signed", P_I32}, {"s32", P_I32},
		{"b32", P_U32}, {"unsigned", P_U32}, {"unsigned int", P_U32},
		{"uint32_t", P_U32}, {"u32", P_U32}, {"long", P_I64}, {"long long", P_I64},
		{"int64_t", P_I64}, {"size_t", P_I64}, {"unsigned long", P_I64},
		{"unsigned long long", P_I64}, {"uint64_t", P_I64}, {"s64", P_I64},
		{"u64", P_I64}, {"b64", P_I64}, {"float", P_F32}, {"f32", P_F32},
		{"double", P_F64}, {"f64", P_F64},
	};
	const char *t = p->elem ? p->elem : p->type;
	if (!strncmp(t, "const ", 6))
		t += 6;
	for (size_t i = 0; i < KB_ARRAY_LEN(map); i++)
		if (!strcmp(t, map[i].name))
			return map[i].t;
	return P_UNKNOWN;
}

static const kb_spec_arg *find_arg(const kb_spec *spec, const char *name)
{
	for (int i = 0; i < spec->nargs; i++)
		if (!strcmp(spec->args[i].name, name))
			return &spec->args[i];
	return NULL;
}

static void store_scalar(uint64_t *slot, ptype t, kb_value v)
{
	double f = v.is_float ? v.f : (double)v.i;
	int64_t i = v.is_float ? (int64_t)v.f : v.i;
	switch (t) {
	case P_I32: { int32_t x = (int32_t)i; memcpy(slot, &x, 4); break; }
	case P_U32: { uint32_t x = (uint32_t)i; memcpy(slot, &x, 4); break; }
	case P_F32: { float x = (float)f; memcpy(slot, &x, 4); break; }
	case P_F64: memcpy(slot, &f, 8); break;
	default: memcpy(slot, &i, 8); break;
	}
}

static int bind_params(const kb_spec *spec, const kb_kernel *k, kb_profile__buf *bufs,
		       int nbufs, kb_profile__bound *bd, kb_err *err)
{
	bd->nparams = k->nparams;
	bd->params = kb_xcalloc((size_t)k->nparams + 1, sizeof(void *));
	bd->scalars = kb_xcalloc((size_t)k->nparams + 1, sizeof(uint64_t));
	for (int p = 0; p < k->nparams; p++) {
		const kb_param *pm = &k->params[p];
		int found = -1;
		for (int t = 0; pm->is_pointer && t < nbufs; t++)
			if (!strcmp(bufs[t].spec->name, pm->name))
				found = t;
		if (found >= 0) {
			bd->params[p] = &bufs[found].dev;
			continue;
		}
		if (kb_profile__is_tmap_param(spec, pm))
			continue; /* kb_profile__tmaps_bind, once the buffers exist */
		const kb_spec_arg *a = find_arg(spec, pm->name);
		ptype t = scalar_type(pm);
		if (!a || pm->is_pointer || t == P_UNKNOWN)
			return kb_err_set(err, KB_EINVAL, KB_DOM_SPEC, 0,
					  "parameter '%s' (%s) of %s is not bound to a spec line of its type",
					  pm->name, pm->type ? pm->type : "?", k->name);
		store_scalar(&bd->scalars[p], t, a->value);
		bd->params[p] = &bd->scalars[p];
	}
	return KB_OK;
}

/* ---- buffers ------------------------------------------------------------ */

/* The tensor's dims from its spec expressions. */
static int tensor_dims(const kb_source *src, const kb_spec *spec, const kb_spec_tensor *t,
		       int64_t dims[KB_MAX_RANK], kb_err *err)
{
	for (int r = 0; r < t->rank; r++) {
		kb_value v;
		kb_diags d = {0};
		int erc = kb_compile_spec_eval(spec, t->dims[r], &v, src, &d);
		kb_diags_free(&d);
		if (erc < 0 || v.is_float || v.i < 0)
			return kb_err_set(err, KB_EINVAL, KB_DOM_SPEC, 0,
					  "dimension %d of %s is not a non-negative integer", r, t->name);
		dims[r] = v.i;
	}
	return KB_OK;
}

void kb_profile_host_warm(const kb_source *src, const kb_spec *spec)
{
	kb_tensor *host = kb_xcalloc((size_t)spec->ntensors + 1, sizeof *host);
	int n = 0;
	kb_err ignored;
	for (int i = 0; i < spec->ntensors; i++) {
		const kb_spec_tensor *t = &spec->tensors[i];
		int64_t dims[KB_MAX_RANK];
		if (tensor_dims(src, spec, t, dims, &ignored) == KB_OK)
			kb_tensor_init(&host[n++], t->name, t->dtype, t->rank, dims);
	}
	while (n > 0) /* the allocator keeps the last ones freed: the first tensors */
		kb_tensor_free(&host[--n]);
	free(host);
}

static int alloc_buffers(const kb_source *src, const kb_spec *spec, kb_profile__bound *bd,
			 kb_err *err)
{
	int rc = KB_OK;
	bd->nbufs = spec->ntensors;
	bd->bufs = kb_xcalloc((size_t)spec->ntensors + 1, sizeof *bd->bufs);
	for (int i = 0; i < spec->ntensors; i++) {
		const kb_spec_tensor *t = &spec->tensors[i];
		int64_t dims[KB_MAX_RANK];
		if ((rc = tensor_dims(src, spec, t, dims, err)) < 0)
			return rc;
		kb_profile__buf *b = &bd->bufs[i];
		b->spec = t;
		kb_tensor_init(&b->host, t->name, t->dtype, t->rank, dims);
		b->bytes = (size_t)b->host.n * (size_t)kb_dtype_size(t->dtype);
		if ((rc = KB_CU(err, cuMemAlloc(&b->dev, b->bytes ? b->bytes : 1))) < 0)
			goto out;
	}
out:
	return rc;
}

static const char *symbol_of(const kb_build *b, const kb_kernel *k)
{
	for (int i = 0; i < b->nkernels; i++)
		if (!strcmp(b->kernels[i].name, k->name))
			return b->kernels[i].lowered;
	return NULL;
}

static int resolve_function(kb_device *d, const kb_kernel *k, const kb_build *b,
			    kb_profile__bound *bd, kb_err *err)
{
	int rc = load_module(b, &bd->mod, err);
	if (rc < 0)
		return rc;
	bd->name = k->name;
	bd->symbol = symbol_of(b, k);
	if (!bd->symbol)
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
				  "kernel %s has no symbol in the build (an uninstantiated template? "
				  "name it with `//! kernel %s<...>`)", k->name, k->name);
	if ((rc = KB_CU(err, cuModuleGetFunction(&bd->fn, bd->mod, bd->symbol))) < 0)
		return rc;
	return kb_profile__fn_attrs(bd->fn, &bd->dims, err);
}

int kb_profile__cluster_blocks(CUfunction fn)
{
	int cw = 0, ch = 0, cd = 0;
	if (kb_cu.cuFuncGetAttribute(&cw, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fn) != 0 ||
	    kb_cu.cuFuncGetAttribute(&ch, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, fn) != 0 ||
	    kb_cu.cuFuncGetAttribute(&cd, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, fn) != 0)
		return 1;
	int n = (cw ? cw : 1) * (ch ? ch : 1) * (cd ? cd : 1);
	return n > 0 ? n : 1;
}

int kb_profile__fn_attrs(CUfunction fn, const kb_launch_dims *dims, kb_err *err)
{
	/* A cluster of more than 8 blocks (__cluster_dims__(16, 1, 1)) runs only
	 * once the kernel allows a non-portable cluster size (Hopper: up to 16). */
	int rc = KB_OK;
	if (kb_profile__cluster_blocks(fn) > 8 &&
	    (rc = KB_CU(err, cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))) < 0)
		return rc;
	if (dims->smem > 48 * 1024)
		rc = KB_CU(err, cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
						   (int)dims->smem));
	return rc;
}

int kb_profile__bind(kb_device *d, const kb_source *src, const kb_spec *spec,
		     const kb_kernel *k, const kb_build *b, kb_profile__bound *bd, kb_err *err)
{
	memset(bd, 0, sizeof *bd);
	kb_diags diags = {0};
	int rc = kb_compile_spec_launch_dims(spec, src, &bd->dims, &diags);
	if (rc < 0) {
		kb_buf msg = KB_BUF_INIT;
		kb_diag_render(&diags, &msg, false);
		rc = kb_err_set(err, KB_ESPEC, KB_DOM_SPEC, 0, "bad launch line:\n%s",
				msg.s ? msg.s : "");
		kb_buf_free(&msg);
		kb_diags_free(&diags);
		return rc;
	}
	double t = kb_now_ms();
	if ((rc = resolve_function(d, k, b, bd, err)) < 0)
		return rc;
	kb_log("bind: module %.1f ms", kb_now_ms() - t);
	t = kb_now_ms();
	if ((rc = alloc_buffers(src, spec, bd, err)) < 0 ||
	    (rc = bind_params(spec, k, bd->bufs, bd->nbufs, bd, err)) < 0 ||
	    (rc = kb_profile__tmaps_bind(src, spec, k, bd, err)) < 0)
		return rc;
	kb_log("bind: buffers %.1f ms", kb_now_ms() - t);
	return KB_OK;
}

int kb_profile__bind_other(kb_device *d, const kb_spec *spec, const kb_kernel *k,
			   const kb_build *b, kb_profile__buf *bufs, int nbufs,
			   const kb_launch_dims *dims, kb_profile__bound *bd, kb_err *err)
{
	memset(bd, 0, sizeof *bd);
	bd->dims = *dims;
	bd->bufs = bufs; /* borrowed: unbind with free_bufs = false */
	bd->nbufs = nbufs;
	int rc = resolve_function(d, k, b, bd, err);
	if (rc < 0 || (rc = bind_params(spec, k, bufs, nbufs, bd, err)) < 0)
		return rc;
	return kb_profile__tmaps_bind(NULL, spec, k, bd, err);
}

void kb_profile__unbind(kb_profile__bound *bd, bool free_bufs)
{
	for (int i = 0; free_bufs && i < bd->nbufs; i++) {
		if (bd->bufs[i].dev)
			kb_cu.cuMemFree(bd->bufs[i].dev);
		kb_tensor_free(&bd->bufs[i].host);
	}
	if (free_bufs)
		free(bd->bufs);
	free(bd->params);
	free(bd->scalars);
	free(bd->tmaps);
	free(bd->tmap_store);
	memset(bd, 0, sizeof *bd);
}

int kb_profile__launch(kb_device *d, const kb_profile__bound *bd, kb_err *err)
{
	int rc = KB_OK;
	const kb_launch_dims *g = &bd->dims;
	if ((rc = KB_CU(err, cuLaunchKernel(bd->fn, (unsigned)g->grid[0], (unsigned)g->grid[1],
				            (unsigned)g->grid[2], (unsigned)g->block[0],
				            (unsigned)g->block[1], (unsigned)g->block[2],
				            (unsigned)g->smem, d->stream, bd->params, NULL))) < 0)
		goto out;
out:
	return rc;
}

int kb_profile__sync(kb_device *d, kb_err *err)
{
	int rc = KB_OK;
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
out:
	return rc;
}
