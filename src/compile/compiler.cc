#include "compile/compiler.h"

#include <algorithm>
#include <limits>
#include <regex>

#include <unistd.h>

#include "compile/compile_cache.h"
#include "compile/compile_sandbox.h"
#include "compile/elf_reader.h"
#include "compile/forbidden.h"
#include "compile/log_sanitizer.h"
#include "compile/trampoline.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kObjectFile = "kernel.o";
constexpr const char* kKeepDir = ".keep";
constexpr const char* kCubinDir = ".cubins";
constexpr std::size_t kMaxToolOutput = 8u << 20;
constexpr std::size_t kMaxPreprocessedBytes = std::size_t{256} << 20;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Variables that would let the environment change what nvcc compiles or includes behind the
// recorded command line.
std::vector<std::string> tool_environment() {
  std::vector<std::string> env;
  for (const auto& entry : current_environment()) {
    const std::string key = entry.substr(0, entry.find('='));
    if (key == "NVCC_PREPEND_FLAGS" || key == "NVCC_APPEND_FLAGS" || key == "CPATH" ||
        key == "C_INCLUDE_PATH" || key == "CPLUS_INCLUDE_PATH" || key == "NVCC_CCBIN")
      continue;
    env.push_back(entry);
  }
  return env;
}

// State of one compile: the deadline shared by every tool, the log, stage times, the sandbox.
class Pipeline {
 public:
  Pipeline(const CompileRequest& request, const Toolchain& toolchain)
      : request_(request),
        toolchain_(toolchain),
        start_(Clock::now()),
        deadline_(start_ + request.options.timeout) {}

  // From now on every tool runs in the compile sandbox with `staging_dir` as its only writable
  // place (compile/compile_sandbox.h).
  void sandbox(std::string launcher, std::string staging_dir) {
    launcher_ = std::move(launcher);
    staging_dir_ = std::move(staging_dir);
  }

  // Runs a tool in `cwd` with what is left of the compile's time budget. nullopt result with
  // `timed_out_` set when the budget is spent.
  Result<ProcessResult> run_tool(const std::vector<std::string>& argv, const std::string& cwd) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    ProcessSpec spec;
    spec.argv = argv;
    spec.cwd = cwd;
    spec.env = tool_environment();
    spec.timeout = std::max(left, std::chrono::milliseconds(1));
    spec.output_cap_bytes = kMaxToolOutput;
    if (!launcher_.empty()) {
      const SandboxPolicy policy =
          compile_sandbox_policy(request_.options.sandbox, toolchain_.info(),
                                 request_.options.include_dirs, staging_dir_, cwd, spec.timeout);
      spec.argv = sandbox_command(launcher_, policy, argv);
    }
    // The log shows the tool's own command line; the sandbox's is in docs/compile.md.
    log_ += "$ " + join(argv, " ") + "\n";
    PTXB_ASSIGN_OR_RETURN(ProcessResult result, toolchain_.runner().run(spec));
    // Stopped by our own Ctrl-C: an error, never a compile verdict (a verdict would be cached).
    if (result.interrupted)
      return make_error("interrupted", "compile stopped: ptxbench was interrupted");
    if (!launcher_.empty() && compile_sandbox_setup_failed(result))
      return make_error("sandbox", "compile sandbox: {}", trim(result.stderr_text));
    log_ += result.stdout_text;
    log_ += result.stderr_text;
    if (!ends_with(log_, "\n")) log_ += "\n";
    if (!result.succeeded())
      log_ += "# " + argv[0].substr(argv[0].rfind('/') + 1) + ": " + result.describe() + "\n";
    return result;
  }

  // Folders the harness creates for a tool to write in belong to the sandbox uid (as root; as
  // another user the uid is the same inside and out).
  Status hand_over(const std::string& path) const {
    if (launcher_.empty() || ::geteuid() != 0) return ok_status();
    const SandboxPolicy defaults;
    return chown_tree(path, defaults.uid, defaults.gid);
  }
  bool sandboxed() const { return !launcher_.empty(); }

  void stage(const std::string& name, Clock::time_point since) {
    stages_.emplace_back(name, ms_since(since));
  }
  std::string& log() { return log_; }
  std::vector<std::pair<std::string, double>>& stages() { return stages_; }
  Clock::time_point start() const { return start_; }

 private:
  const CompileRequest& request_;
  const Toolchain& toolchain_;
  Clock::time_point start_;
  Clock::time_point deadline_;
  std::string launcher_;
  std::string staging_dir_;
  std::string log_;
  std::vector<std::pair<std::string, double>> stages_;
};

