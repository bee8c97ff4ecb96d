#include "trace/workload.h"

#include <set>

#include "trace/schema_json.h"

namespace ptxb {

std::string_view input_kind_name(InputSpec::Kind kind) {
  switch (kind) {
    case InputSpec::Kind::kRandom:
      return "random";
    case InputSpec::Kind::kScalar:
      return "scalar";
    case InputSpec::Kind::kSafetensors:
      return "safetensors";
  }
  return "random";
}

const InputSpec* Workload::find_input(const std::string& name) const {
  for (const auto& [input_name, spec] : inputs)
    if (input_name == name) return &spec;
  return nullptr;
}

namespace {

// Values of the PTXBench "derive" extension that the evaluator implements.
const std::set<std::string> kDeriveValues = {"reference_forward"};

std::optional<InputSpec> parse_input_spec(const Json& spec, const std::string& path,
                                          Diagnostics& diagnostics) {
  if (!check_object(spec, path, diagnostics)) return std::nullopt;
  auto type = require_string(spec, "type", path, diagnostics);
  if (!type) return std::nullopt;
  InputSpec input;
  if (*type == "random") {
    input.kind = InputSpec::Kind::kRandom;
  } else if (*type == "scalar") {
    input.kind = InputSpec::Kind::kScalar;
    if (const Json* value = require_field(spec, "value", path, diagnostics)) {
      if (value->is_number() || value->is_boolean())
        input.scalar_value = *value;
      else
        diagnostics.error(json_path_key(path, "value"),
                          "expected a number or boolean, got " + json_type_description(*value));
    }
  } else if (*type == "safetensors") {
    input.kind = InputSpec::Kind::kSafetensors;
    input.path = require_string(spec, "path", path, diagnostics).value_or("");
    input.tensor_key = require_string(spec, "tensor_key", path, diagnostics).value_or("");
  } else {
    diagnostics.error(
        json_path_key(path, "type"),
        "unknown input type '" + *type + "' (expected 'random', 'scalar' or 'safetensors')");
    return std::nullopt;
  }
  if (auto it = spec.find("ptxbench"); it != spec.end()) {
    const std::string extension_path = json_path_key(path, "ptxbench");
    if (check_object(*it, extension_path, diagnostics)) {
      if (auto derive = optional_string(*it, "derive", extension_path, diagnostics)) {
        if (!kDeriveValues.count(*derive))
          diagnostics.error(json_path_key(extension_path, "derive"),
                            "unknown value '" + *derive + "' (expected 'reference_forward')");
        else if (input.kind != InputSpec::Kind::kRandom)
          diagnostics.error(json_path_key(extension_path, "derive"),
                            "only a 'random' input can be derived by the reference");
        else
          input.derive = *derive;
      }
    }
  }
  return input;
}

}  // namespace

Workload parse_workload(const Json& object, const std::string& path, Diagnostics& diagnostics) {
  Workload workload;
  if (!check_object(object, path, diagnostics)) return workload;
  workload.raw = object;
  workload.uuid = require_string(object, "uuid", path, diagnostics).value_or("");
  if (const Json* axes = require_field(object, "axes", path, diagnostics)) {
    const std::string axes_path = json_path_key(path, "axes");
    if (check_object(*axes, axes_path, diagnostics)) {
      for (const auto& [name, value] : axes->items()) {
        const std::string axis_path = json_path_key(axes_path, name);
        auto number = as_integer(value, axis_path, diagnostics);
        if (number && *number < 0)
          diagnostics.error(axis_path, "axis value must be >= 0, got " + std::to_string(*number));
        else if (number)
          workload.axes.emplace_back(name, *number);
      }
    }
  }
  if (const Json* inputs = require_field(object, "inputs", path, diagnostics)) {
    const std::string inputs_path = json_path_key(path, "inputs");
    if (check_object(*inputs, inputs_path, diagnostics)) {
      for (const auto& [name, spec] : inputs->items()) {
        if (auto input = parse_input_spec(spec, json_path_key(inputs_path, name), diagnostics))
          workload.inputs.emplace_back(name, std::move(*input));
      }
    }
  }
  return workload;
}

Result<Workload> parse_workload(const Json& object, const std::string& origin,
                                const std::string& path) {
  Diagnostics diagnostics(origin);
  Workload workload = parse_workload(object, path, diagnostics);
  if (!diagnostics.ok()) return diagnostics.to_error();
  return workload;
}

void check_workload_against(const Workload& workload, const Definition& definition,
                            const std::string& path, Diagnostics& diagnostics) {
  const std::string axes_path = json_path_key(path, "axes");
  std::set<std::string> bound;
  for (const auto& [name, value] : workload.axes) {
    bound.insert(name);
    const Axis* axis = definition.find_axis(name);
    if (!axis)
      diagnostics.error(
          json_path_key(axes_path, name),
          "axis '" + name + "' is not declared by definition '" + definition.name + "'");
    else if (!axis->is_var)
      diagnostics.error(json_path_key(axes_path, name),
                        "axis '" + name + "' is const in definition '" + definition.name +
                            "'; a workload binds only var axes");
  }
  for (const auto& axis : definition.axes)
    if (axis.is_var && !bound.count(axis.name))
      diagnostics.error(axes_path, "var axis '" + axis.name + "' of definition '" +
                                       definition.name + "' has no value");

  const std::string inputs_path = json_path_key(path, "inputs");
  std::set<std::string> specified;
  for (const auto& [name, spec] : workload.inputs) {
    specified.insert(name);
    const std::string input_path = json_path_key(inputs_path, name);
    const TensorSpec* tensor = nullptr;
    for (const auto& candidate : definition.inputs)
      if (candidate.name == name) tensor = &candidate;
    if (!tensor) {
      diagnostics.error(input_path,
                        "'" + name + "' is not an input of definition '" + definition.name + "'");
      continue;
    }
    if (spec.kind == InputSpec::Kind::kScalar && !tensor->is_scalar())
      diagnostics.error(input_path, "a 'scalar' spec is given for tensor input '" + name +
                                        "' (its shape is not null)");
    if (spec.kind != InputSpec::Kind::kScalar && tensor->is_scalar())
      diagnostics.error(input_path, "input '" + name +
                                        "' is a scalar (shape null) and needs a 'scalar' spec "
                                        "with a value");
  }
  for (const auto& tensor : definition.inputs)
    if (!specified.count(tensor.name))
      diagnostics.error(inputs_path, "no spec for input '" + tensor.name + "' of definition '" +
                                         definition.name + "'");
}

Json workload_to_json(const Workload& workload) {
  return workload.raw;
}

}  // namespace ptxb
