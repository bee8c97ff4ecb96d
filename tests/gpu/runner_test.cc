// GPU tests of the candidate runner (label gpu; run on the H200). The test process plays the
// supervisor: it owns the buffers, exports them by CUDA IPC, spawns build/ptxbench-runner over a
// socketpair (supervisor/runner_client.h) and checks the runner's facts. Candidates are built at
// test time from testdata/runner/candidate.cu (four variants, compiled in parallel).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "core/fs.h"
#include "core/json_io.h"
#include "core/process.h"
#include "supervisor/runner_client.h"
#include "test_macros.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

constexpr const char* kSignature =
    "void run(const float* x, float* y, int64_t n, cudaStream_t stream)";
constexpr std::int64_t kElements = 1 << 20;
constexpr milliseconds kTimeout{30000};

enum Variant {
  kCorrect = 0,
  kLegacyStream = 1,
  kLateThread = 2,
  kWildWrite = 3,
  kVariantCount = 4
};

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

class RunnerGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_gpu()) return;
    auto dir = make_temp_directory("ptxb-runner-test");
    ASSERT_TRUE(dir.ok()) << dir.error().message;
    work_dir_ = *dir;
    const std::string source = std::string(PTXB_TESTDATA_DIR) + "/runner/candidate.cu";
    std::vector<std::future<Result<ProcessResult>>> builds;
    for (int v = 0; v < kVariantCount; ++v) {
      so_paths_[v] = work_dir_ + "/candidate_" + std::to_string(v) + ".so";
      ProcessSpec spec{{std::string(PTXB_CUDA_ROOT) + "/bin/nvcc", "-gencode",
                        "arch=compute_90a,code=sm_90a", "-O2", "-shared", "-Xcompiler", "-fPIC",
                        "-cudart", "shared", "-Xlinker",
                        "-rpath=" + std::string(PTXB_CUDA_ROOT) + "/lib64",
                        "-DVARIANT=" + std::to_string(v), source, "-o", so_paths_[v]}};
      spec.timeout = std::chrono::seconds(120);
      builds.push_back(
          std::async(std::launch::async, [spec] { return SystemProcessRunner().run(spec); }));
    }
    for (auto& build : builds) {
      auto result = build.get();
      ASSERT_TRUE(result.ok()) << result.error().message;
      ASSERT_TRUE(result->succeeded()) << result->describe() << "\n" << result->stderr_text;
    }
  }
  static void TearDownTestSuite() {
    if (!work_dir_.empty()) remove_tree(work_dir_);
  }

  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(cudaMalloc(&x_, kElements * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&y_, kElements * sizeof(float)), cudaSuccess);
    std::vector<float> host(kElements);
    for (std::int64_t i = 0; i < kElements; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
    ASSERT_EQ(cudaMemcpy(x_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemset(y_, 0, kElements * sizeof(float)), cudaSuccess);
  }
  void TearDown() override {
    if (x_ != nullptr) cudaFree(x_);
    if (y_ != nullptr) cudaFree(y_);
  }

  // Spawns a runner, says hello, loads `variant` and binds x, y, n as set 0.
  std::unique_ptr<RunnerClient> start_runner(int variant,
                                             std::vector<std::string> expected_modules = {}) {
    RunnerLaunchSpec spec;
    spec.runner_path = gpu_test::sibling_binary(PTXB_RUNNER_PATH);
    auto client = RunnerClient::spawn(spec);
    EXPECT_TRUE(client.ok()) << client.error().message;
    if (!client.ok()) return nullptr;
    auto hello = (*client)->hello(kTimeout);
    EXPECT_TRUE(hello.ok()) << hello.error().message << "\n" << (*client)->log();
    if (!hello.ok()) return nullptr;
    EXPECT_FALSE(hello->device_name.empty());
    EXPECT_GT(hello->cupti_version, 0u);
    EXPECT_GE(hello->l2_flush_bytes, 2 * hello->l2_bytes);
    auto load =
        (*client)->load(LoadRequest{so_paths_[variant], kSignature, expected_modules}, kTimeout);
    EXPECT_TRUE(load.ok()) << load.error().message << "\n" << (*client)->log();
    if (!load.ok()) return nullptr;
    EXPECT_EQ(load->abi_signature, kSignature);
    BindRequest bind;
    for (void* pointer : {x_, y_}) {
      cudaIpcMemHandle_t handle;
      EXPECT_EQ(cudaIpcGetMemHandle(&handle, pointer), cudaSuccess);
      IpcBuffer buffer;
      std::memcpy(buffer.handle.data(), &handle, sizeof handle);
      buffer.bytes = kElements * sizeof(float);
      bind.buffers.push_back(buffer);
    }
    ParamValue x, y;
    x.is_buffer = true;
    x.buffer = 0;
    y.is_buffer = true;
    y.buffer = 1;
    bind.sets = {{x, y, param_value_from_json(Json{{"i64", kElements}}).value()}};
    auto bound = (*client)->bind(bind, kTimeout);
    EXPECT_TRUE(bound.ok()) << bound.error().message << "\n" << (*client)->log();
    if (!bound.ok()) return nullptr;
    return std::move(client).value();
  }

  static std::string work_dir_;
  static std::string so_paths_[kVariantCount];
  void* x_ = nullptr;
  void* y_ = nullptr;
};

