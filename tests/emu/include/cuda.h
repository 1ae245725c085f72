/* cuda.h - the generated CUDA includes it for CUtensorMap (the wgmma
 * lowering's TMA); on the host emulator that is 128 bytes whose first
 * words tile_emu.c fills as emu.h's EMU_TMAP_* say (tma_emu.cpp reads
 * them), all zeros where TMA could not describe the tensor. */
#include "cuda_emu.h"

typedef struct alignas(64) {
	unsigned long long opaque[16];
} CUtensorMap;
