#include "compile/forbidden.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <regex>
#include <set>

#include "core/fs.h"
#include "core/strings.h"
#include "core/symbol_names.h"

namespace ptxb {
namespace {

bool under(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  const std::string prefix = ends_with(dir, "/") ? dir : dir + "/";
  return starts_with(path, prefix);
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Libraries the benchmark exists to exclude, recognised by header or symbol name prefix so the
// evidence names the library rather than just "not allowed".
struct NamedLibrary {
  const char* prefix;
  const char* name;
};
constexpr NamedLibrary kHeaderLibraries[] = {
    {"cublas", "cuBLAS"}, {"nvblas", "cuBLAS"},       {"cudnn", "cuDNN"},
    {"cufft", "cuFFT"},   {"cusparse", "cuSPARSE"},   {"cusolver", "cuSOLVER"},
    {"nvrtc", "NVRTC"},   {"nvJitLink", "nvJitLink"}, {"curand", "cuRAND"},
    {"nccl", "NCCL"},     {"cupti", "CUPTI"},         {"nvvm", "NVVM"},
};

// Top-level headers of the toolkit include dir that belong to the CUDA runtime/driver API, the
// numeric types and the device intrinsics every kernel pulls in (design.md §3.2).
bool allowed_cuda_top_level(const std::string& name) {
  static const std::set<std::string> kNames = {"cuda.h",
                                               "cudaTypedefs.h",
                                               "cuda_runtime.h",
                                               "cuda_runtime_api.h",
                                               "builtin_types.h",
                                               "device_types.h",
                                               "driver_types.h",
                                               "driver_functions.h",
                                               "surface_types.h",
                                               "texture_types.h",
                                               "vector_types.h",
                                               "vector_functions.h",
                                               "vector_functions.hpp",
                                               "host_defines.h",
                                               "host_config.h",
                                               "channel_descriptor.h",
                                               "common_functions.h",
                                               "cuda_device_runtime_api.h",
                                               "library_types.h",
                                               "math_functions.h",
                                               "math_constants.h",
                                               "device_functions.h",
                                               "device_atomic_functions.h",
                                               "device_atomic_functions.hpp",
                                               "device_double_functions.h",
                                               "device_launch_parameters.h",
                                               "surface_indirect_functions.h",
                                               "texture_indirect_functions.h",
                                               "cuda_bf16.h",
                                               "cuda_bf16.hpp",
                                               "cuda_fp16.h",
                                               "cuda_fp16.hpp",
                                               "cuda_fp8.h",
                                               "cuda_fp8.hpp",
                                               "cuda_fp6.h",
                                               "cuda_fp6.hpp",
                                               "cuda_fp4.h",
                                               "cuda_fp4.hpp",
                                               "cuda_awbarrier.h",
                                               "cuda_awbarrier_helpers.h",
                                               "cuda_awbarrier_primitives.h",
                                               "cuda_pipeline.h",
                                               "cuda_pipeline_helpers.h",
                                               "cuda_pipeline_primitives.h",
                                               "cuda_stdint.h",
                                               "cuda_occupancy.h",
                                               "cudart_platform.h",
                                               "mma.h",
                                               "cooperative_groups.h"};
  if (kNames.count(name)) return true;
  // sm_20_atomic_functions.h, sm_61_intrinsics.hpp, ...: architecture intrinsics pulled in by
  // cuda_runtime.h.
  static const std::regex kSmHeaders(R"(sm_\d+_(atomic_functions|intrinsics)\.h(pp)?)");
  return std::regex_match(name, kSmHeaders);
}

bool allowed_system_header(const std::string& path) {
  // C and C++ standard library and the system C headers (glibc, kernel UAPI) that they include.
  static const std::regex kSystem(
      R"(^/usr/include/([^/]+|c\+\+/.*|(sys|bits|gnu|linux|asm|asm-generic)/.*|)"
      R"([a-z0-9_]+-linux-gnu/((c\+\+|sys|bits|gnu|asm)/.*|[^/]+))$)");
  static const std::regex kCompiler(R"(^/usr/lib/gcc/[^/]+/[^/]+/include/[^/]+$)");
  return std::regex_match(path, kSystem) || std::regex_match(path, kCompiler);
}

}  // namespace

std::string ForbiddenFinding::describe() const {
  if (kind == Kind::kDirective) return item + ": " + rule;
  if (kind == Kind::kSymbol) {
    const std::string shown =
        demangled.empty() || demangled == item ? item : item + " (" + demangled + ")";
    return "undefined symbol " + shown + ": " + rule;
  }
  std::string chain;
  for (const auto& includer : include_chain) chain += includer + " -> ";
  return "#include " + chain + item + ": " + rule;
}

Json forbidden_finding_to_json(const ForbiddenFinding& finding) {
  const char* kind = finding.kind == ForbiddenFinding::Kind::kHeader   ? "header"
                     : finding.kind == ForbiddenFinding::Kind::kSymbol ? "symbol"
                                                                       : "directive";
  return Json{{"kind", kind},
              {"item", finding.item},
              {"demangled", finding.demangled},
              {"rule", finding.rule},
              {"include_chain", finding.include_chain},
              {"evidence", finding.describe()}};
}

ForbiddenFinding forbidden_finding_from_json(const Json& json) {
  ForbiddenFinding finding;
  const std::string kind = json.value("kind", "header");
  finding.kind = kind == "symbol"      ? ForbiddenFinding::Kind::kSymbol
                 : kind == "directive" ? ForbiddenFinding::Kind::kDirective
                                       : ForbiddenFinding::Kind::kHeader;
  finding.item = json.value("item", "");
  finding.demangled = json.value("demangled", "");
  finding.rule = json.value("rule", "");
  finding.include_chain = json.value("include_chain", std::vector<std::string>{});
  return finding;
}

std::vector<IncludedFile> included_files_from_line_markers(
    const std::vector<std::string>& preprocessed_texts, const std::string& working_dir) {
  // GNU cpp line markers: `# LINE "FILE" FLAGS`; flag 1 = entering FILE (an #include), flag 2 =
  // returning to FILE. (cpp manual, "Preprocessor Output".)
  static const std::regex kMarker(R"re(^# \d+ "((?:[^"\\]|\\.)*)"((?: \d)*)\s*$)re");
  std::vector<IncludedFile> files;
  std::map<std::string, std::size_t> seen;
  std::map<std::string, std::string> resolved_cache;
  auto resolve = [&](const std::string& name) {
    auto found = resolved_cache.find(name);
    if (found != resolved_cache.end()) return found->second;
    const std::string absolute = starts_with(name, "/") ? name : working_dir + "/" + name;
    return resolved_cache[name] = canonical_path(absolute);
  };
  for (const auto& text : preprocessed_texts) {
    std::vector<std::string> stack;
    std::size_t position = 0;
    while (position < text.size()) {
      auto end = text.find('\n', position);
      if (end == std::string::npos) end = text.size();
      // Cheap test first: preprocessed output is megabytes, markers are a small fraction.
      if (text[position] == '#' && end - position > 4 && text[position + 1] == ' ') {
        const std::string line = text.substr(position, end - position);
        std::smatch match;
        if (std::regex_match(line, match, kMarker)) {
          const std::string name = replace_all(match[1].str(), "\\\\", "\\");
          const std::string flags = match[2];
          if (!name.empty()) {
            // <built-in> and <command-line> take part in the nesting (stdc-predef.h is
            // "included" from <command-line>) but are not files.
            const bool pseudo = name[0] == '<';
            const std::string path = pseudo ? name : resolve(name);
            if (contains(flags, "1")) {
              std::vector<std::string> chain;
              for (const auto& includer : stack)
                if (includer[0] != '<') chain.push_back(includer);
              if (!pseudo && !seen.count(path)) {
                seen[path] = files.size();
                files.push_back(IncludedFile{path, chain});
              }
              stack.push_back(path);
            } else if (contains(flags, "2")) {
              while (!stack.empty() && stack.back() != path) stack.pop_back();
              if (stack.empty()) stack.push_back(path);
            } else if (stack.empty() || (!pseudo && stack.size() == 1 && stack[0][0] == '<')) {
              stack.assign(1, path);  // the main file's marker (before or after the pseudo files)
              if (!pseudo && !seen.count(path)) {
                seen[path] = files.size();
                files.push_back(IncludedFile{path, {}});
              }
            }
          }
        }
      }
      position = end + 1;
    }
  }
  return files;
}

std::optional<std::string> header_denial(const std::string& path, const HeaderPolicy& policy) {
  if (path == policy.source_path) return std::nullopt;
  for (const auto& dir : policy.pack_include_dirs)
    if (under(path, dir)) return std::nullopt;
  if (contains(path, "/cutlass/") || contains(path, "/cute/")) return "CUTLASS/CuTe";
  const std::string name = basename_of(path);
  for (const auto& library : kHeaderLibraries)
    if (starts_with(name, library.prefix)) return std::string(library.name);

  if (under(path, policy.cuda_include_dir)) {
    const std::string relative = path.substr(policy.cuda_include_dir.size() +
                                             (ends_with(policy.cuda_include_dir, "/") ? 0 : 1));
    // CCCL ships libcu++ (cuda/, nv/), CUB and Thrust side by side: allow libcu++ and its
    // internals by directory, deny the CUB and Thrust subtrees.
    if (starts_with(relative, "cccl/cub/") || starts_with(relative, "cub/")) return "CUB";
    if (starts_with(relative, "cccl/thrust/") || starts_with(relative, "thrust/")) return "Thrust";
    if (starts_with(relative, "cccl/cuda/") || starts_with(relative, "cccl/nv/") ||
        starts_with(relative, "nv/") || starts_with(relative, "cuda/") ||
        starts_with(relative, "crt/") || starts_with(relative, "cooperative_groups/"))
      return std::nullopt;
    if (relative.find('/') == std::string::npos && allowed_cuda_top_level(relative))
      return std::nullopt;
    return "not in the header allow-list (CUDA toolkit header outside runtime/driver API, numeric "
           "types, "
           "cooperative groups and libcu++)";
  }
  if (allowed_system_header(path)) return std::nullopt;
  return "not in the header allow-list (only C/C++ standard and system C headers, the CUDA "
         "runtime/driver "
         "API, cuda_bf16/fp16/fp8, cooperative groups, libcu++ and the knowledge-pack wrappers)";
}

std::vector<ForbiddenFinding> check_headers(const std::vector<IncludedFile>& files,
                                            const HeaderPolicy& policy) {
  std::vector<ForbiddenFinding> findings;
  for (const auto& file : files) {
    auto denial = header_denial(file.path, policy);
    if (!denial) continue;
    // A forbidden header's own includes are noise: report only the outermost forbidden one of a
    // chain.
    bool nested = false;
    for (const auto& includer : file.include_chain)
      nested = nested || header_denial(includer, policy).has_value();
    if (nested) continue;
    ForbiddenFinding finding;
    finding.kind = ForbiddenFinding::Kind::kHeader;
    finding.item = file.path;
    finding.rule = *denial;
    for (const auto& includer : file.include_chain)
      finding.include_chain.push_back(includer == policy.source_path ? basename_of(includer)
                                                                     : includer);
    findings.push_back(std::move(finding));
  }
  return findings;
}

namespace {

// `source` with comments replaced by spaces (newlines kept, so line numbers stay). String and
// character literals are kept, raw strings included: asm() text lives in them.
std::string strip_comments(std::string_view source) {
  std::string out(source);
  std::size_t i = 0;
  const std::size_t n = source.size();
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < n; ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < n) {
    const char c = source[i];
    if (c == '/' && i + 1 < n && source[i + 1] == '/') {
      std::size_t end = source.find('\n', i);
      if (end == std::string_view::npos) end = n;
      blank(i, end);
      i = end;
    } else if (c == '/' && i + 1 < n && source[i + 1] == '*') {
      std::size_t end = source.find("*/", i + 2);
      end = end == std::string_view::npos ? n : end + 2;
      blank(i, end);
      i = end;
    } else if (c == 'R' && i + 1 < n && source[i + 1] == '"' &&
               (i == 0 ||
                !(std::isalnum(static_cast<unsigned char>(source[i - 1])) ||
                  source[i - 1] == '_') ||
                source[i - 1] == 'u' || source[i - 1] == 'U' || source[i - 1] == 'L' ||
                source[i - 1] == '8')) {
      const std::size_t open = source.find('(', i + 2);
      if (open == std::string_view::npos) break;
      const std::string close = ")" + std::string(source.substr(i + 2, open - i - 2)) + "\"";
      const std::size_t end = source.find(close, open);
      i = end == std::string_view::npos ? n : end + close.size();
    } else if (c == '"' || c == '\'') {
      std::size_t k = i + 1;
      while (k < n && source[k] != c && source[k] != '\n') k += source[k] == '\\' ? 2 : 1;
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

bool reaches_outside(const std::string& path) {
  if (starts_with(path, "/")) return true;
  for (const auto& part : split(path, '/'))
    if (part == "..") return true;
  return false;
}

}  // namespace

std::vector<ForbiddenFinding> check_file_directives(std::string_view source,
                                                    const std::string& source_name) {
  static const std::regex kInclude(R"(^\s*#\s*(include_next|include|import|embed)\b\s*(.*)$)");
  static const std::regex kOperand(R"re(^\s*(?:"([^"]*)"|<([^>]*)>))re");
  static const std::regex kHasInclude(
      R"re(__has_include(_next)?\s*\(\s*(?:"([^"]*)"|<([^>]*)>)?)re");
  // A directive starts a line or statement of the asm text: after a non-name character or an
  // escaped newline/tab ("...\\n.incbin ...").
  static const std::regex kAsmFile(R"((^|[^A-Za-z0-9_$.]|\\[nt])\.(incbin|include)\b(?!\s*\())");
  std::vector<ForbiddenFinding> findings;
  const std::string text = strip_comments(source);
  auto add = [&](int line, const std::string& directive, const std::string& rule) {
    ForbiddenFinding finding;
    finding.kind = ForbiddenFinding::Kind::kDirective;
    std::string shown = trim(directive);
    if (shown.size() > 120) shown = shown.substr(0, 117) + "...";
    finding.item = fmt::format("{}:{}: {}", source_name, line, shown);
    finding.rule = rule;
    findings.push_back(std::move(finding));
  };
  int number = 0;
  for (const auto& line : split_lines(text)) {
    ++number;
    std::smatch match;
    if (std::regex_match(line, match, kInclude)) {
      const std::string keyword = match[1];
      std::smatch operand;
      const std::string rest = match[2];
      if (keyword == "include_next") {
        add(number, "#" + keyword + " " + rest,
            "#include_next searches the include path past the candidate's own headers");
      } else if (keyword == "embed") {
        add(number, "#embed " + rest, "#embed reads a file into the program");
      } else if (std::regex_search(rest, operand, kOperand)) {
        const std::string path = operand[1].matched ? operand[1].str() : operand[2].str();
        if (reaches_outside(path))
          add(number, "#" + keyword + " " + rest,
              "#" + keyword + " of a path outside the compile view (absolute or with ..)");
      }
    }
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kHasInclude);
         it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      const std::string path = m[2].matched ? m[2].str() : m[3].str();
      if (m[1].matched)
        add(number, m.str(0), "__has_include_next searches the include path past the candidate");
      else if (reaches_outside(path))
        add(number, m.str(0), "__has_include of a path outside the compile view");
    }
    if (std::regex_search(line, match, kAsmFile)) {
      const std::string directive = "." + match[2].str();
      add(number, line.substr(static_cast<std::size_t>(match.position(2)) - 1),
          "assembler " + directive +
              " reads a file at compile time (the candidate is one source file; it has nothing "
              "to " +
              (directive == ".incbin" ? "embed" : "include") + ")");
    }
  }
  return findings;
}

std::optional<std::string> symbol_denial(const std::string& raw_name) {
  const std::string name = raw_name.substr(0, raw_name.find('@'));
  const std::string demangled = demangle_symbol(name);
  // The function name without namespace/arguments, for the library and family checks.
  std::string function = demangled.substr(0, demangled.find('('));
  if (const auto colon = function.rfind("::"); colon != std::string::npos)
    function = function.substr(colon + 2);

  static const std::vector<std::pair<std::string, std::string>> kDeniedPrefixes = {
      {"cublas", "cuBLAS"},
      {"cudnn", "cuDNN"},
      {"nvrtc", "NVRTC"},
      {"nvJitLink", "nvJitLink"},
      {"cufft", "cuFFT"},
      {"cusparse", "cuSPARSE"},
      {"cusolver", "cuSOLVER"},
      {"curand", "cuRAND"},
      {"nccl", "NCCL"},
      {"cuModuleLoad", "runtime module loading"},
      {"cuLibraryLoad", "runtime module loading"},
      {"cudaLibraryLoad", "runtime module loading"},
      {"cuLink", "runtime linking (nvJitLink/cuLink)"},
      {"dlopen", "dynamic loading"},
      {"dlmopen", "dynamic loading"},
      {"dlsym", "dynamic loading"},
      {"dlvsym", "dynamic loading"},
      {"posix_spawn", "process spawning"}};
  for (const auto& [prefix, reason] : kDeniedPrefixes)
    if (starts_with(function, prefix)) return reason;
  static const std::map<std::string, std::string> kDeniedNames = {
      {"fork", "process spawning"},      {"vfork", "process spawning"},
      {"clone", "process spawning"},     {"system", "process spawning"},
      {"popen", "process spawning"},     {"socket", "network access"},
      {"connect", "network access"},     {"bind", "network access"},
      {"listen", "network access"},      {"accept", "network access"},
      {"getaddrinfo", "network access"}, {"dlclose", "dynamic loading"},
      {"dlerror", "dynamic loading"},    {"ptrace", "process control"},
      {"execl", "process spawning"},     {"execlp", "process spawning"},
      {"execle", "process spawning"},    {"execv", "process spawning"},
      {"execvp", "process spawning"},    {"execvpe", "process spawning"},
      {"execve", "process spawning"},    {"fexecve", "process spawning"}};
  if (auto found = kDeniedNames.find(function); found != kDeniedNames.end()) return found->second;

  // Allowed: the CUDA runtime (cuda*, and the __cuda* registration calls nvcc generates) and the
  // driver API (cu + upper case: cuTensorMapEncodeTiled, cuLaunchKernelEx, ...).
  if (starts_with(name, "cuda") || starts_with(name, "__cuda")) return std::nullopt;
  if (name.size() > 2 && starts_with(name, "cu") &&
      std::isupper(static_cast<unsigned char>(name[2])))
    return std::nullopt;
  // libstdc++: anything in namespace std / the ABI runtime, and operator new/delete.
  if (starts_with(name, "_Z")) {
    // Template instantiations demangle with their return type first ("void std::vector<...>::...").
    const auto space = demangled.find(' ');
    const std::string after_return_type =
        space == std::string::npos ? "" : demangled.substr(space + 1);
    for (const char* prefix :
         {"std::", "operator new", "operator delete", "__cxxabiv1::", "__gnu_cxx::",
          "typeinfo for std::", "typeinfo for __cxxabiv1::", "vtable for std::",
          "vtable for __cxxabiv1::", "typeinfo name for std::", "VTT for std::"})
      if (starts_with(demangled, prefix) || starts_with(after_return_type, prefix))
        return std::nullopt;
  }
  // The libc / C++ runtime subset a kernel's host code and nvcc's generated code need.
  static const std::set<std::string> kLibc = {
      // toolchain-generated and C++ runtime support
      "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable", "__gmon_start__",
      "__cxa_finalize", "__cxa_atexit", "__cxa_guard_acquire", "__cxa_guard_release",
      "__cxa_guard_abort", "__gxx_personality_v0", "_Unwind_Resume", "__cxa_begin_catch",
      "__cxa_end_catch", "__cxa_rethrow", "__cxa_throw", "__cxa_allocate_exception",
      "__cxa_free_exception", "__cxa_pure_virtual", "__cxa_thread_atexit_impl", "__tls_get_addr",
      "__stack_chk_fail", "__errno_location", "__assert_fail", "abort", "exit", "atexit",
      // glibc's flag that libstdc++ reads inline (std::shared_ptr reference counts)
      "__libc_single_threaded",
      // memory and strings
      "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memalign",
      "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp",
      "strcpy", "strncpy", "strcat", "strncat", "strchr", "strrchr", "strstr", "strdup", "strerror",
      "__memcpy_chk", "__memset_chk", "__memmove_chk", "__strcpy_chk", "__strcat_chk",
      // formatted output to the runner's log
      "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsnprintf", "puts",
      "fputs", "fputc", "putchar", "putc", "fwrite", "fflush", "stdout", "stderr", "__printf_chk",
      "__fprintf_chk", "__sprintf_chk", "__snprintf_chk", "__vsnprintf_chk", "__vfprintf_chk",
      // numbers and time
      "strtol", "strtoll", "strtoul", "strtoull", "strtod", "strtof", "atoi", "atol", "atof",
      // the same with glibc >= 2.38 headers and g++ >= 13 (_GNU_SOURCE selects the C23
      // versions; std::stoull in a kernel built on the H200 machine imports these)
      "__isoc23_strtol", "__isoc23_strtoll", "__isoc23_strtoul", "__isoc23_strtoull", "qsort",
      "bsearch", "rand", "srand", "clock", "time", "clock_gettime", "gettimeofday", "getenv",
      // sleeping and yielding (std::this_thread::sleep_for/yield inline these): harmless, the
      // host timeline is not what is timed
      "nanosleep", "clock_nanosleep", "sched_yield",
      // threads (std::mutex, std::call_once, static initialisation)
      "pthread_once", "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_key_create",
      "pthread_getspecific", "pthread_setspecific",
      // libm
      "sqrt", "sqrtf", "exp", "expf", "exp2", "exp2f", "log", "logf", "log2", "log2f", "pow",
      "powf", "fabs", "fabsf", "ceil", "ceilf", "floor", "floorf", "fmax", "fmaxf", "fmin", "fminf",
      "fmod", "fmodf", "round", "roundf", "tanh", "tanhf", "erf", "erff", "sin", "sinf", "cos",
      "cosf", "ldexp", "ldexpf", "frexp"};
  if (kLibc.count(name)) return std::nullopt;
  return "not in the symbol allow-list (libc/libstdc++ subset, CUDA runtime, CUDA driver API)";
}

std::vector<ForbiddenFinding> check_undefined_symbols(const std::vector<std::string>& undefined) {
  std::vector<ForbiddenFinding> findings;
  for (const auto& name : undefined) {
    auto denial = symbol_denial(name);
    if (!denial) continue;
    ForbiddenFinding finding;
    finding.kind = ForbiddenFinding::Kind::kSymbol;
    finding.item = name;
    finding.demangled = demangle_symbol(name);
    finding.rule = *denial;
    findings.push_back(std::move(finding));
  }
  return findings;
}

}  // namespace ptxb
