/*
 * ptx_emu.cpp - the emulator's interpreter for the PTX the tile compiler
 * writes inline (cp.async, commit/wait_group, ldmatrix, mma.sync m16n8k16,
 * wgmma.mma_async m64nNk16 with A from registers, bar.sync and bar.arrive
 * of named barriers, setmaxnreg as nothing), the mbarriers and bulk copies
 * of the hand-written rings, and the cache-hinted loads hand kernels write
 * (createpolicy, ld.global.v4 with an L1 eviction priority or an L2 cache
 * hint: the emulator has no cache, so a policy is 0 and the load a plain
 * read):
 * each statement's text parsed once, then run on the calling lane's
 * operands; the warp-wide ones through a rendezvous of the warp's lanes.
 * Semantics from NVIDIA's PTX ISA (9.7.9.25 cp.async, 9.7.14.5.8 the
 * m16n8k16 fragments of mma, 9.7.14.5.15 ldmatrix; 9.7.15 wgmma: its
 * register fragments, matrix descriptors and the 128-byte swizzle), not
 * from kbench.
 *
 * wgmma runs at once, warp by warp: a warp's part of an m64nNk16 product
 * (its 16 rows: A's fragment from its registers, B from shared memory for
 * every warp) needs nothing from the other warps of its warpgroup, so its
 * wgmma.fence, commit_group and wait_group, and fence.proxy.async (the
 * emulator has one proxy), have nothing left to do.
 */
#include "cuda_emu_int.h"

#include <ctype.h>
#include <string.h>

#include <string>
#include <vector>

namespace emu {

/* ===== PTX: parsing ===== */

enum { P_CP_ASYNC, P_COMMIT, P_WAIT_GROUP, P_WAIT_ALL, P_LDMATRIX, P_MMA, P_NOP, P_SETP, P_WGMMA, P_MBAR_INIT,
       P_MBAR_ARRIVE, P_MBAR_WAIT, P_RETRY, P_SELP, P_BAR, P_ARRIVE, P_MAXNREG, P_BULK, P_EX2, P_POLICY, P_LDG,
       /* tma_emu.cpp's */
       P_CPA_MBAR, P_TMA_LOAD, P_TMA_STORE, P_BULK_COMMIT, P_BULK_WAIT, P_ST_SHARED };
enum { A_REG, A_IMM, A_VEC, A_ADDR, A_PRED, A_SINK, A_TMAP };

struct Arg {
	int kind;
	int regs[128], nregs; /* A_REG: regs[0]; A_VEC: all; A_ADDR: regs[0] (+ imm);
			       * A_TMAP [map, {x, y}]: map, x, y */
	long long imm;
};

struct Insn {
	int op;
	int num = 1;          /* ldmatrix .x1/.x2/.x4 */
	bool trans = false;
	bool f16 = false;     /* mma .f16 operands (else .bf16) */
	bool cg = false;      /* cp.async .cg */
	bool tx = false;      /* mbarrier.arrive .expect_tx */
	int n = 0;            /* wgmma's N */
	std::vector<Arg> args;
};

struct Parsed {
	std::vector<Insn> insns;
	std::string error;    /* why the text cannot be run */
};

static std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> v;
	size_t i = 0, depth = 0, start = 0;
	for (; i <= s.size(); i++) {
		char c = i < s.size() ? s[i] : sep;
		depth += c == '{' || c == '[';
		depth -= (c == '}' || c == ']') && depth;
		if (c == sep && depth == 0) {
			size_t a = start, b = i;
			while (a < b && isspace((unsigned char)s[a])) a++;
			while (b > a && isspace((unsigned char)s[b - 1])) b--;
			v.push_back(s.substr(a, b - a));
			start = i + 1;
		}
	}
	return v;
}

static bool parse_reg(const std::string &s, int *r)
{
	if (s.size() < 2 || s[0] != '%' || !isdigit((unsigned char)s[1]))
		return false;
	*r = atoi(s.c_str() + 1);
	return true;
}

