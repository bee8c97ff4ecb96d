// Where in the model's kernel.cu a fault points: the faulting line with ±4 lines around it, and
// for an error that surfaces at a synchronization (cudaStreamSynchronize reports the fault of an
// earlier asynchronous launch) the launch that caused it. Used by the debug sections of the
// feedback (sanitizer findings, cuda-gdb frames).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ptxb {

// Lines line-context .. line+context of `source` (1-based, clipped to the file), each as
// "  85 | text", the faulting one marked "> 89 | text". Empty when `line` is not in the file.
std::string source_excerpt(std::string_view source, int line, int context = 4);

// The launch behind an error reported at a synchronization: scanning upward from `from_line`
// (1-based; 0 or past the end: from the last line), the nearest line that launches a kernel
// (`<<<`, cudaLaunchKernel, cudaLaunchKernelEx, cuLaunchKernel, cuLaunchKernelEx), outside
// `//` comments. With `kernel_name` (from a sanitizer or cuda-gdb frame), only a launch that
// names it counts. nullopt when there is none.
std::optional<int> infer_launch_line(std::string_view source, int from_line,
                                     const std::string& kernel_name = "");

}  // namespace ptxb
