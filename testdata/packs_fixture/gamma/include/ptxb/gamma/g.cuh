// GAMMA-HEADER
#pragma once
#include "ptxb/alpha/a_first.cuh"
#include "ptxb/gamma/missing.cuh"
#include <cstdint>
