#include "compile/compile_types.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>

#include "core/fs.h"
#include "core/install_layout.h"
#include "core/json_fields.h"

namespace ptxb {

CompileOptions CompileOptions::defaults() {
  CompileOptions options;
  // The knowledge packs' include/ folders (the data folder's packs/, core/install_layout.h).
  const auto packs_dir = data_subdir("packs");
  const std::string packs = packs_dir.ok() ? *packs_dir : std::string();
  if (!packs.empty() && is_directory(packs)) {
    // list_files is files only; pack folders are found by probing <pack>/include.
    auto entries = list_files_recursive(packs);
    std::vector<std::string> dirs;
    if (entries.ok()) {
      for (const auto& file : *entries) {
        const std::string relative = file.substr(packs.size() + 1);
        const auto slash = relative.find('/');
        if (slash == std::string::npos) continue;
        const std::string include = packs + "/" + relative.substr(0, slash) + "/include";
        if (is_directory(include) &&
            std::find(dirs.begin(), dirs.end(), canonical_path(include)) == dirs.end())
          dirs.push_back(canonical_path(include));
      }
    }
    std::sort(dirs.begin(), dirs.end());
    options.include_dirs = dirs;
  }
  if (const char* dir = std::getenv("PTXBENCH_CACHE_DIR"); dir && *dir) {
    options.cache_dir = dir;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    options.cache_dir = std::string(home) + "/.cache/ptxbench/compile";
  } else {
    options.cache_dir = "/tmp/ptxbench-cache/compile";
  }
  return options;
}

Json compile_options_to_json(const CompileOptions& options) {
  return Json{{"arch", options.arch},
              {"use_cache", options.use_cache},
              {"timeout_s", options.timeout.count() / 1000.0},
              {"max_source_bytes", options.max_source_bytes},
              {"log_cap_bytes", options.log_cap_bytes},
              {"include_dirs", options.include_dirs},
              {"cache_dir", options.cache_dir},
              {"enforce_forbidden", options.enforce_forbidden}};
}

Result<CompileOptions> compile_options_from_json(const Json& json) {
  if (!json.is_object()) return make_error("parse", "compile options: expected an object");
  CompileOptions options = CompileOptions::defaults();
  try {
    options.arch = json.value("arch", options.arch);
    options.use_cache = json.value("use_cache", options.use_cache);
    options.enforce_forbidden = json.value("enforce_forbidden", options.enforce_forbidden);
    if (json.contains("timeout_s"))
      options.timeout = std::chrono::milliseconds(
          static_cast<long long>(json.at("timeout_s").get<double>() * 1000));
    options.max_source_bytes = json.value("max_source_bytes", options.max_source_bytes);
    options.log_cap_bytes = json.value("log_cap_bytes", options.log_cap_bytes);
    options.include_dirs = json.value("include_dirs", options.include_dirs);
    options.cache_dir = json.value("cache_dir", options.cache_dir);
  } catch (const nlohmann::json::exception& e) {
    return make_error("parse", "compile options: {}", e.what());
  }
  return options;
}

namespace {

Json signature_to_json(const RunSignature& signature) {
  Json parameters = Json::array();
  for (const auto& p : signature.parameters) {
    static const char* kKinds[] = {"input", "output", "axis", "stream"};
    parameters.push_back(Json{{"kind", kKinds[static_cast<int>(p.kind)]},
                              {"type", p.type},
                              {"name", p.name},
                              {"source_name", p.source_name},
                              {"scalar", p.scalar}});
  }
  return parameters;
}

Result<RunSignature> signature_from_json(const Json& json) {
  RunSignature signature;
  if (!json.is_array()) return make_error("parse", "signature: expected an array of parameters");
  for (const auto& item : json) {
    const std::string kind = item.value("kind", "");
    AbiParameter parameter;
    if (kind == "input")
      parameter.kind = AbiParameter::Kind::kInput;
    else if (kind == "output")
      parameter.kind = AbiParameter::Kind::kOutput;
    else if (kind == "axis")
      parameter.kind = AbiParameter::Kind::kAxis;
    else if (kind == "stream")
      parameter.kind = AbiParameter::Kind::kStream;
    else
      return make_error("parse", "signature: unknown parameter kind '{}'", kind);
    parameter.type = item.value("type", "");
    parameter.name = item.value("name", "");
    parameter.source_name = item.value("source_name", "");
    parameter.scalar = item.value("scalar", false);
    signature.parameters.push_back(parameter);
  }
  return signature;
}

}  // namespace

Json compile_request_to_json(const CompileRequest& request) {
  return Json{{"source_name", request.source_name},
              {"source", request.source},
              {"signature", signature_to_json(request.signature)},
              {"options", compile_options_to_json(request.options)}};
}

Result<CompileRequest> compile_request_from_json(const Json& json) {
  if (!json.is_object() || !json.contains("source") || !json["source"].is_string())
    return make_error("parse", "compile request: expected an object with a string \"source\"");
  CompileRequest request;
  request.source = json["source"].get<std::string>();
  request.source_name = json.value("source_name", request.source_name);
  PTXB_ASSIGN_OR_RETURN(request.signature,
                        signature_from_json(json.value("signature", Json::array())));
  PTXB_ASSIGN_OR_RETURN(request.options,
                        compile_options_from_json(json.value("options", Json::object())));
  return request;
}

std::string_view compile_status_name(CompileStatus status) {
  switch (status) {
    case CompileStatus::kOk:
      return "OK";
    case CompileStatus::kCompileError:
      return "COMPILE_ERROR";
    case CompileStatus::kForbidden:
      return "FORBIDDEN";
  }
  return "COMPILE_ERROR";
}

std::string SourceDiagnostic::describe() const {
  return fmt::format("{}:{}: {}: {}", file, line, severity, message);
}

Json compile_result_to_json(const CompileResult& result) {
  Json diagnostics = Json::array();
  for (const auto& d : result.diagnostics)
    diagnostics.push_back(
        Json{{"file", d.file}, {"line", d.line}, {"severity", d.severity}, {"message", d.message}});
  Json stages = Json::object();
  for (const auto& [stage, ms] : result.stage_ms) stages[stage] = ms;
  Json forbidden = Json::array();
  for (const auto& finding : result.forbidden)
    forbidden.push_back(forbidden_finding_to_json(finding));
  const CompileArtifact& a = result.artifact;
  Json hashes = Json::object();
  for (const auto& [file, digest] : a.sha256) hashes[file] = digest;
  Json artifact{{"directory", a.directory},
                {"arch", a.arch},
                {"source_file", a.source_file},
                {"trampoline_file", a.trampoline_file},
                {"shared_object", a.shared_object},
                {"ptx_file", a.ptx_file},
                {"cubin_files", a.cubin_files},
                {"sass_file", a.sass_file},
                {"sha256", hashes},
                {"toolchain", toolchain_info_to_json(a.toolchain)},
                {"compile_command", a.compile_command},
                {"link_command", a.link_command},
                {"abi_signature", a.abi_signature},
                {"cache_key", a.cache_key}};
  return Json{{"status", compile_status_name(result.status)},
              {"reason", result.reason},
              {"message", result.message},
              {"from_cache", result.from_cache},
              {"diagnostics", diagnostics},
              {"forbidden", forbidden},
              {"stage_ms", stages},
              {"artifact", artifact},
              {"ptxas", ptxas_report_to_json(result.ptxas)},
              {"sass", sass_summary_to_json(result.sass)},
              {"ptx_families", ptx_family_counts_to_json(result.ptx_families)},
              {"log", result.log},
              {"log_truncated", result.log_truncated}};
}

namespace {

// The parts whose encodings their own modules own (sass/, compile/toolchain, compile/forbidden),
// read by a lenient from_json there: `read` wraps one as a FieldReader custom field.
template <typename T, typename FromJson>
auto lenient_part(T& out, FromJson from_json, const char* expected_type) {
  return [&out, from_json, expected_type](const Json& v, const std::string& path) -> Status {
    const bool object = std::string_view(expected_type) == "object";
    if (object ? !v.is_object() : !v.is_array())
      return make_error("parse", "{}: expected an {}", path, expected_type);
    try {
      out = from_json(v);
    } catch (const nlohmann::json::exception& e) {
      return make_error("parse", "{}: {}", path, e.what());
    }
    return ok_status();
  };
}

Result<SourceDiagnostic> diagnostic_from_json(const Json& json) {
  SourceDiagnostic d;
  FieldReader r(json);
  r.required("file", d.file).required("line", d.line);
  r.required("severity", d.severity).required("message", d.message);
  PTXB_RETURN_IF_ERROR(r.status());
  return d;
}

Status read_artifact(const Json& json, const std::string& path, CompileArtifact& artifact) {
  FieldReader r(json, path);
  r.required("directory", artifact.directory).required("arch", artifact.arch);
  r.required("source_file", artifact.source_file);
  r.required("trampoline_file", artifact.trampoline_file);
  r.required("shared_object", artifact.shared_object).required("ptx_file", artifact.ptx_file);
  r.required("cubin_files", artifact.cubin_files).required("sass_file", artifact.sass_file);
  r.required("sha256", artifact.sha256);
  r.custom("toolchain", true, lenient_part(artifact.toolchain, toolchain_info_from_json, "object"));
  r.required("compile_command", artifact.compile_command);
  r.required("link_command", artifact.link_command);
  r.required("abi_signature", artifact.abi_signature).required("cache_key", artifact.cache_key);
  return r.status();
}

}  // namespace

Result<CompileResult> compile_result_from_json(const Json& json, const std::string& origin) {
  // `origin` is a JSON path ("$.compile") inside a larger document, or a file name.
  const bool is_path = !origin.empty() && origin[0] == '$';
  CompileResult result;
  FieldReader r(json, is_path ? origin : "$");
  r.custom("status", true, [&](const Json& v, const std::string& path) -> Status {
    const std::string status = v.is_string() ? v.get<std::string>() : v.dump();
    if (status == "OK")
      result.status = CompileStatus::kOk;
    else if (status == "COMPILE_ERROR")
      result.status = CompileStatus::kCompileError;
    else if (status == "FORBIDDEN")
      result.status = CompileStatus::kForbidden;
    else
      return make_error("parse", "{}: unknown compile status '{}'", path, status);
    return ok_status();
  });
  r.required("reason", result.reason).required("message", result.message);
  r.required("from_cache", result.from_cache);
  r.custom("diagnostics", true, [&](const Json& v, const std::string& path) -> Status {
    if (!v.is_array()) return make_error("parse", "{}: expected an array", path);
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto diagnostic = diagnostic_from_json(v[i]);
      if (!diagnostic.ok()) return rebase_json_path(diagnostic.error(), json_path_index(path, i));
      result.diagnostics.push_back(std::move(diagnostic).value());
    }
    return ok_status();
  });
  r.custom("forbidden", true, [&](const Json& v, const std::string& path) -> Status {
    auto each = [](const Json& items) {
      std::vector<ForbiddenFinding> out;
      for (const auto& item : items) out.push_back(forbidden_finding_from_json(item));
      return out;
    };
    return lenient_part(result.forbidden, each, "array")(v, path);
  });
  r.custom("stage_ms", true, [&](const Json& v, const std::string& path) -> Status {
    std::map<std::string, double> stages;  // JSON object order is kept below
    PTXB_RETURN_IF_ERROR(json_fields_detail::read_value(v, path, stages));
    for (const auto& [name, ms] : v.items()) result.stage_ms.emplace_back(name, stages.at(name));
    return ok_status();
  });
  r.custom("artifact", true, [&](const Json& v, const std::string& path) -> Status {
    return read_artifact(v, path, result.artifact);
  });
  r.custom("ptxas", true, lenient_part(result.ptxas, ptxas_report_from_json, "object"));
  r.custom("sass", true, lenient_part(result.sass, sass_summary_from_json, "object"));
  r.custom("ptx_families", true,
           lenient_part(result.ptx_families, ptx_family_counts_from_json, "object"));
  r.required("log", result.log).required("log_truncated", result.log_truncated);
  Status read = r.status();
  if (!read.ok()) return is_path ? read.error() : read.error().with_context(origin);
  return result;
}

}  // namespace ptxb
