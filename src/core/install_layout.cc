#include "core/install_layout.h"

#include <unistd.h>

#include <cstdlib>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

std::string env_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

struct Candidate {
  std::string path;
  std::string how;
};

// The first candidate holding `marker`; else an error listing every candidate. An explicit
// variable (the first candidate when `explicit_variable` is set) is the only one searched.
Result<FoundDir> first_with(const std::string& what, const std::string& marker,
                            const char* variable, const std::vector<Candidate>& candidates) {
  std::vector<std::string> searched;
  const std::string from_env = env_value(variable);
  if (!from_env.empty()) {
    if (path_exists(from_env + "/" + marker)) return FoundDir{canonical_path(from_env), variable};
    return make_error("install", "{}={}: not a PTXBench {} folder (no {} in it)", variable,
                      from_env, what, marker);
  }
  searched.push_back(fmt::format("${} (unset)", variable));
  for (const auto& c : candidates) {
    if (c.path.empty()) continue;
    if (path_exists(c.path + "/" + marker)) return FoundDir{canonical_path(c.path), c.how};
    searched.push_back(fmt::format("{} ({})", c.path, c.how));
  }
  return make_error("install",
                    "PTXBench's {} folder was not found (looked for {} in: {}); set {} to the "
                    "folder, or run an installed copy (cmake --install)",
                    what, marker, join(searched, ", "), variable);
}

Json found_to_json(const Result<FoundDir>& found) {
  if (!found.ok()) return Json{{"error", found.error().message}};
  return Json{{"path", found->path}, {"how", found->how}};
}

}  // namespace

std::string executable_dir() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  std::string path(buffer, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

Result<FoundDir> find_data_dir() {
  const std::string exe = executable_dir();
  std::vector<Candidate> candidates;
  if (!exe.empty()) {
    candidates.push_back({exe + "/../share/ptxbench", "next to the executable"});
    // The helpers (ptxbench-supervisor loads the task registry) live in libexec/ptxbench.
    if (ends_with(exe, "/libexec/ptxbench"))
      candidates.push_back({exe + "/../../share/ptxbench", "next to the helper executable"});
  }
  candidates.push_back({developer_source_dir(), "source tree (developer build)"});
  return first_with("data", "tasks/tasks.json", "PTXBENCH_DATA_DIR", candidates);
}

Result<std::string> data_subdir(const std::string& name) {
  PTXB_ASSIGN_OR_RETURN(FoundDir dir, find_data_dir());
  return dir.path + "/" + name;
}

Result<FoundDir> find_helpers_dir() {
  const std::string exe = executable_dir();
  std::vector<Candidate> candidates;
  if (!exe.empty()) {
    candidates.push_back({exe, "the executable's folder (build tree)"});
    candidates.push_back({exe + "/../libexec/ptxbench", "next to the executable"});
  }
  return first_with("helper", "ptxbench-sandbox", "PTXBENCH_LIBEXEC_DIR", candidates);
}

std::string cuda_root() {
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string value = env_value(variable); !value.empty()) return value;
  return configured_cuda_root();
}

std::vector<std::string> bundled_tool_dirs() {
  std::vector<std::string> dirs;
  if (auto helpers = find_helpers_dir(); helpers.ok()) dirs.push_back(helpers->path + "/tools");
  if (*developer_pydeps_dir() != '\0')
    dirs.push_back(std::string(developer_pydeps_dir()) + "/nvidia/cu13/bin");
  return dirs;
}

Json install_layout_to_json() {
  std::string cuda_from = "configured default";
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (!env_value(variable).empty()) {
      cuda_from = std::string("$") + variable;
      break;
    }
  return Json{{"data", found_to_json(find_data_dir())},
              {"helpers", found_to_json(find_helpers_dir())},
              {"cuda_root", Json{{"path", cuda_root()}, {"how", cuda_from}}},
              {"tool_dirs", bundled_tool_dirs()},
              {"developer_build", *developer_source_dir() != '\0'}};
}

}  // namespace ptxb
