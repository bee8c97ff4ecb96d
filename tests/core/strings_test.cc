#include "core/strings.h"

#include <gtest/gtest.h>

#include <climits>

namespace ptxb {
namespace {

// Tool outputs (ptxas, nvcc diagnostics, cuda-gdb) carry numbers the candidate can inflate
// (`#line 99999999999`): found by the tool_output fuzzer, which made std::stoi throw.
TEST(DigitsSaturating, ParsesAndSaturatesInsteadOfThrowing) {
  EXPECT_EQ(digits_saturating("0", INT_MAX), 0);
  EXPECT_EQ(digits_saturating("168", INT_MAX), 168);
  EXPECT_EQ(digits_saturating("-12", INT_MAX), -12);
  EXPECT_EQ(digits_saturating("2147483647", INT_MAX), INT_MAX);
  EXPECT_EQ(digits_saturating("2147483648", INT_MAX), INT_MAX);
  EXPECT_EQ(digits_saturating("99999999999999999999999999", INT_MAX), INT_MAX);
  EXPECT_EQ(digits_saturating("-99999999999999999999999999", INT_MAX), -INT_MAX);
  EXPECT_EQ(digits_saturating("99999999999999999999999999", LLONG_MAX), LLONG_MAX);
  EXPECT_EQ(digits_saturating("12a", INT_MAX), 0);
  EXPECT_EQ(digits_saturating("", INT_MAX), 0);
}

}  // namespace
}  // namespace ptxb