// Removes the staging dir on every path out of compile_solution that did not publish it:
// failures, early error returns and exceptions alike.
class StagingGuard {
 public:
  explicit StagingGuard(std::string dir) : dir_(std::move(dir)) {}
  StagingGuard(const StagingGuard&) = delete;
  StagingGuard& operator=(const StagingGuard&) = delete;
  ~StagingGuard() {
    if (!dir_.empty()) remove_tree(dir_);
  }
  void release() { dir_.clear(); }

 private:
  std::string dir_;
};

std::string first_error_line(const std::string& log) {
  for (const auto& line : split_lines(log))
    if (contains(line, "error") && !starts_with(line, "$ ")) return trim(line);
  return "";
}

CompileResult failed(CompileStatus status, std::string reason, std::string message) {
  CompileResult result;
  result.status = status;
  result.reason = std::move(reason);
  result.message = std::move(message);
  return result;
}

Status hash_artifact_files(CompileArtifact& artifact) {
  std::vector<std::string> files = {artifact.source_file, artifact.trampoline_file,
                                    artifact.shared_object, artifact.ptx_file, artifact.sass_file};
  files.insert(files.end(), artifact.cubin_files.begin(), artifact.cubin_files.end());
  for (const auto& file : files) {
    if (file.empty() || !path_exists(artifact.path_of(file))) continue;
    PTXB_ASSIGN_OR_RETURN(std::string bytes,
                          read_file(artifact.path_of(file), std::size_t{512} << 20));
    artifact.sha256[file] = sha256_hex(bytes);
  }
  return ok_status();
}

// The analysis half: disassemble the linked .so and parse everything. Fills `result`.
Status analyse_binary(Pipeline& pipeline, const Toolchain& toolchain, const std::string& dir,
                      CompileResult& result) {
  CompileArtifact& artifact = result.artifact;
  const std::string& cuobjdump = toolchain.info().cuobjdump.path;
  auto since = Clock::now();
  // Cubins are extracted from the shared object itself, so what is analysed (and later hashed
  // by the runner's module-load check) is exactly what the GPU will load.
  PTXB_RETURN_IF_ERROR(make_directories(dir + "/" + kCubinDir));
  PTXB_RETURN_IF_ERROR(pipeline.hand_over(dir + "/" + kCubinDir));
  PTXB_ASSIGN_OR_RETURN(ProcessResult extract, pipeline.run_tool({cuobjdump, "-xelf", "all",
                                                                  "../" + artifact.shared_object},
                                                                 dir + "/" + kCubinDir));
  if (!extract.succeeded())
    return make_error("toolchain", "{}: cuobjdump -xelf all failed: {}",
                      artifact.path_of(artifact.shared_object), extract.describe());
  PTXB_ASSIGN_OR_RETURN(auto cubins, list_files(dir + "/" + kCubinDir));
  for (const auto& cubin : cubins) {
    const std::string name = cubin.substr(cubin.rfind('/') + 1);
    if (!ends_with(name, ".cubin")) continue;
    if (std::rename(cubin.c_str(), (dir + "/" + name).c_str()) != 0)
      return make_error("io", "{}: cannot move extracted cubin", cubin);
    artifact.cubin_files.push_back(name);
  }
  remove_tree(dir + "/" + kCubinDir);
  if (artifact.cubin_files.empty())
    return make_error("toolchain", "{}: cuobjdump found no cubin in the shared object",
                      artifact.path_of(artifact.shared_object));

  PTXB_ASSIGN_OR_RETURN(ProcessResult sass,
                        pipeline.run_tool({cuobjdump, "-sass", artifact.shared_object}, dir));
  if (!sass.succeeded())
    return make_error("toolchain", "{}: cuobjdump -sass failed: {}",
                      artifact.path_of(artifact.shared_object), sass.describe());
  PTXB_RETURN_IF_ERROR(write_file_atomic(artifact.path_of(artifact.sass_file), sass.stdout_text));
  // The cuobjdump command is in the log; its (large) listing lives in kernel.sass instead.
  pipeline.stage("disassemble", since);

  since = Clock::now();
  PTXB_ASSIGN_OR_RETURN(std::string ptx,
                        read_file(artifact.path_of(artifact.ptx_file), kMaxPreprocessedBytes));
  // A candidate may define no kernel at all (host-only `run`): its cubin then has no function,
  // and "no kernels" is the true static answer. Only when the PTX agrees (no .entry) — an
  // unreadable dump of a file that does have kernels stays an error.
  std::vector<SassKernel> kernels;
  const bool no_entry_in_ptx = ptx.find(".entry") == std::string::npos;
  if (!(no_entry_in_ptx && sass.stdout_text.find("Function :") == std::string::npos)) {
    PTXB_ASSIGN_OR_RETURN(
        kernels, parse_cuobjdump_sass(sass.stdout_text, artifact.path_of(artifact.sass_file)));
  }
  result.sass = summarize_sass(std::move(kernels), artifact.arch);
  result.ptx_families = count_ptx_families(ptx);
  pipeline.stage("analysis", since);
  return ok_status();
}

