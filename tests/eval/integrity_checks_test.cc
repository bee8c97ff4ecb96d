// The supervisor's integrity decisions without a GPU (supervisor/integrity_checks.h) and the reason
// table every verdict, document and manifest refers to (eval/integrity_reasons.h).
#include "supervisor/integrity_checks.h"

#include <gtest/gtest.h>

#include <set>

#include "core/symbol_names.h"
#include "eval/integrity_reasons.h"

namespace ptxb {
namespace {

ActivityRecord kernel_record(const std::string& name) {
  ActivityRecord r;
  r.kind = "kernel";
  r.name = name;
  r.attribution = "unattributed";
  r.relation = "after";
  return r;
}

TEST(ReplyFindings, CleanReplyTripsNothing) {
  CallReply reply;
  reply.kernel_names = {"_Z4gemmv"};
  ReplyCheckOptions options;
  options.cubin_functions = {"_Z4gemmv"};
  EXPECT_FALSE(reply_findings(reply, options).has_value());
}

TEST(ReplyFindings, LeftoverThreadIsNamedBeforeTheWorkItMayHaveLaunched) {
  CallReply reply;
  reply.out_of_window.push_back(kernel_record("late"));
  reply.leftover_threads.push_back(LeftoverTask{12, "ptxbench-runne"});
  auto f = reply_findings(reply, {});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->reason, reason::kLeftoverThread);
  EXPECT_EQ(f->status, PtxbStatus::kRewardHack);
  reply.leftover_threads.clear();
  EXPECT_EQ(reply_findings(reply, {})->reason, reason::kOutOfWindow);
}

TEST(ReplyFindings, TrustedLibrariesMayKeepWorkerThreads) {
  CallReply reply;
  reply.leftover_threads.push_back(LeftoverTask{12, "cudnn-worker"});
  ReplyCheckOptions reference;
  reference.check_modules = false;
  reference.check_leftovers = false;
  EXPECT_FALSE(reply_findings(reply, reference).has_value());
}

TEST(ReplyFindings, LeftoverProcessComesBeforeLeftoverThread) {
  CallReply reply;
  reply.leftover_threads.push_back(LeftoverTask{12, "t"});
  reply.leftover_processes.push_back(LeftoverTask{13, "sh"});
  EXPECT_EQ(reply_findings(reply, {})->reason, reason::kLeftoverProcess);
}

TEST(ReplyFindings, ForeignStreamNamesACopyByHowItWasIssued) {
  CallReply reply;
  reply.expected_stream_id = 7;
  ActivityRecord copy;
  copy.kind = "memcpy";
  copy.name = "memcpy DtoD";
  copy.stream_id = 9;
  copy.async = true;
  reply.foreign_stream.push_back(copy);
  auto f = reply_findings(reply, {});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->reason, reason::kForeignStream);
  EXPECT_EQ(f->status, PtxbStatus::kRewardHack);
  EXPECT_NE(f->detail.find("asynchronous memcpy DtoD ran on stream 9"), std::string::npos)
      << f->detail;
}

TEST(ReplyFindings, ForeignModuleAndKernelAreForbiddenUnlessModulesAreUnchecked) {
  CallReply reply;
  reply.kernel_names = {"_Z4gemmv", "cutlass_80_tensorop_gemm"};
  ReplyCheckOptions options;
  options.cubin_functions = {"_Z4gemmv"};
  auto f = reply_findings(reply, options);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->status, PtxbStatus::kForbidden);
  EXPECT_EQ(f->reason, reason::kForeignKernel);
  options.check_modules = false;  // A/A mode: the library is the "candidate"
  EXPECT_FALSE(reply_findings(reply, options).has_value());
  options.check_modules = true;
  options.cubin_functions.clear();  // no SASS to compare with: the name check is off
  EXPECT_FALSE(reply_findings(reply, options).has_value());
  ModuleInfo module;
  module.sha256 = std::string(64, 'c');
  reply.unexpected_modules.push_back(module);
  EXPECT_EQ(reply_findings(reply, options)->reason, reason::kRuntimeModule);
}

TEST(ReplyFindings, CudaErrorComesFirst) {
  CallReply reply;
  reply.leftover_threads.push_back(LeftoverTask{12, "t"});
  reply.cuda_error = CudaErrorInfo{"cudaErrorIllegalAddress", "illegal", "sync"};
  auto f = reply_findings(reply, {});
  EXPECT_EQ(f->status, PtxbStatus::kMemoryError);
  EXPECT_EQ(f->reason, reason::kIllegalAddress);
}