static bool parse_arg(const std::string &s, Arg *a)
{
	*a = Arg{};
	if (s.empty())
		return false;
	if (s[0] == '{' && s.back() == '}') {
		a->kind = A_VEC;
		for (const std::string &e : split(s.substr(1, s.size() - 2), ','))
			if (a->nregs == 128 || !parse_reg(e, &a->regs[a->nregs++]))
				return false;
		return true;
	}
	if (s == "_") { /* mbarrier.arrive's state, not kept */
		a->kind = A_SINK;
		return true;
	}
	if (s == "p" || s == "done") { /* the block's one predicate (setp, then wgmma's scale-d; try_wait, then
					* selp, or its retry) */
		a->kind = A_PRED;
		return true;
	}
	if (s == "_") { /* the sink an mbarrier arrival's state goes to */
		a->kind = A_IMM;
		return true;
	}
	if (s[0] == '[' && s.back() == ']' && s.find('{') != std::string::npos) {
		std::vector<std::string> v = split(s.substr(1, s.size() - 2), ',');
		if (v.size() != 2 || v[1].size() < 2 || v[1][0] != '{' || v[1].back() != '}')
			return false;
		std::vector<std::string> xy = split(v[1].substr(1, v[1].size() - 2), ',');
		a->kind = A_TMAP;
		a->nregs = 3;
		return xy.size() == 2 && parse_reg(v[0], &a->regs[0]) && parse_reg(xy[0], &a->regs[1]) &&
		       parse_reg(xy[1], &a->regs[2]);
	}
	if (s[0] == '[' && s.back() == ']') {
		a->kind = A_ADDR;
		std::string in = s.substr(1, s.size() - 2);
		size_t plus = in.find('+');
		a->imm = plus == std::string::npos ? 0 : strtoll(in.c_str() + plus + 1, nullptr, 0);
		a->nregs = 1;
		return parse_reg(split(in.substr(0, plus), ' ')[0], &a->regs[0]);
	}
	if (s[0] == '%') {
		a->kind = A_REG;
		a->nregs = 1;
		return parse_reg(s, &a->regs[0]);
	}
	char *end;
	a->kind = A_IMM;
	a->imm = strtoll(s.c_str(), &end, 0);
	return *end == '\0';
}

static bool has(const std::vector<std::string> &q, const char *w)
{
	for (const std::string &s : q)
		if (s == w)
			return true;
	return false;
}

/* The qualifiers of opcode (after its first word) must all be in `known`. */
static bool only(const std::vector<std::string> &q, std::initializer_list<const char *> known)
{
	for (size_t i = 1; i < q.size(); i++) {
		bool ok = false;
		for (const char *k : known)
			ok = ok || q[i] == k;
		if (!ok)
			return false;
	}
	return true;
}

