#include "sandbox/sandbox_policy.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

template <typename T>
Status read_field(const Json& json, const char* key, T& out) {
  if (!json.contains(key)) return ok_status();
  try {
    out = json.at(key).get<T>();
  } catch (const std::exception& e) {
    return make_error("parse", "sandbox policy: field \"{}\": {}", key, e.what());
  }
  return ok_status();
}

bool name_allowed(std::string_view name, const std::vector<std::string>& allow) {
  for (const auto& pattern : allow) {
    if (!pattern.empty() && pattern.back() == '*') {
      if (starts_with(name, std::string_view(pattern).substr(0, pattern.size() - 1))) return true;
    } else if (name == pattern) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> SandboxPolicy::default_env_allow() {
  // What a CUDA program needs to find its libraries and its GPU, and nothing else. CUDA_* keeps
  // the runtime's own switches (CUDA_VISIBLE_DEVICES, CUDA_MODULE_LOADING, ...). The NVLS
  // variables keep NVLink multicast off on multi-GPU hosts, where turning it on can take the
  // host's GPUs down (the device machines' notes ask every program's environment to keep them).
  return {"PATH",
          "LD_LIBRARY_PATH",
          "LANG",
          "LC_ALL",
          "TZ",
          "CUDA_*",
          "NCCL_NVLS_ENABLE",
          "TORCH_SYMM_MEM_DISABLE_MULTICAST",
          "NVSHMEM_DISABLE_NVLS"};
}

std::string_view seccomp_profile_name(SeccompProfile profile) {
  switch (profile) {
    case SeccompProfile::kRunner:
      return "runner";
    case SeccompProfile::kProfiler:
      return "profiler";
    case SeccompProfile::kCompiler:
      break;
  }
  return "compiler";
}

bool looks_like_credential(std::string_view name) {
  const std::string upper = [&] {
    std::string s(name);
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }();
  static constexpr std::array<std::string_view, 9> kMarkers = {
      "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"};
  for (auto marker : kMarkers)
    if (upper.find(marker) != std::string::npos) return true;
  return false;
}

Json SandboxPolicy::to_json() const {
  return Json{{"scratch_dir", scratch_dir},
              {"scratch_bytes", scratch_bytes},
              {"scratch_tmpfs", scratch_tmpfs},
              {"working_dir", working_dir},
              {"view", view},
              {"view_read_only", view_read_only},
              {"view_proc", view_proc},
              {"address_space_bytes", address_space_bytes},
              {"uid", uid},
              {"gid", gid},
              {"network_namespace", network_namespace},
              {"loopback_up", loopback_up},
              {"ipc_namespace", ipc_namespace},
              {"private_tmp", private_tmp},
              {"tmp_bytes", tmp_bytes},
              {"private_dev_shm", private_dev_shm},
              {"dev_shm_bytes", dev_shm_bytes},
              {"hidden_files", hidden_files},
              {"seccomp", std::string(seccomp_profile_name(seccomp))},
              {"cpu_seconds", cpu_seconds},
              {"file_size_bytes", file_size_bytes},
              {"max_processes", max_processes},
              {"cgroup_dir", cgroup_dir},
              {"keep_fds", keep_fds},
              {"pinned_fd", pinned_fd},
              {"env_allow", env_allow},
              {"set_env", set_env}};
}

Result<SandboxPolicy> SandboxPolicy::from_json(const Json& json) {
  if (!json.is_object()) return make_error("parse", "sandbox policy: expected a JSON object");
  SandboxPolicy p;
  PTXB_RETURN_IF_ERROR(read_field(json, "scratch_dir", p.scratch_dir));
  PTXB_RETURN_IF_ERROR(read_field(json, "scratch_bytes", p.scratch_bytes));
  PTXB_RETURN_IF_ERROR(read_field(json, "scratch_tmpfs", p.scratch_tmpfs));
  PTXB_RETURN_IF_ERROR(read_field(json, "working_dir", p.working_dir));
  PTXB_RETURN_IF_ERROR(read_field(json, "view", p.view));
  PTXB_RETURN_IF_ERROR(read_field(json, "view_read_only", p.view_read_only));
  PTXB_RETURN_IF_ERROR(read_field(json, "view_proc", p.view_proc));
  PTXB_RETURN_IF_ERROR(read_field(json, "address_space_bytes", p.address_space_bytes));
  PTXB_RETURN_IF_ERROR(read_field(json, "uid", p.uid));
  PTXB_RETURN_IF_ERROR(read_field(json, "gid", p.gid));
  PTXB_RETURN_IF_ERROR(read_field(json, "network_namespace", p.network_namespace));
  PTXB_RETURN_IF_ERROR(read_field(json, "loopback_up", p.loopback_up));
  PTXB_RETURN_IF_ERROR(read_field(json, "ipc_namespace", p.ipc_namespace));
  PTXB_RETURN_IF_ERROR(read_field(json, "private_tmp", p.private_tmp));
  PTXB_RETURN_IF_ERROR(read_field(json, "tmp_bytes", p.tmp_bytes));
  PTXB_RETURN_IF_ERROR(read_field(json, "private_dev_shm", p.private_dev_shm));
  PTXB_RETURN_IF_ERROR(read_field(json, "dev_shm_bytes", p.dev_shm_bytes));
  PTXB_RETURN_IF_ERROR(read_field(json, "hidden_files", p.hidden_files));
  PTXB_RETURN_IF_ERROR(read_field(json, "cpu_seconds", p.cpu_seconds));
  PTXB_RETURN_IF_ERROR(read_field(json, "file_size_bytes", p.file_size_bytes));
  PTXB_RETURN_IF_ERROR(read_field(json, "max_processes", p.max_processes));
  PTXB_RETURN_IF_ERROR(read_field(json, "cgroup_dir", p.cgroup_dir));
  PTXB_RETURN_IF_ERROR(read_field(json, "keep_fds", p.keep_fds));
  PTXB_RETURN_IF_ERROR(read_field(json, "pinned_fd", p.pinned_fd));
  PTXB_RETURN_IF_ERROR(read_field(json, "env_allow", p.env_allow));
  PTXB_RETURN_IF_ERROR(read_field(json, "set_env", p.set_env));
  std::string profile = "runner";
  PTXB_RETURN_IF_ERROR(read_field(json, "seccomp", profile));
  if (profile == "runner") {
    p.seccomp = SeccompProfile::kRunner;
  } else if (profile == "profiler") {
    p.seccomp = SeccompProfile::kProfiler;
  } else if (profile == "compiler") {
    p.seccomp = SeccompProfile::kCompiler;
  } else {
    return make_error("parse", "sandbox policy: seccomp \"{}\" is not runner, profiler or compiler",
                      profile);
  }
  if (p.scratch_dir.empty() || p.scratch_dir.front() != '/')
    return make_error("parse", "sandbox policy: scratch_dir must be an absolute path");
  for (const auto& path : p.view_read_only)
    if (path.empty() || path.front() != '/')
      return make_error("parse", "sandbox policy: view path \"{}\" is not an absolute path", path);
  if (!p.working_dir.empty() && p.working_dir != p.scratch_dir &&
      !starts_with(p.working_dir, p.scratch_dir + "/"))
    return make_error("parse", "sandbox policy: working_dir must be scratch_dir or below it");
  for (const auto& path : p.hidden_files)
    if (path.empty() || path.front() != '/')
      return make_error("parse", "sandbox policy: hidden file \"{}\" is not an absolute path",
                        path);
  for (const auto& entry : p.set_env)
    if (entry.find('=') == std::string::npos || entry.front() == '=')
      return make_error("parse", "sandbox policy: set_env entry \"{}\" is not KEY=VALUE", entry);
  for (int fd : p.keep_fds)
    if (fd < 0) return make_error("parse", "sandbox policy: keep_fds holds {}", fd);
  if (p.pinned_fd != -1) {
    if (std::find(p.keep_fds.begin(), p.keep_fds.end(), p.pinned_fd) == p.keep_fds.end())
      return make_error("parse", "sandbox policy: pinned_fd {} is not in keep_fds", p.pinned_fd);
    if (p.seccomp != SeccompProfile::kRunner)
      return make_error("parse", "sandbox policy: pinned_fd needs the runner seccomp profile");
  }
  if (p.cpu_seconds == 0 || p.max_processes == 0 || p.file_size_bytes == 0)
    return make_error("parse", "sandbox policy: resource limits must be positive");
  return p;
}

std::vector<std::string> sandbox_environment(const SandboxPolicy& policy,
                                             const std::vector<std::string>& environment) {
  std::vector<std::string> out;
  for (const auto& entry : environment) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string_view name(entry.data(), eq);
    // The policy's own variables come last and win; a stale copy would only confuse readers.
    if (name == "HOME" || name == "TMPDIR" || name == "CUDA_CACHE_PATH") continue;
    if (looks_like_credential(name) || !name_allowed(name, policy.env_allow)) continue;
    out.push_back(entry);
  }
  for (const char* name : {"HOME", "TMPDIR", "CUDA_CACHE_PATH"})
    out.push_back(std::string(name) + "=" + policy.scratch_dir);
  for (const auto& entry : policy.set_env) {
    const std::string prefix = entry.substr(0, entry.find('=') + 1);
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const std::string& e) { return starts_with(e, prefix); }),
              out.end());
    out.push_back(entry);
  }
  return out;
}

