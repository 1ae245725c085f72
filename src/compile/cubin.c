/*
 * cubin.c - kernel resources read straight from a cubin (an NVIDIA ELF64
 * file, e_machine 190), for when no compiler log is at hand.
 *
 * Owns kb_compile_cubin_resources and kb_compile_cubin_arch.  It does not
 * disassemble (sass.c) or compute occupancy (occupancy.c).  What it reads
 * (gpu-apis.md §7.2, checked against cuobjdump -res-usage):
 *   - kernels: .symtab FUNC symbols with STO_CUDA_ENTRY (st_other 0x10);
 *   - .nv.info: EIATTR_REGCOUNT 0x2f, FRAME_SIZE 0x11, MIN_STACK_SIZE 0x12,
 *     MAX_STACK_SIZE 0x23, each an SVAL of (u32 symbol index, u32 value);
 *   - .nv.info.<kernel>: MAX_THREADS 0x05 (3 x u32), NUM_BARRIERS 0x4c (BVAL),
 *     CBANK_PARAM_SIZE 0x19 (HVAL, noted but not kept);
 *   - .nv.shared.<kernel> size: static smem, which on sm_90 and later (sm_90,
 *     sm_100, sm_103, sm_120 with CUDA 13.0; never sm_75..sm_89) includes the
 *     1 KiB reservation; it is subtracted so smem_static means what ptxas says.
 *     The signal is the symbol .nv.reservedSmem.offset0, present exactly in
 *     those cubins (nvJitLink's sm_100 output has the symbol but no
 *     .nv.shared.reserved.0 section), with e_flags' SM >= 90 as a fallback;
 *   - .nv.constant0.<kernel> size: cmem0 (cuobjdump's CONSTANT[0]);
 *   - e_flags: the SM number, bits 8-15 for ELF ABI version 8 (CUDA 12.8+ /
 *     13), bits 0-7 for ABI version 7 (LLVM getNVPTXCPUName does the same).
 * Spills are not in the ELF: spill_stores/loads are -1.
 * Invariant: every offset and size read from the file is checked against the
 * buffer before use; a truncated or garbage file gives KB_EINVAL (the section
 * headers, every section's bytes, the program headers and every segment's
 * bytes must lie in the buffer).
 */
#include "compile.h"

#include <stdlib.h>
#include <string.h>

#define EM_CUDA 190
#define SHT_SYMTAB 2
#define SHT_NOBITS 8
#define STT_FUNC 2
#define STO_CUDA_ENTRY 0x10

#define EIFMT_NVAL 1
#define EIFMT_BVAL 2
#define EIFMT_HVAL 3
#define EIFMT_SVAL 4

#define EIATTR_MAX_THREADS 0x05
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_MIN_STACK_SIZE 0x12
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_MAX_STACK_SIZE 0x23
#define EIATTR_REGCOUNT 0x2f
#define EIATTR_NUM_BARRIERS 0x4c

typedef struct {
	const uint8_t *p;
	size_t size;
	uint64_t shoff;
	unsigned shnum, shstrndx;
	uint32_t flags;
	int abi;
} elf;

typedef struct {
	uint32_t name, type;
	uint64_t off, size;
	uint32_t link;
} shdr;

typedef struct {
	const uint8_t *p; /* symbol entries, 24 bytes each */
	size_t n;
	const char *str;
	size_t nstr;
} symtab;

/* ===== Bounded reads ===== */

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static bool in_bounds(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

/* A NUL-terminated string at off within [str, str+n), or NULL. */
static const char *str_at(const char *str, size_t n, uint64_t off)
{
	if (off >= n || !memchr(str + off, '\0', n - off))
		return NULL;
	return str + off;
}

/* ===== ELF structure ===== */

static int elf_header(const void *data, size_t size, elf *e)
{
	const uint8_t *p = data;
	if (!p || size < 64 || memcmp(p, "\177ELF", 4) || p[4] != 2 || p[5] != 1 ||
	    rd16(p + 18) != EM_CUDA)
		return KB_EINVAL;
	e->p = p;
	e->size = size;
	e->abi = p[8];
	e->flags = rd32(p + 48);
	e->shoff = rd64(p + 40);
	e->shnum = rd16(p + 60);
	e->shstrndx = rd16(p + 62);
	return 0;
}

/* The program headers and their segments must lie in the file: they come
 * last in a cubin, so this is what notices a file cut short after the
 * section headers. */
static int check_segments(const elf *e)
{
	uint64_t phoff = rd64(e->p + 32);
	unsigned phnum = rd16(e->p + 56);
	if (phnum == 0)
		return 0;
	if (rd16(e->p + 54) != 56 || !in_bounds(phoff, (uint64_t)phnum * 56, e->size))
		return KB_EINVAL;
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = e->p + phoff + (uint64_t)i * 56;
		if (!in_bounds(rd64(ph + 8), rd64(ph + 32), e->size))
			return KB_EINVAL;
	}
	return 0;
}