/* Recognises the opcode; returns an error text or "". */
static std::string classify(const std::string &opcode, Insn *in)
{
	std::vector<std::string> q = split(opcode, '.');
	std::string bad = "PTX '" + opcode + "' is not emulated";
	if (opcode == "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") { in->op = P_BULK; return ""; }
	static const struct { const char *op; int p; } tma[] = {
		{"cp.async.mbarrier.arrive.noinc.shared::cta.b64", P_CPA_MBAR},
		{"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", P_TMA_LOAD},
		{"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", P_TMA_STORE},
		{"cp.async.bulk.commit_group", P_BULK_COMMIT}, {"cp.async.bulk.wait_group.read", P_BULK_WAIT},
		{"st.shared.b32", P_ST_SHARED}, {"st.shared.v4.b32", P_ST_SHARED},
	};
	for (const auto &t : tma)
		if (opcode == t.op) {
			in->op = t.p;
			return "";
		}
	if (opcode[0] == '@' || opcode == "bra") /* try_wait's loop: back to the wait while it fails */
		return opcode == "@!done" ? (in->op = P_RETRY, "") : bad;
	if (opcode == "cp.async.commit_group") { in->op = P_COMMIT; return ""; }
	if (opcode == "cp.async.wait_group") { in->op = P_WAIT_GROUP; return ""; }
	if (opcode == "cp.async.wait_all") { in->op = P_WAIT_ALL; return ""; }
	if (q[0] == "cp" && q.size() > 1 && q[1] == "async") {
		in->op = P_CP_ASYNC;
		in->cg = has(q, "cg");
		bool ok = (in->cg || has(q, "ca")) && has(q, "global") &&
			  (has(q, "shared") || has(q, "shared::cta")) &&
			  only(q, {"async", "ca", "cg", "shared", "shared::cta", "global"});
		return ok ? "" : bad;
	}
	if (q[0] == "createpolicy") { /* a policy without an address range: its fraction alone */
		in->op = P_POLICY;
		return q.size() == 4 && q[1] == "fractional" && q[3] == "b64" ? "" : bad;
	}
	if (q[0] == "ld" && has(q, "global") && has(q, "v4")) {
		in->op = P_LDG;
		in->cg = has(q, "L2::cache_hint"); /* a policy operand after the address */
		bool ok = (has(q, "f32") || has(q, "b32") || has(q, "u32")) &&
			  only(q, {"global", "nc", "v4", "f32", "b32", "u32", "L1::evict_last", "L1::evict_first",
				   "L1::evict_normal", "L1::evict_unchanged", "L1::no_allocate", "L2::cache_hint",
				   "L2::evict_last", "L2::evict_first", "L2::evict_normal"});
		return ok ? "" : bad;
	}
	if (q[0] == "ldmatrix") {
		in->op = P_LDMATRIX;
		in->num = has(q, "x4") ? 4 : has(q, "x2") ? 2 : 1;
		in->trans = has(q, "trans");
		bool ok = has(q, "sync") && has(q, "aligned") && has(q, "m8n8") && has(q, "b16") &&
			  only(q, {"sync", "aligned", "m8n8", "x1", "x2", "x4", "trans", "shared",
				   "shared::cta", "b16"});
		return ok ? "" : bad;
	}
	if (opcode == ".reg" || opcode == "wgmma.fence.sync.aligned" || opcode == "wgmma.commit_group.sync.aligned" ||
	    opcode == "wgmma.wait_group.sync.aligned" || opcode == "fence.proxy.async.shared::cta") {
		in->op = P_NOP; /* (wgmma runs at once: see the top) */
		return "";
	}
	if (opcode == "setp.ne.b32") { in->op = P_SETP; return ""; }
	if (opcode == "selp.u32") { in->op = P_SELP; return ""; }
	if (opcode == "ex2.approx.ftz.f32") { in->op = P_EX2; return ""; }
	if (opcode == "fence.mbarrier_init.release.cluster") { in->op = P_NOP; return ""; }
	if (q[0] == "mbarrier" && q.size() > 2 && has(q, "b64") && (has(q, "shared::cta") || has(q, "shared"))) {
		in->op = q[1] == "init" ? P_MBAR_INIT : q[1] == "arrive" ? P_MBAR_ARRIVE : P_MBAR_WAIT;
		in->tx = has(q, "expect_tx");
		bool ok = q[1] == "init" ? only(q, {"init", "shared", "shared::cta", "b64"})
			: q[1] == "arrive" ? only(q, {"arrive", "expect_tx", "release", "cta", "shared", "shared::cta", "b64"})
			: q[1] == "try_wait" && has(q, "parity") &&
			  only(q, {"try_wait", "parity", "acquire", "cta", "cluster", "shared", "shared::cta", "b64"});
		return ok ? "" : bad;
	}
	if (opcode == "bar.sync") { in->op = P_BAR; return ""; }
	if (opcode == "bar.arrive") { in->op = P_ARRIVE; return ""; }
	if (opcode == "setmaxnreg.inc.sync.aligned.u32" || opcode == "setmaxnreg.dec.sync.aligned.u32") {
		in->op = P_MAXNREG; /* (the emulator's threads have what registers they need) */
		return "";
	}
	if (q[0] == "wgmma" && q.size() == 8 && q[1] == "mma_async" && q[2] == "sync" && q[3] == "aligned" &&
	    q[4].compare(0, 4, "m64n") == 0 && q[5] == "f32" && q[6] == q[7] && (q[6] == "bf16" || q[6] == "f16")) {
		in->op = P_WGMMA;
		in->n = atoi(q[4].c_str() + 4);
		in->f16 = q[6] == "f16";
		bool ok = in->n >= 8 && in->n <= 256 && in->n % 8 == 0 && q[4] == "m64n" + std::to_string(in->n) + "k16";
		return ok ? "" : bad;
	}
	if (q[0] == "mma") {
		in->op = P_MMA;
		bool bf = opcode.find(".f32.bf16.bf16.f32") != std::string::npos;
		in->f16 = opcode.find(".f32.f16.f16.f32") != std::string::npos;
		bool ok = (bf || in->f16) && has(q, "sync") && has(q, "aligned") && has(q, "m16n8k16") &&
			  has(q, "row") && has(q, "col") &&
			  only(q, {"sync", "aligned", "m16n8k16", "row", "col", "f32", "bf16", "f16"});
		return ok ? "" : bad;
	}
	return bad;
}

