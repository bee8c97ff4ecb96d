// The compile stage's request and result: plain serializable objects. The evaluation pipeline,
// the model feedback and (later) the remote service all use exactly these (design.md §2).
//
// A CompileResult with status OK carries a self-describing CompileArtifact: the shared object the
// GPU runner loads, its PTX, the cubin(s) extracted from that very .so, their SHA-256 hashes, the
// toolchain versions and the exact command lines. A GPU machine runs it later without
// recompiling, and the timed binary is exactly the analysed one.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "abi/signature.h"
#include "compile/compile_sandbox.h"
#include "compile/forbidden.h"
#include "compile/toolchain.h"
#include "core/json_io.h"
#include "core/result.h"
#include "sass/ptx_families.h"
#include "sass/ptxas_report.h"
#include "sass/sass_analysis.h"

namespace ptxb {

struct CompileOptions {
  std::string arch = "sm_90a";  // "sm_90a" (Hopper) or "sm_100a" (Blackwell)
  bool use_cache = true;  // false: never reuse a cached result (the fresh one is still stored)
  std::chrono::milliseconds timeout{
      120'000};  // wall time for the whole compile, all tools together
  std::size_t max_source_bytes = 1u << 20;
  std::size_t log_cap_bytes = 64u << 10;  // compile log kept in the result
  std::vector<std::string> include_dirs;  // knowledge-pack wrapper headers (-I), resolved
  std::string cache_dir;                  // content-addressed store of artifacts
  // Test-only (EvalOptions::disable_static_checks): forbidden headers and symbols are recorded
  // in `forbidden` but the compile still succeeds, so the run-time checks and the sandbox can be
  // shown to stop the candidate by themselves. Part of the cache key when off.
  bool enforce_forbidden = true;
  // Every tool of the compile runs in the compile sandbox (compile/compile_sandbox.h): the view,
  // the limits. Not part of the cache key: a limit kill is never cached.
  CompileSandboxOptions sandbox;

  // Defaults: include_dirs = every <repo>/packs/*/include that exists; cache_dir =
  // $PTXBENCH_CACHE_DIR, else ~/.cache/ptxbench/compile.
  static CompileOptions defaults();
};

Json compile_options_to_json(const CompileOptions& options);
Result<CompileOptions> compile_options_from_json(const Json& json);

struct CompileRequest {
  std::string source;  // the candidate's kernel.cu text
  std::string source_name = "kernel.cu";
  RunSignature signature;  // the `run` the trampoline calls
  CompileOptions options;
};

Json compile_request_to_json(const CompileRequest& request);
Result<CompileRequest> compile_request_from_json(const Json& json);

enum class CompileStatus { kOk, kCompileError, kForbidden };
std::string_view compile_status_name(CompileStatus status);  // "OK", "COMPILE_ERROR", "FORBIDDEN"

// A compiler diagnostic located in the candidate's file, normalised to "kernel.cu:LINE: ...".
struct SourceDiagnostic {
  std::string file;
  int line = 0;
  std::string severity;  // "error", "warning"
  std::string message;

  std::string describe() const;  // "kernel.cu:12: error: expected a \";\""
};

struct CompileArtifact {
  std::string directory;  // where the files below live (absolute)
  std::string arch;
  std::string source_file = "kernel.cu";
  std::string trampoline_file = "trampoline.cpp";
  std::string shared_object = "kernel.so";
  std::string ptx_file = "kernel.ptx";
  std::vector<std::string> cubin_files;       // extracted from the .so by cuobjdump -xelf
  std::string sass_file = "kernel.sass";      // cuobjdump -sass of the .so
  std::map<std::string, std::string> sha256;  // file name -> hex digest
  ToolchainInfo toolchain;
  std::vector<std::string> compile_command;  // exact argv (cwd = directory)
  std::vector<std::string> link_command;
  std::string abi_signature;  // RunSignature::declaration()
  std::string cache_key;

  std::string path_of(const std::string& file) const { return directory + "/" + file; }
};

struct CompileResult {
  CompileStatus status = CompileStatus::kCompileError;
  // Machine-readable reason: "" for OK; "syntax_error", "missing_run", "compile_timeout",
  // "source_too_large", "source_not_text", "link_error", "forbidden_header", "forbidden_symbol",
  // "forbidden_directive", "compile_limit_memory", "compile_limit_file_size",
  // "compile_limit_cpu", "compile_limit_processes", "compile_sandbox_seccomp",
  // "analysis_failed".
  std::string reason;
  std::string message;                        // one-line human summary
  std::vector<SourceDiagnostic> diagnostics;  // errors/warnings located in the candidate
  std::string log;                            // nvcc/ptxas output, capped
  bool log_truncated = false;
  std::vector<std::pair<std::string, double>> stage_ms;  // in order: "validate", "nvcc", ...
  CompileArtifact artifact;
  PtxasReport ptxas;
  SassSummary sass;
  PtxFamilyCounts ptx_families;
  std::vector<ForbiddenFinding> forbidden;
  bool from_cache = false;

  bool ok() const { return status == CompileStatus::kOk; }
};

Json compile_result_to_json(const CompileResult& result);
Result<CompileResult> compile_result_from_json(const Json& json, const std::string& origin);

}  // namespace ptxb
