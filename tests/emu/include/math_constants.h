/* math_constants.h - the generated CUDA includes it; on the host emulator cuda_emu.h
 * has what it declares. */
#include "cuda_emu.h"
