// PLACEHOLDER (skeleton): the full parser and validator replace this before landing.
#include "trace/definition.h"

namespace ptxb {

const Axis* Definition::find_axis(const std::string& axis_name) const {
  for (const auto& axis : axes)
    if (axis.name == axis_name) return &axis;
  return nullptr;
}

const TensorSpec* Definition::find_tensor(const std::string& tensor_name) const {
  for (const auto& tensor : inputs)
    if (tensor.name == tensor_name) return &tensor;
  for (const auto& tensor : outputs)
    if (tensor.name == tensor_name) return &tensor;
  return nullptr;
}

Result<Definition> parse_definition(const Json& document, const std::string& origin) {
  (void)document;
  return make_error("todo", "{}: parse_definition not implemented", origin);
}

Json definition_to_json(const Definition& definition) { return definition.raw; }

}  // namespace ptxb
