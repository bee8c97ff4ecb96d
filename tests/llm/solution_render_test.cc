// Variants of the solutions folder (llm/solution_render.h): replay.json entries, the rendering
// of one self-contained kernel (defines in front, local headers inlined) and the errors for
// entries and includes that must not load.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/fs.h"
#include "core/json_io.h"
#include "llm/replay_model.h"
#include "llm/solution_render.h"

namespace ptxb {
namespace {

class SolutionRender : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = make_temp_directory("ptxb-render-");
    ASSERT_TRUE(made.ok());
    root_ = made.value();
    dir_ = root_ + "/solutions";
    std::filesystem::create_directories(dir_ + "/task/sub");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void write(const std::string& rel, const std::string& text) {
    ASSERT_TRUE(write_file_atomic(dir_ + "/" + rel, text).ok()) << rel;
  }
  Result<std::string> render(const std::string& entry) {
    auto variant = parse_solution_variant(parse_json(entry, "test").value(), "$.e");
    if (!variant.ok()) return variant.error();
    return render_solution(dir_, variant.value());
  }
  std::string error_of(const std::string& entry) {
    auto rendered = render(entry);
    return rendered.ok() ? "(no error)" : rendered.error().message;
  }

  std::string root_;
  std::string dir_;
};

TEST_F(SolutionRender, PathEntryIsTheFileAsIs) {
  write("task/k.cu", "// headline\n#include \"ptxb/hopper.cuh\"\nint x;");
  auto rendered = render(R"("task/k.cu")");
  ASSERT_TRUE(rendered.ok()) << rendered.error().message;
  // A quoted include naming no file of the folder stays for the compiler's include path.
  EXPECT_EQ(rendered.value(), "// headline\n#include \"ptxb/hopper.cuh\"\nint x;");
}

TEST_F(SolutionRender, DefinesGoInFrontInNameOrder) {
  write("task/k.cu", "#ifndef PTXB_CAUSAL\n#define PTXB_CAUSAL 0\n#endif\n");
  auto rendered =
      render(R"({"source": "task/k.cu", "defines": {"PTXB_HEAD_DIM": "64", "PTXB_CAUSAL": "1",
                 "PTXB_FLAG": ""}})");
  ASSERT_TRUE(rendered.ok()) << rendered.error().message;
  EXPECT_EQ(rendered.value(),
            "#define PTXB_CAUSAL 1\n#define PTXB_FLAG\n#define PTXB_HEAD_DIM 64\n"
            "#ifndef PTXB_CAUSAL\n#define PTXB_CAUSAL 0\n#endif\n");
  auto variant = parse_solution_variant(
      parse_json(R"({"source": "task/k.cu", "defines": {"PTXB_CAUSAL": "1"}})", "t").value(), "$");
  ASSERT_TRUE(variant.ok());
  EXPECT_EQ(variant->describe(), "task/k.cu with PTXB_CAUSAL=1");
}

TEST_F(SolutionRender, LocalIncludesAreInlinedOnceWithoutPragmaOnce) {
  write("task/k.cu",
        "// k\n#include \"common.cuh\"  // shared\nint k;\n  #  include \"common.cuh\"\n"
        "#include \"sub/../sub/deep.cuh\"\n");
  write("task/common.cuh", "#pragma once\n#include \"sub/deep.cuh\"\nint common;");
  write("task/sub/deep.cuh", "#pragma once\nint deep;\n");
  auto rendered = render(R"("task/k.cu")");
  ASSERT_TRUE(rendered.ok()) << rendered.error().message;
  EXPECT_EQ(rendered.value(), "// k\nint deep;\nint common;\nint k;\n");
}