/* The operands each instruction takes, by kind. */
static bool shape_ok(const Insn &in)
{
	const std::vector<Arg> &a = in.args;
	switch (in.op) {
	case P_COMMIT: case P_WAIT_ALL: return a.empty();
	case P_WAIT_GROUP: return a.size() == 1 && (a[0].kind == A_IMM || a[0].kind == A_REG);
	case P_CP_ASYNC:
		return (a.size() == 3 || a.size() == 4) && a[0].kind == A_ADDR && a[1].kind == A_ADDR &&
		       (a[2].kind == A_IMM || a[2].kind == A_REG) &&
		       (a.size() == 3 || a[3].kind == A_IMM || a[3].kind == A_REG);
	case P_LDMATRIX: return a.size() == 2 && a[0].kind == A_VEC && a[0].nregs == in.num &&
				a[1].kind == A_ADDR;
	case P_NOP: return true;
	case P_POLICY: return a.size() == 1 && a[0].kind == A_REG;
	case P_LDG: return a.size() == 2u + in.cg && a[0].kind == A_VEC && a[0].nregs == 4 && a[1].kind == A_ADDR &&
			   (!in.cg || a[2].kind == A_REG);
	case P_MBAR_INIT: return a.size() == 2 && a[0].kind == A_ADDR && (a[1].kind == A_REG || a[1].kind == A_IMM);
	case P_MBAR_ARRIVE:
		return a.size() == (in.tx ? 3u : 2u) && a[0].kind == A_SINK && a[1].kind == A_ADDR &&
		       (!in.tx || a[2].kind == A_REG || a[2].kind == A_IMM);
	case P_MBAR_WAIT: return a.size() == 3 && a[0].kind == A_PRED && a[1].kind == A_ADDR &&
				 (a[2].kind == A_REG || a[2].kind == A_IMM);
	case P_SELP: return a.size() == 4 && a[0].kind == A_REG && a[1].kind == A_IMM && a[2].kind == A_IMM &&
			    a[3].kind == A_PRED;
	case P_EX2: return a.size() == 2 && a[0].kind == A_REG && a[1].kind == A_REG;
	case P_BAR: case P_ARRIVE:
		return a.size() == 2 && (a[0].kind == A_IMM || a[0].kind == A_REG) &&
		       (a[1].kind == A_IMM || a[1].kind == A_REG);
	case P_MAXNREG: return a.size() == 1 && a[0].kind == A_IMM && a[0].imm >= 24 && a[0].imm <= 256 && a[0].imm % 8 == 0;
	case P_BULK: return a.size() == 4 && a[0].kind == A_ADDR && a[1].kind == A_ADDR &&
			    (a[2].kind == A_REG || a[2].kind == A_IMM) && a[3].kind == A_ADDR;
	case P_RETRY: return true;
	case P_CPA_MBAR: return a.size() == 1 && a[0].kind == A_ADDR;
	case P_TMA_LOAD: return a.size() == 3 && a[0].kind == A_ADDR && a[1].kind == A_TMAP && a[2].kind == A_ADDR;
	case P_TMA_STORE: return a.size() == 2 && a[0].kind == A_TMAP && a[1].kind == A_ADDR;
	case P_BULK_COMMIT: return a.empty();
	case P_BULK_WAIT: return a.size() == 1 && (a[0].kind == A_IMM || a[0].kind == A_REG);
	case P_ST_SHARED: /* .b32 or .v4.b32 */
		return a.size() == 2 && a[0].kind == A_ADDR && (a[1].kind == A_REG || (a[1].kind == A_VEC && a[1].nregs == 4));
	case P_SETP: return a.size() == 3 && a[0].kind == A_PRED && a[1].kind == A_REG && a[2].kind == A_IMM;
	case P_WGMMA: /* d, a (registers, or a's descriptor), b's descriptor, scale-d, imm-scale-a,
		       * imm-scale-b[, imm-trans-a (0: a K-major)], imm-trans-b */
		if (a.size() == 8 && (a[1].kind != A_REG || a[6].kind != A_IMM || a[6].imm != 0))
			return false;
		return (a.size() == 7 || a.size() == 8) && a[0].kind == A_VEC && a[0].nregs == in.n / 2 &&
		       (a.size() == 8 || (a[1].kind == A_VEC && a[1].nregs == 4)) && a[2].kind == A_REG &&
		       a[3].kind == A_PRED && a[4].kind == A_IMM && a[4].imm == 1 && a[5].kind == A_IMM &&
		       a[5].imm == 1 && (a.back().kind == A_IMM || a.back().kind == A_REG);
	default:
		return a.size() == 4 && a[0].kind == A_VEC && a[0].nregs == 4 && a[1].kind == A_VEC &&
		       a[1].nregs == 4 && a[2].kind == A_VEC && a[2].nregs == 2 &&
		       a[3].kind == A_VEC && a[3].nregs == 4;
	}
}

static Parsed *parse(const char *text)
{
	Parsed *p = new Parsed;
	std::string t = text; /* a `{ ... }` block: its statements */
	size_t b = t.find_first_not_of(" \t\n"), e = t.find_last_not_of(" \t\n");
	if (b != std::string::npos && t[b] == '{' && t[e] == '}')
		t = t.substr(b + 1, e - b - 1);
	for (std::string st : split(t, ';')) {
		if (st.empty())
			continue;
		st.erase(0, st.find_first_not_of(" \t\n"));
		if (st.empty())
			continue;
		size_t colon = st.find(':'), sp = st.find_first_of(" \t\n");
		if (colon != std::string::npos && colon < sp && st.compare(0, 3, "KB_") == 0) { /* a label */
			st.erase(0, st.find_first_not_of(" \t\n", colon + 1));
			sp = st.find_first_of(" \t\n");
		}
		std::string opcode = st.substr(0, sp);
		Insn in;
		std::string err = classify(opcode, &in);
		if (opcode == ".reg" && st != ".reg .pred p" && st != ".reg .pred done") /* the one register a block declares */
			err = "PTX '" + st + "' is not emulated";
		else if (opcode == ".reg" || opcode[0] == '@')
			;
		else if (err.empty() && sp != std::string::npos)
			for (const std::string &s : split(st.substr(sp), ',')) {
				Arg a;
				if (!parse_arg(s, &a)) {
					err = "cannot read operand '" + s + "' of " + opcode;
					break;
				}
				in.args.push_back(a);
			}
		if (err.empty() && !shape_ok(in))
			err = "unexpected operands for " + opcode;
		if (!err.empty()) {
			p->error = err;
			break;
		}
		p->insns.push_back(in);
	}
	return p;
}

