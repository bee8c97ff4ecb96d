// Error strings of the cuBLASLt and cuDNN checking macros (references/library_check.h).
#include "references/library_check.h"

#include <fmt/format.h>

namespace ptxb::gpu {

std::string cublas_error_detail(cublasStatus_t status) {
  return fmt::format("{}: {}", cublasLtGetStatusName(status), cublasLtGetStatusString(status));
}

std::string cudnn_error_detail(cudnnStatus_t status) {
  // cuDNN 9 keeps a per-thread message with the reason (e.g. which attribute was rejected);
  // it is more useful than the status name alone.
  char last[1024] = {};
  cudnnGetLastErrorString(last, sizeof(last));
  std::string detail = cudnnGetErrorString(status);
  if (last[0] != '\0') detail += fmt::format(" ({})", last);
  return detail;
}

}  // namespace ptxb::gpu
