/*
 * tma_emu.cpp - the emulator's mbarriers, TMA copies, bulk async-groups and
 * named barriers: what the wgmma lowering with TMA (src/tile/lower_wgmma.c)
 * writes inline beside wgmma, interpreted by ptx_emu.cpp and run here.
 * Semantics from NVIDIA's PTX ISA (9.7.13.15 mbarrier: a phase completes
 * when its pending arrivals and its transaction count both reach zero,
 * try_wait.parity P waits until the phase of parity P has completed;
 * 9.7.9.27 cp.async.bulk.tensor: a box of a tensormap's tensor, zeros past
 * its edges on a load and nothing written past them on a store, the
 * 128-byte swizzle XORing bits 4-6 of the shared address with bits 7-9;
 * 9.7.9.28 cp.async.bulk.commit_group / wait_group.read: a store has read
 * its shared source once its group is waited for; 9.7.13.1 bar.sync and
 * bar.arrive with a thread count), not from kbench.
 *
 * A TMA load lands at issue and completes its bytes on the mbarrier then.
 * A TMA store reads its shared source only when the wait_group.read that
 * retires its group runs (or the thread ends): a buffer written again
 * before that wait is stored as it is then, so a missing wait shows as
 * wrong output.  A wait (mbarrier or named barrier) yields the fiber until
 * it is satisfied; one that spins too long is a deadlock.  A completed
 * mbarrier phase or named barrier orders shared memory as __syncthreads
 * does (the shadow's epoch moves on).
 *
 * The tensormap is the emulator's own (emu.h, EMU_TMAP_*), filled by
 * tile_emu.c from the spec's `//! tensormap` lines; mbarriers may live in
 * static __shared__ arrays (cvta_shared gives those addresses of their own).
 */
#include "cuda_emu_int.h"

#include <map>

