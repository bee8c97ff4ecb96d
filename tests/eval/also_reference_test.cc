// The optional second reference's CPU side (eval/also_reference.h): which tasks take
// --also-reference flashinfer and the selector their runner loads, the refusals, the options'
// JSON round trip, the record in the result and the trace, and the summary line.
#include "eval/also_reference.h"

#include <gtest/gtest.h>

#include "protocol/reference_selector.h"
#include "tasks/registry.h"
#include "trace/trace.h"

namespace ptxb {
namespace {

class AlsoReference : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = TaskRegistry::load({});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    registry_.emplace(std::move(loaded).value());
  }
  const Task& task(const std::string& name) { return *registry_->get(name).value(); }
  std::optional<TaskRegistry> registry_;
};

TEST_F(AlsoReference, MhaForwardTasksGetFlashInfersPrefillWithTheirMask) {
  for (const std::string name : {"mha_with_lse_d128", "mha_with_lse_d64", "mha_with_lse_d96"}) {
    auto selector = also_reference_selector("flashinfer", task(name));
    ASSERT_TRUE(selector.ok()) << name << ": " << selector.error().message;
    EXPECT_EQ(*selector, "flashinfer_mha_prefill") << name;
    auto causal = also_reference_selector("flashinfer", task(name + "_causal"));
    ASSERT_TRUE(causal.ok()) << causal.error().message;
    EXPECT_EQ(*causal, "flashinfer_mha_prefill:causal");
    // What the runner's library parses (protocol/reference_selector.h).
    auto parsed = parse_reference_selector(*causal);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(parsed->backend, "flashinfer_mha_prefill");
    EXPECT_TRUE(parsed->causal);
    EXPECT_EQ(parsed->to_string(), *causal);
  }
  // d96 has no FlashInfer SM90 kernel, yet is not refused here: the evaluation runs and the
  // record carries the library's own reason (stage_also_reference.cc).
  EXPECT_TRUE(check_also_reference("flashinfer", task("mha_with_lse_d96"), true).ok());
}

TEST_F(AlsoReference, OtherTasksAreAUsageErrorThatNamesTheTaskAndItsReference) {
  for (const std::string name :
       {"gemm_n7168_k5120", "mha_bwd_d128", "mha_bwd_d64_causal",
        "gqa_ragged_prefill_causal_h32_kv4_d128", "gqa_paged_decode_h24_kv8_d128_ps1"}) {
    Status s = check_also_reference("flashinfer", task(name), true);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.error().code, "usage");
    EXPECT_NE(s.error().message.find(name), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("not an MHA forward task"), std::string::npos);
    EXPECT_NE(s.error().message.find(task(name).reference_backend), std::string::npos);
  }
  Status blackwell = check_also_reference("flashinfer", task("mha_with_lse_d128_sm100a"), true);
  ASSERT_FALSE(blackwell.ok());
  EXPECT_NE(blackwell.error().message.find("sm_90a only"), std::string::npos);
  Status unknown = check_also_reference("triton", task("mha_with_lse_d128"), true);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "usage");
  EXPECT_NE(unknown.error().message.find("known: flashinfer"), std::string::npos);
}

TEST_F(AlsoReference, ABuildWithoutFlashInferNamesTheOptionToTurnOn) {
  Status s = check_also_reference("flashinfer", task("mha_with_lse_d128"), false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "usage");
  EXPECT_NE(s.error().message.find("-DPTXB_WITH_FLASHINFER=ON"), std::string::npos)
      << s.error().message;
  // No second reference asks nothing of the build or the task.
  EXPECT_TRUE(check_also_reference("", task("gemm_n7168_k5120"), false).ok());
}

