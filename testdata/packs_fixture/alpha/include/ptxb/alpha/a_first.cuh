// ALPHA-HEADER-A
#pragma once
__device__ __forceinline__ int alpha_a() { return 1; }
