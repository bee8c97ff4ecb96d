#include "runner/module_watch.h"

#include <algorithm>

#include "core/sha256.h"
#include "cuda/cuda_check.h"

namespace ptxb {

ModuleWatch& ModuleWatch::instance() {
  static ModuleWatch watch;
  return watch;
}

Status ModuleWatch::start() {
  if (subscriber_ != nullptr) return ok_status();
  main_thread_ = std::this_thread::get_id();
  PTXB_CUPTI_CHECK(cuptiSubscribe(&subscriber_, &ModuleWatch::on_callback, this));
  PTXB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                       CUPTI_CBID_RESOURCE_MODULE_LOADED));
  return ok_status();
}

void ModuleWatch::set_expected(std::vector<std::string> sha256_hex) {
  std::lock_guard<std::mutex> lock(mutex_);
  expected_ = std::move(sha256_hex);
  for (auto& module : modules_) {  // modules loaded before the list arrived are re-judged
    if (module.origin != "candidate") continue;
    if (expected_.empty()) {
      module.expected.reset();
    } else {
      module.expected =
          std::find(expected_.begin(), expected_.end(), module.sha256) != expected_.end();
    }
  }
}

void CUPTIAPI ModuleWatch::on_callback(void* userdata, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId id, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || id != CUPTI_CBID_RESOURCE_MODULE_LOADED ||
      data == nullptr)
    return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
  if (module == nullptr) return;
  // The cubin pointer is valid only during the callback (cupti_callbacks.h): hash it now.
  static_cast<ModuleWatch*>(userdata)->record(module->moduleId, module->pCubin, module->cubinSize);
}

void ModuleWatch::record(std::uint32_t module_id, const char* cubin, std::size_t bytes) {
  ModuleInfo info;
  info.module_id = module_id;
  info.bytes = bytes;
  info.sha256 =
      cubin != nullptr ? Sha256().update(cubin, bytes).hex_digest() : std::string(64, '0');
  const bool on_main_thread = std::this_thread::get_id() == main_thread_;
  info.origin = (on_main_thread && !in_candidate_.load()) ? "runner" : "candidate";
  std::lock_guard<std::mutex> lock(mutex_);
  if (info.origin == "candidate" && !expected_.empty()) {
    info.expected = std::find(expected_.begin(), expected_.end(), info.sha256) != expected_.end();
  }
  modules_.push_back(std::move(info));
}

std::vector<ModuleInfo> ModuleWatch::take_new() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ModuleInfo> out(modules_.begin() + static_cast<std::ptrdiff_t>(taken_),
                              modules_.end());
  taken_ = modules_.size();
  return out;
}

std::vector<ModuleInfo> ModuleWatch::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return modules_;
}

}  // namespace ptxb