TEST(AlsoReferenceOptions, RoundTripAndAbsentByDefault) {
  EvalOptions options;
  EXPECT_FALSE(options.to_json().contains("also_reference"));  // default requests unchanged
  options.also_reference = "flashinfer";
  const Json j = options.to_json();
  EXPECT_EQ(j["also_reference"], "flashinfer");
  auto back = EvalOptions::from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->also_reference, "flashinfer");
  auto none = EvalOptions::from_json(Json::object());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->also_reference.empty());
  Json bad = j;
  bad["also_reference"] = "triton";
  auto refused = EvalOptions::from_json(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("also_reference"), std::string::npos);
}

AlsoReferenceRecord measured_record() {
  AlsoReferenceRecord r;
  r.name = "flashinfer";
  r.backend = "flashinfer_mha_prefill";
  r.selector = "flashinfer_mha_prefill:causal";
  r.status = "measured";
  r.backend_description = Json{{"backend", "flashinfer_mha_prefill"},
                               {"library", {{"name", "FlashInfer"}, {"version", "0.6.14"}}}};
  OutputCheck check;
  check.output = "O";
  check.num_elements = 100;
  r.checks = {check};
  TimingStats timing;
  timing.median_ms = 1.40;
  timing.samples = 50;
  r.timing = timing;
  r.speedup = 1.40 / 1.25;
  r.measured_at = "2026-12-02T16:00:00Z";
  r.method = "CUPTI";
  return r;
}

TEST(AlsoReferenceRecordJson, RoundTripsThroughTheResultAndReachesTheTrace) {
  EvalResult result;
  result.task = "mha_with_lse_d128_causal";
  result.status = PtxbStatus::kPassed;
  WorkloadEval w;
  w.workload = "mha_with_lse_d128_causal_S4096";
  w.status = PtxbStatus::kPassed;
  w.reference.backend = Json{{"backend", "cudnn_sdpa_fwd"}};
  w.reference.also_reference = measured_record();
  result.workloads = {w};

  auto back = EvalResult::from_json(result.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  const auto& also = back->workloads.at(0).reference.also_reference;
  ASSERT_TRUE(also.has_value());
  EXPECT_EQ(also->status, "measured");
  EXPECT_EQ(also->selector, "flashinfer_mha_prefill:causal");
  EXPECT_DOUBLE_EQ(also->timing->median_ms, 1.40);
  EXPECT_DOUBLE_EQ(*also->speedup, 1.40 / 1.25);
  EXPECT_EQ(also->backend_description["library"]["version"], "0.6.14");
  ASSERT_EQ(also->checks.size(), 1u);

  // Beside the primary reference's backend in the trace's reference section.
  const std::vector<Trace> traces = result.traces("mha_with_lse_d128_causal", Json::object(), "k");
  ASSERT_EQ(traces.size(), 1u);
  const Json trace = trace_to_json(traces[0]);
  const Json& reference = trace["evaluation"]["ptxbench"]["workload"]["reference"];
  EXPECT_EQ(reference["backend"]["backend"], "cudnn_sdpa_fwd");
  EXPECT_EQ(reference["also_reference"]["backend"], "flashinfer_mha_prefill");
  EXPECT_EQ(reference["also_reference"]["timing"]["median_ms"], 1.40);

  // Without the option the reference section has no such field.
  w.reference.also_reference.reset();
  EXPECT_FALSE(w.reference.to_json().contains("also_reference"));
}

TEST(AlsoReferenceRecordJson, SummaryLineSaysTheMedianOrWhyNot) {
  AlsoReferenceRecord r = measured_record();
  EXPECT_EQ(also_reference_summary(r),
            "also reference flashinfer (flashinfer_mha_prefill): 1.4000 ms; speedup 1.120x");
  r.status = "unavailable";
  r.timing.reset();
  r.why =
      "flashinfer_mha_prefill: FlashInfer 0.6.14 has no SM90 prefill kernel for head_dim 96\n"
      "runner log ...";
  EXPECT_EQ(also_reference_summary(r),
            "also reference flashinfer (flashinfer_mha_prefill): unavailable: "
            "flashinfer_mha_prefill: FlashInfer 0.6.14 has no SM90 prefill kernel for head_dim 96");
}

}  // namespace
}  // namespace ptxb