TEST(KernelInCubin, MangledOrDemangledNamesMatch) {
  const std::vector<std::string> cubin = {"_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii",
                                          "_ZN12_GLOBAL__N_16reduceEPfi"};
  EXPECT_TRUE(kernel_in_cubin("_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii", cubin));
  EXPECT_TRUE(kernel_in_cubin(
      "gemm_kernel(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int)",
      cubin));
  EXPECT_TRUE(kernel_in_cubin("(anonymous namespace)::reduce(float*, int)", cubin));
  // A demangler that renders types differently still names the same function.
  EXPECT_TRUE(
      kernel_in_cubin("gemm_kernel(__nv_bfloat16 const*, __nv_bfloat16 const*, int)", cubin));
  EXPECT_FALSE(kernel_in_cubin("sm90_xmma_gemm_bf16bf16_bf16f32", cubin));
  EXPECT_FALSE(kernel_in_cubin("_ZN7cutlass6KernelINS_4gemm6kernel4GemmEEEvNT_6ParamsE", cubin));
}

TEST(KernelIdentifier, StripsNamespacesTemplatesParametersAndReturnType) {
  EXPECT_EQ(kernel_identifier("_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii"), "gemm_kernel");
  EXPECT_EQ(kernel_identifier("_ZN12_GLOBAL__N_16reduceEPfi"), "reduce");
  EXPECT_EQ(kernel_identifier("void ns::tiled<64, 32>(float*)"), "tiled");
  EXPECT_EQ(kernel_identifier("plain_c_kernel"), "plain_c_kernel");
}

TEST(VerifiedCalls, ASecretFractionOfAllCallsWithBothRewriteKinds) {
  std::mt19937_64 secret(12345);
  int verified = 0, full = 0, late = 0;
  constexpr int kCalls = 8000;
  for (int call = 0; call < kCalls; ++call) {
    auto kind = draw_verified_call(secret, 0.125);
    if (!kind) continue;
    ++verified;
    if (*kind == RefreshKind::kFull) ++full;
    if (call >= kCalls / 2) ++late;
  }
  // About one call in eight, a third of them full rewrites, and as many late as early.
  EXPECT_NEAR(verified, kCalls / 8, kCalls / 80);
  EXPECT_NEAR(full, verified / 3, verified / 15);
  EXPECT_NEAR(late, verified / 2, verified / 10);
  // Another secret, another schedule.
  std::mt19937_64 a(1), b(2);
  std::vector<bool> sa, sb;
  for (int call = 0; call < 64; ++call) {
    sa.push_back(draw_verified_call(a, 0.125).has_value());
    sb.push_back(draw_verified_call(b, 0.125).has_value());
  }
  EXPECT_NE(sa, sb);
  EXPECT_STREQ(refresh_kind_name(RefreshKind::kBlock), "block");
}

TEST(FreshInputFinding, MedianOfFreshCallsAgainstTheLimit) {
  EXPECT_FALSE(fresh_input_finding({}, 1e6, 2.0).has_value());
  EXPECT_FALSE(fresh_input_finding({1.1e6, 0.9e6, 1.9e6}, 1e6, 2.0).has_value());
  // One slow outlier among three does not move the median.
  EXPECT_FALSE(fresh_input_finding({1.0e6, 1.0e6, 9.0e6}, 1e6, 2.0).has_value());
  auto f = fresh_input_finding({30e6, 31e6, 1.0e6}, 1e6, 2.0);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->reason, reason::kFreshInputSlowdown);
  EXPECT_EQ(f->status, PtxbStatus::kRewardHack);
  EXPECT_NE(f->detail.find("30.0x"), std::string::npos) << f->detail;
}

TEST(CachedOutputFinding, OnlyAcrossDifferentSets) {
  std::vector<std::pair<int, std::uint64_t>> seen = {{0, 11}, {1, 12}};
  EXPECT_FALSE(cached_output_finding(seen, 0, 11).has_value());  // same set, same answer
  EXPECT_FALSE(cached_output_finding(seen, 2, 13).has_value());
  auto f = cached_output_finding(seen, 2, 12);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->reason, reason::kCachedOutput);
}

TEST(VerdictReasons, UniqueAndIntegrityReasonsAreRewardHackOrForbidden) {
  std::set<std::string_view> names;
  for (const auto& r : reason::verdict_reasons()) {
    EXPECT_TRUE(names.insert(r.reason).second) << r.reason;
    EXPECT_FALSE(r.check.empty()) << r.reason;
  }
  for (std::string_view integrity :
       {reason::kForeignStream, reason::kOutOfWindow, reason::kNoGpuWork, reason::kLeftoverThread,
        reason::kLeftoverProcess, reason::kRuntimeModule, reason::kForeignKernel,
        reason::kCachedOutput, reason::kStaleOutput, reason::kFreshInputSlowdown,
        reason::kInputModified, reason::kUnwrittenOutput, reason::kBelowPhysicalFloor,
        reason::kDeviceTimeExceedsBracket}) {
    auto r = reason::find_verdict_reason(integrity);
    ASSERT_TRUE(r.has_value()) << integrity;
    EXPECT_TRUE(r->status == PtxbStatus::kRewardHack || r->status == PtxbStatus::kForbidden)
        << integrity;
  }
  EXPECT_FALSE(reason::find_verdict_reason("made_up").has_value());
}

}  // namespace
}  // namespace ptxb
