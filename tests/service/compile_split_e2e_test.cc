// The compile split through a real `ptxbench serve` whose workers run the real evaluation
// pipeline (no fakes): the client compiles and uploads kernel.so, the service re-runs the
// binary's checks and analysis itself. Without a GPU the GPU stages are then skipped; with one
// they run. Tasks: the adversarial suite's (testdata/integrity/tasks).
#include <gtest/gtest.h>

#include "compile/compiler.h"
#include "eval/eval_pipeline.h"
#include "serve_fixture.h"
#include "service/service_client.h"

namespace ptxb {
namespace {

const std::string kTasksDir = tree::testdata_dir() + "/integrity/tasks";
constexpr const char* kTask = "integrity_gemm_1024";

std::vector<std::string> stage_names(const Json& compile) {
  std::vector<std::string> names;
  for (const auto& [name, ms] : compile["stage_ms"].items()) names.push_back(name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class CompileSplitE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ServeSetup setup;
    setup.fake_workers = false;
    setup.global_args = {"--tasks-dir", kTasksDir};
    setup.env = {"PTXBENCH_CACHE_DIR=" + service_.dir() + "/service-cache",
                 "HOME=" + service_.dir()};
    url_ = service_.start(1, {"--no-canary"}, setup);
    client_env_ = {"PTXBENCH_CACHE_DIR=" + service_.dir() + "/client-cache"};
  }
  CliRun eval(const std::string& kernel, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {
        "--tasks-dir", kTasksDir, "eval",     tree::testdata_dir() + "/integrity/" + kernel,
        "--task",      kTask,     "--remote", url_,
        "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(service_.dir(), args, kAliceToken, client_env_);
  }

  ServeProcess service_;
  std::string url_;
  std::vector<std::string> client_env_;
};

TEST_F(CompileSplitE2E, ClientCompilesServiceReanalysesTheUploadedBinary) {
  CliRun run = eval("legit/host_func.cu");
  auto json = parse_json(run.out, "eval --json");
  ASSERT_TRUE(json.ok()) << run.out << run.err;
  // Exit 3 here (no GPU: the GPU stages were skipped), 0 on a GPU machine.
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 3) << run.err;
  const Json& compile = (*json)["compile"];
  EXPECT_EQ(compile["status"], "OK") << compile.dump();
  const auto stages = stage_names(compile);
  // The service did not compile: it checked symbols, extracted the cubins and disassembled.
  EXPECT_FALSE(has(stages, "nvcc_compile")) << compile["stage_ms"].dump();
  EXPECT_TRUE(has(stages, "symbol_check"));
  EXPECT_TRUE(has(stages, "disassemble"));
  EXPECT_NE(compile["log"].get<std::string>().find("prebuilt kernel.so"), std::string::npos);
  EXPECT_FALSE(compile["artifact"]["cubin_files"].empty());
  // Its own analysis, in its own cache; the client's compile went to the client's cache.
  EXPECT_TRUE(path_exists(service_.dir() + "/client-cache"));
  EXPECT_TRUE(path_exists(service_.dir() + "/service-cache"));
}

TEST_F(CompileSplitE2E, RemoteCompileLetsTheServiceCompileTheSource) {
  CliRun run = eval("legit/host_func.cu", {"--remote-compile"});
  auto json = parse_json(run.out, "eval --json");
  ASSERT_TRUE(json.ok()) << run.out << run.err;
  EXPECT_EQ((*json)["compile"]["status"], "OK");
  EXPECT_TRUE(has(stage_names((*json)["compile"]), "nvcc_compile"));
  EXPECT_FALSE(path_exists(service_.dir() + "/client-cache"));  // nothing compiled here
}

// A client that builds a library call with its own static checks off and uploads the binary:
// the service's own symbol allow-list refuses it.
TEST_F(CompileSplitE2E, ServiceRefusesABinaryTheClientPassed) {
  auto registry = TaskRegistry::load({kTasksDir});
  ASSERT_TRUE(registry.ok());
  const Task* task = *registry->get(kTask);
  EvalRequest request;
  request.task = kTask;
  request.source =
      *read_file(tree::testdata_dir() + "/integrity/exploits/cublas_prototype.cu", 1 << 20);
  EvalRequest unchecked = request;
  unchecked.options.disable_static_checks = true;
  CompileRequest compile_request = make_compile_request(unchecked, *task);
  compile_request.options.cache_dir = service_.dir() + "/dishonest-cache";
  SystemProcessRunner processes;
  auto toolchain = Toolchain::discover(processes);
  ASSERT_TRUE(toolchain.ok());
  auto compiled = compile_solution(compile_request, *toolchain);
  ASSERT_TRUE(compiled.ok() && compiled->ok()) << compiled->log;
  const CompileArtifact& a = compiled->artifact;
  request.prebuilt =
      PrebuiltFiles{a.path_of(a.shared_object), a.sha256.at(a.shared_object), a.path_of(a.ptx_file),
                    a.sha256.at(a.ptx_file), a.toolchain.nvcc.version};
  CurlHttpTransport transport;
  service::ServiceClient client(transport, url_, kAliceToken);
  auto result = client.evaluate(request, "", 120);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->status, PtxbStatus::kForbidden);
  EXPECT_EQ(result->reason, "forbidden_symbol");
  auto health = client.health();
  ASSERT_TRUE(health.ok());
  EXPECT_EQ((*health)["workers"][0]["restarts"], 0);
}

}  // namespace
}  // namespace ptxb
