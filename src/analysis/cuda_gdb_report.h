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
// Tolerated as well (none recorded on the H200 yet, so the parser assumes little): frames without
// a source location ("#0 0x... in k<<<...>>> ()", a kernel built without -lineinfo), and the
// instruction at the PC as `x/i $pc` prints it ("=> 0x7f...<_Z1kPf+368>:  STG.E [R2.64], R5 ;").
// A core dump triggered on a hang has no exception: the focus and the frames are the report.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct DebugFrame {
  int level = 0;         // #N
  std::string function;  // "store_tile", "gemm_kernel" (arguments and launch shape removed)
  std::string launch;    // "<<<(56,64,1),(384,1,1)>>>" on the kernel's own frame, else ""
  std::string file;      // "kernel.cu"; "" when cuda-gdb printed no location
  int line = 0;
  // A helper of the same file inlined into the frame's function: the line of the call (0: not
  // inlined, or a library header's helper, whose caller line is `line` itself).
  int inlined_at = 0;

  Json to_json() const;
  static Result<DebugFrame> from_json(const Json& json);
};

struct CudaGdbReport {
  std::string exception;       // "Warp Illegal Address"
  std::string pc;              // "0x7f8e4ab7a430"
  std::string exception_file;  // the PC's source location, when cuda-gdb printed one
  int exception_line = 0;
  std::string block, thread;  // the focus: "(0,0,0)"
  std::string instruction;    // the SASS at the PC ("STG.E [R2.64], R5 ;"), from x/i $pc
  std::vector<DebugFrame> frames;

  // The innermost frame in `source_name` (nullptr when none): where the report points.
  const DebugFrame* innermost_in(const std::string& source_name) const;
  // The kernel's own frame (the one with a launch shape; else the outermost frame).
  const DebugFrame* kernel_frame() const;

  Json to_json() const;
  static Result<CudaGdbReport> from_json(const Json& json);

  // Feedback text: the exception, where, then each frame in `source_name` with ±4 lines of
  // `source` (analysis/source_context.h); frames elsewhere (the runner, libraries) as one line.
  std::string render(std::string_view source, const std::string& source_name = "kernel.cu") const;
};

// Fails when the output holds neither an exception line nor a frame: a cuda-gdb that could not
// open the core dump must not read as "no fault".
Result<CudaGdbReport> parse_cuda_gdb_output(std::string_view text);

// The batch command over a core dump: no init file (a user's ~/.cuda-gdbinit must not change
// the output), no pager or questions, then the dump, the kernels, the stack and the instruction
// at the PC. Each -ex that fails (no focus on a hang dump) only prints an error line.
std::vector<std::string> cuda_gdb_argv(const std::string& cuda_gdb_path,
                                       const std::string& core_dump_path);

}  // namespace ptxb
