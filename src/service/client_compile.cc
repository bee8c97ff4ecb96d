#include "service/client_compile.h"

#include "compile/compiler.h"
#include "eval/eval_pipeline.h"

namespace ptxb::service {

Result<std::optional<EvalResult>> compile_for_service(EvalRequest& request,
                                                      const TaskRegistry& registry,
                                                      const std::vector<std::string>& tasks_dirs,
                                                      ProcessRunner& processes) {
  PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(request.task));
  auto toolchain = Toolchain::discover(processes);
  if (!toolchain.ok())
    return toolchain.error().with_context(
        "compiling for the service (no CUDA toolchain here? --remote-compile lets the service "
        "compile)");
  PTXB_ASSIGN_OR_RETURN(CompileResult compiled,
                        compile_solution(make_compile_request(request, *task), *toolchain));
  if (!compiled.ok()) {
    // The local evaluation stops at the same compile (a cache hit now) with the same verdict.
    PTXB_ASSIGN_OR_RETURN(EvalResult local, evaluate(request, registry, tasks_dirs,
                                                     EvalTools::discover(), processes));
    return std::optional<EvalResult>(std::move(local));
  }
  const CompileArtifact& artifact = compiled.artifact;
  auto hash_of = [&](const std::string& file) -> Result<std::string> {
    auto it = artifact.sha256.find(file);
    if (it == artifact.sha256.end())
      return make_error("internal", "{}: the compile artifact has no hash of {}",
                        artifact.directory, file);
    return it->second;
  };
  PrebuiltFiles files;
  files.shared_object_path = artifact.path_of(artifact.shared_object);
  PTXB_ASSIGN_OR_RETURN(files.shared_object_sha256, hash_of(artifact.shared_object));
  files.ptx_path = artifact.path_of(artifact.ptx_file);
  PTXB_ASSIGN_OR_RETURN(files.ptx_sha256, hash_of(artifact.ptx_file));
  files.nvcc_version = artifact.toolchain.nvcc.version;
  request.prebuilt = files;
  return std::optional<EvalResult>();
}

}  // namespace ptxb::service
