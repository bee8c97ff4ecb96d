// Error strings for the checking macros of cuda_check.h.
#include "cuda/cuda_check.h"

#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace ptxb::gpu {

const char* source_relative_path(const char* file) {
  // Error messages read better as "src/runner/x.cc:12" than with the build machine's path in
  // front. The root is this file's own __FILE__ less "src/cuda/cuda_check.cc", so no source
  // path is compiled into the binary for it.
  static const std::string_view root = [] {
    constexpr std::string_view self = __FILE__;
    constexpr std::string_view tail = "src/cuda/cuda_check.cc";
    if (self.size() >= tail.size() && self.substr(self.size() - tail.size()) == tail)
      return self.substr(0, self.size() - tail.size());
    return std::string_view();
  }();
  if (!root.empty() && std::strncmp(file, root.data(), root.size()) == 0) return file + root.size();
  return file;
}

Error make_call_error(const char* code, const char* file, int line, const char* call,
                      const std::string& detail) {
  return Error{fmt::format("{}:{}: {}: {}", source_relative_path(file), line, call, detail), code};
}

std::string cuda_error_detail(cudaError_t error) {
  return fmt::format("{}: {}", cudaGetErrorName(error), cudaGetErrorString(error));
}

Error cuda_call_error(cudaError_t error, const char* call, const char* file, int line) {
  return make_call_error("cuda", file, line, call, cuda_error_detail(error));
}

std::string cupti_error_detail(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return fmt::format("CUptiResult {}", static_cast<int>(result));
  }
  return text;
}

Result<void*> driver_entry_point(const char* symbol) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  // The runtime hands out the version of the symbol whose ABI matches CUDA_VERSION, the
  // toolkit these prototypes (cuda.h) come from.
  cudaError_t error =
      cudaGetDriverEntryPointByVersion(symbol, &address, CUDA_VERSION, cudaEnableDefault, &query);
  if (error != cudaSuccess) {
    return make_error("cu", "cudaGetDriverEntryPointByVersion({}): {}", symbol,
                      cuda_error_detail(error));
  }
  if (query != cudaDriverEntryPointSuccess || address == nullptr) {
    return make_error("cu", "driver entry point {} not available (query result {})", symbol,
                      static_cast<int>(query));
  }
  return address;
}

std::string driver_error_detail(CUresult result) {
  using GetErrorText = CUresult(CUresult, const char**);
  std::string number = fmt::format("CUresult {}", static_cast<int>(result));
  auto get_name = driver_function<GetErrorText>("cuGetErrorName");
  auto get_string = driver_function<GetErrorText>("cuGetErrorString");
  if (!get_name.ok() || !get_string.ok()) return number;
  const char* name = nullptr;
  const char* text = nullptr;
  if ((*get_name)(result, &name) != CUDA_SUCCESS || name == nullptr) return number;
  if ((*get_string)(result, &text) != CUDA_SUCCESS || text == nullptr) return name;
  return fmt::format("{}: {}", name, text);
}

}  // namespace ptxb::gpu