static int elf_open(const void *data, size_t size, elf *e)
{
	if (elf_header(data, size, e))
		return KB_EINVAL;
	if (rd16(e->p + 58) != 64 || e->shnum == 0 || e->shstrndx >= e->shnum ||
	    !in_bounds(e->shoff, (uint64_t)e->shnum * 64, size))
		return KB_EINVAL;
	return check_segments(e);
}

/* Section i's header; its contents are checked to lie in the file unless NOBITS. */
static int section(const elf *e, unsigned i, shdr *s)
{
	if (i >= e->shnum)
		return KB_EINVAL;
	const uint8_t *h = e->p + e->shoff + (uint64_t)i * 64;
	s->name = rd32(h);
	s->type = rd32(h + 4);
	s->off = rd64(h + 24);
	s->size = rd64(h + 32);
	s->link = rd32(h + 40);
	if (s->type != SHT_NOBITS && !in_bounds(s->off, s->size, e->size))
		return KB_EINVAL;
	return 0;
}

static const char *section_name(const elf *e, const shdr *s)
{
	shdr strs;
	if (section(e, e->shstrndx, &strs) || strs.type == SHT_NOBITS)
		return NULL;
	return str_at((const char *)e->p + strs.off, strs.size, s->name);
}

/* Finds the section named prefix+name; 1 and fills s, 0 if absent, or KB_EINVAL. */
static int find_section(const elf *e, const char *prefix, const char *name, shdr *s)
{
	size_t lp = strlen(prefix);
	for (unsigned i = 0; i < e->shnum; i++) {
		if (section(e, i, s))
			return KB_EINVAL;
		const char *n = section_name(e, s);
		if (!n)
			return KB_EINVAL;
		if (!strncmp(n, prefix, lp) && !strcmp(n + lp, name))
			return 1;
	}
	return 0;
}

static int load_symtab(const elf *e, symtab *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < e->shnum; i++) {
		shdr s, str;
		if (section(e, i, &s))
			return KB_EINVAL;
		if (s.type != SHT_SYMTAB)
			continue;
		if (section(e, s.link, &str) || str.type == SHT_NOBITS || s.size % 24)
			return KB_EINVAL;
		t->p = e->p + s.off;
		t->n = s.size / 24;
		t->str = (const char *)e->p + str.off;
		t->nstr = str.size;
		return 0;
	}
	return 0; /* no symbols: no kernels */
}

static const char *sym_name(const symtab *t, size_t i)
{
	return i < t->n ? str_at(t->str, t->nstr, rd32(t->p + i * 24)) : NULL;
}

static bool sym_is_kernel(const symtab *t, size_t i)
{
	const uint8_t *s = t->p + i * 24;
	return (s[4] & 0xf) == STT_FUNC && (s[5] & STO_CUDA_ENTRY);
}

/* ===== .nv.info attributes ===== */

typedef struct {
	int fmt, id;
	const uint8_t *val; /* BVAL/HVAL: the 2 value bytes; SVAL: the payload */
	uint32_t len;       /* payload bytes (SVAL) */
} attr;

/* Walks an attribute list, calling fn for each. Returns 0 or KB_EINVAL. */
static int each_attr(const uint8_t *p, uint64_t n,
		     void (*fn)(const attr *, void *), void *ctx)
{
	uint64_t o = 0;
	while (o < n) {
		if (n - o < 4)
			return KB_EINVAL;
		attr a = {p[o], p[o + 1], p + o + 2, 0};
		if (a.fmt == EIFMT_SVAL) {
			a.len = rd16(p + o + 2);
			a.val = p + o + 4;
			if (a.len > n - o - 4)
				return KB_EINVAL;
			o += 4 + (uint64_t)a.len;
		} else if (a.fmt >= EIFMT_NVAL && a.fmt <= EIFMT_HVAL) {
			o += 4;
		} else {
			return KB_EINVAL;
		}
		fn(&a, ctx);
	}
	return 0;
}

typedef struct {
	kb_resources *v;
	const size_t *syms; /* symbol index of each kernel */
	int n;
} kernels;

/* Global .nv.info: per-function (symbol, value) pairs. */
static void on_global_attr(const attr *a, void *ctx)
{
	kernels *k = ctx;
	if (a->fmt != EIFMT_SVAL || a->len < 8)
		return;
	uint32_t sym = rd32(a->val), v = rd32(a->val + 4);
	int val = v > (1u << 30) ? 1 << 30 : (int)v;
	for (int i = 0; i < k->n; i++) {
		if (k->syms[i] != sym)
			continue;
		if (a->id == EIATTR_REGCOUNT)
			k->v[i].regs = val;
		else if (a->id == EIATTR_FRAME_SIZE)
			k->v[i].local_bytes = val;
		/* MIN/MAX_STACK_SIZE: the stack incl. callees, not kept */
	}
}

