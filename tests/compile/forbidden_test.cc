// Allow-list checks on resolved header paths, line-marker include chains and dynamic symbols.
#include "compile/forbidden.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

HeaderPolicy policy() {
  return HeaderPolicy{
      "/usr/local/cuda-13.0/include", {"/repo/packs/hopper/include"}, "/build/kernel.cu"};
}

TEST(HeaderAllowList, AllowedHeaders) {
  for (const char* path :
       {"/build/kernel.cu", "/usr/include/stdio.h", "/usr/include/c++/12/vector",
        "/usr/include/x86_64-linux-gnu/bits/types.h",
        "/usr/include/x86_64-linux-gnu/c++/12/bits/c++config.h",
        "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h",
        "/usr/local/cuda-13.0/include/cuda_runtime.h", "/usr/local/cuda-13.0/include/cuda.h",
        "/usr/local/cuda-13.0/include/cuda_bf16.hpp", "/usr/local/cuda-13.0/include/cuda_fp8.h",
        "/usr/local/cuda-13.0/include/crt/host_config.h",
        "/usr/local/cuda-13.0/include/sm_61_intrinsics.hpp",
        "/usr/local/cuda-13.0/include/sm_20_atomic_functions.h",
        "/usr/local/cuda-13.0/include/cooperative_groups/details/sync.h",
        "/usr/local/cuda-13.0/include/cccl/cuda/std/cstdint",
        "/usr/local/cuda-13.0/include/cccl/cuda/__ptx/instructions/cp_async_bulk_tensor.h",
        "/usr/local/cuda-13.0/include/cccl/nv/target", "/repo/packs/hopper/include/wgmma.cuh"})
    EXPECT_EQ(header_denial(path, policy()), std::nullopt) << path;
}

TEST(HeaderAllowList, ForbiddenHeaders) {
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/cublas_v2.h", policy()), "cuBLAS");
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/cublasLt.h", policy()), "cuBLAS");
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/cudnn.h", policy()), "cuDNN");
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/cccl/cub/cub.cuh", policy()), "CUB");
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/cccl/thrust/sort.h", policy()), "Thrust");
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/nvrtc.h", policy()), "NVRTC");
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/nvJitLink.h", policy()), "nvJitLink");
  EXPECT_EQ(header_denial("/usr/local/cuda-13.0/include/cufft.h", policy()), "cuFFT");
  EXPECT_EQ(header_denial("/opt/cutlass/include/cute/tensor.hpp", policy()), "CUTLASS/CuTe");
  // A system copy of a library header is still that library (Debian installs cublas_v2.h here).
  EXPECT_EQ(header_denial("/usr/include/cublas_v2.h", policy()), "cuBLAS");
  // Anything else is outside the allow-list.
  EXPECT_TRUE(
      header_denial("/usr/local/cuda-13.0/include/nvtx3/nvToolsExt.h", policy()).has_value());
  EXPECT_TRUE(header_denial("/usr/include/boost/any.hpp", policy()).has_value());
  EXPECT_TRUE(header_denial("/build/other.h", policy()).has_value());
  EXPECT_TRUE(header_denial("/etc/passwd", policy()).has_value());
}

TEST(LineMarkers, IncludeChainsAcrossPasses) {
  const std::string device =
      "# 0 \"kernel.cu\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n"
      "# 1 \"/usr/include/stdc-predef.h\" 1 3 4\n# 0 \"<command-line>\" 2\n# 1 \"kernel.cu\"\n"
      "# 1 \"wrap.h\" 1\n# 1 \"/usr/local/cuda-13.0/include/cublas_v2.h\" 1 3\n"
      "# 1 \"/usr/local/cuda-13.0/include/cublas_api.h\" 1 3\n# 5 "
      "\"/usr/local/cuda-13.0/include/cublas_v2.h\" 2 3\n"
      "# 2 \"wrap.h\" 2\n# 3 \"kernel.cu\" 2\nint x;\n";
  const std::string host =
      "# 0 \"kernel.cu\"\n# 1 \"/usr/local/cuda-13.0/include/cccl/cub/cub.cuh\" 1 3 4\n";
  const auto files = included_files_from_line_markers({device, host}, "/build");
  ASSERT_EQ(files.size(), 6u);
  EXPECT_EQ(files[0].path, "/build/kernel.cu");
  EXPECT_TRUE(files[0].include_chain.empty());
  EXPECT_EQ(files[3].path, "/usr/local/cuda-13.0/include/cublas_v2.h");
  EXPECT_EQ(files[3].include_chain,
            (std::vector<std::string>{"/build/kernel.cu", "/build/wrap.h"}));

  const auto findings = check_headers(files, policy());
  // wrap.h (not allowed) hides the rest of its chain: only the outermost forbidden header and
  // the cub include of the host pass are reported.
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].item, "/build/wrap.h");
  EXPECT_EQ(findings[0].include_chain, (std::vector<std::string>{"kernel.cu"}));
  EXPECT_EQ(findings[1].rule, "CUB");
  EXPECT_EQ(findings[1].describe(),
            "#include kernel.cu -> /usr/local/cuda-13.0/include/cccl/cub/cub.cuh: CUB");
}