// The undefined-symbol allow-list and the `run` contract on the linked kernel.so; true (with
// status, reason and message set) when the binary is refused.
Result<bool> check_binary_symbols(Pipeline& pipeline, const CompileRequest& request,
                                  CompileResult& result) {
  const CompileArtifact& artifact = result.artifact;
  const auto since = Clock::now();
  PTXB_ASSIGN_OR_RETURN(ElfDynamicSymbols symbols,
                        read_elf_dynamic_symbols_file(artifact.path_of(artifact.shared_object)));
  std::vector<std::string> undefined;
  bool run_missing = false;
  for (const auto& name : symbols.undefined_names()) {
    if (is_mangled_run_symbol(name))
      run_missing = true;
    else
      undefined.push_back(name);
  }
  for (auto& finding : check_undefined_symbols(undefined)) result.forbidden.push_back(finding);
  pipeline.stage("symbol_check", since);
  if (!result.forbidden.empty() && request.options.enforce_forbidden) {
    result.status = CompileStatus::kForbidden;
    result.reason = "forbidden_symbol";
    result.message = result.forbidden.front().describe();
    return true;
  }
  if (run_missing) {
    result.status = CompileStatus::kCompileError;
    result.reason = "missing_run";
    // A `run` with other parameters is the usual slip: say what was found, parameter by
    // parameter, next to what the trampoline calls.
    std::vector<std::string> defined_runs;
    std::string expected_mangled;
    for (const auto& symbol : symbols.static_symbols)
      if (symbol.function && symbol.defined && is_mangled_run_symbol(symbol.name))
        defined_runs.push_back(symbol.name);
    for (const auto& name : symbols.undefined_names())
      if (is_mangled_run_symbol(name)) expected_mangled = name;
    const std::string mismatch = describe_run_mismatch(expected_mangled, defined_runs);
    result.message =
        fmt::format("{} must define `{}`; {}", request.source_name, request.signature.declaration(),
                    mismatch.empty() ? "it defines no C++ function `run`" : mismatch);
    return true;
  }
  return false;
}

}  // namespace

Result<std::string> gencode_for_arch(const std::string& arch) {
  // The "a" targets: wgmma/setmaxnreg (sm_90a) and tcgen05 (sm_100a) exist only in the
  // architecture-specific feature set (PTX ISA "Target ISA notes"), so code=sm_XXa, never a
  // plain sm_XX or a PTX-only (JIT) target.
  if (arch == "sm_90a") return std::string("arch=compute_90a,code=sm_90a");
  if (arch == "sm_100a") return std::string("arch=compute_100a,code=sm_100a");
  return make_error("validation", "unsupported architecture '{}' (expected sm_90a or sm_100a)",
                    arch);
}

std::vector<std::string> nvcc_compile_command(const ToolchainInfo& toolchain,
                                              const CompileRequest& request,
                                              const std::string& gencode) {
  std::vector<std::string> argv = {toolchain.nvcc.path,
                                   "-gencode",
                                   gencode,
                                   "-O3",
                                   "-lineinfo",
                                   "-Xptxas",
                                   "-v",
                                   "-Xcompiler",
                                   "-fPIC,-fvisibility=hidden",
                                   "--keep",
                                   "--keep-dir",
                                   kKeepDir};
  for (const auto& dir : request.options.include_dirs) argv.push_back("-I" + dir);
  argv.insert(argv.end(), {"-c", request.source_name, "-o", kObjectFile});
  return argv;
}

