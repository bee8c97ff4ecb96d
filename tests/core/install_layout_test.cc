// Run-time lookup of the data folder, the helpers and the CUDA root (src/core/install_layout.h).
// The relocated, installed copy is tested end to end by tests/install/relocate_test.sh.
#include "core/install_layout.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "core/fs.h"

namespace ptxb {
namespace {

// Sets or unsets an environment variable for one scope, restoring it after.
class ScopedLayoutEnv {
 public:
  ScopedLayoutEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedLayoutEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(InstallLayout, DeveloperBuildFindsTheSourceTree) {
  ScopedLayoutEnv data("PTXBENCH_DATA_DIR", nullptr);
  auto found = find_data_dir();
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->path, canonical_path(PTXB_SOURCE_DIR));
  EXPECT_EQ(found->how, "source tree (developer build)");
  EXPECT_EQ(data_subdir("packs").value(), found->path + "/packs");
}

TEST(InstallLayout, DataDirVariableWinsAndIsTheOnlyPlaceWhenSet) {
  ScopedLayoutEnv data("PTXBENCH_DATA_DIR", PTXB_SOURCE_DIR);
  auto found = find_data_dir();
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->how, "PTXBENCH_DATA_DIR");

  ScopedLayoutEnv wrong("PTXBENCH_DATA_DIR", "/nonexistent/ptxbench-data");
  auto missing = find_data_dir();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("PTXBENCH_DATA_DIR=/nonexistent/ptxbench-data"),
            std::string::npos)
      << missing.error().message;
  EXPECT_NE(missing.error().message.find("tasks/tasks.json"), std::string::npos);
}

TEST(InstallLayout, HelpersNextToTheTestBinaryInABuildTree) {
  ScopedLayoutEnv libexec("PTXBENCH_LIBEXEC_DIR", nullptr);
  auto found = find_helpers_dir();
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->path, canonical_path(executable_dir()));
  EXPECT_TRUE(path_exists(found->path + "/ptxbench-sandbox"));

  ScopedLayoutEnv wrong("PTXBENCH_LIBEXEC_DIR", "/nonexistent/libexec");
  auto missing = find_helpers_dir();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("PTXBENCH_LIBEXEC_DIR=/nonexistent/libexec"),
            std::string::npos);
}

TEST(InstallLayout, CudaRootFollowsCudaHomeThenTheConfiguredDefault) {
  ScopedLayoutEnv home("CUDA_HOME", nullptr);
  ScopedLayoutEnv path("CUDA_PATH", nullptr);
  EXPECT_EQ(cuda_root(), PTXB_CUDA_ROOT);
  ScopedLayoutEnv other("CUDA_HOME", "/opt/cuda-other");
  EXPECT_EQ(cuda_root(), "/opt/cuda-other");
  const Json layout = install_layout_to_json();
  EXPECT_EQ(layout["cuda_root"]["path"], "/opt/cuda-other");
  EXPECT_EQ(layout["cuda_root"]["how"], "$CUDA_HOME");
  EXPECT_TRUE(layout["data"].contains("path"));
}

TEST(InstallLayout, BundledToolDirsIncludeTheDevelopersPyPiWheels) {
  const auto dirs = bundled_tool_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.back(), std::string(PTXB_PYDEPS_DIR) + "/nvidia/cu13/bin");
}

}  // namespace
}  // namespace ptxb
