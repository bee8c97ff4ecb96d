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
