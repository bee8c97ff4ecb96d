#include "service/submit_request.h"

#include <set>

#include "core/json_fields.h"
#include "eval/eval_types.h"

namespace ptxb::service {
namespace {

bool valid_source_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

Result<Json> read_prebuilt(const Json& json) {
  std::string shared_object, ptx, nvcc_version;
  FieldReader prebuilt_reader(json, "$.prebuilt");
  prebuilt_reader.required("shared_object", shared_object)
      .required("ptx", ptx)
      .required("nvcc_version", nvcc_version);
  if (!prebuilt_reader.status().ok())
    return Error{prebuilt_reader.status().error().message, "invalid"};
  if (!is_sha256_hex(shared_object) || !is_sha256_hex(ptx))
    return make_error("invalid", "$.prebuilt: shared_object and ptx are SHA-256 hex digests");
  if (nvcc_version.empty() || nvcc_version.size() > 32)
    return make_error("invalid", "$.prebuilt.nvcc_version: expected a version like 13.0.88");
  return Json{{"shared_object", shared_object}, {"ptx", ptx}, {"nvcc_version", nvcc_version}};
}

}  // namespace

Result<SubmitRequest> SubmitRequest::from_json(const Json& json) {
  static const std::set<std::string> kFields = {
      "operation", "task", "arch", "artifact", "options", "prebuilt", "idempotency_key"};
  if (!json.is_object()) return make_error("invalid", "$: expected an object");
  for (const auto& [key, value] : json.items())
    if (!kFields.count(key))
      return make_error("invalid",
                        "$.{}: unknown field (operation, task, arch, artifact, "
                        "options, prebuilt, idempotency_key)",
                        key);
  SubmitRequest r;
  Json artifact;
  FieldReader reader(json);
  reader.optional("operation", r.operation).required("task", r.task).optional("arch", r.arch);
  reader.required("artifact", artifact).optional("options", r.options);
  reader.optional("idempotency_key", r.idempotency_key);
  if (!reader.status().ok()) return Error{reader.status().error().message, "invalid"};
  FieldReader artifact_reader(artifact, "$.artifact");
  artifact_reader.required("sha256", r.artifact).optional("name", r.source_name);
  if (!artifact_reader.status().ok())
    return Error{artifact_reader.status().error().message, "invalid"};
  if (!r.options.is_object()) return make_error("invalid", "$.options: expected an object");
  if (json.contains("prebuilt") && !json["prebuilt"].is_null()) {
    PTXB_ASSIGN_OR_RETURN(r.prebuilt, read_prebuilt(json["prebuilt"]));
  }
  return r;
}

Result<Job> make_job(const SubmitRequest& request, const std::string& owner,
                     const TaskRegistry& registry, const ArtifactStore& artifacts,
                     double submitted_at) {
  const auto operation = parse_eval_operation(request.operation);
  if (!operation)
    return make_error("unsupported_operation", "$.operation: \"{}\" is not one of {}",
                      request.operation, eval_operation_names());
  auto task = registry.get(request.task);
  if (!task.ok()) return Error{task.error().message, "unknown_task"};
  if (!request.arch.empty() && request.arch != "sm_90a" && request.arch != "sm_100a")
    return make_error("invalid", "$.arch: \"{}\" is not sm_90a or sm_100a", request.arch);
  auto options = EvalOptions::from_json(request.options);
  if (!options.ok()) return Error{options.error().message, "invalid"};
  // Never over the network: these weaken the evaluation (test-only or debugging switches).
  if (options->unsafe_no_sandbox || options->disable_static_checks ||
      options->reference_as_candidate)
    return make_error("invalid",
                      "$.options: unsafe_no_sandbox, disable_static_checks and "
                      "reference_as_candidate are not accepted by the service");
  if (auto applied = apply_operation(*operation, *options); !applied.ok())
    return make_error("invalid", "$.options: {}", applied.error().message);
  if (!is_sha256_hex(request.artifact))
    return make_error("invalid", "$.artifact.sha256: expected 64 lower-case hex digits");
  if (!valid_source_name(request.source_name))
    return make_error("invalid", "$.artifact.name: expected a file name of [A-Za-z0-9._-]");
  if (request.idempotency_key.size() > 200)
    return make_error("invalid", "$.idempotency_key: longer than 200 characters");
  std::vector<std::string> needed = {request.artifact};
  if (!request.prebuilt.is_null())
    for (const char* field : {"shared_object", "ptx"})
      needed.push_back(request.prebuilt[field].get<std::string>());
  for (const auto& sha : needed)
    if (!artifacts.has(sha))
      return make_error("artifact_missing",
                        "artifact {} is not on the service: upload it with PUT /v1/artifacts/{}",
                        sha, sha);
  Job job;
  job.owner = owner;
  job.idempotency_key = request.idempotency_key;
  job.operation = request.operation;
  job.task = (*task)->name;
  job.arch = request.arch.empty() ? (*task)->arch : request.arch;
  job.artifact = request.artifact;
  job.source_name = request.source_name;
  job.options = options->to_json();
  job.prebuilt = request.prebuilt;
  job.submitted_at = submitted_at;
  return job;
}

}  // namespace ptxb::service