std::string RunnerGpuTest::work_dir_;
std::string RunnerGpuTest::so_paths_[kVariantCount];

TEST_F(RunnerGpuTest, CorrectCandidateWritesOutputsAndHasAWindowCoveringItsKernel) {
  auto runner = start_runner(kCorrect);
  ASSERT_NE(runner, nullptr);
  // Warm-up first (lazy module loading happens here), as in every timed series.
  auto warm_up = runner->call(CallRequest{0, true, false}, kTimeout);
  ASSERT_TRUE(warm_up.ok()) << warm_up.error().message << "\n" << runner->log();
  EXPECT_FALSE(warm_up->cuda_error.has_value());
  EXPECT_EQ(warm_up->kernel_count, 1u);
  CallBracket bracket;
  auto call = runner->call(CallRequest{0, true, true}, kTimeout, &bracket);
  ASSERT_TRUE(call.ok()) << call.error().message << "\n" << runner->log();
  EXPECT_FALSE(call->cuda_error.has_value());
  ASSERT_TRUE(call->has_window);
  EXPECT_GT(call->device_ns, 0u);
  EXPECT_EQ(call->kernel_count, 1u);
  EXPECT_TRUE(call->foreign_stream.empty());
  EXPECT_TRUE(call->out_of_window.empty());  // the L2 flush memset is the harness's
  ASSERT_EQ(call->activity.size(), 1u);
  EXPECT_NE(call->activity[0].name.find("scale_by_two"), std::string::npos);
  EXPECT_EQ(call->activity[0].stream_id, call->expected_stream_id);
  EXPECT_EQ(call->window_start_ns, call->activity[0].start_ns);
  EXPECT_EQ(call->window_end_ns, call->activity[0].end_ns);
  // The supervisor's bracket contains the device window.
  EXPECT_GE(bracket.round_trip_ns, call->device_ns);
  EXPECT_GE(call->host_wall_ns, call->device_ns);
  EXPECT_EQ(call->dropped_records, 0u);

  std::vector<float> x(kElements), y(kElements);
  ASSERT_EQ(cudaMemcpy(x.data(), x_, kElements * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(y.data(), y_, kElements * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (std::int64_t i = 0; i < kElements; i += 4099)
    ASSERT_EQ(y[i], 2.0f * x[i]) << "element " << i;

  // Repeated calls: fresh external ids, a window each time, no cross-talk.
  for (int i = 0; i < 20; ++i) {
    auto again = runner->call(CallRequest{0, i % 2 == 0, false}, kTimeout);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->external_id, static_cast<std::uint64_t>(i + 3));
    EXPECT_EQ(again->kernel_count, 1u);
    EXPECT_TRUE(again->out_of_window.empty());
    EXPECT_TRUE(again->activity.empty());
  }
  // A bad set index is an error reply, and the runner keeps serving.
  EXPECT_FALSE(runner->call(CallRequest{3, true, false}, kTimeout).ok());
  EXPECT_TRUE(runner->call(CallRequest{0, true, false}, kTimeout).ok());
  EXPECT_TRUE(runner->shutdown(kTimeout).ok()) << runner->log();
}

TEST_F(RunnerGpuTest, ModulesAreHashedAndUnexpectedOnesReported) {
  // A hash that matches nothing: the candidate's own cubin is then unexpected.
  auto runner = start_runner(kCorrect, {std::string(64, '0')});
  ASSERT_NE(runner, nullptr);
  auto call = runner->call(CallRequest{0, true, false}, kTimeout);
  ASSERT_TRUE(call.ok()) << call.error().message;
  ASSERT_FALSE(call->unexpected_modules.empty()) << runner->log();
  EXPECT_EQ(call->unexpected_modules[0].origin, "candidate");
  EXPECT_EQ(call->unexpected_modules[0].sha256.size(), 64u);
  EXPECT_GT(call->unexpected_modules[0].bytes, 0u);
  const std::string candidate_hash = call->unexpected_modules[0].sha256;
  EXPECT_TRUE(runner->shutdown(kTimeout).ok());

  // With that hash expected, nothing is unexpected.
  auto trusted = start_runner(kCorrect, {candidate_hash});
  ASSERT_NE(trusted, nullptr);
  auto trusted_call = trusted->call(CallRequest{0, true, false}, kTimeout);
  ASSERT_TRUE(trusted_call.ok()) << trusted_call.error().message;
  EXPECT_TRUE(trusted_call->unexpected_modules.empty());
  EXPECT_TRUE(trusted->shutdown(kTimeout).ok());
}

TEST_F(RunnerGpuTest, LegacyDefaultStreamKernelIsForeign) {
  auto runner = start_runner(kLegacyStream);
  ASSERT_NE(runner, nullptr);
  auto call = runner->call(CallRequest{0, true, true}, kTimeout);
  ASSERT_TRUE(call.ok()) << call.error().message;
  EXPECT_FALSE(call->cuda_error.has_value());
  ASSERT_EQ(call->foreign_stream.size(), 1u) << runner->log();
  EXPECT_NE(call->foreign_stream[0].name.find("scale_by_two"), std::string::npos);
  EXPECT_NE(call->foreign_stream[0].stream_id, call->expected_stream_id);
  EXPECT_TRUE(runner->shutdown(kTimeout).ok());
}

TEST_F(RunnerGpuTest, KernelLaunchedByALeftoverThreadIsOutOfWindow) {
  auto runner = start_runner(kLateThread);
  ASSERT_NE(runner, nullptr);
  auto first = runner->call(CallRequest{0, true, false}, kTimeout);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->kernel_count, 1u);  // the late kernel never counts as the call's
  std::vector<ActivityRecord> flagged = first->out_of_window;
  for (int i = 0; i < 50 && flagged.empty(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
    auto call = runner->call(CallRequest{0, true, false}, kTimeout);
    ASSERT_TRUE(call.ok()) << call.error().message;
    EXPECT_EQ(call->kernel_count, 1u);
    flagged = call->out_of_window;
  }
  ASSERT_FALSE(flagged.empty()) << runner->log();
  EXPECT_NE(flagged[0].name.find("late_kernel"), std::string::npos);
  EXPECT_EQ(flagged[0].attribution, "unattributed");
  EXPECT_TRUE(runner->shutdown(kTimeout).ok());
}

TEST_F(RunnerGpuTest, StickyErrorIsReportedByName) {
  auto runner = start_runner(kWildWrite);
  ASSERT_NE(runner, nullptr);
  auto call = runner->call(CallRequest{0, true, false}, kTimeout);
  ASSERT_TRUE(call.ok()) << call.error().message;
  ASSERT_TRUE(call->cuda_error.has_value()) << runner->log();
  EXPECT_EQ(call->cuda_error->name, "cudaErrorIllegalAddress");
  runner->kill();
  runner->wait(kTimeout);
  // The test process's own context is untouched.
  EXPECT_EQ(cudaMemset(y_, 0, 16), cudaSuccess);
}

TEST_F(RunnerGpuTest, MismatchedSignatureIsRefused) {
  RunnerLaunchSpec spec;
  spec.runner_path = gpu_test::sibling_binary(PTXB_RUNNER_PATH);
  auto client = RunnerClient::spawn(spec);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->hello(kTimeout).ok()) << (*client)->log();
  auto load = (*client)->load(LoadRequest{so_paths_[kCorrect], "void run(cudaStream_t stream)", {}},
                              kTimeout);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.error().code, "runner:abi_mismatch");
  EXPECT_TRUE((*client)->shutdown(kTimeout).ok());
}