std::vector<std::string> sandbox_command(const std::string& launcher_path,
                                         const SandboxPolicy& policy,
                                         const std::vector<std::string>& program_argv) {
  std::vector<std::string> argv = {launcher_path, "--policy-json", policy.to_json().dump(), "--"};
  argv.insert(argv.end(), program_argv.begin(), program_argv.end());
  return argv;
}

std::vector<std::string> forbidden_library_files(const std::vector<std::string>& dirs) {
  static constexpr std::array<std::string_view, 9> kPrefixes = {
      "libcublas", "libcublasLt", "libcudnn",    "libnvrtc", "libnvJitLink",
      "libcufft",  "libcusparse", "libcusolver", "libcurand"};
  std::vector<std::string> files;
  for (const auto& dir : dirs) {
    if (dir.empty() || dir.front() != '/') continue;
    DIR* handle = ::opendir(dir.c_str());
    if (handle == nullptr) continue;
    while (const dirent* entry = ::readdir(handle)) {
      const std::string_view name = entry->d_name;
      if (std::none_of(kPrefixes.begin(), kPrefixes.end(),
                       [&](std::string_view prefix) { return starts_with(name, prefix); }))
        continue;
      // Symlinks (libcublas.so -> libcublas.so.13 -> ...) are resolved: the file they end at is
      // the one to hide, wherever it lives.
      const std::string real = canonical_path(dir + "/" + std::string(name));
      struct stat info {};
      if (::stat(real.c_str(), &info) == 0 && S_ISREG(info.st_mode)) files.push_back(real);
    }
    ::closedir(handle);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

}  // namespace ptxb
