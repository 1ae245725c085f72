/*
 * npy.c - input files for `in x : f32[M, N] = file(path)`: NumPy .npy files
 * and raw little-endian binaries.  Owns the .npy header parser and the
 * checks of a file against the tensor the spec describes; it never converts
 * between dtypes (a mismatch is an error that says what to change).
 *
 * .npy (format versions 1.0, 2.0, 3.0): the magic "\x93NUMPY", two version
 * bytes, a little-endian header length (2 bytes in 1.0, 4 after), then a
 * Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }
 * and the data.  Accepted: little-endian ('<', '|', or '=' on this
 * little-endian host) f8 f4 f2 i8 i4 i2 i1 u1, C order.  NumPy has no bf16,
 * so a bf16 tensor takes any 2-byte raw descr (<u2, <i2, V2, ml_dtypes'
 * bfloat16 name) as bf16 bit patterns.  The data must be exactly n * size
 * bytes: trailing bytes are an error, as is a short file.
 *
 * Other extensions are raw binary: exactly n * size bytes, little-endian.
 * Every message starts with the path as given ("x.npy: ...").
 */
#include "tensor.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#define NPY_MAX_HEADER (1 << 20)

typedef struct {
	char descr[32];
	bool fortran;
	int rank;
	int64_t dims[KB_MAX_RANK];
	unsigned seen;     /* bit 0 descr, 1 fortran_order, 2 shape */
} npy_header;

/* ===== the header dict ===== */

static const char *skip_ws(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

/* Reads a quoted Python string into out; returns the end or NULL. */
static const char *parse_str(const char *p, char *out, size_t n)
{
	char q = *p;
	if (q != '\'' && q != '"')
		return NULL;
	const char *end = strchr(p + 1, q);
	if (!end || (size_t)(end - p - 1) >= n)
		return NULL;
	memcpy(out, p + 1, (size_t)(end - p - 1));
	out[end - p - 1] = 0;
	return end + 1;
}

/* Reads a shape tuple "(4, 6)", "(5,)" or "()"; returns the end or NULL. */
static const char *parse_shape(const char *p, npy_header *h, const char **why)
{
	if (*p != '(')
		return NULL;
	p = skip_ws(p + 1);
	h->rank = 0;
	while (*p != ')') {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p || errno || v < 0)
			return NULL;
		if (h->rank == KB_MAX_RANK) {
			*why = "more than 8 dimensions";
			return NULL;
		}
		h->dims[h->rank++] = v;
		p = skip_ws(end);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != ')')
			return NULL;
	}
	return p + 1;
}

/* Reads the value of one key; returns the end or NULL. */
static const char *parse_value(const char *key, const char *p, npy_header *h,
			       const char **why)
{
	if (!strcmp(key, "descr")) {
		if (*p == '[') {
			*why = "structured dtypes are not supported";
			return NULL;
		}
		h->seen |= 1;
		return parse_str(p, h->descr, sizeof(h->descr));
	}
	if (!strcmp(key, "fortran_order")) {
		h->seen |= 2;
		h->fortran = !strncmp(p, "True", 4);
		if (h->fortran || !strncmp(p, "False", 5))
			return p + (h->fortran ? 4 : 5);
		return NULL;
	}
	if (!strcmp(key, "shape")) {
		h->seen |= 4;
		return parse_shape(p, h, why);
	}
	*why = "unknown key in the header dict";
	return NULL;
}

/* Parses the header dict; returns 0, or -1 with *why set. */
static int parse_dict(const char *p, npy_header *h, const char **why)
{
	*why = "malformed header dict";
	p = skip_ws(p);
	if (*p++ != '{')
		return -1;
	for (;;) {
		char key[32];
		p = skip_ws(p);
		if (*p == '}')
			break;
		if (!(p = parse_str(p, key, sizeof(key))))
			return -1;
		p = skip_ws(p);
		if (*p++ != ':')
			return -1;
		if (!(p = parse_value(key, skip_ws(p), h, why)))
			return -1;
		p = skip_ws(p);
		if (*p == ',')
			p++;
		else if (*p != '}')
			return -1;
	}
	if (h->seen != 7) {
		*why = "the header lacks 'descr', 'fortran_order' or 'shape'";
		return -1;
	}
	return 0;
}

