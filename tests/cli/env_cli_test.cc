// End-to-end: `ptxbench env` as a user runs it.
#include <gtest/gtest.h>

#include "core/json_io.h"
#include "core/process.h"

namespace ptxb {
namespace {

ProcessResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), PTXB_CLI_PATH);
  SystemProcessRunner runner;
  ProcessSpec spec{args};
  spec.timeout = std::chrono::seconds(60);
  auto result = runner.run(spec);
  EXPECT_TRUE(result.ok());
  return result.ok() ? result.value() : ProcessResult{};
}

TEST(EnvCli, JsonNamesEveryToolLibraryAndTheGpuState) {
  ProcessResult result = run_cli({"env", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  auto parsed = parse_json(result.stdout_text, "env --json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Json& env = parsed.value();
  for (const char* tool : {"nvcc", "ptxas", "cuobjdump", "nvdisasm", "ncu", "compute-sanitizer"}) {
    ASSERT_TRUE(env["tools"].contains(tool)) << tool;
    EXPECT_TRUE(env["tools"][tool]["found"].is_boolean());
  }
  EXPECT_TRUE(env["libraries"].contains("cublasLt"));
  EXPECT_TRUE(env["libraries"].contains("cudnn"));
  EXPECT_TRUE(env["gpu"]["gpus"].is_array());
  EXPECT_TRUE(env["missing"].is_array());
  // Where the data and the helpers were found: the build tree's (core/install_layout.h).
  EXPECT_TRUE(env["install"]["data"].contains("path")) << env["install"].dump();
  EXPECT_TRUE(env["install"]["helpers"].contains("path")) << env["install"].dump();
  // Without a GPU the probe must say so instead of failing.
  if (env["gpu"]["gpus"].empty()) {
    bool says_no_gpu = false;
    for (const auto& line : env["missing"])
      says_no_gpu |= line.get<std::string>().rfind("no GPU", 0) == 0;
    EXPECT_TRUE(says_no_gpu);
  }
}

TEST(EnvCli, HumanOutputListsSections) {
  ProcessResult result = run_cli({"env"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_NE(result.stdout_text.find("tools:"), std::string::npos);
  EXPECT_NE(result.stdout_text.find("libraries:"), std::string::npos);
  EXPECT_NE(result.stdout_text.find("gpus:"), std::string::npos);
}

TEST(Cli, UnknownSubcommandIsAUsageError) {
  ProcessResult result = run_cli({"frobnicate"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_FALSE(result.stderr_text.empty());
}

TEST(Cli, HelpListsSubcommands) {
  ProcessResult result = run_cli({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.stdout_text.find("env"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
