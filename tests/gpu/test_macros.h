// Assertions on ptxb::Result / ptxb::Status for the GPU tests: a failed call fails the test with
// the error's own message (file:line, the call, the CUDA/cuDNN string) instead of a bare bool.
#pragma once

#include <gtest/gtest.h>

#include "core/result.h"

#define ASSERT_OK(expr)                                                       \
  do {                                                                        \
    auto&& ptxb_test_status_ = (expr);                                        \
    ASSERT_TRUE(ptxb_test_status_.ok()) << ptxb_test_status_.error().message; \
  } while (0)

// Unwraps a Result in a test, failing the test (and returning) on error.
#define ASSERT_OK_AND_ASSIGN(decl, expr)                      \
  auto PTXB_CONCAT(test_result_, __LINE__) = (expr);          \
  ASSERT_TRUE(PTXB_CONCAT(test_result_, __LINE__).ok())       \
      << PTXB_CONCAT(test_result_, __LINE__).error().message; \
  decl = std::move(PTXB_CONCAT(test_result_, __LINE__)).value()

#include <filesystem>
#include <string>

namespace ptxb::gpu_test {

// A project binary for the GPU tests: the copy next to the running test binary when there is
// one (the H200 runs binaries carried in .devcarry/bin, where build/ does not exist), else the
// build-tree path compiled in.
inline std::string sibling_binary(const std::string& built_path) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto sibling = self.parent_path() / std::filesystem::path(built_path).filename();
    if (std::filesystem::exists(sibling, ec)) return sibling.string();
  }
  return built_path;
}

}  // namespace ptxb::gpu_test