TEST_F(RunnerGpuTest, SelfContainedModeMakesOneCall) {
  Json params = {
      {"signature", kSignature},
      {"seed", 1},
      {"params",
       Json::array({{{"name", "x"},
                     {"tensor", {{"dtype", "float32"}, {"elements", 4096}, {"init", "normal"}}}},
                    {{"name", "y"}, {"tensor", {{"dtype", "float32"}, {"elements", 4096}}}},
                    {{"name", "n"}, {"i64", 4096}}})}};
  const std::string path = work_dir_ + "/params.json";
  ASSERT_TRUE(write_file_atomic(path, params.dump()).ok());
  ProcessSpec spec{{gpu_test::sibling_binary(PTXB_RUNNER_PATH), "--self-contained", "--so",
                    so_paths_[kCorrect], "--params-json", path}};
  spec.timeout = std::chrono::seconds(60);
  auto result = SystemProcessRunner().run(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->succeeded()) << result->describe() << "\n" << result->stderr_text;

  // A wild write fails the call: exit 1 with the CUDA error name.
  ProcessSpec bad = spec;
  bad.argv[3] = so_paths_[kWildWrite];
  auto failed = SystemProcessRunner().run(bad);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->exit_code, 1);
  EXPECT_NE(failed->stderr_text.find("cudaErrorIllegalAddress"), std::string::npos)
      << failed->stderr_text;
}

TEST_F(RunnerGpuTest, MalformedMessageEndsTheRunner) {
  RunnerLaunchSpec spec;
  spec.runner_path = gpu_test::sibling_binary(PTXB_RUNNER_PATH);
  auto client = RunnerClient::spawn(spec);
  ASSERT_TRUE(client.ok());
  auto reply = (*client)->request("bind", Json{{"buffers", "nope"}},
                                  kTimeout);  // before hello, and malformed
  EXPECT_FALSE(reply.ok());
  RunnerExit exit = (*client)->wait(kTimeout);
  EXPECT_TRUE(exit.finished);
  EXPECT_EQ(exit.exit_code, 2) << exit.describe() << "\n" << (*client)->log();
}

}  // namespace
}  // namespace ptxb