TEST_F(SolutionRender, IncludeErrorsNameTheFileAndLine) {
  write("task/loop.cu", "int a;\n#include \"b.cuh\"\n");
  write("task/b.cuh", "#include \"loop.cu\"\n");
  EXPECT_NE(error_of(R"("task/loop.cu")")
                .find("task/loop.cu:2: task/b.cuh:1: task/loop.cu: "
                      "includes itself"),
            std::string::npos)
      << error_of(R"("task/loop.cu")");
  ASSERT_TRUE(write_file_atomic(root_ + "/outside.cuh", "int secret;\n").ok());
  write("task/escape.cu", "#include \"../../outside.cuh\"\n");
  EXPECT_NE(error_of(R"("task/escape.cu")")
                .find("task/escape.cu:1: #include \"../../outside.cuh\" "
                      "is outside the solutions folder"),
            std::string::npos)
      << error_of(R"("task/escape.cu")");
  EXPECT_NE(error_of(R"("task/missing.cu")").find("missing.cu"), std::string::npos);
}

TEST_F(SolutionRender, BadEntriesNameTheirJsonPath) {
  const std::pair<const char*, const char*> cases[] = {
      {"3", "$.e: expected a path or an object"},
      {R"("../x.cu")", "$.e: \"../x.cu\" is not a relative path inside the folder"},
      {R"("/etc/passwd")", "$.e: \"/etc/passwd\" is not a relative path"},
      {R"("task//k.cu")", "is not a relative path"},
      {R"({"defines": {}})", "$.e.source: missing"},
      {R"({"source": 1})", "$.e.source: expected a path"},
      {R"({"source": "task/k.cu", "define": {}})", "$.e.define: unknown key"},
      {R"({"source": "task/k.cu", "defines": ["A"]})", "$.e.defines: expected an object"},
      {R"({"source": "task/k.cu", "defines": {"A": 1}})", "$.e.defines.A: expected a string"},
      {R"({"source": "task/k.cu", "defines": {"1A": "1"}})", "$.e.defines.1A: not a macro name"},
      {R"j({"source": "task/k.cu", "defines": {"A(x)": "x"}})j", "not a macro name"},
      {R"({"source": "task/k.cu", "defines": {"A": "1\n#include <x>"}})",
       "$.e.defines.A: must be one line"},
  };
  for (const auto& [entry, expected] : cases)
    EXPECT_NE(error_of(entry).find(expected), std::string::npos)
        << entry << " -> " << error_of(entry);
}

TEST_F(SolutionRender, ReplayLoadChecksAndRendersEveryEntry) {
  write("task/k.cu", "// The headline.\n#include \"c.cuh\"\n");
  write("task/c.cuh", "int c;\n");
  write("replay.json", R"({"format": "ptxbench-replay/1", "tasks": {
      "t": ["task/k.cu", {"source": "task/k.cu", "defines": {"PTXB_CAUSAL": "1"}}]}})");
  auto replay = ReplayModel::load(dir_);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_EQ(replay.value()->kernel_source("t", 1).value(), "// The headline.\nint c;\n");
  EXPECT_EQ(replay.value()->kernel_source("t", 2).value(),
            "#define PTXB_CAUSAL 1\n// The headline.\nint c;\n");
  EXPECT_EQ(replay.value()->turn_counts().at("t"), 2u);
  auto second = replay.value()->complete({{"user", "# Task: t"}, {"assistant", "x"}});
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second->content.find("`task/k.cu with PTXB_CAUSAL=1`"), std::string::npos);
  EXPECT_NE(second->content.find("About it: The headline."), std::string::npos);

  write("replay.json", R"({"format": "ptxbench-replay/1", "tasks": {
      "t": ["task/k.cu", {"source": "task/k.cu", "defines": {"PTXB_CAUSAL": 1}}]}})");
  auto bad = ReplayModel::load(dir_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("replay.json: $.tasks.t[1].defines.PTXB_CAUSAL: expected a "
                                     "string"),
            std::string::npos)
      << bad.error().message;
  write("replay.json", R"({"format": "ptxbench-replay/1", "tasks": {"t": ["task/none.cu"]}})");
  bad = ReplayModel::load(dir_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("replay.json: $.tasks.t[0]: "), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace ptxb
