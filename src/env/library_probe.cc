#include "env/library_probe.h"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>

namespace ptxb {
namespace {

// Loads a trusted system library and calls its `long f(void)` / `size_t f(void)` version query.
LibraryInfo probe(const std::string& name, const std::vector<std::string>& sonames,
                  const char* version_symbol) {
  LibraryInfo info;
  info.name = name;
  void* handle = nullptr;
  std::string errors;
  for (const auto& soname : sonames) {
    handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) break;
    const char* message = ::dlerror();
    if (!errors.empty()) errors += "; ";
    errors += message ? message : soname;
  }
  if (!handle) {
    info.problem = errors;
    return info;
  }
  info.found = true;
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) info.path = map->l_name;
  using VersionFn = std::size_t (*)();
  if (auto fn = reinterpret_cast<VersionFn>(::dlsym(handle, version_symbol))) {
    info.version = static_cast<long>(fn());
  } else {
    info.problem = fmt::format("{} not found in {}", version_symbol, info.path);
  }
  return info;
}

}  // namespace

LibraryInfo probe_cublaslt() {
  LibraryInfo info =
      probe("cublasLt", {"libcublasLt.so.13", "libcublasLt.so"}, "cublasLtGetVersion");
  // cublasLtGetVersion() encodes major*10000 + minor*100 + patch.
  if (info.version)
    info.version_text =
        fmt::format("{}.{}.{}", info.version / 10000, info.version / 100 % 100, info.version % 100);
  return info;
}

LibraryInfo probe_cudnn() {
  LibraryInfo info = probe("cudnn", {"libcudnn.so.9", "libcudnn.so"}, "cudnnGetVersion");
  // cuDNN 9: CUDNN_VERSION = major*10000 + minor*100 + patch (cudnn_version.h).
  if (info.version)
    info.version_text =
        fmt::format("{}.{}.{}", info.version / 10000, info.version / 100 % 100, info.version % 100);
  return info;
}

Json LibraryInfo::to_json() const {
  Json out = Json::object();
  out["name"] = name;
  out["found"] = found;
  out["path"] = path.empty() ? Json(nullptr) : Json(path);
  out["version"] = version_text.empty() ? Json(nullptr) : Json(version_text);
  if (!problem.empty()) out["problem"] = problem;
  return out;
}

}  // namespace ptxb
