// The harness version ("0.1.0+<git describe>"), recorded in every trace and runner hello.
// Defined in a file generated at configure time (build/generated/version.cc), so a new commit
// recompiles one file instead of every file that would otherwise see a changed -D flag.
#pragma once

namespace ptxb {

const char* harness_version();

// Whether libptxbench_reference.so of this build has the FlashInfer kernels (CMake
// -DPTXB_WITH_CUDA=ON -DPTXB_WITH_FLASHINFER=ON): what the CPU side checks `--also-reference
// flashinfer` against before compiling anything (eval/also_reference.h).
bool built_with_flashinfer();

}  // namespace ptxb