/* ===== PTX: the warp-wide matrix instructions ===== */

/* ldmatrix .m8n8 .b16: lanes 8m..8m+7 give the addresses of matrix m's
 * rows (16 bytes each); lane l receives, for each matrix, row l/4's
 * elements 2(l%4) and 2(l%4)+1 - or with .trans column l/4's elements at
 * rows 2(l%4) and 2(l%4)+1 - low half first. */
struct LdmCtx { const Insn *in; const char *file; int line; };

static void ldmatrix_compute(Warp &w, const void *vctx)
{
	const LdmCtx *c = (const LdmCtx *)vctx;
	int warp = warp_index(w);
	uint16_t m[4][8][8];
	for (int k = 0; k < c->in->num; k++)
		for (int r = 0; r < 8; r++) {
			uint32_t a = w.in[8 * k + r][0];
			check_shared("ldmatrix", a, 16, 16, c->file, c->line);
			shadow_read(warp, a, 16, c->file, c->line);
			memcpy(m[k][r], shared_bytes() + a, 16);
		}
	for (int l = 0; l < 32; l++)
		for (int k = 0; k < c->in->num; k++) {
			int g = l / 4, t = l % 4;
			uint16_t lo = c->in->trans ? m[k][2 * t][g] : m[k][g][2 * t];
			uint16_t hi = c->in->trans ? m[k][2 * t + 1][g] : m[k][g][2 * t + 1];
			w.out[l][k] = (uint32_t)hi << 16 | lo;
		}
}

/* mma.m16n8k16.row.col, f32 += f16/bf16 x f16/bf16 (PTX ISA 9.7.14.5.8),
 * with groupID g = lane / 4 and t = lane % 4:
 *   A (16x16): a0,a1 (g, 2t..2t+1)  a2,a3 (g+8, 2t..)  a4,a5 (g, 2t+8..)  a6,a7 (g+8, 2t+8..)
 *   B (16x8):  b0,b1 (k 2t..2t+1, n g)  b2,b3 (k 2t+8.., n g)
 *   C, D (16x8): c0,c1 (g, 2t..2t+1)  c2,c3 (g+8, 2t..)
 * two elements to a 32-bit register, the lower-numbered in the low half.
 * Products are exact and summed in double, then rounded to float. */
static float half_elem(uint32_t reg, int hi, bool f16)
{
	uint16_t h = (uint16_t)(hi ? reg >> 16 : reg);
	return f16 ? f16_to_f32(h) : bf16_to_f32(h);
}

static void mma_compute(Warp &w, const void *vctx)
{
	bool f16 = ((const Insn *)vctx)->f16;
	float A[16][16], B[16][8], C[16][8];
	for (int l = 0; l < 32; l++) {
		int g = l / 4, t = l % 4;
		const uint32_t *a = w.in[l], *b = w.in[l] + 4, *c = w.in[l] + 6;
		for (int i = 0; i < 8; i++)
			A[g + (i / 2 % 2) * 8][2 * t + i % 2 + (i / 4) * 8] = half_elem(a[i / 2], i % 2, f16);
		for (int i = 0; i < 4; i++)
			B[2 * t + i % 2 + (i / 2) * 8][g] = half_elem(b[i / 2], i % 2, f16);
		for (int i = 0; i < 4; i++)
			C[g + (i / 2) * 8][2 * t + i % 2] = bits_f32(c[i]);
	}
	for (int l = 0; l < 32; l++) {
		int g = l / 4, t = l % 4;
		for (int i = 0; i < 4; i++) {
			int r = g + (i / 2) * 8, n = 2 * t + i % 2;
			double s = 0;
			for (int k = 0; k < 16; k++)
				s += (double)A[r][k] * (double)B[k][n];
			w.out[l][i] = f32_bits((float)(s + (double)C[r][n]));
		}
	}
}

/* wgmma.mma_async m64nNk16, A from registers (PTX ISA 9.7.15.5): warp w %
 * 4 of the warpgroup gives rows 16 (w % 4) .. + 15 of A as an m16n8k16 A
 * fragment and gets those rows of D as m16n8 C fragments, register 4 j + i
 * the C fragment's i of columns 8 j ..; B [16][N] is read from shared
 * memory through its descriptor: start, leading (LBO) and stride (SBO)
 * byte offsets, bits 0-13, 16-29 and 32-45 in 16-byte units, the swizzle in
 * bits 62-63 (1: 128-byte, the only one the tile compiler writes).  With
 * the 128-byte swizzle, B K-major (imm-trans-b 0) holds element (k, n) at
 * start + n / 8 SBO + n % 8 * 128 + 2 k; MN-major (1) at start + n / 64 LBO
 * + k / 8 SBO + k % 8 * 128 + 2 (n % 64); then bits 4-6 of the address are
 * XORed with bits 7-9 (16-byte chunk c of a 128-byte row r at c ^ r % 8).
 * A from shared memory (K-major, imm-trans-a 0): row m of the m64 piece at
 * start + m / 8 SBO + m % 8 128 + 2 k, swizzled so, warp w % 4 taking rows
 * 16 (w % 4) .. + 15. */