std::vector<std::string> nvcc_link_command(const ToolchainInfo& toolchain,
                                           const std::string& gencode) {
  // -cudart shared: see compile/forbidden.h (static cudart brings its own dlopen/socket imports).
  return {toolchain.nvcc.path,
          "-gencode",
          gencode,
          "-O3",
          "-shared",
          "-cudart",
          "shared",
          "-Xcompiler",
          "-fPIC,-fvisibility=hidden",
          "-o",
          "kernel.so",
          kObjectFile,
          "trampoline.cpp"};
}

std::vector<SourceDiagnostic> parse_source_diagnostics(std::string_view log) {
  static const std::regex kEdg(
      R"(^([^\s():]+)\((\d+)\): (catastrophic error|error|warning)(?: #[\w-]+)?: (.*)$)");
  static const std::regex kGcc(R"(^([^\s:]+):(\d+):(?:\d+:)? (fatal error|error|warning): (.*)$)");
  std::vector<SourceDiagnostic> diagnostics;
  for (const auto& line : split_lines(log)) {
    std::smatch match;
    if (std::regex_match(line, match, kEdg) || std::regex_match(line, match, kGcc)) {
      std::string severity = match[3];
      if (severity != "warning") severity = "error";
      diagnostics.push_back(
          // Saturated: `#line 99999999999` in the candidate's source reaches this number.
          SourceDiagnostic{
              match[1],
              static_cast<int>(digits_saturating(match[2].str(), std::numeric_limits<int>::max())),
              severity, trim(match[4].str())});
    }
  }
  return diagnostics;
}

