// The trajectory viewer's data from a run directory written here: two turns with their kernels
// (turnN.cu) and turn files, and the escaping that keeps a kernel's text from ending the page's
// script element.
#include "report/trajectory_viewer.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

class ViewerData : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-viewer");
    ASSERT_TRUE(dir.ok());
    run_ = dir.value();
    const std::string turns = run_ + "/turns/t0";
    ASSERT_TRUE(make_directories(turns).ok());
    std::string records;
    for (int turn = 1; turn <= 2; ++turn) {
      records += fmt::format(
          R"({{"model":"m","arch":"sm_90a","definition":"gemm","workload":"w","variant":"base",)"
          R"("trajectory":"t0","turn":{},"status":"PASSED","speedup":0.{},"speedup_interval":)"
          R"([0.{},0.{}],"target_instructions":"dynamic_present","tokens":{{"prompt":10,)"
          R"("completion":{},"reasoning":0}},"wall_s":{{"model":1.5,"eval":2.0}}}})"
          "\n",
          turn, 5 + turn, 4 + turn, 6 + turn, 100 * turn);
      Json detail{{"started", "2026-12-02T00:00:0" + std::to_string(turn) + "Z"},
                  {"finished", "2026-12-02T00:01:00Z"},
                  {"kernel_file", fmt::format("turn{}.cu", turn)},
                  {"feedback", fmt::format("## Next step\nturn {} feedback", turn)},
                  {"eval",
                   {{"message", "correct"},
                    {"compile", {{"status", "OK"}, {"message", "compiled"}}},
                    {"target_instructions",
                     {{"verdict", "dynamic_present"},
                      {"reason", "GMMA executed"},
                      {"static", {{"GMMA", 4}}},
                      {"dynamic", {{"families", {{"GMMA", {{"inst_executed", 512}}}}}}}}}}}};
      ASSERT_TRUE(
          write_file_atomic(fmt::format("{}/turn{}.json", turns, turn), detail.dump()).ok());
    }
    ASSERT_TRUE(write_file_atomic(run_ + "/turns.jsonl", records).ok());
    ASSERT_TRUE(write_file_atomic(turns + "/turn1.cu", "a\nb\nc\n").ok());
    ASSERT_TRUE(write_file_atomic(turns + "/turn2.cu", "a\nB\nc\n// </script><!--\n").ok());
  }
  void TearDown() override { remove_tree(run_); }
  std::string run_;
};

TEST_F(ViewerData, TurnsCarryRecordDetailsAndTheDiffToThePreviousKernel) {
  auto loaded = load_run_dirs({run_});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  Json data = viewer_data(loaded.value(), nullptr);
  ASSERT_EQ(data["trajectories"].size(), 1u);
  const Json& trajectory = data["trajectories"][0];
  EXPECT_EQ(trajectory["task"], "gemm");
  ASSERT_EQ(trajectory["turns"].size(), 2u);
  const Json& first = trajectory["turns"][0];
  const Json& second = trajectory["turns"][1];
  EXPECT_FALSE(first.contains("diff"));
  EXPECT_EQ(first["source"], "a\nb\nc\n");
  EXPECT_EQ(second["speedup"], 0.7);
  EXPECT_EQ(second["speedup_low"], 0.6);
  EXPECT_EQ(second["speedup_high"], 0.8);
  EXPECT_EQ(second["tokens"]["completion"], 200);
  EXPECT_EQ(second["compile"], "OK: compiled");
  EXPECT_EQ(second["feedback"], "## Next step\nturn 2 feedback");
  EXPECT_EQ(second["families"], Json::parse(R"([{"family":"GMMA","static":4,"executed":512}])"));
  // b → B and one line added: +2 −1, every line within the context of a change.
  EXPECT_EQ(second["diff"]["added"], 2);
  EXPECT_EQ(second["diff"]["removed"], 1);
  EXPECT_EQ(second["diff"]["hunks"],
            Json::parse(R"([["=","a"],["+","B"],["-","b"],["=","c"],["+","// </script><!--"]])"));
}

TEST_F(ViewerData, AKernelCannotEndTheScriptElement) {
  auto loaded = load_run_dirs({run_});
  ASSERT_TRUE(loaded.ok());
  std::string html = render_viewer(viewer_data(loaded.value(), nullptr));
  // The only "</script>" are the two the viewer writes itself; the kernel's is \u003c/script>.
  std::size_t closes = 0;
  for (auto at = html.find("</script>"); at != std::string::npos;
       at = html.find("</script>", at + 1))
    ++closes;
  EXPECT_EQ(closes, 2u);
  EXPECT_NE(html.find("\\u003c/script>\\u003c!--"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
