// ptxbench-supervisor: the trusted GPU side of one evaluation (design.md §3.3).
//
//   ptxbench-supervisor --job FILE|-      reads a SupervisorJob (eval/eval_types.h) as JSON,
//                                         prints the EvalResult's GPU part as JSON on stdout
//
// Spawned by `ptxbench eval` (eval/eval_pipeline.cc) after the compile stage. It owns the input
// and output buffers, the reference outputs and the verdicts; candidate code runs only in the
// ptxbench-runner processes it spawns. Exit 0 whenever a result was printed (whatever the
// candidate's status); non-zero only when the job itself could not be read.
#include <cstring>
#include <iostream>
#include <iterator>

#include "compile/compile_types.h"
#include "core/fs.h"
#include "supervisor/device/eval_device.h"
#include "supervisor/evaluator.h"
#include "tasks/registry.h"

namespace {

ptxb::Result<ptxb::Json> read_job(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    PTXB_ASSIGN_OR_RETURN(text, ptxb::read_file(path, 64u << 20));
  }
  try {
    return ptxb::Json::parse(text);
  } catch (const std::exception& e) {
    return ptxb::make_error("parse", "job {}: {}", path, e.what());
  }
}

int fail(const std::string& message) {
  std::cerr << "ptxbench-supervisor: error: " << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--job") != 0) {
    std::cerr << "usage: ptxbench-supervisor --job FILE|-\n"
                 "Runs the GPU stages of one evaluation (spawned by `ptxbench eval`).\n";
    return 2;
  }
  auto json = read_job(argv[2]);
  if (!json.ok()) return fail(json.error().message);
  auto job = ptxb::SupervisorJob::from_json(*json);
  if (!job.ok()) return fail(job.error().message);
  auto compile = ptxb::compile_result_from_json(job->compile, "job.compile");
  if (!compile.ok()) return fail(compile.error().message);
  auto registry = ptxb::TaskRegistry::load(job->tasks_dirs);
  if (!registry.ok()) return fail(registry.error().message);
  auto task = registry->get(job->request.task);
  if (!task.ok()) return fail(task.error().message);

  ptxb::EvalResult result;
  auto device = ptxb::gpu::GpuEvalDevice::create();
  if (!device.ok()) {
    result.task = (*task)->name;
    result.status = ptxb::PtxbStatus::kInfraError;
    result.reason = "gpu_unavailable";
    result.message = device.error().message;
  } else {
    ptxb::ProcessRunnerLauncher launcher(job->runner_path);
    ptxb::SystemProcessRunner tools;
    ptxb::Evaluator evaluator(**device, launcher, tools);
    result = evaluator.run(*job, **task, *compile);
  }
  std::cout << result.to_json().dump() << std::endl;
  return 0;
}