/* ===== dtypes and messages ===== */

/* The dtype a descr names for tensor dtype want; returns 0, 1 (big-endian)
 * or -1 (not a dtype this tensor accepts). */
static int descr_dtype(const char *descr, kb_dtype want, kb_dtype *out)
{
	static const struct { const char *code; kb_dtype t; } codes[] = {
		{"f8", KB_DT_F64}, {"f4", KB_DT_F32}, {"f2", KB_DT_F16}, {"i8", KB_DT_I64},
		{"i4", KB_DT_I32}, {"i2", KB_DT_I16}, {"i1", KB_DT_I8}, {"u1", KB_DT_U8},
		{"b1", KB_DT_U8},
	};
	const char *code = descr;
	if (*code == '<' || *code == '|' || *code == '=' || *code == '>')
		code++;
	if (want == KB_DT_BF16 && (!strcmp(code, "u2") || !strcmp(code, "i2") ||
				   !strcmp(code, "V2") || !strcmp(code, "bfloat16"))) {
		*out = KB_DT_BF16;
		return descr[0] == '>' ? 1 : 0;
	}
	for (size_t i = 0; i < KB_ARRAY_LEN(codes); i++) {
		if (!strcmp(code, codes[i].code)) {
			*out = codes[i].t;
			return descr[0] == '>' && kb_dtype_size(*out) > 1 ? 1 : 0;
		}
	}
	return -1;
}

/* "f32[4, 6]" */
static void spec_shape(const kb_tensor *t, kb_buf *b)
{
	kb_buf_catf(b, "%s[", kb_dtype_name(t->dtype));
	for (int d = 0; d < t->rank; d++)
		kb_buf_catf(b, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
	kb_buf_cat(b, "]");
}

/* "(4, 6)", "(5,)", "()" as Python prints a tuple. */
static void py_shape(const npy_header *h, kb_buf *b)
{
	kb_buf_cat(b, "(");
	for (int d = 0; d < h->rank; d++)
		kb_buf_catf(b, "%s%lld", d ? ", " : "", (long long)h->dims[d]);
	kb_buf_cat(b, h->rank == 1 ? ",)" : ")");
}

/* Fails with "PATH: what ... but the spec says f32[4, 6]". */
static int mismatch(kb_err *err, const char *path, const kb_tensor *t, const char *what)
{
	kb_buf b = KB_BUF_INIT;
	spec_shape(t, &b);
	int rc = kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "%s: %s but the spec says %s", path,
			    what, b.s);
	kb_buf_free(&b);
	return rc;
}

/* Checks the header against t; returns 0 or KB_EINVAL. */
static int check_header(const char *path, const npy_header *h, const kb_tensor *t, kb_err *err)
{
	kb_dtype dt;
	int r = descr_dtype(h->descr, t->dtype, &dt);
	if (r == 1)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "%s: big-endian data ('%s'); "
				  "save it little-endian (a.astype('<%s'))", path, h->descr,
				  h->descr + 1);
	if (h->fortran)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "%s: fortran_order is True; save "
				  "a C-order array (np.ascontiguousarray(a))", path);
	if (r < 0 || dt != t->dtype) {
		char what[96];
		snprintf(what, sizeof(what), "dtype '%s' (%s)", h->descr,
			 r < 0 ? "not supported" : kb_dtype_name(dt));
		return mismatch(err, path, t, what);
	}
	bool same = h->rank == t->rank;
	for (int d = 0; same && d < h->rank; d++)
		same = h->dims[d] == t->dims[d];
	if (same)
		return 0;
	kb_buf b = KB_BUF_INIT;
	kb_buf_cat(&b, "shape ");
	py_shape(h, &b);
	int rc = mismatch(err, path, t, b.s);
	kb_buf_free(&b);
	return rc;
}