struct WgCtx { const Insn *in; const char *file; int line; };

/* The element a 128-byte-swizzle descriptor d names at byte offset off
 * (before the swizzle) from its start. */
static float desc_elem(uint64_t d, uint32_t off, bool f16, int warp, const WgCtx *c)
{
	if (d >> 62 != 1 || (d >> 46 & 0xFFFF))
		fatal(c->file, c->line, "wgmma: descriptor 0x%llx is not a 128-byte swizzle one", (unsigned long long)d);
	uint32_t a = ((uint32_t)(d & 0x3FFF) << 4) + off;
	a ^= (a >> 7 & 7) << 4;
	check_shared("wgmma", a, 2, 2, c->file, c->line);
	shadow_read(warp, a, 2, c->file, c->line);
	uint16_t h;
	memcpy(&h, shared_bytes() + a, 2);
	return f16 ? f16_to_f32(h) : bf16_to_f32(h);
}

static void wgmma_compute(Warp &w, const void *vctx)
{
	const WgCtx *c = (const WgCtx *)vctx;
	const Insn *in = c->in;
	int warp = warp_index(w), N = in->n;
	float A[16][16];
	static float B[16][256];
	bool ss = in->args.size() == 8; /* A from shared memory: words 0, 1 its descriptor */
	for (int l = 0; l < 32; l++) {
		int g = l / 4, t = l % 4;
		for (int i = 0; i < 8 && !ss; i++)
			A[g + (i / 2 % 2) * 8][2 * t + i % 2 + (i / 4) * 8] = half_elem(w.in[l][i / 2], i % 2, in->f16);
		for (int k = ss ? 0 : 4; k < 6; k++)
			if (w.in[l][k] != w.in[0][k])
				fatal(c->file, c->line, "wgmma: the lanes of warp %d disagree on a descriptor", warp);
	}
	uint64_t d = (uint64_t)w.in[0][5] << 32 | w.in[0][4];
	uint32_t lbo = (uint32_t)(d >> 16 & 0x3FFF) << 4, sbo = (uint32_t)(d >> 32 & 0x3FFF) << 4;
	int tb = (int)w.in[0][6 + N / 2];
	if (ss) {
		uint64_t da = (uint64_t)w.in[0][1] << 32 | w.in[0][0];
		uint32_t sa = (uint32_t)(da >> 32 & 0x3FFF) << 4;
		for (int r = 0; r < 16; r++) {
			int m = 16 * (warp % 4) + r;
			for (int k = 0; k < 16; k++)
				A[r][k] = desc_elem(da, m / 8 * sa + m % 8 * 128 + 2 * k, in->f16, warp, c);
		}
	}
	for (int k = 0; k < 16; k++)
		for (int n = 0; n < N; n++)
			B[k][n] = desc_elem(d, tb ? n / 64 * lbo + k / 8 * sbo + k % 8 * 128 + 2 * (n % 64)
						  : n / 8 * sbo + n % 8 * 128 + 2 * k, in->f16, warp, c);
	for (int l = 0; l < 32; l++) {
		int g = l / 4, t = l % 4;
		bool scale = w.in[l][6 + N / 2 + 1] != 0;
		for (int i = 0; i < N / 2; i++) {
			int r = g + (i % 4 / 2) * 8, n = i / 4 * 8 + 2 * t + i % 2;
			double s = 0;
			for (int k = 0; k < 16; k++)
				s += (double)A[r][k] * (double)B[k][n];
			w.out[l][i] = f32_bits((float)(s + (scale ? (double)bits_f32(w.in[l][6 + i]) : 0.0)));
		}
	}
}

/* ===== PTX: running ===== */

/* ex2.approx.ftz.f32 (PTX ISA 9.7.4.9): 2^x, subnormals flushed to 0
 * (its error, 2 ulp on the GPU, is not modelled: exact here) */
static float ex2_ftz(float x)
{
	if (x != 0.0f && fabsf(x) < 1.17549435e-38f)
		x = 0.0f;
	float y = exp2f(x);
	return fabsf(y) < 1.17549435e-38f ? 0.0f : y;
}

static uint64_t value(const Operand *ops, int nops, const Arg &a, const char *file, int line)
{
	if (a.kind == A_IMM)
		return (uint64_t)a.imm;
	if (a.regs[0] >= nops)
		fatal(file, line, "PTX operand %%%d: the statement has %d", a.regs[0], nops);
	const Operand &o = ops[a.regs[0]];
	if (!o.in)
		fatal(file, line, "PTX operand %%%d is an output only", a.regs[0]);
	uint64_t v = o.bits;
	if (o.kind == 'r')
		v &= 0xffffffffu;
	return v + (uint64_t)(a.kind == A_ADDR ? a.imm : 0);
}

