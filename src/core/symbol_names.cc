#include "core/symbol_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "core/strings.h"

namespace ptxb {

std::string demangle_symbol(const std::string& name) {
  if (!starts_with(name, "_Z")) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::string kernel_identifier(const std::string& name) {
  std::string text = replace_all(demangle_symbol(name), "(anonymous namespace)::", "");
  text = text.substr(0, text.find('('));
  text = text.substr(0, text.find('<'));
  if (const auto space = text.rfind(' '); space != std::string::npos) text = text.substr(space + 1);
  if (const auto colon = text.rfind("::"); colon != std::string::npos)
    text = text.substr(colon + 2);
  return text;
}

}  // namespace ptxb
