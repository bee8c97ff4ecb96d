// What cuda-gdb says about a GPU exception, read from its batch output over a CUDA core dump:
//   cuda-gdb -batch -ex "target cudacore CORE.nvcudmp" -ex "info cuda kernels" -ex "bt"
// The format, as NVIDIA's cuda-gdb documentation shows it (CUDA 12–13; no cuda-gdb on the
// development machines, so the goldens must be recorded on the H200):
//   [Current focus set to CUDA kernel 0, grid 53, block (0,0,0), thread (0,0,0), device 0, ...]
//   CUDA Exception: Warp Illegal Address
//   The exception was triggered at PC 0x7f8e4ab7a430 (kernel.cu:89)
//   #0  0x00007f8e4ab7a4b0 in store_tile (...) at kernel.cu:42
//   #1  0x00007f8e4ab7a700 in gemm_kernel<<<(56,64,1),(384,1,1)>>> (A=0x7f..., ...) at kernel.cu:89
// A live session stopped by the exception prints "received signal CUDA_EXCEPTION_14, Warp
// Illegal Address." instead of the "CUDA Exception:" line; both are read. Lines are matched
// where they are, so gdb's other output (banners, "info cuda kernels" tables) does not matter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxb {

struct DebugFrame {
  int level = 0;         // #N
  std::string function;  // "store_tile", "gemm_kernel" (arguments and launch shape removed)
  std::string launch;    // "<<<(56,64,1),(384,1,1)>>>" on the kernel's own frame, else ""
  std::string file;      // "kernel.cu"
  int line = 0;
};

struct CudaGdbReport {
  std::string exception;       // "Warp Illegal Address"
  std::string pc;              // "0x7f8e4ab7a430"
  std::string exception_file;  // the PC's source location, when cuda-gdb printed one
  int exception_line = 0;
  std::string block, thread;  // the focus: "(0,0,0)"
  std::vector<DebugFrame> frames;

  // Feedback text: the exception, where, then each frame in `source_name` with ±4 lines of
  // `source` (analysis/source_context.h); frames elsewhere (the runner, libraries) as one line.
  std::string render(std::string_view source, const std::string& source_name = "kernel.cu") const;
};

// Fails when the output holds neither an exception line nor a frame: a cuda-gdb that could not
// open the core dump must not read as "no fault".
Result<CudaGdbReport> parse_cuda_gdb_output(std::string_view text);

}  // namespace ptxb
