// ALPHA-HEADER-B
#pragma once
__device__ __forceinline__ int alpha_b() { return 2; }