/* .nv.info.<kernel>: attributes of that kernel. */
static void on_kernel_attr(const attr *a, void *ctx)
{
	kb_resources *r = ctx;
	if (a->id == EIATTR_NUM_BARRIERS && a->fmt == EIFMT_BVAL) {
		r->barriers = a->val[0];
	} else if (a->id == EIATTR_MAX_THREADS && a->fmt == EIFMT_SVAL && a->len >= 12) {
		uint64_t t = (uint64_t)rd32(a->val) * rd32(a->val + 4) * rd32(a->val + 8);
		if (t > 0 && t <= 1u << 20)
			r->max_threads = (int)t;
	}
}

/* ===== Per kernel ===== */

static bool has_reserved_smem(const elf *e, const symtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *n = sym_name(t, i);
		if (n && !strcmp(n, ".nv.reservedSmem.offset0"))
			return true;
	}
	return kb_compile_cubin_arch(e->p, e->size) >= 90;
}

static int kernel_sections(const elf *e, kb_resources *r, bool reserved)
{
	shdr s;
	int f = find_section(e, ".nv.info.", r->kernel, &s);
	if (f < 0 || (f && s.type == SHT_NOBITS))
		return KB_EINVAL;
	if (f && each_attr(e->p + s.off, s.size, on_kernel_attr, r))
		return KB_EINVAL;
	f = find_section(e, ".nv.shared.", r->kernel, &s);
	if (f < 0 || s.size > (1u << 30))
		return KB_EINVAL;
	if (f)
		r->smem_static = (int)s.size - (reserved && s.size >= 1024 ? 1024 : 0);
	f = find_section(e, ".nv.constant0.", r->kernel, &s);
	if (f < 0 || s.size > (1u << 30))
		return KB_EINVAL;
	if (f)
		r->cmem0 = (int)s.size;
	return 0;
}

/* Collects the entry symbols into k (names copied). */
static void collect_kernels(const symtab *t, kernels *k, size_t **syms)
{
	int cap = 0, cap_syms = 0;
	for (size_t i = 0; i < t->n; i++) {
		const char *n = sym_name(t, i);
		if (!n || !*n || !sym_is_kernel(t, i))
			continue;
		kb_xgrow((void **)syms, &cap_syms, k->n + 1, sizeof(**syms));
		(*syms)[k->n] = i;
		kb_resources *r = KB_PUSH(k->v, k->n, cap);
		memset(r, 0, sizeof(*r));
		r->kernel = kb_xstrdup(n);
		r->spill_stores = r->spill_loads = -1;
		r->max_threads = 1024;
		r->cmem0 = -1;
	}
	k->syms = *syms;
}

/* One entry per entry function; the count, or KB_EINVAL with err filled. */
int kb_compile_cubin_resources(const void *cubin, size_t size, kb_resources **out,
			       kb_err *err)
{
	elf e;
	symtab t;
	kernels k = {0};
	size_t *syms = NULL;
	shdr info;
	int rc = KB_EINVAL;
	if (out)
		*out = NULL;
	if (!out || elf_open(cubin, size, &e) || load_symtab(&e, &t))
		goto out;
	collect_kernels(&t, &k, &syms);
	int f = find_section(&e, ".nv.info", "", &info);
	if (f < 0 || (f && (info.type == SHT_NOBITS ||
			    each_attr(e.p + info.off, info.size, on_global_attr, &k))))
		goto out;
	bool reserved = has_reserved_smem(&e, &t);
	for (int i = 0; i < k.n; i++)
		if (kernel_sections(&e, &k.v[i], reserved))
			goto out;
	rc = k.n;
	*out = k.n ? k.v : NULL;
	if (!k.n)
		free(k.v);
	k.v = NULL;
out:
	if (rc < 0) {
		kb_compile_resources_free(k.v, k.n);
		KB_ERR(err, rc, KB_DOM_NONE, 0, "not a valid cubin (%zu bytes)", size);
	}
	free(syms);
	return rc;
}

/* The SM number from e_flags (ABI 7: bits 0-7, ABI 8: bits 8-15), or KB_EINVAL. */
int kb_compile_cubin_arch(const void *cubin, size_t size)
{
	elf e;
	if (elf_header(cubin, size, &e))
		return KB_EINVAL;
	int sm = e.abi == 7 ? (int)(e.flags & 0xff) : (int)((e.flags >> 8) & 0xff);
	return sm > 0 ? sm : KB_EINVAL;
}