static void store(const Operand *ops, int nops, int reg, uint32_t v, const char *file, int line)
{
	if (reg >= nops || !ops[reg].out || (ops[reg].kind != 'r' && ops[reg].kind != 'f'))
		fatal(file, line, "PTX operand %%%d is not a 32-bit output", reg);
	memcpy(ops[reg].ptr, &v, 4);
}

/* createpolicy: the emulator has no cache, so every policy is 0. */
static void run_policy(const Insn &in, const Operand *ops, int nops, const char *file, int line)
{
	int reg = in.args[0].regs[0];
	if (reg >= nops || !ops[reg].out || ops[reg].kind != 'l')
		fatal(file, line, "PTX operand %%%d is not a 64-bit output", reg);
	memset(ops[reg].ptr, 0, 8);
}

/* ld.global.v4 of 32-bit words: a plain read of 16 aligned bytes. */
static void run_ldg(const Insn &in, const Operand *ops, int n, const char *file, int line)
{
	uint64_t src = value(ops, n, in.args[1], file, line);
	if (src % 16)
		fatal(file, line, "ld.global.v4: address 0x%llx is not 16-byte aligned", (unsigned long long)src);
	uint32_t w[4];
	memcpy(w, (const void *)src, sizeof w);
	for (int k = 0; k < 4; k++)
		store(ops, n, in.args[0].regs[k], w[k], file, line);
}

static void run_wgmma(const Insn &in, const Operand *ops, int n, bool pred, const char *file, int line)
{
	int N = in.n;
	uint32_t words[136]; /* A's 4 (or its descriptor), B's descriptor (2), the N / 2 accumulators,
			      * imm-trans-b, scale-d */
	if (in.args.size() == 8) {
		uint64_t da = value(ops, n, in.args[1], file, line);
		words[0] = (uint32_t)da;
		words[1] = (uint32_t)(da >> 32);
		words[2] = words[3] = 0;
	}
	for (int i = 0; i < 4 && in.args.size() == 7; i++)
		words[i] = (uint32_t)value(ops, n, Arg{A_REG, {in.args[1].regs[i]}, 1, 0}, file, line);
	uint64_t desc = value(ops, n, in.args[2], file, line);
	words[4] = (uint32_t)desc;
	words[5] = (uint32_t)(desc >> 32);
	for (int i = 0; i < N / 2; i++)
		words[6 + i] = (uint32_t)value(ops, n, Arg{A_REG, {in.args[0].regs[i]}, 1, 0}, file, line);
	words[6 + N / 2] = (uint32_t)value(ops, n, in.args.back(), file, line);
	words[7 + N / 2] = pred;
	WgCtx ctx = {&in, file, line};
	Warp &w = rendezvous(&in, words, 8 + N / 2, file, line, wgmma_compute, &ctx);
	for (int i = 0; i < N / 2; i++)
		store(ops, n, in.args[0].regs[i], w.out[current_lane()][i], file, line);
}

static void run_matrix(const Insn &in, const Operand *ops, int n, const char *file, int line)
{
	if (in.op == P_LDMATRIX) {
		uint32_t addr = (uint32_t)value(ops, n, in.args[1], file, line);
		LdmCtx ctx = {&in, file, line};
		Warp &w = rendezvous(&in, &addr, 1, file, line, ldmatrix_compute, &ctx);
		for (int k = 0; k < in.num; k++)
			store(ops, n, in.args[0].regs[k], w.out[current_lane()][k], file, line);
		return;
	}
	uint32_t words[10];
	for (int i = 0; i < 4; i++)
		words[i] = (uint32_t)value(ops, n, Arg{A_REG, {in.args[1].regs[i]}, 1, 0}, file, line);
	for (int i = 0; i < 2; i++)
		words[4 + i] = (uint32_t)value(ops, n, Arg{A_REG, {in.args[2].regs[i]}, 1, 0}, file, line);
	for (int i = 0; i < 4; i++)
		words[6 + i] = (uint32_t)value(ops, n, Arg{A_REG, {in.args[3].regs[i]}, 1, 0}, file, line);
	Warp &w = rendezvous(&in, words, 10, file, line, mma_compute, &in);
	for (int i = 0; i < 4; i++)
		store(ops, n, in.args[0].regs[i], w.out[current_lane()][i], file, line);
}

Ptx::Ptx(const char *text) : text_(text), parsed_(parse(text)) {}

