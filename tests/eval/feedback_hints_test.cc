// The opt-in profiler-hints option of the feedback text (eval/feedback.h FeedbackOptions): off by
// default (the paper protocol's text is unchanged), on only for PASSED evaluations.
#include <gtest/gtest.h>

#include "core/fs.h"
#include "eval/feedback.h"

namespace ptxb {
namespace {

EvalResult passed_with_spills() {
  EvalResult r;
  r.task = "mha_bwd_d128";
  r.arch = "sm_90a";
  r.status = PtxbStatus::kPassed;
  r.target_instructions.verdict = kInstDynamicPresent;
  CompileResult compile;
  PtxasKernelReport kernel;
  kernel.name = "bwd_dq_dk";
  kernel.spill_store_bytes = 96;
  kernel.spill_load_bytes = 96;
  compile.ptxas.kernels.push_back(kernel);
  r.compile = compile;
  return r;
}

std::vector<NcuLaunchMetrics> synthetic_profile() {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/eval/ncu/hints_synthetic.csv", 1 << 20);
  EXPECT_TRUE(text.ok());
  auto launches = parse_ncu_launches_csv(text.value(), "hints_synthetic.csv");
  EXPECT_TRUE(launches.ok());
  return launches.ok() ? hint_metrics_of(*launches) : std::vector<NcuLaunchMetrics>{};
}

TEST(FeedbackProfilerHints, OffByDefaultAndTheTextIsUnchanged) {
  EvalResult r = passed_with_spills();
  FeedbackOptions options;
  options.profile = synthetic_profile();  // present, but the option is off
  EXPECT_FALSE(FeedbackOptions{}.profiler_hints);
  std::string text = render_feedback(r, options);
  EXPECT_EQ(text, render_feedback(r));
  EXPECT_EQ(text.find("## Profiler hints"), std::string::npos);
}

TEST(FeedbackProfilerHints, OnForAPassedKernelBeforeTheNextStep) {
  EvalResult r = passed_with_spills();
  FeedbackOptions options;
  options.profiler_hints = true;
  options.profile = synthetic_profile();
  std::string text = render_feedback(r, options);
  auto hints = text.find("## Profiler hints\n- ptxas spilled registers in bwd_dq_dk: 96 B");
  ASSERT_NE(hints, std::string::npos) << text;
  EXPECT_LT(hints, text.find("## Next step"));
  EXPECT_NE(text.find("\n- 74 % of warp stall cycles are MIO throttle"), std::string::npos);
  std::size_t bullets = 0;
  for (auto at = text.find("\n- ", hints); at != std::string::npos; at = text.find("\n- ", at + 1))
    ++bullets;
  EXPECT_EQ(bullets, 5u);
}

TEST(FeedbackProfilerHints, SaysSoWhenNothingWasMeasuredAndSkipsFailedKernels) {
  EvalResult r = passed_with_spills();
  r.compile->ptxas.kernels.clear();
  FeedbackOptions options;
  options.profiler_hints = true;
  EXPECT_NE(render_feedback(r, options)
                .find("## Profiler hints\nnone: this evaluation recorded no profiler metrics"),
            std::string::npos);
  r.status = PtxbStatus::kIncorrectNumerical;
  options.profile = synthetic_profile();
  EXPECT_EQ(render_feedback(r, options).find("## Profiler hints"), std::string::npos);
}

// ptxas advisories that cost speed reach the hints (named kernel, and the unattributed C7508),
// not the default text; the C7519 fence does not.
TEST(FeedbackProfilerHints, PtxasAdvisoriesThatCostSpeed) {
  EvalResult r = passed_with_spills();
  PtxasDiagnostic wait{"C7517", "bwd_dq_dk",
                       "warpgroup.wait is injected in around line 639 by compiler to allow use "
                       "of registers defined by GMMA in function 'bwd_dq_dk'"};
  PtxasDiagnostic arrive{"C7519", "bwd_dq_dk", "warpgroup.arrive is injected in around line 107"};
  PtxasDiagnostic setmaxnreg{"C7508", "",
                             "Potential Performance Loss: 'setmaxnreg' ignored; unable to "
                             "determine register count at entry.",
                             true};
  r.compile->ptxas.diagnostics = {wait, arrive, setmaxnreg};
  r.compile->ptxas.kernels[0].diagnostics = {wait, arrive};
  EXPECT_EQ(render_feedback(r).find("C7517"), std::string::npos);
  FeedbackOptions options;
  options.profiler_hints = true;
  const std::string text = render_feedback(r, options);
  EXPECT_NE(text.find("\n- ptxas in bwd_dq_dk: C7517: warpgroup.wait is injected"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n- ptxas in (no kernel named): C7508: Potential Performance Loss"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("C7519"), std::string::npos) << text;
  EXPECT_LT(text.find("ptxas spilled registers"), text.find("C7517"));  // spills first
  // The message repeats a kernel name the source chooses: capped.
  r.compile->ptxas.kernels[0].diagnostics[0].message += std::string(5000, 'x');
  const std::string capped = render_feedback(r, options);
  EXPECT_NE(capped.find("more bytes cut]"), std::string::npos);
  EXPECT_LT(capped.size(), text.size() + 500);
}

}  // namespace
}  // namespace ptxb
