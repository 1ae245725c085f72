/*
 * tma_emu.cpp - the emulator's TMA copies and bulk async-groups: what the
 * wgmma lowering with TMA (src/tilegen/lower_wgmma.c) writes inline beside
 * wgmma, interpreted by ptx_emu.cpp and run here; the mbarriers its loads
 * complete on are mbar_emu.cpp's, its named barriers cuda_emu.cpp's.
 * Semantics from NVIDIA's PTX ISA (9.7.9.27 cp.async.bulk.tensor: a box of
 * a tensormap's tensor, zeros past its edges on a load and nothing written
 * past them on a store, the 128-byte swizzle XORing bits 4-6 of the shared
 * address with bits 7-9; 9.7.9.28 cp.async.bulk.commit_group /
 * wait_group.read: a store has read its shared source once its group is
 * waited for), not from kbench.
 *
 * A TMA load lands at issue and completes its bytes on the mbarrier then.
 * A TMA store reads its shared source only when the wait_group.read that
 * retires its group runs (or the thread ends): a buffer written again
 * before that wait is stored as it is then, so a missing wait shows as
 * wrong output.
 *
 * The tensormap is the emulator's own (emu.h, EMU_TMAP_*), filled by
 * tile_emu.c from the spec's `//! tensormap` lines.
 */
#include "cuda_emu_int.h"

namespace emu {

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
	mbar_complete_tx(bar, (long long)R * C * es, file, line);
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
