// PTXBench knowledge pack, Hopper (sm_90a; H100, H200): every wrapper header.
// Build with: nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -I<pack>/include
#pragma once

#include "ptxb/hopper/common.cuh"
#include "ptxb/hopper/ldst.cuh"
#include "ptxb/hopper/math.cuh"
#include "ptxb/hopper/mbarrier.cuh"
#include "ptxb/hopper/sync.cuh"
#include "ptxb/hopper/tma.cuh"
#include "ptxb/hopper/wgmma.cuh"