TEST(SymbolAllowList, AllowedSymbols) {
  for (const char* name :
       {"cudaMalloc", "cudaLaunchKernel", "__cudaRegisterFatBinary", "__cudaPushCallConfiguration",
        "cuTensorMapEncodeTiled", "cuLaunchKernelEx", "cudaGetDriverEntryPoint", "memcpy", "printf",
        "__cxa_atexit", "_ITM_registerTMCloneTable", "_Znwm", "_ZdlPvm",
        "_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_"
        "EEDpOT_",
        "__gxx_personality_v0", "sqrtf",
        // std::this_thread::sleep_for / yield inline these
        "nanosleep", "sched_yield", "__libc_single_threaded",
        // glibc >= 2.38 with g++ >= 13 (the H200 machine): std::stoull and friends
        "__isoc23_strtoull", "__isoc23_strtol"})
    EXPECT_EQ(symbol_denial(name), std::nullopt) << name;
}

TEST(SymbolAllowList, ForbiddenSymbols) {
  EXPECT_EQ(symbol_denial("dlopen"), "dynamic loading");
  EXPECT_EQ(symbol_denial("dlsym"), "dynamic loading");
  EXPECT_EQ(symbol_denial("fork"), "process spawning");
  EXPECT_EQ(symbol_denial("execve"), "process spawning");
  EXPECT_EQ(symbol_denial("posix_spawnp"), "process spawning");
  EXPECT_EQ(symbol_denial("system"), "process spawning");
  EXPECT_EQ(symbol_denial("socket"), "network access");
  EXPECT_EQ(symbol_denial("connect"), "network access");
  EXPECT_EQ(symbol_denial("cublasGemmEx"), "cuBLAS");
  EXPECT_EQ(symbol_denial("cublasLtMatmul"), "cuBLAS");
  EXPECT_EQ(symbol_denial("cudnnCreate"), "cuDNN");
  EXPECT_EQ(symbol_denial("nvrtcCompileProgram"), "NVRTC");
  EXPECT_EQ(symbol_denial("nvJitLinkCreate"), "nvJitLink");
  EXPECT_EQ(symbol_denial("cuModuleLoadData"), "runtime module loading");
  EXPECT_EQ(symbol_denial("cuLibraryLoadFromFile"), "runtime module loading");
  EXPECT_EQ(symbol_denial("cudaLibraryLoadData"), "runtime module loading");
  EXPECT_EQ(symbol_denial("cuLinkCreate_v2"), "runtime linking (nvJitLink/cuLink)");
  // A C++-linkage prototype of a cuBLAS function is still cuBLAS.
  EXPECT_EQ(symbol_denial("_Z12cublasGemmExPvi"), "cuBLAS");
  EXPECT_TRUE(symbol_denial("_Z6helperv").has_value());
  EXPECT_TRUE(symbol_denial("deflate").has_value());
  // What the adversarial suite's exploits import (testdata/integrity/exploits).
  EXPECT_TRUE(symbol_denial("nvmlDeviceSetGpuLockedClocks").has_value());
  EXPECT_TRUE(symbol_denial("cuptiActivityDisable").has_value());
  EXPECT_TRUE(symbol_denial("setsockopt").has_value());
}

}  // namespace
}  // namespace ptxb
