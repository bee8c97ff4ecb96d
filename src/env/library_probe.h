// Versions of the frontier libraries the references use, as actually loaded on this machine.
// design.md §6: every trace records the versions loaded, not the ones compiled against, because a
// system cuDNN and a framework's private cuDNN often differ (the H200 has 9.14 system-wide and
// 9.19 inside the PyTorch environment).
#pragma once

#include <string>

#include "core/json_io.h"

namespace ptxb {

struct LibraryInfo {
  std::string name;  // "cublasLt", "cudnn"
  bool found = false;
  std::string path;  // resolved file the dynamic loader picked
  long version = 0;  // cublasLtGetVersion() / cudnnGetVersion()
  std::string version_text;
  std::string problem;  // why it could not be loaded
  Json to_json() const;
};

LibraryInfo probe_cublaslt();
LibraryInfo probe_cudnn();

}  // namespace ptxb
