#include "protocol/param_layout.h"

#include <cctype>

#include "core/strings.h"

namespace ptxb {

std::size_t abi_value_bytes(const std::string& type) {
  // The by-value types of the solution ABI (design.md §3.2) and their sizes on x86-64/aarch64.
  if (type == "int64_t" || type == "double") return 8;
  if (type == "int32_t" || type == "float") return 4;
  if (type == "__nv_bfloat16" || type == "__half") return 2;
  if (type == "__nv_fp8_e4m3" || type == "bool") return 1;
  return 0;
}

Result<std::vector<ParamSlot>> parse_param_layout(const std::string& declaration) {
  const auto open = declaration.find('(');
  const auto close = declaration.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return make_error("abi", "not a function declaration: '{}'", declaration);
  }
  std::vector<ParamSlot> layout;
  for (const auto& raw : split(declaration.substr(open + 1, close - open - 1), ',')) {
    const std::string param = trim(raw);
    // "const __nv_bfloat16* A": the name is the trailing identifier, the type all before it.
    std::size_t name_start = param.size();
    while (name_start > 0 && (std::isalnum(static_cast<unsigned char>(param[name_start - 1])) ||
                              param[name_start - 1] == '_')) {
      --name_start;
    }
    ParamSlot slot;
    slot.name = param.substr(name_start);
    slot.type = trim(param.substr(0, name_start));
    if (slot.name.empty() || slot.type.empty()) {
      return make_error("abi", "cannot read parameter '{}' of '{}'", param, declaration);
    }
    if (ends_with(slot.type, "*")) {
      slot.is_pointer = true;
      slot.value_bytes = sizeof(void*);
    } else if (slot.type == "cudaStream_t") {
      slot.is_stream = true;
      slot.value_bytes = sizeof(void*);
    } else {
      slot.value_bytes = abi_value_bytes(slot.type);
      if (slot.value_bytes == 0)
        return make_error("abi", "parameter '{}' has unsupported type '{}'", slot.name, slot.type);
    }
    layout.push_back(std::move(slot));
  }
  if (layout.empty() || !layout.back().is_stream) {
    return make_error("abi", "the last parameter of '{}' must be a cudaStream_t", declaration);
  }
  for (std::size_t i = 0; i + 1 < layout.size(); ++i) {
    if (layout[i].is_stream)
      return make_error("abi", "only the last parameter may be the stream: '{}'", declaration);
  }
  return layout;
}

Status check_set_against_layout(const std::vector<ParamSlot>& layout,
                                const std::vector<ParamValue>& set) {
  if (set.size() + 1 != layout.size()) {
    return make_error(
        "protocol", "{} parameter values for {} parameters (the stream is supplied by the runner)",
        set.size(), layout.size() - 1);
  }
  for (std::size_t i = 0; i < set.size(); ++i) {
    const ParamSlot& slot = layout[i];
    if (slot.is_pointer != set[i].is_buffer) {
      return make_error("protocol", "parameter {} ('{} {}') needs {}", i, slot.type, slot.name,
                        slot.is_pointer ? "a buffer" : "a by-value scalar");
    }
    if (!slot.is_pointer && set[i].storage.size() != slot.value_bytes) {
      return make_error("protocol", "parameter {} ('{} {}') needs {} bytes, got {}", i, slot.type,
                        slot.name, slot.value_bytes, set[i].storage.size());
    }
  }
  return ok_status();
}

}  // namespace ptxb
