// Reads a checked-in golden file under testdata/compile/golden/.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/fs.h"

namespace ptxb::testing {

inline std::string read_golden(const std::string& name) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/compile/golden/" + name, 16u << 20);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return text.ok() ? *text : std::string();
}

}  // namespace ptxb::testing