void Ptx::run(std::initializer_list<Operand> opl, const char *file, int line) const
{
	const Parsed *p = (const Parsed *)parsed_;
	if (!p->error.empty())
		fatal(file, line, "%s (in \"%s\")", p->error.c_str(), text_);
	const Operand *ops = opl.begin();
	int n = (int)opl.size();
	bool pred = false;
	size_t wait_at = 0; /* the last mbarrier wait: where a failed one's retry goes back to */
	for (size_t k = 0; k < p->insns.size(); k++) {
		const Insn &in = p->insns[k];
		switch (in.op) {
		case P_NOP: case P_MAXNREG: break;
		case P_BAR: case P_ARRIVE:
			named_barrier((long long)value(ops, n, in.args[0], file, line),
				      (long long)value(ops, n, in.args[1], file, line), in.op == P_BAR, file, line);
			break;
		case P_SETP: pred = value(ops, n, in.args[1], file, line) != (uint64_t)in.args[2].imm; break;
		case P_SELP:
			store(ops, n, in.args[0].regs[0], (uint32_t)(pred ? in.args[1].imm : in.args[2].imm), file, line);
			break;
		case P_EX2: /* 2^x, subnormal inputs and results flushed to 0 */
			store(ops, n, in.args[0].regs[0], f32_bits(ex2_ftz(bits_f32((uint32_t)value(ops, n, in.args[1], file,
													   line)))), file, line);
			break;
		case P_MBAR_INIT:
			mbar_init(value(ops, n, in.args[0], file, line), (long long)value(ops, n, in.args[1], file, line), file,
				  line);
			break;
		case P_MBAR_ARRIVE:
			mbar_arrive(value(ops, n, in.args[1], file, line),
				    in.tx ? (long long)(uint32_t)value(ops, n, in.args[2], file, line) : 0, file, line);
			break;
		case P_RETRY: /* @!done bra: the wait again (it yielded to the others when it failed) */
			if (!pred)
				k = wait_at - 1;
			break;
		case P_MBAR_WAIT:
			wait_at = k;
			pred = mbar_try_wait(value(ops, n, in.args[1], file, line),
					     (unsigned)value(ops, n, in.args[2], file, line), file, line);
			break;
		case P_BULK:
			bulk_copy(value(ops, n, in.args[0], file, line), value(ops, n, in.args[1], file, line),
				  (long long)(uint32_t)value(ops, n, in.args[2], file, line),
				  value(ops, n, in.args[3], file, line), file, line);
			break;
		case P_WGMMA: run_wgmma(in, ops, n, pred, file, line); break;
		case P_POLICY: run_policy(in, ops, n, file, line); break;
		case P_LDG: run_ldg(in, ops, n, file, line); break;
		case P_CPA_MBAR: /* when this thread's copies have landed */
			commit_group();
			wait_group(0);
			mbar_arrive((uint32_t)value(ops, n, in.args[0], file, line), 0, file, line);
			break;
		case P_TMA_LOAD: {
			const Arg &m = in.args[1];
			tma_load((uint32_t)value(ops, n, in.args[0], file, line),
				 (const void *)value(ops, n, Arg{A_REG, {m.regs[0]}, 1, 0}, file, line),
				 (int)value(ops, n, Arg{A_REG, {m.regs[1]}, 1, 0}, file, line),
				 (int)value(ops, n, Arg{A_REG, {m.regs[2]}, 1, 0}, file, line),
				 (uint32_t)value(ops, n, in.args[2], file, line), file, line);
			break;
		}
		case P_TMA_STORE: {
			const Arg &m = in.args[0];
			tma_store((const void *)value(ops, n, Arg{A_REG, {m.regs[0]}, 1, 0}, file, line),
				  (int)value(ops, n, Arg{A_REG, {m.regs[1]}, 1, 0}, file, line),
				  (int)value(ops, n, Arg{A_REG, {m.regs[2]}, 1, 0}, file, line),
				  (uint32_t)value(ops, n, in.args[1], file, line), file, line);
			break;
		}
		case P_BULK_COMMIT: bulk_commit(); break;
		case P_BULK_WAIT: bulk_wait_read(current_fiber(), (size_t)value(ops, n, in.args[0], file, line)); break;
		case P_ST_SHARED:
			for (int k = 0; k < in.args[1].nregs; k++)
				st_shared32((uint32_t)value(ops, n, in.args[0], file, line) + 4 * (uint32_t)k,
					    (uint32_t)value(ops, n, Arg{A_REG, {in.args[1].regs[k]}, 1, 0}, file, line),
					    file, line);
			break;
		case P_COMMIT: commit_group(); break;
		case P_WAIT_ALL: commit_group(); wait_group(0); break;
		case P_WAIT_GROUP: wait_group((long long)value(ops, n, in.args[0], file, line)); break;
		case P_CP_ASYNC: {
			int cp = (int)value(ops, n, in.args[2], file, line);
			int src = in.args.size() == 4 ? (int)value(ops, n, in.args[3], file, line) : cp;
			if (in.cg ? cp != 16 : cp != 4 && cp != 8 && cp != 16)
				fatal(file, line, "cp.async%s with cp-size %d", in.cg ? ".cg" : ".ca", cp);
			cp_async(value(ops, n, in.args[0], file, line), value(ops, n, in.args[1], file, line),
				 cp, src, file, line);
			break;
		}
		default: run_matrix(in, ops, n, file, line); break;
		}
	}
}

} // namespace emu