/* ===== reading ===== */

/* Reads the .npy preamble and header; leaves f at the data. */
static int read_header(FILE *f, const char *path, npy_header *h, kb_err *err)
{
	unsigned char pre[12];
	const char *why = NULL;
	char *text = NULL;
	int rc = KB_EINVAL;
	if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6)) {
		kb_err_set(err, rc, KB_DOM_NONE, 0, "%s: not a .npy file (no \\x93NUMPY magic)", path);
		goto out;
	}
	int major = pre[6], minor = pre[7], lenbytes = major == 1 ? 2 : 4;
	if (major < 1 || major > 3 || minor != 0) {
		kb_err_set(err, rc, KB_DOM_NONE, 0, "%s: unsupported .npy format version %d.%d "
			   "(known: 1.0, 2.0, 3.0)", path, major, minor);
		goto out;
	}
	if (fread(pre + 8, 1, (size_t)lenbytes, f) != (size_t)lenbytes) {
		kb_err_set(err, rc, KB_DOM_NONE, 0, "%s: truncated .npy header", path);
		goto out;
	}
	uint32_t len = pre[8] | (uint32_t)pre[9] << 8;
	if (lenbytes == 4)
		len |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
	if (len > NPY_MAX_HEADER) {
		kb_err_set(err, rc, KB_DOM_NONE, 0, "%s: .npy header of %u bytes is too long",
			   path, len);
		goto out;
	}
	text = kb_xmalloc((size_t)len + 1);
	if (fread(text, 1, len, f) != len) {
		kb_err_set(err, rc, KB_DOM_NONE, 0, "%s: truncated .npy header", path);
		goto out;
	}
	text[len] = 0;
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		text[--len] = 0;
	if (parse_dict(text, h, &why)) {
		kb_err_set(err, rc, KB_DOM_NONE, 0, "%s: bad .npy header: %s: %s", path, why, text);
		goto out;
	}
	rc = 0;
out:
	free(text);
	return rc;
}

/* Reads exactly the tensor's bytes from f's position to its end. */
static int read_data(FILE *f, const char *path, kb_tensor *t, kb_err *err)
{
	off_t here = ftello(f);
	if (here < 0 || fseeko(f, 0, SEEK_END) || ftello(f) < 0)
		return kb_err_errno(err, "cannot seek in", path);
	long long have = (long long)(ftello(f) - here);
	long long need = (long long)t->n * kb_dtype_size(t->dtype);
	if (have != need) {
		kb_buf b = KB_BUF_INIT;
		spec_shape(t, &b);
		int rc = kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "%s: %lld bytes of data but "
				    "the spec says %s (%lld bytes)", path, have, b.s, need);
		kb_buf_free(&b);
		return rc;
	}
	if (!t->data)
		t->data = kb_xcalloc(need > 0 ? (size_t)need : 1, 1);
	if (fseeko(f, here, SEEK_SET) || fread(t->data, 1, (size_t)need, f) != (size_t)need)
		return kb_err_errno(err, "cannot read", path);
	return 0;
}

/* Loads a .npy or raw file into t (dtype and shape set by the spec).
 * Returns 0, KB_EINVAL (format, dtype or shape mismatch), KB_ENOTFOUND or
 * KB_EIO, with err naming the file. */
int kb_profile_load_file(const char *path, kb_tensor *t, kb_err *err)
{
	int rc;
	FILE *f = fopen(path, "rb");
	if (!f)
		return kb_err_errno(err, "cannot open", path);
	if (!strcasecmp(kb_extension(path), "npy")) {
		npy_header h;
		memset(&h, 0, sizeof(h));
		if ((rc = read_header(f, path, &h, err)) || (rc = check_header(path, &h, t, err)))
			goto out;
	}
	rc = read_data(f, path, t, err);
out:
	fclose(f);
	return rc;
}
