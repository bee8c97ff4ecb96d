#include "sandbox/sandbox_report.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/process.h"
#include "core/strings.h"

namespace ptxb {
namespace {

// "Key:\tvalue" lines of /proc/self/status.
std::string status_field(const std::string& status, const std::string& key) {
  for (const auto& line : split_lines(status))
    if (starts_with(line, key + ":")) return trim(line.substr(key.size() + 1));
  return "";
}

std::string read_or_empty(const char* path) {
  auto text = read_proc_file(path);
  return text.ok() ? *text : std::string();
}

}  // namespace

Json namespace_ids() {
  Json ids = Json::object();
  for (const char* kind : {"mnt", "net", "ipc", "user", "pid"}) {
    char target[128] = {};
    const std::string link = std::string("/proc/self/ns/") + kind;
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    ids[kind] = n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
  }
  return ids;
}

Json sandbox_self_report(const std::string& scratch_dir) {
  Json report = Json::object();
  const std::string status = read_or_empty("/proc/self/status");
  for (const char* key : {"Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                          "NoNewPrivs", "Seccomp", "Seccomp_filters"})
    report[key] = status_field(status, key);
  report["no_new_privs"] = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  report["namespaces"] = namespace_ids();
  struct statvfs root {};
  report["root_read_only"] = ::statvfs("/", &root) == 0 && (root.f_flag & ST_RDONLY) != 0;
  bool writable = false;
  if (!scratch_dir.empty()) {
    const std::string probe = scratch_dir + "/.ptxbench-sandbox-probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      writable = ::write(fd, "x", 1) == 1;
      ::close(fd);
      ::unlink(probe.c_str());
    }
  }
  report["scratch_dir"] = scratch_dir;
  report["scratch_writable"] = writable;
  Json interfaces = Json::array();
  const std::string dev = read_or_empty("/proc/net/dev");
  for (const auto& line : split_lines(dev)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    interfaces.push_back(trim(line.substr(0, colon)));
  }
  report["network_interfaces"] = interfaces;
  Json names = Json::array();
  for (const auto& entry : current_environment()) names.push_back(entry.substr(0, entry.find('=')));
  report["environment_names"] = names;
  return report;
}

Status check_sandbox_report(const Json& report, const Json& host_namespaces, bool network_namespace,
                            bool ipc_namespace) {
  std::vector<std::string> missing;
  auto text = [&](const char* key) { return report.value(key, std::string()); };
  // "Uid:\treal effective saved fs"
  for (const auto& id : split(replace_all(text("Uid"), "\t", " "), ' '))
    if (id == "0") {
      missing.push_back("runs as uid 0");
      break;
    }
  for (const char* set : {"CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"})
    if (text(set).find_first_not_of('0') != std::string::npos)
      missing.push_back(fmt::format("{} is {}, not empty", set, text(set)));
  if (report.value("no_new_privs", 0) != 1) missing.push_back("no_new_privs is off");
  if (text("Seccomp") != "2")
    missing.push_back("no seccomp filter (Seccomp: " + text("Seccomp") + ")");
  if (!report.value("root_read_only", false)) missing.push_back("/ is writable");
  if (!report.value("scratch_writable", false))
    missing.push_back("the scratch directory is not writable");
  const Json ns = report.value("namespaces", Json::object());
  auto same = [&](const char* kind) {
    return ns.value(kind, std::string()) == host_namespaces.value(kind, std::string("?"));
  };
  if (same("mnt")) missing.push_back("no mount namespace");
  if (network_namespace && same("net")) missing.push_back("no network namespace");
  if (ipc_namespace && same("ipc")) missing.push_back("no IPC namespace");
  if (network_namespace)
    for (const auto& name : report.value("network_interfaces", Json::array()))
      if (name.get<std::string>() != "lo") {
        missing.push_back("network interface " + name.get<std::string>() + " is visible");
        break;
      }
  if (!missing.empty())
    return make_error("sandbox", "sandbox self-check failed: {}", join(missing, "; "));
  return ok_status();
}

}  // namespace ptxb
