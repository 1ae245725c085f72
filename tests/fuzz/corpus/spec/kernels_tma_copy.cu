// tma_copy.cu - a 2-D copy through the Tensor Memory Accelerator: one
// `//! tensormap` of x, one cp.async.bulk.tensor per block into shared
// memory (completion on an mbarrier), then plain stores with bounds checks.
// M and N are swept over sizes that are not multiples of the box, so the
// tensormap's zero fill of the edge tiles is exercised; the rotated buffer
// sets of the timer each get their own encoding.
//! kernel    tma_copy
//! arg       M = 300
//! arg       N = 200
//! in        x : bf16[M, N] = randn(seed=3)
//! out       y : bf16[M, N]
//! tensormap tx : x box=(BOX, BOX)
//! launch    grid=(cdiv(N, BOX), cdiv(M, BOX)) block=(128)
//! ref       copy(x) -> y
//! tol       rtol=0 atol=0
//! sweep     N = 200, 4096
//! tune      BOX = 64, 32
#include <cuda.h>
#include <cuda_bf16.h>

#ifndef BOX
#define BOX 64
#endif

extern "C" __global__ void __launch_bounds__(128)
tma_copy(const __grid_constant__ CUtensorMap tx, __nv_bfloat16 *y, int M, int N)
{
	__shared__ alignas(128) __nv_bfloat16 tile[BOX * BOX];
	__shared__ alignas(8) unsigned long long bar;
	unsigned bar_a = (unsigned)__cvta_generic_to_shared(&bar);
	unsigned tile_a = (unsigned)__cvta_generic_to_shared(tile);
	int col0 = blockIdx.x * BOX, row0 = blockIdx.y * BOX;
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_a));
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
			     ::"r"(bar_a), "r"(BOX * BOX * 2) : "memory");
		asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
			     " [%0], [%1, {%2, %3}], [%4];"
			     ::"r"(tile_a), "l"(&tx), "r"(col0), "r"(row0), "r"(bar_a) : "memory");
	}
	asm volatile("{\n\t.reg .pred done;\n"
		     "WAIT_%=:\n\t"
		     "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t"
		     "@!done bra WAIT_%=;\n}" ::"r"(bar_a) : "memory");
	for (int i = threadIdx.x; i < BOX * BOX; i += blockDim.x) {
		int r = row0 + i / BOX, c = col0 + i % BOX;
		if (r < M && c < N)
			y[(size_t)r * N + c] = tile[i];
	}
}
