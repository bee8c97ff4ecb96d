// PTXBench knowledge pack, Blackwell (sm_100a; B200): every wrapper header.
// The architecture-neutral async wrappers (TMA, mbarrier, clusters, setmaxnreg, ldmatrix,
// math) are shared with the Hopper pack and valid on sm_100a; wgmma is NOT (Hopper only).
// Build with: nvcc -std=c++17 -gencode arch=compute_100a,code=sm_100a \
//               -I<packs>/hopper/include -I<packs>/blackwell/include
#pragma once

#include "ptxb/hopper/common.cuh"
#include "ptxb/hopper/ldst.cuh"
#include "ptxb/hopper/math.cuh"
#include "ptxb/hopper/mbarrier.cuh"
#include "ptxb/hopper/sync.cuh"
#include "ptxb/hopper/tma.cuh"
#include "ptxb/blackwell/tcgen05.cuh"
#include "ptxb/blackwell/tma_2sm.cuh"
