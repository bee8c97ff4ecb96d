#include "abi/signature.h"

#include <set>

#include "core/strings.h"

namespace ptxb {

bool is_cpp_keyword(const std::string& word) {
  static const std::set<std::string> kKeywords = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq"};
  return kKeywords.count(word) > 0;
}

RunSignature make_run_signature(const Definition& definition) {
  RunSignature signature;
  std::set<std::string> tensor_names;
  for (const auto& tensor : definition.inputs) tensor_names.insert(tensor.name);
  for (const auto& tensor : definition.outputs) tensor_names.insert(tensor.name);

  // `run` would shadow the entry point itself inside its body.
  auto safe = [](std::string name) {
    return (is_cpp_keyword(name) || name == "run") ? name + "_" : name;
  };

  for (const auto& tensor : definition.inputs) {
    AbiParameter parameter{AbiParameter::Kind::kInput, "", safe(tensor.name), tensor.name,
                           tensor.is_scalar()};
    const std::string element(dtype_cuda_type(tensor.dtype));
    parameter.type = tensor.is_scalar() ? element : "const " + element + "*";
    signature.parameters.push_back(parameter);
  }
  for (const auto& tensor : definition.outputs) {
    signature.parameters.push_back({AbiParameter::Kind::kOutput,
                                    std::string(dtype_cuda_type(tensor.dtype)) + "*",
                                    safe(tensor.name), tensor.name, false});
  }
  std::set<std::string> used;
  for (const auto& parameter : signature.parameters) used.insert(parameter.name);
  used.insert("stream");
  for (const auto& axis : definition.axes) {
    std::string name = safe(axis.name);
    if (tensor_names.count(axis.name) || used.count(name)) name = axis.name + "_size";
    while (used.count(name)) name += "_";
    used.insert(name);
    signature.parameters.push_back({AbiParameter::Kind::kAxis, "int64_t", name, axis.name, false});
  }
  signature.parameters.push_back(
      {AbiParameter::Kind::kStream, "cudaStream_t", "stream", "", false});
  return signature;
}

std::string RunSignature::parameter_list() const {
  std::vector<std::string> parts;
  for (const auto& parameter : parameters) parts.push_back(parameter.type + " " + parameter.name);
  return join(parts, ", ");
}

std::string RunSignature::declaration() const {
  return "void run(" + parameter_list() + ")";
}

}  // namespace ptxb
