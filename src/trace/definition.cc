#include "trace/definition.h"

#include <set>

#include "trace/schema_json.h"

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

std::vector<std::string> Definition::var_axis_names() const {
  std::vector<std::string> names;
  for (const auto& axis : axes)
    if (axis.is_var) names.push_back(axis.name);
  return names;
}

namespace {

void parse_axes(const Json& document, Definition& definition, Diagnostics& diagnostics) {
  const Json* axes = require_field(document, "axes", "$", diagnostics);
  if (!axes || !check_object(*axes, "$.axes", diagnostics)) return;
  if (axes->empty()) diagnostics.error("$.axes", "must declare at least one axis");
  for (const auto& [name, spec] : axes->items()) {
    const std::string path = json_path_key("$.axes", name);
    if (!is_c_identifier(name))
      diagnostics.error(path, "axis name '" + name + "' is not a valid C identifier");
    if (!check_object(spec, path, diagnostics)) continue;
    Axis axis;
    axis.name = name;
    auto type = require_string(spec, "type", path, diagnostics);
    if (type && *type == "var") {
      axis.is_var = true;
      if (spec.contains("value"))
        diagnostics.error(json_path_key(path, "value"),
                          "a 'var' axis takes its value from each workload; remove 'value'");
    } else if (type && *type == "const") {
      if (const Json* value = require_field(spec, "value", path, diagnostics)) {
        auto number = as_integer(*value, json_path_key(path, "value"), diagnostics);
        if (number && *number <= 0)
          diagnostics.error(json_path_key(path, "value"),
                            "const axis value must be positive, got " + std::to_string(*number));
        else if (number)
          axis.value = *number;
      }
    } else if (type) {
      diagnostics.error(json_path_key(path, "type"),
                        "unknown axis type '" + *type + "' (expected 'const' or 'var')");
    }
    optional_string(spec, "description", path, diagnostics);
    optional_string(spec, "parent", path, diagnostics);
    definition.axes.push_back(std::move(axis));
  }
}

void parse_tensors(const Json& document, const std::string& key, const Definition& definition,
                   std::vector<TensorSpec>& tensors, Diagnostics& diagnostics) {
  const std::string section_path = json_path_key("$", key);
  const Json* section = require_field(document, key, "$", diagnostics);
  if (!section || !check_object(*section, section_path, diagnostics)) return;
  if (section->empty()) diagnostics.error(section_path, "must declare at least one tensor");
  for (const auto& [name, spec] : section->items()) {
    const std::string path = json_path_key(section_path, name);
    if (!is_c_identifier(name))
      diagnostics.error(path, "tensor name '" + name + "' is not a valid C identifier");
    if (!check_object(spec, path, diagnostics)) continue;
    TensorSpec tensor;
    tensor.name = name;
    if (const Json* shape = require_field(spec, "shape", path, diagnostics)) {
      const std::string shape_path = json_path_key(path, "shape");
      if (shape->is_null()) {
        tensor.shape.reset();  // a scalar, passed by value
      } else if (!shape->is_array()) {
        diagnostics.error(shape_path, "expected an array of axis names or null, got " +
                                          json_type_description(*shape));
      } else {
        std::vector<std::string> axes;
        for (std::size_t i = 0; i < shape->size(); ++i) {
          const Json& axis = (*shape)[i];
          const std::string axis_path = json_path_index(shape_path, i);
          if (!axis.is_string()) {
            diagnostics.error(axis_path,
                              "expected an axis name (string), got " + json_type_description(axis));
            continue;
          }
          const auto axis_name = axis.get<std::string>();
          if (!definition.find_axis(axis_name))
            diagnostics.error(axis_path, "axis '" + axis_name + "' is not declared in $.axes");
          axes.push_back(axis_name);
        }
        tensor.shape = std::move(axes);
      }
    }
    if (auto dtype = require_string(spec, "dtype", path, diagnostics)) {
      if (auto parsed = parse_dtype(*dtype))
        tensor.dtype = *parsed;
      else
        diagnostics.error(
            json_path_key(path, "dtype"),
            "unknown dtype '" + *dtype + "' (expected one of: " + dtype_name_list() + ")");
    }
    optional_string(spec, "description", path, diagnostics);
    tensors.push_back(std::move(tensor));
  }
}

}  // namespace

Definition parse_definition(const Json& document, Diagnostics& diagnostics) {
  Definition definition;
  if (!check_object(document, "$", diagnostics)) return definition;
  definition.raw = document;
  if (auto name = require_string(document, "name", "$", diagnostics)) {
    if (!is_c_identifier(*name))
      diagnostics.error("$.name", "definition name '" + *name +
                                      "' must be a C identifier (letters, digits, '_')");
    definition.name = *name;
  }
  if (auto op_type = require_string(document, "op_type", "$", diagnostics)) {
    if (!is_c_identifier(*op_type))
      diagnostics.error("$.op_type", "op_type '" + *op_type + "' must be a C identifier");
    definition.op_type = *op_type;
  }
  parse_axes(document, definition, diagnostics);
  parse_tensors(document, "inputs", definition, definition.inputs, diagnostics);
  parse_tensors(document, "outputs", definition, definition.outputs, diagnostics);
  // JSON objects already have unique keys (duplicates are rejected when the text is parsed), so
  // the remaining clash is a name used both as an input and as an output.
  std::set<std::string> input_names;
  for (const auto& tensor : definition.inputs) input_names.insert(tensor.name);
  for (const auto& tensor : definition.outputs)
    if (input_names.count(tensor.name))
      diagnostics.error(json_path_key("$.outputs", tensor.name),
                        "'" + tensor.name +
                            "' is both an input and an output; tensor names "
                            "must be unique across inputs and outputs");
  if (auto reference = require_string(document, "reference", "$", diagnostics)) {
    // The schema's reference is Python defining a top-level `run`.
    if (reference->find("def run(") == std::string::npos)
      diagnostics.error("$.reference", "must define a top-level function 'def run(...)'");
    definition.reference = *reference;
  }
  definition.description = optional_string(document, "description", "$", diagnostics).value_or("");
  definition.tags = optional_string_list(document, "tags", "$", diagnostics);
  definition.constraints = optional_string_list(document, "constraints", "$", diagnostics);
  return definition;
}

Result<Definition> parse_definition(const Json& document, const std::string& origin) {
  Diagnostics diagnostics(origin);
  Definition definition = parse_definition(document, diagnostics);
  if (!diagnostics.ok()) return diagnostics.to_error();
  return definition;
}

Json definition_to_json(const Definition& definition) {
  return definition.raw;
}

}  // namespace ptxb