namespace {

Result<CompileResult> compile_solution_impl(const CompileRequest& request,
                                            const Toolchain& toolchain) {
  const CompileOptions& options = request.options;
  Pipeline pipeline(request, toolchain);
  auto since = Clock::now();

  // --- validate: bad input from a model is a result, not an infrastructure error ---
  PTXB_ASSIGN_OR_RETURN(const std::string gencode, gencode_for_arch(options.arch));
  if (request.source_name.empty() || request.source_name.find('/') != std::string::npos ||
      !ends_with(request.source_name, ".cu"))
    return make_error("validation", "source name '{}' must be a plain file name ending in .cu",
                      request.source_name);
  if (request.source.size() > options.max_source_bytes)
    return failed(
        CompileStatus::kCompileError, "source_too_large",
        fmt::format("{}: {} bytes exceeds the source size limit of {} bytes", request.source_name,
                    request.source.size(), options.max_source_bytes));
  if (request.source.find('\0') != std::string::npos)
    return failed(CompileStatus::kCompileError, "source_not_text",
                  fmt::format("{}: binary input (contains a NUL byte at offset {})",
                              request.source_name, request.source.find('\0')));
  if (const std::string utf8 = find_utf8_error(request.source); !utf8.empty())
    return failed(CompileStatus::kCompileError, "source_not_text",
                  fmt::format("{}: not valid UTF-8 text: {}", request.source_name, utf8));
  pipeline.stage("validate", since);

  // --- file directives that would read outside the compile view: refused before any tool runs
  // (the sandbox's view stops the forms this scan cannot see) ---
  std::vector<ForbiddenFinding> directives =
      check_file_directives(request.source, request.source_name);
  if (!directives.empty() && options.enforce_forbidden) {
    CompileResult refused =
        failed(CompileStatus::kForbidden, "forbidden_directive", directives.front().describe());
    refused.forbidden = std::move(directives);
    refused.stage_ms = pipeline.stages();
    refused.stage_ms.emplace_back("total", ms_since(pipeline.start()));
    return refused;
  }

  // --- cache ---
  since = Clock::now();
  const auto compile_command = nvcc_compile_command(toolchain.info(), request, gencode);
  const auto link_command = nvcc_link_command(toolchain.info(), gencode);
  const std::string key =
      compile_cache_key(request, toolchain.info(), compile_command, link_command);
  CompileCache cache(options.cache_dir);
  // An entry that exists but failed lookup (damaged, hash mismatch) must be replaced, not kept.
  bool replace_entry = !options.use_cache;
  if (options.use_cache) {
    if (auto hit = cache.lookup(key)) {
      hit->stage_ms = {{"cache_lookup", ms_since(since)}, {"total", ms_since(pipeline.start())}};
      return std::move(*hit);
    }
    replace_entry = path_exists(cache.entry_dir(key));
  }
  pipeline.stage("cache_lookup", since);

  std::string launcher;
  if (options.sandbox.enabled) {
    PTXB_ASSIGN_OR_RETURN(launcher, compile_sandbox_launcher(options.sandbox));
  } else {
    pipeline.log() += "# compile sandbox off (unsafe): the tools run with the harness's rights\n";
  }

  PTXB_ASSIGN_OR_RETURN(const std::string dir, cache.make_staging_dir());
  StagingGuard staging_guard(dir);
  pipeline.sandbox(launcher, dir);
  LogSanitizerContext shown;
  shown.staging_dir = canonical_path(dir);
  shown.toolkit_dirs = toolkit_dirs(toolchain.info());
  shown.pack_dirs = options.include_dirs;
  shown.host_dirs = default_host_dirs();
  shown.host_dirs.push_back(options.cache_dir);
  shown.host_dirs.push_back(canonical_path(options.cache_dir));
  CompileResult result;
  result.forbidden = directives;  // recorded when the static checks are off (test-only)
  CompileArtifact& artifact = result.artifact;
  artifact.directory = dir;  // the staging dir while building; the cache entry once published
  artifact.arch = options.arch;
  artifact.source_file = request.source_name;
  artifact.toolchain = toolchain.info();
  artifact.compile_command = compile_command;
  artifact.link_command = link_command;
  artifact.abi_signature = request.signature.declaration();
  artifact.cache_key = key;
  artifact.ptx_file = request.source_name.substr(0, request.source_name.size() - 3) + ".ptx";
  PTXB_RETURN_IF_ERROR(write_file_atomic(dir + "/" + request.source_name, request.source));
  PTXB_RETURN_IF_ERROR(write_file_atomic(dir + "/" + artifact.trampoline_file,
                                         generate_trampoline(request.signature)));
  PTXB_RETURN_IF_ERROR(make_directories(dir + "/" + kKeepDir));
  PTXB_RETURN_IF_ERROR(pipeline.hand_over(dir));

  auto finish = [&](CompileResult&& done, bool cacheable) -> Result<CompileResult> {
    // What a model reads: no file contents from outside the view, no host paths.
    const std::string log = sanitize_compile_log(pipeline.log(), shown);
    done.log = cap_text(log, options.log_cap_bytes);
    done.log_truncated = log.size() > options.log_cap_bytes;
    done.message = trim(sanitize_compile_log(done.message, shown));
    // Findings name the headers they resolved (the toolkit's install folder, a pack's): the
    // same placeholders as the log, since the feedback lists them too.
    for (ForbiddenFinding& finding : done.forbidden) {
      finding.item = trim(sanitize_compile_log(finding.item, shown));
      for (std::string& includer : finding.include_chain)
        includer = trim(sanitize_compile_log(includer, shown));
    }
    if (!done.artifact.directory.empty() && pipeline.sandboxed() && ::geteuid() == 0)
      PTXB_RETURN_IF_ERROR(chown_tree(dir, ::geteuid(), ::getegid()));
    remove_tree(dir + "/" + kKeepDir);
    std::remove((dir + "/" + kObjectFile).c_str());
    if (!cacheable) {
      remove_tree(dir);
      done.artifact.directory.clear();
      done.stage_ms = pipeline.stages();
      done.stage_ms.emplace_back("total", ms_since(pipeline.start()));
      return std::move(done);
    }
    auto store_since = Clock::now();
    PTXB_RETURN_IF_ERROR(hash_artifact_files(done.artifact));
    done.artifact.directory = cache.entry_dir(key);
    done.stage_ms = pipeline.stages();
    done.stage_ms.emplace_back("cache_store", ms_since(store_since));
    done.stage_ms.emplace_back("total", ms_since(pipeline.start()));
    PTXB_RETURN_IF_ERROR(
        write_file_atomic(dir + "/result.json", dump_pretty(compile_result_to_json(done))));
    PTXB_ASSIGN_OR_RETURN(bool ours, cache.publish(dir, key, replace_entry));
    staging_guard.release();
    if (!ours) {
      // A concurrent process stored the same key first: return its artifact, whose hashes match its
      // files.
      if (auto winner = cache.lookup(key)) {
        winner->from_cache = false;
        return std::move(*winner);
      }
      return make_error("io", "{}: cache entry vanished while publishing", cache.entry_dir(key));
    }
    return std::move(done);
  };

  // --- compile the candidate alone: its errors, its ptxas report, its preprocessed files ---
  since = Clock::now();
  PTXB_ASSIGN_OR_RETURN(ProcessResult compile, pipeline.run_tool(compile_command, dir));
  pipeline.stage("nvcc_compile", since);
  if (compile.timed_out) {
    return finish(
        failed(CompileStatus::kCompileError, "compile_timeout",
               fmt::format("{}: compilation exceeded the time limit of {:.1f} s and was killed "
                           "(nvcc and its children, as a process group)",
                           request.source_name, options.timeout.count() / 1000.0)),
        /*cacheable=*/false);
  }
  if (auto kill = compile_limit_kill(compile, options.sandbox, "nvcc -c " + request.source_name))
    return finish(failed(CompileStatus::kCompileError, kill->reason, kill->message), false);
  const std::string compile_output = compile.stdout_text + compile.stderr_text;
  // Diagnostics located in a file outside the view quote that file: never shown.
  for (auto& d : parse_source_diagnostics(compile_output))
    if (log_file_shown(d.file, shown)) result.diagnostics.push_back(std::move(d));
  result.ptxas = parse_ptxas_report(compile_output);

  // --- header allow-list, from both passes' preprocessed output (even if the compile failed:
  // a forbidden include is the more useful verdict) ---
  since = Clock::now();
  {
    std::vector<std::string> preprocessed;
    PTXB_ASSIGN_OR_RETURN(auto kept, list_files(dir + "/" + kKeepDir));
    for (const auto& file : kept) {
      if (!ends_with(file, ".ii")) continue;
      PTXB_ASSIGN_OR_RETURN(std::string text, read_file(file, kMaxPreprocessedBytes));
      preprocessed.push_back(std::move(text));
    }
    if (preprocessed.empty() && compile.succeeded())
      return make_error("toolchain",
                        "{}: nvcc --keep left no preprocessed (.ii) files; cannot check includes",
                        dir + "/" + kKeepDir);
    HeaderPolicy policy{toolchain.info().cuda_include_dir, options.include_dirs,
                        canonical_path(dir + "/" + request.source_name)};
    result.forbidden = check_headers(included_files_from_line_markers(preprocessed, dir), policy);
    // Copy the PTX out of the keep dir before it is removed.
    const std::string kept_ptx = dir + "/" + kKeepDir + "/" + artifact.ptx_file;
    if (path_exists(kept_ptx) &&
        std::rename(kept_ptx.c_str(), artifact.path_of(artifact.ptx_file).c_str()) != 0)
      return make_error("io", "{}: cannot move the PTX file", kept_ptx);
  }
  pipeline.stage("header_check", since);
  if (!result.forbidden.empty() && options.enforce_forbidden) {
    result.status = CompileStatus::kForbidden;
    result.reason = "forbidden_header";
    result.message = result.forbidden.front().describe();
    return finish(std::move(result), true);
  }
  if (!compile.succeeded()) {
    result.status = CompileStatus::kCompileError;
    result.reason =
        contains(compile_output, "ptxas") && !contains(compile_output, request.source_name + "(")
            ? "ptxas_error"
            : "nvcc_error";
    std::string first;
    for (const auto& d : result.diagnostics)
      if (d.severity == "error") {
        first = d.describe();
        break;
      }
    if (first.empty()) first = first_error_line(compile_output);
    result.message = first.empty() ? "nvcc failed: " + compile.describe() : first;
    // With the static checks off (test-only) a file directive reaches the tools, which cannot
    // open its file in the view: say which directive it was.
    if (!directives.empty())
      result.message += " (the source uses " + directives.front().describe() + ")";
    return finish(std::move(result), true);
  }

  // --- link with the trampoline ---
  since = Clock::now();
  PTXB_ASSIGN_OR_RETURN(ProcessResult link, pipeline.run_tool(link_command, dir));
  pipeline.stage("link", since);
  if (link.timed_out)
    return finish(
        failed(CompileStatus::kCompileError, "compile_timeout",
               fmt::format("{}: linking exceeded the time limit of {:.1f} s and was killed",
                           request.source_name, options.timeout.count() / 1000.0)),
        false);
  if (auto kill = compile_limit_kill(link, options.sandbox, "nvcc -shared (link)"))
    return finish(failed(CompileStatus::kCompileError, kill->reason, kill->message), false);
  if (!link.succeeded()) {
    result.status = CompileStatus::kCompileError;
    result.reason = "link_error";
    const std::string line = first_error_line(link.stdout_text + link.stderr_text);
    result.message = "linking kernel.so failed: " + (line.empty() ? link.describe() : line);
    return finish(std::move(result), true);
  }

  // --- undefined symbols: allow-list and the `run` contract ---
  PTXB_ASSIGN_OR_RETURN(bool refused, check_binary_symbols(pipeline, request, result));
  if (refused) return finish(std::move(result), true);

  // The binary is the candidate's: a disassembler that fails or is stopped on it is a verdict.
  if (auto analysed = analyse_binary(pipeline, toolchain, dir, result); !analysed.ok())
    return finish(
        failed(CompileStatus::kCompileError, "analysis_failed",
               "the compiled kernel.so could not be analysed: " + analysed.error().message),
        false);
  result.status = CompileStatus::kOk;
  result.message =
      fmt::format("compiled for {}; target instructions {}", options.arch,
                  result.sass.target_present
                      ? "present (" + join(result.sass.qualifying_families_found, ", ") + ")"
                      : "absent");
  if (!result.forbidden.empty())
    result.message += fmt::format(
        "; static checks disabled (test-only): {} forbidden finding(s) "
        "recorded, first: {}",
        result.forbidden.size(), result.forbidden.front().describe());
  return finish(std::move(result), true);
}

// Major.minor of a "13.0.88" version: the CUDA release whose runtime and cubin format a binary
// assumes.
std::string cuda_release(const std::string& version) {
  const auto first = version.find('.');
  if (first == std::string::npos) return version;
  return version.substr(0, version.find('.', first + 1));
}

Result<CompileResult> analyse_prebuilt_impl(const CompileRequest& request,
                                            const PrebuiltBinary& binary,
                                            const Toolchain& toolchain) {
  const CompileOptions& options = request.options;
  Pipeline pipeline(request, toolchain);
  PTXB_ASSIGN_OR_RETURN(const std::string gencode, gencode_for_arch(options.arch));
  (void)gencode;
  if (binary.shared_object.empty())
    return failed(CompileStatus::kCompileError, "prebuilt_invalid",
                  "the uploaded kernel.so is empty");
  // The same CUDA release as this machine's: the binary links its runtime (-cudart shared) and
  // holds cubins of that release's format; the tools here must read what it holds.
  if (cuda_release(binary.nvcc_version) != cuda_release(toolchain.info().nvcc.version))
    return failed(CompileStatus::kCompileError, "toolchain_mismatch",
                  fmt::format("kernel.so was built with nvcc {}; this service has nvcc {} (the "
                              "CUDA release must match; or let the service compile the source)",
                              binary.nvcc_version.empty() ? "(unknown)" : binary.nvcc_version,
                              toolchain.info().nvcc.version));

  // --- cache: the analysis of these exact bytes with these tools ---
  auto since = Clock::now();
  const std::string key = sha256_hex(fmt::format(
      "{}\nprebuilt\n{}\n{}\n{}\n{}\n{}\n{}", kCompileCacheFormat, sha256_hex(binary.shared_object),
      sha256_hex(binary.ptx), sha256_hex(request.source), request.signature.declaration(),
      options.arch, toolchain.info().fingerprint()));
  CompileCache cache(options.cache_dir);
  if (options.use_cache)
    if (auto hit = cache.lookup(key)) {
      hit->stage_ms = {{"cache_lookup", ms_since(since)}, {"total", ms_since(pipeline.start())}};
      return std::move(*hit);
    }
  const bool replace_entry = path_exists(cache.entry_dir(key));
  pipeline.stage("cache_lookup", since);

  std::string launcher;
  if (options.sandbox.enabled) {
    PTXB_ASSIGN_OR_RETURN(launcher, compile_sandbox_launcher(options.sandbox));
  }
  PTXB_ASSIGN_OR_RETURN(const std::string dir, cache.make_staging_dir());
  StagingGuard staging_guard(dir);
  pipeline.sandbox(launcher, dir);
  CompileResult result;
  CompileArtifact& artifact = result.artifact;
  artifact.directory = dir;
  artifact.arch = options.arch;
  artifact.source_file = request.source_name;
  artifact.toolchain = toolchain.info();
  artifact.abi_signature = request.signature.declaration();
  artifact.cache_key = key;
  artifact.ptx_file = request.source_name.substr(0, request.source_name.size() - 3) + ".ptx";
  // No trampoline source and no commands: the client built it; only what it built is here.
  artifact.trampoline_file.clear();
  PTXB_RETURN_IF_ERROR(write_file_atomic(dir + "/" + request.source_name, request.source));
  PTXB_RETURN_IF_ERROR(
      write_file_atomic(artifact.path_of(artifact.shared_object), binary.shared_object));
  PTXB_RETURN_IF_ERROR(write_file_atomic(artifact.path_of(artifact.ptx_file), binary.ptx));
  PTXB_RETURN_IF_ERROR(pipeline.hand_over(dir));
  pipeline.log() += "# prebuilt kernel.so (" + std::to_string(binary.shared_object.size()) +
                    " bytes, nvcc " + binary.nvcc_version + "): re-checked and re-analysed here\n";

  // The verdict's inputs, all from the uploaded binary: the symbol allow-list and `run`, the
  // cubins extracted from it, its SASS. A file that is no ELF is refused here, not trusted.
  auto symbols = check_binary_symbols(pipeline, request, result);
  if (!symbols.ok())
    return failed(
        CompileStatus::kCompileError, "prebuilt_invalid",
        "the uploaded kernel.so is not a readable shared object: " + symbols.error().message);
  if (!*symbols) {
    if (auto analysed = analyse_binary(pipeline, toolchain, dir, result); !analysed.ok())
      return failed(CompileStatus::kCompileError, "analysis_failed",
                    "the uploaded kernel.so could not be analysed: " + analysed.error().message);
    result.status = CompileStatus::kOk;
    result.message =
        fmt::format("prebuilt for {}; target instructions {}", options.arch,
                    result.sass.target_present
                        ? "present (" + join(result.sass.qualifying_families_found, ", ") + ")"
                        : "absent");
  }
  if (pipeline.sandboxed() && ::geteuid() == 0)
    PTXB_RETURN_IF_ERROR(chown_tree(dir, ::geteuid(), ::getegid()));
  // What a model reads: no host paths (as after a compile).
  LogSanitizerContext shown;
  shown.staging_dir = canonical_path(dir);
  shown.toolkit_dirs = toolkit_dirs(toolchain.info());
  shown.host_dirs = default_host_dirs();
  shown.host_dirs.push_back(options.cache_dir);
  shown.host_dirs.push_back(canonical_path(options.cache_dir));
  const std::string log = sanitize_compile_log(pipeline.log(), shown);
  result.log = cap_text(log, options.log_cap_bytes);
  result.log_truncated = log.size() > options.log_cap_bytes;
  result.message = trim(sanitize_compile_log(result.message, shown));
  PTXB_RETURN_IF_ERROR(hash_artifact_files(result.artifact));
  result.artifact.directory = cache.entry_dir(key);
  result.stage_ms = pipeline.stages();
  result.stage_ms.emplace_back("total", ms_since(pipeline.start()));
  PTXB_RETURN_IF_ERROR(
      write_file_atomic(dir + "/result.json", dump_pretty(compile_result_to_json(result))));
  PTXB_ASSIGN_OR_RETURN(bool ours, cache.publish(dir, key, replace_entry));
  staging_guard.release();
  if (!ours) {
    if (auto winner = cache.lookup(key)) return std::move(*winner);
    return make_error("io", "{}: cache entry vanished while publishing", cache.entry_dir(key));
  }
  return result;
}

}  // namespace

Result<CompileResult> compile_solution(const CompileRequest& request, const Toolchain& toolchain) {
  // The staging dir is removed by its guard while the exception unwinds.
  try {
    return compile_solution_impl(request, toolchain);
  } catch (const std::exception& e) {
    return make_error("internal", "compile_solution: {}", e.what());
  }
}

Result<CompileResult> analyse_prebuilt(const CompileRequest& request, const PrebuiltBinary& binary,
                                       const Toolchain& toolchain) {
  try {
    return analyse_prebuilt_impl(request, binary, toolchain);
  } catch (const std::exception& e) {
    return make_error("internal", "analyse_prebuilt: {}", e.what());
  }
}

}  // namespace ptxb
