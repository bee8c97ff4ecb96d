#include "adapt/ptx_leakage.h"

#include "abi/signature.h"
#include "adapt/run_turns.h"
#include "compile/compiler.h"
#include "core/fs.h"
#include "tasks/registry.h"

namespace ptxb::adapt {
namespace {

constexpr std::size_t kMaxPtxBytes = 64u << 20;  // a large wgmma kernel's PTX is < 2 MiB

}  // namespace

PtxOfKernel compile_stage_ptx(const TaskRegistry& registry, const Toolchain& toolchain) {
  return [&registry, &toolchain](const std::string& task_name,
                                 const std::string& source) -> Result<std::string> {
    PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(task_name));
    CompileRequest request;
    request.options = CompileOptions::defaults();
    request.options.arch = task->arch;
    request.source = source;
    request.signature = make_run_signature(task->definition);
    PTXB_ASSIGN_OR_RETURN(CompileResult compiled, compile_solution(request, toolchain));
    if (!compiled.ok())
      return make_error("compile", "{}: {} ({})", task_name, compiled.message, compiled.reason);
    return read_file(compiled.artifact.path_of(compiled.artifact.ptx_file), kMaxPtxBytes);
  };
}

Result<PtxLeakageResult> drop_ptx_collisions(std::vector<SftExample> examples,
                                             const std::vector<std::string>& test_runs,
                                             const PtxOfKernel& ptx_of) {
  std::vector<PtxKernel> test;
  int test_without_ptx = 0;
  for (const std::string& run : test_runs) {
    PTXB_ASSIGN_OR_RETURN(std::vector<RunTurn> turns, read_run_turns(run));
    for (const RunTurn& turn : turns) {
      const std::string file = turn.file_base() + ".cu";
      auto source = read_file(file, 1u << 20);
      auto ptx = source.ok() ? ptx_of(turn.record.key.definition, *source) : source.error();
      if (ptx.ok())
        test.push_back(PtxKernel{file, std::move(ptx.value())});
      else
        ++test_without_ptx;  // NO_CODE turns and compile errors: nothing to leak
    }
  }
  // Each row is checked by its supervised kernel, then (Fixit) its failing one.
  std::vector<PtxKernel> train;
  std::vector<std::size_t> owner;  // train[i] belongs to examples[owner[i]]
  int rows_without_ptx = 0;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    bool any = false;
    for (const std::string* kernel : {&examples[i].fixed_kernel, &examples[i].wrong_kernel}) {
      if (kernel->empty()) continue;
      auto ptx = ptx_of(examples[i].task, *kernel);
      if (!ptx.ok()) continue;
      train.push_back(PtxKernel{examples[i].id, std::move(ptx.value())});
      owner.push_back(i);
      any = true;
    }
    rows_without_ptx += any ? 0 : 1;
  }
  const PtxDedupResult dedup = dedup_by_normalized_ptx(train, test);
  PtxLeakageResult result;
  std::set<std::string> dropped_ids;
  for (const Json& drop : dedup.drops)
    if (dropped_ids.insert(drop["id"].get<std::string>()).second) result.drops.push_back(drop);
  for (SftExample& e : examples)
    if (!dropped_ids.count(e.id)) result.kept.push_back(std::move(e));
  result.counts = Json{{"test_kernels", test.size()},
                       {"test_kernels_without_ptx", test_without_ptx},
                       {"rows_without_ptx", rows_without_ptx}};
  return result;
}

}  // namespace ptxb::adapt