namespace emu {

struct Mbar {
	int expected, pending;
	long long tx;
	unsigned phases; /* completed so far */
};

struct Nbar {
	int arrived;
	unsigned gen;
};

static std::map<uint32_t, Mbar> mbars;
static Nbar nbars[16];

void tma_block_start()
{
	mbars.clear();
	for (Nbar &b : nbars)
		b = Nbar{0, 0};
}

static Mbar &mbar_at(uint32_t a, const char *file, int line)
{
	auto it = mbars.find(a);
	if (it == mbars.end())
		fatal(file, line, "mbarrier at shared 0x%x used before mbarrier.init", a);
	return it->second;
}

static void mbar_check(Mbar &m)
{
	if (m.pending > 0 || m.tx != 0)
		return;
	m.phases++;
	m.pending = m.expected;
	sync_point();
}

void mbar_init(uint32_t a, int count)
{
	mbars[a] = Mbar{count, count, 0, 0};
}

void mbar_arrive(uint32_t a, long long expect_tx, const char *file, int line)
{
	Mbar &m = mbar_at(a, file, line);
	m.tx += expect_tx;
	if (--m.pending < 0)
		fatal(file, line, "mbarrier at shared 0x%x: more arrivals than its count %d", a, m.expected);
	mbar_check(m);
}

void mbar_wait(uint32_t a, unsigned parity, const char *file, int line)
{
	for (long n = 0; (mbar_at(a, file, line).phases & 1) == (parity & 1); n++)
		spin(n, "an mbarrier", file, line);
}

void named_bar(int id, int count, bool wait, const char *file, int line)
{
	if (id < 0 || id > 15 || count <= 0 || count % 32)
		fatal(file, line, "bar %d, %d: not a named barrier", id, count);
	Nbar &b = nbars[id];
	unsigned gen = b.gen;
	if (++b.arrived == count) {
		b.arrived = 0;
		b.gen++;
		sync_point();
		return;
	}
	for (long n = 0; wait && b.gen == gen; n++)
		spin(n, "a named barrier", file, line);
}

/* The box origin (x, y) of map's tensor: element (r, c) of the box at
 * its global address, or NULL past the tensor's edges. */
static unsigned char *tmap_elem(const uint64_t *m, long long x, long long y, int r, int c)
{
	long long gx = x + c, gy = y + r;
	if (gx < 0 || gy < 0 || gx >= (long long)m[EMU_TMAP_DIM0] || gy >= (long long)m[EMU_TMAP_DIM1])
		return nullptr;
	return (unsigned char *)m[EMU_TMAP_BASE] + gy * (long long)m[EMU_TMAP_STRIDE] + gx * (long long)m[EMU_TMAP_ESIZE];
}

/* The shared address of element (r, c) of a box at s: rows of box0
 * elements one after the other, then the swizzle. */
static uint32_t box_shared(const uint64_t *m, uint32_t s, int r, int c)
{
	uint32_t a = s + (uint32_t)((r * m[EMU_TMAP_BOX0] + c) * m[EMU_TMAP_ESIZE]);
	if (m[EMU_TMAP_SWIZZLE] == 128)
		a ^= (a >> 7 & 7) << 4;
	return a;
}

static const uint64_t *tmap(const void *map, const char *file, int line)
{
	const uint64_t *m = (const uint64_t *)map;
	if (!m[EMU_TMAP_BASE])
		fatal(file, line, "a TMA copy through a tensormap of zeros (the kernel must not use it)");
	if (m[EMU_TMAP_SWIZZLE] == 128 && m[EMU_TMAP_BOX0] * m[EMU_TMAP_ESIZE] != 128)
		fatal(file, line, "a 128-byte swizzle over box rows of %llu bytes",
		      (unsigned long long)(m[EMU_TMAP_BOX0] * m[EMU_TMAP_ESIZE]));
	return m;
}

void tma_load(uint32_t dst, const void *map, int x, int y, uint32_t bar, const char *file, int line)
{
	const uint64_t *m = tmap(map, file, line);
	int es = (int)m[EMU_TMAP_ESIZE], R = (int)m[EMU_TMAP_BOX1], C = (int)m[EMU_TMAP_BOX0];
	if (m[EMU_TMAP_SWIZZLE] == 128 && dst % 1024)
		fatal(file, line, "a 128-byte-swizzled TMA box at shared 0x%x, not 1024-byte aligned", dst);
	check_shared("cp.async.bulk.tensor", dst, R * C * es, 128, file, line);
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++) {
			const unsigned char *g = tmap_elem(m, x, y, r, c);
			unsigned char *s = shared_bytes() + box_shared(m, dst, r, c);
			if (g)
				memcpy(s, g, (size_t)es);
			else
				memset(s, 0, (size_t)es);
		}
	Mbar &b = mbar_at(bar, file, line);
	b.tx -= (long long)R * C * es;
	mbar_check(b);
}

void tma_store(const void *map, int x, int y, uint32_t src, const char *file, int line)
{
	const uint64_t *m = tmap(map, file, line);
	check_shared("cp.async.bulk.tensor", src, (int)(m[EMU_TMAP_BOX0] * m[EMU_TMAP_BOX1] * m[EMU_TMAP_ESIZE]),
		     128, file, line);
	Fiber *f = current_fiber();
	f->bulk_open.push_back(Bulk{m, x, y, src});
}

void bulk_commit()
{
	Fiber *f = current_fiber();
	f->bulk.push_back(f->bulk_open);
	f->bulk_open.clear();
}

/* The stores of the thread's oldest groups but n read their shared
 * sources now (and write the tensor). */
void bulk_wait_read(Fiber *f, size_t n)
{
	while (f->bulk.size() > n) {
		for (const Bulk &b : f->bulk.front()) {
			const uint64_t *m = b.map;
			int es = (int)m[EMU_TMAP_ESIZE];
			for (int r = 0; r < (int)m[EMU_TMAP_BOX1]; r++)
				for (int c = 0; c < (int)m[EMU_TMAP_BOX0]; c++) {
					unsigned char *g = tmap_elem(m, b.x, b.y, r, c);
					if (g)
						memcpy(g, shared_bytes() + box_shared(m, b.src, r, c), (size_t)es);
				}
		}
		f->bulk.pop_front();
	}
}

void st_shared32(uint32_t a, uint32_t v, const char *file, int line)
{
	check_shared("st.shared.b32", a, 4, 4, file, line);
	memcpy(shared_bytes() + a, &v, 4);
}

} // namespace emu
